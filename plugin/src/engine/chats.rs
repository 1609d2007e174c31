//! `chats`: the chats the plugin has seen, from its turn records, so an operator can pick
//! one without knowing its ids (through the Gateway a direct chat's sender is the client's id,
//! which nothing else shows).

use super::Engine;
use super::commands::recorded_context;
use crate::memory::group_id::{self, Conversation};
use crate::ops::reports;
use crate::platform::api::{ChatType, CommandOutput};
use crate::platform::time;
use serde_json::json;

impl Engine {
    /// One JSON document: each chat (session) with a turn record, most recent first.
    pub(super) fn chats(&mut self) -> CommandOutput {
        self.ensure_loaded();
        let Some(dir) = &self.host.state_dir else {
            return reports::failure(1, "no state directory: no chat has been recorded");
        };
        let mut records = match super::turns::all(dir) {
            Ok(records) => records,
            Err(why) => return reports::failure(1, why),
        };
        crate::platform::sorting::sort_by_key(&mut records, |r| std::cmp::Reverse(r.at_ms));
        let templates = &self.config.settings.graphiti.group_id;
        let chats: Vec<serde_json::Value> = records
            .iter()
            .filter(|r| r.not_users.is_none())
            .map(|record| {
                let ctx = recorded_context(record);
                let conversation = Conversation::of(&ctx);
                let group = group_id::group_id(templates, &ctx).ok();
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
        CommandOutput {
            exit_code: 0,
            stdout: format!("{}\n", json!({ "chats": chats })),
            stderr: String::new(),
        }
    }
}
