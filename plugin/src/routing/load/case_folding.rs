//! Case-insensitive boost patterns, folded from a table `build.rs` packs in 1.2 KB (regex-syntax's
//! own is 47 KB, and the component therefore does not link it). ASCII characters, the usual ones,
//! have a copy that needs no inflating.
//!
//! The syntax tree is rewritten before translation, as regex-syntax's translator would fold it:
//! where the `i` flag holds, each literal and each class item gains the characters simple case
//! folding makes equal to it (`k` gains `K` and `K`), and the `i` flags are taken out, so the
//! translator, asked for no case folding, makes the same classes. Folding the items one by one is
//! the translator's folding of whole classes: folding distributes over union, and what negation
//! and set operations make of folded sets is folded already. Perl classes (`\w`) are closed under
//! folding, and the translator leaves them; so does this. Not in Unicode mode (`(?-u)`), only ASCII
//! letters fold, as bytes.

use super::unicode_properties::{self, varint};
use regex_syntax::ast::{
    self, Ast, ClassAscii, ClassAsciiKind, ClassBracketed, ClassSet, ClassSetItem, ClassSetRange,
    ClassSetUnion, Flag, FlagsItemKind, GroupKind, Literal, LiteralKind, Span,
};
use std::sync::OnceLock;

static PACKED: &[u8] = include_bytes!(concat!(env!("OUT_DIR"), "/case-folding.bin"));

/// Replaces the property classes of `ast` that resolve (`unicode_properties.rs`), folds it where
/// the `i` flag holds (from the start if `case_insensitive`), and removes the `i` flags: translate
/// the result without case folding. One walk for both: each follows the translator's flags.
pub(super) fn rewrite(ast: &mut Ast, case_insensitive: bool) {
    walk(
        ast,
        &mut Mode {
            unicode: true,
            case_insensitive,
        },
    );
}

/// The translator's flags that folding depends on.
#[derive(Clone, Copy)]
struct Mode {
    unicode: bool,
    case_insensitive: bool,
}

impl Mode {
    /// As the translator sets flags: `-` negates the flags after it; then the `i`s are removed.
    fn set(&mut self, flags: &mut ast::Flags) {
        let mut negated = false;
        for item in &flags.items {
            match item.kind {
                FlagsItemKind::Negation => negated = true,
                FlagsItemKind::Flag(Flag::Unicode) => self.unicode = !negated,
                FlagsItemKind::Flag(Flag::CaseInsensitive) => self.case_insensitive = !negated,
                FlagsItemKind::Flag(_) => {}
            }
        }
        flags
            .items
            .retain(|item| item.kind != FlagsItemKind::Flag(Flag::CaseInsensitive));
    }
}

/// Visits in the translator's order: flags set by `(?i)` hold to the end of their group.
fn walk(ast: &mut Ast, mode: &mut Mode) {
    match ast {
        Ast::Flags(set) => mode.set(&mut set.flags),
        Ast::Literal(literal) if mode.case_insensitive => {
            let others = others(literal.c, mode.unicode);
            if !others.is_empty() {
                let span = literal.span;
                let literal = ClassSetItem::Literal((**literal).clone());
                let items = with_ranges(span, Some(literal), others.iter().map(|&o| (o, o)));
                *ast = Ast::ClassBracketed(Box::new(bracketed(span, false, items)));
            }
        }
        Ast::ClassUnicode(class) if mode.unicode => {
            if let Some(mut bracketed) = unicode_properties::bracketed(class) {
                if mode.case_insensitive {
                    in_set(&mut bracketed.kind, true);
                }
                *ast = Ast::ClassBracketed(Box::new(bracketed));
            }
        }
        Ast::ClassBracketed(class) => {
            if mode.unicode {
                unicode_properties::resolve_set(&mut class.kind);
            }
            if mode.case_insensitive {
                in_set(&mut class.kind, mode.unicode);
            }
        }
        Ast::Repetition(repetition) => walk(&mut repetition.ast, mode),
        Ast::Group(group) => {
            let outer = *mode;
            if let GroupKind::NonCapturing(flags) = &mut group.kind {
                mode.set(flags);
            }
            walk(&mut group.ast, mode);
            *mode = outer;
        }
        Ast::Alternation(alternation) => {
            for branch in &mut alternation.asts {
                walk(branch, mode);
            }
        }
        Ast::Concat(concat) => {
            for item in &mut concat.asts {
                walk(item, mode);
            }
        }
        _ => {}
    }
}

fn in_set(set: &mut ClassSet, unicode: bool) {
    match set {
        ClassSet::Item(item) => in_item(item, unicode),
        ClassSet::BinaryOp(op) => {
            in_set(&mut op.lhs, unicode);
            in_set(&mut op.rhs, unicode);
        }
    }
}

