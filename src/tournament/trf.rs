//! TRF-16, the FIDE tournament report format every pairing program reads and writes
//! (RULES.md T 1): the event written for a Swiss engine or another program, a round's
//! pairings read back from a TRF another program wrote (Swiss-Manager, an engine), and
//! bbpPairings' answer (`-p`: the number of pairs, then `white black` a line, `N 0` the
//! bye).
//!
//! TRF is a chess format: its points column uses 1 / ½ / 0 whatever the event scores
//! (draughts' 2 / 1 / 0 is the same order, so the pairings are the same). A micro-match
//! is written as one game: its result and the first game's colours (T 4). A default
//! (T 5) and a forfeit are `+` / `-`, a double forfeit `-` for both; a pairing-allocated
//! bye `U`, a half-point bye `H`, a zero bye `Z`, a round-robin's free round `-` with no
//! opponent (it scores nothing).

use std::fmt::Write as _;

use super::event::{ByeKind, ResultKind, Score};
use super::state::Tournament;

/// A line of a TRF or an engine's answer that cannot be read: where and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TrfError {
    /// The line, from 1.
    pub line: usize,
    /// The column, from 1.
    pub column: usize,
    /// What is wrong.
    pub message: String,
}

impl std::fmt::Display for TrfError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "line {}, column {}: {}",
            self.line, self.column, self.message
        )
    }
}

fn err(line: usize, column: usize, message: impl Into<String>) -> TrfError {
    TrfError {
        line,
        column,
        message: message.into(),
    }
}

/// One player's result in a round, as TRF writes it.
pub(crate) struct Cell {
    /// The opponent's pairing number; 0 for none (a bye, not in the round).
    pub opponent: u32,
    /// `w`, `b`, or `-` without an opponent.
    pub colour: char,
    /// `1`, `=`, `0`, `+`, `-`, a bye code (`U`, `H`, `Z`), or ` ` not yet known.
    pub result: char,
}

impl Cell {
    /// TRF's half-points for the cell's result (1 / ½ / 0 doubled; a full-point bye 2).
    pub(crate) fn half_points(&self) -> u32 {
        match self.result {
            '1' | '+' | 'U' | 'F' => 2,
            '=' | 'H' => 1,
            _ => 0,
        }
    }
}

/// The tournament as TRF-16, with the rounds paired so far (a round paired and not
/// finished shows its pairings with blank results, as TRF does for a round in
/// progress). Players without a pairing number are not written.
pub fn write_trf(t: &Tournament) -> String {
    let mut out = String::new();
    let Some(c) = t.config() else {
        return out;
    };
    let name = one_line(&c.name);
    let _ = writeln!(out, "012 {name}");
    let (numbers, _) = t.numbers();
    let _ = writeln!(out, "062 {}", numbers.len());
    let rated = numbers
        .iter()
        .filter(|id| t.player(**id).is_some_and(|p| p.entrant.rating > 0))
        .count();
    let _ = writeln!(out, "072 {rated}");
    let _ = writeln!(out, "092 {}", c.system.name());
    let _ = writeln!(out, "XXR {}", t.total_rounds());
    if let Some(white) = t.top_white() {
        // bbpPairings' and JaVaFo's record of the lot's colour for number 1 (T 2).
        let _ = writeln!(out, "XXC {}", if white { "white1" } else { "black1" });
    }
    let rounds = t.rounds();
    for (i, id) in numbers.iter().enumerate() {
        let Some(p) = t.player(*id) else { continue };
        let mut points2 = 0u32; // half-points
        let mut cells = Vec::with_capacity(rounds.len());
        for r in rounds {
            let cell = cell(t, r.number, *id);
            points2 += cell.half_points();
            cells.push(cell);
        }
        let e = &p.entrant;
        let mut line = format!(
            "001 {:>4} {:1}{:>3} {:<33} {:>4} {:<3} {:>11} {:<10} {:>4} {:>4}",
            i + 1,
            "",
            fixed(&e.title, 3),
            fixed(&one_line(&e.name), 33),
            e.rating,
            fixed(&e.federation, 3),
            fixed(&e.fmjd_id, 11),
            "",
            format!("{}.{}", points2 / 2, if points2 % 2 == 1 { 5 } else { 0 }),
            i + 1
        );
        for cell in cells {
            if cell.opponent == 0 && cell.result == ' ' {
                line.push_str(&" ".repeat(10));
            } else {
                let _ = write!(
                    line,
                    "  {:>4} {} {}",
                    cell.opponent, cell.colour, cell.result
                );
            }
        }
        let _ = writeln!(out, "{}", line.trim_end());
    }
    out
}

