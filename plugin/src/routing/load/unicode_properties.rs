//! Unicode property classes in boost patterns (`\p{Greek}`, `\pL`, `\P{sc=Latn}`,
//! `[\p{Alphabetic}&&\p{Lu}]`), from tables `build.rs` packs at an eighth of the size of
//! regex-syntax's own, which the component therefore does not link.
//!
//! A pattern is parsed to regex-syntax's syntax tree, each property class that resolves is replaced
//! by a bracketed class of its ranges, and regex-syntax translates the tree as it would have
//! translated the class: negation and set operations are its own, case folding is
//! `case_folding.rs`'s, on the bracketed class as the translator folds one. A name that does not
//! resolve is left in place, so regex-syntax reports it as before ("Unicode property not found",
//! "Unicode property value not found", "Unicode not allowed here").

use regex_syntax::ast::{
    ClassBracketed, ClassSet, ClassSetItem, ClassSetRange, ClassSetUnion, ClassUnicode,
    ClassUnicodeKind, Literal, LiteralKind,
};
use std::sync::OnceLock;

static PACKED: &[u8] = include_bytes!(concat!(env!("OUT_DIR"), "/unicode-properties.bin"));

/// Replaces each property class of a bracketed class that resolves (in Unicode mode).
pub(super) fn resolve_set(set: &mut ClassSet) {
    match set {
        ClassSet::Item(item) => in_item(item),
        ClassSet::BinaryOp(op) => {
            resolve_set(&mut op.lhs);
            resolve_set(&mut op.rhs);
        }
    }
}

fn in_item(item: &mut ClassSetItem) {
    match item {
        ClassSetItem::Unicode(class) => {
            if let Some(bracketed) = bracketed(class) {
                *item = ClassSetItem::Bracketed(Box::new(bracketed));
            }
        }
        ClassSetItem::Bracketed(class) => resolve_set(&mut class.kind),
        ClassSetItem::Union(union) => union.items.iter_mut().for_each(in_item),
        _ => {}
    }
}

/// `[ranges]` (or `[^ranges]`) in place of a property class, at its span.
pub(super) fn bracketed(class: &ClassUnicode) -> Option<ClassBracketed> {
    let tables = Tables::get();
    let id = match &class.kind {
        ClassUnicodeKind::OneLetter(letter) => tables.by_name(&normalize(&letter.to_string())),
        ClassUnicodeKind::Named(name) => tables.by_name(&normalize(name)),
        ClassUnicodeKind::NamedValue { name, value, .. } => {
            tables.by_value(&normalize(name), &normalize(value))
        }
    }?;
    let span = class.span;
    let literal = |c: u32| Literal {
        span,
        kind: LiteralKind::Verbatim,
        c: char::from_u32(c).expect("packed ranges hold scalar values"),
    };
    let items = tables
        .ranges(id)
        .map(|(start, end)| {
            ClassSetItem::Range(ClassSetRange {
                span,
                start: literal(start),
                end: literal(end),
            })
        })
        .collect();
    Some(ClassBracketed {
        span,
        negated: class.is_negated(),
        kind: ClassSet::Item(ClassSetItem::Union(ClassSetUnion { span, items })),
    })
}

/// A property name or value as regex-syntax compares them (UAX44-LM3): ASCII only, no spaces,
/// underscores or hyphens, lower case, without a leading "is" (but "isc" is `Other`'s alias).
fn normalize(name: &str) -> Vec<u8> {
    let bytes = name.as_bytes();
    let is_prefix = bytes.len() >= 2 && bytes[..2].eq_ignore_ascii_case(b"is");
    let rest = if is_prefix { &bytes[2..] } else { bytes };
    let mut out: Vec<u8> = rest
        .iter()
        .filter(|b| b.is_ascii() && !matches!(b, b' ' | b'_' | b'-'))
        .map(u8::to_ascii_lowercase)
        .collect();
    if is_prefix && out == b"c" {
        out = b"isc".to_vec();
    }
    out
}

