//! Electronic boards: touches, lifts, placements and releases, or whole-board snapshots,
//! turned into moves, touch-move obligations and irregularities (RU 1.4.6–1.4.9,
//! 1.5.10–1.5.13; FMJD Annex 1, 4.4–4.5).

use super::command::{Actor, BoardHealth, BoardInput, Occupancy, Outcome};
use super::error::GameError;
use super::event::{EndReason, EventKind, IrregularityKind, MoveSource};
use super::session::Hand;
use super::tx::{Tx, check_history_rules, cite, not_over};
use crate::notation::movetext::Refusal;
use crate::notation::square::{square_number, square_numbers, write_square};
use crate::rules::variant::{CaptureChoice, Removal};
use crate::rules::{Color, Move, Position, Square};

pub(super) fn board_input(tx: &mut Tx, input: BoardInput) -> Result<(), GameError> {
    // A flood is recorded whatever the game's state: it is about the board, not a move.
    if let BoardInput::Flooded { per_s, burst } = input {
        return flooded(tx, per_s, burst);
    }
    if let BoardInput::Health { health, silent_ms } = input {
        return board_health(tx, health, silent_ms);
    }
    // Towers: a board senses one piece per square, not the stack on it, so it cannot show
    // which pieces a capture takes or frees; its input is refused, moves come as text.
    if tx.s.variant().rules().removal == Removal::UnderCapturer {
        return Err(GameError::not_allowed(
            "electronic-board input is not supported for towers: a board senses single \
             pieces, not stacks; submit moves with SubmitMove",
            "TOW",
        ));
    }
    not_over(&tx.s)?;
    if !tx.s.started {
        return Err(GameError::NotStarted);
    }
    match input {
        BoardInput::Touch(n) => touch(tx, n),
        BoardInput::Lift(n) => lift(tx, n),
        BoardInput::Place(n) => {
            let sq = square(tx, "place.square", n)?;
            if tx.s.hand.is_none() {
                return Err(out_of_step(tx, "nothing is held".into()));
            }
            if tx.s.physical_piece(sq).is_some() {
                return Err(out_of_step(tx, format!("{} is occupied", name(tx, sq))));
            }
            tx.emit(EventKind::PiecePlaced { square: n }, None)
        }
        BoardInput::Release(n) => release(tx, n),
        BoardInput::AdjustAnnounced(side) => {
            if tx.s.position().turn() != side || tx.s.awaiting_press.is_some() {
                return Err(GameError::not_allowed(
                    "pieces may be adjusted only on one's own turn",
                    "RU 1.4.9",
                ));
            }
            tx.emit(EventKind::AdjustAnnounced { side }, Some("RU 1.4.9"))
        }
        BoardInput::ClockPress(side) => clock_press(tx, side),
        BoardInput::Snapshot(occ) => snapshot(tx, &occ),
        BoardInput::Flooded { per_s, burst } => flooded(tx, per_s, burst),
        BoardInput::Health { health, silent_ms } => board_health(tx, health, silent_ms),
    }
}

/// Square `n` of this board; a number off it is refused naming `at`, the field of the
/// board's message that carried it (`touch.square`, `snapshot.white`…).
fn square(tx: &Tx, at: &str, n: u32) -> Result<Square, GameError> {
    tx.s.square(n)
        .map_err(|e| GameError::Invalid(format!("{at}: {e}")))
}

/// The side to move, when nobody is waiting to press.
fn mover(tx: &Tx) -> Option<Color> {
    tx.s.awaiting_press
        .is_none()
        .then(|| tx.s.position().turn())
}

