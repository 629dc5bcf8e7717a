//! PDN for relays, proven on real games (issue #14 item 2): every game of every file in
//! `../shared/reference/games/` is read and replayed with the library functions behind
//! `draughts-arbiter replay`, then played again through a real gRPC server on
//! 127.0.0.1:0 (memory store): created with the file's tags and a 600+5 clock, every
//! move sent with GameService.SubmitMove for the side on move, and ended with the
//! recorded result (a resignation, a draw offered with the last move and accepted, the
//! arbiter's DeclareResult where no move was recorded, or the game's own end). Then
//! BroadcastService.ExportPdn, read back with the project's own reader: the same moves,
//! the same result in the variant's form, a clock comment after every move giving both
//! clocks as GetGame has them (to the second) with the right clock marked running, and
//! the tags.

use crate::common::server::TestServer;

use std::path::{Path, PathBuf};

use std::time::Instant;

use draughts_arbiter::api::pb;
use draughts_arbiter::api::pb::arbiter_service_client::ArbiterServiceClient;
use draughts_arbiter::api::pb::broadcast_service_client::BroadcastServiceClient;
use draughts_arbiter::api::pb::game_service_client::GameServiceClient;
use draughts_arbiter::notation::clock_comment::line_clocks;
use draughts_arbiter::notation::pdn::{
    PdnGame, PdnResult, ResultForm, read_games, read_games_bytes,
};
use draughts_arbiter::notation::replay::{Replay, ReplayNote, replay_record, start_position};
use draughts_arbiter::notation::{write_fen, write_move_full};
use draughts_arbiter::rules::{Color, Game, Variant};

fn pb_side(c: Color) -> i32 {
    match c {
        Color::White => pb::Side::White as i32,
        Color::Black => pb::Side::Black as i32,
    }
}

fn pb_variant(v: Variant) -> i32 {
    pb::Variant::from_str_name(&format!("VARIANT_{}", v.name().to_ascii_uppercase()))
        .expect("pb variant") as i32
}

/// A file of the shared reference, its variant (the files without a GameType tag need
/// it named, as `replay --variant`) and what the test expects of it.
struct File {
    name: &'static str,
    variant: Variant,
    games: usize,
    /// Games the reader or the replay cannot handle (skipped, with the reason printed).
    skipped: usize,
    /// Games that record only placeholder moves (`1. - - 2. - -`).
    no_moves: usize,
    /// How the export writes results: FMJD's points for International.
    form: ResultForm,
}

const FILES: [File; 4] = [
    File {
        name: "Campionato_Assoluto_2005.pdn",
        variant: Variant::Italian,
        form: ResultForm::Default,
        games: 53,
        skipped: 0,
        no_moves: 0,
    },
    File {
        name: "OCA_2.0.pdn",
        variant: Variant::English,
        form: ResultForm::Default,
        games: 43,
        skipped: 0,
        no_moves: 0,
    },
    File {
        name: "abatsiev.pdn",
        variant: Variant::Russian,
        form: ResultForm::Default,
        games: 56,
        skipped: 0,
        no_moves: 1,
    },
    File {
        name: "nk2003-amsterdam.pdn",
        variant: Variant::International,
        form: ResultForm::International,
        games: 33,
        skipped: 0,
        no_moves: 0,
    },
];

fn reference_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/reference/games")
}

/// The first of these tags that the game has (Italian files write `Bianco`, `Nero`,
/// `Dati`, `Risultato`).
fn tag<'a>(g: &'a PdnGame, names: &[&str]) -> &'a str {
    names.iter().find_map(|n| g.tag(n)).unwrap_or("").trim()
}

/// The recorded result: the termination marker, else the Result tag.
fn recorded_result(g: &PdnGame) -> Option<PdnResult> {
    g.result.or_else(|| {
        ["Result", "Risultato"]
            .iter()
            .find_map(|n| PdnResult::from_token(g.tag(n)?.trim()))
    })
}

/// The moves of a replayed game, each written with its full path: the same for every
/// way of writing the same move.
fn normalized(g: &Game) -> Vec<String> {
    g.positions()
        .iter()
        .zip(g.moves().iter())
        .map(|(p, m)| write_move_full(p, m))
        .collect()
}

/// The value the export writes for a tag the judge may not know.
fn known(v: &str) -> &str {
    if v.is_empty() { "?" } else { v }
}

#[derive(Default)]
struct Totals {
    games: usize,
    skipped: usize,
    no_moves: usize,
    moves: usize,
    /// How the games ended on the server: by their own last move, a resignation, a
    /// draw agreed, the arbiter's declaration, or not at all (result `*`).
    ended_itself: usize,
    resigned: usize,
    agreed: usize,
    declared: usize,
    unfinished: usize,
}

