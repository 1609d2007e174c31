//! Memory: what Graphiti remembers for a conversation, recalled before a turn and captured after it.
//! Recall (with the relevance floor and the recent-results cache), capture and the turn records,
//! delivery through the spool, and the Graphiti client (MCP, REST, sessions) with the group ids that
//! keep each conversation's memories its own.

pub mod capture;
pub mod delivery;
pub mod forget;
pub mod graphiti;
pub mod group_id;
pub mod mcp_session;
pub mod paused;
pub mod recall;
pub mod recall_cache;
pub mod redaction;
pub mod relevance;
pub mod spool;
pub mod state;
pub mod stats;
