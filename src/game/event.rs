//! What the judge records: every accepted command becomes one or more events, and a
//! game's state is exactly the fold of its events.

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

use super::command::{Actor, BoardHealth, ClaimKind, OfferResponse, Outcome, Ruling};
use super::settings::GameSettings;
use crate::clock::ClockOp;
use crate::rules::Color;

/// An instant: the monotonic milliseconds that drive the clocks, and the UTC wall time
/// kept for the record.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Now {
    /// Monotonic milliseconds (never goes back within a game's log).
    pub mono_ms: u64,
    /// Wall-clock time, for people and PDN.
    #[serde(serialize_with = "wall_time::serialize")]
    pub wall: DateTime<Utc>,
}

/// The wall time of an event as the log keeps it: exactly chrono's own serde form
/// (RFC 3339 in UTC, `2026-12-01T12:27:59.123Z`, with 0, 3, 6 or 9 digits of fraction),
/// written without the formatting machinery for the years 0-9999 (every event is
/// serialized once as it is recorded, and chrono's general formatter was a third of
/// that cost). Read back by chrono's own deserializer.
mod wall_time {
    use chrono::{DateTime, Utc};
    use serde::Serializer;

    pub(super) fn serialize<S: Serializer>(t: &DateTime<Utc>, s: S) -> Result<S::Ok, S::Error> {
        if let Some((text, len)) = write(t)
            && let Ok(text) = std::str::from_utf8(&text[..len])
        {
            return s.serialize_str(text);
        }
        serde::Serialize::serialize(t, s)
    }

    /// The text, or `None` outside what the fast path writes (then chrono writes it).
    pub(super) fn write(t: &DateTime<Utc>) -> Option<([u8; 30], usize)> {
        use chrono::{Datelike, Timelike};
        let year = t.year();
        let nanos = t.nanosecond();
        if !(0..=9999).contains(&year) || nanos >= 1_000_000_000 {
            return None;
        }
        let mut out = *b"0000-00-00T00:00:00.000000000Z";
        put(&mut out, 0, year as u32, 4);
        put(&mut out, 5, t.month(), 2);
        put(&mut out, 8, t.day(), 2);
        put(&mut out, 11, t.hour(), 2);
        put(&mut out, 14, t.minute(), 2);
        put(&mut out, 17, t.second(), 2);
        let mut n = 19;
        if nanos != 0 {
            let (value, width) = if nanos.is_multiple_of(1_000_000) {
                (nanos / 1_000_000, 3)
            } else if nanos.is_multiple_of(1_000) {
                (nanos / 1_000, 6)
            } else {
                (nanos, 9)
            };
            put(&mut out, 20, value, width);
            n = 20 + width;
        }
        out[n] = b'Z';
        Some((out, n + 1))
    }

    /// Writes `value` in `width` decimal digits at `at`.
    fn put(out: &mut [u8; 30], at: usize, value: u32, width: usize) {
        let mut v = value;
        for i in (at..at + width).rev() {
            out[i] = b'0' + (v % 10) as u8;
            v /= 10;
        }
    }

    #[cfg(test)]
    mod tests {
        use chrono::{DateTime, Utc};
        use proptest::prelude::*;

        fn ours(t: &DateTime<Utc>) -> String {
            let mut out = Vec::new();
            super::serialize(t, &mut serde_json::Serializer::new(&mut out)).expect("writes");
            String::from_utf8(out).expect("utf-8")
        }

        proptest! {
            /// The same text as chrono's serde, for any instant (and its fraction in
            /// whole milli-, micro- or nanoseconds), read back to the same instant.
            #[test]
            fn as_chrono_writes_it(
                secs in -62_135_596_800i64..300_000_000_000,
                nanos in 0u32..1_000_000_000,
                unit in 0usize..4,
            ) {
                let nanos = [0, nanos / 1_000_000 * 1_000_000, nanos / 1_000 * 1_000, nanos][unit];
                let t = DateTime::<Utc>::from_timestamp(secs, nanos).expect("in range");
                let text = ours(&t);
                prop_assert_eq!(&text, &serde_json::to_string(&t).expect("chrono"));
                let back: DateTime<Utc> = serde_json::from_str(&text).expect("reads");
                prop_assert_eq!(back, t);
            }
        }

