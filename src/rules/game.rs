//! A game in progress: the position, the moves played, and the draw bookkeeping of the
//! variant (RU 1.9.1 (c)–(g) and the 2013 edition 7.2.x, FMJD, English, Italian (FID),
//! pool (APCA), giveaway, antidraughts, Turkish, Frisian, corners), the one move rule that
//! depends on history rather than on the position: the Frisian limit on moving the same
//! king (see [`Game::legal_moves`]), and the corners race, whose win, equal-move and
//! anti-stalling rules depend on the moves each side has made (see [`Game::outcome`]).
//!
//! Counting decisions (RULES.md, "Decision on counting"): "N moves" means N moves by each
//! side; "its 15th / 5th move" counts the stronger side's moves, the first being its first
//! move after the balance of forces arose. A capture or a promotion changes the balance
//! and restarts every counter it affects, except the FMJD 16- and 5-move counts, which
//! follow their material class (RULES.md, FMJD draws, "Counting"): each starts with the
//! move that brings the game into its class and is not restarted by a capture or a
//! promotion that keeps the game inside it.

use std::sync::Arc;

use super::geometry::Square;
use super::movegen::dedup;
use super::mv::Move;
use super::position::{PlayError, Position};
use super::square_set::squares_of;
use super::variant::{DrawRules, Removal, WinCondition};
use super::{Bitboard, Color};
use crate::history::History;

/// Which edition of the Russian rules decides draws.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Hash, Default, serde::Serialize, serde::Deserialize,
)]
#[serde(rename_all = "snake_case")]
pub enum RuleEdition {
    /// RU 1.9.1 (c)–(g), the edition RULES.md numbers.
    #[default]
    Classic,
    /// The 2013 edition, section 7.2.
    Edition2013,
}

/// How a draw condition takes effect.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum DrawMode {
    /// The game is drawn by the rule itself (move-count rules).
    Automatic,
    /// A player may claim it (repetition, RU 1.9.2).
    Claimable,
    /// The game is over by its own winning rule, drawn, for the reason given (corners:
    /// both sides filled their target corner with the same number of moves). Not a
    /// move-count rule: the event's choice to refer move-count draws to the arbiter does
    /// not apply.
    Final(EndReason),
}

/// A draw rule that applies to the current position.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct DrawVerdict {
    /// The rule, as RULES.md numbers it (`RU 1.9.1(f)`, `FMJD 25 king moves`, …).
    pub rule: &'static str,
    /// Automatic or claimable.
    pub mode: DrawMode,
}

/// The first ply at which a draw rule applied in a game ([`Game::draw_history`]).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct DrawArising {
    /// Plies played when the rule first applied (0: the start position).
    pub ply: usize,
    /// The rule and how it takes effect.
    pub verdict: DrawVerdict,
}

/// Why a game ended by the position itself.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum EndReason {
    /// The side to move has no pieces.
    NoPieces,
    /// The side to move has pieces but no legal move.
    NoMoves,
    /// Corners: the winner's pieces fill the loser's start squares (after the equal-move
    /// rule gave the loser its last move where it was due).
    CornerFilled,
    /// Corners: the loser had made more than the allowed number of moves with a piece still
    /// (or again) on one of its own start squares.
    HomeNotLeft,
}

/// The end of a game decided by the board (RU 1.8; reversed in giveaway).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Outcome {
    /// The winner.
    pub winner: Color,
    /// Why.
    pub reason: EndReason,
    /// The rule.
    pub rule: &'static str,
}

impl Outcome {
    /// Why the game is over, as a refusal says it (`turn`: the side to move).
    pub fn describe(&self, turn: Color) -> String {
        match self.reason {
            EndReason::NoPieces => format!("{turn}, to move, has no piece"),
            EndReason::NoMoves => format!("{turn}, to move, has no legal move"),
            EndReason::CornerFilled | EndReason::HomeNotLeft => {
                "the race is already decided".to_string()
            }
        }
    }
}

