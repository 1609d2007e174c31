//! memory-core's Markdown as items to remember: a `MEMORY.md` or note entry is a list item or a
//! paragraph (with the heading it sits under), a `USER.md` entry is a directive with the
//! `observed | status` comment before it. memory-core's own recall markers are stripped.

/// One entry of a file, before it is named and timed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Entry {
    /// What is remembered, markers stripped.
    pub text: String,
    /// The nearest heading above it, if any.
    pub heading: Option<String>,
    /// `USER.md`: the date the directive was observed (`YYYY-MM-DD`).
    pub observed: Option<String>,
    /// `USER.md`: marked `status: superseded`, with the date a later directive of its section was
    /// observed, when one was.
    pub superseded: Option<Option<String>>,
}

/// memory-core's recall metadata, trailing an entry's line: never part of what is remembered.
const MARKERS: [&str; 2] = ["trigger:", "importance:"];

/// The entries of a `MEMORY.md`, a daily note or an imported note.
pub fn entries(text: &str) -> Vec<Entry> {
    split(text)
        .into_iter()
        .map(|block| Entry {
            text: block.text,
            heading: block.heading,
            observed: None,
            superseded: None,
        })
        .collect()
}

/// The directives of a `USER.md`, each with the `<!-- observed: … | status: … -->` before it.
pub fn directives(text: &str) -> Vec<Entry> {
    let mut out: Vec<Entry> = Vec::new();
    for block in split(text) {
        let (observed, superseded) = match &block.metadata {
            Some(meta) => (meta_field(meta, "observed"), meta_field(meta, "status")),
            None => (None, None),
        };
        let superseded = superseded
            .is_some_and(|s| s.eq_ignore_ascii_case("superseded"))
            .then_some(None);
        out.push(Entry {
            text: block.text,
            heading: block.heading,
            observed,
            superseded,
        });
    }
    // A superseded directive is replaced in its section: the next active one's date is when.
    for at in 0..out.len() {
        if out[at].superseded.is_none() {
            continue;
        }
        let replaced_by = out[at + 1..]
            .iter()
            .take_while(|later| later.heading == out[at].heading)
            .find(|later| later.superseded.is_none())
            .and_then(|later| later.observed.clone());
        out[at].superseded = Some(replaced_by);
    }
    out
}

/// A block of text with the heading above it and the metadata comment just before it.
struct Block {
    text: String,
    heading: Option<String>,
    metadata: Option<String>,
}

/// The text after a YAML front matter block (`---` … `---` at its start), if it has one.
fn without_front_matter(text: &str) -> &str {
    let Some(rest) = text.strip_prefix("---\n") else {
        return text;
    };
    let mut at = 0;
    for line in rest.split_inclusive('\n') {
        at += line.len();
        if line.trim_end() == "---" {
            return &rest[at..];
        }
    }
    text
}

/// Splits Markdown into list items and paragraphs; fenced code stays whole within its block.
fn split(text: &str) -> Vec<Block> {
    let text = without_front_matter(text);
    let mut blocks = Vec::new();
    let mut heading: Option<String> = None;
    let mut metadata: Option<String> = None;
    let mut current: Vec<&str> = Vec::new();
    let mut fence: Option<&str> = None;
    let mut flush =
        |current: &mut Vec<&str>, heading: &Option<String>, metadata: &mut Option<String>| {
            let text = strip_markers(&current.join("\n"));
            current.clear();
            if !text.trim().is_empty() {
                blocks.push(Block {
                    text: text.trim().to_string(),
                    heading: heading.clone(),
                    metadata: metadata.clone(),
                });
            }
        };
    for line in text.lines() {
        let trimmed = line.trim();
        if let Some(open) = fence {
            current.push(line);
            if trimmed.starts_with(open) {
                fence = None;
            }
            continue;
        }
        if trimmed.starts_with("```") || trimmed.starts_with("~~~") {
            fence = Some(&trimmed[..3]);
            current.push(line);
            continue;
        }
        if trimmed.is_empty() {
            flush(&mut current, &heading, &mut metadata);
            continue;
        }
        if let Some(title) = heading_text(trimmed) {
            flush(&mut current, &heading, &mut metadata);
            heading = (!title.is_empty()).then(|| title.to_string());
            metadata = None;
            continue;
        }
        if let Some(comment) = whole_comment(trimmed) {
            flush(&mut current, &heading, &mut metadata);
            if comment.contains("observed") || comment.contains("status") {
                metadata = Some(comment.to_string());
            }
            continue;
        }
        if starts_list_item(line) {
            flush(&mut current, &heading, &mut metadata);
        }
        current.push(line);
    }
    flush(&mut current, &heading, &mut metadata);
    blocks
}

