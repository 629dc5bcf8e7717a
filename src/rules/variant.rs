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
    /// Brazilian draughts: international rules on 8×8; PDN GameType 26.
    Brazilian,
    /// American pool checkers; PDN GameType 23.
    Pool,
    /// Italian draughts (FID rules); PDN GameType 22.
    Italian,
    /// Giveaway (poddavki): Russian rules, goal reversed; no PDN GameType.
    Giveaway,
    /// Antidraughts (lidraughts): international rules on 10×10, goal reversed; no PDN
    /// GameType.
    Antidraughts,
    /// 80-square draughts: Russian rules on a board 10 files wide and 8 ranks high; no PDN
    /// GameType.
    Russian80,
    /// Diagonal draughts: Russian rules, men start in two triangles beside the main road;
    /// no PDN GameType.
    Diagonal,
    /// Turkish draughts (dama), 8×8 orthogonal; PDN GameType 30.
    Turkish,
    /// Frisian draughts, 10×10 with orthogonal captures; PDN GameType 40.
    Frisian,
    /// Russian towers (stolbovye shashki): Russian rules, captured pieces go under the
    /// capturing tower; no PDN GameType.
    Towers,
    /// Corners (ugolki), 8×8 orthogonal, a race without captures; no PDN GameType.
    Corners,
}

impl Variant {
    /// Every variant, in declaration order (`ALL[v as usize] == v`; per-variant tables
    /// are indexed that way).
    pub const ALL: [Variant; 14] = [
        Variant::Russian,
        Variant::International,
        Variant::English,
        Variant::Brazilian,
        Variant::Pool,
        Variant::Italian,
        Variant::Giveaway,
        Variant::Antidraughts,
        Variant::Russian80,
        Variant::Diagonal,
        Variant::Turkish,
        Variant::Frisian,
        Variant::Towers,
        Variant::Corners,
    ];

    /// The command-line and API name (`russian`, `international`, …).
    pub const fn name(self) -> &'static str {
        match self {
            Variant::Russian => "russian",
            Variant::International => "international",
            Variant::English => "english",
            Variant::Brazilian => "brazilian",
            Variant::Pool => "pool",
            Variant::Italian => "italian",
            Variant::Giveaway => "giveaway",
            Variant::Antidraughts => "antidraughts",
            Variant::Russian80 => "russian80",
            Variant::Diagonal => "diagonal",
            Variant::Turkish => "turkish",
            Variant::Frisian => "frisian",
            Variant::Towers => "towers",
            Variant::Corners => "corners",
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
            Variant::Brazilian => &BRAZILIAN,
            Variant::Pool => &POOL,
            Variant::Italian => &ITALIAN,
            Variant::Giveaway => &GIVEAWAY,
            Variant::Antidraughts => &ANTIDRAUGHTS,
            Variant::Russian80 => &RUSSIAN80,
            Variant::Diagonal => &DIAGONAL,
            Variant::Turkish => &TURKISH,
            Variant::Frisian => &FRISIAN,
            Variant::Towers => &TOWERS,
            Variant::Corners => &CORNERS,
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
    /// The Italian precedence (FID): among the captures taking the most pieces, those made
    /// with a king rather than a man; then those taking the most kings; then those that
    /// meet a king earliest (the captured pieces compared in capture order, a king before a
    /// man). What remains is a free choice.
    Italian,
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
    /// Towers (TOW): only the top piece of a jumped tower is taken and it goes under the
    /// capturing tower when the capture is over; until then the jumped towers block and
    /// none may be jumped twice, as under [`Removal::AfterMove`]. What stays on the board
    /// is kept in the position's stacks ([`crate::rules::Position::beneath`]).
    UnderCapturer,
}

/// How a game is won. In the capturing games: who wins when the side to move has no
/// piece or no legal move.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WinCondition {
    /// That side loses (RU 1.8).
    Normal,
    /// That side wins (giveaway / antidraughts).
    Giveaway,
    /// A race (corners): the first side whose pieces fill every start square of the
    /// opponent wins; if the side that moved first gets there, the other side has one more
    /// move, and filling its own target with it draws (the equal-move rule). A side that
    /// has made more than `leave_home_within` moves and still (or again) has a piece on one
    /// of its own start squares loses (the anti-stalling rule). These depend on the moves
    /// played, so [`crate::rules::Game`] applies them; a side to move without a legal move
    /// loses, as in [`WinCondition::Normal`].
    FillCorner {
        /// The number of moves after which no piece may stand on its own start squares.
        leave_home_within: u32,
    },
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
    /// Italian (FID): threefold repetition; 40 moves by each side with kings only, no
    /// capture and no man moved.
    Italian,
    /// American pool (APCA): threefold repetition; three kings against a lone king must
    /// capture it within 13 moves (the "13-count").
    Pool,
    /// Giveaway: RU 1.9 without the rules that presuppose the normal goal, (c) and (e)
    /// (2013: 7.2.4, 7.2.7, 7.2.8, 7.2.9); (d), (f) and (g) stay.
    Giveaway,
    /// Antidraughts (lidraughts): threefold repetition only.
    Antidraughts,
    /// Turkish: one piece against one piece is drawn at once; threefold repetition.
    Turkish,
    /// Frisian: two kings against one king drawn after 7 moves each, king against
    /// king after 2 moves each; no repetition rule (lidraughts).
    Frisian,
    /// Corners: both sides fill their target corner with the same number of moves (the
    /// equal-move rule, a final result); threefold repetition, claimable.
    Corners,
}

