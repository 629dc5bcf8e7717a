//! The words for an event: the one place where the judge's events are put into
//! sentences, for every reader.
//!
//! Two registers of the same vocabulary (side, result, reason, irregularity, clock and
//! square words are written once, here):
//!
//! - [`line`]: what happened, as an operator's log reads it (`white played 1. c3-d4, 3.2 s
//!   spent; clocks white 4:57.0, black 5:00.0, black to move [RU 1.4.6]`): the CLI's event
//!   lines, the `description` of every event the API streams.
//! - [`comment`]: what the game's record says of it (`White offers a draw (RU 1.9.3)`), or
//!   nothing for what a record leaves out (moves are the record itself, board mechanics are
//!   not the game): the PDN writer's comments ([`super::pdn`]) and the live page's notes.
//!
//! Squares are named as the game writes its moves ([`crate::notation::square`]): `c3` in a
//! Russian game, `22` in an International one.

use std::fmt::Write as _;

use super::command::{Actor, BoardHealth, ClaimKind, OfferResponse, Outcome, Ruling};
use super::event::{
    EndReason, EventKind, FollowCause, GameEvent, IrregularityKind, MoveSource, OfferTiming,
    OutageMeasure,
};
use super::meta::GameMeta;
use super::note::{ClockReading, ClockRun, EventNote};
use crate::clock::ClockOp;
use crate::notation::clock_comment::hms;
use crate::notation::square::write_square;
use crate::rules::{Color, RuleEdition, Variant};

/// What the words of an event depend on besides the event: the game's variant (its
/// notation names the squares), what the judge knew right after the event (move number,
/// clocks, the claimant, a warning's count…) and the game's metadata (the names a
/// `GameCreated` line gives).
#[derive(Debug, Clone, Copy)]
pub struct Seen<'a> {
    /// The game's variant.
    pub variant: Variant,
    /// The event's note.
    pub note: &'a EventNote,
    /// The game's metadata.
    pub meta: &'a GameMeta,
}

// ---------------------------------------------------------------------------
// The vocabulary
// ---------------------------------------------------------------------------

/// `white`, `black` (the log's words).
#[must_use]
pub fn side_word(c: Color) -> &'static str {
    match c {
        Color::White => "white",
        Color::Black => "black",
    }
}

/// `White`, `Black` (the record's words).
#[must_use]
pub fn side_name(c: Color) -> &'static str {
    match c {
        Color::White => "White",
        Color::Black => "Black",
    }
}

/// A side the note may not know: `?` then.
fn maybe_side(c: Option<Color>) -> &'static str {
    c.map_or("?", side_word)
}

/// A time in milliseconds as a clock shows it: `1:05:03.2`, `4:57.0`, `-0:00.4`.
#[must_use]
pub fn clock_time(ms: i64) -> String {
    let sign = if ms < 0 { "-" } else { "" };
    let ms = ms.unsigned_abs();
    let tenths = (ms % 1000) / 100;
    let s = ms / 1000;
    let (h, m, s) = (s / 3600, (s / 60) % 60, s % 60);
    if h > 0 {
        format!("{sign}{h}:{m:02}:{s:02}.{tenths}")
    } else {
        format!("{sign}{m}:{s:02}.{tenths}")
    }
}

/// A duration as the log writes it: `3.2 s`, `1:30.0` (a move's time spent).
#[must_use]
pub fn log_duration(ms: i64) -> String {
    if ms.unsigned_abs() < 60_000 {
        format!("{:.1} s", ms as f64 / 1000.0)
    } else {
        clock_time(ms)
    }
}

/// A duration as the record writes it: `0:01:30` to the second, or `1500 ms` when it is
/// not whole seconds.
fn record_duration(ms: u64) -> String {
    if ms.is_multiple_of(1000) {
        hms(ms / 1000)
    } else {
        format!("{ms} ms")
    }
}

fn ms(v: u64) -> i64 {
    i64::try_from(v).unwrap_or(i64::MAX)
}

