//! Standings and tiebreaks (issue 41; RULES.md T 4, T 6, T 7, T 8) against tables computed
//! by hand, and against an independent computation of each tiebreak from the same
//! results in this test.

use std::collections::BTreeMap;

use draughts_arbiter::tournament::standings::{Verdict, tiebreak_name};
use draughts_arbiter::tournament::{
    Bye, ByeKind, Command, GivenPairings, Outcome, PairingSource, ResultKind, Score, System,
    Tiebreak, Tournament,
};

use crate::tournament::{Run, config};

/// Enters a played result for the game between `a` and `b` in `round` (either colour):
/// `a_score` from `a`'s side, 1 / ½ / 0 as 2 / 1 / 0.
fn result(r: &mut Run, round: u32, a: u32, b: u32, a_score: u8) {
    let game =
        r.t.round(round)
            .expect("paired")
            .games()
            .find(|g| (g.white, g.black) == (a, b) || (g.white, g.black) == (b, a))
            .unwrap_or_else(|| panic!("no game {a}-{b} in round {round}"))
            .clone();
    let white_score = if game.white == a {
        a_score
    } else {
        2 - a_score
    };
    let score = match white_score {
        2 => Score::WhiteWins,
        1 => Score::Draw,
        _ => Score::BlackWins,
    };
    r.ok(Command::GameFinished {
        game_id: game.game_id,
        outcome: Outcome {
            score,
            kind: ResultKind::Played,
        },
        rule: None,
        decided_at_ms: None,
    });
}

/// The 6-player round-robin's results, `(a, b, a's score)` in 2 / 1 / 0.
const ROUND_ROBIN: [(u32, u32, u8); 15] = [
    (1, 2, 1),
    (1, 3, 2),
    (1, 4, 0),
    (1, 5, 2),
    (1, 6, 1),
    (2, 3, 2),
    (2, 4, 1),
    (2, 5, 0),
    (2, 6, 2),
    (3, 4, 2),
    (3, 5, 1),
    (3, 6, 0),
    (4, 5, 2),
    (4, 6, 1),
    (5, 6, 2),
];

fn row_of(t: &Tournament, round: u32) -> BTreeMap<u32, (u32, f64, Vec<f64>)> {
    t.standings(round)
        .rows
        .into_iter()
        .map(|r| (r.player, (r.rank, r.points, r.tiebreaks)))
        .collect()
}

/// T 7, T 8: a 6-player round-robin, every game played; the default order
/// (Sonneborn-Berger, wins, mutual result). By hand: 1, 2 and 4 have 6 points; 4's
/// Sonneborn-Berger is 16, 1's and 2's 13; they have 2 wins each and drew each other,
/// so they share 2nd place; then 5 (5 points), 6 (4), 3 (3).
#[test]
fn t_8_a_round_robin_ranks_by_the_default_tiebreaks_computed_by_hand() {
    let mut r = Run::new(config(System::RoundRobin, 0, None, 1), 6);
    let next_seed = r.next_seed();
    r.ok(Command::NumberPlayers {
        hall: Some((1..=6).collect()),
        next_seed,
    });
    for round in 1..=5 {
        r.pair(round);
        let games: Vec<(u32, u32)> =
            r.t.round(round)
                .expect("paired")
                .games()
                .map(|g| (g.white, g.black))
                .collect();
        for (w, b) in games {
            let (a, bb, s) = ROUND_ROBIN
                .iter()
                .copied()
                .find(|&(a, b2, _)| (a, b2) == (w.min(b), w.max(b)))
                .expect("every pair once");
            result(&mut r, round, a, bb, s);
        }
    }
    let s = r.t.standings(0);
    assert_eq!(s.round, 5);
    assert_eq!(
        s.tiebreaks
            .iter()
            .map(|t| tiebreak_name(*t))
            .collect::<Vec<_>>(),
        vec![
            "T 8 (Sonneborn-Berger)",
            "T 8 (wins)",
            "T 8 (mutual result)"
        ]
    );
    let table: Vec<(u32, u32, f64, Vec<f64>)> = s
        .rows
        .iter()
        .map(|r| (r.rank, r.player, r.points, r.tiebreaks.clone()))
        .collect();
    assert_eq!(
        table,
        vec![
            (1, 4, 6.0, vec![16.0, 2.0, 0.0]),
            (2, 1, 6.0, vec![13.0, 2.0, 1.0]),
            (2, 2, 6.0, vec![13.0, 2.0, 1.0]),
            (4, 5, 5.0, vec![11.5, 2.0, 0.0]),
            (5, 6, 4.0, vec![9.0, 1.0, 0.0]),
            (6, 3, 3.0, vec![8.5, 1.0, 0.0]),
        ]
    );
    let four = &s.rows[0];
    assert_eq!(
        (
            four.games,
            four.wins,
            four.draws,
            four.losses,
            four.forfeits
        ),
        (5, 2, 2, 1, 0)
    );

    // The same from an independent computation: points and Sonneborn-Berger straight
    // from the list of results.
    let mut points: BTreeMap<u32, f64> = BTreeMap::new();
    for (a, b, s) in ROUND_ROBIN {
        *points.entry(a).or_default() += f64::from(s);
        *points.entry(b).or_default() += f64::from(2 - s);
    }
    let mut sb: BTreeMap<u32, f64> = BTreeMap::new();
    for (a, b, s) in ROUND_ROBIN {
        *sb.entry(a).or_default() += f64::from(s) / 2.0 * points[&b];
        *sb.entry(b).or_default() += f64::from(2 - s) / 2.0 * points[&a];
    }
    for (id, (_, p, tb)) in row_of(&r.t, 0) {
        assert_eq!(p, points[&id], "points of {id}");
        assert_eq!(tb[0], sb[&id], "Sonneborn-Berger of {id}");
    }

    // After round 2 only: the standings count rounds 1 and 2.
    let after2 = r.t.standings(2);
    assert_eq!(after2.round, 2);
    assert_eq!(
        after2.rows.iter().map(|r| r.points).sum::<f64>(),
        12.0,
        "6 games of 2 points"
    );
    assert_eq!(r.replayed().standings(0), s, "the standings replay");
}

