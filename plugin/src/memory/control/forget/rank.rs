//! Which of what a search, the episode listing and the spool found a forget proposes: each item
//! scored by the request's words it has, in its message text (facts by their text and relation,
//! episodes and captures without their speaker labels). Those that match well are proposed, best
//! first, and an episode that carries a proposed fact with them; the weaker matches are listed
//! apart for the person to add.

use super::words::{Request, message_text};
use super::{Candidate, Kind};
use crate::memory::control::error::ControlError;
use crate::memory::spool::Spool;
use crate::platform::text::truncate_chars;
use serde_json::Value;
use std::collections::HashSet;
use std::path::Path;

/// Items one proposal lists at most: proposed, and left out as weaker matches.
pub(super) const MAX_CHOSEN: usize = 100;
pub(super) const MAX_WEAKER: usize = 30;
const SHOWN_CHARS: usize = 200;

/// What ranking found.
pub(super) struct Ranked {
    /// The proposed items first, best first; then the weaker matches.
    pub candidates: Vec<Candidate>,
    /// Search results (facts) that have none of the request's words.
    pub unmatched: usize,
    /// Matches past what one proposal lists.
    pub more: usize,
}

/// A capture of the chat still in the spool.
pub(super) struct SpooledCapture {
    pub stem: String,
    pub name: String,
    pub text: String,
}

impl SpooledCapture {
    pub fn candidate(&self, matched: Vec<String>) -> Candidate {
        Candidate {
            kind: Kind::Capture,
            id: self.stem.clone(),
            shown: truncate_chars(&self.text, SHOWN_CHARS),
            matched,
            chosen: false,
            name: Some(self.name.clone()),
        }
    }
}

/// The captures of `group` in the spool, in any state (waiting, in doubt, set aside).
pub(super) fn captures_of(dir: &Path, group: &str) -> Vec<SpooledCapture> {
    captures_of_groups(dir, &[group.to_string()])
}

pub(super) fn captures_of_groups(dir: &Path, groups: &[String]) -> Vec<SpooledCapture> {
    let spool = Spool::new(dir);
    spool
        .entries()
        .unwrap_or_default()
        .into_iter()
        .filter_map(|entry| {
            let episode = spool.read(&entry).ok()?;
            groups.contains(&episode.group_id).then(|| SpooledCapture {
                text: format!("{}\n{}", episode.user, episode.assistant),
                name: episode.name,
                stem: entry.stem,
            })
        })
        .collect()
}

/// A text field of a value Graphiti returned ("" when it has none).
pub fn text_of<'a>(value: &'a Value, field: &str) -> &'a str {
    value.get(field).and_then(Value::as_str).unwrap_or_default()
}

fn fact_text(fact: &Value) -> String {
    format!(
        "{} {}",
        text_of(fact, "fact"),
        text_of(fact, "name").replace('_', " ")
    )
}

fn item(kind: Kind, value: &Value, text: &str, matched: Vec<String>) -> Candidate {
    Candidate {
        kind,
        id: text_of(value, "uuid").to_string(),
        shown: truncate_chars(text, SHOWN_CHARS),
        matched,
        chosen: false,
        name: None,
    }
}

