//! The one way the plugin reaches the network: the host's `http-request`, behind a trait so the
//! client logic runs natively in tests against fakes.

use std::time::{Duration, Instant};

#[derive(Clone, Debug, PartialEq)]
pub struct Request {
    pub method: &'static str,
    pub url: String,
    pub headers: Vec<(String, String)>,
    pub body: Vec<u8>,
    pub timeout: Duration,
}

#[derive(Clone, Debug, PartialEq)]
pub struct Response {
    pub status: u16,
    /// Names in lower case.
    pub headers: Vec<(String, String)>,
    pub body: Vec<u8>,
}

impl Response {
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }

    pub fn text(&self) -> String {
        String::from_utf8_lossy(&self.body).into_owned()
    }
}

#[derive(Clone, Debug, PartialEq)]
pub enum HttpError {
    Refused(String),
    Timeout,
    /// No connection could be made: nothing was sent.
    Connect(String),
    /// The connection failed after the request may have been sent.
    Transport(String),
    InvalidRequest(String),
}

impl std::fmt::Display for HttpError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            HttpError::Refused(why) => write!(f, "refused by the host: {why}"),
            HttpError::Timeout => f.write_str("timed out"),
            HttpError::Connect(why) => write!(f, "connection failed: {why}"),
            HttpError::Transport(why) => write!(f, "connection broken: {why}"),
            HttpError::InvalidRequest(why) => write!(f, "invalid request: {why}"),
        }
    }
}

pub trait Http {
    fn send(&mut self, request: Request) -> Result<Response, HttpError>;

    /// Sends every request and returns each answer, in order. Hosts send them at the same time;
    /// this default (for fakes) sends them one after the other.
    fn send_all(&mut self, requests: Vec<Request>) -> Vec<Result<Response, HttpError>> {
        requests.into_iter().map(|r| self.send(r)).collect()
    }
}

/// A point in time after which no more requests start, shared by every request of one operation
/// (a whole recall has one budget, not one per request).
#[derive(Clone, Copy, Debug)]
pub struct Deadline {
    end: Instant,
}

impl Deadline {
    pub fn after(budget: Duration) -> Deadline {
        Deadline {
            end: Instant::now() + budget,
        }
    }

    /// Time left, or None when it has passed (or is too short to be worth a request).
    pub fn remaining(&self) -> Option<Duration> {
        let left = self.end.saturating_duration_since(Instant::now());
        (left >= Duration::from_millis(5)).then_some(left)
    }
}

/// For hosts and tests without network: every request is refused.
pub struct NoNetwork;

impl Http for NoNetwork {
    fn send(&mut self, request: Request) -> Result<Response, HttpError> {
        Err(HttpError::Refused(format!(
            "no network here ({})",
            request.url
        )))
    }
}
