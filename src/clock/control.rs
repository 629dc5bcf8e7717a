//! Time controls: what the arbiter sets before a game, and their two printed forms.
//!
//! The friendly form is [`TimeControl`]'s `Display`/`FromStr`; the PDN `TimeControl`
//! tag is [`TimeControl::pdn`] / [`PdnTimeControl`]. The grammar is in the
//! [module documentation](super).

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

use super::Millis;
use super::error::{ClockError, ControlError, ParseError};
pub use super::limits::{
    MAX_ADJUSTMENT, MAX_ALLOWANCE, MAX_BONUS, MAX_MOVE_LIMIT, MAX_MOVES, MAX_PERIOD_TIME,
    MAX_PERIODS,
};

/// Milliseconds in an hour.
pub(crate) const HOUR: Millis = 3_600_000;
/// Milliseconds in a minute.
pub(crate) const MINUTE: Millis = 60_000;
/// Milliseconds in a second.
pub(crate) const SECOND: Millis = 1_000;

/// What a period gives a player per move, besides its base time.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum Bonus {
    /// Nothing.
    #[default]
    None,
    /// Fischer increment: added after each of the player's own moves (and before move 1 if
    /// the control says [`Options::increment_at_start`]).
    Increment(Millis),
    /// Simple (US) delay: the first part of each move, up to this long, is not charged.
    Delay(Millis),
    /// Bronstein delay: after each move, the time it took is given back, up to this much.
    Bronstein(Millis),
}

/// One period of a time control.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Period {
    /// Moves to make in this period (counting each player's own moves), or `None` for
    /// sudden death. Only the last period may be `None`; a last period with a count
    /// repeats (its time is added again after every further `moves` moves).
    pub moves: Option<u32>,
    /// Time added to the clock when the period starts (the whole clock for period 1).
    pub time: Millis,
    /// Increment or delay for the moves of this period.
    pub bonus: Bonus,
}

impl Period {
    /// A period of `time` with neither move count nor bonus.
    #[must_use]
    pub const fn sudden_death(time: Millis) -> Period {
        Period {
            moves: None,
            time,
            bonus: Bonus::None,
        }
    }
}

/// The English "Time!" rule: after `limit` on one move the player is warned ("Time!")
/// and must move within a further `allowance`, or the move is forfeit (game lost).
///
/// The move's time is measured on the player's running clock: pauses do not count, and
/// the delay of a delay control does not stop it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct MoveLimit {
    /// Time on one move after which "Time!" is called (English practice: 5 minutes).
    pub limit: Millis,
    /// Time after the call within which the player must move (English practice: 1 minute).
    pub allowance: Millis,
}

impl MoveLimit {
    /// The English tournament practice: 5 minutes, then 1 more minute (RULES.md, English
    /// checkers tournament practice).
    pub const ENGLISH: MoveLimit = MoveLimit {
        limit: 5 * MINUTE,
        allowance: MINUTE,
    };
}

/// Switches of a time control that apply to all its periods.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct Options {
    /// Add the first period's Fischer increment to both clocks at start, so that it is
    /// also given "before move 1" (as FIDE's "30 seconds from move 1" on a DGT clock).
    pub increment_at_start: bool,
    /// DGT style: the next period's time is added when the time of a non-final period
    /// runs out, not when its move count is reached. Whether the player had made the
    /// moves is reported in [`ClockEvent::PeriodOnFlag`](super::ClockEvent::PeriodOnFlag)
    /// for the arbiter to rule on.
    pub period_on_flag: bool,
    /// The English "Time!" rule, if it applies.
    pub move_limit: Option<MoveLimit>,
}

