//! What the documentation states stays true: every backticked path into one of the repository's
//! folders exists, and every measured figure about this project's speed or size is one a benchmark
//! printed and recorded (under `docs/benchmarks/`). Each check is shown failing on a planted stale
//! path and a hand-typed figure.

use graphiti_openclaw_native_tests::{tracked_files, workspace};
use pulldown_cmark::{Event, Parser};
use regex::Regex;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::LazyLock;

/// The repository's tracked Markdown files, relative to the workspace.
fn tracked_markdown() -> Vec<PathBuf> {
    tracked_files(&["*.md"])
}

/// The repository's top folders (those holding tracked files).
fn top_folders() -> Vec<String> {
    let mut folders: Vec<String> = tracked_files(&[])
        .iter()
        .filter_map(|p| p.components().next().filter(|_| p.components().count() > 1))
        .map(|top| top.as_os_str().to_string_lossy().into_owned())
        .collect();
    folders.sort();
    folders.dedup();
    folders
}

/// The code spans of a Markdown text that name a path in one of `folders`, with their line
/// numbers: no spaces, no placeholders (`<…>`, `*`, `…`, `{…}`, `|`).
fn backticked_paths(text: &str, folders: &[String]) -> Vec<(usize, String)> {
    let mut found = Vec::new();
    for (event, range) in Parser::new_ext(text, pulldown_cmark::Options::ENABLE_TABLES).into_offset_iter() {
        let Event::Code(code) = event else { continue };
        let span = code.trim_end_matches([':', '.', ',']);
        let Some((top, _)) = span.split_once('/') else { continue };
        if !folders.iter().any(|f| f == top)
            || span.contains(|c: char| c.is_whitespace() || "<>*…{}|$".contains(c))
        {
            continue;
        }
        let line = text[..range.start].matches('\n').count() + 1;
        found.push((line, span.to_string()));
    }
    found
}

/// The paths of `text` (a file at `at`) that do not exist under `root`.
fn stale_paths(root: &Path, at: &Path, text: &str, folders: &[String]) -> Vec<String> {
    backticked_paths(text, folders)
        .into_iter()
        .filter(|(_, path)| {
            let path = path.split([':', '#']).next().unwrap_or(path);
            !root.join(path).exists() && !ignored_by_git(root, path)
        })
        .map(|(line, path)| format!("{}:{line}: `{path}` does not exist", at.display()))
        .collect()
}

/// Whether git ignores `path`: a place for the user's own files (`config/private/`), not ours.
fn ignored_by_git(root: &Path, path: &str) -> bool {
    Command::new("git")
        .current_dir(root)
        .args(["check-ignore", "-q", "--no-index", path])
        .status()
        .is_ok_and(|s| s.success())
}

#[test]
fn every_backticked_path_into_the_repository_exists() {
    let (root, folders) = (workspace(), top_folders());
    let stale: Vec<String> = tracked_markdown()
        .iter()
        .flat_map(|file| {
            // A fixture may be in another encoding on purpose: it is no documentation.
            let Ok(text) = std::fs::read_to_string(root.join(file)) else { return Vec::new() };
            stale_paths(&root, file, &text, &folders)
        })
        .collect();
    assert!(stale.is_empty(), "a path the documentation names is gone:\n{}", stale.join("\n"));
}

#[test]
fn a_planted_stale_path_is_found() {
    let (root, folders) = (workspace(), top_folders());
    let text = "See `plugin/src/lib.rs`, `tests/cases/` and `plugin/src/gone_away.rs`; `memory/x.json` is \
                the state directory's, and `plugin/src/<concern>/` a pattern.\n";
    assert_eq!(
        stale_paths(&root, Path::new("planted.md"), text, &folders),
        ["planted.md:1: `plugin/src/gone_away.rs` does not exist"]
    );
}

/// A figure with a unit of time, size or ratio.
static FIGURE: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"(?x)(\d[\d,]*(?:\.\d+)?(?:[–-]\d[\d,]*(?:\.\d+)?)?)\s?(ns|µs|us|ms|s|seconds|minutes|min|KB|kB|KiB|MB|MiB|GB|bytes|×)\b")
        .unwrap()
});

/// Words that make a figure a measurement of this project, not a setting or a limit.
static MEASURED: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"(?i)\b(measured|measures|took|takes|p50|p99|median|benchmark)\b").unwrap()
});

