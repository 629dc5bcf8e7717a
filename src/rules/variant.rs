//! Variants as data: each game in `RULES.md` is a [`Rules`] value. Move generation reads
//! these fields; no variant is special-cased by name in the generator.

use std::fmt;
use std::str::FromStr;

use super::geometry::{BoardKind, Direction, Geometry};
use super::{Bitboard, Color};

/// A game from the rule book.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Variant {
    /// Russian draughts (shashki), RU 1.x; PDN GameType 25.
    Russian,
    /// International draughts (FMJD), 10×10; PDN GameType 20.
    International,
    /// English draughts / American checkers; PDN GameType 21.
    English,
    /// Turkish draughts (dama), 8×8 orthogonal; PDN GameType 30.
    Turkish,
    /// Frisian draughts, 10×10 with orthogonal captures; PDN GameType 40.
    Frisian,
}

impl Variant {
    /// Every variant, in the order of the rule book.
    pub const ALL: [Variant; 5] = [
        Variant::Russian,
        Variant::International,
        Variant::English,
        Variant::Turkish,
        Variant::Frisian,
    ];

    /// The command-line and API name (`russian`, `international`, …).
    pub const fn name(self) -> &'static str {
        match self {
            Variant::Russian => "russian",
            Variant::International => "international",
            Variant::English => "english",
            Variant::Turkish => "turkish",
            Variant::Frisian => "frisian",
        }
    }

    /// The variant's PDN `GameType` number, where one exists.
    pub const fn game_type(self) -> Option<u32> {
        self.rules().game_type
    }

    /// The variant for a PDN `GameType` number.
    pub fn from_game_type(n: u32) -> Option<Variant> {
        Variant::ALL.into_iter().find(|v| v.game_type() == Some(n))
    }

    /// The rules of the variant.
    pub const fn rules(self) -> &'static Rules {
        match self {
            Variant::Russian => &RUSSIAN,
            Variant::International => &INTERNATIONAL,
            Variant::English => &ENGLISH,
            Variant::Turkish => &TURKISH,
            Variant::Frisian => &FRISIAN,
        }
    }

    /// The board tables of the variant.
    pub fn geometry(self) -> &'static Geometry {
        Geometry::of(self.rules().board)
    }
}

impl fmt::Display for Variant {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// An unknown variant name.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UnknownVariant(pub String);

impl fmt::Display for UnknownVariant {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let names: Vec<&str> = Variant::ALL.iter().map(|v| v.name()).collect();
        write!(
            f,
            "unknown variant '{}' (known: {})",
            self.0,
            names.join(", ")
        )
    }
}

impl std::error::Error for UnknownVariant {}

impl FromStr for Variant {
    type Err = UnknownVariant;
    fn from_str(s: &str) -> Result<Variant, UnknownVariant> {
        let lower = s.trim().to_ascii_lowercase();
        Variant::ALL
            .into_iter()
            .find(|v| v.name() == lower)
            .ok_or_else(|| UnknownVariant(s.to_string()))
    }
}

/// How far a king moves.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum KingRange {
    /// Any number of free squares ("flying" kings).
    Flying,
    /// One square (and a capture jumps only an adjacent piece).
    Short,
}

/// Which captures a player may choose among when several are possible.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CaptureChoice {
    /// Any capture (RU 1.5.14).
    Free,
    /// Only those that take the most pieces (FMJD 4.13; a king counts as one piece).
    MaximumPieces,
    /// Frisian precedence: the most *value*, a king worth less than two men but more
    /// than one (two men outweigh a king; two kings outweigh three men), then a capture
    /// made with a king before one made with a man. This is the order of rhalbersma/dctl
    /// (`frisian.hpp`: `(pieces + kings) * N - kings`, then `is_with_king`) and of
    /// lidraughts (`Frisian.scala`: man 100, king 199, then the king's capture), both
    /// after the official rules of the Frisian draughts association (DFS/KNDB, 2011).
    Frisian,
}

/// What happens when a man reaches the far rank in the middle of a capture.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PromotionInCapture {
    /// It becomes a king at once and goes on capturing as a king (RU 1.5.15).
    ContinueAsKing,
    /// It goes on capturing as a man; it is crowned only if the capture ends there
    /// (FMJD 4.10, pool).
    ContinueAsMan,
    /// Crowning ends the move (English).
    EndsMove,
}

/// When captured pieces leave the board.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Removal {
    /// After the whole capture; until then they block and cannot be jumped twice
    /// (RU 1.5.7 / 1.5.12, the "Turkish strike" rule).
    AfterMove,
    /// As each is jumped (Turkish draughts).
    Immediate,
}

/// Who wins when the side to move has no piece or no legal move.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WinCondition {
    /// That side loses (RU 1.8).
    Normal,
    /// That side wins (giveaway / antidraughts).
    Giveaway,
}

