//! The expert runtime over this configuration's packages: [`ExpertSessions::runtime`] lends the
//! loaded packages, the settings and the runner's state to [`crate::experts::runs::Runtime`].

use super::ExpertSessions;
use crate::experts::install;
use crate::experts::runs::tick::RunnerState;
use crate::experts::runs::{Runtime, TimeZones};
use crate::platform::api::ExpertsCommand;
use crate::platform::locks::Locks;

impl ExpertSessions {
    /// The runtime, with the runner state of this instance; an error says why there is none.
    pub fn runtime<'a>(
        &'a mut self,
        locks: &'a mut dyn Locks,
        zones: &'a mut dyn TimeZones,
    ) -> Result<(Runtime<'a>, &'a mut RunnerState), String> {
        self.ensure_loaded()?;
        let state_dir = self
            .roots
            .state
            .as_deref()
            .ok_or("expert runs need a state directory (graphiti-openclaw --state-dir DIR)")?;
        let runtime = Runtime {
            state_dir,
            workspace: self.roots.workspace.as_deref(),
            packages: self.loaded.as_deref().unwrap_or_default(),
            settings: &self.settings,
            locks,
            zones,
            set_aside: Vec::new(),
        };
        Ok((runtime, &mut self.runner))
    }

    /// The expert's approved learnings for its prompt.
    pub(super) fn learnings_section(&self, expert: &str) -> Option<String> {
        let workspace = self.roots.workspace.as_deref()?;
        let shown = format!("{}/learnings", self.workspace_display(expert));
        crate::experts::runs::learnings::prompt_section(workspace, expert, &shown)
    }

    /// `experts install|bind|remove`; None for other commands. Packages are read again after.
    pub fn manage(
        &mut self,
        command: &ExpertsCommand,
        now_ms: u64,
    ) -> Option<Result<String, String>> {
        let root = match self.roots.packages.clone() {
            Some(root) => root,
            None if matches!(
                command,
                ExpertsCommand::Install(_)
                    | ExpertsCommand::Bind { .. }
                    | ExpertsCommand::Remove(_)
            ) =>
            {
                return Some(Err("no experts directory is mounted".into()));
            }
            None => return None,
        };
        let options = self.load_options();
        let result = match command {
            ExpertsCommand::Install(source) => install::install(&root, source, &options, now_ms),
            ExpertsCommand::Bind {
                expert,
                tool,
                server,
            } => install::bind(&root, expert, tool, server, &options),
            ExpertsCommand::Remove(expert) => install::remove(&root, expert),
            _ => return None,
        };
        self.loaded = None;
        self.registry = None;
        Some(result)
    }
}
