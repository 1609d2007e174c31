//! `host.redis-command`: the FalkorDB behind Graphiti, only at the allowed origin and only for the
//! graph commands memory control needs. Over the Redis protocol one connection could flush or
//! reconfigure the whole database, so the host refuses every other command unsent, whatever the
//! component asks. The password stays here: the host authenticates, the component never sees it.

use std::collections::HashMap;
use std::fmt;
use std::sync::Mutex;
use std::time::Duration;

use redis::{ConnectionInfo, ConnectionLike, IntoConnectionInfo, Value};

use crate::bindings::graphiti::openclaw::host::{RedisError, RedisValue};
use crate::errors::ShimError;

/// The commands the host carries: FalkorDB's graph commands and `PING`.
pub const CARRIED_COMMANDS: [&str; 5] = [
    "GRAPH.QUERY",
    "GRAPH.RO_QUERY",
    "GRAPH.DELETE",
    "GRAPH.LIST",
    "PING",
];

/// The most values one reply may flatten to: a listing the component asked for is far smaller.
const MAX_REPLY_VALUES: usize = 1 << 20;

/// A password that never prints.
#[derive(Clone, Default)]
pub struct Secret(pub String);

impl fmt::Debug for Secret {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Secret(..)")
    }
}

/// The allowed databases, the credentials for them and one kept connection each.
pub(crate) struct DatabaseGate {
    allowed: Vec<String>,
    password: Option<Secret>,
    connections: Mutex<HashMap<String, redis::Connection>>,
}

impl DatabaseGate {
    /// `origins` are the allowed `redis://` ones (the others are HTTP's). Fails on one that names a
    /// password: a password belongs in the secret input, not in a URL that is logged and shown.
    pub(crate) fn new(origins: &[String], password: Option<Secret>) -> Result<Self, ShimError> {
        let allowed = origins
            .iter()
            .map(|origin| {
                database_origin(origin).map_err(|reason| ShimError::InvalidOrigin {
                    origin: without_password(origin),
                    reason,
                })
            })
            .collect::<Result<_, _>>()?;
        Ok(Self {
            allowed,
            password,
            connections: Mutex::default(),
        })
    }

    /// Sends `command` to the database at `origin` if both are allowed, within `timeout`.
    pub(crate) fn command(
        &self,
        origin: &str,
        command: &[Vec<u8>],
        timeout: Duration,
    ) -> Result<Vec<RedisValue>, RedisError> {
        let origin = database_origin(origin).map_err(RedisError::InvalidRequest)?;
        if !self.allowed.contains(&origin) {
            return Err(RedisError::Refused(format!(
                "{origin} is not the database this host was allowed to reach"
            )));
        }
        let Some(name) = command.first() else {
            return Err(RedisError::InvalidRequest("the command has no name".into()));
        };
        let name = String::from_utf8_lossy(name).to_ascii_uppercase();
        if !CARRIED_COMMANDS.contains(&name.as_str()) {
            return Err(RedisError::Refused(format!(
                "{name} is not a command this host carries (only {})",
                CARRIED_COMMANDS.join(", ")
            )));
        }
        if timeout.is_zero() {
            return Err(RedisError::Timeout);
        }
        let mut connections = self
            .connections
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        let mut connection = match connections.remove(&origin) {
            Some(kept) => kept,
            None => self.connect(&origin, timeout)?,
        };
        let mut cmd = redis::cmd(&name);
        for arg in &command[1..] {
            cmd.arg(arg.as_slice());
        }
        let set = connection
            .set_read_timeout(Some(timeout))
            .and_then(|()| connection.set_write_timeout(Some(timeout)));
        if let Err(err) = set {
            return Err(RedisError::Connect(err.to_string()));
        }
        match connection.req_packed_command(&cmd.get_packed_command()) {
            Ok(value) => {
                connections.insert(origin, connection);
                flatten(value)
            }
            Err(err) if err.is_timeout() => Err(RedisError::Timeout),
            Err(err) if err.is_io_error() || err.is_connection_dropped() => {
                Err(RedisError::Transport(err.to_string()))
            }
            // An error reply: the connection is still good, the component reads the server's text.
            Err(err) => {
                connections.insert(origin, connection);
                Ok(vec![RedisValue::Error(err.to_string())])
            }
        }
    }

    fn connect(&self, origin: &str, timeout: Duration) -> Result<redis::Connection, RedisError> {
        let mut info: ConnectionInfo = origin
            .into_connection_info()
            .map_err(|err| RedisError::InvalidRequest(err.to_string()))?;
        let mut settings = info.redis_settings().clone().set_skip_set_lib_name();
        if let Some(Secret(password)) = &self.password {
            settings = settings.set_password(password);
        }
        info = info.set_redis_settings(settings);
        let client =
            redis::Client::open(info).map_err(|err| RedisError::Connect(err.to_string()))?;
        client
            .get_connection_with_timeout(timeout)
            .map_err(|err| match err.kind() {
                redis::ErrorKind::AuthenticationFailed => RedisError::Connect(format!(
                    "{origin} refused the credentials this host was given: {err}"
                )),
                _ => RedisError::Connect(format!("{origin}: {err}")),
            })
    }
}

