//! `status` and `flush`: Graphiti's reachability, the counters, the spool and each pack's share.

use crate::config::{GraphitiSettings, WhenUnconfirmed};
use crate::memory::stats::Stats;
use crate::platform::api::{CommandOutput, TickReport};
use std::fmt::Write;

/// Share of turns above which a pack's keywords are probably too broad (PRD post-deploy monitoring).
const BROAD_PACK_RATE: f64 = 0.30;
/// Fewer turns than this say nothing about a rate.
const TURNS_TO_JUDGE_RATES: u64 = 20;

/// The spool's entries by state, for `status`.
pub struct SpoolCounts {
    pub queued: usize,
    pub in_doubt: usize,
    pub set_aside: usize,
}

/// Which guarantees hold, for `status`: what survives what, and how a send in doubt is settled.
pub struct Guarantees {
    /// `capture.sync_to_disk`: whether a turn survives a power cut too.
    pub sync_to_disk: bool,
    pub when_unconfirmed: WhenUnconfirmed,
    pub resend_after_doubt_ms: u64,
    /// Why Graphiti cannot confirm a send in doubt, when the plugin can tell.
    pub cannot_confirm: Option<String>,
}

/// What `status` says of a group whose listing showed nothing when a doubt came due.
pub fn unlisted_text(unlisted: &crate::memory::spool::Unlisted) -> String {
    format!(
        "its episode listing showed nothing of group {} when a send in doubt to it came due ({}); \
         a listing that cannot see the group, as FalkorDB's, never confirms",
        unlisted.group_id,
        crate::platform::time::iso8601(unlisted.at_ms)
    )
}

pub fn render_status(
    graphiti: &GraphitiSettings,
    config: &[String],
    health: Result<String, String>,
    stats: &Stats,
    spool: SpoolCounts,
    retry_in_ms: Option<u64>,
    doubts: &Guarantees,
) -> CommandOutput {
    let mut out = String::new();
    let reach = match &health {
        Ok(status) => format!("reachable ({status})"),
        Err(e) => format!("UNREACHABLE: {e}"),
    };
    let _ = writeln!(
        out,
        "graphiti: {} {} — {reach}",
        graphiti.transport.name(),
        graphiti.url
    );
    for line in config {
        let _ = writeln!(out, "{line}");
    }
    counters(&mut out, stats, &spool, retry_in_ms, doubts);
    pack_shares(&mut out, stats);
    CommandOutput {
        exit_code: if health.is_ok() { 0 } else { 1 },
        stdout: out,
        stderr: String::new(),
    }
}

/// `flush`: what was sent and what still waits; exit 1 unless the spool is empty.
pub fn render_flush(sent: u32, last: &TickReport, notes: &[String]) -> CommandOutput {
    let mut out = format!("sent {sent} episode(s); {} waiting", last.pending);
    if last.in_doubt > 0 {
        out += &format!(
            " ({} in doubt: sent, outcome unknown; not sent again until Graphiti is seen to lack them)",
            last.in_doubt
        );
    }
    out.push('\n');
    for note in notes {
        let _ = writeln!(out, "note: {note}");
    }
    let stderr = last
        .error
        .as_ref()
        .map(|e| format!("sending stopped: {e}\n"))
        .unwrap_or_default();
    CommandOutput {
        exit_code: u8::from(last.pending > 0),
        stdout: out,
        stderr,
    }
}