fn touch(tx: &mut Tx, n: u32) -> Result<(), GameError> {
    let sq = square(tx, "touch.square", n)?;
    if tx.s.catching_up() {
        // The board is being put back: a touch binds nothing.
        return tx.emit(
            EventKind::PieceTouched {
                square: n,
                binding: false,
                immovable: false,
            },
            None,
        );
    }
    let own =
        tx.s.physical_piece(sq)
            .is_some_and(|(c, _)| Some(c) == mover(tx));
    let adjusting = tx.s.touch.adjusting.is_some();
    let movable = tx.s.has_move_from(sq);
    let binding = own && !adjusting && tx.s.touch.bound.is_none() && movable;
    // Said in every variant; only the English touch rule punishes it.
    let immovable = own && !adjusting && !movable;
    let penalised = immovable && tx.s.settings.touch_penalty();
    // RU 1.4.7: touching a piece with no legal move has no consequence.
    let rule = if own && !adjusting {
        Some("RU 1.4.7")
    } else {
        None
    };
    tx.emit(
        EventKind::PieceTouched {
            square: n,
            binding,
            immovable,
        },
        rule,
    )?;
    if penalised {
        // English practice (seed 004): warned the first time, loses the second.
        let side = tx.s.position().turn();
        if tx.s.touch.immovable[side.index()] >= 2 {
            return tx.end(
                Outcome::win_for(!side),
                EndReason::TouchPenalty,
                Some("EN touch rule"),
                None,
            );
        }
        let name = write_square(sq, tx.s.variant());
        tx.emit(
            EventKind::Warning {
                side,
                reason: format!("touched the piece on {name}, which cannot move"),
            },
            Some("EN touch rule"),
        )?;
    }
    Ok(())
}

fn lift(tx: &mut Tx, n: u32) -> Result<(), GameError> {
    let sq = square(tx, "lift.square", n)?;
    let Some((color, _)) = tx.s.physical_piece(sq) else {
        return Err(out_of_step(tx, format!("no piece on {}", name(tx, sq))));
    };
    let removing = !tx.s.pending_removal.is_empty();
    if removing {
        let capturer = !tx.s.position().turn();
        let expected = tx.s.pending_removal[0];
        let last = *tx.s.pending_removal.last().unwrap_or(&expected);
        let either_end = tx.s.variant().rules().capture_choice == CaptureChoice::MaximumPieces;
        let in_order = sq == expected || (either_end && sq == last);
        let listed = tx.s.pending_removal.contains(&sq);
        let behind = tx.s.catching_up();
        tx.emit(EventKind::PieceLifted { square: n }, None)?;
        if (!listed || !in_order) && !behind {
            let at = name(tx, sq);
            let detail = if listed {
                format!("captured piece on {at} removed out of capture order")
            } else {
                format!("piece on {at} removed but not captured")
            };
            let rule = cite(&tx.s, "RU 1.5.12", "FMJD 4.4", "EN capture");
            // The piece lifted, and the one that should have come off.
            let mut squares = vec![n];
            let due = square_number(expected, tx.s.variant());
            if due != n {
                squares.push(due);
            }
            tx.emit(
                EventKind::Irregularity {
                    side: capturer,
                    kind: IrregularityKind::WrongRemoval,
                    detail,
                    retake_with: None,
                    squares,
                },
                Some(rule),
            )?;
        }
        if tx.s.pending_removal.is_empty() {
            let rule = cite(&tx.s, "RU 1.5.13", "FMJD 4.5", "EN capture");
            tx.emit(EventKind::RemovalComplete { side: capturer }, Some(rule))?;
        }
        return settle(tx);
    }
    if tx.s.catching_up() {
        // A step back to the official position: any piece may come off (one already in
        // hand is then off the board, as a captured piece taken away is).
        tx.emit(EventKind::PieceLifted { square: n }, None)?;
        return settle(tx);
    }
    if tx.s.hand.is_some() {
        return Err(out_of_step(tx, "a piece is already in hand".into()));
    }
    // Lifting one's own piece touches it (RU 1.4.7) unless adjusting.
    let own = Some(color) == mover(tx);
    if own && tx.s.touch.adjusting.is_none() && tx.s.touch.bound.is_none() && tx.s.has_move_from(sq)
    {
        tx.emit(
            EventKind::PieceTouched {
                square: n,
                binding: true,
                immovable: false,
            },
            Some("RU 1.4.7"),
        )?;
    }
    tx.emit(EventKind::PieceLifted { square: n }, None)
}