/// The outcome of a position by itself: the side to move with no piece or no move loses
/// (wins, in giveaway variants).
pub fn outcome(pos: &Position) -> Option<Outcome> {
    outcome_given(pos, || pos.count_moves(true) != 0)
}

/// [`outcome`], with whether the side to move has a legal move already known.
fn outcome_given(pos: &Position, has_move: impl FnOnce() -> bool) -> Option<Outcome> {
    let rules = pos.variant().rules();
    let reason = if pos.pieces(pos.turn()) == 0 {
        EndReason::NoPieces
    } else if !has_move() {
        EndReason::NoMoves
    } else {
        return None;
    };
    let winner = match rules.win {
        WinCondition::Normal | WinCondition::FillCorner { .. } => !pos.turn(),
        WinCondition::Giveaway => pos.turn(),
    };
    Some(Outcome {
        winner,
        reason,
        rule: rules.win_rule,
    })
}

/// Men and kings of one side.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Force {
    men: u32,
    kings: u32,
}

impl Force {
    fn of(pos: &Position, color: Color) -> Force {
        Force {
            men: pos.men(color).count_ones(),
            kings: pos.kings_of(color).count_ones(),
        }
    }
    fn total(self) -> u32 {
        self.men + self.kings
    }
    fn lone_king(self) -> bool {
        self.men == 0 && self.kings == 1
    }
}

/// The move counters of the draw rules, kept beside the position.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct DrawCounters {
    /// Moves made by each side since the balance of forces last changed (capture or
    /// promotion) or since the record began.
    pub moves_since_change: [u32; 2],
    /// Consecutive plies made with kings only, without a capture (RU 1.9.1(f)).
    pub king_only_plies: u32,
    /// Whether, since the balance last changed, a lone king left the main road
    /// (RU 1.9.1(e), 7.2.7).
    pub left_main_road: bool,
    /// The English 40-move count: the side that must show a win, and its moves so far.
    pub forty_moves: Option<(Color, u32)>,
    /// FMJD 16 moves / FMJD 5 moves: moves made by each side since the move that brought
    /// the game into its current material class (three pieces with a king against a lone
    /// king; two pieces or one with a king against a lone king), or since the record
    /// began. A capture or promotion that keeps the game in the same class does not
    /// restart it; entering another class (16-move into 5-move) does.
    pub class_moves: [u32; 2],
}

/// The material classes of the FMJD move-count draws.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum FmjdClass {
    /// Three pieces, at least one a king, against a lone king: FMJD 16 moves.
    Sixteen,
    /// Two pieces or one, at least one a king, against a lone king: FMJD 5 moves.
    Five,
}

impl FmjdClass {
    /// The class of `pos`, if it is in one.
    fn of(pos: &Position) -> Option<FmjdClass> {
        let forces = [Force::of(pos, Color::White), Force::of(pos, Color::Black)];
        Color::ALL.into_iter().find_map(|weak| {
            let strong = forces[(!weak).index()];
            if !forces[weak.index()].lone_king() || strong.kings == 0 {
                return None;
            }
            match strong.total() {
                3 => Some(FmjdClass::Sixteen),
                1..=2 => Some(FmjdClass::Five),
                _ => None,
            }
        })
    }
}

/// Frisian: the non-capturing moves one side has just made in a row with one king.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct KingMoveRun {
    /// Where that king stands now.
    pub king: Option<Square>,
    /// How many moves in a row it has made without capturing.
    pub moves: u8,
}

/// A game from a start position: the moves played, every position reached, and the draw
/// counters.
///
/// The cost of a move does not grow with the game: the histories are [`History`]s (a copy
/// shares them), the legal moves of the current position are generated once, when it
/// arises, and repetitions are found by Zobrist hash ([`Position::hash`]), comparing
/// positions only when the hashes match, among the positions since the last capture or
/// promotion (none before can be equal, see [`Game::repetitions`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Game {
    edition: RuleEdition,
    positions: History<Position>,
    /// The Zobrist hash of each position, same index.
    hashes: History<u64>,
    moves: History<Move>,
    counters: DrawCounters,
    king_runs: [KingMoveRun; 2],
    /// Moves made by each side.
    made: [u32; 2],
    /// The index of the first position that can equal a later one: the one after the last
    /// capture or promotion (0 in towers, where a capture keeps every piece on the board).
    reversible_from: usize,
    /// The legal moves of the current position, every capture path kept apart
    /// ([`Position::legal_moves_all_paths`]), generated when the position arose.
    legal: Arc<[Move]>,
}

