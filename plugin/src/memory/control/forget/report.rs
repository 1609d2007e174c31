//! What a proposed forget would delete, and what a confirmed one did: every item by its number and
//! id, the weaker matches left out, what could not be removed and why, and what an entity's
//! summary may still say. Everything from Graphiti or the user is shown as one escaped line.

use super::{Candidate, EXPIRES_AFTER_MS, Kind, Logged, Proposal};
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
    /// Entities (name, summary) whose summary matches the request.
    pub summaries: &'a [(String, String)],
    /// Search results that share no word with the request.
    pub unmatched: usize,
    /// Matches past what one proposal lists.
    pub more: usize,
    /// The earlier proposal of the same request this one replaces.
    pub replaced: Option<&'a str>,
    /// What was found wrong with the store of proposals on the way.
    pub notes: &'a [String],
    /// Earlier groups of a whole chat, left alone: each with other chats known to have gone there.
    pub left_alone: &'a [(String, Vec<String>)],
    pub operator: bool,
    /// The server has no entity search (REST): summaries cannot be looked at.
    pub no_entity_search: bool,
    /// Carried out at once (an operator's `--yes`): no confirmation to ask for.
    pub at_once: bool,
    /// Why confirming is likely to delete nothing Graphiti holds (its deletes miss the chat's
    /// graph on FalkorDB).
    pub cannot_delete: Option<&'a str>,
}

