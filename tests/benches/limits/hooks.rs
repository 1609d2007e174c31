//! What the plugin adds to a turn in the shim, measured through the component against the Graphiti
//! stand-in on loopback:
//! - `before-agent-start` (recall over MCP: facts + nodes, routing, formatting) beyond the time its
//!   requests waited on the network (the shim counts it, a batch once), turn by turn; beside it the
//!   stand-in's own response time for the same two MCP requests sent by a bare client, alternating
//!   turn by turn;
//! - `agent-end` (strip, spool to disk; no network).
//!
//! Each turn's answer is checked.

use crate::{ms, percentile};
use graphiti_openclaw_tests::bench_rows::Row;
use graphiti_openclaw_tests::{copy_dir, example_config, plugin_wasm, temp_dir};
use graphiti_standin::{Options, StandIn};
use host_shim::{
    AgentEndEvent, CaptureOutcome, ChatType, HookContext, Limits, PromptEvent, Shim, ShimOptions,
};
use std::io::{Read, Write};
use std::net::TcpStream;
use std::time::{Duration, Instant};

const PROMPT: &str = "Book lunch with the Acme Robotics founder";

/// One HTTP/1.1 POST to the stand-in on a kept-alive connection (as the shim's client reuses its
/// connections); returns the session header if any.
fn post(stream: &mut TcpStream, session: Option<&str>, body: &str) -> Option<String> {
    let session_header = session
        .map(|s| format!("Mcp-Session-Id: {s}\r\n"))
        .unwrap_or_default();
    let request = format!(
        "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:{}\r\nContent-Type: application/json\r\n\
         Accept: application/json, text/event-stream\r\n{session_header}Content-Length: {}\r\n\r\n{body}",
        stream.peer_addr().expect("peer").port(),
        body.len()
    );
    stream.write_all(request.as_bytes()).expect("write");
    let mut head = Vec::new();
    let mut byte = [0u8; 1];
    while !head.ends_with(b"\r\n\r\n") {
        stream.read_exact(&mut byte).expect("read the head");
        head.push(byte[0]);
    }
    let head = String::from_utf8_lossy(&head).to_ascii_lowercase();
    assert!(head.starts_with("http/1.1 20"), "{head}");
    let header = |name: &str| {
        head.lines()
            .find_map(|l| l.strip_prefix(name).map(|v| v.trim().to_string()))
    };
    let length: usize = header("content-length:").map_or(0, |v| v.parse().expect("length"));
    let mut answer = vec![0u8; length];
    stream.read_exact(&mut answer).expect("read the body");
    header("mcp-session-id:")
}

fn connect(port: u16) -> TcpStream {
    let stream = TcpStream::connect(("127.0.0.1", port)).expect("connect");
    stream.set_nodelay(true).expect("nodelay");
    stream
}

