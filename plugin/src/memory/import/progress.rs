//! What an import shows: the dry run's plan with Graphiti's work estimated, and its progress.

use super::{Fed, Job, LLM_CALLS_PER_EPISODE, Plan, WINDOW, workspace::FileKind};
use serde_json::json;
use std::collections::{BTreeMap, HashSet};

fn kind_name(kind: FileKind) -> &'static str {
    match kind {
        FileKind::Memory => "MEMORY.md entries",
        FileKind::User => "USER.md directives",
        FileKind::Imported => "imported notes (memory/imports/)",
        FileKind::DailyNote => "daily notes",
        FileKind::Transcript => "past conversations",
    }
}

fn unit_name(kind: FileKind) -> &'static str {
    if kind == FileKind::Transcript {
        "session(s)"
    } else {
        "file(s)"
    }
}

/// Per group, per kind: the items and their sources.
type ByGroup<'a> = BTreeMap<&'a str, BTreeMap<FileKind, (usize, HashSet<&'a str>)>>;

/// Seconds as `about 3 h 20 min` / `about 12 min` / `under a minute`.
pub fn duration_words(seconds: u64) -> String {
    let minutes = seconds.div_ceil(60);
    match minutes {
        0..=1 if seconds < 60 => "under a minute".into(),
        0..=59 => format!("about {minutes} min"),
        _ => format!("about {} h {} min", minutes / 60, minutes % 60),
    }
}

/// How long `items` take at `per_minute`, in seconds.
fn seconds_for(items: u64, per_minute: u32) -> u64 {
    items * 60 / u64::from(per_minute.max(1))
}

/// The dry run: per group, how many items would be sent from where, what is skipped and why, and
/// Graphiti's work at `per_minute`. `done`: items an earlier run already imported.
pub fn render_plan(plan: &Plan, done: &HashSet<String>, per_minute: u32, json: bool) -> String {
    let Some(options) = &plan.options else {
        return String::new();
    };
    let new: Vec<_> = plan
        .items
        .iter()
        .filter(|i| !done.contains(&i.name))
        .collect();
    let by_group = by_group(options, &new);
    let episodes = new.len() as u64;
    let seconds = seconds_for(episodes, per_minute);
    let (low, high) = LLM_CALLS_PER_EPISODE;
    if json {
        return plan_json(
            plan,
            options,
            &by_group,
            plan.items.len() - new.len(),
            per_minute,
        );
    }
    let mut out = match by_group.len() {
        1 => format!(
            "import (dry run): {episodes} item(s) for group {}\n",
            options.group_id
        ),
        groups => format!("import (dry run): {episodes} item(s) for {groups} groups\n"),
    };
    out.push_str(&group_lines(&by_group));
    let already = plan.items.len() - new.len();
    if already > 0 {
        out.push_str(&format!(
            "  {already} already imported by an earlier run: not sent again\n"
        ));
    }
    let (files, entries) = plan.daily_notes_left_out;
    if options.daily_notes {
        out.push_str("daily notes: included (--daily-notes)\n");
    } else if files > 0 {
        out.push_str(&format!(
            "daily notes: left out, {entries} entries in {files} file(s); add --daily-notes to import them\n"
        ));
    }
    if !plan.skipped.is_empty() || !plan.skipped_entries.is_empty() {
        out.push_str("skipped:\n");
        for skipped in &plan.skipped {
            out.push_str(&format!("  {}: {}\n", skipped.relative, skipped.why));
        }
        for ((file, why), count) in skipped_entries(plan) {
            out.push_str(&format!(
                "  {file}: {count} {}: {why}\n",
                entries_word(count)
            ));
        }
    }
    out.push_str(&format!(
        "Graphiti's work: {episodes} episode(s), about {} to {} calls to its LLM provider; \
         {} at {per_minute} a minute (capture.import_per_minute)\n",
        episodes * low,
        episodes * high,
        duration_words(seconds)
    ));
    for note in &plan.notes {
        out.push_str(&format!("note: {note}\n"));
    }
    out.push_str(
        "An entry later removed from a file is not deleted from Graphiti by an import (use forget).\n",
    );
    out
}

/// The new items per group and kind, the import's own group first among equals.
fn by_group<'a>(options: &'a super::Options, new: &[&'a super::Item]) -> ByGroup<'a> {
    let mut by_group: ByGroup = BTreeMap::new();
    by_group.entry(options.group_id.as_str()).or_default();
    for item in new {
        let slot = by_group
            .entry(item.group_id.as_str())
            .or_default()
            .entry(item.kind)
            .or_default();
        slot.0 += 1;
        slot.1.insert(item.source.as_str());
    }
    by_group
}

/// Per group (named when there are several), the items from each kind of source.
fn group_lines(by_group: &ByGroup) -> String {
    let mut out = String::new();
    for (group, by_kind) in by_group {
        let indent = if by_group.len() > 1 {
            let items: usize = by_kind.values().map(|(items, _)| items).sum();
            out.push_str(&format!("  group {group}: {items} item(s)\n"));
            "    "
        } else {
            "  "
        };
        for (kind, (items, sources)) in by_kind {
            out.push_str(&format!(
                "{indent}{items} from {} ({} {})\n",
                kind_name(*kind),
                sources.len(),
                unit_name(*kind)
            ));
        }
    }
    out
}

/// The entries left out, counted by file and reason, in the order first met.
fn skipped_entries(plan: &Plan) -> Vec<((&str, &str), usize)> {
    let mut counted: Vec<((&str, &str), usize)> = Vec::new();
    for (file, why) in &plan.skipped_entries {
        match counted
            .iter_mut()
            .find(|(key, _)| *key == (file.as_str(), why.as_str()))
        {
            Some((_, count)) => *count += 1,
            None => counted.push(((file, why), 1)),
        }
    }
    counted
}

fn entries_word(count: usize) -> &'static str {
    if count == 1 { "entry" } else { "entries" }
}

/// The dry run as one JSON document.
fn plan_json(
    plan: &Plan,
    options: &super::Options,
    by_group: &ByGroup,
    already: usize,
    per_minute: u32,
) -> String {
    let (low, high) = LLM_CALLS_PER_EPISODE;
    let mut episodes = 0u64;
    let groups: Vec<_> = by_group
        .iter()
        .map(|(group, by_kind)| {
            let items: usize = by_kind.values().map(|(items, _)| items).sum();
            episodes += items as u64;
            let from: Vec<_> = by_kind
                .iter()
                .map(|(kind, (items, sources))| {
                    let unit = if *kind == FileKind::Transcript {
                        "sessions"
                    } else {
                        "files"
                    };
                    json!({ "what": kind_name(*kind), "items": items, unit: sources.len() })
                })
                .collect();
            json!({ "group_id": group, "items": items, "from": from })
        })
        .collect();
    let skipped: Vec<_> = plan
        .skipped
        .iter()
        .map(|s| json!({ "file": s.relative, "why": s.why }))
        .chain(
            skipped_entries(plan)
                .into_iter()
                .map(|((file, why), count)| json!({ "file": file, "why": why, "entries": count })),
        )
        .collect();
    format!(
        "{}\n",
        json!({
            "groups": groups,
            "already_imported": already,
            "daily_notes": { "included": options.daily_notes, "files_left_out": plan.daily_notes_left_out.0, "entries_left_out": plan.daily_notes_left_out.1 },
            "transcripts": options.transcripts,
            "notes": plan.notes,
            "skipped": skipped,
            "estimate": { "episodes": episodes, "llm_calls": [episodes * low, episodes * high], "seconds_at_pace": seconds_for(episodes, per_minute), "episodes_per_minute": per_minute },
        })
    )
}

/// Where a job's items go: its group, and the chats of the past conversations when it has them.
fn target(job: &Job) -> String {
    let group = &job.options.group_id;
    if job.options.transcripts {
        format!("group {group} and the past conversations' chats")
    } else {
        format!("group {group}")
    }
}

/// One line of progress: items done, waiting, the pace and the time left.
pub fn render_progress(job: &Job, fed: &Fed, per_minute: u32, now: u64) -> String {
    let target = target(job);
    if fed.finished && job.fed == 0 {
        return format!(
            "nothing to import into {target}: its {} item(s) were all imported before\n",
            job.already
        );
    }
    let paused = match job.paused {
        0 => String::new(),
        n => format!("; {n} left out: their chat was paused"),
    };
    if fed.finished {
        let took = job
            .finished_ms
            .unwrap_or(now)
            .saturating_sub(job.started_ms)
            / 1000;
        return format!(
            "import finished: {} item(s) sent to {target}, {} imported before{paused}; took {}\n",
            job.fed,
            job.already,
            duration_words(took)
        );
    }
    let sent = job.fed.saturating_sub(fed.in_spool as u64);
    let left = fed.remaining as u64;
    let seconds = seconds_for(left, per_minute);
    let elapsed_min = now.saturating_sub(job.started_ms) as f64 / 60_000.0;
    let rate = if elapsed_min > 0.0 {
        sent as f64 / elapsed_min
    } else {
        0.0
    };
    let mut line = format!(
        "import to {target}: {sent} sent, {} waiting in the spool, {left} to go; \
         {rate:.1} a minute so far, paced at {per_minute} ({} left)\n",
        fed.in_spool,
        duration_words(seconds)
    );
    if let Some(why) = fed.held.as_deref().filter(|_| left > 0) {
        line.push_str(&format!("  nothing is fed while {why}\n"));
    } else if fed.fed == 0 && left > 0 && fed.in_spool >= WINDOW {
        line.push_str("  waiting for Graphiti to take what is in the spool before feeding more\n");
    }
    line
}

/// `status`'s line about the last import, if there was one.
pub fn status_line(job: &Job, per_minute: u32) -> String {
    let target = target(job);
    let started = crate::platform::time::iso8601(job.started_ms);
    match job.finished_ms {
        Some(at) => format!(
            "import:   finished {}: {} item(s) sent to {target} ({} imported before)\n",
            crate::platform::time::iso8601(at),
            job.fed,
            job.already
        ),
        None => {
            let left = job.items.saturating_sub(job.position);
            format!(
                "import:   under way since {started}: {} of {} item(s) for {target} fed to the spool, \
                 {left} to go at {per_minute} a minute ({} left)\n",
                job.fed,
                job.items,
                duration_words(seconds_for(left, per_minute))
            )
        }
    }
}
