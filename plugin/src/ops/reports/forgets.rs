//! What a proposed forget would delete, and what a confirmed one did: every item by its id, what
//! could not be removed and why, and what an entity's summary may still say.

use crate::memory::forget::{EXPIRES_AFTER_MS, Logged, Proposal};
use crate::memory::graphiti::Item;
use crate::platform::api::CommandOutput;
use crate::platform::text::{one_line, truncate_chars};
use std::fmt::Write as _;

const MAX_SHOWN_CHARS: usize = 160;
const NO_ENTITY_SEARCH: &str = "This server (REST) has no entity search, so whether an entity's \
     summary repeats it cannot be looked at; recall through it shows no summaries either.\n";

fn shown(text: &str) -> String {
    truncate_chars(&one_line(text), MAX_SHOWN_CHARS)
}

pub struct ForgetPlan<'a> {
    pub proposal: &'a Proposal,
    /// Entities (name, summary) whose summary mentions the search.
    pub summaries: &'a [(String, String)],
    /// Search results left out for sharing no word with it.
    pub left_out: usize,
    pub operator: bool,
    /// The server has no entity search (REST): summaries cannot be looked at.
    pub no_entity_search: bool,
    /// Carried out at once (an operator's `--yes`): no confirmation to ask for.
    pub at_once: bool,
}

/// What a confirmed forget did.
#[derive(Debug, Default)]
pub struct ForgetDone {
    pub id: String,
    pub group: String,
    pub facts_deleted: Vec<String>,
    pub episodes_deleted: Vec<String>,
    pub groups_deleted: Vec<String>,
    pub spool_removed: usize,
    /// Removed from the spool, but sent before with no answer: Graphiti may have it.
    pub spool_in_doubt: usize,
    pub cache_entries: usize,
    pub turn_records: usize,
    /// Each id (or group) not removed, with why.
    pub not_removed: Vec<(String, String)>,
    /// Entities whose summary still mentions the search after the deletes.
    pub summaries: Vec<(String, String)>,
    /// The server has no entity search (REST): summaries cannot be looked at.
    pub no_entity_search: bool,
    /// Why the check after deleting could not be made.
    pub unchecked: Option<String>,
    /// The plugin's own copies that could not be cleared.
    pub local_trouble: Vec<String>,
    /// Until when captures Graphiti was still ingesting are looked for and deleted.
    pub following_up: Option<u64>,
}

impl ForgetDone {
    pub fn new(proposal: &Proposal) -> ForgetDone {
        ForgetDone {
            id: proposal.id.clone(),
            group: proposal.group.clone(),
            ..ForgetDone::default()
        }
    }

    pub fn deleted(&mut self, item: Item, uuid: &str) {
        match item {
            Item::Fact => self.facts_deleted.push(uuid.to_string()),
            Item::Episode => self.episodes_deleted.push(uuid.to_string()),
        }
    }

    /// Moves the deleted items a check still finds to the ones not removed.
    pub fn still_found(&mut self, found: impl Fn(&str) -> bool) {
        for list in [&mut self.facts_deleted, &mut self.episodes_deleted] {
            let (still, gone): (Vec<String>, Vec<String>) =
                list.drain(..).partition(|uuid| found(uuid));
            *list = gone;
            self.not_removed.extend(still.into_iter().map(|uuid| {
                (
                    uuid,
                    "Graphiti answered the delete, yet a search still finds it".to_string(),
                )
            }));
        }
    }

    pub fn logged<'a>(&'a self, proposal: &'a Proposal, by: &str, at_ms: u64) -> Logged<'a> {
        Logged {
            at_ms,
            forget: &proposal.id,
            by: by.to_string(),
            group: &proposal.group,
            facts_deleted: self.facts_deleted.iter().map(String::as_str).collect(),
            episodes_deleted: self.episodes_deleted.iter().map(String::as_str).collect(),
            groups_deleted: self.groups_deleted.iter().map(String::as_str).collect(),
            spool_entries_removed: self.spool_removed + self.spool_in_doubt,
            not_removed: self.not_removed.clone(),
        }
    }

    fn everything_went(&self) -> bool {
        self.not_removed.is_empty()
            && self.summaries.is_empty()
            && self.unchecked.is_none()
            && self.local_trouble.is_empty()
    }
}

pub fn render_nothing_to_forget(group: &str, query: Option<&str>, left_out: usize) -> String {
    let mut out = format!(
        "Nothing to forget: no memory of this chat (group {group}) mentions {:?}, and no capture \
         waiting to be sent does.\n",
        shown(query.unwrap_or_default())
    );
    if left_out > 0 {
        let _ = writeln!(
            out,
            "The search returned {left_out} other result(s) that share no word with it; \
             `memory see` lists them with their ids, which forget takes."
        );
    }
    out
}

