//! `import`: memory-core's workspace files into one group (see `memory::import`), as a dry run or
//! as a job that the sending passes feed.

use super::Engine;
use crate::memory::control;
use crate::memory::delivery::Pass;
use crate::memory::graphiti::speaker_name;
use crate::memory::group_id;
use crate::memory::import::{self, Job, Options};
use crate::ops::reports;
use crate::platform::api::{CommandOutput, HookContext, ImportRequest, OutputFormat};
use crate::platform::time;
use std::path::Path;

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
        let state_dir = self.host.state_dir.clone();
        if let Err(answer) = self.plan_import(request, &workspace, options) {
            return answer;
        }
        let Some(state_dir) = state_dir else {
            return reports::failure(
                1,
                "import: no state directory is mounted, so nothing can be spooled",
            );
        };
        let per_minute = self.config.settings.capture.import_per_minute;
        // A tick's pass: it keeps to the back-off while Graphiti is down (the feed still runs).
        let report = self.send_pass(Pass::Tick);
        self.flush_stats_now();
        let job = match Job::load(&state_dir) {
            Ok(Some(job)) => job,
            Ok(None) => return reports::failure(1, "import: the job vanished while it ran"),
            Err(e) => return reports::failure(1, format!("import: {e}")),
        };
        let fed = self.memory.import_fed.take().or_else(|| {
            // Finished by another process's pass (the Gateway's) since this command's last call.
            job.finished_ms.map(|_| import::Fed {
                finished: true,
                ..import::Fed::default()
            })
        });
        let Some(fed) = fed else {
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

    /// Plans the import and starts its job, unless a job for the same memory is under way and
    /// nothing new was staged (the CLI calls again while it runs): it goes on where it is. A dry
    /// run answers here (`Err` carries every answer that ends the command).
    fn plan_import(
        &mut self,
        request: &ImportRequest,
        workspace: &Path,
        options: Options,
    ) -> Result<(), CommandOutput> {
        let state_dir = self.host.state_dir.clone();
        let staged = state_dir
            .as_deref()
            .is_some_and(import::transcripts::staged);
        let options = Options {
            transcripts: staged,
            ..options
        };
        let under_way = state_dir
            .as_deref()
            .and_then(|dir| Job::load(dir).ok().flatten());
        let run = request.ctx.run_id.clone();
        let going_on = !staged
            && !request.dry_run
            && under_way.is_some_and(|job| {
                let same_memory = job.options.group_id == options.group_id
                    && job.options.daily_notes == options.daily_notes;
                (job.finished_ms.is_none() && same_memory) || (run.is_some() && job.run == run)
            });
        if going_on {
            return Ok(());
        }
        let plan = {
            let decide = |ctx: &HookContext| self.past_turn_group(ctx);
            import::plan_with_transcripts(Some(workspace), state_dir.as_deref(), &options, &decide)
        };
        let plan = match state_dir.as_deref() {
            Some(dir) => honour_forgets(plan, &control::forget::forgotten_by_group(dir)),
            None => plan,
        };
        // Staged once per command: what the next call finds staged is a new request.
        if let Some(dir) = state_dir.as_deref() {
            import::transcripts::clear(dir);
        }
        let per_minute = self.config.settings.capture.import_per_minute;
        if request.dry_run {
            let done = state_dir.as_deref().map(import::ledger).unwrap_or_default();
            let json = request.format == OutputFormat::Json;
            return Err(CommandOutput {
                exit_code: 0,
                stdout: import::render_plan(&plan, &done, per_minute, json),
                stderr: String::new(),
            });
        }
        let Some(dir) = state_dir.as_deref() else {
            return Err(reports::failure(
                1,
                "import: no state directory is mounted, so nothing can be spooled",
            ));
        };
        if let Some(why) = self.capture_paused(&options.group_id) {
            return Err(reports::failure(1, format!("import: not started: {why}")));
        }
        import::start(dir, &plan, &options, time::now_ms(), per_minute, run)
            .map(|_| ())
            .map_err(|e| reports::failure(1, format!("import: {e}")))
    }

    /// The group a past turn goes to, as a live turn in its conversation would (kept-out chats,
    /// expert sessions and turns that are not the user's skipped), or why it is skipped. Never a
    /// session's own group: a turn without a recorded sender goes nowhere.
    fn past_turn_group(&self, ctx: &HookContext) -> Result<String, String> {
        if let Some(why) = self.config.settings.skip.kept_out(ctx) {
            return Err(why);
        }
        if let Some(expert) = self.experts.sessions.expert_of(ctx) {
            return Err(format!(
                "a session of expert {expert}: its runs stay in the session"
            ));
        }
        group_id::group_id_of_known(&self.config.settings.graphiti.group_id, ctx)
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
            transcripts: false,
        })
    }
}

