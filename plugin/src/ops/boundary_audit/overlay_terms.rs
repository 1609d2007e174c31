//! The private overlay's terms, and where the public configuration uses them.
//!
//! A term is a word of the overlay's values (YAML and JSON keys are left out; other files count
//! whole) that is either 4 letters or longer, or a capitalised name of 3 letters (`Ann`), and that
//! is neither a common English word (`common_words.txt`, plurals and -ed/-ing forms included) nor
//! part of the configuration's own syntax: the keys its YAML and JSON files use (`domain_context`
//! gives `domain` and `context`) and the words of its enumerations (`public`, `private`, `direct`,
//! `group`, ...). Long terms match whole words in any case; 3-letter names match only as written.

use std::collections::{BTreeMap, BTreeSet};

/// Enumerated values and words of the configuration's rule syntax that every configuration shares.
const SYNTAX_WORDS: &[&str] = &[
    "true",
    "false",
    "null",
    "none",
    "public",
    "private",
    "direct",
    "group",
    "mcp",
    "rest",
    "past",
    "drop",
    "yaml",
    "json",
    "pack",
    "packs",
    "intent",
    "intents",
    "keyword",
    "keywords",
    "rule",
    "rules",
    "http",
    "https",
    "localhost",
    "graphiti",
    "openclaw",
    "expert",
    "experts",
];

/// Words of one line: runs of letters, with their byte offsets.
pub fn words(line: &str) -> impl Iterator<Item = (usize, &str)> {
    let mut out = Vec::new();
    let mut start = None;
    for (i, c) in line.char_indices() {
        match (c.is_alphabetic(), start) {
            (true, None) => start = Some(i),
            (false, Some(s)) => {
                out.push((s, &line[s..i]));
                start = None;
            }
            _ => {}
        }
    }
    if let Some(s) = start {
        out.push((s, &line[s..]));
    }
    out.into_iter()
}

/// The words a term can never be: common words and the syntax's.
pub struct Vocabulary {
    common: BTreeSet<String>,
    syntax: BTreeSet<String>,
}

impl Vocabulary {
    pub fn new() -> Vocabulary {
        let common = include_str!("common_words.txt")
            .lines()
            .filter(|line| !line.starts_with('#'))
            .flat_map(str::split_whitespace)
            .map(str::to_string)
            .collect();
        let syntax = SYNTAX_WORDS.iter().map(|w| w.to_string()).collect();
        Vocabulary { common, syntax }
    }

    /// Adds the words of a key (`domain_context`, `primaryIntent`) to the syntax.
    pub fn add_key(&mut self, key: &str) {
        for (_, word) in words(key) {
            let mut part = String::new();
            // camelCase splits too: `primaryIntent` gives `primary` and `intent`.
            for c in word.chars() {
                if c.is_uppercase() && !part.is_empty() {
                    self.syntax.insert(std::mem::take(&mut part));
                }
                part.extend(c.to_lowercase());
            }
            self.syntax.insert(part);
        }
    }

    fn is_common_or_syntax(&self, lower: &str) -> bool {
        let known = |w: &str| self.common.contains(w) || self.syntax.contains(w);
        known(lower)
            || ["s", "es", "ed", "d", "ing"]
                .iter()
                .filter_map(|suffix| lower.strip_suffix(suffix))
                .any(|stem| stem.len() >= 3 && known(stem))
    }
}

/// A term and where in the overlay it was first seen.
#[derive(Clone, Debug)]
pub struct Term {
    pub text: String,
    pub origin: String,
}

/// The overlay's terms: lower-cased long terms, and 3-letter names as written.
#[derive(Default)]
pub struct Terms {
    long: BTreeMap<String, Term>,
    names: BTreeMap<String, Term>,
}

impl Terms {
    /// Adds the terms of one value of the overlay, found at `origin` (file:line).
    pub fn add_value(&mut self, value: &str, origin: &str, vocabulary: &Vocabulary) {
        for (_, word) in words(value) {
            let lower = word.to_lowercase();
            let letters = word.chars().count();
            if vocabulary.is_common_or_syntax(&lower) {
                continue;
            }
            let term = || Term {
                text: word.to_string(),
                origin: origin.to_string(),
            };
            if letters >= 4 {
                self.long.entry(lower).or_insert_with(term);
            } else if letters == 3 && is_capitalised(word) {
                self.names.entry(word.to_string()).or_insert_with(term);
            }
        }
    }

    pub fn len(&self) -> usize {
        self.long.len() + self.names.len()
    }

    /// The overlay terms `line` uses, each once, with their byte ranges.
    pub fn find_in(&self, line: &str) -> Vec<(usize, usize, &Term)> {
        let mut seen = BTreeSet::new();
        let mut found = Vec::new();
        for (start, word) in words(line) {
            let term = self
                .long
                .get(&word.to_lowercase())
                .or_else(|| self.names.get(word));
            if let Some(term) = term
                && seen.insert(term.text.to_lowercase())
            {
                found.push((start, start + word.len(), term));
            }
        }
        found
    }
}

fn is_capitalised(word: &str) -> bool {
    let mut chars = word.chars();
    chars.next().is_some_and(char::is_uppercase) && chars.all(char::is_lowercase)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn terms_leave_out_common_words_syntax_and_short_words() {
        let mut vocabulary = Vocabulary::new();
        vocabulary.add_key("domain_context");
        vocabulary.add_key("primaryIntent");
        let mut terms = Terms::default();
        terms.add_value(
            "Dinner with Priya Shah and Ann at Zuni: first places, the domain context, primary ask",
            "overlay/a.yaml:1",
            &vocabulary,
        );
        let line = "priya, SHAH, Ann, ann, zuni, first, places, domain, context, primary, with";
        let found: Vec<&str> = terms
            .find_in(line)
            .iter()
            .map(|(s, e, _)| &line[*s..*e])
            .collect();
        assert_eq!(found, ["priya", "SHAH", "Ann", "zuni"]);
        // "Dinner" is not a common word here, so it is a term: a shared "dinner" is reported.
        assert_eq!(terms.find_in("dinner").len(), 1);
    }

    #[test]
    fn plural_and_past_forms_of_common_words_are_common() {
        let vocabulary = Vocabulary::new();
        for word in ["places", "answered", "notes", "searching"] {
            assert!(vocabulary.is_common_or_syntax(word), "{word}");
        }
        assert!(!vocabulary.is_common_or_syntax("vegetarian"));
    }
}