/// `; clocks white 4:57.0, black 5:00.0, black to move`, or nothing untimed.
fn clocks(c: Option<&ClockReading>) -> String {
    let Some(c) = c else {
        return String::new();
    };
    let state = match c.run {
        ClockRun::Running(side) => format!(", {} to move", side_word(side)),
        ClockRun::Paused(_) => ", paused".into(),
        ClockRun::Stopped => ", stopped".into(),
        ClockRun::NotStarted => ", not started".into(),
    };
    format!(
        "; clocks white {}, black {}{state}",
        clock_time(ms(c.white_ms)),
        clock_time(ms(c.black_ms))
    )
}

/// `text: reason`, or `text` when there is no reason.
fn with_reason(text: String, reason: &str) -> String {
    if reason.is_empty() {
        text
    } else {
        format!("{text}: {reason}")
    }
}

/// A square (its PDN number) as the variant writes its moves; the number itself when the
/// board has no such square.
fn square(n: u32, v: Variant) -> String {
    v.geometry()
        .from_number(n, v.rules().mirrored)
        .map_or_else(|| n.to_string(), |sq| write_square(sq, v))
}

/// Squares, comma-separated.
fn squares(s: &[u32], v: Variant) -> String {
    s.iter()
        .map(|&n| square(n, v))
        .collect::<Vec<_>>()
        .join(", ")
}

/// Squares, or `none`.
fn or_none(s: &[u32], v: Variant) -> String {
    if s.is_empty() {
        "none".into()
    } else {
        squares(s, v)
    }
}

/// The variant in the log's words: `russian`, `international`.
#[must_use]
pub fn variant_words(v: Variant) -> String {
    v.name().replace('_', " ")
}

/// An irregularity's kind: in the log's words and in the record's.
fn irregularity(k: IrregularityKind) -> (&'static str, &'static str) {
    match k {
        IrregularityKind::IllegalMove => ("illegal move", "illegal move"),
        IrregularityKind::CaptureIncomplete => (
            "capture incomplete",
            "capture stopped before it was complete",
        ),
        IrregularityKind::TouchMove => ("touch move", "touched piece not moved"),
        IrregularityKind::OutOfTurn => ("move out of turn", "moved out of turn"),
        IrregularityKind::WrongRemoval => ("wrong removal", "captured pieces removed wrongly"),
        IrregularityKind::PressBeforeRemoval => (
            "clock press before removal",
            "clock pressed before the captured pieces were removed",
        ),
        IrregularityKind::PressWithoutMove => {
            ("clock press without move", "clock pressed without a move")
        }
        IrregularityKind::WrongCopy => (
            "wrong copy",
            "a piece put wrongly while the board caught up",
        ),
    }
}

/// The rule edition a Russian game is judged by: `classic rules (RU 1.9.1)`, `2013
/// edition`.
#[must_use]
pub fn edition_words(e: RuleEdition) -> &'static str {
    match e {
        RuleEdition::Classic => "classic rules (RU 1.9.1)",
        RuleEdition::Edition2013 => "2013 edition (RU-2013 7.2)",
    }
}

/// An irregularity's kind in the log's words (`touch move`, `wrong removal`).
#[must_use]
pub fn irregularity_words(k: IrregularityKind) -> &'static str {
    irregularity(k).0
}

/// A board's health in the log's words (`active`, `not responding`, `disconnected`).
#[must_use]
pub fn board_health_words(h: BoardHealth) -> &'static str {
    match h {
        BoardHealth::Active => "active",
        BoardHealth::NotResponding => "not responding",
        BoardHealth::Disconnected => "disconnected",
    }
}

/// A result and why, in the log's words: `white wins by resignation`, `draw by
/// agreement`, `black wins by time forfeit` (the `game over:` line, the command line's
/// game and list).
#[must_use]
pub fn result_phrase(o: Outcome, r: EndReason) -> String {
    format!("{} by {}", result_words(o).0, end_reason(r).0)
}

/// A result in the log's words: `white wins`, `draw`, `both lose`, `annulled`.
#[must_use]
pub fn outcome_words(o: Outcome) -> &'static str {
    result_words(o).0
}

