//! The plugin as one object: configuration in force, the hooks, the spool, dry runs and commands.
//! Every host (the WIT glue in `lib.rs`, native tests, benchmarks) drives this.

use crate::api::*;
use crate::capture;
use crate::commands;
use crate::config::{ConfigRoots, PluginSettings};
use crate::config_in_force::ConfigInForce;
use crate::decision::{CaptureOutcome, Decision, Injection};
use crate::delivery::{self, Pass, Sender};
use crate::expert_sessions::{ExpertRoots, ExpertSessions, ToolCheck};
use crate::graphiti::http::{Deadline, Http};
use crate::graphiti::{Client, Episode, EpisodeKind, GraphitiError, Transport};
use crate::group_id;
use crate::locks::{self, Locks};
use crate::recall::{self, Recall};
use crate::routing::{RouteInput, Routed, Router};
use crate::spool::{self, Appended, Spool};
use crate::state;
use crate::stats;
use crate::time;
use crate::turns::{self, TurnRecord};
use std::path::PathBuf;
use std::time::Duration;

/// How long `status` waits for Graphiti's health check.
const STATUS_HEALTH_TIMEOUT: Duration = Duration::from_secs(2);

pub struct Engine {
    roots: ConfigRoots,
    state_dir: Option<PathBuf>,
    http: Box<dyn Http>,
    /// Routing and settings, loaded and failed apart.
    config: ConfigInForce,
    /// The last settings that loaded, the defaults until some do.
    settings: PluginSettings,
    /// Settings the host lays over the settings file (OpenClaw's plugin config), as JSON.
    host_settings: Option<String>,
    loaded_once: bool,
    /// The Graphiti client, for the transport and URL it was made for (MCP keeps a session).
    client: Option<(Transport, String, Client)>,
    /// Counts not yet merged into the state directory's file.
    unsaved: stats::Stats,
    unsaved_updates: u32,
    stats_saved_at_ms: u64,
    experts: ExpertSessions,
    /// The host's cross-process locks on the state directory.
    locks: Box<dyn Locks>,
}

/// Counts are merged into the file at the end of every turn (`agent-end`), on every `tick` and
/// `status`, and otherwise at least every this many updates or this often.
const STATS_FLUSH_EVERY: u32 = 50;
const STATS_FLUSH_INTERVAL_MS: u64 = 2_000;
/// Merging counters takes milliseconds: a lock held longer than this was left by a stuck process.
const STATS_LOCK_LEASE_MS: u64 = 10_000;
const STATS_LOCK_WAIT_MS: u64 = 2_000;

impl Engine {
    pub fn new(roots: ConfigRoots, state_dir: Option<PathBuf>, http: Box<dyn Http>) -> Engine {
        let state_dir_for_experts = state_dir.clone();
        Engine {
            roots,
            state_dir,
            http,
            config: ConfigInForce::default(),
            settings: PluginSettings::default(),
            host_settings: None,
            loaded_once: false,
            client: None,
            unsaved: stats::Stats::default(),
            unsaved_updates: 0,
            stats_saved_at_ms: 0,
            experts: ExpertSessions::new(ExpertRoots {
                state: state_dir_for_experts,
                ..ExpertRoots::default()
            }),
            locks: Box::new(locks::Unshared),
        }
    }

    /// The host's cross-process locks (without them, the engine assumes it owns its state alone).
    pub fn with_locks(mut self, locks: Box<dyn Locks>) -> Engine {
        self.locks = locks;
        self
    }

    /// Where expert packages and the agents' workspace are (both optional).
    pub fn with_experts(mut self, packages: Option<PathBuf>, workspace: Option<PathBuf>) -> Engine {
        self.experts = ExpertSessions::new(ExpertRoots {
            packages,
            workspace,
            state: self.state_dir.clone(),
        });
        self
    }

