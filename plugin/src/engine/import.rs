//! `import`: memory-core's workspace files into one group (see `memory::import`), as a dry run or
//! as a job that the sending passes feed.

use super::Engine;
use crate::memory::delivery::Pass;
use crate::memory::graphiti::speaker_name;
use crate::memory::group_id;
use crate::memory::import::{self, Job, Options};
use crate::ops::reports;
use crate::platform::api::{CommandOutput, ImportRequest, OutputFormat};
use crate::platform::time;

/// The exit code that says the import is under way: the host calls again after a pause.
pub const UNDER_WAY: u8 = 75;

impl Engine {
    pub(super) fn import(&mut self, request: &ImportRequest) -> CommandOutput {
        self.ensure_loaded();
        let Some(workspace) = self.experts.sessions.workspace().map(|w| w.to_path_buf()) else {
            return match &self.host.workspace_named {
                Some(named) => reports::failure(
                    1,
                    format!(
                        "import: the agents' workspace {named} does not exist: memory-core has \
                         written nothing there, so there is nothing to import"
                    ),
                ),
                None => reports::failure(
                    2,
                    "import: no agents' workspace is mounted, so there is nothing to import \
                     (the CLI: --workspace-dir DIR, the directory holding MEMORY.md)",
                ),
            };
        };
        let options = match self.import_options(request) {
            Ok(options) => options,
            Err(refused) => return refused,
        };
        let plan = import::plan(&workspace, &options);
        let per_minute = self.config.settings.capture.import_per_minute;
        let json = request.format == OutputFormat::Json;
        let state_dir = self.host.state_dir.clone();
        if request.dry_run {
            let done = state_dir.as_deref().map(import::ledger).unwrap_or_default();
            return CommandOutput {
                exit_code: 0,
                stdout: import::render_plan(&plan, &done, per_minute, json),
                stderr: String::new(),
            };
        }
        let Some(state_dir) = state_dir else {
            return reports::failure(
                1,
                "import: no state directory is mounted, so nothing can be spooled",
            );
        };
        if let Some(why) = self.capture_paused(&options.group_id) {
            return reports::failure(1, format!("import: not started: {why}"));
        }
        if let Err(e) = import::start(&state_dir, &plan, &options, time::now_ms(), per_minute) {
            return reports::failure(1, format!("import: {e}"));
        }
        // A tick's pass: it keeps to the back-off while Graphiti is down (the feed still runs).
        let report = self.send_pass(Pass::Tick);
        self.flush_stats_now();
        let job = match Job::load(&state_dir) {
            Ok(Some(job)) => job,
            Ok(None) => return reports::failure(1, "import: the job vanished while it ran"),
            Err(e) => return reports::failure(1, format!("import: {e}")),
        };
        let Some(fed) = self.memory.import_fed.take() else {
            // Another process holds the send lock: its passes feed this job too.
            return CommandOutput {
                exit_code: UNDER_WAY,
                stdout: format!(
                    "import to group {}: {} fed so far; {}\n",
                    job.options.group_id,
                    job.fed,
                    report.notes.join("; ")
                ),
                stderr: String::new(),
            };
        };
        let mut stdout = import::render_progress(&job, &fed, per_minute, time::now_ms());
        if let Some(error) = report.error.as_deref().filter(|_| !fed.finished) {
            stdout.push_str(&format!(
                "  Graphiti: {error}; what is in the spool waits there, nothing is lost\n"
            ));
        }
        CommandOutput {
            exit_code: if fed.finished { 0 } else { UNDER_WAY },
            stdout,
            stderr: String::new(),
        }
    }

    /// The group and speaker an import request names, or the refusal saying what is missing.
    fn import_options(&self, request: &ImportRequest) -> Result<Options, CommandOutput> {
        let group_id = match &request.group_id {
            Some(group) => match group_id::check_group_id(group) {
                Ok(group) => group.to_string(),
                Err(why) => return Err(reports::failure(2, format!("import: --group-id: {why}"))),
            },
            None if request.ctx.sender_id.is_none() && request.ctx.chat_id.is_none() => {
                return Err(reports::failure(
                    2,
                    "import: into whose memory? Name the sender the workspace belongs to with \
                     --sender ID (their direct chat's group), or the group with --group-id ID",
                ));
            }
            None => match self.memory_group(&request.ctx) {
                Ok(group) => group,
                Err(why) => return Err(reports::failure(1, format!("import: {why}"))),
            },
        };
        Ok(Options {
            group_id,
            user_name: speaker_name(
                request.ctx.sender_name.as_deref(),
                request.ctx.sender_id.as_deref(),
            ),
            daily_notes: request.daily_notes,
        })
    }
}