/// What a confirmed forget did.
#[derive(Debug, Default)]
pub struct ForgetDone {
    pub id: String,
    pub group: String,
    pub facts_deleted: Vec<String>,
    pub episodes_deleted: Vec<String>,
    /// Entities deleted with their facts (through the FalkorDB connection only).
    pub entities_deleted: Vec<String>,
    pub groups_deleted: Vec<String>,
    pub spool_removed: usize,
    /// Removed from the spool, but sent before with no answer: Graphiti may have it.
    pub spool_in_doubt: usize,
    /// Chosen captures that had been sent before the forget was confirmed.
    pub spool_sent_before: usize,
    pub cache_entries: usize,
    pub turn_records: usize,
    /// Each id (or group) not removed, with why.
    pub not_removed: Vec<(String, String)>,
    /// Entities whose summary still matches the request after the deletes.
    pub summaries: Vec<(String, String)>,
    /// The server has no entity search (REST): summaries cannot be looked at.
    pub no_entity_search: bool,
    /// Why the check after deleting could not be made.
    pub unchecked: Option<String>,
    /// The plugin's own copies that could not be cleared.
    pub local_trouble: Vec<String>,
    /// Until when captures Graphiti was still ingesting are looked for and deleted.
    pub following_up: Option<u64>,
    /// Items whose delete Graphiti answered with an HTTP error, and its status.
    pub answered_error: Vec<(String, u16)>,
    /// Why the server's deletes miss the group's graph, when that is known (FalkorDB).
    pub misses: Option<super::reach::Misses>,
    /// Something stayed because the server's deletes miss the group's graph: the reply says why.
    pub missed: bool,
    /// Deleted in FalkorDB itself, not through Graphiti's API.
    pub direct: bool,
    /// Entities a deleted episode mentioned that other episodes keep: their summaries stay as
    /// they were (deleting directly, the plugin has no LLM to rebuild them).
    pub summaries_not_rebuilt: Vec<String>,
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
        for list in [
            &mut self.facts_deleted,
            &mut self.episodes_deleted,
            &mut self.entities_deleted,
        ] {
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

    /// Every item listed is gone (an entity's summary may still say it: Graphiti rewrites one
    /// only for an episode the MCP server deletes, and the reply names it).
    fn everything_went(&self) -> bool {
        self.not_removed.is_empty() && self.unchecked.is_none() && self.local_trouble.is_empty()
    }
}

pub fn render_nothing_to_forget(proposal: &Proposal, unmatched: usize) -> String {
    let query = shown(proposal.query.as_deref().unwrap_or_default());
    let mut out = match &proposal.unsearched {
        Some(why) => format!(
            "Nothing to forget found: Graphiti could not be searched ({}), and no capture of this \
             chat waiting to be sent mentions {query:?}. Ask again once Graphiti answers.\n",
            shown(why)
        ),
        None => format!(
            "Nothing to forget: no memory of this chat (group {}) mentions {query:?}, and no \
             capture waiting to be sent does.\n",
            proposal.group
        ),
    };
    if unmatched > 0 {
        let _ = writeln!(
            out,
            "The search returned {unmatched} other result(s) that share no word with it; \
             `memories` with the same search lists them with their ids, which forget's --id takes."
        );
    }
    out
}

fn item_line(out: &mut String, number: usize, c: &Candidate, words: usize) {
    let id = match c.kind {
        Kind::Capture => "not yet sent".to_string(),
        Kind::Fact | Kind::Episode | Kind::Entity => shown(&c.id),
    };
    let _ = write!(
        out,
        "  {number:>3}  {:<8} {id}  {}",
        c.kind.label(),
        shown(&c.shown)
    );
    if !c.chosen && words > 0 {
        let _ = write!(
            out,
            "  [{} of {words} words: {}]",
            c.matched.len(),
            c.matched.join(", ")
        );
    }
    out.push('\n');
}

/// What the person should know besides the items: earlier groups left alone, results not
/// listed, what could not be searched, what this replaces, trouble with the store.
fn render_plan_notes(out: &mut String, plan: &ForgetPlan) {
    let p = plan.proposal;
    for (group, others) in plan.left_alone {
        let _ = writeln!(
            out,
            "Left alone: group {group}, where an earlier release put this chat's memories. That \
             release mapped other ids there too (it cleaned ids lossily, or kept a template's \
             separators), so it may hold other people's memories{}. Once you know whose they \
             are, forget again with --earlier-groups to delete it too.",
            if others.is_empty() {
                String::new()
            } else {
                format!(
                    "; recent sessions of other chats that went there: {}",
                    others.join(", ")
                )
            }
        );
    }
    if plan.unmatched > 0 {
        let _ = writeln!(
            out,
            "Not listed: {} other search result(s) that share no word with it (name their ids \
             to include them).",
            plan.unmatched
        );
    }
    if plan.more > 0 {
        let _ = writeln!(
            out,
            "{} more item(s) match than one forget lists: ask again after confirming this one.",
            plan.more
        );
    }
    if let Some(why) = &p.unsearched {
        let _ = writeln!(
            out,
            "Graphiti could not be searched ({}): only the captures not yet sent are listed. Ask \
             again once it answers to forget what it already holds.",
            shown(why)
        );
    }
    if let Some(replaced) = plan.replaced {
        let _ = writeln!(out, "This replaces forget {replaced}, of the same request.");
    }
    for note in plan.notes {
        let _ = writeln!(out, "note: {}", shown(note));
    }
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
            "{verb} from this chat's memories (group {}), for {:?}:\n",
            p.group,
            shown(query)
        ),
        None => format!(
            "{verb} everything remembered for this chat: group(s) {}\n",
            p.whole_groups.join(", ")
        ),
    };
    let numbered: Vec<(usize, &Candidate)> = p
        .candidates
        .iter()
        .enumerate()
        .map(|(i, c)| (i + 1, c))
        .collect();
    let chosen: Vec<_> = numbered.iter().filter(|(_, c)| c.chosen).collect();
    let left_out: Vec<_> = numbered.iter().filter(|(_, c)| !c.chosen).collect();
    if chosen.is_empty() && p.whole_groups.is_empty() {
        out.push_str("  nothing (every item is left out)\n");
    }
    if p.query.is_some() {
        for (n, c) in &chosen {
            item_line(&mut out, *n, c, p.words);
        }
    } else if !chosen.is_empty() {
        let _ = writeln!(
            out,
            "  and {} capture(s) not yet sent to Graphiti",
            chosen.len()
        );
    }
    if !left_out.is_empty() {
        out.push_str("Left out, matching fewer of its words (add one before confirming):\n");
        for (n, c) in &left_out {
            item_line(&mut out, *n, c, p.words);
        }
    }
    render_plan_notes(&mut out, plan);
    if let Some(warning) = plan.cannot_delete {
        let _ = writeln!(out, "{warning}");
    }
    if plan.no_entity_search && p.query.is_some() {
        out.push_str(NO_ENTITY_SEARCH);
    }
    if !plan.summaries.is_empty() {
        out.push_str(
            "These entities' summaries mention it too. Deleting a fact never rewrites a \
             summary; deleting an episode through the MCP server rebuilds the summaries it fed \
             (graphiti-core 0.31.2 and later; not the REST server). They may still say it after \
             the forget, and the reply names those that do:\n",
        );
        for (name, summary) in plan.summaries {
            let _ = writeln!(out, "  {}: {}", shown(name), shown(summary));
        }
    }
    if plan.at_once {
        return out;
    }
    render_how_to_confirm(
        &mut out,
        p,
        plan.operator,
        !left_out.is_empty() || chosen.len() > 1,
    );
    out
}