/// The packed tables, inflated at the first property class a configuration uses.
struct Tables {
    bytes: Vec<u8>,
    /// (name, class) as offsets into `bytes`, sorted by name.
    names: Vec<Entry>,
    /// Per property read by value: its aliases and its values.
    properties: Vec<(Vec<Entry>, Vec<Entry>)>,
    /// Where each class's ranges start.
    classes: Vec<usize>,
}

struct Entry {
    start: usize,
    end: usize,
    class: u32,
}

impl Tables {
    fn get() -> &'static Tables {
        static TABLES: OnceLock<Tables> = OnceLock::new();
        TABLES.get_or_init(|| {
            let bytes = miniz_oxide::inflate::decompress_to_vec(PACKED)
                .expect("build.rs deflated the Unicode tables");
            Tables::index(bytes)
        })
    }

    fn index(bytes: Vec<u8>) -> Tables {
        let mut at = 0;
        let names = entries(&bytes, &mut at, true);
        let properties = (0..varint(&bytes, &mut at))
            .map(|_| {
                (
                    entries(&bytes, &mut at, false),
                    entries(&bytes, &mut at, true),
                )
            })
            .collect();
        let count = varint(&bytes, &mut at);
        let mut classes = Vec::with_capacity(count as usize);
        for _ in 0..count {
            classes.push(at);
            for _ in 0..varint(&bytes, &mut at) * 2 {
                varint(&bytes, &mut at);
            }
        }
        Tables {
            bytes,
            names,
            properties,
            classes,
        }
    }

    fn by_name(&self, name: &[u8]) -> Option<u32> {
        self.find(&self.names, name)
    }

    fn by_value(&self, name: &[u8], value: &[u8]) -> Option<u32> {
        let (_, values) = self
            .properties
            .iter()
            .find(|(aliases, _)| self.find(aliases, name).is_some())?;
        self.find(values, value)
    }

    fn find(&self, entries: &[Entry], key: &[u8]) -> Option<u32> {
        let found = entries
            .binary_search_by(|e| self.bytes[e.start..e.end].cmp(key))
            .ok()?;
        Some(entries[found].class)
    }

    fn ranges(&self, class: u32) -> impl Iterator<Item = (u32, u32)> + '_ {
        let mut at = self.classes[class as usize];
        let count = varint(&self.bytes, &mut at);
        let mut next = 0;
        (0..count).map(move |_| {
            let start = next + varint(&self.bytes, &mut at);
            let end = start + varint(&self.bytes, &mut at);
            next = end + 1;
            (start, end)
        })
    }
}

/// A list of names (with their classes, or without: a property's aliases).
fn entries(bytes: &[u8], at: &mut usize, with_class: bool) -> Vec<Entry> {
    let count = varint(bytes, at);
    (0..count)
        .map(|_| {
            let len = varint(bytes, at) as usize;
            let start = *at;
            *at += len;
            let class = if with_class {
                varint(bytes, at)
            } else {
                u32::MAX
            };
            Entry {
                start,
                end: start + len,
                class,
            }
        })
        .collect()
}

pub(super) fn varint(bytes: &[u8], at: &mut usize) -> u32 {
    let mut n = 0u32;
    let mut shift = 0;
    loop {
        let byte = bytes[*at];
        *at += 1;
        n |= u32::from(byte & 0x7f) << shift;
        if byte < 0x80 {
            return n;
        }
        shift += 7;
    }
}

#[cfg(test)]
mod tests {
    //! Natively, regex-syntax has all its Unicode tables (the tests' `regex` turns them on), so
    //! every pattern is compared with what regex-syntax itself makes of it.
    use super::super::boosts::translate;
    use super::super::case_folding::rewrite;
    use proptest::prelude::*;
    use regex_syntax::ast;
    use regex_syntax::hir::Hir;

    const NAMES: &str = include_str!("../../../unicode/property-names.txt");

    /// The pattern through the packed tables: its translation, and whether a property class was
    /// left for regex-syntax's tables (which the component does not have).
    fn packed(pattern: &str, case_insensitive: bool) -> (Result<Hir, String>, bool) {
        let left = ast::parse::Parser::new()
            .parse(pattern)
            .is_ok_and(|mut ast| {
                rewrite(&mut ast, false);
                format!("{ast:?}").contains("ClassUnicode {")
            });
        (translate(pattern, case_insensitive), left)
    }

