//! Commands (intent-test, check-config, lint-rules, eval, recall, search, ingest, debug, status,
//! flush, spool, experts): each runs on the engine's state and is rendered by `reports`.

use super::Engine;
use crate::config::PluginSettings;
use crate::engine::turns;
use crate::memory::graphiti::EpisodeKind;
use crate::memory::graphiti::{Episode, http::Deadline, speaker_name};
use crate::memory::group_id;
use crate::memory::recall::Recall;
use crate::memory::redaction;
use crate::memory::relevance;
use crate::memory::spool::{self, Appended, Spool};
use crate::ops::boundary_audit;
use crate::ops::reports;
use crate::platform::api::{ChatType, Command, CommandOutput, HookContext, IntentTestRequest};
use crate::platform::time;
use crate::routing::decision::Injection;
use crate::routing::{PreviousTurn, RouteInput};
use std::time::Duration;

/// How long `status` waits for Graphiti's health check.
const STATUS_HEALTH_TIMEOUT: Duration = Duration::from_secs(2);

impl Engine {
    /// Routing for a prompt, with nothing read from or written to state: the previous turn and the
    /// time are the request's.
    pub fn dry_run(&mut self, request: &IntentTestRequest) -> Result<Injection, String> {
        let recall = match &request.recall_json {
            Some(json) => Recall::from_json(json)?,
            None => Recall::default(),
        };
        let router = self.router()?;
        let (now_ms, previous_at_ms) = dry_run_times(request)?;
        if let Some(previous) = &request.previous_pack
            && router.resolve_previous(previous).is_none()
        {
            return Err(format!(
                "previous pack {previous:?} is neither an intent id nor a registered pack"
            ));
        }
        let previous_named = request
            .previous_prompt
            .as_deref()
            .map(|prompt| router.named_in(prompt, &recall));
        let previous = request.previous_pack.as_deref().map(|intent| PreviousTurn {
            intent,
            injected_at_ms: Some(previous_at_ms),
            carried_turns: Some(request.carried_turns.unwrap_or(0)),
            named: Some(previous_named.as_deref().unwrap_or_default()),
        });
        let routed = router.route(&RouteInput {
            prompt: &request.prompt,
            recall: &recall,
            group_chat: request.group_chat,
            previous,
            now_ms,
        });
        Ok(Injection {
            prepend_context: routed.pack_context,
            decision: routed.decision,
            notes: routed.notes,
            ..Injection::default()
        })
    }

    pub fn run_command(&mut self, command: &Command) -> CommandOutput {
        match command {
            Command::IntentTest(request, format) => match self.dry_run(request) {
                Ok(injection) => reports::render_intent_test(request, &injection, *format),
                Err(e) => reports::failure(2, e),
            },
            Command::CheckConfig => reports::check_config(self.reload()),
            Command::LintRules => match self.router() {
                Ok(router) => reports::lint_rules(router),
                Err(e) => reports::failure(2, e),
            },
            Command::Eval(cases, threshold) => match self.router() {
                Ok(router) => reports::eval(router, cases, *threshold),
                Err(e) => reports::failure(2, e),
            },
            Command::Recall(query, group) => match group {
                Some(group) => match group_id::check_group_id(group) {
                    Ok(group) => self.recall_command(query, |_| Ok(group.to_string())),
                    Err(why) => reports::failure(2, why),
                },
                None => reports::failure(
                    2,
                    "recall: which memories? Name the group with --group-id ID \
                     (a direct chat's is the graphiti.group_id.direct template filled, \
                     by default AGENT-dm-SENDER; `group-ids` lists the groups of recent sessions)",
                ),
            },
            Command::Status => self.status(),
            Command::Search(query, ctx) => {
                self.ensure_loaded();
                match self.memory_group(ctx) {
                    Ok(group) => self.recall_command(query, |_| Ok(group)),
                    Err(why) => reports::failure(1, format!("not searched: {why}")),
                }
            }
            Command::Ingest(text, source, ctx) => self.ingest(text, source.as_deref(), ctx),
            Command::Debug(session_key) => self.debug(session_key.as_deref()),
            Command::Flush => self.flush(),
            Command::AuditBoundary => boundary_audit::audit(&self.host.roots),
            Command::GroupIds => self.group_ids(),
            Command::Overview => self.overview(),
            Command::Import(request) => self.import(request),
            Command::Memory(command) => self.memory_command(command),
            Command::Spool(command) => self.spool_command(*command),
            Command::Experts(command) => {
                // The `experts` settings (servers, mappings) come with the configuration.
                self.ensure_loaded();
                if let Some(out) = self.runtime_command(command) {
                    return out;
                }
                let (exit_code, stdout) = self
                    .experts
                    .sessions
                    .command(command, time::now_ms() / 1000);
                CommandOutput {
                    exit_code,
                    stdout,
                    stderr: String::new(),
                }
            }
        }
    }

