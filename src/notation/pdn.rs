//! PDN (Portable Draughts Notation): reading and writing game records.
//!
//! This layer knows the *syntax* of PDN 3.0, not the rules of draughts: a
//! [`PdnMove`] keeps its move as written (`"c3-d4"`, `"22x15x6"`,
//! `"e3:c5:e7"`), and resolving it against a position is the caller's job.
//!
//! The reader is meant for real files: tag sections with any spacing, `{}`
//! and `;` comments, `%` escape lines, nested variations, NAGs and `!?`
//! suffixes, move numbers in every common shape (`12.`, `12...`, `12 .`,
//! none at all), games separated by blank lines or directly by the next tag
//! section, UTF-8 with or without a byte order mark, Windows-1251 (see
//! [`read_games_bytes`]), CRLF, LF and CR line ends mixed in one file.
//! A broken game yields one [`PdnError`] and reading goes on with the next
//! tag section.
//!
//! # Where things land
//!
//! - A game ends at its result token, at a tag after movetext, at a tag
//!   after a blank line that follows a tag section, at a tag whose name its
//!   tag section already has (so a tag section with no movetext is a game of
//!   its own, even when the next game's tags follow it directly), or at the
//!   end of the text.
//! - Fixed-width files pad squares and space out moves: `1- 6`, `47x 9`,
//!   `10- 4` and `47 x 9` are the moves `1-6`, `47x9`, `10-4` and `47x9`
//!   (spaces and tabs inside a move, never a line break; a square followed
//!   by `.` is a move number and a result stays a result).
//! - Comments belong to the move before them; comments before the first
//!   move of the game make [`PdnGame::game_comment`], and those before the
//!   first move of a variation make its [`PdnMove::comments_before`].
//!   Comments after a result stay with that game, unless a game without
//!   tags follows, which they then open. Comment text has its whitespace
//!   collapsed; empty comments are dropped.
//! - A bare `-` is a move the record does not know ([`UNKNOWN_MOVE`]); the
//!   replay takes a record of them only for a game with no moves recorded.
//! - A move number with no move after it is forgiven at the end of a game.
//! - After an error, games without tags up to the next tag section are
//!   skipped with the broken one.
//!
//! # Examples
//!
//! ```
//! use draughts_arbiter::notation::pdn::{read_games, write_game, PdnResult};
//!
//! let text = "[White \"Sijbrands\"]\n[Black \"Baljakin\"]\n\n1. 32-28 19-23 {sharp} 2. 28x19 14x23 2-0\n";
//! let games = read_games(text);
//! let game = games[0].as_ref().expect("a valid game");
//! assert_eq!(game.tag("white"), Some("Sijbrands"));
//! assert_eq!(game.moves[1].text, "19-23");
//! assert_eq!(game.moves[1].comments, ["sharp"]);
//! assert_eq!(game.result, Some(PdnResult::WhiteWins));
//! assert!(write_game(game).ends_with("2-0\n"));
//! ```

use std::fmt;

/// One game read from (or to be written to) a PDN file.
///
/// Positions (`start_line`, [`PdnMove::line`], [`PdnMove::column`]) say where
/// the reader found things; the writer ignores them.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PdnGame {
    /// The tag pairs `[Name "value"]` in file order, values unescaped.
    pub tags: Vec<(String, String)>,
    /// The main line of the game.
    pub moves: Vec<PdnMove>,
    /// The game termination marker, `None` when the movetext has none.
    pub result: Option<PdnResult>,
    /// The termination marker exactly as written (`"2-0"`, `"½-½"`, `"*"`).
    pub result_text: Option<String>,
    /// Comments written before the first move (and comments of a game that
    /// has no moves), joined by single spaces.
    pub game_comment: Option<String>,
    /// The 1-based line where the game starts (its first tag or token).
    pub start_line: usize,
}

/// One move of a PDN movetext, still a string: the rules are not consulted.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PdnMove {
    /// The move number written before the move (`12` in `12.` or `12...`).
    pub number: Option<u32>,
    /// Whether the move number was written with an ellipsis (`12...`), the
    /// usual way to number a move of the second player.
    pub ellipsis: bool,
    /// The move as written, without annotation: `"c3-d4"`, `"22x15x6"`,
    /// `"e3:c5:e7"`, `"32-27"`, or [`UNKNOWN_MOVE`] (`"-"`) for a move the
    /// record does not know.
    pub text: String,
    /// Comments written after the move, in order, each with its runs of
    /// whitespace collapsed to one space and trimmed.
    pub comments: Vec<String>,
    /// Comments written at the start of a variation, before its first move.
    /// The reader fills this only on the first move of a variation; comments
    /// before the first move of the main line go to [`PdnGame::game_comment`].
    pub comments_before: Vec<String>,
    /// Numeric annotation glyphs: `$n` as `n`, and the suffixes `!` 1, `?` 2,
    /// `!!` 3, `??` 4, `!?` 5, `?!` 6.
    pub nags: Vec<u32>,
    /// Alternatives to this move, each a line of moves starting in the
    /// position before it.
    pub variations: Vec<Vec<PdnMove>>,
    /// The 1-based line of the move text.
    pub line: usize,
    /// The 1-based column (in characters) of the move text.
    pub column: usize,
}

/// A game termination marker.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum PdnResult {
    /// `1-0` or `2-0`.
    WhiteWins,
    /// `0-1` or `0-2`.
    BlackWins,
    /// `1/2-1/2`, `½-½` or `1-1`.
    Draw,
    /// `*`: unknown, unfinished or abandoned.
    Unknown,
    /// `0-0`: both players lose (double forfeit).
    DoubleForfeit,
}

