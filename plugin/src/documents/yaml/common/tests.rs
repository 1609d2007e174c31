//! Differential tests: whatever the common reader accepts, serde_norway reads to the same value
//! (and `events_are_libyamls` checks the events themselves);
//! the documents the product ships (and the benchmark's large rules file) are accepted, so they do
//! take the fast path.

/// `text` read as `T` from the events here; `None` where the reader declines it or the type refuses.
fn from_str<T: serde::de::DeserializeOwned>(text: &str) -> Option<T> {
    super::super::walker::read(&super::events(text)?).ok()
}
use proptest::prelude::*;
use proptest::strategy::ValueTree;
use std::path::{Path, PathBuf};

/// The reader agrees with serde_norway on `text` (or declines it); returns whether it accepted.
fn agrees(text: &str) -> bool {
    let ours = from_str::<serde_norway::Value>(text);
    if let Some(ours) = &ours {
        let theirs = serde_norway::from_str::<serde_norway::Value>(text);
        assert_eq!(
            theirs.as_ref().ok(),
            Some(ours),
            "read differently from serde_norway ({theirs:?}):\n{text}"
        );
    }
    ours.is_some()
}

fn accepted(text: &str) {
    assert!(agrees(text), "declined:\n{text}");
}

fn declined(text: &str) {
    assert!(!agrees(text), "accepted:\n{text}");
}

fn repo_config() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../config")
}

fn yaml_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            yaml_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "yaml" || e == "yml") {
            out.push(path);
        }
    }
}

#[test]
fn the_shipped_configuration_takes_the_fast_path_and_reads_the_same() {
    let mut files = Vec::new();
    yaml_files(&repo_config(), &mut files);
    assert!(files.len() >= 15, "{files:?}");
    for file in files {
        let text = std::fs::read_to_string(&file).unwrap();
        assert!(agrees(&text), "{} declined", file.display());
    }
}

#[test]
fn typed_configuration_reads_the_same() {
    use crate::config::{PackFile, RulesFile};
    let text = std::fs::read_to_string(repo_config().join("intent_rules.yaml")).unwrap();
    let ours: RulesFile = from_str(&text).expect("accepted");
    let theirs: RulesFile = serde_norway::from_str(&text).unwrap();
    assert_eq!(format!("{ours:?}"), format!("{theirs:?}"));
    for pack in std::fs::read_dir(repo_config().join("packs")).unwrap() {
        let text = std::fs::read_to_string(pack.unwrap().path()).unwrap();
        let ours: PackFile = from_str(&text).expect("accepted");
        let theirs: PackFile = serde_norway::from_str(&text).unwrap();
        assert_eq!(format!("{ours:?}"), format!("{theirs:?}"));
    }
}

#[test]
fn a_large_rules_file_in_flow_style_is_accepted() {
    let mut text = String::from("schema_version: 1\nrules:\n");
    for r in 0..2_000 {
        text.push_str(&format!(
            "  - {{ id: rule_{r}, consumer_profile: bench, pack_type: type_{r}, scope: public, keywords: [kw{r}a, kw{r} b, 'kw{r}''c'] }}\n"
        ));
    }
    accepted(&text);
}

#[test]
fn the_common_forms_are_read() {
    for text in [
        "a: 1\nb: -2\nc: 1.5\nd: -0.25\ne: true\nf: False\ng: ~\nh:\ni: null\nj: text with spaces\n",
        "rules:\n- id: a\n  keywords: [x, y]\n- id: b\nnext: 1\n",
        "rules:\n  - id: a\n    keywords:\n      - x\n      -   y\n  -\n    id: b\n",
        "# comment\n\na: b # trailing\n   # indented comment\nc: 'it''s'\nd: \"tab\\there \\u00e9 \\x41 \\\"q\\\"\"\n",
        "keywords: [dinner, lunch, tasting menu,\n           wine bar, 餐厅]\nother: {a: 1, b: [2, 3], 'c d': \"e\",}\n",
        "text: |\n  line one\n\n  line two\n    indented\n\nafter: 1\n",
        "text: |-\n  stripped\n  end\n",
        "list:\n- |\n  block item\n- plain\n",
        "empty_list: []\nempty_map: {}\nquoted_empty: ''\nq2: \"\"\n",
        "a: x#y\nb: C# and F#\nc: 100%\nd: a-b\ne: -a\nf: 007\ng: 1.2.3\n",
        "  indented: root\n  second: 2\n",
        "key   : spaced\n'quoted key': 1\n\"dq key\": 2\n",
    ] {
        accepted(text);
    }
    // Common too, but read by libyaml: a comment after a quoted scalar, a sequence opened on its
    // parent's dash.
    for text in [
        "# comment\n\na: b # trailing\n   # indented comment\nc: 'it''s' # x\nd: \"tab\\there \\u00e9 \\x41 \\\"q\\\"\"\n",
        "- a\n- - b\n",
    ] {
        declined(text);
        assert!(
            serde_norway::from_str::<serde_norway::Value>(text).is_ok(),
            "{text}"
        );
    }
}

