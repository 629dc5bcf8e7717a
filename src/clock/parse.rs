//! The time-control parser, for the friendly form and the PDN tag (strict mode).
//!
//! One recursive-descent pass over the bytes. Every error carries the byte offset and
//! says what was expected there (with an example); a control that parses but breaks a
//! rule or a limit of [`TimeControl::new`] points at the number concerned.

use std::str::FromStr;

use super::Millis;
use super::control::{Bonus, HOUR, MINUTE, MoveLimit, Options, Period, SECOND, TimeControl};
use super::error::{ControlError, ParseError, ParseErrorKind as K};

const TIME: &str = "a time such as 90m, 1h30m, 15min or 300 (seconds)";
const AFTER_THEN: &str = "a period after 'then', e.g. 1h/25 or 15min+30s";
const AFTER_COMMA: &str = "a period after ',', e.g. 1h/25 or 15m+30s";
const AFTER_COLON: &str = "a period after ':', e.g. 3600 or 25/3600";
const MOVES: &str = "a move count after '/', e.g. 2h/50";
const PDN_TIME: &str = "a time after '/', e.g. 40/7200";
const UNIT: &str = "a unit (h, min, m, s or ms), e.g. 1h30m";
const INCREMENT: &str = "an increment after '+', e.g. 5m+3s";
const DELAY: &str = "a delay after 'd', e.g. 90m d30s";
const BRONSTEIN: &str = "a delay after 'b', e.g. 90m b30s";
const OPTION: &str = "an option after ';': inc-at-start, dgt or move-limit";
const MOVE_LIMIT: &str = "a time after move-limit, e.g. move-limit 5m+1m";
const ALLOWANCE_PLUS: &str = "'+' and the allowance after the move limit, e.g. move-limit 5m+1m";
const ALLOWANCE: &str = "an allowance after '+', e.g. move-limit 5m+1m";
const NEXT: &str = "'+', 'd', 'b', 'then', ',', ';' or the end";
const NEXT_AFTER_BONUS: &str = "'then', ',', ';' or the end";
const NEXT_AFTER_OPTION: &str = "';' and another option, or the end";
const PDN_NEXT: &str = "'+', ':' or the end";
const PDN_NEXT_AFTER_BONUS: &str = "':' or the end";

/// Where the parts of one period were written (byte offsets), to point errors there.
#[derive(Clone, Copy, Default)]
struct Spans {
    start: usize,
    time: usize,
    moves: usize,
    bonus: usize,
}

/// Where the options were written.
#[derive(Clone, Copy, Default)]
struct OptionSpans {
    dgt: usize,
    limit: usize,
    allowance: usize,
}

/// Parses a whole time control. `pdn`: accept only the PDN tag syntax.
pub(crate) fn control(s: &str, pdn: bool) -> Result<TimeControl, ParseError> {
    control_as(s, pdn, true)
}

/// [`control`], with the limits on new controls or without them (a recorded control).
pub(crate) fn control_as(s: &str, pdn: bool, limits: bool) -> Result<TimeControl, ParseError> {
    let mut p = Parser {
        s: s.as_bytes(),
        pos: 0,
        pdn,
    };
    p.ws();
    if p.peek().is_none() {
        return Err(p.err(K::Empty));
    }
    let mut periods = Vec::new();
    let mut spans = Vec::new();
    let mut what = TIME;
    loop {
        let (period, span) = p.period(what)?;
        periods.push(period);
        spans.push(span);
        p.ws();
        what = match p.peek() {
            Some(b':') => AFTER_COLON,
            Some(b',') if !pdn => AFTER_COMMA,
            Some(b't') if !pdn && p.keyword(b"then") => AFTER_THEN,
            _ => break,
        };
        p.pos += if what == AFTER_THEN { 4 } else { 1 };
        p.ws();
    }
    let last_bonus = periods.last().is_some_and(|q| q.bonus != Bonus::None);
    let (options, option_spans) = if pdn {
        (Options::default(), None)
    } else {
        p.options()?
    };
    p.ws();
    if p.peek().is_some() {
        let what = match (pdn, option_spans.is_some(), last_bonus) {
            (true, _, false) => PDN_NEXT,
            (true, _, true) => PDN_NEXT_AFTER_BONUS,
            (false, true, _) => NEXT_AFTER_OPTION,
            (false, false, false) => NEXT,
            (false, false, true) => NEXT_AFTER_BONUS,
        };
        return Err(p.expected(what));
    }
    TimeControl::checked_as(periods, options, limits).map_err(|e| {
        let span = |n: usize| spans.get(n.wrapping_sub(1)).copied().unwrap_or_default();
        let o = option_spans.unwrap_or_default();
        let position = match e {
            ControlError::NoPeriods => s.len(),
            ControlError::TooManyPeriods => span(super::limits::MAX_PERIODS + 1).start,
            ControlError::MissingMoveCount { period } => span(period).start,
            ControlError::ZeroMoveCount { period } | ControlError::TooManyMoves { period } => {
                span(period).moves
            }
            ControlError::ZeroTime { period } | ControlError::TimeTooLong { period } => {
                span(period).time
            }
            ControlError::BonusTooLarge { period } => span(period).bonus,
            ControlError::DgtNeedsSuddenDeath => o.dgt,
            ControlError::ZeroMoveLimit | ControlError::MoveLimitTooLong => o.limit,
            ControlError::AllowanceTooLong => o.allowance,
        };
        ParseError {
            position,
            kind: K::Control(e),
        }
    })
}

