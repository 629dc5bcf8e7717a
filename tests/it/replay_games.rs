//! Real tournament games (tests/data/games, see its README for their origin) replay
//! completely: through the rules core, and through the arbiter session as digital moves
//! with no spurious draw or result on the way.

use std::path::Path;

use draughts_arbiter::game::{Actor, Command, GameSettings, Now, Session};
use draughts_arbiter::notation::movetext::write_move_full;
use draughts_arbiter::notation::pdn::{PdnGame, PdnMove, read_games_bytes};
use draughts_arbiter::notation::replay::{
    Replay, ReplayFailure, ReplayNote, replay_game, replay_record, start_position,
};
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

/// Plays a game through a session as digital moves; returns the final FEN. A move the
/// replay noted as ambiguous is submitted as the move the replay took, full path.
fn through_session(game: &PdnGame, replay: &Replay, variant: Variant, label: &str) -> String {
    let start = start_position(game, variant).expect("start");
    let fen = write_fen(&start);
    let mut settings = GameSettings::new(variant);
    settings.time_control = Some("90m+30s".parse().expect("tc"));
    let (mut s, _) =
        Session::create(settings, Some(&fen), Actor::System, Now::from_mono(0)).expect("create");
    s.handle(&Actor::System, Command::Start, Now::from_mono(0))
        .expect("start");
    let plies = replay.game.moves().len();
    for (i, m) in game.moves.iter().take(plies).enumerate() {
        let now = Now::from_mono(1_000 * (i as u64 + 1));
        assert!(
            s.tick(now).is_empty(),
            "{label}: clock event at ply {}",
            i + 1
        );
        let side = s.position().turn();
        let notation = replay
            .notes
            .iter()
            .find_map(|n| match n {
                ReplayNote::Ambiguous { ply, chosen, .. } if *ply == i + 1 => Some(chosen.clone()),
                _ => None,
            })
            .unwrap_or_else(|| m.text.clone());
        s.handle(
            &Actor::Player(side),
            Command::SubmitMove {
                side,
                notation: notation.clone(),
                offer_draw: false,
            },
            now,
        )
        .unwrap_or_else(|e| panic!("{label}: ply {} '{notation}' refused: {e}", i + 1));
        if i + 1 < plies {
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

/// Replays a file; `noted` lists (game number, the replay's notes as displayed): every
/// other game must replay without a note.
fn check(file: &str, variant: Variant, expected_games: usize, noted: &[(usize, &str)]) {
    let all = games(file);
    assert_eq!(all.len(), expected_games, "{file}: game count");
    for (i, game) in all.iter().enumerate() {
        let n = i + 1;
        let label = format!("{file} game {n}");
        let replay = replay_record(game, Some(variant)).unwrap_or_else(|e| panic!("{label}: {e}"));
        let notes: Vec<String> = replay.notes.iter().map(ToString::to_string).collect();
        let expected: Vec<String> = noted
            .iter()
            .filter(|(b, _)| *b == n)
            .map(|(_, note)| note.to_string())
            .collect();
        assert_eq!(notes, expected, "{label}: notes");
        let fen = through_session(game, &replay, variant, &label);
        assert_eq!(
            fen,
            write_fen(replay.game.position()),
            "{label}: session and rules disagree"
        );
    }
}

#[test]
fn russian_abatsiev_games_replay() {
    check(
        "abatsiev.pdn",
        Variant::Russian,
        56,
        &[(36, "no moves recorded (50 placeholder moves '-')")],
    );
    // Abatsiev-Lebedev 1973 records only the result: every move is '-'. The game has no
    // moves recorded; it is not an illegal move '-'.
    let game36 = &games("abatsiev.pdn")[35];
    let replay = replay_record(game36, Some(Variant::Russian)).expect("no moves recorded");
    assert!(replay.game.moves().is_empty());
    assert_eq!(
        replay.notes,
        [ReplayNote::NoMovesRecorded { placeholders: 50 }]
    );
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
    // Stira-Maijnelli: the last move '3x26' fits both 3x10x17x26 and 3x10x19x26 (equal
    // under the Italian precedence rules) and no later move tells them apart: accepted,
    // noted, the first in PDN order taken.
    check(
        "Campionato_Assoluto_2005.pdn",
        Variant::Italian,
        53,
        &[(
            46,
            "ply 26 '3x26' fits 3x10x17x26, 3x10x19x26; took 3x10x17x26 (the first in PDN \
             order; no later move decides)",
        )],
    );
}

#[test]
fn italian_campionato_2005_game_46_from_the_shared_reference() {
    // The same file as the project's reference data has it.
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../shared/reference/games/Campionato_Assoluto_2005.pdn");
    let bytes = std::fs::read(&path).expect("shared reference file");
    let games = read_games_bytes(&bytes);
    let game = games[45].as_ref().expect("game 46 reads");
    assert_eq!(game.tag("Bianco"), Some("STIRA Leonardo"));
    let replay = replay_record(game, Some(Variant::Italian)).expect("game 46 replays");
    assert_eq!(replay.game.moves().len(), 26);
    let [
        ReplayNote::Ambiguous {
            ply,
            text,
            candidates,
            chosen,
            decided_by_later_moves,
            ..
        },
    ] = replay.notes.as_slice()
    else {
        panic!("one ambiguity note expected: {:?}", replay.notes);
    };
    assert_eq!((*ply, text.as_str()), (26, "3x26"));
    assert_eq!(candidates, &["3x10x17x26", "3x10x19x26"]);
    assert_eq!(chosen, "3x10x17x26");
    assert!(!decided_by_later_moves);
}

#[test]
fn an_ambiguous_move_is_decided_by_a_later_move() {
    // Game 46 again, with one more move: a White move that only one of the two readings
    // of '3x26' allows (a man the other reading captured). The replay takes that reading
    // and says the later moves decided.
    let game = games("Campionato_Assoluto_2005.pdn").remove(45);
    let before = replay_record(
        &PdnGame {
            moves: game.moves[..25].to_vec(),
            ..game.clone()
        },
        Some(Variant::Italian),
    )
    .expect("the first 25 plies replay")
    .game;
    let mut readings: Vec<_> = before
        .legal_moves()
        .into_iter()
        .filter(|m| write_move_full(before.position(), m).starts_with("3x10x"))
        .collect();
    readings.sort_by_key(|m| write_move_full(before.position(), m));
    assert_eq!(readings.len(), 2, "the two readings of 3x26");
    let after: Vec<_> = readings
        .iter()
        .map(|m| before.position().play(m).expect("legal"))
        .collect();
    // A White move legal after the second reading (3x10x19x26) and not after the first.
    let texts = |p: &draughts_arbiter::rules::Position| -> Vec<String> {
        p.legal_moves()
            .iter()
            .map(|m| write_move_full(p, m))
            .collect()
    };
    let only_second = texts(&after[1])
        .into_iter()
        .find(|t| !texts(&after[0]).contains(t))
        .expect("a move only the second reading allows");
    let mut longer = game.clone();
    longer.moves.push(PdnMove::new(&only_second));
    let replay = replay_record(&longer, Some(Variant::Italian)).expect("replays");
    assert_eq!(replay.game.moves().len(), 27);
    let [
        ReplayNote::Ambiguous {
            ply,
            chosen,
            decided_by_later_moves,
            ..
        },
    ] = replay.notes.as_slice()
    else {
        panic!("one ambiguity note expected: {:?}", replay.notes);
    };
    assert_eq!(*ply, 26);
    assert_eq!(chosen, "3x10x19x26");
    assert!(decided_by_later_moves);
    // A later move neither reading allows fails at its own ply.
    let mut broken = game.clone();
    broken.moves.push(PdnMove::new("1-5"));
    let e = replay_record(&broken, Some(Variant::Italian)).expect_err("1-5 is no move");
    assert!(matches!(e, ReplayFailure::Illegal { ply: 27, .. }), "{e:?}");
}
