//! What the repository's text says of itself: no page or comment dates itself by the project's
//! history ("this stop", "the stop before"), and no comment carries a measured figure, which is
//! stale the moment the next change lands (figures belong in a benchmark's output or a decision
//! record under `docs/decisions/`). Every proptest regression file sits where proptest replays it:
//! beside the path of the source file whose property wrote it.

use graphiti_openclaw_native_tests::workspace;
use regex::Regex;
use std::path::PathBuf;

/// Every file git tracks, as paths relative to the workspace; the vendored lockfiles excluded.
fn tracked_files() -> Vec<PathBuf> {
    graphiti_openclaw_native_tests::tracked_files(&[])
        .into_iter()
        .filter(|p| !p.ends_with("package-lock.json") && !p.ends_with("Cargo.lock"))
        .collect()
}

/// How a file's comments are written, by its name: `//` and `/* … */` (with `*` lines), or `#`.
enum Syntax {
    Slashes,
    Hash,
}

fn syntax(path: &std::path::Path) -> Option<Syntax> {
    let ext = path.extension().and_then(|e| e.to_str()).unwrap_or("");
    match ext {
        "rs" | "js" | "mjs" | "css" | "wit" => Some(Syntax::Slashes),
        "sh" | "toml" | "yaml" | "yml" => Some(Syntax::Hash),
        _ if path.starts_with(".ci") => Some(Syntax::Hash),
        _ => None,
    }
}