    fn count(&mut self, change: impl FnOnce(&mut stats::Stats)) {
        change(&mut self.unsaved);
        self.unsaved_updates += 1;
        let now = time::now_ms();
        if self.unsaved_updates >= STATS_FLUSH_EVERY
            || now.saturating_sub(self.stats_saved_at_ms) >= STATS_FLUSH_INTERVAL_MS
        {
            self.flush_stats();
            self.stats_saved_at_ms = now;
        }
    }

    /// Merges the counts into the state directory's file under the `stats` lock. When the lock
    /// cannot be had or the file cannot be written, the counts stay here for the next merge.
    fn flush_stats(&mut self) {
        let Some(dir) = &self.state_dir else {
            self.unsaved = stats::Stats::default();
            return;
        };
        if self.unsaved.is_empty() {
            return;
        }
        let lease = Duration::from_millis(STATS_LOCK_LEASE_MS);
        if self
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
        let merged = stats::merge_into_file(dir, &self.unsaved);
        self.locks.release(locks::STATS);
        if merged.is_ok() {
            turns::prune(dir);
            self.unsaved = stats::Stats::default();
            self.unsaved_updates = 0;
        }
    }

    /// Replaces the host's settings (a JSON object laid over the settings file) for the next reload.
    pub fn set_host_settings(&mut self, json: Option<String>) {
        self.host_settings = json;
    }

    /// Loads the configuration, concern by concern (see [`ConfigInForce::reload`]); settings that
    /// loaded are put in force, with the experts' part.
    pub fn reload(&mut self) -> ConfigResult {
        self.loaded_once = true;
        let (result, settings) =
            self.config
                .reload(&self.roots, self.host_settings.as_deref(), &self.settings);
        if let Some(settings) = settings {
            self.experts.configure(settings.experts.clone());
            self.settings = settings;
        }
        result
    }

    /// Loads the configuration on first use.
    fn ensure_loaded(&mut self) {
        if !self.loaded_once {
            let _ = self.reload();
        }
    }

    /// The routing configuration in force, loading the configuration on first use.
    pub fn router(&mut self) -> Result<&Router, String> {
        self.ensure_loaded();
        match self.config.router() {
            Some(router) => Ok(router),
            None => Err(self.config.routing_off_reason()),
        }
    }

    fn is_user_turn(&self, ctx: &HookContext) -> bool {
        let trigger = ctx.trigger.as_deref().map(str::trim);
        trigger.is_none_or(|t| {
            !self
                .settings
                .skip
                .triggers
                .iter()
                .any(|s| s.eq_ignore_ascii_case(t))
        })
    }

    fn too_short(&self, text: &str) -> bool {
        text.trim().chars().count() < self.settings.skip.min_prompt_chars
    }

    /// The client for the configured Graphiti, and the host's HTTP to drive it.
    fn graphiti(&mut self) -> (&mut Client, &mut dyn Http) {
        let (transport, url) = (
            self.settings.graphiti.transport,
            self.settings.graphiti.url.clone(),
        );
        if !matches!(&self.client, Some((t, u, _)) if *t == transport && *u == url) {
            self.client = Some((transport, url.clone(), Client::new(transport, &url)));
        }
        let client = &mut self.client.as_mut().expect("set above").2;
        (client, self.http.as_mut())
    }

    /// Recall and routing (user turns), plus the experts' system context (any turn: expert sessions
    /// are sub-agent turns).
    pub fn before_agent_start(&mut self, event: &PromptEvent, ctx: &HookContext) -> Injection {
        let mut injection = self.recall_and_route(event, ctx);
        let system = self.experts.for_turn(ctx, time::now_ms() / 1000);
        injection.system_context = system.expert_prompt;
        injection.append_system_context = system.registry;
        injection.notes.extend(system.notes);
        injection
    }