pub fn render_forget_plan(plan: &ForgetPlan) -> String {
    let p = plan.proposal;
    let verb = if plan.at_once {
        "Forgetting"
    } else {
        "Would forget"
    };
    let mut out = match &p.query {
        Some(query) => format!(
            "{} from this chat's memories (group {}), for {:?}:\n",
            verb,
            p.group,
            shown(query)
        ),
        None => format!(
            "{} everything remembered for this chat: group(s) {}\n",
            verb,
            p.whole_groups.join(", ")
        ),
    };
    for fact in &p.facts {
        let _ = writeln!(out, "  fact     {}  {}", fact.uuid, shown(&fact.shown));
    }
    for episode in &p.episodes {
        let _ = writeln!(
            out,
            "  episode  {}  {}",
            episode.uuid,
            shown(&episode.shown)
        );
    }
    if !p.spooled.is_empty() {
        let _ = writeln!(
            out,
            "  {} capture(s) not yet sent to Graphiti",
            p.spooled.len()
        );
    }
    if plan.left_out > 0 {
        let _ = writeln!(
            out,
            "Left out: {} other search result(s) sharing no word with it (name their ids to \
             include them).",
            plan.left_out
        );
    }
    if plan.no_entity_search && p.query.is_some() {
        out.push_str(NO_ENTITY_SEARCH);
    }
    if !plan.summaries.is_empty() {
        out.push_str(
            "These entities' summaries mention it too; Graphiti cannot rewrite a summary, so \
             they may still say it after the forget:\n",
        );
        for (name, summary) in plan.summaries {
            let _ = writeln!(out, "  {}: {}", shown(name), shown(summary));
        }
    }
    let minutes = EXPIRES_AFTER_MS / 60_000;
    if plan.at_once {
        return out;
    }
    let _ = writeln!(out, "Nothing is deleted yet (forget id {}).", p.id);
    if plan.operator {
        let _ = writeln!(
            out,
            "To delete exactly these within {minutes} minutes: memory forget --confirm {}",
            p.id
        );
    } else {
        let _ = writeln!(
            out,
            "To delete exactly these, the person asking sends in this chat within {minutes} \
             minutes:\n  /graphiti forget confirm {}",
            p.id
        );
    }
    out
}

pub fn render_forget_done(done: &ForgetDone) -> CommandOutput {
    let mut out = format!("Forget {} (group {}):\n", done.id, done.group);
    let _ = writeln!(
        out,
        "  deleted from Graphiti: {} fact(s), {} episode(s){}",
        done.facts_deleted.len(),
        done.episodes_deleted.len(),
        if done.groups_deleted.is_empty() {
            String::new()
        } else {
            format!(
                ", every memory of group(s) {}",
                done.groups_deleted.join(", ")
            )
        }
    );
    let _ = writeln!(
        out,
        "  removed here: {} capture(s) not yet sent, {} cached recall answer(s), {} turn \
         record(s)",
        done.spool_removed, done.cache_entries, done.turn_records
    );
    if done.spool_in_doubt > 0 {
        let _ = writeln!(
            out,
            "  {} capture(s) had been sent without an answer: they are not sent again",
            done.spool_in_doubt
        );
    }
    if let Some(until) = done.following_up {
        let _ = writeln!(
            out,
            "  captures Graphiti had accepted but not yet stored are looked for until {} and \
             deleted when they appear (`status` says what was found)",
            crate::platform::time::iso8601(until)
        );
    }
    if !done.not_removed.is_empty() {
        out.push_str("Could not be removed:\n");
        for (what, why) in &done.not_removed {
            let _ = writeln!(out, "  {what}: {}", shown(why));
        }
    }
    if !done.summaries.is_empty() {
        out.push_str(
            "Still said in an entity's summary (Graphiti does not rewrite a summary when a fact \
             is deleted, and has no call to change one):\n",
        );
        for (name, summary) in &done.summaries {
            let _ = writeln!(out, "  {}: {}", shown(name), shown(summary));
        }
    }
    if done.no_entity_search && !done.facts_deleted.is_empty() {
        out.push_str(NO_ENTITY_SEARCH);
    }
    if let Some(why) = &done.unchecked {
        let _ = writeln!(out, "Not checked afterwards: {}", shown(why));
    }
    for trouble in &done.local_trouble {
        let _ = writeln!(out, "Not cleared here: {}", shown(trouble));
    }
    CommandOutput {
        exit_code: u8::from(!done.everything_went()),
        stdout: out,
        stderr: String::new(),
    }
}