/// Where the men stand at the start.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StartPosition {
    /// Each side's men fill the playable squares of its first `n` rows.
    Rows(u8),
    /// Each side's men fill `rows` rows behind its first `skip` rows, which stay empty
    /// (Turkish: the men stand on the second and third ranks).
    Band {
        /// Empty rows at the back.
        skip: u8,
        /// Rows of men.
        rows: u8,
    },
    /// The men stand on these squares, named algebraically as White sees the board
    /// (`c1`, `h6`; RU 1.6).
    Squares {
        /// White's men.
        white: &'static [&'static str],
        /// Black's men.
        black: &'static [&'static str],
    },
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
    /// Directions of a non-capturing jump (a "hop", corners): a piece jumps a piece of
    /// either colour on the neighbouring square to the free square straight behind it,
    /// and may chain such jumps in any of these directions; nothing is captured and no
    /// jump is compulsory. Empty in the capturing games.
    pub hops: &'static [Direction],
    /// Whether a man reaching the far rank is crowned. Without crowning (corners) the
    /// game has no kings at all, and a position with a king is refused.
    pub crowning: bool,
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
    /// The men at the start.
    pub start: StartPosition,
    /// Frisian: a side that has men as well as kings may make at most this many
    /// non-capturing moves in a row with the same king. History, not position: enforced
    /// by [`crate::rules::Game`], not by the position's move generator or perft.
    pub same_king_move_limit: Option<u8>,
    /// The PDN GameType number.
    pub game_type: Option<u32>,
    /// The main road (long diagonal a1–h8) for RU 1.9.1(e), as PDN numbers; empty where
    /// the rule does not apply.
    pub main_road: &'static [u32],
    /// The rule that decides a game when the side to move has no piece or no move (RU 1.8).
    pub win_rule: &'static str,
}

const DIAGONALS: &[Direction] = &[
    Direction::UpLeft,
    Direction::UpRight,
    Direction::DownLeft,
    Direction::DownRight,
];
const FORWARD_DIAGONALS: &[Direction] = &[Direction::UpLeft, Direction::UpRight];
/// The main road a1–h8 of the 8×8 board (RU 1.9.1(e)), as PDN numbers.
const MAIN_ROAD_8X8: &[u32] = &[29, 25, 22, 18, 15, 11, 8, 4];
const ORTHOGONALS: &[Direction] = &[
    Direction::Up,
    Direction::Down,
    Direction::Left,
    Direction::Right,
];
/// Forward and sideways (Turkish men).
const FORWARD_AND_SIDEWAYS: &[Direction] = &[Direction::Up, Direction::Left, Direction::Right];
const ALL_EIGHT: &[Direction] = &Direction::ALL;

