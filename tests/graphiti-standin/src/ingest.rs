//! The ingest queue and how slow the real servers get while it holds a backlog, as measured
//! against the unmodified servers (see the crate docs and `Behaviour`).

use crate::Episode;
use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::time::{Duration, Instant, SystemTime};

/// How much like the real servers the stand-in behaves. Everything is off by default (answers
/// at once, episodes visible after `Options::ingest_delay` only). Set with
/// [`crate::StandIn::set_behaviour`] or the binary's flags.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Behaviour {
    /// Added to every answer (the real servers answer in tens of ms when idle).
    pub latency: Duration,
    /// How long ingesting one episode takes. Episodes ingest one at a time per queue, as in the
    /// real servers: the MCP server has one queue per group, the REST server one for everything.
    /// An episode is visible (`get_episodes`, `GET /episodes`, [`crate::StandIn::episodes`]) once
    /// ingested, and never before `Options::ingest_delay` after it was accepted.
    pub ingest: Duration,
    /// While episodes are queued (accepted, not yet visible), `POST /messages` answers this much
    /// later per queued episode (as the real REST server does while ingesting a backlog). The episodes are stored and queued when the request arrives: a client that gives
    /// up waiting has still delivered them.
    pub accept_per_queued: Duration,
    /// The most `accept_per_queued` adds; `None` is no cap.
    pub accept_max: Option<Duration>,
    /// MCP `add_memory` is slowed like `POST /messages` (the MCP server answers quickly itself,
    /// but a slow link delays it the same way).
    pub slow_add_memory: bool,
    /// Every ingested episode is also a fact of its group, its whole text the fact (as if
    /// Graphiti's LLM had extracted it), so that what was captured or imported can be recalled.
    pub episodes_as_facts: bool,
    /// Searches while episodes are queued (see [`BusySearch`]).
    pub busy_search: Option<BusySearch>,
    /// Which episodes `get_episodes` and `GET /episodes/{group}` can see.
    pub episode_lookups: EpisodeLookups,
    /// What MCP `delete_episode` (graphiti-core's `remove_episode`) removes and rewrites.
    pub graphiti_core: GraphitiCore,
}

/// The graphiti-core release behind the server, where deletes differ.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub enum GraphitiCore {
    /// 0.31.1: `remove_episode` deletes the facts whose first supporting episode it is, and no
    /// summary is rewritten.
    V0_31_1,
    /// 0.31.2: `remove_episode` takes itself off every fact's list and deletes the facts left with
    /// none, deletes the entities no other episode mentions, and rebuilds the summary of every
    /// other entity it mentioned from the remaining episodes (with Graphiti's LLM; here, from
    /// their text).
    #[default]
    V0_31_2,
}

/// How long a search takes while episodes are queued, calibrated against the real servers
/// (docs/memory.md gives the figures). The `n`-th busy search with `q` queued takes
/// `min + (max - min) × min(q, 6)/6 × u`, `u` in [0, 1) drawn from `seed` and `n`: uniform over
/// `min..max` from six queued on, a narrower range below, the same sequence for the same seed.
/// Idle searches (nothing queued) get no extra delay. `n` counts busy searches in the order they
/// arrive, so concurrent searches may swap delays.
#[derive(Clone, Debug, PartialEq)]
pub struct BusySearch {
    pub min: Duration,
    pub max: Duration,
    pub seed: u64,
}

/// The queue length from which a busy search spreads over the whole `min..max` range.
pub const FULL_BACKLOG: usize = 6;

impl BusySearch {
    pub(crate) fn delay(&self, queued: usize, n: u64) -> Duration {
        let unit = (splitmix64(self.seed ^ splitmix64(n)) >> 11) as f64 / (1u64 << 53) as f64;
        let load = queued.min(FULL_BACKLOG) as f64 / FULL_BACKLOG as f64;
        self.min + self.max.saturating_sub(self.min).mul_f64(load * unit)
    }
}

