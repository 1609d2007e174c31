//! Memory: what Graphiti remembers for a conversation, recalled before a turn and captured after it.
//! Recall (with the relevance floor and the recent-results cache), capture, delivery through the
//! spool, and the Graphiti client (MCP, REST, sessions) with the group ids that keep each
//! conversation's memories its own; and memory control (`control/`): what a chat's user and the
//! operator see, pause, export, forget and correct.

pub mod capture;
pub mod control;
pub mod delivery;
pub mod falkordb;
pub mod graphiti;
pub mod group_id;
pub mod import;
pub mod mcp_session;
pub mod recall;
pub mod recall_cache;
pub mod redaction;
pub mod relevance;
pub mod spool;
pub mod state;
pub mod stats;
