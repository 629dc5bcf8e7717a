//! Clock comments in PDN movetext: written after a move, read back per move.
//!
//! Two forms are read, both as commands inside a `{}` comment (other text and other
//! `[%...]` commands may stand beside them):
//!
//! - lidraughts' `[%clock w0:09:57 B0:09:58]`: both clocks after the move, White's
//!   first, each `w`/`W` or `b`/`B` marked; the capital marks the clock that runs now
//!   (the side to move next), the lower case the side that just moved. This is what
//!   [`clock_comment`] writes. Source: lidraughts,
//!   `modules/draughts/src/main/format/pdn/package.scala` (`Move.clockString`) for the
//!   writing and `modules/study/src/main/CommentParser.scala` (`clockRegex`) for the
//!   reading, which takes `w..B..` and `W..b..` as written here and `w..b..` (neither
//!   capital) with the side to move from the position.
//! - PGN's `[%clk 0:09:57]`: the clock of the side that made the move, after it (the
//!   PGN Specification Supplement, Cowderoy et al., 2001, `%clk`; lichess writes it
//!   after every move, and lidraughts' `CommentParser.pgnClockRegex` reads it as the
//!   mover's clock). One value, so the reader needs to know who moved.
//!
//! Times are `H:MM:SS` (hours unbounded), `H:MM:SS.fff` (a fraction of a second, at
//! most three digits), `H:MM` and `H:MM.SS` (both as lidraughts' `readCentis` takes
//! them); minutes and seconds below 60. Anything else inside a `%clock` or `%clk`
//! command is an error naming what is wrong, never a panic; a comment without either
//! command is no clock at all.
//!
//! The writer emits only `%clock`: it carries both clocks and which one runs, so the
//! mover's `%clk` value is already in it, and lidraughts, which reads the first clock
//! command of a comment and strips only that one, would show a second command written
//! beside it as comment text.

use std::fmt;

use super::pdn::PdnMove;
use crate::rules::Color;

/// Both clocks after a move, as lidraughts writes them: `[%clock w0:09:57 B0:09:58]`
/// after a white move, `[%clock W0:09:57 b0:09:58]` after a black one. White's time
/// comes first, then Black's, each `H:MM:SS` rounded to the nearest second (half up,
/// lidraughts' `Centis.roundSeconds`); the side to move next (whose clock now runs) is
/// in capitals, the side that just moved in lower case. Lidraughts' own export shows
/// the form: `1. 31-26 {[%clock w0:10:00 B0:10:00]} 18-22 {[%clock W0:10:00 b0:10:00]}`
/// (`modules/importer/src/test/PdnIOPerfTest.scala`).
pub fn clock_comment(mover: Color, white_ms: u64, black_ms: u64) -> String {
    let (w, b) = match mover {
        Color::White => ('w', 'B'),
        Color::Black => ('W', 'b'),
    };
    format!(
        "[%clock {w}{} {b}{}]",
        hms(round_seconds(white_ms)),
        hms(round_seconds(black_ms))
    )
}

/// Milliseconds to whole seconds, half up.
fn round_seconds(ms: u64) -> u64 {
    ms.saturating_add(500) / 1000
}

/// `H:MM:SS`, hours unpadded and unbounded.
pub fn hms(seconds: u64) -> String {
    format!(
        "{}:{:02}:{:02}",
        seconds / 3600,
        seconds / 60 % 60,
        seconds % 60
    )
}

/// One clock command found in a comment.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ClockCommand {
    /// `[%clock w0:09:57 B0:09:58]`: both clocks; `running` is the side written in
    /// capitals, `None` when neither is.
    Both {
        /// White's remaining time, milliseconds.
        white_ms: u64,
        /// Black's remaining time, milliseconds.
        black_ms: u64,
        /// The clock marked as running (capital letter).
        running: Option<Color>,
    },
    /// `[%clk 0:09:57]`: the remaining time of the side that made the move.
    Mover {
        /// Milliseconds.
        ms: u64,
    },
}

/// The clocks a move's comments give, with the mover known.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MoveClock {
    /// White's remaining time after the move, milliseconds, if the comments give it.
    pub white_ms: Option<u64>,
    /// Black's remaining time after the move, milliseconds, if the comments give it.
    pub black_ms: Option<u64>,
    /// The clock a `%clock` command marks as running, if any.
    pub running: Option<Color>,
}

impl MoveClock {
    /// The remaining time of `side`, if given.
    pub fn of(&self, side: Color) -> Option<u64> {
        match side {
            Color::White => self.white_ms,
            Color::Black => self.black_ms,
        }
    }
}

/// A clock command that does not read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ClockCommentError(pub String);

impl fmt::Display for ClockCommentError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "clock comment: {}", self.0)
    }
}

impl std::error::Error for ClockCommentError {}

