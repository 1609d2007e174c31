//! `turn`: one simulated turn through the hooks, the way OpenClaw would drive it.

use host_shim::{AgentEndEvent, ChatType, HookContext, PromptEvent, Shim};

use super::output::{print_capture, print_injection, print_tick};

/// One simulated turn, the way OpenClaw would drive it.
pub(crate) fn turn(
    shim: &mut Shim,
    prompt: String,
    reply: &str,
    group: bool,
    session: String,
    sender: Option<String>,
    json: bool,
) -> Result<u8, String> {
    // What the session key names itself, the component reads off it (as OpenClaw's hosts do);
    // the demo's own ids stand in only where it names nothing.
    let key_names = |kinds: [&str; 2]| {
        session
            .split(':')
            .any(|part| kinds.iter().any(|k| part.eq_ignore_ascii_case(k)))
    };
    let (key_names_chat, key_names_sender) =
        (key_names(["group", "channel"]), key_names(["direct", "dm"]));
    let ctx = HookContext {
        session_id: None,
        agent_id: Some("main".into()),
        sender_id: sender.or_else(|| (!key_names_sender).then(|| "demo-user".to_string())),
        sender_name: None,
        chat_id: (!key_names_chat && !key_names_sender)
            .then(|| if group { "demo-group" } else { "demo-dm" }.to_string()),
        channel: (!key_names_chat && !key_names_sender).then(|| "cli".to_string()),
        session_key: Some(session),
        chat_type: if group {
            ChatType::Group
        } else {
            ChatType::Direct
        },
        trigger: Some("user".into()),
        run_id: None,
        input_provenance: None,
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
