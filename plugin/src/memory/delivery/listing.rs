//! `spool list`: what waits in the capture spool, and what became of each entry.

use crate::memory::control::forget;
use crate::memory::spool::{Spool, State};

/// `spool list`: every entry with its state, in queue order.
pub fn render_list(spool: &Spool, held: &forget::Held) -> Result<String, String> {
    let entries = spool.entries()?;
    let strays = spool.strays().map(|s| format!("{s}\n")).unwrap_or_default();
    if entries.is_empty() {
        return Ok(format!("the capture spool is empty\n{strays}"));
    }
    let count = |state: State| entries.iter().filter(|e| e.state == state).count();
    let mut out = format!(
        "{} waiting, {} being sent, {} in doubt, {} set aside\n",
        count(State::Waiting),
        count(State::Sending),
        count(State::InDoubt),
        count(State::Rejected) + count(State::Corrupt) + count(State::Unconfirmed)
    );
    for entry in &entries {
        let meta = spool.meta(&entry.stem);
        let episode = spool.read(entry).ok();
        let what = match &episode {
            Some(episode) => format!("{} (group {})", episode.name, episode.group_id),
            None => "(unreadable)".into(),
        };
        let held_until = held.until(&entry.stem, episode.as_ref().map(|e| e.group_id.as_str()));
        let state = match entry.state {
            State::Unconfirmed => "set aside, unconfirmed".to_string(),
            State::Waiting => match held_until {
                Some(_) => "held back".to_string(),
                None => "waiting".to_string(),
            },
            State::Sending => "being sent".to_string(),
            State::InDoubt => format!(
                "in doubt since {}",
                crate::platform::time::iso8601(meta.in_doubt_since_ms.unwrap_or(0))
            ),
            State::Rejected | State::Corrupt => "set aside".to_string(),
        };
        out.push_str(&format!("{:<24} {what}\n", state));
        if let (State::Waiting, Some(until)) = (entry.state, held_until) {
            let by = held.stems.get(&entry.stem).map_or(
                "a forget whose proposals cannot be read (`status`)".to_string(),
                |(id, _)| format!("forget {id}, waiting for its confirmation"),
            );
            out.push_str(&format!(
                "{:<24} by {by}: removed if it is confirmed, sent if it lapses (at the \
                 latest {})\n",
                "",
                crate::platform::time::iso8601(until)
            ));
        }
        if let Some(reason) = &meta.set_aside_reason {
            out.push_str(&format!(
                "{:<24} {}× set aside; last: {reason}\n",
                "", meta.set_aside_times
            ));
        }
    }
    out.push_str(&strays);
    Ok(out)
}
