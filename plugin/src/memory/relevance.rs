//! The relevance floor: which recalled facts and entities are related enough to the prompt (and, when
//! the prompt refers back, to the recent user messages) to be shown to the model. Graphiti's hybrid
//! search always returns its nearest neighbours, so an unrelated prompt would otherwise get whatever
//! ranks highest. Deterministic and synonym-free: shared salient terms, weighted by how rare they are
//! among the recalled items, with recalled entities' names counting in full.
//!
//! It decides only what is shown; routing's entity boosts still see everything Graphiti returned.

use crate::memory::recall::{Recall, RecalledFact, RecalledNode};
use crate::platform::text::{normalize, truncate_chars};
use std::collections::{HashMap, HashSet};

/// Numbers (dates, times, amounts) collide by chance more than words do.
const NUMBER_WEIGHT: f64 = 0.5;
/// Lines of explanation kept for `debug`, and terms listed per line.
const MAX_EXPLAINED: usize = 40;
const MAX_TERMS_SHOWN: usize = 5;
const TEXT_SHOWN_CHARS: usize = 60;

/// What the floor made of one recall: the items kept (in Graphiti's order) and why, per item.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Judged {
    pub kept: Recall,
    /// One line per fact and entity: kept or below the floor, its score, the terms it matched.
    pub explanation: Vec<String>,
}

/// The prompt's and the earlier messages' terms, with the weight each gets.
pub struct Asked {
    terms: Terms,
}

impl Asked {
    /// `earlier`: the recent user messages, most recent first. They count only when the prompt
    /// refers back to them ("when is it?", "help her") or has no salient term of its own: a prompt
    /// that stands on its own ("now write a poem about the ocean") has left the earlier topic.
    pub fn new(prompt: &str, earlier: &[String]) -> Asked {
        let mut all = terms(prompt);
        if all.is_empty() || refers_back(prompt) {
            for message in earlier {
                all = all.union(terms(message));
            }
        }
        Asked { terms: all }
    }
}

/// Keeps the items scoring at least `min_relevance` (0 keeps everything, and explains nothing).
pub fn judge(recall: &Recall, asked: &Asked, min_relevance: f64) -> Judged {
    if min_relevance <= 0.0 {
        return Judged {
            kept: recall.clone(),
            explanation: vec![],
        };
    }
    let fact_terms: Vec<Terms> = recall.facts.iter().map(|f| terms(&f.fact)).collect();
    // Each entity's name read once: for its weight, its own terms and "named in a kept fact".
    let name_terms: Vec<Terms> = recall.nodes.iter().map(|n| terms(&n.name)).collect();
    let node_terms: Vec<Terms> = recall
        .nodes
        .iter()
        .zip(&name_terms)
        .map(|(node, name)| Terms(name.0.clone()).union(terms(&node.summary)))
        .collect();
    let weigh = Weights::new(&fact_terms, &node_terms, &name_terms, asked);
    // A cached answer stays marked as one.
    let mut kept = Recall {
        cached_age_ms: recall.cached_age_ms,
        ..Recall::default()
    };
    let mut lines = Lines::default();
    let mut kept_fact_terms = Vec::new();
    for (fact, item_terms) in recall.facts.iter().zip(&fact_terms) {
        let (score, matched) = weigh.score(item_terms, asked);
        let keep = score >= min_relevance;
        lines.explain(keep, score, "fact", &fact.fact, &matched);
        if keep {
            kept.facts.push(RecalledFact::clone(fact));
            kept_fact_terms.push(item_terms);
        }
    }
    for ((node, item_terms), name) in recall.nodes.iter().zip(&node_terms).zip(&name_terms) {
        let (score, mut matched) = weigh.score(item_terms, asked);
        // An entity a kept fact names is that fact's context (who "Priya Raman" is).
        let named = !name.is_empty() && kept_fact_terms.iter().any(|t| name.is_subset(t));
        if named && score < min_relevance {
            matched.push("named in a kept fact");
        }
        let keep = score >= min_relevance || named;
        lines.explain(keep, score, "entity", &node.name, &matched);
        if keep {
            kept.nodes.push(RecalledNode::clone(node));
        }
    }
    let explanation = summarise(recall, &kept, min_relevance, lines);
    Judged { kept, explanation }
}

