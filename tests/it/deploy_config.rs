//! The configuration files shipped under `deploy/` are valid for this build: the example
//! `arbiter.toml` and the one embedded in the Kubernetes Secret both parse, start a server
//! on a non-loopback address (tokens present), and cover every role; their metrics port is
//! the one the manifests expose and scrape, and their commented `[tls]` blocks parse once
//! uncommented.

use std::net::SocketAddr;
use std::path::{Path, PathBuf};

use draughts_arbiter::api::auth::{Place, Role};
use draughts_arbiter::rules::Color;
use draughts_arbiter::server::config::{Config, FileConfig};

fn repo_file(rel: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join(rel)
}

/// The metrics port every deploy file agrees on.
const METRICS_PORT: u16 = 9464;

/// The commented `# [tls]` block of a config (the `[tls]` line and the `# key = ...` lines
/// after it), uncommented; parsed, it must give a complete TLS setting.
fn check_commented_tls(text: &str, what: &str) {
    let mut lines = text.lines().map(str::trim_start);
    lines
        .by_ref()
        .find(|l| *l == "# [tls]")
        .unwrap_or_else(|| panic!("{what}: no commented [tls] example"));
    let mut toml_text = String::from("[tls]\n");
    for l in lines {
        let Some(kv) = l.strip_prefix("# ").filter(|kv| kv.contains(" = ")) else {
            break;
        };
        toml_text.push_str(kv);
        toml_text.push('\n');
    }
    let file: FileConfig =
        toml::from_str(&toml_text).unwrap_or_else(|e| panic!("{what}: [tls] example: {e}"));
    let config = Config::resolve(file, None, None, true, None, None, false)
        .unwrap_or_else(|e| panic!("{what}: [tls] example: {e}"));
    let tls = config
        .tls
        .unwrap_or_else(|| panic!("{what}: [tls] example turns TLS on"));
    assert!(
        tls.cert.starts_with("/etc/draughts-arbiter/tls")
            && tls.key.starts_with("/etc/draughts-arbiter/tls"),
        "{what}: the TLS files sit where the manifests mount them"
    );
}

/// Checks what `serve` would check, with the address the deploy files use.
fn check_deployable(file: FileConfig, what: &str) {
    assert!(
        file.tls.is_none(),
        "{what}: ships no certificate, so [tls] stays commented out"
    );
    assert_eq!(
        file.metrics_listen,
        Some(SocketAddr::from(([0, 0, 0, 0], METRICS_PORT))),
        "{what}: metrics on the port the deploy files expose"
    );
    assert_eq!(
        file.insecure,
        Some(false),
        "{what}: says `insecure = false` explicitly"
    );
    let mut arbiter = false;
    let mut board = false;
    let mut player = [false; 2];
    let mut viewer = false;
    for t in &file.tokens {
        assert!(!t.token.trim().is_empty(), "{what}: empty token");
        match &t.role {
            Role::Arbiter { .. } => arbiter = true,
            Role::Board { .. } => board = true,
            Role::Player { side, .. } => player[side.index()] = true,
            Role::Viewer => viewer = true,
        }
    }
    assert!(
        arbiter && board && player == [true, true] && viewer,
        "{what}: tokens for arbiter, board, both players and viewer"
    );
    let any: SocketAddr = "0.0.0.0:50051".parse().expect("addr");
    let config = Config::resolve(file, Some(any), None, false, None, None, false)
        .unwrap_or_else(|e| panic!("{what}: refused on {any}: {e}"));
    assert!(!config.insecure);
}

#[test]
fn example_config_parses_and_has_every_role() {
    let path = repo_file("deploy/arbiter.example.toml");
    let file = FileConfig::load(&path).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(file.listen, Some("0.0.0.0:50051".parse().expect("addr")));
    assert_eq!(
        file.data_dir.as_deref(),
        Some(Path::new("/var/lib/draughts-arbiter"))
    );
    check_commented_tls(
        &std::fs::read_to_string(&path).expect("example"),
        "deploy/arbiter.example.toml",
    );
    // The roles the comments promise: an event arbiter, a global arbiter, the board and
    // both players of game open-r1-b1, a viewer.
    let roles: Vec<&Role> = file.tokens.iter().map(|t| &t.role).collect();
    assert!(
        roles
            .iter()
            .any(|r| matches!(r, Role::Arbiter { event: Some(_) }))
    );
    assert!(
        roles
            .iter()
            .any(|r| matches!(r, Role::Arbiter { event: None }))
    );
    assert!(roles.iter().any(
        |r| matches!(r, Role::Board { event, place: Place::Game(game) } if game == "open-r1-b1" && event == "Open")
    ));
    for side in Color::ALL {
        assert!(roles.iter().any(
            |r| matches!(r, Role::Player { event, place: Place::Game(game), side: s } if game == "open-r1-b1" && event == "Open" && *s == side)
        ));
    }
    let mut tokens: Vec<&str> = file.tokens.iter().map(|t| t.token.as_str()).collect();
    tokens.sort_unstable();
    tokens.dedup();
    assert_eq!(tokens.len(), file.tokens.len(), "tokens are distinct");
    check_deployable(file, "deploy/arbiter.example.toml");
}

/// The `arbiter.toml: |` block scalar of the Secret manifest, dedented.
fn embedded_toml(yaml: &str, key: &str) -> String {
    let mut lines = yaml.lines();
    lines
        .by_ref()
        .find(|l| l.trim_start().starts_with(&format!("{key}: |")))
        .unwrap_or_else(|| panic!("no `{key}: |` block"));
    let mut indent = None;
    let mut out = String::new();
    for line in lines {
        if line.trim().is_empty() {
            out.push('\n');
            continue;
        }
        let n = line.len() - line.trim_start().len();
        let base = *indent.get_or_insert(n);
        if n < base {
            break;
        }
        out.push_str(&line[base..]);
        out.push('\n');
    }
    out
}

#[test]
fn kubernetes_secret_config_parses_and_has_every_role() {
    let path = repo_file("deploy/kubernetes/secret.example.yaml");
    let yaml = std::fs::read_to_string(&path).expect("secret manifest");
    let text = embedded_toml(&yaml, "arbiter.toml");
    let file: FileConfig =
        toml::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}\n{text}", path.display()));
    check_commented_tls(&text, "deploy/kubernetes/secret.example.yaml");
    check_deployable(file, "deploy/kubernetes/secret.example.yaml");
}

/// The manifests, the image and Compose expose the metrics port the configs set, and the
/// pods say where to scrape.
#[test]
fn the_metrics_port_is_exposed_and_scraped() {
    let read = |rel: &str| std::fs::read_to_string(repo_file(rel)).expect(rel);
    let port = METRICS_PORT.to_string();
    let sts = read("deploy/kubernetes/statefulset.yaml");
    assert!(
        sts.contains(&format!("containerPort: {port}")),
        "StatefulSet port"
    );
    assert!(
        sts.contains(&format!("prometheus.io/port: \"{port}\"")),
        "scrape port"
    );
    assert!(sts.contains("prometheus.io/scrape: \"true\""));
    assert!(sts.contains("prometheus.io/path: /metrics"));
    assert!(sts.contains("secretName: draughts-arbiter-tls") && sts.contains("optional: true"));
    let svc = read("deploy/kubernetes/service.yaml");
    assert!(svc.contains(&format!("port: {port}")), "Service port");
    assert!(read("deploy/Dockerfile").contains(&format!("EXPOSE 50051 {port}")));
    assert!(read("deploy/docker-compose.yml").contains(&format!("\"127.0.0.1:{port}:{port}\"")));
}
