//! What a simulated electronic board sends for one recorded move: a pure function of the
//! position, the move, the mode and the noise generator, so every plan is reproducible
//! from its seed and testable without a server. The irregularities `--noise` makes, and
//! how each is brought to an end, are planned in [`super::incident`], and the two are put
//! together for a ply in [`super::compose`]; this module has the move's own messages, the
//! harmless noise, the board's own picture of itself ([`Physical`]) and the steps that
//! take the board from what it shows to a target.

use draughts_arbiter::api::pb;
use draughts_arbiter::api::pb::board_message::Kind;
use draughts_arbiter::notation::square::square_number;
use draughts_arbiter::rules::variant::CaptureChoice;
use draughts_arbiter::rules::{Bitboard, Color, Move, Position, Variant};

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
    /// The number names it within its ply's incident (its ruling quotes it).
    Flag(pb::IrregularityKind, u8),
}

/// How an irregularity the noise made is brought to an end.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Ending {
    /// Ruled `corrected`; on the board, the board then restored to the judge's target
    /// (`BoardOutOfStep`) until `BoardInStep`.
    Corrected,
    /// Ruled `stands`: what the board shows is the official position.
    Stands,
    /// The board put back to the official position, without a ruling.
    Cleared,
    /// A capture stopped early, finished on the board (RU 1.5.5), without a ruling.
    Finished,
}

impl Ending {
    /// Its name in the summary.
    pub fn name(self) -> &'static str {
        match self {
            Ending::Corrected => "corrected",
            Ending::Stands => "stands",
            Ending::Cleared => "cleared",
            Ending::Finished => "finished",
        }
    }
}

/// What one step of a plan does.
#[derive(Debug, Clone, PartialEq)]
pub enum Act {
    /// A board message.
    Send(Kind),
    /// The ply's clock press (left out when the move ended the game).
    Press(Color),
    /// The arbiter rules on the incident's irregularity `tag` (`Corrected` or `Stands`).
    Rule {
        /// The irregularity, by its number in the incident.
        tag: u8,
        /// The ruling.
        ruling: Ending,
    },
    /// The board brought to the target of the judge's last `BoardOutOfStep`, which must
    /// be `official` (white, black), one step at a time in an order the seed picks. With
    /// `wrong_copy`, one piece is first put on a square where the official position has
    /// none of its colour (flagged `WRONG_COPY` as irregularity `tag`), which then ends
    /// as planned.
    Restore {
        /// The position the target must be (white, black).
        official: (Bitboard, Bitboard),
        /// A wrong copy to make on the way: its number and its ending.
        wrong_copy: Option<(u8, Ending)>,
    },
    /// The board put back to `official` (white, black) by the players, without a
    /// ruling, one step at a time in an order the seed picks.
    PutBack {
        /// The position to show (white, black).
        official: (Bitboard, Bitboard),
    },
}

/// One step of a plan and what it must cause.
#[derive(Debug, Clone, PartialEq)]
pub struct Step {
    /// What the board (or the arbiter) does.
    pub act: Act,
    /// What the judge must do with it.
    pub expect: Expect,
    /// Added to the board's timestamp (noise: the board's clock jitters).
    pub jitter_ms: i64,
}

impl Step {
    /// A board message that must cause nothing in particular.
    pub fn quiet(kind: Kind) -> Step {
        Step::send(kind, Expect::Nothing)
    }

    /// A board message and what it must cause.
    pub fn send(kind: Kind, expect: Expect) -> Step {
        Step {
            act: Act::Send(kind),
            expect,
            jitter_ms: 0,
        }
    }

    /// A step that is no board message.
    pub fn act(act: Act) -> Step {
        Step {
            act,
            expect: Expect::Nothing,
            jitter_ms: 0,
        }
    }
}