fn err<T>(text: impl Into<String>) -> Result<T, ClockCommentError> {
    Err(ClockCommentError(text.into()))
}

/// Every `%clock` and `%clk` command of one comment's text, in order; other `[%...]`
/// commands and plain text are skipped.
///
/// # Errors
/// A `%clock` or `%clk` command that does not read (no closing `]`, a bad time, a
/// `%clock` without both sides, both sides in capitals).
///
/// # Examples
///
/// ```
/// use draughts_arbiter::notation::clock_comment::{ClockCommand, clock_commands};
/// use draughts_arbiter::rules::Color;
///
/// assert_eq!(
///     clock_commands("[%clock w0:09:57 B0:09:58] sharp"),
///     Ok(vec![ClockCommand::Both {
///         white_ms: 597_000,
///         black_ms: 598_000,
///         running: Some(Color::Black),
///     }])
/// );
/// assert_eq!(clock_commands("[%clk 1:02:03.5]"), Ok(vec![ClockCommand::Mover { ms: 3_723_500 }]));
/// assert_eq!(clock_commands("no clock here"), Ok(vec![]));
/// assert!(clock_commands("[%clock w0:61:00 B0:10:00]").is_err());
/// ```
pub fn clock_commands(comment: &str) -> Result<Vec<ClockCommand>, ClockCommentError> {
    let mut out = Vec::new();
    let mut rest = comment;
    while let Some(at) = rest.find("[%") {
        let after = &rest[at + 2..];
        let name_len = after
            .find(|c: char| !c.is_ascii_alphabetic())
            .unwrap_or(after.len());
        let name = &after[..name_len];
        let body_start = &after[name_len..];
        if name != "clock" && name != "clk" {
            rest = body_start;
            continue;
        }
        let Some(close) = body_start.find(']') else {
            return err(format!("[%{name} without a closing ']'"));
        };
        let body = &body_start[..close];
        if !body.is_empty() && !body.starts_with(char::is_whitespace) {
            return err(format!("[%{name} must be followed by a space"));
        }
        out.push(if name == "clock" {
            both(body)?
        } else {
            let words: Vec<&str> = body.split_whitespace().collect();
            match words.as_slice() {
                [t] => ClockCommand::Mover { ms: time(t)? },
                _ => {
                    return err(format!("[%clk takes one time, found {:?}", body.trim()));
                }
            }
        });
        rest = &body_start[close + 1..];
    }
    Ok(out)
}

/// The body of `[%clock w0:09:57 B0:09:58]`.
fn both(body: &str) -> Result<ClockCommand, ClockCommentError> {
    let words: Vec<&str> = body.split_whitespace().collect();
    let [w, b] = words.as_slice() else {
        return err(format!(
            "[%clock takes White's and Black's time, found {:?}",
            body.trim()
        ));
    };
    let side = |word: &str, lower: char, upper: char, name: &str| {
        let mut chars = word.chars();
        match chars.next() {
            Some(c) if c == lower => Ok((false, time(chars.as_str())?)),
            Some(c) if c == upper => Ok((true, time(chars.as_str())?)),
            _ => err(format!(
                "[%clock: {name}'s time must start with '{lower}' or '{upper}', found {word:?}"
            )),
        }
    };
    let (w_runs, white_ms) = side(w, 'w', 'W', "White")?;
    let (b_runs, black_ms) = side(b, 'b', 'B', "Black")?;
    let running = match (w_runs, b_runs) {
        (true, true) => return err("[%clock marks both clocks as running"),
        (true, false) => Some(Color::White),
        (false, true) => Some(Color::Black),
        (false, false) => None,
    };
    Ok(ClockCommand::Both {
        white_ms,
        black_ms,
        running,
    })
}

/// A time: `H:MM:SS`, `H:MM:SS.fff`, `H:MM` or `H:MM.SS`, in milliseconds.
fn time(text: &str) -> Result<u64, ClockCommentError> {
    let bad = |why: &str| err(format!("time {text:?}: {why}"));
    let fields: Vec<&str> = text.split(':').collect();
    let (hours, minutes, seconds, fraction) = match fields.as_slice() {
        [h, m, s] => match s.split_once('.') {
            Some((s, f)) => (*h, *m, s, Some(f)),
            None => (*h, *m, *s, None),
        },
        [h, m] => match m.split_once('.') {
            Some((m, s)) => (*h, m, s, None),
            None => (*h, *m, "0", None),
        },
        _ => return bad("expected H:MM:SS"),
    };
    let number = |digits: &str, what: &str| -> Result<u64, ClockCommentError> {
        if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
            return bad(&format!("{what} must be digits"));
        }
        digits
            .parse::<u64>()
            .or_else(|_| bad(&format!("{what} too large")))
    };
    let h = number(hours, "hours")?;
    let m = number(minutes, "minutes")?;
    let s = number(seconds, "seconds")?;
    if minutes.len() > 2 || m >= 60 {
        return bad("minutes must be 0 to 59, at most two digits");
    }
    if seconds.len() > 2 || s >= 60 {
        return bad("seconds must be 0 to 59, at most two digits");
    }
    let ms = match fraction {
        None => 0,
        Some(f) if (1..=3).contains(&f.len()) => {
            number(f, "the fraction of a second")? * 10u64.pow(3 - f.len() as u32)
        }
        Some(_) => return bad("a fraction of a second has one to three digits"),
    };
    h.checked_mul(3_600_000)
        .and_then(|t| t.checked_add(m * 60_000 + s * 1000 + ms))
        .map_or_else(|| bad("too large"), Ok)
}