    fn regex_syntax(pattern: &str, case_insensitive: bool) -> Result<Hir, String> {
        regex_syntax::ParserBuilder::new()
            .case_insensitive(case_insensitive)
            .build()
            .parse(pattern)
            .map_err(|e| e.to_string())
    }

    /// Same class (or same error) as regex-syntax; and where regex-syntax finds the class, it was
    /// found in the packed tables (`by_packed` is false for names only the tables of ages and
    /// segments know, which the component never had).
    fn assert_same(pattern: &str, case_insensitive: bool, by_packed: bool) {
        let (ours, left) = packed(pattern, case_insensitive);
        // A class left to tables the component does not have is not case-folded by it: natively
        // it translates, as regex-syntax without case folding does; in the component, it is an
        // error either way.
        let theirs = regex_syntax(pattern, case_insensitive && (by_packed || !left));
        // The classes are long: say only where they differ.
        assert!(
            ours == theirs,
            "{pattern} (case-insensitive: {case_insensitive}) differs"
        );
        if by_packed && theirs.is_ok() {
            assert!(
                !left,
                "{pattern} resolves in regex-syntax but not in the packed tables"
            );
        }
    }

    #[test]
    fn the_names_are_those_of_the_regex_syntax_cargo_lock_holds() {
        let lock = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../Cargo.lock"))
            .expect("the workspace's Cargo.lock");
        let locked: Vec<&str> = lock
            .split("[[package]]")
            .filter(|p| p.contains("name = \"regex-syntax\""))
            .filter_map(|p| p.lines().find_map(|l| l.strip_prefix("version = \"")))
            .map(|v| v.trim_end_matches('"'))
            .collect();
        let listed = NAMES.lines().find_map(|l| l.strip_prefix("regex-syntax "));
        assert_eq!(
            vec![listed.expect("the names' version line")],
            locked,
            "plugin/unicode/property-names.txt: run node scripts/unicode-property-names.mjs"
        );
    }

