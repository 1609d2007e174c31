//! `https` recall from the real CLI: the stand-in behind a TLS front whose certificate a CA made
//! here signed. Trusted through `--ca-file` or `SSL_CERT_FILE`, recall works over both transports;
//! trusted by neither, it fails with a `connect` error naming the unknown issuer and the origin.
//! Run after `scripts/build.sh`.

use graphiti_openclaw_tests::{copy_dir, example_config, temp_dir, workspace};
use graphiti_standin::{Options, StandIn};
use rcgen::{BasicConstraints, CertificateParams, DnType, IsCa, Issuer, KeyPair, KeyUsagePurpose};
use rustls::pki_types::{CertificateDer, PrivateKeyDer, PrivatePkcs8KeyDer};
use rustls::{ServerConfig, ServerConnection, StreamOwned};
use std::io::{ErrorKind, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::Path;
use std::process::Command;
use std::sync::Arc;
use std::time::{Duration, Instant};
use tempfile::TempDir;

/// A CA made for this test run, and a server certificate for 127.0.0.1 and localhost it signed.
struct TestPki {
    ca_pem: String,
    server: Arc<ServerConfig>,
}

fn test_pki() -> TestPki {
    let ca_key = KeyPair::generate().expect("CA key");
    let mut ca = CertificateParams::new(Vec::<String>::new()).expect("CA params");
    ca.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
    ca.distinguished_name
        .push(DnType::CommonName, "graphiti-openclaw test CA");
    ca.key_usages = vec![KeyUsagePurpose::KeyCertSign, KeyUsagePurpose::CrlSign];
    let ca_cert = ca.self_signed(&ca_key).expect("CA certificate");
    let issuer = Issuer::new(ca, ca_key);

    let server_key = KeyPair::generate().expect("server key");
    let server_cert = CertificateParams::new(vec!["127.0.0.1".into(), "localhost".into()])
        .expect("server params")
        .signed_by(&server_key, &issuer)
        .expect("server certificate");
    TestPki {
        ca_pem: ca_cert.pem(),
        server: server_config(server_cert.der(), &server_key),
    }
}

/// A TLS server presenting `cert`, whose key is `key`.
fn server_config(cert: &CertificateDer<'static>, key: &KeyPair) -> Arc<ServerConfig> {
    let key = PrivateKeyDer::Pkcs8(PrivatePkcs8KeyDer::from(key.serialize_der()));
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let server = ServerConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .expect("TLS versions")
        .with_no_client_auth()
        .with_single_cert(vec![cert.clone()], key)
        .expect("server TLS config");
    Arc::new(server)
}

/// Listens on 127.0.0.1 and relays each TLS connection, decrypted, to `upstream_port`. Returns
/// the port; the threads end with the test process.
fn tls_front(config: Arc<ServerConfig>, upstream_port: u16) -> u16 {
    let listener = TcpListener::bind("127.0.0.1:0").expect("bind the TLS front");
    let port = listener.local_addr().unwrap().port();
    std::thread::spawn(move || {
        for client in listener.incoming().flatten() {
            let config = config.clone();
            std::thread::spawn(move || {
                let upstream = TcpStream::connect(("127.0.0.1", upstream_port));
                if let (Ok(conn), Ok(upstream)) = (ServerConnection::new(config), upstream) {
                    relay(StreamOwned::new(conn, client), upstream);
                }
            });
        }
    });
    port
}

/// Copies both ways by polling with short read timeouts (a TLS stream cannot be split between
/// threads), until either side closes or fails, or after 30 s.
fn relay(mut tls: StreamOwned<ServerConnection, TcpStream>, mut upstream: TcpStream) {
    let poll = Some(Duration::from_millis(5));
    if tls.sock.set_read_timeout(poll).is_err() || upstream.set_read_timeout(poll).is_err() {
        return;
    }
    let idle =
        |err: &std::io::Error| matches!(err.kind(), ErrorKind::WouldBlock | ErrorKind::TimedOut);
    let deadline = Instant::now() + Duration::from_secs(30);
    let mut buf = vec![0u8; 16 * 1024];
    while Instant::now() < deadline {
        match tls.read(&mut buf) {
            Ok(0) => return,
            Ok(n) if upstream.write_all(&buf[..n]).is_err() => return,
            Ok(_) => {}
            Err(err) if idle(&err) => {}
            // A client that refused our certificate ends the handshake here.
            Err(_) => return,
        }
        match upstream.read(&mut buf) {
            Ok(0) => {
                tls.conn.send_close_notify();
                let _ = tls.flush();
                return;
            }
            Ok(n) if tls.write_all(&buf[..n]).and_then(|()| tls.flush()).is_err() => return,
            Ok(_) => {}
            Err(err) if idle(&err) => {}
            Err(_) => return,
        }
    }
}

/// The stand-in with one synthetic fact in the direct chat's group.
fn seeded_standin() -> StandIn {
    let standin = StandIn::start(Options::default()).expect("stand-in starts");
    standin
        .seed_json(
            r#"{"group_id": "main-dm-user-1",
                "nodes": [{"uuid": "n1", "name": "Nopa", "labels": ["Entity", "Place"],
                           "summary": "Nopa is a restaurant on Divisadero", "group_id": "main-dm-user-1"}],
                "facts": [{"uuid": "f1", "name": "WORKS_AT", "fact": "Marco is chef at Nopa",
                           "valid_at": "2024-06-01T00:00:00+00:00", "invalid_at": null, "expired_at": null}]}"#,
        )
        .expect("seed");
    standin
}

