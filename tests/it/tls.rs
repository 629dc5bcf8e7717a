//! TLS through rustls (issue #6, "TLS via rustls (cert/key paths in config)"): the real
//! server on 127.0.0.1:0 with a certificate from a CA made at test time (rcgen). A client
//! trusting that CA gets answers and a SERVING health status; a plaintext client and
//! clients not trusting the CA are refused; mutual TLS refuses a client without a
//! certificate from the client CA. The configuration errors name the file at fault.

use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use draughts_arbiter::api::pb;
use draughts_arbiter::api::pb::game_service_client::GameServiceClient;
use draughts_arbiter::cli::channel;
use draughts_arbiter::server::config::{Config, FileConfig, FileTls, TlsConfig};
use draughts_arbiter::server::run::run;
use draughts_arbiter::server::tls::{ClientTls, server_config};
use draughts_arbiter::store::MemoryStore;
use rcgen::{
    BasicConstraints, CertificateParams, DnType, ExtendedKeyUsagePurpose, IsCa, Issuer, KeyPair,
    KeyUsagePurpose, SanType,
};
use tonic::transport::{Channel, Endpoint};
use tonic_health::pb::HealthCheckRequest;
use tonic_health::pb::health_check_response::ServingStatus;
use tonic_health::pb::health_client::HealthClient;

/// A throw-away CA: its certificate PEM and what signs with it.
struct Ca {
    pem: String,
    issuer: Issuer<'static, KeyPair>,
}

fn ca(name: &str) -> Ca {
    let mut params = CertificateParams::new(Vec::<String>::new()).expect("params");
    params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
    params.distinguished_name.push(DnType::CommonName, name);
    params.key_usages = vec![KeyUsagePurpose::KeyCertSign, KeyUsagePurpose::CrlSign];
    let key = KeyPair::generate().expect("key");
    let cert = params.self_signed(&key).expect("self-signed");
    Ca {
        pem: cert.pem(),
        issuer: Issuer::new(params, key),
    }
}

/// A leaf certificate and its key (PEM) signed by `ca`: for 127.0.0.1 and localhost as a
/// server, or as a client.
fn leaf(ca: &Ca, server: bool) -> (String, String) {
    let mut params = CertificateParams::new(Vec::<String>::new()).expect("params");
    params.distinguished_name.push(
        DnType::CommonName,
        if server { "arbiter" } else { "arbiter-client" },
    );
    if server {
        params.subject_alt_names = vec![
            SanType::DnsName("localhost".try_into().expect("dns name")),
            SanType::IpAddress(IpAddr::V4(Ipv4Addr::LOCALHOST)),
        ];
    }
    params.extended_key_usages = vec![if server {
        ExtendedKeyUsagePurpose::ServerAuth
    } else {
        ExtendedKeyUsagePurpose::ClientAuth
    }];
    params.use_authority_key_identifier_extension = true;
    let key = KeyPair::generate().expect("key");
    let cert = params.signed_by(&key, &ca.issuer).expect("signed");
    (cert.pem(), key.serialize_pem())
}

fn write(dir: &Path, name: &str, text: &str) -> PathBuf {
    let path = dir.join(name);
    std::fs::write(&path, text).expect("write");
    path
}

/// The files of one set-up: a server CA and certificate, a client CA and client
/// certificate, and a CA nobody uses.
struct Pki {
    dir: tempfile::TempDir,
    ca: PathBuf,
    cert: PathBuf,
    key: PathBuf,
    client_ca: PathBuf,
    client_cert: PathBuf,
    client_key: PathBuf,
    other_ca: PathBuf,
}

fn pki() -> Pki {
    let dir = tempfile::tempdir().expect("tempdir");
    let server_ca = ca("test server CA");
    let (cert, key) = leaf(&server_ca, true);
    let client_ca = ca("test client CA");
    let (client_cert, client_key) = leaf(&client_ca, false);
    let other = ca("somebody else's CA");
    Pki {
        ca: write(dir.path(), "ca.pem", &server_ca.pem),
        cert: write(dir.path(), "cert.pem", &cert),
        key: write(dir.path(), "key.pem", &key),
        client_ca: write(dir.path(), "client-ca.pem", &client_ca.pem),
        client_cert: write(dir.path(), "client.pem", &client_cert),
        client_key: write(dir.path(), "client-key.pem", &client_key),
        other_ca: write(dir.path(), "other-ca.pem", &other.pem),
        dir,
    }
}

