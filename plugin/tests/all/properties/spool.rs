//! Spool replay: random sequences of captures, ticks with a scripted outcome per send, kills mid-send,
//! restarts, requeues and flushes, over either API and either `capture.when_unconfirmed`, then a
//! final drain. Every captured turn reaches Graphiti at least once unless Graphiti rejected it, or
//! it was kept aside unconfirmed (then it is set aside with its reason, never deleted); Graphiti
//! stores turns in capture order except those resent after a doubt, kept aside or requeued; a turn
//! is stored twice only when a doubt was resent, or an operator requeued it after it was kept
//! aside; nothing else is left behind.

use super::fake_graphiti::{Outcome, Scripted};
use super::support::{config, example_engine, temp_dir};
use graphiti_openclaw::Engine;
use graphiti_openclaw::memory::spool::{Spool, State};
use graphiti_openclaw::memory::stats;
use graphiti_openclaw::platform::api::{AgentEndEvent, Command, HookContext, SpoolCommand};
use graphiti_openclaw::routing::decision::CaptureOutcome;
use proptest::prelude::*;
use serde_json::json;
use std::collections::{HashMap, HashSet};
use std::path::Path;
use std::time::Duration;

#[derive(Clone, Debug)]
enum Op {
    Capture,
    /// One tick, with these outcomes queued for the sends to come.
    Tick(Vec<Outcome>),
    /// What a kill -9 between the rename and the answer leaves: an `.episode` renamed `.sending`.
    Kill(prop::sample::Index, KillPoint),
    /// A fresh engine on the same state directory.
    Restart,
    Requeue,
    Flush(Vec<Outcome>),
}

/// How far the killed send got.
#[derive(Clone, Copy, Debug)]
enum KillPoint {
    /// Graphiti never received it (any waiting entry).
    BeforeSend,
    /// Graphiti stored it; the answer never came back (the entry being sent: the first waiting).
    AfterStore,
    /// Graphiti accepted it and its name is in the journal; the file was not yet removed.
    AfterAck,
}

fn outcome() -> impl Strategy<Value = Outcome> {
    prop_oneof![
        4 => Just(Outcome::Accept),
        1 => Just(Outcome::AcceptAnswerLost),
        1 => Just(Outcome::Hang),
        1 => Just(Outcome::Refused),
        1 => Just(Outcome::ServerError),
        1 => Just(Outcome::TransientToolError),
        1 => Just(Outcome::Reject),
    ]
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        4 => Just(Op::Capture),
        4 => prop::collection::vec(outcome(), 0..4).prop_map(Op::Tick),
        1 => (
            any::<prop::sample::Index>(),
            prop::sample::select(vec![KillPoint::BeforeSend, KillPoint::AfterStore, KillPoint::AfterAck]),
        )
            .prop_map(|(which, point)| Op::Kill(which, point)),
        1 => Just(Op::Restart),
        1 => Just(Op::Requeue),
        1 => prop::collection::vec(outcome(), 0..4).prop_map(Op::Flush),
    ]
}

#[derive(Clone, Copy, Debug)]
enum Api {
    Rest,
    Mcp,
}

fn engine(
    server: &Scripted,
    state: &Path,
    api: Api,
    resend_after_doubt_ms: u64,
    keep_aside: bool,
) -> Engine {
    let mut engine = example_engine(Some(state), Box::new(server.clone()));
    let graphiti = match api {
        Api::Rest => json!({"url": "http://graphiti.test", "transport": "rest"}),
        Api::Mcp => json!({"url": "http://graphiti.test/mcp", "transport": "mcp"}),
    };
    engine.set_host_settings(Some(
        json!({
            "graphiti": graphiti,
            "capture": {"backoff_initial_ms": 1, "backoff_max_ms": 1,
                        "resend_after_doubt_ms": resend_after_doubt_ms,
                        "when_unconfirmed": if keep_aside { "keep-aside" } else { "send-again" }}
        })
        .to_string(),
    ));
    engine.reload().expect("configuration loads");
    engine
}

/// One replay: what was captured, and every note the sends wrote.
struct Run {
    state: tempfile::TempDir,
    server: Scripted,
    api: Api,
    keep_aside: bool,
    engine: Engine,
    captured: Vec<String>,
    notes: Vec<String>,
}

