//! `graphiti-openclaw`: the component's operator commands and a simulated turn, under the host shim.

use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Duration;

use clap::{Args, Parser, Subcommand};
use host_shim::{
    AgentEndEvent, CaptureOutcome, ChatType, Command, CommandOutput, ExpertsCommand, HookContext,
    IngestRequest, Injection, IntentTestRequest, Limits, OutputFormat, PromptEvent, Shim,
    ShimError, ShimOptions, SpoolCommand, TickReport, ToolCall,
};

#[derive(Parser)]
#[command(
    name = "graphiti-openclaw",
    version,
    about = "Run the graphiti-openclaw component from the command line"
)]
struct Cli {
    #[command(flatten)]
    options: GlobalOptions,
    #[command(subcommand)]
    command: CliCommand,
}

#[derive(Args)]
struct GlobalOptions {
    /// The component [default: $GRAPHITI_OPENCLAW_WASM, else plugin.wasm next to this executable,
    /// else the workspace's target/wasm32-wasip2/component/graphiti_openclaw.wasm]
    #[arg(long, global = true, value_name = "PATH")]
    wasm: Option<PathBuf>,
    /// Configuration directory, mounted read-only
    #[arg(long, global = true, value_name = "DIR", default_value = "config")]
    config_dir: PathBuf,
    /// Overlay directory, mounted read-only
    #[arg(long, global = true, value_name = "DIR")]
    overlay_dir: Option<PathBuf>,
    /// State directory, mounted read-write; created if missing
    /// [default: $XDG_STATE_HOME/graphiti-openclaw or ~/.local/state/graphiti-openclaw]
    #[arg(long, global = true, value_name = "DIR")]
    state_dir: Option<PathBuf>,
    /// Compiled-component cache
    /// [default: $XDG_CACHE_HOME/graphiti-openclaw or ~/.cache/graphiti-openclaw]
    #[arg(long, global = true, value_name = "DIR")]
    cache_dir: Option<PathBuf>,
    /// An origin the component may send HTTP requests to, e.g. http://localhost:8000 (repeatable)
    #[arg(long = "allow-origin", global = true, value_name = "ORIGIN")]
    allowed_origins: Vec<String>,
    /// Time limit of each call into the component, except those that send (--send-timeout-ms)
    #[arg(long, global = true, value_name = "N", default_value_t = 5000)]
    call_timeout_ms: u64,
    /// Time limit of the calls that send captured turns to Graphiti (flush, and the send after a
    /// turn or an ingest); above the component's own send lease (flush budget plus two send
    /// timeouts, 68 s with the default settings)
    #[arg(long, global = true, value_name = "N", default_value_t = 120000)]
    send_timeout_ms: u64,
    /// Memory limit of the component
    #[arg(long, global = true, value_name = "N", default_value_t = 256)]
    memory_limit_mb: usize,
    /// Expert packages, mounted read-only [default: <config-dir>/experts when it exists]
    #[arg(long, global = true, value_name = "DIR")]
    experts_dir: Option<PathBuf>,
    /// The agents' workspace (EXPERTS.md, expert state), mounted read-write
    #[arg(long, global = true, value_name = "DIR")]
    workspace_dir: Option<PathBuf>,
    /// Settings as a JSON file, laid over the settings file key by key (as OpenClaw's plugin config)
    #[arg(long, global = true, value_name = "FILE")]
    settings: Option<PathBuf>,
    /// Do not echo the component's log lines to stderr
    #[arg(long, global = true)]
    quiet: bool,
}

#[derive(Subcommand)]
enum CliCommand {
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
    /// Search Graphiti as recall would and print the <graphiti-context> block
    Recall {
        /// What to search for
        query: String,
        /// The Graphiti group to search [default: the direct-chat template with an empty context]
        #[arg(long, value_name = "ID")]
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
    /// Expert packages: list, validate, prompt, registry, pending approvals, approve, check-tool
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
    /// The capture spool: list what waits, is in doubt or was set aside; requeue what was set aside
    Spool {
        #[command(subcommand)]
        command: Option<SpoolCli>,
    },
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
        /// Session key, for the component's per-session state
        #[arg(long, value_name = "KEY", default_value = "demo")]
        session: String,
        /// The sender's id (part of the default Graphiti group id)
        #[arg(long, value_name = "ID", default_value = "demo-user")]
        sender: String,
        /// Print both answers as one JSON object
        #[arg(long)]
        json: bool,
    },
}

#[derive(Subcommand)]
enum SpoolCli {
    /// Every entry: waiting, in doubt (sent, outcome unknown), set aside (with its reason) [default]
    List,
    /// Put every set-aside entry back at the end of the queue, in its original order
    Requeue,
}

#[derive(Subcommand)]
enum ExpertsCli {
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
}

