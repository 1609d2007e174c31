//! The `graphiti-openclaw` command line as clap parses it: the global options and the subcommands,
//! with their help. Its names are those of `openclaw graphiti` (`docs/cli-grammar.json` lists both
//! CLIs' commands, and a test holds each to it); the earlier `memory <command>` names stay as
//! hidden aliases.

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand};

#[derive(Parser)]
#[command(
    name = "graphiti-openclaw",
    version,
    about = "Run the graphiti-openclaw component from the command line"
)]
pub struct Cli {
    #[command(flatten)]
    pub options: GlobalOptions,
    #[command(subcommand)]
    pub command: CliCommand,
}

/// Every subcommand takes these; its help lists them apart, after its own.
#[derive(Args)]
#[command(next_help_heading = "Global options")]
pub struct GlobalOptions {
    /// The component [default: $GRAPHITI_OPENCLAW_WASM, else plugin.wasm next to this executable,
    /// else the workspace's target/wasm32-wasip2/component/graphiti_openclaw.wasm]
    #[arg(long, global = true, value_name = "PATH")]
    pub wasm: Option<PathBuf>,
    /// Configuration directory, mounted read-only
    #[arg(long, global = true, value_name = "DIR", default_value = "config")]
    pub config_dir: PathBuf,
    /// Overlay directory, mounted read-only
    #[arg(long, global = true, value_name = "DIR")]
    pub overlay_dir: Option<PathBuf>,
    /// State directory, mounted read-write; created if missing
    /// [default: $XDG_STATE_HOME/graphiti-openclaw or ~/.local/state/graphiti-openclaw]
    #[arg(long, global = true, value_name = "DIR")]
    pub state_dir: Option<PathBuf>,
    /// Compiled-component cache
    /// [default: $XDG_CACHE_HOME/graphiti-openclaw or ~/.cache/graphiti-openclaw]
    #[arg(long, global = true, value_name = "DIR")]
    pub cache_dir: Option<PathBuf>,
    /// An origin the component may send HTTP requests to, e.g. http://localhost:8000, or the
    /// FalkorDB behind Graphiti it may query, e.g. redis://localhost:6379 (repeatable)
    #[arg(long = "allow-origin", global = true, value_name = "ORIGIN")]
    pub allowed_origins: Vec<String>,
    /// A file holding the password of the redis:// origin's database user; read by this host,
    /// never given to the component
    #[arg(long, global = true, value_name = "PATH")]
    pub database_password_file: Option<PathBuf>,
    /// PEM CA certificates trusted for https origins besides the system's roots (which
    /// $SSL_CERT_FILE and $SSL_CERT_DIR replace, as in OpenSSL)
    #[arg(long, global = true, value_name = "PATH")]
    pub ca_file: Option<PathBuf>,
    /// Time limit of each call into the component, except those that send (--send-timeout-ms)
    #[arg(long, global = true, value_name = "N", default_value_t = 5000)]
    pub call_timeout_ms: u64,
    /// Time limit of the calls that send captured turns to Graphiti (flush, and the send after a
    /// turn or an ingest); above the component's own send lease (flush budget plus two send
    /// timeouts, 68 s with the default settings)
    #[arg(long, global = true, value_name = "N", default_value_t = 120000)]
    pub send_timeout_ms: u64,
    /// Memory limit of the component
    #[arg(long, global = true, value_name = "N", default_value_t = 256)]
    pub memory_limit_mb: usize,
    /// Expert packages, mounted read-only [default: <config-dir>/experts when it exists]
    #[arg(long, global = true, value_name = "DIR")]
    pub experts_dir: Option<PathBuf>,
    /// Set by `experts install|bind|remove` only: the experts directory is mounted writable.
    #[arg(skip)]
    pub experts_writable: bool,
    /// Set by `experts install DIR`: the package directory, mounted read-only at /install.
    #[arg(skip)]
    pub install_dir: Option<PathBuf>,
    /// The agents' workspace (EXPERTS.md, expert state), mounted read-write
    #[arg(long, global = true, value_name = "DIR")]
    pub workspace_dir: Option<PathBuf>,
    /// Settings as a JSON file, laid over the settings file key by key (as OpenClaw's plugin config)
    #[arg(long, global = true, value_name = "FILE")]
    pub settings: Option<PathBuf>,
    /// Do not echo the component's log lines to stderr
    #[arg(long, global = true)]
    pub quiet: bool,
}