/// A syntax error in a PDN text, with its 1-based position.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PdnError {
    /// The 1-based line.
    pub line: usize,
    /// The 1-based column, counted in characters.
    pub column: usize,
    /// What is wrong, short and lowercase: `"unterminated comment"`.
    pub message: String,
}

impl fmt::Display for PdnError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "pdn: line {}, column {}: {}",
            self.line, self.column, self.message
        )
    }
}

impl std::error::Error for PdnError {}

impl PdnResult {
    /// Reads a termination marker: `1-0 2-0 0-1 0-2 1-1 1/2-1/2 ½-½ 0-0 *`.
    ///
    /// # Examples
    ///
    /// ```
    /// use draughts_arbiter::notation::pdn::PdnResult;
    /// assert_eq!(PdnResult::from_token("2-0"), Some(PdnResult::WhiteWins));
    /// assert_eq!(PdnResult::from_token("32-28"), None);
    /// ```
    pub fn from_token(token: &str) -> Option<PdnResult> {
        Some(match token {
            "1-0" | "2-0" => PdnResult::WhiteWins,
            "0-1" | "0-2" => PdnResult::BlackWins,
            "1/2-1/2" | "½-½" | "1-1" => PdnResult::Draw,
            "*" => PdnResult::Unknown,
            "0-0" => PdnResult::DoubleForfeit,
            _ => return None,
        })
    }

    /// The canonical marker: `1-0`, `0-1`, `1/2-1/2`, `*` or `0-0`.
    pub fn as_str(self) -> &'static str {
        match self {
            PdnResult::WhiteWins => "1-0",
            PdnResult::BlackWins => "0-1",
            PdnResult::Draw => "1/2-1/2",
            PdnResult::Unknown => "*",
            PdnResult::DoubleForfeit => "0-0",
        }
    }
}

/// How a game's result is written: PDN 3.0 gives each game type a result type
/// (wiegerw/pdn, `doc/pdntags.rst`, "Result tag": Default `1-0 0-1 1/2-1/2 0-0 *`,
/// International `2-0 0-2 1-1 0-0 *`, the points of FMJD scoring).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ResultForm {
    /// `1-0`, `0-1`, `1/2-1/2`, `0-0`, `*`.
    Default,
    /// `2-0`, `0-2`, `1-1`, `0-0`, `*`.
    International,
}

impl PdnResult {
    /// The marker in `form`: `2-0` for [`PdnResult::WhiteWins`] in the
    /// [`ResultForm::International`] form, `1-0` in the default one.
    ///
    /// # Examples
    ///
    /// ```
    /// use draughts_arbiter::notation::pdn::{PdnResult, ResultForm};
    /// assert_eq!(PdnResult::Draw.token(ResultForm::International), "1-1");
    /// assert_eq!(PdnResult::Draw.token(ResultForm::Default), "1/2-1/2");
    /// assert_eq!(PdnResult::from_token("0-2"), Some(PdnResult::BlackWins));
    /// ```
    pub fn token(self, form: ResultForm) -> &'static str {
        match (form, self) {
            (ResultForm::International, PdnResult::WhiteWins) => "2-0",
            (ResultForm::International, PdnResult::BlackWins) => "0-2",
            (ResultForm::International, PdnResult::Draw) => "1-1",
            _ => self.as_str(),
        }
    }
}

impl fmt::Display for PdnResult {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl PdnGame {
    /// The value of the first tag with this name, compared case-insensitively.
    pub fn tag(&self, name: &str) -> Option<&str> {
        self.tags
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }

    /// Sets a tag: replaces the value of the first tag with this name
    /// (case-insensitively), or appends the tag.
    pub fn set_tag(&mut self, name: &str, value: &str) {
        match self
            .tags
            .iter_mut()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
        {
            Some(tag) => tag.1 = value.to_owned(),
            None => self.tags.push((name.to_owned(), value.to_owned())),
        }
    }

    /// The first number of the `GameType` tag: `20` for `"20"` and for
    /// `"20,W,10,10,N2,0"`.
    pub fn game_type(&self) -> Option<u32> {
        let value = self.tag("GameType")?;
        value.split(',').next()?.trim().parse().ok()
    }

    /// The `FEN` tag: the start position when it is not the variant's own.
    pub fn fen(&self) -> Option<&str> {
        self.tag("FEN")
    }

    /// The result written in the `Result` tag, if it is a termination marker.
    pub fn result_tag(&self) -> Option<PdnResult> {
        PdnResult::from_token(self.tag("Result")?.trim())
    }

    /// Numbers the main line for writing: the first player's moves get
    /// `first.`, `first + 1.` and so on; the second player's moves get no
    /// number, except a first move of the game made by the second player
    /// (`black_first`), which gets `first...`. Variations are left alone.
    pub fn number_moves(&mut self, first: u32, black_first: bool) {
        let mut number = first;
        let mut white = !black_first;
        for (i, m) in self.moves.iter_mut().enumerate() {
            if white {
                m.number = Some(number);
                m.ellipsis = false;
            } else {
                m.number = (i == 0).then_some(number);
                m.ellipsis = i == 0;
                number = number.saturating_add(1);
            }
            white = !white;
        }
    }

    /// Sets every position (`start_line`, move lines and columns) to 0, so
    /// that games can be compared whatever text they were read from.
    pub fn clear_positions(&mut self) {
        fn clear(moves: &mut [PdnMove]) {
            for m in moves {
                m.line = 0;
                m.column = 0;
                for v in &mut m.variations {
                    clear(v);
                }
            }
        }
        self.start_line = 0;
        clear(&mut self.moves);
    }
}

impl PdnMove {
    /// Whether the record does not know this move (it is written `-`).
    pub fn is_unknown(&self) -> bool {
        self.text == UNKNOWN_MOVE
    }