        #[test]
        fn outside_the_fast_path_chrono_writes_it() {
            for t in [
                DateTime::<Utc>::from_timestamp(-62_167_219_201, 0).expect("year -1"),
                DateTime::<Utc>::from_timestamp(253_402_300_800, 5).expect("year 10000"),
            ] {
                assert!(super::write(&t).is_none());
                assert_eq!(ours(&t), serde_json::to_string(&t).expect("chrono"));
            }
        }
    }
}

impl Now {
    /// An instant from monotonic milliseconds, with the wall time at the Unix epoch plus
    /// the same milliseconds (for tests and replays that have no wall clock).
    pub fn from_mono(mono_ms: u64) -> Now {
        Now {
            mono_ms,
            wall: DateTime::<Utc>::from_timestamp_millis(mono_ms.min(i64::MAX as u64) as i64)
                .unwrap_or_default(),
        }
    }
}

/// One recorded event of a game.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct GameEvent {
    /// Position in the game's log, dense from 1.
    pub seq: u64,
    /// When it happened.
    pub at: Now,
    /// Who caused it.
    pub actor: Actor,
    /// The rule that decided it (RULES.md numbering), if a rule did.
    pub rule: Option<String>,
    /// What happened.
    pub kind: EventKind,
    /// The electronic board's own clock (ms, as the board sent it) on the message that
    /// caused the event, beside the server's `at`; `None` for other sources.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub board_ms: Option<i64>,
}

/// How a draw offer was timed (RU 1.9.3–1.9.5).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum OfferTiming {
    /// Right after one's own move, before pressing (RU 1.9.3).
    AfterOwnMove,
    /// While the opponent's clock runs (RU 1.9.4: the offerer is warned).
    DuringOpponentsTurn,
    /// Before one's own move (RU 1.9.5: may be postponed).
    BeforeOwnMove,
}

/// Where a move came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum MoveSource {
    /// A player's app.
    Digital,
    /// An electronic board's release (captured pieces still to be lifted).
    Board,
    /// An electronic board's whole-board reading (captured pieces already gone).
    Snapshot,
    /// The written move of a claim found incorrect (RU 1.9.2).
    WrittenClaim,
}

/// Kinds of irregularity (RU 1.4–1.5; FMJD 35–49 of seed 001).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum IrregularityKind {
    /// A move that is not legal in the position.
    IllegalMove,
    /// A multi-capture stopped on one of its landing squares, before it was complete
    /// (RU 1.5.5, FMJD 4.5, each variant's own rule; FMJD's list of irregularities:
    /// "stopping a capture early").
    CaptureIncomplete,
    /// A different piece was moved than the one touched first (RU 1.4.7).
    TouchMove,
    /// A piece moved by the side not on move, or an opponent's piece moved.
    OutOfTurn,
    /// Captured pieces removed in the wrong order or the wrong piece removed.
    WrongRemoval,
    /// The clock pressed before the captured pieces were all removed.
    PressBeforeRemoval,
    /// The clock pressed without a move.
    PressWithoutMove,
    /// While the board caught up with the judge's position ([`EventKind::BoardOutOfStep`]),
    /// a piece was put down where that position has no piece of its colour.
    WrongCopy,
}

impl IrregularityKind {
    /// Whether the irregularity is on the board itself (a piece where the official
    /// position has none, or missing): it stops the board's moves from being judged until
    /// the board is put back to the official position, which clears it, or a ruling.
    /// The clock kinds are records for the arbiter: play goes on, only a ruling clears
    /// them.
    pub fn on_board(self) -> bool {
        !matches!(
            self,
            IrregularityKind::PressBeforeRemoval | IrregularityKind::PressWithoutMove
        )
    }
}

