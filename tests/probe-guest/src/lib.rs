//! A deliberately misbehaving guest of the `graphiti-plugin` world. The host shim's tests drive it to
//! prove the limits: the text an export receives (the prompt, agent-end's messages, intent-test's prompt, eval's cases) is a
//! command: "loop", "alloc", "panic", "http <url>", "log <text>", "read <path>", "write <path>";
//! anything else is echoed back.

wit_bindgen::generate!({ world: "graphiti-plugin", path: "../../wit" });

use exports::graphiti::openclaw::plugin::Guest;
use graphiti::openclaw::host;
use graphiti::openclaw::types::{
    AgentEndEvent, CaptureOutcome, Command, CommandOutput, ConfigError, ConfigFailure,
    ConfigSummary, Decision, HookContext, Injection, IntentTestRequest, PromptEvent, TickReport,
    ToolCall, ToolVerdict,
};

struct Probe;

impl Guest for Probe {
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
            });
        }
        Ok(ConfigSummary {
            rules: 0,
            packs: 0,
            composition_rules: 0,
            files: Vec::new(),
            warnings: Vec::new(),
            graphiti_url: String::new(),
        })
    }

    fn before_agent_start(event: PromptEvent, _ctx: HookContext) -> Injection {
        injection(run(&event.prompt))
    }

    fn agent_end(event: AgentEndEvent, _ctx: HookContext) -> CaptureOutcome {
        CaptureOutcome::Skipped(run(&event.messages_json))
    }

    fn tick() -> TickReport {
        TickReport {
            sent: 0,
            pending: 0,
            error: None,
            retry_in_ms: None,
            notes: vec![],
        }
    }

    fn dry_run(request: IntentTestRequest) -> Result<Injection, String> {
        Ok(injection(run(&request.prompt)))
    }

    fn before_tool_call(_call: ToolCall, _ctx: HookContext) -> ToolVerdict {
        ToolVerdict::Allow
    }

    fn run_command(cmd: Command) -> CommandOutput {
        let stdout = match cmd {
            Command::IntentTest((request, _)) => run(&request.prompt),
            Command::Eval((text, _)) => run(&text),
            _ => "probe".into(),
        };
        CommandOutput {
            exit_code: 0,
            stdout: stdout + "\n",
            stderr: String::new(),
        }
    }
}

/// Does what the prompt says and describes the result.
fn run(prompt: &str) -> String {
    let (verb, arg) = prompt.split_once(' ').unwrap_or((prompt, ""));
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
            let request = host::Request {
                method: "GET".into(),
                url: arg.into(),
                headers: vec![("x-probe".into(), "1".into())],
                body: Vec::new(),
                timeout_ms: 1000,
            };
            format!("{:?}", host::http_request(&request))
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