/// The headline first (what the floor let through), then the items, bounded.
fn summarise(recall: &Recall, kept: &Recall, min: f64, lines: Lines) -> Vec<String> {
    let total = recall.facts.len() + recall.nodes.len();
    let headline = if total == 0 {
        format!("relevance floor {min:.2}: nothing was recalled")
    } else if kept.facts.is_empty() && kept.nodes.is_empty() {
        format!(
            "relevance floor {min:.2}: all {} facts and {} entities were below it, no memories shown",
            recall.facts.len(),
            recall.nodes.len()
        )
    } else {
        format!(
            "relevance floor {min:.2}: kept {} of {} facts and {} of {} entities",
            kept.facts.len(),
            recall.facts.len(),
            kept.nodes.len(),
            recall.nodes.len()
        )
    };
    let mut all = Vec::with_capacity(lines.shown.len() + 2);
    all.push(headline);
    all.extend(lines.shown);
    if lines.more > 0 {
        all.push(format!("… and {} more", lines.more));
    }
    all
}

/// The explanation's item lines: the first [`MAX_EXPLAINED`] written, the rest only counted.
#[derive(Default)]
struct Lines {
    shown: Vec<String>,
    more: usize,
}

impl Lines {
    fn explain(&mut self, keep: bool, score: f64, kind: &str, text: &str, matched: &[&str]) {
        use std::fmt::Write as _;
        if self.shown.len() == MAX_EXPLAINED {
            self.more += 1;
            return;
        }
        let verdict = if keep { "kept" } else { "below" };
        let shown = truncate_chars(&crate::platform::text::one_line(text), TEXT_SHOWN_CHARS);
        let mut line = String::with_capacity(shown.len() + 64);
        let _ = write!(line, "{verdict} {score:.2} {kind} {shown:?} [");
        for (i, term) in matched.iter().take(MAX_TERMS_SHOWN).enumerate() {
            if i > 0 {
                line.push_str(", ");
            }
            line.push_str(term);
        }
        let more = matched.len().saturating_sub(MAX_TERMS_SHOWN);
        if more > 0 {
            let _ = write!(line, " +{more}");
        }
        line.push(']');
        self.shown.push(line);
    }
}

/// How much each term of the recalled items counts: rarer among the items is more telling (a term
/// every item has, like the user's own name, tells little); the terms of a recalled entity's name
/// that is asked about whole ("Helio Robotics", not just "robotics") count in full, since naming
/// an entity is the clearest sign of what the prompt is about.
struct Weights<'t> {
    rarity: HashMap<&'t str, f64>,
    names: HashSet<&'t str>,
}

impl<'t> Weights<'t> {
    fn new(facts: &'t [Terms], nodes: &'t [Terms], node_names: &'t [Terms], asked: &Asked) -> Self {
        let items = (facts.len() + nodes.len()) as f64;
        let mut rarity: HashMap<&str, f64> = HashMap::new();
        for term in facts.iter().chain(nodes).flat_map(Terms::iter) {
            *rarity.entry(term).or_default() += 1.0;
        }
        for count in rarity.values_mut() {
            // 1 for a term one item has, falling towards ln 2 / ln(n + 1) for one all have.
            *count = (1.0 + items / *count).ln() / (1.0 + items).ln();
        }
        let names = node_names
            .iter()
            .filter(|name| !name.is_empty() && name.is_subset(&asked.terms))
            .flat_map(Terms::iter)
            .map(String::as_str)
            .collect();
        Weights { rarity, names }
    }

    /// The item's score against what was asked, and the terms that matched (strongest first).
    fn score<'i>(&self, item: &'i Terms, asked: &Asked) -> (f64, Vec<&'i str>) {
        let mut matched: Vec<(f64, &String)> = item
            .iter()
            .filter(|term| asked.terms.contains(term))
            .map(|term| {
                let term_weight = if self.names.contains(term.as_str()) {
                    1.0
                } else {
                    self.rarity.get(term.as_str()).copied().unwrap_or(1.0)
                };
                let kind_weight = if is_number(term) { NUMBER_WEIGHT } else { 1.0 };
                (term_weight * kind_weight, term)
            })
            .collect();
        crate::platform::sorting::sort_by(&mut matched, |a, b| {
            b.0.total_cmp(&a.0).then_with(|| a.1.cmp(b.1))
        });
        let score = matched.iter().fold(0.0, |sum, (w, _)| sum + w);
        (
            score,
            matched.into_iter().map(|(_, t)| t.as_str()).collect(),
        )
    }
}

