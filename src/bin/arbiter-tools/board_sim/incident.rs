//! The irregularities `--noise` makes on purpose (issue 38 item 5), at most one incident
//! per ply, and how each is brought to an end: the incident is sent, the judge must flag
//! every kind it is (each with its rule), and then each irregularity ends one way, chosen
//! from the seed so that a run goes through every ending a kind allows:
//!
//! - **corrected**: the arbiter rules `corrected`; on the board the judge answers with its
//!   target (`BoardOutOfStep`) and the board is restored step by step, in an order the
//!   seed picks, until `BoardInStep` (a piece put on a wrong square on the way is a
//!   `WRONG_COPY`, which ends in turn); then the record's move is played;
//! - **stands**: the arbiter rules `stands`. The simulator rules it only where what
//!   stands is the record's next position, so the game goes on with its record: a touch
//!   move or an out-of-turn reply that is the record's move, an illegal release put on
//!   the record's square before the ruling, a removal out of capture order (the capture
//!   was the record's). What stands is a move the judge's score sheet does not list
//!   (the position is set, FMJD 5.4), so the simulator counts it as made by the ruling;
//! - **cleared**: the players put the board back to the official position without a
//!   ruling, which clears every irregularity on the board; a capture stopped early may
//!   also be **finished** on the board (RU 1.5.5).
//!
//! A kind no board can cause is never made ([`NEVER_SENT`]), and a kind a board of the
//! mode cannot cause is said so ([`not_made`]).

use std::collections::BTreeMap;

use draughts_arbiter::api::pb::IrregularityKind as K;
use draughts_arbiter::api::pb::board_message::Kind;
use draughts_arbiter::notation::square::square_number;
use draughts_arbiter::rules::{Bitboard, Color, Move, Position, Square, Variant};

use super::plan::{
    Act, Ending, Expect, Mode, MovePlan, Ply, Rng, Step, breaks_order, move_steps, numbers, pieces,
    press, reading, removal_steps, square,
};

/// The kinds a board can cause, in the proto's order.
pub const BOARD_KINDS: [K; 8] = [
    K::MoveOutOfTurn,
    K::IllegalMove,
    K::TouchMove,
    K::WrongRemoval,
    K::CaptureIncomplete,
    K::ClockPressWithoutMove,
    K::ClockPressBeforeRemoval,
    K::WrongCopy,
];

/// The kinds no board can cause: the judge never flags them (the proto marks them
/// deprecated and "never sent": "I adjust" out of turn is refused, a touch of an
/// immovable piece is `PieceTouched.immovable`, a reading that differs is recorded with
/// what differs).
#[allow(deprecated)]
pub const NEVER_SENT: [K; 3] = [
    K::AdjustOutOfTurn,
    K::TouchedImmovablePiece,
    K::BoardMismatch,
];

/// A kind's name in the summary (the proto's, without its prefix).
pub fn kind_name(kind: K) -> &'static str {
    kind.as_str_name()
        .strip_prefix("IRREGULARITY_KIND_")
        .unwrap_or("UNSPECIFIED")
}

/// Why the simulator does not make `kind` on a board of `mode` (`rulings`: an arbiter's
/// token to rule with), if it does not.
pub fn not_made(kind: K, mode: Mode, rulings: bool) -> Option<&'static str> {
    if NEVER_SENT.contains(&kind) {
        return Some("the judge never flags it");
    }
    match (kind, mode) {
        (K::TouchMove, Mode::Snapshots) => Some("a scanning board senses no touch"),
        (K::WrongRemoval, Mode::Snapshots) => {
            Some("a scanning board's capture is seen once its pieces are off: no removal to judge")
        }
        (K::ClockPressBeforeRemoval, Mode::Snapshots) => Some(
            "a scanning board's capture is seen once its pieces are off: a press before is \
             a press without a move",
        ),
        (K::WrongCopy, Mode::Snapshots) => {
            Some("a reading while the board catches up is compared whole, not flagged")
        }
        (K::ClockPressWithoutMove | K::ClockPressBeforeRemoval, _) if !rulings => {
            Some("only a ruling clears it, and there is no arbiter's token")
        }
        (K::WrongCopy, _) if !rulings => {
            Some("made while a board catches up after a ruling, and there is no arbiter's token")
        }
        _ => None,
    }
}

/// The endings the simulator plays for `kind` on a board of `mode` (`rulings`: whether
/// it may rule), over a run.
pub fn endings(kind: K, mode: Mode, rulings: bool) -> Vec<Ending> {
    if not_made(kind, mode, rulings).is_some() {
        return Vec::new();
    }
    let all: &[Ending] = match kind {
        K::MoveOutOfTurn if mode == Mode::Snapshots => &[Ending::Corrected, Ending::Cleared],
        K::MoveOutOfTurn | K::IllegalMove | K::TouchMove | K::WrongRemoval => {
            &[Ending::Corrected, Ending::Stands, Ending::Cleared]
        }
        K::CaptureIncomplete if mode == Mode::Events => {
            &[Ending::Corrected, Ending::Cleared, Ending::Finished]
        }
        K::CaptureIncomplete | K::WrongCopy => &[Ending::Corrected, Ending::Cleared],
        K::ClockPressWithoutMove | K::ClockPressBeforeRemoval => {
            &[Ending::Corrected, Ending::Stands]
        }
        _ => &[],
    };
    all.iter()
        .copied()
        .filter(|e| rulings || !matches!(e, Ending::Corrected | Ending::Stands))
        .collect()
}

