//! Server reflection in both protocol versions and the README's `grpcurl` lines.
//!
//! The real server on 127.0.0.1:0. Over `grpc.reflection.v1` and `grpc.reflection.v1alpha`
//! (tonic-reflection's generated clients) the test lists the services, resolves each one
//! as a reflection client does (the file containing the symbol, then its imports by file
//! name, then every method's request and response type), and calls
//! `grpc.health.v1.Health/Check`. The README's `grpcurl` lines are read out of README.md
//! (so the two cannot drift): every method they call is resolved over reflection and
//! every JSON field and enum value they send is checked against its request message; if
//! `grpcurl` is on PATH the lines are then run as written (only the address and the game
//! id replaced), and otherwise that part is skipped with a note on stderr.

use std::collections::{BTreeMap, BTreeSet};
use std::io::{BufRead, BufReader, Write};
use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::Arc;
use std::time::Duration;

use draughts_arbiter::api::pb;
use draughts_arbiter::server::config::{Config, FileConfig};
use draughts_arbiter::server::run::run;
use draughts_arbiter::store::MemoryStore;
use prost::Message;
use prost_types::field_descriptor_proto::Type;
use prost_types::{DescriptorProto, EnumDescriptorProto, FileDescriptorProto};
use tokio_stream::StreamExt;
use tonic::transport::{Channel, Endpoint};
use tonic_health::pb::HealthCheckRequest;
use tonic_health::pb::health_check_response::ServingStatus;
use tonic_health::pb::health_client::HealthClient;

const HEALTH: &str = "grpc.health.v1.Health";
const REFLECTION_V1: &str = "grpc.reflection.v1.ServerReflection";
const REFLECTION_V1ALPHA: &str = "grpc.reflection.v1alpha.ServerReflection";
/// The address the README's lines name; replaced by the test server's.
const README_ADDR: &str = "localhost:50051";
/// The README's placeholder for a game id, as it stands in the JSON (`"game_id":"ID"`).
const README_ID: &str = "\"ID\"";

struct Server {
    addr: std::net::SocketAddr,
    channel: Channel,
    _stop: tokio::sync::oneshot::Sender<()>,
}

