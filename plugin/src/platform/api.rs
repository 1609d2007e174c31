//! The component's inputs and outputs as plain Rust, mirroring the WIT records (`component/`
//! converts), so the engine runs and is tested natively.

use serde::Serialize;

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum ChatType {
    Direct,
    Group,
    #[default]
    Unknown,
}

#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct HookContext {
    pub session_key: Option<String>,
    pub session_id: Option<String>,
    pub agent_id: Option<String>,
    pub sender_id: Option<String>,
    /// The sender's display name, where the channel gives one.
    pub sender_name: Option<String>,
    pub chat_id: Option<String>,
    pub channel: Option<String>,
    pub chat_type: ChatType,
    pub trigger: Option<String>,
    pub run_id: Option<String>,
    /// Who wrote the turn's input, as the host classifies it (OpenClaw's `inputProvenance.kind`).
    pub input_provenance: Option<String>,
}

/// A tool call an agent is about to make (OpenClaw's `before_tool_call`).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ToolCall {
    pub tool_name: String,
    /// The call's parameters, as JSON.
    pub arguments_json: String,
    /// The host's id of the call (OpenClaw's `toolCallId`).
    pub call_id: Option<String>,
}

/// A manual run of an expert: a message, or one of its processes with inputs; a dry run executes
/// only `auto` operations and records the others (openexperts §7).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ManualRun {
    pub expert: String,
    pub message: String,
    pub process: Option<String>,
    /// A JSON object, or empty for none.
    pub inputs_json: String,
    pub dry_run: bool,
}

#[derive(Clone, Debug, Default)]
pub struct PromptEvent {
    pub prompt: String,
    pub messages_json: String,
}

#[derive(Clone, Debug, Default)]
pub struct AgentEndEvent {
    pub success: bool,
    pub error: Option<String>,
    pub messages_json: String,
    pub duration_ms: Option<u64>,
}