fn main() -> ExitCode {
    // A file-size limit (`ulimit -f`) or a full disk must fail the write that hits it (the cache
    // entry, a spool entry: each says so), not kill the whole CLI with SIGXFSZ.
    // SAFETY: setting a signal's disposition to "ignore" before any thread starts.
    unsafe {
        libc::signal(libc::SIGXFSZ, libc::SIG_IGN);
    }
    // clap exits with 2 on usage errors.
    let cli = Cli::parse();
    match run(cli) {
        Ok(code) => ExitCode::from(code),
        Err(message) => {
            eprintln!("graphiti-openclaw: {message}");
            ExitCode::from(1)
        }
    }
}

fn run(mut cli: Cli) -> Result<u8, String> {
    // A package given as a directory: its parent is mounted as the experts directory.
    if let CliCommand::Experts {
        command: ExpertsCli::Validate { target } | ExpertsCli::Prompt { target },
    } = &mut cli.command
    {
        let path = Path::new(target.as_str());
        if path.join("expert.yaml").is_file() {
            let dir = path
                .canonicalize()
                .map_err(|err| format!("{target}: {err}"))?;
            let name = dir
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .ok_or_else(|| format!("{target}: not a package directory"))?;
            cli.options.experts_dir = dir.parent().map(Path::to_path_buf);
            *target = name;
        }
    }
    // Only a simulated turn, recall and status may keep state or reach Graphiti; the routing checks
    // (intent-test, lint-rules, eval, check-config) write and send nothing. The experts' approval
    // commands need the state directory (check-tool only reads it).
    let dry_run = !matches!(
        cli.command,
        CliCommand::Turn { .. }
            | CliCommand::Recall { .. }
            | CliCommand::Status
            | CliCommand::Ingest { .. }
            | CliCommand::Flush
            | CliCommand::Spool { .. }
            | CliCommand::Debug { .. }
            | CliCommand::Experts {
                command: ExpertsCli::Pending
                    | ExpertsCli::Approve { .. }
                    | ExpertsCli::CheckTool { .. }
            }
    );
    let mut shim = open_shim(cli.options, dry_run)?;
    let command = match cli.command {
        CliCommand::IntentTest {
            prompt,
            recall,
            group,
            previous_pack,
            json,
        } => {
            let recall_json = recall
                .map(|path| read_text("recall file", &path))
                .transpose()?;
            let request = IntentTestRequest {
                prompt,
                recall_json,
                group_chat: group,
                previous_pack,
            };
            Command::IntentTest((
                request,
                if json {
                    OutputFormat::Json
                } else {
                    OutputFormat::Text
                },
            ))
        }
        CliCommand::LintRules => Command::LintRules,
        CliCommand::Eval { cases, threshold } => {
            Command::Eval((read_text("cases file", &cases)?, threshold))
        }
        CliCommand::CheckConfig => Command::CheckConfig,
        CliCommand::Recall { query, group_id } => Command::Recall((query, group_id)),
        CliCommand::Status => Command::Status,
        CliCommand::Debug { session } => Command::Debug(session),
        CliCommand::Flush => Command::Flush,
        CliCommand::Spool { command } => Command::Spool(match command {
            None | Some(SpoolCli::List) => SpoolCommand::List,
            Some(SpoolCli::Requeue) => SpoolCommand::Requeue,
        }),
        CliCommand::Experts { command } => Command::Experts(match command {
            ExpertsCli::List => ExpertsCommand::List,
            ExpertsCli::Validate { target } => ExpertsCommand::Validate(target),
            ExpertsCli::Prompt { target } => ExpertsCommand::Prompt(target),
            ExpertsCli::Registry => ExpertsCommand::Registry,
            ExpertsCli::Pending => ExpertsCommand::Pending,
            ExpertsCli::Approve { id } => ExpertsCommand::Approve(id),
            ExpertsCli::CheckTool {
                tool,
                arguments,
                session,
                expert,
                agent,
            } => {
                let call = ToolCall {
                    tool_name: tool,
                    arguments_json: arguments,
                    call_id: None,
                };
                let ctx = HookContext {
                    session_key: session,
                    session_id: None,
                    agent_id: agent,
                    sender_id: None,
                    chat_id: None,
                    channel: Some("cli".into()),
                    chat_type: ChatType::Unknown,
                    trigger: None,
                    run_id: None,
                };
                ExpertsCommand::CheckTool((expert, call, ctx))
            }
        }),
        CliCommand::Ingest { text, sender } => {
            let ctx = HookContext {
                session_key: None,
                session_id: None,
                agent_id: Some("main".into()),
                sender_id: Some(sender),
                chat_id: None,
                channel: Some("cli".into()),
                chat_type: ChatType::Direct,
                trigger: None,
                run_id: None,
            };
            let out = shim.run_command(&Command::Ingest(IngestRequest {
                text,
                source: Some("graphiti-openclaw ingest".into()),
                ctx,
            }));
            let code = print_output(&out);
            if code == 0 {
                print_tick(&shim.tick());
            }
            return Ok(code);
        }
        CliCommand::Turn {
            prompt,
            reply,
            group,
            session,
            sender,
            json,
        } => {
            return turn(&mut shim, prompt, &reply, group, session, sender, json);
        }
    };
    Ok(print_output(&shim.run_command(&command)))
}