async fn start() -> Server {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind");
    let addr = listener.local_addr().expect("addr");
    let config = Config::resolve(
        FileConfig::default(),
        Some(addr),
        None,
        true,
        None,
        None,
        false,
    )
    .expect("config");
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    tokio::spawn(async move {
        run(&config, Arc::new(MemoryStore::new()), listener, async {
            let _ = stopped.await;
        })
        .await
        .expect("server runs");
    });
    let endpoint = Endpoint::from_shared(format!("http://{addr}")).expect("url");
    for _ in 0..100 {
        if let Ok(channel) = endpoint.connect().await {
            return Server {
                addr,
                channel,
                _stop: stop,
            };
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    panic!("server did not come up");
}

/// A reflection question, the same in both protocol versions.
#[derive(Clone, Debug)]
enum Ask {
    ListServices,
    FileContainingSymbol(String),
    FileByFilename(String),
}

/// A reflection answer, the same in both protocol versions.
#[derive(Debug)]
enum Answer {
    Services(Vec<String>),
    Files(Vec<FileDescriptorProto>),
    Error(i32, String),
}

#[derive(Clone, Copy, Debug)]
enum Version {
    V1,
    V1alpha,
}

/// One reflection stream per call, `asks` sent on it, one answer per ask in order (or
/// fewer: a stream error is the last answer). The
/// two versions' generated types are distinct but identical, hence the macro.
macro_rules! exchange {
    ($pb:path, $channel:expr, $asks:expr) => {{
        use r::server_reflection_request::MessageRequest;
        use r::server_reflection_response::MessageResponse;
        use $pb as r;
        let asks: Vec<Ask> = $asks;
        let n = asks.len();
        let requests: Vec<r::ServerReflectionRequest> = asks
            .into_iter()
            .map(|ask| r::ServerReflectionRequest {
                host: String::new(),
                message_request: Some(match ask {
                    Ask::ListServices => MessageRequest::ListServices(String::new()),
                    Ask::FileContainingSymbol(s) => MessageRequest::FileContainingSymbol(s),
                    Ask::FileByFilename(f) => MessageRequest::FileByFilename(f),
                }),
            })
            .collect();
        let mut client = r::server_reflection_client::ServerReflectionClient::new($channel);
        let mut stream = client
            .server_reflection_info(tokio_stream::iter(requests))
            .await
            .expect("reflection stream opens")
            .into_inner();
        let mut answers = Vec::with_capacity(n);
        while answers.len() < n {
            // tonic-reflection ends the stream with a status where the protocol has an
            // ErrorResponse (an unknown symbol): the same answer to a client.
            let response = match stream.next().await.expect("one answer per request") {
                Ok(response) => response,
                Err(status) => {
                    answers.push(Answer::Error(
                        status.code() as i32,
                        status.message().to_string(),
                    ));
                    break;
                }
            };
            answers.push(
                match response.message_response.expect("a message response") {
                    MessageResponse::ListServicesResponse(l) => {
                        Answer::Services(l.service.into_iter().map(|s| s.name).collect())
                    }
                    MessageResponse::FileDescriptorResponse(f) => Answer::Files(
                        f.file_descriptor_proto
                            .iter()
                            .map(|b| FileDescriptorProto::decode(b.as_slice()).expect("file"))
                            .collect(),
                    ),
                    MessageResponse::ErrorResponse(e) => {
                        Answer::Error(e.error_code, e.error_message)
                    }
                    other => panic!("unexpected answer {other:?}"),
                },
            );
        }
        answers
    }};
}

async fn ask(channel: &Channel, version: Version, asks: Vec<Ask>) -> Vec<Answer> {
    match version {
        Version::V1 => exchange!(tonic_reflection::pb::v1, channel.clone(), asks),
        Version::V1alpha => exchange!(tonic_reflection::pb::v1alpha, channel.clone(), asks),
    }
}

async fn list_services(channel: &Channel, version: Version) -> BTreeSet<String> {
    match ask(channel, version, vec![Ask::ListServices])
        .await
        .remove(0)
    {
        Answer::Services(names) => names.into_iter().collect(),
        other => panic!("{version:?}: list answered {other:?}"),
    }
}

/// The descriptors a reflection client learns about `symbol`: the file that defines it
/// and every file it imports, transitively, each fetched by name as grpcurl does.
#[derive(Default)]
struct Resolved {
    files: BTreeMap<String, FileDescriptorProto>,
    messages: BTreeMap<String, DescriptorProto>,
    enums: BTreeMap<String, EnumDescriptorProto>,
}

impl Resolved {
    fn add(&mut self, file: FileDescriptorProto) {
        let prefix = format!(".{}", file.package());
        for m in &file.message_type {
            self.add_message(&prefix, m);
        }
        for e in &file.enum_type {
            self.enums
                .insert(format!("{prefix}.{}", e.name()), e.clone());
        }
        self.files.insert(file.name().to_string(), file);
    }

    fn add_message(&mut self, prefix: &str, m: &DescriptorProto) {
        let name = format!("{prefix}.{}", m.name());
        for nested in &m.nested_type {
            self.add_message(&name, nested);
        }
        for e in &m.enum_type {
            self.enums.insert(format!("{name}.{}", e.name()), e.clone());
        }
        self.messages.insert(name, m.clone());
    }

    fn service(&self, full_name: &str) -> &prost_types::ServiceDescriptorProto {
        self.files
            .values()
            .find_map(|f| {
                f.service
                    .iter()
                    .find(|s| format!("{}.{}", f.package(), s.name()) == full_name)
            })
            .unwrap_or_else(|| panic!("{full_name} is in none of the files reflection gave"))
    }

    fn message(&self, type_name: &str) -> &DescriptorProto {
        self.messages
            .get(type_name)
            .unwrap_or_else(|| panic!("type {type_name} is in none of the resolved files"))
    }
}

async fn resolve(channel: &Channel, version: Version, symbol: &str) -> Resolved {
    let mut resolved = Resolved::default();
    let mut asks = vec![Ask::FileContainingSymbol(symbol.to_string())];
    while !asks.is_empty() {
        let answers = ask(channel, version, asks).await;
        let mut wanted = BTreeSet::new();
        for answer in answers {
            let Answer::Files(files) = answer else {
                panic!("{version:?}: resolving {symbol}: {answer:?}");
            };
            assert!(!files.is_empty(), "{version:?}: {symbol}: no file");
            for file in files {
                wanted.extend(file.dependency.iter().cloned());
                resolved.add(file);
            }
        }
        wanted.retain(|name| !resolved.files.contains_key(name));
        asks = wanted.into_iter().map(Ask::FileByFilename).collect();
    }
    resolved
}

/// Resolves `service` and checks that each of its methods' types is known.
async fn resolve_service(
    channel: &Channel,
    version: Version,
    service: &str,
) -> (Resolved, Vec<String>) {
    let resolved = resolve(channel, version, service).await;
    let methods: Vec<String> = resolved
        .service(service)
        .method
        .iter()
        .map(|m| {
            resolved.message(m.input_type());
            resolved.message(m.output_type());
            m.name().to_string()
        })
        .collect();
    assert!(!methods.is_empty(), "{version:?}: {service} has no method");
    (resolved, methods)
}

fn expected_services() -> BTreeSet<String> {
    pb::SERVICE_NAMES
        .iter()
        .copied()
        .chain([HEALTH, REFLECTION_V1, REFLECTION_V1ALPHA])
        .map(str::to_string)
        .collect()
}

#[tokio::test]
async fn reflection_v1_and_v1alpha_list_and_resolve_every_service() {
    let s = start().await;
    for version in [Version::V1, Version::V1alpha] {
        assert_eq!(
            list_services(&s.channel, version).await,
            expected_services(),
            "{version:?}"
        );
        for service in expected_services() {
            let (_, methods) = resolve_service(&s.channel, version, &service).await;
            if service == HEALTH {
                assert_eq!(methods, ["Check", "Watch"], "{version:?}");
            }
        }
        // The fixed RPCs are found by their method symbol too (what `grpcurl describe
        // draughts.arbiter.v1.GameService.GetGame` asks).
        let game = resolve(
            &s.channel,
            version,
            "draughts.arbiter.v1.GameService.GetGame",
        )
        .await;
        let get_game = game
            .service("draughts.arbiter.v1.GameService")
            .method
            .iter()
            .find(|m| m.name() == "GetGame")
            .expect("GetGame");
        assert_eq!(get_game.output_type(), ".draughts.arbiter.v1.Game");
        game.message(".draughts.arbiter.v1.Game");
        game.message(".google.protobuf.Timestamp");
        // A symbol nobody defines is NOT_FOUND (grpcurl's "symbol not found").
        let answers = ask(
            &s.channel,
            version,
            vec![Ask::FileContainingSymbol(
                "draughts.arbiter.v1.NoSuchService".into(),
            )],
        )
        .await;
        match &answers[..] {
            [Answer::Error(code, message)] => {
                assert_eq!(
                    *code,
                    tonic::Code::NotFound as i32,
                    "{version:?}: {message}"
                );
            }
            other => panic!("{version:?}: unknown symbol answered {other:?}"),
        }
    }
}

#[tokio::test]
async fn health_check_serves_the_server_and_every_service() {
    let s = start().await;
    let mut health = HealthClient::new(s.channel.clone());
    for service in std::iter::once("").chain(pb::SERVICE_NAMES) {
        let status = health
            .check(HealthCheckRequest {
                service: service.to_string(),
            })
            .await
            .unwrap_or_else(|e| panic!("Health/Check {service:?}: {e}"))
            .into_inner()
            .status;
        assert_eq!(status, ServingStatus::Serving as i32, "{service:?}");
    }
}

/// One `grpcurl` command of the README, continuation lines joined.
#[derive(Debug)]
struct GrpcurlLine {
    /// The line as the README has it (one line, `\` continuations joined).
    text: String,
    /// The `-d` request, if any.
    data: Option<serde_json::Value>,
    /// `package.Service/Method`, or None for `list`.
    method: Option<String>,
}

/// The `grpcurl` lines of the README's first sh block that has any.
fn readme_grpcurl_lines() -> Vec<GrpcurlLine> {
    let readme = std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("README.md"))
        .expect("README.md");
    let mut blocks = Vec::new();
    let mut current: Option<Vec<&str>> = None;
    for line in readme.lines() {
        match (&mut current, line.trim_start().starts_with("```")) {
            (None, true) => current = Some(Vec::new()),
            (Some(_), true) => blocks.push(current.take().expect("open block")),
            (Some(block), false) => block.push(line),
            (None, false) => {}
        }
    }
    let block = blocks
        .into_iter()
        .find(|b| b.iter().any(|l| l.trim_start().starts_with("grpcurl ")))
        .expect("a README block with grpcurl lines");
    let mut joined = Vec::new();
    let mut pending = String::new();
    for line in block {
        let line = line.trim();
        if let Some(head) = line.strip_suffix('\\') {
            pending.push_str(head.trim_end());
            pending.push(' ');
        } else {
            pending.push_str(line);
            joined.push(std::mem::take(&mut pending));
        }
    }
    joined
        .into_iter()
        .filter(|l| l.starts_with("grpcurl "))
        .map(|text| {
            let data = text.split_once(" -d '").map(|(_, rest)| {
                let json = rest.split_once('\'').expect("-d '…' closes").0;
                serde_json::from_str(json).unwrap_or_else(|e| panic!("{text}: -d: {e}"))
            });
            let method = text
                .split_whitespace()
                .last()
                .filter(|last| last.contains('/'))
                .map(str::to_string);
            GrpcurlLine { text, data, method }
        })
        .collect()
}

/// Every JSON field (proto or JSON name) of `data` is a field of `message`, and every
/// string given for an enum field is one of its values.
fn check_request(
    resolved: &Resolved,
    message: &DescriptorProto,
    data: &serde_json::Value,
    at: &str,
) {
    let object = data
        .as_object()
        .unwrap_or_else(|| panic!("{at}: not an object"));
    for (key, value) in object {
        let field = message
            .field
            .iter()
            .find(|f| f.name() == key || f.json_name() == key)
            .unwrap_or_else(|| panic!("{at}: {} has no field {key}", message.name()));
        match field.r#type() {
            Type::Enum => {
                let name = value
                    .as_str()
                    .unwrap_or_else(|| panic!("{at}: {key}: a name"));
                let e = &resolved.enums[field.type_name()];
                assert!(
                    e.value.iter().any(|v| v.name() == name),
                    "{at}: {name} is not a value of {}",
                    e.name()
                );
            }
            Type::Message => {
                check_request(resolved, resolved.message(field.type_name()), value, at);
            }
            _ => {}
        }
    }
}

