//! The package as loaded (spec §2–§11): the validated data every other part of `experts` reads, and
//! the naming rules (tool names, `tool.operation` keys) the checks share.

use crate::experts::policy::{Policy, Tier};
use std::path::PathBuf;
use std::rc::Rc;

pub const MANIFEST_FILE: &str = "expert.yaml";

/// Bounds on what the loader reads, so a huge or hostile package cannot exhaust memory.
#[derive(Clone, Debug)]
pub struct LoadLimits {
    /// Largest file read (expert.yaml, components, bindings, learnings).
    pub max_file_bytes: u64,
}

impl Default for LoadLimits {
    fn default() -> Self {
        LoadLimits {
            max_file_bytes: 1024 * 1024,
        }
    }
}

/// A validated package. Lists are sorted by name (state files by path; persona files keep the
/// manifest's order, which is the author's reading order).
#[derive(Clone, Debug)]
pub struct Package {
    pub dir: PathBuf,
    pub spec: String,
    pub name: String,
    pub version: String,
    pub description: String,
    pub author: Option<String>,
    pub license: Option<String>,
    /// `requires.tools`, sorted and deduplicated.
    pub required_tools: Vec<String>,
    pub triggers: Vec<Trigger>,
    pub concurrency: Concurrency,
    /// The package's execution defaults (spec §3); each process has its effective copy.
    pub execution: Execution,
    /// The package's delivery defaults (spec §3; `sla_secs` is always `None` here).
    pub delivery: Delivery,
    pub policy: Policy,
    pub learning: Learning,
    pub outputs: Vec<String>,
    pub orchestrator: Document,
    pub persona: Vec<Document>,
    pub functions: Vec<Function>,
    pub processes: Vec<Process>,
    pub tools: Vec<Tool>,
    /// All knowledge, private included: callers that show knowledge use [`Package::public_knowledge`].
    pub knowledge: Vec<Knowledge>,
    pub state: Vec<StateFile>,
}

impl Package {
    /// Knowledge that may appear in indexes and summaries (spec §9: never `private`).
    pub fn public_knowledge(&self) -> impl Iterator<Item = &Knowledge> {
        self.knowledge
            .iter()
            .filter(|k| k.kind != KnowledgeKind::Private)
    }

    pub fn tool(&self, name: &str) -> Option<&Tool> {
        self.tools.iter().find(|t| t.name == name)
    }

    /// Every operation the policy applies to, as `tool.operation`, sorted: the operations of the tool
    /// files plus any well-formed override key (an override is explicit even when undeclared).
    pub fn operations(&self) -> Vec<String> {
        let mut ops: Vec<String> = self
            .tools
            .iter()
            .flat_map(|t| {
                t.operations
                    .iter()
                    .map(move |o| format!("{}.{}", t.name, o.name))
            })
            .collect();
        ops.extend(
            self.policy
                .overrides
                .keys()
                .filter(|k| split_operation(k).is_some())
                .cloned(),
        );
        crate::platform::sorting::sort(&mut ops);
        ops.dedup();
        ops
    }

    /// The effective tier of `tool.operation`.
    pub fn tier(&self, operation: &str) -> Tier {
        self.policy.tier(operation)
    }

    /// The session label the main agent delegates to (loader design §5).
    pub fn session_label(&self) -> String {
        format!("expert:{}", self.name)
    }
}

/// `tool.operation` split at the first dot; `None` unless both parts are non-empty.
pub fn split_operation(key: &str) -> Option<(&str, &str)> {
    key.split_once('.')
        .filter(|(t, o)| !t.is_empty() && !o.is_empty())
}

/// A tool name as `requires.tools` and tool files write it: non-empty, without `.` (a `.` would make
/// `tool.operation` ambiguous).
pub fn is_tool_name(name: &str) -> bool {
    !(name.trim().is_empty() || name.contains('.'))
}

/// A markdown file loaded whole (orchestrator, persona).
#[derive(Clone, Debug)]
pub struct Document {
    /// Relative to the package, as written in `components` (without a leading `./`).
    pub path: String,
    pub text: String,
}

#[derive(Clone, Debug)]
pub struct Function {
    pub path: String,
    pub name: String,
    pub description: String,
    pub tools: Vec<String>,
    pub knowledge: Vec<String>,
    /// Frontmatter `session: isolated`: runs in a child session (`inline` or absent: false).
    pub isolated: bool,
    pub text: String,
}

#[derive(Clone, Debug)]
pub struct Process {
    pub path: String,
    pub name: String,
    pub description: String,
    pub trigger: Option<String>,
    pub functions: Vec<String>,
    pub tools: Vec<String>,
    /// The package's execution defaults with this process's overrides, field by field.
    pub execution: Execution,
    /// The package's delivery defaults with this process's overrides, field by field.
    pub delivery: Delivery,
    /// The names of the declared `inputs`, in file order.
    pub inputs: Vec<String>,
    /// The names of the declared `outputs`, in file order.
    pub outputs: Vec<String>,
    /// `context` paths to preload, cleaned like component paths (no `./`, never leaving the package).
    pub context: Vec<String>,
    /// The scratchpad path pattern as written (`./scratch/triage-{message_id}.md`).
    pub scratchpad: Option<String>,
    pub text: String,
}

#[derive(Clone, Debug)]
pub struct Tool {
    pub path: String,
    pub name: String,
    pub description: Option<String>,
    /// Sorted by name. The files' `approval` fields are documentation only and not read.
    pub operations: Vec<Operation>,
}

