//! `host.http-request`: HTTP and HTTPS (see [`crate::tls`]), only to allowed origins, never
//! following redirects.

use std::collections::HashMap;
use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, mpsc};
use std::time::{Duration, Instant};

use ureq::config::Config;
use ureq::http::{self, Uri};
use ureq::unversioned::resolver::{DefaultResolver, ResolvedSocketAddrs, Resolver};
use ureq::unversioned::transport::{DefaultConnector, NextTimeout};
use ureq::{Agent, AsSendBody};

use crate::bindings::graphiti::openclaw::host::{
    HttpError, Request as HttpRequest, Response as HttpResponse,
};
use crate::errors::ShimError;
use crate::tls;

/// The most requests one `http-batch` may carry (one thread each).
pub(crate) const MAX_BATCH: usize = 16;

/// Connections are reused, but never past the idle time the server keeps them for (uvicorn, under
/// Graphiti's servers: 5 s): a POST on a connection the server has just closed would fail.
const MAX_IDLE_AGE: Duration = Duration::from_secs(4);

/// The allowlist and the HTTP client behind it.
pub(crate) struct HttpGate {
    client: Client,
    /// Nanoseconds spent waiting on the network, batches counted once: what a benchmark subtracts
    /// from a hook's time to see what the plugin itself adds.
    waited_ns: AtomicU64,
    /// Threads that send a batch's requests beyond the first (the caller's thread sends that one).
    senders: Senders,
}

/// What sending a request needs; cheap to clone (shared inside), so a sender thread gets its own.
#[derive(Clone)]
struct Client {
    /// Normalised origins, see [`origin_of`].
    allowed: Arc<[String]>,
    agent: Agent,
}

impl HttpGate {
    /// Fails on an origin that is not http(s), naming it, or on a CA file that cannot be used.
    /// The trusted roots are read only when an `https` origin is allowed or a CA file is named.
    pub(crate) fn new(origins: &[String], extra_ca_file: Option<&Path>) -> Result<Self, ShimError> {
        let allowed: Vec<String> = origins
            .iter()
            .map(|origin| {
                origin_of(origin).map_err(|reason| ShimError::InvalidOrigin {
                    origin: origin.clone(),
                    reason,
                })
            })
            .collect::<Result<_, _>>()?;
        let tls_config =
            if allowed.iter().any(|o| o.starts_with("https:")) || extra_ca_file.is_some() {
                tls::tls_config(extra_ca_file).map_err(|err| ShimError::CaFile {
                    named_by: err.named_by,
                    path: err.path,
                    reason: err.reason,
                })?
            } else {
                tls::no_roots()
            };
        let config = Agent::config_builder()
            .tls_config(tls_config)
            // The guest sees every status as it is: no errors for 4xx/5xx, no redirects followed
            // (a redirect could lead to an origin that is not allowed).
            .http_status_as_error(false)
            .max_redirects(0)
            // Requests go straight to the allowed origin, whatever the environment says.
            .proxy(None)
            .max_idle_age(MAX_IDLE_AGE)
            .build();
        let agent = Agent::with_parts(config, DefaultConnector::new(), KeptResolver::default());
        Ok(Self {
            client: Client {
                allowed: allowed.into(),
                agent,
            },
            waited_ns: AtomicU64::new(0),
            senders: Senders::default(),
        })
    }

    /// Time spent waiting on the network so far (concurrent requests of a batch counted once).
    pub(crate) fn waited(&self) -> Duration {
        Duration::from_nanos(self.waited_ns.load(Ordering::Relaxed))
    }

    fn add_wait(&self, started: Instant, ended: Instant) {
        let ns =
            u64::try_from(ended.saturating_duration_since(started).as_nanos()).unwrap_or(u64::MAX);
        self.waited_ns.fetch_add(ns, Ordering::Relaxed);
    }

    /// [`HttpGate::exchange`] with its wait counted.
    pub(crate) fn send(
        &self,
        request: HttpRequest,
        budget: Duration,
    ) -> Result<HttpResponse, HttpError> {
        let started = Instant::now();
        let answer = self.client.exchange(request, budget);
        self.add_wait(started, Instant::now());
        answer
    }

