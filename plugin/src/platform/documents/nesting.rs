//! Caps on what a YAML or JSON document may make its reader do, checked before it is deserialized:
//! how deeply it nests, and how many nodes its aliases repeat.
//!
//! libyaml's scanner does work proportional to the open flow collections for every token, so a
//! document such as `[[[[…]]]]` parses in time quadratic in its size (a large one took minutes in the
//! component), and serde only counts depth after the whole document is parsed. Here the same libyaml
//! parser is walked event by event and stopped at the first collection deeper than the cap: the work
//! done until then is linear. JSON nesting is counted directly (its syntax is unambiguous).
//!
//! serde_norway's own alias limit counts the aliases a document replays, not what they repeat: one
//! large anchor repeated a few thousand times took seconds and a gigabyte to read. The same walk
//! weighs each alias by the nodes of what it names and stops past [`MAX_ALIAS_NODES`].
//!
//! That walk parses the document a second time (serde's parse is the first), nearly half of loading a
//! large rules file; so it runs only when a single pass over the bytes ([`depth_bound_at_most`]) cannot
//! prove that the document nests no deeper than the cap, or the document may hold an alias.

use std::collections::HashMap;
use unsafe_libyaml_norway as unsafe_libyaml;

/// Deepest nesting of collections accepted in a configuration or expert file.
pub const MAX_NESTING: usize = 64;

/// Most nodes the aliases of one document may repeat, all aliases together.
pub const MAX_ALIAS_NODES: u64 = 100_000;

/// Why a document was refused before it was read, and where.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Refused {
    /// 1-based.
    pub line: u32,
    pub reason: Reason,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Reason {
    /// A collection deeper than [`MAX_NESTING`].
    TooDeep,
    /// Aliases repeating more than [`MAX_ALIAS_NODES`] nodes.
    AliasesRepeatTooMuch,
}

impl Refused {
    pub fn message(&self) -> String {
        match self.reason {
            Reason::TooDeep => format!("nested deeper than {MAX_NESTING} levels"),
            Reason::AliasesRepeatTooMuch => format!(
                "its aliases (`*name`) repeat more than {MAX_ALIAS_NODES} nodes; write the values out or repeat less"
            ),
        }
    }
}

/// Checks a YAML text. Syntax errors are left for the deserializer to report (it stops at the same
/// place), so only a nesting or alias problem is an error here.
pub fn check_yaml(text: &str) -> Result<(), Refused> {
    let may_alias = memchr::memchr(b'&', text.as_bytes()).is_some()
        && memchr::memchr(b'*', text.as_bytes()).is_some();
    if !may_alias && depth_bound_at_most(text, MAX_NESTING) {
        return Ok(());
    }
    let mut parser = super::libyaml::Parser::new(text);
    let mut walk = Walk::default();
    loop {
        let Ok((kind, offset)) = parser.next(|e| (e.type_, e.start_mark.index as usize)) else {
            return Ok(());
        };
        let refused = |reason| Refused {
            line: super::errors::line_at(text, offset),
            reason,
        };
        match kind {
            unsafe_libyaml::YAML_SEQUENCE_START_EVENT
            | unsafe_libyaml::YAML_MAPPING_START_EVENT => {
                walk.nodes += 1;
                walk.open.push((anchor_at(text, offset), walk.nodes));
                if walk.open.len() > MAX_NESTING {
                    return Err(refused(Reason::TooDeep));
                }
            }
            unsafe_libyaml::YAML_SEQUENCE_END_EVENT | unsafe_libyaml::YAML_MAPPING_END_EVENT => {
                if let Some((Some(anchor), first)) = walk.open.pop() {
                    walk.anchors.insert(anchor, walk.nodes - first + 1);
                }
            }
            unsafe_libyaml::YAML_SCALAR_EVENT => {
                walk.nodes += 1;
                if let Some(anchor) = anchor_at(text, offset) {
                    walk.anchors.insert(anchor, 1);
                }
            }
            unsafe_libyaml::YAML_ALIAS_EVENT => {
                let repeated = name_at(text, offset.saturating_add(1))
                    .and_then(|name| walk.anchors.get(name))
                    .copied()
                    .unwrap_or(1);
                walk.nodes = walk.nodes.saturating_add(repeated);
                walk.repeated = walk.repeated.saturating_add(repeated);
                if walk.repeated > MAX_ALIAS_NODES {
                    return Err(refused(Reason::AliasesRepeatTooMuch));
                }
            }
            unsafe_libyaml::YAML_STREAM_END_EVENT => return Ok(()),
            _ => {}
        }
    }
}

