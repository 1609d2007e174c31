//! The roots `https` origins are checked against: the system's, found as OpenSSL finds them
//! (`SSL_CERT_FILE` and `SSL_CERT_DIR` replace the system's bundle when set), plus an extra CA file
//! the user names (as Node's `NODE_EXTRA_CA_CERTS` adds to Node's). rustls with the ring provider.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use rustls::RootCertStore;
use rustls::pki_types::CertificateDer;
use rustls::pki_types::pem::PemObject;
use ureq::tls::{Certificate, RootCerts, TlsConfig, TlsProvider};

/// The environment variable OpenSSL reads for its CA bundle; rustls-native-certs reads it too.
pub(crate) const SSL_CERT_FILE: &str = "SSL_CERT_FILE";

/// A CA file that cannot be used, and where it was named.
#[derive(Debug)]
pub(crate) struct CaFileError {
    /// `SSL_CERT_FILE`, or [`EXTRA_CA_FILE`].
    pub(crate) named_by: &'static str,
    pub(crate) path: PathBuf,
    pub(crate) reason: String,
}

/// How [`CaFileError::named_by`] names the extra CA file of [`ShimOptions`](crate::ShimOptions).
pub const EXTRA_CA_FILE: &str = "extra CA file";

/// The TLS settings for an agent that may reach `https` origins.
pub(crate) fn tls_config(extra_ca_file: Option<&Path>) -> Result<TlsConfig, CaFileError> {
    let mut roots = system_roots()?;
    if let Some(path) = extra_ca_file {
        roots.extend(read_ca_file(EXTRA_CA_FILE, path)?);
    }
    let roots: Vec<Certificate<'static>> = roots
        .iter()
        .map(|der| Certificate::from_der(der.as_ref()).to_owned())
        .collect();
    Ok(TlsConfig::builder()
        .provider(TlsProvider::Rustls)
        .unversioned_rustls_crypto_provider(Arc::new(rustls::crypto::ring::default_provider()))
        .root_certs(RootCerts::new_with_certs(&roots))
        .build())
}

/// For an agent that reaches only `http` origins: no roots are read, and a TLS connection (which
/// the allowlist never lets happen) would trust nothing.
pub(crate) fn no_roots() -> TlsConfig {
    TlsConfig::builder()
        .provider(TlsProvider::Rustls)
        .unversioned_rustls_crypto_provider(Arc::new(rustls::crypto::ring::default_provider()))
        .root_certs(RootCerts::new_with_certs(&[]))
        .build()
}

/// The system's roots. A set `SSL_CERT_FILE` is read first on its own, so a wrong one is an error
/// naming it rather than a silently empty trust store.
fn system_roots() -> Result<Vec<CertificateDer<'static>>, CaFileError> {
    if let Some(path) = std::env::var_os(SSL_CERT_FILE).filter(|path| !path.is_empty()) {
        read_ca_file(SSL_CERT_FILE, Path::new(&path))?;
    }
    // Unreadable entries of the system's store (one bad file in /etc/ssl/certs) are skipped, as
    // OpenSSL skips them; an empty store shows up as "unknown issuer" on the first connection.
    Ok(rustls_native_certs::load_native_certs().certs)
}

/// Every certificate of a PEM file, each checked to be usable as a trust anchor.
pub(crate) fn read_ca_file(
    named_by: &'static str,
    path: &Path,
) -> Result<Vec<CertificateDer<'static>>, CaFileError> {
    let error = |reason: String| CaFileError {
        named_by,
        path: path.to_path_buf(),
        reason,
    };
    let bytes = std::fs::read(path).map_err(|err| error(format!("cannot read it: {err}")))?;
    let certs = CertificateDer::pem_slice_iter(&bytes)
        .enumerate()
        .map(|(index, cert)| {
            cert.map_err(|err| error(format!("certificate {} is not valid PEM: {err}", index + 1)))
        })
        .collect::<Result<Vec<_>, _>>()?;
    if certs.is_empty() {
        return Err(error(
            "no certificate in it (expected PEM blocks: -----BEGIN CERTIFICATE-----)".into(),
        ));
    }
    let mut store = RootCertStore::empty();
    for (index, cert) in certs.iter().enumerate() {
        store.add(cert.clone()).map_err(|err| {
            error(format!(
                "certificate {} cannot be used as a CA: {err}",
                index + 1
            ))
        })?;
    }
    Ok(certs)
}

