//! Differential tests against serde_norway, the reader this one replaces: the same value, or the
//! same error worded the same and located at the same byte, for the forms YAML has, every kind of
//! type, the configuration the product ships, and thousands of mutations of all of those.

use super::{from_libyaml, from_str};
use serde::Deserialize;
use serde::de::DeserializeOwned;
use std::collections::BTreeMap;
use std::fmt::Debug;
use std::path::Path;

/// Both readers read `text` as `T` alike, through libyaml and through the common reader first.
fn same<T: DeserializeOwned + Debug>(text: &str) {
    let theirs = serde_norway::from_str::<T>(text);
    let theirs = || match &theirs {
        Ok(value) => Ok(format!("{value:?}")),
        Err(e) => Err((e.to_string(), e.location().map(|l| l.index()))),
    };
    let ours = |read: Result<T, super::Error>| match read {
        Ok(value) => Ok(format!("{value:?}")),
        Err(e) => Err((e.to_string(), e.offset())),
    };
    let kind = std::any::type_name::<T>();
    if let Err((message, Some(mapping_at))) = theirs()
        && (message.contains("duplicate field `") || message.contains("duplicate entry "))
    {
        duplicate_key_at_its_own_place::<T>(text, &message, mapping_at);
        return;
    }
    assert_eq!(
        ours(from_libyaml::<T>(text)),
        theirs(),
        "libyaml, {kind}: {text:?}"
    );
    assert_eq!(
        ours(from_str::<T>(text)),
        theirs(),
        "common reader first, {kind}: {text:?}"
    );
}

