//! What the stand-in stores (entity nodes, facts, episodes) and its keyword search.

use crate::State;
use crate::time::now_iso;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use std::hash::{BuildHasher, Hasher};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{SystemTime, UNIX_EPOCH};

/// An entity node, in the shape `search_nodes` returns. Empty `uuid`, `group_id`, `created_at`
/// and `labels` are filled in when seeding.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct Node {
    pub uuid: String,
    pub name: String,
    pub labels: Vec<String>,
    pub summary: String,
    pub created_at: String,
    pub group_id: String,
    pub attributes: Map<String, Value>,
}

/// A fact (entity edge), in the shape `search_memory_facts` returns. Dates are ISO-8601
/// strings; `invalid_at`/`expired_at` mark a superseded fact.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct Fact {
    pub uuid: String,
    pub group_id: String,
    pub source_node_uuid: String,
    pub target_node_uuid: String,
    pub created_at: String,
    pub name: String,
    pub fact: String,
    pub episodes: Vec<String>,
    pub expired_at: Option<String>,
    pub valid_at: Option<String>,
    pub invalid_at: Option<String>,
    pub reference_time: Option<String>,
    pub attributes: Map<String, Value>,
}

/// An ingested episode (MCP `add_memory` or REST `POST /messages`).
#[derive(Clone, Debug, PartialEq)]
pub struct Episode {
    pub uuid: String,
    pub name: String,
    pub group_id: String,
    /// The episode body; for REST messages `"{role}({role_type}): {content}"`.
    pub content: String,
    /// `text`, `json` or `message`.
    pub source: String,
    pub source_description: String,
    pub created_at: String,
    /// `reference_time` (MCP) or `timestamp` (REST), else the ingest time.
    pub valid_at: String,
    /// `"mcp"` or `"rest"`.
    pub via: &'static str,
}

/// A seed file's items: `{"group_id": "...", "nodes": [...], "facts": [...]}` or a list of those.
#[derive(Deserialize)]
pub(crate) struct Seed {
    group_id: String,
    #[serde(default)]
    nodes: Vec<Node>,
    #[serde(default)]
    facts: Vec<Fact>,
}

/// Parses every item before anything is seeded, so a bad file seeds nothing.
pub(crate) fn parse_seed(json: &str) -> Result<Vec<Seed>, String> {
    let value: Value = serde_json::from_str(json).map_err(|e| format!("seed: {e}"))?;
    let items = match value {
        Value::Array(items) => items,
        one => vec![one],
    };
    items.into_iter().map(|v| serde_json::from_value::<Seed>(v).map_err(|e| format!("seed: {e}"))).collect()
}

impl State {
    pub(crate) fn seed_parsed(&mut self, seed: Seed) {
        self.seed(&seed.group_id, seed.nodes, seed.facts);
    }

    /// Adds nodes and facts, replacing those of the same uuid; `group_id` is the default for items
    /// without one.
    pub(crate) fn seed(&mut self, group_id: &str, nodes: Vec<Node>, facts: Vec<Fact>) {
        let now = now_iso();
        let fill = |s: &mut String, v: &str| {
            if s.is_empty() {
                *s = v.to_string();
            }
        };
        for mut n in nodes {
            fill(&mut n.uuid, &new_uuid());
            fill(&mut n.group_id, group_id);
            fill(&mut n.created_at, &now);
            if n.labels.is_empty() {
                n.labels = vec!["Entity".into()];
            }
            // As in Graphiti, a uuid is one item: seeding it again updates it (e.g. invalidates a fact).
            self.nodes.retain(|old| old.uuid != n.uuid);
            self.nodes.push(n);
        }
        for mut f in facts {
            fill(&mut f.uuid, &new_uuid());
            fill(&mut f.group_id, group_id);
            fill(&mut f.created_at, &now);
            self.facts.retain(|old| old.uuid != f.uuid);
            self.facts.push(f);
        }
    }

    /// Facts whose `fact` or `name` contains a query word; `groups: None` means all groups.
    pub(crate) fn search_facts(&self, groups: Option<&[String]>, query: &str, max: i64) -> Vec<Fact> {
        let words = query_words(query);
        let extracted: Vec<Fact> = if self.behaviour.episodes_as_facts {
            let now = std::time::Instant::now();
            self.queue.visible(now).map(fact_of_episode).collect()
        } else {
            Vec::new()
        };
        let facts: Vec<Fact> = self.facts.iter().cloned().chain(extracted).collect();
        rank(&facts, groups, max, self.search_fill, |f| (&f.group_id, hits(&words, &[&f.fact, &f.name])))
    }