/// Every item that has at least one of the request's words, scored; the good matches chosen.
pub(super) fn rank(
    request: &Request,
    facts: &[Value],
    episodes: &[Value],
    captures: &[SpooledCapture],
) -> Ranked {
    let mut unmatched = 0;
    let mut found: Vec<Candidate> = Vec::new();
    for fact in facts {
        let matched = request.matched_in(&fact_text(fact));
        if matched.is_empty() {
            unmatched += 1;
            continue;
        }
        found.push(item(Kind::Fact, fact, text_of(fact, "fact"), matched));
    }
    for c in &mut found {
        c.chosen = request.matches_well(c.matched.len());
    }
    // The episodes a proposed fact came from go with it.
    let carriers: HashSet<&str> = facts
        .iter()
        .filter(|f| found.iter().any(|c| c.chosen && c.id == text_of(f, "uuid")))
        .filter_map(|f| f.get("episodes").and_then(Value::as_array))
        .flatten()
        .filter_map(Value::as_str)
        .collect();
    for episode in episodes {
        let text = message_text(text_of(episode, "content"));
        let matched = request.matched_in(&text);
        let carries = carriers.contains(text_of(episode, "uuid"));
        if matched.is_empty() && !carries {
            continue;
        }
        let mut c = item(Kind::Episode, episode, &text, matched);
        c.chosen = carries || request.matches_well(c.matched.len());
        found.push(c);
    }
    for capture in captures {
        let matched = request.matched_in(&capture.text);
        if matched.is_empty() {
            continue;
        }
        let mut c = capture.candidate(matched);
        c.chosen = request.matches_well(c.matched.len());
        found.push(c);
    }
    // Best first; kinds and the order found break ties (a stable sort).
    crate::platform::sorting::sort_by_key(&mut found, |c| std::cmp::Reverse(c.matched.len()));
    let (mut chosen, mut weaker): (Vec<Candidate>, Vec<Candidate>) =
        found.into_iter().partition(|c| c.chosen);
    let more = chosen.len().saturating_sub(MAX_CHOSEN) + weaker.len().saturating_sub(MAX_WEAKER);
    chosen.truncate(MAX_CHOSEN);
    weaker.truncate(MAX_WEAKER);
    chosen.extend(weaker);
    Ranked {
        candidates: chosen,
        unmatched,
        more,
    }
}

/// Exactly the named ids among the search's facts and the listed episodes, chosen; the chat's
/// captures that match the request listed apart, to add. An id among neither is refused, whatever
/// else it may name.
pub(super) fn chosen_by_ids(
    ids: &[String],
    query: &str,
    request: &Request,
    (facts, entities): (&[Value], &[Value]),
    episodes: &[Value],
    captures: &[SpooledCapture],
) -> Result<Ranked, ControlError> {
    let named = |v: &&Value| ids.iter().any(|id| id == text_of(v, "uuid"));
    let entity = |e: &Value| {
        let text = format!("{}: {}", text_of(e, "name"), text_of(e, "summary"));
        let matched = request.matched_in(&text);
        item(Kind::Entity, e, &text, matched)
    };
    let mut candidates: Vec<Candidate> = facts
        .iter()
        .filter(named)
        .map(|f| {
            item(
                Kind::Fact,
                f,
                text_of(f, "fact"),
                request.matched_in(&fact_text(f)),
            )
        })
        .chain(episodes.iter().filter(named).map(|e| {
            let text = message_text(text_of(e, "content"));
            let matched = request.matched_in(&text);
            item(Kind::Episode, e, &text, matched)
        }))
        .chain(entities.iter().filter(named).map(entity))
        .map(|c| Candidate { chosen: true, ..c })
        .collect();
    let known: HashSet<&str> = candidates.iter().map(|c| c.id.as_str()).collect();
    let unknown: Vec<&str> = ids
        .iter()
        .map(String::as_str)
        .filter(|id| !known.contains(id))
        .collect();
    if !unknown.is_empty() {
        return Err(ControlError::NotFound(format!(
            "not among what a search of this chat's memories for {query:?} and its recent \
             episodes returned: {}. Nothing proposed: only ids this chat's own search shows can \
             be forgotten here",
            unknown.join(", ")
        )));
    }
    let weaker: Vec<Candidate> = captures
        .iter()
        .filter_map(|capture| {
            let matched = request.matched_in(&capture.text);
            (!matched.is_empty()).then(|| capture.candidate(matched))
        })
        .take(MAX_WEAKER)
        .collect();
    candidates.extend(weaker);
    Ok(Ranked {
        candidates,
        unmatched: 0,
        more: 0,
    })
}

#[cfg(test)]
mod tests;
