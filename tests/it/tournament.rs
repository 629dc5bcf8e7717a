//! The tournament's pure core (src/tournament/, RULES.md T 1–T 6): the Berger tables
//! against the published ones, the lot, ballot openings and micro-matches, byes,
//! forfeits, and the fold (any commands fold to the same state as their log's replay; a
//! refused command changes nothing).

use std::collections::{BTreeMap, BTreeSet};

use draughts_arbiter::game::GameSettings;
use draughts_arbiter::rules::Variant;
use draughts_arbiter::tournament::berger::{round_robin_round, rounds_per_cycle};
use draughts_arbiter::tournament::{
    Ballot, BallotPer, Bye, ByeKind, ByeScore, Class, Command, Config, DEFAULT_TIME_MS, Entrant,
    EventKind, GivenPairings, NumbersSource, Outcome, PairingSource, ResultKind, Score, Scoring,
    Seed, System, Tiebreak, Tournament, TournamentEvent, ballot,
};
use proptest::prelude::*;

/// The published tables: FIDE Handbook C.05 Annex 1 (see the data file's header).
const PUBLISHED: &str = include_str!("../data/berger/fide-c05-annex1.txt");

fn published() -> BTreeMap<u32, Vec<Vec<(u32, u32)>>> {
    let mut tables = BTreeMap::new();
    let mut current = 0;
    for line in PUBLISHED.lines() {
        if let Some(n) = line.strip_prefix("players ") {
            current = n.parse().expect("player count");
            tables.insert(current, Vec::new());
        } else if let Some(rest) = line.strip_prefix("Rd ") {
            let (_, boards) = rest.split_once(": ").expect("round line");
            let round = boards
                .split(", ")
                .map(|b| {
                    let (w, bl) = b.split_once('-').expect("white-black");
                    (w.parse().expect("white"), bl.parse().expect("black"))
                })
                .collect();
            tables.get_mut(&current).expect("a table").push(round);
        }
    }
    tables
}

/// T 1: the Berger rounds are the published FIDE/FMJD tables for 3 to 16 players; an odd
/// field plays the table of the next even number, the highest number's opponent free.
#[test]
fn t_1_berger_tables_equal_the_published_ones_for_3_to_16_players() {
    let tables = published();
    assert_eq!(
        tables.keys().copied().collect::<Vec<_>>(),
        [4, 6, 8, 10, 12, 14, 16]
    );
    for players in 3..=16u32 {
        let even = players + players % 2;
        let table = &tables[&even];
        assert_eq!(rounds_per_cycle(players) as usize, table.len());
        for (r, boards) in table.iter().enumerate() {
            let ours = round_robin_round(players, 1, r as u32 + 1).expect("round");
            let mut want: Vec<(u32, u32)> = boards.clone();
            let mut free = None;
            if players % 2 == 1 {
                let (i, &(w, b)) = want
                    .iter()
                    .enumerate()
                    .find(|(_, (w, b))| *w == even || *b == even)
                    .expect("the dummy plays");
                free = Some(if w == even { b } else { w });
                want.remove(i);
            }
            let got: Vec<(u32, u32)> = ours.boards.iter().map(|b| (b.white, b.black)).collect();
            assert_eq!(got, want, "{players} players, round {}", r + 1);
            assert_eq!(ours.free, free, "{players} players, round {}", r + 1);
        }
    }
}

/// T 1: a double round-robin plays the first cycle with its last two rounds swapped and
/// the second cycle with the Berger rounds' colours reversed.
#[test]
fn t_1_double_round_robin_swaps_the_last_two_and_reverses_colours() {
    let tables = published();
    let t6 = &tables[&6];
    let pairs = |players, r| -> Vec<(u32, u32)> {
        round_robin_round(players, 2, r)
            .expect("round")
            .boards
            .iter()
            .map(|b| (b.white, b.black))
            .collect()
    };
    assert_eq!(pairs(6, 1), t6[0]);
    assert_eq!(pairs(6, 4), t6[4], "round 4 is Berger's round 5");
    assert_eq!(pairs(6, 5), t6[3], "round 5 is Berger's round 4");
    let reversed: Vec<(u32, u32)> = t6[0].iter().map(|&(w, b)| (b, w)).collect();
    assert_eq!(pairs(6, 6), reversed);
    assert!(round_robin_round(6, 2, 11).is_none());
}