fn render_how_to_confirm(out: &mut String, p: &Proposal, operator: bool, choosable: bool) {
    let minutes = EXPIRES_AFTER_MS / 60_000;
    let id = &p.id;
    let _ = writeln!(out, "Nothing is deleted yet (forget id {id}).");
    if operator {
        let _ = writeln!(
            out,
            "To delete exactly what is listed above as proposed, within {minutes} minutes:\n  \
             graphiti-openclaw confirm-forget {id}   (in OpenClaw: openclaw graphiti \
             confirm-forget {id})"
        );
        if choosable {
            out.push_str(
                "Add --drop N to leave item N out, --add N to add a left-out one (each may be \
                 given again).\n",
            );
        }
    } else {
        let _ = writeln!(
            out,
            "To delete exactly what is listed above as proposed, the person asking sends in \
             this chat within {minutes} minutes:\n  /graphiti forget confirm {id}"
        );
        if choosable {
            let _ = writeln!(
                out,
                "To leave items out or add left-out ones first, by their numbers:\n  /graphiti \
                 forget drop {id} 2 3\n  /graphiti forget add {id} 4"
            );
        }
    }
}

pub fn render_forget_done(done: &ForgetDone) -> CommandOutput {
    let mut out = format!("Forget {} (group {}):\n", done.id, done.group);
    let _ = writeln!(
        out,
        "  deleted from {}: {} fact(s), {} episode(s){}{}",
        if done.direct {
            "Graphiti's FalkorDB"
        } else {
            "Graphiti"
        },
        done.facts_deleted.len(),
        done.episodes_deleted.len(),
        match done.entities_deleted.len() {
            0 => String::new(),
            n => format!(", {n} entit{}", if n == 1 { "y" } else { "ies" }),
        },
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
    if done.spool_sent_before > 0 {
        let _ = writeln!(
            out,
            "  {} capture(s) were sent before the forget was confirmed: deleted once Graphiti \
             lists them",
            done.spool_sent_before
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
            let _ = writeln!(out, "  {}: {}", shown(what), shown(why));
        }
        if let (Some(misses), true) = (&done.misses, done.missed) {
            let _ = writeln!(out, "{}", misses.explanation(&done.group));
        }
    }
    render_summaries(&mut out, done);
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

/// The summaries that still say what was forgotten, and those a direct delete left unrebuilt.
fn render_summaries(out: &mut String, done: &ForgetDone) {
    if !done.summaries.is_empty() {
        out.push_str(if done.direct {
            "Still said in a summary, which stays as it was (deleted in FalkorDB directly: \
             Graphiti rebuilds a summary with its LLM, and the plugin has none):\n"
        } else {
            "Still said in an entity's summary (Graphiti rewrites a summary only when the MCP \
             server deletes an episode that fed it, from graphiti-core 0.31.2 on, and has no \
             call to change one):\n"
        });
        for (name, summary) in &done.summaries {
            let _ = writeln!(out, "  {}: {}", shown(name), shown(summary));
        }
    }
    if !done.summaries_not_rebuilt.is_empty() && done.summaries.is_empty() {
        let _ = writeln!(
            out,
            "Kept as they were: the summaries of {} (other episodes mention them; deleted in \
             FalkorDB directly, no summary is rebuilt)",
            done.summaries_not_rebuilt
                .iter()
                .map(|n| shown(n))
                .collect::<Vec<_>>()
                .join(", ")
        );
    }
}