/// A file's comments as blocks of consecutive comment lines: (first line number, text).
fn comment_blocks(syntax: &Syntax, text: &str) -> Vec<(usize, String)> {
    let slashes = Regex::new(r#"(?:^|[^:"'`])(//.*)$|^\s*(/\*.*|\*.*)$"#).unwrap();
    let hash = Regex::new(r"(?:^|\s)(#[^!{].*|#)$").unwrap();
    let mut blocks: Vec<(usize, String)> = Vec::new();
    let mut previous = 0;
    for (index, line) in text.lines().enumerate() {
        let found = match syntax {
            Syntax::Slashes => slashes.captures(line).and_then(|c| c.get(1).or_else(|| c.get(2))),
            Syntax::Hash => hash.captures(line).and_then(|c| c.get(1)),
        };
        let Some(comment) = found else { continue };
        let number = index + 1;
        match blocks.last_mut() {
            Some((_, block)) if previous + 1 == number => {
                block.push(' ');
                block.push_str(comment.as_str());
            }
            _ => blocks.push((number, comment.as_str().to_owned())),
        }
        previous = number;
    }
    blocks
}

/// Text that dates itself by the project's history rather than saying what is.
const RELATIVE_TIME: &[&str] = &["this stop", "the stop before", "two stops before", "previous stop", "earlier stops"];

#[test]
fn no_page_or_comment_speaks_of_the_projects_history() {
    let root = workspace();
    let mut found = Vec::new();
    for file in tracked_files() {
        if file.ends_with("tests/native/tests/all/comments.rs") || !(syntax(&file).is_some() || file.extension().is_some_and(|e| e == "md")) {
            continue;
        }
        let text = std::fs::read_to_string(root.join(&file)).unwrap_or_default().to_lowercase();
        for phrase in RELATIVE_TIME {
            if text.contains(phrase) {
                found.push(format!("{}: \"{phrase}\"", file.display()));
            }
        }
    }
    assert!(found.is_empty(), "say what is, not when it changed:\n{}", found.join("\n"));
}

/// A number with a unit of time, size or proportion.
const FIGURE: &str = r"(?i)(?:^|[^\w.])~?\d[\d,._]*\s?(?:ms|µs|us|ns|s|secs?|seconds?|minutes?|min|hours?|[kmg]i?b|bytes?|%|×|x|instructions)(?:[^\w]|$)";
/// Words that say a figure was observed rather than chosen.
const MEASURED: &str = r"(?i)\b(?:measured|measuring|took|takes about|median|p50|p9[059]|fewer instructions|more instructions|faster than|slower than|smaller than|larger than|was [\d.,]+ ?% (?:larger|smaller)|benchmarked|on this machine)\b";

/// A comment's sentences (a `.`, `;`, `!` or `?` before a space ends one; `0.3` does not): a figure
/// and a word of measuring count together only within one.
fn sentences(block: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let mut start = 0;
    let bytes = block.as_bytes();
    for (i, b) in bytes.iter().enumerate() {
        if matches!(b, b'.' | b';' | b'!' | b'?') && bytes.get(i + 1).is_none_or(u8::is_ascii_whitespace) {
            out.push(&block[start..=i]);
            start = i + 1;
        }
    }
    out.push(&block[start..]);
    out
}

#[test]
fn no_comment_carries_a_measured_figure() {
    let (figure, measured) = (Regex::new(FIGURE).unwrap(), Regex::new(MEASURED).unwrap());
    let root = workspace();
    let mut found = Vec::new();
    for file in tracked_files() {
        let Some(syntax) = syntax(&file) else { continue };
        if file.ends_with("tests/native/tests/all/comments.rs") {
            continue;
        }
        let Ok(text) = std::fs::read_to_string(root.join(&file)) else { continue };
        for (line, block) in comment_blocks(&syntax, &text) {
            for sentence in sentences(&block) {
                if figure.is_match(sentence) && measured.is_match(sentence) {
                    found.push(format!("{}:{line}: {}", file.display(), sentence.trim()));
                }
            }
        }
    }
    assert!(
        found.is_empty(),
        "a comment says why; a measured figure goes into a benchmark's output or docs/decisions/:\n{}",
        found.join("\n")
    );
}

#[test]
fn the_comment_checks_see_what_they_look_for() {
    let (figure, measured) = (Regex::new(FIGURE).unwrap(), Regex::new(MEASURED).unwrap());
    let rust = "let a = 1; // fast: 100,000 keywords\n// took 4 s natively\nlet b = \"http://x\";\n";
    let blocks = comment_blocks(&Syntax::Slashes, rust);
    assert_eq!(blocks, vec![(1, "// fast: 100,000 keywords // took 4 s natively".to_owned())]);
    assert!(figure.is_match(&blocks[0].1) && measured.is_match(&blocks[0].1));
    assert_eq!(sentences("Took 0.3 s. Then 5 s; fine"), vec!["Took 0.3 s.", " Then 5 s;", " fine"]);
    let toml = "#!/bin/sh\nx = 1 # at 15 the component was 1.2% larger\ny = \"#{a}\"\n";
    let blocks = comment_blocks(&Syntax::Hash, toml);
    assert_eq!(blocks, vec![(2, "# at 15 the component was 1.2% larger".to_owned())]);
    assert!(figure.is_match(&blocks[0].1) && measured.is_match(&blocks[0].1));
    for chosen in ["// retried every 10 to 20 ms", "/// at most 16 MiB", "# the lease is 5 s"] {
        assert!(!measured.is_match(chosen), "a chosen limit is not a measurement: {chosen}");
    }
}

/// proptest reads `<crate>/proptest-regressions/<path under src>.txt` for the properties of
/// `<crate>/src/<path under src>.rs`: a file left behind when its test moved is never replayed.
#[test]
fn every_proptest_regression_file_is_replayed_by_a_property() {
    let mut orphans = Vec::new();
    for file in tracked_files() {
        let text = file.to_string_lossy().replace('\\', "/");
        let Some((krate, under)) = text.split_once("/proptest-regressions/") else {
            continue;
        };
        let Some(stem) = under.strip_suffix(".txt") else {
            continue;
        };
        let source = workspace().join(krate).join("src").join(format!("{stem}.rs"));
        let replayed = std::fs::read_to_string(&source).is_ok_and(|code| code.contains("proptest!"));
        if !replayed {
            orphans.push(format!("{text}: no property in {}", source.display()));
        }
    }
    assert!(orphans.is_empty(), "regression files no property replays:\n{}", orphans.join("\n"));
}
