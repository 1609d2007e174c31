//! Layer 1, matching keywords: the prompt cut and normalized, then every keyword of every rule found
//! in one pass of one automaton. A rule is a candidate only if one of its keywords matched.

use super::keywords::Automaton;
use super::model::Rule;
use crate::text;
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

/// Who owns a keyword pattern of the automaton.
#[derive(Clone, Copy, Debug)]
struct KeywordOwner {
    rule: u32,
    keyword: u32,
    substring: bool,
}

/// One automaton over the distinct keywords of all rules; each pattern knows the rules that own it.
#[derive(Debug)]
pub(super) struct KeywordIndex {
    automaton: Option<Automaton>,
    owners: Vec<Vec<KeywordOwner>>,
}

impl KeywordIndex {
    pub(super) fn build(rules: &[Rule]) -> KeywordIndex {
        let mut patterns: Vec<&str> = Vec::new();
        let mut index: HashMap<&str, usize, BuildHasherDefault<KeywordHasher>> =
            HashMap::with_capacity_and_hasher(
                rules.iter().map(|r| r.keywords.len()).sum(),
                Default::default(),
            );
        let mut owners: Vec<Vec<KeywordOwner>> = Vec::new();
        for (r, rule) in rules.iter().enumerate() {
            for (k, keyword) in rule.keywords.iter().enumerate() {
                let p = *index.entry(keyword.as_str()).or_insert_with(|| {
                    patterns.push(keyword);
                    owners.push(Vec::new());
                    patterns.len() - 1
                });
                owners[p].push(KeywordOwner {
                    rule: r as u32,
                    keyword: k as u32,
                    substring: rule.substring,
                });
            }
        }
        let automaton = (!patterns.is_empty()).then(|| Automaton::new(&patterns));
        KeywordIndex { automaton, owners }
    }

    /// Every (rule, keyword) that matched the normalized prompt, sorted, each once.
    pub(super) fn hits(&self, normalized: &str) -> Vec<(u32, u32)> {
        let mut hits: Vec<(u32, u32)> = Vec::new();
        if let Some(automaton) = &self.automaton {
            automaton.for_each_match(normalized.as_bytes(), |pattern, start, end| {
                let owners = &self.owners[pattern];
                let bounded = text::on_word_boundaries(normalized, start, end);
                hits.extend(
                    owners
                        .iter()
                        .filter(|o| o.substring || bounded)
                        .map(|o| (o.rule, o.keyword)),
                );
            });
        }
        hits.sort_unstable();
        hits.dedup();
        hits
    }
}

/// The prompt as matched: cut to `max_chars` characters (said in the trace), normalized.
pub(super) fn matching_text(prompt: &str, max_chars: usize, trace: &mut Vec<String>) -> String {
    let within = within_limit(prompt, max_chars);
    if within.len() < prompt.len() {
        trace.push(format!(
            "prompt cut to its first {} characters for matching",
            max_chars
        ));
    }
    text::normalize(within)
}

/// The prompt's first `max_chars` characters: the part routing reads.
pub(super) fn within_limit(prompt: &str, max_chars: usize) -> &str {
    // A prompt no longer in bytes than the limit is within it in characters too: skip the walk.
    match (prompt.len() > max_chars)
        .then(|| prompt.char_indices().nth(max_chars))
        .flatten()
    {
        Some((cut, _)) => &prompt[..cut],
        None => prompt,
    }
}
