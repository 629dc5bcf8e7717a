//! TLS material (rustls through tonic): the server's certificate chain and key, the CAs of
//! client certificates for mutual TLS, and what the client subcommands trust.
//!
//! Every file is read and parsed here, before anything listens, so a missing file or a
//! file that is not the PEM it should be stops the start with an error naming it.
//!
//! The server's TLS is rustls's own configuration, accepted by `server::conn` rather than
//! by tonic (whose acceptor offers only `h2` over ALPN): ALPN offers `h2` and `http/1.1`,
//! so gRPC clients get HTTP/2 and `curl --http1.1`, relay tools and browsers that speak
//! HTTP/1.1 reach grpc-web and the HTTP routes on the same port.

use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use rustls_pki_types::pem::PemObject;
use rustls_pki_types::{CertificateDer, PrivateKeyDer};
use tokio_rustls::TlsAcceptor;
use tokio_rustls::rustls::server::WebPkiClientVerifier;
use tokio_rustls::rustls::{RootCertStore, ServerConfig};
use tonic::transport::{Certificate, ClientTlsConfig, Identity};

use super::config::{ConfigError, TlsConfig};

/// How long a client may take over the TLS handshake before the server drops it.
pub const HANDSHAKE_TIMEOUT: Duration = Duration::from_secs(10);

fn read(what: &str, path: &Path) -> Result<Vec<u8>, ConfigError> {
    std::fs::read(path).map_err(|e| ConfigError(format!("TLS {what} {}: {e}", path.display())))
}

/// Reads a PEM file of certificates; at least one `CERTIFICATE` block.
fn certificates(what: &str, path: &Path) -> Result<Vec<u8>, ConfigError> {
    parsed_certificates(what, path).map(|(pem, _)| pem)
}

/// A PEM file of certificates, as text and parsed; at least one `CERTIFICATE` block.
fn parsed_certificates(
    what: &str,
    path: &Path,
) -> Result<(Vec<u8>, Vec<CertificateDer<'static>>), ConfigError> {
    let pem = read(what, path)?;
    let certs = CertificateDer::pem_slice_iter(&pem)
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| {
            ConfigError(format!(
                "TLS {what} {}: not a valid PEM file: {e}",
                path.display()
            ))
        })?;
    if certs.is_empty() {
        return Err(ConfigError(format!(
            "TLS {what} {}: no PEM CERTIFICATE block in the file",
            path.display()
        )));
    }
    Ok((pem, certs))
}

/// Reads a PEM private key (PKCS#8, PKCS#1 or SEC1).
fn private_key(what: &str, path: &Path) -> Result<Vec<u8>, ConfigError> {
    parsed_private_key(what, path).map(|(pem, _)| pem)
}

fn parsed_private_key(
    what: &str,
    path: &Path,
) -> Result<(Vec<u8>, PrivateKeyDer<'static>), ConfigError> {
    let pem = read(what, path)?;
    let key = PrivateKeyDer::from_pem_slice(&pem).map_err(|e| {
        ConfigError(format!(
            "TLS {what} {}: no PEM private key (PKCS#8, PKCS#1 or SEC1) in the file: {e}",
            path.display()
        ))
    })?;
    Ok((pem, key))
}

/// The protocols the server offers over ALPN, in its order of preference.
pub const ALPN: [&[u8]; 2] = [b"h2", b"http/1.1"];

/// The server's TLS: rustls's configuration, ALPN offering [`ALPN`].
#[derive(Debug, Clone)]
pub struct ServerTls {
    config: Arc<ServerConfig>,
}

impl ServerTls {
    /// What accepts a connection's TLS handshake.
    pub fn acceptor(&self) -> TlsAcceptor {
        TlsAcceptor::from(self.config.clone())
    }
}

/// The server's TLS setting, every file read and checked, and the key checked against the
/// certificate.
///
/// # Errors
/// A file is missing or unreadable, is not the PEM it should be, or the key does not
/// belong to the certificate.
pub fn server_config(tls: &TlsConfig) -> Result<ServerTls, ConfigError> {
    let (_, chain) = parsed_certificates("certificate", &tls.cert)?;
    let (_, key) = parsed_private_key("private key", &tls.key)?;
    let builder = ServerConfig::builder();
    let builder = match &tls.client_ca {
        None => builder.with_no_client_auth(),
        Some(ca) => {
            let (_, cas) = parsed_certificates("client CA", ca)?;
            let mut roots = RootCertStore::empty();
            let (added, _) = roots.add_parsable_certificates(cas);
            if added == 0 {
                return Err(ConfigError(format!(
                    "TLS client CA {}: no certificate in it can be a trust anchor",
                    ca.display()
                )));
            }
            let verifier = WebPkiClientVerifier::builder(Arc::new(roots))
                .build()
                .map_err(|e| ConfigError(format!("TLS client CA {}: {e}", ca.display())))?;
            builder.with_client_cert_verifier(verifier)
        }
    };
    // This is where a key that does not match the certificate is refused.
    let mut config = builder.with_single_cert(chain, key).map_err(|e| {
        ConfigError(format!(
            "TLS certificate {} with key {}: {}",
            tls.cert.display(),
            tls.key.display(),
            error_chain(&e)
        ))
    })?;
    config.alpn_protocols = ALPN.iter().map(|p| p.to_vec()).collect();
    Ok(ServerTls {
        config: Arc::new(config),
    })
}

/// What a client trusts and presents.
#[derive(Debug, Clone, Default)]
pub struct ClientTls<'a> {
    /// A private CA to trust instead of the system's roots.
    pub ca_cert: Option<&'a Path>,
    /// A client certificate chain, for a server requiring mutual TLS.
    pub cert: Option<&'a Path>,
    /// Its private key.
    pub key: Option<&'a Path>,
}

/// The client side: trusts `ca_cert` if given, the system's roots otherwise; presents a
/// client certificate if given.
///
/// # Errors
/// As [`server_config`], and a client certificate without its key (or the other way).
pub fn client_config(tls: &ClientTls<'_>) -> Result<ClientTlsConfig, ConfigError> {
    let mut config = ClientTlsConfig::new();
    config = match tls.ca_cert {
        Some(ca) => config.ca_certificate(Certificate::from_pem(certificates("CA", ca)?)),
        None => config.with_native_roots(),
    };
    match (tls.cert, tls.key) {
        (Some(cert), Some(key)) => {
            let cert = certificates("client certificate", cert)?;
            let key = private_key("client key", key)?;
            config = config.identity(Identity::from_pem(cert, key));
        }
        (None, None) => {}
        (Some(_), None) => {
            return Err(ConfigError(
                "TLS: --client-cert needs --client-key (ARBITER_CLIENT_KEY)".into(),
            ));
        }
        (None, Some(_)) => {
            return Err(ConfigError(
                "TLS: --client-key needs --client-cert (ARBITER_CLIENT_CERT)".into(),
            ));
        }
    }
    Ok(config)
}

/// An error and its sources on one line (tonic's top-level messages are terse).
pub fn error_chain(e: &(dyn std::error::Error + 'static)) -> String {
    let mut out = e.to_string();
    let mut source = e.source();
    while let Some(s) = source {
        let text = s.to_string();
        if !out.contains(&text) {
            out.push_str(": ");
            out.push_str(&text);
        }
        source = s.source();
    }
    out
}