impl Run {
    fn capture(&mut self) {
        let n = self.captured.len();
        let ctx = HookContext {
            session_key: Some("s".into()),
            sender_id: Some("u1".into()),
            run_id: Some(format!("run-{n}")),
            ..HookContext::default()
        };
        let messages = json!([{"role": "user", "content": format!("turn number {n} about dinner")},
                              {"role": "assistant", "content": format!("answer {n}")}]);
        let event = AgentEndEvent {
            success: true,
            messages_json: messages.to_string(),
            ..AgentEndEvent::default()
        };
        match self.engine.agent_end(&event, &ctx) {
            CaptureOutcome::Spooled { episode, .. } => self.captured.push(episode),
            other => panic!("turn {n} not spooled: {other:?}"),
        }
    }

    fn tick(&mut self) -> u32 {
        // The back-off is 1 ms here: past it, every tick tries.
        std::thread::sleep(Duration::from_millis(2));
        let report = self.engine.tick();
        self.notes.extend(report.notes);
        report.pending
    }

    fn flush(&mut self) {
        let out = self.engine.run_command(&Command::Flush);
        let notes = out.stdout.lines().filter_map(|l| l.strip_prefix("note: "));
        self.notes.extend(notes.map(str::to_string));
    }

    fn kill(&self, which: prop::sample::Index, point: KillPoint) {
        let spool = Spool::new(self.state.path());
        let waiting = spool.in_state(State::Waiting).unwrap();
        if waiting.is_empty() {
            return;
        }
        // A sender sends in queue order: the one in flight is the first waiting entry.
        let entry = match point {
            KillPoint::BeforeSend => &waiting[which.index(waiting.len())],
            KillPoint::AfterStore | KillPoint::AfterAck => &waiting[0],
        };
        let name = spool.read(entry).unwrap().name;
        if matches!(point, KillPoint::AfterStore | KillPoint::AfterAck) {
            self.server.0.lock().unwrap().stored.push(name.clone());
        }
        if matches!(point, KillPoint::AfterAck) {
            spool.mark_acked(&name).unwrap();
        }
        let from = spool.file_of(entry);
        std::fs::rename(&from, from.with_extension("sending")).unwrap();
    }

    fn apply(&mut self, op: Op, resend_after_doubt_ms: u64) {
        match op {
            Op::Capture => self.capture(),
            Op::Tick(outcomes) => {
                self.server.script(&outcomes);
                self.tick();
            }
            Op::Kill(which, point) => self.kill(which, point),
            Op::Restart => {
                self.engine = engine(
                    &self.server,
                    self.state.path(),
                    self.api,
                    resend_after_doubt_ms,
                    self.keep_aside,
                )
            }
            Op::Requeue => {
                let out = self
                    .engine
                    .run_command(&Command::Spool(SpoolCommand::Requeue));
                assert_eq!(out.exit_code, 0, "{}", out.stderr);
            }
            Op::Flush(outcomes) => {
                self.server.script(&outcomes);
                self.flush();
            }
        }
    }

    /// A restart with a short wait for doubts and a Graphiti that accepts everything: ticks until
    /// nothing waits.
    fn drain(&mut self) -> u32 {
        self.server.clear_script();
        self.engine = engine(
            &self.server,
            self.state.path(),
            self.api,
            0,
            self.keep_aside,
        );
        let mut pending = u32::MAX;
        for _ in 0..20 {
            pending = self.tick();
            if pending == 0 {
                break;
            }
        }
        pending
    }

    /// Names the notes say were resent after a doubt, with how often.
    fn resent(&self) -> HashMap<String, usize> {
        let mut resent = HashMap::new();
        for note in &self.notes {
            if let Some((name, _)) = note
                .strip_prefix("episode ")
                .and_then(|n| n.split_once(" was in doubt and Graphiti does not list it"))
            {
                *resent.entry(name.to_string()).or_insert(0) += 1;
            }
        }
        resent
    }

    /// Names the notes say were kept aside unconfirmed, with how often.
    fn kept_aside(&self) -> HashMap<String, usize> {
        let mut kept = HashMap::new();
        for note in &self.notes {
            if let Some((name, _)) = note.strip_prefix("episode ").and_then(|n| {
                n.split_once(": sent ")
                    .filter(|(_, rest)| rest.contains("Graphiti could not confirm it"))
            }) {
                *kept.entry(name.to_string()).or_insert(0) += 1;
            }
        }
        kept
    }

