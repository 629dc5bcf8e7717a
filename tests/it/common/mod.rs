//! Shared by the reference-generator tests (`tests/it/reference_*.rs`): the perft-file
//! reader, the crate-side description of moves, and the seeded random source of their
//! random games. The reference generators themselves stay separate: each is a second
//! opinion written apart from the crate and from the others.

// Each test module uses part of this one.
#![allow(dead_code)]

pub mod http;
pub mod pdf;
pub mod pdn;
pub mod pg;
pub mod server;

use std::path::{Path, PathBuf};

use draughts_arbiter::notation::fen::parse_fen;
use draughts_arbiter::notation::square::square_name;
use draughts_arbiter::rules::{Move, Position, Variant};

/// A file under `tests/data`.
pub fn data(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data")
        .join(name)
}

/// One perft row: depth, the "drop" count and, if the file has it, the "keep" count.
pub type Row = (u32, u64, Option<u64>);

/// (variant, fen, rows) from a perft file.
pub type Suite = (String, String, Vec<Row>);

/// Every suite of a perft file (`variant`, `fen`, then `perft depth drop [keep]` lines).
pub fn read_suites(path: &Path) -> Vec<Suite> {
    let text = std::fs::read_to_string(path)
        .unwrap_or_else(|e| panic!("perft file {}: {e}", path.display()));
    let mut out: Vec<Suite> = Vec::new();
    let mut variant = String::new();
    for line in text.lines().map(str::trim) {
        let mut words = line.split_whitespace();
        match words.next() {
            Some("variant") => variant = words.next().expect("name").to_string(),
            Some("fen") => out.push((
                variant.clone(),
                line["fen".len()..].trim().to_string(),
                Vec::new(),
            )),
            Some("perft") => {
                let n: Vec<u64> = words.map(|w| w.parse().expect("number")).collect();
                let suite = out.last_mut().expect("a fen first");
                suite.2.push((n[0] as u32, n[1], n.get(2).copied()));
            }
            _ => {}
        }
    }
    out
}

/// The rows of `tests/data/{name}.perft`, a file of one suite for `variant` from its
/// start position (checked).
pub fn start_position_rows(name: &str, variant: Variant) -> Vec<Row> {
    let suites = read_suites(&data(&format!("{name}.perft")));
    assert_eq!(suites.len(), 1, "{name}: one fen line");
    let (file_variant, fen, rows) = suites.into_iter().next().expect("a suite");
    assert_eq!(file_variant, name);
    let pos = parse_fen(&fen, variant).expect("file fen");
    assert_eq!(pos, Position::start(variant), "file starts at the start");
    rows
}

/// A crate move as `from-to x[captured, sorted]`, in square names.
pub fn describe_crate_move(pos: &Position, m: &Move) -> String {
    let v = pos.variant();
    let mut caps: Vec<String> = m.captured().map(|s| square_name(s, v)).collect();
    caps.sort();
    format!(
        "{}-{} x[{}]",
        square_name(m.from(), v),
        square_name(m.to(), v),
        caps.join(",")
    )
}

/// The crate's legal moves in `pos`, described and sorted.
pub fn describe_crate(pos: &Position) -> Vec<String> {
    let mut out: Vec<String> = pos
        .legal_moves()
        .iter()
        .map(|m| describe_crate_move(pos, m))
        .collect();
    out.sort();
    out
}

/// A seeded linear congruential generator: reproducible random games.
pub struct Lcg(pub u64);

impl Lcg {
    /// A number in `0..n`.
    pub fn next(&mut self, n: usize) -> usize {
        self.0 = self
            .0
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        ((self.0 >> 33) % n as u64) as usize
    }
}
