//! Real tournament games (tests/data/games, see its README for their origin) replay
//! completely: through the rules core, and through the arbiter session as digital moves
//! with no spurious draw or result on the way.

use std::path::Path;

use draughts_arbiter::game::{Actor, Command, GameSettings, Now, Session};
use draughts_arbiter::notation::pdn::{PdnGame, read_games_bytes};
use draughts_arbiter::notation::replay::{ReplayFailure, replay_game, start_position};
use draughts_arbiter::notation::write_fen;
use draughts_arbiter::rules::Variant;

fn games(file: &str) -> Vec<PdnGame> {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data/games")
        .join(file);
    let bytes = std::fs::read(&path).expect("game file");
    read_games_bytes(&bytes)
        .into_iter()
        .enumerate()
        .map(|(i, g)| g.unwrap_or_else(|e| panic!("{file} game {}: {e}", i + 1)))
        .collect()
}

/// Plays a game through a session as digital moves; returns the final FEN.
fn through_session(game: &PdnGame, variant: Variant, label: &str) -> String {
    let start = start_position(game, variant).expect("start");
    let fen = write_fen(&start);
    let mut settings = GameSettings::new(variant);
    settings.time_control = Some("90m+30s".parse().expect("tc"));
    let (mut s, _) =
        Session::create(settings, Some(&fen), Actor::System, Now::from_mono(0)).expect("create");
    s.handle(&Actor::System, Command::Start, Now::from_mono(0))
        .expect("start");
    for (i, m) in game.moves.iter().enumerate() {
        let now = Now::from_mono(1_000 * (i as u64 + 1));
        assert!(
            s.tick(now).is_empty(),
            "{label}: clock event at ply {}",
            i + 1
        );
        let side = s.position().turn();
        s.handle(
            &Actor::Player(side),
            Command::SubmitMove {
                side,
                notation: m.text.clone(),
                offer_draw: false,
            },
            now,
        )
        .unwrap_or_else(|e| panic!("{label}: ply {} '{}' refused: {e}", i + 1, m.text));
        if i + 1 < game.moves.len() {
            assert!(
                s.result().is_none(),
                "{label}: spurious result {:?} at ply {}",
                s.result(),
                i + 1
            );
        }
    }
    write_fen(s.position())
}

/// Replays a file; `known_bad` lists (game number, why the file is wrong).
fn check(file: &str, variant: Variant, expected_games: usize, known_bad: &[(usize, &str)]) {
    let all = games(file);
    assert_eq!(all.len(), expected_games, "{file}: game count");
    for (i, game) in all.iter().enumerate() {
        let n = i + 1;
        let label = format!("{file} game {n}");
        match replay_game(game, Some(variant)) {
            Ok(g) => {
                assert!(
                    known_bad.iter().all(|(b, _)| *b != n),
                    "{label} was expected to fail"
                );
                let fen = through_session(game, variant, &label);
                assert_eq!(
                    fen,
                    write_fen(g.position()),
                    "{label}: session and rules disagree"
                );
            }
            Err(e) => {
                let why = known_bad
                    .iter()
                    .find(|(b, _)| *b == n)
                    .unwrap_or_else(|| panic!("{label}: {e}"));
                eprintln!("{label}: {e} — {}", why.1);
            }
        }
    }
}

#[test]
fn russian_abatsiev_games_replay() {
    check(
        "abatsiev.pdn",
        Variant::Russian,
        56,
        &[(
            36,
            "Abatsiev-Lebedev 1973 records only the result: every move is '-'",
        )],
    );
    let game36 = &games("abatsiev.pdn")[35];
    assert!(matches!(
        replay_game(game36, Some(Variant::Russian)),
        Err(ReplayFailure::Illegal { ply: 1, .. })
    ));
}

#[test]
fn international_nk2003_games_replay() {
    // GameType 20 in every game: no override needed.
    for g in games("nk2003-amsterdam.pdn") {
        replay_game(&g, None).expect("GameType 20 picks International");
    }
    check("nk2003-amsterdam.pdn", Variant::International, 33, &[]);
}

#[test]
fn english_oca_games_replay() {
    check("OCA_2.0.pdn", Variant::English, 43, &[]);
}

#[test]
fn italian_campionato_2005_games_replay() {
    check(
        "Campionato_Assoluto_2005.pdn",
        Variant::Italian,
        53,
        &[(
            46,
            "Stira-Maijnelli, last move '3x26' fits both 3x10x19x26 and 3x10x17x26 (equal \
             under the Italian precedence rules) and no later move tells them apart",
        )],
    );
}