/// Plays one recorded game through the service, exports it and checks the export.
async fn relay(
    s: &TestServer,
    file: &File,
    n: usize,
    game: &PdnGame,
    replay: &Replay,
    totals: &mut Totals,
) {
    let label = format!("{} game {n}", file.name);
    let v = file.variant;
    let mut games = GameServiceClient::new(s.channel.clone());
    let start = start_position(game, v).expect("start");
    let start_fen = if game.fen().is_some() {
        write_fen(&start)
    } else {
        String::new()
    };
    let (event, round) = (tag(game, &["Event", "Dati"]), tag(game, &["Round"]));
    let (white, black) = (
        tag(game, &["White", "Bianco"]),
        tag(game, &["Black", "Nero"]),
    );
    let id = format!("{}-{n}", file.name.trim_end_matches(".pdn"));
    let board = u32::try_from(n).expect("board");
    games
        .create_game(pb::CreateGameRequest {
            game_id: id.clone(),
            variant: pb_variant(v),
            time_control: "600+5".into(),
            white: Some(pb::Player {
                name: white.into(),
                ..Default::default()
            }),
            black: Some(pb::Player {
                name: black.into(),
                ..Default::default()
            }),
            event: event.into(),
            round: round.into(),
            board,
            start_fen,
            ..Default::default()
        })
        .await
        .unwrap_or_else(|e| panic!("{label}: create: {e}"));
    games
        .start_game(pb::StartGameRequest {
            game_id: id.clone(),
            expected_seq: 0,
        })
        .await
        .unwrap_or_else(|e| panic!("{label}: start: {e}"));

    let expected = recorded_result(game).unwrap_or(PdnResult::Unknown);
    let plies = replay.game.moves().len();
    let mut position = start;
    let mut last = None;
    for (i, (m, mv)) in game
        .moves
        .iter()
        .zip(replay.game.moves().iter())
        .enumerate()
    {
        let ply = i + 1;
        // A move the replay found ambiguous goes as the reading it took, full path.
        let text = replay
            .notes
            .iter()
            .find_map(|note| match note {
                ReplayNote::Ambiguous { ply: p, chosen, .. } if *p == ply => Some(chosen.clone()),
                _ => None,
            })
            .unwrap_or_else(|| m.text.clone());
        let side = position.turn();
        let g = games
            .submit_move(pb::SubmitMoveRequest {
                game_id: id.clone(),
                r#move: text.clone(),
                expected_seq: 0,
                side: pb_side(side),
                // A recorded draw: offered with the last move, accepted below.
                offer_draw: ply == plies && expected == PdnResult::Draw,
            })
            .await
            .unwrap_or_else(|e| panic!("{label}: ply {ply} {text}: {e}"))
            .into_inner()
            .game
            .expect("game");
        position = position.play(mv).expect("the replay played it");
        if ply < plies {
            assert_eq!(
                g.result,
                pb::GameResult::Unspecified as i32,
                "{label}: a result at ply {ply}"
            );
        }
        last = Some(g);
    }
    let ended_itself = last
        .as_ref()
        .is_some_and(|g| g.result != pb::GameResult::Unspecified as i32);
    if ended_itself {
        totals.ended_itself += 1;
    } else {
        let mut arbiter = ArbiterServiceClient::new(s.channel.clone());
        let declare = |result: pb::GameResult| pb::DeclareResultRequest {
            game_id: id.clone(),
            result: result as i32,
            reason: pb::ResultReason::ArbiterDecision as i32,
            rule: String::new(),
            explanation: "the result the record gives; no move recorded".into(),
        };
        match expected {
            PdnResult::WhiteWins | PdnResult::BlackWins => {
                let loser = if expected == PdnResult::WhiteWins {
                    Color::Black
                } else {
                    Color::White
                };
                games
                    .resign(pb::ResignRequest {
                        game_id: id.clone(),
                        side: pb_side(loser),
                        expected_seq: 0,
                    })
                    .await
                    .unwrap_or_else(|e| panic!("{label}: resign: {e}"));
                totals.resigned += 1;
            }
            PdnResult::Draw if plies > 0 => {
                games
                    .respond_to_draw_offer(pb::RespondToDrawOfferRequest {
                        game_id: id.clone(),
                        side: pb_side(position.turn()),
                        response: pb::DrawResponse::Accept as i32,
                        expected_seq: 0,
                    })
                    .await
                    .unwrap_or_else(|e| panic!("{label}: accept the draw: {e}"));
                totals.agreed += 1;
            }
            PdnResult::Draw => {
                arbiter
                    .declare_result(declare(pb::GameResult::Draw))
                    .await
                    .unwrap_or_else(|e| panic!("{label}: declare a draw: {e}"));
                totals.declared += 1;
            }
            PdnResult::DoubleForfeit => {
                arbiter
                    .declare_result(declare(pb::GameResult::BothLose))
                    .await
                    .unwrap_or_else(|e| panic!("{label}: declare 0-0: {e}"));
                totals.declared += 1;
            }
            PdnResult::Unknown => totals.unfinished += 1,
        }
    }
    let official = games
        .get_game(pb::GetGameRequest {
            game_id: id.clone(),
        })
        .await
        .expect("get")
        .into_inner();
    assert_eq!(official.moves.len(), plies, "{label}: moves on the server");

    let pdn = BroadcastServiceClient::new(s.channel.clone())
        .export_pdn(pb::ExportPdnRequest {
            game_id: id.clone(),
            ..Default::default()
        })
        .await
        .unwrap_or_else(|e| panic!("{label}: export: {e}"))
        .into_inner()
        .pdn;
    let records = read_games(&pdn);
    assert_eq!(records.len(), 1, "{label}: one record:\n{pdn}");
    let record = records[0]
        .as_ref()
        .unwrap_or_else(|e| panic!("{label}: the export does not read: {e}\n{pdn}"));

    // The same moves.
    let forced = record.game_type().is_none().then_some(v);
    let back = replay_record(record, forced)
        .unwrap_or_else(|e| panic!("{label}: the export does not replay: {e}\n{pdn}"));
    assert!(
        back.notes.is_empty(),
        "{label}: the export needs reading: {:?}",
        back.notes
    );
    assert_eq!(
        normalized(&back.game),
        normalized(&replay.game),
        "{label}: moves\n{pdn}"
    );
    assert_eq!(record.moves.len(), plies, "{label}\n{pdn}");

    // The same result, in the variant's form, at the end and in the tag.
    let token = expected.token(file.form);
    assert_eq!(record.result, Some(expected), "{label}: result\n{pdn}");
    assert_eq!(record.result_text.as_deref(), Some(token), "{label}\n{pdn}");
    assert_eq!(record.tag("Result"), Some(token), "{label}\n{pdn}");

    // A clock comment after every move: both clocks, the next mover's running, the
    // values GetGame gives rounded to the second.
    let first = start_position(record, v).expect("start").turn();
    for (i, clock) in line_clocks(&record.moves, first).into_iter().enumerate() {
        let ply = i + 1;
        let clock = clock
            .unwrap_or_else(|e| panic!("{label}: ply {ply}: {e}\n{pdn}"))
            .unwrap_or_else(|| panic!("{label}: ply {ply} has no clock comment\n{pdn}"));
        let played = &official.moves[i];
        let mover = if played.side == pb::Side::White as i32 {
            Color::White
        } else {
            Color::Black
        };
        assert_eq!(clock.running, Some(!mover), "{label}: ply {ply}\n{pdn}");
        let second = |ms: i64| Some((u64::try_from(ms).expect("timed") + 500) / 1000 * 1000);
        assert_eq!(
            (clock.white_ms, clock.black_ms),
            (second(played.white_clock_ms), second(played.black_clock_ms)),
            "{label}: ply {ply} clocks\n{pdn}"
        );
    }

    // The tags.
    for (name, value) in [
        ("Event", known(event)),
        ("Round", known(round)),
        ("White", known(white)),
        ("Black", known(black)),
        ("Board", &board.to_string()),
        ("TimeControl", "600+5"),
    ] {
        assert_eq!(record.tag(name), Some(value), "{label}: tag {name}\n{pdn}");
    }
    assert_eq!(
        record.game_type(),
        v.game_type(),
        "{label}: GameType\n{pdn}"
    );
    assert_eq!(record.fen().is_some(), game.fen().is_some(), "{label}: FEN");
    totals.games += 1;
    totals.moves += plies;
}

