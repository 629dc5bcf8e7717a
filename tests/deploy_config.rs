//! The configuration files shipped under `deploy/` are valid for this build: the example
//! `arbiter.toml` and the one embedded in the Kubernetes Secret both parse, start a server
//! on a non-loopback address (tokens present, no `[tls]`), and cover every role.

use std::net::SocketAddr;
use std::path::{Path, PathBuf};

use draughts_arbiter::rules::Color;
use draughts_arbiter::server::auth::Role;
use draughts_arbiter::server::config::{Config, FileConfig};

fn repo_file(rel: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join(rel)
}

/// Checks what `serve` would check, with the address the deploy files use.
fn check_deployable(file: FileConfig, what: &str) {
    assert!(
        file.tls.is_none(),
        "{what}: `serve` refuses a [tls] section (not implemented yet)"
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
    assert!(
        file.metrics_listen.is_none(),
        "metrics are not implemented: the example must not enable them"
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
    assert!(
        roles
            .iter()
            .any(|r| matches!(r, Role::Board { game } if game == "open-r1-b1"))
    );
    for side in Color::ALL {
        assert!(roles.iter().any(
            |r| matches!(r, Role::Player { game, side: s } if game == "open-r1-b1" && *s == side)
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
    assert!(file.metrics_listen.is_none());
    check_deployable(file, "deploy/kubernetes/secret.example.yaml");
}