#[test]
fn what_libyaml_might_read_otherwise_is_declined() {
    for text in [
        "a: &x 1\nb: *x\n",
        "a: !tag 1\n",
        "a: >\n  folded\n",
        "a: |+\n  kept\n\n",
        "a:\tb\n",
        "a: b\r\nc: d\r\n",
        "---\na: 1\n",
        "a: 1\n...\n",
        "a: 1\na: 2\n",
        "{a: 1}\n",
        "a: multi\n  line plain\n",
        "a: b: c\n",
        "a: http://example.com\n",
        "? complex\n: key\n",
        "a: [b: c]\n",
        "a: \"unterminated\n",
        "a: 'two\n  lines'\n",
        "\u{feff}a: 1\n",
        "a: x\u{85}y\n",
        "# only a comment\n",
        "",
    ] {
        declined(text);
    }
}

/// Scalars are resolved by the walker the events go to, in every spelling serde_norway reads.
#[test]
fn numbers_in_every_spelling_are_read_as_serde_norway_reads_them() {
    for text in [
        "a: 0x1F\n",
        "a: 1e3\n",
        "a: 3d\n",
        "a: 1.0.0\n",
        "a: .inf\n",
        "a: +1\n",
        "a: 007\n",
        "a: -0o17\n",
    ] {
        accepted(text);
    }
}

#[test]
fn errors_are_left_to_libyaml() {
    for text in [
        "a: [1, 2\n",
        "- a\nb: c\n",
        "a:\n  - x\n  y: z\n",
        "a: 'x' y\n",
        "a: [x]]\n",
        "a:\n b: 1\n  c: 2\n",
        "text: |-\n  stripped\n  end\n- \n",
    ] {
        declined(text);
        assert!(
            serde_norway::from_str::<serde_norway::Value>(text).is_err(),
            "{text}"
        );
    }
}

#[test]
fn nesting_past_the_documents_cap_is_left_to_its_check() {
    use crate::documents::nesting::{MAX_NESTING, check_yaml};
    let nested = |depth: usize| {
        let mut text = String::new();
        for level in 0..depth - 2 {
            text.push_str(&format!("{}k{level}:\n", " ".repeat(level)));
        }
        text.push_str(&format!("{}last: [x]\n", " ".repeat(depth - 2)));
        text
    };
    // `depth - 1` mappings (the last one's key is `last`) and a flow sequence: `depth` collections.
    accepted(&nested(MAX_NESTING));
    declined(&nested(MAX_NESTING + 1));
    assert!(check_yaml(&nested(MAX_NESTING + 1)).is_err());
    assert!(check_yaml(&nested(MAX_NESTING)).is_ok());
}

#[test]
fn a_mapping_of_many_keys_finds_a_duplicate_among_them() {
    let mut text: String = (0..500).map(|i| format!("key_{i}: {i}\n")).collect();
    accepted(&text);
    text.push_str("key_250: again\n");
    declined(&text);
}

/// A document tree rendered in randomly chosen YAML styles.
#[derive(Clone, Debug)]
enum Doc {
    Scalar(String, u8),
    Seq(Vec<Doc>, u8),
    Map(Vec<(String, Doc)>, u8),
}