#[derive(Clone, Debug, Default)]
pub struct IntentTestRequest {
    pub prompt: String,
    pub recall_json: Option<String>,
    pub group_chat: bool,
    pub previous_pack: Option<String>,
    /// The moment routed at, Unix milliseconds.
    pub now_ms: Option<u64>,
    /// When the previous pack was injected, Unix milliseconds [default: `now_ms`].
    pub previous_at_ms: Option<u64>,
    /// Turns in a row that had carried the previous pack, its own turn included.
    pub carried_turns: Option<u32>,
    /// The previous turn's prompt: the entity names it mentioned, for the strict follow-up test.
    pub previous_prompt: Option<String>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OutputFormat {
    Text,
    Json,
}

#[derive(Clone, Debug)]
pub enum Command {
    IntentTest(IntentTestRequest, OutputFormat),
    LintRules,
    /// Cases as JSON, and the accuracy (0..=1) below which the command fails.
    Eval(String, f64),
    CheckConfig,
    /// Search Graphiti as recall would: a query and an optional group id.
    Recall(String, Option<String>),
    Status,
    /// Search the group of the conversation in the context (the `graphiti_search` tool).
    Search(String, HookContext),
    /// Spool text for the conversation's group (the `graphiti_ingest` tool): text, source, context.
    Ingest(String, Option<String>, HookContext),
    /// The last turn of a session (by key), or the most recent turn.
    Debug(Option<String>),
    Experts(ExpertsCommand),
    /// Send what waits in the spool now.
    Flush,
    Spool(SpoolCommand),
    /// The public/private boundary audit of the config directory (and the overlay's terms).
    AuditBoundary,
    /// Recent sessions' groups whose conversations now map elsewhere (old -> new).
    GroupIds,
    /// What the plugin remembers, and whether it remembers a chat at all.
    Memory(MemoryCommand),
    /// The Control UI's figures as JSON: counters, spool depth, approvals waiting.
    Overview,
    /// Import memory-core's workspace files into one group (see `memory::import`).
    Import(ImportRequest),
}

/// What to import, and into which group: `group_id`, else the direct chat of `ctx`'s sender.
#[derive(Clone, Debug, PartialEq)]
pub struct ImportRequest {
    pub ctx: HookContext,
    pub group_id: Option<String>,
    pub daily_notes: bool,
    pub dry_run: bool,
    pub format: OutputFormat,
}

/// A proposed forget, as its confirmer chooses its items.
#[derive(Clone, Debug, PartialEq)]
pub struct ForgetChoice {
    pub id: String,
    pub ctx: HookContext,
    pub operator: bool,
    /// Numbers of proposed items to leave out.
    pub drop: Vec<u32>,
    /// Numbers of left-out items to add.
    pub add: Vec<u32>,
}

#[derive(Clone, Debug, PartialEq)]
pub enum MemoryCommand {
    /// Nothing said in the chat of the context is captured until it resumes.
    Pause(HookContext),
    Resume(HookContext),
    /// The paused chats (their Graphiti groups) and the chats the settings keep out.
    Paused,
    /// What is remembered for the chat of the context: a search's facts and entities, and the
    /// recent episodes. `operator`: asked by an operator (a CLI), not in the chat.
    See {
        query: Option<String>,
        ctx: HookContext,
        operator: bool,
    },
    /// The same as JSON, as much as the APIs return: the user's own data, to keep or move.
    Export {
        query: Option<String>,
        ctx: HookContext,
        operator: bool,
    },
    /// Proposes forgetting what a search of the chat's memories found (or the ids named among its
    /// results; or, for an operator, everything of the chat): lists it under a pending id.
    Forget {
        query: Option<String>,
        ids: Vec<String>,
        everything: bool,
        /// With `everything`: the groups this chat's memories went to under earlier group-id
        /// rules, which other ids may map to too.
        earlier_groups: bool,
        ctx: HookContext,
        operator: bool,
        /// An operator's forget, carried out at once.
        at_once: bool,
    },
    /// Carries out a proposed forget: only in its chat, by the sender it was proposed to, or by an
    /// operator; once, before it expires. The items numbered `drop` are left out and `add` added
    /// first.
    ConfirmForget(ForgetChoice),
    /// Leaves items of a proposed forget out, or adds left-out ones, and shows it as it now stands.
    EditForget(ForgetChoice),
    /// The chats the plugin has seen (the state directory's turn records), as JSON.
    Chats,
    /// Records that what `old` says is no longer true and `now_true` is.
    Correct {
        old: String,
        now_true: String,
        ctx: HookContext,
    },
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SpoolCommand {
    /// What waits, what is in doubt, what was set aside and why.
    List,
    /// Put set-aside entries back at the end of the queue.
    Requeue,
}

/// What one `tick` did with the capture spool.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct TickReport {
    pub sent: u32,
    /// Episodes still waiting (in doubt ones included).
    pub pending: u32,
    /// Episodes sent whose outcome is unknown, waiting to be confirmed or sent again.
    pub in_doubt: u32,
    /// Why sending stopped, when it did.
    pub error: Option<String>,
    /// When the next attempt is due, if sending is backing off.
    pub retry_in_ms: Option<u64>,
    pub notes: Vec<String>,
}

#[derive(Clone, Debug, Default, PartialEq)]
pub struct CommandOutput {
    pub exit_code: u8,
    pub stdout: String,
    pub stderr: String,
}

impl CommandOutput {
    /// A command that failed: `message` on stderr, as one line.
    pub fn failure(exit_code: u8, message: impl Into<String>) -> CommandOutput {
        CommandOutput {
            exit_code,
            stdout: String::new(),
            stderr: message.into() + "\n",
        }
    }

    pub fn success(stdout: String) -> CommandOutput {
        CommandOutput {
            exit_code: 0,
            stdout,
            stderr: String::new(),
        }
    }
}

#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct ConfigSummary {
    pub rules: u32,
    pub packs: u32,
    pub composition_rules: u32,
    pub files: Vec<String>,
    pub warnings: Vec<String>,
    pub graphiti_url: String,
    /// The FalkorDB the settings in force name, or "".
    pub falkordb_url: String,
}

/// A load that found errors: every error, and what is in force instead.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct ConfigFailure {
    pub errors: Vec<ConfigError>,
    /// One sentence per concern whose load failed: what is in force instead.
    pub in_force: Vec<String>,
    /// The Graphiti endpoint in force (the last good settings', or the default).
    pub graphiti_url: String,
    pub falkordb_url: String,
}

pub type ConfigResult = Result<ConfigSummary, ConfigFailure>;

/// A configuration problem, located as precisely as known.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ConfigError {
    pub file: String,
    pub line: Option<u32>,
    pub field: Option<String>,
    pub message: String,
}

impl std::fmt::Display for ConfigError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}", self.file)?;
        if let Some(line) = self.line {
            write!(f, ":{line}")?;
        }
        if let Some(field) = &self.field {
            write!(f, ": {field}")?;
        }
        write!(f, ": {}", self.message)
    }
}

