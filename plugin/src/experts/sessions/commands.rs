//! The `experts …` commands and the `expert_knowledge` tool, over the sessions' state.

use super::{ExpertSessions, call_input, session_of};
use crate::experts::approval_text::{self, DRY_RUN, StoreDir};
use crate::experts::{self, ApprovalStore, PromptLimits, RegistryLimits};
use crate::platform::api::ExpertsCommand;
use crate::platform::api::{HookContext, ToolCall};
use std::path::PathBuf;

impl ExpertSessions {
    /// Why no package can be read, as the host's user can act on it. A host names the experts
    /// directory it was given even when it does not exist (OpenClaw's `expertsDir` always has a
    /// value); the CLI names one only when `--experts-dir` was given, and refuses a missing one.
    fn no_packages_text(&self) -> String {
        match &self.roots.packages_named {
            Some(dir) => format!(
                "no expert package is installed: {dir} does not exist yet; experts install \
                 <package directory or .tgz> creates it\n"
            ),
            None => "no experts directory was given (graphiti-openclaw --experts-dir DIR)\n".into(),
        }
    }

    /// `experts …` commands: (exit code, text).
    pub fn command(&mut self, command: &ExpertsCommand, now_secs: u64) -> (u8, String) {
        let Some(root) = self.roots.packages.clone() else {
            return (1, self.no_packages_text());
        };
        let options = self.load_options();
        let text = |t: experts::CommandText| (u8::from(!t.ok), t.text);
        match command {
            ExpertsCommand::List => text(experts::experts_list(&root, &options)),
            ExpertsCommand::Validate(target) => {
                text(experts::experts_validate(&root, target, &options))
            }
            ExpertsCommand::Prompt(target) => {
                let workspace = self.workspace_display(target.rsplit('/').next().unwrap_or(target));
                text(experts::experts_prompt(
                    &root,
                    target,
                    &workspace,
                    &options,
                    &PromptLimits::default(),
                ))
            }
            ExpertsCommand::Registry => {
                // Read afresh, and refresh what turns use.
                self.loaded = None;
                self.registry = None;
                let mut notes = Vec::new();
                let _ = self.registry(&mut notes);
                let (code, mut out) = text(experts::experts_registry(
                    &root,
                    &options,
                    &RegistryLimits::default(),
                ));
                for note in notes {
                    out.push_str(&format!("note: {note}\n"));
                }
                (code, out)
            }
            ExpertsCommand::Pending => text(approval_text::pending_text(&self.stores(), now_secs)),
            ExpertsCommand::Approve(id) => {
                text(approval_text::approve_text(&self.stores(), id, now_secs))
            }
            ExpertsCommand::CheckTool { expert, call, ctx } => {
                self.check_tool(expert.as_deref(), call, ctx, now_secs)
            }
            ExpertsCommand::Knowledge { name, ctx } => self.knowledge(name.as_deref(), ctx),
            ExpertsCommand::Function {
                name,
                inputs_json,
                ctx,
            } => self.isolated_function(name, inputs_json, ctx, now_secs),
            ExpertsCommand::Reject(id) => {
                text(approval_text::reject_text(&self.stores(), id, now_secs))
            }
            // The runtime's commands need the host's locks: the engine runs them. Not the
            // command's Debug text: every command's grew the component, for this alone.
            _ => (
                1,
                "this command is run by the expert runtime, not here\n".to_string(),
            ),
        }
    }