/// The noise generator of one game, with what it needs to plan incidents.
#[derive(Debug, Clone)]
pub struct Noiser {
    /// The game's generator.
    pub rng: Rng,
    /// Whether the arbiter may be asked to rule (an arbiter's token).
    pub rulings: bool,
    mode: Mode,
    /// How many incidents of each kind this game had, from a start the seed picks: the
    /// ending turns through those the kind allows.
    turns: BTreeMap<i32, u64>,
}

impl Noiser {
    /// The noise of a game on a board of `mode`.
    pub fn new(rng: Rng, rulings: bool, mode: Mode) -> Noiser {
        Noiser {
            rng,
            rulings,
            mode,
            turns: BTreeMap::new(),
        }
    }

    /// The ending of the next irregularity of `kind`: the next in turn, or where the
    /// situation does not allow that one (`allowed`), another it allows.
    fn ending(&mut self, kind: K, allowed: impl Fn(Ending) -> bool) -> Option<Ending> {
        let all = endings(kind, self.mode, self.rulings);
        if all.is_empty() {
            return None;
        }
        let start = self.rng.below(all.len() as u64);
        let turn = self.turns.entry(kind as i32).or_insert(start);
        let wanted = all[usize::try_from(*turn % all.len() as u64).unwrap_or(0)];
        *turn += 1;
        if allowed(wanted) {
            return Some(wanted);
        }
        let others: Vec<Ending> = all.into_iter().filter(|&e| allowed(e)).collect();
        self.rng.pick(&others)
    }
}

/// What an incident builder needs of the ply.
struct Cx<'p, 'a> {
    ply: &'p Ply<'a>,
    v: Variant,
    mode: Mode,
    pos: Position,
    after: Position,
    mover: Color,
    /// Every legal move of the position, capture paths apart.
    legal: Vec<Move>,
}

impl Cx<'_, '_> {
    fn n(&self, sq: Square) -> u32 {
        square_number(sq, self.v)
    }

    /// Whether the ply's move may stand in the judge's position as the record's next
    /// position: quiet, no crown to sense, a man on a board that senses no crowns, and
    /// the game goes on after it.
    fn may_stand(&self, pos: &Position, mv: &Move, left: usize) -> bool {
        let man = pos.kings() & mv.from().bit() == 0;
        let crowned = pos
            .play(mv)
            .is_ok_and(|a| man && a.kings() & mv.to().bit() != 0);
        !mv.is_capture() && !crowned && (man || self.mode == Mode::Events) && left >= 1
    }

    /// The move's own messages and removals.
    fn move_and_removal(&self, nz: &mut Noiser, plan: &mut MovePlan) -> Vec<Step> {
        let mut steps = move_steps(
            &self.pos,
            self.ply.mv,
            self.ply.legal,
            self.mode,
            Some(&mut nz.rng),
            &mut plan.noise,
        );
        steps.extend(removal_steps(
            self.v,
            self.ply.mv,
            self.mode,
            Some(&mut nz.rng),
        ));
        steps
    }

    fn press(&self, side: Color) -> Option<Step> {
        self.ply.timed.then(|| Step::act(Act::Press(side)))
    }

    /// A reading of the position with the piece on `from` moved to `to`.
    fn moved_reading(&self, from: Square, to: Square) -> Kind {
        let (mut w, mut b) = pieces(&self.pos);
        if w & from.bit() != 0 {
            w = (w & !from.bit()) | to.bit();
        } else {
            b = (b & !from.bit()) | to.bit();
        }
        reading(self.v, w, b)
    }

    /// Whether a reading would be taken for a legal move of the position.
    fn explained(&self, kind: &Kind) -> bool {
        let Kind::Snapshot(o) = kind else {
            return false;
        };
        let bits = |list: &[u32]| {
            list.iter()
                .fold(0, |b, &s| b | super::plan::sq_bit(self.v, s))
        };
        let (w, b) = (bits(&o.white), bits(&o.black));
        self.legal.iter().any(|m| {
            self.pos
                .play(m)
                .is_ok_and(|p| p.pieces(Color::White) == w && p.pieces(Color::Black) == b)
        })
    }
}

/// One irregularity of a plan: flagged as `tag`, ending as planned.
fn flag(kind: Kind, irregularity: K, tag: usize) -> Step {
    Step::send(
        kind,
        Expect::Flag(irregularity, u8::try_from(tag).unwrap_or(u8::MAX)),
    )
}