/// The clocks a move's comments give; `mover` is the side that made the move (what a
/// `%clk` value belongs to). `None` when no comment has a clock command.
///
/// # Errors
/// A clock command that does not read; two commands that disagree on a clock (a
/// `%clock` and a `%clk` for the mover, or two of the same kind, each compared to the
/// second: a `%clock` value is rounded to the second); a `%clock` that marks the
/// mover's clock as running.
pub fn move_clock(m: &PdnMove, mover: Color) -> Result<Option<MoveClock>, ClockCommentError> {
    let mut clock: Option<MoveClock> = None;
    let same = |a: u64, b: u64| a / 1000 == b / 1000;
    for comment in &m.comments {
        for command in clock_commands(comment)? {
            let (white, black, running) = match command {
                ClockCommand::Both {
                    white_ms,
                    black_ms,
                    running,
                } => {
                    if running == Some(mover) {
                        return err(format!(
                            "[%clock after a move by {mover:?} marks {mover:?}'s clock as running"
                        ));
                    }
                    (Some(white_ms), Some(black_ms), running)
                }
                ClockCommand::Mover { ms } => match mover {
                    Color::White => (Some(ms), None, None),
                    Color::Black => (None, Some(ms), None),
                },
            };
            let c = clock.get_or_insert(MoveClock {
                white_ms: None,
                black_ms: None,
                running: None,
            });
            for (slot, new, name) in [
                (&mut c.white_ms, white, "White"),
                (&mut c.black_ms, black, "Black"),
            ] {
                match (*slot, new) {
                    (Some(old), Some(new)) if !same(old, new) => {
                        return err(format!(
                            "two clock commands give {name} different times ({old} ms, {new} ms)"
                        ));
                    }
                    (None, Some(new)) => *slot = Some(new),
                    _ => {}
                }
            }
            c.running = c.running.or(running);
        }
    }
    Ok(clock)
}