    /// Sends every request at once, each on its own thread (a batch is a handful: recall's
    /// searches), and answers in order.
    pub(crate) fn send_all(
        &self,
        requests: Vec<HttpRequest>,
        budget: Duration,
    ) -> Vec<Result<HttpResponse, HttpError>> {
        if requests.len() > MAX_BATCH {
            let refusal = format!(
                "a batch holds at most {MAX_BATCH} requests, not {}",
                requests.len()
            );
            return requests
                .iter()
                .map(|_| Err(HttpError::InvalidRequest(refusal.clone())))
                .collect();
        }
        let mut requests = requests.into_iter();
        let Some(first) = requests.next() else {
            return Vec::new();
        };
        // The rest go to the sender threads at once, the first is sent here meanwhile. The wait is
        // from the first request out to the last answer in.
        let (answered, answers) = mpsc::channel();
        let jobs: Vec<Job> = requests
            .enumerate()
            .map(|(index, request)| {
                let client = self.client.clone();
                let answered = answered.clone();
                Box::new(move || {
                    let started = Instant::now();
                    let answer = client.exchange(request, budget);
                    let _ = answered.send((index + 1, started, Instant::now(), answer));
                }) as Job
            })
            .collect();
        drop(answered);
        let rest = jobs.len();
        let unposted = self.senders.post(jobs);
        let started = Instant::now();
        let answer = self.client.exchange(first, budget);
        let mut timed = vec![(started, Instant::now())];
        for job in unposted {
            job();
        }
        let mut ordered: Vec<Result<HttpResponse, HttpError>> = vec![answer];
        ordered.resize_with(rest + 1, || {
            Err(HttpError::Transport("the sending thread failed".into()))
        });
        // Ends when every job has answered or was dropped (it panicked).
        for (index, started, ended, answer) in answers {
            ordered[index] = answer;
            timed.push((started, ended));
        }
        let first = timed.iter().map(|(started, _)| *started).min();
        let last = timed.iter().map(|(_, ended)| *ended).max();
        if let (Some(first), Some(last)) = (first, last) {
            self.add_wait(first, last);
        }
        ordered
    }
}

impl Client {
    /// Sends `request` if its origin is allowed; `budget` is what is left of the guest's call deadline.
    fn exchange(&self, request: HttpRequest, budget: Duration) -> Result<HttpResponse, HttpError> {
        let origin = origin_of(&request.url).map_err(HttpError::InvalidRequest)?;
        if !self.allowed.contains(&origin) {
            return Err(HttpError::Refused(format!(
                "{origin} is not an allowed origin"
            )));
        }
        let timeout = Duration::from_millis(request.timeout_ms.into()).min(budget);
        if timeout.is_zero() {
            return Err(HttpError::Timeout);
        }

        let mut builder = http::Request::builder()
            .method(request.method.as_str())
            .uri(&request.url);
        for (name, value) in &request.headers {
            builder = builder.header(name, value);
        }
        let prepared = builder
            .body(())
            .map_err(|err| HttpError::InvalidRequest(err.to_string()))?;
        // No body at all (rather than an empty one) keeps GET requests free of `content-length: 0`.
        let result = if request.body.is_empty() {
            self.run(prepared, timeout)
        } else {
            let (parts, ()) = prepared.into_parts();
            self.run(http::Request::from_parts(parts, request.body), timeout)
        };
        let mut response = result.map_err(|err| classify(err, &origin))?;

        let status = response.status().as_u16();
        let headers = response
            .headers()
            .iter()
            .map(|(name, value)| {
                let value = String::from_utf8_lossy(value.as_bytes()).into_owned();
                (name.as_str().to_ascii_lowercase(), value)
            })
            .collect();
        let body = response
            .body_mut()
            .read_to_vec()
            .map_err(|err| classify(err, &origin))?;
        Ok(HttpResponse {
            status,
            headers,
            body,
        })
    }

    fn run(
        &self,
        request: http::Request<impl AsSendBody>,
        timeout: Duration,
    ) -> Result<http::Response<ureq::Body>, ureq::Error> {
        let request = self
            .agent
            .configure_request(request)
            .timeout_global(Some(timeout))
            .build();
        self.agent.run(request)
    }
}