static RUSSIAN: Rules = RUSSIAN_RULES;
static INTERNATIONAL: Rules = INTERNATIONAL_RULES;

/// RU 1.1–1.9. The other members of the Russian family are written as changes to this.
const RUSSIAN_RULES: Rules = Rules {
    board: BoardKind::Diagonal8x8,
    first_to_move: Color::White,
    man_moves: FORWARD_DIAGONALS,
    man_captures: DIAGONALS,
    hops: &[],
    crowning: true,
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
    start: StartPosition::Rows(3),
    same_king_move_limit: None,
    game_type: Some(25),
    main_road: MAIN_ROAD_8X8,
    win_rule: "RU 1.8",
};

/// FMJD rules: where they differ from the Russian. Brazilian and antidraughts are written
/// as changes to this.
const INTERNATIONAL_RULES: Rules = Rules {
    board: BoardKind::Diagonal10x10,
    capture_choice: CaptureChoice::MaximumPieces,
    promotion_in_capture: PromotionInCapture::ContinueAsMan,
    draws: DrawRules::Fmjd,
    notation: NotationStyle::Numeric,
    start: StartPosition::Rows(4),
    game_type: Some(20),
    main_road: &[],
    win_rule: "FMJD 1.8",
    ..RUSSIAN_RULES
};

static ENGLISH: Rules = ENGLISH_RULES;

/// English draughts: where they differ from the Russian. Italian is written as changes to
/// this.
const ENGLISH_RULES: Rules = Rules {
    first_to_move: Color::Black,
    man_captures: FORWARD_DIAGONALS,
    king_range: KingRange::Short,
    promotion_in_capture: PromotionInCapture::EndsMove,
    draws: DrawRules::English,
    notation: NotationStyle::Numeric,
    game_type: Some(21),
    main_road: &[],
    win_rule: "EN 1.8",
    ..RUSSIAN_RULES
};

/// Brazilian draughts: "played on an 8×8 board by the rules of international draughts"
/// (seed 000, "dame braziliene"; seed 002): maximum capture, a king counts as one piece, a
/// man passing the far rank mid-capture stays a man (FMJD 4.10, 4.13). The sources say
/// nothing about draws, so the FMJD draw rules apply (RULES.md: "follow the federation").
static BRAZILIAN: Rules = Rules {
    board: BoardKind::Diagonal8x8,
    start: StartPosition::Rows(3),
    game_type: Some(26),
    win_rule: "BR: FMJD 1.8",
    ..INTERNATIONAL_RULES
};

/// American pool checkers, as the American Pool Checker Association (APCA) plays it:
/// - APCA Tournament Rules of Play (americanpoolcheckers.us, "APCA Tournament Rules of
///   Play"): rule 2, the bottom-left corner is dark (the Russian board, not mirrored);
///   rule 5, Black on squares 1–12, White on 21–32; rule 7, **Black moves first**;
/// - Rules of Play (americanpoolcheckers.us, after Ramsey and Kaplan) 3–5: men move
///   forward and capture forward and backward, kings fly, the capturer chooses freely
///   among captures, a king must make every jump of its sequence; a man that reaches the
///   far rank by a jump and can jump on (backwards) must do so and stays a man; it is
///   crowned only if the capture ends there (also the `tests/data/perft/pool.perft`
///   header).
///
/// Notation: square numbers 1–32, as American checkers. Draws: threefold repetition and
/// the 13-count, see [`DrawRules::Pool`].
static POOL: Rules = Rules {
    first_to_move: Color::Black,
    promotion_in_capture: PromotionInCapture::ContinueAsMan,
    draws: DrawRules::Pool,
    notation: NotationStyle::Numeric,
    game_type: Some(23),
    main_road: &[],
    win_rule: "POOL: APCA rules of play 3",
    ..RUSSIAN_RULES
};