/// Times both hooks over `turns` warm turns; records the shim's before-agent-start row.
#[allow(clippy::too_many_lines)] // one measured session, step by step: splitting it hides the pairing
pub fn shim_hooks(turns: usize) {
    let standin = StandIn::start(Options {
        port: 0,
        ingest_delay: Duration::ZERO,
        legacy_node_search: false,
    })
    .unwrap();
    standin
        .seed_json(include_str!("../../graphiti-standin/seed/demo.json"))
        .unwrap();

    let config = temp_dir("hooks-bench-config");
    copy_dir(&example_config(), config.path());
    std::fs::write(
        config.path().join("settings.yaml"),
        format!(
            "graphiti:\n  url: {}/mcp\n  group_id: {{ direct: demo, group: \"demo-{{chat}}\" }}\n",
            standin.url()
        ),
    )
    .unwrap();
    let limits = Limits {
        call_timeout: Duration::from_secs(30),
        send_timeout: Duration::from_secs(30),
        memory_bytes: 256 << 20,
    };
    let mut options = ShimOptions::new(plugin_wasm(), config.path(), limits);
    let (state, cache) = (temp_dir("hooks-bench-state"), temp_dir("hooks-bench-cache"));
    options.state_dir = Some(state.path().to_path_buf());
    options.cache_dir = Some(cache.path().to_path_buf());
    options.allowed_origins = vec![standin.url()];
    options.echo_logs = false;
    let mut shim = Shim::new(options).expect("shim");
    let ctx = HookContext {
        session_key: None, // no stickiness state: every turn routes afresh
        session_id: None,
        agent_id: Some("main".into()),
        sender_id: Some("bench".into()),
        sender_name: None,
        chat_id: Some("dm".into()),
        channel: Some("bench".into()),
        chat_type: ChatType::Direct,
        trigger: Some("user".into()),
        run_id: None,
        input_provenance: None,
    };
    let event = PromptEvent {
        prompt: PROMPT.into(),
        messages_json: "[]".into(),
    };

    // The bare client's session and the two calls recall makes.
    let port = standin.port();
    let init = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"bench","version":"1"}}}"#;
    let (mut first, mut second) = (connect(port), connect(port));
    let session = post(&mut first, None, init).expect("session id");
    post(
        &mut first,
        Some(&session),
        r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
    );
    let facts = format!(
        r#"{{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{{"name":"search_memory_facts","arguments":{{"query":"{PROMPT}","group_ids":["demo"],"max_facts":20}}}}}}"#
    );
    let nodes = format!(
        r#"{{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{{"name":"search_nodes","arguments":{{"query":"{PROMPT}","group_ids":["demo"],"max_nodes":5}}}}}}"#
    );

    let mut hook = Vec::with_capacity(turns);
    let mut baseline = Vec::with_capacity(turns);
    let mut added = Vec::with_capacity(turns);
    let mut end = Vec::with_capacity(turns);
    let warmup = turns / 10;
    // Turn by turn as a host calls the hooks (and as the OpenClaw benchmark does): before-agent-start,
    // then agent-end, then a tick. Run back to back without agent-end, before-agent-start would save
    // its counts itself every 200 turns, a fallback for a host that never ends a turn.
    for turn in 0..warmup + turns {
        // Both at once, as recall sends them (the host's http-batch).
        let started = Instant::now();
        std::thread::scope(|scope| {
            scope.spawn(|| post(&mut first, Some(&session), &facts));
            post(&mut second, Some(&session), &nodes);
        });
        let base = started.elapsed();

        let waited = shim.network_wait();
        let started = Instant::now();
        let injection = shim.before_agent_start(&event, &ctx);
        let took = started.elapsed();
        let waited = shim.network_wait() - waited;
        let context = injection.prepend_context.unwrap_or_default();
        assert!(
            context.starts_with("<graphiti-context") && context.contains("Dana Lee is CTO"),
            "turn {turn}: {context}"
        );
        assert_eq!(
            injection.decision.intent.as_deref(),
            Some("vc_deal"),
            "turn {turn}"
        );

        let messages = serde_json::json!([
            {"role": "user", "content": format!("<graphiti-context group=\"demo\">\nx\n</graphiti-context>\n\n{PROMPT} #{turn}")},
            {"role": "assistant", "content": "Booked: Thursday 12:30."},
        ]);
        let end_event = AgentEndEvent {
            success: true,
            error: None,
            messages_json: messages.to_string(),
            duration_ms: None,
        };
        let started = Instant::now();
        let outcome = shim.agent_end(&end_event, &ctx);
        let ended = started.elapsed();
        assert!(
            matches!(outcome, CaptureOutcome::Spooled(_)),
            "turn {turn}: {outcome:?}"
        );
        shim.tick(); // sends the turn, as the host's timer would (not timed)
        if turn >= warmup {
            hook.push(took);
            baseline.push(base);
            added.push(took.saturating_sub(waited));
            end.push(ended);
        }
    }
    assert_eq!(
        standin.episodes().len(),
        warmup + turns,
        "every captured turn reached the stand-in"
    );

    println!(
        "hooks through the component in the shim, {turns} turns each, Graphiti stand-in on loopback (ms)"
    );
    println!("{:<44} {:>8} {:>8}", "", "p50", "p99");
    let row = |name: &str, samples: &mut Vec<Duration>| {
        let (p50, p99) = (percentile(samples, 50), percentile(samples, 99));
        println!("{name:<44} {:>8.3} {:>8.3}", ms(p50), ms(p99));
        (p50, p99)
    };
    let (hook50, hook99) = row("before-agent-start (recall + route + format)", &mut hook);
    let (base50, base99) = row(
        "stand-in alone (the same 2 requests at once)",
        &mut baseline,
    );
    let (_, added99) = row("added: the hook less its network wait", &mut added);
    println!(
        "{:<44} {:>8.3} {:>8.3}",
        "the hook less the stand-in (p50 − p50, p99 − p99)",
        ms(hook50.saturating_sub(base50)),
        ms(hook99.saturating_sub(base99))
    );
    row("agent-end (strip + spool to disk)", &mut end);
    Row {
        what: "before-agent-start added in the shim (its time less its network wait), p99",
        value: ms(added99),
        unit: "ms",
        goal: 0.5,
        baseline: "the stand-in's own time for the same requests, p99",
        baseline_value: ms(base99),
    }
    .record();
}
