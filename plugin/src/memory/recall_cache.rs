//! Recent recall answers, kept in the state directory so every process and instance shares them:
//! when Graphiti does not answer a turn's search in time (it is slow while it ingests the previous
//! turns), the answers of recent searches of the same group that share the turn's salient terms
//! stand in, marked as such. Bounded in entries, age and size; a fresh answer replaces the entry of
//! the same terms, and a fact it brings (by uuid) replaces every cached copy, so a fact Graphiti has
//! since marked invalid is not shown as current. Last writer wins: two processes storing at once
//! may lose one entry, which is only a later cache miss. Each instance keeps the file's content in
//! memory while the file is unchanged, and writes it in place (see [`crate::platform::files::Kept`]); an
//! answer identical to its entry's of less than a minute ago is not written again (so a cached
//! answer's age may read up to a minute more than the search it comes from), and when the
//! instance's own last view of the file has that entry, the file is not even looked at.

use crate::memory::recall::{Recall, RecalledFact, RecalledNode};
use crate::platform::files::{Kept, ReadError};
use crate::platform::text;
use serde::{Deserialize, Serialize};
use std::collections::HashSet;
use std::path::Path;

const FILE: &str = "recall-cache.json";
/// Entries kept, newest first.
const MAX_ENTRIES: usize = 64;
/// Entries older than this are dropped on the next store, whatever the lookup's maximum age.
const KEEP_MS: u64 = 24 * 60 * 60 * 1000;
/// A larger file is not read (64 entries of bounded answers stay far below).
const MAX_FILE_BYTES: u64 = 4 * 1024 * 1024;
/// An answer identical to its entry's is written again only when the entry is older than this.
const REWRITE_UNCHANGED_AFTER_MS: u64 = 60_000;
/// How many matching entries one cached answer merges.
const MERGED_ENTRIES: usize = 3;
/// Words that say nothing about what a prompt is about.
pub(crate) const STOP_WORDS: &[&str] = &[
    "about", "after", "again", "also", "and", "any", "are", "been", "before", "but", "can",
    "could", "did", "does", "doing", "for", "from", "get", "had", "has", "have", "her", "here",
    "him", "his", "how", "into", "its", "just", "know", "let", "like", "make", "may", "more",
    "most", "much", "must", "need", "not", "now", "off", "one", "our", "out", "over", "please",
    "say", "she", "should", "some", "tell", "than", "that", "the", "their", "them", "then",
    "there", "these", "they", "this", "those", "too", "very", "want", "was", "were", "what",
    "when", "where", "which", "who", "why", "will", "with", "would", "you", "your",
];

#[derive(Clone, Debug, Deserialize, Serialize)]
struct Entry {
    group: String,
    /// The query's salient terms, sorted: the key with `group`.
    terms: Vec<String>,
    saved_ms: u64,
    facts: Vec<RecalledFact>,
    nodes: Vec<RecalledNode>,
}

#[derive(Clone, Debug, Default, Deserialize, Serialize)]
pub struct CacheFile {
    entries: Vec<Entry>,
}

/// A cached answer for a turn whose search missed its budget.
#[derive(Debug)]
pub struct Cached {
    pub recall: Recall,
    /// The age of the newest entry used.
    pub age_ms: u64,
    /// The turn's terms the entries used share.
    pub shared_terms: Vec<String>,
}

/// The salient terms of a query: words of three or more letters or digits, case folded, without
/// stop words, sorted and distinct.
pub fn terms(query: &str) -> Vec<String> {
    let mut terms: Vec<String> = text::normalize(query)
        .split(|c: char| !c.is_alphanumeric())
        .filter(|w| w.chars().count() >= 3 && !STOP_WORDS.contains(w))
        .map(str::to_string)
        .collect();
    crate::platform::sorting::sort(&mut terms);
    terms.dedup();
    terms
}