/// The walk's count: nodes so far (an alias counting the nodes it repeats), the open collections
/// (each with its anchor and its first node's number), each anchor's size, and what aliases repeat.
#[derive(Default)]
struct Walk<'t> {
    nodes: u64,
    open: Vec<(Option<&'t str>, u64)>,
    anchors: HashMap<&'t str, u64>,
    repeated: u64,
}

/// The anchor of the node whose event starts at `offset`: libyaml starts a node's event at its
/// first property, an anchor (`&name`) or a tag (`!tag`), in either order.
fn anchor_at(text: &str, offset: usize) -> Option<&str> {
    let mut rest = text.get(offset..)?;
    for _ in 0..2 {
        if let Some(after) = rest.strip_prefix('&') {
            return name_at(after, 0);
        }
        let tag = rest.strip_prefix('!')?;
        rest = tag
            .trim_start_matches(|c: char| !c.is_whitespace())
            .trim_start();
    }
    None
}

/// The anchor or alias name starting at `offset`: up to a blank, a line break or a flow indicator.
fn name_at(text: &str, offset: usize) -> Option<&str> {
    let rest = text.get(offset..)?;
    let end = rest
        .find(|c: char| c.is_whitespace() || matches!(c, ',' | '[' | ']' | '{' | '}'))
        .unwrap_or(rest.len());
    (end > 0).then(|| &rest[..end])
}

/// Whether `text` holds NEL, LS, PS or a BOM. Their encodings start with 0xC2, 0xE2 or 0xEF: those
/// bytes are found with memchr's vector search, where matching characters decoded every one.
fn has_unsure_characters(text: &str) -> bool {
    let bytes = text.as_bytes();
    memchr::memchr3_iter(0xC2, 0xE2, 0xEF, bytes).any(|at| {
        text.get(at..)
            .and_then(|rest| rest.chars().next())
            .is_some_and(|c| matches!(c, '\u{85}' | '\u{2028}' | '\u{2029}' | '\u{feff}'))
    })
}

/// True only if no collection in `text` can be deeper than `cap` for libyaml (false is "unsure").
///
/// The depth at any event is at most the open block collections plus the flow level:
/// - Flow level: every `[` `{` counts and every `]` `}` uncounts (not below zero). In flow context
///   libyaml reads every bracket outside quotes, comments and tags as an indicator (a plain scalar
///   stops at one); in block context the real level is zero, which the count never goes below. So
///   the count never falls below libyaml's level once quotes, tags and comments are recognized
///   exactly, and anything that could be one of those without being certain is "unsure": a quote,
///   `!` or `#` is certain only after a letter or digit (inside a plain scalar: literal; a token
///   never starts there), and `#` after a blank or at a line start is a comment (or text of a block
///   scalar, which holds no tokens: skipping it is safe).
/// - Block collections: each holds an indentation entry at a distinct column (a sequence without
///   indentation inside a mapping adds one more: hence twice). The first token of a line in block
///   context drops entries right of its column (its indentation), and every new entry on the line
///   starts at a `-`, `?` or `:` of that line. A line that starts inside a flow collection keeps the
///   entries from before plus the new ones of its own.
/// - libyaml's other line breaks (a lone CR, NEL, LS, PS) and a BOM (which moves its column) are
///   "unsure".
fn depth_bound_at_most(text: &str, cap: usize) -> bool {
    if has_unsure_characters(text) {
        return false;
    }
    let (mut flow, mut block) = (0usize, 0usize);
    for line in text.as_bytes().split(|&b| b == b'\n') {
        let lead = line
            .iter()
            .take_while(|&&b| b == b' ' || b == b'\t')
            .count();
        let (flow_at_start, mut openers, mut indicators) = (flow, 0usize, 0usize);
        let mut previous = b' ';
        for (i, &byte) in line.iter().enumerate() {
            match byte {
                b'[' | b'{' => {
                    flow += 1;
                    openers += 1;
                }
                b']' | b'}' => flow = flow.saturating_sub(1),
                b'-' | b'?' | b':' => indicators += 1,
                b'#' if previous == b' ' || previous == b'\t' => break,
                b'#' | b'\'' | b'"' | b'!' if previous.is_ascii_alphanumeric() => {}
                b'#' | b'\'' | b'"' | b'!' => return false,
                b'\r' if i + 1 != line.len() => return false,
                _ => {}
            }
            previous = byte;
        }
        block = if flow_at_start == 0 {
            2 * (lead + 1 + indicators)
        } else {
            block + 2 * indicators
        };
        if block + flow_at_start + openers > cap {
            return false;
        }
    }
    true
}

