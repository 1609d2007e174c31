//! `audit-boundary`: the PRD's public/private boundary audit. Every text file of the public
//! configuration directory is read line by line for what looks private (see [`crate::platform::sensitive`]) and, when
//! an overlay is mounted, for the overlay's terms (see [`overlay_terms`]). Each finding is printed
//! as file:line, kind and the text partly masked; any finding fails the command (exit 1).
//!
//! The config directory's `private/` is the default overlay (ignored by git), never public: it is
//! not audited as public, nor is the overlay when it lies inside the config directory. A line holding `boundary-audit: allow` is left out, and counted.

mod overlay_terms;

use crate::config::ConfigRoots;
use crate::platform::api::CommandOutput;
use crate::platform::sensitive as patterns;
use overlay_terms::{Terms, Vocabulary};
use std::fs;
use std::path::{Path, PathBuf};

/// Larger files are not read (reported as not checked).
const MAX_FILE_BYTES: u64 = 1 << 20;
/// The marker that leaves a line out of the audit.
pub const ALLOW_MARKER: &str = "boundary-audit: allow";
/// The config directory's subdirectory that is the default private overlay.
const DEFAULT_OVERLAY_DIR: &str = "private";

/// A text file of a directory, named as the user named the directory.
struct TextFile {
    display: String,
    is_data: bool,
    text: String,
}

/// What was found and what could not be checked.
#[derive(Default)]
struct Audit {
    findings: Vec<String>,
    not_checked: Vec<String>,
    allowed_lines: usize,
}

/// Runs the audit over `roots`: the config directory as public, the overlay (if any) as private.
pub fn audit(roots: &ConfigRoots) -> CommandOutput {
    if let Some(missing) = &roots.missing_overlay {
        return output(2, String::new(), format!("audit-boundary: {missing}\n"));
    }
    let mut audit = Audit::default();
    let public = read_tree(
        &roots.config,
        roots.config_name(),
        &private_subdirs(roots),
        &mut audit,
    );
    // The default overlay (the config directory's `private/`) counts only when it exists.
    let overlay_dir = roots.overlay.as_ref().filter(|dir| dir.is_dir());
    let overlay = overlay_dir.map(|dir| {
        let name = roots.overlay_name.as_deref().unwrap_or("overlay");
        read_tree(dir, name, &[], &mut audit)
    });
    let terms = overlay.as_ref().map(|files| overlay_terms(&public, files));
    for file in &public {
        scan_file(file, terms.as_ref(), &mut audit);
    }
    render(roots, public.len(), terms.as_ref(), &audit)
}

/// The overlay's terms, less the public configuration's own key vocabulary.
fn overlay_terms(public: &[TextFile], overlay: &[TextFile]) -> Terms {
    let mut vocabulary = Vocabulary::new();
    static KEY: std::sync::OnceLock<patterns::Pattern> = std::sync::OnceLock::new();
    let key = KEY.get_or_init(|| patterns::Pattern::new(patterns::KEY_PATTERN));
    for file in public.iter().filter(|f| f.is_data) {
        for line in file.text.lines() {
            if let Some((_, Some(name))) = key.captures_all(line).into_iter().next() {
                vocabulary.add_key(&line[name]);
            }
        }
    }
    let mut terms = Terms::default();
    for file in overlay {
        for (index, line) in file.text.lines().enumerate() {
            let origin = format!("{}:{}", file.display, index + 1);
            terms.add_value(line, &origin, &vocabulary);
        }
    }
    terms
}

fn scan_file(file: &TextFile, terms: Option<&Terms>, audit: &mut Audit) {
    for (index, line) in file.text.lines().enumerate() {
        if line.contains(ALLOW_MARKER) {
            audit.allowed_lines += 1;
            continue;
        }
        let place = format!("{}:{}", file.display, index + 1);
        for hit in patterns::scan_line(line) {
            let text = &line[hit.start..hit.end];
            audit
                .findings
                .push(format!("{place}: {}: {}", hit.kind, masked(text)));
        }
        for (start, end, term) in terms.map(|t| t.find_in(line)).unwrap_or_default() {
            audit.findings.push(format!(
                "{place}: overlay term: {} (in {})",
                masked(&line[start..end]),
                term.origin
            ));
        }
    }
}

/// The first and last characters, the rest hidden, and the length: enough to find the text, not
/// enough to read it.
pub fn masked(text: &str) -> String {
    let chars: Vec<char> = text.chars().collect();
    let n = chars.len();
    let keep = match n {
        0..=5 => 1,
        6..=11 => 2,
        _ => 3,
    };
    let head: String = chars[..keep.min(n)].iter().collect();
    let tail: String = if n > 5 {
        chars[n - keep..].iter().collect()
    } else {
        String::new()
    };
    format!("{head}…{tail} ({n} characters)")
}

/// The directories (relative, ending in `/`) of the config directory not audited as public: its
/// `private/` (the default overlay) and the overlay itself when it lies inside (`config/private.example`).
fn private_subdirs(roots: &ConfigRoots) -> Vec<String> {
    let mut skipped = vec![format!("{DEFAULT_OVERLAY_DIR}/")];
    let config = format!("{}/", roots.config_name().trim_end_matches('/'));
    if let Some(inside) = roots
        .overlay_name
        .as_deref()
        .and_then(|overlay| overlay.strip_prefix(&config))
    {
        skipped.push(format!("{}/", inside.trim_end_matches('/')));
    }
    skipped
}

