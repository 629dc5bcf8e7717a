//! What the judge knew right after each event, beside the event itself: the move number,
//! both clocks, the time the mover spent, the seq of the pending item a ruling or an
//! answer refers to. None of it is recorded (it is derived from the log): the same fold
//! produces it for a live event and for one replayed from the store, so a display that
//! folds a stream sees exactly what a fresh replay sees.

use serde::{Deserialize, Serialize};

use super::event::{EventKind, GameEvent, IrregularityKind};
use crate::clock::{Clock, Phase};
use crate::rules::Color;

/// What a clock shows at an instant.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum ClockRun {
    /// Not started yet.
    NotStarted,
    /// This side's time runs.
    Running(Color),
    /// Paused by the arbiter while this side was on move.
    Paused(Color),
    /// Stopped for good (flag fall or end of game).
    Stopped,
}

/// Both clocks at an instant.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct ClockReading {
    /// Running, paused, stopped.
    pub run: ClockRun,
    /// White's remaining time, ms.
    pub white_ms: u64,
    /// Black's remaining time, ms.
    pub black_ms: u64,
    /// White's time-control period (1 = the first).
    pub white_period: u32,
    /// Black's period.
    pub black_period: u32,
    /// The instant read (monotonic ms).
    pub at_ms: u64,
}

impl ClockReading {
    /// Reads `clock` at `now`.
    pub fn of(clock: &Clock, now: u64) -> ClockReading {
        let r = clock.reading(now);
        let run = match r.phase {
            Phase::NotStarted => ClockRun::NotStarted,
            Phase::Running(side) => ClockRun::Running(side),
            Phase::Paused(side) => ClockRun::Paused(side),
            Phase::Flagged(_) | Phase::Stopped { .. } => ClockRun::Stopped,
        };
        ClockReading {
            run,
            white_ms: r.remaining(Color::White),
            black_ms: r.remaining(Color::Black),
            white_period: r.period(Color::White),
            black_period: r.period(Color::Black),
            at_ms: now,
        }
    }
}

/// The state of the game right after one event, as far as a display needs it.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct EventNote {
    /// Moves on the score sheet after the event.
    pub plies: u32,
    /// `MovePlayed`: the move's number as a score sheet writes it (white's and black's
    /// moves share one; a game whose start position has black to move starts black's
    /// first move at 1 too).
    pub move_number: u32,
    /// Both clocks after the event (`None` untimed). For a `MovePlayed` whose press
    /// came with the move (a digital move, or clocks switching on the move), the clocks
    /// after that press.
    pub clock: Option<ClockReading>,
    /// `MovePlayed`: how long the mover thought, ms (the clock's running time of the
    /// move, pauses excluded; untimed games: since the previous move or the start).
    pub time_spent_ms: Option<u64>,
    /// The seq of the pending item the event answers: the claim a `ClaimDecided`
    /// decides, the irregularity an `IrregularityResolved` resolves, the offer a
    /// `DrawOfferAnswered` answers.
    pub refers_to: Option<u64>,
    /// `ClaimDecided`: the claimant. A clock settle (`ClockChanged` with
    /// `ClockOp::Settle`) that let a flag fall: the side whose flag fell.
    pub side: Option<Color>,
    /// `Warning`: the warned side's warnings so far, this one included.
    pub count: u32,
    /// `Irregularity`: the official position the board must be put back to (FEN).
    pub official_fen: Option<String>,
    /// `IrregularityResolved` naming the irregularity it resolves: that irregularity's
    /// kind (a clock irregularity ruled either way leaves the position as it was).
    pub resolved: Option<IrregularityKind>,
}

/// Adds `note` of `event` to `notes` (the notes of `events`, which precede it): a press
/// that came with the move (`ClockPressed::with_move`) also gives the move's note the
/// clocks after the press. The move is the last `MovePlayed` before the press, in the
/// same command, so a live batch and a replayed log find the same one.
pub(crate) fn push(
    notes: &mut Vec<EventNote>,
    events: &[GameEvent],
    event: &GameEvent,
    note: EventNote,
) {
    if let EventKind::ClockPressed {
        with_move: true, ..
    } = event.kind
        && let Some(i) = events
            .iter()
            .rposition(|e| matches!(e.kind, EventKind::MovePlayed { .. }))
        && let Some(move_note) = notes.get_mut(i)
    {
        move_note.clock = note.clock;
    }
    notes.push(note);
}
