//! A deliberately misbehaving guest of the `graphiti-plugin` world. The host shim's tests drive it to
//! prove the limits: the text an export receives (the prompt, agent-end's messages, intent-test's
//! prompt, eval's cases) is a command: "loop", "alloc", "panic", "http <url> [timeout-ms]",
//! "redis <origin> <command> [args]",
//! "log <text>", "read <path>", "write <path>", "lock <name> <lease-ms> <wait-ms>",
//! "unlock <name>", "sleep <ms>"; several joined by "; " run in turn; anything else is echoed back.
//! `tick` and the `flush` command run the commands in `/config/send-script`, one a line.

wit_bindgen::generate!({ world: "graphiti-plugin", path: "../../wit" });

use exports::graphiti::openclaw::commands::{self, Command, CommandOutput, SpoolCommand};
use exports::graphiti::openclaw::experts::{
    self, ChannelMessage, RunReport, RuntimeWork, WebhookAnswer, WebhookRequest,
};
use exports::graphiti::openclaw::hooks::{
    self, AgentEndEvent, CaptureOutcome, ConfigError, ConfigFailure, ConfigSummary, Decision,
    HookContext, Injection, IntentTestRequest, PromptEvent, TickReport, ToolCall, ToolVerdict,
};
use graphiti::openclaw::host;

struct Probe;

impl hooks::Guest for Probe {
    /// Fails with one error while `/config/bad` exists.
    fn reload_config(_host_settings: Option<String>) -> Result<ConfigSummary, ConfigFailure> {
        if std::fs::metadata("/config/bad").is_ok() {
            return Err(ConfigFailure {
                errors: vec![ConfigError {
                    file: "bad".into(),
                    line: Some(3),
                    field: Some("keywords".into()),
                    message: "probe rejects this file".into(),
                }],
                in_force: vec!["routing: the probe has no routing".into()],
                graphiti_url: String::new(),
                falkordb_url: String::new(),
            });
        }
        Ok(ConfigSummary {
            rules: 0,
            packs: 0,
            composition_rules: 0,
            files: Vec::new(),
            warnings: Vec::new(),
            graphiti_url: String::new(),
            falkordb_url: String::new(),
        })
    }

    fn before_agent_start(event: PromptEvent, _ctx: HookContext) -> Injection {
        injection(run(&event.prompt))
    }

    fn agent_end(event: AgentEndEvent, _ctx: HookContext) -> CaptureOutcome {
        CaptureOutcome::Skipped(run(&event.messages_json))
    }

    /// The results of `/config/send-script` as notes.
    fn tick() -> TickReport {
        TickReport {
            sent: 0,
            pending: 0,
            in_doubt: 0,
            error: None,
            retry_in_ms: None,
            notes: send_script(),
        }
    }

    fn dry_run(request: IntentTestRequest) -> Result<Injection, String> {
        Ok(injection(run(&request.prompt)))
    }

    fn before_tool_call(_call: ToolCall, _ctx: HookContext) -> ToolVerdict {
        ToolVerdict::Allow
    }
}

impl commands::Guest for Probe {
    fn run_command(cmd: Command) -> CommandOutput {
        let stdout = match cmd {
            Command::IntentTest(c) => run(&c.request.prompt),
            Command::Eval(c) => run(&c.cases_json),
            Command::Flush => send_script().join("\n"),
            Command::Spool(SpoolCommand::List) => "spool list".into(),
            Command::Spool(SpoolCommand::Requeue) => "spool requeue".into(),
            _ => "probe".into(),
        };
        CommandOutput {
            exit_code: 0,
            stdout: stdout + "\n",
            stderr: String::new(),
        }
    }
}

impl experts::Guest for Probe {
    /// The body is a command, as a prompt is; its output is the answer's body.
    fn expert_webhook(request: WebhookRequest, _now_ms: u64) -> WebhookAnswer {
        WebhookAnswer {
            status: 200,
            body: run(&String::from_utf8_lossy(&request.body)),
            work: idle(),
        }
    }