/// Every game of every reference file through the service and back.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_reference_game_exports_and_reads_back_to_the_same_game() {
    let began = Instant::now();
    let s = TestServer::start_memory("").await;
    let mut names: Vec<String> = std::fs::read_dir(reference_dir())
        .expect("the shared reference games")
        .map(|e| e.expect("entry").file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".pdn"))
        .collect();
    names.sort();
    assert_eq!(
        names,
        FILES.iter().map(|f| f.name).collect::<Vec<_>>(),
        "a reference file this test does not know"
    );
    let mut totals = Totals::default();
    for file in &FILES {
        let bytes = std::fs::read(reference_dir().join(file.name)).expect("file");
        let all = read_games_bytes(&bytes);
        assert_eq!(all.len(), file.games, "{}: games", file.name);
        let (mut skipped, mut no_moves) = (0, 0);
        for (i, read) in all.iter().enumerate() {
            let n = i + 1;
            let game = match read {
                Ok(g) => g,
                Err(e) => {
                    println!("{} game {n}: skipped, unreadable: {e}", file.name);
                    skipped += 1;
                    continue;
                }
            };
            let replay = match replay_record(game, Some(file.variant)) {
                Ok(r) => r,
                Err(e) => {
                    println!("{} game {n}: skipped, does not replay: {e}", file.name);
                    skipped += 1;
                    continue;
                }
            };
            if replay
                .notes
                .iter()
                .any(|n| matches!(n, ReplayNote::NoMovesRecorded { .. }))
            {
                println!(
                    "{} game {n}: no moves recorded; relayed as a game with none",
                    file.name
                );
                no_moves += 1;
            }
            relay(&s, file, n, game, &replay, &mut totals).await;
        }
        assert_eq!(skipped, file.skipped, "{}: games skipped", file.name);
        assert_eq!(
            no_moves, file.no_moves,
            "{}: games with no moves",
            file.name
        );
        totals.skipped += skipped;
        totals.no_moves += no_moves;
    }
    let expected: usize = FILES.iter().map(|f| f.games - f.skipped).sum();
    assert_eq!(totals.games, expected);
    let t = &totals;
    assert_eq!(
        t.ended_itself + t.resigned + t.agreed + t.declared + t.unfinished,
        t.games
    );
    println!(
        "pdn_relay: {} files, {} games relayed ({} with no moves recorded), {} skipped, \
         {} moves, {:.1} s; ended by the last move {}, resigned {}, draw agreed {}, \
         declared {}, unfinished {}",
        FILES.len(),
        t.games,
        t.no_moves,
        t.skipped,
        t.moves,
        began.elapsed().as_secs_f64(),
        t.ended_itself,
        t.resigned,
        t.agreed,
        t.declared,
        t.unfinished
    );
}