/// The legal moves from `from` to `to`. A quiet move ignores where the piece was put
/// down on the way (RU 1.4.8); when several captures end there, the placements must show
/// the path (RU 1.5.10: the landing squares in turn).
fn matching(tx: &Tx, from: Square, placements: &[Square], to: Square) -> Vec<Move> {
    let mut found: Vec<Move> = Vec::new();
    for m in tx.s.game.position_moves() {
        if m.from() == from && m.to() == to {
            found.push(m);
        }
    }
    if found.len() <= 1 {
        return found;
    }
    let mut shown: Vec<Move> = Vec::new();
    for &m in tx.s.game.position_moves_all_paths() {
        if m.from() != from || m.to() != to {
            continue;
        }
        let landings: Vec<Square> = m.landings().collect();
        let mut it = landings.iter();
        let fits = placements
            .iter()
            .filter(|&&p| p != to)
            .all(|p| it.any(|l| l == p));
        if fits && !shown.iter().any(|f| f.same_move(&m)) {
            shown.push(m);
        }
    }
    if shown.is_empty() { found } else { shown }
}

fn release(tx: &mut Tx, n: u32) -> Result<(), GameError> {
    let to = square(tx, "release.square", n)?;
    let Some(hand) = tx.s.hand.clone() else {
        return Err(out_of_step(tx, "nothing is held".into()));
    };
    if tx.s.physical_piece(to).is_some() {
        return Err(out_of_step(tx, format!("{} is occupied", name(tx, to))));
    }
    if tx.s.catching_up() {
        return release_catching_up(tx, &hand, to);
    }
    let from = name(tx, hand.from);
    let v = tx.s.variant();
    let put_back = to == hand.from && hand.placements.iter().all(|&p| p == to);
    if put_back {
        // No move: put back where it was (the touch may still bind, RU 1.4.7).
        return tx.emit(EventKind::PieceReleased { square: n }, None);
    }
    let from_n = square_number(hand.from, v);
    let Some(side) = mover(tx).filter(|&m| m == hand.color) else {
        tx.emit(EventKind::PieceReleased { square: n }, None)?;
        return flag_out_of_turn(tx, hand.color, hand.from, to);
    };
    let found = matching(tx, hand.from, &hand.placements, to);
    let bound = tx.s.touch.bound;
    match found.as_slice() {
        [mv] if bound.is_none_or(|b| b == hand.from) && check_history_rules(&tx.s, mv).is_ok() => {
            // RU 1.4.6 / 1.5.11: the move is made when the hand leaves the piece.
            tx.play(mv, MoveSource::Board, false)
        }
        [_] => {
            let b = bound.map(|b| square_number(b, v)).unwrap_or(0);
            let touched = bound.map(|b| name(tx, b)).unwrap_or_default();
            tx.emit(EventKind::PieceReleased { square: n }, None)?;
            tx.emit(
                EventKind::Irregularity {
                    side,
                    kind: IrregularityKind::TouchMove,
                    detail: format!("moved {from}; the touched piece on {touched} must be moved"),
                    retake_with: Some(b),
                    squares: vec![from_n, n, b],
                },
                Some("RU 1.4.7"),
            )
        }
        [] | [_, _, ..] => {
            tx.emit(EventKind::PieceReleased { square: n }, None)?;
            flag_illegal(tx, side, hand.from, to, found.len() > 1)
        }
    }
}

/// Flags a piece of `color` moved from `from` to `to` while `color` is not on move
/// (RU 1.4.1).
fn flag_out_of_turn(tx: &mut Tx, color: Color, from: Square, to: Square) -> Result<(), GameError> {
    let v = tx.s.variant();
    tx.emit(
        EventKind::Irregularity {
            side: color,
            kind: IrregularityKind::OutOfTurn,
            detail: format!(
                "{color} piece moved from {} to {} out of turn",
                name(tx, from),
                name(tx, to)
            ),
            retake_with: None,
            squares: vec![square_number(from, v), square_number(to, v)],
        },
        Some("RU 1.4.1"),
    )
}

