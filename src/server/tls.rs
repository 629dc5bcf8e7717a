//! TLS material (rustls through tonic): the server's certificate chain and key, the CAs of
//! client certificates for mutual TLS, and what the client subcommands trust.
//!
//! Every file is read and parsed here, before anything listens, so a missing file or a
//! file that is not the PEM it should be stops the start with an error naming it.

use std::path::Path;
use std::time::Duration;

use rustls_pki_types::pem::PemObject;
use rustls_pki_types::{CertificateDer, PrivateKeyDer};
use tonic::transport::{Certificate, ClientTlsConfig, Identity, ServerTlsConfig};

use super::config::{ConfigError, TlsConfig};

/// How long a client may take over the TLS handshake before the server drops it.
pub const HANDSHAKE_TIMEOUT: Duration = Duration::from_secs(10);

fn read(what: &str, path: &Path) -> Result<Vec<u8>, ConfigError> {
    std::fs::read(path).map_err(|e| ConfigError(format!("TLS {what} {}: {e}", path.display())))
}

/// Reads a PEM file of certificates; at least one `CERTIFICATE` block.
fn certificates(what: &str, path: &Path) -> Result<Vec<u8>, ConfigError> {
    let pem = read(what, path)?;
    let n = CertificateDer::pem_slice_iter(&pem)
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| {
            ConfigError(format!(
                "TLS {what} {}: not a valid PEM file: {e}",
                path.display()
            ))
        })?
        .len();
    if n == 0 {
        return Err(ConfigError(format!(
            "TLS {what} {}: no PEM CERTIFICATE block in the file",
            path.display()
        )));
    }
    Ok(pem)
}

/// Reads a PEM private key (PKCS#8, PKCS#1 or SEC1).
fn private_key(what: &str, path: &Path) -> Result<Vec<u8>, ConfigError> {
    let pem = read(what, path)?;
    PrivateKeyDer::from_pem_slice(&pem).map_err(|e| {
        ConfigError(format!(
            "TLS {what} {}: no PEM private key (PKCS#8, PKCS#1 or SEC1) in the file: {e}",
            path.display()
        ))
    })?;
    Ok(pem)
}

/// The server's TLS setting, every file read and checked, and the key checked against the
/// certificate.
///
/// # Errors
/// A file is missing or unreadable, is not the PEM it should be, or the key does not
/// belong to the certificate.
pub fn server_config(tls: &TlsConfig) -> Result<ServerTlsConfig, ConfigError> {
    let cert = certificates("certificate", &tls.cert)?;
    let key = private_key("private key", &tls.key)?;
    let mut config = ServerTlsConfig::new()
        .identity(Identity::from_pem(cert, key))
        .timeout(HANDSHAKE_TIMEOUT);
    if let Some(ca) = &tls.client_ca {
        config = config.client_ca_root(Certificate::from_pem(certificates("client CA", ca)?));
    }
    // rustls builds its server configuration here: this is where a key that does not
    // match the certificate is refused.
    tonic::transport::Server::builder()
        .tls_config(config.clone())
        .map_err(|e| {
            ConfigError(format!(
                "TLS certificate {} with key {}: {}",
                tls.cert.display(),
                tls.key.display(),
                error_chain(&e)
            ))
        })?;
    Ok(config)
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
