//! What a simulated electronic board sends for one recorded move: a pure function of the
//! position, the move, the mode and the noise generator, so every plan is reproducible
//! from its seed and testable without a server.

use crate::api::pb;
use crate::api::pb::board_message::Kind;
use crate::notation::square::square_number;
use crate::rules::variant::CaptureChoice;
use crate::rules::{Bitboard, Color, Move, Position, Variant};

/// How the board reports what happens on it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Mode {
    /// Touch, lift, place on every landing square, release, lift of each captured piece,
    /// clock press: a board that senses hands and pieces.
    Events,
    /// Whole-board occupancy readings, intermediate states included, and clock presses:
    /// a scanning board.
    Snapshots,
}

/// What the judge must answer to one message, besides its acknowledgement.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Expect {
    /// Nothing in particular (and never an irregularity or a warning).
    Nothing,
    /// The recorded move, played from the board: its path, PDN square numbers.
    Move(Vec<u32>),
    /// An irregularity of this kind, cited with a rule: the noise made it on purpose.
    Flag(pb::IrregularityKind),
}

/// One board message of a plan and what it must cause.
#[derive(Debug, Clone, PartialEq)]
pub struct Step {
    /// What the board reports.
    pub kind: Kind,
    /// What the judge must do with it.
    pub expect: Expect,
    /// Added to the board's timestamp (noise: the board's clock jitters).
    pub jitter_ms: i64,
}

impl Step {
    fn quiet(kind: Kind) -> Step {
        Step {
            kind,
            expect: Expect::Nothing,
            jitter_ms: 0,
        }
    }
}

/// The irregular or unusual things `--noise` injects; each is counted in the summary.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Noise {
    /// The board's timestamps jitter by up to 250 ms (nothing to flag).
    Jitter,
    /// "I adjust", then an own piece straightened: lifted and put back (RU 1.4.9; binds
    /// nothing, flags nothing).
    Adjust,
    /// The player to move touches an opponent's piece (no consequence, nothing flagged).
    OpponentTouch,
    /// The piece about to move is lifted and put back first (RU 1.4.7 binds it, RU 1.4.8:
    /// still free to go anywhere; nothing flagged).
    LiftPutBack,
    /// Two updates of one scan arrive swapped: in snapshots the landing square fills
    /// before the start square empties (an intermediate state, nothing flagged); in
    /// events two captured pieces come off in the swapped order, flagged as a wrong
    /// removal (RU 1.5.12 / FMJD 4.4) where the variant's order forbids it.
    Swapped,
    /// The player who just moved presses the clock again: a press without a move,
    /// flagged (RU 1.4.6).
    PressWithoutMove,
}

impl Noise {
    /// Its name in the summary.
    pub fn name(self) -> &'static str {
        match self {
            Noise::Jitter => "jitter",
            Noise::Adjust => "adjust",
            Noise::OpponentTouch => "opponent touch",
            Noise::LiftPutBack => "lift and put back",
            Noise::Swapped => "swapped scan",
            Noise::PressWithoutMove => "press without move",
        }
    }
}

/// A reproducible generator for the noise (SplitMix64 over a counter).
#[derive(Debug, Clone)]
pub struct Rng {
    seed: u64,
    n: u64,
}

impl Rng {
    /// The generator of `seed`; games of one run get `seed` mixed with their number.
    pub fn new(seed: u64) -> Rng {
        Rng { seed, n: 0 }
    }

    /// The next 64 random bits.
    pub fn next(&mut self) -> u64 {
        self.n += 1;
        crate::rules::splitmix(self.seed ^ self.n.wrapping_mul(0xA24B_AED4_963E_E407))
    }

    /// A number in `0..n` (`n` > 0).
    pub fn below(&mut self, n: u64) -> u64 {
        self.next() % n.max(1)
    }

    /// True with probability `per_mille` / 1000.
    pub fn chance(&mut self, per_mille: u64) -> bool {
        self.below(1000) < per_mille
    }
}

