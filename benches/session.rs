//! The judge's hot path: one `Session::handled` of a `SubmitMove`, early in a game (ply
//! 10) and late (ply 300). The cost of a command should not depend on how long the game
//! has been going: the two figures should be within 10 % of each other.
//! Run with `cargo bench --bench session`.
//!
//! The game is Russian, timed (`90m+30s`, so the clock's per-move lists grow too), with
//! move-count draws referred to the arbiter and repetition by claim only, so it does not
//! end on its own: a seeded generator picks the moves, preferring moves that offer the
//! opponent no capture and never one that ends the game.

use std::hint::black_box;

use criterion::{Criterion, criterion_group, criterion_main};
use draughts_arbiter::game::{
    Actor, Command, GameSettings, MoveCountDraws, Now, RepetitionMode, Session,
};
use draughts_arbiter::notation::movetext::write_move_full;
use draughts_arbiter::rules::Variant;

/// A small deterministic generator (Knuth's MMIX LCG).
struct Lcg(u64);

impl Lcg {
    fn pick(&mut self, n: usize) -> usize {
        self.0 = self
            .0
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        ((self.0 >> 33) as usize) % n
    }
}

/// A running game after `plies` moves, and the text of a move that does not end it.
fn game_at(plies: usize) -> (Session, String, u64) {
    for seed in 1..200u64 {
        if let Some(found) = try_game(seed, plies) {
            return found;
        }
    }
    panic!("no seed reaches ply {plies} without the game ending");
}

fn try_game(seed: u64, plies: usize) -> Option<(Session, String, u64)> {
    let mut settings = GameSettings::new(Variant::Russian);
    settings.time_control = Some("90m+30s".parse().expect("valid control"));
    settings.move_count_draws = MoveCountDraws::Referred;
    let arbiter = Actor::Arbiter("a".into());
    let (mut s, _) =
        Session::create(settings, None, arbiter.clone(), Now::from_mono(0)).expect("created");
    s.handle(&arbiter, Command::Start, Now::from_mono(0))
        .expect("started");
    let mut rng = Lcg(seed);
    let mut t = 0;
    for ply in 0..=plies {
        t += 1_000;
        let pos = *s.position();
        let moves = pos.legal_moves();
        // Prefer a move that leaves the opponent nothing to capture, and always one after
        // which the game goes on, so that the game lasts.
        let mut order: Vec<usize> = (0..moves.len()).collect();
        let start = rng.pick(order.len().max(1));
        order.rotate_left(start);
        order.sort_by_key(|&i| pos.play(&moves[i]).is_ok_and(|after| after.has_capture()));
        let mut next = None;
        for i in order {
            let text = write_move_full(&pos, &moves[i]);
            let cmd = Command::SubmitMove {
                side: pos.turn(),
                notation: text.clone(),
                offer_draw: false,
            };
            let d = s
                .handled(&Actor::Player(pos.turn()), cmd, Now::from_mono(t))
                .ok()?;
            if d.session.result().is_none() {
                next = Some((d.session, text));
                break;
            }
        }
        let (after, text) = next?;
        if ply == plies {
            return Some((s, text, t));
        }
        s = after;
    }
    None
}

fn submit_move(c: &mut Criterion) {
    for plies in [10, 300] {
        let (s, text, t) = game_at(plies);
        assert_eq!(s.game().moves().len(), plies);
        let side = s.position().turn();
        let actor = Actor::Player(side);
        c.bench_function(&format!("handled SubmitMove at ply {plies}"), |b| {
            b.iter(|| {
                let cmd = Command::SubmitMove {
                    side,
                    notation: text.clone(),
                    offer_draw: false,
                };
                black_box(
                    s.handled(&actor, cmd, Now::from_mono(black_box(t)))
                        .expect("a legal move"),
                )
            });
        });
    }
}

/// The benchmark service's game (`bench` subcommand): two kings a side shuffling, so the
/// reversible stretch that repetition looks through is the whole game. At ply 200, the
/// judge's part of a move and what the hub does with it besides (the summary row in
/// JSON, the events in JSON).
fn king_shuffle(c: &mut Criterion) {
    let mut settings = GameSettings::new(Variant::Russian);
    settings.time_control = Some("90m+30s".parse().expect("valid control"));
    settings.move_count_draws = MoveCountDraws::Referred;
    settings.repetition = RepetitionMode::Claim;
    let arbiter = Actor::Arbiter("a".into());
    let (mut s, _) = Session::create(
        settings,
        Some("W:WK29,K32:BK1,K4"),
        arbiter.clone(),
        Now::from_mono(0),
    )
    .expect("created");
    s.handle(&arbiter, Command::Start, Now::from_mono(0))
        .expect("started");
    let cycle = ["g1-f2", "b8-a7", "f2-g1", "a7-b8"];
    let mut t = 0;
    for ply in 0..200 {
        t += 1_000;
        let cmd = Command::SubmitMove {
            side: s.position().turn(),
            notation: cycle[ply % 4].into(),
            offer_draw: false,
        };
        let actor = Actor::Player(s.position().turn());
        s = s
            .handled(&actor, cmd, Now::from_mono(t))
            .expect("a legal move")
            .session;
    }
    let side = s.position().turn();
    let actor = Actor::Player(side);
    t += 1_000;
    c.bench_function("handled SubmitMove, king shuffle at ply 200", |b| {
        b.iter(|| {
            let cmd = Command::SubmitMove {
                side,
                notation: cycle[0].into(),
                offer_draw: false,
            };
            black_box(
                s.handled(&actor, cmd, Now::from_mono(black_box(t)))
                    .expect("a legal move"),
            )
        });
    });
    let cmd = Command::SubmitMove {
        side,
        notation: cycle[0].into(),
        offer_draw: false,
    };
    let decided = s.handled(&actor, cmd, Now::from_mono(t)).expect("legal");
    c.bench_function("summary row JSON, king shuffle at ply 200", |b| {
        b.iter(|| {
            let summary = decided.session.summarize(black_box(t));
            black_box(serde_json::to_string(&summary).expect("serializes"))
        });
    });
    c.bench_function("events JSON of one move", |b| {
        b.iter(|| {
            for e in &decided.events {
                black_box(serde_json::to_vec(e).expect("serializes"));
            }
        });
    });
}

criterion_group!(benches, submit_move, king_shuffle);
criterion_main!(benches);
