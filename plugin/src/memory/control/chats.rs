//! `chats`: the chats the plugin has seen, from the engine's turn records, so an operator can pick
//! one without knowing its ids (through the Gateway a direct chat's sender is the client's id,
//! which nothing else shows).

use super::context::Context;
use crate::memory::group_id::{self, Conversation};
use crate::platform::api::{ChatType, CommandOutput};
use crate::platform::time;
use serde_json::json;

/// One JSON document: each chat (session) with a turn record, most recent first.
pub fn chats(cx: &Context) -> CommandOutput {
    if let Err(none) = cx.state_dir_for("no chat has been recorded") {
        return none.output();
    }
    let mut records = match cx.turns.sessions() {
        Ok(records) => records,
        Err(why) => return why.output(),
    };
    crate::platform::sorting::sort_by_key(&mut records, |r| std::cmp::Reverse(r.at_ms));
    let templates = &cx.settings.graphiti.group_id;
    let chats: Vec<serde_json::Value> = records
        .iter()
        .filter(|r| r.users)
        .map(|record| {
            let ctx = &record.ctx;
            let conversation = Conversation::of(ctx);
            let group = group_id::group_id(templates, ctx).ok();
            json!({
                "session": record.session_key,
                "kind": if ctx.chat_type == ChatType::Group { "group" } else { "direct" },
                "agent": conversation.agent,
                "sender": conversation.sender,
                "chat": conversation.chat,
                "channel": conversation.channel,
                "group_id": group,
                "last_turn": time::iso8601(record.at_ms),
                "last_turn_ms": record.at_ms,
            })
        })
        .collect();
    CommandOutput::success(format!("{}\n", json!({ "chats": chats })))
}