/// The harmless unusual things `--noise` injects (nothing to flag); each is counted in
/// the summary. The irregularities are [`super::incident`]'s.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Noise {
    /// The board's timestamps jitter by up to 250 ms.
    Jitter,
    /// "I adjust", then an own piece straightened: lifted and put back (RU 1.4.9).
    Adjust,
    /// The player to move touches an opponent's piece (no consequence).
    OpponentTouch,
    /// The piece about to move is lifted and put back first (RU 1.4.7 binds it, RU 1.4.8:
    /// still free to go anywhere).
    LiftPutBack,
    /// Two updates of one scan arrive swapped: the landing square fills before the start
    /// square empties (snapshots; an intermediate state).
    Swapped,
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
        draughts_arbiter::rules::splitmix(self.seed ^ self.n.wrapping_mul(0xA24B_AED4_963E_E407))
    }

    /// A number in `0..n` (`n` > 0).
    pub fn below(&mut self, n: u64) -> u64 {
        self.next() % n.max(1)
    }

    /// True with probability `per_mille` / 1000.
    pub fn chance(&mut self, per_mille: u64) -> bool {
        self.below(1000) < per_mille
    }

    /// One of `items`, if there is one.
    pub fn pick<T: Copy>(&mut self, items: &[T]) -> Option<T> {
        if items.is_empty() {
            return None;
        }
        let i = usize::try_from(self.below(items.len() as u64)).unwrap_or(0);
        items.get(i).copied()
    }

    /// `items` shuffled (Fisher-Yates).
    pub fn shuffle<T>(&mut self, items: &mut [T]) {
        for i in (1..items.len()).rev() {
            let j = usize::try_from(self.below(i as u64 + 1)).unwrap_or(0);
            items.swap(i, j);
        }
    }
}

/// One recorded move's steps, with the noise it carries.
#[derive(Debug, Clone, Default)]
pub struct MovePlan {
    /// The steps in order.
    pub steps: Vec<Step>,
    /// The harmless noise injected, in order.
    pub noise: Vec<Noise>,
    /// The irregularities the plan makes, by number: kind and planned ending.
    pub tags: Vec<(pb::IrregularityKind, Ending)>,
    /// How many of the record's plies the plan makes: 1, or 2 when the reply made before
    /// the press stands (the incident made both).
    pub plies: usize,
    /// The plies (0: this one, 1: the next) that a `stands` ruling makes instead of a
    /// move: the judge's score sheet does not list them (FMJD 5.4: the board's position
    /// is set).
    pub stood: Vec<usize>,
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
    /// The record's next move, if there is one.
    pub next: Option<&'a Move>,
    /// How many of the record's plies come after this one.
    pub left: usize,
}

pub(super) fn n(v: Variant, sq: draughts_arbiter::rules::Square) -> u32 {
    square_number(sq, v)
}

/// A board square message body.
pub fn square(sq: u32) -> pb::BoardSquare {
    pb::BoardSquare { square: sq }
}

/// A clock press of `side`.
pub fn press(side: Color) -> Kind {
    Kind::ClockPress(pb::BoardClockPress {
        side: draughts_arbiter::api::convert::side_pb(side),
    })
}

/// The squares of `bits`, as PDN numbers in increasing order.
pub fn numbers(v: Variant, bits: Bitboard) -> Vec<u32> {
    draughts_arbiter::notation::square::square_numbers(bits, v)
}

