//! The component's one `Engine`, built on the host's imports: its mounts, HTTP, locks and time
//! zones.

use super::bindings::graphiti::openclaw::host;
use crate::config::ConfigRoots;
use crate::engine::Engine;
use crate::experts::runs::TimeZones;
use crate::memory::falkordb;
use crate::memory::graphiti::http as net;
use crate::platform::locks;
use std::cell::RefCell;
use std::path::{Path, PathBuf};

/// Guest paths of the host's preopens (see `wit/world.wit`).
const CONFIG_DIR: &str = "/config";
const OVERLAY_DIR: &str = "/overlay";
const CONFIG_PRIVATE_OVERLAY: &str = "/config/private";
const STATE_DIR: &str = "/state";
const EXPERTS_DIR: &str = "/experts";
const WORKSPACE_DIR: &str = "/workspace";

fn mounted(dir: &str) -> Option<PathBuf> {
    Path::new(dir).is_dir().then(|| PathBuf::from(dir))
}

/// `dir` as the host was asked to mount it, named as the user named it (mounted or not).
fn named(dir: &str) -> Option<String> {
    host::mounts()
        .into_iter()
        .find(|m| m.guest_path == dir)
        .map(|m| m.host_path)
}

thread_local! {
    static ENGINE: RefCell<Engine> = RefCell::new(
        Engine::new(config_roots(), mounted(STATE_DIR), Box::new(HostHttp))
            .with_experts(mounted(EXPERTS_DIR), named(EXPERTS_DIR), mounted(WORKSPACE_DIR))
            .with_workspace_named(named(WORKSPACE_DIR))
            .with_locks(Box::new(HostLocks))
            .with_database(Box::new(HostDatabase))
            .with_time_zones(Box::new(HostZones)),
    );
}

/// The config directory and its overlay, named in messages as the host says the user named them.
fn config_roots() -> ConfigRoots {
    let mounts = host::mounts();
    let name_of = |guest: &str| {
        mounts
            .iter()
            .find(|m| m.guest_path == guest)
            .map_or_else(|| guest.to_string(), |m| m.host_path.clone())
    };
    let config_name = name_of(CONFIG_DIR);
    let named_overlay = mounts.iter().any(|m| m.guest_path == OVERLAY_DIR);
    let mounted_overlay = Path::new(OVERLAY_DIR).is_dir();
    let (overlay, overlay_name) = if mounted_overlay {
        (OVERLAY_DIR, name_of(OVERLAY_DIR))
    } else {
        let private = format!("{}/private", config_name.trim_end_matches('/'));
        (CONFIG_PRIVATE_OVERLAY, private)
    };
    ConfigRoots {
        missing_overlay: (named_overlay && !mounted_overlay).then(|| name_of(OVERLAY_DIR)),
        config_name,
        overlay_name: Some(overlay_name),
        ..ConfigRoots::new(PathBuf::from(CONFIG_DIR), Some(PathBuf::from(overlay)))
    }
}

/// The host's lock imports (one lock-file protocol in every host).
struct HostLocks;

impl locks::Locks for HostLocks {
    fn acquire(
        &mut self,
        name: &str,
        lease: std::time::Duration,
        wait: std::time::Duration,
    ) -> Result<(), locks::LockError> {
        let ms = |d: std::time::Duration| u32::try_from(d.as_millis()).unwrap_or(u32::MAX);
        host::acquire_lock(name, ms(lease), ms(wait)).map_err(|e| match e {
            host::LockError::Busy(why) => locks::LockError::Busy(why),
            host::LockError::Lost(why) => locks::LockError::Lost(why),
            host::LockError::Failed(why) => locks::LockError::Failed(why),
        })
    }

    fn release(&mut self, name: &str) {
        host::release_lock(name);
    }

    fn this_process(&self) -> Option<locks::ThisProcess> {
        locks::ThisProcess::from_environment()
    }
}

/// The host's `redis-command` import: FalkorDB, only at the configured origin, only its graph
/// commands.
struct HostDatabase;

impl falkordb::Database for HostDatabase {
    fn command(
        &mut self,
        origin: &str,
        command: Vec<Vec<u8>>,
        timeout: std::time::Duration,
    ) -> Result<Vec<falkordb::DbValue>, falkordb::DbError> {
        let ms = u32::try_from(timeout.as_millis())
            .unwrap_or(u32::MAX)
            .max(1);
        let value = |v: host::RedisValue| match v {
            host::RedisValue::Nil => falkordb::DbValue::Nil,
            host::RedisValue::Integer(n) => falkordb::DbValue::Integer(n),
            host::RedisValue::Bytes(b) => falkordb::DbValue::Bytes(b),
            host::RedisValue::Error(e) => falkordb::DbValue::Error(e),
            host::RedisValue::Array(n) => falkordb::DbValue::Array(n),
        };
        match host::redis_command(origin, &command, ms) {
            Ok(values) => Ok(values.into_iter().map(value).collect()),
            Err(host::RedisError::Refused(why)) => Err(falkordb::DbError::Refused(why)),
            Err(host::RedisError::Timeout) => Err(falkordb::DbError::Timeout),
            Err(host::RedisError::Connect(why)) => Err(falkordb::DbError::Connect(why)),
            Err(host::RedisError::Transport(why)) => Err(falkordb::DbError::Transport(why)),
            Err(host::RedisError::InvalidRequest(why)) => {
                Err(falkordb::DbError::InvalidRequest(why))
            }
        }
    }
}

/// The host's `http-request` import, the only network the component has.
struct HostHttp;

impl net::Http for HostHttp {
    fn send(&mut self, request: net::Request) -> Result<net::Response, net::HttpError> {
        answer(host::http_request(&host_request(request)))
    }

    fn send_all(
        &mut self,
        requests: Vec<net::Request>,
    ) -> Vec<Result<net::Response, net::HttpError>> {
        let requests: Vec<host::Request> = requests.into_iter().map(host_request).collect();
        host::http_batch(&requests)
            .into_iter()
            .map(answer)
            .collect()
    }
}

fn host_request(request: net::Request) -> host::Request {
    host::Request {
        method: request.method.to_string(),
        url: request.url,
        headers: request.headers,
        body: request.body,
        timeout_ms: u32::try_from(request.timeout.as_millis())
            .unwrap_or(u32::MAX)
            .max(1),
    }
}

fn answer(
    result: Result<host::Response, host::HttpError>,
) -> Result<net::Response, net::HttpError> {
    match result {
        Ok(r) => Ok(net::Response {
            status: r.status,
            headers: r.headers,
            body: r.body,
        }),
        Err(host::HttpError::Refused(why)) => Err(net::HttpError::Refused(why)),
        Err(host::HttpError::Timeout) => Err(net::HttpError::Timeout),
        Err(host::HttpError::Connect(why)) => Err(net::HttpError::Connect(why)),
        Err(host::HttpError::Transport(why)) => Err(net::HttpError::Transport(why)),
        Err(host::HttpError::InvalidRequest(why)) => Err(net::HttpError::InvalidRequest(why)),
    }
}

pub(super) fn with_engine<T>(f: impl FnOnce(&mut Engine) -> T) -> T {
    ENGINE.with(|engine| f(&mut engine.borrow_mut()))
}

/// The host's `utc-offset` import.
struct HostZones;

impl TimeZones for HostZones {
    fn utc_offset_minutes(&mut self, zone: &str, at_ms: u64) -> Result<i32, String> {
        host::utc_offset(zone, at_ms)
    }
}