    fn recall_and_route(&mut self, event: &PromptEvent, ctx: &HookContext) -> Injection {
        self.ensure_loaded();
        if !self.is_user_turn(ctx) {
            let reason = format!(
                "trigger {:?} is not a user turn",
                ctx.trigger.as_deref().unwrap_or_default()
            );
            return Injection {
                decision: Decision::none(reason),
                ..Injection::default()
            };
        }
        let mut notes = Vec::new();
        let session_key = ctx.session_key.as_deref().or(ctx.session_id.as_deref());
        let previous = match (&self.state_dir, session_key) {
            (Some(dir), Some(key)) => state::previous_intent(dir, key).unwrap_or_else(|e| {
                notes.push(e);
                None
            }),
            _ => None,
        };
        let group = group_id::group_id(&self.settings.graphiti.group_id, ctx);
        let (memory_block, recall, outcome) = self.recall_for_turn(event, &group, &mut notes);
        let searched_group = (!matches!(outcome, RecallOutcome::Skipped)).then_some(group);
        let recall_summary = match outcome {
            RecallOutcome::Recalled => format!(
                "recalled {} facts, {} entities",
                recall.facts.len(),
                recall.nodes.len()
            ),
            RecallOutcome::Fallback => format!(
                "failed, fallback note injected ({})",
                notes.last().map_or("", String::as_str)
            ),
            RecallOutcome::Skipped => "skipped (disabled or prompt too short)".into(),
        };
        let routed = match self.config.router() {
            Some(router) => router.route(&RouteInput {
                prompt: &event.prompt,
                recall: &recall,
                group_chat: ctx.chat_type == ChatType::Group,
                previous: previous.as_deref(),
            }),
            // The load reported why; the decision says it, the turn's notes do not repeat it.
            None => Routed {
                decision: Decision::none(self.config.routing_off_reason()),
                ..Routed::default()
            },
        };
        if let (Some(dir), Some(key)) = (&self.state_dir, session_key) {
            let injected = routed
                .pack_context
                .as_ref()
                .and(routed.decision.intent.as_deref());
            if let Err(e) = state::remember(dir, key, previous.as_deref(), injected) {
                notes.push(e);
            }
        }
        let pack = routed
            .pack_context
            .as_ref()
            .and(routed.decision.primary_pack.clone());
        self.count(|s| {
            s.turns += 1;
            match outcome {
                RecallOutcome::Recalled => s.recalls += 1,
                RecallOutcome::Fallback => s.recall_fallbacks += 1,
                RecallOutcome::Skipped => s.recalls_skipped += 1,
            }
            if let Some(pack) = pack {
                *s.packs.entry(pack).or_default() += 1;
            }
        });
        notes.extend(routed.notes);
        let blocks: Vec<String> = memory_block
            .into_iter()
            .chain(routed.pack_context)
            .collect();
        let injection = Injection {
            prepend_context: (!blocks.is_empty()).then(|| blocks.join("\n\n")),
            decision: routed.decision,
            notes,
            ..Injection::default()
        };
        if let (Some(dir), Some(key)) = (&self.state_dir, session_key) {
            let record = TurnRecord::new(
                time::now_ms(),
                key,
                &event.prompt,
                searched_group,
                recall_summary,
                &injection,
            );
            if let Err(e) = turns::save(dir, &record) {
                let mut injection = injection;
                injection.notes.push(e);
                return injection;
            }
        }
        injection
    }

    /// Recall for one turn, within its budget: the block to show, the data for routing's boosts, and
    /// what happened. Never fails: trouble gives the fallback note.
    fn recall_for_turn(
        &mut self,
        event: &PromptEvent,
        group: &str,
        notes: &mut Vec<String>,
    ) -> (Option<String>, Recall, RecallOutcome) {
        let settings = self.settings.recall.clone();
        if !settings.enabled || self.too_short(&event.prompt) {
            return (None, Recall::default(), RecallOutcome::Skipped);
        }
        let query = recall::query(&event.prompt, &event.messages_json, &settings);
        match self.search(
            &query,
            group,
            Deadline::after(Duration::from_millis(settings.timeout_ms)),
            notes,
        ) {
            Ok(found) => (
                found.context_block(group, &settings),
                found,
                RecallOutcome::Recalled,
            ),
            Err(e) => {
                notes.push(format!("recall failed, fallback note injected: {e}"));
                (
                    Some(recall::fallback_block(short_reason(&e))),
                    Recall::default(),
                    RecallOutcome::Fallback,
                )
            }
        }
    }