    /// Text to remember, spooled for the conversation's group; `tick` sends it.
    pub(super) fn ingest(
        &mut self,
        text: &str,
        source: Option<&str>,
        ctx: &HookContext,
    ) -> CommandOutput {
        self.ensure_loaded();
        let text = text.trim();
        if text.is_empty() {
            return reports::failure(2, "nothing to ingest: the text is empty");
        }
        let Some(state_dir) = &self.host.state_dir else {
            return reports::failure(
                1,
                "no state directory: the host mounted none, so nothing can be spooled",
            );
        };
        let group_id = match self.memory_group(ctx) {
            Ok(group) => group,
            Err(why) => return reports::failure(1, format!("not stored: {why}")),
        };
        if let Some(why) = self.capture_paused(&group_id) {
            return reports::failure(1, format!("not stored: {why}"));
        }
        let text = redaction::redact(text, &self.config.settings.capture.redact).text;
        let text = text.as_str();
        let now = time::now_ms();
        let digest = spool::stable_hash(&format!("{group_id}\n{text}"));
        let episode = Episode {
            name: format!("openclaw-note-{group_id}-{now:x}-{:08x}", digest as u32),
            group_id: group_id.clone(),
            user: text.to_string(),
            assistant: String::new(),
            user_name: speaker_name(ctx.sender_name.as_deref(), ctx.sender_id.as_deref()),
            reference_time: time::iso8601(now),
            source_description: source.map_or_else(
                || self.config.settings.capture.source_description.clone(),
                str::to_string,
            ),
            kind: EpisodeKind::Note,
        };
        let capture = &self.config.settings.capture;
        match Spool::new(state_dir)
            .synced_to_disk(capture.sync_to_disk)
            .append(&episode, capture.spool_max_episodes)
        {
            Ok(Appended::Spooled) => CommandOutput {
                exit_code: 0,
                stdout: format!(
                    "queued episode {} for group {group_id}; the next tick sends it to Graphiti\n",
                    episode.name
                ),
                stderr: String::new(),
            },
            Ok(Appended::Full(depth)) => reports::failure(
                1,
                format!("capture spool is full ({depth} episodes waiting): not stored"),
            ),
            Err(e) => reports::failure(1, format!("{e}: not stored")),
        }
    }

    fn debug(&mut self, session_key: Option<&str>) -> CommandOutput {
        let Some(state_dir) = &self.host.state_dir else {
            return reports::failure(1, "no state directory: turns are not recorded");
        };
        match turns::load(state_dir, session_key) {
            Ok(Some(record)) => CommandOutput {
                exit_code: 0,
                stdout: record.render(),
                stderr: String::new(),
            },
            Ok(None) => CommandOutput {
                exit_code: 0,
                stdout: match session_key {
                    Some(key) => format!("no turn recorded for session {key} yet\n"),
                    None => "no turn recorded yet\n".into(),
                },
                stderr: String::new(),
            },
            Err(e) => reports::failure(1, e),
        }
    }

    /// A search as recall does it, in the group `group` picks once the settings are loaded.
    fn recall_command(
        &mut self,
        query: &str,
        group: impl FnOnce(&PluginSettings) -> Result<String, String>,
    ) -> CommandOutput {
        self.ensure_loaded();
        if query.trim().is_empty() {
            return reports::failure(2, "nothing to search for: the query is empty");
        }
        let group = match group(&self.config.settings) {
            Ok(group) => group,
            Err(why) => return reports::failure(1, format!("nothing searched: {why}")),
        };
        let settings = self.config.settings.recall.clone();
        let mut notes = Vec::new();
        match self.search(
            query,
            &group,
            Deadline::after(Duration::from_millis(settings.timeout_ms)),
            &mut notes,
        ) {
            Ok(found) => {
                let judged = relevance::judge(
                    &found,
                    &relevance::Asked::new(query, &[]),
                    settings.min_relevance,
                );
                let kept = judged.kept;
                let mut out = format!(
                    "recall {query:?} in group {group}: {} facts, {} entities\n",
                    kept.facts.len(),
                    kept.nodes.len()
                );
                let (facts_out, nodes_out) = (
                    found.facts.len() - kept.facts.len(),
                    found.nodes.len() - kept.nodes.len(),
                );
                if facts_out + nodes_out > 0 {
                    out.push_str(&format!(
                        "below the relevance floor (recall.min_relevance {}), left out as a turn \
                         leaves them out: {facts_out} facts, {nodes_out} entities\n",
                        settings.min_relevance
                    ));
                }
                for note in notes {
                    out.push_str(&format!("note: {note}\n"));
                }
                out.push_str(
                    &kept
                        .context_block(&group, &settings)
                        .unwrap_or_else(|| "(nothing recalled)".into()),
                );
                out.push('\n');
                CommandOutput {
                    exit_code: 0,
                    stdout: out,
                    stderr: String::new(),
                }
            }
            Err(e) => reports::failure(1, format!("recall failed: {e}")),
        }
    }

