//! What a display or an app shows: derived from the events alone.

use serde::{Deserialize, Serialize};

use super::error::ReplayError;
use super::event::GameEvent;
use super::note::ClockReading;
use super::session::{
    BoardStatus, BoardView, Claim, GameResult, MoveRecord, Offer, Outstanding, Session, Stamps,
    WarningRecord,
};
use super::settings::GameSettings;
use crate::rules::{Color, Variant};

/// A game as people see it at an instant.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct GameView {
    /// The variant.
    pub variant: Variant,
    /// Whether the game has started.
    pub started: bool,
    /// The official position.
    pub fen: String,
    /// The side to move on the board.
    pub side_to_move: Color,
    /// The side whose clock runs (the mover until it presses).
    pub clock_side: Color,
    /// The score sheet with clock times.
    pub moves: Vec<MoveRecord>,
    /// White's remaining time, ms (`None` untimed).
    pub white_ms: Option<u64>,
    /// Black's remaining time, ms.
    pub black_ms: Option<u64>,
    /// The pending draw offer.
    pub offer: Option<Offer>,
    /// The claim waiting for the arbiter.
    pub claim: Option<Claim>,
    /// Warnings given.
    pub warnings: Vec<WarningRecord>,
    /// The irregularities not yet ruled on or cleared, in the order flagged.
    #[serde(default)]
    pub irregularities: Vec<Outstanding>,
    /// The physical board as the judge believes it stands.
    #[serde(default)]
    pub board_view: BoardView,
    /// Captured pieces still on an electronic board (PDN squares, capture order).
    pub pending_removal: Vec<u32>,
    /// The result.
    pub result: Option<GameResult>,
    /// The last event's seq.
    pub last_seq: u64,
    /// The electronic board bound to the game, once one was.
    #[serde(default)]
    pub board: Option<BoardStatus>,
}

impl GameView {
    /// The view of a recorded game at monotonic instant `now_ms`.
    ///
    /// # Errors
    /// The log does not replay.
    pub fn from_events(events: &[GameEvent], now_ms: u64) -> Result<GameView, ReplayError> {
        Ok(Session::replay(events)?.view(now_ms))
    }
}

/// A game as a listing shows it, without its score sheet: everything `GetGame` gives but
/// the moves, in a form that can be stored beside the log (the hub writes it with every
/// append, so finished games are listed without replaying them).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct GameSummary {
    /// The view, its `moves` left empty.
    pub view: GameView,
    /// The settings.
    pub settings: GameSettings,
    /// The start position (FEN).
    pub start_fen: String,
    /// Both clocks at the instant summarised (`None` untimed).
    pub clock: Option<ClockReading>,
    /// When the game was created, started and finished.
    pub stamps: Stamps,
    /// Moves on the score sheet.
    pub move_count: u32,
    /// Whether the start position has the variant's second player to move (Black in
    /// most variants, White in English and pool, where Black starts): the first move
    /// is then numbered `1...` (for move numbers).
    #[serde(alias = "black_first")]
    pub second_first: bool,
}

impl Session {
    /// The game's summary at monotonic instant `now_ms`.
    pub fn summarize(&self, now_ms: u64) -> GameSummary {
        let now = now_ms.max(self.last_ms);
        GameSummary {
            view: self.summary(now),
            settings: self.settings.clone(),
            start_fen: self.start_fen().to_string(),
            clock: self.clock.as_ref().map(|c| ClockReading::of(c, now)),
            stamps: self.stamps,
            move_count: self.moves.len() as u32,
            second_first: self.second_first(),
        }
    }

    /// The view of this game at monotonic instant `now_ms`.
    pub fn view(&self, now_ms: u64) -> GameView {
        self.view_with(now_ms, true)
    }

    /// The view without the score sheet (`moves` left empty): what a command's reply
    /// needs, at a cost that does not grow with the game's length.
    pub fn summary(&self, now_ms: u64) -> GameView {
        self.view_with(now_ms, false)
    }

    fn view_with(&self, now_ms: u64, moves: bool) -> GameView {
        let now = now_ms.max(self.last_ms);
        let reading = self.clock.as_ref().map(|c| c.reading(now));
        let clock = |side| reading.map(|r| r.remaining(side));
        GameView {
            variant: self.variant(),
            started: self.started,
            fen: self.official_fen().to_string(),
            side_to_move: self.position().turn(),
            clock_side: self.clock_side(),
            moves: if moves {
                self.moves.iter().cloned().collect()
            } else {
                Vec::new()
            },
            white_ms: clock(Color::White),
            black_ms: clock(Color::Black),
            offer: self.offer,
            claim: self.claim.clone(),
            warnings: self.warnings.iter().cloned().collect(),
            irregularities: self.irregularities.clone(),
            board_view: self.board_view(),
            pending_removal: self.pending_removal(),
            result: self.result.clone(),
            last_seq: self.seq,
            board: self.board.clone(),
        }
    }
}
