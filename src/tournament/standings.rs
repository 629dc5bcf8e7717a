//! Standings and crosstables (issue 41): computed from the tournament's recorded results,
//! pure like the rest of the module. RULES.md T 4 (micro-match points), T 6 (byes and
//! withdrawals), T 7 (scoring) and T 8 (tiebreaks).
//!
//! The unit counted is the **encounter**: a pairing's game, or a micro-match's games taken
//! together (T 4: "wins" and Sonneborn-Berger count micro-matches). An encounter counts
//! once every game of it has a result. Decisions where the rule book is silent (RULES.md
//! T 8 defers to FIDE Handbook C.07):
//! - **Unplayed rounds** (a default or a forfeit, won or lost, and a Swiss bye) count
//!   their points; for the player's own Solkoff and Sonneborn-Berger each is a game
//!   against a virtual opponent with the player's own points (C.07's virtual opponent).
//!   A round-robin's free round is nothing (T 6: not a game).
//! - **Wins** counts encounters won, over the board or by forfeit (not byes); the
//!   `wins` / `draws` / `losses` columns count encounters played over the board, the
//!   `forfeits` column the unplayed ones.
//! - **Both lose** (a double default or forfeit) is a loss for both.
//! - **Mutual result**: among the players tied on every criterion before it, each one's
//!   points from their encounters with the others of the group.
//! - **Games with Black** counts games played over the board with Black; **average rating
//!   of the opponents** the rated opponents of encounters played over the board.
//! - A round-robin player withdrawn before half their encounters (T 6, when the event
//!   annuls them) leaves the standings, and their encounters count for nobody.

use std::collections::BTreeMap;

use super::event::{ByeKind, ByeScore, GameSlot, ResultKind, Score, Scoring, System, Tiebreak};
use super::state::Tournament;

/// How an encounter went for one player.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verdict {
    /// Won.
    Win,
    /// Drawn.
    Draw,
    /// Lost (both lose included).
    Loss,
}

/// One player's part of one round.
#[derive(Debug, Clone, PartialEq)]
pub struct Cell {
    /// The round.
    pub round: u32,
    /// The opponent's player id; `None` for a bye or a free round.
    pub opponent: Option<u32>,
    /// Whether the player had White in the encounter's first game (`None`: a bye).
    pub white: Option<bool>,
    /// How it went; `None` while the encounter is not over.
    pub verdict: Option<Verdict>,
    /// Whether it was played over the board (false: a default, a forfeit, a bye).
    pub played: bool,
    /// The bye's kind, for a round without an opponent.
    pub bye: Option<ByeKind>,
    /// The event points it gave (0 while not over).
    pub points: f64,
    /// The player's points from its games (a micro-match's sum, 1 / ½ / 0 a game).
    pub game_points: f64,
}

/// A row of the standings.
#[derive(Debug, Clone, PartialEq)]
pub struct Row {
    /// The rank, from 1, shared by players equal on points and every tiebreak.
    pub rank: u32,
    /// The player's id.
    pub player: u32,
    /// Event points (T 7; T 4 for micro-matches).
    pub points: f64,
    /// Encounters played over the board.
    pub games: u32,
    /// Of those, won.
    pub wins: u32,
    /// Drawn.
    pub draws: u32,
    /// Lost.
    pub losses: u32,
    /// Encounters not played (defaults, forfeits), won or lost.
    pub forfeits: u32,
    /// The tiebreaks' values, in the event's order.
    pub tiebreaks: Vec<f64>,
    /// The player's rounds, in order.
    pub cells: Vec<Cell>,
}

/// The standings after a round.
#[derive(Debug, Clone, PartialEq)]
pub struct Standings {
    /// The last round counted (0: none yet).
    pub round: u32,
    /// The tiebreaks, in order.
    pub tiebreaks: Vec<Tiebreak>,
    /// The rows, in rank order (then by pairing number).
    pub rows: Vec<Row>,
}

