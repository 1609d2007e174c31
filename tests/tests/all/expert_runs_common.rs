//! The shim with the `ops-expert` fixture (every runtime feature) and a simulated clock: every
//! runtime call gets its time from the test, so retries, timeouts, cron slots and SLAs are replayed
//! without waiting.

use graphiti_openclaw_tests::{copy_dir, expert_shim_options, temp_dir, workspace};
use host_shim::{
    ChannelMessage, Command, CommandOutput, Delivery, DeliveryKind, ExpertsCommand, HookContext,
    RunOutcome, RunReport, RunStart, RuntimeWork, SetClock, Shim, ShimOptions, ToolCall,
    WebhookAnswer, WebhookRequest,
};
use std::path::{Path, PathBuf};
use tempfile::TempDir;

pub const EXPERT: &str = "ops-expert";
pub const TOKEN: &str = "s3cret-token";
pub const MAIN: &str = "agent:main:main";
pub const MINUTE: u64 = 60_000;
/// Where every test's clock starts: 2026-11-23T10:00:00Z (11:00 in Berlin), hours from the
/// fixture's nightly 02:00 (Berlin) slot, so a test starts no run it did not ask for.
pub const START_MS: u64 = 1_795_428_000_000;

pub fn fixture() -> PathBuf {
    workspace().join("tests/fixtures/experts")
}

pub struct Setup {
    pub shim: Shim,
    pub experts: PathBuf,
    pub state: PathBuf,
    pub workspace: PathBuf,
    pub settings: String,
    /// The simulated clock, epoch ms: what the runtime calls are given.
    pub now: u64,
    /// The component's own wall clock (approvals, commands), kept at `now`.
    pub clock: SetClock,
    /// Whether the host reports the deliveries it is handed as posted (as a Gateway does); off, it
    /// stands for a Gateway that crashed before posting them.
    pub posts: bool,
    /// The directories above, removed when the setup is dropped (after the shim).
    pub _temp_dirs: Vec<TempDir>,
}

pub fn default_settings() -> String {
    format!(
        r#"{{"recall": {{"enabled": false}}, "experts": {{"webhook_token": "{TOKEN}", "channels": {{"ops-expert/support_chat": ["telegram"]}}}}}}"#
    )
}

pub fn options(
    experts: &Path,
    state: &Path,
    agents: &Path,
    settings: &str,
    clock: &SetClock,
) -> ShimOptions {
    let mut options = expert_shim_options(experts, state, agents, settings);
    options.wall_clock = Some(clock.clone());
    options
}

/// A fresh state directory and a copy of the fixture, the clock at [`START_MS`] for the runtime
/// calls and the component's own clock alike.
pub fn setup() -> Setup {
    setup_with(&default_settings())
}

pub fn setup_with(settings: &str) -> Setup {
    setup_from(&fixture(), settings, START_MS)
}

/// A copy of the experts directory `fixture`, a fresh state directory, both clocks at `now`.
pub fn setup_from(fixture: &Path, settings: &str, now: u64) -> Setup {
    let experts = temp_dir("runs-experts");
    copy_dir(fixture, experts.path());
    let state = temp_dir("runs-state");
    let agents = temp_dir("runs-workspace");
    let clock = SetClock::at(now);
    let shim = Shim::new(options(
        experts.path(),
        state.path(),
        agents.path(),
        settings,
        &clock,
    ))
    .expect("shim starts");
    Setup {
        shim,
        experts: experts.path().to_path_buf(),
        state: state.path().to_path_buf(),
        workspace: agents.path().to_path_buf(),
        settings: settings.to_string(),
        now,
        clock,
        posts: true,
        _temp_dirs: vec![experts, state, agents],
    }
}

impl Setup {
    /// Another process on the same directories (a restarted Gateway): a new shim instance.
    /// Replaces `from` by `to` in the package's expert.yaml, then restarts so that it is read.
    pub fn edit_manifest(&mut self, from: &str, to: &str) {
        graphiti_openclaw_tests::replace_in_file(&self.experts.join(EXPERT).join("expert.yaml"), from, to);
        self.restart();
    }

    pub fn restart(&mut self) {
        let fresh = Shim::new(options(
            &self.experts,
            &self.state,
            &self.workspace,
            &self.settings,
            &self.clock,
        ))
        .expect("shim restarts");
        self.shim = fresh;
    }

    pub fn advance(&mut self, ms: u64) {
        self.set_now(self.now + ms);
    }

    /// Moves both clocks to `ms`.
    pub fn set_now(&mut self, ms: u64) {
        self.now = ms;
        self.clock.set(ms);
    }

    pub fn webhook(&mut self, trigger: &str, body: &str) -> WebhookAnswer {
        self.webhook_with(&format!("{EXPERT}/{trigger}"), Some(TOKEN), body.as_bytes())
    }

