//! Tournament clocks: time controls and clock arithmetic, exact to the millisecond.
//!
//! Pure: no I/O and no clock reads. Every operation and query takes `now`, a monotonic
//! instant in integer milliseconds ([`Millis`]); all arithmetic is checked or saturating
//! integer arithmetic and nothing panics on any input. A refused operation returns a
//! [`ClockError`] and changes nothing.
//!
//! # Time controls
//!
//! A [`TimeControl`] is one or more [`Period`]s plus [`Options`]. Each period has a time,
//! optionally a move count (the next period's time is added once the player has made that
//! many moves in it) and a [`Bonus`]: Fischer increment, simple (US) delay or Bronstein
//! delay. Options: increment also before move 1, DGT-style periods added on flag, and the
//! English "Time!" rule ([`MoveLimit`]).
//!
//! ## Friendly syntax (`Display` / `FromStr` of [`TimeControl`])
//!
//! ```text
//! control  = period { sep period } { ";" option }
//! sep      = "then" | "," | ":"                      all three separate periods
//! period   = duration [ "/" moves ] [ bonus ]        friendly order: time/moves
//!          | moves "/" duration [ bonus ]            PDN order: moves/seconds
//! bonus    = "+" duration                            Fischer increment
//!          | "d" duration                            simple (US) delay
//!          | "b" duration                            Bronstein delay
//! duration = number unit { number unit }             units h, min (or m), s, ms, decreasing
//!          | number                                  a bare number is seconds
//! option   = "inc-at-start"                          increment also before move 1
//!          | "dgt"                                   next period added on flag
//!          | "move-limit" duration "+" duration      English "Time!" rule
//! ```
//!
//! Whitespace is allowed between tokens; `:` also separates periods (so PDN tags parse
//! too). A period's move count says whether it is the left or right side of `/`: a
//! duration with a unit comes first in the friendly order (`2h/50`), a bare number first
//! is a move count as in PDN (`40/7200`). Only the last period may lack a move count; a
//! last period with one repeats (`2h/40,1h/20` gives another hour every 20 moves).
//! `Display` writes each duration in the largest unit that divides it, with `,` between
//! periods (`2h/50 then 1h/25 then 15min+30s` prints `2h/50,1h/25,15m+30s`).
//!
//! Limits ([`TimeControl::new`] and the parser; the `MAX_*` constants): a period's time
//! at most 168h (7 days) and more than 0, except 0 with a simple delay (`0s d5s`), with
//! an increment or Bronstein delay in a later period (`2h/40 then 0s+30s`) or with an
//! increment and `inc-at-start`; a move count from 1 to 1000; an increment or delay at
//! most 1h; at most 16 periods; a move limit more than 0 and at most 24h, its allowance
//! at most 1h. `0`, `0m` and `99999999999h` are refused, saying what is allowed.
//!
//! Errors: [`ParseError`] prints `at byte N: expected …, found …` (e.g. `5m+` gives
//! `at byte 3: expected an increment after '+', e.g. 5m+3s, found the end`).
//!
//! | written                      | meaning                                                     |
//! |------------------------------|-------------------------------------------------------------|
//! | `45m`                        | sudden death, 45 minutes                                    |
//! | `90s`, `90`                  | sudden death, 90 seconds (a bare number is seconds)         |
//! | `3m+2s`                      | 3 minutes, 2 s Fischer increment after each move            |
//! | `80m+1m`                     | 80 minutes, 1 minute increment                              |
//! | `30m+30s; inc-at-start`      | as above, and 30 s added to both clocks at start            |
//! | `90m d30s`                   | 90 minutes, simple delay of 30 s per move                   |
//! | `90m b30s`                   | 90 minutes, Bronstein delay of 30 s per move                |
//! | `2h/50 then 1h/25 then 15min+30s` | 2 h for 50 moves, 1 h for the next 25, then 15 min + 30 s |
//! | `2h/50,1h/25,15m+30s`        | the same, as `Display` prints it                            |
//! | `90m/40+30s,30m+30s; dgt`    | FIDE-style, second period added when the first runs out     |
//! | `24h; move-limit 5m+1m`      | English "Time!" rule: warned after 5 min, 1 min more        |
//! | `1h30m`, `1500ms`            | compound and millisecond durations (printed `90m`, `1500ms`)|
//!
//! ## PDN `TimeControl` tag ([`TimeControl::pdn`], [`TimeControl::from_pdn`], [`PdnTimeControl`])
//!
//! Fields of plain seconds separated by `:` — `40/7200:3600` (40 moves in 2 h, then 1 h),
//! `4800+60` (80 min + 60 s), `300` (5 min), `40/5400+30:1800+30` (increment in a counted
//! period, common usage beyond the PGN standard) — plus `?` (unknown) and `-` (no time
//! control). A sandclock field (`*60`) is refused. The tag cannot say delays, fractions of
//! a second, or any option; [`TimeControl::pdn`] refuses those, naming what it cannot
//! express. A tag's increment is read as "after each move" (no `inc-at-start`).
//!
//! Both forms round-trip: `parse(print(tc)) == tc`.
//!
//! # The clock
//!
//! [`Clock`] is a state machine: not started → running(side) ⇄ paused → flagged or stopped.
//! Operations ([`ClockOp`], applied by [`Clock::apply`] or its shorthands): `start`,
//! `press`, `pause`, `resume`, `set_remaining`, `add_time`, `subtract_time`, `settle`,
//! `stop`. Queries: [`Clock::remaining`], [`Clock::flag_time`], [`Clock::next_deadline`],
//! [`Clock::phase`], [`Clock::moves`], [`Clock::period`], [`Clock::move_times`],
//! [`Clock::ledger`].
//!
//! - **Fischer increment**: added at the press, after the move's time is charged. With
//!   `inc-at-start`, also once to both clocks at start.
//! - **Simple delay** `d`: the first `d` of each move is not charged; remaining time never
//!   goes up. **Bronstein** `b`: the move is charged in full while running, and at the
//!   press `min(d, time used)` is given back, so remaining time after the press is never
//!   more than before the move. A delay counts the move's running time: pauses stop it.
//! - **Periods**: when a side completes its period's move count, the press adds (first
//!   the increment of the period the move was played in, then) the next period's time.
//!   The next period's bonus applies from the side's next move. In DGT mode
//!   (`; dgt`) the next period is added instead at the instant the current period's time
//!   runs out; [`ClockEvent::PeriodOnFlag`] reports moves made and moves required so the
//!   arbiter can rule.
//! - **"Time!"** (`; move-limit L+A`): when the running side's move has run `L`,
//!   [`ClockEvent::TimeCalled`]; at `L + A` its flag falls with [`FlagCause::MoveLimit`].
//! - **Flag**: when the running side's remaining time reaches zero (with a simple delay,
//!   when the move's running time reaches remaining + delay), the flag falls at that
//!   exact instant; both clocks freeze and [`Clock::flag`] reports side, instant, cause.
//!
//! **Who wins the race.** A deadline belongs to the deadline: an operation at instant
//! `now` first sees everything due at or before `now`. A press at exactly the flag
//! instant is too late (remaining time reached zero at that instant) and is refused with
//! [`ClockError::FlagFell`]; a press 1 ms earlier is in time. The same holds for the
//! "Time!" forfeit; a DGT period due exactly at `now` is added before the operation.
//!
//! **Conservation.** For each side, at every instant,
//! `remaining = initial + periods + increments + refunds + added − removed − charged`
//! (the fields of its [`Ledger`]), and over both sides `charged + exempt` (exempt: time
//! not charged thanks to a simple delay) equals the total running time between start and
//! `now` minus paused spans, ending at a stop or flag. Remaining time never goes up
//! except by increment, Bronstein refund, period addition or arbiter action.
//!
//! **Replay.** A clock rebuilt by [`Clock::replay`] from the log of accepted operations
//! equals the live clock (`==`). Time-triggered changes are computed, not stored: a
//! query at `now` sees them; [`ClockOp::Settle`] records them (with their
//! [`ClockEvent`]s) when the server's timer fires at [`Clock::next_deadline`].
//!
//! # Examples
//!
//! ```
//! use draughts_arbiter::clock::{Clock, ClockError, Side};
//!
//! let mut clock = Clock::new("90s".parse().expect("valid"));
//! clock.start(Side::White, 1_000).expect("starts");
//! assert_eq!(clock.flag_time(1_000), Some(91_000));
//! // A press at the flag instant is too late.
//! assert!(matches!(clock.press(Side::White, 91_000), Err(ClockError::FlagFell(_))));
//! clock.press(Side::White, 90_999).expect("1 ms before the flag is in time");
//! ```

mod control;
mod error;
mod flag;
mod limits;
mod op;
mod parse;
mod side;
mod state;

pub use control::{
    Bonus, MAX_ADJUSTMENT, MAX_ALLOWANCE, MAX_BONUS, MAX_MOVE_LIMIT, MAX_MOVES, MAX_PERIOD_TIME,
    MAX_PERIODS, MoveLimit, Options, Pdn, PdnTimeControl, Period, TimeControl,
};
pub use error::{ClockError, ControlError, ParseError, ParseErrorKind};
pub use flag::{Flag, FlagCause};
pub use op::{ClockEvent, ClockOp};
pub use side::Side;
pub use state::{Clock, Ledger, Phase, Reading};

/// A monotonic instant or a duration, in integer milliseconds.
pub type Millis = u64;