pub(crate) fn entrant(name: &str, rating: u32) -> Entrant {
    Entrant {
        name: name.into(),
        rating,
        ..Entrant::default()
    }
}

pub(crate) fn config(system: System, rounds: u32, ballot: Option<Ballot>, games: u32) -> Config {
    Config {
        name: "Test Open 2026".into(),
        system,
        rounds,
        settings: GameSettings::new(Variant::Russian),
        scoring: Scoring::TwoOneZero,
        tiebreaks: Tiebreak::defaults(system),
        ballot,
        games_per_pairing: games,
        default_time_ms: DEFAULT_TIME_MS,
        bye_score: ByeScore::Win,
        annul_before_half: true,
        site: String::new(),
        time_zone: String::new(),
    }
}

pub(crate) fn seed(n: u8) -> Seed {
    Seed([n; 32])
}

/// A tournament's log and state, driven as the hub would: each command decided, its
/// events applied and kept.
pub(crate) struct Run {
    pub(crate) t: Tournament,
    log: Vec<TournamentEvent>,
    at: i64,
    seeds: u8,
}

impl Run {
    pub(crate) fn new(c: Config, players: usize) -> Run {
        let mut r = Run {
            t: Tournament::new(),
            log: Vec::new(),
            at: 1_700_000_000_000,
            seeds: 1,
        };
        r.ok(Command::Create {
            config: c,
            seed: seed(1),
        });
        if players > 0 {
            let list = (1..=players)
                .map(|i| entrant(&format!("Player {i:02}"), 2000 + 10 * i as u32))
                .collect();
            r.ok(Command::AddPlayers { players: list });
        }
        r
    }

    pub(crate) fn next_seed(&mut self) -> Seed {
        self.seeds += 1;
        seed(self.seeds)
    }

    pub(crate) fn run(
        &mut self,
        c: Command,
    ) -> Result<Vec<TournamentEvent>, draughts_arbiter::tournament::TournamentError> {
        self.at += 1000;
        let events = self.t.handle(&c, self.at)?;
        for e in &events {
            self.t.apply(e).expect("a decided event applies");
        }
        self.log.extend(events.iter().cloned());
        Ok(events)
    }

    pub(crate) fn ok(&mut self, c: Command) -> Vec<TournamentEvent> {
        let shown = format!("{c:?}");
        self.run(c).unwrap_or_else(|e| panic!("{shown}: {e}"))
    }

    pub(crate) fn pair(&mut self, round: u32) -> Vec<TournamentEvent> {
        let next_seed = self.next_seed();
        self.ok(Command::PairRound {
            round,
            given: None,
            next_seed,
        })
    }

    /// Every game of the round drawn (as the hub reports finished games).
    fn finish(&mut self, round: u32, score: Score) {
        let ids: Vec<String> = self
            .t
            .round(round)
            .expect("paired")
            .games()
            .filter(|g| g.outcome.is_none())
            .map(|g| g.game_id.clone())
            .collect();
        for game_id in ids {
            self.ok(Command::GameFinished {
                game_id,
                outcome: Outcome {
                    score,
                    kind: ResultKind::Played,
                },
                rule: None,
                decided_at_ms: None,
            });
        }
    }

    pub(crate) fn replayed(&self) -> Tournament {
        // Through JSON, as the store keeps it.
        let text = serde_json::to_string(&self.log).expect("json");
        let back: Vec<TournamentEvent> = serde_json::from_str(&text).expect("json back");
        Tournament::replay(&back).expect("replays")
    }
}