/// A piece the judge asks a board to put on a square.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct BoardPiece {
    /// The square (PDN number).
    pub square: u32,
    /// Its colour.
    pub side: Color,
    /// A king (a board that cannot sense crowns puts a crowned piece there all the same).
    pub king: bool,
}

/// Why the judge's position changed without the board.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum FollowCause {
    /// A move made elsewhere: a player's app, or the written move of a claim found
    /// incorrect (RU 1.9.2).
    MoveElsewhere,
    /// An arbiter set the position.
    PositionSet,
    /// An irregularity ruled `corrected`: the board is put back to the last legal position.
    Corrected,
}

/// Why a game ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum EndReason {
    /// A player resigned.
    Resignation,
    /// The side to move has no pieces.
    NoPieces,
    /// The side to move cannot move.
    NoMoves,
    /// A flag fell.
    FlagFall,
    /// English "Time!" rule: no move within the allowance.
    MoveLimit,
    /// Agreed draw.
    Agreement,
    /// Threefold repetition.
    Repetition,
    /// A move-count draw rule.
    MoveCount,
    /// A draw claim found incorrect when the claimant's flag fell (RU 1.9.2).
    IncorrectClaimOnTime,
    /// The English touch rule's second offence.
    TouchPenalty,
    /// The arbiter's decision.
    ArbiterDecision,
    /// Lost as the arbiter's penalty for a breach of the rules (the rule broken, as the
    /// arbiter names it, is the event's rule; RULES.md: an arbiter's decision is logged
    /// with their identity).
    Penalty,
    /// Corners: a side filled the opponent's start corner (a win, or a draw when both
    /// did with the same number of moves).
    CornerFilled,
    /// Corners anti-stalling: a piece still (or again) on its own start squares after the
    /// allowed number of moves.
    HomeNotLeft,
    /// Lost by default (T 5): the side to move had not acted when the default time passed
    /// (both sides, when the other was marked absent).
    Default,
    /// A forfeit the arbiter entered: the game was not played (a no-show before the
    /// round, a withdrawal; T 5, T 6).
    Forfeit,
}

/// What measured an outage's length: the best fact a restart or a takeover has. The
/// service's timeline goes on from the end of the outage at the rate of a monotonic clock
/// whatever the measure; the measure only says how exact the recorded length is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum OutageMeasure {
    /// The host's boot clock, across a restart on the same boot: exact, whatever the wall
    /// clock did meanwhile.
    BootClock,
    /// The database's clock (several nodes on PostgreSQL): from the previous owner's last
    /// sign of life (a lease renewal, an append or a release) to the takeover.
    DatabaseClock,
    /// The wall clock, from the alive mark: across a reboot or a move to another host,
    /// where no clock spans both runs.
    WallClock,
    /// Only what is certain: the wall clock was behind the alive mark (stepped back, or
    /// another host's), so the outage counts the time since this host booted (or nothing)
    /// and may have been longer.
    LowerBound,
    /// No alive mark: from the game's last event.
    LastEvent,
}

impl OutageMeasure {
    /// Its words, as the event lines and PDN comments write it.
    #[must_use]
    pub fn words(self) -> &'static str {
        match self {
            OutageMeasure::BootClock => "measured on the host's boot clock",
            OutageMeasure::DatabaseClock => "measured on the database's clock",
            OutageMeasure::WallClock => "measured on the wall clock",
            OutageMeasure::LowerBound => "at least: the wall clock was behind the log",
            OutageMeasure::LastEvent => "from the last event",
        }
    }
}

