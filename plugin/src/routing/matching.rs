//! Layer 1, matching keywords: the prompt cut and normalized, then every keyword of every rule found
//! in one pass of one automaton. A rule is a candidate only if one of its keywords matched.

use super::keyword_table::{KeywordTable, Owners};
use super::keywords::Automaton;
use super::model::Rule;
use crate::platform::text;

/// Who owns a keyword pattern of the automaton.
#[derive(Clone, Copy, Debug, Default)]
struct KeywordOwner {
    rule: u32,
    keyword: u32,
    substring: bool,
}

/// One automaton over the distinct keywords of all rules; each pattern knows the rules that own it.
#[derive(Debug)]
pub(super) struct KeywordIndex {
    automaton: Option<Automaton>,
    owners: Owners<KeywordOwner>,
}

impl KeywordIndex {
    pub(super) fn build(rules: &[Rule]) -> KeywordIndex {
        let table = KeywordTable::new(rules, |r, k| KeywordOwner {
            rule: r as u32,
            keyword: k as u32,
            substring: rules[r].substring,
        });
        let automaton = (!table.texts.is_empty()).then(|| Automaton::new(&table.texts));
        KeywordIndex {
            automaton,
            owners: table.owners,
        }
    }

    /// Every (rule, keyword) that matched the normalized prompt, sorted, each once.
    pub(super) fn hits(&self, normalized: &str) -> Vec<(u32, u32)> {
        let mut hits: Vec<(u32, u32)> = Vec::new();
        if let Some(automaton) = &self.automaton {
            automaton.for_each_match(normalized.as_bytes(), |pattern, start, end| {
                let owners = self.owners.of(pattern);
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