/// Errors that only the handshake raises, before any request byte is sent.
pub(crate) fn is_handshake_refusal(err: &rustls::Error) -> bool {
    matches!(
        err,
        rustls::Error::InvalidCertificate(_)
            | rustls::Error::PeerIncompatible(_)
            | rustls::Error::NoCertificatesPresented
            | rustls::Error::UnsupportedNameType
            | rustls::Error::InappropriateHandshakeMessage { .. }
    )
}

/// What a failed TLS handshake means to a user, for the WIT `connect` text.
pub(crate) fn handshake_failure(err: &rustls::Error, origin: &str) -> String {
    use rustls::CertificateError as Cert;
    let what = match err {
        rustls::Error::InvalidCertificate(cert) => match cert {
            Cert::UnknownIssuer => "its certificate is signed by an unknown issuer (not among the \
                 system's roots, SSL_CERT_FILE or the extra CA file)"
                .to_string(),
            Cert::NotValidForName | Cert::NotValidForNameContext { .. } => {
                "its certificate is not valid for this host name".to_string()
            }
            Cert::Expired | Cert::ExpiredContext { .. } => {
                "its certificate has expired".to_string()
            }
            Cert::NotValidYet | Cert::NotValidYetContext { .. } => {
                "its certificate is not valid yet".to_string()
            }
            Cert::Revoked => "its certificate is revoked".to_string(),
            Cert::Other(other)
                if other.0.downcast_ref::<webpki::Error>()
                    == Some(&webpki::Error::CaUsedAsEndEntity) =>
            {
                "its certificate is marked as a CA (CA:TRUE, as `openssl req -x509` makes a \
                 self-signed one by default), and a CA's certificate cannot also be the server's: \
                 make the self-signed certificate with `-addext \
                 basicConstraints=critical,CA:FALSE`, or sign a server certificate with that CA \
                 and give the CA as the CA file"
                    .to_string()
            }
            Cert::BadSignature => "its certificate has a bad signature".to_string(),
            other => format!("its certificate was refused: {other:?}"),
        },
        other => format!("{other}"),
    };
    format!("TLS handshake with {origin} failed: {what}")
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A file holding `contents`, its name ending in `name`, removed when dropped: when the test
    /// ends, passed or failed.
    fn temp_file(name: &str, contents: &[u8]) -> tempfile::NamedTempFile {
        let mut file = tempfile::Builder::new()
            .prefix("graphiti-openclaw-tls-")
            .suffix(name)
            .tempfile()
            .expect("a temporary file");
        std::io::Write::write_all(&mut file, contents).unwrap();
        file
    }

    #[test]
    fn a_missing_ca_file_is_named_with_the_reason() {
        let path = Path::new("/nonexistent/graphiti-openclaw/ca.pem");
        let err = read_ca_file(EXTRA_CA_FILE, path).unwrap_err();
        assert_eq!(err.path, path);
        assert!(err.reason.starts_with("cannot read it:"), "{}", err.reason);
    }

    #[test]
    fn a_file_without_certificates_is_refused() {
        let file = temp_file("empty.pem", b"not a certificate\n");
        let err = read_ca_file(SSL_CERT_FILE, file.path()).unwrap_err();
        assert_eq!(err.named_by, SSL_CERT_FILE);
        assert!(
            err.reason.contains("no certificate in it"),
            "{}",
            err.reason
        );
    }

    #[test]
    fn a_damaged_certificate_is_refused_with_its_number() {
        let file = temp_file(
            "damaged.pem",
            b"-----BEGIN CERTIFICATE-----\nMIIBnot-base64!!\n-----END CERTIFICATE-----\n",
        );
        let err = read_ca_file(EXTRA_CA_FILE, file.path()).unwrap_err();
        assert!(err.reason.starts_with("certificate 1 "), "{}", err.reason);
    }

    #[test]
    fn well_formed_pem_that_is_no_certificate_is_refused_as_a_ca() {
        let file = temp_file(
            "garbage.pem",
            b"-----BEGIN CERTIFICATE-----\nAAECAwQF\n-----END CERTIFICATE-----\n",
        );
        let err = read_ca_file(EXTRA_CA_FILE, file.path()).unwrap_err();
        assert!(
            err.reason
                .starts_with("certificate 1 cannot be used as a CA"),
            "{}",
            err.reason
        );
    }

    #[test]
    fn handshake_failures_name_the_certificate_problem_and_the_origin() {
        let unknown = rustls::Error::InvalidCertificate(rustls::CertificateError::UnknownIssuer);
        assert!(is_handshake_refusal(&unknown));
        let text = handshake_failure(&unknown, "https://localhost:8443");
        assert!(text.contains("https://localhost:8443"), "{text}");
        assert!(text.contains("unknown issuer"), "{text}");
    }
}