/// Stores a fresh answer for `query` in `group`.
pub fn store(
    kept: &mut Kept<CacheFile>,
    dir: &Path,
    group: &str,
    query: &str,
    recall: &Recall,
    now_ms: u64,
) -> Result<(), String> {
    let terms = terms(query);
    if terms.is_empty() {
        return Ok(());
    }
    let same_recently = |file: &CacheFile| {
        file.entries.iter().any(|e| {
            e.group == group
                && e.terms == terms
                && now_ms.saturating_sub(e.saved_ms) < REWRITE_UNCHANGED_AFTER_MS
                && e.facts == recall.facts
                && e.nodes == recall.nodes
        })
    };
    // What this instance last read or wrote says so already: the file is not looked at (a search
    // repeated within the minute costs no file call). Another writer may have dropped the entry
    // since: at worst a later cache miss, as when two writers store at once.
    if kept.last(&dir.join(FILE)).is_some_and(same_recently) {
        return Ok(());
    }
    let current = load(kept, dir).ok().flatten();
    if current.is_some_and(same_recently) {
        return Ok(());
    }
    let mut file = current.cloned().unwrap_or_default();
    let fresh: Vec<&RecalledFact> = recall.facts.iter().filter(|f| !f.uuid.is_empty()).collect();
    file.entries.retain(|e| {
        now_ms.saturating_sub(e.saved_ms) <= KEEP_MS && !(e.group == group && e.terms == terms)
    });
    for entry in file.entries.iter_mut().filter(|e| e.group == group) {
        for cached in &mut entry.facts {
            if let Some(newer) = fresh.iter().find(|f| f.uuid == cached.uuid) {
                *cached = (*newer).clone();
            }
        }
    }
    file.entries.insert(
        0,
        Entry {
            group: group.to_string(),
            terms,
            saved_ms: now_ms,
            facts: recall.facts.clone(),
            nodes: recall.nodes.clone(),
        },
    );
    file.entries.truncate(MAX_ENTRIES);
    let path = dir.join(FILE);
    let bytes = serde_json::to_vec(&file).unwrap_or_default();
    kept.write(&path, &bytes, file)
        .map_err(|e| format!("cannot write the recall cache {}: {e}", path.display()))
}

/// Drops every cached answer of `groups` (their memories were forgotten): their next search that
/// misses its budget finds nothing cached rather than what was forgotten. Returns how many.
pub fn forget_groups(
    kept: &mut Kept<CacheFile>,
    dir: &Path,
    groups: &[String],
) -> Result<usize, String> {
    let Some(current) = load(kept, dir)? else {
        return Ok(0);
    };
    let mut file = current.clone();
    let before = file.entries.len();
    file.entries.retain(|e| !groups.contains(&e.group));
    let dropped = before - file.entries.len();
    if dropped > 0 {
        let path = dir.join(FILE);
        let bytes = serde_json::to_vec(&file).unwrap_or_default();
        kept.write(&path, &bytes, file)
            .map_err(|e| format!("cannot write the recall cache {}: {e}", path.display()))?;
    }
    Ok(dropped)
}

/// The recent answers of `group` younger than `max_age_ms` that share salient terms with `query`,
/// the most shared terms first, then the newest, merged; None when no entry qualifies.
pub fn lookup(
    kept: &mut Kept<CacheFile>,
    dir: &Path,
    group: &str,
    query: &str,
    now_ms: u64,
    max_age_ms: u64,
) -> Result<Option<Cached>, String> {
    let wanted: HashSet<String> = terms(query).into_iter().collect();
    let empty = CacheFile::default();
    let file = load(kept, dir)?.unwrap_or(&empty);
    let mut matching: Vec<(usize, &Entry)> = file
        .entries
        .iter()
        .filter(|e| e.group == group && now_ms.saturating_sub(e.saved_ms) <= max_age_ms)
        .map(|e| (e.terms.iter().filter(|t| wanted.contains(*t)).count(), e))
        .filter(|(shared, _)| *shared > 0)
        .collect();
    crate::platform::sorting::sort_by(&mut matching, |a, b| {
        b.0.cmp(&a.0).then(b.1.saved_ms.cmp(&a.1.saved_ms))
    });
    matching.truncate(MERGED_ENTRIES);
    if matching.is_empty() {
        return Ok(None);
    }
    let newest = matching
        .iter()
        .map(|(_, e)| e.saved_ms)
        .max()
        .unwrap_or(now_ms);
    let mut shared_terms: Vec<String> = matching
        .iter()
        .flat_map(|(_, e)| e.terms.iter().filter(|t| wanted.contains(*t)).cloned())
        .collect();
    crate::platform::sorting::sort(&mut shared_terms);
    shared_terms.dedup();
    Ok(Some(Cached {
        recall: merged(matching.iter().map(|(_, e)| *e)),
        age_ms: now_ms.saturating_sub(newest),
        shared_terms,
    }))
}

