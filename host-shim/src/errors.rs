//! What can go wrong building a [`Shim`](crate::Shim) or reloading its configuration, and how a
//! configuration error reads as one line.

use std::fmt;
use std::path::PathBuf;

use crate::bindings::exports::graphiti::openclaw::hooks::ConfigError;

/// Why a [`Shim`](crate::Shim) could not be built. Guest misbehaviour after that is never an error of this type.
#[derive(Debug)]
pub enum ShimError {
    /// The wasm file cannot be read.
    ReadWasm {
        path: PathBuf,
        source: std::io::Error,
    },
    /// A directory to mount is missing or unusable.
    Mount {
        guest_path: &'static str,
        path: PathBuf,
        reason: String,
    },
    /// An allowed origin that is not an http or https origin.
    InvalidOrigin { origin: String, reason: String },
    /// A CA file for https that cannot be used; `named_by` is `SSL_CERT_FILE` or "extra CA file"
    /// ([`ShimOptions::extra_ca_file`](crate::ShimOptions::extra_ca_file)).
    CaFile {
        named_by: &'static str,
        path: PathBuf,
        reason: String,
    },
    /// Limits that would make every call fail.
    InvalidLimits(String),
    /// The wasm is not a component this host can run (does not compile, or wrong world).
    Load { path: PathBuf, reason: String },
    /// The engine could not be set up.
    Engine(String),
}

impl fmt::Display for ShimError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::ReadWasm { path, source } => {
                write!(f, "cannot read wasm file {}: {source}", path.display())
            }
            Self::Mount {
                guest_path,
                path,
                reason,
            } => {
                write!(
                    f,
                    "cannot mount {} at {guest_path}: {reason}",
                    path.display()
                )
            }
            Self::InvalidOrigin { origin, reason } => {
                write!(f, "invalid allowed origin {origin:?}: {reason}")
            }
            Self::CaFile {
                named_by,
                path,
                reason,
            } => write!(f, "{named_by} {}: {reason}", path.display()),
            Self::InvalidLimits(reason) => write!(f, "invalid limits: {reason}"),
            Self::Load { path, reason } => write!(f, "cannot load {}: {reason}", path.display()),
            Self::Engine(reason) => write!(f, "cannot set up wasmtime: {reason}"),
        }
    }
}

impl std::error::Error for ShimError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            Self::ReadWasm { source, .. } => Some(source),
            _ => None,
        }
    }
}

/// Why [`Shim::reload_config`](crate::Shim::reload_config) kept the previous configuration.
#[derive(Clone, Debug)]
pub enum ReloadError {
    /// The guest found these problems in the configuration.
    Invalid(Vec<ConfigError>),
    /// The guest failed (deadline, memory, trap); the text says how.
    Failed(String),
}

impl fmt::Display for ReloadError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Invalid(errors) => {
                let lines: Vec<String> = errors.iter().map(config_error_line).collect();
                write!(f, "{}", lines.join("\n"))
            }
            Self::Failed(reason) => f.write_str(reason),
        }
    }
}

impl std::error::Error for ReloadError {}

/// "file:line: field: message", leaving out what is unknown.
pub fn config_error_line(error: &ConfigError) -> String {
    let mut line = error.file.clone();
    if let Some(number) = error.line {
        line += &format!(":{number}");
    }
    if let Some(field) = &error.field {
        line += &format!(": {field}");
    }
    line + ": " + &error.message
}