/// One recorded move's messages, with the noise it carries.
#[derive(Debug, Clone, Default)]
pub struct MovePlan {
    /// The messages in order.
    pub steps: Vec<Step>,
    /// The noise injected, in order.
    pub noise: Vec<Noise>,
}

/// Everything a plan needs to know of the game.
pub struct Ply<'a> {
    /// The position before the move.
    pub before: &'a Position,
    /// The move, as the replay of the record found it.
    pub mv: &'a Move,
    /// Every legal move in the position (the snapshots avoid readings that one of them
    /// would explain; events mode does not look at them).
    pub legal: &'a [Move],
    /// Whether the game has a clock (presses are sent only then).
    pub timed: bool,
}

fn n(v: Variant, sq: crate::rules::Square) -> u32 {
    square_number(sq, v)
}

fn square(sq: u32) -> pb::BoardSquare {
    pb::BoardSquare { square: sq }
}

fn press(side: Color) -> Kind {
    Kind::ClockPress(pb::BoardClockPress {
        side: crate::api::convert::side_pb(side),
    })
}

/// The squares of `bits`, as PDN numbers in increasing order.
fn numbers(v: Variant, bits: Bitboard) -> Vec<u32> {
    crate::notation::square::square_numbers(bits, v)
}

/// A whole-board reading of these pieces (kinds not sensed).
pub fn reading(v: Variant, white: Bitboard, black: Bitboard) -> Kind {
    Kind::Snapshot(pb::BoardOccupancy {
        occupied: Vec::new(),
        white: numbers(v, white),
        black: numbers(v, black),
        kings: Vec::new(),
    })
}

/// The order in which captured pieces come off, and whether each lift is out of the
/// order the variant requires (RU 1.5.12: in the order of capture; FMJD 4.4: from
/// either end).
fn removal(v: Variant, captured: &[u32], rng: Option<&mut Rng>) -> (Vec<u32>, bool) {
    let either_end = v.rules().capture_choice == CaptureChoice::MaximumPieces;
    let mut order = captured.to_vec();
    let mut swapped = false;
    if let Some(r) = rng {
        if either_end && r.chance(500) {
            order.reverse();
        }
        if order.len() >= 2 && r.chance(120) {
            order.swap(0, 1);
            swapped = true;
        }
    }
    (order, swapped)
}

/// Whether lifting `order` one after another breaks the removal order (the judge's
/// check: each lift is the next piece in capture order, or where the variant allows it
/// the last one).
fn breaks_order(v: Variant, captured: &[u32], order: &[u32]) -> Vec<bool> {
    let either_end = v.rules().capture_choice == CaptureChoice::MaximumPieces;
    let mut pending = captured.to_vec();
    order
        .iter()
        .map(|sq| {
            let first = pending.first() == Some(sq);
            let last = either_end && pending.last() == Some(sq);
            if let Some(i) = pending.iter().position(|p| p == sq) {
                pending.remove(i);
            }
            !(first || last)
        })
        .collect()
}

/// The noise before a move: at most one of the unusual things, by chance.
fn pre_noise(rng: &mut Rng, timed: bool, mode: Mode) -> Option<Noise> {
    let r = rng.below(1000);
    match (r, mode) {
        (0..60, _) => Some(Noise::Adjust),
        (60..120, Mode::Events) => Some(Noise::OpponentTouch),
        (120..180, _) => Some(Noise::LiftPutBack),
        (180..220, _) if timed => Some(Noise::PressWithoutMove),
        _ => None,
    }
}

/// A piece of `side` other than the one on `except`, if there is one.
fn other_piece(pos: &Position, side: Color, except: crate::rules::Square) -> Option<u32> {
    let v = pos.variant();
    let bits = pos.pieces(side) & !except.bit();
    numbers(v, bits).first().copied()
}

