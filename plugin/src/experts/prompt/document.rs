//! Package documents placed in the prompt (persona, rules, orchestrator), and one-line entries: the
//! author's text as written, headings demoted, cut visibly.

use super::cut::cut_at_line;
use super::limits::PromptLimits;
use super::section::Section;
use crate::experts::package::Package;
use crate::experts::yaml::split_frontmatter;
use crate::platform::text::truncate_chars;

/// The persona (identity, then rules) and the orchestrator, each in full up to the document limit.
pub(super) fn document_sections(
    package: &Package,
    limits: &PromptLimits,
    truncations: &mut Vec<String>,
) -> Vec<Section> {
    let mut sections = Vec::new();
    let (rules, identity): (Vec<_>, Vec<_>) = package
        .persona
        .iter()
        .partition(|d| file_stem(&d.path) == "rules");
    for (title, docs) in [("Identity", identity), ("Rules", rules)] {
        if !docs.is_empty() {
            let body = docs
                .iter()
                .map(|d| embed_document(&d.path, &d.text, limits.max_document_chars, truncations))
                .collect::<Vec<_>>()
                .join("\n");
            sections.push(Section {
                title,
                body,
                reserved: false,
            });
        }
    }
    let orchestrator = &package.orchestrator;
    let body = embed_document(
        &orchestrator.path,
        &orchestrator.text,
        limits.max_document_chars,
        truncations,
    );
    sections.push(Section {
        title: "How to Operate",
        body,
        reserved: false,
    });

    sections
}

fn file_stem(path: &str) -> &str {
    let file = path.rsplit('/').next().unwrap_or(path);
    file.strip_suffix(".md").unwrap_or(file)
}

/// One line: white space folded (so an entry cannot start a line of its own), control characters
/// written out, cut to `max` characters.
pub(crate) fn one_line(text: &str, max: usize) -> String {
    truncate_chars(&crate::platform::text::one_line(text), max)
}

/// A markdown document placed in the prompt: frontmatter dropped, cut to `max` characters (marked),
/// headings demoted two levels (below the prompt's own `##` sections), a code fence left open closed.
pub(super) fn embed_document(
    path: &str,
    text: &str,
    max: usize,
    truncations: &mut Vec<String>,
) -> String {
    let body = match split_frontmatter(text) {
        Ok(fm) if fm.yaml.is_some() => fm.body,
        _ => text,
    };
    let body = body.trim_matches('\n');
    let total = body.chars().count();
    let (kept, marker) = if total > max {
        let cut = cut_at_line(body, max);
        let shown = cut.chars().count();
        truncations.push(format!("{path}: {shown} of {total} characters shown"));
        (
            cut,
            Some(format!(
                "[… truncated: {path} — {shown} of {total} characters shown]"
            )),
        )
    } else {
        (body, None)
    };
    let mut out = String::with_capacity(kept.len() + 64);
    let mut in_fence = false;
    for line in kept.lines() {
        let trimmed = line.trim_start();
        if trimmed.starts_with("```") || trimmed.starts_with("~~~") {
            in_fence = !in_fence;
        }
        if !in_fence && trimmed.starts_with('#') {
            out.push_str("##");
        }
        out.push_str(line);
        out.push('\n');
    }
    if in_fence {
        out.push_str("```\n");
    }
    if let Some(marker) = marker {
        out.push_str(&marker);
        out.push('\n');
    }
    out
}