/// The result: in the log's words and in the record's.
fn result_words(o: Outcome) -> (&'static str, &'static str) {
    match o {
        Outcome::WhiteWins => ("white wins", "White wins"),
        Outcome::BlackWins => ("black wins", "Black wins"),
        Outcome::Draw => ("draw", "draw"),
        Outcome::DoubleForfeit => ("both lose", "both sides lose"),
        Outcome::Annulled => ("annulled", "the game is annulled"),
    }
}

/// Why a game ended: in the log's words and in the record's.
fn end_reason(r: EndReason) -> (&'static str, &'static str) {
    match r {
        EndReason::Resignation => ("resignation", "resignation"),
        EndReason::NoPieces => ("no pieces", "the side to move has no pieces"),
        EndReason::NoMoves => ("no moves", "the side to move cannot move"),
        EndReason::FlagFall => ("time forfeit", "the flag fell"),
        EndReason::MoveLimit => ("move limit", "no move within the allowance after \"Time!\""),
        EndReason::Agreement => ("agreement", "draw agreed"),
        EndReason::Repetition => ("repetition", "threefold repetition"),
        EndReason::MoveCount => ("move count", "move-count draw rule"),
        EndReason::IncorrectClaimOnTime => (
            "incorrect claim on time",
            "an incorrect draw claim when the flag fell",
        ),
        EndReason::TouchPenalty => ("touch penalty", "the touch rule's second offence"),
        EndReason::ArbiterDecision => ("arbiter decision", "arbiter's decision"),
        EndReason::Penalty => ("penalty", "penalty for a breach of the rules"),
        EndReason::CornerFilled => ("corner filled", "the opponent's corner filled"),
        EndReason::HomeNotLeft => ("home not left", "a piece left on its own start squares"),
        EndReason::Default => ("default", "lost by default: not at the board in time"),
        EndReason::Forfeit => ("forfeit", "forfeit: the game was not played"),
    }
}

/// Why a game ended, in the record's words (`the flag fell`, `lost by default: not at
/// the board in time`): the result line of the arbiter's round report
/// ([`crate::tournament::report`]).
#[must_use]
pub fn end_reason_words(r: EndReason) -> &'static str {
    end_reason(r).1
}

/// An outage's measure as the log writes it, inside the sentence.
fn measure_words(m: Option<OutageMeasure>) -> &'static str {
    match m {
        Some(OutageMeasure::BootClock) => ", measured on the host's boot clock,",
        Some(OutageMeasure::DatabaseClock) => ", measured on the database's clock,",
        Some(OutageMeasure::WallClock) => ", measured on the wall clock,",
        Some(OutageMeasure::LowerBound) => " at least (the wall clock was behind the log)",
        Some(OutageMeasure::LastEvent) => " from the last event",
        None => "",
    }
}

/// ` (rule)` when the event cites one.
fn cited(text: String, rule: Option<&str>) -> String {
    match rule {
        Some(r) if !r.trim().is_empty() => format!("{text} ({r})"),
        _ => text,
    }
}

/// ` by arbiter X` for an arbiter's event (` by the arbiter` when the id says no more:
/// empty, or `arbiter` as in open mode).
fn by(actor: &Actor) -> String {
    match actor {
        Actor::Arbiter(id) => match id.title() {
            Some(title) => format!(" by {title}"),
            None => " by the arbiter".into(),
        },
        _ => String::new(),
    }
}

/// `: words` for an arbiter's free text, if any.
fn words(text: Option<&str>) -> String {
    text.filter(|t| !t.trim().is_empty())
        .map(|t| format!(": {}", t.trim()))
        .unwrap_or_default()
}

// ---------------------------------------------------------------------------
// The event's words
// ---------------------------------------------------------------------------

