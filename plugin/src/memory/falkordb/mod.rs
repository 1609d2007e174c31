//! The FalkorDB behind Graphiti, reached through the host's `redis-command` when the settings name
//! it (`graphiti.falkordb.url`). Used only where Graphiti's API misses on FalkorDB, where each group
//! is a graph of its own: listing a group's episodes, confirming a send in doubt, deleting, and
//! checking what a delete left (docs/decisions/falkordb-connection.md). Every query is decided
//! here; reads go through `GRAPH.RO_QUERY`, which the database itself keeps from writing.

pub mod cypher;
pub mod group_graph;
mod reply;
mod values;

use crate::memory::graphiti::http::Deadline;
pub use cypher::Param;
pub use reply::{Cell, Table};
use std::time::Duration;
pub use values::{DbError, DbValue, FalkorError, Result};

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
