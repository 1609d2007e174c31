//! Reading package files: paths kept inside the package, no symbolic links, a size limit, UTF-8, line
//! ends as LF.

use super::model::LoadLimits;
use crate::experts::findings::Rule;
use std::fs;
use std::io::Read;
use std::path::{Component, Path};

/// Why a file could not be read, and under which rule.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ReadError {
    pub rule: Rule,
    pub message: String,
}

/// Normalises a component path (drops `./`); `Err` when it is absolute or leaves the package.
pub fn clean_relative(path: &str) -> Result<String, String> {
    let trimmed = path.trim();
    if trimmed.is_empty() {
        return Err("the path is empty".into());
    }
    let mut parts = Vec::new();
    for component in Path::new(trimmed).components() {
        match component {
            Component::Normal(part) => parts.push(part.to_string_lossy().into_owned()),
            Component::CurDir => {}
            Component::ParentDir | Component::RootDir | Component::Prefix(_) => {
                return Err(format!(
                    "{trimmed:?} must be a relative path inside the package (no `..`, not absolute)"
                ));
            }
        }
    }
    if parts.is_empty() {
        return Err(format!("{trimmed:?} names no file"));
    }
    Ok(parts.join("/"))
}

/// Reads `relative` under `dir` as UTF-8 text with LF line ends, refusing symbolic links on the way
/// (a link could leave the package or loop), directories, and files over the size limit.
pub fn read_text(dir: &Path, relative: &str, limits: &LoadLimits) -> Result<String, ReadError> {
    let path_error = |message: String| ReadError {
        rule: Rule::FilesPath,
        message,
    };
    let clean = clean_relative(relative).map_err(path_error)?;
    let mut path = dir.to_path_buf();
    let parts: Vec<&str> = clean.split('/').collect();
    for (n, part) in parts.iter().enumerate() {
        path.push(part);
        let meta = match fs::symlink_metadata(&path) {
            Ok(meta) => meta,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                return Err(ReadError {
                    rule: Rule::FilesExist,
                    message: format!("{clean} does not exist"),
                });
            }
            Err(e) => {
                return Err(ReadError {
                    rule: Rule::FilesReadable,
                    message: format!("{clean}: cannot read: {e}"),
                });
            }
        };
        if meta.file_type().is_symlink() {
            let at = parts[..=n].join("/");
            return Err(path_error(format!(
                "{at} is a symbolic link; package files must be regular files inside the package"
            )));
        }
        let last = n + 1 == parts.len();
        if last && !meta.is_file() {
            return Err(path_error(format!("{clean} is not a regular file")));
        }
        if !last && !meta.is_dir() {
            return Err(ReadError {
                rule: Rule::FilesExist,
                message: format!("{clean} does not exist"),
            });
        }
        if last && meta.len() > limits.max_file_bytes {
            return Err(ReadError {
                rule: Rule::FilesReadable,
                message: format!(
                    "{clean} is {} bytes, over the {}-byte limit",
                    meta.len(),
                    limits.max_file_bytes
                ),
            });
        }
    }
    let mut bytes = Vec::new();
    let read = fs::File::open(&path)
        .and_then(|f| f.take(limits.max_file_bytes + 1).read_to_end(&mut bytes));
    if let Err(e) = read {
        return Err(ReadError {
            rule: Rule::FilesReadable,
            message: format!("{clean}: cannot read: {e}"),
        });
    }
    if bytes.len() as u64 > limits.max_file_bytes {
        return Err(ReadError {
            rule: Rule::FilesReadable,
            message: format!("{clean} is over the {}-byte limit", limits.max_file_bytes),
        });
    }
    let text = String::from_utf8(bytes).map_err(|e| ReadError {
        rule: Rule::FilesReadable,
        message: format!(
            "{clean} is not UTF-8 text (invalid byte at offset {})",
            e.utf8_error().valid_up_to()
        ),
    })?;
    let text = text.strip_prefix('\u{feff}').unwrap_or(&text);
    Ok(normalize_line_ends(text))
}

/// CRLF and lone CR as LF: a file saved on Windows (or an old Mac) reads like any other, and no `\r`
/// reaches a prompt, a name or a field.
fn normalize_line_ends(text: &str) -> String {
    if !text.contains('\r') {
        return text.to_string();
    }
    text.replace("\r\n", "\n").replace('\r', "\n")
}