/// A set of terms: sorted, each once (a sorted list, not a tree: a handful of terms per item, and
/// a tree's nodes cost more to build and to free than its searches save).
#[derive(Debug, Default)]
pub struct Terms(Vec<String>);

impl Terms {
    fn of(mut terms: Vec<String>) -> Terms {
        crate::platform::sorting::sort(&mut terms);
        terms.dedup();
        Terms(terms)
    }

    fn union(mut self, other: Terms) -> Terms {
        if self.0.is_empty() {
            return other;
        }
        self.0.extend(other.0);
        Terms::of(self.0)
    }

    fn contains(&self, term: &str) -> bool {
        self.0.binary_search_by(|t| t.as_str().cmp(term)).is_ok()
    }

    fn is_subset(&self, of: &Terms) -> bool {
        self.0.iter().all(|t| of.contains(t))
    }

    fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    fn iter(&self) -> impl Iterator<Item = &String> {
        self.0.iter()
    }
}

/// Digits, and the small numbers in words ("four-year-old"), as stemmed.
fn is_number(term: &str) -> bool {
    const NUMBER_WORDS: [&str; 11] = [
        "two", "thre", "four", "fiv", "six", "seven", "eight", "nin", "ten", "eleven", "twelv",
    ];
    term.chars().all(|c| c.is_ascii_digit()) || NUMBER_WORDS.contains(&term)
}

/// Whether the prompt points back at the conversation ("when is it?", "help her", "the next one"):
/// then the earlier messages' topic is the prompt's topic and their terms count in full.
fn refers_back(prompt: &str) -> bool {
    const REFERRING: [&str; 17] = [
        "it", "its", "that", "this", "these", "those", "he", "him", "his", "she", "her", "they",
        "them", "their", "there", "one", "again",
    ];
    words(&folded(prompt)).any(|w| REFERRING.contains(&w))
}

/// The text lower-cased, with diacritics folded (é → e).
fn folded(text: &str) -> String {
    let lowered = normalize(text);
    if lowered.is_ascii() {
        return lowered;
    }
    lowered.chars().map(fold_diacritic).collect()
}

/// The words of a [`folded`] text: split on anything not a letter or digit.
fn words(folded: &str) -> impl Iterator<Item = &str> {
    folded
        .split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
}

/// The salient terms of a text: its words without stop-words and one-letter words, stemmed.
pub fn terms(text: &str) -> Terms {
    // A word is copied only once it is known to be a term (most words are short or stop-words).
    let is_term = |w: &str| w.chars().nth(1).is_some() && !is_stop_word(w);
    let terms = words(&folded(text))
        .filter(|w| is_term(w))
        .map(|w| stemmed(w.to_string()))
        // "seeing" → "see": a stop-word once stemmed is one too.
        .filter(|s| is_term(s))
        .collect();
    Terms::of(terms)
}

/// Whether `word` is in [`STOP_WORDS`]: a binary search of the words packed into integers, sorted
/// once (scanning the list, twice for every word of every recalled item, was a fifth of a turn's
/// recall; comparing strings, a memcmp call each in the component, a tenth).
fn is_stop_word(word: &str) -> bool {
    static PACKED: std::sync::OnceLock<Vec<u128>> = std::sync::OnceLock::new();
    let Some(key) = packed(word) else {
        return false;
    };
    PACKED
        .get_or_init(|| {
            let mut keys: Vec<u128> = STOP_WORDS.iter().filter_map(|w| packed(w)).collect();
            crate::platform::sorting::sort(&mut keys);
            keys
        })
        .binary_search(&key)
        .is_ok()
}

/// A word of up to 16 bytes as one integer (its bytes, zero-padded: words have no zero byte, so
/// two words pack alike only when they are equal); a longer word, none.
fn packed(word: &str) -> Option<u128> {
    let bytes = word.as_bytes();
    if bytes.len() > 16 {
        return None;
    }
    let mut key = [0u8; 16];
    key[..bytes.len()].copy_from_slice(bytes);
    Some(u128::from_le_bytes(key))
}

/// A light, rule-based stem so inflections meet (moving/moved/move → mov, booked → book,
/// stories → story): plural and verb endings only, never a dictionary.
pub fn stem(word: &str) -> String {
    stemmed(word.to_string())
}

