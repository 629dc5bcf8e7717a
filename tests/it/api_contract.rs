//! The gRPC contract: the descriptor set that server reflection serves decodes, holds the
//! six services with the RPC names fixed by issues 6 and 40, follows protobuf enum style, and
//! documents every message, field, enum value, service and method.

use std::collections::BTreeMap;

use draughts_arbiter::api::pb;
use prost::Message;
use prost_types::{FileDescriptorProto, FileDescriptorSet};

const PROTO_FILE: &str = "draughts/arbiter/v1/arbiter.proto";

fn arbiter_file() -> FileDescriptorProto {
    let set = FileDescriptorSet::decode(pb::FILE_DESCRIPTOR_SET).expect("descriptor set decodes");
    set.file
        .into_iter()
        .find(|f| f.name() == PROTO_FILE)
        .expect("arbiter.proto is in the set")
}

#[test]
fn descriptor_set_lists_the_six_services_with_their_fixed_methods() {
    let file = arbiter_file();
    assert_eq!(file.package(), "draughts.arbiter.v1");
    let services: BTreeMap<String, Vec<String>> = file
        .service
        .iter()
        .map(|s| {
            let methods = s.method.iter().map(|m| m.name().to_string()).collect();
            (format!("{}.{}", file.package(), s.name()), methods)
        })
        .collect();
    let mut names: Vec<&str> = services.keys().map(String::as_str).collect();
    let mut expected = pb::SERVICE_NAMES.to_vec();
    names.sort_unstable();
    expected.sort_unstable();
    assert_eq!(names, expected);

    let fixed: [(&str, &[&str]); 6] = [
        ("RulesService", &["LegalMoves"]),
        (
            "GameService",
            &[
                "CreateGame",
                "GetGame",
                "ListGames",
                "StartGame",
                "SubmitMove",
                "PressClock",
                "OfferDraw",
                "RespondToDrawOffer",
                "ClaimDraw",
                "Resign",
            ],
        ),
        ("BoardService", &["Connect"]),
        (
            "ArbiterService",
            &[
                "PauseClocks",
                "ResumeClocks",
                "AdjustClock",
                "DeclareResult",
                "RuleOnClaim",
                "RuleOnIrregularity",
                "IssueWarning",
                "SetPosition",
            ],
        ),
        (
            "BroadcastService",
            &["WatchGame", "WatchEvent", "ExportPdn"],
        ),
        (
            "TournamentService",
            &[
                "CreateTournament",
                "GetTournament",
                "AddPlayers",
                "WithdrawPlayer",
                "PairRound",
                "StartRound",
                "MarkAbsent",
                "RecordForfeit",
                "ImportPairings",
                "ExportTrf",
            ],
        ),
    ];
    for (service, methods) in fixed {
        let have = &services[&format!("draughts.arbiter.v1.{service}")];
        for method in methods {
            assert!(
                have.iter().any(|m| m == method),
                "{service}.{method} is missing"
            );
        }
    }

    let connect = file
        .service
        .iter()
        .find(|s| s.name() == "BoardService")
        .and_then(|s| s.method.iter().find(|m| m.name() == "Connect"))
        .expect("BoardService.Connect");
    assert!(connect.client_streaming() && connect.server_streaming());
    let watch = file
        .service
        .iter()
        .find(|s| s.name() == "BroadcastService")
        .and_then(|s| s.method.iter().find(|m| m.name() == "WatchGame"))
        .expect("BroadcastService.WatchGame");
    assert!(!watch.client_streaming() && watch.server_streaming());
    assert_eq!(watch.output_type(), ".draughts.arbiter.v1.GameEvent");
}

/// The server's reflection services (v1 and v1alpha) build from the descriptor sets it
/// registers (the API's, health's and reflection's own); `tests/reflection.rs` asks them.
#[test]
fn reflection_accepts_the_descriptor_sets() {
    draughts_arbiter::server::run::reflection().expect("reflection services build");
}

