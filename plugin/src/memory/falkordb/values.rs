//! What the host's database import answers, and what can go wrong with a query.

use crate::memory::graphiti::{self, Cause, GraphitiError};
use std::fmt;

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