    /// A move with this text and nothing else.
    pub fn new(text: &str) -> PdnMove {
        PdnMove {
            text: text.to_owned(),
            ..PdnMove::default()
        }
    }
}

/// Whether `text` has the shape of a PDN move: two or more squares joined by
/// `-`, `x`, `X` or `:`, each square one or two digits (`32`) or a letter
/// and one or two digits (`c3`). Says nothing about legality.
pub fn is_move_text(text: &str) -> bool {
    let b = text.as_bytes();
    let mut i = 0;
    let mut squares = 0;
    loop {
        if i < b.len() && b[i].is_ascii_alphabetic() && b[i] != b'x' && b[i] != b'X' {
            i += 1;
        }
        let digits = b[i..].iter().take_while(|c| c.is_ascii_digit()).count();
        if !(1..=2).contains(&digits) {
            return false;
        }
        i += digits;
        squares += 1;
        if i == b.len() {
            return squares >= 2;
        }
        if !matches!(b[i], b'-' | b'x' | b'X' | b':') {
            return false;
        }
        i += 1;
    }
}

// ---------------------------------------------------------------------------
// Reading
// ---------------------------------------------------------------------------

/// The text of a move that is not known, written as a bare `-`; some
/// databases give lost games as `1. - - 2. - - ...` with only the result.
pub const UNKNOWN_MOVE: &str = "-";

/// Variations nested deeper than this are refused (the reader recurses).
const MAX_DEPTH: usize = 64;

/// Reads every game of a PDN text; a broken game gives one error and the
/// reader goes on with the next tag section. A leading byte order mark is
/// ignored.
pub fn read_games(text: &str) -> Vec<Result<PdnGame, PdnError>> {
    PdnReader::new(text).collect()
}

/// Reads every game of a PDN file given as bytes, like [`read_games`].
///
/// UTF-8 (with or without a byte order mark) is read as such; UTF-16 with a
/// byte order mark is decoded; anything else that is not valid UTF-8 is
/// decoded as Windows-1251, the usual encoding of Russian draughts files.
/// Never panics, whatever the bytes.
pub fn read_games_bytes(bytes: &[u8]) -> Vec<Result<PdnGame, PdnError>> {
    read_games(&decode(bytes))
}

/// Decodes the bytes of a PDN file to text; see [`read_games_bytes`].
pub fn decode(bytes: &[u8]) -> String {
    if let Some(rest) = bytes.strip_prefix(b"\xEF\xBB\xBF") {
        return String::from_utf8_lossy(rest).into_owned();
    }
    if let Some(rest) = bytes.strip_prefix(b"\xFF\xFE") {
        return utf16(rest, u16::from_le_bytes);
    }
    if let Some(rest) = bytes.strip_prefix(b"\xFE\xFF") {
        return utf16(rest, u16::from_be_bytes);
    }
    match std::str::from_utf8(bytes) {
        Ok(text) => text.to_owned(),
        Err(_) => bytes.iter().map(|&b| windows_1251(b)).collect(),
    }
}

fn utf16(bytes: &[u8], unit: fn([u8; 2]) -> u16) -> String {
    let units = bytes.chunks(2).map(|c| match c {
        [a, b] => unit([*a, *b]),
        _ => 0xFFFD,
    });
    char::decode_utf16(units)
        .map(|c| c.unwrap_or(char::REPLACEMENT_CHARACTER))
        .collect()
}

/// Windows-1251 bytes 0x80..=0xBF; 0xC0..=0xFF are А..я in order.
const CP1251_HIGH: [char; 64] = [
    'Ђ', 'Ѓ', '‚', 'ѓ', '„', '…', '†', '‡', '€', '‰', 'Љ', '‹', 'Њ', 'Ќ', 'Ћ', 'Џ', //
    'ђ', '‘', '’', '“', '”', '•', '–', '—', '\u{FFFD}', '™', 'љ', '›', 'њ', 'ќ', 'ћ', 'џ', //
    '\u{A0}', 'Ў', 'ў', 'Ј', '¤', 'Ґ', '¦', '§', 'Ё', '©', 'Є', '«', '¬', '\u{AD}', '®',
    'Ї', //
    '°', '±', 'І', 'і', 'ґ', 'µ', '¶', '·', 'ё', '№', 'є', '»', 'ј', 'Ѕ', 'ѕ', 'ї',
];

fn windows_1251(b: u8) -> char {
    match b {
        0x00..=0x7F => char::from(b),
        0x80..=0xBF => CP1251_HIGH[usize::from(b - 0x80)],
        _ => char::from_u32(0x0410 + u32::from(b - 0xC0)).unwrap_or(char::REPLACEMENT_CHARACTER),
    }
}

/// An iterator over the games of a PDN text: each item is a game or the
/// error that ended it. After an error the reader skips to the next tag
/// section (a line starting with `[` after a line that does not).
#[derive(Debug)]
pub struct PdnReader<'a> {
    lexer: Lexer<'a>,
    /// Comments after the previous game's result that open the next game,
    /// with their lines.
    carried: Vec<(String, usize)>,
}

impl<'a> PdnReader<'a> {
    /// A reader over `text`; a leading byte order mark is ignored.
    pub fn new(text: &'a str) -> PdnReader<'a> {
        PdnReader {
            lexer: Lexer::new(text.strip_prefix('\u{FEFF}').unwrap_or(text)),
            carried: Vec::new(),
        }
    }
}

impl Iterator for PdnReader<'_> {
    type Item = Result<PdnGame, PdnError>;

    fn next(&mut self) -> Option<Self::Item> {
        match self.game() {
            Ok(game) => game.map(Ok),
            Err(fail) => {
                self.carried.clear();
                self.lexer.recover(&fail);
                Some(Err(fail.error))
            }
        }
    }
}