/// T 1, T 2: a 6-player round-robin numbered by lot is paired by the Berger tables round
/// after round; the lot replays from the revealed seed, whose hash was published before.
#[test]
fn t_2_round_robin_numbers_drawn_by_lot_and_checkable() {
    let mut r = Run::new(config(System::RoundRobin, 0, None, 1), 6);
    let published = r.t.commitment().expect("a sealed seed");
    let events = r.pair(1);
    let EventKind::NumbersGiven {
        numbers, source, ..
    } = &events[0].kind
    else {
        panic!("numbers first: {events:?}");
    };
    assert_eq!(source, &NumbersSource::Lot);
    let EventKind::LotRevealed { seed: revealed, .. } = &events.last().expect("events").kind else {
        panic!("the seed revealed last: {events:?}");
    };
    assert_eq!(
        revealed.commitment(),
        published,
        "the seed is the one committed to"
    );
    // Anyone can redo the draw from the revealed seed (lot.rs's procedure).
    let again: Vec<u32> = revealed
        .draw("pairing-numbers")
        .shuffle(6)
        .into_iter()
        .map(|i| i as u32 + 1)
        .collect();
    assert_eq!(numbers, &again);
    assert_ne!(
        r.t.commitment().expect("next"),
        published,
        "a new seed is sealed"
    );
    assert_eq!(r.t.total_rounds(), 5);
    for round in 1..=5 {
        if round > 1 {
            r.pair(round);
        }
        let paired = r.t.round(round).expect("paired");
        let berger = round_robin_round(6, 1, round).expect("berger");
        for (p, b) in paired.pairings.iter().zip(&berger.boards) {
            assert_eq!(
                (p.white, p.black),
                (numbers[b.white as usize - 1], numbers[b.black as usize - 1])
            );
            assert_eq!(p.games.len(), 1);
            assert_eq!(
                p.games[0].game_id,
                format!("test-open-2026-r{round}-b{}", p.board)
            );
        }
        r.ok(Command::StartRound { round });
        r.finish(round, Score::Draw);
    }
    let e = r.run(Command::PairRound {
        round: 6,
        given: None,
        next_seed: seed(99),
    });
    assert_eq!(e.expect_err("no round 6").class, Class::FailedPrecondition);
    assert_eq!(r.replayed(), r.t);
}

/// T 1: pairing before the previous round finished, twice, or out of order is refused,
/// and so is adding a player once the round-robin's numbers are drawn; nothing changes.
#[test]
fn t_1_pairing_out_of_turn_is_refused_and_changes_nothing() {
    let mut r = Run::new(config(System::RoundRobin, 0, None, 1), 4);
    r.pair(1);
    let before = r.t.clone();
    let refusals = [
        Command::PairRound {
            round: 2,
            given: None,
            next_seed: seed(50),
        },
        Command::PairRound {
            round: 1,
            given: None,
            next_seed: seed(50),
        },
        Command::PairRound {
            round: 3,
            given: None,
            next_seed: seed(50),
        },
        Command::AddPlayers {
            players: vec![entrant("Late, Comer", 1900)],
        },
        Command::StartRound { round: 2 },
    ];
    for c in refusals {
        let e = r.run(c.clone()).expect_err("refused");
        assert_eq!(e.class, Class::FailedPrecondition, "{c:?}: {e}");
        assert_eq!(r.t, before, "{c:?} changed the state");
    }
    let e = r
        .run(Command::PairRound {
            round: 2,
            given: None,
            next_seed: seed(50),
        })
        .expect_err("round 1 open");
    assert!(e.message.contains("round 1 has not finished"), "{e}");
    assert_eq!(e.rule, Some("T 1"));
}

/// T 3, T 4: a ballot micro-match event: both games of a pairing start from the drawn
/// opening with colours reversed, no number repeats before the table is exhausted, and
/// the log replays to the same draws.
#[test]
fn t_4_ballot_micro_matches_share_an_opening_with_colours_reversed() {
    let ballot = Some(Ballot {
        table: "idf-64".into(),
        per: BallotPer::Pairing,
    });
    // 12 players, double round-robin of 2-game micro-matches: 22 rounds × 6 boards = 132
    // draws from a table of 149.
    let mut r = Run::new(config(System::DoubleRoundRobin, 0, ballot, 2), 12);
    let mut drawn = Vec::new();
    for round in 1..=22 {
        let events = r.pair(round);
        let revealed = events
            .iter()
            .find_map(|e| match &e.kind {
                EventKind::LotRevealed { seed, .. } => Some(*seed),
                _ => None,
            })
            .expect("each round's draws reveal their seed");
        let paired = r.t.round(round).expect("paired");
        for p in &paired.pairings {
            let [g1, g2] = &p.games[..] else {
                panic!("two games a pairing: {p:?}");
            };
            assert_eq!(
                (g1.white, g1.black),
                (g2.black, g2.white),
                "colours reversed"
            );
            assert!(g1.game_id.ends_with("-g1") && g2.game_id.ends_with("-g2"));
            let o = g1.opening.clone().expect("an opening");
            assert_eq!(g2.opening.as_ref(), Some(&o), "the same opening");
            let table = ballot::table("idf-64").expect("table");
            assert_eq!(table.opening(o.number).expect("number").code, o.code);
            drawn.push(o.number);
        }
        assert_eq!(paired.draws.len(), 6);
        // The round's draws are checkable from the revealed seed.
        let table = ballot::table("idf-64").expect("table");
        let first_free: Vec<u32> = table
            .openings
            .iter()
            .map(|o| o.number)
            .filter(|n| !drawn[..drawn.len() - 6].contains(n))
            .collect();
        let n = first_free[revealed
            .draw(&format!("round-{round} board-1 opening-1"))
            .below(first_free.len() as u64) as usize];
        assert_eq!(
            n, paired.draws[0],
            "round {round}: board 1's draw redone from the seed"
        );
        r.ok(Command::StartRound { round });
        r.finish(round, Score::WhiteWins);
    }
    let distinct: BTreeSet<u32> = drawn.iter().copied().collect();
    assert_eq!(
        distinct.len(),
        drawn.len(),
        "no number repeats before the table is exhausted"
    );
    assert_eq!(r.replayed(), r.t);
}