/// What a capture or a promotion lowers for good (outside towers): the pieces on the
/// board and the men among them. Positions with different marks are different.
fn material_mark(pos: &Position) -> (u32, u32) {
    let all = pos.pieces(Color::White) | pos.pieces(Color::Black);
    (all.count_ones(), (all & !pos.kings()).count_ones())
}

impl Game {
    /// A game starting at `start`.
    pub fn new(start: Position, edition: RuleEdition) -> Game {
        let mut game = Game {
            edition,
            positions: std::iter::once(start).collect(),
            hashes: std::iter::once(start.hash()).collect(),
            moves: History::new(),
            counters: DrawCounters::default(),
            king_runs: [KingMoveRun::default(); 2],
            made: [0; 2],
            reversible_from: 0,
            legal: start.legal_moves_all_paths().into(),
        };
        game.counters.left_main_road = !game.lone_king_on_road();
        game
    }

    /// The current position.
    pub fn position(&self) -> &Position {
        self.positions
            .last()
            .expect("a game has at least its start position")
    }

    /// The start position.
    pub fn start(&self) -> &Position {
        &self.positions[0]
    }

    /// The moves played.
    pub fn moves(&self) -> &History<Move> {
        &self.moves
    }

    /// Every position so far, the start first.
    pub fn positions(&self) -> &History<Position> {
        &self.positions
    }

    /// The legal moves of the current position with every capture path kept apart, as
    /// [`Position::legal_moves_all_paths`] gives them (the Frisian [`Game::blocked_king`]
    /// not taken out): generated once, when the position arose.
    pub fn position_moves_all_paths(&self) -> &[Move] {
        &self.legal
    }

    /// The legal moves of the current position, different paths to the same result
    /// merged, as [`Position::legal_moves`] gives them (the [`Game::blocked_king`] not
    /// taken out), from the list generated when the position arose.
    pub fn position_moves(&self) -> Vec<Move> {
        let mut moves = self.legal.to_vec();
        // `Position::legal_moves` merges paths of captures only.
        if moves.first().is_some_and(Move::is_capture) {
            dedup(&mut moves, 0);
        }
        moves
    }

    /// The rule edition (Russian only).
    pub fn edition(&self) -> RuleEdition {
        self.edition
    }

    /// The draw counters.
    pub fn counters(&self) -> &DrawCounters {
        &self.counters
    }

    /// The run of non-capturing moves `side` has just made with one king (Frisian; always
    /// empty in other variants).
    pub fn king_move_run(&self, side: Color) -> KingMoveRun {
        self.king_runs[side.index()]
    }

    /// Sets the king-move run of `side`, for a game taken up from a recorded position
    /// (lidraughts writes it in its FEN). Ignored by variants without the limit.
    pub fn set_king_move_run(&mut self, side: Color, run: KingMoveRun) {
        if self
            .position()
            .variant()
            .rules()
            .same_king_move_limit
            .is_some()
        {
            self.king_runs[side.index()] = run;
        }
    }

    /// The king of the side to move that may not make a non-capturing move now: Frisian
    /// (Official Rules for Frisian Draughts 2011; lidraughts `Actor.scala`): a side that
    /// has men as well as kings may not move the same king more than three times in a row
    /// without capturing; after that, that king may only capture, or another piece moves.
    /// The limit does not apply to a side that has only kings.
    pub fn blocked_king(&self) -> Option<Square> {
        let pos = self.position();
        let limit = pos.variant().rules().same_king_move_limit?;
        let side = pos.turn();
        let run = self.king_runs[side.index()];
        let king = run.king?;
        (pos.men(side) != 0 && run.moves >= limit && pos.kings_of(side) & king.bit() != 0)
            .then_some(king)
    }