/// Which draw bookkeeping a variant uses.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DrawRules {
    /// RU 1.9.1 (c)–(g), with the 2013 edition (7.2.x) selectable per game.
    Russian,
    /// FMJD: threefold, 25 king moves, 16 and 5 move endings against a lone king.
    Fmjd,
    /// English: threefold; the 40-move rule started by the arbiter on request.
    English,
    /// Turkish: one piece against one piece is drawn at once; threefold repetition.
    Turkish,
    /// Frisian: two kings against one king drawn after 7 moves each, king against
    /// king after 2 moves each; no repetition rule (lidraughts).
    Frisian,
}

/// How a variant writes moves.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NotationStyle {
    /// Letter and digit squares, `:` for captures (Russian).
    Algebraic,
    /// PDN square numbers, `x` for captures (International, English, …).
    Numeric,
    /// Letter and digit squares only, `x` for captures: the board has no PDN square
    /// numbering (PDN GameType 30, Turkish, is `30,W,8,8,A0,0`: alphanumeric notation;
    /// pdn.fmjd.org/gametype.html). Numeric squares are refused on input.
    AlgebraicOnly,
}

/// The rules of one variant, as data.
#[derive(Debug)]
pub struct Rules {
    /// The board.
    pub board: BoardKind,
    /// Who moves first from the start position.
    pub first_to_move: Color,
    /// Directions a man moves in, for White (Black's are the mirror image).
    pub man_moves: &'static [Direction],
    /// Directions a man captures in, for White.
    pub man_captures: &'static [Direction],
    /// Directions a king moves in (quiet moves).
    pub king_dirs: &'static [Direction],
    /// Directions a king captures in (Frisian: the diagonals and the orthogonals, while
    /// it moves only diagonally).
    pub king_captures: &'static [Direction],
    /// How far a king goes.
    pub king_range: KingRange,
    /// Which captures may be chosen.
    pub capture_choice: CaptureChoice,
    /// A man reaching the far rank mid-capture.
    pub promotion_in_capture: PromotionInCapture,
    /// Whether a man may capture a king (not in Italian).
    pub men_capture_kings: bool,
    /// When captured pieces leave the board.
    pub removal: Removal,
    /// Who wins when a side has no piece or no move.
    pub win: WinCondition,
    /// The draw bookkeeping.
    pub draws: DrawRules,
    /// Move notation.
    pub notation: NotationStyle,
    /// Whether names and numbers are mirrored left-right (Italian: a1 is light).
    pub mirrored: bool,
    /// Rows (canonical, 0 = top) of Black's men at the start; White's are the mirror.
    pub start_rows: u8,
    /// Of those rows, how many at the back stay empty (Turkish: 1, the men stand on the
    /// second and third ranks).
    pub start_empty_back_rows: u8,
    /// Frisian: a side that has men as well as kings may make at most this many
    /// non-capturing moves in a row with the same king. History, not position: enforced
    /// by [`crate::rules::Game`], not by the position's move generator or perft.
    pub same_king_move_limit: Option<u8>,
    /// The PDN GameType number.
    pub game_type: Option<u32>,
    /// The main road (long diagonal a1–h8) for RU 1.9.1(e), as PDN numbers.
    pub main_road: &'static [u32],
}

const DIAGONALS: &[Direction] = &[
    Direction::UpLeft,
    Direction::UpRight,
    Direction::DownLeft,
    Direction::DownRight,
];
const FORWARD_DIAGONALS: &[Direction] = &[Direction::UpLeft, Direction::UpRight];
const ORTHOGONALS: &[Direction] = &[
    Direction::Up,
    Direction::Down,
    Direction::Left,
    Direction::Right,
];
/// Forward and sideways (Turkish men).
const FORWARD_AND_SIDEWAYS: &[Direction] = &[Direction::Up, Direction::Left, Direction::Right];
const ALL_EIGHT: &[Direction] = &[
    Direction::UpLeft,
    Direction::UpRight,
    Direction::DownLeft,
    Direction::DownRight,
    Direction::Up,
    Direction::Down,
    Direction::Left,
    Direction::Right,
];

static RUSSIAN: Rules = Rules {
    board: BoardKind::Diagonal8x8,
    first_to_move: Color::White,
    man_moves: FORWARD_DIAGONALS,
    man_captures: DIAGONALS,
    king_dirs: DIAGONALS,
    king_captures: DIAGONALS,
    king_range: KingRange::Flying,
    capture_choice: CaptureChoice::Free,
    promotion_in_capture: PromotionInCapture::ContinueAsKing,
    men_capture_kings: true,
    removal: Removal::AfterMove,
    win: WinCondition::Normal,
    draws: DrawRules::Russian,
    notation: NotationStyle::Algebraic,
    mirrored: false,
    start_rows: 3,
    start_empty_back_rows: 0,
    same_king_move_limit: None,
    game_type: Some(25),
    main_road: &[29, 25, 22, 18, 15, 11, 8, 4],
};

