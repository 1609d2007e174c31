//! Through a guest (the probe, `tests/probe-guest`): the state-directory locks as `host.acquire-lock`
//! and `host.release-lock`, the longer time limit of the calls that send (`tick`, `flush`), and
//! HTTP failures told apart: `connect` (nothing sent) from `transport` (outcome unknown).


use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::thread;
use std::time::{Duration, Instant};

use host_shim::{Command, Limits, PromptEvent, Shim, ShimError, ShimOptions, SpoolCommand};
use crate::support::{LIMITS, TempDir, ctx, probe_options, temp_dir};

/// Who the shim says holds a lock it took: its name and version.
const SHIM: &str = concat!("graphiti-openclaw shim ", env!("CARGO_PKG_VERSION"));

/// The probe's answer to a prompt, or the reason it gave none.
fn answer(shim: &mut Shim, text: &str) -> String {
    let injection = shim.before_agent_start(
        &PromptEvent {
            prompt: text.into(),
            messages_json: "[]".into(),
        },
        &ctx(),
    );
    injection
        .prepend_context
        .or(injection.decision.no_pack_reason)
        .unwrap()
}

fn probe_on(config: &TempDir, state: &TempDir) -> Shim {
    Shim::new(probe_options(config, Some(state))).unwrap()
}

// ---- locks through the guest ----

#[test]
fn two_shims_on_one_state_directory_exclude_each_other() {
    let (config, state) = (temp_dir("two-config"), temp_dir("two-state"));
    let (mut a, mut b) = (probe_on(&config, &state), probe_on(&config, &state));

    assert_eq!(answer(&mut a, "lock send 60000 0"), "Ok(())");
    let busy = answer(&mut b, "lock send 60000 0");
    let expected = format!(
        "Err(LockError::Busy(\"held by pid {} ({SHIM}) on ",
        std::process::id()
    );
    assert!(busy.starts_with(&expected), "{busy}");
    // Asked again, the holder is only checked.
    assert_eq!(answer(&mut a, "lock send 60000 0"), "Ok(())");

    assert_eq!(answer(&mut a, "unlock send"), "unlocked send");
    assert_eq!(answer(&mut b, "lock send 60000 0"), "Ok(())");
    assert!(answer(&mut a, "lock send 60000 0").starts_with("Err(LockError::Busy("));
}

#[test]
fn a_trapped_instance_and_a_dropped_shim_give_up_their_locks() {
    let (config, state) = (temp_dir("trap-config"), temp_dir("trap-state"));
    let (mut a, mut b) = (probe_on(&config, &state), probe_on(&config, &state));

    let reason = answer(&mut a, "lock send 60000 0; panic");
    assert!(reason.contains("trapped"), "{reason}");
    assert_eq!(answer(&mut b, "lock send 60000 0"), "Ok(())");

    drop(b);
    assert_eq!(answer(&mut a, "lock send 60000 0"), "Ok(())");
}

#[test]
fn waiting_for_a_lock_ends_at_the_calls_deadline() {
    let (config, state) = (temp_dir("deadline-config"), temp_dir("deadline-state"));
    let mut a = probe_on(&config, &state);
    let mut b = Shim::new(ShimOptions {
        limits: Limits {
            call_timeout: Duration::from_millis(300),
            ..LIMITS
        },
        ..probe_options(&config, Some(&state))
    })
    .unwrap();
    assert_eq!(answer(&mut a, "lock send 60000 0"), "Ok(())");

    let started = Instant::now();
    let text = answer(&mut b, "lock send 60000 10000");
    let waited = started.elapsed();
    assert!(
        waited >= Duration::from_millis(250) && waited < Duration::from_millis(1500),
        "{waited:?}"
    );
    assert!(
        text.starts_with("Err(LockError::Busy(") || text.contains("exceeded its 300 ms deadline"),
        "{text}"
    );
}

#[test]
fn without_a_state_directory_a_lock_fails() {
    let config = temp_dir("nostate-config");
    let mut shim = Shim::new(probe_options(&config, None)).unwrap();
    assert_eq!(
        answer(&mut shim, "lock send 60000 0"),
        r#"Err(LockError::Failed("no state directory"))"#
    );
}

// ---- sending gets its own time limit ----

/// An HTTP server on 127.0.0.1 answering 200 to every request after `delay`.
fn slow_server(delay: Duration) -> String {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let origin = format!("http://{}", listener.local_addr().unwrap());
    thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(mut stream) = stream else { return };
            thread::spawn(move || {
                read_head(&mut stream);
                thread::sleep(delay);
                let _ = stream.write_all(
                    b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\nConnection: close\r\n\r\nok",
                );
            });
        }
    });
    origin
}

fn read_head(stream: &mut TcpStream) -> String {
    let mut head = Vec::new();
    let mut byte = [0; 1];
    while !head.ends_with(b"\r\n\r\n") && stream.read(&mut byte).is_ok_and(|n| n == 1) {
        head.push(byte[0]);
    }
    String::from_utf8_lossy(&head).into_owned()
}

/// A probe whose `tick` and `flush` send one request to a server that answers after 800 ms.
fn slow_sender(config: &TempDir, send_timeout: Duration) -> Shim {
    let origin = slow_server(Duration::from_millis(800));
    std::fs::write(
        config.path().join("send-script"),
        format!("http {origin}/episodes 10000\n"),
    )
    .unwrap();
    Shim::new(ShimOptions {
        allowed_origins: vec![origin],
        limits: Limits {
            call_timeout: Duration::from_millis(300),
            send_timeout,
            ..LIMITS
        },
        ..probe_options(config, None)
    })
    .unwrap()
}

