//! The distinct keywords of all rules, each with what owns it: the keyword automaton's patterns
//! (matching) and the keywords `lint-rules` compares (overlaps).

use super::model::Rule;
use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};

/// A multiply-rotate hash (FxHash's) for the keyword table: the keywords are the user's own
/// configuration, not an adversary's, and SipHash over 100,000 of them was a twentieth of a load.
#[derive(Default)]
struct KeywordHasher(u64);

impl KeywordHasher {
    fn add(&mut self, word: u64) {
        self.0 = (self.0.rotate_left(5) ^ word).wrapping_mul(0x517c_c1b7_2722_0a95);
    }
}

impl Hasher for KeywordHasher {
    fn write(&mut self, bytes: &[u8]) {
        let mut words = bytes.chunks_exact(8);
        for word in &mut words {
            self.add(u64::from_le_bytes(word.try_into().expect("eight bytes")));
        }
        let mut last = [0u8; 8];
        last[..words.remainder().len()].copy_from_slice(words.remainder());
        self.add(u64::from_le_bytes(last) ^ bytes.len() as u64);
    }

    fn write_u8(&mut self, byte: u8) {
        self.add(u64::from(byte));
    }

    fn finish(&self) -> u64 {
        // hashbrown picks buckets with the low bits and tags with the top seven.
        self.0.rotate_left(26)
    }
}

/// What owns each keyword, kept in one vector: a vector per keyword was 100,000 allocations (and
/// as many frees) at 10,000 rules.
#[derive(Debug)]
pub(super) struct Owners<O> {
    owners: Vec<O>,
    /// Keyword `i`'s owners are `owners[start[i]..start[i + 1]]`.
    start: Vec<u32>,
}

impl<O> Owners<O> {
    /// What owns keyword number `id`, in rule order.
    pub fn of(&self, id: usize) -> &[O] {
        &self.owners[self.start[id] as usize..self.start[id + 1] as usize]
    }
}

/// The distinct keywords of the rules, numbered as first met, each with its owners in rule order.
pub(super) struct KeywordTable<'a, O> {
    pub texts: Vec<&'a str>,
    pub owners: Owners<O>,
    index: HashMap<&'a str, u32, BuildHasherDefault<KeywordHasher>>,
}

impl<'a, O: Copy + Default> KeywordTable<'a, O> {
    /// `owner(rule, keyword)` says what owns keyword `keyword` of rule `rule`.
    pub fn new(rules: &'a [Rule], owner: impl Fn(usize, usize) -> O) -> KeywordTable<'a, O> {
        let total = rules.iter().map(|r| r.keywords.len()).sum();
        let mut index: HashMap<&str, u32, BuildHasherDefault<KeywordHasher>> =
            HashMap::with_capacity_and_hasher(total, Default::default());
        let mut texts = Vec::new();
        // Each (rule, keyword)'s keyword number, in rule order; how many owners each keyword has.
        let mut ids: Vec<u32> = Vec::with_capacity(total);
        let mut counts: Vec<u32> = Vec::new();
        for rule in rules {
            for keyword in &rule.keywords {
                let id = *index.entry(keyword.as_str()).or_insert_with(|| {
                    texts.push(keyword.as_str());
                    counts.push(0);
                    (texts.len() - 1) as u32
                });
                counts[id as usize] += 1;
                ids.push(id);
            }
        }
        let mut start = Vec::with_capacity(counts.len() + 1);
        start.push(0u32);
        for count in &counts {
            start.push(start[start.len() - 1] + count);
        }
        // Placed by a counting sort on the keyword number: each keyword's owners stay in rule order.
        let pairs = rules
            .iter()
            .enumerate()
            .flat_map(|(r, rule)| (0..rule.keywords.len()).map(move |k| (r, k)));
        let mut owners = vec![O::default(); total];
        let mut next = start.clone();
        for ((r, k), &id) in pairs.zip(&ids) {
            let at = &mut next[id as usize];
            owners[*at as usize] = owner(r, k);
            *at += 1;
        }
        KeywordTable {
            texts,
            owners: Owners { owners, start },
            index,
        }
    }

    /// The number of keyword `text`, if a rule has it.
    pub fn id_of(&self, text: &str) -> Option<usize> {
        self.index.get(text).map(|&id| id as usize)
    }
}
