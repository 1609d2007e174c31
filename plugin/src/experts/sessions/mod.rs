//! Expert packages in a turn: which sessions belong to an expert, the expert's assembled prompt for
//! them, the registry of experts for the main agent (and `EXPERTS.md` in the workspace), the approval
//! check before each tool call, the `expert_knowledge` tool, and the `experts …` commands. The package
//! logic is in [`crate::experts`].

use crate::experts::{
    self, CallInput, LoadOptions, LoadedExpert, Package, PromptLimits, RegistryLimits,
    StateOptions, Verdict,
};
use crate::platform::api::{HookContext, ToolCall};

mod commands;
mod dry_run;
mod runtime;
mod tool_check;
use tool_check::HELD_ARGUMENTS_CHARS;
pub use tool_check::{Held, ToolCheck, ToolVerdict};
pub use crate::experts::settings::ExpertsSettings;
pub use crate::platform::api::ExpertsCommand;
use std::path::{Path, PathBuf};

/// Where packages, the agents' workspace and the approval stores are, inside the component.
#[derive(Clone, Debug, Default)]
pub struct ExpertRoots {
    /// Installed packages (read-only), one directory each.
    pub packages: Option<PathBuf>,
    /// The experts directory as the host was asked to mount it and the user named it (`mounts`),
    /// also when it does not exist: then no package is installed yet, rather than none configured.
    pub packages_named: Option<String>,
    /// The agents' workspace (read-write): `EXPERTS.md` and `expert-state/<name>/`.
    pub workspace: Option<PathBuf>,
    /// The plugin's state directory: approval stores under `experts/<name>/`.
    pub state: Option<PathBuf>,
}

/// Runtime state directory of one expert inside the workspace (loader design §4).
const STATE_SUBDIR: &str = "expert-state";

/// What an expert session or the main agent gets as system context.
#[derive(Debug, Default, PartialEq)]
pub struct SystemContext {
    /// The expert's assembled prompt (OpenClaw's `prependSystemContext`).
    pub expert_prompt: Option<String>,
    /// The registry of experts for the main agent (OpenClaw's `appendSystemContext`).
    pub registry: Option<String>,
    pub notes: Vec<String>,
}

pub struct ExpertSessions {
    settings: ExpertsSettings,
    roots: ExpertRoots,
    /// The installed packages, read once per configuration: turns and tool calls look them up here
    /// rather than parsing every package again. The `experts …` commands always read afresh.
    loaded: Option<Vec<LoadedExpert>>,
    /// The registry summary, built from `loaded`.
    registry: Option<String>,
    /// This instance as the expert runtime's runner.
    runner: crate::experts::runs::tick::RunnerState,
    /// The host's time zones, for validating cron triggers (none: not checked).
    zone_check: Option<experts::ZoneCheck>,
}

impl ExpertSessions {
    pub fn new(roots: ExpertRoots) -> ExpertSessions {
        ExpertSessions {
            settings: ExpertsSettings::default(),
            roots,
            loaded: None,
            registry: None,
            runner: crate::experts::runs::tick::RunnerState::default(),
            zone_check: None,
        }
    }

    /// The agents' workspace, when the host mounted one.
    pub fn workspace(&self) -> Option<&std::path::Path> {
        self.roots.workspace.as_deref()
    }

    /// Cron triggers' zones are checked with `check` from now on (packages are read again).
    pub fn check_zones_with(&mut self, check: Option<experts::ZoneCheck>) {
        self.zone_check = check;
        self.loaded = None;
        self.registry = None;
    }

    /// New settings (a configuration reload): packages are read again, and the registry rebuilt, on
    /// next use.
    pub fn configure(&mut self, settings: ExpertsSettings) {
        self.settings = settings;
        self.loaded = None;
        self.registry = None;
    }

    fn load_options(&self) -> LoadOptions {
        LoadOptions {
            known_servers: self.settings.known_servers.clone(),
            zone_check: self.zone_check.clone(),
            ..LoadOptions::default()
        }
    }

    fn active_root(&self) -> Option<&Path> {
        self.roots
            .packages
            .as_deref()
            .filter(|_| self.settings.enabled)
    }