/// T 3: once the table is exhausted every number may come again (149 IDF openings drawn,
/// 160 draws: the first 149 are all different, the next ones start a new cycle); a
/// per-round ballot gives every board of the round the same opening.
#[test]
fn t_3_an_exhausted_table_starts_again_and_per_round_draws_are_shared() {
    let manual = |per| {
        config(
            System::Manual,
            99,
            Some(Ballot {
                table: "idf-64".into(),
                per,
            }),
            2,
        )
    };
    let play = |r: &mut Run, round: u32| {
        let next_seed = r.next_seed();
        let (a, b) = if round % 2 == 1 { (1, 2) } else { (2, 1) };
        r.ok(Command::PairRound {
            round,
            given: Some(GivenPairings {
                boards: vec![(a, b), (3, 4)],
                byes: vec![],
                source: PairingSource::Arbiter {
                    note: "test".into(),
                },
            }),
            next_seed,
        });
        r.ok(Command::StartRound { round });
        r.finish(round, Score::Draw);
    };
    let mut r = Run::new(manual(BallotPer::Round), 4);
    for round in 1..=3 {
        play(&mut r, round);
        let openings: BTreeSet<u32> =
            r.t.round(round)
                .expect("paired")
                .games()
                .map(|g| g.opening.as_ref().expect("opening").number)
                .collect();
        assert_eq!(openings.len(), 1, "one opening a round for every board");
    }
    let mut r = Run::new(manual(BallotPer::Pairing), 4);
    let mut drawn = Vec::new();
    for round in 1..=80 {
        play(&mut r, round);
        drawn.extend(r.t.round(round).expect("paired").draws.iter().copied());
    }
    assert_eq!(drawn.len(), 160);
    let first: BTreeSet<u32> = drawn[..149].iter().copied().collect();
    assert_eq!(first.len(), 149, "the whole table before any repeat");
    assert!(!first.contains(&ballot::table("idf-64").expect("idf").left_out[0].0));
    let second: BTreeSet<u32> = drawn[149..].iter().copied().collect();
    assert_eq!(second.len(), 11, "a new cycle without repeats of its own");
    assert_eq!(r.replayed(), r.t);
}