/// A checked time control: one or more periods and the [`Options`].
///
/// Build it with [`TimeControl::new`], the shorthands, or by parsing the friendly form or
/// a PDN tag. It persists (serde) as its friendly string.
///
/// # Examples
///
/// ```
/// use draughts_arbiter::clock::TimeControl;
///
/// let tc: TimeControl = "2h/50 then 1h/25 then 15min+30s".parse().expect("valid");
/// assert_eq!(tc.periods().len(), 3);
/// assert_eq!(tc.to_string(), "2h/50,1h/25,15m+30s");
/// assert_eq!(tc.pdn().expect("expressible").to_string(), "50/7200:25/3600:900+30");
/// ```
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(into = "String", try_from = "String")]
pub struct TimeControl {
    periods: Vec<Period>,
    options: Options,
}

impl TimeControl {
    /// A checked time control.
    ///
    /// # Errors
    ///
    /// [`ClockError::Control`] if there is no period or more than [`MAX_PERIODS`], a
    /// period before the last has no move count, a move count is zero or above
    /// [`MAX_MOVES`], a period's time is zero (without a delay, or an increment that
    /// gives time before the flag can fall) or above [`MAX_PERIOD_TIME`], an increment
    /// or delay is above [`MAX_BONUS`], DGT mode has a final period with a move count, or
    /// the move limit is zero or above [`MAX_MOVE_LIMIT`] (its allowance above
    /// [`MAX_ALLOWANCE`]).
    pub fn new(periods: Vec<Period>, options: Options) -> Result<TimeControl, ClockError> {
        Ok(TimeControl::checked(periods, options)?)
    }

    /// [`TimeControl::new`] with the bare [`ControlError`].
    pub(crate) fn checked(
        periods: Vec<Period>,
        options: Options,
    ) -> Result<TimeControl, ControlError> {
        TimeControl::checked_as(periods, options, true)
    }

    /// The checks of [`TimeControl::new`]; with `limits` false only those a recorded
    /// control always passed (a log written before the limits existed must replay).
    pub(crate) fn checked_as(
        periods: Vec<Period>,
        options: Options,
        limits: bool,
    ) -> Result<TimeControl, ControlError> {
        let last = periods
            .len()
            .checked_sub(1)
            .ok_or(ControlError::NoPeriods)?;
        if !limits {
            for (i, p) in periods.iter().enumerate() {
                match p.moves {
                    Some(0) => return Err(ControlError::ZeroMoveCount { period: i + 1 }),
                    None if i < last => {
                        return Err(ControlError::MissingMoveCount { period: i + 1 });
                    }
                    _ => {}
                }
            }
            if options.period_on_flag && periods.get(last).is_some_and(|p| p.moves.is_some()) {
                return Err(ControlError::DgtNeedsSuddenDeath);
            }
            if options.move_limit.is_some_and(|m| m.limit == 0) {
                return Err(ControlError::ZeroMoveLimit);
            }
            return Ok(TimeControl { periods, options });
        }
        if periods.len() > MAX_PERIODS {
            return Err(ControlError::TooManyPeriods);
        }
        for (i, p) in periods.iter().enumerate() {
            let period = i + 1;
            match p.moves {
                Some(0) => return Err(ControlError::ZeroMoveCount { period }),
                Some(n) if n > MAX_MOVES => return Err(ControlError::TooManyMoves { period }),
                None if i < last => return Err(ControlError::MissingMoveCount { period }),
                _ => {}
            }
            // A period may give no time of its own only if its bonus gives time before
            // the flag can fall: a simple delay, or an increment (or Bronstein delay)
            // after the first period's time was given, or an increment at start.
            let bonus_gives_time = match p.bonus {
                Bonus::Delay(t) => t > 0,
                Bonus::Increment(t) => t > 0 && (i > 0 || options.increment_at_start),
                Bonus::Bronstein(t) => t > 0 && i > 0,
                Bonus::None => false,
            };
            if p.time == 0 && !bonus_gives_time {
                return Err(ControlError::ZeroTime { period });
            }
            if p.time > MAX_PERIOD_TIME {
                return Err(ControlError::TimeTooLong { period });
            }
            match p.bonus {
                Bonus::Increment(t) | Bonus::Delay(t) | Bonus::Bronstein(t) if t > MAX_BONUS => {
                    return Err(ControlError::BonusTooLarge { period });
                }
                _ => {}
            }
        }
        if options.period_on_flag && periods.get(last).is_some_and(|p| p.moves.is_some()) {
            return Err(ControlError::DgtNeedsSuddenDeath);
        }
        if let Some(m) = options.move_limit {
            if m.limit == 0 {
                return Err(ControlError::ZeroMoveLimit);
            }
            if m.limit > MAX_MOVE_LIMIT {
                return Err(ControlError::MoveLimitTooLong);
            }
            if m.allowance > MAX_ALLOWANCE {
                return Err(ControlError::AllowanceTooLong);
            }
        }
        Ok(TimeControl { periods, options })
    }

