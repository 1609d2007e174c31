//! The guest's WASI context: the preopened directories and their permissions, no sockets, and
//! where its stdout and stderr go.

use wasmtime_wasi::{FsPerms, WasiCtx, WasiCtxBuilder};

use crate::guest_files;
use crate::options::ShimOptions;

/// The WASI context of a fresh instance run with `options`.
pub(crate) fn wasi_context(options: &ShimOptions) -> wasmtime::Result<WasiCtx> {
    let mut wasi = WasiCtxBuilder::new();
    // The only network is `host.http-request`, behind the allowlist.
    wasi.allow_tcp(false)
        .allow_udp(false)
        .allow_ip_name_lookup(false)
        .allow_blocking_current_thread(guest_files::FILE_IO_ON_CALLING_THREAD);
    wasi.preopened_dir(&options.config_dir, "/config", FsPerms::ReadOnly)?;
    if let Some(dir) = &options.overlay_dir {
        wasi.preopened_dir(dir, "/overlay", FsPerms::ReadOnly)?;
    }
    if let Some(dir) = &options.state_dir {
        wasi.preopened_dir(dir, "/state", FsPerms::ReadWrite)?;
    }
    if let Some(dir) = &options.experts_dir {
        let perms = if options.experts_writable {
            FsPerms::ReadWrite
        } else {
            FsPerms::ReadOnly
        };
        wasi.preopened_dir(dir, "/experts", perms)?;
    }
    if let Some(dir) = &options.install_dir {
        wasi.preopened_dir(dir, "/install", FsPerms::ReadOnly)?;
    }
    if let Some(dir) = &options.workspace_dir {
        wasi.preopened_dir(dir, "/workspace", FsPerms::ReadWrite)?;
    }
    // The process the locks' holders are named by: the guest cannot see its own pid, and would
    // call another instance in this process "another process".
    wasi.env("GRAPHITI_OPENCLAW_PID", std::process::id().to_string())
        .env("GRAPHITI_OPENCLAW_HOSTNAME", crate::state_lock::hostname());
    if let Some(clock) = &options.wall_clock {
        wasi.wall_clock(clock.clone());
    }
    if options.echo_logs {
        // The host's stdout is for command output only.
        wasi.stdout(std::io::stderr()).stderr(std::io::stderr());
    }
    Ok(wasi.build())
}