/// serde_norway locates a key given twice at the start of its mapping; here it is located at the
/// second key, with the same words.
fn duplicate_key_at_its_own_place<T: DeserializeOwned + Debug>(
    text: &str,
    theirs: &str,
    mapping_at: usize,
) {
    use crate::documents::errors::strip_location;
    let key = match theirs.split_once("duplicate field `") {
        Some((_, rest)) => rest.split('`').next().map(str::to_string),
        None => theirs
            .split_once("with key \"")
            .and_then(|(_, rest)| rest.split('"').next())
            .map(str::to_string),
    };
    for (reader, read) in [
        ("libyaml", from_libyaml::<T>(text)),
        ("common reader first", from_str::<T>(text)),
    ] {
        let error = read.expect_err("a key given twice");
        let at = error.offset().expect("located");
        assert_eq!(
            strip_location(&error.to_string()),
            strip_location(theirs),
            "{reader}: {text:?}"
        );
        assert!(at > mapping_at, "{reader}: {at} in {text:?}");
        if let Some(key) = &key {
            // The key as written, or an alias repeating it.
            let here = text[at..].trim_start_matches(['"', '\'']);
            assert!(
                here.starts_with(key.as_str()) || here.starts_with('*'),
                "{reader}: {at} in {text:?}"
            );
        }
    }
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
#[allow(dead_code)]
struct Strict {
    name: String,
    count: u8,
    #[serde(default)]
    tags: Vec<String>,
    ratio: Option<f32>,
}

#[derive(Debug, Deserialize)]
#[allow(dead_code)]
struct Loose {
    #[serde(default)]
    name: Option<String>,
    #[serde(default)]
    nested: Option<Box<Loose>>,
    #[serde(default)]
    items: Vec<Item>,
    #[serde(default)]
    map: BTreeMap<String, i64>,
    #[serde(default)]
    flag: bool,
}

#[derive(Debug, Deserialize)]
#[allow(dead_code)]
enum Item {
    Unit,
    Newtype(u32),
    Tuple(i8, String),
    Struct { a: Option<char> },
}

#[derive(Debug, Deserialize)]
#[serde(untagged)]
#[allow(dead_code)]
enum Untagged {
    Number(i64),
    Text(String),
    List(Vec<Untagged>),
    Map(BTreeMap<String, Untagged>),
}

#[derive(Debug, Deserialize)]
#[serde(tag = "kind")]
#[allow(dead_code)]
enum Internally {
    A { x: u16 },
    B,
}

#[derive(Debug, Deserialize)]
#[allow(dead_code)]
struct Newtype(u16);

#[derive(Debug, Deserialize)]
struct UnitStruct;

/// Every type below, on `text`.
fn same_for_all(text: &str) {
    same::<serde_norway::Value>(text);
    same::<serde_json::Value>(text);
    same::<Strict>(text);
    same::<Loose>(text);
    same::<Vec<Item>>(text);
    same::<Item>(text);
    same::<Untagged>(text);
    same::<Internally>(text);
    same::<BTreeMap<String, Option<u64>>>(text);
    same::<Vec<u8>>(text);
    same::<(u8, String)>(text);
    same::<String>(text);
    same::<bool>(text);
    same::<f64>(text);
    same::<f32>(text);
    same::<i128>(text);
    same::<u128>(text);
    same::<i16>(text);
    same::<char>(text);
    same::<()>(text);
    same::<Option<String>>(text);
    same::<Newtype>(text);
    same::<UnitStruct>(text);
    same::<serde::de::IgnoredAny>(text);
    same::<crate::config::RulesFile>(text);
    same::<crate::config::PackFile>(text);
    same::<crate::config::SettingsFile>(text);
    same::<crate::config::RegistryFile>(text);
    same::<crate::config::CompositionFile>(text);
}

const FORMS: &[&str] = &[
    "",
    "# only a comment\n",
    "---\n",
    "---\n...\n",
    "~\n",
    "null",
    "a: 1\n---\nb: 2\n",
    "a: 1\n...\n",
    "a: 1\n--- [\n",
    "name: x\ncount: 3\n",
    "name: x\ncount: 300\n",
    "name: x\ncount: -1\n",
    "name: x\n",
    "name: x\ncount: 3\nextra: 1\n",
    "name: x\ncount: 3\nname: y\n",
    "name: 'x'\ncount: \"3\"\n",
    "name: x\ncount: 0x1f\nratio: .inf\n",
    "name: x\ncount: 0o17\nratio: -.INF\ntags: []\n",
    "name: x\ncount: 0b101\nratio: .NaN\ntags: [a, 'b', \"c\"]\n",
    "name: x\ncount: 012\n",
    "name: x\ncount: +7\nratio: 1e3\n",
    "name: x\ncount: 7\nratio: 1_000\n",
    "name: !!str 5\ncount: !!int '9'\nratio: !!float '2.5'\n",
    "name: x\ncount: !!int nine\n",
    "name: x\ncount: !!bool true\n",
    "name: !!null ~\ncount: 1\n",
    "name: !!null x\ncount: 1\n",
    "name: |\n  two\n  lines\ncount: !!int |\n  4\n",
    "name: >\n  folded\n  text\ncount: 4\n",
    "name:\ncount:\n",
    "name: x\ncount: 4\nratio: ~\n",
    "name: x\ncount: 4\nratio: ''\n",
    "name: x\ncount: 4\nratio: !!null ''\n",
    "name: x\ncount: 4\nratio: !!null 0\n",
    "name: x\ncount: 4\ntags: a\n",
    "name: x\ncount: 4\ntags:\n",
    "name: [x]\ncount: 4\n",
    "name: {x: 1}\ncount: 4\n",
    "- Unit\n- !Newtype 5\n- !Tuple [1, a]\n- !Struct {a: z}\n- !Struct {a: zz}\n",
    "- Unit\n- Newtype\n",
    "- !Unit\n- !Unit ~\n- !Unit x\n",
    "- {Newtype: 5}\n",
    "- [Unit]\n",
    "- !Nope 1\n",
    "- !Newtype !Unit\n- !Newtype !Tuple [1]\n",
    "!Newtype 5",
    "!Struct\na: b\n",
    "!Tuple [1, two]",
    "!Tuple [1, two, three]",
    "!Tuple [1]",
    "!\n",
    "! 5\n",
    "!!binary aGk=\n",
    "!custom {a: 1}\n",
    "!custom [1, 2]\n",
    "!!map {a: 1}\n",
    "kind: A\nx: 5\n",
    "kind: B\n",
    "kind: C\n",
    "x: 5\n",
    "- 1\n- two\n- [3, [4]]\n- {five: 5, six: [x]}\n- 1.5\n- true\n- ~\n",
    "[1, 2]",
    "[1, 2, 3]",
    "[256, x]",
    "[-1, x]",
    "[]",
    "{}",
    "a",
    "'a'",
    "ab",
    "true",
    "True",
    "yes",
    "1.5",
    "-1.5e-3",
    "1e400",
    "-0",
    "+0",
    "0x",
    "0xFFFFFFFFFFFFFFFFFFFF",
    "-0xFFFFFFFFFFFFFFFFFFFF",
    "340282366920938463463374607431768211456",
    "-170141183460469231731687303715884105729",
    "18446744073709551616",
    "-9223372036854775809",
    "-0b11",
    "+-1",
    "--1",
    "0o8",
    "\"\\u00e9\\t\\x41\"",
    "'it''s'",
    "\"a\nb\"",
    "a\n b\n",
    "a: &x {b: 1}\nc: *x\nd: *x\n",
    "a: &x 5\nb: *x\n",
    "a: &x [1, 2]\nb: *x\n",
    "&r [*r]",
    "a: *nope\n",
    "a: &x 1\na2: &x 2\nb: *x\n",
    "? [complex]\n: key\n",
    "? a\n: 1\n",
    "*x",
    "&a a: 1\n*a : 2\n",
    "map: {a: 1, b: ~, c: x}\n",
    "map: {a: 1, a: 2}\n",
    "map:\n  a: 0x10\n  b: -5\n",
    "map:\n  a: 1\n  a: 2\n",
    "items:\n  - Unit\n  - !Newtype 1\nnested:\n  name: n\n  items: [!Struct {a: q}]\nflag: !!bool 'true'\n",
    "items:\n  - !Struct\n    a: xy\n",
    "a: [1, 2\n",
    "a: 1\n b: 2\n",
    "a: 1\nb\n",
    "a:\n\t- 1\n",
    "a: \"unterminated\n",
    "a: 'x'y\n",
    "- a\nb: c\n",
    "key: [a, b]: c\n",
    "%YAML 1.1\n---\na: 1\n",
    "%TAG ! tag:example.com,2000:\n---\n!foo a\n",
    "a: \u{7}\n",
    "a: \u{85}b\n",
    "line\rbreak: 1\n",
    "a: 1\r\nb: [x,\r\n  y]\r\n",
    "\u{feff}a: 1\n",
    "schema_version: 1\nrules:\n  - id: r\n    keywords: [a]\n    pack: p\n",
    "schema_version: 1\nrules:\n  - id: r\n    keywords: a\n    pack: p\n",
    "schema_version: one\nrules: []\n",
    "schema_version: 1\nrules:\n  - id: r\n    nope: 1\n",
    "schema_version: 1\nrules:\n  - {id: r, keywords: [a], pack: p, priority: 99999999999}\n",
    "graphiti:\n  transport: carrier-pigeon\n",
    "graphiti:\n  transport: !rest\n",
    "recall:\n  max_facts: -3\n",
];

#[test]
fn every_form_reads_as_serde_norway_reads_it() {
    for text in FORMS {
        same_for_all(text);
    }
}

#[test]
fn repeated_aliases_stop_at_serde_norways_limits() {
    // Each level doubles the one below: 2^20 scalars from a few hundred bytes.
    let mut text = String::from("a0: &a0 [x, x]\n");
    for level in 1..20 {
        text.push_str(&format!(
            "a{level}: &a{level} [*a{}, *a{}]\n",
            level - 1,
            level - 1
        ));
    }
    same::<serde_norway::Value>(&text);
    same::<serde::de::IgnoredAny>(&text);
    let mut deep = String::from("a0: &a0 [x]\n");
    for level in 1..140 {
        deep.push_str(&format!("a{level}: &a{level} [*a{}]\n", level - 1));
    }
    same::<serde_norway::Value>(&deep);
}

fn shipped_yaml() -> Vec<(String, String)> {
    let mut out = Vec::new();
    let mut dirs = vec![Path::new(env!("CARGO_MANIFEST_DIR")).join("../config")];
    while let Some(dir) = dirs.pop() {
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                dirs.push(path);
            } else if path.extension().is_some_and(|e| e == "yaml" || e == "yml") {
                let name = path.file_name().unwrap().to_string_lossy().into_owned();
                out.push((name, std::fs::read_to_string(&path).unwrap()));
            }
        }
    }
    out.sort_unstable();
    out
}