    /// Sudden death: `time` for the whole game. Not checked against the limits of
    /// [`TimeControl::new`] (for code that knows its values; parsing is checked).
    #[must_use]
    pub fn sudden_death(time: Millis) -> TimeControl {
        TimeControl {
            periods: vec![Period::sudden_death(time)],
            options: Options::default(),
        }
    }

    /// `time` for the game plus a Fischer `increment` after each move. Not checked
    /// against the limits of [`TimeControl::new`], as [`TimeControl::sudden_death`].
    #[must_use]
    pub fn fischer(time: Millis, increment: Millis) -> TimeControl {
        TimeControl {
            periods: vec![Period {
                moves: None,
                time,
                bonus: Bonus::Increment(increment),
            }],
            options: Options::default(),
        }
    }

    /// The periods, in order (never empty).
    #[must_use]
    pub fn periods(&self) -> &[Period] {
        &self.periods
    }

    /// The options.
    #[must_use]
    pub fn options(&self) -> Options {
        self.options
    }

    /// The time both clocks start with (before any increment at start).
    #[must_use]
    pub fn initial(&self) -> Millis {
        self.periods.first().map_or(0, |p| p.time)
    }

    /// The period with number `count` (1 = first). Past the end, the last period (which
    /// repeats if it has a move count).
    pub(crate) fn period(&self, count: u32) -> Option<&Period> {
        let i = (count.saturating_sub(1) as usize).min(self.periods.len().saturating_sub(1));
        self.periods.get(i)
    }

    /// The period that follows period number `count`, if any: the next one, or the last
    /// again when the last has a move count (it repeats).
    pub(crate) fn next_period(&self, count: u32) -> Option<&Period> {
        match self.periods.get(count as usize) {
            Some(p) => Some(p),
            None => self.periods.last().filter(|p| p.moves.is_some()),
        }
    }

    /// Moves a player must have made by the end of period number `count`.
    pub(crate) fn moves_required(&self, count: u32) -> u32 {
        (1..=count)
            .map(|c| self.period(c).and_then(|p| p.moves).unwrap_or(0))
            .fold(0u32, u32::saturating_add)
    }

    /// The PDN `TimeControl` tag form, to print with `Display`.
    ///
    /// # Errors
    ///
    /// [`ClockError::Inexpressible`] naming what the tag cannot say: a delay, a time or
    /// increment that is not whole seconds, or any of the [`Options`].
    pub fn pdn(&self) -> Result<Pdn<'_>, ClockError> {
        let o = self.options;
        if o.increment_at_start {
            return Err(ClockError::Inexpressible("an increment at start"));
        }
        if o.period_on_flag {
            return Err(ClockError::Inexpressible("dgt mode"));
        }
        if o.move_limit.is_some() {
            return Err(ClockError::Inexpressible("a move limit"));
        }
        for p in &self.periods {
            match p.bonus {
                Bonus::None => {}
                Bonus::Increment(i) if i % SECOND == 0 => {}
                Bonus::Increment(_) => {
                    return Err(ClockError::Inexpressible("a fraction of a second"));
                }
                Bonus::Delay(_) | Bonus::Bronstein(_) => {
                    return Err(ClockError::Inexpressible("a delay"));
                }
            }
            if p.time % SECOND != 0 {
                return Err(ClockError::Inexpressible("a fraction of a second"));
            }
        }
        Ok(Pdn(self))
    }
}

