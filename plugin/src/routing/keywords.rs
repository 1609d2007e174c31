//! Every keyword of every rule found in one pass over a prompt: an Aho-Corasick automaton over the
//! keywords' bytes, reporting every occurrence (overlapping ones too).
//!
//! Built here rather than with the aho-corasick crate: that crate's construction is quadratic in the
//! number of keywords (its state shuffle remaps states by following swap cycles as long as the keyword
//! list; docs/decisions/keyword-automaton.md). This one is built in time linear in the keywords'
//! total length, after sorting them.

/// No state, no pattern.
const NONE: u32 = u32::MAX;
const ROOT: u32 = 0;
/// Transitions of a state searched one by one up to this many, by binary search beyond.
const LINEAR_SEARCH_MAX: usize = 8;
/// Keywords starting with at most this many distinct bytes are looked for with memchr.
const FEW_START_BYTES: usize = 3;

#[derive(Debug)]
pub struct Automaton {
    /// The root's transitions, one per byte (ROOT when there is none: the root loops on itself).
    root: Box<[u32; 256]>,
    /// The bytes keywords start with, when there are few (repeated to fill the array).
    few_starts: Option<[u8; FEW_START_BYTES]>,
    /// The transitions of state `s`, sorted by byte: `bytes[start[s]..start[s + 1]]`, to `targets`.
    start: Box<[u32]>,
    bytes: Box<[u8]>,
    targets: Box<[u32]>,
    /// The state of the longest proper suffix of the state's text that is also a state.
    fail: Box<[u32]>,
    /// The pattern that ends at the state, or NONE.
    pattern: Box<[u32]>,
    /// The nearest state down the failure links (not the state itself) where a pattern ends, or NONE.
    next_match: Box<[u32]>,
    /// The state itself when a pattern ends there, else `next_match`: the first match to report.
    first_match: Box<[u32]>,
    /// Each pattern's length in bytes.
    lengths: Box<[u32]>,
}

impl Automaton {
    /// An automaton over `patterns`, which must be distinct and non-empty (an empty one never
    /// matches; of duplicates, the first is reported).
    pub fn new<S: AsRef<[u8]>>(patterns: &[S]) -> Automaton {
        let lengths: Vec<u32> = patterns.iter().map(|p| p.as_ref().len() as u32).collect();
        let trie = Trie::build(patterns);
        let mut automaton = trie.into_automaton(lengths);
        automaton.link_failures();
        automaton.first_match = (0..automaton.pattern.len())
            .map(|s| match automaton.pattern[s] {
                NONE => automaton.next_match[s],
                _ => s as u32,
            })
            .collect();
        automaton
    }

    /// Calls `each(pattern, start, end)` for every occurrence of every pattern in `haystack`, in the
    /// order they end (byte offsets).
    ///
    /// Written with plain indexing of slices (the tables are boxed slices) and `inline(always)`
    /// helpers: the component is optimized for size, and there `Vec`'s indexing, a range's slicing
    /// and the helpers were each a call per byte (`eval` of 1,200 prompts: 1,027 M instructions
    /// with them, 533 M without).
    pub fn for_each_match(&self, haystack: &[u8], mut each: impl FnMut(usize, usize, usize)) {
        let mut state = ROOT;
        let mut i = 0;
        while i < haystack.len() {
            if state == ROOT {
                // Most of a prompt is bytes no keyword starts with: skip them in a tight loop.
                match self.next_start(haystack, i) {
                    Some(at) => i = at,
                    None => return,
                }
            }
            state = self.next_state(state, haystack[i]);
            i += 1;
            let mut found = self.first_match[state as usize];
            while found != NONE {
                let pattern = self.pattern[found as usize] as usize;
                each(pattern, i - self.lengths[pattern] as usize, i);
                found = self.next_match[found as usize];
            }
        }
    }

