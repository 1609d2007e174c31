//! What a [`Shim`](crate::Shim) is built from: the component, the directories it mounts, the origins
//! it may reach and its limits.

use std::path::{Path, PathBuf};

use crate::clock::SetClock;
use crate::database::Secret;
use crate::limits::Limits;

/// What a [`Shim`](crate::Shim) runs, with which files, origins and limits.
#[derive(Clone, Debug)]
pub struct ShimOptions {
    /// The component.
    pub wasm: PathBuf,
    /// Mounted read-only at `/config`.
    pub config_dir: PathBuf,
    /// Mounted read-only at `/overlay`.
    pub overlay_dir: Option<PathBuf>,
    /// Mounted read-write at `/state`; without it the guest keeps no state.
    pub state_dir: Option<PathBuf>,
    /// Where compiled components are cached; None means
    /// [`default_cache_dir`](crate::default_cache_dir).
    pub cache_dir: Option<PathBuf>,
    /// Origins `host.http-request` may reach, such as `http://localhost:8000` or
    /// `https://graphiti.example`, and the databases `host.redis-command` may, such as
    /// `redis://localhost:6379`.
    pub allowed_origins: Vec<String>,
    /// The password `host.redis-command` authenticates with at a `redis://` origin of
    /// [`ShimOptions::allowed_origins`]; never shown to the component.
    pub database_password: Option<Secret>,
    /// PEM certificates trusted for `https` besides the system's roots (which `SSL_CERT_FILE` and
    /// `SSL_CERT_DIR` replace, as in OpenSSL).
    pub extra_ca_file: Option<PathBuf>,
    pub limits: Limits,
    /// Also write guest logs (and guest stdout/stderr) to the host's stderr.
    pub echo_logs: bool,
    /// A JSON object laid over the settings file, as OpenClaw's plugin config is.
    pub host_settings: Option<String>,
    /// Mounted read-only at `/experts`: installed openexperts packages.
    pub experts_dir: Option<PathBuf>,
    /// Mounted read-write at `/workspace`: the agents' workspace (EXPERTS.md, expert state).
    pub workspace_dir: Option<PathBuf>,
    /// Mount `/experts` read-write: only for `experts install`, `bind` and `remove`.
    pub experts_writable: bool,
    /// Mounted read-only at `/install`: the package directory `experts install` copies from.
    pub install_dir: Option<PathBuf>,
    /// The guest's wall clock, set by the host (tests, replays); None: the system's.
    pub wall_clock: Option<SetClock>,
}

impl ShimOptions {
    /// Runs `wasm` with `config_dir` within `limits`; nothing else mounted, no origins allowed,
    /// the default cache directory, logs echoed.
    pub fn new(wasm: impl Into<PathBuf>, config_dir: impl Into<PathBuf>, limits: Limits) -> Self {
        ShimOptions {
            wasm: wasm.into(),
            config_dir: config_dir.into(),
            overlay_dir: None,
            state_dir: None,
            cache_dir: None,
            allowed_origins: Vec::new(),
            database_password: None,
            extra_ca_file: None,
            limits,
            echo_logs: true,
            host_settings: None,
            experts_dir: None,
            workspace_dir: None,
            experts_writable: false,
            install_dir: None,
            wall_clock: None,
        }
    }
}

/// The directories to mount, with their guest paths.
pub(crate) fn mounts(options: &ShimOptions) -> Vec<(&'static str, &Path)> {
    let mut mounts = vec![("/config", options.config_dir.as_path())];
    mounts.extend(options.overlay_dir.as_deref().map(|dir| ("/overlay", dir)));
    mounts.extend(options.state_dir.as_deref().map(|dir| ("/state", dir)));
    mounts.extend(options.experts_dir.as_deref().map(|dir| ("/experts", dir)));
    mounts.extend(
        options
            .workspace_dir
            .as_deref()
            .map(|dir| ("/workspace", dir)),
    );
    mounts.extend(options.install_dir.as_deref().map(|dir| ("/install", dir)));
    mounts
}