/// T 6: an odd round-robin field gives the free round to the dummy's opponent (no game);
/// a Swiss's engine pairings are checked: repeats, a player twice, unknown numbers and a
/// second pairing-allocated bye are refused, nothing changed.
#[test]
fn t_6_byes_and_engine_pairings_are_checked() {
    let mut r = Run::new(config(System::RoundRobin, 0, None, 1), 5);
    r.pair(1);
    let round = r.t.round(1).expect("paired");
    assert_eq!(round.pairings.len(), 2);
    assert_eq!(round.byes.len(), 1);
    assert_eq!(round.byes[0].kind, ByeKind::FreeRound);

    let mut s = Run::new(config(System::Swiss, 5, None, 1), 5);
    s.ok(Command::NumberPlayers {
        hall: None,
        next_seed: seed(40),
    });
    // By rating: player 5 (2050) is number 1.
    assert_eq!(s.t.numbers().0, &[5, 4, 3, 2, 1]);
    let engine = |boards: Vec<(u32, u32)>, bye: u32| GivenPairings {
        boards,
        byes: vec![Bye {
            player: bye,
            kind: ByeKind::PairingAllocated,
        }],
        source: PairingSource::Engine {
            engine: "test".into(),
        },
    };
    let pair = |s: &mut Run, round, g: GivenPairings| {
        s.run(Command::PairRound {
            round,
            given: Some(g),
            next_seed: seed(41),
        })
    };
    pair(&mut s, 1, engine(vec![(5, 2), (4, 1)], 3)).expect("round 1");
    s.finish(1, Score::Draw);
    let before = s.t.clone();
    let bad = [
        (engine(vec![(2, 5), (4, 3)], 1), "already met in round 1"),
        (engine(vec![(5, 4), (2, 2)], 1), "appears twice"),
        (engine(vec![(5, 4), (2, 9)], 1), "no player 9"),
        (
            engine(vec![(5, 4), (2, 1)], 3),
            "had the pairing-allocated bye in round 1",
        ),
        (
            GivenPairings {
                byes: vec![],
                ..engine(vec![(5, 4), (2, 1)], 3)
            },
            "neither paired nor given a bye: Player 03",
        ),
    ];
    for (g, why) in bad {
        let e = pair(&mut s, 2, g).expect_err(why);
        assert_eq!(e.class, Class::InvalidArgument);
        assert!(e.message.contains(why), "{e} (wanted {why:?})");
        assert_eq!(s.t, before, "a refused pairing changed the state");
    }
    pair(&mut s, 2, engine(vec![(5, 4), (3, 1)], 2)).expect("a valid round 2");
    assert_eq!(s.replayed(), s.t);
}

/// T 6: a player withdrawn from a round-robin loses their later games by forfeit, which
/// are not played; a forfeit entered by the arbiter, and a double forfeit, are results.
#[test]
fn t_6_withdrawal_and_forfeits() {
    let mut r = Run::new(config(System::RoundRobin, 0, None, 1), 4);
    r.pair(1);
    r.ok(Command::StartRound { round: 1 });
    r.finish(1, Score::Draw);
    let gone = r.t.numbers().0[0];
    r.ok(Command::Withdraw {
        player: gone,
        reason: "ill".into(),
    });
    r.pair(2);
    let round = r.t.round(2).expect("paired");
    let g = round
        .games()
        .find(|g| g.white == gone || g.black == gone)
        .expect("their game");
    assert!(!g.played);
    let o = g.outcome.expect("decided");
    assert_eq!(o.kind, ResultKind::Forfeit);
    assert_eq!(
        o.score,
        if g.white == gone {
            Score::BlackWins
        } else {
            Score::WhiteWins
        }
    );
    // A no-show on the other board, then the opponent too: both lose.
    let other = round
        .games()
        .find(|g| g.played)
        .cloned()
        .expect("a game to play");
    r.ok(Command::RecordForfeit {
        round: 2,
        player: other.white,
    });
    r.ok(Command::RecordForfeit {
        round: 2,
        player: other.black,
    });
    let (_, slot) = r.t.game(&other.game_id).expect("slot");
    assert_eq!(slot.outcome.expect("both").score, Score::BothLose);
    assert!(r.t.round(2).expect("r2").finished());
    assert_eq!(r.replayed(), r.t);
}

/// Bad settings are refused with the field named: an odd micro-match, an unknown ballot
/// table (the known ones listed), a table of another variant, rounds for a round-robin.
#[test]
fn t_3_t_4_bad_settings_are_refused_with_the_field() {
    let cases = [
        (config(System::RoundRobin, 0, None, 3), "games_per_pairing"),
        (
            config(
                System::RoundRobin,
                0,
                Some(Ballot {
                    table: "fmjd-100".into(),
                    per: BallotPer::Pairing,
                }),
                1,
            ),
            "ballot_table: unknown ballot table \"fmjd-100\"; known: fmjd-64",
        ),
        (
            config(
                System::RoundRobin,
                0,
                Some(Ballot {
                    table: "acf-3move".into(),
                    per: BallotPer::Pairing,
                }),
                1,
            ),
            "acf-3move opens english games, the event plays russian",
        ),
        (
            config(
                System::RoundRobin,
                0,
                Some(Ballot {
                    table: "fmjd-64-brazilian".into(),
                    per: BallotPer::Pairing,
                }),
                1,
            ),
            "opens brazilian games",
        ),
        (config(System::RoundRobin, 7, None, 1), "rounds:"),
        (config(System::Swiss, 0, None, 1), "rounds:"),
    ];
    for (c, want) in cases {
        let e = Tournament::new()
            .handle(
                &Command::Create {
                    config: c,
                    seed: seed(1),
                },
                0,
            )
            .expect_err(want);
        assert_eq!(e.class, Class::InvalidArgument);
        assert!(e.message.contains(want), "{e} (wanted {want:?})");
    }
}