/// Flags the move from `from` to `to` that no legal move matches (`ambiguous`: several
/// captures end there and the placements did not show which) as an illegal move, or a
/// capture stopped early; the piece is retaken when it can move.
fn flag_illegal(
    tx: &mut Tx,
    side: Color,
    from: Square,
    to: Square,
    ambiguous: bool,
) -> Result<(), GameError> {
    let v = tx.s.variant();
    let (detail, rule) = if ambiguous {
        (
            format!(
                "{} to {}: the capture path was not shown square by square",
                name(tx, from),
                name(tx, to)
            ),
            cite(&tx.s, "RU 1.5.10", "FMJD 4.4", "EN capture"),
        )
    } else {
        describe_illegal(tx, from, to)
    };
    let kind = if !ambiguous && stopped_early(tx, from, to) {
        IrregularityKind::CaptureIncomplete
    } else {
        IrregularityKind::IllegalMove
    };
    let from_n = square_number(from, v);
    let retake = tx.s.has_move_from(from).then_some(from_n);
    tx.emit(
        EventKind::Irregularity {
            side,
            kind,
            detail,
            retake_with: retake,
            squares: vec![from_n, square_number(to, v)],
        },
        Some(rule),
    )
}

/// A release while the board is put back or catches up: a step, not a move. A capture
/// stopped early and taken up again from where it stopped is finished here (RU 1.5.5):
/// the capture is played and its irregularity cleared. While the board catches up with a
/// position changed elsewhere, a piece put where that position has none of its colour is
/// a wrong copy, flagged at once.
fn release_catching_up(tx: &mut Tx, hand: &Hand, to: Square) -> Result<(), GameError> {
    let n = square_number(to, tx.s.variant());
    if let Some(seq) = resumed_capture(tx, hand) {
        let found: Vec<Move> = matching(tx, hand.from, &hand.placements, to)
            .into_iter()
            .filter(Move::is_capture)
            .collect();
        if let [mv] = found.as_slice()
            && check_history_rules(&tx.s, mv).is_ok()
        {
            let fen = crate::notation::write_fen(tx.s.position());
            tx.emit(
                EventKind::IrregularityResolved {
                    ruling: None,
                    irregularity_seq: Some(seq),
                    fen,
                    reason: Some("the capture was finished on the board".into()),
                },
                cite(&tx.s, "RU 1.5.5", "FMJD 4.5", "EN capture").into(),
            )?;
            return tx.play(mv, MoveSource::Board, false);
        }
    }
    tx.emit(EventKind::PieceReleased { square: n }, None)?;
    let official = *tx.s.position();
    if tx.s.behind && !tx.s.board_irregular() && official.pieces(hand.color) & to.bit() == 0 {
        let at = name(tx, to);
        let wanted = match official.piece_at(to) {
            Some((c, _)) => format!("a {c} piece"),
            None => "no piece".to_string(),
        };
        tx.emit(
            EventKind::Irregularity {
                side: hand.color,
                kind: IrregularityKind::WrongCopy,
                detail: format!(
                    "{} piece put on {at} while the board caught up: the official position has {wanted} there",
                    hand.color
                ),
                retake_with: None,
                squares: vec![n],
            },
            Some(cite(&tx.s, "RU 1.4.6", "FMJD 5.4", "EN move")),
        )?;
    }
    settle(tx)
}

/// The seq of the capture stopped early that `hand` takes up again: the only irregularity
/// on the board is that capture, and the hand was lifted where it stopped (see
/// `Session::resumed_capture`).
fn resumed_capture(tx: &Tx, hand: &Hand) -> Option<u64> {
    if tx.s.behind {
        return None;
    }
    let mut on_board = tx.s.irregularities.iter().filter(|i| i.kind.on_board());
    let (out, None) = (on_board.next()?, on_board.next()) else {
        return None;
    };
    let stop = *hand.placements.first()?;
    (out.kind == IrregularityKind::CaptureIncomplete
        && tx.s.resumed_capture(stop, hand.color) == Some(hand.from))
    .then_some(out.seq)
}