/// The entries' facts and nodes in order, each once (facts by uuid, else by text; nodes by name).
fn merged<'a>(entries: impl Iterator<Item = &'a Entry>) -> Recall {
    let mut recall = Recall::default();
    let mut seen = HashSet::new();
    for entry in entries {
        for fact in &entry.facts {
            let key = if fact.uuid.is_empty() {
                format!("text:{}", text::normalize(&fact.fact))
            } else {
                format!("uuid:{}", fact.uuid)
            };
            if seen.insert(key) {
                recall.facts.push(fact.clone());
            }
        }
        for node in &entry.nodes {
            if seen.insert(format!("node:{}", text::normalize(&node.name))) {
                recall.nodes.push(node.clone());
            }
        }
    }
    recall
}

/// The cache file (None: there is none yet); an unreadable one is an error naming it.
fn load<'a>(kept: &'a mut Kept<CacheFile>, dir: &Path) -> Result<Option<&'a CacheFile>, String> {
    let path = dir.join(FILE);
    kept.read(&path, MAX_FILE_BYTES).map_err(|e| match e {
        ReadError::Io(e) => format!("recall cache {} not read: {e}", path.display()),
        ReadError::Parse(e) => format!(
            "recall cache {} not read (it is replaced on the next store): {e}",
            path.display()
        ),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fact(uuid: &str, text: &str, invalid_at: Option<&str>) -> RecalledFact {
        RecalledFact {
            uuid: uuid.into(),
            fact: text.into(),
            invalid_at: invalid_at.map(str::to_string),
            ..RecalledFact::default()
        }
    }

    fn scratch(name: &str) -> tempfile::TempDir {
        crate::platform::files::temp_dir(&format!("recall-cache-{name}"))
    }

    #[test]
    fn terms_are_salient_words_sorted_once() {
        assert_eq!(
            terms("When is Maya's dentist appointment? The dentist!"),
            vec!["appointment", "dentist", "maya"]
        );
        assert!(terms("is it ok?").is_empty());
    }

    #[test]
    fn a_recent_answer_sharing_terms_stands_in_and_a_later_invalidation_replaces_its_fact() {
        let dir_temp = scratch("invalidate");
        let dir = dir_temp.path();
        let mut kept = Kept::new(1);
        let first = Recall {
            facts: vec![fact("f1", "Maya sees the dentist on Friday", None)],
            ..Recall::default()
        };
        store(
            &mut kept,
            dir,
            "g",
            "Maya dentist appointment",
            &first,
            1_000,
        )
        .unwrap();
        let cached = lookup(
            &mut kept,
            dir,
            "g",
            "is the dentist still on Friday",
            61_000,
            600_000,
        )
        .unwrap()
        .unwrap();
        assert_eq!(cached.recall.facts.len(), 1);
        assert_eq!(cached.age_ms, 60_000);
        assert_eq!(cached.shared_terms, vec!["dentist"]);
        assert!(
            lookup(&mut kept, dir, "other", "dentist", 61_000, 600_000)
                .unwrap()
                .is_none(),
            "groups stay apart"
        );
        assert!(
            lookup(&mut kept, dir, "g", "dentist", 700_000, 600_000)
                .unwrap()
                .is_none(),
            "too old"
        );
        assert!(
            lookup(&mut kept, dir, "g", "haiku about autumn", 61_000, 600_000)
                .unwrap()
                .is_none(),
            "nothing shared"
        );
        let later = Recall {
            facts: vec![fact(
                "f1",
                "Maya sees the dentist on Friday",
                Some("2026-11-20T00:00:00Z"),
            )],
            ..Recall::default()
        };
        store(&mut kept, dir, "g", "Friday plans", &later, 2_000).unwrap();
        let cached = lookup(&mut kept, dir, "g", "dentist appointment", 3_000, 600_000)
            .unwrap()
            .unwrap();
        assert!(
            !cached.recall.facts[0].is_current(),
            "the invalidation reached the older entry"
        );
    }

    #[test]
    fn a_corrupt_cache_is_a_miss_with_a_reason_and_is_replaced() {
        let dir_temp = scratch("corrupt");
        let dir = dir_temp.path();
        let mut kept = Kept::new(1);
        std::fs::create_dir_all(dir).unwrap();
        std::fs::write(dir.join(FILE), b"{\"entries\": [trunc").unwrap();
        let err = lookup(&mut kept, dir, "g", "dentist", 0, 1).unwrap_err();
        assert!(err.contains("recall-cache.json"), "{err}");
        let recall = Recall {
            facts: vec![fact("f", "x y z", None)],
            ..Recall::default()
        };
        store(&mut kept, dir, "g", "dentist", &recall, 5).unwrap();
        assert!(
            lookup(&mut kept, dir, "g", "dentist", 5, 1)
                .unwrap()
                .is_some()
        );
    }

    #[test]
    fn another_instances_store_is_seen_and_an_unchanged_answer_is_not_rewritten_within_a_minute() {
        let dir_temp = scratch("instances");
        let dir = dir_temp.path();
        let (mut mine, mut theirs) = (Kept::new(1), Kept::new(1));
        let recall = Recall {
            facts: vec![fact("f1", "Maya sees the dentist on Friday", None)],
            ..Recall::default()
        };
        store(&mut mine, dir, "g", "dentist", &recall, 1_000).unwrap();
        assert!(
            lookup(&mut mine, dir, "g", "orchard", 2_000, 600_000)
                .unwrap()
                .is_none()
        );
        let other = Recall {
            facts: vec![fact("f2", "The orchard opens in May", None)],
            ..Recall::default()
        };
        store(&mut theirs, dir, "g", "orchard", &other, 2_000).unwrap();
        let seen = lookup(&mut mine, dir, "g", "orchard", 3_000, 600_000).unwrap();
        assert_eq!(
            seen.unwrap().recall.facts[0].uuid,
            "f2",
            "the other instance's entry"
        );
        // The same answer 30 s later: the entry keeps its time; a minute later it is written again.
        store(&mut mine, dir, "g", "dentist", &recall, 31_000).unwrap();
        let cached = lookup(&mut theirs, dir, "g", "dentist", 32_000, 600_000).unwrap();
        assert_eq!(cached.unwrap().age_ms, 31_000);
        store(&mut mine, dir, "g", "dentist", &recall, 62_000).unwrap();
        let cached = lookup(&mut theirs, dir, "g", "dentist", 63_000, 600_000).unwrap();
        assert_eq!(cached.unwrap().age_ms, 1_000);
        // A changed answer is written at once.
        let changed = Recall {
            facts: vec![fact("f3", "Maya moved the dentist to Monday", None)],
            ..Recall::default()
        };
        store(&mut mine, dir, "g", "dentist", &changed, 63_500).unwrap();
        let cached = lookup(&mut theirs, dir, "g", "dentist", 64_000, 600_000).unwrap();
        assert_eq!(cached.unwrap().recall.facts[0].uuid, "f3");
    }
}