fn rule(tag: usize, ruling: Ending) -> Step {
    Step::act(Act::Rule {
        tag: u8::try_from(tag).unwrap_or(u8::MAX),
        ruling,
    })
}

/// The steps that end an irregularity on the board (`tag`) with `ending` other than
/// stands: the ruling and the restore to `official`, or the board put back.
fn back_to(
    tag: usize,
    ending: Ending,
    official: (Bitboard, Bitboard),
    nz: &mut Noiser,
    plan: &mut MovePlan,
) -> Vec<Step> {
    match ending {
        Ending::Corrected => {
            // On the way back, now and then a piece put on a wrong square (events).
            let wrong_copy = if nz.mode == Mode::Events && nz.rng.chance(500) {
                nz.ending(K::WrongCopy, |_| true).map(|e| {
                    plan.tags.push((K::WrongCopy, e));
                    (u8::try_from(plan.tags.len() - 1).unwrap_or(u8::MAX), e)
                })
            } else {
                None
            };
            vec![
                rule(tag, Ending::Corrected),
                Step::act(Act::Restore {
                    official,
                    wrong_copy,
                }),
            ]
        }
        _ => vec![Step::act(Act::PutBack { official })],
    }
}

/// The press a player makes after an irregular move on its turn, now and then (timed,
/// with rulings): itself a press without a move, flagged, and ruled after the rest.
fn maybe_press(cx: &Cx<'_, '_>, nz: &mut Noiser, plan: &mut MovePlan) -> Option<(Step, Step)> {
    if !(cx.ply.timed && nz.rulings && nz.rng.chance(333)) {
        return None;
    }
    let ending = nz.ending(K::ClockPressWithoutMove, |_| true)?;
    plan.tags.push((K::ClockPressWithoutMove, ending));
    let tag = plan.tags.len() - 1;
    Some((
        flag(press(cx.mover), K::ClockPressWithoutMove, tag),
        rule(tag, ending),
    ))
}

/// Plans the ply with an irregularity, when the noise makes one here and the position
/// lends itself to one; `None` leaves the ply to the harmless noise.
pub fn plan(ply: &Ply<'_>, mode: Mode, nz: &mut Noiser) -> Option<MovePlan> {
    let capture = ply.mv.is_capture();
    if !nz.rng.chance(if capture { 350 } else { 120 }) {
        return None;
    }
    let pos = *ply.before;
    let after = pos.play(ply.mv).ok()?;
    let cx = Cx {
        ply,
        v: pos.variant(),
        mode,
        pos,
        after,
        mover: pos.turn(),
        legal: pos.legal_moves_all_paths(),
    };
    let mut kinds: Vec<K> = vec![
        K::MoveOutOfTurn,
        K::IllegalMove,
        K::TouchMove,
        K::ClockPressWithoutMove,
    ];
    let mut captures = vec![
        K::WrongRemoval,
        K::CaptureIncomplete,
        K::ClockPressBeforeRemoval,
    ];
    nz.rng.shuffle(&mut kinds);
    nz.rng.shuffle(&mut captures);
    // Where the move is a capture, the kinds only a capture makes come first, mostly.
    let order: Vec<K> = if capture && nz.rng.chance(700) {
        captures.into_iter().chain(kinds).collect()
    } else {
        kinds.into_iter().chain(captures).collect()
    };
    for kind in order {
        if not_made(kind, mode, nz.rulings).is_some() {
            continue;
        }
        let mut plan = MovePlan {
            plies: 1,
            ..MovePlan::default()
        };
        let steps = match kind {
            K::MoveOutOfTurn => out_of_turn(&cx, nz, &mut plan),
            K::IllegalMove => illegal(&cx, nz, &mut plan),
            K::TouchMove => touch_move(&cx, nz, &mut plan),
            K::WrongRemoval => wrong_removal(&cx, nz, &mut plan),
            K::CaptureIncomplete => capture_incomplete(&cx, nz, &mut plan),
            K::ClockPressWithoutMove => press_without_move(&cx, nz, &mut plan),
            K::ClockPressBeforeRemoval => press_before_removal(&cx, nz, &mut plan),
            _ => None,
        };
        if let Some(steps) = steps {
            plan.steps = steps;
            return Some(plan);
        }
    }
    None
}

