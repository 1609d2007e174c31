//! Secrets kept out of everything the plugin sends or keeps: what looks like a secret of a kind
//! `capture.redact` names is replaced by a marker such as `[redacted card number]` in captured turns
//! and notes, search queries, and the records of turns under the state directory. Graphiti's own
//! LLM provider reads every episode and embeds every query, and a fact extracted from one is
//! recalled into later prompts.
//!
//! Secrets are looked for in the text's matched form (NFKC, without zero-width characters, with
//! straight quotes and a wrapped key joined: `platform/text/normalized.rs`) and each is replaced in
//! the original text, over every character it came from. A value found in one text of an exchange
//! (a message and its reply) is replaced wherever else it occurs in the exchange.

mod cards;
mod keys;
mod passwords;

use crate::config::Redact;
use crate::platform::sensitive;
use crate::platform::text::normalized::{Normalized, Options};
use std::ops::Range;
use std::sync::OnceLock;

/// Text with its secrets replaced, and the kind of each replacement, in order.
#[derive(Debug, PartialEq)]
pub struct Redacted {
    pub text: String,
    pub replaced: Vec<&'static str>,
}

/// A search query with its secrets replaced: the only text the Graphiti client sends as one.
#[derive(Clone, Debug, PartialEq)]
pub struct Query(String);

impl Query {
    pub fn new(text: &str, kinds: &[Redact]) -> Query {
        Query(redact(text, kinds).text)
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }
}

/// The shortest value looked for again elsewhere in an exchange: shorter ones are common words.
const MIN_REPEATED_CHARS: usize = 4;

/// `text` with every secret of the `kinds` replaced by its marker. Overlapping finds are one
/// replacement, the earliest (the longest when two start together).
pub fn redact(text: &str, kinds: &[Redact]) -> Redacted {
    let [redacted] = redact_exchange(&[text], kinds);
    redacted
}

/// Each text of one exchange redacted, a value found in any of them replaced in all of them.
pub fn redact_exchange<const N: usize>(texts: &[&str; N], kinds: &[Redact]) -> [Redacted; N] {
    redact_all(texts, kinds)
        .try_into()
        .unwrap_or_else(|_| unreachable!("one redacted text for each text"))
}

fn redact_all(texts: &[&str], kinds: &[Redact]) -> Vec<Redacted> {
    if kinds.is_empty() {
        return texts
            .iter()
            .map(|t| Redacted {
                text: t.to_string(),
                replaced: Vec::new(),
            })
            .collect();
    }
    let views: Vec<Normalized> = texts
        .iter()
        .map(|t| Normalized::new(t, Options::SECRETS))
        .collect();
    let mut found: Vec<Vec<(Range<usize>, &'static str)>> =
        views.iter().map(|v| find(v.text(), kinds)).collect();
    let mut values: Vec<(String, &'static str)> = Vec::new();
    for (view, hits) in views.iter().zip(&found) {
        for (range, kind) in hits {
            let value = passwords::trimmed(&view.text()[range.clone()]);
            for repeated in std::iter::once(value).chain(random_parts(value, kind)) {
                if repeated.chars().count() >= MIN_REPEATED_CHARS
                    && !values.iter().any(|(v, _)| v == repeated)
                {
                    values.push((repeated.to_string(), kind));
                }
            }
        }
    }
    for (view, hits) in views.iter().zip(&mut found) {
        for (value, kind) in &values {
            hits.extend(
                view.text()
                    .match_indices(value.as_str())
                    .map(|(at, _)| (at..at + value.len(), *kind)),
            );
        }
    }
    views
        .iter()
        .zip(found)
        .map(|(view, hits)| replace(view, hits))
        .collect()
}

/// The shortest a key's part after its prefix is to be looked for on its own.
const MIN_KEY_PART_CHARS: usize = 16;

/// A key's parts after each `-`, `_`, `:` or `/` of its prefix: a reply may quote the random part
/// of `sk-ant-api03-…` alone.
fn random_parts<'v>(value: &'v str, kind: &str) -> impl Iterator<Item = &'v str> {
    let key = kind == "API key";
    value
        .match_indices(['-', '_', ':', '/'])
        .map(move |(at, _)| &value[at + 1..])
        .filter(move |part| key && part.len() >= MIN_KEY_PART_CHARS)
}