#[tokio::test]
async fn readme_grpcurl_lines_resolve_over_reflection_and_run_with_grpcurl() {
    let lines = readme_grpcurl_lines();
    let methods: Vec<&str> = lines.iter().filter_map(|l| l.method.as_deref()).collect();
    for needed in [
        "draughts.arbiter.v1.GameService/CreateGame",
        "grpc.health.v1.Health/Check",
    ] {
        assert!(methods.contains(&needed), "the README calls {needed}");
    }
    assert!(
        lines
            .iter()
            .any(|l| l.method.is_none() && l.text.ends_with(" list")),
        "the README lists the services"
    );

    let s = start().await;
    // Each README call as grpcurl makes it, over both reflection versions (grpcurl 1.9+
    // asks v1 first, older ones v1alpha only).
    for version in [Version::V1, Version::V1alpha] {
        for line in &lines {
            let Some(method) = &line.method else { continue };
            let (service, name) = method.split_once('/').expect("Service/Method");
            let (resolved, _) = resolve_service(&s.channel, version, service).await;
            let m = resolved
                .service(service)
                .method
                .iter()
                .find(|m| m.name() == name)
                .unwrap_or_else(|| panic!("{version:?}: {service} has no {name}"));
            if let Some(data) = &line.data {
                check_request(
                    &resolved,
                    resolved.message(m.input_type()),
                    data,
                    &line.text,
                );
            }
        }
    }

    match Command::new("grpcurl").arg("-version").output() {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            // Not `eprintln!`: the harness captures that; a direct write shows in every run.
            let _ = writeln!(
                std::io::stderr().lock(),
                "SKIPPED: grpcurl is not on PATH: the README's {} grpcurl lines were resolved \
                 over reflection but not run",
                lines.len()
            );
            return;
        }
        Err(e) => panic!("grpcurl -version: {e}"),
        Ok(_) => {}
    }
    let addr = s.addr.to_string();
    let ran = tokio::task::spawn_blocking(move || run_with_grpcurl(&lines, &addr))
        .await
        .expect("grpcurl runs");
    let _ = writeln!(
        std::io::stderr().lock(),
        "ran the README's {ran} grpcurl lines with grpcurl"
    );
}