/// A piece of the side not on move goes out of turn. Events, timed: the reply (the
/// record's next move) made before the mover pressed its clock; it may stand, the mover
/// to move again with its clock still running, which is the record. Otherwise (snapshots,
/// untimed): a piece of the side not on move put on an empty square next to it before
/// the move.
fn out_of_turn(cx: &Cx<'_, '_>, nz: &mut Noiser, plan: &mut MovePlan) -> Option<Vec<Step>> {
    let v = cx.v;
    if cx.mode == Mode::Events
        && cx.ply.timed
        && cx.ply.left >= 1
        && let Some(reply) = cx.ply.next
    {
        let stand = nz.rulings && cx.may_stand(&cx.after, reply, cx.ply.left - 1);
        let ending = nz.ending(K::MoveOutOfTurn, |e| match e {
            Ending::Stands => stand,
            _ => true,
        })?;
        plan.tags.push((K::MoveOutOfTurn, ending));
        let mut steps = cx.move_and_removal(nz, plan);
        steps.push(Step::quiet(Kind::Lift(square(cx.n(reply.from())))));
        for l in reply.landings() {
            steps.push(Step::quiet(Kind::Place(square(cx.n(l)))));
        }
        steps.push(flag(
            Kind::Release(square(cx.n(reply.to()))),
            K::MoveOutOfTurn,
            0,
        ));
        if ending == Ending::Stands {
            // The reply stands: the mover is to move again, its clock still running.
            steps.push(rule(0, Ending::Stands));
            plan.plies = 2;
            plan.stood = vec![1];
        } else {
            steps.extend(back_to(0, ending, pieces(&cx.after), nz, plan));
            steps.extend(cx.press(cx.mover));
        }
        return Some(steps);
    }
    let g = v.geometry();
    let other = !cx.mover;
    let occupied = cx.pos.occupied();
    let mut moves: Vec<(Square, Square)> = Vec::new();
    for &sq in &g.order {
        if cx.pos.pieces(other) & sq.bit() == 0 {
            continue;
        }
        for &d in v.rules().king_dirs {
            if let Some(to) = g.neighbour(sq, d)
                && occupied & to.bit() == 0
            {
                moves.push((sq, to));
            }
        }
    }
    let (from, to) = nz.rng.pick(&moves)?;
    let ending = nz.ending(K::MoveOutOfTurn, |e| e != Ending::Stands)?;
    plan.tags.push((K::MoveOutOfTurn, ending));
    let mut steps = match cx.mode {
        Mode::Events => vec![
            Step::quiet(Kind::Lift(square(cx.n(from)))),
            flag(Kind::Release(square(cx.n(to))), K::MoveOutOfTurn, 0),
        ],
        Mode::Snapshots => vec![flag(cx.moved_reading(from, to), K::MoveOutOfTurn, 0)],
    };
    steps.extend(back_to(0, ending, pieces(&cx.pos), nz, plan));
    steps.extend(cx.move_and_removal(nz, plan));
    steps.extend(cx.press(cx.mover));
    Some(steps)
}

/// The record's piece released on a square no legal move of it goes to (nor passes on
/// the way). It may stand once the piece was put on the record's square (a quiet move).
fn illegal(cx: &Cx<'_, '_>, nz: &mut Noiser, plan: &mut MovePlan) -> Option<Vec<Step>> {
    let v = cx.v;
    let mv = cx.ply.mv;
    let from = mv.from();
    let reach: Bitboard = cx
        .legal
        .iter()
        .filter(|m| m.from() == from)
        .fold(0, |b, m| b | m.landings().fold(0, |b, l| b | l.bit()));
    let free =
        |sq: Square| sq != from && cx.pos.occupied() & sq.bit() == 0 && reach & sq.bit() == 0;
    let g = v.geometry();
    let near: Vec<Square> = v
        .rules()
        .king_dirs
        .iter()
        .filter_map(|&d| g.neighbour(from, d))
        .filter(|&s| free(s))
        .collect();
    let far: Vec<Square> = g.order.iter().copied().filter(|&s| free(s)).collect();
    let to = nz.rng.pick(&near).or_else(|| nz.rng.pick(&far))?;
    let released = match cx.mode {
        Mode::Events => Kind::Release(square(cx.n(to))),
        Mode::Snapshots => cx.moved_reading(from, to),
    };
    if cx.explained(&released) {
        return None;
    }
    let stand = nz.rulings && cx.may_stand(&cx.pos, mv, cx.ply.left);
    let ending = nz.ending(K::IllegalMove, |e| e != Ending::Stands || stand)?;
    plan.tags.push((K::IllegalMove, ending));
    let mut steps = match cx.mode {
        Mode::Events => vec![
            Step::quiet(Kind::Touch(square(cx.n(from)))),
            Step::quiet(Kind::Lift(square(cx.n(from)))),
        ],
        Mode::Snapshots => Vec::new(),
    };
    steps.push(flag(released, K::IllegalMove, 0));
    let pressed = maybe_press(cx, nz, plan);
    if let Some((p, _)) = &pressed {
        steps.push(p.clone());
    }
    if ending == Ending::Stands {
        // Put where the record has it, then ruled to stand: the record's move, made by
        // the ruling.
        match cx.mode {
            Mode::Events => {
                steps.push(Step::quiet(Kind::Lift(square(cx.n(to)))));
                steps.push(Step::quiet(Kind::Release(square(cx.n(mv.to())))));
            }
            Mode::Snapshots => {
                let (w, b) = pieces(&cx.after);
                steps.push(Step::quiet(reading(v, w, b)));
            }
        }
    }
    Some(ruled(cx, nz, plan, steps, ending, pressed))
}