    fn status(&mut self) -> CommandOutput {
        self.ensure_loaded();
        let config = self.config.in_force.status_lines();
        let graphiti = self.config.settings.graphiti.clone();
        let (client, http) = self.graphiti();
        let health = client.health(http, Deadline::after(STATUS_HEALTH_TIMEOUT));
        let connected = graphiti.falkordb.configured().is_some();
        let (cannot_confirm, database_named) = (
            client.cannot_confirm().filter(|_| !connected),
            client.database().is_some() || connected,
        );
        let on_falkordb = client.database() == Some("falkordb");
        let stats = self.stats_now();
        let spool = self.host.state_dir.as_deref().map(Spool::new);
        let entries = spool
            .as_ref()
            .and_then(|s| s.entries().ok())
            .unwrap_or_default();
        let count = |keep: fn(&spool::Entry) -> bool| entries.iter().filter(|e| keep(e)).count();
        let backoff = spool.as_ref().map(Spool::backoff).unwrap_or_default();
        let retry_in = backoff.next_attempt_ms.saturating_sub(time::now_ms());
        // A server that named its database is judged by it; else by what its listing showed.
        let cannot_confirm = cannot_confirm.or_else(|| {
            (!database_named)
                .then(|| spool.as_ref().and_then(Spool::unlisted))
                .flatten()
                .map(|unlisted| reports::unlisted_text(&unlisted))
        });
        let doubts = reports::Guarantees {
            sync_to_disk: self.config.settings.capture.sync_to_disk,
            when_unconfirmed: self.config.settings.capture.when_unconfirmed,
            resend_after_doubt_ms: self.config.settings.capture.resend_after_doubt_ms,
            cannot_confirm,
        };
        let mut out = reports::render_status(
            &graphiti,
            &config,
            health.map_err(|e| e.message),
            &stats,
            reports::SpoolCounts {
                queued: count(|e| e.state.is_queued()),
                in_doubt: count(|e| e.state == spool::State::InDoubt),
                set_aside: count(|e| e.state.is_set_aside()),
            },
            (backoff.failures > 0).then_some(retry_in),
            &doubts,
        );
        if let Some(strays) = spool.as_ref().and_then(Spool::strays) {
            out.stdout.push_str(&format!("spool:    {strays}\n"));
        }
        if let Some(line) = self.falkordb_status_line(on_falkordb) {
            out.stdout.push_str(&line);
        }
        if let Some(line) = self.memory_status_line() {
            out.stdout.push_str(&line);
        }
        if let Some(line) = self.expert_runs_status() {
            out.stdout.push_str(&line);
        }
        let import = self.host.state_dir.as_deref().map(crate::memory::import::Job::load);
        match import {
            Some(Ok(Some(job))) => out.stdout.push_str(&crate::memory::import::status_line(
                &job,
                self.config.settings.capture.import_per_minute,
            )),
            Some(Err(e)) => out.stdout.push_str(&format!("import:   {e}\n")),
            _ => {}
        }
        out
    }
}

impl Engine {
    /// The FalkorDB connection, when the settings name one: whether it answers (the password is
    /// the host's and never shown). Without one, on a server that names FalkorDB: how to connect.
    fn falkordb_status_line(&mut self, on_falkordb: bool) -> Option<String> {
        let Some(origin) = self.config.settings.graphiti.falkordb.configured() else {
            return on_falkordb.then(|| {
                "falkordb: Graphiti runs on FalkorDB, where its API cannot delete or list a \
                 chat's memories: connect the plugin to that FalkorDB (graphiti.falkordb.url; \
                 docs/memory-control.md, \"Connecting to FalkorDB\")\n"
                    .to_string()
            });
        };
        let mut falkor = crate::memory::falkordb::Falkor {
            db: self.host.database.as_mut(),
            origin,
            deadline: Deadline::after(STATUS_HEALTH_TIMEOUT),
        };
        Some(match falkor.ping() {
            Ok(()) => format!("falkordb: {origin}: answers (listings and forgets go through it)\n"),
            Err(e) => format!("falkordb: {origin}: {e}\n"),
        })
    }
}