/// A command the fold can be given, chosen by the property test.
fn command_strategy() -> impl Strategy<Value = (u8, u32, u32, u8)> {
    (0u8..10, 0u32..8, 0u32..10, 0u8..4)
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 96, ..ProptestConfig::default() })]

    /// Any sequence of tournament commands folds to the same state as its log's replay,
    /// and every refused command changes nothing.
    #[test]
    fn any_commands_fold_as_their_log_replays(
        system in prop_oneof![Just(System::RoundRobin), Just(System::DoubleRoundRobin), Just(System::Swiss)],
        players in 0usize..9,
        micro in any::<bool>(),
        ballot in any::<bool>(),
        commands in prop::collection::vec(command_strategy(), 0..60),
    ) {
        let rounds = if system == System::Swiss { 5 } else { 0 };
        let ballot = ballot.then(|| Ballot { table: "fmjd-64".into(), per: BallotPer::Pairing });
        let mut r = Run::new(config(system, rounds, ballot, if micro { 2 } else { 1 }), players);
        for (kind, a, b, score) in commands {
            let score = [Score::WhiteWins, Score::BlackWins, Score::Draw, Score::BothLose][score as usize];
            let next_seed = r.next_seed();
            let c = match kind {
                0 => Command::AddPlayers { players: vec![entrant(&format!("New {a} {b}"), 1500 + a)] },
                1 => Command::Withdraw { player: a, reason: "test".into() },
                2 => {
                    // A Swiss round paired naively: the active players in number order.
                    let round = r.t.rounds().len() as u32 + 1;
                    let active: Vec<u32> = r.t.players().iter().filter(|p| r.t.active_in(p.id, round)).map(|p| p.id).collect();
                    let given = (system == System::Swiss).then(|| GivenPairings {
                        boards: active.chunks(2).filter(|c| c.len() == 2).map(|c| (c[0], c[1])).collect(),
                        byes: active.chunks(2).filter(|c| c.len() == 1).map(|c| Bye { player: c[0], kind: ByeKind::PairingAllocated }).collect(),
                        source: PairingSource::Engine { engine: "naive".into() },
                    });
                    Command::PairRound { round: if b == 0 { a } else { round }, given, next_seed }
                }
                3 => Command::StartRound { round: a },
                4 => Command::MarkAbsent { round: a, player: b },
                5 => Command::RecordForfeit { round: a, player: b },
                6 => {
                    let ids: Vec<String> = r.t.rounds().iter().flat_map(|r| r.games()).map(|g| g.game_id.clone()).collect();
                    let game_id = ids.get(b as usize).cloned().unwrap_or_else(|| "nope".into());
                    Command::GameFinished { game_id, outcome: Outcome { score, kind: ResultKind::Played }, rule: None, decided_at_ms: None }
                }
                // A default (T 5) taken from a game, then maybe annulled and replayed.
                7 => {
                    let ids: Vec<String> = r.t.rounds().iter().flat_map(|r| r.games()).map(|g| g.game_id.clone()).collect();
                    let game_id = ids.get(b as usize).cloned().unwrap_or_else(|| "nope".into());
                    Command::GameFinished { game_id, outcome: Outcome { score, kind: ResultKind::Default }, rule: Some("T 5".into()), decided_at_ms: Some(i64::from(a)) }
                }
                8 => {
                    let ids: Vec<String> = r.t.rounds().iter().flat_map(|r| r.games()).map(|g| g.game_id.clone()).collect();
                    let game_id = ids.get(b as usize).cloned().unwrap_or_else(|| "nope".into());
                    Command::AnnulDefault { game_id, reason: if a == 0 { String::new() } else { "late bus".into() } }
                }
                _ => Command::NumberPlayers { hall: None, next_seed },
            };
            let before = r.t.clone();
            if r.run(c).is_err() {
                prop_assert_eq!(&r.t, &before, "a refused command changed the state");
            }
        }
        prop_assert_eq!(r.replayed(), r.t.clone());
    }
}