/// The rest of a flagged move after the flag (and the press, if any): ruled to stand, or
/// the board put back as the ruling says; the press ruled on; the record's move made if
/// the flagged one did not stand; the mover's press.
fn ruled(
    cx: &Cx<'_, '_>,
    nz: &mut Noiser,
    plan: &mut MovePlan,
    mut steps: Vec<Step>,
    ending: Ending,
    pressed: Option<(Step, Step)>,
) -> Vec<Step> {
    if ending == Ending::Stands {
        steps.push(rule(0, Ending::Stands));
        plan.stood = vec![0];
    } else {
        steps.extend(back_to(0, ending, pieces(&cx.pos), nz, plan));
    }
    // The press ruled on before the move (which may end the game).
    if let Some((_, r)) = pressed {
        steps.push(r);
    }
    if ending != Ending::Stands {
        steps.extend(cx.move_and_removal(nz, plan));
    }
    steps.extend(cx.press(cx.mover));
    steps
}

/// A piece touched, another moved (RU 1.4.7; events). To stand: another piece touched,
/// the record's move made. Else: the record's piece touched, another piece moved, and
/// once the board is back the touched piece makes the record's move.
fn touch_move(cx: &Cx<'_, '_>, nz: &mut Noiser, plan: &mut MovePlan) -> Option<Vec<Step>> {
    let mv = cx.ply.mv;
    let others: Vec<Move> = cx
        .legal
        .iter()
        .copied()
        .filter(|m| m.from() != mv.from())
        .collect();
    if others.is_empty() {
        return None;
    }
    let stand = nz.rulings && cx.may_stand(&cx.pos, mv, cx.ply.left);
    let ending = nz.ending(K::TouchMove, |e| e != Ending::Stands || stand)?;
    plan.tags.push((K::TouchMove, ending));
    let other = nz.rng.pick(&others)?;
    let (touched, moved) = if ending == Ending::Stands {
        (other.from(), *mv)
    } else {
        (mv.from(), other)
    };
    let mut steps = vec![
        Step::quiet(Kind::Touch(square(cx.n(touched)))),
        Step::quiet(Kind::Lift(square(cx.n(moved.from())))),
    ];
    for l in moved.landings() {
        steps.push(Step::quiet(Kind::Place(square(cx.n(l)))));
    }
    steps.push(flag(
        Kind::Release(square(cx.n(moved.to()))),
        K::TouchMove,
        0,
    ));
    let pressed = maybe_press(cx, nz, plan);
    if let Some((p, _)) = &pressed {
        steps.push(p.clone());
    }
    Some(ruled(cx, nz, plan, steps, ending, pressed))
}

/// A wrong removal after the record's capture (events; RU 1.5.12, FMJD 4.4): a captured
/// piece lifted out of the order the variant requires (it may stand: the capture was the
/// record's, the other captured pieces are then lifted in order), or a piece that was
/// not captured lifted (it is in hand, put back when the board is).
fn wrong_removal(cx: &Cx<'_, '_>, nz: &mut Noiser, plan: &mut MovePlan) -> Option<Vec<Step>> {
    let v = cx.v;
    let mv = cx.ply.mv;
    if cx.mode != Mode::Events || !mv.is_capture() || cx.ply.left == 0 {
        return None;
    }
    let captured: Vec<u32> = mv.captured().map(|s| cx.n(s)).collect();
    let out_of_order: Vec<usize> = (0..captured.len())
        .filter(|&i| breaks_order(v, &captured, &[captured[i]]) == [true])
        .collect();
    let not_captured = numbers(v, cx.after.pieces(!cx.mover));
    let ending = nz.ending(K::WrongRemoval, |e| match e {
        Ending::Stands => !out_of_order.is_empty(),
        _ => !(out_of_order.is_empty() && not_captured.is_empty()),
    })?;
    plan.tags.push((K::WrongRemoval, ending));
    let mut steps = cx_move_only(cx, nz, plan);
    let order_wrong = ending == Ending::Stands
        || not_captured.is_empty()
        || (!out_of_order.is_empty() && nz.rng.chance(500));
    let mut left = captured.clone();
    if order_wrong {
        let i = nz.rng.pick(&out_of_order)?;
        steps.push(flag(Kind::Lift(square(captured[i])), K::WrongRemoval, 0));
        left.remove(i);
    } else {
        let k = usize::try_from(nz.rng.below(captured.len() as u64)).unwrap_or(0);
        for &sq in &captured[..k] {
            steps.push(Step::quiet(Kind::Lift(square(sq))));
        }
        left.drain(..k);
        let y = nz.rng.pick(&not_captured)?;
        steps.push(flag(Kind::Lift(square(y)), K::WrongRemoval, 0));
    }
    if ending == Ending::Stands {
        steps.push(rule(0, Ending::Stands));
        // The rest of the captured pieces, still on the board, come off in order.
        steps.extend(left.iter().map(|&sq| Step::quiet(Kind::Lift(square(sq)))));
    } else {
        steps.extend(back_to(0, ending, pieces(&cx.after), nz, plan));
    }
    steps.extend(cx.press(cx.mover));
    Some(steps)
}