    pub fn webhook_with(&mut self, path: &str, token: Option<&str>, body: &[u8]) -> WebhookAnswer {
        let mut headers = vec![("content-type".to_string(), "application/json".to_string())];
        if let Some(token) = token {
            headers.push(("authorization".into(), format!("Bearer {token}")));
        }
        let request = WebhookRequest {
            path: path.into(),
            headers,
            body: body.to_vec(),
        };
        self.shim.expert_webhook(&request, self.now)
    }

    /// Accepts a webhook and says the invocation id.
    pub fn accepted(&mut self, trigger: &str, body: &str) -> String {
        let answer = self.webhook(trigger, body);
        assert_eq!(answer.status, 202, "{}", answer.body);
        let body: serde_json::Value = serde_json::from_str(&answer.body).unwrap();
        body["invocation"].as_str().unwrap().to_string()
    }

    pub fn tick(&mut self) -> RuntimeWork {
        let work = self.shim.expert_tick(self.now);
        self.post(&work);
        work
    }

    /// Reports the work's deliveries posted, when this host posts.
    fn post(&mut self, work: &RuntimeWork) {
        if self.posts && !work.deliver.is_empty() {
            let ids: Vec<String> = work.deliver.iter().map(|d| d.run_id.clone()).collect();
            self.shim
                .expert_delivered(&ids, self.now)
                .expect("deliveries reported posted");
        }
    }

    pub fn ended(&mut self, run: &RunStart, outcome: RunOutcome) -> RuntimeWork {
        let report = RunReport {
            invocation: run.invocation.clone(),
            attempt: run.attempt,
            outcome,
        };
        let work = self.shim.expert_run_ended(&report, self.now);
        self.post(&work);
        work
    }

    pub fn completed(&mut self, run: &RunStart, reply: &str) -> RuntimeWork {
        self.ended(run, RunOutcome::Completed(reply.into()))
    }

    pub fn channel(&mut self, channel: &str, sender: &str, text: &str) -> RuntimeWork {
        self.channel_message(&channel_message(channel, sender, text))
    }

    pub fn channel_message(&mut self, message: &ChannelMessage) -> RuntimeWork {
        self.shim.expert_channel_message(message, self.now)
    }

    pub fn command(&mut self, command: ExpertsCommand) -> CommandOutput {
        self.shim.run_command(&Command::Experts(command))
    }

    pub fn queue(&mut self) -> String {
        let out = self.command(ExpertsCommand::Queue);
        assert_eq!(out.exit_code, 0, "{}", out.stderr);
        out.stdout
    }

    /// The tool call of a run's session, through the approval gate.
    pub fn tool_call(
        &mut self,
        run: &RunStart,
        tool: &str,
        arguments: &str,
    ) -> host_shim::ToolVerdict {
        let call = ToolCall {
            tool_name: tool.into(),
            arguments_json: arguments.into(),
            call_id: None,
        };
        self.shim.before_tool_call(&call, &run_context(run))
    }
}

/// The hook context of a run's session, as OpenClaw gives it for a plugin's subagent run (the
/// trigger "user", as the user's own turns have).
pub fn run_context(run: &RunStart) -> HookContext {
    HookContext {
        session_key: Some(run.session_key.clone()),
        session_id: Some(format!("session-{}", run.invocation)),
        agent_id: Some("main".into()),
        sender_id: None,
        sender_name: None,
        chat_id: None,
        channel: None,
        chat_type: host_shim::ChatType::Direct,
        trigger: Some("user".into()),
        run_id: None,
        input_provenance: None,
    }
}

/// A plain message in a chat of `channel` (no session, not a command).
pub fn channel_message(channel: &str, sender: &str, text: &str) -> ChannelMessage {
    ChannelMessage {
        channel_name: channel.into(),
        sender_id: sender.into(),
        message_text: text.into(),
        chat_id: None,
        session_key: None,
        command: false,
    }
}

pub fn ticket(event: &str, ticket: &str) -> String {
    format!(
        r#"{{"event_id": "{event}", "ticket": {{"id": "{ticket}", "summary": "Checkout is down for {ticket}"}}}}"#
    )
}

pub fn started(work: &RuntimeWork) -> Vec<String> {
    work.start.iter().map(|s| s.invocation.clone()).collect()
}

pub fn delivered(work: &RuntimeWork, kind: DeliveryKind) -> Vec<&Delivery> {
    work.deliver.iter().filter(|d| d.kind == kind).collect()
}

/// A manual run of `expert` with a message (no process, not a dry run).
pub fn manual_run(expert: &str, message: &str) -> host_shim::ManualRun {
    host_shim::ManualRun {
        expert: expert.into(),
        message: message.into(),
        process: None,
        inputs_json: String::new(),
        dry_run: false,
    }
}