    /// Names the notes say Graphiti rejected (set aside at some point).
    fn rejected(&self) -> HashSet<String> {
        self.notes
            .iter()
            .filter_map(|n| n.strip_prefix("Graphiti rejected episode "))
            .filter_map(|n| n.split_once(':').map(|(name, _)| name.to_string()))
            .collect()
    }
}

proptest! {
    #![proptest_config(config(64))]

    #[test]
    fn every_turn_is_delivered_or_set_aside_in_order_without_unexplained_duplicates(
        mcp in any::<bool>(),
        lists_episodes in any::<bool>(),
        long_doubt in any::<bool>(),
        keep_aside in any::<bool>(),
        ops in prop::collection::vec(op(), 1..28),
    ) {
        let api = if mcp { Api::Mcp } else { Api::Rest };
        let resend_after_doubt_ms = if long_doubt { 3_600_000 } else { 0 };
        let state = temp_dir("spool");
        let server = Scripted::new(lists_episodes);
        let engine = engine(&server, state.path(), api, resend_after_doubt_ms, keep_aside);
        let mut run = Run { state, server, api, keep_aside, engine, captured: vec![], notes: vec![] };
        for op in ops {
            run.apply(op, resend_after_doubt_ms);
        }
        let pending = run.drain();
        prop_assert_eq!(pending, 0, "still waiting after the drain; notes: {:?}", run.notes);

        let spool = Spool::new(run.state.path());
        let entries = spool.entries().unwrap();
        let mut set_aside = HashSet::new();
        for entry in &entries {
            let episode = spool.read(entry).unwrap();
            let reason = spool.meta(&entry.stem).set_aside_reason.unwrap_or_default();
            match entry.state {
                State::Rejected => {
                    prop_assert!(reason.contains("Graphiti rejected episode"), "reason: {:?}", reason);
                }
                State::Unconfirmed if keep_aside => {
                    prop_assert!(reason.contains("could not confirm"), "reason: {:?}", reason);
                }
                _ => prop_assert!(false, "left behind: {:?}", entry),
            }
            set_aside.insert(episode.name);
        }
        let stored = run.server.stored();
        for name in &run.captured {
            prop_assert!(
                stored.contains(name) || set_aside.contains(name),
                "turn {} lost: neither stored nor set aside; notes: {:?}", name, run.notes
            );
        }

        let resent = run.resent();
        let kept_aside = run.kept_aside();
        let rejected = run.rejected();
        if keep_aside {
            prop_assert!(resent.is_empty(), "keep-aside, yet resent: {:?}", resent);
        } else {
            prop_assert!(kept_aside.is_empty(), "send-again, yet kept aside: {:?}", kept_aside);
        }
        let mut counts: HashMap<&str, usize> = HashMap::new();
        for name in &stored {
            *counts.entry(name).or_insert(0) += 1;
        }
        for (name, count) in &counts {
            // A kept-aside turn goes again only when an operator requeues it.
            let explained = resent.get(*name).copied().unwrap_or(0)
                + kept_aside.get(*name).copied().unwrap_or(0);
            prop_assert!(
                count - 1 <= explained,
                "{} stored {} times but resent after a doubt or kept aside {} times; notes: {:?}",
                name, count, explained, run.notes
            );
        }
        let stats = stats::load(run.state.path());
        prop_assert_eq!(stats.resent_after_doubt as usize, resent.values().sum::<usize>(), "counter vs notes");
        prop_assert_eq!(stats.doubts_kept_aside as usize, kept_aside.values().sum::<usize>(), "counter vs notes");

        // First arrivals of the turns never resent nor set aside keep the capture order.
        let mut seen = HashSet::new();
        let arrivals: Vec<&String> = stored
            .iter()
            .filter(|n| {
                !resent.contains_key(*n) && !kept_aside.contains_key(*n) && !rejected.contains(*n)
            })
            .filter(|n| seen.insert(*n))
            .collect();
        let captured_order: Vec<&String> = run
            .captured
            .iter()
            .filter(|n| arrivals.contains(n))
            .collect();
        prop_assert_eq!(arrivals, captured_order);
    }
}