/// The example configuration with Graphiti at `url` over `transport`.
fn config_for(url: &str, transport: &str) -> TempDir {
    let dir = temp_dir("https-config");
    copy_dir(&example_config(), dir.path());
    let settings = format!(
        "schema_version: 1\ngraphiti:\n  url: {url}\n  transport: {transport}\nrecall:\n  timeout_ms: 10000\n"
    );
    std::fs::write(dir.path().join("settings.yaml"), settings).unwrap();
    dir
}

/// `recall` from the CLI with `origin` allowed; no CA variables from the test's own environment.
fn recall(config: &Path, origin: &str, extra: &[&str], env: &[(&str, &Path)]) -> (i32, String) {
    let state = temp_dir("https-state");
    let mut command = Command::new(workspace().join("target/release/graphiti-openclaw"));
    command
        .env_remove("SSL_CERT_FILE")
        .env_remove("SSL_CERT_DIR")
        .arg("--config-dir")
        .arg(config)
        .arg("--state-dir")
        .arg(state.path())
        .arg("--cache-dir")
        .arg(workspace().join("target/test-component-cache"))
        .args(["--quiet", "--allow-origin", origin])
        .args(extra)
        .args([
            "recall",
            "Where does Marco cook?",
            "--group-id",
            "main-dm-user-1",
        ]);
    for (name, value) in env {
        command.env(name, value);
    }
    let out = command.output().expect("the CLI runs");
    let text =
        String::from_utf8_lossy(&out.stdout).into_owned() + &String::from_utf8_lossy(&out.stderr);
    (out.status.code().unwrap_or(-1), text)
}

#[test]
fn https_recall_works_with_the_test_ca_and_fails_clearly_without_it() {
    let pki = test_pki();
    let dir = temp_dir("https-pki");
    let ca_file = dir.path().join("test-ca.pem");
    std::fs::write(&ca_file, &pki.ca_pem).unwrap();
    let ca_arg = ca_file.to_str().unwrap();
    let standin = seeded_standin();
    let port = tls_front(pki.server.clone(), standin.port());
    let origin = format!("https://127.0.0.1:{port}");

    for (transport, path) in [("mcp", "/mcp"), ("rest", "")] {
        let config = config_for(&format!("{origin}{path}"), transport);

        let (code, out) = recall(config.path(), &origin, &["--ca-file", ca_arg], &[]);
        assert_eq!(code, 0, "{transport} with --ca-file: {out}");
        assert!(
            out.contains("Marco is chef at Nopa"),
            "{transport} with --ca-file: {out}"
        );

        let (code, out) = recall(config.path(), &origin, &[], &[("SSL_CERT_FILE", &ca_file)]);
        assert_eq!(code, 0, "{transport} with SSL_CERT_FILE: {out}");
        assert!(
            out.contains("Marco is chef at Nopa"),
            "{transport} with SSL_CERT_FILE: {out}"
        );

        let (code, out) = recall(config.path(), &origin, &[], &[]);
        assert_eq!(code, 1, "{transport} without the CA: {out}");
        assert!(
            out.contains(&format!("TLS handshake with {origin} failed")),
            "{transport} without the CA names the origin: {out}"
        );
        assert!(
            out.contains("unknown issuer"),
            "{transport} without the CA: {out}"
        );
        assert!(!out.contains("Marco"), "{transport} without the CA: {out}");
    }
}

/// A server whose certificate is its own CA, as `openssl req -x509 …` makes one (CA:TRUE), and
/// that certificate's PEM.
fn self_signed_ca_server() -> (Arc<ServerConfig>, String) {
    let key = KeyPair::generate().expect("key");
    let mut params =
        CertificateParams::new(vec!["127.0.0.1".into(), "localhost".into()]).expect("params");
    params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
    let cert = params.self_signed(&key).expect("certificate");
    (server_config(cert.der(), &key), cert.pem())
}

#[test]
fn a_self_signed_certificate_marked_ca_is_refused_saying_what_to_do() {
    let (server, pem) = self_signed_ca_server();
    let dir = temp_dir("https-self-signed");
    let ca_file = dir.path().join("server.pem");
    std::fs::write(&ca_file, pem).unwrap();
    let standin = seeded_standin();
    let port = tls_front(server, standin.port());
    let origin = format!("https://127.0.0.1:{port}");
    let config = config_for(&format!("{origin}/mcp"), "mcp");
    let (code, out) = recall(config.path(), &origin, &["--ca-file", ca_file.to_str().unwrap()], &[]);
    assert_eq!(code, 1, "{out}");
    assert!(
        out.contains("CA:TRUE") && out.contains("basicConstraints=critical,CA:FALSE"),
        "{out}"
    );
    assert!(!out.contains("OtherError"), "{out}");
}

#[test]
fn an_unusable_ca_file_is_named_with_its_problem() {
    let dir = temp_dir("https-bad-ca");
    let standin = seeded_standin();
    let origin = "https://127.0.0.1:9";
    let config = config_for(&format!("{}/mcp", standin.url()), "mcp");

    let not_pem = dir.path().join("notes.txt");
    std::fs::write(&not_pem, "not a certificate\n").unwrap();
    let (code, out) = recall(
        config.path(),
        origin,
        &["--ca-file", not_pem.to_str().unwrap()],
        &[],
    );
    assert_eq!(code, 1, "{out}");
    assert!(
        out.contains(&format!(
            "--ca-file {}: no certificate in it",
            not_pem.display()
        )),
        "{out}"
    );

    let missing = dir.path().join("missing.pem");
    let (code, out) = recall(config.path(), origin, &[], &[("SSL_CERT_FILE", &missing)]);
    assert_eq!(code, 1, "{out}");
    assert!(
        out.contains(&format!(
            "SSL_CERT_FILE {}: cannot read it",
            missing.display()
        )),
        "{out}"
    );
}