/// The configuration type a shipped file is read as, and the generic ones, on `text`.
fn same_as_shipped(name: &str, text: &str) {
    same::<serde_norway::Value>(text);
    same::<serde_json::Value>(text);
    same::<Loose>(text);
    match name {
        "intent_rules.yaml" => same::<crate::config::RulesFile>(text),
        "settings.yaml" => same::<crate::config::SettingsFile>(text),
        "pack_registry.yaml" => same::<crate::config::RegistryFile>(text),
        "pack_composition.yaml" => same::<crate::config::CompositionFile>(text),
        name if name.ends_with(".pack.yaml") => same::<crate::config::PackFile>(text),
        _ => {}
    }
}

#[test]
fn the_shipped_configuration_reads_the_same() {
    let files = shipped_yaml();
    assert!(files.len() >= 15, "{files:?}");
    for (name, text) in &files {
        same_as_shipped(name, text);
    }
}

/// Pieces that change what YAML means where they land.
const PIECES: &[&str] = &[
    " ", "  ", "\n", ":", ": ", "- ", "[", "]", "{", "}", ",", " #", "&a ", "*a", "!", "!!int ",
    "!!str ", "!x ", "'", "\"", "|\n", ">\n", "~", "0x1", "-", "1", "1.5", "?", "\t", "\r", "é",
    "---\n", "...\n", "true", "null", "\\", "%", "@",
];