fn in_item(item: &mut ClassSetItem, unicode: bool) {
    let span = *item.span();
    let items = match item {
        ClassSetItem::Literal(literal) => {
            let others = others(literal.c, unicode);
            if others.is_empty() {
                return;
            }
            with_ranges(span, Some(item.clone()), others.iter().map(|&o| (o, o)))
        }
        ClassSetItem::Range(range) => {
            let added = folded(range.start.c, range.end.c, unicode);
            if added.is_empty() {
                return;
            }
            with_ranges(span, Some(item.clone()), added.into_iter())
        }
        // Folded before it is negated, as the translator does: `[[:^upper:]]` is neither case.
        ClassSetItem::Ascii(class) => {
            *item = ClassSetItem::Bracketed(Box::new(ascii(class, unicode)));
            return;
        }
        ClassSetItem::Bracketed(class) => return in_set(&mut class.kind, unicode),
        ClassSetItem::Union(union) => {
            return union.items.iter_mut().for_each(|i| in_item(i, unicode));
        }
        ClassSetItem::Empty(_) | ClassSetItem::Unicode(_) | ClassSetItem::Perl(_) => return,
    };
    *item = ClassSetItem::Union(ClassSetUnion { span, items });
}

/// `[:name:]` as the bracketed class of its ranges, folded, at its span.
fn ascii(class: &ClassAscii, unicode: bool) -> ClassBracketed {
    use ClassAsciiKind::*;
    let ranges: &[(u8, u8)] = match class.kind {
        Alnum => &[(b'0', b'9'), (b'A', b'Z'), (b'a', b'z')],
        Alpha => &[(b'A', b'Z'), (b'a', b'z')],
        Ascii => &[(0, 0x7f)],
        Blank => &[(b'\t', b'\t'), (b' ', b' ')],
        Cntrl => &[(0, 0x1f), (0x7f, 0x7f)],
        Digit => &[(b'0', b'9')],
        Graph => &[(b'!', b'~')],
        Lower => &[(b'a', b'z')],
        Print => &[(b' ', b'~')],
        Punct => &[(b'!', b'/'), (b':', b'@'), (b'[', b'`'), (b'{', b'~')],
        Space => &[(b'\t', b'\r'), (b' ', b' ')],
        Upper => &[(b'A', b'Z')],
        Word => &[(b'0', b'9'), (b'A', b'Z'), (b'_', b'_'), (b'a', b'z')],
        Xdigit => &[(b'0', b'9'), (b'A', b'F'), (b'a', b'f')],
    };
    let mut all: Vec<(u32, u32)> = ranges
        .iter()
        .map(|&(start, end)| (u32::from(start), u32::from(end)))
        .collect();
    for &(start, end) in ranges {
        all.extend(folded(char::from(start), char::from(end), unicode));
    }
    let items = with_ranges(class.span, None, all.into_iter());
    bracketed(class.span, class.negated, items)
}

fn bracketed(span: Span, negated: bool, items: Vec<ClassSetItem>) -> ClassBracketed {
    ClassBracketed {
        span,
        negated,
        kind: ClassSet::Item(ClassSetItem::Union(ClassSetUnion { span, items })),
    }
}

/// `first` and then `ranges` as class items at `span` (the folded item's: an error names it).
fn with_ranges(
    span: Span,
    first: Option<ClassSetItem>,
    ranges: impl ExactSizeIterator<Item = (u32, u32)>,
) -> Vec<ClassSetItem> {
    let literal = |c: u32| Literal {
        span,
        kind: LiteralKind::Verbatim,
        c: char::from_u32(c).expect("folding gives scalar values"),
    };
    let mut items = Vec::with_capacity(1 + ranges.len());
    items.extend(first);
    items.extend(ranges.map(|(start, end)| {
        if start == end {
            ClassSetItem::Literal(literal(start))
        } else {
            ClassSetItem::Range(ClassSetRange {
                span,
                start: literal(start),
                end: literal(end),
            })
        }
    }));
    items
}

/// The characters folding makes equal to `c`, sorted (none when nothing folds): in Unicode mode
/// from the table (ASCII's from its copy, without inflating the table), else an ASCII letter's
/// other case.
fn others(c: char, unicode: bool) -> &'static [u32] {
    match (unicode, ASCII_OTHERS.get(c as usize)) {
        (true, Some(others)) => others,
        (true, None) => Table::get().others_of(c as u32),
        (false, _) => match ASCII_OTHER_CASE.get(c as usize) {
            Some(other) if *other != c as u32 => std::slice::from_ref(other),
            _ => &[],
        },
    }
}

/// Each ASCII character's others in Unicode mode (`k`: `K` and `K`), written by `build.rs`.
static ASCII_OTHERS: [&[u32]; 128] = include!(concat!(env!("OUT_DIR"), "/case-folding-ascii.rs"));