#[test]
fn enums_follow_protobuf_style() {
    let file = arbiter_file();
    for e in &file.enum_type {
        let prefix = screaming_snake(e.name());
        let zero = e
            .value
            .iter()
            .find(|v| v.number() == 0)
            .expect("a zero value");
        assert_eq!(
            zero.name(),
            format!("{prefix}_UNSPECIFIED"),
            "enum {}",
            e.name()
        );
        for v in &e.value {
            assert!(
                v.name().starts_with(&format!("{prefix}_")),
                "{} does not start with {prefix}_",
                v.name()
            );
        }
    }
    let variant = file
        .enum_type
        .iter()
        .find(|e| e.name() == "Variant")
        .expect("Variant");
    let names: Vec<&str> = variant.value.iter().map(|v| v.name()).collect();
    for v in [
        "RUSSIAN",
        "INTERNATIONAL",
        "ENGLISH",
        "BRAZILIAN",
        "POOL",
        "ITALIAN",
        "GIVEAWAY",
        "ANTIDRAUGHTS",
        "TURKISH",
        "FRISIAN",
        "TOWERS",
        "RUSSIAN80",
        "DIAGONAL",
        "CORNERS",
    ] {
        assert!(
            names.contains(&format!("VARIANT_{v}").as_str()),
            "VARIANT_{v}"
        );
    }
}

/// Proto comments are the client authors' documentation: nothing may be left without one.
#[test]
fn every_service_method_message_field_and_enum_value_is_commented() {
    let file = arbiter_file();
    let info = file.source_code_info.as_ref().expect("source info kept");
    let commented: std::collections::HashSet<&[i32]> = info
        .location
        .iter()
        .filter(|l| !l.leading_comments().trim().is_empty())
        .map(|l| l.path.as_slice())
        .collect();
    let mut missing = Vec::new();
    let mut check = |path: Vec<i32>, what: String| {
        if !commented.contains(path.as_slice()) {
            missing.push(what);
        }
    };
    // Field numbers of FileDescriptorProto / DescriptorProto / EnumDescriptorProto /
    // ServiceDescriptorProto, as SourceCodeInfo paths use them.
    const MESSAGE: i32 = 4;
    const ENUM: i32 = 5;
    const SERVICE: i32 = 6;
    const FIELD: i32 = 2;
    const ONEOF: i32 = 8;
    const VALUE: i32 = 2;
    const METHOD: i32 = 2;
    for (i, m) in file.message_type.iter().enumerate() {
        let i = i as i32;
        check(vec![MESSAGE, i], format!("message {}", m.name()));
        for (j, f) in m.field.iter().enumerate() {
            check(
                vec![MESSAGE, i, FIELD, j as i32],
                format!("{}.{}", m.name(), f.name()),
            );
        }
        for (j, o) in m.oneof_decl.iter().enumerate() {
            // proto3 `optional` fields get a synthetic oneof that has no source of its own.
            let synthetic = m
                .field
                .iter()
                .any(|f| f.oneof_index == Some(j as i32) && f.proto3_optional());
            if synthetic {
                continue;
            }
            check(
                vec![MESSAGE, i, ONEOF, j as i32],
                format!("{}.{} (oneof)", m.name(), o.name()),
            );
        }
    }
    for (i, e) in file.enum_type.iter().enumerate() {
        let i = i as i32;
        check(vec![ENUM, i], format!("enum {}", e.name()));
        for (j, v) in e.value.iter().enumerate() {
            check(vec![ENUM, i, VALUE, j as i32], v.name().to_string());
        }
    }
    for (i, s) in file.service.iter().enumerate() {
        let i = i as i32;
        check(vec![SERVICE, i], format!("service {}", s.name()));
        for (j, m) in s.method.iter().enumerate() {
            check(
                vec![SERVICE, i, METHOD, j as i32],
                format!("{}.{}", s.name(), m.name()),
            );
        }
    }
    assert!(missing.is_empty(), "uncommented: {missing:?}");
}

/// Generated types are usable from Rust with the expected names.
#[test]
fn generated_types_round_trip() {
    let event = pb::GameEvent {
        seq: 7,
        rule: "RU 1.4.6".into(),
        game_id: "g1".into(),
        kind: Some(pb::game_event::Kind::MovePlayed(pb::MovePlayed {
            r#move: Some(pb::Move {
                notation: "c3-d4".into(),
                path: vec![22, 18],
                captured: vec![],
            }),
            side: pb::Side::White as i32,
            ..Default::default()
        })),
        ..Default::default()
    };
    let bytes = event.encode_to_vec();
    assert_eq!(
        pb::GameEvent::decode(bytes.as_slice()).expect("decode"),
        event
    );
    assert_eq!(pb::Variant::Russian80.as_str_name(), "VARIANT_RUSSIAN80");
}

fn screaming_snake(name: &str) -> String {
    let mut out = String::new();
    for (i, c) in name.chars().enumerate() {
        if c.is_ascii_uppercase() && i > 0 {
            out.push('_');
        }
        out.push(c.to_ascii_uppercase());
    }
    out
}