/// An event in both registers.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Words {
    /// In the log's words, with the rule it cites in brackets: `white played 1. c3-d4,
    /// 0.0 s spent; clocks white 5:00.0, black 5:00.0, black to move [RU 1.4.6]`.
    pub line: String,
    /// As the game's record comments it, with the rule in parentheses: `White offers a
    /// draw (RU 1.9.3)`; `None` for what a record leaves out (moves, which are the record
    /// itself; board mechanics; presses; a clock's own steps). A ruling that an irregular
    /// move stands and a position set up also start a new record in PDN (the writer's
    /// business, [`super::pdn`]).
    pub comment: Option<String>,
}

/// The event's words (see [`Words`]).
#[must_use]
pub fn describe(e: &GameEvent, seen: Seen<'_>) -> Words {
    let (mut line, comment) = registers(e, seen);
    if let Some(rule) = e.rule.as_deref().filter(|r| !r.is_empty()) {
        let _ = write!(line, " [{rule}]");
    }
    Words {
        line,
        comment: comment.map(|c| cited(c, e.rule.as_deref())),
    }
}

/// The event in the log's words ([`Words::line`]).
#[must_use]
pub fn line(e: &GameEvent, seen: Seen<'_>) -> String {
    describe(e, seen).line
}

/// The event as the game's record comments it ([`Words::comment`]).
#[must_use]
pub fn comment(e: &GameEvent, seen: Seen<'_>) -> Option<String> {
    describe(e, seen).comment
}

/// The line of a watcher's `Resync` (no event of the log: the watcher fell behind and gets
/// the game as it stands).
#[must_use]
pub fn resync_line(moves: usize, last_seq: u64) -> String {
    format!("resync (this watcher fell behind): the game now, {moves} moves, last seq {last_seq}")
}

