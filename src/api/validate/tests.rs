//! The edge's checks: complete (every string, enum, repeated and map field of every RPC's
//! input, found by walking the proto's own descriptor, is bounded and named when
//! refused), and the README's limits table is the code's.

use std::collections::BTreeMap;

use prost::Message;
use prost_types::field_descriptor_proto::{Label, Type};
use prost_types::{DescriptorProto, FileDescriptorSet};

use super::*;

fn varint(mut v: u64, out: &mut Vec<u8>) {
    while v >= 0x80 {
        out.push((v as u8) | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

fn key(field: i32, wire: u64, out: &mut Vec<u8>) {
    varint(((field as u64) << 3) | wire, out);
}

fn len_field(field: i32, body: &[u8], out: &mut Vec<u8>) {
    key(field, 2, out);
    varint(body.len() as u64, out);
    out.extend_from_slice(body);
}

struct Proto {
    messages: BTreeMap<String, DescriptorProto>,
}

impl Proto {
    fn load() -> Proto {
        let set = FileDescriptorSet::decode(pb::FILE_DESCRIPTOR_SET).expect("descriptor set");
        let mut messages = BTreeMap::new();
        fn add(prefix: &str, m: &DescriptorProto, out: &mut BTreeMap<String, DescriptorProto>) {
            let name = format!("{prefix}.{}", m.name());
            for n in &m.nested_type {
                add(&name, n, out);
            }
            out.insert(name, m.clone());
        }
        for f in &set.file {
            for m in &f.message_type {
                add(&format!(".{}", f.package()), m, &mut messages);
            }
        }
        Proto { messages }
    }

    fn inputs(&self) -> Vec<String> {
        let set = FileDescriptorSet::decode(pb::FILE_DESCRIPTOR_SET).expect("descriptor set");
        let mut out: Vec<String> = set
            .file
            .iter()
            .flat_map(|f| &f.service)
            .flat_map(|s| &s.method)
            .map(|m| m.input_type().to_string())
            .collect();
        out.sort();
        out.dedup();
        out
    }

    /// A message every check accepts: each singular string field set to "g1" (a time
    /// zone to a zone's name).
    fn base(&self, name: &str) -> Vec<u8> {
        let mut out = Vec::new();
        for f in &self.messages[name].field {
            if f.name() == "from_cursor" {
                // A cursor is made by the server: one of a stream of event and round "g1".
                let cursor = crate::api::cursor::Cursor::encode("g1", "g1", std::iter::empty());
                len_field(f.number(), cursor.as_bytes(), &mut out);
            } else if f.name() == "time_zone" {
                // A zone must be one the zone database names.
                len_field(f.number(), b"Europe/Moscow", &mut out);
            } else if f.r#type() == Type::String && f.label() != Label::Repeated {
                len_field(f.number(), b"g1", &mut out);
            }
        }
        out
    }

    /// Each hostile field of `name` (recursively): its path and the message's bytes.
    fn hostile(&self, name: &str, depth: usize) -> Vec<(String, Vec<u8>)> {
        assert!(depth < 8, "{name}: nested too deep");
        let mut cases = Vec::new();
        let m = &self.messages[name];
        for f in &m.field {
            let mut bytes = self.base(name);
            let repeated = f.label() == Label::Repeated;
            match f.r#type() {
                Type::String => {
                    len_field(f.number(), "a".repeat(100_000).as_bytes(), &mut bytes);
                }
                Type::Enum if !repeated => {
                    key(f.number(), 0, &mut bytes);
                    varint(99, &mut bytes);
                }
                Type::Message => {
                    let inner = f.type_name();
                    let entry = &self.messages[inner];
                    if entry.options.as_ref().is_some_and(|o| o.map_entry()) {
                        // A map: more entries than any limit allows, each one valid.
                        for i in 0..100_001 {
                            let mut e = Vec::new();
                            len_field(1, format!("g{i}").as_bytes(), &mut e);
                            len_field(f.number(), &e, &mut bytes);
                        }
                    } else {
                        for (path, inner_bytes) in self.hostile(inner, depth + 1) {
                            let mut b = self.base(name);
                            len_field(f.number(), &inner_bytes, &mut b);
                            cases.push((format!("{}.{path}", f.name()), b));
                        }
                        continue;
                    }
                }
                _ if repeated => {
                    // A packed list of 100,000 ones.
                    let mut body = Vec::new();
                    for _ in 0..100_000 {
                        varint(1, &mut body);
                    }
                    len_field(f.number(), &body, &mut bytes);
                }
                _ => continue,
            }
            cases.push((f.name().to_string(), bytes));
        }
        cases
    }
}

#[test]
fn every_string_enum_list_and_map_of_every_request_is_bounded_and_named() {
    let proto = Proto::load();
    let mut checked = 0;
    for input in proto.inputs() {
        let short = input.rsplit('.').next().unwrap();
        let base = proto.base(&input);
        check_encoded(short, &base)
            .unwrap_or_else(|e| panic!("{short}: a valid message is refused: {e:?}"));
        for (path, bytes) in proto.hostile(&input, 0) {
            let err = check_encoded(short, &bytes)
                .expect_err(&format!("{short}.{path}: a hostile value is accepted"));
            assert_eq!(err.code(), tonic::Code::InvalidArgument, "{short}.{path}");
            assert!(
                err.message().starts_with(&format!("{path}:")),
                "{short}.{path}: the refusal names another field: {}",
                err.message()
            );
            assert!(
                err.message().len() < 300,
                "{short}.{path}: {} bytes of message",
                err.message().len()
            );
            checked += 1;
        }
    }
    eprintln!("{checked} hostile fields refused, each by its path");
    // Guards against a walk that finds nothing.
    assert!(checked > 80, "only {checked} hostile fields found");
}

#[test]
fn bytes_that_do_not_decode_are_invalid_argument() {
    // A length prefix running past the end, and a wire type 7 that does not exist.
    for bytes in [&[0x0a, 0xff, 0x01][..], &[0x0f, 0x00][..]] {
        let err = check_encoded("GetGameRequest", bytes).unwrap_err();
        assert_eq!(err.code(), tonic::Code::InvalidArgument);
        assert!(err.message().starts_with("undecodable request"));
    }
    assert_eq!(
        check_encoded("NoSuchRequest", &[]).unwrap_err().code(),
        tonic::Code::NotFound
    );
}

#[test]
fn ids_take_a_documented_charset() {
    for good in ["g1", "open-r1-b1", "a.b_c:d", "G18f2a0001"] {
        assert!(id("game_id", good, true).is_ok(), "{good}");
    }
    for bad_id in [" ", "\t\n", "a b", "-a", ".a", "a/b", "é", "a\u{0}"] {
        let e = id("game_id", bad_id, true).unwrap_err();
        assert!(e.0.starts_with("game_id: letters"), "{bad_id:?}: {}", e.0);
    }
    assert_eq!(id("game_id", "", true).unwrap_err().0, "game_id: required");
    assert!(id("game_id", "", false).is_ok());
    assert!(id("game_id", &"a".repeat(ID_BYTES), true).is_ok());
    assert_eq!(
        id("game_id", &"a".repeat(ID_BYTES + 1), true)
            .unwrap_err()
            .0,
        "game_id: at most 64 bytes, got 65"
    );
}

#[test]
fn names_refuse_control_characters_and_blank_values() {
    assert!(name("event", "Чемпионат России 2026", NAME_BYTES).is_ok());
    assert!(name("event", "", NAME_BYTES).is_ok());
    assert!(name("event", "   ", NAME_BYTES).is_err());
    assert!(name("event", "a\u{7}b", NAME_BYTES).is_err());
    assert!(name("event", "a\nb", NAME_BYTES).is_err());
    assert!(prose("reason", "line one\nline two\ttab").is_ok());
    assert!(prose("reason", "bell \u{7}").is_err());
}

/// Issue 37: separators and bidi controls break or turn a name around wherever it is
/// shown; a name of only invisible characters names nobody; the joiners Persian and
/// Indic names need stay allowed between letters.
#[test]
fn names_refuse_separators_bidi_controls_and_invisible_only_values() {
    let refused = |v: &str, says: &str| {
        let e = name("white.name", v, NAME_BYTES).expect_err(v);
        assert!(
            e.0.starts_with(&format!("white.name: {says}")),
            "{v:?}: {}",
            e.0
        );
    };
    refused("Ann\u{2028}Lee", "line separator U+2028");
    refused("Ann\u{2029}", "paragraph separator U+2029");
    for c in ('\u{202A}'..='\u{202E}').chain('\u{2066}'..='\u{2069}') {
        refused(
            &format!("ab{c}cd"),
            &format!("bidi control U+{:04X}", u32::from(c)),
        );
    }
    for c in ['\u{200E}', '\u{200F}', '\u{061C}'] {
        refused(
            &format!("ab{c}"),
            &format!("bidi mark U+{:04X}", u32::from(c)),
        );
    }
    refused("\u{200B}\u{200B}\u{200B}", "nothing visible");
    refused(" \u{200B} \u{FEFF}\u{2060}", "nothing visible");
    refused("\u{3164}", "nothing visible");
    refused("\u{200D}", "nothing visible");
    refused("\u{200D}Ann", "joiner U+200D not between");
    refused("Ann\u{200C}", "joiner U+200C not between");
    refused("Ann \u{200D}Lee", "joiner U+200D not between");
    // A one-line field that is no name refuses the same characters.
    let e = line("rule", "RU\u{202E}1.4", MAX_RULE_BYTES).expect_err("RLO");
    assert!(e.0.starts_with("rule: bidi control U+202E"), "{}", e.0);
    for ok in [
        "می\u{200C}خواهم",
        "क्\u{200D}ष",
        "Ann\u{200B}Lee",
        "👨\u{200D}👩\u{200D}👧",
        "Жанна д'Арк",
        "ראובן כהן",
        "عبد الله",
    ] {
        assert!(name("white.name", ok, NAME_BYTES).is_ok(), "{ok:?}");
    }
}

#[test]
fn quotes_are_bounded() {
    assert_eq!(quote("abc"), "\"abc\"");
    let long = "ж".repeat(10_000);
    let q = quote(&long);
    assert!(q.chars().count() < QUOTE_CHARS + 30, "{q}");
    assert!(q.ends_with("… (20000 bytes)"), "{q}");
}

#[test]
fn clock_changes_are_range_checked() {
    use pb::adjust_clock_request::Change;
    let req = |change| pb::AdjustClockRequest {
        game_id: "g1".into(),
        change: Some(change),
        ..Default::default()
    };
    assert!(req(Change::AddMs(60_000)).check().is_ok());
    assert!(req(Change::AddMs(-60_000)).check().is_ok());
    assert!(req(Change::SetRemainingMs(60_000)).check().is_ok());
    for bad_change in [
        Change::AddMs(i64::MAX),
        Change::AddMs(i64::MIN),
        Change::AddMs(24 * 3_600_000 + 1),
        Change::SetRemainingMs(i64::MAX),
        Change::SetRemainingMs(-1),
    ] {
        let e = req(bad_change).check().unwrap_err();
        assert!(
            e.0.starts_with("add_ms:") || e.0.starts_with("set_remaining_ms:"),
            "{}",
            e.0
        );
    }
}

#[test]
fn the_readme_limits_table_is_the_code_table() {
    let readme = include_str!("../../../README.md");
    let mut rows = String::from("| fields | limit |\n|---|---|\n");
    for l in LIMITS {
        rows.push_str(&format!("| {} | {} |\n", l.fields, l.limit));
    }
    assert!(
        readme.contains(&rows),
        "README.md's limits table differs from validate::LIMITS; it should read:\n{rows}"
    );
}

#[test]
fn the_request_list_is_every_rpc_input() {
    let mut proto: Vec<String> = Proto::load()
        .inputs()
        .iter()
        .map(|i| i.rsplit('.').next().unwrap().to_string())
        .collect();
    proto.sort();
    let mut ours: Vec<String> = REQUEST_MESSAGES.iter().map(|s| s.to_string()).collect();
    ours.sort();
    assert_eq!(ours, proto);
}

/// Found by the fuzz target: prost's decode error names each nested field on the way
/// down, and such a message ran to 340 bytes.
#[test]
fn a_deep_decode_error_stays_within_the_status_bound() {
    #[rustfmt::skip]
    let data: &[u8] = &[0x7e, 0x30, 0x07, 0x40, 0x30, 0x0a, 0x02, 0x46, 0x18, 0x18, 0x18, 0x18, 0x18, 0x18, 0x18, 0x18, 0x18, 0x18, 0x18, 0x18, 0x18, 0x18, 0x18, 0x18, 0x40, 0x18, 0x18, 0x18, 0x18, 0x18, 0x18, 0x30, 0x07, 0x40, 0x30, 0x0a, 0x2c, 0x46, 0x18, 0x18, 0x18, 0x18, 0x18, 0x18, 0x18, 0x18, 0x18, 0x18, 0x18, 0x18, 0x18, 0x18, 0x18, 0x18, 0x18, 0x18, 0x18, 0x18, 0x18, 0x18, 0x18, 0x18, 0x18, 0x18, 0x18, 0x18, 0x18, 0x18, 0x18, 0x18, 0x18, 0x18, 0x18, 0x18, 0x18, 0x18, 0x0e, 0x18, 0x18, 0x10, 0x18, 0x18, 0x18, 0x18, 0x18];
    let (&pick, bytes) = data.split_first().unwrap();
    let message = REQUEST_MESSAGES[usize::from(pick) % REQUEST_MESSAGES.len()];
    let e = check_encoded(message, bytes).unwrap_err();
    assert_eq!(e.code(), tonic::Code::InvalidArgument);
    assert!(
        e.message().len() <= super::super::MAX_STATUS_MESSAGE,
        "{}",
        e.message()
    );
}
