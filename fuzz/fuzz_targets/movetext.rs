//! Reads arbitrary text as a move in positions reached by the first bytes as move
//! choices from the start. The reader must never panic; a move it accepts must be legal
//! and its written forms must read back as the same move.
//!
//! Run with `cargo +nightly fuzz run movetext` from the crate root.
#![no_main]

use draughts_arbiter::notation::movetext::{parse_move, write_move, write_move_full};
use draughts_arbiter::rules::{Position, Variant};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Some((&choice, rest)) = data.split_first() else {
        return;
    };
    let variant = Variant::ALL[choice as usize % Variant::ALL.len()];
    let (plies, text) = rest.split_at(rest.len().min(24));
    let Ok(text) = std::str::from_utf8(text) else {
        return;
    };
    let mut pos = Position::start(variant);
    for &c in plies {
        let moves = pos.legal_moves();
        if moves.is_empty() {
            break;
        }
        pos = pos.play(&moves[c as usize % moves.len()]).expect("legal");
    }
    if let Ok(mv) = parse_move(text, &pos) {
        assert!(pos.play(&mv).is_ok());
        for written in [write_move(&pos, &mv), write_move_full(&pos, &mv)] {
            let back = parse_move(&written, &pos).expect("own notation reads");
            assert!(back.same_move(&mv), "{written}");
        }
    }
});