type Job = Box<dyn FnOnce() + Send>;

/// Threads kept to send a batch's requests: starting a thread for each request cost a turn more
/// than the plugin's own work did. Started as batches need them (a batch's first request is sent
/// by the caller's thread, so at most [`MAX_BATCH`] - 1); they end when the gate is dropped.
#[derive(Default)]
struct Senders {
    kept: Mutex<Option<KeptSenders>>,
}

struct KeptSenders {
    jobs: mpsc::Sender<Job>,
    waiting: Arc<Mutex<mpsc::Receiver<Job>>>,
    threads: usize,
}

impl Senders {
    /// Hands the jobs to kept threads, starting threads until there are as many as jobs (batches
    /// come one at a time: the last one's jobs are all done). Returns the jobs no thread can take
    /// (none could be started), for the caller to run itself.
    fn post(&self, jobs: Vec<Job>) -> Vec<Job> {
        if jobs.is_empty() {
            return jobs;
        }
        let mut kept = self
            .kept
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        let kept = kept.get_or_insert_with(|| {
            let (jobs, waiting) = mpsc::channel();
            KeptSenders {
                jobs,
                waiting: Arc::new(Mutex::new(waiting)),
                threads: 0,
            }
        });
        while kept.threads < jobs.len() {
            let waiting = Arc::clone(&kept.waiting);
            let started = std::thread::Builder::new()
                .name("graphiti-openclaw-http".into())
                .spawn(move || run_jobs(&waiting));
            if started.is_err() {
                break;
            }
            kept.threads += 1;
        }
        if kept.threads == 0 {
            return jobs;
        }
        for job in jobs {
            // The threads live as long as the receiver, which `kept` holds: this cannot fail.
            let _ = kept.jobs.send(job);
        }
        Vec::new()
    }
}

/// A kept sender thread: runs jobs until the gate is dropped. A job that panics is dropped (its
/// batch reads "the sending thread failed"); the thread goes on.
fn run_jobs(waiting: &Mutex<mpsc::Receiver<Job>>) {
    loop {
        let job = {
            let waiting = waiting
                .lock()
                .unwrap_or_else(|poisoned| poisoned.into_inner());
            waiting.recv()
        };
        let Ok(job) = job else { return };
        let _ = std::panic::catch_unwind(std::panic::AssertUnwindSafe(job));
    }
}

/// ureq's [`DefaultResolver`] with its answers kept for as long as a pooled connection may be:
/// ureq resolves before it looks in its pool, so every request on a kept-alive connection paid a
/// lookup, on a thread of its own (so that the lookup can time out). Failures are not kept.
#[derive(Debug, Default)]
struct KeptResolver {
    inner: DefaultResolver,
    kept: Mutex<HashMap<String, (Instant, ResolvedSocketAddrs)>>,
}

impl Resolver for KeptResolver {
    fn resolve(
        &self,
        uri: &Uri,
        config: &Config,
        timeout: NextTimeout,
    ) -> Result<ResolvedSocketAddrs, ureq::Error> {
        let key = uri.authority().map(|a| a.as_str().to_ascii_lowercase());
        let lock = || {
            self.kept
                .lock()
                .unwrap_or_else(|poisoned| poisoned.into_inner())
        };
        if let Some(key) = &key
            && let Some((at, addrs)) = lock().get(key)
            && at.elapsed() < MAX_IDLE_AGE
        {
            return Ok(addrs.clone());
        }
        let addrs = self.inner.resolve(uri, config, timeout)?;
        if let Some(key) = key {
            let mut kept = lock();
            // Only a handful of origins are allowed; forgetting them all now and then is enough.
            if kept.len() >= 64 {
                kept.clear();
            }
            kept.insert(key, (Instant::now(), addrs.clone()));
        }
        Ok(addrs)
    }
}

