//! OpenClaw's hook context as the WIT gives it, mapped to the native record (used by every export
//! that acts for a session).

use super::bindings::exports::graphiti::openclaw::hooks as wit;
use crate::platform::api;

pub fn hook_context(ctx: wit::HookContext) -> api::HookContext {
    api::HookContext {
        session_key: ctx.session_key,
        session_id: ctx.session_id,
        agent_id: ctx.agent_id,
        sender_id: ctx.sender_id,
        sender_name: ctx.sender_name,
        chat_id: ctx.chat_id,
        channel: ctx.channel,
        chat_type: match ctx.chat_type {
            wit::ChatType::Direct => api::ChatType::Direct,
            wit::ChatType::Group => api::ChatType::Group,
            wit::ChatType::Unknown => api::ChatType::Unknown,
        },
        trigger: ctx.trigger,
        run_id: ctx.run_id,
        input_provenance: ctx.input_provenance,
    }
}