/// Every pattern the default kinds look for, in one DFA: most texts hold no secret, and one pass
/// over them says so.
fn screen() -> &'static sensitive::Screen {
    static SCREEN: OnceLock<sensitive::Screen> = OnceLock::new();
    SCREEN.get_or_init(|| {
        let mut patterns: Vec<&str> = sensitive::token_patterns().collect();
        patterns.extend(keys::SHAPES);
        patterns.extend([
            keys::NAMED_PATTERN,
            keys::SPLIT_PATTERN,
            keys::AWS_KEY_ID_PATTERN,
            cards::CANDIDATE_PATTERN,
            passwords::GIVEN_PATTERN,
            passwords::SAID_PATTERN,
            passwords::URL_PATTERN,
        ]);
        sensitive::Screen::new(&patterns)
    })
}

/// Every secret of the `kinds` in the matched form `text`.
fn find(text: &str, kinds: &[Redact]) -> Vec<(Range<usize>, &'static str)> {
    let mut found: Vec<(Range<usize>, &'static str)> = Vec::new();
    let screened = kinds.iter().all(|kind| Redact::DEFAULT.contains(kind));
    if screened && !screen().may_match(text) {
        return found;
    }
    // Both kinds come from one pass of the token patterns, made only when one is asked for.
    let (mut tokens, mut keys) =
        if kinds.contains(&Redact::ApiKeys) || kinds.contains(&Redact::PrivateKeys) {
            sensitive::tokens_and_private_keys(text)
        } else {
            Default::default()
        };
    let spans = |hits: Vec<sensitive::Hit>| hits.into_iter().map(|h| h.start..h.end).collect();
    for kind in kinds {
        let (ranges, name): (Vec<Range<usize>>, _) = match kind {
            Redact::ApiKeys => {
                let mut all: Vec<Range<usize>> = spans(std::mem::take(&mut tokens));
                all.extend(keys::api_keys(text));
                (all, "API key")
            }
            Redact::PrivateKeys => (spans(std::mem::take(&mut keys)), "private key"),
            Redact::CardNumbers => (cards::card_numbers(text), "card number"),
            Redact::Passwords => (passwords::passwords(text), "password"),
            Redact::EmailAddresses => (kind_of(text, "e-mail address"), "e-mail address"),
            Redact::PhoneNumbers => (kind_of(text, "phone number"), "phone number"),
        };
        found.extend(ranges.into_iter().map(|range| (range, name)));
    }
    found
}

/// The original text with each find replaced, over the original span it came from.
fn replace(view: &Normalized, hits: Vec<(Range<usize>, &'static str)>) -> Redacted {
    let original = view.original();
    let mut spans: Vec<(Range<usize>, &'static str)> = hits
        .into_iter()
        .filter(|(range, _)| !range.is_empty())
        .map(|(range, kind)| (view.original_span(range), kind))
        .collect();
    crate::platform::sorting::sort_by_key(&mut spans, |(span, _)| {
        (span.start, usize::MAX - span.end)
    });
    let mut out = String::with_capacity(original.len());
    let mut replaced = Vec::new();
    let mut at = 0;
    for (span, name) in spans {
        if span.start < at {
            continue;
        }
        out.push_str(&original[at..span.start]);
        out.push_str(&format!("[redacted {name}]"));
        replaced.push(name);
        at = span.end;
    }
    out.push_str(&original[at..]);
    Redacted {
        text: out,
        replaced,
    }
}

/// The boundary audit's finds of one kind (e-mail addresses and phone numbers, line by line).
fn kind_of(text: &str, kind: &str) -> Vec<Range<usize>> {
    let mut hits = Vec::new();
    let mut offset = 0;
    for line in text.split_inclusive('\n') {
        hits.extend(
            sensitive::scan_line(line)
                .into_iter()
                .filter(|h| h.kind == kind)
                .map(|h| h.start + offset..h.end + offset),
        );
        offset += line.len();
    }
    hits
}

#[cfg(test)]
mod tests;