const SCALARS: &[&str] = &[
    "a",
    "word",
    "two words",
    "1",
    "-1",
    "0",
    "1.5",
    "-0.5",
    "007",
    "1e3",
    "0x1F",
    "+1",
    ".inf",
    "true",
    "False",
    "yes",
    "null",
    "~",
    "",
    "a#b",
    "a #b",
    "a:b",
    "a: b",
    "-a",
    "- a",
    "x'y",
    "say \"hi\"",
    "中文",
    "é",
    "[a]",
    "{b}",
    ",",
    "a,b",
    "?",
    ":",
    "#",
    "&x",
    "*x",
    "!t",
    "|",
    ">",
    "%",
    "@",
    "`",
    "trail ",
    " lead",
    "back\\slash",
    "tab\there",
    "line\nbreak",
    "99999999999999999999",
];

fn doc() -> impl Strategy<Value = Doc> {
    let leaf = (prop::sample::select(SCALARS), any::<u8>())
        .prop_map(|(s, style)| Doc::Scalar(s.to_string(), style));
    leaf.prop_recursive(4, 40, 5, |inner| {
        prop_oneof![
            (prop::collection::vec(inner.clone(), 0..4), any::<u8>())
                .prop_map(|(items, style)| Doc::Seq(items, style)),
            (
                prop::collection::vec((prop::sample::select(SCALARS), inner), 0..4),
                any::<u8>()
            )
                .prop_map(|(entries, style)| Doc::Map(
                    entries
                        .into_iter()
                        .map(|(k, v)| (k.to_string(), v))
                        .collect(),
                    style
                )),
        ]
    })
}

fn scalar(text: &str, style: u8) -> String {
    match style % 4 {
        0 | 1 => text.to_string(),
        2 => format!("'{}'", text.replace('\'', "''")),
        _ => format!(
            "\"{}\"",
            text.replace('\\', "\\\\")
                .replace('"', "\\\"")
                .replace('\t', "\\t")
                .replace('\n', "\\n")
        ),
    }
}

fn flow(doc: &Doc) -> String {
    match doc {
        Doc::Scalar(text, style) => scalar(text, *style),
        Doc::Seq(items, _) => format!(
            "[{}]",
            items.iter().map(flow).collect::<Vec<_>>().join(", ")
        ),
        Doc::Map(entries, _) => format!(
            "{{{}}}",
            entries
                .iter()
                .map(|(k, v)| format!("{}: {}", scalar(k, 0), flow(v)))
                .collect::<Vec<_>>()
                .join(", ")
        ),
    }
}

/// `doc` as the value after `key:` or `-` at column `indent`, starting on the current line.
fn block_value(doc: &Doc, indent: usize, out: &mut String) {
    match doc {
        Doc::Scalar(text, style) if style % 5 == 4 && !text.is_empty() => {
            out.push_str(" |\n");
            for line in text.split('\n') {
                out.push_str(&" ".repeat(indent + 2));
                out.push_str(line);
                out.push('\n');
            }
        }
        Doc::Scalar(..) => {
            out.push(' ');
            out.push_str(&flow(doc));
            out.push('\n');
        }
        Doc::Seq(_, style) | Doc::Map(_, style) if style % 3 == 0 => {
            out.push(' ');
            out.push_str(&flow(doc));
            out.push_str(if style % 2 == 0 { "  # flow\n" } else { "\n" });
        }
        Doc::Seq(items, style) if items.is_empty() || style % 7 == 1 => {
            out.push(' ');
            out.push_str(&flow(doc));
            out.push('\n');
        }
        Doc::Seq(_, style) => {
            out.push('\n');
            let child = if style % 3 == 1 {
                indent
            } else {
                indent + 1 + (*style as usize % 3)
            };
            block(doc, child, out);
        }
        Doc::Map(entries, _) if entries.is_empty() => out.push_str(" {}\n"),
        Doc::Map(_, style) => {
            out.push('\n');
            block(doc, indent + 1 + (*style as usize % 3), out);
        }
    }
}

