//! Hostile and broken input over the real server (issue 13), table-driven: each case is
//! sent as an attacker would, and must get its exact code, a bounded message that names
//! the field, and change nothing (GetGame and the whole log before and after). Then the
//! cases that need a game's state: enums out of range, clock arithmetic, positions that
//! are already over (RU 1.8), board snapshots, event-scoped tokens.

use std::sync::Arc;
use std::time::Duration;

use draughts_arbiter::api::auth::{Place, Role, TokenConfig};
use draughts_arbiter::api::pb;
use draughts_arbiter::api::pb::arbiter_service_client::ArbiterServiceClient;
use draughts_arbiter::api::pb::board_service_client::BoardServiceClient;
use draughts_arbiter::api::pb::broadcast_service_client::BroadcastServiceClient;
use draughts_arbiter::api::pb::game_service_client::GameServiceClient;
use draughts_arbiter::api::pb::rules_service_client::RulesServiceClient;
use draughts_arbiter::server::config::{Config, FileConfig};
use draughts_arbiter::server::run::run;
use draughts_arbiter::store::MemoryStore;
use tokio_stream::StreamExt;
use tonic::transport::{Channel, Endpoint};
use tonic::{Code, Request, Status};

struct Server {
    channel: Channel,
    _stop: tokio::sync::oneshot::Sender<()>,
}

fn token(t: &str, role: Role) -> TokenConfig {
    TokenConfig {
        token: t.into(),
        name: None,
        role,
    }
}