    /// The expert a session belongs to: the configured mapping (by session key, then agent id), an
    /// `expert:<name>` label in the session key, or an agent id `expert:<name>` / `expert-<name>`.
    pub fn expert_of(&self, ctx: &HookContext) -> Option<String> {
        let mapped = [&ctx.session_key, &ctx.agent_id]
            .into_iter()
            .flatten()
            .find_map(|key| self.settings.sessions.get(key).cloned());
        if mapped.is_some() {
            return mapped;
        }
        let labelled = ctx.session_key.as_deref().and_then(|key| {
            let lower = key.to_lowercase();
            let start = lower.find("expert:")? + "expert:".len();
            let name: String = lower[start..]
                .chars()
                .take_while(|&c| crate::experts::package::is_name_char(c))
                .collect();
            (!name.is_empty()).then(|| self.installed_name(&name))
        });
        labelled.or_else(|| {
            let agent = ctx.agent_id.as_deref()?;
            let name = agent
                .strip_prefix("expert:")
                .or_else(|| agent.strip_prefix("expert-"))?;
            (!name.is_empty()).then(|| name.to_string())
        })
    }

    /// The installed package's own spelling of `name`: OpenClaw lower-cases session keys, so a label
    /// is matched without regard to case.
    fn installed_name(&self, name: &str) -> String {
        self.loaded
            .iter()
            .flatten()
            .map(|e| &e.name)
            .find(|n| n.to_lowercase() == name)
            .cloned()
            .unwrap_or_else(|| name.to_string())
    }

    /// Reads the installed packages unless this configuration has read them already.
    fn ensure_loaded(&mut self) -> Result<(), String> {
        if self.loaded.is_none() {
            let root = self
                .active_root()
                .ok_or("no experts directory is mounted")?;
            self.loaded = Some(experts::load_all(root, &self.load_options())?);
        }
        Ok(())
    }

    /// An installed expert by name (after [`Self::ensure_loaded`]).
    fn expert(&self, name: &str) -> Result<&LoadedExpert, String> {
        let root = self
            .active_root()
            .ok_or("no experts directory is mounted")?;
        experts::loader::pick(self.loaded.as_deref().unwrap_or_default(), name, root)
    }

    fn workspace_display(&self, name: &str) -> String {
        format!(
            "{}/{STATE_SUBDIR}/{name}",
            self.settings.workspace_dir.trim_end_matches('/')
        )
    }

    /// System context for a turn: the expert's prompt in its sessions (its workspace prepared for the
    /// session first), the registry elsewhere. Trouble is a note, never a failed turn.
    pub fn for_turn(&mut self, ctx: &HookContext, now_secs: u64) -> SystemContext {
        let mut out = SystemContext::default();
        if self.active_root().is_none() {
            return out;
        }
        match self.expert_of(ctx) {
            Some(name) => match self.expert_prompt(&name, ctx, now_secs) {
                Ok(prompt) => out.expert_prompt = Some(prompt),
                Err(why) => out
                    .notes
                    .push(format!("expert {name}: no expert prompt: {why}")),
            },
            None => {
                out.registry = self.registry(&mut out.notes);
            }
        }
        out
    }

    fn expert_prompt(
        &mut self,
        name: &str,
        ctx: &HookContext,
        now_secs: u64,
    ) -> Result<String, String> {
        self.ensure_loaded()?;
        let expert = self.expert(name)?;
        let Some(package) = expert.ready() else {
            return Err(format!(
                "the package has {} error(s); see `experts validate {name}`",
                expert.errors()
            ));
        };
        // A run's session state belongs to its invocation (kept across its attempts); any other
        // session's to that session.
        let session = ctx
            .session_key
            .as_deref()
            .and_then(crate::experts::runs::invocation_of_session)
            .or(ctx.session_id.as_deref())
            .or(ctx.session_key.as_deref())
            .unwrap_or("default");
        if let Some(workspace) = &self.roots.workspace {
            let options = StateOptions {
                scratch_retention_secs: self.settings.scratch_retention_days * 86_400,
            };
            experts::prepare_workspace(
                package,
                &workspace.join(STATE_SUBDIR).join(&expert.name),
                session,
                now_secs,
                &options,
            )?;
        }
        let prompt = experts::assemble_prompt(
            package,
            &self.workspace_display(&expert.name),
            Some(&experts::state::session_dir_name(session)),
            &PromptLimits::default(),
        );
        Ok(match self.learnings_section(&expert.name) {
            Some(learnings) if package.learning.enabled => {
                format!("{}\n\n{learnings}", prompt.text)
            }
            _ => prompt.text,
        })
    }