/// Checks a JSON text: brackets outside strings. Malformed JSON is left for the deserializer.
pub fn check_json(text: &str) -> Result<(), Refused> {
    let (mut depth, mut line, mut in_string, mut escaped) = (0usize, 1u32, false, false);
    for byte in text.bytes() {
        match byte {
            b'\n' => line += 1,
            _ if in_string => match byte {
                _ if escaped => escaped = false,
                b'\\' => escaped = true,
                b'"' => in_string = false,
                _ => {}
            },
            b'"' => in_string = true,
            b'[' | b'{' => {
                depth += 1;
                if depth > MAX_NESTING {
                    return Err(Refused {
                        line,
                        reason: Reason::TooDeep,
                    });
                }
            }
            b']' | b'}' => depth = depth.saturating_sub(1),
            _ => {}
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unsure_characters_are_found_as_a_character_search_finds_them() {
        let pieces = [
            "a", " ", "\n", "\u{85}", "\u{a0}", "\u{2028}", "\u{2029}", "\u{2027}", "\u{feff}",
            "\u{fefe}", "é", "—", "融", "\u{c2}",
        ];
        let mut next = crate::platform::text::test_numbers(0x2545_f491_u64);
        for _ in 0..3_000 {
            let text: String = (0..next(10))
                .map(|_| pieces[next(pieces.len() as u64) as usize])
                .collect();
            let expected = text.contains(['\u{85}', '\u{2028}', '\u{2029}', '\u{feff}']);
            assert_eq!(has_unsure_characters(&text), expected, "{text:?}");
        }
    }

    #[test]
    fn shallow_documents_pass_and_deep_ones_name_their_line() {
        assert_eq!(check_yaml("a: [1, {b: [2]}]\nc:\n  - d: e\n"), Ok(()));
        let deep = format!("a: 1\nb: {}{}\n", "[".repeat(65), "]".repeat(65));
        assert_eq!(
            check_yaml(&deep),
            Err(Refused {
                line: 2,
                reason: Reason::TooDeep
            })
        );
        assert_eq!(
            check_yaml(&format!("{}{}", "[".repeat(64), "]".repeat(64))),
            Ok(())
        );
        let mut block = String::new();
        for level in 0..70 {
            block.push_str(&format!("{}k:\n", " ".repeat(level)));
        }
        assert_eq!(
            check_yaml(&block),
            Err(Refused {
                line: 65,
                reason: Reason::TooDeep
            })
        );
        assert_eq!(
            check_yaml("a: [unclosed\n"),
            Ok(()),
            "syntax is the parser's"
        );
    }

    #[test]
    fn aliases_are_weighed_by_what_they_repeat() {
        assert_eq!(
            check_yaml("a: &x [1, 2, {b: 3}]\nc: *x\nd: [*x, *x]\n"),
            Ok(())
        );
        assert_eq!(
            check_yaml("a: R&D\nb: 2 * 3\n"),
            Ok(()),
            "no anchor, no alias"
        );
        let mut bomb = String::from("l0: &l0 [x, x, x, x, x, x, x, x, x, x]\n");
        for level in 1..10 {
            let aliases = vec![format!("*l{}", level - 1); 10].join(", ");
            bomb += &format!("l{level}: &l{level} [{aliases}]\n");
        }
        let refused = check_yaml(&bomb).unwrap_err();
        assert_eq!(refused.reason, Reason::AliasesRepeatTooMuch);
        assert!(refused.line <= 10, "{refused:?}");
        // One large anchor repeated: few aliases, many nodes (serde_norway's own limit lets it by).
        let keywords = vec!["k"; 5_000].join(", ");
        let repeated = vec!["*big"; 2_000].join(", ");
        let wide = format!("big: &big [{keywords}]\nall: [{repeated}]\n");
        assert_eq!(
            check_yaml(&wide).map_err(|r| r.reason),
            Err(Reason::AliasesRepeatTooMuch)
        );
        // Block style: the anchor is found where libyaml starts the collection's event.
        let mut block = String::from("l0: &l0\n");
        block += &"  - x\n".repeat(10);
        for level in 1..10 {
            block += &format!("l{level}: &l{level}\n");
            block += &format!("  - *l{}\n", level - 1).repeat(10);
        }
        assert_eq!(
            check_yaml(&block).map_err(|r| r.reason),
            Err(Reason::AliasesRepeatTooMuch)
        );
        let tagged = "a: !!seq &x [1, 2]\nb: *x\n";
        assert_eq!(anchor_at(tagged, 3), Some("x"));
        assert_eq!(check_yaml(tagged), Ok(()));
    }

    /// The deepest nesting libyaml reports before the end or its first error.
    fn walked_depth(text: &str) -> usize {
        let mut parser = crate::platform::documents::libyaml::Parser::new(text);
        let (mut depth, mut deepest) = (0usize, 0usize);
        while let Ok(kind) = parser.next(|e| e.type_) {
            match kind {
                unsafe_libyaml::YAML_SEQUENCE_START_EVENT
                | unsafe_libyaml::YAML_MAPPING_START_EVENT => {
                    depth += 1;
                    deepest = deepest.max(depth);
                }
                unsafe_libyaml::YAML_SEQUENCE_END_EVENT
                | unsafe_libyaml::YAML_MAPPING_END_EVENT => depth = depth.saturating_sub(1),
                unsafe_libyaml::YAML_STREAM_END_EVENT => break,
                _ => {}
            }
        }
        deepest
    }

    #[test]
    fn the_byte_scan_never_passes_what_the_walk_refuses() {
        let deep = format!("{}{}", "[".repeat(70), "]".repeat(70));
        let hidden = [
            format!("a: 'x]]]]]]]]]]'\nb: {deep}\n"),
            format!("a: \"]]]]]]]]]]\"\nb: {deep}\n"),
            format!("a: [x, ']]]]]]]]]]', {deep}]\n"),
            format!("a: [ # ]]]]]]]]]]\n  {deep}]\n"),
            format!("a: [#]]]]]]]]]]\n  {deep}]\n"),
            format!("a: |\n  ]]]]]]]]]]\nb: {deep}\n"),
            format!("a: b]]]]]]]]]]\nc: {deep}\n"),
            format!("a: [!<x]]]]]]]]]]]> y, {deep}]\n"),
            format!("\u{feff}a: {deep}\n"),
        ];
        for text in &hidden {
            assert!(walked_depth(text) > MAX_NESTING, "{text:?}");
            assert!(check_yaml(text).is_err(), "{text:?}");
        }
        let rules = "rules:\n  - { id: r, keywords: [a, b's, c#], scope: public } # note [\n";
        assert!(
            depth_bound_at_most(rules, MAX_NESTING),
            "a flow-style rules file is proven shallow"
        );
    }

    /// Random documents from YAML's tricky pieces: whenever the scan says a document nests at most
    /// `cap` deep, libyaml's walk must agree (a small cap makes most of them matter).
    #[test]
    fn the_byte_scan_is_an_upper_bound_on_random_documents() {
        let pieces = [
            "[", "]", "{", "}", "- ", "? ", ": ", ":", ",", " ", "  ", "\n", "\n  ", "\n    ", "a",
            "b1", "#", " #", "'", "\"", "|\n", ">\n", "!", "&x ", "*x", "---\n", "\t", "\r",
            "\r\n", "-", "é",
        ];
        let mut seed = 0x9E37_79B9_7F4A_7C15u64;
        let mut next = move || {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed
        };
        let (mut proven, mut checked) = (0, 0);
        for _ in 0..200_000 {
            let len = 1 + next() % 40;
            let text: String = (0..len)
                .map(|_| pieces[(next() % pieces.len() as u64) as usize])
                .collect();
            for cap in [1, 2, 3, 4, 6] {
                if depth_bound_at_most(&text, cap) {
                    proven += 1;
                    assert!(walked_depth(&text) <= cap, "cap {cap}: {text:?}");
                }
                checked += 1;
            }
        }
        assert!(
            proven > checked / 50,
            "{proven} of {checked}: the scan proves too little to test"
        );
    }

    #[test]
    fn json_brackets_inside_strings_do_not_count() {
        let deep = format!("{{\n\"a\": {}1{}}}", "[".repeat(70), "]".repeat(70));
        assert_eq!(
            check_json(&deep),
            Err(Refused {
                line: 2,
                reason: Reason::TooDeep
            })
        );
        let quoted = format!("{{\"a\": \"{}\\\"[\"}}", "[".repeat(100));
        assert_eq!(check_json(&quoted), Ok(()));
    }
}