fn open_shim(options: GlobalOptions, dry_run: bool) -> Result<Shim, String> {
    let explicit_wasm = options.wasm.is_some();
    let wasm = options
        .wasm
        .or_else(default_wasm)
        .ok_or("no --wasm given and no default found")?;
    let state_dir = if dry_run {
        None
    } else {
        let dir = options
            .state_dir
            .or_else(default_state_dir)
            .ok_or("no --state-dir given and neither XDG_STATE_HOME nor HOME is set")?;
        std::fs::create_dir_all(&dir)
            .map_err(|err| format!("cannot create state directory {}: {err}", dir.display()))?;
        Some(dir)
    };
    let limits = Limits {
        call_timeout: Duration::from_millis(options.call_timeout_ms),
        send_timeout: Duration::from_millis(options.send_timeout_ms),
        memory_bytes: options.memory_limit_mb.saturating_mul(1 << 20),
    };
    Shim::new(ShimOptions {
        overlay_dir: options.overlay_dir,
        state_dir,
        cache_dir: options.cache_dir,
        allowed_origins: if dry_run {
            Vec::new()
        } else {
            options.allowed_origins
        },
        echo_logs: !options.quiet,
        experts_dir: options
            .experts_dir
            .or_else(|| Some(options.config_dir.join("experts")).filter(|d| d.is_dir())),
        workspace_dir: match options.workspace_dir {
            Some(dir) => {
                std::fs::create_dir_all(&dir).map_err(|err| {
                    format!("cannot create workspace directory {}: {err}", dir.display())
                })?;
                Some(dir)
            }
            None => None,
        },
        host_settings: options
            .settings
            .map(|path| read_text("settings file", &path))
            .transpose()?,
        ..ShimOptions::new(wasm, options.config_dir, limits)
    })
    .map_err(|err| match err {
        ShimError::ReadWasm { ref source, .. }
            if !explicit_wasm && source.kind() == std::io::ErrorKind::NotFound =>
        {
            format!("{err}; run scripts/build.sh first")
        }
        // Named by the option the user gave it with.
        ShimError::Mount {
            guest_path,
            path,
            reason,
        } => format!(
            "{} {}: {reason}",
            option_of_mount(guest_path),
            path.display()
        ),
        err => err.to_string(),
    })
}

/// The command-line option that gives the directory mounted at `guest_path`.
fn option_of_mount(guest_path: &str) -> &'static str {
    match guest_path {
        "/config" => "--config-dir",
        "/overlay" => "--overlay-dir",
        "/state" => "--state-dir",
        "/experts" => "--experts-dir",
        "/workspace" => "--workspace-dir",
        _ => "directory",
    }
}

/// $GRAPHITI_OPENCLAW_WASM; else `plugin.wasm` next to the executable (an installed layout); else
/// the workspace build output, found from the executable in `target/<profile>/`.
fn default_wasm() -> Option<PathBuf> {
    if let Some(path) = std::env::var_os("GRAPHITI_OPENCLAW_WASM") {
        return Some(path.into());
    }
    let exe = std::env::current_exe().ok()?;
    let exe_dir = exe.parent()?;
    let beside = exe_dir.join("plugin.wasm");
    if beside.is_file() {
        return Some(relative_to_cwd(beside));
    }
    let built = exe_dir
        .parent()?
        .join("wasm32-wasip2/component/graphiti_openclaw.wasm");
    Some(relative_to_cwd(built))
}

fn default_state_dir() -> Option<PathBuf> {
    let base = std::env::var_os("XDG_STATE_HOME")
        .map(PathBuf::from)
        .filter(|dir| dir.is_absolute())
        .or_else(|| {
            std::env::var_os("HOME").map(|home| PathBuf::from(home).join(".local/state"))
        })?;
    Some(base.join("graphiti-openclaw"))
}

/// Shorter paths in messages when they are under the working directory.
fn relative_to_cwd(path: PathBuf) -> PathBuf {
    std::env::current_dir()
        .ok()
        .and_then(|cwd| path.strip_prefix(cwd).ok().map(Path::to_path_buf))
        .unwrap_or(path)
}

/// Files the user names are read up to this size (the HTTP cap for a Graphiti answer): a wrong path
/// to a huge file is an error, not a CLI that eats the machine's memory.
const MAX_INPUT_FILE_BYTES: u64 = 10 << 20;

