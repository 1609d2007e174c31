//! HTTP: only allowed origins, statuses as they are, bounded by the timeout.

use std::time::{Duration, Instant};

use host_shim::{Limits, Shim, ShimError, ShimOptions};

use super::harness::{LIMITS, TestServer, answer, assert_fallback, options, prompt, temp_dir};

#[test]
fn http_reaches_an_allowed_origin_and_returns_any_status() {
    let server = TestServer::start(Some(
        "HTTP/1.1 418 I'm a teapot\r\nContent-Length: 5\r\nX-Test: Yes\r\nConnection: close\r\n\r\nhello",
    ));
    let config = temp_dir("http-ok");
    // Upper case and a trailing slash: origins are normalised before they are compared.
    let allowed = format!("HTTP://127.0.0.1:{}/", server.port);
    let mut shim = Shim::new(ShimOptions {
        allowed_origins: vec![allowed],
        ..options(&config)
    })
    .unwrap();

    let text = answer(&mut shim, &format!("http {}/probe?x=1", server.origin()));
    assert!(text.starts_with("Ok(Response { status: 418"), "{text}");
    assert!(text.contains(r#"("x-test", "Yes")"#), "{text}");
    assert!(text.contains("body: [104, 101, 108, 108, 111]"), "{text}");
    let request = server
        .requests
        .recv_timeout(Duration::from_secs(5))
        .unwrap();
    assert!(
        request.starts_with("GET /probe?x=1 HTTP/1.1\r\n"),
        "{request}"
    );
    assert!(
        request.to_ascii_lowercase().contains("x-probe: 1\r\n"),
        "{request}"
    );
}

#[test]
fn http_redirects_are_returned_not_followed() {
    let server = TestServer::start(Some(
        "HTTP/1.1 302 Found\r\nLocation: http://127.0.0.1:1/elsewhere\r\nContent-Length: 0\r\n\r\n",
    ));
    let config = temp_dir("http-redirect");
    let mut shim = Shim::new(ShimOptions {
        allowed_origins: vec![server.origin()],
        ..options(&config)
    })
    .unwrap();

    let text = answer(&mut shim, &format!("http {}/", server.origin()));
    assert!(text.starts_with("Ok(Response { status: 302"), "{text}");
}

#[test]
fn http_to_another_origin_is_refused_and_sends_nothing() {
    let server = TestServer::start(Some("HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n"));
    let other = TestServer::start(None);
    let config = temp_dir("http-refused");
    let mut shim = Shim::new(ShimOptions {
        allowed_origins: vec![other.origin()],
        ..options(&config)
    })
    .unwrap();

    let text = answer(&mut shim, &format!("http {}/secret", server.origin()));
    assert_eq!(
        text,
        format!(
            r#"Err(HttpError::Refused("{} is not an allowed origin"))"#,
            server.origin()
        )
    );
    assert!(
        server
            .requests
            .recv_timeout(Duration::from_millis(200))
            .is_err(),
        "the server was contacted"
    );
}

#[test]
fn http_that_never_answers_times_out() {
    let server = TestServer::start(None);
    let config = temp_dir("http-timeout");
    let mut shim = Shim::new(ShimOptions {
        allowed_origins: vec![server.origin()],
        ..options(&config)
    })
    .unwrap();

    // The probe asks for a 1000 ms timeout.
    let started = Instant::now();
    let text = answer(&mut shim, &format!("http {}/slow", server.origin()));
    let elapsed = started.elapsed();
    assert_eq!(text, "Err(HttpError::Timeout)");
    assert!(
        elapsed >= Duration::from_millis(900) && elapsed < Duration::from_millis(2500),
        "{elapsed:?}"
    );
}

#[test]
fn http_is_cut_short_by_the_call_deadline() {
    let server = TestServer::start(None);
    let config = temp_dir("http-deadline");
    let limits = Limits {
        call_timeout: Duration::from_millis(300),
        ..LIMITS
    };
    let options = ShimOptions {
        allowed_origins: vec![server.origin()],
        limits,
        ..options(&config)
    };
    let mut shim = Shim::new(options).unwrap();

    // The probe asks for 1000 ms, but the whole call has only 300: the request times out at the
    // call's deadline, and the guest either answers at once or is stopped by the deadline.
    let started = Instant::now();
    let injection = prompt(&mut shim, &format!("http {}/slow", server.origin()));
    assert!(
        started.elapsed() < Duration::from_millis(900),
        "{:?}",
        started.elapsed()
    );
    match injection.prepend_context.as_deref() {
        Some(text) => assert_eq!(text, "Err(HttpError::Timeout)"),
        None => _ = assert_fallback(&injection, "exceeded its 300 ms deadline"),
    }
}

#[test]
fn https_origins_are_allowed_and_an_unusable_ca_file_is_named_up_front() {
    let config = temp_dir("https");
    let https = ShimOptions {
        allowed_origins: vec!["https://graphiti.example".into()],
        ..options(&config)
    };
    Shim::new(https.clone()).expect("an https origin is allowed");

    let not_pem = config.path().join("ca.pem");
    std::fs::write(&not_pem, "just text\n").unwrap();
    let err = Shim::new(ShimOptions {
        extra_ca_file: Some(not_pem.clone()),
        ..https
    })
    .err()
    .expect("a CA file without certificates is refused");
    assert!(
        matches!(&err, ShimError::CaFile { path, .. } if *path == not_pem),
        "{err}"
    );
    assert!(err.to_string().contains("no certificate in it"), "{err}");

    let config = temp_dir("ftp");
    let err = Shim::new(ShimOptions {
        allowed_origins: vec!["ftp://graphiti.example".into()],
        ..options(&config)
    })
    .err()
    .expect("ftp is refused");
    assert!(matches!(err, ShimError::InvalidOrigin { .. }), "{err}");
}