    /// The first offset from `from` on where a keyword may start.
    #[inline(always)]
    fn next_start(&self, haystack: &[u8], from: usize) -> Option<usize> {
        if let Some(starts) = self.few_starts {
            // memchr's vector search (WebAssembly SIMD in the component): a table look-up per byte
            // was a third of routing a long prompt there.
            let rest = &haystack[from..];
            let found = match starts {
                [a, b, c] if a == b && b == c => memchr::memchr(a, rest),
                [a, b, c] if b == c => memchr::memchr2(a, b, rest),
                [a, b, c] => memchr::memchr3(a, b, c, rest),
            };
            return found.map(|at| from + at);
        }
        let mut at = from;
        while at < haystack.len() {
            if self.root[haystack[at] as usize] != ROOT {
                return Some(at);
            }
            at += 1;
        }
        None
    }

    #[inline(always)]
    fn next_state(&self, mut state: u32, byte: u8) -> u32 {
        loop {
            if state == ROOT {
                return self.root[byte as usize];
            }
            if let Some(next) = self.child(state, byte) {
                return next;
            }
            state = self.fail[state as usize];
        }
    }

    /// The transition of `state` (not the root) on `byte`.
    #[inline(always)]
    fn child(&self, state: u32, byte: u8) -> Option<u32> {
        let (mut low, mut high) = (
            self.start[state as usize] as usize,
            self.start[state as usize + 1] as usize,
        );
        if high - low <= LINEAR_SEARCH_MAX {
            while low < high {
                if self.bytes[low] == byte {
                    return Some(self.targets[low]);
                }
                low += 1;
            }
            return None;
        }
        // Binary search of the sorted bytes in [low, high).
        while low < high {
            let middle = low + (high - low) / 2;
            match self.bytes[middle].cmp(&byte) {
                std::cmp::Ordering::Less => low = middle + 1,
                std::cmp::Ordering::Greater => high = middle,
                std::cmp::Ordering::Equal => return Some(self.targets[middle]),
            }
        }
        None
    }

    /// Failure links and match chains, breadth first (a state's links need its parent's).
    fn link_failures(&mut self) {
        let mut queue = std::collections::VecDeque::new();
        for &child in self.root.iter().filter(|&&c| c != ROOT) {
            self.fail[child as usize] = ROOT;
            queue.push_back(child);
        }
        while let Some(state) = queue.pop_front() {
            let edges =
                self.start[state as usize] as usize..self.start[state as usize + 1] as usize;
            for edge in edges {
                let (byte, child) = (self.bytes[edge], self.targets[edge]);
                let mut fallback = self.fail[state as usize];
                let fail = loop {
                    if fallback == ROOT {
                        break self.root[byte as usize];
                    }
                    if let Some(next) = self.child(fallback, byte) {
                        break next;
                    }
                    fallback = self.fail[fallback as usize];
                };
                self.fail[child as usize] = fail;
                self.next_match[child as usize] = if self.pattern[fail as usize] != NONE {
                    fail
                } else {
                    self.next_match[fail as usize]
                };
                queue.push_back(child);
            }
        }
    }
}

/// The patterns' trie: each state's parent and the byte that leads to it, states numbered in the
/// order the sorted patterns create them (so a state's children are numbered in byte order).
struct Trie {
    parent: Vec<u32>,
    byte: Vec<u8>,
    pattern: Vec<u32>,
}