fn read_text(what: &str, path: &Path) -> Result<String, String> {
    use std::io::Read;
    let cannot = |err: std::io::Error| format!("cannot read {what} {}: {err}", path.display());
    let mut bytes = Vec::new();
    std::fs::File::open(path)
        .and_then(|file| file.take(MAX_INPUT_FILE_BYTES + 1).read_to_end(&mut bytes))
        .map_err(cannot)?;
    if bytes.len() as u64 > MAX_INPUT_FILE_BYTES {
        return Err(format!(
            "{what} {} is larger than {} MiB: not read",
            path.display(),
            MAX_INPUT_FILE_BYTES >> 20
        ));
    }
    String::from_utf8(bytes).map_err(|err| {
        format!(
            "cannot read {what} {}: not UTF-8 text ({err})",
            path.display()
        )
    })
}

fn print_output(output: &CommandOutput) -> u8 {
    print!("{}", output.stdout);
    eprint!("{}", output.stderr);
    output.exit_code
}

/// One simulated turn, the way OpenClaw would drive it.
fn turn(
    shim: &mut Shim,
    prompt: String,
    reply: &str,
    group: bool,
    session: String,
    sender: String,
    json: bool,
) -> Result<u8, String> {
    let ctx = HookContext {
        session_key: Some(session),
        session_id: None,
        agent_id: Some("main".into()),
        sender_id: Some(sender),
        chat_id: Some(if group { "demo-group" } else { "demo-dm" }.into()),
        channel: Some("cli".into()),
        chat_type: if group {
            ChatType::Group
        } else {
            ChatType::Direct
        },
        trigger: Some("user".into()),
        run_id: None,
    };
    let injection = shim.before_agent_start(
        &PromptEvent {
            prompt: prompt.clone(),
            messages_json: "[]".into(),
        },
        &ctx,
    );

    // What the model saw: the injected context before the user's prompt.
    let user_message = match &injection.prepend_context {
        Some(context) => format!("{context}\n\n{prompt}"),
        None => prompt,
    };
    let messages = serde_json::json!([
        { "role": "user", "content": user_message },
        { "role": "assistant", "content": reply },
    ]);
    let event = AgentEndEvent {
        success: true,
        error: None,
        messages_json: messages.to_string(),
        duration_ms: None,
    };
    let capture = shim.agent_end(&event, &ctx);
    // What the host's timer would do next: send the spooled turn to Graphiti.
    let tick = shim.tick();

    if json {
        let all = serde_json::json!({ "before-agent-start": injection, "agent-end": capture, "tick": tick });
        let text = serde_json::to_string_pretty(&all).map_err(|err| err.to_string())?;
        println!("{text}");
    } else {
        print_injection(&injection);
        print_capture(&capture);
        print_tick(&tick);
    }
    Ok(0)
}

fn print_tick(tick: &TickReport) {
    print!(
        "tick: sent {} episode(s) to Graphiti, {} waiting",
        tick.sent, tick.pending
    );
    if tick.in_doubt > 0 {
        print!(" ({} in doubt)", tick.in_doubt);
    }
    match (&tick.error, tick.retry_in_ms) {
        (Some(error), Some(ms)) => {
            println!("; retry in {:.1} s after: {error}", ms as f64 / 1000.0)
        }
        (Some(error), None) => println!("; {error}"),
        _ => println!(),
    }
    for note in &tick.notes {
        println!("note: {note}");
    }
}

fn print_injection(injection: &Injection) {
    println!("before-agent-start:");
    match &injection.prepend_context {
        Some(context) => println!("{context}"),
        None => {
            let reason = injection
                .decision
                .no_pack_reason
                .as_deref()
                .unwrap_or("no reason given");
            println!("no injection: {reason}");
        }
    }
    let decision = &injection.decision;
    match (&decision.intent, &decision.primary_pack) {
        (Some(intent), Some(pack)) => println!("decision: {intent} → pack {pack}"),
        _ => println!(
            "decision: no pack ({})",
            decision
                .no_pack_reason
                .as_deref()
                .unwrap_or("no reason given")
        ),
    }
    for step in &decision.trace {
        println!("  trace: {step}");
    }
    for note in &injection.notes {
        println!("note: {note}");
    }
}

fn print_capture(capture: &CaptureOutcome) {
    match capture {
        CaptureOutcome::Spooled(turn) => {
            println!(
                "agent-end: spooled episode {} for group {}",
                turn.episode, turn.group_id
            );
            println!("user: {}", turn.user);
            println!("assistant: {}", turn.assistant);
        }
        CaptureOutcome::Skipped(reason) => println!("agent-end: nothing to capture: {reason}"),
        CaptureOutcome::Dropped(reason) => println!("agent-end: NOT CAPTURED: {reason}"),
    }
}