/// T 6, T 8: a 9-player Swiss of 3 rounds with a pairing-allocated bye, a forfeit, a
/// double loss by forfeit and a withdrawal; the Swiss default order (truncated Solkoff,
/// Solkoff, Sonneborn-Berger, wins). Computed by hand (unplayed rounds: a virtual
/// opponent with the player's own points).
#[test]
fn t_8_a_swiss_with_a_bye_a_forfeit_a_withdrawal_and_a_double_loss() {
    let mut c = config(System::Swiss, 3, None, 1);
    c.tiebreaks = Tiebreak::defaults(System::Swiss);
    let mut r = Run::new(c, 9);
    let pair = |r: &mut Run, round: u32, boards: Vec<(u32, u32)>, byes: Vec<Bye>| {
        let next_seed = r.next_seed();
        r.ok(Command::PairRound {
            round,
            given: Some(GivenPairings {
                boards,
                byes,
                source: PairingSource::Arbiter {
                    note: "by hand".into(),
                },
            }),
            next_seed,
        });
    };
    pair(
        &mut r,
        1,
        vec![(1, 2), (3, 4), (5, 6), (7, 8)],
        vec![Bye {
            player: 9,
            kind: ByeKind::PairingAllocated,
        }],
    );
    result(&mut r, 1, 1, 2, 2);
    result(&mut r, 1, 3, 4, 1);
    r.ok(Command::RecordForfeit {
        round: 1,
        player: 6,
    });
    r.ok(Command::RecordForfeit {
        round: 1,
        player: 7,
    });
    r.ok(Command::RecordForfeit {
        round: 1,
        player: 8,
    });
    r.ok(Command::Withdraw {
        player: 8,
        reason: "ill".into(),
    });
    pair(&mut r, 2, vec![(1, 5), (9, 3), (4, 2), (6, 7)], Vec::new());
    result(&mut r, 2, 1, 5, 1);
    result(&mut r, 2, 9, 3, 2);
    result(&mut r, 2, 2, 4, 2);
    result(&mut r, 2, 7, 6, 2);
    pair(&mut r, 3, vec![(9, 1), (2, 5), (3, 7), (4, 6)], Vec::new());
    result(&mut r, 3, 9, 1, 1);
    result(&mut r, 3, 5, 2, 2);
    result(&mut r, 3, 3, 7, 1);
    result(&mut r, 3, 4, 6, 2);

    let s = r.t.standings(0);
    let table: Vec<(u32, u32, f64, Vec<f64>)> = s
        .rows
        .iter()
        .map(|r| (r.rank, r.player, r.points, r.tiebreaks.clone()))
        .collect();
    assert_eq!(
        table,
        vec![
            (1, 5, 5.0, vec![9.0, 11.0, 9.0, 2.0]),
            (2, 9, 5.0, vec![9.0, 11.0, 9.0, 1.0]),
            (3, 1, 4.0, vec![10.0, 12.0, 7.0, 1.0]),
            (4, 7, 3.0, vec![5.0, 5.0, 1.0, 1.0]),
            (5, 4, 3.0, vec![4.0, 4.0, 1.0, 1.0]),
            (6, 2, 2.0, vec![9.0, 12.0, 3.0, 1.0]),
            (7, 3, 2.0, vec![8.0, 11.0, 3.0, 0.0]),
            (8, 6, 0.0, vec![6.0, 6.0, 0.0, 0.0]),
            (9, 8, 0.0, vec![0.0, 0.0, 0.0, 0.0]),
        ]
    );
    assert!(
        s.rows
            .iter()
            .flat_map(|r| &r.tiebreaks)
            .all(|v| !v.is_sign_negative()),
        "no -0 (an empty sum) to print"
    );
    let counts: BTreeMap<u32, (u32, u32, u32, u32, u32)> = s
        .rows
        .iter()
        .map(|r| (r.player, (r.games, r.wins, r.draws, r.losses, r.forfeits)))
        .collect();
    assert_eq!(counts[&5], (2, 1, 1, 0, 1), "a forfeit win is not a game");
    assert_eq!(counts[&7], (2, 1, 1, 0, 1), "the double loss is a forfeit");
    assert_eq!(counts[&8], (0, 0, 0, 0, 1));
    assert_eq!(
        counts[&9],
        (2, 1, 1, 0, 0),
        "a bye is neither game nor forfeit"
    );
    let nine = s.rows.iter().find(|r| r.player == 9).expect("9");
    assert_eq!(nine.cells[0].bye, Some(ByeKind::PairingAllocated));
    assert_eq!(nine.cells[0].verdict, Some(Verdict::Win));
    assert_eq!(nine.cells[0].points, 2.0);

    // Independently: Solkoff from the results, each unplayed round counting the
    // player's own points.
    let points: BTreeMap<u32, f64> = s.rows.iter().map(|r| (r.player, r.points)).collect();
    let opponents: [(u32, &[Option<u32>]); 9] = [
        (1, &[Some(2), Some(5), Some(9)]),
        (2, &[Some(1), Some(4), Some(5)]),
        (3, &[Some(4), Some(9), Some(7)]),
        (4, &[Some(3), Some(2), Some(6)]),
        (5, &[None, Some(1), Some(2)]),
        (6, &[None, Some(7), Some(4)]),
        (7, &[None, Some(6), Some(3)]),
        (8, &[None]),
        (9, &[None, Some(3), Some(1)]),
    ];
    for (id, opps) in opponents {
        let mut list: Vec<f64> = opps
            .iter()
            .map(|o| o.map_or(points[&id], |o| points[&o]))
            .collect();
        list.sort_by(f64::total_cmp);
        let solkoff: f64 = list.iter().sum();
        let truncated: f64 = list.iter().skip(1).sum();
        let row = s.rows.iter().find(|r| r.player == id).expect("row");
        assert_eq!(
            (row.tiebreaks[0], row.tiebreaks[1]),
            (truncated, solkoff),
            "Solkoff of {id}"
        );
    }
}