fn splitmix64(x: u64) -> u64 {
    let mut z = x.wrapping_add(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

impl Behaviour {
    pub(crate) fn accept_delay(&self, queued: usize) -> Duration {
        let delay = self.accept_per_queued.saturating_mul(u32::try_from(queued).unwrap_or(u32::MAX));
        self.accept_max.map_or(delay, |max| delay.min(max))
    }
}

/// Which episodes the episode look-ups see. With FalkorDB every group is its own graph, and the
/// look-ups do not always go to the group's graph (upstream issues #1651, #1659, #1676, #1842).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub enum EpisodeLookups {
    /// Neo4j: `get_episodes` and `GET /episodes/{group}` see the group's episodes.
    #[default]
    Neo4j,
    /// FalkorDB with graphiti-core 0.30 and later (0.31.x; MCP server 1.0.2): ingests use a driver
    /// of their own per call (#1676), so the MCP server's shared driver stays on `default_db` and
    /// `get_episodes`, which reads through it, never sees another group. `GET /episodes/{group}`
    /// is routed to the group's graph and sees it.
    FalkorDb,
    /// FalkorDB with graphiti-core 0.29.x: MCP `get_episodes` reads the graph the shared driver
    /// was last bound to by an ingest: `default_db` at start-up, then the group of the episode
    /// ingested last. `GET /episodes/{group}` is routed to the group's graph (0.29.3, #1670).
    FalkorDb029,
    /// FalkorDB with graphiti-core before 0.29.3: MCP as `FalkorDb029`, and `GET
    /// /episodes/{group}` reads the default graph `default_db` too, so it sees no group's episodes
    /// (but `default_db`'s).
    FalkorDbLegacy,
}

impl EpisodeLookups {
    /// The database `get_status` names (`connected to … database`).
    pub fn backend(self) -> &'static str {
        match self {
            EpisodeLookups::Neo4j => "neo4j",
            _ => "falkordb",
        }
    }
}

/// FalkorDB's default database (the servers' `FALKORDB_DATABASE` default).
pub const FALKORDB_DEFAULT_DATABASE: &str = "default_db";

/// One episode a client sent and the server accepted (stored and queued): every accepted send
/// is a new episode with a new uuid, even when its name repeats, as on the real servers.
#[derive(Clone, Debug, PartialEq)]
pub struct AcceptedSend {
    /// The episode's name (over REST the message's: `<episode>:user`, `<episode>:assistant`).
    pub name: String,
    pub group_id: String,
    /// `"mcp"` or `"rest"`.
    pub via: &'static str,
    /// When the request arrived (not when it was answered).
    pub at: SystemTime,
    /// Numbers the accepting requests: the messages of one `POST /messages` share it.
    pub request: u64,
    pub episode_uuid: String,
}

/// Accepted sends counted against the episodes a client meant to deliver once each.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Delivery {
    /// Expected episodes sent exactly once.
    pub once: usize,
    /// Expected episodes never accepted, in the order given.
    pub lost: Vec<String>,
    /// Expected episodes accepted more than once, with how many times, in the order given.
    pub duplicated: Vec<(String, usize)>,
    /// Episode names accepted but not expected, sorted.
    pub unexpected: Vec<String>,
}

impl Delivery {
    /// Every expected episode exactly once, nothing else.
    pub fn is_exact(&self) -> bool {
        self.lost.is_empty() && self.duplicated.is_empty() && self.unexpected.is_empty()
    }
}

/// The episode a send belongs to: REST message names lose their `:user`/`:assistant`/`:system`.
fn episode_name(send: &AcceptedSend) -> &str {
    let roles = [":user", ":assistant", ":system"];
    let stripped = roles.iter().find_map(|r| send.name.strip_suffix(r));
    if send.via == "rest" { stripped.unwrap_or(&send.name) } else { &send.name }
}

/// Counts each episode once per accepting request (a REST turn's user and assistant messages
/// are one send of the episode).
pub(crate) fn count_delivery(sends: &[AcceptedSend], expected: &[&str]) -> Delivery {
    let mut requests: BTreeMap<&str, BTreeSet<u64>> = BTreeMap::new();
    for send in sends {
        requests.entry(episode_name(send)).or_default().insert(send.request);
    }
    let mut delivery = Delivery::default();
    for &name in expected {
        match requests.get(name).map_or(0, BTreeSet::len) {
            0 => delivery.lost.push(name.to_string()),
            1 => delivery.once += 1,
            n => delivery.duplicated.push((name.to_string(), n)),
        }
    }
    delivery.unexpected =
        requests.keys().filter(|name| !expected.contains(name)).map(|name| name.to_string()).collect();
    delivery
}

struct Queued {
    episode: Episode,
    /// Ingested and visible from then on.
    ready_at: Instant,
}