    /// The legal moves now: the position's moves (different paths to the same result
    /// merged), less the quiet moves of a [`Game::blocked_king`].
    pub fn legal_moves(&self) -> Vec<Move> {
        let mut moves = self.position_moves();
        if let Some(king) = self.blocked_king() {
            moves.retain(|m| m.is_capture() || m.from() != king);
        }
        moves
    }

    /// Plays a legal move and updates the counters.
    ///
    /// # Errors
    /// An illegal move changes nothing and is returned with the position; so is a quiet
    /// move of a [`Game::blocked_king`].
    pub fn play(&mut self, mv: &Move) -> Result<(), PlayError> {
        let before = *self.position();
        let after = self.after(mv)?;
        let mover = before.turn();
        let was_king = before.kings() & mv.from().bit() != 0;
        if before.variant().rules().same_king_move_limit.is_some() {
            let run = &mut self.king_runs[mover.index()];
            if was_king && !mv.is_capture() {
                run.moves = if run.king == Some(mv.from()) {
                    run.moves.saturating_add(1)
                } else {
                    1
                };
                run.king = Some(mv.to());
            } else {
                *run = KingMoveRun::default();
            }
            let theirs = &mut self.king_runs[(!mover).index()];
            if theirs
                .king
                .is_some_and(|k| mv.captured_set() & k.bit() != 0)
            {
                *theirs = KingMoveRun::default();
            }
        }
        let c = &mut self.counters;
        if mv.is_capture() || mv.promotes() {
            c.moves_since_change = [0, 0];
            c.left_main_road = false;
        } else {
            c.moves_since_change[mover.index()] += 1;
        }
        if mv.is_capture() || !was_king {
            c.king_only_plies = 0;
        } else {
            c.king_only_plies += 1;
        }
        if let Some((side, n)) = c.forty_moves.as_mut()
            && *side == mover
        {
            *n += 1;
        }
        // RULES.md, FMJD draws, "Counting": the count belongs to the material class; only a
        // move into another class starts it again.
        if FmjdClass::of(&before) == FmjdClass::of(&after) {
            c.class_moves[mover.index()] += 1;
        } else {
            c.class_moves = [0, 0];
        }
        self.made[mover.index()] += 1;
        if (mv.is_capture() || mv.promotes())
            && before.variant().rules().removal != Removal::UnderCapturer
        {
            self.reversible_from = self.positions.len();
        }
        self.positions.push(after);
        self.hashes.push(after.hash());
        self.moves.push(*mv);
        self.legal = after.legal_moves_all_paths().into();
        if !self.lone_king_on_road() {
            self.counters.left_main_road = true;
        }
        Ok(())
    }

    /// The position after a legal move, as [`Game::play`] would make it, without playing
    /// it.
    ///
    /// # Errors
    /// As [`Game::play`].
    pub fn after(&self, mv: &Move) -> Result<Position, PlayError> {
        let before = *self.position();
        let blocked = !mv.is_capture() && self.blocked_king() == Some(mv.from());
        if blocked || !self.legal.contains(mv) {
            return Err(PlayError {
                position: before,
                mv: *mv,
            });
        }
        let mut after = before;
        after.apply(mv);
        Ok(after)
    }

    /// How many times the current position (pieces and side to move) has occurred.
    ///
    /// Only positions with the same side to move since the last capture or promotion are
    /// looked at, by hash first: a capture takes a piece off the board for good and a
    /// promotion a man, so no earlier position has the same pieces (towers excepted, where
    /// every position is looked at).
    pub fn repetitions(&self) -> usize {
        self.occurrences_of_now().count()
    }

    /// Whether the current position has occurred at least `times` times, this one
    /// included (see [`Game::repetitions`]). The occurrences are looked for from the
    /// latest back and the look stops at the `times`-th: a king shuffle repeats every
    /// few plies, and counting them all walked the whole game at every move.
    pub fn repeated(&self, times: usize) -> bool {
        self.occurrences_of_now().take(times).count() >= times
    }