/// The record's move without its removals.
fn cx_move_only(cx: &Cx<'_, '_>, nz: &mut Noiser, plan: &mut MovePlan) -> Vec<Step> {
    move_steps(
        &cx.pos,
        cx.ply.mv,
        cx.ply.legal,
        cx.mode,
        Some(&mut nz.rng),
        &mut plan.noise,
    )
}

/// The record's capture released on one of its landing squares, before its end (RU
/// 1.5.5, FMJD 4.5), where no legal move of the piece ends. Events may finish it on the
/// board: lifted again where it stopped and released at the capture's end.
fn capture_incomplete(cx: &Cx<'_, '_>, nz: &mut Noiser, plan: &mut MovePlan) -> Option<Vec<Step>> {
    let mv = cx.ply.mv;
    let landings: Vec<Square> = mv.landings().collect();
    if landings.len() < 2 {
        return None;
    }
    let from = mv.from();
    let stops: Vec<usize> = (0..landings.len() - 1)
        .filter(|&i| {
            !cx.legal
                .iter()
                .any(|m| m.from() == from && m.to() == landings[i])
        })
        .collect();
    let i = nz.rng.pick(&stops)?;
    let stop = landings[i];
    let released = match cx.mode {
        Mode::Events => Kind::Release(square(cx.n(stop))),
        Mode::Snapshots => cx.moved_reading(from, stop),
    };
    if cx.explained(&released) {
        return None;
    }
    let ending = nz.ending(K::CaptureIncomplete, |_| true)?;
    plan.tags.push((K::CaptureIncomplete, ending));
    let mut steps = Vec::new();
    if cx.mode == Mode::Events {
        steps.push(Step::quiet(Kind::Touch(square(cx.n(from)))));
        steps.push(Step::quiet(Kind::Lift(square(cx.n(from)))));
        for l in &landings[..i] {
            steps.push(Step::quiet(Kind::Place(square(cx.n(*l)))));
        }
    }
    steps.push(flag(released, K::CaptureIncomplete, 0));
    let pressed = maybe_press(cx, nz, plan);
    if let Some((p, _)) = &pressed {
        steps.push(p.clone());
    }
    if ending != Ending::Finished {
        steps.extend(back_to(0, ending, pieces(&cx.pos), nz, plan));
    }
    // The press ruled on before the move (which may end the game).
    if let Some((_, r)) = pressed {
        steps.push(r);
    }
    if ending == Ending::Finished {
        // Taken up again where it stopped and released at the end: the capture is
        // finished (RU 1.5.5), then its pieces come off.
        steps.push(Step::quiet(Kind::Lift(square(cx.n(stop)))));
        for l in &landings[i + 1..] {
            steps.push(Step::quiet(Kind::Place(square(cx.n(*l)))));
        }
        let path: Vec<u32> = mv.path().map(|s| cx.n(s)).collect();
        steps.push(Step::send(
            Kind::Release(square(cx.n(mv.to()))),
            Expect::Move(path),
        ));
        steps.extend(removal_steps(cx.v, mv, cx.mode, Some(&mut nz.rng)));
    } else {
        steps.extend(cx.move_and_removal(nz, plan));
    }
    steps.extend(cx.press(cx.mover));
    Some(steps)
}

/// The player who has just moved presses the clock again (timed, with rulings; RU
/// 1.4.6): ruled at once, either way.
fn press_without_move(cx: &Cx<'_, '_>, nz: &mut Noiser, plan: &mut MovePlan) -> Option<Vec<Step>> {
    if !(cx.ply.timed && nz.rulings) {
        return None;
    }
    let ending = nz.ending(K::ClockPressWithoutMove, |_| true)?;
    plan.tags.push((K::ClockPressWithoutMove, ending));
    let mut steps = vec![
        flag(press(!cx.mover), K::ClockPressWithoutMove, 0),
        rule(0, ending),
    ];
    steps.extend(cx.move_and_removal(nz, plan));
    steps.extend(cx.press(cx.mover));
    Some(steps)
}

/// The capturer presses before its captured pieces are off (events, timed, with rulings;
/// RU 1.5.13): ruled at once, or after the removal and the real press.
fn press_before_removal(
    cx: &Cx<'_, '_>,
    nz: &mut Noiser,
    plan: &mut MovePlan,
) -> Option<Vec<Step>> {
    let mv = cx.ply.mv;
    if !(cx.mode == Mode::Events
        && cx.ply.timed
        && nz.rulings
        && mv.is_capture()
        && cx.ply.left >= 1)
    {
        return None;
    }
    let ending = nz.ending(K::ClockPressBeforeRemoval, |_| true)?;
    plan.tags.push((K::ClockPressBeforeRemoval, ending));
    let mut steps = cx_move_only(cx, nz, plan);
    steps.push(flag(press(cx.mover), K::ClockPressBeforeRemoval, 0));
    let now = nz.rng.chance(500);
    if now {
        steps.push(rule(0, ending));
    }
    steps.extend(removal_steps(cx.v, mv, cx.mode, Some(&mut nz.rng)));
    steps.extend(cx.press(cx.mover));
    if !now {
        steps.push(rule(0, ending));
    }
    Some(steps)
}