/// Italian draughts, FID (Federazione Italiana Dama) Regolamento tecnico, Capo I:
/// - Art. 2.3: the board lies with the bottom-*right* corner dark, so it is the mirror
///   image of the Russian board (`mirrored`); Art. 2.4: squares 1–32 numbered left to right
///   row by row from the dark square at the top left; Art. 2.6: Black on 1–12, White on
///   21–32; Art. 3.4: **White moves first** (seed 002 says dark first; RULES.md: follow
///   FIDAMA).
/// - A man moves and captures forward only and may not capture a king; a king moves and
///   captures one square in every direction (FID, "Le 10 regole per giocare a dama
///   italiana", federdama.org, rules 2–4).
/// - Captures: the most pieces, then with a king, then the most kings, then where a king
///   is met first (rules 5–9), see [`CaptureChoice::Italian`]. Rule 10: a side that has
///   all its pieces taken or blocked loses.
/// - A man that reaches the far rank is crowned and the move ends there (it could not jump
///   on anyway: men capture forward only).
/// - Draws: threefold repetition, and 40 moves each with kings only, see
///   [`DrawRules::Italian`].
static ITALIAN: Rules = Rules {
    first_to_move: Color::White,
    capture_choice: CaptureChoice::Italian,
    men_capture_kings: false,
    draws: DrawRules::Italian,
    mirrored: true,
    game_type: Some(22),
    win_rule: "IT: FID rule 10",
    ..ENGLISH_RULES
};

/// Giveaway (poddavki): "the rules are the same as in Russian draughts, only the one who
/// first gives away all his pieces or gets them blocked wins" (seed 000 and seed 002,
/// "Cum să joci Giveaway?"). Draws: RU 1.9 minus the rules that presuppose the normal
/// goal, see [`DrawRules::Giveaway`]. No PDN GameType exists.
static GIVEAWAY: Rules = Rules {
    win: WinCondition::Giveaway,
    draws: DrawRules::Giveaway,
    game_type: None,
    main_road: &[],
    win_rule: "GIVE: no pieces or no moves wins",
    ..RUSSIAN_RULES
};

/// Antidraughts as lidraughts plays it (variant "antidraughts": "lose all your pieces (or
/// run out of moves) to win the game"): international rules on 10×10 with the goal
/// reversed (RULES.md, GIVE row). Draws: threefold repetition only, as lidraughts applies
/// them (its antidraughts has no move-count draw), see [`DrawRules::Antidraughts`].
/// lidraughts numbers it GameType 98 internally; that is not a PDN standard number.
static ANTIDRAUGHTS: Rules = Rules {
    win: WinCondition::Giveaway,
    draws: DrawRules::Antidraughts,
    game_type: None,
    win_rule: "GIVE: no pieces or no moves wins",
    ..INTERNATIONAL_RULES
};

/// 80-square draughts ("dame cu 80 de celule", seed 000): "the rules are like Russian
/// draughts, but the board is 10 squares wide and 8 high". Start position: the sources
/// give none, so it follows RU 1.1–1.3 on the wider board: each side fills the dark
/// squares of its three nearest rows, 15 men each (White a1…i3 = squares 26–40, Black
/// b6…j8 = 1–15), a1 dark on the left, White first. The same setup is the "spancirety"
/// (Russian 80-square) start of portnov/hcheckers (`src/Rules/Spancirety.hs`).
/// RU 1.9.1(e) and 7.2.7/7.2.9 name the main road a1–h8, the corner-to-corner diagonal of
/// the 8×8 board; the 10×8 board has no corner-to-corner diagonal (three diagonals of
/// eight squares, none joining two corners), so those rules are not applied here
/// (`main_road` empty); every other RU 1.9 rule is. No PDN GameType exists.
static RUSSIAN80: Rules = Rules {
    board: BoardKind::Diagonal10x8,
    game_type: None,
    main_road: &[],
    ..RUSSIAN_RULES
};