/// T 5: a default taken from its game is annulled by the arbiter and the board plays
/// again under `ID-replay1` (then `-replay2`); only a default is annulled so, with a
/// reason. Viewers behind the games' delay see each result once it is public, a
/// correction included (the earlier result until then).
#[test]
fn t_5_a_default_is_annulled_and_replayed_and_results_show_behind_the_delay() {
    let mut r = Run::new(config(System::RoundRobin, 0, None, 1), 4);
    r.pair(1);
    r.ok(Command::StartRound { round: 1 });
    let ids: Vec<String> =
        r.t.round(1)
            .expect("r1")
            .games()
            .map(|g| g.game_id.clone())
            .collect();
    let default = |game_id: &str, at: i64| Command::GameFinished {
        game_id: game_id.into(),
        outcome: Outcome {
            score: Score::BlackWins,
            kind: ResultKind::Default,
        },
        rule: Some("T 5".into()),
        decided_at_ms: Some(at),
    };
    r.ok(default(&ids[0], 10_000));
    let e = r
        .run(Command::AnnulDefault {
            game_id: ids[0].clone(),
            reason: " ".into(),
        })
        .expect_err("no reason");
    assert_eq!(e.class, Class::InvalidArgument);
    r.ok(Command::GameFinished {
        game_id: ids[1].clone(),
        outcome: Outcome {
            score: Score::Draw,
            kind: ResultKind::Played,
        },
        rule: None,
        decided_at_ms: Some(20_000),
    });
    let e = r
        .run(Command::AnnulDefault {
            game_id: ids[1].clone(),
            reason: "late".into(),
        })
        .expect_err("a played game");
    assert_eq!(e.class, Class::FailedPrecondition);
    assert!(e.to_string().contains("T 5"), "{e}");
    r.ok(Command::AnnulDefault {
        game_id: ids[0].clone(),
        reason: "the bus was late".into(),
    });
    let replay = format!("{}-replay1", ids[0]);
    let (_, slot) = r.t.game(&replay).expect("the replay takes its place");
    assert_eq!(slot.outcome, None);
    assert_eq!(slot.replaced, vec![ids[0].clone()]);
    assert!(r.t.game(&ids[0]).is_none());
    assert_eq!(
        r.t.replacing(&ids[0]).map(|(n, g)| (n, g.game_id.clone())),
        Some((1, replay.clone()))
    );
    assert!(!r.t.round(1).expect("r1").finished(), "board 1 plays again");
    // Lost by default again, annulled again: numbered from the first game.
    r.ok(default(&replay, 30_000));
    r.ok(Command::AnnulDefault {
        game_id: replay.clone(),
        reason: "the hall's clock was wrong".into(),
    });
    assert!(r.t.game(&format!("{}-replay2", ids[0])).is_some());

    // Behind a 60 s delay: board 2's draw (decided at 20 s) is public from 80 s; an
    // arbiter's correction at 90 s shows from 150 s, the draw until then.
    let delay = 60_000;
    let seen = |t: &Tournament, now: i64| {
        t.as_seen(now, delay)
            .game(&ids[1])
            .and_then(|(_, g)| g.outcome.map(|o| o.score))
    };
    assert_eq!(seen(&r.t, 79_999), None);
    assert!(!r.t.as_seen(79_999, delay).round(1).expect("r1").finished());
    assert_eq!(seen(&r.t, 80_000), Some(Score::Draw));
    r.ok(Command::GameFinished {
        game_id: ids[1].clone(),
        outcome: Outcome {
            score: Score::WhiteWins,
            kind: ResultKind::Played,
        },
        rule: None,
        decided_at_ms: Some(90_000),
    });
    assert_eq!(seen(&r.t, 149_999), Some(Score::Draw));
    assert_eq!(seen(&r.t, 150_000), Some(Score::WhiteWins));
    assert_eq!(r.t.as_seen(0, 0), r.t, "no delay: as it is");
    assert_eq!(r.replayed(), r.t);
}
