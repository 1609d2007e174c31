//! Packs the Unicode classes boost patterns may name (`\p{Greek}`, `\p{gc=Lu}`, `\p{Alphabetic}`)
//! for `routing/load/unicode_properties.rs`: each name in `unicode/property-names.txt` is resolved
//! through regex-syntax with the Unicode tables the component would otherwise link, and the
//! classes are stored as deltas and deflated: an eighth of the tables' size in the component.
//!
//! Layout before deflating, every number a LEB128 varint:
//! - names by themselves (`\p{Greek}`, `\pL`): count, then per name (sorted): length, bytes, class;
//! - the properties read by value (`General_Category`, `Script`, `Script_Extensions`): their count,
//!   then per property: alias count, aliases (length, bytes; sorted), value count, values (length,
//!   bytes, class; sorted);
//! - classes: count, then per class: range count, then per range the gap from the previous range's
//!   end and the range's length less one.
//!
//! It packs Unicode simple case folding the same way, for `routing/load/case_folding.rs`: each
//! character that folds, with the others it folds with (`k` with `K` and `K`), as regex-syntax's
//! translator folds them; in the component, in place of the translator's own 47 KB table. Layout:
//! the count of characters, then per character, in order: the gap from the previous one, the count
//! of its others less one, and each other's offset from it (zigzag: the sign in the lowest bit).
//! The ASCII characters' others are also written as a Rust array, so that patterns of ASCII
//! letters, the usual ones, are folded without inflating the table.

use std::collections::{BTreeMap, HashMap};

use regex_syntax::hir::{Class, HirKind};

const NAMES: &str = "unicode/property-names.txt";
/// The properties `\p{name=value}` resolves; others are left to regex-syntax's own errors.
const BY_VALUE: [&str; 3] = ["General_Category", "Script", "Script_Extensions"];

fn main() {
    println!("cargo::rerun-if-changed={NAMES}");
    let text = std::fs::read_to_string(NAMES).unwrap_or_else(|e| panic!("{NAMES}: {e}"));
    let (property_aliases, values) = read_names(&text);
    let mut classes = Classes::default();
    let mut out = Vec::new();

    let mut names: Vec<&str> = property_aliases.values().flatten().copied().collect();
    names.extend(&values["General_Category"]);
    names.extend(&values["Script"]);
    let by_name = classes.resolve_all(names, |name| format!(r"\p{{{name}}}"));
    for expected in ["greek", "l", "alphabetic", "whitespace", "any"] {
        assert!(
            by_name.iter().any(|(n, _)| *n == expected),
            "regex-syntax did not resolve \\p{{{expected}}}: are its Unicode features on?"
        );
    }
    put_entries(&mut out, &by_name);

    put(&mut out, BY_VALUE.len() as u32);
    for property in BY_VALUE {
        let mut aliases = property_aliases[property].clone();
        aliases.sort_unstable();
        put(&mut out, aliases.len() as u32);
        for alias in &aliases {
            put_bytes(&mut out, alias.as_bytes());
        }
        let resolved = classes.resolve_all(values[property].clone(), |value| {
            format!(r"\p{{{property}={value}}}")
        });
        assert!(!resolved.is_empty(), "no value of {property} resolved");
        put_entries(&mut out, &resolved);
    }

    put(&mut out, classes.list.len() as u32);
    for ranges in &classes.list {
        put(&mut out, ranges.len() as u32);
        let mut next = 0;
        for &(start, end) in ranges {
            put(&mut out, start - next);
            put(&mut out, end - start);
            next = end + 1;
        }
    }

    let packed = miniz_oxide::deflate::compress_to_vec(&out, 10);
    let dir = std::env::var("OUT_DIR").expect("cargo sets OUT_DIR");
    std::fs::write(format!("{dir}/unicode-properties.bin"), &packed).expect("write the classes");
    let summary = format!(
        "{} names, {} classes, {} bytes packed from {}",
        by_name.len(),
        classes.list.len(),
        packed.len(),
        out.len()
    );
    std::fs::write(format!("{dir}/unicode-properties.txt"), summary).expect("write the summary");
    pack_case_folding(&dir);
}

