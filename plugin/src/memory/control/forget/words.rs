//! How a forget request is matched against what is remembered: by the words that carry its content,
//! against the message texts. Speaker labels (`ana(user): …`), the sender's own name (it is in most
//! facts about them), stop words and the words of asking ("forget what I said about") carry none.
//! Words are compared by their English stem, so "therapist" finds "Therapists are…". An item matches
//! well when it has at least two thirds of the request's words: all of them for one or two words.

use crate::memory::recall_cache::STOP_WORDS;
use crate::platform::text;
use rust_stemmers::{Algorithm, Stemmer};
use std::collections::HashSet;

/// Words of asking to forget, and of pointing at what was said: never what it is about.
const ASKING_WORDS: &[&str] = &[
    "all",
    "anything",
    "assistant",
    "chat",
    "conversation",
    "delete",
    "erase",
    "everything",
    "forget",
    "forgot",
    "forgotten",
    "mention",
    "mentioned",
    "mine",
    "myself",
    "remember",
    "remembered",
    "remove",
    "said",
    "say",
    "says",
    "something",
    "stuff",
    "system",
    "talk",
    "talked",
    "thing",
    "things",
    "told",
    "user",
    "yourself",
];

/// A word of the request that carries content: its stem, and how the user wrote it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Word {
    pub stem: String,
    pub written: String,
}

/// The words of a forget request that carry content, each once, in the order written.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Request {
    pub words: Vec<Word>,
}

fn stemmer() -> &'static Stemmer {
    static STEMMER: std::sync::OnceLock<Stemmer> = std::sync::OnceLock::new();
    STEMMER.get_or_init(|| Stemmer::create(Algorithm::English))
}

/// The lowercase words of `text` (letters and digits), as typed.
fn words_of(text: &str) -> impl Iterator<Item = String> {
    text::normalize(text)
        .split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
        .map(str::to_string)
        .collect::<Vec<_>>()
        .into_iter()
}

fn stem(word: &str) -> String {
    stemmer().stem(word).into_owned()
}

impl Request {
    /// The content words of `query`; `ignored` names whose words carry none here (the sender's id
    /// and display name, the speaker name episodes give them).
    pub fn of(query: &str, ignored: &[&str]) -> Request {
        let ignored: HashSet<String> = ignored.iter().flat_map(|name| words_of(name)).collect();
        let mut seen = HashSet::new();
        let words = words_of(query)
            .filter(|w| w.chars().count() >= 3)
            .filter(|w| !STOP_WORDS.contains(&w.as_str()) && !ASKING_WORDS.contains(&w.as_str()))
            .filter(|w| !ignored.contains(w))
            .filter_map(|written| {
                let stem = stem(&written);
                seen.insert(stem.clone()).then_some(Word { stem, written })
            })
            .collect();
        Request { words }
    }

    pub fn is_empty(&self) -> bool {
        self.words.is_empty()
    }

    /// How many of the request's words an item needs to match well: two thirds, rounded up.
    pub fn needed(&self) -> usize {
        (2 * self.words.len()).div_ceil(3)
    }

    /// The request's words (as written) that `text` has, in the request's order.
    pub fn matched_in(&self, text: &str) -> Vec<String> {
        let stems: HashSet<String> = words_of(text).map(|w| stem(&w)).collect();
        self.words
            .iter()
            .filter(|w| stems.contains(&w.stem))
            .map(|w| w.written.clone())
            .collect()
    }

    /// Whether `matched` words are enough to propose an item.
    pub fn matches_well(&self, matched: usize) -> bool {
        matched > 0 && matched >= self.needed()
    }

    /// The stems, for matching later without the words as written.
    pub fn stems(&self) -> Vec<String> {
        self.words.iter().map(|w| w.stem.clone()).collect()
    }

    /// A request of these stems (a follow-up keeps only them).
    pub fn of_stems(stems: &[String]) -> Request {
        Request {
            words: stems
                .iter()
                .map(|s| Word {
                    stem: s.clone(),
                    written: s.clone(),
                })
                .collect(),
        }
    }
}

/// The messages of an episode as Graphiti stores it, without their speaker labels: each line that
/// starts `<speaker>(user|assistant|system): ` (how both APIs store a turn) loses that label.
pub fn message_text(content: &str) -> String {
    content
        .lines()
        .map(strip_label)
        .collect::<Vec<_>>()
        .join("\n")
}

fn strip_label(line: &str) -> &str {
    for role in ["(user): ", "(assistant): ", "(system): "] {
        if let Some(at) = line.find(role) {
            let speaker = &line[..at];
            // A speaker name holds no `(`, `)` or `:` and is at most 64 characters.
            if speaker.chars().count() <= 64 && !speaker.contains(['(', ')', ':']) {
                return &line[at + role.len()..];
            }
        }
    }
    line
}

#[cfg(test)]
mod tests {
    use super::*;

    fn written(request: &Request) -> Vec<&str> {
        request.words.iter().map(|w| w.written.as_str()).collect()
    }

    #[test]
    fn labels_the_senders_name_and_asking_carry_no_content() {
        let request = Request::of(
            "forget what my assistant said to Ana about the weather",
            &["ana"],
        );
        assert_eq!(written(&request), ["weather"]);
        assert!(Request::of("forget what the user said", &[]).is_empty());
        assert!(Request::of("Ana Lima", &["Ana Lima"]).is_empty());
        assert_eq!(
            written(&Request::of("window seats, Window", &[])),
            ["window", "seats"]
        );
    }

    #[test]
    fn inflected_forms_match_by_their_stem() {
        let request = Request::of("therapist", &[]);
        assert_eq!(
            request.matched_in("Therapists are expensive"),
            ["therapist"]
        );
        let seats = Request::of("window seats", &[]);
        assert_eq!(
            seats.matched_in("Ana prefers a window seat"),
            ["window", "seats"]
        );
        assert_eq!(seats.matched_in("Ana broke a window"), ["window"]);
    }

    #[test]
    fn an_item_matches_well_with_two_thirds_of_the_words() {
        let two = Request::of("window seats", &[]);
        assert!(two.matches_well(2) && !two.matches_well(1));
        let three = Request::of("sister wedding Porto", &[]);
        assert!(three.matches_well(2) && !three.matches_well(1));
        let one = Request::of("therapist", &[]);
        assert!(one.matches_well(1) && !one.matches_well(0));
    }

    #[test]
    fn speaker_labels_are_not_message_text() {
        let body = "ana(user): My therapist is Dr. Vera Lima\nassistant(assistant): Noted, Ana.";
        assert_eq!(
            message_text(body),
            "My therapist is Dr. Vera Lima\nNoted, Ana."
        );
        assert_eq!(
            message_text("a line (user): with a bracket"),
            "with a bracket"
        );
        assert_eq!(
            message_text("no label: here (user) kept"),
            "no label: here (user) kept"
        );
    }
}