/// The clocks of each move of a line whose first move is `first`'s, sides alternating:
/// one entry per move, as [`move_clock`] reads it.
pub fn line_clocks(
    moves: &[PdnMove],
    first: Color,
) -> Vec<Result<Option<MoveClock>, ClockCommentError>> {
    let mut mover = first;
    moves
        .iter()
        .map(|m| {
            let c = move_clock(m, mover);
            mover = !mover;
            c
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn with(comments: &[&str]) -> PdnMove {
        PdnMove {
            comments: comments.iter().map(|c| (*c).to_owned()).collect(),
            ..PdnMove::new("32-28")
        }
    }

    #[test]
    fn the_writer_and_the_reader_agree() {
        for (mover, w, b) in [
            (Color::White, 597_000, 598_000),
            (Color::Black, 597_499, 598_500),
            (Color::White, 36_061_000, 0),
            (Color::Black, 0, 359_999_999_000),
        ] {
            let text = clock_comment(mover, w, b);
            let read = move_clock(&with(&[&text]), mover)
                .expect("reads")
                .expect("a clock");
            assert_eq!(read.white_ms, Some(round_seconds(w) * 1000), "{text}");
            assert_eq!(read.black_ms, Some(round_seconds(b) * 1000), "{text}");
            assert_eq!(read.running, Some(!mover), "{text}");
        }
        assert_eq!(
            clock_comment(Color::White, 36_000_000 + 61_000, 0),
            "[%clock w10:01:01 B0:00:00]"
        );
    }

    #[test]
    fn clk_is_the_movers_clock() {
        let m = with(&["[%clk 0:09:57]"]);
        let white = move_clock(&m, Color::White).expect("reads").expect("clock");
        assert_eq!((white.white_ms, white.black_ms), (Some(597_000), None));
        let black = move_clock(&m, Color::Black).expect("reads").expect("clock");
        assert_eq!((black.white_ms, black.black_ms), (None, Some(597_000)));
    }

    #[test]
    fn both_forms_together_must_agree() {
        let ok = with(&["[%clock W0:09:57 b0:09:58]", "[%clk 0:09:58.4]"]);
        let c = move_clock(&ok, Color::Black)
            .expect("agree")
            .expect("clock");
        assert_eq!((c.white_ms, c.black_ms), (Some(597_000), Some(598_000)));
        let bad = with(&["[%clock W0:09:57 b0:09:58] [%clk 0:08:00]"]);
        let e = move_clock(&bad, Color::Black).expect_err("disagree");
        assert!(e.to_string().contains("different times"), "{e}");
    }

    #[test]
    fn time_forms() {
        for (text, ms) in [
            ("0:00:00", 0),
            ("1:02:03", 3_723_000),
            ("1:02:03.5", 3_723_500),
            ("1:02:03.25", 3_723_250),
            ("1:02:03.125", 3_723_125),
            ("1:02", 3_720_000),
            ("1:02.03", 3_723_000),
            ("100:00:00", 360_000_000),
            ("0:9:5", 545_000),
        ] {
            assert_eq!(time(text), Ok(ms), "{text}");
        }
    }

    #[test]
    fn other_commands_and_text_are_not_clocks() {
        assert_eq!(clock_commands("[%eval 0.5] [%csl Ga1] a clock"), Ok(vec![]));
        assert_eq!(clock_commands("[%clocks w0:00:01 b0:00:01]"), Ok(vec![]));
        assert_eq!(move_clock(&with(&["nice"]), Color::White), Ok(None));
        assert_eq!(move_clock(&with(&[]), Color::White), Ok(None));
        let c = clock_commands("text [%eval 1] [%clock w0:00:01 b0:00:02] more").expect("ok");
        assert_eq!(
            c,
            [ClockCommand::Both {
                white_ms: 1000,
                black_ms: 2000,
                running: None
            }]
        );
    }

    /// Hostile input: every case is an error with a message, none a panic.
    #[test]
    fn bad_clock_commands_are_errors() {
        for text in [
            "[%clock",
            "[%clock w0:00:01 B0:00:01",
            "[%clk]",
            "[%clk ]",
            "[%clk 0:00:01 0:00:02]",
            "[%clk0:00:01]",
            "[%clock w0:00:01]",
            "[%clock 0:00:01 0:00:02]",
            "[%clock b0:00:01 w0:00:02]",
            "[%clock W0:00:01 B0:00:02]",
            "[%clock w0:60:00 B0:00:00]",
            "[%clock w0:00:60 B0:00:00]",
            "[%clock w0:000:00 B0:00:00]",
            "[%clock w:00:00 B0:00:00]",
            "[%clock w0::00 B0:00:00]",
            "[%clock w-1:00:00 B0:00:00]",
            "[%clock w+1:00:00 B0:00:00]",
            "[%clock w1:00:00:00 B0:00:00]",
            "[%clock w99999999999999999999:00:00 B0:00:00]",
            "[%clock w5124095576030432:00:00 B0:00:00]",
            "[%clk 0:00:00.]",
            "[%clk 0:00:00.1234]",
            "[%clk 0:00:00.x]",
            "[%clk 0:00.1.2]",
            "[%clk ٣:00:00]",
            "[%clk 0:0٣:00]",
            "[%clk 1]",
            "[%clk 1:]",
            "[%clock wé:00:00 B0:00:00]",
        ] {
            let e = clock_commands(text).expect_err(text);
            assert!(e.to_string().starts_with("clock comment: "), "{text}: {e}");
        }
        let m = with(&["[%clock W0:00:01 b0:00:02]"]);
        assert!(
            move_clock(&m, Color::White).is_err(),
            "the mover's clock runs"
        );
    }

    /// Random strings made of the characters clock commands are made of: never a panic.
    #[test]
    fn random_input_never_panics() {
        let alphabet: Vec<char> = "[%clockkwWbB0123456789:. ]]é٣\n".chars().collect();
        let mut seed: u64 = 0x9E37_79B9_7F4A_7C15;
        for _ in 0..20_000 {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            let len = (seed % 40) as usize;
            let mut s = String::from(if seed & 1 == 0 { "[%clock " } else { "[%clk " });
            let mut x = seed;
            for _ in 0..len {
                x = x.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1);
                s.push(alphabet[(x >> 33) as usize % alphabet.len()]);
            }
            let _ = clock_commands(&s);
            let _ = move_clock(&with(&[&s]), Color::White);
        }
    }

    #[test]
    fn line_clocks_alternate_movers() {
        let moves = [
            with(&["[%clk 0:10:00]"]),
            with(&["[%clk 0:09:00]"]),
            with(&[]),
        ];
        let got = line_clocks(&moves, Color::Black);
        assert_eq!(
            got[0].as_ref().expect("ok").expect("c").black_ms,
            Some(600_000)
        );
        assert_eq!(
            got[1].as_ref().expect("ok").expect("c").white_ms,
            Some(540_000)
        );
        assert_eq!(got[2], Ok(None));
    }
}