    /// Facts, then nodes, within one deadline. Nodes are optional: facts alone still make a recall.
    fn search(
        &mut self,
        query: &str,
        group: &str,
        deadline: Deadline,
        notes: &mut Vec<String>,
    ) -> Result<Recall, GraphitiError> {
        let (max_facts, max_nodes) = (
            self.settings.recall.max_facts,
            self.settings.recall.max_nodes,
        );
        let (client, http) = self.graphiti();
        // Ask for more facts than shown: invalidated ones and duplicates are filtered out after.
        let facts = client.search_facts(http, query, group, max_facts * 2, deadline)?;
        let nodes = if max_nodes == 0 {
            vec![]
        } else {
            client
                .search_nodes(http, query, group, max_nodes, deadline)
                .unwrap_or_else(|e| {
                    notes.push(format!("recall: entity search failed, facts only: {e}"));
                    vec![]
                })
        };
        Ok(Recall::from_lists(nodes, facts))
    }

    /// Captures the turn; its counts (this hook's and `before-agent-start`'s) are saved before it
    /// returns, since the process may end with the turn (`openclaw agent --local`, the CLI).
    pub fn agent_end(&mut self, event: &AgentEndEvent, ctx: &HookContext) -> CaptureOutcome {
        let outcome = self.capture(event, ctx);
        self.count(|s| match &outcome {
            CaptureOutcome::Skipped(_) => s.captures_skipped += 1,
            CaptureOutcome::Spooled { .. } => s.captures_spooled += 1,
            CaptureOutcome::Dropped(why) => {
                s.captures_dropped += 1;
                s.last_error = Some(why.clone());
                s.last_error_at_ms = time::now_ms();
            }
        });
        self.flush_stats();
        outcome
    }

    fn capture(&mut self, event: &AgentEndEvent, ctx: &HookContext) -> CaptureOutcome {
        // Capture needs the settings only, never routing.
        self.ensure_loaded();
        if !event.success {
            let why = event.error.as_deref().unwrap_or("no error given");
            return CaptureOutcome::Skipped(format!("the turn failed ({why})"));
        }
        if !self.is_user_turn(ctx) {
            return CaptureOutcome::Skipped(format!(
                "trigger {:?} is not a user turn",
                ctx.trigger.as_deref().unwrap_or_default()
            ));
        }
        if !self.settings.capture.enabled {
            return CaptureOutcome::Skipped("capture is disabled in settings".into());
        }
        // An expert may read private knowledge in its session; nothing said there leaves it.
        if let Some(expert) = self.experts.expert_of(ctx) {
            return CaptureOutcome::Skipped(format!(
                "a session of expert {expert}: not captured (its private knowledge stays in the session)"
            ));
        }
        // What this session's last turn prepended: capture removes exactly that.
        let record = match (
            &self.state_dir,
            ctx.session_key.as_deref().or(ctx.session_id.as_deref()),
        ) {
            (Some(dir), Some(key)) => turns::load(dir, Some(key))
                .ok()
                .flatten()
                .and_then(TurnRecord::injection),
            _ => None,
        };
        let (user, assistant) = match capture::last_exchange(&event.messages_json, record.as_ref())
        {
            Ok(exchange) => exchange,
            Err(why) => return CaptureOutcome::Skipped(why),
        };
        if self.too_short(&user) {
            return CaptureOutcome::Skipped(format!(
                "prompt shorter than {} characters",
                self.settings.skip.min_prompt_chars
            ));
        }
        let Some(state_dir) = &self.state_dir else {
            return CaptureOutcome::Dropped(
                "no state directory: the host mounted none, so nothing can be spooled".into(),
            );
        };
        let group_id = group_id::group_id(&self.settings.graphiti.group_id, ctx);
        let episode = Episode {
            name: episode_name(ctx, &group_id, &user, &assistant),
            group_id: group_id.clone(),
            user: user.clone(),
            assistant: assistant.clone(),
            user_name: ctx.sender_id.clone(),
            reference_time: time::iso8601(time::now_ms()),
            source_description: self.settings.capture.source_description.clone(),
            kind: EpisodeKind::Turn,
        };
        match Spool::new(state_dir).append(&episode, self.settings.capture.spool_max_episodes) {
            Ok(Appended::Spooled) => CaptureOutcome::Spooled {
                user,
                assistant,
                episode: episode.name,
                group_id,
            },
            Ok(Appended::Full(depth)) => CaptureOutcome::Dropped(format!(
                "capture spool is full ({depth} episodes are waiting for Graphiti): this turn was NOT captured; \
                 check Graphiti (graphiti-openclaw status) or raise capture.spool_max_episodes"
            )),
            Err(e) => CaptureOutcome::Dropped(format!("{e}: this turn was NOT captured")),
        }
    }

