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