/// `## Title` → `Title` (ATX headings only; `#` alone is an empty heading).
fn heading_text(line: &str) -> Option<&str> {
    let hashes = line.bytes().take_while(|&b| b == b'#').count();
    if hashes == 0 || hashes > 6 {
        return None;
    }
    let rest = &line[hashes..];
    (rest.is_empty() || rest.starts_with(' ')).then(|| rest.trim().trim_end_matches('#').trim())
}

/// A line that is one HTML comment: its inside.
fn whole_comment(line: &str) -> Option<&str> {
    let inner = line.strip_prefix("<!--")?.strip_suffix("-->")?;
    (!inner.contains("-->")).then(|| inner.trim())
}

/// A list item at the start of a line (not indented: nested items stay with their parent).
fn starts_list_item(line: &str) -> bool {
    let bullet = ["- ", "* ", "+ "].iter().any(|b| line.starts_with(b));
    let digits = line.bytes().take_while(u8::is_ascii_digit).count();
    let numbered = digits > 0 && matches!(&line.as_bytes()[digits..], [b'.' | b')', b' ', ..]);
    bullet || numbered
}

/// The text without memory-core's `<!-- trigger: … -->` and `<!-- importance: … -->` comments.
fn strip_markers(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(open) = rest.find("<!--") {
        let Some(close) = rest[open..].find("-->") else {
            break;
        };
        let inner = rest[open + 4..open + close].trim_start();
        out.push_str(&rest[..open]);
        if !MARKERS.iter().any(|marker| inner.starts_with(marker)) {
            out.push_str(&rest[open..open + close + 3]);
        }
        rest = &rest[open + close + 3..];
    }
    out.push_str(rest);
    out.lines()
        .map(str::trim_end)
        .collect::<Vec<_>>()
        .join("\n")
}

/// `observed` in `observed: 2026-05-10 | status: active`.
fn meta_field(meta: &str, field: &str) -> Option<String> {
    meta.split('|').find_map(|part| {
        let (name, value) = part.split_once(':')?;
        (name.trim().eq_ignore_ascii_case(field)).then(|| value.trim().to_string())
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn list_items_and_paragraphs_are_entries_under_their_heading() {
        let found = entries(
            "# Memory\n\nThe user lives in Lisbon.\nSince 2024.\n\n## Work\n- Acme launch is May 3 \
             <!-- trigger: acme, launch --> <!-- importance: 8 -->\n  still on track\n- Deploys on Fridays are banned\n\n```\ncode\n\nkept\n```\n",
        );
        let texts: Vec<(&str, Option<&str>)> = found
            .iter()
            .map(|e| (e.text.as_str(), e.heading.as_deref()))
            .collect();
        assert_eq!(
            texts,
            [
                ("The user lives in Lisbon.\nSince 2024.", Some("Memory")),
                ("- Acme launch is May 3\n  still on track", Some("Work")),
                ("- Deploys on Fridays are banned", Some("Work")),
                ("```\ncode\n\nkept\n```", Some("Work")),
            ]
        );
    }

    #[test]
    fn front_matter_is_not_an_entry() {
        let found = entries("---\nsummary: a template\n---\n- the one entry\n");
        assert_eq!(found.len(), 1);
        assert_eq!(found[0].text, "- the one entry");
        assert_eq!(
            entries("---\nnever closed\n")[0].text,
            "---\nnever closed",
            "no front matter without its end: the text stays"
        );
    }

    #[test]
    fn other_comments_stay_and_an_unclosed_one_is_text() {
        let found = entries("- a <!-- note: mine --> b\n- c <!-- trigger: x\n");
        assert_eq!(found[0].text, "- a <!-- note: mine --> b");
        assert_eq!(found[1].text, "- c <!-- trigger: x");
    }

    #[test]
    fn superseded_directives_carry_when_they_were_replaced() {
        let found = directives(
            "## Style\n<!-- observed: 2026-05-10 | status: superseded -->\n\n- Prefer detailed explanations.\n\n\
             <!-- observed: 2026-07-27 | status: active -->\n\n- Prefer concise summaries.\n\n## Tools\n\
             <!-- observed: 2026-01-02 | status: superseded -->\n- Always use tabs.\n",
        );
        assert_eq!(found.len(), 3);
        assert_eq!(found[0].observed.as_deref(), Some("2026-05-10"));
        assert_eq!(found[0].superseded, Some(Some("2026-07-27".to_string())));
        assert_eq!(found[1].superseded, None);
        assert_eq!(found[1].observed.as_deref(), Some("2026-07-27"));
        assert_eq!(
            found[2].superseded,
            Some(None),
            "nothing replaced it in its section"
        );
    }
}