struct Parser<'a> {
    s: &'a [u8],
    pos: usize,
    pdn: bool,
}

/// A duration as read: its milliseconds (saturated: a huge number is refused later by
/// the limits, pointing at it), and whether it was a plain number (no unit).
struct Read {
    ms: Millis,
    bare: bool,
}

impl Parser<'_> {
    fn err(&self, kind: K) -> ParseError {
        ParseError {
            position: self.pos,
            kind,
        }
    }

    /// "Expected `what` here", naming what was found instead.
    fn expected(&self, what: &'static str) -> ParseError {
        self.err(K::Expected {
            what,
            found: self.peek_char(),
        })
    }

    fn peek(&self) -> Option<u8> {
        self.s.get(self.pos).copied()
    }

    fn peek_at(&self, ahead: usize) -> Option<u8> {
        self.s.get(self.pos.wrapping_add(ahead)).copied()
    }

    /// Whether `word` is at the current position, not followed by another letter.
    fn keyword(&self, word: &[u8]) -> bool {
        self.s.get(self.pos..).is_some_and(|rest| {
            rest.starts_with(word)
                && !rest
                    .get(word.len())
                    .is_some_and(|c| c.is_ascii_alphabetic())
        })
    }

    /// The character at the current position (for error messages).
    fn peek_char(&self) -> Option<char> {
        let rest = self.s.get(self.pos..)?;
        if rest.is_empty() {
            return None;
        }
        match std::str::from_utf8(rest) {
            Ok(t) => t.chars().next(),
            // The input came from a &str, so `pos` is only off a boundary after a
            // multi-byte character we stepped into; report the replacement character.
            Err(_) => Some(char::REPLACEMENT_CHARACTER),
        }
    }

    fn ws(&mut self) {
        while self.peek().is_some_and(|c| c.is_ascii_whitespace()) {
            self.pos += 1;
        }
    }

    /// Digits, saturating at `u64::MAX`. `what`: the error if there is no digit.
    fn number(&mut self, what: &'static str) -> Result<u64, ParseError> {
        let start = self.pos;
        let mut n: u64 = 0;
        while let Some(c) = self.peek().filter(u8::is_ascii_digit) {
            n = n.saturating_mul(10).saturating_add(u64::from(c - b'0'));
            self.pos += 1;
        }
        if self.pos == start {
            return Err(self.expected(what));
        }
        Ok(n)
    }

    /// The unit at the current position, if any: its size and rank (h 3, min/m 2, s 1,
    /// ms 0) and its length.
    fn unit_at(&self) -> Option<(Millis, u8, usize)> {
        match (self.peek(), self.peek_at(1), self.peek_at(2)) {
            (Some(b'h'), _, _) => Some((HOUR, 3, 1)),
            (Some(b'm'), Some(b'i'), Some(b'n')) => Some((MINUTE, 2, 3)),
            (Some(b'm'), Some(b's'), _) => Some((1, 0, 2)),
            (Some(b'm'), _, _) => Some((MINUTE, 2, 1)),
            (Some(b's'), _, _) => Some((SECOND, 1, 1)),
            _ => None,
        }
    }

    fn unit(&mut self) -> Option<(Millis, u8)> {
        let (size, rank, len) = self.unit_at()?;
        self.pos += len;
        Some((size, rank))
    }

    /// `90`, `90s`, `1h30m`, `15min`, `1500ms`: a bare number is seconds. `what`: the
    /// error if there is no number.
    fn duration(&mut self, what: &'static str) -> Result<Read, ParseError> {
        let first = self.number(what)?;
        let unit_pos = self.pos;
        let Some((size, mut rank)) = self.unit() else {
            // A letter right after the number that starts nothing the grammar knows.
            if !self.pdn
                && self
                    .peek()
                    .is_some_and(|c| c.is_ascii_alphabetic() && !matches!(c, b'd' | b'b' | b't'))
            {
                return Err(self.expected(UNIT));
            }
            return Ok(Read {
                ms: first.saturating_mul(SECOND),
                bare: true,
            });
        };
        if self.pdn {
            return Err(ParseError {
                position: unit_pos,
                kind: K::UnitInPdn,
            });
        }
        let mut ms = first.saturating_mul(size);
        while self.peek().is_some_and(|c| c.is_ascii_digit()) {
            let n = self.number(UNIT)?;
            let at = self.pos;
            let Some((size, r)) = self.unit() else {
                return Err(self.expected(UNIT));
            };
            if r >= rank {
                return Err(ParseError {
                    position: at,
                    kind: K::UnitsOutOfOrder,
                });
            }
            rank = r;
            ms = ms.saturating_add(n.saturating_mul(size));
        }
        Ok(Read { ms, bare: false })
    }

    /// `2h/50`, `40/7200`, `15min+30s`, `90m d30s`, `5m b3s`. `what`: the error if no
    /// period starts here.
    fn period(&mut self, what: &'static str) -> Result<(Period, Spans), ParseError> {
        if self.peek() == Some(b'*') {
            return Err(self.err(K::Sandclock));
        }
        let mut spans = Spans {
            start: self.pos,
            time: self.pos,
            moves: self.pos,
            bonus: self.pos,
        };
        let first = self.duration(what)?;
        self.ws();
        let (moves, time) = if self.peek() == Some(b'/') {
            self.pos += 1;
            self.ws();
            if first.bare {
                // PDN order: moves/seconds (the right side may carry a unit).
                let moves = u32::try_from(first.ms / SECOND).unwrap_or(u32::MAX);
                spans.time = self.pos;
                (Some(moves), self.duration(PDN_TIME)?.ms)
            } else {
                // Friendly order: time/moves.
                spans.moves = self.pos;
                let n = self.number(MOVES)?;
                if self.unit_at().is_some() {
                    return Err(self.err(K::MoveCountWithUnit));
                }
                (Some(u32::try_from(n).unwrap_or(u32::MAX)), first.ms)
            }
        } else {
            (None, first.ms)
        };
        self.ws();
        let bonus = match self.peek() {
            Some(b'+') => {
                self.pos += 1;
                self.ws();
                spans.bonus = self.pos;
                Bonus::Increment(self.duration(INCREMENT)?.ms)
            }
            Some(b'd') if !self.pdn => {
                self.pos += 1;
                self.ws();
                spans.bonus = self.pos;
                Bonus::Delay(self.duration(DELAY)?.ms)
            }
            Some(b'b') if !self.pdn => {
                self.pos += 1;
                self.ws();
                spans.bonus = self.pos;
                Bonus::Bronstein(self.duration(BRONSTEIN)?.ms)
            }
            _ => Bonus::None,
        };
        Ok((Period { moves, time, bonus }, spans))
    }

    /// `; inc-at-start`, `; dgt`, `; move-limit 5m+1m`, in any order, each at most once.
    /// The spans are `None` when there was no option at all.
    fn options(&mut self) -> Result<(Options, Option<OptionSpans>), ParseError> {
        let mut o = Options::default();
        let mut spans: Option<OptionSpans> = None;
        loop {
            self.ws();
            if self.peek() != Some(b';') {
                return Ok((o, spans));
            }
            self.pos += 1;
            self.ws();
            let start = self.pos;
            while self
                .peek()
                .is_some_and(|c| c.is_ascii_alphanumeric() || c == b'-')
            {
                self.pos += 1;
            }
            let word = self.s.get(start..self.pos).unwrap_or_default();
            let dup = ParseError {
                position: start,
                kind: K::DuplicateOption,
            };
            let sp = spans.get_or_insert_with(OptionSpans::default);
            match word {
                b"inc-at-start" => {
                    if o.increment_at_start {
                        return Err(dup);
                    }
                    o.increment_at_start = true;
                }
                b"dgt" => {
                    if o.period_on_flag {
                        return Err(dup);
                    }
                    o.period_on_flag = true;
                    sp.dgt = start;
                }
                b"move-limit" => {
                    if o.move_limit.is_some() {
                        return Err(dup);
                    }
                    self.ws();
                    sp.limit = self.pos;
                    let limit = self.duration(MOVE_LIMIT)?.ms;
                    self.ws();
                    if self.peek() != Some(b'+') {
                        return Err(self.expected(ALLOWANCE_PLUS));
                    }
                    self.pos += 1;
                    self.ws();
                    sp.allowance = self.pos;
                    let allowance = self.duration(ALLOWANCE)?.ms;
                    o.move_limit = Some(MoveLimit { limit, allowance });
                }
                _ => {
                    self.pos = start;
                    return Err(self.expected(OPTION));
                }
            }
        }
    }
}

impl TimeControl {
    /// Parses a PDN `TimeControl` tag that holds a time control (not `?` or `-`).
    ///
    /// # Errors
    ///
    /// A [`ParseError`] saying what is wrong and at which byte; `?` and `-` are errors
    /// here (use [`PdnTimeControl`](super::PdnTimeControl) to accept them).
    pub fn from_pdn(s: &str) -> Result<TimeControl, ParseError> {
        control(s, true)
    }
}

/// How a control is read back from a log (serde): the limits on new controls are not
/// applied, so a game recorded before they existed (or under other limits) replays.
impl TryFrom<String> for TimeControl {
    type Error = ParseError;

    fn try_from(s: String) -> Result<TimeControl, ParseError> {
        control_as(&s, false, false)
    }
}

impl FromStr for TimeControl {
    type Err = ParseError;

    /// Parses the friendly form; PDN fields (`40/7200:3600`, `4800+60`) are accepted too.
    fn from_str(s: &str) -> Result<TimeControl, ParseError> {
        control(s, false)
    }
}