/// After a step while the board is put back or catches up: once it shows the official
/// position, every irregularity on the board is cleared (the board put back) and a board
/// that caught up is in step again.
fn settle(tx: &mut Tx) -> Result<(), GameError> {
    if !tx.s.catching_up() || !tx.s.occupancy_matches() {
        return Ok(());
    }
    let fen = crate::notation::write_fen(tx.s.position());
    let cleared: Vec<u64> =
        tx.s.irregularities
            .iter()
            .filter(|i| i.kind.on_board())
            .map(|i| i.seq)
            .collect();
    for seq in cleared {
        tx.emit(
            EventKind::IrregularityResolved {
                ruling: None,
                irregularity_seq: Some(seq),
                fen: fen.clone(),
                reason: None,
            },
            None,
        )?;
    }
    if tx.s.behind {
        tx.emit(EventKind::BoardInStep, None)?;
    }
    Ok(())
}

/// A square in the game's own notation (algebraic for Russian, numbers for
/// International…).
fn name(tx: &Tx, sq: Square) -> String {
    write_square(sq, tx.s.variant())
}

/// A board message the judge's picture of the physical board cannot take (FAILED_PRECONDITION):
/// what is wrong, and how to get back in step.
fn out_of_step(tx: &Tx, what: String) -> GameError {
    let how = if tx.s.catching_up() {
        "; the board is catching up with the official position (Game.board_view: to_clear, to_fill)"
    } else {
        "; the judge's picture of the board is in Game.board_view: send a snapshot, or lift and put back to match it"
    };
    GameError::not_allowed(format!("board out of step: {what}{how}"), "RU 1.4.6")
}

/// What is wrong with a move on the board that no legal move matches, and the rule:
/// the same table as a written move's ([`Refusal`]), so the same move cites the same rule
/// whichever way it came. The move was made as a capture unless the piece went along a
/// line of free squares, as a quiet move goes (where it was put down on the way does not
/// count: a held piece may still go elsewhere, RU 1.4.8).
fn describe_illegal(tx: &Tx, from: Square, to: Square) -> (String, &'static str) {
    let v = tx.s.variant();
    let pos = tx.s.position();
    let (f, t) = (name(tx, from), name(tx, to));
    let legal = tx.s.game.position_moves_all_paths();
    let capture = !quiet_shaped(pos, from, to);
    let refusal = Refusal::of(pos, legal, capture);
    (
        format!("{f} to {t}: {}", refusal.reason(pos, legal)),
        refusal.rule(v),
    )
}

/// Whether a piece that went from `from` to `to`, no legal move ending there, stopped a
/// capture early: it went as a capture goes (not along free squares, as a quiet move
/// does), and `to` is a landing square short of the end of a legal capture from `from`
/// (RU 1.5.5, FMJD 4.5; the rule cited is [`describe_illegal`]'s, the variant's own). A
/// whole capture of too few pieces, or one that is no capture of the position, is an
/// illegal move instead.
fn stopped_early(tx: &Tx, from: Square, to: Square) -> bool {
    if quiet_shaped(tx.s.position(), from, to) {
        return false;
    }
    tx.s.game.position_moves_all_paths().iter().any(|m| {
        m.is_capture() && m.from() == from && {
            let landings: Vec<Square> = m.landings().collect();
            landings[..landings.len().saturating_sub(1)].contains(&to)
        }
    })
}

/// Whether `from` to `to` runs along one of the variant's move directions over free
/// squares only, as a quiet move does.
fn quiet_shaped(pos: &Position, from: Square, to: Square) -> bool {
    let v = pos.variant();
    let (g, rules) = (v.geometry(), v.rules());
    let occupied = pos.occupied();
    rules.king_dirs.iter().chain(rules.man_moves).any(|&d| {
        let mut next = g.neighbour(from, d);
        while let Some(sq) = next {
            if sq == to {
                return true;
            }
            if occupied & sq.bit() != 0 {
                return false;
            }
            next = g.neighbour(sq, d);
        }
        false
    })
}