#[derive(Subcommand)]
pub enum CliCommand {
    /// Dry run: matched rules, scores, trace and the injection for a prompt. Writes and sends nothing.
    IntentTest {
        /// The user's prompt
        prompt: String,
        /// Recalled data as Graphiti returns it ({"nodes":[…],"facts":[…]})
        #[arg(long, value_name = "FILE")]
        recall: Option<PathBuf>,
        /// Route as in a group chat
        #[arg(long)]
        group: bool,
        /// The previous turn's pack (pack id or intent id)
        #[arg(long, value_name = "ID")]
        previous_pack: Option<String>,
        /// The moment routed at: RFC 3339 (2026-03-01T10:47:00Z) or epoch milliseconds
        /// [default: now]
        #[arg(long, value_name = "TIME")]
        now: Option<String>,
        /// When the previous pack was injected, as --now [default: --now, just before]
        #[arg(long, value_name = "TIME", requires = "previous_pack")]
        previous_at: Option<String>,
        /// Turns in a row that had carried the previous pack without a keyword, its turn included
        #[arg(long, value_name = "N", requires = "previous_pack")]
        carried_turns: Option<u32>,
        /// The previous turn's prompt: the entity names it mentioned (strict_follow_up)
        #[arg(long, value_name = "TEXT", requires = "previous_pack")]
        previous_prompt: Option<String>,
        /// Print the result as JSON
        #[arg(long)]
        json: bool,
    },
    /// Fail when two rules share more than half of their keywords
    LintRules,
    /// Compare cases against the rules; fail below the threshold accuracy
    Eval {
        /// The cases to compare, as JSON
        #[arg(value_name = "CASES.json")]
        cases: PathBuf,
        /// Lowest accepted accuracy, 0 to 1
        #[arg(long, default_value_t = 0.9)]
        threshold: f64,
    },
    /// Load the configuration and report what was read
    CheckConfig,
    /// Fail when the config directory holds anything that looks private: e-mail addresses, phone
    /// numbers, tokens and keys, and (with --overlay-dir) the overlay's terms. Writes and sends nothing
    AuditBoundary,
    /// Search Graphiti as recall would and print the <graphiti-context> block
    Recall {
        /// What to search for
        query: String,
        /// The Graphiti group to search (`group-ids` lists recent sessions' groups)
        #[arg(long, value_name = "ID", required = true)]
        group_id: Option<String>,
    },
    /// Graphiti reachability, recall and capture counters, spool depth, pack injection rates
    Status,
    /// Remember a text: spooled for the direct-chat group of --sender, sent to Graphiti at once
    Ingest {
        /// The text to remember
        text: String,
        /// The sender's id (part of the default Graphiti group id)
        #[arg(long, value_name = "ID", default_value = "demo-user")]
        sender: String,
    },
    /// Import what memory-core remembers in the agents' workspace (--workspace-dir: MEMORY.md,
    /// USER.md, memory/imports/, with --daily-notes the daily notes) into one chat's memory, each
    /// entry once, at capture.import_per_minute; runs until every item is sent, and an import
    /// interrupted goes on where it stopped when run again
    Import(ImportArgs),
    /// Expert packages and their runs
    Experts {
        #[command(subcommand)]
        command: ExpertsCli,
    },
    /// The last turn of a session: recall outcome, decision trace, what was injected
    Debug {
        /// Session key [default: the most recent turn of any session]
        #[arg(long, value_name = "KEY")]
        session: Option<String>,
    },
    /// Send what waits in the capture spool now; exit 0 when the spool is empty afterwards, else 1
    Flush,
    /// Recent sessions' Graphiti groups that their conversations no longer map to (old -> new)
    GroupIds,
    /// The capture spool: list what waits, is in doubt or was set aside; requeue what was set aside
    Spool {
        #[command(subcommand)]
        command: Option<SpoolCli>,
    },
    /// A chat's memories: see, export, forget or correct them; pause or resume capture
    #[command(flatten)]
    Chat(MemoryCli),
    /// The same commands under their earlier names (`memory see` is `memories`)
    #[command(hide = true)]
    Memory {
        #[command(subcommand)]
        command: MemoryCli,
    },
    /// The Control UI's figures as JSON: counters, memories per turn, pack rates, spool depth,
    /// approvals waiting
    Overview,
    /// Simulate one turn: before-agent-start, then agent-end with the given reply
    Turn {
        /// The user's prompt
        prompt: String,
        /// The assistant's reply
        #[arg(long, default_value = "OK")]
        reply: String,
        /// Run as a group chat
        #[arg(long)]
        group: bool,
        /// Session key, for the component's per-session state; a key that names its chat
        /// (`agent:main:telegram:group:42`, `…:direct:ana`) names the turn's chat or sender too
        #[arg(long, value_name = "KEY", default_value = "demo")]
        session: String,
        /// The sender's id (part of the default Graphiti group id) [default: the session key's
        /// direct peer, else demo-user]
        #[arg(long, value_name = "ID")]
        sender: Option<String>,
        /// Print both answers as one JSON object
        #[arg(long)]
        json: bool,
    },
}