/// [`stem`] of a word already owned, shortened in place.
fn stemmed(mut w: String) -> String {
    if w.chars().any(|c| !c.is_ascii_alphabetic()) {
        return w;
    }
    if w.len() > 4 && w.ends_with("ies") {
        w.truncate(w.len() - 3);
        w.push('y');
    } else if w.ends_with("sses") {
        w.truncate(w.len() - 2);
    } else if w.len() > 3
        && w.ends_with('s')
        && !(w.ends_with("ss") || w.ends_with("us") || w.ends_with("is"))
    {
        w.pop();
    }
    for ending in ["ing", "ed"] {
        if w.len() > ending.len() + 2 && w.ends_with(ending) {
            w.truncate(w.len() - ending.len());
            let b = w.as_bytes();
            let n = b.len();
            // planning → plan, running → run (but not fall → fal)
            if n >= 2 && b[n - 1] == b[n - 2] && !b"aeioulsz".contains(&b[n - 1]) {
                w.pop();
            }
            break;
        }
    }
    if w.len() > 3 && w.ends_with('e') {
        w.pop();
    }
    w
}

/// Latin letters with diacritics to their base letter; anything else unchanged.
fn fold_diacritic(c: char) -> char {
    match c {
        'à' | 'á' | 'â' | 'ã' | 'ä' | 'å' | 'ā' | 'ă' | 'ą' => 'a',
        'ç' | 'ć' | 'č' => 'c',
        'ď' | 'đ' => 'd',
        'è' | 'é' | 'ê' | 'ë' | 'ē' | 'ė' | 'ę' | 'ě' => 'e',
        'ğ' => 'g',
        'ì' | 'í' | 'î' | 'ï' | 'ī' | 'į' | 'ı' => 'i',
        'ł' | 'ľ' => 'l',
        'ñ' | 'ń' | 'ň' => 'n',
        'ò' | 'ó' | 'ô' | 'õ' | 'ö' | 'ø' | 'ō' | 'ő' => 'o',
        'ř' => 'r',
        'ś' | 'š' | 'ş' => 's',
        'ť' | 'ţ' => 't',
        'ù' | 'ú' | 'û' | 'ü' | 'ū' | 'ů' | 'ű' => 'u',
        'ý' | 'ÿ' => 'y',
        'ź' | 'ż' | 'ž' => 'z',
        other => other,
    }
}