async fn start() -> Server {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind");
    let addr = listener.local_addr().expect("addr");
    let file = FileConfig {
        tokens: vec![
            token("arb", Role::Arbiter { event: None }),
            token(
                "arb-x",
                Role::Arbiter {
                    event: Some("X".into()),
                },
            ),
            token(
                "arb-y",
                Role::Arbiter {
                    event: Some("Y".into()),
                },
            ),
            token(
                "brd-y",
                Role::Board {
                    event: "Y".into(),
                    place: Place::Game("g-y".into()),
                },
            ),
            token(
                "white-y",
                Role::Player {
                    event: "Y".into(),
                    place: Place::Game("g-y".into()),
                    side: draughts_arbiter::rules::Color::White,
                },
            ),
            token("view", Role::Viewer),
        ],
        ..FileConfig::default()
    };
    let config = Config::resolve(file, Some(addr), None, true, None, None, false).expect("config");
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    tokio::spawn(async move {
        run(&config, Arc::new(MemoryStore::new()), listener, async {
            let _ = stopped.await;
        })
        .await
        .expect("server runs");
    });
    let endpoint = Endpoint::from_shared(format!("http://{addr}")).expect("url");
    for _ in 0..100 {
        if let Ok(channel) = endpoint.connect().await {
            return Server {
                channel,
                _stop: stop,
            };
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    panic!("server did not come up");
}

fn req<T>(token: &str, msg: T) -> Request<T> {
    let mut r = Request::new(msg);
    r.metadata_mut().insert(
        "authorization",
        format!("Bearer {token}").parse().expect("header"),
    );
    r
}

fn create(id: &str, event: &str) -> pb::CreateGameRequest {
    pb::CreateGameRequest {
        variant: pb::Variant::Russian as i32,
        white: Some(pb::Player {
            name: "Ann".into(),
            ..Default::default()
        }),
        black: Some(pb::Player {
            name: "Bob".into(),
            ..Default::default()
        }),
        event: event.into(),
        round: "1".into(),
        board: 1,
        game_id: id.into(),
        ..Default::default()
    }
}

/// A started untimed game of event X with one move played and a draw offered.
async fn game(s: &Server, id: &str) {
    let mut games = GameServiceClient::new(s.channel.clone());
    games
        .create_game(req("arb", create(id, "X")))
        .await
        .expect("create");
    games
        .start_game(req(
            "arb",
            pb::StartGameRequest {
                game_id: id.into(),
                expected_seq: 0,
            },
        ))
        .await
        .expect("start");
    games
        .submit_move(req(
            "arb",
            pb::SubmitMoveRequest {
                game_id: id.into(),
                r#move: "c3-d4".into(),
                offer_draw: true,
                ..Default::default()
            },
        ))
        .await
        .expect("move");
}

/// GetGame and the whole log, as an arbiter sees them.
async fn state(s: &Server, id: &str) -> (pb::Game, Vec<pb::GameEvent>) {
    let game = GameServiceClient::new(s.channel.clone())
        .get_game(req("arb", pb::GetGameRequest { game_id: id.into() }))
        .await
        .expect("get")
        .into_inner();
    let mut stream = BroadcastServiceClient::new(s.channel.clone())
        .watch_game(req(
            "arb",
            pb::WatchGameRequest {
                game_id: id.into(),
                from_seq: 0,
            },
        ))
        .await
        .expect("watch")
        .into_inner();
    let mut log = Vec::new();
    while log.len() < game.last_seq as usize {
        let e = tokio::time::timeout(Duration::from_secs(5), stream.next())
            .await
            .expect("the log within 5 s")
            .expect("open")
            .expect("event");
        log.push(e);
    }
    (game, log)
}

/// What a refusal must be: the code, the start of the message, a bounded length.
fn refused(case: &str, got: Result<(), Status>, code: Code, starts: &str) {
    let e = got.expect_err(&format!("{case}: accepted"));
    assert_eq!(e.code(), code, "{case}: {}", e.message());
    assert!(
        e.message().starts_with(starts),
        "{case}: the message should start {starts:?}: {}",
        e.message()
    );
    assert!(
        e.message().len() <= 300,
        "{case}: a {}-byte message",
        e.message().len()
    );
}

const MB3: usize = 3 * 1024 * 1024;

type Case = (
    &'static str,
    Code,
    &'static str,
    Box<dyn Fn(Channel) -> futures_like::Call>,
);

/// Boxed calls, so the table can hold RPCs of different types.
mod futures_like {
    use std::future::Future;
    use std::pin::Pin;
    pub type Call = Pin<Box<dyn Future<Output = Result<(), tonic::Status>> + Send>>;
}

fn call<F>(f: F) -> futures_like::Call
where
    F: std::future::Future<Output = Result<(), Status>> + Send + 'static,
{
    Box::pin(f)
}

fn cases(id: &'static str) -> Vec<Case> {
    let big = |n: usize| "a".repeat(n);
    let games = |c: Channel| GameServiceClient::new(c);
    let arbiter = |c: Channel| ArbiterServiceClient::new(c);
    vec![
        (
            "game id of one space",
            Code::InvalidArgument,
            "game_id: letters",
            Box::new(move |c| {
                call(async move {
                    games(c)
                        .create_game(req("arb", create(" ", "X")))
                        .await
                        .map(drop)
                })
            }),
        ),
        (
            "game id of a tab and a newline",
            Code::InvalidArgument,
            "game_id: letters",
            Box::new(move |c| {
                call(async move {
                    games(c)
                        .create_game(req("arb", create("\t\n", "X")))
                        .await
                        .map(drop)
                })
            }),
        ),
        (
            "a 3.9 MB game id",
            Code::InvalidArgument,
            "game_id: at most 64 bytes",
            Box::new(move |c| {
                call(async move {
                    games(c)
                        .get_game(req(
                            "arb",
                            pb::GetGameRequest {
                                game_id: big(3_900_000),
                            },
                        ))
                        .await
                        .map(drop)
                })
            }),
        ),
        (
            "a 2 MB event name",
            Code::InvalidArgument,
            "event: at most 200 bytes",
            Box::new(move |c| {
                call(async move {
                    games(c)
                        .create_game(req("arb", create("", &big(2_000_000))))
                        .await
                        .map(drop)
                })
            }),
        ),
        (
            "a 100,002-character time control",
            Code::InvalidArgument,
            "time_control: at most 256 bytes",
            Box::new(move |c| {
                call(async move {
                    let mut r = create("", "X");
                    r.time_control = format!("5m{}", "+".repeat(100_000));
                    games(c).create_game(req("arb", r)).await.map(drop)
                })
            }),
        ),
        (
            "a 3 MB player name",
            Code::InvalidArgument,
            "white.name: at most 200 bytes",
            Box::new(move |c| {
                call(async move {
                    let mut r = create("", "X");
                    r.white = Some(pb::Player {
                        name: big(MB3),
                        ..Default::default()
                    });
                    games(c).create_game(req("arb", r)).await.map(drop)
                })
            }),
        ),
        (
            "a control character in a round",
            Code::InvalidArgument,
            "round: control character",
            Box::new(move |c| {
                call(async move {
                    let mut r = create("", "X");
                    r.round = "1\u{1b}[2J".into();
                    games(c).create_game(req("arb", r)).await.map(drop)
                })
            }),
        ),
        (
            "a line separator in an event name (issue 37)",
            Code::InvalidArgument,
            "event: line separator U+2028",
            Box::new(move |c| {
                call(async move {
                    let mut r = create("", "X");
                    r.event = "X\u{2028}Open".into();
                    games(c).create_game(req("arb", r)).await.map(drop)
                })
            }),
        ),
        (
            "a paragraph separator in a round",
            Code::InvalidArgument,
            "round: paragraph separator U+2029",
            Box::new(move |c| {
                call(async move {
                    let mut r = create("", "X");
                    r.round = "1\u{2029}".into();
                    games(c).create_game(req("arb", r)).await.map(drop)
                })
            }),
        ),
        (
            "a right-to-left override in a player name",
            Code::InvalidArgument,
            "white.name: bidi control U+202E",
            Box::new(move |c| {
                call(async move {
                    let mut r = create("", "X");
                    r.white = Some(pb::Player {
                        name: "Ann\u{202E}eeL".into(),
                        ..Default::default()
                    });
                    games(c).create_game(req("arb", r)).await.map(drop)
                })
            }),
        ),
        (
            "a bidi isolate in a federation",
            Code::InvalidArgument,
            "black.federation: bidi control U+2067",
            Box::new(move |c| {
                call(async move {
                    let mut r = create("", "X");
                    r.black = Some(pb::Player {
                        name: "Bob".into(),
                        federation: "\u{2067}NED".into(),
                        ..Default::default()
                    });
                    games(c).create_game(req("arb", r)).await.map(drop)
                })
            }),
        ),
        (
            "a player name of zero-width spaces",
            Code::InvalidArgument,
            "black.name: nothing visible",
            Box::new(move |c| {
                call(async move {
                    let mut r = create("", "X");
                    r.black = Some(pb::Player {
                        name: "\u{200B}\u{200B}\u{200B}".into(),
                        ..Default::default()
                    });
                    games(c).create_game(req("arb", r)).await.map(drop)
                })
            }),
        ),
        (
            "an event name of a joiner alone",
            Code::InvalidArgument,
            "event: nothing visible",
            Box::new(move |c| {
                call(async move {
                    let mut r = create("", "X");
                    r.event = "\u{200D}".into();
                    games(c).create_game(req("arb", r)).await.map(drop)
                })
            }),
        ),
        (
            "a right-to-left mark in a listed round",
            Code::InvalidArgument,
            "round: bidi mark U+200F",
            Box::new(move |c| {
                call(async move {
                    games(c)
                        .list_games(req(
                            "view",
                            pb::ListGamesRequest {
                                event: "X".into(),
                                round: "1\u{200F}".into(),
                                ..Default::default()
                            },
                        ))
                        .await
                        .map(drop)
                })
            }),
        ),
        (
            "an unknown variant",
            Code::InvalidArgument,
            "variant: unknown value 99",
            Box::new(move |c| {
                call(async move {
                    let mut r = create("", "X");
                    r.variant = 99;
                    games(c).create_game(req("arb", r)).await.map(drop)
                })
            }),
        ),
        (
            "an unknown repetition mode",
            Code::InvalidArgument,
            "settings.repetition_mode: unknown value 7",
            Box::new(move |c| {
                call(async move {
                    let mut r = create("", "X");
                    r.settings = Some(pb::GameSettings {
                        repetition_mode: 7,
                        ..Default::default()
                    });
                    games(c).create_game(req("arb", r)).await.map(drop)
                })
            }),
        ),
        (
            "a start position with no piece",
            Code::InvalidArgument,
            "start_fen: white, to move, has no piece",
            Box::new(move |c| {
                call(async move {
                    let mut r = create("", "X");
                    r.start_fen = "W:W:B1".into();
                    games(c).create_game(req("arb", r)).await.map(drop)
                })
            }),
        ),
        (
            "a 3 MB move",
            Code::InvalidArgument,
            "move: at most 256 bytes",
            Box::new(move |c| {
                call(async move {
                    games(c)
                        .submit_move(req(
                            "arb",
                            pb::SubmitMoveRequest {
                                game_id: id.into(),
                                r#move: big(MB3),
                                ..Default::default()
                            },
                        ))
                        .await
                        .map(drop)
                })
            }),
        ),
        (
            "a move on squares that do not exist",
            Code::InvalidArgument,
            "move: 'zz9' is not a square",
            Box::new(move |c| {
                call(async move {
                    games(c)
                        .submit_move(req(
                            "arb",
                            pb::SubmitMoveRequest {
                                game_id: id.into(),
                                r#move: "zz9-q1".into(),
                                ..Default::default()
                            },
                        ))
                        .await
                        .map(drop)
                })
            }),
        ),
        (
            "a claim's written move on squares that do not exist",
            Code::InvalidArgument,
            "written_move: 'zz9' is not a square",
            Box::new(move |c| {
                call(async move {
                    games(c)
                        .claim_draw(req(
                            "arb",
                            pb::ClaimDrawRequest {
                                game_id: id.into(),
                                // Black is to move (one move played).
                                side: pb::Side::Black as i32,
                                kind: pb::DrawClaimKind::Repetition as i32,
                                written_move: "zz9-q1".into(),
                                ..Default::default()
                            },
                        ))
                        .await
                        .map(drop)
                })
            }),
        ),
        (
            "a draw claim of kind 99",
            Code::InvalidArgument,
            "kind: unknown value 99",
            Box::new(move |c| {
                call(async move {
                    games(c)
                        .claim_draw(req(
                            "arb",
                            pb::ClaimDrawRequest {
                                game_id: id.into(),
                                kind: 99,
                                ..Default::default()
                            },
                        ))
                        .await
                        .map(drop)
                })
            }),
        ),
        (
            "a side of 5",
            Code::InvalidArgument,
            "side: unknown value 5",
            Box::new(move |c| {
                call(async move {
                    games(c)
                        .resign(req(
                            "arb",
                            pb::ResignRequest {
                                game_id: id.into(),
                                side: 5,
                                expected_seq: 0,
                            },
                        ))
                        .await
                        .map(drop)
                })
            }),
        ),
        (
            "an arbiter's resignation without a side",
            Code::InvalidArgument,
            "side: SIDE_WHITE or SIDE_BLACK required",
            Box::new(move |c| {
                call(async move {
                    games(c)
                        .resign(req(
                            "arb",
                            pb::ResignRequest {
                                game_id: id.into(),
                                side: 0,
                                expected_seq: 0,
                            },
                        ))
                        .await
                        .map(drop)
                })
            }),
        ),
        (
            "an answer to the offer of 42",
            Code::InvalidArgument,
            "response: unknown value 42",
            Box::new(move |c| {
                call(async move {
                    games(c)
                        .respond_to_draw_offer(req(
                            "arb",
                            pb::RespondToDrawOfferRequest {
                                game_id: id.into(),
                                response: 42,
                                ..Default::default()
                            },
                        ))
                        .await
                        .map(drop)
                })
            }),
        ),
        (
            "a 3 MB arbiter's reason",
            Code::InvalidArgument,
            "reason: at most 1000 bytes",
            Box::new(move |c| {
                call(async move {
                    arbiter(c)
                        .issue_warning(req(
                            "arb",
                            pb::IssueWarningRequest {
                                game_id: id.into(),
                                side: pb::Side::White as i32,
                                reason: big(MB3),
                                rule: String::new(),
                            },
                        ))
                        .await
                        .map(drop)
                })
            }),
        ),
        (
            "a rule of 65 bytes",
            Code::InvalidArgument,
            "rule: at most 64 bytes",
            Box::new(move |c| {
                call(async move {
                    arbiter(c)
                        .pause_clocks(req(
                            "arb",
                            pb::PauseClocksRequest {
                                game_id: id.into(),
                                reason: "x".into(),
                                rule: big(65),
                            },
                        ))
                        .await
                        .map(drop)
                })
            }),
        ),
        (
            "adding i64::MAX ms to a clock",
            Code::InvalidArgument,
            "add_ms: non-zero and at most",
            Box::new(move |c| {
                call(async move {
                    arbiter(c)
                        .adjust_clock(req(
                            "arb",
                            pb::AdjustClockRequest {
                                game_id: id.into(),
                                side: pb::Side::White as i32,
                                change: Some(pb::adjust_clock_request::Change::AddMs(i64::MAX)),
                                ..Default::default()
                            },
                        ))
                        .await
                        .map(drop)
                })
            }),
        ),
        (
            "setting a clock to i64::MAX ms",
            Code::InvalidArgument,
            "set_remaining_ms: from 1 to",
            Box::new(move |c| {
                call(async move {
                    arbiter(c)
                        .adjust_clock(req(
                            "arb",
                            pb::AdjustClockRequest {
                                game_id: id.into(),
                                side: pb::Side::White as i32,
                                change: Some(pb::adjust_clock_request::Change::SetRemainingMs(
                                    i64::MAX,
                                )),
                                ..Default::default()
                            },
                        ))
                        .await
                        .map(drop)
                })
            }),
        ),
        (
            "a claim ruling of 9",
            Code::InvalidArgument,
            "ruling: unknown value 9",
            Box::new(move |c| {
                call(async move {
                    arbiter(c)
                        .rule_on_claim(req(
                            "arb",
                            pb::RuleOnClaimRequest {
                                game_id: id.into(),
                                ruling: 9,
                                ..Default::default()
                            },
                        ))
                        .await
                        .map(drop)
                })
            }),
        ),
        (
            "a declared result of 17",
            Code::InvalidArgument,
            "result: unknown value 17",
            Box::new(move |c| {
                call(async move {
                    arbiter(c)
                        .declare_result(req(
                            "arb",
                            pb::DeclareResultRequest {
                                game_id: id.into(),
                                result: 17,
                                ..Default::default()
                            },
                        ))
                        .await
                        .map(drop)
                })
            }),
        ),
        (
            "a declared result without an explanation",
            Code::InvalidArgument,
            "explanation: ",
            Box::new(move |c| {
                call(async move {
                    arbiter(c)
                        .declare_result(req(
                            "arb",
                            pb::DeclareResultRequest {
                                game_id: id.into(),
                                result: pb::GameResult::Draw as i32,
                                ..Default::default()
                            },
                        ))
                        .await
                        .map(drop)
                })
            }),
        ),
        (
            "a position set with no piece",
            Code::InvalidArgument,
            "fen: no piece on the board",
            Box::new(move |c| {
                call(async move {
                    arbiter(c)
                        .set_position(req(
                            "arb",
                            pb::SetPositionRequest {
                                game_id: id.into(),
                                fen: "B:W:B".into(),
                                ..Default::default()
                            },
                        ))
                        .await
                        .map(drop)
                })
            }),
        ),
        (
            "a watch of a blank event",
            Code::InvalidArgument,
            "event: only spaces; required: give the tournament's name",
            Box::new(move |c| {
                call(async move {
                    BroadcastServiceClient::new(c)
                        .watch_event(req(
                            "view",
                            pb::WatchEventRequest {
                                event: "  ".into(),
                                ..Default::default()
                            },
                        ))
                        .await
                        .map(drop)
                })
            }),
        ),
        (
            "a resume map of 20,000 games",
            Code::InvalidArgument,
            "resume_from: at most 10000 games",
            Box::new(move |c| {
                call(async move {
                    BroadcastServiceClient::new(c)
                        .watch_event(req(
                            "view",
                            pb::WatchEventRequest {
                                event: "X".into(),
                                resume_from: (0..20_000).map(|i| (format!("g{i}"), 1)).collect(),
                                ..Default::default()
                            },
                        ))
                        .await
                        .map(drop)
                })
            }),
        ),
        (
            "a 3 MB FEN for legal moves",
            Code::InvalidArgument,
            "fen: at most 1024 bytes",
            Box::new(move |c| {
                call(async move {
                    RulesServiceClient::new(c)
                        .legal_moves(req(
                            "view",
                            pb::LegalMovesRequest {
                                variant: pb::Variant::Russian as i32,
                                fen: big(MB3),
                            },
                        ))
                        .await
                        .map(drop)
                })
            }),
        ),
        (
            "a PDN export by a 3 MB round",
            Code::InvalidArgument,
            "round: at most 200 bytes",
            Box::new(move |c| {
                call(async move {
                    BroadcastServiceClient::new(c)
                        .export_pdn(req(
                            "view",
                            pb::ExportPdnRequest {
                                event: "X".into(),
                                round: big(MB3),
                                ..Default::default()
                            },
                        ))
                        .await
                        .map(drop)
                })
            }),
        ),
    ]
}

#[tokio::test]
async fn every_malformed_request_gets_its_code_and_changes_nothing() {
    let s = start().await;
    game(&s, "g1").await;
    let before = state(&s, "g1").await;
    let listed = |c: Channel| async move {
        GameServiceClient::new(c)
            .list_games(req("view", pb::ListGamesRequest::default()))
            .await
            .expect("ListGames answers everyone")
            .into_inner()
            .games
            .len()
    };
    let games_before = listed(s.channel.clone()).await;
    let all = cases("g1");
    let n = all.len();
    for (case, code, starts, send) in all {
        refused(case, send(s.channel.clone()).await, code, starts);
    }
    assert_eq!(
        state(&s, "g1").await,
        before,
        "a refused request changed the game"
    );
    assert_eq!(
        listed(s.channel.clone()).await,
        games_before,
        "a refused request created a game"
    );
    eprintln!("{n} malformed requests refused, nothing changed");
}

/// The board stream's own limits: each refusal is a `BoardRejected` naming the field,
/// and the game does not change.
#[tokio::test]
async fn a_board_that_sends_garbage_is_refused_message_by_message() {
    let s = start().await;
    game(&s, "g1").await;
    let mut before = state(&s, "g1").await;
    let (tx, rx) = tokio::sync::mpsc::channel(16);
    let mut feed = BoardServiceClient::new(s.channel.clone())
        .connect(req("arb", tokio_stream::wrappers::ReceiverStream::new(rx)))
        .await
        .expect("connect")
        .into_inner();
    let send = |id: u64, kind| pb::BoardMessage {
        message_id: id,
        board_time_ms: 0,
        kind: Some(kind),
    };
    use pb::board_message::Kind;
    let snapshot = |white: Vec<u32>, black: Vec<u32>| {
        Kind::Snapshot(pb::BoardOccupancy {
            white,
            black,
            ..Default::default()
        })
    };
    let cases: Vec<(pb::BoardMessage, &str, &str)> = vec![
        (
            send(
                1,
                Kind::Bind(pb::BindBoard {
                    game_id: "g1".into(),
                    board_id: "a".repeat(MB3),
                    resume_from_seq: 0,
                }),
            ),
            "INVALID_ARGUMENT",
            "bind.board_id: at most 64 bytes",
        ),
        (
            send(
                2,
                Kind::Bind(pb::BindBoard {
                    game_id: "g1".into(),
                    board_id: "dgt-1".into(),
                    resume_from_seq: 0,
                }),
            ),
            "",
            "",
        ),
        (
            send(3, snapshot(vec![9; 200_000], vec![])),
            "INVALID_ARGUMENT",
            "snapshot.white: at most 64 squares",
        ),
        (
            send(4, snapshot(vec![], vec![])),
            "INVALID_ARGUMENT",
            "snapshot: no piece on the board",
        ),
        (
            send(5, snapshot(vec![1, 2, 2], vec![21])),
            "INVALID_ARGUMENT",
            "snapshot.white: square 2 listed twice",
        ),
        (
            send(7, Kind::Touch(pb::BoardSquare { square: 4_000_000 })),
            "INVALID_ARGUMENT",
            "touch.square: a square from 1 to 64",
        ),
        (
            pb::BoardMessage {
                message_id: 8,
                board_time_ms: -5,
                kind: Some(Kind::Touch(pb::BoardSquare { square: 9 })),
            },
            "INVALID_ARGUMENT",
            "board_time_ms: 0 (none) or positive",
        ),
        (
            send(9, Kind::ClockPress(pb::BoardClockPress { side: 77 })),
            "INVALID_ARGUMENT",
            "clock_press.side: unknown value 77",
        ),
        (
            // In range for the stream (1-64), not for a Russian board (1-32).
            send(10, Kind::Touch(pb::BoardSquare { square: 33 })),
            "INVALID_ARGUMENT",
            "touch.square: square 33 out of range for russian",
        ),
        (
            send(11, Kind::Lift(pb::BoardSquare { square: 33 })),
            "INVALID_ARGUMENT",
            "lift.square: square 33 out of range",
        ),
        (
            send(12, Kind::Place(pb::BoardSquare { square: 33 })),
            "INVALID_ARGUMENT",
            "place.square: square 33 out of range",
        ),
        (
            send(13, Kind::Release(pb::BoardSquare { square: 33 })),
            "INVALID_ARGUMENT",
            "release.square: square 33 out of range",
        ),
        (
            send(14, snapshot(vec![21, 33], vec![1])),
            "INVALID_ARGUMENT",
            "snapshot.white: square 33 out of range",
        ),
    ];
    for (msg, code, starts) in cases {
        let id = msg.message_id;
        tx.send(msg).await.expect("send");
        let f = loop {
            let f = tokio::time::timeout(Duration::from_secs(5), feed.next())
                .await
                .expect("feedback within 5 s")
                .expect("open")
                .expect("feedback");
            if f.message_id == id {
                break f;
            }
        };
        match f.kind {
            Some(pb::board_feedback::Kind::Rejected(r)) => {
                assert_eq!(r.code, code, "message {id}: {}", r.message);
                assert!(r.message.starts_with(starts), "message {id}: {}", r.message);
            }
            Some(pb::board_feedback::Kind::Bound(_)) => {
                assert_eq!(code, "", "message {id}");
                // The bind records the board as active (its health), and nothing else.
                let bound = state(&s, "g1").await;
                assert_eq!(bound.1.len(), before.1.len() + 1, "message {id}");
                assert!(matches!(
                    bound.1.last().and_then(|e| e.kind.as_ref()),
                    Some(pb::game_event::Kind::BoardHealthChanged(_))
                ));
                before = bound;
            }
            other => panic!("message {id}: {other:?}"),
        }
    }
    assert_eq!(
        state(&s, "g1").await,
        before,
        "a refused board message changed the game"
    );
}

/// RU 1.8 at the edge: an arbiter's position where the side to move has no piece ends a
/// running game at once.
#[tokio::test]
async fn a_set_position_that_leaves_no_move_ends_the_game_ru_1_8() {
    let s = start().await;
    game(&s, "g1").await;
    // Black to move (after c3-d4) with no piece.
    let r = ArbiterServiceClient::new(s.channel.clone())
        .set_position(req(
            "arb",
            pb::SetPositionRequest {
                game_id: "g1".into(),
                fen: "B:W9:B".into(),
                reason: "the position as reconstructed".into(),
                rule: String::new(),
            },
        ))
        .await
        .expect("set")
        .into_inner();
    let g = r.game.expect("game");
    assert_eq!(g.result, pb::GameResult::WhiteWins as i32, "{g:?}");
    let ended = r
        .events
        .iter()
        .find_map(|e| match &e.kind {
            Some(pb::game_event::Kind::GameFinished(end)) => Some((e.rule.clone(), end.clone())),
            _ => None,
        })
        .expect("the game ends in the same command");
    assert_eq!(ended.0, "RU 1.8");
}

/// Clock arithmetic is checked: additions within the limit still cannot push a clock past
/// a period's longest time.
#[tokio::test]
async fn a_clock_cannot_be_pushed_past_168_hours() {
    let s = start().await;
    let mut games = GameServiceClient::new(s.channel.clone());
    let mut r = create("t1", "X");
    r.time_control = "10m".into();
    games.create_game(req("arb", r)).await.expect("create");
    let add = |c: Channel| async move {
        ArbiterServiceClient::new(c)
            .adjust_clock(req(
                "arb",
                pb::AdjustClockRequest {
                    game_id: "t1".into(),
                    side: pb::Side::Black as i32,
                    change: Some(pb::adjust_clock_request::Change::AddMs(24 * 3_600_000)),
                    ..Default::default()
                },
            ))
            .await
    };
    // 10 min + 6 × 24 h fits; the seventh day does not.
    for _ in 0..6 {
        add(s.channel.clone()).await.expect("within 168 h");
    }
    let e = add(s.channel.clone()).await.expect_err("past 168 h");
    assert_eq!(e.code(), Code::InvalidArgument, "{}", e.message());
    assert!(e.message().contains("more than 168 h"), "{}", e.message());
    let g = games
        .get_game(req(
            "arb",
            pb::GetGameRequest {
                game_id: "t1".into(),
            },
        ))
        .await
        .expect("get")
        .into_inner();
    assert_eq!(g.black_clock_ms, 600_000 + 6 * 24 * 3_600_000);
}

/// Tokens are scoped by event: another event's arbiter cannot create the game id that
/// event Y's board and player tokens name, so those tokens cannot be captured; Y's
/// arbiter can, and then the tokens work on it.
#[tokio::test]
async fn an_event_s_tokens_cannot_be_captured_by_another_event() {
    let s = start().await;
    let mut games = GameServiceClient::new(s.channel.clone());
    for (who, token) in [("X's arbiter", "arb-x"), ("a global arbiter", "arb")] {
        let e = games
            .create_game(req(token, create("g-y", "X")))
            .await
            .expect_err(who);
        assert_eq!(e.code(), Code::PermissionDenied, "{who}: {}", e.message());
        assert!(e.message().contains("event 'Y'"), "{}", e.message());
    }
    games
        .create_game(req("arb-y", create("g-y", "Y")))
        .await
        .expect("Y's arbiter creates it");
    games
        .start_game(req(
            "arb-y",
            pb::StartGameRequest {
                game_id: "g-y".into(),
                expected_seq: 0,
            },
        ))
        .await
        .expect("start");
    games
        .submit_move(req(
            "white-y",
            pb::SubmitMoveRequest {
                game_id: "g-y".into(),
                r#move: "c3-d4".into(),
                ..Default::default()
            },
        ))
        .await
        .expect("Y's player plays in Y's game");
    // A game of another id in X stays out of the Y tokens' reach.
    games
        .create_game(req("arb-x", create("g-x", "X")))
        .await
        .expect("X's own game");
    games
        .start_game(req(
            "arb-x",
            pb::StartGameRequest {
                game_id: "g-x".into(),
                expected_seq: 0,
            },
        ))
        .await
        .expect("start");
    let e = games
        .submit_move(req(
            "white-y",
            pb::SubmitMoveRequest {
                game_id: "g-x".into(),
                r#move: "c3-d4".into(),
                ..Default::default()
            },
        ))
        .await
        .expect_err("not Y's game");
    assert_eq!(e.code(), Code::PermissionDenied);
}

/// Every pending item and played move carries the seq of the event that recorded it.
#[tokio::test]
async fn moves_and_pending_items_carry_their_seq() {
    let s = start().await;
    game(&s, "g1").await;
    let (g, log) = state(&s, "g1").await;
    let played = log
        .iter()
        .find(|e| matches!(e.kind, Some(pb::game_event::Kind::MovePlayed(_))))
        .expect("the move")
        .seq;
    assert_eq!(g.moves.len(), 1);
    assert_eq!(g.moves[0].seq, played);
    let offered = log
        .iter()
        .find(|e| matches!(e.kind, Some(pb::game_event::Kind::DrawOffered(_))))
        .expect("the offer")
        .seq;
    assert_eq!(g.pending_draw_offer.expect("offer").seq, offered);
}

/// An arbiter's clock change that passes the field's own limit but would leave more than
/// a period's longest time (168 h) on the clock is refused naming the field that carried
/// it, and changes nothing.
#[tokio::test]
async fn a_clock_change_beyond_the_longest_period_names_its_field() {
    let s = start().await;
    let mut games = GameServiceClient::new(s.channel.clone());
    games
        .create_game(req(
            "arb",
            pb::CreateGameRequest {
                time_control: "10m".into(),
                ..create("adj", "X")
            },
        ))
        .await
        .expect("create");
    games
        .start_game(req(
            "arb",
            pb::StartGameRequest {
                game_id: "adj".into(),
                expected_seq: 0,
            },
        ))
        .await
        .expect("start");
    let adjust = |change| pb::AdjustClockRequest {
        game_id: "adj".into(),
        side: pb::Side::White as i32,
        change: Some(change),
        reason: "a test".into(),
        rule: String::new(),
    };
    let arbiter = || ArbiterServiceClient::new(s.channel.clone());
    arbiter()
        .adjust_clock(req(
            "arb",
            adjust(pb::adjust_clock_request::Change::SetRemainingMs(
                168 * 3_600_000,
            )),
        ))
        .await
        .expect("the longest period");
    // The log (the clock's live reading moves on by itself).
    let before = state(&s, "adj").await.1;
    let got = arbiter()
        .adjust_clock(req(
            "arb",
            adjust(pb::adjust_clock_request::Change::AddMs(3_600_000)),
        ))
        .await
        .map(drop);
    refused(
        "an hour more",
        got,
        Code::InvalidArgument,
        "add_ms: the change would leave",
    );
    assert_eq!(state(&s, "adj").await.1, before, "nothing recorded");
}

/// Issue 37: the zero-width joiner and non-joiner that Persian and Indic names need
/// between letters are kept as given (names with only invisible characters, separators
/// or bidi controls are refused: the cases above).
#[tokio::test]
async fn names_keep_their_joiners_between_letters() {
    let s = start().await;
    let persian = "می\u{200C}خواهم";
    let devanagari = "क्\u{200D}षमा";
    let mut r = create("joiners", "X");
    r.white = Some(pb::Player {
        name: persian.into(),
        ..Default::default()
    });
    r.black = Some(pb::Player {
        name: devanagari.into(),
        ..Default::default()
    });
    r.round = "ب\u{200C}ا".into();
    GameServiceClient::new(s.channel.clone())
        .create_game(req("arb", r))
        .await
        .expect("names with joiners between letters are accepted");
    let game = GameServiceClient::new(s.channel.clone())
        .get_game(req(
            "arb",
            pb::GetGameRequest {
                game_id: "joiners".into(),
            },
        ))
        .await
        .expect("get")
        .into_inner();
    assert_eq!(game.white.expect("white").name, persian);
    assert_eq!(game.black.expect("black").name, devanagari);
    assert_eq!(game.round, "ب\u{200C}ا");
}