impl Trie {
    fn build<S: AsRef<[u8]>>(patterns: &[S]) -> Trie {
        // Sorted by each pattern's first eight bytes as one number (zero-padded: a smaller number is
        // a smaller pattern), the whole patterns compared only on a tie, and of equal patterns the
        // first: most comparisons are then one integer's, not a byte-by-byte compare through two
        // indirections (in the component, a fifth of loading 100,000 keywords).
        let prefix = |p: &[u8]| {
            let mut bytes = [0u8; 8];
            let n = p.len().min(8);
            bytes[..n].copy_from_slice(&p[..n]);
            u64::from_be_bytes(bytes)
        };
        // As one integer each (the prefix above the index), sorted with the integers' own order:
        // a comparator is a call per comparison in the size-optimized component. Patterns that
        // share their first eight bytes are then in index order, and each such run is sorted by
        // the whole pattern, the index breaking ties.
        let mut keyed: Vec<u128> = patterns
            .iter()
            .enumerate()
            .map(|(i, p)| (u128::from(prefix(p.as_ref())) << 64) | i as u128)
            .collect();
        keyed.sort_unstable();
        let index = |key: &u128| *key as u64 as usize;
        for run in keyed.chunk_by_mut(|a, b| a >> 64 == b >> 64) {
            if run.len() > 1 {
                run.sort_unstable_by(|a, b| {
                    let (x, y) = (patterns[index(a)].as_ref(), patterns[index(b)].as_ref());
                    x.cmp(y).then(a.cmp(b))
                });
            }
        }
        let order = keyed.iter().map(index);
        let mut trie = Trie {
            parent: vec![NONE],
            byte: vec![0],
            pattern: vec![NONE],
        };
        // The states along the previous pattern: path[i] is reached by its first i bytes.
        let mut path: Vec<u32> = vec![ROOT];
        let mut previous: &[u8] = &[];
        for index in order {
            let text = patterns[index].as_ref();
            if text.is_empty() {
                continue;
            }
            let shared = text
                .iter()
                .zip(previous)
                .take_while(|(a, b)| a == b)
                .count();
            path.truncate(shared + 1);
            for &byte in &text[shared..] {
                let state = trie.parent.len() as u32;
                trie.parent.push(*path.last().expect("the root"));
                trie.byte.push(byte);
                trie.pattern.push(NONE);
                path.push(state);
            }
            let end = *path.last().expect("non-empty") as usize;
            if trie.pattern[end] == NONE {
                trie.pattern[end] = index as u32;
            }
            previous = text;
        }
        trie
    }