/// Each character simple case folding makes equal to others, with those others, from regex-syntax's
/// own folding.
fn pack_case_folding(dir: &str) {
    use regex_syntax::hir::{ClassUnicode, ClassUnicodeRange};
    let mut out = Vec::new();
    let mut folding = 0;
    let mut previous = 0;
    let mut ascii = String::from("[");
    for c in (0..=char::MAX as u32).filter_map(char::from_u32) {
        let mut class = ClassUnicode::new([ClassUnicodeRange::new(c, c)]);
        class.case_fold_simple();
        let others: Vec<u32> = class
            .iter()
            .flat_map(|r| r.start() as u32..=r.end() as u32)
            .filter(|&other| other != c as u32)
            .collect();
        if c.is_ascii() {
            ascii.push_str(&format!("&{others:?},"));
        }
        if others.is_empty() {
            continue;
        }
        folding += 1;
        put(&mut out, c as u32 - previous);
        previous = c as u32;
        put(&mut out, others.len() as u32 - 1);
        for other in others {
            // Zigzag: the offset's sign in its lowest bit.
            let offset = i64::from(other) - i64::from(c as u32);
            put(&mut out, ((offset << 1) ^ (offset >> 63)) as u32);
        }
    }
    assert!(
        folding > 2_000,
        "regex-syntax folded only {folding} characters: is its unicode-case feature on?"
    );
    let mut packed = Vec::new();
    put(&mut packed, folding);
    packed.extend(out);
    let packed = miniz_oxide::deflate::compress_to_vec(&packed, 10);
    std::fs::write(format!("{dir}/case-folding.bin"), &packed).expect("write the case folding");
    ascii.push(']');
    std::fs::write(format!("{dir}/case-folding-ascii.rs"), ascii).expect("write the ASCII folding");
}

type Aliases<'a> = BTreeMap<&'a str, Vec<&'a str>>;

/// Each property's aliases, and each property's values' aliases (values of one property together).
fn read_names(text: &str) -> (Aliases<'_>, Aliases<'_>) {
    let mut property_aliases = Aliases::new();
    let mut values = Aliases::new();
    for line in text.lines().filter(|l| !l.starts_with('#')) {
        let mut words = line.split(' ');
        match words.next() {
            Some("property") => {
                let canonical = words.next().expect("a property's name");
                property_aliases.entry(canonical).or_default().extend(words);
            }
            Some("value") => {
                let property = words.next().expect("a value's property");
                let _canonical = words.next().expect("a value's name");
                values.entry(property).or_default().extend(words);
            }
            _ => {}
        }
    }
    // General categories take three names regex-syntax adds to the Unicode ones.
    values
        .entry("General_Category")
        .or_default()
        .extend(["any", "assigned", "ascii"]);
    (property_aliases, values)
}

/// Each distinct class once, in the order first resolved.
#[derive(Default)]
struct Classes {
    list: Vec<Vec<(u32, u32)>>,
    ids: HashMap<Vec<(u32, u32)>, u32>,
}

impl Classes {
    /// The names that resolve, sorted, each with its class.
    fn resolve_all<'a>(
        &mut self,
        mut names: Vec<&'a str>,
        pattern: impl Fn(&str) -> String,
    ) -> Vec<(&'a str, u32)> {
        names.sort_unstable();
        names.dedup();
        names
            .into_iter()
            .filter_map(|name| Some((name, self.resolve(&pattern(name))?)))
            .collect()
    }

    /// The class regex-syntax gives `pattern` (one `\p{…}`), or None where it gives an error.
    fn resolve(&mut self, pattern: &str) -> Option<u32> {
        let hir = regex_syntax::Parser::new().parse(pattern).ok()?;
        let ranges: Vec<(u32, u32)> = match hir.kind() {
            HirKind::Class(Class::Unicode(class)) => class
                .ranges()
                .iter()
                .map(|r| (r.start() as u32, r.end() as u32))
                .collect(),
            // A class of one character is translated to that character.
            HirKind::Literal(literal) => {
                let text = std::str::from_utf8(&literal.0).expect("a Unicode literal");
                let mut chars = text.chars();
                let c = chars.next().expect("one character") as u32;
                assert!(
                    chars.next().is_none(),
                    "{pattern} is more than one character"
                );
                vec![(c, c)]
            }
            other => panic!("{pattern} is not a Unicode class: {other:?}"),
        };
        let next = self.list.len() as u32;
        let id = *self.ids.entry(ranges.clone()).or_insert(next);
        if id == next {
            self.list.push(ranges);
        }
        Some(id)
    }
}

fn put_entries(out: &mut Vec<u8>, entries: &[(&str, u32)]) {
    put(out, entries.len() as u32);
    for (name, class) in entries {
        put_bytes(out, name.as_bytes());
        put(out, *class);
    }
}

fn put_bytes(out: &mut Vec<u8>, bytes: &[u8]) {
    put(out, bytes.len() as u32);
    out.extend_from_slice(bytes);
}

fn put(out: &mut Vec<u8>, mut n: u32) {
    while n >= 0x80 {
        out.push((n as u8) | 0x80);
        n >>= 7;
    }
    out.push(n as u8);
}
