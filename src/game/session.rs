//! The session's state; the fold that rebuilds it from events is in `apply.rs`.

use std::sync::Arc;

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

use super::command::{Actor, BoardHealth, ClaimKind, Outcome};
use super::error::{GameError, ReplayError};
use super::event::{EndReason, EventKind, GameEvent, IrregularityKind, Now, OfferTiming};
use super::note::{ClockReading, EventNote};
use super::settings::GameSettings;
use crate::clock::Clock;
use crate::history::History;
use crate::notation::fen::parse_fen;
use crate::notation::movetext::{MoveError, parse_move_among};
use crate::notation::square::square_number;
use crate::rules::{Color, Game, Move, Position, Setup, Square, Variant};

/// A pending draw offer.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Offer {
    /// The side that offered.
    pub by: Color,
    /// When in the move it came.
    pub timing: OfferTiming,
    /// Whether the answer was postponed until after the offerer's move (RU 1.9.5).
    pub postponed: bool,
    /// Plies played when it was made.
    pub ply: usize,
    /// The seq of the `DrawOffered` event.
    pub seq: u64,
}

/// A draw claim waiting for the arbiter (the claimant's clock runs, RU 1.9.2).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Claim {
    /// The claimant.
    pub by: Color,
    /// What about.
    pub kind: ClaimKind,
    /// The written move, not played.
    pub written_move: Option<String>,
    /// The judge's own finding.
    pub correct: bool,
    /// The seq of the `ClaimMade` event.
    pub seq: u64,
}

/// The end of the game.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct GameResult {
    /// The result.
    pub outcome: Outcome,
    /// Why.
    pub reason: EndReason,
    /// The rule that decided it.
    pub rule: Option<String>,
}

impl GameResult {
    /// The refusal of anything but an arbiter's correction once the game has this
    /// result: it names the rule that ended the game.
    pub(crate) fn refusal(&self) -> GameError {
        GameError::GameOver {
            rule: self.rule.clone(),
        }
    }
}

/// A warning given to a player.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct WarningRecord {
    /// The side warned.
    pub side: Color,
    /// Why.
    pub reason: String,
    /// The rule.
    pub rule: Option<String>,
    /// When (monotonic ms).
    pub at_ms: u64,
    /// The seq of the `Warning` event.
    pub seq: u64,
}

/// One move of the score sheet.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct MoveRecord {
    /// The side that moved.
    pub side: Color,
    /// Native notation, full path. Shared, so that copying a session (every command
    /// works on a copy) does not copy the score sheet's strings.
    pub notation: Arc<str>,
    /// When the move was made (monotonic ms).
    pub at_ms: u64,
    /// The mover's remaining time after the press, if timed and pressed.
    pub clock_ms: Option<u64>,
    /// The seq of the `MovePlayed` event.
    pub seq: u64,
    /// PDN squares from start to end.
    pub path: Arc<[u32]>,
    /// PDN squares captured, in capture order.
    pub captured: Arc<[u32]>,
    /// The position after the move (FEN).
    pub fen_after: Arc<str>,
    /// How long the mover thought, ms (see [`EventNote::time_spent_ms`]).
    pub spent_ms: u64,
    /// White's remaining time after the move (after its press, once pressed).
    pub white_ms: Option<u64>,
    /// Black's remaining time after the move (after its press, once pressed).
    pub black_ms: Option<u64>,
}

/// When a game was created, started and finished (UTC wall time of those events).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Stamps {
    /// The `GameCreated` event's time.
    pub created: DateTime<Utc>,
    /// The `GameStarted` event's time.
    pub started: Option<DateTime<Utc>>,
    /// The `GameEnded` event's time.
    pub finished: Option<DateTime<Utc>>,
}

/// An irregularity not yet put right.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Outstanding {
    /// The side at fault.
    pub side: Color,
    /// What.
    pub kind: IrregularityKind,
    /// The seq of the `Irregularity` event.
    pub seq: u64,
    /// The rule broken (the event's rule).
    #[serde(default)]
    pub rule: Option<String>,
    /// The squares involved (the event's), PDN numbers.
    #[serde(default)]
    pub squares: Vec<u32>,
}

