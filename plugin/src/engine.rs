//! The plugin as one object: configuration in force, the hooks, dry runs and commands. Every host
//! (the WIT glue in `lib.rs`, native tests, benchmarks) drives this.

use crate::api::*;
use crate::capture;
use crate::commands;
use crate::config::{ConfigError, ConfigRoots};
use crate::decision::{CaptureOutcome, Decision, Injection};
use crate::recall::Recall;
use crate::routing::{RouteInput, Router};
use crate::state;
use std::path::PathBuf;

pub struct Engine {
    roots: ConfigRoots,
    state_dir: Option<PathBuf>,
    /// The last configuration that loaded without errors.
    router: Option<Router>,
    /// Errors of the last failed load, while no configuration is in force.
    load_errors: Vec<ConfigError>,
    loaded_once: bool,
}

impl Engine {
    pub fn new(roots: ConfigRoots, state_dir: Option<PathBuf>) -> Engine {
        Engine { roots, state_dir, router: None, load_errors: vec![], loaded_once: false }
    }

    /// Loads the configuration; on failure the previous one stays in force.
    pub fn reload(&mut self) -> ConfigResult {
        self.loaded_once = true;
        match Router::load(&self.roots) {
            Ok(loaded) => {
                let summary = ConfigSummary {
                    rules: loaded.router.rules.len() as u32,
                    packs: loaded.router.registry.packs.len() as u32,
                    composition_rules: loaded.router.composition_rules as u32,
                    files: loaded.files,
                    warnings: loaded.warnings,
                };
                self.router = Some(loaded.router);
                self.load_errors.clear();
                Ok(summary)
            }
            Err(errors) => {
                if self.router.is_none() {
                    self.load_errors = errors.clone();
                }
                Err(errors)
            }
        }
    }

    /// The configuration in force, loading it on first use.
    pub fn router(&mut self) -> Result<&Router, String> {
        if !self.loaded_once {
            let _ = self.reload();
        }
        match &self.router {
            Some(router) => Ok(router),
            None => Err(format!(
                "no configuration loaded: {}",
                self.load_errors.iter().map(ToString::to_string).collect::<Vec<_>>().join("; ")
            )),
        }
    }

    pub fn before_agent_start(&mut self, event: &PromptEvent, ctx: &HookContext) -> Injection {
        if !capture::is_user_turn(ctx.trigger.as_deref()) {
            let reason = format!("trigger {:?} is not a user turn", ctx.trigger.as_deref().unwrap_or_default());
            return Injection { decision: Decision::none(reason), ..Injection::default() };
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
        let recall = Recall::default();
        let routed = match self.router() {
            Ok(router) => router.route(&RouteInput {
                prompt: &event.prompt,
                recall: &recall,
                group_chat: ctx.chat_type == ChatType::Group,
                previous: previous.as_deref(),
            }),
            Err(e) => {
                notes.push(e.clone());
                return Injection { decision: Decision::none(e), notes, prepend_context: None };
            }
        };
        if let (Some(dir), Some(key)) = (&self.state_dir, session_key) {
            let injected = routed.pack_context.as_ref().and(routed.decision.intent.as_deref());
            if let Err(e) = state::remember(dir, key, injected) {
                notes.push(e);
            }
        }
        notes.extend(routed.notes);
        Injection { prepend_context: routed.pack_context, decision: routed.decision, notes }
    }

    pub fn agent_end(&mut self, event: &AgentEndEvent, ctx: &HookContext) -> CaptureOutcome {
        if !event.success {
            let why = event.error.as_deref().unwrap_or("no error given");
            return CaptureOutcome::Skipped(format!("the turn failed ({why})"));
        }
        if !capture::is_user_turn(ctx.trigger.as_deref()) {
            return CaptureOutcome::Skipped(format!(
                "trigger {:?} is not a user turn",
                ctx.trigger.as_deref().unwrap_or_default()
            ));
        }
        match capture::last_exchange(&event.messages_json) {
            Ok((user, assistant)) => CaptureOutcome::Captured { user, assistant },
            Err(why) => CaptureOutcome::Skipped(why),
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
            return Err(format!("previous pack {previous:?} is neither an intent id nor a registered pack"));
        }
        let routed = router.route(&RouteInput {
            prompt: &request.prompt,
            recall: &recall,
            group_chat: request.group_chat,
            previous: request.previous_pack.as_deref(),
        });
        Ok(Injection { prepend_context: routed.pack_context, decision: routed.decision, notes: routed.notes })
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
        }
    }
}