    /// The registry summary for the main agent; also writes `EXPERTS.md` into the workspace.
    fn registry(&mut self, notes: &mut Vec<String>) -> Option<String> {
        if self.registry.is_none() {
            if let Err(why) = self.ensure_loaded() {
                notes.push(format!("experts: {why}"));
                return None;
            }
            let experts = self.loaded.as_deref().unwrap_or_default();
            if let Some(why) = experts::loader::past_limit_note(experts) {
                notes.push(format!("experts: {why}"));
            }
            let limits = RegistryLimits::default();
            if let Some(workspace) = &self.roots.workspace {
                remove_private_copies(experts, &workspace.join(STATE_SUBDIR), notes);
                let md = experts::experts_md(experts, &limits);
                if let Err(e) = crate::platform::files::write_atomically(
                    &workspace.join("EXPERTS.md"),
                    md.as_bytes(),
                ) {
                    notes.push(format!("experts: cannot write EXPERTS.md: {e}"));
                }
            }
            let ready = experts.iter().any(|e| e.ready().is_some());
            self.registry = Some(if ready {
                experts::registry_summary(experts, &limits)
            } else {
                String::new()
            });
        }
        self.registry.clone().filter(|r| !r.is_empty())
    }

    /// The approval check before a tool call in an expert session; other sessions are not checked.
    pub fn before_tool_call(
        &mut self,
        call: &ToolCall,
        ctx: &HookContext,
        now_secs: u64,
    ) -> ToolCheck {
        if self.active_root().is_none() {
            return ToolCheck::allow();
        }
        let Some(name) = self.expert_of(ctx) else {
            return ToolCheck::allow();
        };
        let (package, bindings, state) = match self.gate(&name, &call.tool_name) {
            Ok(gate) => gate,
            Err(refusal) => return ToolCheck::block(refusal),
        };
        if ctx
            .session_key
            .as_deref()
            .is_some_and(experts::runs::is_dry_run_session)
        {
            return dry_run::check(package, bindings, &call_input(call, ctx), now_secs);
        }
        let (decision, notes) =
            experts::check_tool_call(&state, package, bindings, &call_input(call, ctx), now_secs);
        // The use of a user's approval is worth a line in the log (an audit trail).
        let approval_used = (decision.allowed() && decision.tier == experts::Tier::Confirm)
            .then(|| format!("experts: {name}: {} ({})", decision.message, decision.tool));
        let held =
            matches!(decision.verdict, Verdict::AwaitApproval | Verdict::Draft).then(|| Held {
                expert: name.clone(),
                manual: decision.verdict == Verdict::Draft,
                operation: decision.operation.clone(),
                arguments: crate::platform::text::one_line(
                    decision.arguments.as_deref().unwrap_or("{}"),
                )
                .chars()
                .take(HELD_ARGUMENTS_CHARS)
                .collect(),
                request: decision.request_id.clone(),
                timeout_secs: package.policy.timeout_secs,
            });
        ToolCheck {
            held,
            planned: None,
            approval_used,
            verdict: match decision.verdict {
                Verdict::Allow => ToolVerdict::Allow,
                _ => ToolVerdict::Block(decision.message),
            },
            notes: notes
                .into_iter()
                .map(|n| format!("experts: {name}: {n}"))
                .collect(),
        }
    }

    /// The ready package of expert `name`, its bindings and its approval store's directory; or the
    /// refusal for `tool` when the gate cannot run (fail closed: an expert whose policy cannot be
    /// read must not act on its own).
    fn gate(
        &mut self,
        name: &str,
        tool: &str,
    ) -> Result<(&Package, &experts::Bindings, PathBuf), String> {
        self.ensure_loaded()
            .map_err(|why| format!("{tool} refused: expert {name} cannot be loaded ({why})"))?;
        let expert = self
            .expert(name)
            .map_err(|why| format!("{tool} refused: expert {name} cannot be loaded ({why})"))?;
        let Some(package) = expert.ready() else {
            return Err(format!(
                "{tool} refused: expert {name} has {} package or binding error(s); an operator must fix them (experts validate {name})",
                expert.errors()
            ));
        };
        let state = self
            .approvals_dir(&expert.name)
            .ok_or_else(|| format!("{tool} refused: no state directory to keep approvals in"))?;
        Ok((package, &expert.bindings, state))
    }

    fn approvals_dir(&self, name: &str) -> Option<PathBuf> {
        Some(self.roots.state.as_ref()?.join("experts").join(name))
    }
}

/// What an approval is bound to: OpenClaw's session key, else its session id.
fn session_of(ctx: &HookContext) -> Option<&str> {
    [&ctx.session_key, &ctx.session_id]
        .into_iter()
        .flatten()
        .map(String::as_str)
        .find(|s| !s.trim().is_empty())
}

