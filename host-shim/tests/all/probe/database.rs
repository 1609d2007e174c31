//! The database import: only the allowed FalkorDB, only its graph commands and PING, the password
//! sent by the host and never by the guest. A fake database on loopback records every byte it gets,
//! so a refused command is shown never to leave the host.

use std::io::{Read, Write};
use std::net::TcpListener;
use std::sync::mpsc;
use std::time::Duration;

use host_shim::{Secret, Shim, ShimOptions};

use super::harness::{answer, options, temp_dir};

/// A database that answers `AUTH` with `+OK`, every other command with `+PONG`, and sends on what
/// it received.
struct FakeDatabase {
    port: u16,
    received: mpsc::Receiver<String>,
}

impl FakeDatabase {
    fn start() -> FakeDatabase {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        let (sent, received) = mpsc::channel();
        std::thread::spawn(move || {
            for stream in listener.incoming() {
                let Ok(mut stream) = stream else { return };
                let sent = sent.clone();
                std::thread::spawn(move || {
                    let mut buffer = [0u8; 4096];
                    while let Ok(n) = stream.read(&mut buffer) {
                        if n == 0 {
                            return;
                        }
                        let chunk = String::from_utf8_lossy(&buffer[..n]).into_owned();
                        // Commands arrive one at a time: AUTH is answered as Redis does.
                        let reply = if chunk.contains("AUTH") {
                            "+OK\r\n"
                        } else {
                            "+PONG\r\n"
                        };
                        let _ = sent.send(chunk);
                        let _ = stream.write_all(reply.as_bytes());
                    }
                });
            }
        });
        FakeDatabase { port, received }
    }

    fn origin(&self) -> String {
        format!("redis://127.0.0.1:{}", self.port)
    }

    fn everything_received(&self) -> String {
        let mut all = String::new();
        while let Ok(chunk) = self.received.recv_timeout(Duration::from_millis(300)) {
            all.push_str(&chunk);
        }
        all
    }
}

#[test]
fn only_falkordbs_graph_commands_reach_the_allowed_database() {
    let database = FakeDatabase::start();
    let config = temp_dir("database-allowlist");
    let mut shim = Shim::new(ShimOptions {
        allowed_origins: vec![database.origin()],
        ..options(&config)
    })
    .unwrap();
    let origin = database.origin();

    for refused in [
        "FLUSHALL",
        "flushall",
        "CONFIG SET requirepass x",
        "KEYS *",
        "EVAL x 0",
        "AUTH guest guess",
    ] {
        let text = answer(&mut shim, &format!("redis {origin} {refused}"));
        assert!(
            text.starts_with("Err(RedisError::Refused(")
                && text.contains("is not a command this host carries"),
            "{refused}: {text}"
        );
    }
    let other = answer(&mut shim, "redis redis://127.0.0.1:1 PING");
    assert!(
        other.contains("is not the database this host was allowed to reach"),
        "{other}"
    );
    assert_eq!(
        database.everything_received(),
        "",
        "nothing refused was sent"
    );

    let ping = answer(&mut shim, &format!("redis {origin} PING"));
    assert!(
        ping.starts_with("Ok([RedisValue::Bytes([80, 79, 78, 71])])"),
        "{ping}"
    );
    let list = answer(&mut shim, &format!("redis {origin} graph.list"));
    assert!(list.starts_with("Ok("), "{list}");
    let received = database.everything_received();
    assert!(
        received.contains("PING") && received.contains("GRAPH.LIST"),
        "{received}"
    );
}

#[test]
fn the_host_authenticates_and_the_guest_never_holds_the_password() {
    let database = FakeDatabase::start();
    let config = temp_dir("database-password");
    let mut shim = Shim::new(ShimOptions {
        allowed_origins: vec![database.origin()],
        database_password: Some(Secret("s3cret-pw".into())),
        ..options(&config)
    })
    .unwrap();
    let ping = answer(&mut shim, &format!("redis {} PING", database.origin()));
    assert!(ping.starts_with("Ok("), "{ping}");
    let received = database.everything_received();
    let auth_at = received.find("AUTH").expect("the host authenticated");
    assert!(
        received.contains("s3cret-pw") && auth_at < received.find("PING").unwrap(),
        "{received}"
    );
    assert!(
        !format!(
            "{:?}",
            ShimOptions {
                database_password: Some(Secret("s3cret-pw".into())),
                ..options(&config)
            }
        )
        .contains("s3cret-pw")
    );
}

#[test]
fn a_database_url_holding_a_password_is_refused_at_start() {
    let config = temp_dir("database-url-password");
    let refused = Shim::new(ShimOptions {
        allowed_origins: vec!["redis://graphiti:hunter2@127.0.0.1:6379".into()],
        ..options(&config)
    })
    .err()
    .expect("refused");
    let text = refused.to_string();
    assert!(
        text.contains("holds a password") && !text.contains("hunter2"),
        "{text}"
    );
}