/// Lists a directory's files: sorted by path, named `name/relative`, links not followed, the
/// `skipped` subdirectories left out.
struct Walk<'a> {
    name: &'a str,
    skipped: &'a [String],
    files: Vec<(String, PathBuf)>,
}

impl Walk<'_> {
    fn shown(&self, relative: &str) -> String {
        walk_display(self.name, relative)
    }

    fn list(&mut self, dir: &Path, relative: &str, audit: &mut Audit) {
        let entries = match fs::read_dir(dir) {
            Ok(entries) => entries,
            Err(err) => {
                let shown = self.shown(relative);
                audit
                    .not_checked
                    .push(format!("{shown} (cannot list: {err})"));
                return;
            }
        };
        for entry in entries.flatten() {
            let child = format!("{relative}{}", entry.file_name().to_string_lossy());
            let Ok(kind) = entry.file_type() else {
                continue;
            };
            if kind.is_dir() {
                let child = format!("{child}/");
                if !self.skipped.contains(&child) {
                    self.list(&entry.path(), &child, audit);
                }
            } else if kind.is_file() {
                self.files.push((child, entry.path()));
            } else {
                let shown = self.shown(&child);
                audit
                    .not_checked
                    .push(format!("{shown} (a link or special file, not followed)"));
            }
        }
    }
}

/// The text files under `dir` (see [`Walk`]); what cannot be read is listed as not checked.
fn read_tree(dir: &Path, name: &str, skipped: &[String], audit: &mut Audit) -> Vec<TextFile> {
    let mut walk = Walk {
        name,
        skipped,
        files: Vec::new(),
    };
    walk.list(dir, "", audit);
    crate::platform::sorting::sort(&mut walk.files);
    let mut files = Vec::new();
    for (relative, path) in walk.files {
        let display = walk_display(name, &relative);
        match read_text(&path) {
            Ok(text) => files.push(TextFile {
                is_data: [".yaml", ".yml", ".json"]
                    .iter()
                    .any(|ext| relative.ends_with(ext)),
                display,
                text,
            }),
            Err(why) => audit.not_checked.push(format!("{display} ({why})")),
        }
    }
    files
}

fn walk_display(name: &str, relative: &str) -> String {
    format!("{}/{relative}", name.trim_end_matches('/'))
}

fn read_text(path: &Path) -> Result<String, String> {
    let size = fs::metadata(path).map_err(|e| e.to_string())?.len();
    if size > MAX_FILE_BYTES {
        return Err(format!("larger than {} MiB", MAX_FILE_BYTES >> 20));
    }
    let bytes = fs::read(path).map_err(|e| e.to_string())?;
    String::from_utf8(bytes).map_err(|_| "not UTF-8 text".to_string())
}

fn render(
    roots: &ConfigRoots,
    files: usize,
    terms: Option<&Terms>,
    audit: &Audit,
) -> CommandOutput {
    let checked = match (terms, &roots.overlay_name) {
        (Some(terms), Some(overlay)) => format!(
            "e-mail addresses, phone numbers, tokens and keys, and {} terms of the overlay {overlay}",
            terms.len()
        ),
        _ => format!(
            "e-mail addresses, phone numbers, tokens and keys (no overlay: {} does not exist)",
            roots.overlay_name.as_deref().unwrap_or("none given")
        ),
    };
    let mut notes = Vec::new();
    if audit.allowed_lines > 0 {
        notes.push(format!(
            "{} lines marked '{ALLOW_MARKER}' left out",
            audit.allowed_lines
        ));
    }
    if !audit.not_checked.is_empty() {
        notes.push(format!("not checked: {}", audit.not_checked.join(", ")));
    }
    let notes = if notes.is_empty() {
        String::new()
    } else {
        format!("; {}", notes.join("; "))
    };
    let config = roots.config_name();
    if audit.findings.is_empty() {
        let line = format!(
            "boundary audit passed: {files} files of {config} checked for {checked}{notes}\n"
        );
        return output(0, line, String::new());
    }
    let mut out: String = audit.findings.iter().map(|f| format!("{f}\n")).collect();
    out.push_str(&format!(
        "boundary audit FAILED: {} findings in {files} files of {config}, checked for {checked}{notes}\n",
        audit.findings.len()
    ));
    output(1, out, String::new())
}

fn output(exit_code: u8, stdout: String, stderr: String) -> CommandOutput {
    CommandOutput {
        exit_code,
        stdout,
        stderr,
    }
}

#[cfg(test)]
mod tests {
    use super::masked;

    #[test]
    fn masking_keeps_the_ends_and_the_length() {
        assert_eq!(masked("alice.wong@corp-mail.io"), "ali….io (23 characters)");
        assert_eq!(masked("Priya"), "P… (5 characters)");
        assert_eq!(masked("Portland"), "Po…nd (8 characters)");
    }
}