/// The physical board as the judge believes it stands, and what brings it to the
/// official position.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct BoardView {
    /// Squares with a white piece (PDN numbers, increasing).
    pub white: Vec<u32>,
    /// Squares with a black piece.
    pub black: Vec<u32>,
    /// Squares with a king.
    pub kings: Vec<u32>,
    /// The piece in a player's hand, if any.
    pub in_hand: Option<InHand>,
    /// Captured pieces still to be lifted, in capture order.
    pub pending_removal: Vec<u32>,
    /// True when the board's lifts and releases are judged as moves: it shows the
    /// official position (or the move in progress on it). False while it must catch up
    /// (after a `BoardOutOfStep`) or be put back after an irregularity on the board.
    pub in_step: bool,
    /// While not in step: squares to empty.
    pub to_clear: Vec<u32>,
    /// While not in step: pieces to put down.
    pub to_fill: Vec<super::event::BoardPiece>,
}

/// A piece in hand on the physical board.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct InHand {
    /// Where it was lifted (PDN number).
    pub from: u32,
    /// Its colour.
    pub side: Color,
    /// Whether it is a king.
    pub king: bool,
}

/// The electronic board bound to a game and how it is doing.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct BoardStatus {
    /// The board's hardware id.
    pub board_id: String,
    /// Its state.
    pub health: BoardHealth,
    /// When it entered that state (wall clock).
    pub since: DateTime<Utc>,
}

/// A piece in a player's hand on an electronic board.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Hand {
    pub from: Square,
    pub color: Color,
    pub king: bool,
    pub placements: Vec<Square>,
}

/// Touch-move bookkeeping (RU 1.4.7, 1.4.9).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub(super) struct Touch {
    /// The piece the side to move must move.
    pub bound: Option<Square>,
    /// The side that announced "I adjust" on its turn.
    pub adjusting: Option<Color>,
    /// Touches of immovable pieces per side (English rule).
    pub immovable: [u32; 2],
}

/// One game's judge: the official position, the clock, and every procedure in progress.
///
/// Its state is exactly the fold of its events: [`Session::replay`] of the events that
/// [`Session::handle`] and [`Session::tick`] returned gives an equal session.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Session {
    pub(super) settings: GameSettings,
    pub(super) seq: u64,
    pub(super) last_ms: u64,
    pub(super) started: bool,
    pub(super) game: Game,
    pub(super) clock: Option<Clock>,
    pub(super) awaiting_press: Option<Color>,
    pub(super) offer: Option<Offer>,
    pub(super) offer_barred: Option<Color>,
    pub(super) claim: Option<Claim>,
    pub(super) result: Option<GameResult>,
    pub(super) warnings: History<WarningRecord>,
    pub(super) touch: Touch,
    pub(super) hand: Option<Hand>,
    pub(super) physical: Setup,
    pub(super) pending_removal: Vec<Square>,
    /// Irregularities not yet ruled on or cleared, in the order flagged.
    pub(super) irregularities: Vec<Outstanding>,
    /// The board must catch up with the official position (a `BoardOutOfStep` not yet
    /// followed by `BoardInStep`).
    pub(super) behind: bool,
    /// An electronic board has spoken in this game (bound, or sent input): the judge
    /// keeps its picture of the physical board apart from the official position.
    pub(super) tracked: bool,
    /// The bound board, once one was bound.
    pub(super) board: Option<BoardStatus>,
    pub(super) referred: Vec<String>,
    pub(super) moves: History<MoveRecord>,
    pub(super) time_called: Option<Color>,
    pub(super) stamps: Stamps,
    /// When the side to move's turn began (monotonic ms): the time spent on an untimed
    /// move is counted from here.
    pub(super) turn_since_ms: u64,
    /// When the game started (monotonic ms): the default time counts from here (T 5).
    pub(super) started_ms: Option<u64>,
    /// Which sides have acted since the start (a move, a press, an offer, an answer, a
    /// claim, anything through their app), by [`Color::index`]: T 5's presence.
    pub(super) acted: [bool; 2],
    /// Which sides the arbiter marked absent (T 5), by [`Color::index`].
    pub(super) absent: [bool; 2],
    /// FENs already written, each with the position it is of: the start position's, and
    /// the official position's after the last move (from the move's `fen_after`), so a
    /// reply does not write them again.
    pub(super) fens: FenCache,
}

/// The FENs a [`Session`] keeps (see `Session::fens`); each is used only while its
/// position is the one asked for, so the cache never changes what a view shows.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct FenCache {
    pub(super) start: (Position, Arc<str>),
    pub(super) official: Option<(Position, Arc<str>)>,
}

impl FenCache {
    /// The FEN of `pos`: a kept one when it is of `pos`, else written now.
    fn of(&self, pos: &Position) -> Arc<str> {
        match &self.official {
            Some((p, fen)) if p == pos => fen.clone(),
            _ if self.start.0 == *pos => self.start.1.clone(),
            _ => Arc::from(crate::notation::write_fen(pos)),
        }
    }
}

