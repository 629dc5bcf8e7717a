//! The time-control parser, for the friendly form and the PDN tag (strict mode).
//!
//! One recursive-descent pass over the bytes; every error carries the byte offset.

use std::str::FromStr;

use super::Millis;
use super::control::{Bonus, HOUR, MINUTE, MoveLimit, Options, Period, SECOND, TimeControl};
use super::error::{ControlError, ParseError, ParseErrorKind as K};

/// Parses a whole time control. `pdn`: accept only the PDN tag syntax.
pub(crate) fn control(s: &str, pdn: bool) -> Result<TimeControl, ParseError> {
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
    let mut starts = Vec::new();
    loop {
        starts.push(p.pos);
        periods.push(p.period()?);
        p.ws();
        match p.peek() {
            Some(b':') => p.pos += 1,
            Some(b',') if !pdn => p.pos += 1,
            _ => break,
        }
        p.ws();
    }
    let options = if pdn {
        Options::default()
    } else {
        p.options()?
    };
    p.ws();
    if let Some(c) = p.peek_char() {
        return Err(p.err(K::Unexpected(c)));
    }
    TimeControl::checked(periods, options).map_err(|e| {
        // Point at the period concerned when there is one, else at the end.
        let period = match e {
            ControlError::MissingMoveCount { period } | ControlError::ZeroMoveCount { period } => {
                Some(period)
            }
            _ => None,
        };
        let position = period
            .and_then(|n| starts.get(n.wrapping_sub(1)).copied())
            .unwrap_or(s.len());
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

/// A duration as read: its milliseconds, and the plain number if it had no unit.
struct Read {
    ms: Millis,
    bare: Option<u64>,
}

impl Parser<'_> {
    fn err(&self, kind: K) -> ParseError {
        ParseError {
            position: self.pos,
            kind,
        }
    }

    fn peek(&self) -> Option<u8> {
        self.s.get(self.pos).copied()
    }

    fn peek_at(&self, ahead: usize) -> Option<u8> {
        self.s.get(self.pos.wrapping_add(ahead)).copied()
    }

    /// The character at the current position (for error messages).
    fn peek_char(&self) -> Option<char> {
        let rest = self.s.get(self.pos..)?;
        match std::str::from_utf8(rest) {
            Ok(t) => t.chars().next(),
            // The input came from a &str, so `pos` is only off a boundary after a
            // multi-byte character we stepped into; report the replacement character.
            Err(_) => Some(char::REPLACEMENT_CHARACTER),
        }
    }

    /// An error for "expected X here": at the end, `UnexpectedEnd`.
    fn expected(&self, kind: K) -> ParseError {
        match self.peek() {
            None => self.err(K::UnexpectedEnd),
            Some(_) => self.err(kind),
        }
    }

    fn ws(&mut self) {
        while self.peek().is_some_and(|c| c.is_ascii_whitespace()) {
            self.pos += 1;
        }
    }

    fn number(&mut self) -> Result<u64, ParseError> {
        let start = self.pos;
        let mut n: u64 = 0;
        while let Some(c) = self.peek().filter(u8::is_ascii_digit) {
            n = n
                .checked_mul(10)
                .and_then(|n| n.checked_add(u64::from(c - b'0')))
                .ok_or(ParseError {
                    position: start,
                    kind: K::NumberTooLarge,
                })?;
            self.pos += 1;
        }
        if self.pos == start {
            return Err(self.expected(K::ExpectedNumber));
        }
        Ok(n)
    }

    /// The unit at the current position, if any: its size and rank (h 3, m 2, s 1, ms 0).
    fn unit(&mut self) -> Option<(Millis, u8)> {
        let (size, rank, len) = match (self.peek(), self.peek_at(1)) {
            (Some(b'h'), _) => (HOUR, 3, 1),
            (Some(b'm'), Some(b's')) => (1, 0, 2),
            (Some(b'm'), _) => (MINUTE, 2, 1),
            (Some(b's'), _) => (SECOND, 1, 1),
            _ => return None,
        };
        self.pos += len;
        Some((size, rank))
    }

    /// `90`, `90s`, `1h30m`, `1500ms`: a bare number is seconds.
    fn duration(&mut self) -> Result<Read, ParseError> {
        let start = self.pos;
        let first = self.number()?;
        let unit_pos = self.pos;
        let Some((size, mut rank)) = self.unit() else {
            let ms = first.checked_mul(SECOND).ok_or(ParseError {
                position: start,
                kind: K::NumberTooLarge,
            })?;
            return Ok(Read {
                ms,
                bare: Some(first),
            });
        };
        if self.pdn {
            return Err(ParseError {
                position: unit_pos,
                kind: K::UnitInPdn,
            });
        }
        let too_large = ParseError {
            position: start,
            kind: K::NumberTooLarge,
        };
        let mut ms = first.checked_mul(size).ok_or(too_large)?;
        while self.peek().is_some_and(|c| c.is_ascii_digit()) {
            let n = self.number()?;
            let at = self.pos;
            let Some((size, r)) = self.unit() else {
                return Err(self.err(K::ExpectedUnit));
            };
            if r >= rank {
                return Err(ParseError {
                    position: at,
                    kind: K::UnitsOutOfOrder,
                });
            }
            rank = r;
            ms = n
                .checked_mul(size)
                .and_then(|t| ms.checked_add(t))
                .ok_or(too_large)?;
        }
        Ok(Read { ms, bare: None })
    }

    /// `2h/50`, `40/7200`, `15m+30s`, `90m d30s`, `5m b3s`.
    fn period(&mut self) -> Result<Period, ParseError> {
        if self.peek() == Some(b'*') {
            return Err(self.err(K::Sandclock));
        }
        let start = self.pos;
        let first = self.duration()?;
        self.ws();
        let (moves, time) = if self.peek() == Some(b'/') {
            self.pos += 1;
            self.ws();
            match first.bare {
                // PDN order: moves/seconds (the right side may carry a unit).
                Some(n) => {
                    let moves = u32::try_from(n).map_err(|_| ParseError {
                        position: start,
                        kind: K::NumberTooLarge,
                    })?;
                    (Some(moves), self.duration()?.ms)
                }
                // Friendly order: time/moves.
                None => {
                    let at = self.pos;
                    if !self.peek().is_some_and(|c| c.is_ascii_digit()) {
                        return Err(self.expected(K::ExpectedMoveCount));
                    }
                    let n = self.number()?;
                    let moves = u32::try_from(n).map_err(|_| ParseError {
                        position: at,
                        kind: K::NumberTooLarge,
                    })?;
                    (Some(moves), first.ms)
                }
            }
        } else {
            (None, first.ms)
        };
        self.ws();
        let bonus = match self.peek() {
            Some(b'+') => {
                self.pos += 1;
                self.ws();
                Bonus::Increment(self.duration()?.ms)
            }
            Some(b'd') if !self.pdn => {
                self.pos += 1;
                Bonus::Delay(self.duration()?.ms)
            }
            Some(b'b') if !self.pdn => {
                self.pos += 1;
                Bonus::Bronstein(self.duration()?.ms)
            }
            _ => Bonus::None,
        };
        Ok(Period { moves, time, bonus })
    }

    /// `; inc-at-start`, `; dgt`, `; move-limit 5m+1m`, in any order, each at most once.
    fn options(&mut self) -> Result<Options, ParseError> {
        let mut o = Options::default();
        loop {
            self.ws();
            if self.peek() != Some(b';') {
                return Ok(o);
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
                }
                b"move-limit" => {
                    if o.move_limit.is_some() {
                        return Err(dup);
                    }
                    self.ws();
                    let limit = self.duration()?.ms;
                    self.ws();
                    if self.peek() != Some(b'+') {
                        return Err(self.expected(K::Unexpected(self.peek_char().unwrap_or(' '))));
                    }
                    self.pos += 1;
                    self.ws();
                    let allowance = self.duration()?.ms;
                    o.move_limit = Some(MoveLimit { limit, allowance });
                }
                _ => {
                    self.pos = start;
                    return Err(self.expected(K::UnknownOption));
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

impl FromStr for TimeControl {
    type Err = ParseError;

    /// Parses the friendly form; PDN fields (`40/7200:3600`, `4800+60`) are accepted too.
    fn from_str(s: &str) -> Result<TimeControl, ParseError> {
        control(s, false)
    }
}