fn clock_press(tx: &mut Tx, side: Color) -> Result<(), GameError> {
    if tx.s.clock.is_none() {
        return Err(GameError::not_allowed("the game is untimed", "RU 1.8"));
    }
    let (kind, detail, rule) = if tx.s.awaiting_press != Some(side) {
        (
            IrregularityKind::PressWithoutMove,
            format!("{side} pressed the clock without a move"),
            "RU 1.4.6",
        )
    } else if !tx.s.pending_removal.is_empty() {
        (
            IrregularityKind::PressBeforeRemoval,
            "clock pressed before the captured pieces were removed".to_string(),
            cite(&tx.s, "RU 1.5.13", "FMJD 4.5", "EN capture"),
        )
    } else {
        return tx.press(side, false);
    };
    // The press does not switch the clocks: the judge runs them. The squares: the
    // captured pieces still on the board.
    let v = tx.s.variant();
    let squares =
        tx.s.pending_removal
            .iter()
            .map(|&sq| square_number(sq, v))
            .collect();
    tx.emit(
        EventKind::Irregularity {
            side,
            kind,
            detail,
            retake_with: None,
            squares,
        },
        Some(rule),
    )
}

/// A whole-board reading: a move is recognised only when the reading equals the result
/// of exactly one legal move; anything else (pieces in the air, captured pieces not yet
/// lifted) is an intermediate state and waits for the next reading, never guessed.
fn snapshot(tx: &mut Tx, occ: &Occupancy) -> Result<(), GameError> {
    // Each list: squares of this board, each named once.
    let read = |tx: &Tx, list: &[u32], name: &str| -> Result<u64, GameError> {
        let mut b = 0u64;
        for &n in list {
            let bit = square(tx, &format!("snapshot.{name}"), n)?.bit();
            if b & bit != 0 {
                return Err(GameError::Invalid(format!(
                    "snapshot.{name}: square {n} listed twice"
                )));
            }
            b |= bit;
        }
        Ok(b)
    };
    let bits = [
        read(tx, &occ.white, "white")?,
        read(tx, &occ.black, "black")?,
    ];
    if bits[0] & bits[1] != 0 {
        return Err(GameError::Invalid(
            "snapshot: a square holds both colours".into(),
        ));
    }
    if bits[0] | bits[1] == 0 {
        return Err(GameError::Invalid(
            "snapshot: no piece on the board; a reading shows at least one".into(),
        ));
    }
    let kings = match &occ.kings {
        Some(list) => {
            let k = read(tx, list, "kings")?;
            if k & !(bits[0] | bits[1]) != 0 {
                return Err(GameError::Invalid(
                    "snapshot.kings: a king on a square neither white nor black".into(),
                ));
            }
            Some(k)
        }
        None => None,
    };
    let pos = *tx.s.position();
    let same = |p: &crate::rules::Position| {
        p.pieces(Color::White) == bits[0]
            && p.pieces(Color::Black) == bits[1]
            && kings.is_none_or(|k| k == p.kings())
    };
    // A move the reading shows (none while the board is put back or catches up). While a
    // made move waits for its press nobody is on move: a piece moved then is moved out
    // of turn, as a release then is (RU 1.4.1).
    let mut flagged = None;
    if !same(&pos) && !tx.s.catching_up() {
        let hits: Vec<Move> = match mover(tx) {
            Some(_) => {
                tx.s.game
                    .position_moves()
                    .into_iter()
                    .filter(|m| pos.play(m).is_ok_and(|after| same(&after)))
                    .collect()
            }
            None => Vec::new(),
        };
        if let [mv] = hits.as_slice() {
            tx.play(mv, MoveSource::Snapshot, false)?;
        } else {
            flagged = shown_move(tx, bits);
        }
    }
    // The reading is recorded with what differs from the official position now (nothing
    // after a recognised move); anything else is an intermediate state or a board out
    // of step, never guessed at.
    let official = *tx.s.position();
    let v = tx.s.variant();
    let numbers = |bb: u64| square_numbers(bb, v);
    let (ow, ob) = (official.pieces(Color::White), official.pieces(Color::Black));
    let (bw, bb) = (bits[0], bits[1]);
    let on_board = bw | bb;
    let in_official = ow | ob;
    let event = EventKind::BoardSnapshot {
        white: numbers(bw),
        black: numbers(bb),
        kings: kings.map(numbers),
        missing: numbers(in_official & !on_board),
        extra: numbers(on_board & !in_official),
        wrong_colour: numbers((ow & bb) | (ob & bw)),
        wrong_kind: kings.map_or(Vec::new(), |k| {
            numbers((k ^ official.kings()) & on_board & in_official)
        }),
    };
    tx.emit(event, None)?;
    if let Some((side, from, to)) = flagged {
        // A reading that shows a piece gone from one square to another that no legal
        // move explains: an irregularity, as on a board that senses lifts.
        if Some(side) == mover(tx) {
            return flag_illegal(tx, side, from, to, false);
        }
        return flag_out_of_turn(tx, side, from, to);
    }
    settle(tx)
}

