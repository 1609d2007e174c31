//! The documentation a user reads: every relative link from the README and `docs/` resolves to a
//! file, and every `#anchor` to a heading of it (GitHub's anchors); the README stays short.

use graphiti_openclaw_native_tests::workspace;
use pulldown_cmark::{Event, HeadingLevel, Parser, Tag, TagEnd};
use std::collections::{BTreeSet, HashMap};
use std::path::{Path, PathBuf};

fn markdown_files() -> Vec<PathBuf> {
    let root = workspace();
    let mut files = vec![root.join("README.md"), root.join("CHANGELOG.md")];
    let mut dirs = vec![root.join("docs")];
    while let Some(dir) = dirs.pop() {
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                dirs.push(path);
            } else if path.extension().is_some_and(|e| e == "md") {
                files.push(path);
            }
        }
    }
    files.sort();
    files
}

/// GitHub's anchor for a heading: lower case, letters, digits, `-` and `_` kept, spaces as `-`,
/// the rest dropped; a repeated anchor gets `-1`, `-2`, ….
fn slug(heading: &str) -> String {
    heading
        .trim()
        .to_lowercase()
        .chars()
        .filter(|c| c.is_alphanumeric() || matches!(c, '-' | '_' | ' '))
        .map(|c| if c == ' ' { '-' } else { c })
        .collect()
}

/// The anchors of a Markdown text, and its links (destinations).
fn read(text: &str) -> (BTreeSet<String>, Vec<String>) {
    let (mut anchors, mut links) = (BTreeSet::new(), Vec::new());
    let mut seen: HashMap<String, usize> = HashMap::new();
    let mut heading: Option<String> = None;
    for event in Parser::new_ext(text, pulldown_cmark::Options::ENABLE_TABLES) {
        match event {
            Event::Start(Tag::Heading { level, .. }) if level <= HeadingLevel::H6 => {
                heading = Some(String::new())
            }
            Event::Text(t) | Event::Code(t) => {
                if let Some(h) = heading.as_mut() {
                    h.push_str(&t);
                }
            }
            Event::End(TagEnd::Heading(_)) => {
                let s = slug(&heading.take().unwrap_or_default());
                let n = seen.entry(s.clone()).or_default();
                anchors.insert(if *n == 0 { s.clone() } else { format!("{s}-{n}") });
                *n += 1;
            }
            Event::Start(Tag::Link { dest_url, .. }) => links.push(dest_url.to_string()),
            _ => {}
        }
    }
    (anchors, links)
}

#[test]
fn every_relative_link_and_anchor_of_the_documentation_resolves() {
    let files = markdown_files();
    let read_all: HashMap<PathBuf, (BTreeSet<String>, Vec<String>)> = files
        .iter()
        .map(|f| (f.clone(), read(&std::fs::read_to_string(f).unwrap())))
        .collect();
    let mut broken = Vec::new();
    let mut checked = 0;
    for (file, (_, links)) in &read_all {
        for link in links {
            if link.contains("://") || link.starts_with("mailto:") {
                continue;
            }
            checked += 1;
            let (path, anchor) = link.split_once('#').unwrap_or((link, ""));
            let target = if path.is_empty() {
                file.clone()
            } else {
                normalize(&file.parent().unwrap().join(path))
            };
            if !target.exists() {
                broken.push(format!("{}: {link}: no such file", file.display()));
                continue;
            }
            if anchor.is_empty() {
                continue;
            }
            match read_all.get(&target) {
                Some((anchors, _)) if anchors.contains(anchor) => {}
                Some(_) => broken.push(format!("{}: {link}: no such heading", file.display())),
                None => broken.push(format!("{}: {link}: an anchor into a file that is not documentation", file.display())),
            }
        }
    }
    assert!(checked > 20, "only {checked} links found: is the parser reading the pages?");
    assert!(broken.is_empty(), "broken links:\n{}", broken.join("\n"));
}

fn normalize(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for part in path.components() {
        match part {
            std::path::Component::ParentDir => {
                out.pop();
            }
            std::path::Component::CurDir => {}
            other => out.push(other),
        }
    }
    out
}

#[test]
fn the_readme_is_read_in_five_minutes() {
    let lines = std::fs::read_to_string(workspace().join("README.md")).unwrap().lines().count();
    assert!(lines <= 300, "README.md has {lines} lines: move what is not for a new user into docs/");
}
