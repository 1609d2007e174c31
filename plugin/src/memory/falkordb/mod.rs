//! The FalkorDB behind Graphiti, reached through the host's `redis-command` when the settings name
//! it (`graphiti.falkordb.url`). Used only where Graphiti's API misses on FalkorDB, where each group
//! is a graph of its own: listing a group's episodes, confirming a send in doubt, deleting, and
//! checking what a delete left (docs/decisions/falkordb-connection.md). Every query is decided
//! here; reads go through `GRAPH.RO_QUERY`, which the database itself keeps from writing.

pub mod cypher;
pub mod group_graph;
mod reply;

use crate::memory::graphiti::http::Deadline;
use crate::memory::graphiti::{self, Cause, GraphitiError};
pub use cypher::Param;
pub use reply::{Cell, Table};
use std::fmt;
use std::time::Duration;

/// One value of a reply flattened in pre-order, as the host import gives it.
#[derive(Clone, Debug, PartialEq)]
pub enum DbValue {
    Nil,
    Integer(i64),
    Bytes(Vec<u8>),
    Error(String),
    Array(u32),
}

/// Why a command got no reply, as the host import says it.
#[derive(Clone, Debug, PartialEq)]
pub enum DbError {
    Refused(String),
    Timeout,
    Connect(String),
    Transport(String),
    InvalidRequest(String),
}

/// The host's database import.
pub trait Database {
    fn command(
        &mut self,
        origin: &str,
        command: Vec<Vec<u8>>,
        timeout: Duration,
    ) -> std::result::Result<Vec<DbValue>, DbError>;
}

/// A host without the import (native tests that need none): every command is refused.
pub struct NoDatabase;

impl Database for NoDatabase {
    fn command(
        &mut self,
        _: &str,
        _: Vec<Vec<u8>>,
        _: Duration,
    ) -> std::result::Result<Vec<DbValue>, DbError> {
        Err(DbError::Refused(
            "this host has no database connection".into(),
        ))
    }
}

/// What went wrong with a query.
#[derive(Clone, Debug, PartialEq)]
pub enum FalkorError {
    /// No reply (see [`DbError`]).
    Unanswered(DbError),
    /// The database answered with an error.
    Server(String),
    /// The reply is not what FalkorDB answers.
    Malformed(String),
    /// A parameter could not be written (see [`cypher::header`]).
    Parameter(String),
    /// The operation's time ran out before the command.
    OutOfTime,
}

impl FalkorError {
    /// FalkorDB's answer to a read of a graph that does not exist.
    pub fn is_empty_key(&self) -> bool {
        matches!(self, FalkorError::Server(text) if text.contains("empty key"))
    }
}

impl FalkorError {
    /// The same failure as the Graphiti client reports a listing's (memory control shows both
    /// alike).
    pub fn as_graphiti(&self) -> GraphitiError {
        let cause = match self {
            FalkorError::Unanswered(DbError::Timeout) | FalkorError::OutOfTime => Cause::TimedOut,
            FalkorError::Unanswered(_) => Cause::Unreachable,
            _ => Cause::Other,
        };
        graphiti::error(format!("FalkorDB: {self}")).because(cause)
    }
}

impl fmt::Display for FalkorError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            FalkorError::Unanswered(DbError::Refused(why)) => {
                write!(f, "refused by the host: {why}")
            }
            FalkorError::Unanswered(DbError::Timeout) => f.write_str("no answer in time"),
            FalkorError::Unanswered(DbError::Connect(why)) => write!(f, "cannot connect: {why}"),
            FalkorError::Unanswered(DbError::Transport(why)) => {
                write!(f, "the connection failed: {why}")
            }
            FalkorError::Unanswered(DbError::InvalidRequest(why)) => {
                write!(f, "invalid command: {why}")
            }
            FalkorError::Server(why) => write!(f, "FalkorDB answered: {why}"),
            FalkorError::Malformed(why) => write!(f, "an unreadable reply: {why}"),
            FalkorError::Parameter(why) => write!(f, "{why}"),
            FalkorError::OutOfTime => f.write_str("out of time before asking"),
        }
    }
}

pub type Result<T> = std::result::Result<T, FalkorError>;

/// The configured FalkorDB, for one operation with one deadline.
pub struct Falkor<'a> {
    pub db: &'a mut dyn Database,
    pub origin: &'a str,
    pub deadline: Deadline,
}

impl Falkor<'_> {
    fn send(&mut self, command: Vec<Vec<u8>>) -> Result<Vec<DbValue>> {
        let left = self.deadline.remaining().ok_or(FalkorError::OutOfTime)?;
        let values = self
            .db
            .command(self.origin, command, left)
            .map_err(FalkorError::Unanswered)?;
        match values.first() {
            Some(DbValue::Error(why)) => Err(FalkorError::Server(why.clone())),
            _ => Ok(values),
        }
    }

    fn graph_command(
        &mut self,
        name: &str,
        graph: &str,
        query: &str,
        params: &[(&str, Param)],
    ) -> Result<Table> {
        let text = format!(
            "{}{query}",
            cypher::header(params).map_err(FalkorError::Parameter)?
        );
        let command = vec![
            name.as_bytes().to_vec(),
            graph.as_bytes().to_vec(),
            text.into_bytes(),
            b"--compact".to_vec(),
        ];
        reply::table(&self.send(command)?)
    }

    /// A read of `graph`: FalkorDB refuses to run a query that writes.
    pub fn read(&mut self, graph: &str, query: &str, params: &[(&str, Param)]) -> Result<Table> {
        self.graph_command("GRAPH.RO_QUERY", graph, query, params)
    }

    /// A write to `graph` (which it creates when missing: ask [`Falkor::graphs`] first).
    pub fn write(&mut self, graph: &str, query: &str, params: &[(&str, Param)]) -> Result<Table> {
        self.graph_command("GRAPH.QUERY", graph, query, params)
    }

    /// Whether the database answers (and took the host's credentials).
    pub fn ping(&mut self) -> Result<()> {
        self.send(vec![b"PING".to_vec()]).map(|_| ())
    }

    /// Every graph in the database.
    pub fn graphs(&mut self) -> Result<Vec<String>> {
        let values = self.send(vec![b"GRAPH.LIST".to_vec()])?;
        reply::texts(&values)
    }

    /// Deletes `graph` whole.
    pub fn delete_graph(&mut self, graph: &str) -> Result<()> {
        self.send(vec![b"GRAPH.DELETE".to_vec(), graph.as_bytes().to_vec()])
            .map(|_| ())
    }
}
