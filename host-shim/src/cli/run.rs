//! Runs one parsed command line: the shim it needs (dry or not), then its subcommand, most of them
//! one operator command of the component.

use std::path::PathBuf;

use host_shim::{
    ChatType, Command, Correction, EvalCommand, ExpertsCommand, ForgetConfirmation, ForgetRequest,
    HookContext, ImportRequest, IngestRequest, IntentTestCommand, IntentTestRequest, MemoryCommand,
    MemoryQuery, OutputFormat, RecallCommand, Shim, SpoolCommand,
};

use super::experts::{experts_command, mount_package_dir};
use super::input_files::read_text;
use super::moment::moment;
use super::open::open_shim;
use super::output::{print_output, print_tick};
use super::turn::turn;
use host_shim::cli_grammar::{
    ChatArgs, Cli, CliCommand, ExpertsCli, ForgetChoiceArgs, ImportArgs, MemoryCli, SpoolCli,
};

/// The exit code of the command, or the message of an error before it ran.
pub(crate) fn run(mut cli: Cli) -> Result<u8, String> {
    mount_package_dir(&mut cli.command, &mut cli.options)?;
    let dry_run = is_dry_run(&cli.command);
    let mut shim = open_shim(cli.options, dry_run)?;
    let command = match cli.command {
        CliCommand::IntentTest {
            prompt,
            recall,
            group,
            previous_pack,
            now,
            previous_at,
            carried_turns,
            previous_prompt,
            json,
        } => {
            let previous = PreviousTurnArgs {
                pack: previous_pack,
                at: previous_at,
                carried_turns,
                prompt: previous_prompt,
            };
            intent_test(prompt, recall, group, now, previous, json)?
        }
        CliCommand::LintRules => Command::LintRules,
        CliCommand::Eval { cases, threshold } => Command::Eval(EvalCommand {
            cases_json: read_text("cases file", &cases)?,
            threshold,
        }),
        CliCommand::CheckConfig => Command::CheckConfig,
        CliCommand::AuditBoundary => Command::AuditBoundary,
        CliCommand::Recall { query, group_id } => {
            Command::Recall(RecallCommand { query, group_id })
        }
        CliCommand::Status => Command::Status,
        CliCommand::Debug { session } => Command::Debug(session),
        CliCommand::Flush => Command::Flush,
        CliCommand::GroupIds => Command::GroupIds,
        CliCommand::Spool { command } => Command::Spool(match command {
            None | Some(SpoolCli::List) => SpoolCommand::List,
            Some(SpoolCli::Requeue) => SpoolCommand::Requeue,
        }),
        CliCommand::Experts { command } => Command::Experts(experts_command(command)?),
        CliCommand::Chat(command) | CliCommand::Memory { command } => {
            Command::Memory(memory_command(command))
        }
        CliCommand::Overview => Command::Overview,
        CliCommand::Ingest { text, sender } => return ingest(&mut shim, text, sender),
        CliCommand::Import(args) => return Ok(import(&mut shim, args)),
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
    let mut output = shim.run_command(&command);
    if matches!(command, Command::Experts(ExpertsCommand::Validate(_)))
        && output.stdout.contains("tools bound (")
    {
        // This CLI has no MCP servers to reach; OpenClaw's validate initializes each bound one.
        output.stdout.push_str(
            "\nMCP servers: not checked here (this CLI knows no MCP servers); \
             `openclaw graphiti experts validate <name>` sends each bound server `initialize`\n",
        );
    }
    Ok(print_output(&output))
}

/// Whether the command runs without the state directory and without reaching Graphiti.
fn is_dry_run(command: &CliCommand) -> bool {
    // Only a simulated turn, recall and status may keep state or reach Graphiti; the routing checks
    // (intent-test, lint-rules, eval, check-config) write and send nothing. The experts' approval
    // commands need the state directory (check-tool only reads it).
    !matches!(
        command,
        CliCommand::Turn { .. }
            | CliCommand::Recall { .. }
            | CliCommand::Status
            | CliCommand::Ingest { .. }
            | CliCommand::Import(_)
            | CliCommand::Flush
            | CliCommand::GroupIds
            | CliCommand::Spool { .. }
            | CliCommand::Chat(_)
            | CliCommand::Memory { .. }
            | CliCommand::Overview
            | CliCommand::Debug { .. }
            | CliCommand::Experts {
                command: ExpertsCli::Pending
                    | ExpertsCli::Approve { .. }
                    | ExpertsCli::Reject { .. }
                    | ExpertsCli::CheckTool { .. }
                    | ExpertsCli::Fire { .. }
                    | ExpertsCli::Queue
                    | ExpertsCli::DeadLetters
                    | ExpertsCli::Replay { .. }
                    | ExpertsCli::Run { .. }
                    | ExpertsCli::Due { .. }
            }
    )
}

/// What `intent-test` is told about the previous turn.
struct PreviousTurnArgs {
    pack: Option<String>,
    at: Option<String>,
    carried_turns: Option<u32>,
    prompt: Option<String>,
}

fn intent_test(
    prompt: String,
    recall: Option<PathBuf>,
    group: bool,
    now: Option<String>,
    previous: PreviousTurnArgs,
    json: bool,
) -> Result<Command, String> {
    let recall_json = recall
        .map(|path| read_text("recall file", &path))
        .transpose()?;
    let previous_at_ms = match &previous.at {
        Some(at) => Some(moment("--previous-at", Some(at))?),
        None => None,
    };
    let request = IntentTestRequest {
        prompt,
        recall_json,
        group_chat: group,
        previous_pack: previous.pack,
        now_ms: Some(moment("--now", now.as_deref())?),
        previous_at_ms,
        carried_turns: previous.carried_turns,
        previous_prompt: previous.prompt,
    };
    Ok(Command::IntentTest(IntentTestCommand {
        request,
        format: if json {
            OutputFormat::Json
        } else {
            OutputFormat::Text
        },
    }))
}

/// The context a chat's turns would have, for `pause` and `resume`.
/// The operator's `memory` commands: the operator asks, not a chat.
fn memory_command(command: MemoryCli) -> MemoryCommand {
    let query = |query, chat| MemoryQuery {
        query,
        ctx: chat_context(chat),
        operator: true,
    };
    match command {
        MemoryCli::Pause(chat) => MemoryCommand::Pause(chat_context(chat)),
        MemoryCli::Resume(chat) => MemoryCommand::Resume(chat_context(chat)),
        MemoryCli::Paused => MemoryCommand::Paused,
        MemoryCli::Memories { query: q, chat } => MemoryCommand::See(query(q, chat)),
        MemoryCli::Export { query: q, chat } => MemoryCommand::Export(query(q, chat)),
        MemoryCli::Forget {
            query,
            ids,
            all,
            earlier_groups,
            yes,
            chat,
        } => MemoryCommand::Forget(ForgetRequest {
            query,
            ids,
            everything: all,
            earlier_groups,
            ctx: chat_context(chat),
            operator: true,
            at_once: yes,
        }),
        MemoryCli::ConfirmForget { id, choice } => {
            MemoryCommand::ConfirmForget(forget_choice(id, choice))
        }
        MemoryCli::EditForget { id, choice } => {
            MemoryCommand::EditForget(forget_choice(id, choice))
        }
        MemoryCli::Chats => MemoryCommand::Chats,
        MemoryCli::Correct {
            old,
            now_true,
            chat,
        } => MemoryCommand::Correct(Correction {
            old,
            now_true,
            ctx: chat_context(chat),
        }),
    }
}

/// An operator's choice of a proposed forget's items.
fn forget_choice(id: String, choice: ForgetChoiceArgs) -> ForgetConfirmation {
    ForgetConfirmation {
        id,
        ctx: operator_context(),
        operator: true,
        drop: choice.drop,
        add: choice.add,
    }
}

/// An operator's command that names no chat.
fn operator_context() -> HookContext {
    HookContext {
        session_key: None,
        session_id: None,
        agent_id: None,
        chat_type: ChatType::Direct,
        sender_id: None,
        sender_name: None,
        chat_id: None,
        channel: None,
        trigger: None,
        run_id: None,
        input_provenance: None,
    }
}

fn chat_context(chat: ChatArgs) -> HookContext {
    HookContext {
        session_key: chat.session,
        session_id: None,
        agent_id: Some(chat.agent),
        chat_type: if chat.chat.is_some() {
            ChatType::Group
        } else {
            ChatType::Direct
        },
        sender_id: chat.sender,
        sender_name: None,
        chat_id: chat.chat,
        channel: chat.channel,
        trigger: None,
        run_id: None,
        input_provenance: None,
    }
}

/// `ingest`: the text is spooled by the component, then sent at once as the host's timer would.
fn ingest(shim: &mut Shim, text: String, sender: String) -> Result<u8, String> {
    let ctx = HookContext {
        session_key: None,
        session_id: None,
        agent_id: Some("main".into()),
        sender_id: Some(sender),
        sender_name: None,
        chat_id: None,
        channel: Some("cli".into()),
        chat_type: ChatType::Direct,
        trigger: None,
        run_id: None,
        input_provenance: None,
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
    Ok(code)
}

/// The component's exit code while an import is under way.
const IMPORT_UNDER_WAY: u8 = 75;
/// How long the CLI waits between the passes of an import under way.
const IMPORT_POLL: std::time::Duration = std::time::Duration::from_secs(1);

/// `import`: a dry run once; else passes until the component says every item is sent, each change
/// of progress printed (with `no_wait`, one pass).
fn import(shim: &mut Shim, args: ImportArgs) -> u8 {
    let ImportArgs {
        sender,
        group_id,
        agent,
        daily_notes,
        transcripts,
        all_transcripts,
        dry_run,
        json,
        no_wait,
    } = args;
    if transcripts || all_transcripts {
        eprintln!(
            "graphiti-openclaw import: past conversations are read through OpenClaw's session \
             store, which this CLI has not: run `openclaw graphiti import --sender ID --transcripts` there \
             (this CLI imports the workspace's files)"
        );
        return 2;
    }
    // One invocation's calls share a run id: a job it started and another process finished is
    // reported as finished, not planned again.
    let started_ns = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos());
    let request = &ImportRequest {
        ctx: HookContext {
            agent_id: Some(agent),
            sender_id: sender,
            run_id: Some(format!("import-{}-{started_ns}", std::process::id())),
            ..operator_context()
        },
        group_id,
        daily_notes,
        dry_run,
        json,
    };
    let mut last = String::new();
    loop {
        let out = shim.run_command(&Command::ImportMemory(request.clone()));
        if out.exit_code == IMPORT_UNDER_WAY && no_wait {
            print!("{}", out.stdout);
            println!(
                "import: under way; `flush` or the next import carries it on, `status` says how far"
            );
            return 0;
        }
        if out.exit_code != IMPORT_UNDER_WAY || request.dry_run {
            return print_output(&out);
        }
        if out.stdout != last {
            print!("{}", out.stdout);
            last = out.stdout;
        }
        std::thread::sleep(IMPORT_POLL);
    }
}