    /// The transitions grouped by state (counting sort on the parent: children keep byte order).
    fn into_automaton(self, lengths: Vec<u32>) -> Automaton {
        let states = self.parent.len();
        let mut root = Box::new([ROOT; 256]);
        let mut start = vec![0u32; states + 1];
        for (state, &parent) in self.parent.iter().enumerate().skip(1) {
            if parent == ROOT {
                root[self.byte[state] as usize] = state as u32;
            } else {
                start[parent as usize + 1] += 1;
            }
        }
        for s in 0..states {
            start[s + 1] += start[s];
        }
        let firsts: Vec<u8> = (0..=255u8).filter(|&b| root[b as usize] != ROOT).collect();
        let few_starts = (!firsts.is_empty() && firsts.len() <= FEW_START_BYTES)
            .then(|| std::array::from_fn(|k| firsts[k.min(firsts.len() - 1)]));
        let edges = start[states] as usize;
        let (mut bytes, mut targets) = (vec![0u8; edges], vec![ROOT; edges]);
        let mut next = start.clone();
        for (state, &parent) in self.parent.iter().enumerate().skip(1) {
            if parent != ROOT {
                let at = next[parent as usize] as usize;
                bytes[at] = self.byte[state];
                targets[at] = state as u32;
                next[parent as usize] += 1;
            }
        }
        Automaton {
            root,
            few_starts,
            start: start.into(),
            bytes: bytes.into(),
            targets: targets.into(),
            fail: vec![ROOT; states].into(),
            pattern: self.pattern.into(),
            next_match: vec![NONE; states].into(),
            first_match: Box::default(),
            lengths: lengths.into(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn matches(patterns: &[&str], haystack: &str) -> Vec<(usize, usize, usize)> {
        let mut found = Vec::new();
        Automaton::new(patterns)
            .for_each_match(haystack.as_bytes(), |p, s, e| found.push((p, s, e)));
        found.sort_unstable();
        found
    }

    /// Every occurrence of every pattern, by brute force.
    fn naive(patterns: &[&str], haystack: &str) -> Vec<(usize, usize, usize)> {
        let mut found = Vec::new();
        for (p, pattern) in patterns.iter().enumerate() {
            if pattern.is_empty() {
                continue;
            }
            for start in 0..haystack.len() {
                if haystack.as_bytes()[start..].starts_with(pattern.as_bytes()) {
                    found.push((p, start, start + pattern.len()));
                }
            }
        }
        found.sort_unstable();
        found
    }

    #[test]
    fn reports_every_overlapping_occurrence() {
        let patterns = ["he", "she", "his", "hers", "series a", "a", "融资"];
        let text = "ushers and his series a 融资";
        assert_eq!(matches(&patterns, text), naive(&patterns, text));
        assert!(
            matches(&patterns, text).contains(&(1, 1, 4)),
            "she in ushers"
        );
        assert_eq!(matches(&["x"], ""), vec![]);
        assert_eq!(matches(&["", "ab"], "ab"), vec![(1, 0, 2)]);
    }

    #[test]
    fn agrees_with_brute_force_on_generated_inputs() {
        // A small alphabet makes overlaps, shared prefixes and deep failure chains common.
        let mut next = crate::platform::text::test_numbers(0x2545_f491_u64);
        for _ in 0..300 {
            let count = 1 + next(12) as usize;
            let mut patterns: Vec<String> = Vec::new();
            while patterns.len() < count {
                let len = 1 + next(5) as usize;
                let word: String = (0..len).map(|_| (b'a' + next(3) as u8) as char).collect();
                if !patterns.contains(&word) {
                    patterns.push(word);
                }
            }
            let text: String = (0..next(60))
                .map(|_| (b'a' + next(4) as u8) as char)
                .collect();
            let refs: Vec<&str> = patterns.iter().map(String::as_str).collect();
            assert_eq!(
                matches(&refs, &text),
                naive(&refs, &text),
                "{refs:?} in {text:?}"
            );
        }
    }

    #[test]
    fn long_shared_prefixes_and_duplicates() {
        // Patterns equal in their first eight bytes are ordered by the rest; of duplicates, the
        // first is reported whatever the order the sort met them in.
        let mut next = crate::platform::text::test_numbers(0x9e37_79b9_u64);
        for _ in 0..200 {
            let mut patterns: Vec<String> = (0..1 + next(10))
                .map(|_| {
                    let head = ["abcdefgh", "abcdefg", "abcdefghi", "ab"][next(4) as usize];
                    let tail: String = (0..next(4))
                        .map(|_| (b'a' + next(3) as u8) as char)
                        .collect();
                    format!("{head}{tail}")
                })
                .collect();
            patterns.dedup();
            let text: String = (0..next(3))
                .map(|_| patterns[next(patterns.len() as u64) as usize].clone() + "c")
                .collect();
            let refs: Vec<&str> = patterns.iter().map(String::as_str).collect();
            let mut expected = naive(&refs, &text);
            // Later copies of a pattern are not reported: their first copy is.
            expected.retain(|&(p, _, _)| !refs[..p].contains(&refs[p]));
            assert_eq!(matches(&refs, &text), expected, "{refs:?} in {text:?}");
        }
        assert_eq!(
            matches(&["abcdefghij", "abcdefghij"], "abcdefghij"),
            vec![(0, 0, 10)]
        );
    }

    #[test]
    fn skips_to_keywords_with_few_first_bytes_across_words() {
        // One, two and three distinct first bytes (memchr) and four (the table),
        // each keyword planted at every offset of a text longer than a few words.
        for patterns in [
            vec!["qa"],
            vec!["qa", "zb"],
            vec!["qa", "zb", "\u{e9}t\u{e9}"],
            vec!["qa", "zb", "xc", "wd"],
        ] {
            for at in 0..40 {
                for pattern in &patterns {
                    let mut text = "a".repeat(at);
                    text.push_str(pattern);
                    text.push_str(&"b q z x w".repeat(3));
                    assert_eq!(
                        matches(&patterns, &text),
                        naive(&patterns, &text),
                        "{patterns:?} in {text:?}"
                    );
                }
            }
        }
    }
}
