//! The `experts …` commands as data (what the host asks for); `commands` runs them.

use crate::api::{HookContext, ToolCall};

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ExpertsCommand {
    List,
    Validate(String),
    Prompt(String),
    Registry,
    Pending,
    Approve(String),
    /// A dry run of the gate: as expert `expert` (else the session's expert), for `call` in `ctx`.
    CheckTool {
        expert: Option<String>,
        call: ToolCall,
        ctx: HookContext,
    },
    /// The `expert_knowledge` tool: the list, or one file by name, in the calling session `ctx`.
    Knowledge {
        name: Option<String>,
        ctx: HookContext,
    },
}