/// `redis://host:port[/db]` with the host lower-cased and the default port filled in; a user name
/// may stay, a password may not.
pub(crate) fn database_origin(url: &str) -> Result<String, String> {
    let parsed = url::Url::parse(url).map_err(|err| format!("not a URL: {err}"))?;
    if parsed.password().is_some() {
        return Err(
            "the URL holds a password: give it as the database password instead, so \
                    that it is never shown with the URL"
                .into(),
        );
    }
    if parsed.scheme() != "redis" {
        return Err(format!(
            "scheme {:?} is not redis (TLS to the database is not carried yet)",
            parsed.scheme()
        ));
    }
    let host = parsed
        .host_str()
        .filter(|h| !h.is_empty())
        .ok_or_else(|| "the URL names no host".to_string())?
        .to_ascii_lowercase();
    let port = parsed.port().unwrap_or(6379);
    let user = match parsed.username() {
        "" => String::new(),
        user => format!("{user}@"),
    };
    let db = parsed.path().trim_matches('/');
    let db = if db.is_empty() || db == "0" {
        String::new()
    } else {
        format!("/{db}")
    };
    Ok(format!("redis://{user}{host}:{port}{db}"))
}

/// `url` with any password in it replaced, for messages.
fn without_password(url: &str) -> String {
    match url::Url::parse(url) {
        Ok(mut parsed) if parsed.password().is_some() => {
            let _ = parsed.set_password(Some("***"));
            parsed.to_string()
        }
        Ok(_) => url.to_string(),
        Err(_) => "(an unreadable URL)".into(),
    }
}

/// The reply in pre-order, an array followed by its elements (WIT has no recursive types).
fn flatten(value: Value) -> Result<Vec<RedisValue>, RedisError> {
    let mut out = Vec::new();
    let mut stack = vec![value];
    while let Some(value) = stack.pop() {
        if out.len() >= MAX_REPLY_VALUES {
            return Err(RedisError::Transport(format!(
                "the reply holds more than {MAX_REPLY_VALUES} values"
            )));
        }
        match value {
            Value::Nil => out.push(RedisValue::Nil),
            Value::Int(n) => out.push(RedisValue::Integer(n)),
            Value::BulkString(bytes) => out.push(RedisValue::Bytes(bytes)),
            Value::SimpleString(text) => out.push(RedisValue::Bytes(text.into_bytes())),
            Value::Okay => out.push(RedisValue::Bytes(b"OK".to_vec())),
            Value::Double(x) => out.push(RedisValue::Bytes(x.to_string().into_bytes())),
            Value::Boolean(b) => out.push(RedisValue::Integer(i64::from(b))),
            Value::ServerError(err) => out.push(RedisValue::Error(format!("{err:?}"))),
            Value::Array(items) | Value::Set(items) => {
                out.push(RedisValue::Array(
                    u32::try_from(items.len()).unwrap_or(u32::MAX),
                ));
                stack.extend(items.into_iter().rev());
            }
            other => out.push(RedisValue::Bytes(format!("{other:?}").into_bytes())),
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_origin_is_normalised_and_a_password_in_it_is_refused() {
        assert_eq!(
            database_origin("redis://LocalHost").unwrap(),
            "redis://localhost:6379"
        );
        assert_eq!(
            database_origin("redis://graphiti@db:7000/0").unwrap(),
            "redis://graphiti@db:7000"
        );
        let refused = database_origin("redis://graphiti:hunter2@db:7000").unwrap_err();
        assert!(refused.contains("holds a password"), "{refused}");
        assert!(database_origin("http://db:6379").is_err());
    }

    #[test]
    fn a_nested_reply_flattens_in_pre_order() {
        let reply = Value::Array(vec![
            Value::Array(vec![Value::BulkString(b"n".to_vec())]),
            Value::Int(3),
        ]);
        let flat = flatten(reply).unwrap();
        assert!(matches!(flat[0], RedisValue::Array(2)));
        assert!(matches!(flat[1], RedisValue::Array(1)));
        assert!(matches!(&flat[2], RedisValue::Bytes(b) if b == b"n"));
        assert!(matches!(flat[3], RedisValue::Integer(3)));
    }

    #[test]
    fn a_password_never_prints() {
        let secret = Secret("hunter2".into());
        assert!(!format!("{secret:?}").contains("hunter2"));
    }
}
