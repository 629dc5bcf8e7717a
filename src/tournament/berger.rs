//! Round-robin pairing by the Berger tables (RULES.md T 1; FIDE Handbook C.05, Annex 1,
//! which FMJD uses too).
//!
//! The tables are a pure function of the number of players, so they are computed, not
//! stored; `tests/it/tournament.rs` checks them against the published tables for 3 to 16
//! players. For `n` players (an odd field adds a dummy, the highest number, whose opponent
//! has the free round) and `m = n - 1`:
//! - in round `r` (1-based), players `i` and `j` below `n` meet when
//!   `i + j ≡ r + 1 (mod m)`, and the one player whose double is `≡ r + 1` meets `n`;
//! - the game with `n` is board 1, `n` playing Black in odd rounds and White in even ones;
//!   board `k + 1` pairs the players `k` places after and before `n`'s opponent, around
//!   the circle of `1..=m`;
//! - of two players below `n`, White is the one from whom the other is an odd number of
//!   places ahead (`(j - i) mod m` odd; `m` is odd, so exactly one of the two).
//!
//! A double round-robin plays the first cycle with its last two rounds swapped (C.05's
//! recommendation, so nobody gets three games with one colour in a row), then the
//! Berger rounds again in their own order with colours reversed.

/// One board of a round: pairing numbers (1-based), White first.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Board {
    /// White's pairing number.
    pub white: u32,
    /// Black's pairing number.
    pub black: u32,
}

/// One round of a round-robin: its boards in order, and the player with the free round
/// (an odd field), who does not play.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Round {
    /// The boards, board 1 first.
    pub boards: Vec<Board>,
    /// The pairing number paired with the dummy, if the field is odd.
    pub free: Option<u32>,
}

/// The most players a round-robin takes (a round-robin of more is not an event a
/// draughts federation runs; the limit keeps every table small).
pub const MAX_PLAYERS: u32 = 64;

/// The number of rounds of one cycle for `players` players.
pub fn rounds_per_cycle(players: u32) -> u32 {
    let n = players + players % 2;
    n.saturating_sub(1)
}

/// Round `round` (1-based) of the single round-robin for `players` players (2 to
/// [`MAX_PLAYERS`]), straight from the Berger table; `None` out of range.
pub fn berger_round(players: u32, round: u32) -> Option<Round> {
    if !(2..=MAX_PLAYERS).contains(&players) || round == 0 || round > rounds_per_cycle(players) {
        return None;
    }
    let n = players + players % 2;
    let m = n - 1;
    // Positions on the circle are 0-based (player p sits at p - 1).
    // 0-based seats x, y meet when x + y ≡ r - 1 (mod m); n's opponent has 2x ≡ r - 1.
    let target = (round - 1) % m;
    let pivot = (0..m)
        .find(|&x| (2 * x) % m == target)
        .expect("m is odd, so 2 has an inverse mod m");
    let dummy = players % 2 == 1;
    let seat = |x: u32| x + 1; // 0-based seat → pairing number
    let mut boards = Vec::with_capacity(n as usize / 2);
    let mut free = None;
    // Board 1: n against the pivot.
    if dummy {
        free = Some(seat(pivot));
    }
    let first = if round % 2 == 1 {
        Board {
            white: seat(pivot),
            black: n,
        }
    } else {
        Board {
            white: n,
            black: seat(pivot),
        }
    };
    if !dummy {
        boards.push(first);
    }
    for k in 1..=(m / 2) {
        let a = (pivot + k) % m;
        let b = (pivot + m - k) % m;
        // White is the one from whom the other is an odd number of places ahead.
        let (white, black) = if ((b + m - a) % m) % 2 == 1 {
            (a, b)
        } else {
            (b, a)
        };
        boards.push(Board {
            white: seat(white),
            black: seat(black),
        });
    }
    Some(Round { boards, free })
}

/// Round `round` (1-based) of a round-robin of `cycles` cycles (1 or 2) for `players`
/// players; `None` out of range. With two cycles, the first cycle's last two rounds are
/// swapped and the second cycle reverses the colours of the Berger rounds in order
/// (RULES.md T 1).
pub fn round_robin_round(players: u32, cycles: u32, round: u32) -> Option<Round> {
    let per = rounds_per_cycle(players);
    if per == 0 || !(1..=2).contains(&cycles) || round == 0 || round > per * cycles {
        return None;
    }
    if cycles == 1 {
        return berger_round(players, round);
    }
    if round <= per {
        // The last two rounds of the first cycle swap places (only with 2 or more rounds).
        let r = if per >= 2 && round == per {
            per - 1
        } else if per >= 2 && round == per - 1 {
            per
        } else {
            round
        };
        return berger_round(players, r);
    }
    let mut r = berger_round(players, round - per)?;
    for b in &mut r.boards {
        std::mem::swap(&mut b.white, &mut b.black);
    }
    Some(r)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeSet;

    /// T 1: everyone meets everyone once a cycle, once a round, whatever the field.
    #[test]
    fn t_1_every_pair_meets_once_a_cycle() {
        for players in 2..=MAX_PLAYERS {
            let mut met = BTreeSet::new();
            for r in 1..=rounds_per_cycle(players) {
                let round = berger_round(players, r).expect("round in range");
                let mut seen = BTreeSet::new();
                for b in &round.boards {
                    assert!(b.white != b.black && b.white <= players && b.black <= players);
                    assert!(seen.insert(b.white) && seen.insert(b.black));
                    let pair = (b.white.min(b.black), b.white.max(b.black));
                    assert!(met.insert(pair), "{players} players: {pair:?} met twice");
                }
                if let Some(f) = round.free {
                    assert!(seen.insert(f), "the free player also plays");
                }
                assert_eq!(seen.len() as u32, players);
            }
            assert_eq!(met.len() as u32, players * (players - 1) / 2);
        }
        assert!(berger_round(1, 1).is_none() && berger_round(4, 4).is_none());
    }

    /// T 1: a double round-robin never gives three games in a row with one colour, and
    /// each pair plays once with each colour.
    #[test]
    fn t_1_double_round_robin_reverses_colours_without_three_in_a_row() {
        for players in 3..=20 {
            let per = rounds_per_cycle(players);
            let mut colours: Vec<Vec<char>> = vec![Vec::new(); players as usize + 1];
            let mut games = BTreeSet::new();
            for r in 1..=2 * per {
                let round = round_robin_round(players, 2, r).expect("in range");
                if let Some(f) = round.free {
                    colours[f as usize].push('-');
                }
                for b in &round.boards {
                    colours[b.white as usize].push('W');
                    colours[b.black as usize].push('B');
                    assert!(
                        games.insert((b.white, b.black)),
                        "{players}: same colours twice"
                    );
                }
            }
            for (p, c) in colours.iter().enumerate().skip(1) {
                let s: String = c.iter().collect();
                assert!(
                    !s.contains("WWW") && !s.contains("BBB"),
                    "{players} players, #{p}: {s}"
                );
            }
        }
    }
}
