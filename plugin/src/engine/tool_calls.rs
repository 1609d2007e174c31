//! Tool calls: the approval policy of expert sessions, before a call runs.

use super::Engine;
use crate::experts::sessions::ToolCheck;
use crate::platform::api::{HookContext, ToolCall};
use crate::platform::time;

impl Engine {
    /// Before a tool call: expert sessions' approval policy; other sessions are not checked.
    pub fn before_tool_call(&mut self, call: &ToolCall, ctx: &HookContext) -> ToolCheck {
        self.ensure_loaded();
        let mut check = self
            .experts
            .sessions
            .before_tool_call(call, ctx, time::now_ms() / 1000);
        self.held_call(&mut check, ctx);
        self.planned_call(&mut check, ctx);
        check
    }
}
