//! The plugin as one object that every host drives (the WIT glue in `component/`, native tests,
//! benchmarks). `Engine` holds what the hooks and commands share: the configuration in force, the
//! Graphiti client, the counters and the locks; each hook and the commands are in their own file.

mod capture;
mod commands;
pub mod config_in_force;
mod expert_runs;
mod import;
mod memory_control;
mod overview;
mod recall_turn;
mod sending;
mod tool_calls;
mod turn;
pub mod turn_history;
pub mod turns;

use crate::config::ConfigRoots;
use crate::engine::config_in_force::ConfigState;
use crate::engine::turns::TurnsState;
use crate::experts::sessions::{ExpertRoots, ExpertSessions, ExpertsState};
use crate::memory::graphiti::Client;
use crate::memory::graphiti::http::Http;
use crate::memory::state::MemoryState;
use crate::memory::stats;
use crate::platform::api::{ConfigResult, HookContext};
use crate::platform::locks::{self, Locks};
use crate::platform::time;
use crate::routing::Router;
use crate::routing::state::RoutingState;
use std::cell::RefCell;
use std::path::PathBuf;
use std::rc::Rc;
use std::time::Duration;

pub struct Engine {
    host: Host,
    config: ConfigState,
    memory: MemoryState,
    routing: RoutingState,
    experts: ExpertsState,
    turns: TurnsState,
}

/// What the host gives the engine: where the configuration and the state are, and its HTTP, its
/// cross-process locks and its time zones.
struct Host {
    roots: ConfigRoots,
    state_dir: Option<PathBuf>,
    http: Box<dyn Http>,
    /// The host's connection to the FalkorDB behind Graphiti, when the settings name one.
    database: Box<dyn crate::memory::falkordb::Database>,
    /// The host's cross-process locks on the state directory.
    locks: Box<dyn Locks>,
    /// The host's time-zone offsets, for cron triggers.
    zones: Box<dyn crate::experts::runs::TimeZones>,
    /// The agents' workspace as the host was asked to mount it, also when it does not exist.
    workspace_named: Option<String>,
}

/// Counts are saved at the end of every turn (`agent-end`, a line of the instance's count log),
/// merged into the file on every `tick` and `status`, and otherwise saved at least every this many
/// updates, as `agent-end` saves them (not merged: the lock, the read and the rename made that
/// call take several times an ordinary one).
const STATS_FLUSH_EVERY: u32 = 50;
/// `before-agent-start` leaves saving its counts to its turn's `agent-end`, a moment later, or to
/// the next `tick` (never by the clock, and by count only past this many, for a host that calls
/// neither): a save there made one turn in 50 take twice as long as the others.
const STATS_SAVE_IN_TURN_EVERY: u32 = 4 * STATS_FLUSH_EVERY;
/// Ticks fold the count logs into the counters at most this often (`status` and
/// `flush` always do).
const FOLD_INTERVAL_MS: u64 = 2_000;
/// The last-turn records are pruned at most this often (pruning lists their directory).
const PRUNE_INTERVAL_MS: u64 = 60_000;
/// Merging counters takes milliseconds: a lock held longer than this was left by a stuck process.
const STATS_LOCK_LEASE_MS: u64 = 10_000;
const STATS_LOCK_WAIT_MS: u64 = 2_000;

impl Engine {
    pub fn new(roots: ConfigRoots, state_dir: Option<PathBuf>, http: Box<dyn Http>) -> Engine {
        let state_dir_for_experts = state_dir.clone();
        Engine {
            host: Host {
                roots,
                state_dir,
                http,
                database: Box::new(crate::memory::falkordb::NoDatabase),
                locks: Box::new(locks::Unshared),
                zones: Box::new(crate::experts::runs::UtcOnly),
                workspace_named: None,
            },
            config: ConfigState::default(),
            memory: MemoryState::new(),
            routing: RoutingState::default(),
            experts: ExpertsState {
                sessions: ExpertSessions::new(ExpertRoots {
                    state: state_dir_for_experts,
                    ..ExpertRoots::default()
                }),
                zone_check: None,
            },
            turns: TurnsState::default(),
        }
    }

    /// The host's connection to FalkorDB (without it, every command is refused).
    pub fn with_database(mut self, database: Box<dyn crate::memory::falkordb::Database>) -> Engine {
        self.host.database = database;
        self
    }

