//! `overview`: the figures the Control UI's dashboard widget and Memory page draw, as JSON. The
//! same counters `status` prints, read the same way.

use super::Engine;
use crate::memory::spool::{self, Spool};
use crate::memory::stats::Stats;
use crate::ops::reports;
use crate::platform::api::CommandOutput;
use crate::platform::time;
use serde_json::{Value, json};

impl Engine {
    pub(super) fn overview(&mut self) -> CommandOutput {
        self.ensure_loaded();
        let stats = self.stats_now();
        let entries = self
            .host
            .state_dir
            .as_deref()
            .map(Spool::new)
            .and_then(|s| s.entries().ok())
            .unwrap_or_default();
        let count = |keep: fn(&spool::Entry) -> bool| entries.iter().filter(|e| keep(e)).count();
        let spool = json!({
            "queued": count(|e| e.state.is_queued()),
            "in_doubt": count(|e| e.state == spool::State::InDoubt),
            "set_aside": count(|e| e.state.is_set_aside()),
        });
        let approvals = self.experts.sessions.pending_json(time::now_ms() / 1000);
        let mut document = overview_json(&stats, spool, approvals);
        document["import"] = self
            .host
            .state_dir
            .as_deref()
            .and_then(|dir| crate::memory::import::Job::load(dir).ok().flatten())
            .map_or(Value::Null, |job| import_json(&job));
        reports::success(
            serde_json::to_string_pretty(&document).expect("JSON values serialize") + "\n",
        )
    }
}

/// The last import: its group, its items (those imported before included), how many were fed,
/// and when it started and finished.
fn import_json(job: &crate::memory::import::Job) -> Value {
    json!({
        "group_id": job.options.group_id,
        "items": job.items + job.already,
        "imported_before": job.already,
        "fed": job.fed,
        "to_go": job.items.saturating_sub(job.position),
        "transcripts": job.options.transcripts,
        "left_out_paused": job.paused,
        "started_at": time::iso8601(job.started_ms),
        "finished_at": job.finished_ms.map(time::iso8601),
    })
}

/// Rates are shares of the turns routed (0 when there were none).
fn overview_json(stats: &Stats, spool: Value, approvals: Value) -> Value {
    let share = |n: u64, of: u64| if of == 0 { 0.0 } else { n as f64 / of as f64 };
    let searched = stats.recalls + stats.recalls_cached;
    let packs: Vec<Value> = stats
        .packs
        .iter()
        .map(|(pack, turns)| json!({"pack": pack, "turns": turns, "rate": share(*turns, stats.turns)}))
        .collect();
    json!({
        "turns": stats.turns,
        "recall": {
            "recalled": stats.recalls,
            "cached": stats.recalls_cached,
            "fallbacks": stats.recall_fallbacks,
            "skipped": stats.recalls_skipped,
            "memories_per_turn": share(stats.recalled_items, searched),
        },
        "packs": packs,
        "captures": {
            "spooled": stats.captures_spooled,
            "skipped": stats.captures_skipped,
            "dropped": stats.captures_dropped,
            "sent": stats.episodes_sent,
        },
        "spool": spool,
        "approvals": approvals,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rates_are_shares_of_the_turns_and_memories_per_searched_turn() {
        let mut stats = Stats {
            turns: 10,
            recalls: 3,
            recalls_cached: 1,
            recall_fallbacks: 2,
            recalled_items: 10,
            ..Stats::default()
        };
        stats.packs.insert("dining_recs".into(), 4);
        let doc = overview_json(&stats, json!({"queued": 1}), json!({"waiting": []}));
        assert_eq!(doc["recall"]["memories_per_turn"], 2.5);
        assert_eq!(doc["recall"]["fallbacks"], 2);
        assert_eq!(
            doc["packs"],
            json!([{"pack": "dining_recs", "turns": 4, "rate": 0.4}])
        );
        assert_eq!(doc["spool"]["queued"], 1);
        let empty = overview_json(&Stats::default(), json!({}), json!({}));
        assert_eq!(empty["recall"]["memories_per_turn"], 0.0);
        assert_eq!(empty["packs"], json!([]));
    }
}
