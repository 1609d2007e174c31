//! Keyword overlap between rules, for `lint-rules`: the keywords two rules share, and keywords of
//! two rules of which one is inside the other as text. Found through an index of the keywords and
//! the keyword automaton, so the work follows the overlaps found, not the pairs of rules (comparing
//! every pair took minutes at 10,000 rules).

use super::keyword_table::KeywordTable;
use super::keywords::Automaton;
use super::model::Rule;
use std::collections::HashMap;

/// Every pair of rules `(a, b)`, `a < b`, sharing keywords, with the indices in `a` of the keywords
/// they share (in `a`'s order); ordered by `a`, then `b`. A rule's keywords are distinct.
pub fn shared_keywords(rules: &[Rule]) -> Vec<(usize, usize, Vec<usize>)> {
    let table = KeywordTable::new(rules, |r, k| (r, k));
    let mut pairs = Vec::new();
    let mut shared: HashMap<usize, Vec<usize>> = HashMap::new();
    for (a, rule) in rules.iter().enumerate() {
        shared.clear();
        for (k, keyword) in rule.keywords.iter().enumerate() {
            let id = table
                .id_of(keyword)
                .expect("every rule's keyword is in the table");
            for &(b, _) in table.owners.of(id) {
                if b > a {
                    shared.entry(b).or_default().push(k);
                }
            }
        }
        let mut found: Vec<(usize, usize, Vec<usize>)> =
            shared.drain().map(|(b, keys)| (a, b, keys)).collect();
        found.sort_unstable_by_key(|&(_, b, _)| b);
        pairs.extend(found);
    }
    pairs
}

/// Every `(a, b, ka, kb)`, rules `a < b`, where keyword `ka` of `a` and keyword `kb` of `b` differ
/// and one is inside the other as text; ordered by `a`, `b`, `ka`, then `kb`. Keywords are not empty.
pub fn text_overlaps(rules: &[Rule]) -> Vec<(usize, usize, usize, usize)> {
    let table = KeywordTable::new(rules, |r, k| (r, k));
    if table.texts.is_empty() {
        return Vec::new();
    }
    let automaton = Automaton::new(&table.texts);
    let mut found = Vec::new();
    let mut inside = Vec::new();
    for (outer, text) in table.texts.iter().enumerate() {
        inside.clear();
        automaton.for_each_match(text.as_bytes(), |pattern, _, _| {
            if pattern != outer {
                inside.push(pattern);
            }
        });
        inside.sort_unstable();
        inside.dedup();
        for &short in &inside {
            for &(r_short, k_short) in table.owners.of(short) {
                for &(r_long, k_long) in table.owners.of(outer) {
                    match r_short.cmp(&r_long) {
                        std::cmp::Ordering::Less => found.push((r_short, r_long, k_short, k_long)),
                        std::cmp::Ordering::Greater => {
                            found.push((r_long, r_short, k_long, k_short))
                        }
                        std::cmp::Ordering::Equal => {}
                    }
                }
            }
        }
    }
    found.sort_unstable();
    found
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::Scope;

    fn rule(keywords: Vec<String>) -> Rule {
        Rule {
            id: String::new(),
            pack_type: String::new(),
            scope: Scope::Public,
            keywords,
            substring: false,
            keyword_weight: 1000,
            min_confidence: 300,
            boosts: vec![],
            primary_pack: 0,
            additional: vec![],
        }
    }

    /// What [`shared_keywords`] and [`text_overlaps`] find, in that order.
    type Overlaps = (
        Vec<(usize, usize, Vec<usize>)>,
        Vec<(usize, usize, usize, usize)>,
    );

    /// Every pair of rules compared, as `lint-rules` first did.
    fn by_pairs(rules: &[Rule]) -> Overlaps {
        let (mut shared, mut text) = (Vec::new(), Vec::new());
        for (i, a) in rules.iter().enumerate() {
            for (j, b) in rules.iter().enumerate().skip(i + 1) {
                let keys: Vec<usize> = (0..a.keywords.len())
                    .filter(|&k| b.keywords.contains(&a.keywords[k]))
                    .collect();
                if !keys.is_empty() {
                    shared.push((i, j, keys));
                }
                for (ka, x) in a.keywords.iter().enumerate() {
                    for (kb, y) in b.keywords.iter().enumerate() {
                        if x != y && (y.contains(x.as_str()) || x.contains(y.as_str())) {
                            text.push((i, j, ka, kb));
                        }
                    }
                }
            }
        }
        (shared, text)
    }

    #[test]
    fn agrees_with_comparing_every_pair() {
        let mut next = crate::platform::text::test_numbers(0x5851_f42d_u64);
        for _ in 0..300 {
            let rules: Vec<Rule> = (0..1 + next(8))
                .map(|_| {
                    let mut keywords: Vec<String> = Vec::new();
                    for _ in 0..1 + next(5) {
                        let len = 1 + next(4) as usize;
                        let word: String =
                            (0..len).map(|_| (b'a' + next(3) as u8) as char).collect();
                        if !keywords.contains(&word) {
                            keywords.push(word);
                        }
                    }
                    rule(keywords)
                })
                .collect();
            assert_eq!(
                (shared_keywords(&rules), text_overlaps(&rules)),
                by_pairs(&rules)
            );
        }
    }
}