/// The bit of PDN square `number` (0 for a number off the board).
pub fn sq_bit(v: Variant, number: u32) -> Bitboard {
    let g = v.geometry();
    g.from_number(number, v.rules().mirrored)
        .map_or(0, |s| s.bit())
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

/// The pieces of a position: white, black.
pub fn pieces(pos: &Position) -> (Bitboard, Bitboard) {
    (pos.pieces(Color::White), pos.pieces(Color::Black))
}

/// The order in which captured pieces come off in capture order, or where the variant
/// allows it (FMJD 4.4: from either end) reversed at random.
fn removal(v: Variant, captured: &[u32], rng: Option<&mut Rng>) -> Vec<u32> {
    let either_end = v.rules().capture_choice == CaptureChoice::MaximumPieces;
    let mut order = captured.to_vec();
    if let Some(r) = rng
        && either_end
        && r.chance(500)
    {
        order.reverse();
    }
    order
}

/// Whether lifting `order` one after another breaks the removal order (the judge's
/// check: each lift is the next piece in capture order, or where the variant allows it
/// the last one).
pub fn breaks_order(v: Variant, captured: &[u32], order: &[u32]) -> Vec<bool> {
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

/// The harmless noise before a move: at most one of the unusual things, by chance.
pub(super) fn pre_noise(rng: &mut Rng, mode: Mode) -> Option<Noise> {
    let r = rng.below(1000);
    match (r, mode) {
        (0..60, _) => Some(Noise::Adjust),
        (60..120, Mode::Events) => Some(Noise::OpponentTouch),
        (120..180, _) => Some(Noise::LiftPutBack),
        _ => None,
    }
}

/// A piece of `side` other than the one on `except`, if there is one.
pub(super) fn other_piece(
    pos: &Position,
    side: Color,
    except: draughts_arbiter::rules::Square,
) -> Option<u32> {
    let v = pos.variant();
    let bits = pos.pieces(side) & !except.bit();
    numbers(v, bits).first().copied()
}

/// A piece of `side` on `piece` lifted and put back on its square: in events the lift
/// and the release, in snapshots a reading without it and one with it again.
pub(super) fn lift_and_put_back(
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

/// The messages of `mv` itself from `pos`: in events touch, lift, a placement on every
/// landing square, the release (the move); in snapshots the readings a scanning board
/// sends (the intermediate states no legal move explains, then the position after the
/// move). Snapshots may carry the swapped-scan noise.
pub fn move_steps(
    pos: &Position,
    mv: &Move,
    legal: &[Move],
    mode: Mode,
    noise: Option<&mut Rng>,
    plan_noise: &mut Vec<Noise>,
) -> Vec<Step> {
    let v = pos.variant();
    let mover = pos.turn();
    let from = n(v, mv.from());
    let to = n(v, mv.to());
    let path: Vec<u32> = mv.path().map(|s| n(v, s)).collect();
    let official = pieces(pos);
    let mut steps = Vec::new();
    match mode {
        Mode::Events => {
            steps.push(Step::quiet(Kind::Touch(square(from))));
            steps.push(Step::quiet(Kind::Lift(square(from))));
            for l in mv.landings() {
                steps.push(Step::quiet(Kind::Place(square(n(v, l)))));
            }
            steps.push(Step::send(
                Kind::Release(square(to)),
                Expect::Move(path.clone()),
            ));
        }
        Mode::Snapshots => {
            let explained = |w: Bitboard, b: Bitboard| {
                legal.iter().any(|m| {
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
            let swap = noise.is_some_and(|r| r.chance(150));
            if swap && fb != tb {
                // The landing square fills before the start square empties.
                readings.push(own(mine | tb, mover, official));
                plan_noise.push(Noise::Swapped);
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
                    steps.push(Step::send(reading(v, w, b), Expect::Move(path.clone())));
                } else if (w, b) != official && !explained(w, b) {
                    steps.push(Step::quiet(reading(v, w, b)));
                }
            }
        }
    }
    steps
}

/// The lifts that take the captured pieces of `mv` off the board after it was made
/// (events; a scanning board's readings did it already): in capture order, or from
/// either end where the variant allows it (FMJD 4.4).
pub fn removal_steps(v: Variant, mv: &Move, mode: Mode, noise: Option<&mut Rng>) -> Vec<Step> {
    if mode == Mode::Snapshots {
        return Vec::new();
    }
    let captured: Vec<u32> = mv.captured().map(|s| n(v, s)).collect();
    removal(v, &captured, noise)
        .into_iter()
        .map(|sq| Step::quiet(Kind::Lift(square(sq))))
        .collect()
}

/// The physical board as the simulated board knows it: which squares hold a piece of
/// which colour (crowns are not sensed), the piece in the player's hand, and the
/// captured pieces of the last move still on it. It follows the board's own messages,
/// the way the judge's picture does (`Game.board_view`), so the two can be compared.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Physical {
    /// Squares with a white piece.
    pub white: Bitboard,
    /// Squares with a black piece.
    pub black: Bitboard,
    /// The piece in hand: its colour and the square it was lifted from.
    pub hand: Option<(Color, u32)>,
    /// Captured pieces still on the board, to be lifted (PDN numbers).
    pub pending: Vec<u32>,
}

impl Physical {
    /// The board showing `pos`.
    pub fn of(pos: &Position) -> Physical {
        Physical {
            white: pos.pieces(Color::White),
            black: pos.pieces(Color::Black),
            hand: None,
            pending: Vec::new(),
        }
    }

    /// The board as the judge's `Game.board_view` has it.
    pub fn from_view(v: Variant, view: &pb::BoardView) -> Physical {
        let bits = |list: &[u32]| list.iter().fold(0, |b, &s| b | sq_bit(v, s));
        Physical {
            white: bits(&view.white),
            black: bits(&view.black),
            hand: view.in_hand.as_ref().map(|h| {
                let side = if h.side == pb::Side::Black as i32 {
                    Color::Black
                } else {
                    Color::White
                };
                (side, h.from)
            }),
            pending: view.pending_removal.clone(),
        }
    }

    /// The pieces on the board: white, black.
    pub fn pieces(&self) -> (Bitboard, Bitboard) {
        (self.white, self.black)
    }

    fn colour_at(&self, bit: Bitboard) -> Option<Color> {
        if self.white & bit != 0 {
            Some(Color::White)
        } else if self.black & bit != 0 {
            Some(Color::Black)
        } else {
            None
        }
    }

    fn set(&mut self, bit: Bitboard, color: Option<Color>) {
        self.white &= !bit;
        self.black &= !bit;
        match color {
            Some(Color::White) => self.white |= bit,
            Some(Color::Black) => self.black |= bit,
            None => {}
        }
    }

    /// What a board message sent and acknowledged did to the board: a captured piece
    /// still on it comes off for good; another lifted piece is in hand (one in hand
    /// already is put aside, off the board); a release puts the piece in hand down; a
    /// reading is the board.
    pub fn apply(&mut self, v: Variant, kind: &Kind) {
        match kind {
            Kind::Lift(s) => {
                let bit = sq_bit(v, s.square);
                let color = self.colour_at(bit);
                self.set(bit, None);
                if let Some(i) = self.pending.iter().position(|&p| p == s.square) {
                    self.pending.remove(i);
                } else if let Some(c) = color {
                    self.hand = Some((c, s.square));
                }
            }
            Kind::Release(s) => {
                if let Some((c, _)) = self.hand.take() {
                    self.set(sq_bit(v, s.square), Some(c));
                }
            }
            Kind::Snapshot(o) => {
                let bits = |list: &[u32]| list.iter().fold(0, |b, &s| b | sq_bit(v, s));
                self.white = bits(&o.white);
                self.black = bits(&o.black);
                self.hand = None;
                let on = self.white | self.black;
                self.pending.retain(|&p| on & sq_bit(v, p) != 0);
            }
            _ => {}
        }
    }
}

/// One thing done on the board to reach a target.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Op {
    /// The piece in hand put down on this square.
    Drop(u32),
    /// A piece lifted from the first square and put down on the second.
    Carry(u32, u32),
    /// A piece lifted off the board (a captured piece still on it, or one the target
    /// has no room for).
    Off(u32),
    /// A piece of this colour put down from off the board.
    Put(Color, u32),
}

/// The board messages that take the board `from` to show `target` (white, black), one
/// step at a time in an order `rng` picks, as a player puts a board back or copies a
/// position: the piece in hand put down first where the target wants one of its colour,
/// pieces carried from squares to empty to squares to fill (a square filled only once
/// it is empty), the rest lifted off. Events send lifts and releases; snapshots a
/// reading after each piece lifted or put down. An error when an events board cannot get
/// there (a piece to put down with none of its colour to take it from: only a reading
/// can show a piece from off the board).
pub fn steps_to(
    v: Variant,
    mode: Mode,
    from: &Physical,
    target: (Bitboard, Bitboard),
    rng: &mut Rng,
) -> Result<Vec<Kind>, String> {
    let (tw, tb) = target;
    let list = |bits: Bitboard| numbers(v, bits);
    let mut fills: Vec<(Color, u32)> = list(tw & !from.white)
        .into_iter()
        .map(|s| (Color::White, s))
        .chain(
            list(tb & !from.black)
                .into_iter()
                .map(|s| (Color::Black, s)),
        )
        .collect();
    rng.shuffle(&mut fills);
    let mut clears: [Vec<u32>; 2] = [list(from.white & !tw), list(from.black & !tb)];
    rng.shuffle(&mut clears[0]);
    rng.shuffle(&mut clears[1]);
    let mut first: Option<Op> = None;
    let mut ops: Vec<Op> = Vec::new();
    for (c, sq) in fills {
        let empty = (from.white | from.black) & sq_bit(v, sq) == 0;
        if first.is_none() && empty && from.hand.is_some_and(|(hc, _)| hc == c) {
            first = Some(Op::Drop(sq));
        } else if let Some(src) = clears[c.index()].pop() {
            ops.push(Op::Carry(src, sq));
        } else if mode == Mode::Snapshots {
            ops.push(Op::Put(c, sq));
        } else {
            return Err(format!(
                "no {c} piece to put on {sq}: an events board cannot show it"
            ));
        }
    }
    ops.extend(clears.into_iter().flatten().map(Op::Off));
    rng.shuffle(&mut ops);
    // In order: the piece in hand first (a lift would put it aside), then any step whose
    // square to fill is empty by then.
    let (mut w, mut b) = (from.white, from.black);
    let mut out = Vec::new();
    let put = |out: &mut Vec<Kind>, w: &mut Bitboard, b: &mut Bitboard, op: Op| {
        let at = |sq: u32| sq_bit(v, sq);
        let colour = |w: Bitboard, sq: u32| {
            if w & at(sq) != 0 {
                Color::White
            } else {
                Color::Black
            }
        };
        let lift = |out: &mut Vec<Kind>, w: &mut Bitboard, b: &mut Bitboard, sq: u32| {
            *w &= !at(sq);
            *b &= !at(sq);
            out.push(match mode {
                Mode::Events => Kind::Lift(square(sq)),
                Mode::Snapshots => reading(v, *w, *b),
            });
        };
        let down = |out: &mut Vec<Kind>, w: &mut Bitboard, b: &mut Bitboard, c: Color, sq: u32| {
            match c {
                Color::White => *w |= at(sq),
                Color::Black => *b |= at(sq),
            }
            out.push(match mode {
                Mode::Events => Kind::Release(square(sq)),
                Mode::Snapshots => reading(v, *w, *b),
            });
        };
        match op {
            Op::Drop(sq) => {
                let c = from.hand.map_or(Color::White, |(c, _)| c);
                down(out, w, b, c, sq);
            }
            Op::Carry(a, to) => {
                let c = colour(*w, a);
                lift(out, w, b, a);
                down(out, w, b, c, to);
            }
            Op::Off(a) => lift(out, w, b, a),
            Op::Put(c, sq) => down(out, w, b, c, sq),
        }
    };
    if let Some(op) = first {
        put(&mut out, &mut w, &mut b, op);
    }
    while !ops.is_empty() {
        let board = w | b;
        let ready = ops.iter().position(|op| match op {
            Op::Carry(_, to) | Op::Put(_, to) => board & sq_bit(v, *to) == 0,
            _ => true,
        });
        let Some(i) = ready else {
            return Err("the pieces to move block one another".into());
        };
        let op = ops.remove(i);
        put(&mut out, &mut w, &mut b, op);
    }
    if mode == Mode::Snapshots {
        // A reading shows at least one piece: an empty board is no reading.
        out.retain(|k| !matches!(k, Kind::Snapshot(o) if o.white.is_empty() && o.black.is_empty()));
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::board_sim::compose::move_plan;
    use draughts_arbiter::notation::parse_fen;
    use draughts_arbiter::rules::Game;

    fn plan_of(fen: Option<&str>, v: Variant, text: &str, mode: Mode) -> MovePlan {
        let pos = fen.map_or_else(|| Position::start(v), |f| parse_fen(f, v).expect("fen"));
        let game = Game::new(pos, draughts_arbiter::rules::RuleEdition::Classic);
        let legal = game.legal_moves();
        let mv = draughts_arbiter::notation::parse_move(text, &pos).expect("move");
        move_plan(
            &Ply {
                before: &pos,
                mv: &mv,
                legal: &legal,
                timed: true,
                next: None,
                left: 0,
            },
            mode,
            None,
        )
    }

    fn describe(kind: &Kind) -> String {
        match kind {
            Kind::Touch(q) => format!("touch {}", q.square),
            Kind::Lift(q) => format!("lift {}", q.square),
            Kind::Place(q) => format!("place {}", q.square),
            Kind::Release(q) => format!("release {}", q.square),
            Kind::Snapshot(o) => format!("w{:?} b{:?}", o.white, o.black),
            Kind::ClockPress(_) => "press".into(),
            other => format!("{other:?}"),
        }
    }

    fn kinds(plan: &MovePlan) -> Vec<String> {
        plan.steps
            .iter()
            .map(|s| match &s.act {
                Act::Send(k) => describe(k),
                Act::Press(_) => "press".into(),
                other => format!("{other:?}"),
            })
            .collect()
    }

    #[test]
    fn a_quiet_move_is_touch_lift_place_release_press() {
        let p = plan_of(None, Variant::Russian, "c3-d4", Mode::Events);
        assert_eq!(
            kinds(&p),
            ["touch 22", "lift 22", "place 18", "release 18", "press"],
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
                "lift 11",
                "press"
            ]
        );
        assert!(
            p.steps
                .iter()
                .all(|s| !matches!(s.expect, Expect::Flag(..)))
        );
    }

    #[test]
    fn snapshots_skip_no_intermediate_state_a_legal_move_does_not_explain() {
        let p = plan_of(
            Some("W:WC3:BD4,F6"),
            Variant::Russian,
            "c3:e5:g7",
            Mode::Snapshots,
        );
        // Lifted, landed with both captured still there, one off, both off (the move),
        // the press.
        assert_eq!(p.steps.len(), 5, "{:?}", kinds(&p));
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
    fn the_physical_board_follows_its_messages_as_the_judge_does() {
        let v = Variant::Russian;
        let pos = parse_fen("W:WC3:BD4,F6", v).expect("fen");
        let mut b = Physical::of(&pos);
        b.apply(v, &Kind::Lift(square(22)));
        assert_eq!(b.hand, Some((Color::White, 22)));
        b.apply(v, &Kind::Release(square(8)));
        b.pending = vec![18, 11];
        // A captured piece comes off for good; the hand stays empty.
        b.apply(v, &Kind::Lift(square(18)));
        assert_eq!(b.hand, None);
        assert_eq!(b.pending, vec![11]);
        // Any other piece is in hand; a second lift puts the first aside.
        b.apply(v, &Kind::Lift(square(8)));
        assert_eq!(b.hand, Some((Color::White, 8)));
        assert_eq!(numbers(v, b.white), Vec::<u32>::new());
    }

    #[test]
    fn steps_to_a_target_carry_pieces_and_fill_only_empty_squares() {
        let v = Variant::Russian;
        // White moved 22 to 13 (an illegal move): back to 22.
        let start = Position::start(v);
        let mut board = Physical::of(&start);
        board.white = (board.white & !sq_bit(v, 22)) | sq_bit(v, 13);
        for seed in 0..20 {
            let steps = steps_to(v, Mode::Events, &board, pieces(&start), &mut Rng::new(seed))
                .expect("reachable");
            let text: Vec<String> = steps.iter().map(describe).collect();
            assert_eq!(text, ["lift 13", "release 22"]);
            let steps = steps_to(
                v,
                Mode::Snapshots,
                &board,
                pieces(&start),
                &mut Rng::new(seed),
            )
            .expect("reachable");
            // The piece off a5, then down on c3: one reading each.
            assert_eq!(
                steps.len(),
                2,
                "{:?}",
                steps.iter().map(describe).collect::<Vec<_>>()
            );
            assert!(
                matches!(&steps[0], Kind::Snapshot(o) if !o.white.contains(&13) && !o.white.contains(&22))
            );
            let mut b = board.clone();
            for s in &steps {
                b.apply(v, s);
            }
            assert_eq!(b.pieces(), pieces(&start));
        }
        // A piece in hand goes down first; captured pieces still on come off.
        let mut board = Physical::of(&start);
        board.white &= !sq_bit(v, 22);
        board.hand = Some((Color::White, 22));
        board.black |= sq_bit(v, 18);
        let mut target = pieces(&start);
        target.1 &= !sq_bit(v, 18);
        let steps = steps_to(v, Mode::Events, &board, target, &mut Rng::new(3)).expect("ok");
        let text: Vec<String> = steps.iter().map(describe).collect();
        assert_eq!(text, ["release 22", "lift 18"]);
        // Nothing to take a piece from: only a reading can show it.
        let mut board = Physical::of(&start);
        board.white &= !sq_bit(v, 22);
        assert!(steps_to(v, Mode::Events, &board, pieces(&start), &mut Rng::new(1)).is_err());
    }
}