/// An error and the byte offset it was found at, for recovery.
#[derive(Debug, Clone)]
struct Fail {
    error: PdnError,
    offset: usize,
}

#[derive(Debug, Clone, Copy)]
struct Pos {
    offset: usize,
    line: usize,
    column: usize,
}

impl Pos {
    fn fail(self, message: impl Into<String>) -> Fail {
        Fail {
            error: PdnError {
                line: self.line,
                column: self.column,
                message: message.into(),
            },
            offset: self.offset,
        }
    }
}

#[derive(Debug, Clone)]
enum Kind<'a> {
    Tag(String, String),
    Comment(String),
    Word(&'a str),
    Dots { ellipsis: bool },
    Nag(u32),
    Star,
    Open,
    Close,
}

#[derive(Debug, Clone)]
struct Token<'a> {
    kind: Kind<'a>,
    pos: Pos,
    /// A blank line lies between the previous token and this one.
    after_blank: bool,
}

/// How a line of moves ended.
enum End {
    /// `)` closed a variation.
    Close,
    /// A termination marker ended the game.
    Result(PdnResult, String),
    /// A new tag section or the end of the text ended the game.
    Unterminated,
}

/// What a parsed line of moves gives.
struct Line {
    moves: Vec<PdnMove>,
    /// Comments before its first move (after its last, when it has none).
    leading: Vec<String>,
    end: End,
}

impl PdnReader<'_> {
    fn game(&mut self) -> Result<Option<PdnGame>, Fail> {
        let Some(first) = self.lexer.peek()? else {
            return Ok(None);
        };
        let mut game = PdnGame {
            start_line: self.carried.first().map_or(first.pos.line, |c| c.1),
            ..PdnGame::default()
        };
        let leading = self.carried.drain(..).map(|c| c.0).collect();
        let line = self.line(0, None, &mut game, leading)?;
        let mut comments = line.leading;
        game.moves = line.moves;
        if let End::Result(result, text) = line.end {
            game.result = Some(result);
            game.result_text = Some(text);
            // Comments after the marker stay with this game, unless a game
            // without tags follows: then they open that one.
            let mut trailing = Vec::new();
            while let Ok(Some(Token {
                kind: Kind::Comment(_),
                ..
            })) = self.lexer.peek()
            {
                if let Ok(Some(Token {
                    kind: Kind::Comment(c),
                    pos,
                    ..
                })) = self.lexer.next()
                {
                    trailing.push((c, pos.line));
                }
            }
            match self.lexer.peek() {
                Ok(
                    None
                    | Some(Token {
                        kind: Kind::Tag(..),
                        ..
                    }),
                )
                | Err(_) => {
                    let trailing = trailing.into_iter().map(|c| c.0);
                    match game.moves.last_mut() {
                        Some(last) => last.comments.extend(trailing),
                        None => comments.extend(trailing),
                    }
                }
                Ok(Some(_)) => self.carried = trailing,
            }
        }
        if !comments.is_empty() {
            game.game_comment = Some(comments.join(" "));
        }
        Ok(Some(game))
    }

    /// Parses a line of moves: the main line (`depth` 0, which also takes
    /// the tag section) or a variation opened at `open`.
    fn line(
        &mut self,
        depth: usize,
        open: Option<Pos>,
        game: &mut PdnGame,
        mut leading: Vec<String>,
    ) -> Result<Line, Fail> {
        let mut moves: Vec<PdnMove> = Vec::new();
        let mut number: Option<(u32, bool, Pos)> = None;
        let mut movetext = false;
        loop {
            let token = self.lexer.peek()?;
            let ends_game = match &token {
                None => true,
                // A tag section followed directly by the next game's tags (no
                // movetext, no blank line) ends where a tag name comes again.
                Some(Token {
                    kind: Kind::Tag(name, _),
                    after_blank,
                    ..
                }) => {
                    movetext
                        || depth > 0
                        || (!game.tags.is_empty() && *after_blank)
                        || game.tags.iter().any(|(n, _)| n.eq_ignore_ascii_case(name))
                }
                Some(_) => false,
            };
            if ends_game {
                if let Some(open) = open {
                    return Err(open.fail("unterminated variation"));
                }
                // A dangling move number is forgiven (`41.` at the end of a
                // cut-off game), unless it is all the game has.
                if let Some((_, _, at)) = number
                    && moves.is_empty()
                    && leading.is_empty()
                    && game.tags.is_empty()
                {
                    return Err(at.fail("move number without a move"));
                }
                return Ok(Line {
                    moves,
                    leading,
                    end: End::Unterminated,
                });
            }
            let Some(token) = token else {
                continue;
            };
            let pos = token.pos;
            let kind = match self.lexer.next()? {
                Some(token) => token.kind,
                None => continue,
            };
            if !matches!(kind, Kind::Tag(..) | Kind::Comment(_)) {
                movetext = true;
            }
            // A move number must be followed by a move (or a comment).
            if let Some((_, _, at)) = number {
                let allowed = match &kind {
                    Kind::Comment(_) => true,
                    Kind::Word(w) => PdnResult::from_token(w).is_none() || depth == 0,
                    Kind::Star => depth == 0,
                    _ => false,
                };
                if !allowed {
                    return Err(at.fail("move number without a move"));
                }
            }
            match kind {
                Kind::Tag(name, value) => game.tags.push((name, value)),
                Kind::Comment(text) => match moves.last_mut() {
                    Some(last) => last.comments.push(text),
                    None => leading.push(text),
                },
                Kind::Star | Kind::Word(_) if depth > 0 && is_result(&kind) => {
                    return Err(pos.fail("result inside a variation"));
                }
                Kind::Star => {
                    return Ok(Line {
                        moves,
                        leading,
                        end: End::Result(PdnResult::Unknown, "*".to_owned()),
                    });
                }
                Kind::Word(word) => {
                    if let Some(result) = PdnResult::from_token(word) {
                        return Ok(Line {
                            moves,
                            leading,
                            end: End::Result(result, word.to_owned()),
                        });
                    }
                    if word.bytes().all(|b| b.is_ascii_digit()) {
                        if let Some((_, _, at)) = number {
                            return Err(at.fail("move number without a move"));
                        }
                        let Some(Token {
                            kind: Kind::Dots { ellipsis },
                            ..
                        }) = self.lexer.peek()?
                        else {
                            return Err(pos.fail(format!("move number '{word}' without '.'")));
                        };
                        self.lexer.next()?;
                        let mut ellipsis = ellipsis;
                        // `12. ...` is one number too.
                        while let Some(Token {
                            kind: Kind::Dots { .. },
                            ..
                        }) = self.lexer.peek()?
                        {
                            self.lexer.next()?;
                            ellipsis = true;
                        }
                        let n = word
                            .parse()
                            .map_err(|_| pos.fail(format!("move number '{word}' too large")))?;
                        number = Some((n, ellipsis, pos));
                    } else if let Some(text) = move_word(word) {
                        let (n, ellipsis) = number
                            .take()
                            .map_or((None, false), |(n, e, _)| (Some(n), e));
                        let mut m = PdnMove {
                            number: n,
                            ellipsis,
                            text,
                            line: pos.line,
                            column: pos.column,
                            ..PdnMove::default()
                        };
                        if depth > 0 && moves.is_empty() {
                            m.comments_before = std::mem::take(&mut leading);
                        }
                        moves.push(m);
                    } else {
                        return Err(pos.fail(format!("invalid move '{word}'")));
                    }
                }
                Kind::Dots { .. } => return Err(pos.fail("unexpected '.'")),
                Kind::Nag(nag) => match moves.last_mut() {
                    Some(last) => last.nags.push(nag),
                    None => return Err(pos.fail("annotation before any move")),
                },
                Kind::Open => {
                    if depth + 1 > MAX_DEPTH {
                        return Err(pos.fail("variations nested too deeply"));
                    }
                    if moves.is_empty() {
                        return Err(pos.fail("variation before any move"));
                    }
                    let variation = self.line(depth + 1, Some(pos), game, Vec::new())?;
                    if let Some(last) = moves.last_mut() {
                        if variation.moves.is_empty() {
                            last.comments.extend(variation.leading);
                        } else {
                            last.variations.push(variation.moves);
                        }
                    }
                }
                Kind::Close => {
                    if depth == 0 {
                        return Err(pos.fail("unmatched ')'"));
                    }
                    return Ok(Line {
                        moves,
                        leading,
                        end: End::Close,
                    });
                }
            }
        }
    }
}