    /// Sends spooled turns to Graphiti, oldest first (see `delivery`); then saves the counters.
    pub fn tick(&mut self) -> TickReport {
        let report = self.send_pass(Pass::Tick);
        self.flush_stats();
        report
    }

    fn send_pass(&mut self, pass: Pass) -> TickReport {
        self.ensure_loaded();
        let Some(state_dir) = self.state_dir.clone() else {
            return TickReport {
                notes: vec!["no state directory: no spool".into()],
                ..TickReport::default()
            };
        };
        let capture = self.settings.capture.clone();
        self.graphiti();
        let Engine {
            client,
            http,
            locks,
            unsaved,
            ..
        } = self;
        let client = &mut client.as_mut().expect("made by graphiti()").2;
        let mut sender = Sender {
            spool: Spool::new(&state_dir),
            capture: &capture,
            client,
            http: http.as_mut(),
            locks: locks.as_mut(),
            counts: unsaved,
        };
        sender.pass(pass)
    }

    /// `flush`: passes over the spool until nothing waits or a pass makes no progress.
    fn flush(&mut self) -> CommandOutput {
        let mut sent = 0;
        let mut notes = Vec::new();
        let report = loop {
            let report = self.send_pass(Pass::Flush);
            sent += report.sent;
            notes.extend(report.notes.iter().cloned());
            if report.sent == 0 || report.error.is_some() || report.pending == 0 {
                break report;
            }
        };
        self.flush_stats();
        commands::render_flush(sent, &report, &notes)
    }

    fn spool_command(&mut self, command: SpoolCommand) -> CommandOutput {
        let Some(state_dir) = &self.state_dir else {
            return commands::failure(1, "no state directory: there is no spool");
        };
        let spool = Spool::new(state_dir);
        let result = match command {
            SpoolCommand::List => delivery::render_list(&spool),
            SpoolCommand::Requeue => spool.requeue_set_aside().map(|n| {
                format!("{n} set-aside episode(s) put back at the end of the queue; the next tick sends them\n")
            }),
        };
        match result {
            Ok(stdout) => CommandOutput {
                exit_code: 0,
                stdout,
                stderr: String::new(),
            },
            Err(e) => commands::failure(1, e),
        }
    }