/// A reading (`bits`: white, black) that shows one piece gone from a square and one of
/// its colour on a square that was empty, every other difference being pieces of the
/// other colour missing, and that is no legal move in progress of the side on move (a
/// capture whose captured pieces are still being taken off: its piece on the capture's
/// last square, only pieces it captures missing): the colour, from and to. Anything
/// else (pieces in the air, several moved) is an intermediate state, never guessed at.
fn shown_move(tx: &Tx, bits: [u64; 2]) -> Option<(Color, Square, Square)> {
    let pos = tx.s.position();
    let v = tx.s.variant();
    let squares = |bb: u64| -> Vec<Square> {
        v.geometry()
            .order
            .iter()
            .copied()
            .filter(|s| bb & s.bit() != 0)
            .collect()
    };
    let official = [pos.pieces(Color::White), pos.pieces(Color::Black)];
    for side in [Color::White, Color::Black] {
        let (own, other) = (side.index(), (!side).index());
        let gone = official[own] & !bits[own];
        let new = bits[own] & !official[own];
        let (gone, new) = (squares(gone), squares(new));
        let ([from], [to]) = (gone.as_slice(), new.as_slice()) else {
            continue;
        };
        // The other colour: only pieces missing, none moved or added.
        if bits[other] & !official[other] != 0 || official[own] & bits[other] != 0 {
            continue;
        }
        let missing = official[other] & !bits[other];
        // Only the side on move has a move in progress; the other side's is out of turn.
        let on_move = Some(side) == mover(tx);
        let in_progress = on_move
            && tx.s.game.position_moves_all_paths().iter().any(|m| {
                m.from() == *from
                    && m.to() == *to
                    && missing & !m.captured().fold(0u64, |acc, s| acc | s.bit()) == 0
            });
        if in_progress {
            return None;
        }
        return Some((side, *from, *to));
    }
    None
}

/// A board's flood, for the arbiter (the refused messages never reached the judge).
fn flooded(tx: &mut Tx, per_s: u32, burst: u32) -> Result<(), GameError> {
    tx.emit(EventKind::BoardFlooded { per_s, burst }, None)
}

/// What the service sees of a board's stream, recorded when it changes the bound board's
/// state while the game can still be played: a board bound, silent while the clock runs,
/// talking again, gone. Another board's stream going silent or ending says nothing of the
/// board bound now, and a silence with the clocks stopped is no silence.
fn board_health(tx: &mut Tx, health: BoardHealth, silent_ms: u64) -> Result<(), GameError> {
    let Actor::Board(id) = tx.actor else {
        return Err(GameError::Internal(
            "a board's health reported by another actor".into(),
        ));
    };
    if tx.s.result.is_some() {
        return Ok(());
    }
    let current = tx.s.board.as_ref();
    if current.is_some_and(|b| b.board_id == *id && b.health == health) {
        return Ok(());
    }
    if health != BoardHealth::Active && current.is_none_or(|b| b.board_id != *id) {
        return Ok(());
    }
    let clock_runs =
        tx.s.clock
            .as_ref()
            .is_some_and(|c| matches!(c.phase(tx.now.mono_ms), crate::clock::Phase::Running(_)));
    if health == BoardHealth::NotResponding && !clock_runs {
        return Ok(());
    }
    tx.emit(
        EventKind::BoardHealthChanged {
            board_id: id.clone(),
            health,
            silent_ms,
        },
        None,
    )
}