/// A tiebreak's name as standings print it, with its rule.
pub fn tiebreak_name(t: Tiebreak) -> &'static str {
    match t {
        Tiebreak::Wins => "T 8 (wins)",
        Tiebreak::MutualResult => "T 8 (mutual result)",
        Tiebreak::SonnebornBerger => "T 8 (Sonneborn-Berger)",
        Tiebreak::Solkoff => "T 8 (Solkoff)",
        Tiebreak::TruncatedSolkoff => "T 8 (truncated Solkoff)",
        Tiebreak::MedianSolkoff => "T 8 (median Solkoff)",
        Tiebreak::GamesWithBlack => "T 8 (games with Black)",
        Tiebreak::AverageRatingOfOpponents => "T 8 (average rating of opponents)",
    }
}

/// A tiebreak's short column heading, as wall charts print it (`SB`, `Sol`).
#[must_use]
pub fn tiebreak_abbreviation(t: Tiebreak) -> &'static str {
    match t {
        Tiebreak::Wins => "W",
        Tiebreak::MutualResult => "MR",
        Tiebreak::SonnebornBerger => "SB",
        Tiebreak::Solkoff => "Sol",
        Tiebreak::TruncatedSolkoff => "TSol",
        Tiebreak::MedianSolkoff => "MSol",
        Tiebreak::GamesWithBlack => "Blk",
        Tiebreak::AverageRatingOfOpponents => "ARO",
    }
}

/// The fraction of a game a score gives White and Black (both lose: nothing to either).
fn fractions(score: Score) -> (f64, f64) {
    match score {
        Score::WhiteWins => (1.0, 0.0),
        Score::BlackWins => (0.0, 1.0),
        Score::Draw => (0.5, 0.5),
        Score::BothLose => (0.0, 0.0),
    }
}

/// Event points for a verdict (T 7).
fn points_for(scoring: Scoring, v: Verdict) -> f64 {
    match (scoring, v) {
        (_, Verdict::Loss) => 0.0,
        (Scoring::TwoOneZero, Verdict::Win) => 2.0,
        (Scoring::TwoOneZero, Verdict::Draw) => 1.0,
        (Scoring::OneHalfZero, Verdict::Win) => 1.0,
        (Scoring::OneHalfZero, Verdict::Draw) => 0.5,
    }
}

/// An encounter over: (the first player's game points, the second's, both lost, played).
fn settle(games: &[GameSlot]) -> Option<(f64, f64, bool, bool)> {
    let (mut a, mut b) = (0.0, 0.0);
    let mut both_lose = true;
    let mut played = false;
    let first_white = games.first()?.white;
    for g in games {
        let o = g.outcome?;
        let (w, bl) = fractions(o.score);
        let (mine, theirs) = if g.white == first_white {
            (w, bl)
        } else {
            (bl, w)
        };
        a += mine;
        b += theirs;
        both_lose &= o.score == Score::BothLose;
        played |= o.kind == ResultKind::Played;
    }
    Some((a, b, both_lose, played))
}