#[derive(Subcommand)]
pub enum MemoryCli {
    /// Capture nothing from a chat until it resumes (what was remembered is still recalled)
    Pause(ChatArgs),
    /// Capture a paused chat again
    Resume(ChatArgs),
    /// The paused chats (their Graphiti groups), and the chats the settings keep out of memory
    Paused,
    /// What Graphiti remembers for a chat: the facts and entities a search returns (current and
    /// no longer true apart, with their dates and ids), and the recent episodes
    #[command(alias = "see")]
    Memories {
        /// The search [default: the recent episodes only]
        query: Option<String>,
        #[command(flatten)]
        chat: ChatArgs,
    },
    /// The same as one JSON document on stdout, as much as Graphiti returns: a chat's own data, to
    /// keep or move
    Export {
        /// The search for facts and entities [default: the episodes only]
        query: Option<String>,
        #[command(flatten)]
        chat: ChatArgs,
    },
    /// What forgetting would delete in a chat's memories, under a forget id to confirm: the facts,
    /// episodes and captures not yet sent that have most of its words, numbered, and the weaker
    /// matches apart
    Forget {
        /// The words of what to forget (a search of the chat's memories)
        #[arg(required_unless_present = "all")]
        query: Option<String>,
        /// Only this id among the search's results and the recent episodes (repeatable)
        #[arg(long = "id", value_name = "ID")]
        ids: Vec<String>,
        /// Everything remembered for the chat
        #[arg(long, conflicts_with_all = ["query", "ids"])]
        all: bool,
        /// With --all, also the groups the chat's memories went to under earlier group-id rules
        /// (other ids may map there too: `group-ids` and the proposal name them)
        #[arg(long, requires = "all")]
        earlier_groups: bool,
        /// Delete at once instead of proposing
        #[arg(long)]
        yes: bool,
        #[command(flatten)]
        chat: ChatArgs,
    },
    /// Delete what a proposed forget listed as proposed, by its id
    ConfirmForget {
        /// The forget id the proposal showed
        id: String,
        #[command(flatten)]
        choice: ForgetChoiceArgs,
    },
    /// Leave items of a proposed forget out, or add left-out ones, and show it as it now stands
    /// (nothing is deleted)
    EditForget {
        /// The forget id the proposal showed
        id: String,
        #[command(flatten)]
        choice: ForgetChoiceArgs,
    },
    /// The chats the plugin has seen (its recent turn records), as JSON: each one's session,
    /// sender or chat id, channel and Graphiti group
    Chats,
    /// Record that a fact of a chat is no longer true, and what is: a correction episode naming
    /// the old fact, from which Graphiti decides
    Correct {
        /// What is no longer true, in words (the chat's fact a search for it finds is named)
        old: String,
        /// What is true now
        now_true: String,
        #[command(flatten)]
        chat: ChatArgs,
    },
}

/// What `import` imports, into which group, and how.
#[derive(Args)]
pub struct ImportArgs {
    /// The sender the workspace belongs to: their direct chat's group
    #[arg(
        long,
        value_name = "ID",
        conflicts_with = "group_id",
        required_unless_present = "group_id"
    )]
    pub sender: Option<String>,
    /// The Graphiti group to import into instead
    #[arg(long, value_name = "ID")]
    pub group_id: Option<String>,
    /// The agent whose memories they are
    #[arg(long, value_name = "ID", default_value = "main")]
    pub agent: String,
    /// Import the daily notes (memory/YYYY-MM-DD*.md) too
    #[arg(long)]
    pub daily_notes: bool,
    /// Past conversations of the last 30 days too, each turn into its own chat's group (OpenClaw
    /// only: they are read through OpenClaw's session store)
    #[arg(long)]
    pub transcripts: bool,
    /// Every past conversation, however old (OpenClaw only)
    #[arg(long)]
    pub all_transcripts: bool,
    /// List what would be sent per group, what is skipped and why, and Graphiti's work;
    /// send nothing
    #[arg(long)]
    pub dry_run: bool,
    /// Print the dry run as JSON
    #[arg(long)]
    pub json: bool,
    /// Start the import and return: later passes (`flush`, `turn`, another `import`) carry
    /// it on, and `status` says how far it is
    #[arg(long)]
    pub no_wait: bool,
}

/// Which items of a proposed forget to leave out or add, by the numbers the proposal showed.
#[derive(Args)]
pub struct ForgetChoiceArgs {
    /// Leave the proposed item numbered N out (repeatable)
    #[arg(long = "drop", value_name = "N")]
    pub drop: Vec<u32>,
    /// Add the left-out item numbered N (repeatable)
    #[arg(long = "add", value_name = "N")]
    pub add: Vec<u32>,
}

