//! `graphiti-openclaw`: the component's operator commands and a simulated turn, under the host shim.

mod cli;

use std::process::ExitCode;

use clap::Parser;

use cli::{Cli, run};

fn main() -> ExitCode {
    // A file-size limit (`ulimit -f`) or a full disk must fail the write that hits it (the cache
    // entry, a spool entry: each says so), not kill the whole CLI with SIGXFSZ.
    // SAFETY: setting a signal's disposition to "ignore" before any thread starts.
    unsafe {
        libc::signal(libc::SIGXFSZ, libc::SIG_IGN);
    }
    // Output goes out once the command's work is done: a reader that has gone (`… | head`) ends
    // the CLI as it ends any Unix filter, instead of a panic in `println!` (exit 101).
    // SAFETY: as above.
    unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_DFL);
    }
    // With RUST_BACKTRACE set, every wasmtime error captures a backtrace, and WASI returns each
    // failed `metadata-hash-at` (a guest's stat) as one: 29 in an `intent-test`, a tenth of its
    // CPU. This CLI never prints them; panics keep theirs (RUST_BACKTRACE alone governs those).
    if std::env::var_os("RUST_LIB_BACKTRACE").is_none() {
        // SAFETY: no other thread exists yet to read the environment.
        unsafe { std::env::set_var("RUST_LIB_BACKTRACE", "0") };
    }
    // clap exits with 2 on usage errors.
    let cli = Cli::parse();
    match run(cli) {
        Ok(code) => ExitCode::from(code),
        Err(message) => {
            eprintln!("graphiti-openclaw: {message}");
            ExitCode::from(1)
        }
    }
}