/// `scheme://host:port`, lower-cased, with the scheme's default port filled in. Parsed with the
/// same URI type ureq connects with, so the check and the connection cannot disagree on the host.
pub(crate) fn origin_of(url: &str) -> Result<String, String> {
    let uri: Uri = url
        .parse()
        .map_err(|err| format!("{url:?} is not a URL: {err}"))?;
    let (Some(scheme), Some(host)) = (uri.scheme_str(), uri.host()) else {
        return Err(format!("{url:?} is not an absolute URL"));
    };
    let scheme = scheme.to_ascii_lowercase();
    let default_port = match scheme.as_str() {
        "http" => 80,
        "https" => 443,
        _ => return Err(format!("{url:?}: scheme {scheme:?} is not http or https")),
    };
    let port = uri.port_u16().unwrap_or(default_port);
    Ok(format!("{scheme}://{}:{port}", host.to_ascii_lowercase()))
}

/// The WIT case for a failed exchange. `connect` only when no connection was made, so nothing was
/// sent and the guest may send again at once; anything else after connecting is `transport` or
/// `timeout` (outcome unknown). When unsure, not `connect`. A failed TLS handshake is `connect`
/// (no request was sent), its text naming the certificate problem and `origin`.
fn classify(err: ureq::Error, origin: &str) -> HttpError {
    use std::io::ErrorKind;
    match err {
        ureq::Error::Rustls(tls) => tls_failure(&tls, origin),
        ureq::Error::Io(io) if tls_error(&io).is_some() => {
            tls_failure(tls_error(&io).expect("checked in the guard"), origin)
        }
        ureq::Error::Timeout(ureq::Timeout::Resolve | ureq::Timeout::Connect) => {
            HttpError::Connect("timed out while connecting".into())
        }
        ureq::Error::Timeout(_) => HttpError::Timeout,
        ureq::Error::Io(io) if io.kind() == ErrorKind::TimedOut => HttpError::Timeout,
        ureq::Error::Io(io)
            if matches!(
                io.kind(),
                ErrorKind::ConnectionRefused
                    | ErrorKind::HostUnreachable
                    | ErrorKind::NetworkUnreachable
                    | ErrorKind::AddrNotAvailable
            ) =>
        {
            HttpError::Connect(io.to_string())
        }
        err @ (ureq::Error::HostNotFound
        | ureq::Error::ConnectionFailed
        | ureq::Error::Tls(_)
        | ureq::Error::TlsRequired
        | ureq::Error::ConnectProxyFailed(_)) => HttpError::Connect(err.to_string()),
        ureq::Error::BadUri(why) => HttpError::InvalidRequest(why),
        ureq::Error::Http(why) => HttpError::InvalidRequest(why.to_string()),
        other => HttpError::Transport(other.to_string()),
    }
}

/// `connect` for a refusal only a handshake can produce (the certificate, no common protocol):
/// nothing was sent. Any other TLS error may come after the request went out: `transport`.
fn tls_failure(err: &rustls::Error, origin: &str) -> HttpError {
    if tls::is_handshake_refusal(err) {
        HttpError::Connect(tls::handshake_failure(err, origin))
    } else {
        HttpError::Transport(format!("TLS with {origin} failed: {err}"))
    }
}

/// The rustls error inside an I/O error (how a failed handshake reaches ureq).
fn tls_error(io: &std::io::Error) -> Option<&rustls::Error> {
    io.get_ref()?.downcast_ref::<rustls::Error>()
}

#[cfg(test)]
mod tests {
    use super::origin_of;

    #[test]
    fn origins_are_normalised() {
        for (url, origin) in [
            ("http://localhost:8000/search?q=1", "http://localhost:8000"),
            ("HTTP://LocalHost/", "http://localhost:80"),
            ("http://127.0.0.1:80", "http://127.0.0.1:80"),
            ("https://graphiti.example", "https://graphiti.example:443"),
            ("http://user@evil.example:9/x", "http://evil.example:9"),
            ("http://[::1]:8000/", "http://[::1]:8000"),
        ] {
            assert_eq!(origin_of(url).as_deref(), Ok(origin), "{url}");
        }
    }

    #[test]
    fn non_urls_are_rejected() {
        for url in [
            "/relative",
            "localhost:8000",
            "ftp://host/",
            "http://",
            "not a url",
        ] {
            assert!(origin_of(url).is_err(), "{url}");
        }
    }
}
