//! The `status` line about what memory leaves out: the paused chats, the chats the settings keep
//! out, the forgets waiting for confirmation and what the follow-ups of confirmed ones found.

use super::forget;
use super::paused;
use crate::config::PluginSettings;
use crate::platform::time;
use std::path::Path;

/// The `status` line about what memory leaves out, when it leaves something out.
pub fn status_line(settings: &PluginSettings, state_dir: Option<&Path>) -> Option<String> {
    let paused = state_dir.map(|dir| paused::load(dir).map(|chats| chats.groups.len()));
    let kept_out = settings.skip.kept_out_summary();
    let paused = match paused {
        Some(Ok(0)) | None => None,
        Some(Ok(n)) => Some(format!("paused in {n} chat(s) (`paused` lists them)")),
        Some(Err(why)) => Some(format!("NOTHING IS CAPTURED: {why}")),
    };
    let parts: Vec<String> = paused
        .into_iter()
        .chain(kept_out.map(|k| format!("kept out: {k}")))
        .chain(state_dir.map(forgets_waiting_summary).unwrap_or_default())
        .chain(state_dir.and_then(not_removed_summary))
        .chain(state_dir.and_then(forget_follow_up_summary))
        .collect();
    (!parts.is_empty()).then(|| format!("memory:   {}\n", parts.join("; ")))
}

/// The forgets waiting for confirmation, the captures they hold back, and any file of them that
/// cannot be read.
fn forgets_waiting_summary(dir: &Path) -> Vec<String> {
    let summary = forget::summary(dir, time::now_ms());
    let waiting = (summary.waiting > 0).then(|| {
        format!(
            "forgets: {} waiting for confirmation in {} chat(s), holding back {} capture(s)",
            summary.waiting, summary.chats, summary.captures_held
        )
    });
    waiting
        .into_iter()
        .chain(
            summary
                .troubles
                .into_iter()
                .map(|t| format!("FORGETS: {t}")),
        )
        .collect()
}

/// What confirmed forgets could not remove from Graphiti, by the deletion log.
fn not_removed_summary(dir: &Path) -> Option<String> {
    let (items, forgets) = forget::not_removed_logged(dir);
    (items > 0).then(|| {
        format!(
            "forgets: {items} item(s) of {forgets} confirmed forget(s) not removed from Graphiti \
             (memory/forget-log.jsonl names each, with why)"
        )
    })
}

/// What the follow-ups of confirmed forgets found, while any is kept.
fn forget_follow_up_summary(dir: &Path) -> Option<String> {
    if !forget::has_follow_ups(dir) {
        return None;
    }
    let kept = match forget::follow_ups(dir) {
        Ok(kept) => kept.follow_ups,
        Err(why) => return Some(format!("forgets: {why}")),
    };
    let now = time::now_ms();
    let looking = kept.iter().filter(|f| now < f.until_ms).count();
    let deleted: usize = kept.iter().map(|f| f.deleted.len()).sum();
    let failed: usize = kept.iter().map(|f| f.not_removed.len()).sum();
    Some(format!(
        "forgets: {looking} looking for captures Graphiti was still storing, {deleted} \
         episode(s) deleted later, {failed} not removable (memory/forget-log.jsonl)"
    ))
}