/// Accepted episodes (queued or ingested) and the queues' timing, computed when each is accepted.
#[derive(Default)]
pub(crate) struct Queue {
    episodes: Vec<Queued>,
    /// When each queue is free again: `rest` or `mcp:<group>`.
    busy_until: HashMap<String, Instant>,
    sends: Vec<AcceptedSend>,
    requests: u64,
    busy_searches: u64,
}

impl Queue {
    /// Numbers a request that accepts episodes.
    pub(crate) fn next_request(&mut self) -> u64 {
        self.requests += 1;
        self.requests
    }

    /// Stores and queues an episode that arrived now: it waits for its queue, takes `ingest`,
    /// and is visible no sooner than `ingest_delay` after now.
    pub(crate) fn accept(&mut self, episode: Episode, request: u64, ingest: Duration, ingest_delay: Duration) {
        let now = Instant::now();
        let lane = if episode.via == "rest" { "rest".to_string() } else { format!("mcp:{}", episode.group_id) };
        let start = self.busy_until.get(&lane).map_or(now, |free| (*free).max(now));
        let ingested = start + ingest;
        self.busy_until.insert(lane, ingested);
        self.sends.push(AcceptedSend {
            name: episode.name.clone(),
            group_id: episode.group_id.clone(),
            via: episode.via,
            at: SystemTime::now(),
            request,
            episode_uuid: episode.uuid.clone(),
        });
        self.episodes.push(Queued { episode, ready_at: ingested.max(now + ingest_delay) });
    }

    /// Ingested episodes, in the order they were accepted.
    pub(crate) fn visible(&self, now: Instant) -> impl Iterator<Item = &Episode> {
        self.episodes.iter().filter(move |q| q.ready_at <= now).map(|q| &q.episode)
    }

    /// Episodes accepted and not yet ingested.
    pub(crate) fn queued(&self, now: Instant) -> usize {
        self.episodes.iter().filter(|q| q.ready_at > now).count()
    }

    /// The graph the MCP server's shared FalkorDB driver is bound to: the group of the episode
    /// ingested last over MCP, else the default database.
    pub(crate) fn falkordb_bound_graph(&self, now: Instant) -> &str {
        let ingested = self.episodes.iter().filter(|q| q.episode.via == "mcp" && q.ready_at <= now);
        ingested.max_by_key(|q| q.ready_at).map_or(FALKORDB_DEFAULT_DATABASE, |q| &q.episode.group_id)
    }

    pub(crate) fn retain(&mut self, keep: impl Fn(&Episode) -> bool) {
        self.episodes.retain(|q| keep(&q.episode));
    }

    pub(crate) fn sends(&self) -> &[AcceptedSend] {
        &self.sends
    }

    /// Numbers the searches that met a backlog (the spread of their delays).
    pub(crate) fn next_busy_search(&mut self) -> u64 {
        self.busy_searches += 1;
        self.busy_searches
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn busy_search_grows_with_the_queue_and_repeats_with_the_seed() {
        let busy = BusySearch { min: Duration::from_millis(300), max: Duration::from_millis(5300), seed: 7 };
        let full: Vec<Duration> = (1..=200).map(|n| busy.delay(6, n)).collect();
        assert!(full.iter().all(|d| (busy.min..busy.max).contains(d)));
        let mut sorted = full.clone();
        sorted.sort();
        let median = sorted[100].as_millis();
        assert!((2300..3300).contains(&median), "uniform over 0.3-5.3 s: median {median} ms");
        assert_eq!(full, (1..=200).map(|n| busy.delay(6, n)).collect::<Vec<_>>(), "same seed, same delays");
        let other = BusySearch { seed: 8, ..busy.clone() };
        assert_ne!(full[..10], (1..=10).map(|n| other.delay(6, n)).collect::<Vec<_>>()[..]);
        assert!((1..=200).all(|n| busy.delay(1, n) < Duration::from_millis(300 + 5000 / 6 + 1)));
        assert_eq!(busy.delay(60, 5), busy.delay(6, 5), "capped at six queued");
    }

    #[test]
    fn accept_delay_grows_with_the_backlog_up_to_the_cap() {
        let mut b = Behaviour { accept_per_queued: Duration::from_millis(250), ..Behaviour::default() };
        assert_eq!(b.accept_delay(0), Duration::ZERO);
        assert_eq!(b.accept_delay(20), Duration::from_secs(5));
        b.accept_max = Some(Duration::from_secs(3));
        assert_eq!(b.accept_delay(20), Duration::from_secs(3));
    }
}