/// A player's cell for round `round`: opponent's pairing number (0 none), colour, result.
pub(crate) fn cell(t: &Tournament, round: u32, id: u32) -> Cell {
    let none = |result| Cell {
        opponent: 0,
        colour: '-',
        result,
    };
    let Some(r) = t.round(round) else {
        return none(' ');
    };
    if let Some(b) = r.byes.iter().find(|b| b.player == id) {
        return none(match b.kind {
            ByeKind::PairingAllocated => 'U',
            ByeKind::Half => 'H',
            ByeKind::Zero => 'Z',
            ByeKind::FreeRound => '-',
        });
    }
    let Some(p) = r.pairings.iter().find(|p| p.white == id || p.black == id) else {
        // Not in the round (withdrawn, or entered after it): a blank cell, as TRF leaves
        // a round a player was not paired in.
        return none(' ');
    };
    let white = p.white == id;
    let opponent_id = if white { p.black } else { p.white };
    let opponent = t.player(opponent_id).map_or(0, |o| o.pairing_number);
    let colour = if white { 'w' } else { 'b' };
    // The pairing's result for this player: the sum of its games from their side.
    let mut mine = 0i32; // half-points for, minus against
    let mut decided = true;
    let mut forfeit = false;
    let mut both_lose = false;
    for g in &p.games {
        let Some(o) = g.outcome else {
            decided = false;
            continue;
        };
        forfeit |= o.kind != ResultKind::Played;
        let me_white = g.white == id;
        mine += match (o.score, me_white) {
            (Score::WhiteWins, true) | (Score::BlackWins, false) => 2,
            (Score::WhiteWins, false) | (Score::BlackWins, true) => -2,
            (Score::Draw, _) => 0,
            (Score::BothLose, _) => {
                both_lose = true;
                -2
            }
        };
    }
    let result = if !decided {
        ' '
    } else if forfeit {
        if mine > 0 && !both_lose { '+' } else { '-' }
    } else if mine > 0 {
        '1'
    } else if mine < 0 {
        '0'
    } else {
        '='
    };
    Cell {
        opponent,
        colour,
        result,
    }
}

/// Text on one line (TRF has no escapes): control characters become spaces.
fn one_line(s: &str) -> String {
    s.chars()
        .map(|c| if c.is_control() { ' ' } else { c })
        .collect()
}

/// At most `n` characters.
fn fixed(s: &str, n: usize) -> String {
    s.chars().take(n).collect()
}

/// A round's pairings as another program wrote them in a TRF: `(white, black)` pairing
/// numbers, board order as the lines list them (by white's number), and byes as
/// `(number, code)` (`U`, `H`, `Z`, `F`, `-`).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct TrfRound {
    /// `(white, black)` pairing numbers.
    pub boards: Vec<(u32, u32)>,
    /// `(number, bye code)`.
    pub byes: Vec<(u32, char)>,
}

/// Reads round `round`'s pairings from a TRF-16 text: each `001` line's block for the
/// round (columns 92 + 10 × (round − 1) onwards: opponent, colour, result).
///
/// # Errors
/// The line and column of the first thing that cannot be read, or pairings that do not
/// agree (a player paired with one who names someone else).
pub fn read_round(text: &str, round: u32) -> Result<TrfRound, TrfError> {
    if round == 0 {
        return Err(err(0, 0, "round: from 1"));
    }
    // (number, line, (opponent, colour) if paired, bye code if not)
    type Read = (u32, usize, Option<(u32, char)>, Option<char>);
    let mut cells: Vec<Read> = Vec::new();
    let mut seen = std::collections::BTreeSet::new();
    for (i, line) in text.lines().enumerate() {
        let n = i + 1;
        if !line.starts_with("001") {
            continue;
        }
        let chars: Vec<char> = line.chars().collect();
        let field = |from: usize, to: usize| -> String {
            chars
                .get(from - 1..to.min(chars.len()))
                .map(|s| s.iter().collect::<String>())
                .unwrap_or_default()
        };
        let number_text = field(5, 8);
        let number: u32 = number_text.trim().parse().map_err(|_| {
            err(
                n,
                5,
                format!("a starting number in columns 5-8, got {number_text:?}"),
            )
        })?;
        if number == 0 || !seen.insert(number) {
            return Err(err(
                n,
                5,
                format!("starting number {number} is 0 or repeated"),
            ));
        }
        let start = 92 + 10 * (round as usize - 1);
        let block = field(start, start + 7);
        if block.trim().is_empty() {
            cells.push((number, n, None, None));
            continue;
        }
        let opp_text = field(start, start + 3);
        let colour = chars.get(start + 4).copied().unwrap_or(' ');
        let result = chars.get(start + 6).copied().unwrap_or(' ');
        let opponent: u32 = opp_text.trim().parse().map_err(|_| {
            err(
                n,
                start,
                format!(
                    "an opponent's number in columns {start}-{}, got {opp_text:?}",
                    start + 3
                ),
            )
        })?;
        if opponent == 0 {
            if !matches!(result, 'U' | 'H' | 'Z' | 'F' | '-' | '+') {
                return Err(err(
                    n,
                    start + 6,
                    format!("a bye code (U, H, Z, F), got {result:?}"),
                ));
            }
            cells.push((number, n, None, Some(result)));
            continue;
        }
        let colour = colour.to_ascii_lowercase();
        if !matches!(colour, 'w' | 'b') {
            return Err(err(
                n,
                start + 4,
                format!("a colour w or b, got {colour:?}"),
            ));
        }
        cells.push((number, n, Some((opponent, colour)), None));
    }
    if cells.is_empty() {
        return Err(err(0, 0, "no 001 player lines"));
    }
    let mut out = TrfRound::default();
    for &(number, line, pairing, bye) in &cells {
        if let Some(code) = bye {
            out.byes.push((number, code));
        }
        let Some((opponent, colour)) = pairing else {
            continue;
        };
        let back = cells.iter().find(|c| c.0 == opponent);
        let ok = match back {
            Some((_, _, Some((o, c)), _)) => *o == number && *c != colour,
            _ => false,
        };
        if !ok {
            return Err(err(
                line,
                92 + 10 * (round as usize - 1),
                format!(
                    "{number} is paired with {opponent}, whose line does not pair them back with the other colour"
                ),
            ));
        }
        if colour == 'w' {
            out.boards.push((number, opponent));
        }
    }
    Ok(out)
}