impl Session {
    /// Creates a game: checks the settings and start position and returns the session with
    /// its first event (`GameCreated`, seq 1).
    ///
    /// # Errors
    /// A bad start FEN.
    pub fn create(
        settings: GameSettings,
        start_fen: Option<&str>,
        actor: Actor,
        now: Now,
    ) -> Result<(Session, GameEvent), GameError> {
        let start = match start_fen {
            Some(fen) => parse_fen(fen, settings.variant).map_err(GameError::Fen)?,
            None => Position::start(settings.variant),
        };
        // A game cannot start from a position that is already over (RU 1.8).
        if let Some(o) = crate::rules::outcome(&start) {
            return Err(GameError::Invalid(format!(
                "start_fen: {}; a game cannot start from it ({})",
                o.describe(start.turn()),
                o.rule
            )));
        }
        let event = GameEvent {
            seq: 1,
            at: now,
            actor,
            rule: None,
            board_ms: None,
            kind: EventKind::GameCreated {
                settings,
                start_fen: crate::notation::write_fen(&start),
            },
        };
        let session = Session::replay(std::slice::from_ref(&event))
            .map_err(|e| GameError::Invalid(e.to_string()))?;
        Ok((session, event))
    }

    fn from_created(event: &GameEvent) -> Result<Session, ReplayError> {
        let bad = |message: String| ReplayError {
            seq: event.seq,
            message,
        };
        let EventKind::GameCreated {
            settings,
            start_fen,
        } = &event.kind
        else {
            return Err(bad("the first event is not GameCreated".into()));
        };
        if event.seq != 1 {
            return Err(bad("GameCreated is not seq 1".into()));
        }
        let start = parse_fen(start_fen, settings.variant).map_err(|e| bad(e.to_string()))?;
        Ok(Session {
            settings: settings.clone(),
            seq: 1,
            last_ms: event.at.mono_ms,
            started: false,
            game: Game::new(start, settings.edition),
            clock: settings.time_control.clone().map(Clock::new),
            awaiting_press: None,
            offer: None,
            offer_barred: None,
            claim: None,
            result: None,
            warnings: History::new(),
            touch: Touch::default(),
            hand: None,
            physical: start.to_setup(),
            pending_removal: Vec::new(),
            irregularities: Vec::new(),
            behind: false,
            tracked: false,
            board: None,
            referred: Vec::new(),
            moves: History::new(),
            time_called: None,
            stamps: Stamps {
                created: event.at.wall,
                started: None,
                finished: None,
            },
            turn_since_ms: event.at.mono_ms,
            started_ms: None,
            acted: [false; 2],
            absent: [false; 2],
            fens: FenCache {
                start: (start, Arc::from(crate::notation::write_fen(&start))),
                official: None,
            },
        })
    }

    /// The official position's FEN.
    pub fn official_fen(&self) -> Arc<str> {
        self.fens.of(self.position())
    }

    /// The start position's FEN.
    pub fn start_fen(&self) -> Arc<str> {
        self.fens.of(self.game.start())
    }

    /// Rebuilds a session from its recorded events.
    ///
    /// # Errors
    /// [`ReplayError`] naming the first event that does not apply.
    pub fn replay(events: &[GameEvent]) -> Result<Session, ReplayError> {
        let first = events.first().ok_or(ReplayError {
            seq: 0,
            message: "empty log".into(),
        })?;
        let mut session = Session::from_created(first)?;
        for e in &events[1..] {
            session.apply(e)?;
        }
        Ok(session)
    }

    /// Rebuilds a session from its recorded events, with the note of each event (the
    /// same notes [`Session::handled`] gave when the events were decided).
    ///
    /// # Errors
    /// As [`Session::replay`].
    pub fn replay_noted(events: &[GameEvent]) -> Result<(Session, Vec<EventNote>), ReplayError> {
        let first = events.first().ok_or(ReplayError {
            seq: 0,
            message: "empty log".into(),
        })?;
        let mut session = Session::from_created(first)?;
        let mut notes = Vec::with_capacity(events.len());
        notes.push(session.note_now(first.at.mono_ms));
        notes.extend(session.apply_all_noted(&events[1..])?);
        Ok((session, notes))
    }

    /// The note every event gets: plies and clocks at `now`.
    pub(super) fn note_now(&self, now: u64) -> EventNote {
        EventNote {
            plies: self.moves.len() as u32,
            clock: self.clock.as_ref().map(|c| ClockReading::of(c, now)),
            ..EventNote::default()
        }
    }