    /// The host's time zones (without them, cron triggers know UTC only, and validation does not
    /// judge a trigger's zone).
    pub fn with_time_zones(mut self, zones: Box<dyn crate::experts::runs::TimeZones>) -> Engine {
        let shared = SharedZones(Rc::new(RefCell::new(zones)));
        let check = shared.0.clone();
        self.experts.zone_check = Some(crate::experts::ZoneCheck::new(move |zone| {
            let now = crate::platform::time::now_ms();
            check.borrow_mut().utc_offset_minutes(zone, now).map(|_| ())
        }));
        self.experts
            .sessions
            .check_zones_with(self.experts.zone_check.clone());
        self.host.zones = Box::new(shared);
        self
    }

    /// The agents' workspace as the host was asked to mount it (mounted or not), for messages.
    pub fn with_workspace_named(mut self, named: Option<String>) -> Engine {
        self.host.workspace_named = named;
        self
    }

    /// The host's cross-process locks (without them, the engine assumes it owns its state alone).
    pub fn with_locks(mut self, locks: Box<dyn Locks>) -> Engine {
        self.host.locks = locks;
        self
    }

    /// Where expert packages and the agents' workspace are (both optional); `packages_named`: the
    /// experts directory as the host names it, also when it is not mounted.
    pub fn with_experts(
        mut self,
        packages: Option<PathBuf>,
        packages_named: Option<String>,
        workspace: Option<PathBuf>,
    ) -> Engine {
        self.experts.sessions = ExpertSessions::new(ExpertRoots {
            packages,
            packages_named,
            workspace,
            state: self.host.state_dir.clone(),
        });
        self.experts
            .sessions
            .check_zones_with(self.experts.zone_check.clone());
        self
    }

    fn count(&mut self, change: impl FnOnce(&mut stats::Stats)) {
        self.count_within(STATS_FLUSH_EVERY, change);
    }

    /// [`Engine::count`], saving once `bound` updates are unsaved.
    fn count_within(&mut self, bound: u32, change: impl FnOnce(&mut stats::Stats)) {
        change(&mut self.memory.unsaved);
        self.memory.unsaved_updates += 1;
        if self.memory.unsaved_updates >= bound {
            self.save_counts();
        }
    }

    /// Merges the counts, and what the count logs hold that the file lacks, into the state
    /// directory's file under the `stats` lock. When the lock cannot be had or the file cannot be
    /// written, the counts stay here (and the logs there) for the next merge.
    fn flush_stats(&mut self) {
        self.merge_stats(false);
    }

    /// [`Engine::flush_stats`], folding the count logs now (`status`, `flush`) rather than at
    /// most every [`FOLD_INTERVAL_MS`] (a tick after every turn, in every process, would otherwise
    /// contend for the `stats` lock all the time).
    fn flush_stats_now(&mut self) {
        self.merge_stats(true);
    }

    /// Every process's counts, merged now (`status`, `overview`).
    fn stats_now(&mut self) -> stats::Stats {
        self.flush_stats_now();
        self.host
            .state_dir
            .as_deref()
            .map(stats::load)
            .unwrap_or_default()
    }

    fn merge_stats(&mut self, fold_now: bool) {
        let Some(dir) = &self.host.state_dir else {
            self.memory.unsaved = stats::Stats::default();
            return;
        };
        let now = time::now_ms();
        let due = fold_now || now.saturating_sub(self.memory.folded_at_ms) >= FOLD_INTERVAL_MS;
        let seen = due.then(|| stats::look_at_counts(dir));
        let fold = seen.as_ref().is_some_and(|seen| {
            if fold_now {
                !seen.is_empty()
            } else {
                seen.worth_folding(&self.memory.counts_seen, now)
            }
        });
        if self.memory.unsaved.is_empty() && !fold {
            return;
        }
        let lease = Duration::from_millis(STATS_LOCK_LEASE_MS);
        if self
            .host
            .locks
            .acquire(
                locks::STATS,
                lease,
                Duration::from_millis(STATS_LOCK_WAIT_MS),
            )
            .is_err()
        {
            return;
        }
        let merged = stats::fold_into_file(dir, &self.memory.unsaved, fold.then_some(now));
        self.host.locks.release(locks::STATS);
        if merged.is_ok() {
            if fold {
                self.memory.folded_at_ms = now;
                self.memory.counts_seen = seen.unwrap_or_default();
            }
            if now.saturating_sub(self.turns.pruned_at_ms) >= PRUNE_INTERVAL_MS {
                turns::prune(dir);
                turn_history::prune(dir, &turns::dir(dir), turns::KEPT_SESSIONS);
                self.turns.pruned_at_ms = now;
            }
            self.memory.unsaved = stats::Stats::default();
            self.memory.unsaved_updates = 0;
        }
    }