/// T 4: a micro-match event ranks by micro-match points; wins count micro-matches.
#[test]
fn t_4_micro_matches_rank_by_match_points() {
    let mut r = Run::new(config(System::RoundRobin, 0, None, 2), 4);
    let next_seed = r.next_seed();
    r.ok(Command::NumberPlayers {
        hall: Some((1..=4).collect()),
        next_seed,
    });
    r.pair(1);
    let pairings = r.t.round(1).expect("r1").pairings.clone();
    // Board 1: the first player wins one game and draws the other (3-1 in game points
    // 2 / 1 / 0: a match won); board 2: each wins with White (a drawn match).
    let b1 = &pairings[0];
    let b2 = &pairings[1];
    result(&mut r, 1, b1.white, b1.black, 2);
    // The second game of board 1 (colours reversed): the same pair, drawn.
    let second = b1.games[1].game_id.clone();
    r.ok(Command::GameFinished {
        game_id: second,
        outcome: Outcome {
            score: Score::Draw,
            kind: ResultKind::Played,
        },
        rule: None,
        decided_at_ms: None,
    });
    for g in &b2.games {
        r.ok(Command::GameFinished {
            game_id: g.game_id.clone(),
            outcome: Outcome {
                score: Score::WhiteWins,
                kind: ResultKind::Played,
            },
            rule: None,
            decided_at_ms: None,
        });
    }
    let s = r.t.standings(1);
    let by: BTreeMap<u32, (f64, u32, u32, u32)> = s
        .rows
        .iter()
        .map(|r| (r.player, (r.points, r.wins, r.draws, r.losses)))
        .collect();
    assert_eq!(by[&b1.white], (2.0, 1, 0, 0), "3-1: a match won, 2 points");
    assert_eq!(by[&b1.black], (0.0, 0, 0, 1));
    assert_eq!(by[&b2.white], (1.0, 0, 1, 0), "2-2: a drawn match");
    assert_eq!(by[&b2.black], (1.0, 0, 1, 0));
    let cell = &s
        .rows
        .iter()
        .find(|r| r.player == b1.white)
        .expect("row")
        .cells[0];
    assert_eq!(cell.game_points, 1.5, "the match's game points");
}