/// Diagonal draughts: "the rules are identical to Russian draughts, but the initial
/// arrangement is different" (seed 000, "Dame diagonale"). The accepted arrangement puts
/// 12 men on each side of the main road a1–h8 in a triangle, the main road itself empty:
/// White c1 e1 g1 d2 f2 h2 e3 g3 f4 h4 g5 h6, Black b8 d8 f8 a7 c7 e7 b6 d6 a5 c5 b4 a3
/// (FEN `W:W12,16,19,20,23,24,26-28,30-32:B1-3,5-7,9,10,13,14,17,21`). Sources:
/// portnov/hcheckers `src/Rules/Diagonal.hs` ("diagonal" rules: this setup with the
/// Russian move rules); bonaludo.com "Twisted checkers: diagonal, corner, one-way and
/// giveaway draughts" (2017) shows the same 12-and-12 diagonal setting. White moves first.
/// No PDN GameType exists.
static DIAGONAL: Rules = Rules {
    start: StartPosition::Squares {
        white: &[
            "c1", "e1", "g1", "d2", "f2", "h2", "e3", "g3", "f4", "h4", "g5", "h6",
        ],
        black: &[
            "b8", "d8", "f8", "a7", "c7", "e7", "b6", "d6", "a5", "c5", "b4", "a3",
        ],
    },
    game_type: None,
    ..RUSSIAN_RULES
};

/// Turkish draughts (RULES.md, TR):
/// - a man that reaches the last rank during a capture is crowned at once and, if it can,
///   goes on capturing as a king in the same move, as RULES.md's TR row decides ("sources
///   differ"): Wikipedia "Turkish draughts", rules section, and
///   draughts.github.io/turkish-draughts.html, rule 6, say so; some older summaries (an
///   older Wikipedia revision, setupgroup.com) crown it only at the end of the move; the
///   Turkish federation's own article on this point was not found;
/// - a 180° turn inside a capture is never allowed (TR; for variants that remove pieces
///   after the move it is impossible anyway, so the generator forbids it everywhere);
/// - where RULES.md is silent: square names are algebraic only, PDN GameType 30 has no
///   numbering (`A0`).
static TURKISH: Rules = Rules {
    board: BoardKind::Orthogonal8x8,
    first_to_move: Color::White,
    man_moves: FORWARD_AND_SIDEWAYS,
    man_captures: FORWARD_AND_SIDEWAYS,
    hops: &[],
    crowning: true,
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
    start: StartPosition::Band { skip: 1, rows: 2 },
    same_king_move_limit: None,
    game_type: Some(30),
    main_road: &[],
    win_rule: "TR: no pieces or no moves loses",
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
    hops: &[],
    crowning: true,
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
    start: StartPosition::Rows(4),
    same_king_move_limit: Some(3),
    game_type: Some(40),
    main_road: &[],
    win_rule: "FR: no pieces or no moves loses",
};

