//! Reads arbitrary text as a FEN of every variant. The reader must never panic, and a
//! position it accepts must write back to a FEN that reads as the same position.
//!
//! Run with `cargo +nightly fuzz run fen` from the crate root.
#![no_main]

use draughts_arbiter::notation::fen::{FenStyle, parse_fen, write_fen, write_fen_styled};
use draughts_arbiter::rules::Variant;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    for variant in Variant::ALL {
        if let Ok(pos) = parse_fen(text, variant) {
            for style in [FenStyle::Numeric, FenStyle::Algebraic] {
                let written = write_fen_styled(&pos, style);
                let back = parse_fen(&written, variant).expect("own FEN reads");
                assert_eq!(back, pos, "{written}");
            }
            let _ = pos.legal_moves();
            assert_eq!(parse_fen(&write_fen(&pos), variant).ok(), Some(pos));
        }
    }
});