/// A block collection at column `indent`, from a line start.
fn block(doc: &Doc, indent: usize, out: &mut String) {
    let pad = " ".repeat(indent);
    match doc {
        Doc::Seq(items, style) => {
            for (i, item) in items.iter().enumerate() {
                if (*style as usize + i).is_multiple_of(5) {
                    out.push_str(&pad);
                    out.push_str("# a comment\n\n");
                }
                out.push_str(&pad);
                out.push('-');
                match item {
                    Doc::Map(entries, s) if !entries.is_empty() && s % 2 == 0 => {
                        // `- key: value` with the other keys below it
                        let mut compact = String::new();
                        block(item, indent + 2, &mut compact);
                        out.push(' ');
                        out.push_str(&compact[indent + 2..]);
                    }
                    _ => block_value(item, indent, out),
                }
            }
        }
        Doc::Map(entries, _) => {
            for (key, value) in entries {
                out.push_str(&pad);
                out.push_str(&scalar(key, (key.len() % 4) as u8));
                out.push(':');
                block_value(value, indent, out);
            }
        }
        Doc::Scalar(..) => {
            out.push_str(&pad);
            out.push_str(&flow(doc));
            out.push('\n');
        }
    }
}

fn render(doc: &Doc) -> String {
    let mut out = String::new();
    block(doc, 0, &mut out);
    out
}

const MUTATIONS: &[&str] = &[
    " ", "\n", ":", "-", "#", "'", "\"", "[", "]", "{", "}", ",", "|", "\\", "a", "1", "  ", "- ",
    ": ", "\t", "é", "&", "!", "?", ">", "\n  ", ",\n    ", "|-", " #c", "~", "0", ".", "\n\n",
];

proptest! {
    #![proptest_config(ProptestConfig::with_cases(std::env::var("COMMON_YAML_CASES").ok().and_then(|n| n.parse().ok()).unwrap_or(3_000)))]

    #[test]
    fn whatever_is_accepted_reads_as_serde_norway_reads_it(
        doc in doc(),
        edits in prop::collection::vec((any::<prop::sample::Index>(), 0..3u8, prop::sample::select(MUTATIONS)), 0..6),
    ) {
        let mut text = render(&doc);
        agrees(&text);
        for (at, op, with) in edits {
            let mut at = at.index(text.len() + 1);
            while !text.is_char_boundary(at) {
                at -= 1;
            }
            match op {
                0 => text.insert_str(at, with),
                1 => {
                    let end = text[at..].chars().next().map_or(at, |c| at + c.len_utf8());
                    text.replace_range(at..end, "");
                }
                _ => {
                    let end = text[at..].chars().next().map_or(at, |c| at + c.len_utf8());
                    text.replace_range(at..end, with);
                }
            }
            agrees(&text);
        }
    }
}

#[test]
fn most_generated_documents_take_the_fast_path() {
    // Without this the differential test could pass by declining everything.
    let mut runner = proptest::test_runner::TestRunner::deterministic();
    let (mut total, mut taken) = (0, 0);
    for _ in 0..2_000 {
        let doc = doc().new_tree(&mut runner).unwrap().current();
        if matches!(doc, Doc::Scalar(..)) {
            continue;
        }
        total += 1;
        if agrees(&render(&doc)) {
            taken += 1;
        }
    }
    assert!(
        taken * 5 >= total,
        "only {taken} of {total} generated documents were accepted"
    );
}

/// The events themselves are libyaml's, but for marks, for every document this reader accepts:
/// the shipped configuration, the common forms, and generated documents.
#[test]
fn events_are_libyamls() {
    let same_events = |text: &str| {
        let Some(ours) = super::events(text) else {
            return false;
        };
        let theirs = super::super::events::load(text);
        assert!(theirs.error.is_none() && !theirs.more_documents, "{text}");
        let kinds = |document: &super::super::events::Document<'_>| {
            document
                .events
                .iter()
                .map(|event| format!("{event:?}"))
                .collect::<Vec<_>>()
        };
        // libyaml tells quoted and literal scalars apart; here they are one style, read alike.
        let theirs = kinds(&theirs)
            .join("\n")
            .replace("style: Literal", "style: Other");
        assert_eq!(kinds(&ours).join("\n"), theirs, "{text}");
        true
    };
    let mut files = Vec::new();
    yaml_files(&repo_config(), &mut files);
    for file in files {
        assert!(same_events(&std::fs::read_to_string(&file).unwrap()));
    }
    let mut runner = proptest::test_runner::TestRunner::deterministic();
    let mut accepted = 0;
    for _ in 0..2_000 {
        let text = render(&doc().new_tree(&mut runner).unwrap().current());
        accepted += usize::from(same_events(&text));
    }
    assert!(accepted > 500, "{accepted}");
}