    /// The aliases of each `property` line, or of each `value` line of `property`.
    fn aliases(kind: &str, property: Option<&str>) -> Vec<&'static str> {
        let mut out = Vec::new();
        for line in NAMES.lines() {
            let mut words = line.split(' ');
            if words.next() != Some(kind) || (property.is_some() && words.next() != property) {
                continue;
            }
            out.extend(words.skip(1));
        }
        out
    }

    #[test]
    fn every_name_by_itself_is_regex_syntaxs_class() {
        let mut names = aliases("property", None);
        for property in ["General_Category", "Script", "Script_Extensions"] {
            names.extend(aliases("value", Some(property)));
        }
        names.extend([
            "any",
            "assigned",
            "ascii",
            "Greek",
            "Is_Greek",
            "WHITE SPACE",
            "is-c",
            "isc",
        ]);
        let mut resolved = 0;
        for name in &names {
            for case_insensitive in [false, true] {
                assert_same(&format!(r"\p{{{name}}}"), case_insensitive, true);
                assert_same(&format!(r"\P{{{name}}}"), case_insensitive, true);
            }
            // Not in Unicode mode, a class is an error even where it is all ASCII (`\p{ascii}`).
            assert_same(&format!(r"(?-u:[a\p{{{name}}}])"), false, false);
            resolved += usize::from(regex_syntax(&format!(r"\p{{{name}}}"), false).is_ok());
        }
        assert!(
            resolved > 500,
            "only {resolved} of {} names resolved",
            names.len()
        );
        for letter in ["L", "l", "M", "N", "P", "S", "Z", "C", "X", "q"] {
            assert_same(&format!(r"\p{letter}"), true, true);
            assert_same(&format!(r"\P{letter}"), false, true);
        }
    }

    #[test]
    fn every_value_of_a_category_or_script_is_regex_syntaxs_class() {
        for (property, by_packed) in [
            ("General_Category", true),
            ("Script", true),
            ("Script_Extensions", true),
            ("Age", false),
        ] {
            let names: Vec<&str> = NAMES
                .lines()
                .find_map(|l| l.strip_prefix(&format!("property {property} ")))
                .expect("the property's line")
                .split(' ')
                .collect();
            let mut values = aliases("value", Some(property));
            values.extend(["any", "bogus", "1.1", "Latin"]);
            for (i, value) in values.iter().enumerate() {
                let name = names[i % names.len()];
                assert_same(&format!(r"\p{{{name}={value}}}"), false, by_packed);
                assert_same(&format!(r"\p{{{name}!={value}}}"), true, by_packed);
                assert_same(&format!(r"\P{{{name}:{value}}}"), i % 2 == 0, by_packed);
            }
        }
        // Properties the component does not resolve by value: regex-syntax's own error.
        for pattern in [
            r"\p{Block=Greek}",
            r"\p{bogus=x}",
            r"\p{Alphabetic=yes}",
            r"\p{wb=ALetter}",
        ] {
            assert_same(pattern, false, false);
        }
    }

    /// A name as a clumsy user writes it: any case, spaces, underscores, hyphens, an "is" prefix,
    /// a stray non-ASCII letter.
    fn misspelt(name: &str, seed: &[u8]) -> String {
        let prefix = ["", "is", "Is", "IS", "iS", "is_"][usize::from(seed[0]) % 6];
        let mut out = String::from(prefix);
        for (i, c) in name.chars().enumerate() {
            let bits = seed[(i + 1) % seed.len()];
            out.push(if bits & 1 == 1 {
                c.to_ascii_uppercase()
            } else {
                c
            });
            match bits >> 5 {
                1 => out.push(' '),
                2 => out.push('_'),
                3 => out.push('-'),
                4 if i % 7 == 3 => out.push('é'),
                _ => {}
            }
        }
        out
    }

    fn any_name() -> impl Strategy<Value = String> {
        let mut names = aliases("property", None);
        names.extend(aliases("value", Some("General_Category")));
        names.extend(aliases("value", Some("Script")));
        let mut by_value = Vec::new();
        for (property, short) in [
            ("General_Category", "gc"),
            ("Script", "sc"),
            ("Script_Extensions", "scx"),
        ] {
            by_value.extend(
                aliases("value", Some(property))
                    .into_iter()
                    .map(move |v| (short, v)),
            );
        }
        prop_oneof![
            (
                prop::sample::select(names),
                prop::collection::vec(any::<u8>(), 1..8)
            )
                .prop_map(|(name, seed)| misspelt(name, &seed)),
            (
                prop::sample::select(by_value),
                prop::collection::vec(any::<u8>(), 1..8),
                0..3usize
            )
                .prop_map(|((property, value), seed, op)| {
                    format!(
                        "{}{}{}",
                        misspelt(property, &seed),
                        ["=", ":", "!="][op],
                        misspelt(
                            value,
                            &seed[1..]
                                .iter()
                                .copied()
                                .chain([seed[0]])
                                .collect::<Vec<_>>()
                        )
                    )
                }),
        ]
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(2_000))]
        #[test]
        fn any_spelling_in_any_place_is_regex_syntaxs_class(
            name in any_name(),
            place in 0..10usize,
            case_insensitive in any::<bool>(),
        ) {
            let class = format!(r"\p{{{name}}}");
            let negated = format!(r"\P{{{name}}}");
            let pattern = match place {
                0 => class,
                1 => negated,
                2 => format!("[{class}a-c]"),
                3 => format!("[^{class}]"),
                4 => format!(r"[{class}&&\p{{L}}]"),
                5 => format!(r"[\w--{negated}]x"),
                6 => format!("(?i){class}|(?-i:{negated})"),
                7 => format!("(?-u:x){class}"),
                8 => format!("(?-u){class}"),
                _ => format!(r"(?-u:\w(?u:[[{class}]~~{negated}]))"),
            };
            assert_same(&pattern, case_insensitive, true);
        }
    }
}