impl From<TimeControl> for String {
    fn from(tc: TimeControl) -> String {
        tc.to_string()
    }
}

/// Writes a duration in the largest unit that divides it: `2h`, `90m`, `45s`, `1500ms`.
pub(crate) struct Duration(pub Millis);

impl fmt::Display for Duration {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let ms = self.0;
        if ms == 0 {
            f.write_str("0s")
        } else if ms.is_multiple_of(HOUR) {
            write!(f, "{}h", ms / HOUR)
        } else if ms.is_multiple_of(MINUTE) {
            write!(f, "{}m", ms / MINUTE)
        } else if ms.is_multiple_of(SECOND) {
            write!(f, "{}s", ms / SECOND)
        } else {
            write!(f, "{ms}ms")
        }
    }
}

impl fmt::Display for TimeControl {
    /// The friendly form, e.g. `2h/50,1h/25,15m+30s` or `90m d30s; move-limit 5m+1m`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, p) in self.periods.iter().enumerate() {
            if i > 0 {
                f.write_str(",")?;
            }
            write!(f, "{}", Duration(p.time))?;
            if let Some(n) = p.moves {
                write!(f, "/{n}")?;
            }
            match p.bonus {
                Bonus::None => {}
                Bonus::Increment(t) => write!(f, "+{}", Duration(t))?,
                Bonus::Delay(t) => write!(f, " d{}", Duration(t))?,
                Bonus::Bronstein(t) => write!(f, " b{}", Duration(t))?,
            }
        }
        let o = self.options;
        if o.increment_at_start {
            f.write_str("; inc-at-start")?;
        }
        if o.period_on_flag {
            f.write_str("; dgt")?;
        }
        if let Some(m) = o.move_limit {
            write!(
                f,
                "; move-limit {}+{}",
                Duration(m.limit),
                Duration(m.allowance)
            )?;
        }
        Ok(())
    }
}

/// A time control the PDN tag can express; `Display` prints the tag value
/// (`40/7200:3600`, `4800+60`). Made by [`TimeControl::pdn`].
#[derive(Clone, Copy, Debug)]
pub struct Pdn<'a>(&'a TimeControl);

impl fmt::Display for Pdn<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, p) in self.0.periods.iter().enumerate() {
            if i > 0 {
                f.write_str(":")?;
            }
            if let Some(n) = p.moves {
                write!(f, "{n}/")?;
            }
            write!(f, "{}", p.time / SECOND)?;
            if let Bonus::Increment(t) = p.bonus {
                write!(f, "+{}", t / SECOND)?;
            }
        }
        Ok(())
    }
}

/// The value of a PDN `TimeControl` tag: unknown (`?`), none (`-`), or a time control.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum PdnTimeControl {
    /// `?`: the time control is not known.
    Unknown,
    /// `-`: the game has no time control.
    Untimed,
    /// A time control.
    Timed(TimeControl),
}

impl PdnTimeControl {
    /// The tag value.
    ///
    /// # Errors
    ///
    /// [`ClockError::Inexpressible`] as for [`TimeControl::pdn`].
    pub fn to_pdn(&self) -> Result<String, ClockError> {
        match self {
            PdnTimeControl::Unknown => Ok("?".to_owned()),
            PdnTimeControl::Untimed => Ok("-".to_owned()),
            PdnTimeControl::Timed(tc) => Ok(tc.pdn()?.to_string()),
        }
    }
}

impl FromStr for PdnTimeControl {
    type Err = ParseError;

    /// Parses a tag value strictly: `?`, `-`, or `:`-separated fields of plain seconds
    /// (`moves/seconds`, `seconds`, `seconds+increment`, `moves/seconds+increment`).
    fn from_str(s: &str) -> Result<PdnTimeControl, ParseError> {
        match s.trim() {
            "?" => Ok(PdnTimeControl::Unknown),
            "-" => Ok(PdnTimeControl::Untimed),
            _ => TimeControl::from_pdn(s).map(PdnTimeControl::Timed),
        }
    }
}