    /// Routing for a prompt, with nothing read from or written to state.
    pub fn dry_run(&mut self, request: &IntentTestRequest) -> Result<Injection, String> {
        let recall = match &request.recall_json {
            Some(json) => Recall::from_json(json)?,
            None => Recall::default(),
        };
        let router = self.router()?;
        if let Some(previous) = &request.previous_pack
            && router.resolve_previous(previous).is_none()
        {
            return Err(format!(
                "previous pack {previous:?} is neither an intent id nor a registered pack"
            ));
        }
        let routed = router.route(&RouteInput {
            prompt: &request.prompt,
            recall: &recall,
            group_chat: request.group_chat,
            previous: request.previous_pack.as_deref(),
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
                Ok(injection) => commands::render_intent_test(request, &injection, *format),
                Err(e) => commands::failure(2, e),
            },
            Command::CheckConfig => commands::check_config(self.reload()),
            Command::LintRules => match self.router() {
                Ok(router) => commands::lint_rules(router),
                Err(e) => commands::failure(2, e),
            },
            Command::Eval(cases, threshold) => match self.router() {
                Ok(router) => commands::eval(router, cases, *threshold),
                Err(e) => commands::failure(2, e),
            },
            Command::Recall(query, group) => match group {
                Some(group) => self.recall_command(query, |_| group_id::sanitize_group_id(group)),
                None => self.recall_command(query, |s| {
                    group_id::group_id(&s.graphiti.group_id, &HookContext::default())
                }),
            },
            Command::Status => self.status(),
            Command::Search(query, ctx) => {
                self.recall_command(query, |s| group_id::group_id(&s.graphiti.group_id, ctx))
            }
            Command::Ingest(text, source, ctx) => self.ingest(text, source.as_deref(), ctx),
            Command::Debug(session_key) => self.debug(session_key.as_deref()),
            Command::Flush => self.flush(),
            Command::Spool(command) => self.spool_command(*command),
            Command::Experts(command) => {
                // The `experts` settings (servers, mappings) come with the configuration.
                self.ensure_loaded();
                let (exit_code, stdout) = self.experts.command(command, time::now_ms() / 1000);
                CommandOutput {
                    exit_code,
                    stdout,
                    stderr: String::new(),
                }
            }
        }
    }

    /// Before a tool call: expert sessions' approval policy; other sessions are not checked.
    pub fn before_tool_call(&mut self, call: &ToolCall, ctx: &HookContext) -> ToolCheck {
        self.ensure_loaded();
        self.experts
            .before_tool_call(call, ctx, time::now_ms() / 1000)
    }

    /// Text to remember, spooled for the conversation's group; `tick` sends it.
    fn ingest(&mut self, text: &str, source: Option<&str>, ctx: &HookContext) -> CommandOutput {
        self.ensure_loaded();
        let text = text.trim();
        if text.is_empty() {
            return commands::failure(2, "nothing to ingest: the text is empty");
        }
        let Some(state_dir) = &self.state_dir else {
            return commands::failure(
                1,
                "no state directory: the host mounted none, so nothing can be spooled",
            );
        };
        let group_id = group_id::group_id(&self.settings.graphiti.group_id, ctx);
        let now = time::now_ms();
        let digest = spool::stable_hash(&format!("{group_id}\n{text}"));
        let episode = Episode {
            name: format!("openclaw-note-{group_id}-{now:x}-{:08x}", digest as u32),
            group_id: group_id.clone(),
            user: text.to_string(),
            assistant: String::new(),
            user_name: ctx.sender_id.clone(),
            reference_time: time::iso8601(now),
            source_description: source.map_or_else(
                || self.settings.capture.source_description.clone(),
                str::to_string,
            ),
            kind: EpisodeKind::Note,
        };
        match Spool::new(state_dir).append(&episode, self.settings.capture.spool_max_episodes) {
            Ok(Appended::Spooled) => CommandOutput {
                exit_code: 0,
                stdout: format!(
                    "queued episode {} for group {group_id}; the next tick sends it to Graphiti\n",
                    episode.name
                ),
                stderr: String::new(),
            },
            Ok(Appended::Full(depth)) => commands::failure(
                1,
                format!("capture spool is full ({depth} episodes waiting): not stored"),
            ),
            Err(e) => commands::failure(1, format!("{e}: not stored")),
        }
    }