impl Tool {
    /// Whether this tool's file declares `operation`.
    pub fn declares(&self, operation: &str) -> bool {
        self.operations.iter().any(|o| o.name == operation)
    }
}

#[derive(Clone, Debug)]
pub struct Operation {
    pub name: String,
    pub description: Option<String>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum KnowledgeKind {
    Static,
    Dynamic,
    Private,
}

#[derive(Clone, Debug)]
pub struct Knowledge {
    pub path: String,
    pub name: String,
    pub description: Option<String>,
    pub kind: KnowledgeKind,
    pub text: String,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StateScope {
    Session,
    Persistent,
}

impl StateScope {
    pub fn as_str(self) -> &'static str {
        match self {
            StateScope::Session => "session",
            StateScope::Persistent => "persistent",
        }
    }
}

#[derive(Clone, Debug)]
pub struct StateFile {
    pub path: String,
    pub name: String,
    pub description: Option<String>,
    pub scope: StateScope,
    /// The template, written to the workspace on first run (and at each session for `session` scope).
    pub text: String,
}

#[derive(Clone, Debug)]
pub struct Trigger {
    pub name: String,
    /// `webhook`, `cron` or `channel`.
    pub kind: String,
    pub process: String,
    pub preset: Option<String>,
    pub requires_tool: Option<String>,
    pub expr: Option<String>,
    pub tz: Option<String>,
    /// The effective mode: the trigger's own, else the package default, else `parallel`.
    pub concurrency: String,
    /// The effective key when the mode is `serial_per_key`.
    pub concurrency_key: Option<String>,
    pub session: SessionMode,
    /// The payload path identifying duplicate events (`message_id`).
    pub dedupe_key: Option<String>,
    /// Process input name → payload path (`messages[0].id`), in manifest order.
    pub payload_mapping: Vec<(String, String)>,
    pub description: Option<String>,
    /// Why validation made it inactive (a `requires_tool` not in `requires.tools`, an unknown
    /// `tz`), if it did.
    pub inactive_because: Option<String>,
}

impl Trigger {
    /// Why the trigger never fires, if it does not (spec §3): a `preset` this runtime does not
    /// provide (it provides none), a required tool the package does not declare, an unknown time
    /// zone.
    pub fn inactive(&self) -> Option<String> {
        self.preset
            .as_ref()
            .map(|preset| format!("preset {preset:?} is not one this runtime provides"))
            .or_else(|| self.inactive_because.clone())
    }
}

#[derive(Clone, Debug)]
pub struct Concurrency {
    pub default: String,
    pub key: Option<String>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SessionMode {
    /// A new session per invocation (spec default).
    Isolated,
    /// Queued into the main agent's session.
    Main,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Backoff {
    Fixed,
    Exponential,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OnFailure {
    Escalate,
    Abandon,
    DeadLetter,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DeliveryFormat {
    Narrative,
    Structured,
    Both,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SlaBreach {
    Warn,
    Escalate,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Retry {
    /// Attempts including the first (at least 1).
    pub max_attempts: u32,
    pub backoff: Backoff,
    /// The delay before the first retry.
    pub delay_secs: u64,
}

/// How a process runs (spec §3 `execution`); `Default` is the spec's defaults.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Execution {
    /// `None`: no timeout (the spec's default).
    pub timeout_secs: Option<u64>,
    pub idempotent: bool,
    pub retry: Retry,
    pub on_failure: OnFailure,
    pub resume_from_execution_log: bool,
}

impl Default for Execution {
    fn default() -> Self {
        Execution {
            timeout_secs: None,
            idempotent: false,
            retry: Retry {
                max_attempts: 1,
                backoff: Backoff::Exponential,
                delay_secs: 30,
            },
            on_failure: OnFailure::Escalate,
            resume_from_execution_log: false,
        }
    }
}

/// Where and how a process's output goes (spec §3 and §7 `delivery`); `Default` is the spec's defaults.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Delivery {
    pub format: DeliveryFormat,
    /// Always `main`: other channels are refused at load time.
    pub channel: String,
    /// Expected time from trigger to delivery; set per process only.
    pub sla_secs: Option<u64>,
    pub sla_breach: SlaBreach,
}

impl Default for Delivery {
    fn default() -> Self {
        Delivery {
            format: DeliveryFormat::Both,
            channel: "main".into(),
            sla_secs: None,
            sla_breach: SlaBreach::Warn,
        }
    }
}

/// Continuous learning (spec §3 `learning`); `Default` is the spec's defaults.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Learning {
    pub enabled: bool,
    /// The tier for persisting a proposed learning.
    pub approval: Tier,
    pub max_entries_per_file: u32,
}

impl Default for Learning {
    fn default() -> Self {
        Learning {
            enabled: false,
            approval: Tier::Confirm,
            max_entries_per_file: 50,
        }
    }
}

/// Whether the host knows a time zone (`Err`: its words why not). The component carries no zone
/// database: without this, a misspelled zone would load and its trigger never fire.
#[derive(Clone)]
pub struct ZoneCheck(Rc<ZoneLookup>);

type ZoneLookup = dyn Fn(&str) -> Result<(), String>;

impl ZoneCheck {
    pub fn new(check: impl Fn(&str) -> Result<(), String> + 'static) -> ZoneCheck {
        ZoneCheck(Rc::new(check))
    }

    pub fn check(&self, zone: &str) -> Result<(), String> {
        (self.0)(zone)
    }
}

impl std::fmt::Debug for ZoneCheck {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("ZoneCheck")
    }
}
