//! The [`Shim`] a command line asks for: its options, the default paths, and errors named by the
//! option the user gave.

use std::path::{Path, PathBuf};
use std::time::Duration;

use host_shim::{EXTRA_CA_FILE, Limits, Shim, ShimError, ShimOptions};

use super::input_files::read_text;
use host_shim::cli_grammar::GlobalOptions;

pub(crate) fn open_shim(options: GlobalOptions, dry_run: bool) -> Result<Shim, String> {
    let explicit_wasm = options.wasm.is_some();
    let wasm = options
        .wasm
        .or_else(default_wasm)
        .ok_or("no --wasm given and no default found")?;
    let state_dir = if dry_run {
        None
    } else {
        let dir = options
            .state_dir
            .or_else(default_state_dir)
            .ok_or("no --state-dir given and neither XDG_STATE_HOME nor HOME is set")?;
        std::fs::create_dir_all(&dir)
            .map_err(|err| format!("cannot create state directory {}: {err}", dir.display()))?;
        Some(dir)
    };
    let limits = Limits {
        call_timeout: Duration::from_millis(options.call_timeout_ms),
        send_timeout: Duration::from_millis(options.send_timeout_ms),
        memory_bytes: options.memory_limit_mb.saturating_mul(1 << 20),
    };
    let workspace = created_workspace(options.workspace_dir)?;
    Shim::new(ShimOptions {
        overlay_dir: options.overlay_dir,
        state_dir,
        cache_dir: options.cache_dir,
        allowed_origins: if dry_run {
            Vec::new()
        } else {
            options.allowed_origins
        },
        database_password: options
            .database_password_file
            .map(|path| read_text("database password file", &path))
            .transpose()?
            .map(|text| host_shim::Secret(text.trim_end_matches(['\r', '\n']).to_string())),
        // Checked even in a dry run: a wrong file is said at once, not on the first https recall.
        extra_ca_file: options.ca_file,
        echo_logs: !options.quiet,
        experts_dir: options
            .experts_dir
            .or_else(|| Some(options.config_dir.join("experts")).filter(|d| d.is_dir())),
        host_settings: host_settings(
            options
                .settings
                .map(|path| read_text("settings file", &path))
                .transpose()?,
            workspace.as_deref(),
        ),
        workspace_dir: workspace,
        experts_writable: options.experts_writable,
        install_dir: options.install_dir,
        ..ShimOptions::new(wasm, options.config_dir, limits)
    })
    .map_err(|err| match err {
        ShimError::ReadWasm { ref source, .. }
            if !explicit_wasm && source.kind() == std::io::ErrorKind::NotFound =>
        {
            format!("{err}; run scripts/build.sh first")
        }
        // Named by the option the user gave it with.
        ShimError::CaFile {
            named_by: EXTRA_CA_FILE,
            path,
            reason,
        } => format!("--ca-file {}: {reason}", path.display()),
        ShimError::Mount {
            guest_path,
            path,
            reason,
        } => format!(
            "{} {}: {reason}",
            option_of_mount(guest_path),
            path.display()
        ),
        err => err.to_string(),
    })
}

/// The command-line option that gives the directory mounted at `guest_path`.
fn option_of_mount(guest_path: &str) -> &'static str {
    match guest_path {
        "/config" => "--config-dir",
        "/overlay" => "--overlay-dir",
        "/state" => "--state-dir",
        "/experts" => "--experts-dir",
        "/workspace" => "--workspace-dir",
        _ => "directory",
    }
}

/// $GRAPHITI_OPENCLAW_WASM; else `plugin.wasm` next to the executable (an installed layout); else
/// the workspace build output, found from the executable in `target/<profile>/`.
fn default_wasm() -> Option<PathBuf> {
    if let Some(path) = std::env::var_os("GRAPHITI_OPENCLAW_WASM") {
        return Some(path.into());
    }
    let exe = std::env::current_exe().ok()?;
    let exe_dir = exe.parent()?;
    let beside = exe_dir.join("plugin.wasm");
    if beside.is_file() {
        return Some(relative_to_cwd(beside));
    }
    let built = exe_dir
        .parent()?
        .join("wasm32-wasip2/component/graphiti_openclaw.wasm");
    Some(relative_to_cwd(built))
}

fn default_state_dir() -> Option<PathBuf> {
    let base = std::env::var_os("XDG_STATE_HOME")
        .map(PathBuf::from)
        .filter(|dir| dir.is_absolute())
        .or_else(|| {
            std::env::var_os("HOME").map(|home| PathBuf::from(home).join(".local/state"))
        })?;
    Some(base.join("graphiti-openclaw"))
}

/// Shorter paths in messages when they are under the working directory.
fn relative_to_cwd(path: PathBuf) -> PathBuf {
    std::env::current_dir()
        .ok()
        .and_then(|cwd| path.strip_prefix(cwd).ok().map(Path::to_path_buf))
        .unwrap_or(path)
}

/// The `--settings` JSON with `experts.workspace_dir` set to the mounted workspace's path, unless
/// the file sets it: the expert prompts then name the files agents really find, as in OpenClaw,
/// not the component's default.
fn host_settings(file: Option<String>, workspace: Option<&Path>) -> Option<String> {
    let Some(workspace) = workspace else {
        return file;
    };
    let mut settings: serde_json::Value = match &file {
        Some(text) => match serde_json::from_str(text) {
            Ok(value) => value,
            // The component names what is wrong with the file, as without a workspace.
            Err(_) => return file,
        },
        None => serde_json::json!({}),
    };
    let Some(experts) = settings
        .as_object_mut()
        .map(|s| s.entry("experts").or_insert_with(|| serde_json::json!({})))
        .and_then(|e| e.as_object_mut())
    else {
        return file;
    };
    experts
        .entry("workspace_dir")
        .or_insert_with(|| workspace.display().to_string().into());
    Some(settings.to_string())
}

/// The `--workspace-dir` directory, created when missing, as an absolute path (the prompt shows it).
fn created_workspace(dir: Option<PathBuf>) -> Result<Option<PathBuf>, String> {
    let Some(dir) = dir else {
        return Ok(None);
    };
    std::fs::create_dir_all(&dir)
        .map_err(|err| format!("cannot create workspace directory {}: {err}", dir.display()))?;
    Ok(Some(std::path::absolute(&dir).unwrap_or(dir)))
}