/// What happened, in the log's words and in the record's (neither citing the rule).
fn registers(e: &GameEvent, seen: Seen<'_>) -> (String, Option<String>) {
    let v = seen.variant;
    let note = seen.note;
    let clock = clocks(note.clock.as_ref());
    let who = by(&e.actor);
    match &e.kind {
        EventKind::GameCreated { settings, .. } => {
            let tc = settings
                .time_control
                .as_ref()
                .map(ToString::to_string)
                .filter(|t| !t.is_empty() && t != "-")
                .map_or_else(|| "untimed".to_string(), |t| format!("time control {t}"));
            let name = |n: &str| {
                if n.is_empty() {
                    "?".to_string()
                } else {
                    n.to_string()
                }
            };
            let meta = seen.meta;
            let mut s = format!(
                "game created: {}, {tc}, {} - {}",
                variant_words(settings.variant),
                name(&meta.white.name),
                name(&meta.black.name)
            );
            if !meta.event.is_empty() {
                let _ = write!(s, ", event {}", meta.event);
            }
            if !meta.round.is_empty() {
                let _ = write!(s, ", round {}", meta.round);
            }
            if meta.board > 0 {
                let _ = write!(s, ", board {}", meta.board);
            }
            (s, None)
        }
        EventKind::GameStarted => (format!("game started{clock}"), None),
        EventKind::MovePlayed {
            side,
            notation,
            source,
            ..
        } => {
            let dots = if *side == Color::Black { "..." } else { "." };
            let source = match source {
                MoveSource::Board => " on the board",
                MoveSource::Snapshot => " (board snapshot)",
                MoveSource::WrittenClaim => " (the claim's written move)",
                MoveSource::Digital => "",
            };
            let spent = log_duration(ms(note.time_spent_ms.unwrap_or(0)));
            let s = format!(
                "{} played {}{dots} {notation}{source}, {spent} spent{clock}",
                side_word(*side),
                note.move_number,
            );
            (s, None)
        }
        EventKind::PieceTouched {
            square: n,
            binding,
            immovable,
        } => {
            let s = format!(
                "{} piece touched on {}{}{}",
                maybe_side(note.side),
                square(*n, v),
                if *binding { " (binding)" } else { "" },
                if *immovable { " (cannot move)" } else { "" }
            );
            (s, None)
        }
        EventKind::PieceLifted { square: n } => {
            (format!("piece lifted from {}", square(*n, v)), None)
        }
        EventKind::PiecePlaced { square: n } => {
            (format!("piece placed on {}", square(*n, v)), None)
        }
        EventKind::PieceReleased { square: n } => {
            (format!("piece released on {}", square(*n, v)), None)
        }
        EventKind::AdjustAnnounced { side } => {
            (format!("{} announced \"I adjust\"", side_word(*side)), None)
        }
        EventKind::BoardFlooded { per_s, burst } => (
            format!(
                "board flood: more than {per_s} messages a second (burst {burst}); the excess was refused"
            ),
            None,
        ),
        EventKind::BoardHealthChanged {
            health, silent_ms, ..
        } => {
            let words = match health {
                BoardHealth::Active if *silent_ms > 0 => "active again",
                h => board_health_words(*h),
            };
            let mut s = format!("board {words}");
            if *silent_ms > 0 {
                let _ = write!(s, " (silent {})", clock_time(ms(*silent_ms)));
            }
            (s, None)
        }
        EventKind::BoardSnapshot {
            white,
            black,
            missing,
            extra,
            wrong_colour,
            wrong_kind,
            ..
        } => {
            let mut s = format!(
                "board snapshot: {} squares occupied",
                white.len() + black.len()
            );
            let lists = [
                ("missing", missing),
                ("extra", extra),
                ("wrong colour", wrong_colour),
                ("wrong kind", wrong_kind),
            ];
            if lists.iter().all(|(_, l)| l.is_empty()) {
                s.push_str(", as the official position");
            }
            for (what, list) in lists {
                if !list.is_empty() {
                    let _ = write!(s, ", {what} {}", squares(list, v));
                }
            }
            (s, None)
        }
        EventKind::ClockPressed { side, .. } => (
            format!("{} pressed the clock{clock}", side_word(*side)),
            None,
        ),
        EventKind::ClockChanged { op, reason } => {
            let reason = reason.as_deref().unwrap_or_default();
            // The record's `: reason` (the log's is `with_reason`'s).
            let why = Some(reason)
                .filter(|r| !r.trim().is_empty())
                .map(|r| format!(": {r}"))
                .unwrap_or_default();
            let (log, record) = match *op {
                ClockOp::Pause { .. } => (
                    "clocks paused".to_string(),
                    Some(format!("Clocks paused{who}{why}")),
                ),
                ClockOp::Resume { .. } => (
                    "clocks resumed".to_string(),
                    Some(format!("Clocks resumed{who}{why}")),
                ),
                ClockOp::SetRemaining {
                    side, remaining, ..
                } => (
                    format!(
                        "{}'s clock set to {}",
                        side_word(side),
                        clock_time(ms(remaining))
                    ),
                    Some(format!(
                        "{}'s clock set to {}{who}{why}",
                        side_name(side),
                        record_duration(remaining)
                    )),
                ),
                ClockOp::AddTime { side, amount, .. }
                | ClockOp::SubtractTime { side, amount, .. } => {
                    let d = record_duration(amount);
                    let (sign, record) = if matches!(op, ClockOp::AddTime { .. }) {
                        ("+", format!("{d} added to {}'s clock", side_name(side)))
                    } else {
                        (
                            "-",
                            format!("Penalty: {d} taken from {}'s clock", side_name(side)),
                        )
                    };
                    (
                        format!(
                            "{}'s clock {sign} {}",
                            side_word(side),
                            log_duration(ms(amount))
                        ),
                        Some(format!("{record}{who}{why}")),
                    )
                }
                // A settle that let a flag fall (the note names the side).
                ClockOp::Settle { .. } if note.side.is_some() => {
                    let side = note.side.unwrap_or(Color::White);
                    return (
                        format!("{}'s flag fell{clock}", side_word(side)),
                        Some(format!("{}'s flag fell", side_name(side))),
                    );
                }
                _ => return (format!("clock state changed{clock}"), None),
            };
            (format!("{}{clock}", with_reason(log, reason)), record)
        }
        EventKind::TimeCalled { side } => (
            format!("\"Time!\" called for {}", side_word(*side)),
            Some(format!("\"Time!\" called on {}", side_name(*side))),
        ),
        EventKind::DrawOffered { side, timing } => {
            let when = match timing {
                OfferTiming::AfterOwnMove => " with the move",
                OfferTiming::DuringOpponentsTurn => " on the opponent's time",
                OfferTiming::BeforeOwnMove => " before moving",
            };
            (
                format!("{} offered a draw{when}", side_word(*side)),
                Some(format!("{} offers a draw", side_name(*side))),
            )
        }
        EventKind::DrawOfferAnswered {
            side,
            response,
            by_move,
        } => {
            let how = if *by_move { " by moving" } else { "" };
            let (log, record) = match response {
                OfferResponse::Accept => ("accepted the draw offer", "accepts the draw offer"),
                OfferResponse::Decline => ("declined the draw offer", "declines the draw offer"),
                OfferResponse::Postpone => (
                    "postponed the answer to the draw offer",
                    "will answer the draw offer after the move",
                ),
            };
            // The log says "by moving" of a refusal only (a move answers no other way).
            let log_how = if *response == OfferResponse::Decline {
                how
            } else {
                ""
            };
            (
                format!("{} {log}{log_how}", side_word(*side)),
                Some(format!("{} {record}{how}", side_name(*side))),
            )
        }
        EventKind::ClaimMade {
            side,
            kind,
            written_move,
            correct,
        } => claim(*side, *kind, written_move.as_deref(), *correct),
        EventKind::ClaimDecided { upheld, reason } => {
            let claimant = note.side;
            (
                with_reason(
                    format!(
                        "{}'s claim #{} found {}",
                        maybe_side(claimant),
                        note.refers_to.unwrap_or(0),
                        if *upheld { "correct" } else { "incorrect" }
                    ),
                    reason.as_deref().unwrap_or_default(),
                ),
                Some(format!(
                    "Ruling{who}: {}draw claim {}{}",
                    claimant
                        .map(|c| format!("{}'s ", side_name(c)))
                        .unwrap_or_default(),
                    if *upheld { "upheld" } else { "rejected" },
                    words(reason.as_deref())
                )),
            )
        }
        EventKind::Irregularity {
            side,
            kind,
            detail,
            retake_with,
            squares: list,
        } => {
            let mut log = format!(
                "irregularity by {}: {}",
                side_word(*side),
                irregularity(*kind).0
            );
            let mut record = format!(
                "Irregularity by {}: {}",
                side_name(*side),
                irregularity(*kind).1
            );
            if !detail.is_empty() {
                let _ = write!(log, " ({detail})");
            }
            if !detail.trim().is_empty() {
                let _ = write!(record, " ({detail})");
            }
            if !list.is_empty() {
                let _ = write!(log, ", squares {}", squares(list, v));
            }
            if let Some(n) = retake_with.filter(|&n| n > 0) {
                let _ = write!(log, ", retake with {n}");
            }
            if let Some(fen) = note.official_fen.as_deref().filter(|f| !f.is_empty()) {
                let _ = write!(log, ", official position {fen}");
            }
            (log, Some(record))
        }
        EventKind::IrregularityResolved {
            ruling,
            fen,
            reason,
            ..
        } => {
            let given = reason.as_deref();
            let log = {
                let words = match ruling {
                    Some(Ruling::Stands) => "ruled: stands",
                    Some(Ruling::Corrected) => "ruled: corrected",
                    None => "resolved: the board was put back",
                };
                let reason = match (ruling, given) {
                    (None, None) => "the board was put back",
                    (_, given) => given.unwrap_or_default(),
                };
                let s = with_reason(
                    format!("irregularity #{} {words}", note.refers_to.unwrap_or(0)),
                    reason,
                );
                if fen.is_empty() {
                    s
                } else {
                    format!("{s}; position {fen}")
                }
            };
            let why = words(given);
            let record = match ruling {
                // A clock irregularity ruled either way: the position is what it was.
                Some(r) if note.resolved.is_some_and(|k| !k.on_board()) => {
                    let what = match r {
                        Ruling::Stands => "stands",
                        Ruling::Corrected => "is corrected",
                    };
                    format!(
                        "Ruling{who}: the clock irregularity {what}; the clocks stay as they are{why}"
                    )
                }
                Some(Ruling::Stands) => format!("Ruling{who}: the irregular move stands{why}"),
                Some(Ruling::Corrected) => format!(
                    "Ruling{who}: the irregularity is corrected, the position stays {fen}{why}"
                ),
                None => match given {
                    Some(r) => format!("Irregularity cleared: {r}"),
                    None => "The board was put right".into(),
                },
            };
            (log, Some(record))
        }
        EventKind::Warning { side, reason } => {
            let mut record = format!("Warning{who} to {}", side_name(*side));
            if !reason.trim().is_empty() {
                let _ = write!(record, ": {reason}");
            }
            if note.count > 0 {
                let _ = write!(record, " (warning {} of {})", note.count, side_name(*side));
            }
            (
                with_reason(
                    format!("{} warned (warning {})", side_word(*side), note.count),
                    reason,
                ),
                Some(record),
            )
        }
        EventKind::GameEnded {
            outcome,
            reason,
            note: text,
        } => {
            let text = text.as_deref().unwrap_or_default();
            let log = with_reason(
                format!("game over: {}", result_phrase(*outcome, *reason)),
                text,
            );
            // `draw agreed` says the result itself (not `draw, draw agreed`).
            let (result, why) = (result_words(*outcome).1, end_reason(*reason).1);
            let mut record = if why.starts_with(result) {
                format!("Result{who}: {why}")
            } else {
                format!("Result{who}: {result}, {why}")
            };
            if !text.trim().is_empty() {
                let _ = write!(record, ": {text}");
            }
            (format!("{log}{clock}"), Some(record))
        }
        EventKind::Outage {
            from_ms,
            until_ms,
            charged,
            measured,
        } => {
            let length = until_ms.saturating_sub(*from_ms);
            let charged = if *charged {
                "charged to the side on move"
            } else {
                "not charged"
            };
            (
                format!(
                    "service outage of {}{} recorded ({charged}){clock}",
                    log_duration(ms(length)),
                    measure_words(*measured),
                ),
                Some(format!(
                    "Service outage of {}{}; {charged}",
                    record_duration(length),
                    measured.map_or(String::new(), |m| format!(" ({})", m.words())),
                )),
            )
        }
        EventKind::PositionSet { fen, reason } => (
            with_reason(
                format!("position set to {fen}"),
                reason.as_deref().unwrap_or_default(),
            ),
            Some(format!("Position set up{who}{}", words(reason.as_deref()))),
        ),
        EventKind::DrawConditionReached => (
            with_reason(
                "draw rule applies (referred to the arbiter)".into(),
                e.rule.as_deref().unwrap_or_default(),
            ),
            Some("Draw condition reached; referred to the arbiter".into()),
        ),
        EventKind::RemovalComplete { side } => (
            format!("{}'s captured pieces are all removed", side_word(*side)),
            None,
        ),
        EventKind::BoardOutOfStep {
            cause,
            to_clear,
            to_fill,
            ..
        } => {
            let cause = match cause {
                FollowCause::MoveElsewhere => "a move made elsewhere",
                FollowCause::PositionSet => "the arbiter's position",
                FollowCause::Corrected => "a corrected irregularity",
            };
            let fill: Vec<u32> = to_fill.iter().map(|p| p.square).collect();
            (
                format!(
                    "board out of step after {cause}: clear {}; fill {}",
                    or_none(to_clear, v),
                    or_none(&fill, v)
                ),
                None,
            )
        }
        EventKind::BoardInStep => ("board in step with the official position".to_string(), None),
        EventKind::FortyMoveCountStarted { side } => (
            format!(
                "40-move count started: {} must win within 40 moves",
                side_word(*side)
            ),
            Some(format!(
                "40-move count started: {} must show a win",
                side_name(*side)
            )),
        ),
        EventKind::MarkedAbsent { side } => (
            format!("{} marked absent", side_word(*side)),
            Some(format!("{} marked absent by the arbiter", side_name(*side))),
        ),
    }
}

