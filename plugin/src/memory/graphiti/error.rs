//! What went wrong talking to Graphiti, and what it means for the request: failed (try again),
//! rejected (never again) or unknown (it may have been stored); and its cause, for code that treats
//! one cause apart (set where the error is made, so nothing reads it off the message).

use super::http::HttpError;

/// What went wrong talking to Graphiti, in words an operator can act on.
#[derive(Clone, Debug, PartialEq)]
pub struct GraphitiError {
    pub message: String,
    pub kind: ErrorKind,
    pub cause: Cause,
}

/// Where a failure came from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Cause {
    /// No answer in time, or no time left to ask.
    TimedOut,
    /// Graphiti could not be reached, the connection broke, or the host refused the request.
    Unreachable,
    /// Graphiti answered with this HTTP status.
    Status(u16),
    /// A tool call answered that it failed (`isError`).
    ToolError,
    /// Anything else: an answer that cannot be read, a JSON-RPC error, an id refused before asking.
    Other,
}

/// What a failure means for the request that carried it, which decides what delivery does next.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ErrorKind {
    /// The request failed and was not acted on (not sent, or answered with an error): try again later.
    Failed,
    /// Graphiti refused this request itself (bad input): sending it again cannot succeed.
    Rejected,
    /// The request may have been received and acted on (no answer in time, the connection broke
    /// after sending, an answer that cannot be read): sending it again may store it twice.
    Unknown,
}

impl GraphitiError {
    /// The same error, with its cause.
    pub fn because(self, cause: Cause) -> GraphitiError {
        GraphitiError { cause, ..self }
    }

    pub fn permanent(&self) -> bool {
        self.kind == ErrorKind::Rejected
    }

    /// The same failure of a step before the request that matters (e.g. the MCP handshake before a
    /// tool call): that request was not sent.
    pub fn before_sending(self) -> GraphitiError {
        GraphitiError {
            kind: match self.kind {
                ErrorKind::Unknown => ErrorKind::Failed,
                kind => kind,
            },
            ..self
        }
    }
}

impl std::fmt::Display for GraphitiError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.message)
    }
}

pub type Result<T> = std::result::Result<T, GraphitiError>;

/// A failure that may pass (network, server trouble, timeouts). Messages quote the server's own text,
/// so they are folded into one printable line before they reach a log, a note or a terminal.
pub fn error(message: impl Into<String>) -> GraphitiError {
    failure(ErrorKind::Failed, message)
}

/// Graphiti rejected the request as such.
pub fn rejected(message: impl Into<String>) -> GraphitiError {
    failure(ErrorKind::Rejected, message)
}

/// The request may have been acted on; its outcome is unknown.
pub fn unknown(message: impl Into<String>) -> GraphitiError {
    failure(ErrorKind::Unknown, message)
}

fn failure(kind: ErrorKind, message: impl Into<String>) -> GraphitiError {
    GraphitiError {
        message: crate::platform::text::one_line(&message.into()),
        kind,
        cause: Cause::Other,
    }
}

/// A failed HTTP exchange: whether the request may have reached Graphiti decides its kind.
pub fn http_failure(what: String, e: &HttpError) -> GraphitiError {
    let message = format!("{what}: {e}");
    match e {
        HttpError::Timeout => unknown(message).because(Cause::TimedOut),
        HttpError::Transport(_) => unknown(message).because(Cause::Unreachable),
        HttpError::Refused(_) | HttpError::Connect(_) => error(message).because(Cause::Unreachable),
        HttpError::InvalidRequest(_) => error(message),
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_servers_text_in_an_error_is_one_printable_line() {
        let e = super::error("POST /messages: HTTP 500: boom\r\n\u{1b}[2Jlast error: none");
        assert_eq!(
            e.message,
            "POST /messages: HTTP 500: boom \\u{1b}[2Jlast error: none"
        );
        assert!(super::rejected("a\nb").message == "a b");
    }

    #[test]
    fn an_http_failure_says_its_cause() {
        use super::{Cause, HttpError, http_failure};
        let cause = |e: HttpError| http_failure("POST /mcp".into(), &e).cause;
        assert_eq!(cause(HttpError::Timeout), Cause::TimedOut);
        assert_eq!(
            cause(HttpError::Connect("no route".into())),
            Cause::Unreachable
        );
        assert_eq!(
            cause(HttpError::Transport("reset".into())),
            Cause::Unreachable
        );
        assert_eq!(
            cause(HttpError::Refused("not allowed".into())),
            Cause::Unreachable
        );
        assert_eq!(
            cause(HttpError::InvalidRequest("bad url".into())),
            Cause::Other
        );
    }
}