static INTERNATIONAL: Rules = Rules {
    board: BoardKind::Diagonal10x10,
    first_to_move: Color::White,
    man_moves: FORWARD_DIAGONALS,
    man_captures: DIAGONALS,
    king_dirs: DIAGONALS,
    king_captures: DIAGONALS,
    king_range: KingRange::Flying,
    capture_choice: CaptureChoice::MaximumPieces,
    promotion_in_capture: PromotionInCapture::ContinueAsMan,
    men_capture_kings: true,
    removal: Removal::AfterMove,
    win: WinCondition::Normal,
    draws: DrawRules::Fmjd,
    notation: NotationStyle::Numeric,
    mirrored: false,
    start_rows: 4,
    start_empty_back_rows: 0,
    same_king_move_limit: None,
    game_type: Some(20),
    main_road: &[],
};

static ENGLISH: Rules = Rules {
    board: BoardKind::Diagonal8x8,
    first_to_move: Color::Black,
    man_moves: FORWARD_DIAGONALS,
    man_captures: FORWARD_DIAGONALS,
    king_dirs: DIAGONALS,
    king_captures: DIAGONALS,
    king_range: KingRange::Short,
    capture_choice: CaptureChoice::Free,
    promotion_in_capture: PromotionInCapture::EndsMove,
    men_capture_kings: true,
    removal: Removal::AfterMove,
    win: WinCondition::Normal,
    draws: DrawRules::English,
    notation: NotationStyle::Numeric,
    mirrored: false,
    start_rows: 3,
    start_empty_back_rows: 0,
    same_king_move_limit: None,
    game_type: Some(21),
    main_road: &[],
};

/// Turkish draughts (RULES.md, TR). Where RULES.md is silent:
/// - a man that reaches the last rank during a capture is crowned at once and, if it can,
///   goes on capturing as a king in the same move (Wikipedia "Turkish draughts", rules
///   section; draughts.github.io/turkish-draughts.html, rule 6). Some older summaries
///   (an older Wikipedia revision, setupgroup.com) crown it only at the end of the move;
///   the Turkish federation's own article on this point was not found, so this follows
///   the current majority of published descriptions;
/// - a 180° turn inside a capture is never allowed (TR; for variants that remove pieces
///   after the move it is impossible anyway, so the generator forbids it everywhere);
/// - square names are algebraic only: PDN GameType 30 has no numbering (`A0`).
static TURKISH: Rules = Rules {
    board: BoardKind::Orthogonal8x8,
    first_to_move: Color::White,
    man_moves: FORWARD_AND_SIDEWAYS,
    man_captures: FORWARD_AND_SIDEWAYS,
    king_dirs: ORTHOGONALS,
    king_captures: ORTHOGONALS,
    king_range: KingRange::Flying,
    capture_choice: CaptureChoice::MaximumPieces,
    promotion_in_capture: PromotionInCapture::ContinueAsKing,
    men_capture_kings: true,
    removal: Removal::Immediate,
    win: WinCondition::Normal,
    draws: DrawRules::Turkish,
    notation: NotationStyle::AlgebraicOnly,
    mirrored: false,
    start_rows: 3,
    start_empty_back_rows: 1,
    same_king_move_limit: None,
    game_type: Some(30),
    main_road: &[],
};

/// Frisian draughts (RULES.md names it; the rules are those of the Frisian draughts
/// association, "Official Rules for Frisian Draughts" 2011, as lidraughts and dctl play
/// them): international start and numbering; men move diagonally forward; men and kings
/// capture in all eight directions (an orthogonal capture jumps the dark square two
/// columns or two rows away); kings fly, and move (without capturing) only along the
/// diagonals (Official Rules art. 9); a man passing the far rank during a capture stays a
/// man (art. 8); capture precedence by value ([`CaptureChoice::Frisian`]); the
/// three-king-moves limit (lidraughts `Actor.scala`; dctl `max_same_king_move = 3`).
static FRISIAN: Rules = Rules {
    board: BoardKind::Diagonal10x10,
    first_to_move: Color::White,
    man_moves: FORWARD_DIAGONALS,
    man_captures: ALL_EIGHT,
    king_dirs: DIAGONALS,
    king_captures: ALL_EIGHT,
    king_range: KingRange::Flying,
    capture_choice: CaptureChoice::Frisian,
    promotion_in_capture: PromotionInCapture::ContinueAsMan,
    men_capture_kings: true,
    removal: Removal::AfterMove,
    win: WinCondition::Normal,
    draws: DrawRules::Frisian,
    notation: NotationStyle::Numeric,
    mirrored: false,
    start_rows: 4,
    start_empty_back_rows: 0,
    same_king_move_limit: Some(3),
    game_type: Some(40),
    main_road: &[],
};

impl Rules {
    /// The geometry tables of this board.
    pub fn geometry(&self) -> &'static Geometry {
        Geometry::of(self.board)
    }

    /// The squares on which a man of `color` is crowned.
    pub fn promotion_rank(&self, color: Color) -> Bitboard {
        let g = self.geometry();
        match color {
            Color::White => g.rows([0]),
            Color::Black => g.rows([g.height - 1]),
        }
    }

    /// The start position's men of each side.
    pub fn start_men(&self, color: Color) -> Bitboard {
        let g = self.geometry();
        let skip = self.start_empty_back_rows;
        match color {
            Color::Black => g.rows(skip..self.start_rows),
            Color::White => g.rows(g.height - self.start_rows..g.height - skip),
        }
    }
}
