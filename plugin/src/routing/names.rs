//! What "names an entity" means for the strict follow-up test: deterministic, from the prompt's text
//! and the turn's recall, no model. A prompt names
//! - every word of two or more characters that starts with a capital letter and does not start a
//!   sentence (the first word, or the first after `.`, `!`, `?` or a line break), and
//! - every word of a recalled entity's name when the whole name occurs in the prompt (any case, on
//!   word boundaries): this catches names written in lower case or at a sentence start.
//!
//! Names are compared word by word, in lower case: "Priya" is named by a turn that named "Priya Shah".

use crate::memory::recall::Recall;
use crate::platform::text;

/// Names kept from one prompt at most (a long prompt is not a follow-up anyway).
const MAX_NAMES_PER_PROMPT: usize = 64;
/// Names kept in the session state at most, over the turns that carried one pack.
pub const MAX_NAMES_KEPT: usize = 256;

/// A name as the prompt wrote it, and the lower-case key it is compared by.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Name {
    pub key: String,
    pub shown: String,
}

/// The names `prompt` mentions, in the order they first occur, each once. `normalized` is the
/// prompt as routing matches it (`text::normalize`), where recalled names are looked for.
pub fn named_in(prompt: &str, normalized: &str, recall: &Recall) -> Vec<Name> {
    let mut names: Vec<Name> = Vec::new();
    let mut add = |word: &str| {
        let key = word.to_lowercase();
        if names.len() < MAX_NAMES_PER_PROMPT && !names.iter().any(|n| n.key == key) {
            names.push(Name {
                key,
                shown: word.to_string(),
            });
        }
    };
    for word in capitalised_words(prompt) {
        add(word);
    }
    for node in &recall.nodes {
        let name = text::normalize(&node.name);
        if !name.is_empty() && occurs_as_phrase(normalized, &name) {
            words(&node.name).for_each(&mut add);
        }
    }
    names
}

/// The lower-case keys of `names`, as the session state keeps them.
pub fn keys(names: &[Name]) -> Vec<String> {
    names.iter().map(|n| n.key.clone()).collect()
}

/// Runs of letters and digits (an apostrophe or hyphen ends a word: "Priya's" is "Priya" and "s").
fn words(text: &str) -> impl Iterator<Item = &str> {
    text.split(|c: char| !c.is_alphanumeric())
        .filter(|w| w.chars().count() >= 2)
}

/// Words of two or more characters starting with a capital, not at a sentence start.
fn capitalised_words(prompt: &str) -> Vec<&str> {
    let mut found = Vec::new();
    let mut sentence_start = true;
    let mut word_start: Option<usize> = None;
    // A trailing space closes the last word.
    for (i, c) in prompt.char_indices().chain([(prompt.len(), ' ')]) {
        if c.is_alphanumeric() {
            word_start.get_or_insert(i);
            continue;
        }
        if let Some(start) = word_start.take() {
            let word = &prompt[start..i];
            let capital = word.chars().next().is_some_and(char::is_uppercase);
            if capital && !sentence_start && word.chars().count() >= 2 {
                found.push(word);
            }
            sentence_start = false;
        }
        if matches!(c, '.' | '!' | '?' | '\n' | '\r') {
            sentence_start = true;
        }
    }
    found
}

/// Whether `phrase` occurs in `text` on word boundaries (both normalized).
fn occurs_as_phrase(text: &str, phrase: &str) -> bool {
    text.match_indices(phrase)
        .any(|(start, _)| text::on_word_boundaries(text, start, start + phrase.len()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::memory::recall::RecalledNode;

    fn shown(prompt: &str, recall: &Recall) -> Vec<String> {
        named_in(prompt, &text::normalize(prompt), recall)
            .into_iter()
            .map(|n| n.shown)
            .collect()
    }

    #[test]
    fn capitalised_words_not_at_a_sentence_start_are_names() {
        let none = Recall::default();
        assert_eq!(
            shown("My sister Priya Shah lives in Portland", &none),
            ["Priya", "Shah", "Portland"]
        );
        assert!(shown("Make it shorter. Add a question at the end!", &none).is_empty());
        assert!(shown("I think I'd like it shorter", &none).is_empty());
        assert_eq!(
            shown("ok. Then ask Jo about Zürich's café", &none),
            ["Jo", "Zürich"]
        );
    }

    #[test]
    fn recalled_names_count_in_any_case_and_position() {
        let recall = Recall {
            nodes: vec![RecalledNode {
                name: "Priya Shah".into(),
                summary: String::new(),
                labels: vec![],
            }],
            facts: vec![],
            cached_age_ms: None,
        };
        assert_eq!(shown("priya shah called", &recall), ["Priya", "Shah"]);
        // Only the whole name counts, not a word of it alone.
        assert!(shown("shah called", &recall).is_empty());
    }
}