/// Reads bbpPairings' pairing answer (`-p`): the number of pairs on the first line,
/// then one `white black` line a pair, `N 0` for a bye.
///
/// # Errors
/// The line and column of the first thing that cannot be read, or a count that does
/// not match the lines.
pub fn read_engine_pairs(text: &str) -> Result<TrfRound, TrfError> {
    let mut lines = text
        .lines()
        .enumerate()
        .filter(|(_, l)| !l.trim().is_empty());
    let (_, first) = lines.next().ok_or_else(|| err(1, 1, "an empty answer"))?;
    let count: usize = first
        .trim()
        .parse()
        .map_err(|_| err(1, 1, format!("the number of pairs, got {:?}", first.trim())))?;
    let mut out = TrfRound::default();
    let mut read = 0;
    for (i, line) in lines {
        let mut words = line.split_whitespace();
        let num = |w: Option<&str>, col: usize| -> Result<u32, TrfError> {
            let w = w.ok_or_else(|| err(i + 1, col, "two numbers expected"))?;
            w.parse()
                .map_err(|_| err(i + 1, col, format!("a player's number, got {w:?}")))
        };
        let white = num(words.next(), 1)?;
        let black = num(words.next(), line.find(' ').map_or(1, |p| p + 2))?;
        if words.next().is_some() {
            return Err(err(i + 1, 1, "more than two numbers on a line"));
        }
        if white == 0 {
            return Err(err(i + 1, 1, "player number 0"));
        }
        if black == 0 {
            out.byes.push((white, 'U'));
        } else {
            out.boards.push((white, black));
        }
        read += 1;
    }
    if read != count {
        return Err(err(1, 1, format!("{count} pairs announced, {read} given")));
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn t_1_engine_answers_are_read_or_refused_with_their_place() {
        let r = read_engine_pairs("3\n1 4\n3 2\n5 0\n").expect("pairs");
        assert_eq!(r.boards, [(1, 4), (3, 2)]);
        assert_eq!(r.byes, [(5, 'U')]);
        assert_eq!(
            read_engine_pairs("3\n1 4\n").expect_err("short").message,
            "3 pairs announced, 1 given"
        );
        let e = read_engine_pairs("1\n1 x\n").expect_err("bad");
        assert_eq!((e.line, e.column), (2, 3));
        assert!(read_engine_pairs("").is_err());
    }

    #[test]
    fn t_1_a_round_is_read_from_a_trf_or_refused_with_line_and_column() {
        let line = |n: u32, opp: u32, c: char, res: char| {
            format!(
                "001 {n:>4} {:1}{:>3} {:<33} {:>4} {:<3} {:>11} {:<10} {:>4} {n:>4}  {opp:>4} {c} {res}",
                "",
                "",
                format!("Player {n}"),
                2000,
                "NED",
                "",
                "",
                "0.0"
            )
        };
        let text = format!(
            "012 Test\n{}\n{}\n{}\n",
            line(1, 2, 'w', ' '),
            line(2, 1, 'b', ' '),
            line(3, 0, '-', 'U')
        );
        let r = read_round(&text, 1).expect("round 1");
        assert_eq!(r.boards, [(1, 2)]);
        assert_eq!(r.byes, [(3, 'U')]);
        let broken = text.replace("     1 b", "     3 b");
        let e = read_round(&broken, 1).expect_err("not paired back");
        assert_eq!((e.line, e.column), (2, 92), "{e}");
        let bad = text.replace("     2 w", "     x w");
        assert_eq!(read_round(&bad, 1).expect_err("bad number").column, 92);
    }
}