    fn expert_channel_message(message: ChannelMessage, _now_ms: u64) -> RuntimeWork {
        let mut work = idle();
        work.notes.push(run(&message.message_text));
        work
    }

    fn expert_tick(_now_ms: u64) -> RuntimeWork {
        idle()
    }

    fn expert_run_ended(_report: RunReport, _now_ms: u64) -> RuntimeWork {
        idle()
    }

    fn expert_delivered(_run_ids: Vec<String>, _now_ms: u64) -> Result<(), String> {
        Ok(())
    }
}

fn idle() -> RuntimeWork {
    RuntimeWork {
        start: Vec::new(),
        deliver: Vec::new(),
        end_sessions: Vec::new(),
        notes: Vec::new(),
        tick_in_ms: None,
    }
}

/// Runs each line of `/config/send-script` (none when it is missing).
fn send_script() -> Vec<String> {
    let script = std::fs::read_to_string("/config/send-script").unwrap_or_default();
    script
        .lines()
        .filter(|line| !line.is_empty())
        .map(run)
        .collect()
}

/// Does what the prompt says and describes the result.
fn run(prompt: &str) -> String {
    if prompt.contains("; ") {
        return prompt.split("; ").map(run).collect::<Vec<_>>().join("; ");
    }
    let (verb, arg) = prompt.split_once(' ').unwrap_or((prompt, ""));
    let number =
        |text: Option<&str>, default: u32| text.and_then(|t| t.parse().ok()).unwrap_or(default);
    match verb {
        // black_box keeps the optimizer from proving the loop has no effect and removing it.
        "loop" => loop {
            std::hint::black_box(());
        },
        "alloc" => {
            let mut hoard: Vec<Vec<u8>> = Vec::new();
            loop {
                // Touch every chunk so the pages are really used.
                hoard.push(vec![1u8; 1 << 20]);
                std::hint::black_box(&hoard);
            }
        }
        "panic" => panic!("probe panicked on purpose"),
        "http" => {
            let mut args = arg.split(' ');
            let request = host::Request {
                method: "GET".into(),
                url: args.next().unwrap_or_default().into(),
                headers: vec![("x-probe".into(), "1".into())],
                body: Vec::new(),
                timeout_ms: number(args.next(), 1000),
            };
            format!("{:?}", host::http_request(&request))
        }
        "redis" => {
            let mut args = arg.split(' ');
            let origin = args.next().unwrap_or_default();
            let command: Vec<Vec<u8>> = args.map(|a| a.as_bytes().to_vec()).collect();
            format!("{:?}", host::redis_command(origin, &command, 2000))
        }
        "lock" => {
            let mut args = arg.split(' ');
            let name = args.next().unwrap_or_default();
            let (lease, wait) = (number(args.next(), 1000), number(args.next(), 0));
            format!("{:?}", host::acquire_lock(name, lease, wait))
        }
        "unlock" => {
            host::release_lock(arg);
            format!("unlocked {arg}")
        }
        "sleep" => {
            std::thread::sleep(std::time::Duration::from_millis(
                number(Some(arg), 0).into(),
            ));
            "slept".into()
        }
        "log" => {
            host::log(host::LogLevel::Info, arg);
            format!("logged: {arg}")
        }
        "read" => match std::fs::read(arg) {
            Ok(bytes) => format!("read ok: {} bytes", bytes.len()),
            Err(err) => format!("read err: {err}"),
        },
        "write" => match std::fs::write(arg, b"probe") {
            Ok(()) => "write ok".into(),
            Err(err) => format!("write err: {err}"),
        },
        _ => format!("echo: {prompt}"),
    }
}

fn injection(text: String) -> Injection {
    Injection {
        prepend_context: Some(text),
        system_context: None,
        append_system_context: None,
        decision: Decision {
            intent: None,
            primary_pack: None,
            additional_packs: Vec::new(),
            skipped_packs: Vec::new(),
            sticky: false,
            no_pack_reason: None,
            candidates: Vec::new(),
            trace: Vec::new(),
        },
        notes: Vec::new(),
    }
}

export!(Probe);