/// The move a word of movetext writes, without the spaces of a padded move (`47 x 9` is
/// `47x9`); `None` when it is not a move.
fn move_word(word: &str) -> Option<String> {
    let text: String = word.chars().filter(|c| !c.is_whitespace()).collect();
    (is_move_text(&text) || text == UNKNOWN_MOVE).then_some(text)
}

fn is_result(kind: &Kind<'_>) -> bool {
    match kind {
        Kind::Star => true,
        Kind::Word(w) => PdnResult::from_token(w).is_some(),
        _ => false,
    }
}

/// The tokenizer. Positions are 1-based; columns count characters.
#[derive(Debug)]
struct Lexer<'a> {
    src: &'a str,
    offset: usize,
    line: usize,
    column: usize,
    /// Nothing but whitespace seen on the current line so far.
    line_blank: bool,
    peeked: Option<Result<Option<Token<'a>>, Fail>>,
}

fn is_word_char(c: char) -> bool {
    c.is_alphanumeric() || matches!(c, '-' | ':' | '/')
}

fn is_move_separator(c: char) -> bool {
    matches!(c, '-' | 'x' | 'X' | ':')
}

/// The length of a square at the start of `s` (`6`, `47`, `c3`), if one is there and
/// ends the word or meets a move separator.
fn square_len(s: &str) -> Option<usize> {
    let b = s.as_bytes();
    let letter = usize::from(
        b.first()
            .is_some_and(|c| c.is_ascii_alphabetic() && !matches!(c, b'x' | b'X')),
    );
    let digits = b[letter..]
        .iter()
        .take_while(|c| c.is_ascii_digit())
        .count();
    if !(1..=2).contains(&digits) {
        return None;
    }
    let len = letter + digits;
    let next = s[len..].chars().next();
    (next.is_none_or(|c| !c.is_alphanumeric() || is_move_separator(c))).then_some(len)
}

/// Whether the text after a padded square may join the move: it is not a move number
/// (`6.`) nor the start of a result (`1-0`).
fn joins_move(rest: &str) -> bool {
    let word: String = rest.chars().take_while(|&c| is_word_char(c)).collect();
    let after = &rest[word.len()..];
    !after.starts_with(['.', '…']) && PdnResult::from_token(&word).is_none()
}