impl Tournament {
    /// The standings after round `round` (0: every encounter over so far), each tiebreak
    /// in the event's order.
    pub fn standings(&self, round: u32) -> Standings {
        let Some(config) = self.config() else {
            return Standings {
                round: 0,
                tiebreaks: Vec::new(),
                rows: Vec::new(),
            };
        };
        let last = if round == 0 {
            self.rounds().len() as u32
        } else {
            round.min(self.rounds().len() as u32)
        };
        let annulled = self.annulled_players(last);
        let mut rows: BTreeMap<u32, Row> = self
            .players()
            .iter()
            .filter(|p| !annulled.contains(&p.id))
            .map(|p| {
                (
                    p.id,
                    Row {
                        rank: 0,
                        player: p.id,
                        points: 0.0,
                        games: 0,
                        wins: 0,
                        draws: 0,
                        losses: 0,
                        forfeits: 0,
                        tiebreaks: Vec::new(),
                        cells: Vec::new(),
                    },
                )
            })
            .collect();
        let mut black_games: BTreeMap<u32, u32> = BTreeMap::new();
        for r in self.rounds().iter().take(last as usize) {
            for p in &r.pairings {
                if annulled.contains(&p.white) || annulled.contains(&p.black) {
                    continue;
                }
                let over = settle(&p.games);
                for (me, opp, white) in [(p.white, p.black, true), (p.black, p.white, false)] {
                    let (verdict, played, game_points) = match over {
                        None => (None, false, 0.0),
                        Some((a, b, both_lose, played)) => {
                            let (mine, theirs) = if white { (a, b) } else { (b, a) };
                            let v = if both_lose || mine < theirs {
                                Verdict::Loss
                            } else if mine > theirs {
                                Verdict::Win
                            } else {
                                Verdict::Draw
                            };
                            (Some(v), played, mine)
                        }
                    };
                    if played {
                        let with_black = p
                            .games
                            .iter()
                            .filter(|g| {
                                g.black == me
                                    && g.outcome.is_some_and(|o| o.kind == ResultKind::Played)
                            })
                            .count() as u32;
                        *black_games.entry(me).or_default() += with_black;
                    }
                    if let Some(row) = rows.get_mut(&me) {
                        let points = verdict.map_or(0.0, |v| points_for(config.scoring, v));
                        row.points += points;
                        match (verdict, played) {
                            (None, _) => {}
                            (Some(_), false) => row.forfeits += 1,
                            (Some(v), true) => {
                                row.games += 1;
                                match v {
                                    Verdict::Win => row.wins += 1,
                                    Verdict::Draw => row.draws += 1,
                                    Verdict::Loss => row.losses += 1,
                                }
                            }
                        }
                        row.cells.push(Cell {
                            round: r.number,
                            opponent: Some(opp),
                            white: Some(white),
                            verdict,
                            played,
                            bye: None,
                            points,
                            game_points,
                        });
                    }
                }
            }
            for b in &r.byes {
                let Some(row) = rows.get_mut(&b.player) else {
                    continue;
                };
                let verdict = match (b.kind, config.bye_score) {
                    (ByeKind::FreeRound | ByeKind::Zero, _)
                    | (ByeKind::PairingAllocated, ByeScore::Zero) => None,
                    (ByeKind::Half, _) | (ByeKind::PairingAllocated, ByeScore::Draw) => {
                        Some(Verdict::Draw)
                    }
                    (ByeKind::PairingAllocated, ByeScore::Win) => Some(Verdict::Win),
                };
                let points = verdict.map_or(0.0, |v| points_for(config.scoring, v));
                row.points += points;
                row.cells.push(Cell {
                    round: r.number,
                    opponent: None,
                    white: None,
                    verdict,
                    played: false,
                    bye: Some(b.kind),
                    points,
                    game_points: 0.0,
                });
            }
        }
        let points: BTreeMap<u32, f64> = rows.iter().map(|(id, r)| (*id, r.points)).collect();
        let order = &config.tiebreaks;
        // Every tiebreak but the mutual result, which needs the groups tied before it.
        for row in rows.values_mut() {
            let own = row.points;
            let opponents: Vec<(f64, &Cell)> = row
                .cells
                .iter()
                .filter(|c| c.verdict.is_some() && c.bye != Some(ByeKind::FreeRound))
                .map(|c| {
                    // An unplayed round: a virtual opponent with the player's own points.
                    let theirs = match c.opponent {
                        Some(o) if c.played => points.get(&o).copied().unwrap_or(0.0),
                        _ => own,
                    };
                    (theirs, c)
                })
                .collect();
            let mut solkoff: Vec<f64> = opponents.iter().map(|(p, _)| *p).collect();
            solkoff.sort_by(f64::total_cmp);
            let sum = |v: &[f64]| v.iter().sum::<f64>();
            let values: Vec<f64> = order
                .iter()
                .map(|t| match t {
                    Tiebreak::Wins => row
                        .cells
                        .iter()
                        .filter(|c| c.opponent.is_some() && c.verdict == Some(Verdict::Win))
                        .count() as f64,
                    Tiebreak::MutualResult => 0.0,
                    Tiebreak::SonnebornBerger => opponents
                        .iter()
                        .map(|(p, c)| {
                            let fraction = match c.verdict {
                                Some(Verdict::Win) => 1.0,
                                Some(Verdict::Draw) => 0.5,
                                _ => 0.0,
                            };
                            fraction * p
                        })
                        .sum(),
                    Tiebreak::Solkoff => sum(&solkoff),
                    Tiebreak::TruncatedSolkoff => sum(solkoff.get(1..).unwrap_or(&[])),
                    Tiebreak::MedianSolkoff => {
                        let n = solkoff.len();
                        if n > 2 { sum(&solkoff[1..n - 1]) } else { 0.0 }
                    }
                    Tiebreak::GamesWithBlack => {
                        f64::from(black_games.get(&row.player).copied().unwrap_or(0))
                    }
                    Tiebreak::AverageRatingOfOpponents => {
                        let ratings: Vec<f64> = row
                            .cells
                            .iter()
                            .filter(|c| c.played)
                            .filter_map(|c| self.player(c.opponent?))
                            .map(|p| f64::from(p.entrant.rating))
                            .filter(|r| *r > 0.0)
                            .collect();
                        if ratings.is_empty() {
                            0.0
                        } else {
                            (sum(&ratings) / ratings.len() as f64).round()
                        }
                    }
                })
                .collect();
            // `+ 0.0`: an empty sum is -0.0, which prints as "-0".
            row.tiebreaks = values.into_iter().map(|v| v + 0.0).collect();
        }
        let mut rows: Vec<Row> = rows.into_values().collect();
        // The mutual result, tiebreak by tiebreak: among the players equal on points and
        // every tiebreak before it.
        for (k, t) in order.iter().enumerate() {
            if *t != Tiebreak::MutualResult {
                continue;
            }
            let key = |r: &Row| {
                let mut v = vec![r.points];
                v.extend_from_slice(&r.tiebreaks[..k]);
                v
            };
            let keys: Vec<Vec<f64>> = rows.iter().map(key).collect();
            let mutual: Vec<f64> = rows
                .iter()
                .enumerate()
                .map(|(i, r)| {
                    let group: Vec<u32> = rows
                        .iter()
                        .enumerate()
                        .filter(|(j, _)| *j != i && keys[*j] == keys[i])
                        .map(|(_, o)| o.player)
                        .collect();
                    r.cells
                        .iter()
                        .filter(|c| c.opponent.is_some_and(|o| group.contains(&o)))
                        .map(|c| c.points)
                        .sum()
                })
                .collect();
            for (r, m) in rows.iter_mut().zip(mutual) {
                r.tiebreaks[k] = m + 0.0;
            }
        }
        let number = |id: u32| self.player(id).map_or(u32::MAX, |p| p.pairing_number);
        rows.sort_by(|a, b| {
            b.points
                .total_cmp(&a.points)
                .then_with(|| {
                    b.tiebreaks
                        .iter()
                        .zip(&a.tiebreaks)
                        .map(|(x, y)| x.total_cmp(y))
                        .find(|o| o.is_ne())
                        .unwrap_or(std::cmp::Ordering::Equal)
                })
                .then_with(|| number(a.player).cmp(&number(b.player)))
                .then_with(|| a.player.cmp(&b.player))
        });
        for i in 0..rows.len() {
            rows[i].rank = if i > 0
                && rows[i].points == rows[i - 1].points
                && rows[i].tiebreaks == rows[i - 1].tiebreaks
            {
                rows[i - 1].rank
            } else {
                i as u32 + 1
            };
        }
        Standings {
            round: last,
            tiebreaks: order.clone(),
            rows,
        }
    }

    /// T 6: the round-robin players withdrawn before half their encounters, when the
    /// event annuls their results (counted in the rounds up to `last`).
    fn annulled_players(&self, last: u32) -> Vec<u32> {
        let Some(c) = self.config() else {
            return Vec::new();
        };
        if !c.annul_before_half
            || !matches!(c.system, System::RoundRobin | System::DoubleRoundRobin)
        {
            return Vec::new();
        }
        self.players()
            .iter()
            .filter(|p| p.withdrawn_from.is_some())
            .filter(|p| {
                let played = self
                    .rounds()
                    .iter()
                    .take(last as usize)
                    .flat_map(|r| r.pairings.iter())
                    .filter(|pr| pr.white == p.id || pr.black == p.id)
                    .filter(|pr| settle(&pr.games).is_some_and(|s| s.3))
                    .count() as u32;
                // Their encounters: every other player once a cycle.
                let cycles = if c.system == System::DoubleRoundRobin {
                    2
                } else {
                    1
                };
                let theirs = (self.players().len() as u32).saturating_sub(1) * cycles;
                played * 2 < theirs
            })
            .map(|p| p.id)
            .collect()
    }
}