/// What a draw claim is based on, in the log's words: `repetition`, `a move-count rule`.
#[must_use]
pub fn claim_basis(kind: ClaimKind) -> &'static str {
    match kind {
        ClaimKind::MoveCount => "a move-count rule",
        ClaimKind::Repetition => "repetition",
    }
}

/// A draw claim, in the log's words and the record's.
fn claim(
    side: Color,
    kind: ClaimKind,
    written_move: Option<&str>,
    correct: bool,
) -> (String, Option<String>) {
    let basis = claim_basis(kind);
    let about = match kind {
        ClaimKind::MoveCount => "a move-count rule",
        ClaimKind::Repetition => "threefold repetition",
    };
    let check = if correct { "correct" } else { "incorrect" };
    let (mut log, mut record) = (
        format!("{} claimed a draw by {basis}", side_word(side)),
        format!("{} claims a draw by {about}", side_name(side)),
    );
    if let Some(m) = written_move {
        let _ = write!(log, ", written move {m}");
        let _ = write!(record, " with the move {m} written, not played");
    }
    let _ = write!(log, "; the judge's check: {check}");
    let _ = write!(record, "; the judge finds the claim {check}");
    (log, Some(record))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn clock_times_read_as_on_a_clock() {
        assert_eq!(clock_time(300_000), "5:00.0");
        assert_eq!(clock_time(297_340), "4:57.3");
        assert_eq!(clock_time(3_903_200), "1:05:03.2");
        assert_eq!(clock_time(-400), "-0:00.4");
        assert_eq!(log_duration(3_250), "3.2 s");
        assert_eq!(log_duration(90_000), "1:30.0");
    }

    fn event(kind: EventKind, actor: Actor, rule: Option<&str>) -> GameEvent {
        GameEvent {
            seq: 5,
            at: super::super::event::Now::from_mono(0),
            actor,
            rule: rule.map(String::from),
            kind,
            board_ms: None,
        }
    }

    /// Squares in the game's notation, the rule cited, in the log's and the record's
    /// words from the one event.
    #[test]
    fn ru_1_4_7_a_touch_names_its_square_as_the_game_writes_it() {
        let note = EventNote {
            side: Some(Color::White),
            ..EventNote::default()
        };
        let meta = GameMeta::default();
        let touch = event(
            EventKind::PieceTouched {
                square: 22,
                binding: true,
                immovable: false,
            },
            Actor::Board("b1".into()),
            Some("RU 1.4.7"),
        );
        let ru = Seen {
            variant: Variant::Russian,
            note: &note,
            meta: &meta,
        };
        assert_eq!(
            line(&touch, ru),
            "white piece touched on c3 (binding) [RU 1.4.7]"
        );
        assert_eq!(
            comment(&touch, ru),
            None,
            "board mechanics stay out of the record"
        );
        let int = Seen {
            variant: Variant::International,
            ..ru
        };
        assert_eq!(
            line(&touch, int),
            "white piece touched on 22 (binding) [RU 1.4.7]"
        );
    }

    #[test]
    fn a_warning_in_both_registers() {
        let note = EventNote {
            count: 2,
            ..EventNote::default()
        };
        let meta = GameMeta::default();
        let seen = Seen {
            variant: Variant::Russian,
            note: &note,
            meta: &meta,
        };
        let warn = event(
            EventKind::Warning {
                side: Color::Black,
                reason: "talking".into(),
            },
            Actor::Arbiter("arbiter".into()),
            Some("RU 1.9.4"),
        );
        assert_eq!(
            line(&warn, seen),
            "black warned (warning 2): talking [RU 1.9.4]"
        );
        assert_eq!(
            comment(&warn, seen).as_deref(),
            Some("Warning by the arbiter to Black: talking (warning 2 of Black) (RU 1.9.4)")
        );
    }
}