/// How many bytes of `rest` (the text after the word so far, `word`) continue a move that
/// a fixed-width file spaced out: spaces then a square after a word ending in a separator
/// (`1-` ` 6`), or spaces, a separator, spaces and a square after a lone square
/// (`47` ` x 9`). Only spaces and tabs, never a line break, and never a square that is a
/// move number or starts a result.
fn padded_continuation(word: &str, rest: &str) -> Option<usize> {
    let inline = |s: &str| s.len() - s.trim_start_matches([' ', '\t']).len();
    let spaces = inline(rest);
    if spaces == 0 {
        return None;
    }
    let after = &rest[spaces..];
    let compact: String = word.chars().filter(|c| !c.is_whitespace()).collect();
    let last = compact.chars().last()?;
    if is_move_separator(last) {
        // `1-` ` 6`: the word must be squares and separators so far.
        let body = &compact[..compact.len() - last.len_utf8()];
        if !(is_move_text(body) || square_len(body) == Some(body.len())) {
            return None;
        }
        square_len(after)?;
        return joins_move(after).then_some(spaces);
    }
    // `47` ` x 9`: only after a lone square (never a move of its own) or a move already
    // spaced out (`47 x 9` ` x 3`), so that `32-28 - 33-29` stays a move, a move the
    // record does not know and a move.
    let spaced = word.contains([' ', '\t']);
    if !(spaced || square_len(&compact) == Some(compact.len())) {
        return None;
    }
    let sep = after.chars().next().filter(|&c| is_move_separator(c))?;
    let tail = &after[sep.len_utf8()..];
    let more = inline(tail);
    let square = &tail[more..];
    let len = square_len(square)?;
    // The square after a spaced separator ends the word: `20 - 25`, not `20 - 25-30`.
    let ends = square[len..]
        .chars()
        .next()
        .is_none_or(|c| !is_word_char(c));
    (ends && joins_move(square)).then_some(spaces + sep.len_utf8() + more)
}

fn is_tag_name_char(c: char) -> bool {
    c.is_alphanumeric() || c == '_'
}

impl<'a> Lexer<'a> {
    fn new(src: &'a str) -> Lexer<'a> {
        Lexer {
            src,
            offset: 0,
            line: 1,
            column: 1,
            line_blank: true,
            peeked: None,
        }
    }

    fn pos(&self) -> Pos {
        Pos {
            offset: self.offset,
            line: self.line,
            column: self.column,
        }
    }

    fn peek_char(&self) -> Option<char> {
        self.rest().chars().next()
    }

    /// The text not read yet.
    fn rest(&self) -> &'a str {
        &self.src[self.offset..]
    }

    fn bump(&mut self) -> Option<char> {
        let c = self.peek_char()?;
        self.offset += c.len_utf8();
        match c {
            '\r' => {
                if self.peek_char() == Some('\n') {
                    self.offset += 1;
                }
                self.line += 1;
                self.column = 1;
            }
            '\n' => {
                self.line += 1;
                self.column = 1;
            }
            _ => self.column += 1,
        }
        Some(c)
    }