/// The `experts …` commands as data (what the host asks for); `expert_sessions` runs them.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ExpertsCommand {
    List,
    Validate(String),
    Prompt(String),
    Registry,
    Pending,
    Approve(String),
    /// A dry run of the gate: as expert `expert` (else the session's expert), for `call` in `ctx`.
    CheckTool {
        expert: Option<String>,
        call: ToolCall,
        ctx: HookContext,
    },
    /// The `expert_knowledge` tool: the list, or one file by name, in the calling session `ctx`.
    Knowledge {
        name: Option<String>,
        ctx: HookContext,
    },
    /// Dry run of a trigger: expert, trigger, payload JSON.
    Fire {
        expert: String,
        trigger: String,
        payload_json: String,
    },
    Queue,
    DeadLetters,
    Replay(String),
    Reject(String),
    /// A manual run.
    Run(ManualRun),
    /// The `expert_step` tool: the step's text, in the calling session.
    Step {
        step: String,
        ctx: HookContext,
    },
    /// The `expert_learning` tool: the proposal (JSON), in the calling session.
    Learn {
        proposal_json: String,
        ctx: HookContext,
    },
    /// Cron slots due up to this epoch ms.
    Due(u64),
    /// The `expert_function` tool: function name, inputs (JSON), the calling session.
    Function {
        name: String,
        inputs_json: String,
        ctx: HookContext,
    },
    /// An isolated function's child session ended: function name, its reply, the calling session.
    FunctionEnded {
        name: String,
        reply: String,
        ctx: HookContext,
    },
    Install(InstallSource),
    /// Expert, abstract tool, MCP server.
    Bind {
        expert: String,
        tool: String,
        server: String,
    },
    Remove(String),
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum InstallSource {
    /// A directory the host mounted at `/install`, as the user named it.
    Directory(String),
    /// An archive's name and bytes.
    Archive(String, Vec<u8>),
}

/// A run the host must start (WIT `run-start`).
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct RunStart {
    pub invocation: String,
    pub attempt: u32,
    pub expert: String,
    pub session_key: String,
    pub message: String,
    pub timeout_ms: Option<u64>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum DeliveryKind {
    Result,
    Escalation,
    Approval,
    Draft,
    SlaWarning,
    Notice,
}

/// Text for the main session (WIT `delivery`).
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Delivery {
    pub expert: String,
    pub invocation: Option<String>,
    pub kind: DeliveryKind,
    pub session_key: String,
    pub text: String,
}

/// Run ids of the plugin's own deliveries begin with this (see [`Delivery::run_id`]).
const DELIVERY_RUN_PREFIX: &str = "graphiti-openclaw:deliver:";

impl Delivery {
    /// The run id the host posts it under: the same delivery posted twice is one turn, and a turn
    /// with this run id is known as the plugin's own delivery ([`is_delivery_run`]).
    pub fn run_id(&self) -> String {
        let kind = serde_json::to_value(self.kind).unwrap_or_default();
        format!(
            "{DELIVERY_RUN_PREFIX}{}:{}:{}",
            self.invocation.as_deref().unwrap_or(&self.expert),
            kind.as_str().unwrap_or_default(),
            delivery_text_digest(&self.text)
        )
    }
}

/// The last part of a delivery's run id: its text's SHA-256, first 8 bytes in hex.
fn delivery_text_digest(text: &str) -> String {
    use sha2::{Digest, Sha256};
    let digest = Sha256::digest(text.as_bytes());
    digest.iter().take(8).map(|b| format!("{b:02x}")).collect()
}

/// Whether a turn's run id is one of the plugin's own deliveries.
pub fn is_delivery_run(run_id: &str) -> bool {
    run_id.starts_with(DELIVERY_RUN_PREFIX)
}

/// Whether `text` is the text of the delivery posted under `run_id`.
pub fn is_text_of_delivery(run_id: &str, text: &str) -> bool {
    is_delivery_run(run_id)
        && run_id
            .rsplit_once(':')
            .is_some_and(|(_, digest)| digest == delivery_text_digest(text))
}

/// What the host must do after a runtime call (WIT `runtime-work`).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct RuntimeWork {
    pub start: Vec<RunStart>,
    pub deliver: Vec<Delivery>,
    /// Sessions of invocations that finished for good, for the host to delete.
    pub end_sessions: Vec<String>,
    pub notes: Vec<String>,
    pub tick_in_ms: Option<u64>,
}

#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct WebhookRequest {
    pub path: String,
    pub headers: Vec<(String, String)>,
    pub body: Vec<u8>,
}

#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct WebhookAnswer {
    pub status: u16,
    pub body: String,
    pub work: RuntimeWork,
}

#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ChannelMessage {
    pub channel_name: String,
    pub sender_id: String,
    pub message_text: String,
    pub chat_id: Option<String>,
    /// The session the message is in.
    pub session_key: Option<String>,
    /// The host classifies the text as a command.
    pub command: bool,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum RunOutcome {
    Completed(String),
    Failed(String),
    TimedOut,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RunReport {
    pub invocation: String,
    pub attempt: u32,
    pub outcome: RunOutcome,
}
