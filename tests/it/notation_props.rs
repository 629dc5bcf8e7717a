//! Property tests: FEN and move notation round-trip on random positions and random games.

use draughts_arbiter::notation::fen::{FenStyle, parse_fen, write_fen, write_fen_styled};
use draughts_arbiter::notation::movetext::{parse_move, write_move, write_move_full};
use draughts_arbiter::rules::{Color, Position, Setup, Variant};
use proptest::prelude::*;

fn variant() -> impl Strategy<Value = Variant> {
    proptest::sample::select(Variant::ALL.to_vec())
}

/// A random legal position: each square empty, a man or a king of either side.
fn position() -> impl Strategy<Value = Position> {
    (
        variant(),
        proptest::collection::vec(0u8..8, 64),
        any::<bool>(),
    )
        .prop_filter_map("illegal setup", |(v, cells, white_to_move)| {
            let turn = if white_to_move {
                Color::White
            } else {
                Color::Black
            };
            let mut setup = Setup::empty(v, turn);
            for (sq, cell) in v.geometry().order.iter().zip(cells) {
                match cell {
                    0 => setup.white |= sq.bit(),
                    1 => setup.black |= sq.bit(),
                    2 => {
                        setup.white |= sq.bit();
                        setup.kings |= sq.bit();
                    }
                    3 => {
                        setup.black |= sq.bit();
                        setup.kings |= sq.bit();
                    }
                    _ => {}
                }
            }
            Position::from_setup(&setup).ok()
        })
}

/// A random towers position (TOW): each dark square empty or a stack of one to four
/// pieces of random colours, the top a man or a king; at most 12 pieces a side (RU 1.3).
fn towers_position() -> impl Strategy<Value = Position> {
    (
        proptest::collection::vec((0u8..12, any::<u8>(), any::<bool>()), 32),
        any::<bool>(),
    )
        .prop_filter_map("illegal setup", |(cells, white_to_move)| {
            let v = Variant::Towers;
            let turn = if white_to_move {
                Color::White
            } else {
                Color::Black
            };
            let mut setup = Setup::empty(v, turn);
            for (sq, (height, colours, king)) in v.geometry().order.iter().zip(cells) {
                // Heights 1..=3 on a quarter of the squares, so that most setups keep to 12 a side.
                let height = if height > 3 { 0 } else { height };
                if height == 0 {
                    continue;
                }
                let colour = |i: u8| {
                    if colours >> i & 1 == 1 {
                        Color::Black
                    } else {
                        Color::White
                    }
                };
                *setup.pieces_mut(colour(0)) |= sq.bit();
                if king {
                    setup.kings |= sq.bit();
                }
                if height > 1 {
                    setup.stacks.insert(*sq, (1..height).map(colour).collect());
                }
            }
            Position::from_setup(&setup).ok()
        })
}

/// A position reached by random legal moves from the start.
fn played() -> impl Strategy<Value = Position> {
    (variant(), proptest::collection::vec(any::<u16>(), 0..80)).prop_map(|(v, choices)| {
        let mut pos = Position::start(v);
        for c in choices {
            let moves = pos.legal_moves();
            if moves.is_empty() {
                break;
            }
            pos = pos
                .play(&moves[c as usize % moves.len()])
                .expect("generated moves are legal");
        }
        pos
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(300))]

    #[test]
    fn fen_round_trips(pos in position()) {
        let fen = write_fen(&pos);
        prop_assert_eq!(parse_fen(&fen, pos.variant()).expect("own fen"), pos);
        let alg = write_fen_styled(&pos, FenStyle::Algebraic);
        prop_assert_eq!(parse_fen(&alg, pos.variant()).expect("own algebraic fen"), pos);
    }

    /// The towers FEN stack extension (README "Towers FEN") round-trips, numeric and
    /// algebraic, and so does the unchecked setup.
    #[test]
    fn towers_fen_round_trips(pos in towers_position()) {
        let fen = write_fen(&pos);
        prop_assert_eq!(parse_fen(&fen, Variant::Towers).expect("own fen"), pos);
        let alg = write_fen_styled(&pos, FenStyle::Algebraic);
        prop_assert_eq!(parse_fen(&alg, Variant::Towers).expect("own algebraic fen"), pos);
        prop_assert_eq!(Position::from_setup(&pos.to_setup()).expect("own setup"), pos);
    }

    #[test]
    fn move_notation_round_trips(pos in prop_oneof![position(), played(), towers_position()]) {
        for mv in pos.legal_moves() {
            let short = write_move(&pos, &mv);
            let parsed = parse_move(&short, &pos).expect("own notation");
            prop_assert!(parsed.same_move(&mv), "{} read back as another move", short);
            let full = write_move_full(&pos, &mv);
            let parsed = parse_move(&full, &pos).expect("own full notation");
            prop_assert!(parsed.same_move(&mv), "{} read back as another move", full);
        }
    }

    #[test]
    fn random_text_never_panics(text in "[a-kx:0-9 \\-K,WB.]{0,24}", pos in played()) {
        let _ = parse_move(&text, &pos);
        let _ = parse_fen(&text, pos.variant());
    }

    #[test]
    fn distinct_moves_are_distinct_and_cover_all_paths(pos in prop_oneof![position(), played()]) {
        let distinct = pos.legal_moves();
        for (i, a) in distinct.iter().enumerate() {
            for b in &distinct[i + 1..] {
                prop_assert!(!a.same_move(b));
            }
        }
        for m in pos.legal_moves_all_paths() {
            prop_assert!(distinct.iter().any(|d| d.same_move(&m)));
        }
    }
}