/// How the irregularities of one kind went.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Counts {
    /// Made by the noise.
    pub injected: u64,
    /// Flagged by the judge with a rule.
    pub flagged: u64,
    /// Brought to an end, by ending.
    pub ended: BTreeMap<Ending, u64>,
}

/// How the irregularities the noise made went, by kind.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Tally {
    /// By kind (`IrregularityKind` as i32).
    pub kinds: BTreeMap<i32, Counts>,
}

impl Tally {
    /// The counts of `kind`.
    pub fn of(&mut self, kind: K) -> &mut Counts {
        self.kinds.entry(kind as i32).or_default()
    }

    /// Adds another game's.
    pub fn add(&mut self, other: &Tally) {
        for (k, c) in &other.kinds {
            let mine = self.kinds.entry(*k).or_default();
            mine.injected += c.injected;
            mine.flagged += c.flagged;
            for (e, n) in &c.ended {
                *mine.ended.entry(*e).or_default() += n;
            }
        }
    }

    /// Injected, flagged and brought to an end, over every kind.
    pub fn totals(&self) -> (u64, u64, u64) {
        self.kinds.values().fold((0, 0, 0), |(i, f, e), c| {
            (
                i + c.injected,
                f + c.flagged,
                e + c.ended.values().sum::<u64>(),
            )
        })
    }