/// Runs each README line through `sh -c` as written, the address and the game id
/// replaced; a server stream (WatchGame) is read until the move played before it shows,
/// then stopped. Returns how many lines ran.
fn run_with_grpcurl(lines: &[GrpcurlLine], addr: &str) -> usize {
    let mut game_id: Option<String> = None;
    // The move the README's SubmitMove line plays, which its WatchGame line then shows.
    let mut played: Option<String> = None;
    for line in lines {
        assert!(
            line.text.contains(README_ADDR),
            "{}: names {README_ADDR}",
            line.text
        );
        let mut text = line.text.replace(README_ADDR, addr);
        if text.contains(README_ID) {
            let id = game_id
                .as_ref()
                .unwrap_or_else(|| panic!("{}: uses ID before CreateGame", line.text));
            text = text.replace(README_ID, &format!("\"{id}\""));
        }
        let method = line.method.as_deref().unwrap_or("list");
        if method.ends_with("/WatchGame") {
            let played = played
                .as_deref()
                .unwrap_or_else(|| panic!("{text}: watched before a SubmitMove line"));
            let out = read_stream_until(&text, played);
            assert!(
                out.contains(played),
                "{text}: the move {played} played: {out}"
            );
            continue;
        }
        let out = Command::new("sh")
            .arg("-c")
            .arg(&text)
            .output()
            .expect("sh runs");
        let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
        assert!(
            out.status.success(),
            "{text}: {}\n{stdout}\n{}",
            out.status,
            String::from_utf8_lossy(&out.stderr)
        );
        match method {
            "list" => {
                let listed: BTreeSet<String> =
                    stdout.lines().map(|l| l.trim().to_string()).collect();
                assert_eq!(listed, expected_services(), "{text}");
            }
            m if m.ends_with("/CreateGame") => {
                let game: serde_json::Value = serde_json::from_str(&stdout)
                    .unwrap_or_else(|e| panic!("{text}: {e}: {stdout}"));
                let id = game["id"].as_str().expect("the game's id");
                game_id = Some(id.to_string());
            }
            m if m.ends_with("/SubmitMove") => {
                let sent = line.data.as_ref().and_then(|d| d["move"].as_str());
                let sent = sent.expect("SubmitMove sends a move").to_string();
                assert!(stdout.contains(&sent), "{text}: {stdout}");
                played = Some(sent);
            }
            m if m.ends_with("/LegalMoves") => {
                assert!(stdout.contains("notation"), "{text}: {stdout}")
            }
            m if m.ends_with("Health/Check") => {
                assert!(stdout.contains("SERVING"), "{text}: {stdout}")
            }
            _ => {
                serde_json::from_str::<serde_json::Value>(&stdout)
                    .unwrap_or_else(|e| panic!("{text}: not JSON ({e}): {stdout}"));
            }
        }
    }
    lines.len()
}

/// Starts `command` and reads its stdout until `needle` shows (or 20 s pass), then
/// stops it. The stream does not end by itself: the game goes on.
fn read_stream_until(command: &str, needle: &str) -> String {
    let mut child = Command::new("sh")
        .arg("-c")
        .arg(format!("exec {command}"))
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .expect("sh runs");
    let stdout = child.stdout.take().expect("piped");
    let (tx, rx) = std::sync::mpsc::channel::<String>();
    std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines() {
            let Ok(line) = line else { break };
            if tx.send(line).is_err() {
                break;
            }
        }
    });
    let deadline = std::time::Instant::now() + Duration::from_secs(20);
    let mut out = String::new();
    while !out.contains(needle) {
        let left = deadline.saturating_duration_since(std::time::Instant::now());
        match rx.recv_timeout(left) {
            Ok(line) => {
                out.push_str(&line);
                out.push('\n');
            }
            Err(_) => break,
        }
    }
    let _ = child.kill();
    let _ = child.wait();
    out
}