/// Turns, recall, capture, delivery and the spool, with the current error and any restart note.
fn counters(
    out: &mut String,
    stats: &Stats,
    spool: &SpoolCounts,
    retry_in_ms: Option<u64>,
    doubts: &Guarantees,
) {
    let _ = writeln!(
        out,
        "recall:   {} turns, {} recalled, {} from the cache, {} fallbacks, {} skipped",
        stats.turns,
        stats.recalls,
        stats.recalls_cached,
        stats.recall_fallbacks,
        stats.recalls_skipped
    );
    let _ = writeln!(
        out,
        "capture:  {} spooled, {} sent, {} skipped, {} dropped, {} send failures",
        stats.captures_spooled,
        stats.episodes_sent,
        stats.captures_skipped,
        stats.captures_dropped,
        stats.send_failures
    );
    if stats.sends_in_doubt + stats.set_aside > 0 {
        let _ = writeln!(
            out,
            "delivery: {} sends in doubt ({} then found stored, {} sent again, {} kept aside unconfirmed), {} set aside",
            stats.sends_in_doubt,
            stats.doubts_confirmed,
            stats.resent_after_doubt,
            stats.doubts_kept_aside,
            stats.set_aside
        );
    }
    let waiting = match retry_in_ms {
        Some(ms) => format!(", backing off: next attempt in {:.1} s", ms as f64 / 1000.0),
        None => String::new(),
    };
    let _ = writeln!(
        out,
        "spool:    {} episodes waiting ({} in doubt), {} set aside{waiting}",
        spool.queued, spool.in_doubt, spool.set_aside
    );
    if spool.set_aside > 0 {
        let _ = writeln!(
            out,
            "          see `graphiti-openclaw spool list`; `graphiti-openclaw spool requeue` puts them back"
        );
    }
    guarantee(out, doubts);
    if let Some(e) = stats.current_error() {
        let _ = writeln!(
            out,
            "last error ({}): {e}",
            crate::platform::time::iso8601(stats.last_error_at_ms)
        );
    }
    if let Some(note) = &stats.restarted {
        let _ = writeln!(out, "note: {note}");
    }
}

/// What survives what, and which guarantee holds for a send whose outcome is unknown: said once,
/// so that nobody counts on a promise the settings do not make.
fn guarantee(out: &mut String, doubts: &Guarantees) {
    let _ = if doubts.sync_to_disk {
        writeln!(
            out,
            "on disk:  each turn is synced to the disk before its hook returns: a killed process \
             or a power cut loses none (capture.sync_to_disk: true)"
        )
    } else {
        writeln!(
            out,
            "on disk:  each turn is in the spool when its hook returns: a killed process loses \
             none, a power cut may lose the last seconds (capture.sync_to_disk: false)"
        )
    };
    let wait = crate::memory::delivery::wait_text(doubts.resend_after_doubt_ms);
    let choice = format!(
        "capture.when_unconfirmed: {}",
        doubts.when_unconfirmed.name()
    );
    let outcome = match doubts.when_unconfirmed {
        WhenUnconfirmed::SendAgain => {
            format!("sent again ({choice}): never lost, possibly stored twice")
        }
        WhenUnconfirmed::KeepAside => format!(
            "set aside for spool requeue ({choice}): never stored twice, possibly missing from \
             Graphiti until an operator requeues it"
        ),
    };
    let _ = match &doubts.cannot_confirm {
        Some(why) => writeln!(
            out,
            "doubts:   Graphiti cannot confirm a send in doubt here ({why}): after {wait} each is {outcome}"
        ),
        None => writeln!(
            out,
            "doubts:   a send in doubt is confirmed once Graphiti lists it; not listed after {wait}, it is {outcome}"
        ),
    };
}

/// Each pack's share of turns, flagged when its keywords may be too broad.
fn pack_shares(out: &mut String, stats: &Stats) {
    let judged = stats.turns >= TURNS_TO_JUDGE_RATES;
    let rule = if judged {
        format!("flagged above {:.0}%", BROAD_PACK_RATE * 100.0)
    } else {
        format!(
            "flagged above {:.0}% from {TURNS_TO_JUDGE_RATES} turns on",
            BROAD_PACK_RATE * 100.0
        )
    };
    let _ = writeln!(out, "packs (share of {} turns; {rule}):", stats.turns);
    if stats.packs.is_empty() {
        out.push_str("  none injected yet\n");
    }
    for (pack, count) in &stats.packs {
        let rate = if stats.turns == 0 {
            0.0
        } else {
            *count as f64 / stats.turns as f64
        };
        let flag = if judged && rate > BROAD_PACK_RATE {
            "  ⚠ above 30%: keywords may be too broad"
        } else {
            ""
        };
        let _ = writeln!(out, "  {pack:<28} {count:>6}  {:>5.1}%{flag}", rate * 100.0);
    }
}