    /// The score sheet's number of the move played at ply `ply` (0-based) from the
    /// game's start position.
    /// The move number of the score sheet's `ply`-th move (from 0): a number is a move
    /// of the variant's first player and the answer of its second (Black first in
    /// English and pool), counted from the start position.
    pub(super) fn move_number(&self, ply: usize) -> u32 {
        ((ply + usize::from(self.second_first())) / 2 + 1) as u32
    }

    /// Whether the start position has the variant's second player to move.
    pub(super) fn second_first(&self) -> bool {
        self.game.start().turn() != self.variant().rules().first_to_move
    }

    /// The game's settings.
    pub fn settings(&self) -> &GameSettings {
        &self.settings
    }

    /// The variant.
    pub fn variant(&self) -> Variant {
        self.settings.variant
    }

    /// The last event's seq.
    pub fn last_seq(&self) -> u64 {
        self.seq
    }

    /// The instant (monotonic ms) of the last event.
    pub fn last_ms(&self) -> u64 {
        self.last_ms
    }

    /// The official position.
    pub fn position(&self) -> &Position {
        self.game.position()
    }

    /// The game record with its draw counters.
    pub fn game(&self) -> &Game {
        &self.game
    }

    /// The clock, if the game is timed.
    pub fn clock(&self) -> Option<&Clock> {
        self.clock.as_ref()
    }

    /// The result, once the game is over.
    pub fn result(&self) -> Option<&GameResult> {
        self.result.as_ref()
    }

    /// Whether the game has started.
    pub fn started(&self) -> bool {
        self.started
    }

    /// The pending draw offer.
    pub fn offer(&self) -> Option<&Offer> {
        self.offer.as_ref()
    }

    /// The claim waiting for the arbiter.
    pub fn claim(&self) -> Option<&Claim> {
        self.claim.as_ref()
    }

    /// Warnings so far.
    pub fn warnings(&self) -> &History<WarningRecord> {
        &self.warnings
    }

    /// The score sheet.
    pub fn moves(&self) -> &History<MoveRecord> {
        &self.moves
    }

    /// When the game was created, started and finished.
    pub fn stamps(&self) -> Stamps {
        self.stamps
    }

    /// The side that has moved and not yet pressed its clock.
    pub fn awaiting_press(&self) -> Option<Color> {
        self.awaiting_press
    }

    /// The irregularities not yet ruled on or cleared, in the order flagged.
    pub fn irregularities(&self) -> &[Outstanding] {
        &self.irregularities
    }

    /// Whether an irregularity on the board is outstanding (see
    /// [`super::IrregularityKind::on_board`]): the board's moves wait for it.
    pub(super) fn board_irregular(&self) -> bool {
        self.irregularities.iter().any(|i| i.kind.on_board())
    }

    /// Whether the board's lifts and releases are steps back to the official position
    /// rather than moves.
    pub(super) fn catching_up(&self) -> bool {
        self.behind || self.board_irregular()
    }

    /// The physical board as the judge believes it stands.
    pub fn board_view(&self) -> BoardView {
        let v = self.variant();
        let numbers = |bb| crate::notation::square::square_numbers(bb, v);
        let (bw, bb) = (self.physical.white, self.physical.black);
        let in_step = !self.catching_up();
        let (to_clear, to_fill) = if in_step {
            (Vec::new(), Vec::new())
        } else {
            self.to_reach_official(&self.physical)
        };
        BoardView {
            white: numbers(bw),
            black: numbers(bb),
            kings: numbers(self.physical.kings),
            in_hand: self.hand.as_ref().map(|h| InHand {
                from: square_number(h.from, v),
                side: h.color,
                king: h.king,
            }),
            pending_removal: self.pending_removal(),
            in_step,
            to_clear,
            to_fill,
        }
    }

    /// What takes a board showing `physical` to the official position: the squares to
    /// empty (a piece where the official position has none, or one of the other colour)
    /// and the pieces to put down, each list in increasing square order.
    pub(super) fn to_reach_official(
        &self,
        physical: &Setup,
    ) -> (Vec<u32>, Vec<super::event::BoardPiece>) {
        let v = self.variant();
        let p = self.position();
        let (ow, ob) = (p.pieces(Color::White), p.pieces(Color::Black));
        let (bw, bb) = (physical.white, physical.black);
        let fill = (ow & !bw) | (ob & !bb);
        let mut to_fill: Vec<super::event::BoardPiece> = v
            .geometry()
            .order
            .iter()
            .filter(|s| fill & s.bit() != 0)
            .map(|&s| super::event::BoardPiece {
                square: square_number(s, v),
                side: if ow & s.bit() != 0 {
                    Color::White
                } else {
                    Color::Black
                },
                king: p.kings() & s.bit() != 0,
            })
            .collect();
        to_fill.sort_by_key(|b| b.square);
        let clear = (bw & !ow) | (bb & !ob);
        (crate::notation::square::square_numbers(clear, v), to_fill)
    }