/// What happened, with everything needed to replay it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum EventKind {
    /// The game was created (always seq 1).
    GameCreated {
        /// Its settings.
        settings: GameSettings,
        /// The start position (FEN).
        start_fen: String,
    },
    /// The game started; the first side's clock runs.
    GameStarted,
    /// A move was made on the official position.
    MovePlayed {
        /// The side that moved.
        side: Color,
        /// Native notation, full path.
        notation: String,
        /// PDN squares from start to end.
        path: Vec<u32>,
        /// PDN squares captured, in capture order.
        captured: Vec<u32>,
        /// Where it came from.
        source: MoveSource,
        /// The position after the move (FEN).
        fen_after: String,
    },
    /// A side pressed its clock after its move.
    ClockPressed {
        /// The side.
        side: Color,
        /// White's remaining time after the press, ms.
        white_ms: u64,
        /// Black's remaining time after the press, ms.
        black_ms: u64,
        /// Whether the press came with the move, in the same command (a digital move, or
        /// clocks switching on the move) rather than as a press of its own.
        #[serde(default, skip_serializing_if = "std::ops::Not::not")]
        with_move: bool,
    },
    /// An operation on the clock other than a move's press (arbiter actions, and
    /// `Settle`, which records what time did: "Time!" calls, DGT periods, flags).
    ClockChanged {
        /// The operation.
        op: ClockOp,
        /// Why (an arbiter's reason), if given.
        reason: Option<String>,
    },
    /// The English "Time!" call (seed 004): the player must move within the allowance.
    TimeCalled {
        /// The side on move.
        side: Color,
    },
    /// A board reported a touch.
    PieceTouched {
        /// The square.
        square: u32,
        /// Whether it binds the player to move that piece (RU 1.4.7).
        binding: bool,
        /// Whether it was the side to move's own piece with no legal move (counted for
        /// the English touch rule).
        immovable: bool,
    },
    /// A board reported a lift.
    PieceLifted {
        /// The square.
        square: u32,
    },
    /// A board reported the held piece put down (still held).
    PiecePlaced {
        /// The square.
        square: u32,
    },
    /// A board reported the hand leaving a piece that made no move.
    PieceReleased {
        /// The square.
        square: u32,
    },
    /// A board sent messages faster than the server takes them; the excess was refused.
    /// Recorded once per flood (at most once a minute per board connection).
    BoardFlooded {
        /// The rate it exceeded, messages a second.
        per_s: u32,
        /// The burst allowed above the rate.
        burst: u32,
    },
    /// The bound board's health changed (see [`BoardHealth`]).
    BoardHealthChanged {
        /// The board's hardware id.
        board_id: String,
        /// Its state now.
        health: BoardHealth,
        /// How long it had been silent, ms.
        silent_ms: u64,
    },
    /// "I adjust" (RU 1.4.9).
    AdjustAnnounced {
        /// The side.
        side: Color,
    },
    /// A whole-board reading from an electronic board, with what differs from the
    /// official position as it stood after the reading was judged. The judge's picture
    /// of the physical board becomes the reading (a piece in hand is dropped from it):
    /// a board that got out of step sends one to get back in.
    BoardSnapshot {
        /// Squares with a white piece (PDN numbers).
        white: Vec<u32>,
        /// Squares with a black piece.
        black: Vec<u32>,
        /// Squares with a king, if the board knows.
        kings: Option<Vec<u32>>,
        /// Official pieces the board does not show.
        missing: Vec<u32>,
        /// Pieces on squares the official position has empty.
        extra: Vec<u32>,
        /// Squares holding a piece of the other colour.
        wrong_colour: Vec<u32>,
        /// Squares where the board's king or man differs (only when it reports kings).
        wrong_kind: Vec<u32>,
    },
    /// The judge's position changed without the board (a move made elsewhere, an
    /// arbiter's position, a `corrected` ruling): the physical board, as the judge
    /// believes it stands, and what to do to reach the official position. Until it does,
    /// the board's lifts and releases are steps that follow, not moves.
    BoardOutOfStep {
        /// Why.
        cause: FollowCause,
        /// Squares with a white piece on the physical board (PDN numbers).
        white: Vec<u32>,
        /// Squares with a black piece.
        black: Vec<u32>,
        /// Squares with a king.
        kings: Vec<u32>,
        /// Squares to empty.
        to_clear: Vec<u32>,
        /// Pieces to put down.
        to_fill: Vec<BoardPiece>,
    },
    /// The board shows the official position again after a [`EventKind::BoardOutOfStep`]:
    /// its lifts and releases are moves again.
    BoardInStep,
    /// The last captured piece is off the board (RU 1.5.13).
    RemovalComplete {
        /// The side that captured.
        side: Color,
    },
    /// A draw offer.
    DrawOffered {
        /// The side offering.
        side: Color,
        /// When in the move it came.
        timing: OfferTiming,
    },
    /// An answer to the pending offer (a move by the answering side declines it).
    DrawOfferAnswered {
        /// The side answering.
        side: Color,
        /// The answer.
        response: OfferResponse,
        /// Whether the answer was a move rather than words (RU 1.9.3).
        by_move: bool,
    },
    /// A draw claim.
    ClaimMade {
        /// The side claiming.
        side: Color,
        /// What about.
        kind: ClaimKind,
        /// The written move, not played (full notation).
        written_move: Option<String>,
        /// Whether the judge's own check finds the claim correct.
        correct: bool,
    },
    /// The pending claim was decided.
    ClaimDecided {
        /// Whether it was upheld.
        upheld: bool,
        /// The arbiter's words, if an arbiter ruled and gave a reason.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        reason: Option<String>,
    },
    /// An irregularity: the official position stays at the last legal one.
    Irregularity {
        /// The side at fault.
        side: Color,
        /// What.
        kind: IrregularityKind,
        /// In words.
        detail: String,
        /// The piece the offender must now move, if any (RU: a wrong move is retaken
        /// with the same piece if it can move; RU 1.4.7 for a touched piece).
        retake_with: Option<u32>,
        /// The squares involved (PDN numbers), for a display to highlight: where the
        /// offending piece came from and went, the piece touched, the pieces missing.
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        squares: Vec<u32>,
    },
    /// An irregularity was ruled on, or the board was put right.
    IrregularityResolved {
        /// Stands or corrected; `None` when the board itself was put back.
        ruling: Option<Ruling>,
        /// The seq of the `Irregularity` resolved. `None` only in logs written while one
        /// irregularity at most was outstanding: it resolved every outstanding one.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        irregularity_seq: Option<u64>,
        /// The official position afterwards (FEN).
        fen: String,
        /// The arbiter's words, if an arbiter ruled and gave a reason.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        reason: Option<String>,
    },
    /// A warning to a player.
    Warning {
        /// The side warned.
        side: Color,
        /// Why.
        reason: String,
    },
    /// A move-count draw condition was met and referred to the arbiter.
    DrawConditionReached,
    /// The English 40-move count started.
    FortyMoveCountStarted {
        /// The side that must show a win.
        side: Color,
    },
    /// The arbiter marked a player absent (T 5): if the side to move has not acted when
    /// the default time passes either, both lose.
    MarkedAbsent {
        /// The side marked.
        side: Color,
    },
    /// The arbiter set up a position; the history starts again from it.
    PositionSet {
        /// The position.
        fen: String,
        /// The arbiter's words, if given.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        reason: Option<String>,
    },
    /// The service was down between two instants; by default the time is not charged.
    Outage {
        /// Last instant known before the outage.
        from_ms: u64,
        /// Restart instant.
        until_ms: u64,
        /// Whether the side on move was charged the time.
        charged: bool,
        /// What measured its length (`None` in logs written before it was recorded).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        measured: Option<OutageMeasure>,
    },
    /// The game ended (or, after the end, an arbiter corrected the result).
    GameEnded {
        /// The result.
        outcome: Outcome,
        /// Why.
        reason: EndReason,
        /// The arbiter's words, if an arbiter decided.
        note: Option<String>,
    },
}