    fn debug(&mut self, session_key: Option<&str>) -> CommandOutput {
        let Some(state_dir) = &self.state_dir else {
            return commands::failure(1, "no state directory: turns are not recorded");
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
            Err(e) => commands::failure(1, e),
        }
    }

    /// A search as recall does it, in the group `group` picks once the settings are loaded.
    fn recall_command(
        &mut self,
        query: &str,
        group: impl FnOnce(&PluginSettings) -> String,
    ) -> CommandOutput {
        self.ensure_loaded();
        if query.trim().is_empty() {
            return commands::failure(2, "nothing to search for: the query is empty");
        }
        let group = group(&self.settings);
        let settings = self.settings.recall.clone();
        let mut notes = Vec::new();
        match self.search(
            query,
            &group,
            Deadline::after(Duration::from_millis(settings.timeout_ms)),
            &mut notes,
        ) {
            Ok(found) => {
                let mut out = format!(
                    "recall {query:?} in group {group}: {} facts, {} entities\n",
                    found.facts.len(),
                    found.nodes.len()
                );
                for note in notes {
                    out.push_str(&format!("note: {note}\n"));
                }
                out.push_str(
                    &found
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
            Err(e) => commands::failure(1, format!("recall failed: {e}")),
        }
    }

    fn status(&mut self) -> CommandOutput {
        self.ensure_loaded();
        let config = self.config.status_lines();
        let graphiti = self.settings.graphiti.clone();
        let (client, http) = self.graphiti();
        let health = client.health(http, Deadline::after(STATUS_HEALTH_TIMEOUT));
        self.flush_stats();
        let stats = self
            .state_dir
            .as_deref()
            .map(stats::load)
            .unwrap_or_default();
        let spool = self.state_dir.as_deref().map(Spool::new);
        let entries = spool
            .as_ref()
            .and_then(|s| s.entries().ok())
            .unwrap_or_default();
        let count = |keep: fn(&spool::Entry) -> bool| entries.iter().filter(|e| keep(e)).count();
        let backoff = spool.as_ref().map(Spool::backoff).unwrap_or_default();
        let retry_in = backoff.next_attempt_ms.saturating_sub(time::now_ms());
        commands::render_status(
            &graphiti,
            &config,
            health.map_err(|e| e.message),
            &stats,
            commands::SpoolCounts {
                queued: count(|e| e.state.is_queued()),
                in_doubt: count(|e| e.state == spool::State::InDoubt),
                set_aside: count(|e| e.state.is_set_aside()),
            },
            (backoff.failures > 0).then_some(retry_in),
        )
    }
}

enum RecallOutcome {
    Recalled,
    Fallback,
    Skipped,
}

/// A few words for the model about why memory is missing (details go to the log).
fn short_reason(e: &GraphitiError) -> &'static str {
    let m = e.message.as_str();
    if m.contains("timed out") || m.contains("no time left") {
        "it did not answer in time"
    } else if m.contains("connection failed")
        || m.contains("connection broken")
        || m.contains("refused by the host")
    {
        "it is unreachable"
    } else {
        "it answered with an error"
    }
}

/// Stable for the turn: the run id when the host has one, else a hash of what was said and when.
fn episode_name(ctx: &HookContext, group_id: &str, user: &str, assistant: &str) -> String {
    let turn = match &ctx.run_id {
        Some(run) if !run.trim().is_empty() => group_id::sanitize_group_id(run),
        _ => format!("{:x}", time::now_ms()),
    };
    let digest = spool::stable_hash(&format!("{group_id}\n{turn}\n{user}\n{assistant}"));
    format!("openclaw-{group_id}-{turn}-{:08x}", digest as u32)
}