/// The blocks of `text` (lines between blank lines) with their first line numbers, less what
/// lies between `<!-- name` and `<!-- /name -->` (written by a script, checked by its own test).
fn blocks(text: &str) -> Vec<(usize, Vec<&str>)> {
    let mut blocks: Vec<(usize, Vec<&str>)> = Vec::new();
    let mut current: Vec<&str> = Vec::new();
    let mut generated: Option<String> = None;
    let mut start = 1;
    for (n, line) in text.lines().enumerate() {
        if let Some(name) = &generated {
            if line.starts_with(&format!("<!-- /{name} -->")) {
                generated = None;
            }
            continue;
        }
        if let Some(rest) = line.strip_prefix("<!-- ")
            && let Some(name) = rest.split([' ', ':']).next().filter(|n| !n.starts_with('/'))
            && text.contains(&format!("<!-- /{name} -->"))
        {
            generated = Some(name.to_string());
            continue;
        }
        if line.trim().is_empty() {
            if !current.is_empty() {
                blocks.push((start, std::mem::take(&mut current)));
            }
            start = n + 2;
        } else {
            current.push(line);
        }
    }
    if !current.is_empty() {
        blocks.push((start, current));
    }
    blocks
}

/// The measured figures of `text` missing from `recorded`: those of a block with a measurement
/// word, or of a table right after one.
fn unrecorded_figures(at: &Path, text: &str, recorded: &str) -> Vec<String> {
    static NUMBER: LazyLock<Regex> = LazyLock::new(|| Regex::new(r"\d[\d,]*(?:\.\d+)?").unwrap());
    let numbers = |text: &str| -> Vec<String> {
        NUMBER.find_iter(text).map(|m| m.as_str().replace(',', "")).collect()
    };
    let recorded: std::collections::BTreeSet<String> = numbers(recorded).into_iter().collect();
    let mut unrecorded = Vec::new();
    let mut previous_measured = false;
    for (start, lines) in blocks(text) {
        let is_table = lines[0].starts_with('|');
        // "measured from" says where a window starts, not that something was measured.
        let measured = lines.iter().any(|l| MEASURED.is_match(&l.replace("measured from", "")))
            || (is_table && previous_measured);
        previous_measured = measured;
        if !measured {
            continue;
        }
        for (offset, line) in lines.iter().enumerate() {
            for figure in FIGURE.captures_iter(line) {
                if !numbers(&figure[1]).iter().all(|n| recorded.contains(n)) {
                    unrecorded.push(format!("{}:{}: {}", at.display(), start + offset, &figure[0]));
                }
            }
        }
    }
    unrecorded
}

/// Every recorded benchmark output, as one text.
fn recorded_outputs() -> String {
    let dir = workspace().join("docs/benchmarks");
    let mut text = String::new();
    for entry in std::fs::read_dir(&dir).unwrap() {
        text.push_str(&std::fs::read_to_string(entry.unwrap().path()).unwrap());
    }
    text
}

#[test]
fn every_measured_figure_in_a_users_doc_is_a_recorded_benchmark_output() {
    let root = workspace();
    let recorded = recorded_outputs();
    let docs: Vec<PathBuf> = tracked_markdown()
        .into_iter()
        .filter(|p| p == Path::new("README.md") || (p.starts_with("docs") && !p.starts_with("docs/decisions")))
        .collect();
    let unrecorded: Vec<String> = docs
        .iter()
        .flat_map(|file| unrecorded_figures(file, &std::fs::read_to_string(root.join(file)).unwrap(), &recorded))
        .collect();
    assert!(
        unrecorded.is_empty(),
        "a measured figure not in any recorded output under docs/benchmarks/ (record the benchmark, \
         or move the measurement to a decision record):\n{}",
        unrecorded.join("\n")
    );
}

#[test]
fn a_hand_typed_figure_is_found() {
    let recorded = r#"{"what":"intent-test","p50_ms":1.25}"#;
    let text = "Routing takes 1.25 ms.\nRecall took 3.5 ms at p50.\n\nEach call is limited to 5,000 ms.\n\n\
                The benchmark measured:\n\n| a | b |\n|---|---|\n| 1.25 ms | 7.5 s |\n\n\
                <!-- table: written by a script -->\n| 9.9 ms |\n<!-- /table -->\n";
    assert_eq!(
        unrecorded_figures(Path::new("planted.md"), text, recorded),
        ["planted.md:2: 3.5 ms", "planted.md:10: 7.5 s"]
    );
}