/// A dry run's moment and the previous pack's (the same when not given: it was just injected);
/// what describes a previous turn needs one, and it cannot come after now.
fn dry_run_times(request: &IntentTestRequest) -> Result<(u64, u64), String> {
    if request.previous_pack.is_none() {
        let given = [
            ("previous-at", request.previous_at_ms.is_some()),
            ("carried-turns", request.carried_turns.is_some()),
            ("previous-prompt", request.previous_prompt.is_some()),
        ];
        if let Some((name, _)) = given.iter().find(|(_, given)| *given) {
            return Err(format!(
                "{name} describes the previous turn's pack, but no previous pack was given"
            ));
        }
    }
    match (request.now_ms, request.previous_at_ms) {
        (None, Some(_)) => Err(
            "previous-at needs now: the time window is measured from the previous pack to now"
                .into(),
        ),
        (Some(now), Some(at)) if at > now => Err(format!(
            "previous-at ({}) is after now ({}): the previous turn cannot come later",
            time::iso8601(at),
            time::iso8601(now)
        )),
        (now, at) => {
            let now = now.unwrap_or(0);
            Ok((now, at.unwrap_or(now)))
        }
    }
}

impl Engine {
    /// Each recent session's group that its conversation no longer maps to: Graphiti cannot rename a
    /// group, so what was remembered there stays there until forgotten.
    fn group_ids(&mut self) -> CommandOutput {
        self.ensure_loaded();
        let Some(state_dir) = &self.host.state_dir else {
            return reports::failure(1, "no state directory: no turns are recorded to list");
        };
        let records = match turns::all(state_dir) {
            Ok(records) => records,
            Err(e) => return reports::failure(1, e),
        };
        let templates = &self.config.settings.graphiti.group_id;
        let mut moved = std::collections::BTreeMap::<(String, String), Vec<String>>::new();
        for record in records {
            let ctx = recorded_context(&record);
            let Ok(new) = group_id::group_id(templates, &ctx) else {
                continue;
            };
            // Where its turns went (the record), and where the rule before separator-aware
            // values put them: a turn recorded since the upgrade names the new group already.
            let mut olds: Vec<String> = record.group_id.iter().cloned().collect();
            olds.extend(group_id::previous_group_id(templates, &ctx).ok());
            olds.dedup();
            for old in olds.into_iter().filter(|old| *old != new) {
                // An older record did not keep who the turn was with: the key may not name them.
                let guessed = if record.conversation.is_none() {
                    " (read off the key)"
                } else {
                    ""
                };
                let session = format!("{}{guessed}", record.session_key);
                moved.entry((old, new.clone())).or_default().push(session);
            }
        }
        let mut out = format!(
            "{} of the recent sessions' groups map elsewhere now\n",
            moved.len()
        );
        for ((old, new), sessions) in &moved {
            out.push_str(&format!(
                "{old} -> {new}  (sessions: {})\n",
                sessions.join(", ")
            ));
        }
        if !moved.is_empty() {
            out.push_str(
                "Graphiti cannot rename a group: memories in an old group stay there, and no turn \
                 reads them again. An old group may hold several people's or chats' memories \
                 (ids that differed only in characters outside [A-Za-z0-9_-], or past 120 \
                 characters, or that were unknown, or ids holding a template's own separator \
                 such as -dm-): `forget --all --earlier-groups` deletes it once its \
                 memories are known to be that chat's alone.\n",
            );
        }
        CommandOutput {
            exit_code: 0,
            stdout: out,
            stderr: String::new(),
        }
    }
}

/// The turn's conversation as its host named it, or, for a record older than that, as its session
/// key says.
pub(super) fn recorded_context(record: &turns::TurnRecord) -> HookContext {
    let mut ctx = HookContext {
        session_key: Some(record.session_key.clone()),
        ..HookContext::default()
    };
    match &record.conversation {
        Some(c) => {
            ctx.agent_id = c.agent_id.clone();
            ctx.sender_id = c.sender_id.clone();
            ctx.chat_id = c.chat_id.clone();
            ctx.channel = c.channel.clone();
            ctx.chat_type = if c.group_chat {
                ChatType::Group
            } else {
                ChatType::Direct
            };
        }
        None => {
            let key = group_id::SessionKey::parse(&record.session_key);
            ctx.chat_type = if key.group_peer.is_some() {
                ChatType::Group
            } else {
                ChatType::Direct
            };
        }
    }
    ctx
}
