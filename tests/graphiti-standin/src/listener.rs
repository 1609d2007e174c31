//! The listening sockets: the main one (closed while `Fault::Down`), an optional control-only
//! one, and the thread that ends timed fault steps on time.

use crate::http::serve;
use crate::{Fault, Shared, lock};
use std::net::{TcpListener, TcpStream};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::thread::{self, JoinHandle};
use std::time::{Duration, Instant};

/// How long to retry binding the main port again after `Fault::Down` (the old socket may linger).
const REBIND_FOR: Duration = Duration::from_secs(5);

pub(crate) struct Acceptor {
    stop: Arc<AtomicBool>,
    thread: JoinHandle<()>,
    port: u16,
}

#[derive(Default)]
pub(crate) struct Listeners {
    pub(crate) main: Option<Acceptor>,
    control: Option<Acceptor>,
}

/// Serves each connection in its own thread; `control_only` answers only `/__standin/...`.
pub(crate) fn spawn_acceptor(shared: &Arc<Shared>, listener: TcpListener, control_only: bool) -> Acceptor {
    let port = listener.local_addr().map_or(0, |a| a.port());
    let stop = Arc::new(AtomicBool::new(false));
    let (flag, shared) = (stop.clone(), shared.clone());
    let thread = thread::spawn(move || {
        for conn in listener.incoming() {
            if flag.load(Ordering::SeqCst) {
                break;
            }
            match conn {
                Ok(stream) => {
                    let shared = shared.clone();
                    thread::spawn(move || serve(&shared, stream, control_only));
                }
                Err(_) => thread::sleep(Duration::from_millis(10)), // e.g. out of fds
            }
        }
    });
    Acceptor { stop, thread, port }
}

impl Acceptor {
    fn stop(self) {
        self.stop.store(true, Ordering::SeqCst);
        // Wake the blocking accept() so the thread sees the flag and drops the socket.
        let _ = TcpStream::connect(("127.0.0.1", self.port));
        let _ = self.thread.join();
    }
}

impl Shared {
    /// Ends the fault steps that are over, then closes or re-binds the main port to match the
    /// fault in force (both ports once the stand-in is dropped).
    pub(crate) fn sync_listening(self: &Arc<Self>) -> Result<(), String> {
        let mut listeners = lock(&self.listeners);
        let (down, closed) = {
            let mut st = self.lock();
            if st.faults.advance(Instant::now()) {
                st.sessions.clear();
            }
            (st.faults.current() == Fault::Down, st.closed)
        };
        if closed && let Some(control) = listeners.control.take() {
            control.stop();
        }
        match (listeners.main.is_some(), down || closed) {
            (true, true) => {
                self.lock().outages += 1;
                listeners.main.take().into_iter().for_each(Acceptor::stop);
            }
            (false, false) => listeners.main = Some(spawn_acceptor(self, self.bind_again()?, false)),
            _ => {}
        }
        Ok(())
    }

    fn bind_again(&self) -> Result<TcpListener, String> {
        let deadline = Instant::now() + REBIND_FOR;
        loop {
            match TcpListener::bind(("127.0.0.1", self.port)) {
                Ok(listener) => return Ok(listener),
                Err(_) if Instant::now() < deadline => thread::sleep(Duration::from_millis(50)),
                Err(e) => return Err(format!("cannot re-bind port {}: {e}", self.port)),
            }
        }
    }

    /// The fault for a request that just arrived, counted against the step in force.
    pub(crate) fn request_fault(self: &Arc<Self>) -> Fault {
        self.sync_or_log(); // a timed step may have ended a moment ago
        let fault = self.lock().faults.take_request();
        self.sync_or_log(); // this request may have been a counted step's last
        fault
    }

    fn sync_or_log(self: &Arc<Self>) {
        if let Err(e) = self.sync_listening() {
            eprintln!("graphiti-standin: {e}");
        }
    }

    pub(crate) fn listen_control(self: &Arc<Self>, port: u16) -> std::io::Result<u16> {
        let listener = TcpListener::bind(("127.0.0.1", port))?;
        let port = listener.local_addr()?.port();
        let old = lock(&self.listeners).control.replace(spawn_acceptor(self, listener, true));
        old.into_iter().for_each(Acceptor::stop);
        Ok(port)
    }
}

/// A thread that sleeps until the timed fault step in force ends, then moves the script on (so
/// "down for 2 s" re-binds the port after 2 s even when no request comes).
pub(crate) fn spawn_director(shared: &Arc<Shared>) -> JoinHandle<()> {
    let shared = shared.clone();
    thread::spawn(move || {
        loop {
            let st = shared.lock();
            if st.closed {
                return;
            }
            let wait = st.faults.deadline().map(|d| d.saturating_duration_since(Instant::now()));
            let st = match wait {
                Some(wait) => shared.wake.wait_timeout(st, wait).map(|(g, _)| g).unwrap_or_else(|e| e.into_inner().0),
                None => shared.wake.wait(st).unwrap_or_else(|e| e.into_inner()),
            };
            let closed = st.closed;
            drop(st);
            if closed {
                return;
            }
            shared.sync_or_log();
        }
    })
}