    /// Whether the physical board's occupancy (colours, not crowns: a board need not
    /// sense them) is the official position's, with no captured piece left on it.
    pub(super) fn occupancy_matches(&self) -> bool {
        let p = self.position();
        self.pending_removal.is_empty()
            && self.physical.white == p.pieces(Color::White)
            && self.physical.black == p.pieces(Color::Black)
    }

    /// Captured pieces still to be lifted off an electronic board, in capture order.
    pub fn pending_removal(&self) -> Vec<u32> {
        self.pending_removal
            .iter()
            .map(|&s| square_number(s, self.variant()))
            .collect()
    }

    /// The side whose turn it is on the clock: the mover until it presses.
    pub fn clock_side(&self) -> Color {
        self.awaiting_press.unwrap_or(self.position().turn())
    }

    /// The instant the server should wake this game up (a "Time!" call, a period, a flag,
    /// the default time, T 5).
    pub fn next_deadline(&self) -> Option<u64> {
        if self.result.is_some() {
            return None;
        }
        let clock = self
            .clock
            .as_ref()
            .and_then(|c| c.next_deadline(self.last_ms));
        match (clock, self.default_deadline()) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
    }

    /// The instant the default time passes (T 5), while it can still decide the game: the
    /// game started with a default time, has no result, and the side to move has not
    /// acted (once it has, the default time decides nothing: the side to move at that
    /// instant is the one that is judged, and a command after it is decided only after
    /// the default is).
    pub fn default_deadline(&self) -> Option<u64> {
        let start = self.started_ms?;
        let time = self.settings.default_time_ms;
        (time > 0 && self.result.is_none() && !self.acted[self.clock_side().index()])
            .then(|| start.saturating_add(time))
    }

    /// Whether a side has acted since the start (T 5's presence).
    pub fn has_acted(&self, side: Color) -> bool {
        self.acted[side.index()]
    }

    /// Whether the arbiter marked a side absent (T 5).
    pub fn marked_absent(&self, side: Color) -> bool {
        self.absent[side.index()]
    }

    /// Resolves a written move against the current position's legal moves (generated
    /// once, when the position arose). Text that is not a move at all (malformed, a
    /// square that does not exist) is refused as input naming `at`, the request's field
    /// (`move`, `written_move`); a move the position does not allow is an illegal move.
    pub(super) fn parse_move(&self, at: &str, text: &str) -> Result<Move, GameError> {
        parse_move_among(text, self.position(), self.game.position_moves_all_paths()).map_err(|e| {
            match e {
                MoveError::Malformed(_) | MoveError::Square(_) => {
                    GameError::Invalid(format!("{at}: {e}"))
                }
                _ => GameError::IllegalMove(e),
            }
        })
    }

    /// Finds the move with this path of PDN squares in the current position.
    pub(super) fn move_by_path(&self, path: &[u32]) -> Option<Move> {
        let v = self.variant();
        self.game
            .position_moves_all_paths()
            .iter()
            .find(|m| {
                m.path()
                    .map(|s| square_number(s, v))
                    .eq(path.iter().copied())
            })
            .copied()
    }

    /// A PDN square number of this variant.
    pub(super) fn square(&self, n: u32) -> Result<Square, String> {
        let v = self.variant();
        v.geometry()
            .from_number(n, v.rules().mirrored)
            .ok_or_else(|| format!("square {n} out of range for {v}"))
    }

    /// What stands on a square of the physical board.
    pub(super) fn physical_piece(&self, sq: Square) -> Option<(Color, bool)> {
        let king = self.physical.kings & sq.bit() != 0;
        if self.physical.white & sq.bit() != 0 {
            Some((Color::White, king))
        } else if self.physical.black & sq.bit() != 0 {
            Some((Color::Black, king))
        } else {
            None
        }
    }

    /// Whether the piece on `sq` has a legal move in the official position.
    pub(super) fn has_move_from(&self, sq: Square) -> bool {
        self.game
            .position_moves_all_paths()
            .iter()
            .any(|m| m.from() == sq)
    }
}