    /// `experts check-tool`: the gate's decision for a call in a session (or as expert `forced`),
    /// without recording anything.
    fn check_tool(
        &mut self,
        forced: Option<&str>,
        call: &ToolCall,
        ctx: &HookContext,
        now_secs: u64,
    ) -> (u8, String) {
        let session = session_of(ctx).unwrap_or("none given");
        let (name, judged) = match forced {
            Some(name) => (name.to_string(), format!("judged as expert {name}")),
            None => match self.expert_of(ctx) {
                Some(name) => (name.clone(), format!("expert {name}")),
                None => {
                    let text = format!(
                        "session:   {session} (not an expert session)\ntool:      {}\n\
                         verdict:   allowed: the approval policy applies only in expert sessions\n{DRY_RUN}",
                        call.tool_name
                    );
                    return (0, text);
                }
            },
        };
        let header = format!("session:   {session} ({judged})\n");
        let (package, bindings, state) = match self.gate(&name, &call.tool_name) {
            Ok(gate) => gate,
            Err(refusal) => {
                return (
                    1,
                    format!("{header}verdict:   refused\nmessage:   {refusal}\n{DRY_RUN}"),
                );
            }
        };
        let (store, note) = match ApprovalStore::load(&state) {
            Ok(loaded) => loaded,
            Err(why) => (
                ApprovalStore::default(),
                Some(format!(
                    "the approval store is unreadable ({why}); nothing counts as approved"
                )),
            ),
        };
        let out = approval_text::check_tool_text(
            package,
            bindings,
            &call_input(call, ctx),
            &store,
            note.as_deref(),
            &header,
            now_secs,
        );
        (u8::from(!out.ok), out.text)
    }

    /// The `expert_knowledge` tool: answered only in the session of the expert whose knowledge it is.
    fn knowledge(&mut self, name: Option<&str>, ctx: &HookContext) -> (u8, String) {
        let refused = |why: String| (1, format!("expert_knowledge refused: {why}\n"));
        let Some(expert) = self.expert_of(ctx).filter(|_| self.active_root().is_some()) else {
            return refused(
                "this session is not an expert's; only an expert's own session reads its knowledge"
                    .into(),
            );
        };
        let loaded = match self.ensure_loaded().and_then(|()| self.expert(&expert)) {
            Ok(loaded) => loaded,
            Err(why) => return refused(format!("expert {expert} cannot be loaded ({why})")),
        };
        match loaded.ready() {
            Some(package) => {
                let answer = experts::knowledge::knowledge_answer(package, name);
                (u8::from(!answer.ok), answer.text)
            }
            None => refused(format!(
                "expert {expert} has package or binding errors (experts validate {expert})"
            )),
        }
    }

    /// The `expert_function` tool: the child session and message of an isolated function (spec §6
    /// "Runtime Consumption": its declared inputs in, only its declared outputs back).
    fn isolated_function(
        &mut self,
        name: &str,
        inputs_json: &str,
        ctx: &HookContext,
        now_secs: u64,
    ) -> (u8, String) {
        let refused = |why: String| (1, format!("expert_function refused: {why}\n"));
        let Some(expert) = self.expert_of(ctx).filter(|_| self.active_root().is_some()) else {
            return refused("this session is not an expert's".into());
        };
        let package = match self.ensure_loaded().and_then(|()| self.expert(&expert)) {
            Ok(loaded) => match loaded.ready() {
                Some(package) => package,
                None => {
                    return refused(format!(
                        "expert {expert} has errors (experts validate {expert})"
                    ));
                }
            },
            Err(why) => return refused(format!("expert {expert} cannot be loaded ({why})")),
        };
        let learnings = self
            .roots
            .workspace
            .as_deref()
            .filter(|_| package.learning.enabled)
            .and_then(|workspace| {
                crate::experts::runs::learnings::function_learnings(workspace, &expert, name)
            });
        let call = experts::IsolatedCall {
            function: name,
            inputs_json,
            caller: session_of(ctx).unwrap_or_default(),
            learnings: learnings.as_deref(),
        };
        match experts::isolated_call(package, &call, now_secs) {
            Ok(call) => (0, format!("{call}\n")),
            Err(why) => refused(why),
        }
    }

    /// Every expert's approval store, by expert name.
    /// The tool calls waiting for approval, as JSON (`overview`).
    pub fn pending_json(&self, now_secs: u64) -> serde_json::Value {
        approval_text::pending_json(&self.stores(), now_secs)
    }

    fn stores(&self) -> Vec<StoreDir> {
        let Some(dir) = self.roots.state.as_ref().map(|s| s.join("experts")) else {
            return vec![];
        };
        let mut stores: Vec<(String, PathBuf)> = std::fs::read_dir(&dir)
            .into_iter()
            .flatten()
            .flatten()
            .filter(|e| e.path().is_dir())
            .map(|e| (e.file_name().to_string_lossy().into_owned(), e.path()))
            .collect();
        crate::platform::sorting::sort(&mut stores);
        stores
    }
}
