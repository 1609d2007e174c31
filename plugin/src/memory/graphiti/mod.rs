//! The Graphiti client: the MCP server (streamable HTTP, the default) or the REST `graph_service`,
//! chosen by configuration, each a [`Server`]. Every answer is parsed defensively: a malformed one is an error with
//! context, never a panic.

mod answer;
mod episode;
mod error;
pub mod http;
mod item;
mod mcp;
mod rest;
mod server;

pub use crate::config::Transport;
use serde_json::Value;

pub use answer::{MAX_ANSWER_VALUES, parse_bounded};
pub use episode::{Episode, EpisodeKind, lists, names_of, speaker_name};
pub use error::{Cause, ErrorKind, GraphitiError, Result, error, http_failure, rejected, unknown};
pub use item::{Item, MAX_ID_CHARS, is_uuid_like};
pub use mcp::McpClient;
pub use rest::RestClient;
pub use server::{Client, Server};

/// Search results as Graphiti returns them (raw JSON objects), for recall to interpret.
#[derive(Clone, Debug, Default)]
pub struct Found {
    pub nodes: Vec<Value>,
    pub facts: Vec<Value>,
}

/// A client of the server at `url`, through `transport`'s API.
pub fn connect(transport: Transport, url: &str) -> Client {
    match transport {
        Transport::Mcp => Box::new(McpClient::new(url)),
        Transport::Rest => Box::new(RestClient::new(url)),
    }
}