/// A piece of `side` on `piece` lifted and put back on its square: in events the lift
/// and the release, in snapshots a reading without it and one with it again.
fn lift_and_put_back(
    v: Variant,
    mode: Mode,
    official: (Bitboard, Bitboard),
    side: Color,
    piece: u32,
) -> Vec<Step> {
    match mode {
        Mode::Events => vec![
            Step::quiet(Kind::Lift(square(piece))),
            Step::quiet(Kind::Release(square(piece))),
        ],
        Mode::Snapshots => {
            let bit = sq_bit(v, piece);
            let (w, b) = match side {
                Color::White => (official.0 & !bit, official.1),
                Color::Black => (official.0, official.1 & !bit),
            };
            vec![
                Step::quiet(reading(v, w, b)),
                Step::quiet(reading(v, official.0, official.1)),
            ]
        }
    }
}

/// The put-right after a flagged irregularity: the board is shown as it stands, which
/// is when the judge checks it again. Events: a piece of `side` lifted and put back;
/// snapshots: the reading again.
fn put_right(
    v: Variant,
    mode: Mode,
    official: (Bitboard, Bitboard),
    side: Color,
    piece: u32,
) -> Vec<Step> {
    match mode {
        Mode::Events => lift_and_put_back(v, mode, official, side, piece),
        Mode::Snapshots => vec![Step::quiet(reading(v, official.0, official.1))],
    }
}