/// Each ASCII character's other case (an ASCII letter's differs in one bit), or itself.
static ASCII_OTHER_CASE: [u32; 128] = {
    let mut table = [0; 128];
    let mut c = 0;
    while c < 128 {
        let letter = (c as u8).is_ascii_alphabetic();
        table[c] = if letter { c as u32 ^ 0x20 } else { c as u32 };
        c += 1;
    }
    table
};

/// What folding adds to `start..=end`, as sorted, merged ranges (empty when nothing folds): in
/// Unicode mode every character folding makes equal to one in the range, else only ASCII letters'
/// other case.
fn folded(start: char, end: char, unicode: bool) -> Vec<(u32, u32)> {
    let (start, end) = (start as u32, end as u32);
    let mut added: Vec<u32> = if unicode && end < 0x80 {
        let ascii = &ASCII_OTHERS[start as usize..=end as usize];
        ascii
            .iter()
            .flat_map(|others| others.iter())
            .copied()
            .collect()
    } else if unicode {
        let table = Table::get();
        let first = table.chars.partition_point(|&c| c < start);
        let last = first + table.chars[first..].partition_point(|&c| c <= end);
        (first..last)
            .flat_map(|i| table.others(i))
            .copied()
            .collect()
    } else {
        let ascii = (start..=end.min(0x7f)).map(|c| ASCII_OTHER_CASE[c as usize]);
        ascii
            .filter(|&other| !(start..=end).contains(&other))
            .collect()
    };
    added.sort_unstable();
    merged(added)
}

/// Sorted characters as ranges.
fn merged(sorted: Vec<u32>) -> Vec<(u32, u32)> {
    let mut ranges: Vec<(u32, u32)> = Vec::new();
    for c in sorted {
        match ranges.last_mut() {
            Some(last) if last.1 + 1 >= c => last.1 = last.1.max(c),
            _ => ranges.push((c, c)),
        }
    }
    ranges
}

/// The packed folding, inflated at the first case-insensitive pattern a configuration uses.
struct Table {
    /// Every character that folds, sorted.
    chars: Vec<u32>,
    /// Where each character's others start in `others`, and where the last one's end.
    starts: Vec<u32>,
    /// Each character's others, sorted, character after character.
    others: Vec<u32>,
}

impl Table {
    fn get() -> &'static Table {
        static TABLE: OnceLock<Table> = OnceLock::new();
        TABLE.get_or_init(|| {
            let bytes = miniz_oxide::inflate::decompress_to_vec(PACKED)
                .expect("build.rs deflated the case folding");
            Table::read(&bytes)
        })
    }

    fn read(bytes: &[u8]) -> Table {
        let mut at = 0;
        let count = varint(bytes, &mut at) as usize;
        let mut table = Table {
            chars: Vec::with_capacity(count),
            starts: Vec::with_capacity(count + 1),
            others: Vec::with_capacity(count * 5 / 4),
        };
        let mut c = 0;
        for _ in 0..count {
            c += varint(bytes, &mut at);
            table.chars.push(c);
            table.starts.push(table.others.len() as u32);
            for _ in 0..=varint(bytes, &mut at) {
                let zigzag = varint(bytes, &mut at);
                let offset = (zigzag >> 1) as i32 ^ -((zigzag & 1) as i32);
                table.others.push(c.wrapping_add_signed(offset));
            }
        }
        table.starts.push(table.others.len() as u32);
        table
    }

    fn others(&self, i: usize) -> &[u32] {
        &self.others[self.starts[i] as usize..self.starts[i + 1] as usize]
    }

    fn others_of(&self, c: u32) -> &[u32] {
        match self.chars.binary_search(&c) {
            Ok(i) => self.others(i),
            Err(_) => &[],
        }
    }
}

#[cfg(test)]
mod tests {
    //! Natively, regex-syntax has its case folding table (the tests' `regex` turns it on), so every
    //! pattern is compared with what regex-syntax itself makes of it.
    use super::super::boosts::translate;
    use super::folded;
    use proptest::prelude::*;
    use regex_syntax::hir::{ClassUnicode, ClassUnicodeRange};

    fn regex_syntax(
        pattern: &str,
        case_insensitive: bool,
    ) -> Result<regex_syntax::hir::Hir, String> {
        regex_syntax::ParserBuilder::new()
            .case_insensitive(case_insensitive)
            .build()
            .parse(pattern)
            .map_err(|e| e.to_string())
    }