    /// The summary line: each kind a board can cause with its counts and endings, or why
    /// it is not made; then the kinds no board causes.
    pub fn line(&self, mode: Mode, rulings: bool) -> String {
        let mut parts = Vec::new();
        for kind in BOARD_KINDS {
            let name = kind_name(kind);
            if let Some(why) = not_made(kind, mode, rulings) {
                parts.push(format!("{name} not made ({why})"));
                continue;
            }
            let c = self.kinds.get(&(kind as i32)).cloned().unwrap_or_default();
            let mut text = format!("{name} {} injected, {} flagged", c.injected, c.flagged);
            for e in endings(kind, mode, rulings) {
                text.push_str(&format!(
                    ", {} {}",
                    c.ended.get(&e).copied().unwrap_or(0),
                    e.name()
                ));
            }
            parts.push(text);
        }
        let never: Vec<&str> = NEVER_SENT.iter().map(|&k| kind_name(k)).collect();
        parts.push(format!(
            "{} never made (the judge never flags them)",
            never.join(", ")
        ));
        format!("irregularities: {}", parts.join("; "))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use draughts_arbiter::notation::parse_fen;
    use draughts_arbiter::rules::Game;

    fn plans(fen: &str, v: Variant, text: &str, mode: Mode, seeds: u64) -> Vec<MovePlan> {
        let pos = parse_fen(fen, v).expect("fen");
        let game = Game::new(pos, draughts_arbiter::rules::RuleEdition::Classic);
        let legal = game.legal_moves();
        let mv = draughts_arbiter::notation::parse_move(text, &pos).expect("move");
        let after = pos.play(&mv).expect("legal");
        let next = after.legal_moves().first().copied();
        (0..seeds)
            .filter_map(|seed| {
                let mut nz = Noiser::new(Rng::new(seed), true, mode);
                plan(
                    &Ply {
                        before: &pos,
                        mv: &mv,
                        legal: &legal,
                        timed: true,
                        next: next.as_ref(),
                        left: 5,
                    },
                    mode,
                    &mut nz,
                )
            })
            .collect()
    }

    fn seen(plans: &[MovePlan]) -> BTreeMap<(i32, Ending), usize> {
        let mut out = BTreeMap::new();
        for p in plans {
            for (k, e) in &p.tags {
                *out.entry((*k as i32, *e)).or_default() += 1;
            }
        }
        out
    }

    #[test]
    fn a_capture_gets_every_kind_and_every_ending_over_seeds() {
        // White's c3 takes d4 and f6 (c3:e5:g7), e3 could take d4 instead, other pieces
        // on both sides.
        let fen = "W:WC3,E3,A1,E1,G1,H2:BD4,F6,A7,B8,H8";
        let all = plans(fen, Variant::Russian, "c3:e5:g7", Mode::Events, 3000);
        let seen = seen(&all);
        for kind in BOARD_KINDS {
            if kind == K::MoveOutOfTurn {
                continue; // a reply needed: below
            }
            for e in endings(kind, Mode::Events, true) {
                // A capture never stands but in a wrong removal (the capture was made).
                if e == Ending::Stands && matches!(kind, K::IllegalMove | K::TouchMove) {
                    continue;
                }
                assert!(
                    seen.contains_key(&(kind as i32, e)),
                    "{} {} never planned: {seen:?}",
                    kind_name(kind),
                    e.name()
                );
            }
        }
    }

    #[test]
    fn a_quiet_move_stands_where_the_record_goes_on() {
        let all = plans(
            "W:WC3,E3,G3:BB6,D6,F6",
            Variant::Russian,
            "c3-d4",
            Mode::Events,
            3000,
        );
        let seen = seen(&all);
        for kind in [K::MoveOutOfTurn, K::IllegalMove, K::TouchMove] {
            assert!(
                seen.contains_key(&(kind as i32, Ending::Stands)),
                "{} never stands: {seen:?}",
                kind_name(kind)
            );
        }
        // What stands is one ply (two for the reply made before the press), not listed
        // on the judge's score sheet.
        for p in all.iter().filter(|p| !p.stood.is_empty()) {
            let (k, _) = p.tags[0];
            if k == K::MoveOutOfTurn {
                assert_eq!((p.plies, p.stood.as_slice()), (2, &[1][..]));
            } else {
                assert_eq!((p.plies, p.stood.as_slice()), (1, &[0][..]));
            }
        }
        // Every flag is named, and every irregularity a plan names is flagged or is a
        // wrong copy (made on the way back, when there is a piece to carry).
        for p in &all {
            for (i, (k, _)) in p.tags.iter().enumerate() {
                let flagged = p.steps.iter().any(
                    |s| matches!(s.expect, Expect::Flag(f, t) if f == *k && usize::from(t) == i),
                );
                assert!(flagged || *k == K::WrongCopy, "{p:?}");
            }
        }
    }

    #[test]
    fn without_rulings_only_the_board_ends_them() {
        let pos = parse_fen("W:WC3,E3,A1,E1,G1,H2:BD4,F6,A7,B8,H8", Variant::Russian).expect("fen");
        let legal = pos.legal_moves();
        let mv = draughts_arbiter::notation::parse_move("c3:e5:g7", &pos).expect("move");
        let mut made = 0;
        for seed in 0..500 {
            let mut nz = Noiser::new(Rng::new(seed), false, Mode::Events);
            let ply = Ply {
                before: &pos,
                mv: &mv,
                legal: &legal,
                timed: true,
                next: None,
                left: 5,
            };
            if let Some(p) = plan(&ply, Mode::Events, &mut nz) {
                made += 1;
                assert!(
                    p.steps
                        .iter()
                        .all(|s| !matches!(s.act, Act::Rule { .. } | Act::Restore { .. })),
                    "{p:?}"
                );
                for (k, e) in &p.tags {
                    assert!(!matches!(
                        k,
                        K::ClockPressWithoutMove | K::ClockPressBeforeRemoval
                    ));
                    assert!(matches!(e, Ending::Cleared | Ending::Finished));
                }
            }
        }
        assert!(made > 50, "{made} plans with an irregularity");
    }

    #[test]
    fn the_same_seed_makes_the_same_plan() {
        let pos = Position::start(Variant::International);
        let legal = pos.legal_moves();
        let next = pos.play(&legal[0]).expect("legal").legal_moves();
        for seed in 0..300 {
            let ply = Ply {
                before: &pos,
                mv: &legal[0],
                legal: &legal,
                timed: true,
                next: next.first(),
                left: 9,
            };
            let mut a = Noiser::new(Rng::new(seed), true, Mode::Events);
            let mut b = Noiser::new(Rng::new(seed), true, Mode::Events);
            let pa = super::super::compose::move_plan(&ply, Mode::Events, Some(&mut a));
            let pb = super::super::compose::move_plan(&ply, Mode::Events, Some(&mut b));
            assert_eq!(pa.steps, pb.steps);
            assert_eq!(pa.tags, pb.tags);
        }
    }

    #[test]
    fn the_summary_names_every_kind() {
        let mut t = Tally::default();
        t.of(K::IllegalMove).injected = 2;
        t.of(K::IllegalMove).flagged = 2;
        t.of(K::IllegalMove).ended.insert(Ending::Stands, 2);
        let line = t.line(Mode::Snapshots, true);
        assert!(
            line.contains("ILLEGAL_MOVE 2 injected, 2 flagged, 0 corrected, 2 stands, 0 cleared"),
            "{line}"
        );
        assert!(line.contains("TOUCH_MOVE not made (a scanning board senses no touch)"));
        assert!(
            line.contains("ADJUST_OUT_OF_TURN, TOUCHED_IMMOVABLE_PIECE, BOARD_MISMATCH never made")
        );
        let line = t.line(Mode::Events, false);
        assert!(line.contains("CLOCK_PRESS_WITHOUT_MOVE not made (only a ruling clears it"));
        assert!(line.contains("MOVE_OUT_OF_TURN 0 injected, 0 flagged, 0 cleared"));
    }
}