/// Starts the real server with TLS; returns its address and the stop switch.
async fn start(tls: FileTls) -> (SocketAddr, tokio::sync::oneshot::Sender<()>) {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind");
    let addr = listener.local_addr().expect("addr");
    let file = FileConfig {
        tls: Some(tls),
        ..FileConfig::default()
    };
    let config = Config::resolve(file, Some(addr), None, true, None, None, false).expect("config");
    assert!(config.tls.is_some());
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    tokio::spawn(async move {
        run(&config, Arc::new(MemoryStore::new()), listener, async {
            let _ = stopped.await;
        })
        .await
        .expect("server runs");
    });
    (addr, stop)
}

/// Connects, retrying while the server comes up; the last error if it never works.
async fn connect(url: &str, tls: &ClientTls<'_>) -> Result<Channel, String> {
    let mut last = String::new();
    for _ in 0..50 {
        match channel(url, tls).await {
            Ok(ch) => return Ok(ch),
            Err(e) => last = e,
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    Err(last)
}

async fn health(ch: Channel) -> Result<i32, tonic::Status> {
    HealthClient::new(ch)
        .check(HealthCheckRequest {
            service: String::new(),
        })
        .await
        .map(|r| r.into_inner().status)
}

async fn serving(ch: Channel) {
    // SERVING comes once recovery is done; with an empty store that is at once.
    for _ in 0..50 {
        if health(ch.clone()).await.expect("health over TLS") == ServingStatus::Serving as i32 {
            return;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    panic!("health never SERVING");
}

#[tokio::test]
async fn a_client_trusting_the_ca_is_served_and_others_are_refused() {
    let p = pki();
    let (addr, _stop) = start(FileTls {
        cert: Some(p.cert.clone()),
        key: Some(p.key.clone()),
        client_ca: None,
    })
    .await;
    let url = format!("https://{addr}");
    let trusting = ClientTls {
        ca_cert: Some(&p.ca),
        ..ClientTls::default()
    };
    let ch = connect(&url, &trusting).await.expect("TLS connection");
    serving(ch.clone()).await;
    let game = GameServiceClient::new(ch)
        .create_game(pb::CreateGameRequest {
            variant: pb::Variant::Russian as i32,
            time_control: "-".into(),
            ..Default::default()
        })
        .await
        .expect("a call over TLS")
        .into_inner();
    assert!(!game.id.is_empty());

    // The name checked is the one in the URL: localhost is in the certificate too.
    let by_name = format!("https://localhost:{}", addr.port());
    serving(connect(&by_name, &trusting).await.expect("by name")).await;

    // Plaintext HTTP/2 to the TLS port: no answer.
    let plain = Endpoint::from_shared(format!("http://{addr}")).expect("url");
    match plain.connect().await {
        Err(_) => {}
        Ok(ch) => assert!(
            health(ch).await.is_err(),
            "a plaintext client must not be answered"
        ),
    }

    // A client trusting another CA, and one with only the system's roots: the handshake
    // fails, so the connection does.
    let other = ClientTls {
        ca_cert: Some(&p.other_ca),
        ..ClientTls::default()
    };
    let e = channel(&url, &other)
        .await
        .expect_err("untrusted certificate");
    assert!(e.contains("cannot reach"), "{e}");
    assert!(
        channel(&url, &ClientTls::default()).await.is_err(),
        "a test CA is in no system trust store"
    );

    // TLS options against an http:// URL are a mistake said plainly.
    let e = channel(&format!("http://{addr}"), &trusting)
        .await
        .expect_err("http with --ca-cert");
    assert!(e.contains("https://"), "{e}");
    drop(p.dir);
}

#[tokio::test]
async fn mutual_tls_refuses_a_client_without_a_certificate_from_the_client_ca() {
    let p = pki();
    let (addr, _stop) = start(FileTls {
        cert: Some(p.cert.clone()),
        key: Some(p.key.clone()),
        client_ca: Some(p.client_ca.clone()),
    })
    .await;
    let url = format!("https://{addr}");
    let with_cert = ClientTls {
        ca_cert: Some(&p.ca),
        cert: Some(&p.client_cert),
        key: Some(&p.client_key),
    };
    serving(connect(&url, &with_cert).await.expect("mTLS")).await;

    // No client certificate: the server ends the handshake (TLS 1.3 may report it only
    // on the first request).
    let without = ClientTls {
        ca_cert: Some(&p.ca),
        ..ClientTls::default()
    };
    match channel(&url, &without).await {
        Err(_) => {}
        Ok(ch) => assert!(health(ch).await.is_err(), "served without a certificate"),
    }
    // A certificate from the wrong CA (the server's own, which is no client CA).
    let wrong = ClientTls {
        ca_cert: Some(&p.ca),
        cert: Some(&p.cert),
        key: Some(&p.key),
    };
    match channel(&url, &wrong).await {
        Err(_) => {}
        Ok(ch) => assert!(health(ch).await.is_err(), "served a foreign certificate"),
    }
    // Half a client identity is refused before connecting.
    let half = ClientTls {
        ca_cert: Some(&p.ca),
        cert: Some(&p.client_cert),
        key: None,
    };
    let e = channel(&url, &half).await.expect_err("cert without key");
    assert!(e.contains("--client-key"), "{e}");
}

/// Issue 37: with TLS on, ALPN offers `http/1.1` beside `h2`, so a client that speaks
/// only HTTP/1.1 (`curl --http1.1`, relay tools) reaches the HTTP routes and grpc-web.
/// Before: the handshake failed ("no application protocol"). gRPC clients still get h2.
#[tokio::test]
async fn a_client_offering_only_http1_is_served_over_tls() {
    use rustls_pki_types::pem::PemObject;
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    use tokio_rustls::rustls::{ClientConfig, RootCertStore, pki_types::ServerName};

    let p = pki();
    let (addr, _stop) = start(FileTls {
        cert: Some(p.cert.clone()),
        key: Some(p.key.clone()),
        client_ca: None,
    })
    .await;
    let trusting = ClientTls {
        ca_cert: Some(&p.ca),
        ..ClientTls::default()
    };
    let ch = connect(&format!("https://{addr}"), &trusting)
        .await
        .expect("a gRPC client over TLS (h2)");
    serving(ch.clone()).await;
    GameServiceClient::new(ch)
        .create_game(pb::CreateGameRequest {
            variant: pb::Variant::Russian as i32,
            time_control: "-".into(),
            event: "Over TLS".into(),
            round: "1".into(),
            board: 1,
            ..Default::default()
        })
        .await
        .expect("create over TLS");

    let mut roots = RootCertStore::empty();
    for cert in rustls_pki_types::CertificateDer::pem_file_iter(&p.ca).expect("CA file") {
        roots
            .add(cert.expect("CA certificate"))
            .expect("a trust anchor");
    }
    let mut config = ClientConfig::builder()
        .with_root_certificates(roots)
        .with_no_client_auth();
    config.alpn_protocols = vec![b"http/1.1".to_vec()];
    let tcp = tokio::net::TcpStream::connect(addr).await.expect("connect");
    let mut tls = tokio_rustls::TlsConnector::from(Arc::new(config))
        .connect(ServerName::try_from("localhost").expect("name"), tcp)
        .await
        .expect("a TLS handshake offering only http/1.1");
    assert_eq!(
        tls.get_ref().1.alpn_protocol(),
        Some(&b"http/1.1"[..]),
        "http/1.1 negotiated"
    );
    tls.write_all(
        b"GET /pdn/Over%20TLS/1 HTTP/1.1\r\nhost: localhost\r\nconnection: close\r\n\r\n",
    )
    .await
    .expect("write");
    let mut raw = Vec::new();
    // A TLS peer may close without close_notify after the answer: keep what came.
    let _ = tokio::time::timeout(Duration::from_secs(10), tls.read_to_end(&mut raw))
        .await
        .expect("the answer within 10 s");
    let reply = crate::common::http::parse(&raw).expect("an HTTP/1.1 answer");
    assert_eq!(reply.status, 200, "{reply:?}");
    assert!(
        reply.text().contains("[Event \"Over TLS\"]"),
        "{}",
        reply.text()
    );
    drop(p.dir);
}

fn tls(cert: &Path, key: &Path) -> TlsConfig {
    TlsConfig {
        cert: cert.to_path_buf(),
        key: key.to_path_buf(),
        client_ca: None,
    }
}

#[test]
fn a_missing_file_is_named() {
    let p = pki();
    let missing = p.dir.path().join("nope.pem");
    let e = server_config(&tls(&missing, &p.key)).expect_err("missing cert");
    assert!(
        e.0.contains("nope.pem") && e.0.contains("certificate"),
        "{e}"
    );
    let e = server_config(&tls(&p.cert, &missing)).expect_err("missing key");
    assert!(
        e.0.contains("nope.pem") && e.0.contains("private key"),
        "{e}"
    );
    let mut with_ca = tls(&p.cert, &p.key);
    with_ca.client_ca = Some(missing);
    let e = server_config(&with_ca).expect_err("missing client CA");
    assert!(e.0.contains("nope.pem") && e.0.contains("client CA"), "{e}");
}

#[test]
fn a_file_that_is_not_the_right_pem_is_named() {
    let p = pki();
    let junk = write(p.dir.path(), "junk.pem", "this is not PEM\n");
    let e = server_config(&tls(&junk, &p.key)).expect_err("junk cert");
    assert!(
        e.0.contains("junk.pem") && e.0.contains("CERTIFICATE"),
        "{e}"
    );
    // The key where the certificate should be, and the other way round.
    let e = server_config(&tls(&p.key, &p.key)).expect_err("key as cert");
    assert!(
        e.0.contains("key.pem") && e.0.contains("CERTIFICATE"),
        "{e}"
    );
    let e = server_config(&tls(&p.cert, &p.cert)).expect_err("cert as key");
    assert!(
        e.0.contains("cert.pem") && e.0.contains("private key"),
        "{e}"
    );
    // A truncated PEM block.
    let cut = std::fs::read_to_string(&p.cert).expect("read");
    let cut = write(p.dir.path(), "cut.pem", &cut[..cut.len() / 2]);
    let e = server_config(&tls(&cut, &p.key)).expect_err("truncated");
    assert!(e.0.contains("cut.pem"), "{e}");
    // A key that is not the certificate's.
    let e = server_config(&tls(&p.cert, &p.client_key)).expect_err("foreign key");
    assert!(
        e.0.contains("cert.pem") && e.0.contains("client-key.pem"),
        "{e}"
    );
    // And the good pair passes.
    server_config(&tls(&p.cert, &p.key)).expect("valid pair");
}

#[test]
fn a_certificate_needs_its_key_and_layers_like_the_other_settings() {
    let file: FileConfig = toml::from_str(
        r#"
        [tls]
        cert = "/etc/arbiter/cert.pem"
        "#,
    )
    .expect("toml");
    let e = Config::resolve(file.clone(), None, None, true, None, None, false)
        .expect_err("cert without key");
    assert!(
        e.0.contains("no private key") && e.0.contains("--tls-key"),
        "{e}"
    );

    // A flag (or ARBITER_TLS_KEY, through clap) completes the file's [tls].
    let mut layered = file.clone();
    layered.override_tls(None, Some("/run/secrets/key.pem".into()), None);
    let c = Config::resolve(layered, None, None, true, None, None, false).expect("complete");
    let t = c.tls.expect("tls on");
    assert_eq!(t.cert, Path::new("/etc/arbiter/cert.pem"));
    assert_eq!(t.key, Path::new("/run/secrets/key.pem"));

    // A flag wins over the file.
    let mut over = file;
    over.override_tls(Some("/other.pem".into()), Some("/k.pem".into()), None);
    let c = Config::resolve(over, None, None, true, None, None, false).expect("complete");
    assert_eq!(c.tls.expect("tls").cert, Path::new("/other.pem"));

    // A key alone, or a client CA alone, is no TLS setting either.
    let mut key_only = FileConfig::default();
    key_only.override_tls(None, Some("/k.pem".into()), None);
    let e = Config::resolve(key_only, None, None, true, None, None, false).expect_err("key only");
    assert!(e.0.contains("no certificate"), "{e}");
    let mut ca_only = FileConfig::default();
    ca_only.override_tls(None, None, Some("/ca.pem".into()));
    assert!(Config::resolve(ca_only, None, None, true, None, None, false).is_err());

    // No TLS anywhere: none.
    let c =
        Config::resolve(FileConfig::default(), None, None, true, None, None, false).expect("plain");
    assert!(c.tls.is_none());
    assert!(
        toml::from_str::<FileConfig>("[tls]\ncertificate = \"x\"").is_err(),
        "unknown [tls] keys are refused"
    );
}

/// `serve` stops before opening anything, with exit code 2 and the file's name, when a
/// TLS file is missing.
#[test]
fn serve_exits_2_naming_a_missing_tls_file() {
    let dir = tempfile::tempdir().expect("tempdir");
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_draughts-arbiter"))
        .args(["serve", "--memory", "--listen", "127.0.0.1:0"])
        .arg("--tls-cert")
        .arg(dir.path().join("absent-cert.pem"))
        .arg("--tls-key")
        .arg(dir.path().join("absent-key.pem"))
        .env_remove("ARBITER_CONFIG")
        .output()
        .expect("run the binary");
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("absent-cert.pem"), "{stderr}");
}