/// The plan without what this plugin's confirmed forgets removed: an item older than its group's
/// `forget --all` stays forgotten. Item forgets keep no text to match by, so a group that had some
/// gets a note in the dry run.
fn honour_forgets(
    mut plan: import::Plan,
    forgotten: &control::forget::ForgottenByGroup,
) -> import::Plan {
    let mut kept = Vec::with_capacity(plan.items.len());
    for item in std::mem::take(&mut plan.items) {
        match forgotten.wiped_at_ms.get(&item.group_id) {
            Some(&wiped) if item.reference_ms < wiped => plan.skipped_entries.push((
                item.source.clone(),
                format!(
                    "older than its chat's `forget --all` of {}: it stays forgotten",
                    time::iso8601(wiped)
                ),
            )),
            _ => kept.push(item),
        }
    }
    plan.items = kept;
    let mut noted = std::collections::BTreeMap::new();
    for item in &plan.items {
        if let Some(&count) = forgotten.item_forgets.get(&item.group_id) {
            noted.insert(item.group_id.clone(), count);
        }
    }
    for (group, count) in noted {
        plan.notes.push(format!(
            "group {group} had {count} confirmed forget(s): the plugin keeps no copy of what they \
             removed, so an imported item may bring some of it back; look at the group's memories \
             after the import"
        ));
    }
    plan
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::memory::import::{Item, Plan, workspace::FileKind};

    fn item(group: &str, text: &str, at_ms: u64) -> Item {
        Item {
            name: import::item_name(group, "session s", text),
            source: format!("session agent:main:telegram:direct:{group}"),
            kind: FileKind::Transcript,
            text: text.into(),
            assistant: String::new(),
            group_id: group.into(),
            user_name: None,
            reference_ms: at_ms,
        }
    }

    #[test]
    fn a_wiped_chat_keeps_what_came_before_forgotten_and_item_forgets_are_noted() {
        let plan = Plan {
            items: vec![
                item("main-dm-ana", "before the wipe", 1_000),
                item("main-dm-ana", "after the wipe", 3_000),
                item("main-dm-bea", "bea's turn", 1_000),
                item("main-dm-cai", "cai's turn", 1_000),
            ],
            ..Plan::default()
        };
        let forgotten = control::forget::ForgottenByGroup {
            wiped_at_ms: [("main-dm-ana".to_string(), 2_000)].into(),
            item_forgets: [("main-dm-bea".to_string(), 2)].into(),
        };
        let plan = honour_forgets(plan, &forgotten);
        let kept: Vec<&str> = plan.items.iter().map(|i| i.text.as_str()).collect();
        assert_eq!(kept, ["after the wipe", "bea's turn", "cai's turn"]);
        assert!(
            plan.skipped_entries[0]
                .1
                .starts_with("older than its chat's `forget --all` of 1970-01-01T00:00:02.000Z"),
            "{:?}",
            plan.skipped_entries
        );
        assert_eq!(plan.notes.len(), 1, "{:?}", plan.notes);
        assert!(
            plan.notes[0].starts_with("group main-dm-bea had 2 confirmed forget(s)"),
            "{:?}",
            plan.notes
        );
    }
}