/// A player's FMJD id and rating are the PDN 3.0 player tags; an International result
/// is written in FMJD's points, an English one in the default form.
#[tokio::test]
async fn player_ids_ratings_and_result_forms() {
    let s = TestServer::start_memory("").await;
    let mut games = GameServiceClient::new(s.channel.clone());
    for (id, v, first, resigns, token) in [
        (
            "int",
            Variant::International,
            "32-28",
            pb::Side::White,
            "0-2",
        ),
        ("eng", Variant::English, "11-15", pb::Side::Black, "1-0"),
    ] {
        games
            .create_game(pb::CreateGameRequest {
                game_id: id.into(),
                variant: pb_variant(v),
                white: Some(pb::Player {
                    name: "Wit".into(),
                    fmjd_id: "16291".into(),
                    federation: "NED".into(),
                    rating: 2412,
                    ..pb::Player::default()
                }),
                black: Some(pb::Player {
                    name: "Zwart".into(),
                    ..Default::default()
                }),
                ..Default::default()
            })
            .await
            .expect("create");
        games
            .start_game(pb::StartGameRequest {
                game_id: id.into(),
                expected_seq: 0,
            })
            .await
            .expect("start");
        let mover = if first == "32-28" {
            pb::Side::White
        } else {
            pb::Side::Black
        };
        games
            .submit_move(pb::SubmitMoveRequest {
                game_id: id.into(),
                r#move: first.into(),
                side: mover as i32,
                ..Default::default()
            })
            .await
            .expect("move");
        games
            .resign(pb::ResignRequest {
                game_id: id.into(),
                side: resigns as i32,
                expected_seq: 0,
            })
            .await
            .expect("resign");
        let pdn = BroadcastServiceClient::new(s.channel.clone())
            .export_pdn(pb::ExportPdnRequest {
                game_id: id.into(),
                ..Default::default()
            })
            .await
            .expect("export")
            .into_inner()
            .pdn;
        let records = read_games(&pdn);
        let g = records[0].as_ref().expect("reads");
        assert_eq!(g.tag("WhiteFmjdId"), Some("16291"), "{pdn}");
        assert_eq!(g.tag("WhiteRating"), Some("2412"), "{pdn}");
        assert_eq!(g.tag("BlackFmjdId"), None, "{pdn}");
        assert_eq!(g.tag("BlackRating"), None, "{pdn}");
        assert!(!pdn.contains("NED"), "no federation tag exists:\n{pdn}");
        assert_eq!(g.tag("Result"), Some(token), "{pdn}");
        assert!(pdn.ends_with(&format!(" {token}\n")), "{pdn}");
        assert_eq!(g.tag("TimeControl"), Some("-"), "{pdn}");
        assert!(g.moves[0].comments.iter().all(|c| !c.contains("%clock")));
    }
}