#[test]
fn mutated_documents_read_and_fail_alike() {
    let mut next = crate::text::test_numbers(0x9e37_79b9_7f4a_7c15);
    let mut sources: Vec<(String, String)> = shipped_yaml();
    sources.extend(FORMS.iter().map(|form| (String::new(), form.to_string())));
    let mut mutations = 0;
    for (name, text) in &sources {
        let rounds = if name.is_empty() { 6 } else { 60 };
        for _ in 0..rounds {
            let mut mutated = text.clone();
            for _ in 0..=next(3) {
                let mut at = next(mutated.len() as u64 + 1) as usize;
                while !mutated.is_char_boundary(at) {
                    at -= 1;
                }
                let piece = PIECES[next(PIECES.len() as u64) as usize];
                match next(3) {
                    0 => mutated.insert_str(at, piece),
                    1 => {
                        let end = (at + 1 + next(4) as usize).min(mutated.len());
                        if mutated.is_char_boundary(end) {
                            mutated.replace_range(at..end, piece);
                        }
                    }
                    _ => {
                        let end = (at + 1 + next(8) as usize).min(mutated.len());
                        if mutated.is_char_boundary(end) {
                            mutated.replace_range(at..end, "");
                        }
                    }
                }
            }
            same_as_shipped(name, &mutated);
            if name.is_empty() {
                same_for_all(&mutated);
            }
            mutations += 1;
        }
    }
    assert!(mutations > 1_000, "{mutations}");
}