/// The messages a board sends for `ply` in `mode`; `noise` adds irregularities.
///
/// The plan ends after the move's captured pieces are off the board and before the
/// clock press: the caller presses (after a draw offer made with the move, RU 1.9.3).
pub fn move_plan(ply: &Ply<'_>, mode: Mode, mut noise: Option<&mut Rng>) -> MovePlan {
    let pos = ply.before;
    let mv = ply.mv;
    let v = pos.variant();
    let mover = pos.turn();
    let from = n(v, mv.from());
    let to = n(v, mv.to());
    let path: Vec<u32> = mv.path().map(|s| n(v, s)).collect();
    let captured: Vec<u32> = mv.captured().map(|s| n(v, s)).collect();
    let mut plan = MovePlan::default();
    let official = (pos.pieces(Color::White), pos.pieces(Color::Black));

    if let Some(r) = noise.as_deref_mut() {
        match pre_noise(r, ply.timed, mode) {
            Some(Noise::Adjust) => {
                plan.noise.push(Noise::Adjust);
                plan.steps.push(Step::quiet(Kind::Adjust(pb::BoardAdjust {
                    side: crate::api::convert::side_pb(mover),
                })));
                // Straighten another own piece (or the one to move, when alone).
                let piece = other_piece(pos, mover, mv.from()).unwrap_or(from);
                plan.steps
                    .extend(lift_and_put_back(v, mode, official, mover, piece));
            }
            Some(Noise::OpponentTouch) => {
                if let Some(p) = numbers(v, pos.pieces(!mover)).first().copied() {
                    plan.noise.push(Noise::OpponentTouch);
                    plan.steps.push(Step::quiet(Kind::Touch(square(p))));
                }
            }
            Some(Noise::LiftPutBack) => {
                plan.noise.push(Noise::LiftPutBack);
                plan.steps
                    .extend(lift_and_put_back(v, mode, official, mover, from));
            }
            Some(Noise::PressWithoutMove) => {
                plan.noise.push(Noise::PressWithoutMove);
                plan.steps.push(Step {
                    kind: press(!mover),
                    expect: Expect::Flag(pb::IrregularityKind::ClockPressWithoutMove),
                    jitter_ms: 0,
                });
                // The side that pressed puts the board right (any of its pieces).
                if let Some(p) = numbers(v, pos.pieces(!mover)).first().copied() {
                    plan.steps.extend(put_right(v, mode, official, !mover, p));
                }
            }
            _ => {}
        }
    }

    match mode {
        Mode::Events => {
            plan.steps.push(Step::quiet(Kind::Touch(square(from))));
            plan.steps.push(Step::quiet(Kind::Lift(square(from))));
            for l in mv.landings() {
                plan.steps.push(Step::quiet(Kind::Place(square(n(v, l)))));
            }
            plan.steps.push(Step {
                kind: Kind::Release(square(to)),
                expect: Expect::Move(path.clone()),
                jitter_ms: 0,
            });
            if !captured.is_empty() {
                let (order, swapped) = removal(v, &captured, noise.as_deref_mut());
                let wrong = breaks_order(v, &captured, &order);
                let mut flagged = false;
                for (sq, bad) in order.iter().zip(wrong) {
                    let expect = if bad && !flagged {
                        flagged = true;
                        Expect::Flag(pb::IrregularityKind::WrongRemoval)
                    } else {
                        Expect::Nothing
                    };
                    plan.steps.push(Step {
                        kind: Kind::Lift(square(*sq)),
                        expect,
                        jitter_ms: 0,
                    });
                }
                if swapped {
                    plan.noise.push(Noise::Swapped);
                }
                if flagged {
                    // Every captured piece is off: the capturing piece is straightened,
                    // which shows the judge the board as it stands.
                    plan.steps.extend(put_right(v, mode, official, mover, to));
                }
            }
        }
        Mode::Snapshots => {
            let explained = |w: Bitboard, b: Bitboard| {
                ply.legal.iter().any(|m| {
                    pos.play(m)
                        .is_ok_and(|p| p.pieces(Color::White) == w && p.pieces(Color::Black) == b)
                })
            };
            let (fb, tb) = (mv.from().bit(), mv.to().bit());
            let own = |bits: Bitboard, side: Color, set: (Bitboard, Bitboard)| match side {
                Color::White => (bits, set.1),
                Color::Black => (set.0, bits),
            };
            let mine = pos.pieces(mover);
            let mut readings: Vec<(Bitboard, Bitboard)> = Vec::new();
            let swap = noise.as_deref_mut().is_some_and(|r| r.chance(150));
            if swap && fb != tb {
                // The landing square fills before the start square empties.
                readings.push(own(mine | tb, mover, official));
                plan.noise.push(Noise::Swapped);
            } else {
                readings.push(own(mine & !fb, mover, official));
            }
            let moved = own((mine & !fb) | tb, mover, official);
            readings.push(moved);
            let mut state = moved;
            for sq in mv.captured() {
                let bit = sq.bit();
                state = (state.0 & !bit, state.1 & !bit);
                readings.push(state);
            }
            // The last reading is the position after the move; the ones before are
            // intermediate states, kept only where no legal move explains them.
            let last = readings.len() - 1;
            for (i, (w, b)) in readings.into_iter().enumerate() {
                if i == last {
                    plan.steps.push(Step {
                        kind: reading(v, w, b),
                        expect: Expect::Move(path.clone()),
                        jitter_ms: 0,
                    });
                } else if (w, b) != official && !explained(w, b) {
                    plan.steps.push(Step::quiet(reading(v, w, b)));
                }
            }
            debug_assert!(
                pos.play(mv)
                    .is_ok_and(|p| (p.pieces(Color::White), p.pieces(Color::Black)) == state)
            );
        }
    }

    if let Some(r) = noise
        && r.chance(300)
    {
        plan.noise.push(Noise::Jitter);
        for s in &mut plan.steps {
            s.jitter_ms = i64::try_from(r.below(251)).unwrap_or(0);
        }
    }
    plan
}