    /// Where the current position occurred (indexes into the positions), latest first:
    /// itself, then the earlier ones.
    fn occurrences_of_now(&self) -> impl Iterator<Item = usize> + '_ {
        let now = self.position();
        let hash = now.hash();
        let last = self.positions.len() - 1;
        self.hashes
            .iter()
            .rev()
            .take(self.positions.len() - self.reversible_from)
            .step_by(2)
            .enumerate()
            .filter(move |&(k, &h)| h == hash && self.positions[last - 2 * k] == *now)
            .map(move |(k, _)| last - 2 * k)
    }

    /// How many times `pos` has occurred in this game (found by hash, compared in full
    /// when the hashes match).
    pub fn occurrences(&self, pos: &Position) -> usize {
        let hash = pos.hash();
        // A position with no more pieces and men than the current one cannot be one from
        // before the last capture or promotion (see `Game::repetitions`).
        let (pieces, men) = material_mark(pos);
        let (now_pieces, now_men) = material_mark(self.position());
        let from = if pieces <= now_pieces && men <= now_men {
            self.reversible_from
        } else {
            0
        };
        self.hashes
            .iter()
            .enumerate()
            .skip(from)
            .filter(|&(i, &h)| h == hash && self.positions[i] == *pos)
            .count()
    }

    /// Starts the English 40-move count for `side` (the arbiter's decision on request).
    pub fn start_forty_move_count(&mut self, side: Color) {
        self.counters.forty_moves = Some((side, 0));
    }

    /// The decisive end of the game: by the board itself (no pieces, no moves), counting a
    /// [`Game::blocked_king`]'s moves out; in a race (corners) also a filled corner, after
    /// the equal-move rule, and the anti-stalling loss. The race's drawn end (both corners
    /// filled with equal moves) is a [`DrawMode::Final`] verdict of [`Game::draws`].
    pub fn outcome(&self) -> Option<Outcome> {
        let pos = self.position();
        if let WinCondition::FillCorner { leave_home_within } = pos.variant().rules().win
            && let Some(end) = self.race_outcome(leave_home_within)
        {
            return Some(end);
        }
        if let Some(end) = outcome_given(pos, || !self.legal.is_empty()) {
            return Some(end);
        }
        if self.blocked_king().is_some() && self.legal_moves().is_empty() {
            let side = pos.turn();
            return Some(Outcome {
                winner: !side,
                reason: EndReason::NoMoves,
                rule: "FR: no piece or no move loses (the blocked king may not move)",
            });
        }
        None
    }

    /// The moves each side has made in this game (White, Black).
    pub fn moves_made(&self) -> [u32; 2] {
        self.made
    }

    /// Whether `side`'s pieces stand on every start square of its opponent (corners).
    pub fn corner_filled(&self, side: Color) -> bool {
        let pos = self.position();
        let target = pos.variant().rules().start_men(!side);
        target != 0 && pos.pieces(side) & target == target
    }

    /// The decisive results of a race ([`WinCondition::FillCorner`]), after the last move.
    /// Sources: allforchildren.ru, "Игра в уголки" (see the `CORNERS` rules in
    /// `variant.rs`), rules 1-3.
    fn race_outcome(&self, leave_home_within: u32) -> Option<Outcome> {
        let first = self.start().turn();
        let second = !first;
        let made = self.moves_made();
        let (first_done, second_done) = (self.corner_filled(first), self.corner_filled(second));
        // Rule 1: the first to fill the opponent's house wins. The second player filling it
        // has had as many moves as the first: it wins at once. The first player filling it
        // wins only once the second has had the same number of moves without filling its
        // own target (both filled: a draw, see `draws`).
        if second_done && !first_done {
            return Some(Outcome {
                winner: second,
                reason: EndReason::CornerFilled,
                rule: "CORN 1: first to fill the opponent's corner",
            });
        }
        if first_done && !second_done && made[second.index()] >= made[first.index()] {
            return Some(Outcome {
                winner: first,
                reason: EndReason::CornerFilled,
                rule: "CORN 1: first to fill the opponent's corner, equal moves",
            });
        }
        // Rules 2 and 3 (anti-stalling): after its move number `leave_home_within + 1` and
        // every later one, a side with a piece on its own start squares loses. Only the
        // side that just moved can have changed that.
        let pos = self.position();
        if let Some(last) = self.positions.len().checked_sub(2) {
            let mover = self.positions[last].turn();
            let home = pos.variant().rules().start_men(mover);
            if made[mover.index()] > leave_home_within && pos.pieces(mover) & home != 0 {
                return Some(Outcome {
                    winner: !mover,
                    reason: EndReason::HomeNotLeft,
                    rule: "CORN 2-3: a piece on its own start squares after 40 moves",
                });
            }
        }
        None
    }

    /// Whether a lone king stands on the main road, in an ending where RU 1.9.1(e) /
    /// 7.2.7 watch it; true when no such ending is on the board.
    fn lone_king_on_road(&self) -> bool {
        let pos = self.position();
        let road = main_road(pos);
        if road == 0 {
            return true;
        }
        for color in Color::ALL {
            if Force::of(pos, color).lone_king() {
                return pos.kings_of(color) & road != 0;
            }
        }
        true
    }

    /// Every draw rule that applies now; the first automatic one ends the game.
    pub fn draws(&self) -> Vec<DrawVerdict> {
        let pos = self.position();
        let mut out = Vec::new();
        let rules = pos.variant().rules();
        let repeated = self.repeated(3);
        let forces = [Force::of(pos, Color::White), Force::of(pos, Color::Black)];
        let c = &self.counters;
        let moves = c.moves_since_change;
        // The side with a lone king, and its opponent.
        let lone = Color::ALL
            .into_iter()
            .find(|&s| forces[s.index()].lone_king() && forces[(!s).index()].total() > 1)
            .or_else(|| {
                // King against king: either side may count.
                (forces[0].lone_king() && forces[1].lone_king()).then_some(Color::Black)
            });
        let mut automatic = |rule: &'static str| {
            out.push(DrawVerdict {
                rule,
                mode: DrawMode::Automatic,
            })
        };
        match rules.draws {
            DrawRules::Russian | DrawRules::Giveaway => {
                let classic = self.edition == RuleEdition::Classic;
                // (c), (e) and 7.2.4, 7.2.7, 7.2.8 measure whether the stronger side can
                // capture or shut in a lone king; in giveaway neither side wants that, so
                // only the general counters (d), (f) and (g) apply there.
                let normal_goal = rules.draws == DrawRules::Russian;
                if normal_goal && let Some(weak) = lone {
                    let strong = !weak;
                    let f = forces[strong.index()];
                    let strong_moves = moves[strong.index()].max(if f.lone_king() {
                        moves[weak.index()]
                    } else {
                        0
                    });
                    // (c) / 7.2.4: three or more kings against a lone king, 15 moves.
                    if f.kings >= 3 && strong_moves >= 15 {
                        automatic(if classic {
                            "RU 1.9.1(c)"
                        } else {
                            "RU-2013 7.2.4"
                        });
                    }
                    // (e) / 7.2.7: three pieces against a lone king on the main road.
                    let three = f.total() == 3 && (f.kings >= 1 || classic);
                    if three && !c.left_main_road && main_road(pos) != 0 && strong_moves >= 5 {
                        automatic(if classic {
                            "RU 1.9.1(e)"
                        } else {
                            "RU-2013 7.2.7"
                        });
                    }
                    // 7.2.8: two kings, king and man, or king against a lone king.
                    if !classic && f.total() <= 2 && f.kings >= 1 && strong_moves >= 5 {
                        automatic("RU-2013 7.2.8");
                    }
                }
                // (d) / 7.2.6: both sides have kings, balance unchanged.
                if forces[0].kings > 0 && forces[1].kings > 0 {
                    let total = forces[0].total() + forces[1].total();
                    let limit = match (total, classic) {
                        (2..=3, true) => Some(5),
                        (4..=5, _) => Some(30),
                        (6..=7, _) => Some(60),
                        _ => None,
                    };
                    if let Some(n) = limit
                        && moves[0] >= n
                        && moves[1] >= n
                    {
                        automatic(if classic {
                            "RU 1.9.1(d)"
                        } else {
                            "RU-2013 7.2.6"
                        });
                    }
                }
                // (f) / 7.2.5: 15 moves each with kings only, no man moved, no capture.
                if c.king_only_plies >= 30 {
                    automatic(if classic {
                        "RU 1.9.1(f)"
                    } else {
                        "RU-2013 7.2.5"
                    });
                }
            }
            DrawRules::Fmjd => {
                let both = c.class_moves[0].min(c.class_moves[1]);
                match FmjdClass::of(pos) {
                    Some(FmjdClass::Sixteen) if both >= 16 => automatic("FMJD 16 moves"),
                    Some(FmjdClass::Five) if both >= 5 => automatic("FMJD 5 moves"),
                    _ => {}
                }
                if c.king_only_plies >= 50 {
                    automatic("FMJD 25 king moves");
                }
            }
            DrawRules::English => {
                if let Some((_, n)) = c.forty_moves
                    && n >= 40
                {
                    automatic("EN 40-move rule");
                }
            }
            DrawRules::Italian => {
                // FID: 40 moves by each side with kings only, no man moved, no capture.
                // Source: the FID rule as pydraughts (AttackingOrDefending/pydraughts,
                // draughts/core/game.py, variant "italian": 80 plies) and lidraughts-family
                // Italian implementations ("FID: draw after 40 king moves by each player")
                // apply it; the FID text itself was not at hand.
                if c.king_only_plies >= 80 {
                    automatic("IT 40 king moves (FID)");
                }
            }
            DrawRules::Pool => {
                // APCA "13-count" (Black & Waters 1947, rule 31; APCA playing rules): three
                // kings against a lone king must capture it before their 13th move is
                // complete, counted from the moment that balance arose; else a draw.
                if let Some(weak) = lone {
                    let strong = !weak;
                    let f = forces[strong.index()];
                    if f.kings >= 3 && moves[strong.index()] >= 13 {
                        automatic("POOL 13-count (APCA)");
                    }
                }
            }
            // lidraughts' antidraughts knows no move-count draw, only repetition.
            DrawRules::Antidraughts => {}
            // Turkish draughts federation guide ("Türk daması kuralları", 19(b), as
            // published by damaakademisi.com): when each side has one piece left, even if
            // one of them is a king, the game is drawn. Decision (pydraughts reads the
            // rule the same way: "officially immediately if there can't be a forced
            // capture"): not while the side to move can capture the other piece.
            DrawRules::Turkish => {
                if forces[0].total() == 1 && forces[1].total() == 1 && !pos.has_capture() {
                    automatic("TR 19(b) one piece each");
                }
            }
            // Frisian (Official Rules for Frisian Draughts 2011, the endgame; as lidraughts
            // applies them in `Frisian.scala`): two kings against one king, no men, is
            // drawn when both sides have made 7 moves since it arose; king against king
            // after 2 moves each (the rules draw it at once unless a win is forced;
            // lidraughts allows 2 moves to show the forced win, and so do we).
            // Corners (allforchildren.ru, "Игра в уголки", rule 1): the second player
            // completing its corner on the same move number as the first is a draw.
            DrawRules::Corners => {
                if self.corner_filled(Color::White) && self.corner_filled(Color::Black) {
                    out.push(DrawVerdict {
                        rule: "CORN 1: both corners filled with equal moves",
                        mode: DrawMode::Final(EndReason::CornerFilled),
                    });
                }
            }
            DrawRules::Frisian => {
                let both = moves[0].min(moves[1]);
                let no_men = forces[0].men == 0 && forces[1].men == 0;
                let kings = [forces[0].kings, forces[1].kings];
                if no_men && kings.contains(&1) && kings.contains(&2) && both >= 7 {
                    automatic("FR two kings against one king, 7 moves");
                }
                if no_men && kings == [1, 1] && both >= 2 {
                    automatic("FR king against king, 2 moves");
                }
            }
        }
        // Frisian has no repetition rule (lidraughts `DraughtsHistory.threefoldRepetition`
        // excludes it; the Frisian rules bound king play with the move limit instead).
        let repeated = repeated && rules.draws != DrawRules::Frisian;
        if repeated {
            out.push(DrawVerdict {
                rule: match (rules.draws, self.edition) {
                    (DrawRules::Russian | DrawRules::Giveaway, RuleEdition::Classic) => {
                        "RU 1.9.1(g)"
                    }
                    (DrawRules::Russian | DrawRules::Giveaway, RuleEdition::Edition2013) => {
                        "RU-2013 7.2.3"
                    }
                    (DrawRules::Fmjd | DrawRules::Antidraughts, _) => "FMJD threefold repetition",
                    (DrawRules::English, _) => "EN threefold repetition",
                    (DrawRules::Italian, _) => "IT threefold repetition (FID)",
                    (DrawRules::Pool, _) => "POOL threefold repetition (APCA)",
                    // alemanni.pagesperso-orange.fr/turkish.html: a draw when the same
                    // position occurs three times; claimed as RU 1.9.2 describes.
                    (DrawRules::Turkish, _) => "TR threefold repetition",
                    (DrawRules::Frisian, _) => "FR threefold repetition",
                    // No ugolki source has a repetition rule: the federation's RU 1.9.1(g),
                    // claimed as RU 1.9.2 describes.
                    (DrawRules::Corners, _) => "CORN threefold repetition (RU 1.9.1(g))",
                },
                mode: DrawMode::Claimable,
            });
        }
        out
    }

    /// Every draw rule that applied at some point of the game, each once, at the first ply
    /// it applied (0: the start position), in ply order, then in [`Game::draws`] order. A
    /// recorded game that went on after an automatic draw shows where the rule would have
    /// ended it. The moves are played again from the start, counters and all.
    pub fn draw_history(&self) -> Vec<DrawArising> {
        // The Frisian king-move runs a game may have been given at its start only restrict
        // quiet king moves; the draw counters do not read them, and a replay without them
        // accepts every move the game accepted.
        let mut replay = Game::new(*self.start(), self.edition);
        let mut out: Vec<DrawArising> = Vec::new();
        let mut note = |g: &Game, ply: usize| {
            for verdict in g.draws() {
                if !out.iter().any(|a| a.verdict.rule == verdict.rule) {
                    out.push(DrawArising { ply, verdict });
                }
            }
        };
        note(&replay, 0);
        for (i, mv) in self.moves.iter().enumerate() {
            if replay.play(mv).is_err() {
                break;
            }
            note(&replay, i + 1);
        }
        out
    }

    /// RU-2013 7.2.9: with no increment in the time control these endings are not played
    /// out (the arbiter records a draw unless the win is obvious): three pieces against a
    /// lone king on the main road, or two kings / king and man / king against a lone king.
    pub fn ru2013_not_played_out(&self) -> bool {
        let pos = self.position();
        if pos.variant().rules().draws != DrawRules::Russian {
            return false;
        }
        let forces = [Force::of(pos, Color::White), Force::of(pos, Color::Black)];
        Color::ALL.into_iter().any(|weak| {
            let f = forces[(!weak).index()];
            forces[weak.index()].lone_king()
                && f.kings >= 1
                && (f.total() <= 2 || (f.total() == 3 && pos.kings_of(weak) & main_road(pos) != 0))
        })
    }
}

/// The main road (the long diagonal a1–h8) of the position's board, if its variant has one.
fn main_road(pos: &Position) -> Bitboard {
    let rules = pos.variant().rules();
    squares_of(pos.variant(), rules.main_road)
}