    /// Nodes whose name, summary or labels contain a query word, optionally only with a label.
    pub(crate) fn search_nodes(
        &self,
        groups: Option<&[String]>,
        query: &str,
        max: i64,
        labels: &[String],
    ) -> Vec<Node> {
        let words = query_words(query);
        rank(&self.nodes, groups, max, self.search_fill, |n| {
            let mut fields = vec![n.name.as_str(), n.summary.as_str()];
            fields.extend(n.labels.iter().map(String::as_str));
            let wanted = labels.is_empty() || n.labels.iter().any(|l| labels.contains(l));
            (&n.group_id, if wanted { hits(&words, &fields) } else { 0 })
        })
    }
}

/// Lowercased words of at least 3 characters, deduplicated.
fn query_words(query: &str) -> Vec<String> {
    let mut words: Vec<String> = Vec::new();
    for w in query.to_lowercase().split(|c: char| !c.is_alphanumeric()) {
        if w.chars().count() >= 3 && !words.iter().any(|x| x == w) {
            words.push(w.to_string());
        }
    }
    words
}

/// An episode's whole text as a fact of its group (`Behaviour::episodes_as_facts`).
fn fact_of_episode(episode: &Episode) -> Fact {
    Fact {
        uuid: format!("fact-of-{}", episode.uuid),
        group_id: episode.group_id.clone(),
        created_at: episode.created_at.clone(),
        name: "MENTIONED".into(),
        fact: episode.content.clone(),
        episodes: vec![episode.uuid.clone()],
        valid_at: Some(episode.valid_at.clone()),
        ..Fact::default()
    }
}

fn hits(words: &[String], fields: &[&str]) -> usize {
    let fields: Vec<String> = fields.iter().map(|f| f.to_lowercase()).collect();
    words.iter().filter(|w| fields.iter().any(|f| f.contains(w.as_str()))).count()
}

/// Matching items by hit count (descending), ties in seed order, at most `max`; with `fill`, the
/// group's items that match nothing follow (see [`crate::StandIn::set_search_fill`]).
fn rank<T: Clone>(
    items: &[T],
    groups: Option<&[String]>,
    max: i64,
    fill: bool,
    score: impl Fn(&T) -> (&String, usize),
) -> Vec<T> {
    let mut scored: Vec<(usize, &T)> = items
        .iter()
        .filter_map(|item| {
            let (group, hits) = score(item);
            let in_group = groups.is_none_or(|g| g.contains(group));
            (in_group && (hits > 0 || fill)).then_some((hits, item))
        })
        .collect();
    scored.sort_by_key(|&(hits, _)| std::cmp::Reverse(hits)); // stable: ties keep seed order
    scored.into_iter().take(max.max(0) as usize).map(|(_, t)| t.clone()).collect()
}

/// graphiti-core's rule for group ids: ASCII letters, digits, `-` and `_` (empty allowed).
pub(crate) fn check_group_id(group: &str) -> Result<(), String> {
    if group.chars().all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_') {
        Ok(())
    } else {
        Err(format!("group_id \"{group}\" must contain only alphanumeric characters, dashes, or underscores"))
    }
}

/// A random-looking version-4 UUID (std only: randomly keyed hashers plus a counter).
pub(crate) fn new_uuid() -> String {
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let word = || {
        let mut h = std::collections::hash_map::RandomState::new().build_hasher();
        h.write_u64(COUNTER.fetch_add(1, Ordering::Relaxed));
        h.write_u128(SystemTime::now().duration_since(UNIX_EPOCH).unwrap_or_default().as_nanos());
        u128::from(h.finish())
    };
    let mut b = (word() << 64) | word();
    b = (b & !(0xf << 76)) | (0x4 << 76); // version 4
    b = (b & !(0x3 << 62)) | (0x2 << 62); // RFC 4122 variant
    let s = format!("{b:032x}");
    format!("{}-{}-{}-{}-{}", &s[..8], &s[8..12], &s[12..16], &s[16..20], &s[20..])
}