/// Russian towers, stolbovye shashki (RULES.md, TOW; seed 000 "turnuri rusești"): the
/// Russian board, start, moves and captures (compulsory, men capture backwards, flying
/// kings, free choice, a man crowned mid-capture goes on as a king, RU 1.5.x), with
/// [`Removal::UnderCapturer`]: a jumped tower loses only its top piece, which goes under
/// the capturing tower once the capture is over; a tower moves and is crowned by its top
/// piece; the piece revealed on a jumped tower decides its colour, and a king that was
/// captured and is freed again is a man (seed 000).
///
/// Where the seed is silent the published descriptions decide:
/// - the captured piece goes to the *bottom* of the capturing tower ("captured piece(s)
///   at the bottom", bonaludo.com "Towers draughts: Bashni and Laska", 2017; "placed
///   under the capturing piece", lehi-innovation.github.io boardgame-rules "Bashni");
/// - a tower may not be jumped twice in one capture: the Turkish-strike rule RU 1.5.9
///   holds, and the captured pieces go under only after the whole move (the rules shown
///   with the Bashni Draughts app, com.kirlanik.BashniDraughts, on its wingame.info store
///   page: when a capturing piece comes back to a square whose piece is already captured,
///   the capture stops). No source found allows a second jump;
/// - the win condition is Russian (RU 1.8): a side with no tower of its colour on top, or
///   none that can move, loses;
/// - the draw rules are Russian (RU 1.9.x); the piece counts of RU 1.9.1(c)–(e) / 2013
///   7.2.x count each tower as one piece of its top's colour and kind: those rules weigh
///   the forces that move and fight on the board, and a tower moves, captures and is
///   captured as one unit (only its top can be taken at a time). The sources say nothing
///   on this point.
///
/// No PDN GameType exists; the PDN writer leaves the tag out (as for the other variants
/// without one) and `replay` needs `--variant towers`.
static TOWERS: Rules = Rules {
    removal: Removal::UnderCapturer,
    game_type: None,
    win_rule: "TOW: RU 1.8",
    ..RUSSIAN_RULES
};

/// Corners (ugolki; RULES.md, CORN row; seed 000, "Dame - colțuri"). Sources:
/// - seed 000: an 8×8 board; nine pieces each in a 3×3 square in the player's nearest
///   corner; a piece steps to the orthogonally adjacent square or jumps a piece on an
///   orthogonally adjacent square when the square behind it is free; the first to occupy
///   the opponent's corner wins. All 64 squares are used (`Orthogonal8x8`): White a1–c3,
///   Black f6–h8, the corners on each player's left as the board is set for draughts.
/// - the tournament rules followed for everything else are those of the Russian online
///   ugolki room allforchildren.ru, "Игра в уголки" (allforchildren.ru/online/ugolki01.php):
///   moves go in any direction but the diagonal; a jump goes over one piece of either
///   colour to the nearest empty square and may be repeated in the same move ("the jump
///   may be multiple"); (1) the first to move all pieces into the opponent's house wins,
///   and if the second player completes on the same move number as the first, it is a
///   draw (the equal-move rule); (2) a player who has made more than 40 moves and still
///   has pieces in the own house loses; (3) so does a player who brings a piece back
///   into the own house after 40 moves. That room plays 12 pieces (3×4); the 9-piece
///   3×3 corner of RULES.md/seed 000 keeps its rules unchanged. freesweetgames.ru
///   ("Halma", its Ugolki mode) agrees on the orthogonal steps and chained jumps and on
///   checking the finish only after both sides have had the same number of moves.
/// - White moves first (no ugolki source says otherwise; RU 1.4, as for every game of
///   this rule book on the draughts board).
/// - A jump chain may turn in any orthogonal direction, may not land twice on one square
///   and may not come back to its start (a chain that ends where it began is no move).
///   Since nothing is captured, a move is its start and end square: the generator lists
///   each (start, end) pair once, with one canonical route (see `movegen.rs`).
/// - No legal move: the side to move loses (no ugolki source covers it; RU 1.8, the
///   federation's rule for a side that cannot move, is applied).
/// - Draws: the equal-move rule; threefold repetition claimable as RU 1.9.1(g)/1.9.2
///   (no ugolki source has a repetition rule; the federation's is applied).
/// - Notation: algebraic squares only, `a1-a2` for a step, `a1-a3-c3` for a jump chain
///   (every landing, `-` throughout since nothing is captured). No PDN GameType exists.
static CORNERS: Rules = Rules {
    board: BoardKind::Orthogonal8x8,
    first_to_move: Color::White,
    man_moves: ORTHOGONALS,
    man_captures: &[],
    hops: ORTHOGONALS,
    crowning: false,
    king_dirs: &[],
    king_captures: &[],
    king_range: KingRange::Short,
    capture_choice: CaptureChoice::Free,
    promotion_in_capture: PromotionInCapture::EndsMove,
    men_capture_kings: false,
    removal: Removal::AfterMove,
    win: WinCondition::FillCorner {
        leave_home_within: 40,
    },
    draws: DrawRules::Corners,
    notation: NotationStyle::AlgebraicOnly,
    mirrored: false,
    start: StartPosition::Squares {
        white: &["a1", "b1", "c1", "a2", "b2", "c2", "a3", "b3", "c3"],
        black: &["f6", "g6", "h6", "f7", "g7", "h7", "f8", "g8", "h8"],
    },
    same_king_move_limit: None,
    game_type: None,
    main_road: &[],
    win_rule: "CORN: no legal move loses (RU 1.8)",
};