    /// Saves the counts before `agent-end` returns without waiting for the `stats` lock: a line of
    /// this instance's count log, which the next merge (`tick`, `status`) folds into the counters.
    /// When it cannot be written, they are merged under the lock as before.
    fn save_counts(&mut self) {
        let Some(dir) = &self.host.state_dir else {
            self.memory.unsaved = stats::Stats::default();
            return;
        };
        if self.memory.unsaved.is_empty() {
            return;
        }
        let now = time::now_ms();
        let (instance, started) = (self.memory.instance_id, &mut self.memory.count_logs_started);
        let unique = || {
            *started += 1;
            format!("{now:013x}-{instance:016x}-{started}")
        };
        if stats::append_counts(
            dir,
            &mut self.memory.count_log,
            unique,
            &self.memory.unsaved,
            now,
        )
        .is_ok()
        {
            self.memory.unsaved = stats::Stats::default();
            self.memory.unsaved_updates = 0;
        } else {
            self.flush_stats();
        }
    }

    /// Replaces the host's settings (a JSON object laid over the settings file) for the next reload.
    pub fn set_host_settings(&mut self, json: Option<String>) {
        self.config.host_settings = json;
    }

    /// Loads the configuration, concern by concern (see [`config_in_force::ConfigInForce::reload`]); settings that
    /// loaded are put in force, with the experts' part.
    pub fn reload(&mut self) -> ConfigResult {
        self.config.loaded_once = true;
        let (result, settings) = self.config.in_force.reload(
            &self.host.roots,
            self.config.host_settings.as_deref(),
            &self.config.settings,
        );
        if let Some(settings) = settings {
            self.experts.sessions.configure(settings.experts.clone());
            self.config.settings = settings;
        }
        result
    }

    /// Loads the configuration on first use.
    fn ensure_loaded(&mut self) {
        if !self.config.loaded_once {
            let _ = self.reload();
        }
    }

    /// The routing configuration in force, loading the configuration on first use.
    pub fn router(&mut self) -> Result<&Router, String> {
        self.ensure_loaded();
        match self.config.in_force.router() {
            Some(router) => Ok(router),
            None => Err(self.config.in_force.routing_off_reason()),
        }
    }

    fn is_user_turn(&self, ctx: &HookContext) -> bool {
        let trigger = ctx.trigger.as_deref().map(str::trim);
        trigger.is_none_or(|t| {
            !self
                .config
                .settings
                .skip
                .triggers
                .iter()
                .any(|s| s.eq_ignore_ascii_case(t))
        })
    }

    fn too_short(&self, text: &str) -> bool {
        text.trim().chars().count() < self.config.settings.skip.min_prompt_chars
    }

    /// Saves the client's MCP session for the next process when it is new; trouble saving is a note.
    fn save_graphiti_session(&mut self, notes: &mut Vec<String>) {
        self.memory
            .save_session(self.host.state_dir.as_deref(), notes);
    }

    /// The client for the configured Graphiti, and the host's HTTP to drive it.
    fn graphiti(&mut self) -> (&mut Client, &mut dyn Http) {
        let client = self.memory.client(
            &self.config.settings.graphiti,
            self.host.state_dir.as_deref(),
        );
        (client, self.host.http.as_mut())
    }
}

/// The host's zones, shared by the runtime and package validation (one instance, one thread).
struct SharedZones(Rc<RefCell<Box<dyn crate::experts::runs::TimeZones>>>);

impl crate::experts::runs::TimeZones for SharedZones {
    fn utc_offset_minutes(&mut self, zone: &str, at_ms: u64) -> Result<i32, String> {
        self.0.borrow_mut().utc_offset_minutes(zone, at_ms)
    }
}