fn sq_bit(v: Variant, number: u32) -> Bitboard {
    let g = v.geometry();
    g.from_number(number, v.rules().mirrored)
        .map_or(0, |s| s.bit())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::notation::parse_fen;
    use crate::rules::Game;

    fn plan_of(fen: Option<&str>, v: Variant, text: &str, mode: Mode) -> MovePlan {
        let pos = fen.map_or_else(|| Position::start(v), |f| parse_fen(f, v).expect("fen"));
        let game = Game::new(pos, crate::rules::RuleEdition::Classic);
        let legal = game.legal_moves();
        let mv = crate::notation::parse_move(text, &pos).expect("move");
        move_plan(
            &Ply {
                before: &pos,
                mv: &mv,
                legal: &legal,
                timed: true,
            },
            mode,
            None,
        )
    }

    fn kinds(plan: &MovePlan) -> Vec<String> {
        plan.steps
            .iter()
            .map(|s| match &s.kind {
                Kind::Touch(q) => format!("touch {}", q.square),
                Kind::Lift(q) => format!("lift {}", q.square),
                Kind::Place(q) => format!("place {}", q.square),
                Kind::Release(q) => format!("release {}", q.square),
                Kind::Snapshot(o) => format!("w{:?} b{:?}", o.white, o.black),
                other => format!("{other:?}"),
            })
            .collect()
    }

    #[test]
    fn a_quiet_move_is_touch_lift_place_release() {
        let p = plan_of(None, Variant::Russian, "c3-d4", Mode::Events);
        assert_eq!(
            kinds(&p),
            ["touch 22", "lift 22", "place 18", "release 18"],
            "RU 1.4.6: the move is made at the release"
        );
        assert_eq!(p.steps[3].expect, Expect::Move(vec![22, 18]));
    }

    #[test]
    fn a_capture_places_every_landing_and_lifts_the_captured_in_order() {
        // RU 1.5.10 / 1.5.12: landing squares in turn, captured pieces in capture order.
        let p = plan_of(
            Some("W:WC3:BD4,F6"),
            Variant::Russian,
            "c3:e5:g7",
            Mode::Events,
        );
        assert_eq!(
            kinds(&p),
            [
                "touch 22",
                "lift 22",
                "place 15",
                "place 8",
                "release 8",
                "lift 18",
                "lift 11"
            ]
        );
        assert!(p.steps.iter().all(|s| !matches!(s.expect, Expect::Flag(_))));
    }

    #[test]
    fn snapshots_skip_no_intermediate_state_a_legal_move_does_not_explain() {
        let p = plan_of(
            Some("W:WC3:BD4,F6"),
            Variant::Russian,
            "c3:e5:g7",
            Mode::Snapshots,
        );
        // Lifted, landed with both captured still there, one off, both off (the move).
        assert_eq!(p.steps.len(), 4, "{:?}", kinds(&p));
        assert!(matches!(p.steps[3].expect, Expect::Move(_)));
    }

    #[test]
    fn a_swapped_removal_is_wrong_in_russian_and_either_end_is_fine_under_fmjd() {
        assert_eq!(
            breaks_order(Variant::Russian, &[18, 11], &[11, 18]),
            [true, false]
        );
        assert_eq!(
            breaks_order(Variant::International, &[18, 11], &[11, 18]),
            [false, false]
        );
        assert_eq!(
            breaks_order(Variant::International, &[1, 2, 3], &[2, 1, 3]),
            [true, false, false]
        );
    }

    #[test]
    fn the_same_seed_makes_the_same_noise() {
        let pos = Position::start(Variant::International);
        let game = Game::new(pos, crate::rules::RuleEdition::Classic);
        let legal = game.legal_moves();
        let ply = Ply {
            before: &pos,
            mv: &legal[0],
            legal: &legal,
            timed: true,
        };
        let mut seen = std::collections::BTreeSet::new();
        for seed in 0..200 {
            let a = move_plan(&ply, Mode::Events, Some(&mut Rng::new(seed)));
            let b = move_plan(&ply, Mode::Events, Some(&mut Rng::new(seed)));
            assert_eq!(a.steps, b.steps);
            seen.extend(a.noise);
        }
        assert!(seen.contains(&Noise::Adjust) && seen.contains(&Noise::PressWithoutMove));
    }
}