/// One chat, as its Graphiti group is named: a direct chat by its sender, a group chat by its id.
#[derive(Args)]
pub struct ChatArgs {
    /// The sender of a direct chat
    #[arg(
        long,
        value_name = "ID",
        conflicts_with = "chat",
        required_unless_present = "chat"
    )]
    pub sender: Option<String>,
    /// The id of a group chat
    #[arg(long, value_name = "ID")]
    pub chat: Option<String>,
    /// The chat's channel ("telegram", "discord", …)
    #[arg(long, value_name = "NAME")]
    pub channel: Option<String>,
    /// The agent whose memories they are
    #[arg(long, value_name = "ID", default_value = "main")]
    pub agent: String,
    /// A session of the chat: `memories` shows its recent turns too
    #[arg(long, value_name = "KEY")]
    pub session: Option<String>,
}

#[derive(Subcommand)]
pub enum SpoolCli {
    /// Every entry: waiting, in doubt (sent, outcome unknown), set aside (with its reason) [default]
    List,
    /// Put every set-aside entry back at the end of the queue, in its original order
    Requeue,
}

#[derive(Subcommand)]
pub enum ExpertsCli {
    /// Installed packages: ✓ ready, ✗ with errors
    List,
    /// Both validation phases of a package (exit 1 on errors)
    Validate {
        /// A package name in the experts directory, or a package directory
        target: String,
    },
    /// The assembled system prompt of a package
    Prompt {
        /// A package name in the experts directory, or a package directory
        target: String,
    },
    /// EXPERTS.md, as the main agent gets it
    Registry,
    /// Tool calls waiting for the user's approval
    Pending,
    /// Approve one pending tool call
    Approve {
        /// The request id, as `pending` shows it
        id: String,
    },
    /// What the approval check would decide for a tool call: operation, tier, matching approval,
    /// verdict. A dry run: nothing is executed, recorded or used
    CheckTool {
        /// The tool as called, e.g. hold_booking, or tool_call for a call through Tool Search
        tool: String,
        /// Its arguments, as JSON
        #[arg(default_value = "{}")]
        arguments: String,
        /// The session the call is made in (its key); its expert comes from the key's label or the
        /// settings
        #[arg(long, value_name = "KEY", required_unless_present = "expert")]
        session: Option<String>,
        /// Judge the call as this expert's (approvals apply only with --session)
        #[arg(long, value_name = "NAME")]
        expert: Option<String>,
        /// The calling agent's id (for sessions mapped by agent id)
        #[arg(long, value_name = "ID")]
        agent: Option<String>,
    },
    /// Dry run of a trigger with a payload: the process, its inputs, the queue it joins, whether it
    /// is a duplicate, the run's message. Records nothing
    Fire {
        expert: String,
        trigger: String,
        /// The event's payload, a JSON file (a webhook's body; for a channel trigger
        /// {"sender_id", "message_text", "channel_name"})
        #[arg(long, value_name = "FILE")]
        payload: PathBuf,
    },
    /// Expert runs not finished: queued, running, waiting for an approval or a retry
    Queue,
    /// Runs kept for review by `on_failure: dead_letter`
    DeadLetters,
    /// Queue a dead-lettered or failed run again (the OpenClaw Gateway's runtime starts it)
    Replay {
        /// The invocation id, e.g. inv-12
        id: String,
    },
    /// Reject a pending approval (a tool call or a proposed learning)
    Reject {
        /// The request id, as `pending` or the request shows it
        id: String,
    },
    /// Queue a manual run of an expert, or of one of its processes, as a dry run when asked (the
    /// OpenClaw Gateway's runtime starts it)
    Run {
        expert: String,
        /// What the expert should do (with --process: a note for the run)
        #[arg(required_unless_present = "process")]
        message: Option<String>,
        /// Run this process of the expert's package
        #[arg(long, value_name = "NAME")]
        process: Option<String>,
        /// The process's inputs, a JSON object (e.g. '{"destination": "Lisbon"}')
        #[arg(long, value_name = "JSON", requires = "process")]
        inputs: Option<String>,
        /// Execute only AUTO operations; record every other call; the result is the run's
        /// planned-execution report (openexperts §7)
        #[arg(long)]
        dry_run: bool,
    },
    /// Cron slots due from the last check up to a moment (a dry run of the schedule)
    Due {
        /// RFC 3339 (2026-11-23T07:00:00+01:00) or epoch milliseconds [default: now]
        #[arg(long, value_name = "TIME")]
        at: Option<String>,
    },
    /// Install a package (a directory or a .tgz), validated before it is copied in
    Install { source: PathBuf },
    /// Bind a package's abstract tool to an MCP server (writes its bindings.yaml)
    Bind {
        expert: String,
        tool: String,
        server: String,
    },
    /// Remove an installed package (its runtime state and workspace stay)
    Remove { expert: String },
}