impl Rules {
    /// The geometry tables of this board.
    pub fn geometry(&self) -> &'static Geometry {
        Geometry::of(self.board)
    }

    /// The squares on which a man of `color` is crowned (none where men are not crowned).
    pub fn promotion_rank(&self, color: Color) -> Bitboard {
        let g = self.geometry();
        if !self.crowning {
            return 0;
        }
        match color {
            Color::White => g.rows([0]),
            Color::Black => g.rows([g.height - 1]),
        }
    }

    /// The start position's men of each side.
    pub fn start_men(&self, color: Color) -> Bitboard {
        let g = self.geometry();
        match (self.start, color) {
            (StartPosition::Rows(n), Color::Black) => g.rows(0..n),
            (StartPosition::Rows(n), Color::White) => g.rows(g.height - n..g.height),
            (StartPosition::Band { skip, rows }, Color::Black) => g.rows(skip..skip + rows),
            (StartPosition::Band { skip, rows }, Color::White) => {
                g.rows(g.height - skip - rows..g.height - skip)
            }
            (StartPosition::Squares { white, black }, _) => {
                let names = match color {
                    Color::White => white,
                    Color::Black => black,
                };
                names
                    .iter()
                    .filter_map(|name| {
                        let file = name.as_bytes().first()?.checked_sub(b'a')?;
                        let rank = name.get(1..)?.parse::<u8>().ok()?.checked_sub(1)?;
                        g.from_file_rank(file, rank, self.mirrored)
                    })
                    .fold(0, |bits, sq| bits | sq.bit())
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn all_is_in_declaration_order_and_names_round_trip() {
        for (i, v) in Variant::ALL.into_iter().enumerate() {
            assert_eq!(v as usize, i, "{v}");
            assert_eq!(v.name().parse::<Variant>(), Ok(v));
            if let Some(n) = v.game_type() {
                assert_eq!(Variant::from_game_type(n), Some(v));
            }
        }
        assert_eq!(Variant::from_game_type(26), Some(Variant::Brazilian));
        assert_eq!(Variant::from_game_type(23), Some(Variant::Pool));
        assert_eq!(Variant::from_game_type(22), Some(Variant::Italian));
        assert_eq!(Variant::from_game_type(98), None);
    }

    #[test]
    fn start_positions_have_the_documented_men() {
        let count = |v: Variant, c: Color| v.rules().start_men(c).count_ones();
        for v in Variant::ALL {
            let rules = v.rules();
            let (w, b) = (rules.start_men(Color::White), rules.start_men(Color::Black));
            assert_eq!(w & b, 0, "{v}");
            assert_eq!(count(v, Color::White), count(v, Color::Black), "{v}");
            assert_eq!((w | b) & !rules.geometry().valid, 0, "{v}");
        }
        assert_eq!(count(Variant::Russian80, Color::White), 15);
        assert_eq!(count(Variant::Diagonal, Color::White), 12);
        // Diagonal draughts: the main road is empty at the start.
        let rules = Variant::Diagonal.rules();
        let g = rules.geometry();
        let road = rules
            .main_road
            .iter()
            .filter_map(|&n| g.from_number(n, false))
            .fold(0, |bits, sq| bits | sq.bit());
        assert_eq!(road.count_ones(), 8);
        assert_eq!(
            road & (rules.start_men(Color::White) | rules.start_men(Color::Black)),
            0
        );
    }
}