    fn peek(&mut self) -> Result<Option<Token<'a>>, Fail> {
        if self.peeked.is_none() {
            self.peeked = Some(self.lex());
        }
        self.peeked.clone().unwrap_or(Ok(None))
    }

    fn next(&mut self) -> Result<Option<Token<'a>>, Fail> {
        match self.peeked.take() {
            Some(token) => token,
            None => self.lex(),
        }
    }

    /// Skips whitespace and `%` escape lines; says whether a blank line was
    /// among them.
    fn skip_space(&mut self) -> bool {
        let mut blank = false;
        while let Some(c) = self.peek_char() {
            if c == '%' && self.column == 1 {
                while self.peek_char().is_some_and(|c| c != '\n' && c != '\r') {
                    self.bump();
                }
                self.line_blank = false;
            } else if c == '\n' || c == '\r' {
                if self.line_blank {
                    blank = true;
                }
                self.bump();
                self.line_blank = true;
            } else if c.is_whitespace() || c == '\u{FEFF}' {
                self.bump();
            } else {
                break;
            }
        }
        blank
    }

    /// The next token; empty comments are skipped like whitespace.
    fn lex(&mut self) -> Result<Option<Token<'a>>, Fail> {
        let mut after_blank = false;
        loop {
            after_blank |= self.skip_space();
            let Some(token) = self.lex_one()? else {
                return Ok(None);
            };
            if !matches!(&token.kind, Kind::Comment(c) if c.is_empty()) {
                return Ok(Some(Token {
                    after_blank,
                    ..token
                }));
            }
        }
    }

    fn lex_one(&mut self) -> Result<Option<Token<'a>>, Fail> {
        let pos = self.pos();
        let Some(c) = self.peek_char() else {
            return Ok(None);
        };
        self.line_blank = false;
        let kind = match c {
            '[' => self.tag(pos)?,
            '{' => {
                self.bump();
                let start = self.offset;
                loop {
                    match self.peek_char() {
                        None => return Err(pos.fail("unterminated comment")),
                        Some('}') => break,
                        Some(_) => {
                            self.bump();
                        }
                    }
                }
                let text = normalize(&self.src[start..self.offset]);
                self.bump();
                Kind::Comment(text)
            }
            ';' => {
                self.bump();
                let start = self.offset;
                while self.peek_char().is_some_and(|c| c != '\n' && c != '\r') {
                    self.bump();
                }
                Kind::Comment(normalize(&self.src[start..self.offset]))
            }
            '.' | '…' => {
                let mut dots = 0;
                while let Some(c @ ('.' | '…')) = self.peek_char() {
                    dots += if c == '.' { 1 } else { 3 };
                    self.bump();
                }
                Kind::Dots {
                    ellipsis: dots >= 2,
                }
            }
            '$' => {
                self.bump();
                let start = self.offset;
                while self.peek_char().is_some_and(|c| c.is_ascii_digit()) {
                    self.bump();
                }
                let digits = &self.src[start..self.offset];
                if digits.is_empty() {
                    return Err(pos.fail("expected a number after '$'"));
                }
                Kind::Nag(
                    digits
                        .parse()
                        .map_err(|_| pos.fail(format!("annotation '${digits}' too large")))?,
                )
            }
            '!' | '?' => {
                let start = self.offset;
                while self.peek_char().is_some_and(|c| c == '!' || c == '?') {
                    self.bump();
                }
                let nag = match &self.src[start..self.offset] {
                    "!" => 1,
                    "?" => 2,
                    "!!" => 3,
                    "??" => 4,
                    "!?" => 5,
                    "?!" => 6,
                    other => return Err(pos.fail(format!("unknown annotation '{other}'"))),
                };
                Kind::Nag(nag)
            }
            '*' => {
                self.bump();
                Kind::Star
            }
            '(' => {
                self.bump();
                Kind::Open
            }
            ')' => {
                self.bump();
                Kind::Close
            }
            c if is_word_char(c) => {
                let start = self.offset;
                loop {
                    while self.peek_char().is_some_and(is_word_char) {
                        self.bump();
                    }
                    // Fixed-width files pad squares and space out moves (`1- 6`,
                    // `47x 9`, `47 x 9`): the move goes on past the spaces.
                    let Some(len) = padded_continuation(&self.src[start..self.offset], self.rest())
                    else {
                        break;
                    };
                    for _ in self.src[self.offset..self.offset + len].chars() {
                        self.bump();
                    }
                }
                Kind::Word(&self.src[start..self.offset])
            }
            c => return Err(pos.fail(format!("unexpected character '{}'", c.escape_debug()))),
        };
        Ok(Some(Token {
            kind,
            pos,
            after_blank: false,
        }))
    }

    /// Reads `[Name "value"]` (or `[Name value]`); a quoted value may hold
    /// `\"` and `\\` but no line break.
    fn tag(&mut self, pos: Pos) -> Result<Kind<'a>, Fail> {
        self.bump();
        self.skip_inline_space();
        let start = self.offset;
        while self.peek_char().is_some_and(is_tag_name_char) {
            self.bump();
        }
        let name = self.src[start..self.offset].to_owned();
        if name.is_empty() {
            return Err(self.pos().fail("tag without a name"));
        }
        self.skip_inline_space();
        let value = if self.peek_char() == Some('"') {
            let quote = self.pos();
            self.bump();
            let mut value = String::new();
            loop {
                match self.peek_char() {
                    None | Some('\n' | '\r') => return Err(quote.fail("unterminated tag value")),
                    Some('"') => {
                        self.bump();
                        break;
                    }
                    Some('\\') => {
                        self.bump();
                        match self.peek_char() {
                            Some(c @ ('"' | '\\')) => {
                                self.bump();
                                value.push(c);
                            }
                            _ => value.push('\\'),
                        }
                    }
                    Some(c) => {
                        self.bump();
                        value.push(c);
                    }
                }
            }
            self.skip_inline_space();
            value
        } else {
            let start = self.offset;
            while self
                .peek_char()
                .is_some_and(|c| c != ']' && c != '\n' && c != '\r')
            {
                self.bump();
            }
            self.src[start..self.offset].trim().to_owned()
        };
        match self.peek_char() {
            Some(']') => {
                self.bump();
                Ok(Kind::Tag(name, value))
            }
            None | Some('\n' | '\r') => Err(pos.fail("unterminated tag")),
            Some(c) => Err(self
                .pos()
                .fail(format!("expected ']', found '{}'", c.escape_debug()))),
        }
    }

    fn skip_inline_space(&mut self) {
        while self
            .peek_char()
            .is_some_and(|c| c.is_whitespace() && c != '\n' && c != '\r')
        {
            self.bump();
        }
    }

    /// Moves past an error to the start of the next tag section: a line
    /// starting with `[` whose previous line does not.
    fn recover(&mut self, fail: &Fail) {
        self.peeked = None;
        let line_start = self.src[..fail.offset]
            .rfind(['\n', '\r'])
            .map_or(0, |i| i + 1);
        let mut previous_tag = starts_tag(&self.src[line_start..]);
        self.offset = line_start;
        self.line = fail.error.line;
        self.column = 1;
        loop {
            while self.peek_char().is_some_and(|c| c != '\n' && c != '\r') {
                self.bump();
            }
            if self.bump().is_none() {
                return;
            }
            let tag = starts_tag(&self.src[self.offset..]);
            if tag && !previous_tag {
                self.line_blank = true;
                return;
            }
            previous_tag = tag;
        }
    }
}

/// Whether a line (the text from its start) starts with `[` after spaces.
fn starts_tag(line: &str) -> bool {
    line.chars()
        .find(|c| !(c.is_whitespace() && *c != '\n' && *c != '\r'))
        == Some('[')
}