    #[test]
    fn every_character_folds_with_the_characters_regex_syntax_folds_it_with() {
        let mut folding = 0;
        for c in (0..=char::MAX as u32).filter_map(char::from_u32) {
            let mut theirs = ClassUnicode::new([ClassUnicodeRange::new(c, c)]);
            theirs.case_fold_simple();
            let mut ours = ClassUnicode::new([ClassUnicodeRange::new(c, c)]);
            for (start, end) in folded(c, c, true) {
                let [start, end] = [start, end].map(|x| char::from_u32(x).unwrap());
                ours.push(ClassUnicodeRange::new(start, end));
            }
            assert_eq!(ours, theirs, "{c:?} (U+{:04X})", c as u32);
            folding += usize::from(theirs.iter().count() > 1 || theirs.ranges()[0].len() > 1);
        }
        assert!(folding > 2_800, "only {folding} characters fold");
    }

    #[test]
    fn patterns_fold_as_regex_syntax_folds_them() {
        for pattern in [
            "k",
            "(?i)Straße",
            "σ|Σ|ς",
            "[^k]",
            "[a-z]+",
            "[[:upper:]][[:^lower:]]",
            r"[\p{Lu}&&[^A-Z]]",
            "[a-z--k]",
            "[k~~K]",
            r"(?-i)k(?i:k)k",
            "a(?-i)b|c",
            "(?-u:k[a-z]K)",
            "(?-u:[[:^alpha:]])",
            "(?-u)[^a]",
            r"(?-u:\x4B)",
            r"\w\d\s[\W]",
            "(?i)",
            "((?-i))k",
        ] {
            for case_insensitive in [true, false] {
                assert_eq!(
                    translate(pattern, case_insensitive),
                    regex_syntax(pattern, case_insensitive),
                    "{pattern} (case-insensitive: {case_insensitive})"
                );
            }
        }
    }

    /// A piece of a pattern: characters that fold in every way (one other case, three, none;
    /// titlecase; Kelvin sign, long s), classes, set operations, and flags turned on and off.
    fn piece() -> impl Strategy<Value = String> {
        let chars = prop::sample::select(vec![
            "a", "K", "k", "\u{212a}", "s", "\u{17f}", "ß", "ẞ", "Σ", "ς", "ǅ", "Ω", "1", "_", "é",
            "ǰ", "İ", "ı", "ꭰ", "𐐀", "-", r"\x4b", r"\u{3a3}",
        ]);
        let class_item = prop_oneof![
            chars.clone().prop_map(String::from),
            (chars.clone(), chars.clone()).prop_map(|(a, b)| {
                let ordered = |x: &str| x.chars().next().unwrap();
                if a.starts_with('\\') || b.starts_with('\\') || ordered(a) > ordered(b) {
                    a.to_string()
                } else {
                    format!("{a}-{b}")
                }
            }),
            prop::sample::select(vec![
                "[:upper:]",
                "[:^lower:]",
                "[:alpha:]",
                "[:^word:]",
                "[:xdigit:]",
                "[:punct:]",
                r"\w",
                r"\D",
                r"\p{Lu}",
                r"\P{Greek}",
                r"\pL",
            ])
            .prop_map(String::from),
        ];
        let class = (
            any::<bool>(),
            prop::collection::vec(class_item, 1..4),
            0..5usize,
            prop::collection::vec(chars.clone(), 1..3),
        )
            .prop_map(|(negated, items, op, rhs)| {
                let set = items.concat();
                let rhs = rhs.concat();
                let caret = if negated { "^" } else { "" };
                match op {
                    0 => format!("[{caret}{set}]"),
                    1 => format!("[{caret}{set}&&[{rhs}a-z]]"),
                    2 => format!("[{set}--{rhs}]"),
                    3 => format!("[{caret}[{set}]~~[^{rhs}]]"),
                    _ => format!("[{caret}a[{caret}{set}]]"),
                }
            });
        prop_oneof![
            chars.prop_map(String::from),
            class,
            prop::sample::select(vec![
                "(?i)", "(?-i)", "(?i:", "(?-i:", "(?-u:", "(?u:", "(", "(?iu-s)", "(?-iu:", ")",
                "|", "+", r"\b",
            ])
            .prop_map(String::from),
        ]
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(1_000))]
        #[test]
        fn any_pattern_folds_as_regex_syntax_folds_it(
            pieces in prop::collection::vec(piece(), 1..8),
            case_insensitive in any::<bool>(),
        ) {
            let pattern = pieces.concat();
            if let Ok(mut ast) = regex_syntax::ast::parse::Parser::new().parse(&pattern) {
                super::rewrite(&mut ast, case_insensitive);
                // Natively the translator could fold what is left; in the component it cannot.
                prop_assert!(!format!("{ast:?}").contains("CaseInsensitive"), "{}", pattern);
            }
            prop_assert_eq!(
                translate(&pattern, case_insensitive),
                regex_syntax(&pattern, case_insensitive),
                "{} (case-insensitive: {})", pattern, case_insensitive
            );
        }
    }
}