#[test]
fn flush_and_tick_may_send_for_longer_than_a_call_may_take() {
    let config = temp_dir("send-long");
    let mut shim = slow_sender(&config, Duration::from_secs(5));

    let output = shim.run_command(&Command::Flush);
    assert_eq!(output.exit_code, 0, "{}", output.stderr);
    assert!(
        output.stdout.starts_with("Ok(Response { status: 200"),
        "{}",
        output.stdout
    );
    let tick = shim.tick();
    assert_eq!(tick.error, None);
    assert!(
        tick.notes[0].starts_with("Ok(Response { status: 200"),
        "{:?}",
        tick.notes
    );

    // Any other call keeps the call timeout.
    let script = std::fs::read_to_string(config.path().join("send-script")).unwrap();
    let text = answer(&mut shim, script.trim());
    assert!(
        text == "Err(HttpError::Timeout)" || text.contains("exceeded its 300 ms deadline"),
        "{text}"
    );
    let output = shim.run_command(&Command::Spool(SpoolCommand::List));
    assert_eq!(output.stdout, "spool list\n");
}

#[test]
fn the_send_timeout_bounds_flush_and_tick() {
    let config = temp_dir("send-short");
    let mut shim = slow_sender(&config, Duration::from_millis(400));

    let started = Instant::now();
    let output = shim.run_command(&Command::Flush);
    assert!(
        started.elapsed() < Duration::from_millis(750),
        "{:?}",
        started.elapsed()
    );
    let said = format!("{}{}", output.stdout, output.stderr);
    assert!(
        said.starts_with("Err(HttpError::Timeout)")
            || said.contains("exceeded its 400 ms deadline"),
        "{said}"
    );
    let tick = shim.tick();
    let said = format!("{:?} {:?}", tick.notes, tick.error);
    assert!(
        said.contains("Err(HttpError::Timeout)") || said.contains("exceeded its 400 ms deadline"),
        "{said}"
    );
}

#[test]
fn a_zero_send_timeout_is_refused() {
    let config = temp_dir("send-zero");
    let options = ShimOptions {
        limits: Limits {
            send_timeout: Duration::ZERO,
            ..LIMITS
        },
        ..probe_options(&config, None)
    };
    assert!(
        matches!(Shim::new(options), Err(ShimError::InvalidLimits(why)) if why == "the send timeout is zero")
    );
}

// ---- HTTP: nothing sent, or the outcome unknown ----

fn probe_allowing(config: &TempDir, origin: &str) -> Shim {
    Shim::new(ShimOptions {
        allowed_origins: vec![origin.into()],
        ..probe_options(config, None)
    })
    .unwrap()
}

/// A loopback port held by a socket that is bound but does not listen: a connection to it is
/// refused, and no other test's listener can get the port while it lives (a dropped listener's
/// port can be handed to the next test that binds port 0, which then answers for it).
struct ClosedPort {
    fd: libc::c_int,
    port: u16,
}

impl ClosedPort {
    fn new() -> ClosedPort {
        // SAFETY: plain socket calls on a descriptor this function owns, with a zeroed `sockaddr_in`
        // of the size passed.
        unsafe {
            let fd = libc::socket(libc::AF_INET, libc::SOCK_STREAM, 0);
            assert!(fd >= 0, "socket: {}", std::io::Error::last_os_error());
            let mut addr: libc::sockaddr_in = std::mem::zeroed();
            addr.sin_family = libc::AF_INET as libc::sa_family_t;
            addr.sin_addr.s_addr = u32::from_ne_bytes([127, 0, 0, 1]);
            let mut len = std::mem::size_of::<libc::sockaddr_in>() as libc::socklen_t;
            let bound = libc::bind(fd, (&raw const addr).cast(), len);
            assert_eq!(bound, 0, "bind: {}", std::io::Error::last_os_error());
            let named = libc::getsockname(fd, (&raw mut addr).cast(), &mut len);
            assert_eq!(named, 0, "getsockname: {}", std::io::Error::last_os_error());
            ClosedPort {
                fd,
                port: u16::from_be(addr.sin_port),
            }
        }
    }
}

impl Drop for ClosedPort {
    fn drop(&mut self) {
        // SAFETY: the descriptor is this value's own, closed once.
        unsafe { libc::close(self.fd) };
    }
}

#[test]
fn a_closed_port_is_a_connect_error() {
    let closed = ClosedPort::new();
    let origin = format!("http://127.0.0.1:{}", closed.port);
    let config = temp_dir("http-connect");
    let mut shim = probe_allowing(&config, &origin);

    let text = answer(&mut shim, &format!("http {origin}/episodes"));
    assert!(text.starts_with("Err(HttpError::Connect("), "{text}");
    assert!(text.to_lowercase().contains("refused"), "{text}");
}

#[test]
fn a_connection_closed_after_the_request_is_a_transport_error() {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let origin = format!("http://{}", listener.local_addr().unwrap());
    let server = thread::spawn(move || {
        let (mut stream, _) = listener.accept().unwrap();
        // Reads the whole request, then hangs up without a word.
        read_head(&mut stream)
    });
    let config = temp_dir("http-transport");
    let mut shim = probe_allowing(&config, &origin);

    let text = answer(&mut shim, &format!("http {origin}/episodes"));
    assert!(text.starts_with("Err(HttpError::Transport("), "{text}");
    assert!(
        server
            .join()
            .unwrap()
            .starts_with("GET /episodes HTTP/1.1\r\n")
    );
}