/// Collapses runs of whitespace to one space and trims.
fn normalize(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

// ---------------------------------------------------------------------------
// Writing
// ---------------------------------------------------------------------------

/// The seven-tag roster, written first and in this order when present.
const ROSTER: [&str; 7] = ["Event", "Site", "Date", "Round", "White", "Black", "Result"];

/// The longest movetext line the writer makes (unless one word is longer).
const LINE_WIDTH: usize = 80;

/// Writes a game as PDN 3.0 text, ending with a line break.
///
/// Tags come first, the seven-tag roster (Event, Site, Date, Round, White,
/// Black, Result) in that order, then the others in their order; values are
/// escaped. Then a blank line and the movetext: move numbers as the moves
/// carry them, comments in `{}` (or after `;` when they hold a `}`),
/// variations in `()`, NAGs 1 to 6 as `!`, `?`, `!!`, `??`, `!?`, `?!`
/// suffixes and others as `$n`, and the result at the end, as written when
/// it was read or else in its canonical form. Movetext lines are wrapped at
/// 80 characters, except where one word is longer or a `;` comment (which
/// runs to the end of its line) makes the line longer; a `[%...]` command in a
/// comment (`[%clock w0:09:57 B0:09:58]`) counts as one word. A game without
/// a result is written without a termination marker (use [`PdnResult::Unknown`]
/// for `*`).
///
/// Reading the text back with [`read_games`] gives the same game, up to
/// positions and the order of tags.
pub fn write_game(game: &PdnGame) -> String {
    let mut out = String::new();
    for (name, value) in ordered_tags(&game.tags) {
        out.push('[');
        out.extend(
            name.chars()
                .map(|c| if is_tag_name_char(c) { c } else { '_' }),
        );
        if name.is_empty() {
            out.push('_');
        }
        out.push_str(" \"");
        for c in value.chars() {
            match c {
                '"' | '\\' => {
                    out.push('\\');
                    out.push(c);
                }
                '\n' | '\r' => out.push(' '),
                c => out.push(c),
            }
        }
        out.push_str("\"]\n");
    }
    let mut atoms = Vec::new();
    if let Some(comment) = &game.game_comment {
        comment_atoms(comment, &mut atoms);
    }
    line_atoms(&game.moves, &mut atoms);
    if let Some(result) = game.result {
        let text = match &game.result_text {
            Some(t) if PdnResult::from_token(t) == Some(result) => t.as_str(),
            _ => result.as_str(),
        };
        atoms.push(Atom::new(text.to_owned()));
    }
    if !atoms.is_empty() {
        if !game.tags.is_empty() {
            out.push('\n');
        }
        wrap(&atoms, &mut out);
    }
    out
}

/// Writes games one after another, separated by blank lines.
pub fn write_games<'a>(games: impl IntoIterator<Item = &'a PdnGame>) -> String {
    let mut out = String::new();
    for game in games {
        if !out.is_empty() {
            out.push('\n');
        }
        out.push_str(&write_game(game));
    }
    out
}

/// The tags in writing order: the roster first (stable), then the rest.
pub fn ordered_tags(tags: &[(String, String)]) -> Vec<&(String, String)> {
    let rank = |name: &str| {
        ROSTER
            .iter()
            .position(|r| r.eq_ignore_ascii_case(name))
            .unwrap_or(ROSTER.len())
    };
    let mut ordered: Vec<_> = tags.iter().collect();
    ordered.sort_by_key(|(name, _)| rank(name));
    ordered
}

/// A word of movetext; `break_after` forces a line break after it (a `;`
/// comment runs to the end of its line).
struct Atom {
    text: String,
    break_after: bool,
}

impl Atom {
    fn new(text: String) -> Atom {
        Atom {
            text,
            break_after: false,
        }
    }
}

fn comment_atoms(comment: &str, atoms: &mut Vec<Atom>) {
    let words: Vec<&str> = comment.split_whitespace().collect();
    if words.is_empty() {
        return;
    }
    if comment.contains('}') {
        atoms.push(Atom {
            text: format!("; {}", words.join(" ")),
            break_after: true,
        });
        return;
    }
    // A command such as `[%clock w0:09:57 B0:09:58]` stays on one line: readers that
    // look for it line by line find it whole.
    let mut groups: Vec<String> = Vec::new();
    let mut open = false;
    for word in words {
        if open && let Some(g) = groups.last_mut() {
            g.push(' ');
            g.push_str(word);
        } else {
            groups.push(word.to_owned());
            open = word.starts_with("[%");
        }
        if word.contains(']') {
            open = false;
        }
    }
    let last = groups.len() - 1;
    for (i, group) in groups.into_iter().enumerate() {
        let mut text = String::new();
        if i == 0 {
            text.push('{');
        }
        text.push_str(&group);
        if i == last {
            text.push('}');
        }
        atoms.push(Atom::new(text));
    }
}

fn line_atoms(moves: &[PdnMove], atoms: &mut Vec<Atom>) {
    for m in moves {
        for c in &m.comments_before {
            comment_atoms(c, atoms);
        }
        // A move number is kept on the same line as its move.
        let mut text = match m.number {
            Some(n) if m.ellipsis => format!("{n}... "),
            Some(n) => format!("{n}. "),
            None => String::new(),
        };
        text.push_str(&m.text);
        let mut nags = m.nags.as_slice();
        if let Some((&first, rest)) = nags.split_first() {
            let suffix = match first {
                1 => "!",
                2 => "?",
                3 => "!!",
                4 => "??",
                5 => "!?",
                6 => "?!",
                _ => "",
            };
            if !suffix.is_empty() {
                text.push_str(suffix);
                nags = rest;
            }
        }
        atoms.push(Atom::new(text));
        for nag in nags {
            atoms.push(Atom::new(format!("${nag}")));
        }
        for c in &m.comments {
            comment_atoms(c, atoms);
        }
        for variation in &m.variations {
            let start = atoms.len();
            line_atoms(variation, atoms);
            if atoms.len() == start {
                continue;
            }
            atoms[start].text.insert(0, '(');
            match atoms.last_mut() {
                Some(last) if !last.break_after => last.text.push(')'),
                _ => atoms.push(Atom::new(")".to_owned())),
            }
        }
    }
}

fn wrap(atoms: &[Atom], out: &mut String) {
    let mut width = 0;
    let mut break_next = false;
    for atom in atoms {
        let len = atom.text.chars().count();
        if width > 0 && (break_next || width + 1 + len > LINE_WIDTH) {
            out.push('\n');
            width = 0;
        }
        if width > 0 {
            out.push(' ');
            width += 1;
        }
        out.push_str(&atom.text);
        width += len;
        break_next = atom.break_after;
    }
    out.push('\n');
}