/// English function words and the conversational words of requests ("can you remind me…"), which
/// say nothing about what a memory is about.
#[rustfmt::skip]
const STOP_WORDS: &[&str] = &[
    "a", "about", "above", "after", "again", "all", "also", "am", "an", "and", "any", "anything",
    "are", "as", "at", "be", "because", "been", "before", "being", "below", "between", "both",
    "but", "by", "can", "could", "did", "do", "does", "doing", "done", "down", "during", "each",
    "else", "even", "ever", "every", "few", "for", "from", "further", "get", "gets", "getting",
    "give", "go", "going", "got", "had", "has", "have", "having", "he", "hello", "her", "here",
    "hers", "herself", "hey", "hi", "him", "himself", "his", "how", "i", "if", "in", "into", "is",
    "it", "its", "itself", "just", "know", "let", "lets", "like", "me", "might", "more", "most",
    "much", "must", "my", "myself", "need", "needs", "new", "next", "no", "nor", "not", "now", "of",
    "off", "ok", "okay", "on", "once", "one", "only", "or", "other", "our", "ours", "ourselves",
    "out", "over", "own", "please", "really", "remind", "same", "say", "see", "shall", "she",
    "should", "so", "some", "something", "still", "such", "tell", "than", "thank", "thanks", "that",
    "the", "their", "theirs", "them", "themselves", "then", "there", "these", "they", "thing",
    "things", "think", "this", "those", "through", "to", "too", "under", "until", "up", "us", "use",
    "very", "want", "was", "we", "were", "what", "whats", "when", "where", "which", "while", "who",
    "whom", "why", "will", "with", "would", "yes", "yet", "you", "your", "yours", "yourself", "ll",
    "re", "ve", "don", "doesn", "didn", "isn", "wasn", "won", "may", "dr", "mr", "mrs", "ms",
];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stop_words_are_found_by_their_search() {
        assert!(STOP_WORDS.iter().all(|w| is_stop_word(w)));
        for word in ["", "lunch", "robotics", "zz", "aa", "youre"] {
            assert!(!is_stop_word(word), "{word}");
        }
    }

    fn recall(facts: &[&str], nodes: &[(&str, &str)]) -> Recall {
        Recall {
            facts: facts
                .iter()
                .map(|f| RecalledFact {
                    fact: f.to_string(),
                    ..RecalledFact::default()
                })
                .collect(),
            nodes: nodes
                .iter()
                .map(|(name, summary)| RecalledNode {
                    name: name.to_string(),
                    summary: summary.to_string(),
                    labels: vec![],
                })
                .collect(),
            cached_age_ms: None,
        }
    }

    #[test]
    fn stems_meet_across_inflections() {
        let same = |a: &str, b: &str| assert_eq!(stem(a), stem(b), "{a} / {b}");
        same("moving", "moved");
        same("move", "moves");
        same("booked", "book");
        same("planning", "plan");
        same("stories", "story");
        assert_ne!(stem("dentist"), stem("dental"));
        assert_eq!(stem("17"), "17");
    }

    #[test]
    fn every_stop_word_is_found_and_no_other_word() {
        for word in STOP_WORDS {
            assert!(is_stop_word(word), "{word}");
            let longer = format!("{word}x");
            assert_eq!(
                is_stop_word(&longer),
                STOP_WORDS.contains(&longer.as_str()),
                "{longer}"
            );
            assert!(
                !is_stop_word(&word[..word.len() - 1])
                    || STOP_WORDS.contains(&&word[..word.len() - 1])
            );
        }
        for word in [
            "dentist",
            "lucia",
            "",
            "aboutaboutaboutabout",
            "appointment",
        ] {
            assert!(!is_stop_word(word), "{word}");
        }
    }

    #[test]
    fn terms_drop_stop_words_and_fold_diacritics() {
        let t = terms("When is Lucía's appointment, and can you remind me?");
        assert_eq!(t.0, vec!["appointment", "lucia"]);
    }

    #[test]
    fn unrelated_prompt_keeps_nothing_and_says_so() {
        let r = recall(
            &[
                "Lena starts school on September 2",
                "Maya sees Dr. Reyes on Thursdays",
            ],
            &[("Lena", "Maya's daughter")],
        );
        let judged = judge(
            &r,
            &Asked::new("write me a haiku about autumn leaves", &[]),
            0.6,
        );
        assert_eq!(judged.kept, Recall::default());
        assert!(judged.explanation[0].contains("all 2 facts and 1 entities were below it"));
        assert!(
            judged.explanation[1].starts_with("below 0.00 fact \"Lena starts"),
            "{:?}",
            judged.explanation
        );
    }

    #[test]
    fn named_entity_and_shared_terms_keep_their_facts() {
        let r = recall(
            &["Pepper needs a kidney diet", "Daniel drives a blue car"],
            &[("Pepper", "Daniel's cat")],
        );
        let judged = judge(&r, &Asked::new("Pepper stopped eating", &[]), 0.6);
        assert_eq!(judged.kept.facts.len(), 1);
        assert_eq!(judged.kept.nodes.len(), 1);
        assert!(
            judged.explanation[1].starts_with("kept 1.00 fact"),
            "{:?}",
            judged.explanation
        );
        assert!(judged.explanation[1].ends_with("[pepper]"));
    }

    #[test]
    fn earlier_messages_count_in_full_only_when_the_prompt_refers_back() {
        let r = recall(
            &[
                "Maya has a dentist appointment on March 14",
                "Maya likes tea",
            ],
            &[],
        );
        let earlier = vec!["I need to reschedule my dentist appointment".to_string()];
        let follow_up = judge(&r, &Asked::new("when is it?", &earlier), 1.5);
        assert_eq!(follow_up.kept.facts.len(), 1);
        let switched = judge(
            &r,
            &Asked::new("Now write a poem about the ocean", &earlier),
            1.5,
        );
        assert!(switched.kept.facts.is_empty(), "{:?}", switched.explanation);
    }

    #[test]
    fn floor_zero_keeps_everything() {
        let r = recall(&["a fact"], &[("X", "")]);
        assert_eq!(judge(&r, &Asked::new("haiku", &[]), 0.0).kept, r);
    }
}