fn call_input<'a>(call: &'a ToolCall, ctx: &'a HookContext) -> CallInput<'a> {
    CallInput {
        session: session_of(ctx),
        tool_name: &call.tool_name,
        arguments: &call.arguments_json,
        call_id: call.call_id.as_deref(),
    }
}

/// Removes what earlier versions mirrored of every installed expert's private knowledge into the
/// agents' workspace (`state_root` = `<workspace>/expert-state`).
fn remove_private_copies(experts: &[LoadedExpert], state_root: &Path, notes: &mut Vec<String>) {
    for expert in experts {
        let (Some(package), dir) = (expert.ready(), state_root.join(&expert.name)) else {
            continue;
        };
        match experts::remove_private_copies(package, &dir) {
            Ok(removed) if !removed.is_empty() => notes.push(format!(
                "experts: removed {} copied private knowledge file(s) of {} from the workspace",
                removed.len(),
                expert.name
            )),
            Ok(_) => {}
            Err(why) => notes.push(format!(
                "experts: cannot remove a copy of {}'s private knowledge from the workspace: {why}",
                expert.name
            )),
        }
    }
}

/// What an instance keeps for experts between calls: the expert sessions (packages, approvals in
/// flight) and the host's zones for validating cron triggers (none until the host gives zones).
pub struct ExpertsState {
    pub sessions: ExpertSessions,
    pub zone_check: Option<crate::experts::ZoneCheck>,
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sessions() -> ExpertSessions {
        let mut s = ExpertSessions::new(ExpertRoots::default());
        let mut settings = ExpertsSettings::default();
        settings
            .sessions
            .insert("agent:main:telegram:direct:7".into(), "mapped".into());
        s.configure(settings);
        s
    }

    fn ctx(session_key: Option<&str>, agent_id: Option<&str>) -> HookContext {
        HookContext {
            session_key: session_key.map(Into::into),
            agent_id: agent_id.map(Into::into),
            ..HookContext::default()
        }
    }

    #[test]
    fn without_packages_the_user_is_told_what_their_host_needs() {
        // OpenClaw names its experts directory (a default one too) before anything is installed.
        let mut openclaw = ExpertSessions::new(ExpertRoots {
            packages_named: Some("/home/u/.openclaw/experts".into()),
            ..ExpertRoots::default()
        });
        assert_eq!(
            openclaw.command(&ExpertsCommand::List, 0),
            (
                1,
                "no expert package is installed: /home/u/.openclaw/experts does not exist yet; \
                 experts install <package directory or .tgz> creates it\n"
                    .into()
            )
        );
        // The CLI names one only when it was given one.
        let mut cli = ExpertSessions::new(ExpertRoots::default());
        assert_eq!(
            cli.command(&ExpertsCommand::List, 0),
            (
                1,
                "no experts directory was given (graphiti-openclaw --experts-dir DIR)\n".into()
            )
        );
    }

    #[test]
    fn the_load_notes_name_packages_left_out_past_the_limit() {
        let root_temp = crate::platform::files::temp_dir("graphiti-openclaw-sessions-count");
        let root = root_temp.path();
        for n in 0..1001 {
            let dir = root.join(format!("pkg-{n:04}"));
            std::fs::create_dir_all(&dir).unwrap();
            std::fs::write(dir.join("expert.yaml"), format!("name: pkg-{n:04}\n")).unwrap();
        }
        let mut s = ExpertSessions::new(ExpertRoots {
            packages: Some(root.to_path_buf()),
            ..ExpertRoots::default()
        });
        let (_, out) = s.command(&ExpertsCommand::Registry, 0);
        assert!(
            out.ends_with(
                "note: experts: 1001 packages in the experts directory, more than the 1000 loaded: \
                 pkg-1000 is not loaded; remove packages you do not use\n"
            ),
            "{out}"
        );
    }

    #[test]
    fn expert_sessions_are_found_by_mapping_label_or_agent_id() {
        let s = sessions();
        assert_eq!(
            s.expert_of(&ctx(Some("agent:main:telegram:direct:7"), None))
                .as_deref(),
            Some("mapped")
        );
        assert_eq!(
            s.expert_of(&ctx(Some("agent:main:expert:trip-planner-expert"), None))
                .as_deref(),
            Some("trip-planner-expert")
        );
        assert_eq!(
            s.expert_of(&ctx(None, Some("expert-trip-planner-expert")))
                .as_deref(),
            Some("trip-planner-expert")
        );
        assert_eq!(
            s.expert_of(&ctx(Some("agent:main:main"), Some("main"))),
            None
        );
        assert_eq!(s.expert_of(&ctx(Some("agent:main:expert:"), None)), None);
    }
}
