//! The public broadcast delay, with tokio's clock paused: a viewer sees move N only
//! `broadcast_delay_ms` after it was made, on every read RPC (GetGame, ListGames,
//! ExportPdn, WatchGame, WatchEvent), while the arbiter, the game's board and its
//! players see it at once. The services are called in-process (no sockets), so the
//! paused clock drives everything.

use crate::common;

use std::sync::Arc;
use std::time::Duration;

use draughts_arbiter::api::Api;
use draughts_arbiter::api::auth::{Place, Role, TokenConfig, Tokens};
use draughts_arbiter::api::frame::BroadcastService;
use draughts_arbiter::api::pb;
use draughts_arbiter::api::pb::game_service_server::GameService;
use draughts_arbiter::hub::Hub;
use draughts_arbiter::rules::Color;
use draughts_arbiter::store::MemoryStore;
use tokio::time::{Instant, advance};
use tokio_stream::StreamExt;
use tonic::Request;

const DELAY: u64 = 60_000;

fn api() -> Api {
    api_over(Hub::new(Arc::new(MemoryStore::new()), false))
}

fn api_over(hub: Arc<Hub>) -> Api {
    let token = |t: &str, role| TokenConfig {
        token: t.into(),
        name: None,
        role,
    };
    let tokens = Tokens::new(&[
        token("arb", Role::Arbiter { event: None }),
        token("view", Role::Viewer),
        token(
            "white",
            Role::Player {
                event: "Open".into(),
                place: Place::Game("g".into()),
                side: Color::White,
            },
        ),
        token(
            "other",
            Role::Player {
                event: "Open".into(),
                place: Place::Game("h".into()),
                side: Color::White,
            },
        ),
        token(
            "board",
            Role::Board {
                event: "Open".into(),
                place: Place::Game("g".into()),
            },
        ),
    ]);
    Api::new(hub, Arc::new(tokens))
}

fn req<T>(token: &str, msg: T) -> Request<T> {
    let mut r = Request::new(msg);
    r.metadata_mut().insert(
        "authorization",
        format!("Bearer {token}").parse().expect("header"),
    );
    r
}

/// Creates game `id` on `board` of round 1 of event Open, behind the public delay
/// (`DELAY`), and starts it.
async fn started(api: &Api, id: &str, board: u32, time_control: &str) {
    api.create_game(req(
        "arb",
        pb::CreateGameRequest {
            game_id: id.into(),
            variant: pb::Variant::Russian as i32,
            time_control: time_control.into(),
            event: "Open".into(),
            round: "1".into(),
            board,
            settings: Some(pb::GameSettings {
                broadcast_delay_ms: Some(DELAY),
                ..Default::default()
            }),
            ..Default::default()
        },
    ))
    .await
    .expect("create");
    api.start_game(req(
        "arb",
        pb::StartGameRequest {
            game_id: id.into(),
            expected_seq: 0,
        },
    ))
    .await
    .expect("start");
}

/// `token`'s WatchEvent stream of round 1 of event Open.
async fn round_one(api: &Api, token: &str) -> <Api as BroadcastService>::WatchEventStream {
    api.watch_event(req(
        token,
        pb::WatchEventRequest {
            event: "Open".into(),
            round: "1".into(),
            ..Default::default()
        },
    ))
    .await
    .expect("watch")
    .into_inner()
}

async fn game_with_a_move(api: &Api) -> Instant {
    started(api, "g", 1, "10m+5s").await;
    advance(Duration::from_secs(5)).await;
    api.submit_move(req(
        "white",
        pb::SubmitMoveRequest {
            game_id: "g".into(),
            r#move: "c3-d4".into(),
            ..Default::default()
        },
    ))
    .await
    .expect("move");
    Instant::now()
}

async fn moves_seen(api: &Api, token: &str) -> (u32, u32, usize) {
    let game = api
        .get_game(req(
            token,
            pb::GetGameRequest {
                game_id: "g".into(),
            },
        ))
        .await
        .expect("get")
        .into_inner();
    let listed = api
        .list_games(req(
            token,
            pb::ListGamesRequest {
                event: "Open".into(),
                ..Default::default()
            },
        ))
        .await
        .expect("list")
        .into_inner();
    let pdn = api
        .export_pdn(req(
            token,
            pb::ExportPdnRequest {
                game_id: "g".into(),
                ..Default::default()
            },
        ))
        .await
        .expect("pdn")
        .into_inner()
        .pdn;
    assert_eq!(listed.games.len(), 1);
    common::pdn::replays(&pdn, draughts_arbiter::rules::Variant::Russian);
    (
        game.move_count,
        listed.games[0].move_count,
        pdn.matches("c3-d4").count() + pdn.matches("22-18").count(),
    )
}

/// The game as the viewer gets it now.
async fn public_game(api: &Api) -> pb::Game {
    api.get_game(req(
        "view",
        pb::GetGameRequest {
            game_id: "g".into(),
        },
    ))
    .await
    .expect("get")
    .into_inner()
}

/// A game created without a delay of its own takes its event's default from the
/// server's configuration; one that sets it (even to 0) keeps its own.
#[tokio::test]
async fn an_event_default_sets_the_delay_of_games_without_one() {
    let api = api_over(Hub::new(Arc::new(MemoryStore::new()), false))
        .with_event_delays([("Championship".to_string(), DELAY)].into());
    let create = |id: &str, event: &str, delay: Option<u64>| pb::CreateGameRequest {
        game_id: id.into(),
        variant: pb::Variant::Russian as i32,
        event: event.into(),
        settings: delay.map(|d| pb::GameSettings {
            broadcast_delay_ms: Some(d),
            ..Default::default()
        }),
        ..Default::default()
    };
    for (id, event, given, expected) in [
        ("a", "Championship", None, DELAY),
        ("b", "Championship", Some(0), 0),
        ("c", "Championship", Some(5_000), 5_000),
        ("d", "Open", None, 0),
    ] {
        let game = api
            .create_game(req("arb", create(id, event, given)))
            .await
            .expect("create")
            .into_inner();
        let delay = game.settings.and_then(|s| s.broadcast_delay_ms);
        assert_eq!(
            delay,
            Some(expected),
            "game {id} ({event}, given {given:?})"
        );
    }
}

/// GetGame, ListGames and ExportPdn: the viewer and a player of another game see the
/// move only after the delay; the arbiter, the board and the game's player at once.
#[tokio::test(start_paused = true)]
async fn every_read_rpc_holds_the_move_back_from_the_public() {
    let api = api();
    game_with_a_move(&api).await;
    for live in ["arb", "white", "board"] {
        assert_eq!(
            moves_seen(&api, live).await,
            (1, 1, 1),
            "{live} sees it live"
        );
    }
    for public in ["view", "other"] {
        assert_eq!(
            moves_seen(&api, public).await,
            (0, 0, 0),
            "{public} not yet"
        );
    }
    let game = public_game(&api).await;
    assert_eq!(
        game.status,
        pb::GameStatus::Created as i32,
        "the public sees the game as it was 60 s ago: not started"
    );
    // The game started 5 s before the move: 55 s after the move it is 60 s old.
    advance(Duration::from_millis(DELAY - 5_000)).await;
    let game = public_game(&api).await;
    assert_eq!(
        game.status,
        pb::GameStatus::Running as i32,
        "started 60 s ago"
    );
    assert_eq!(game.move_count, 0, "the move is 55 s old");
    advance(Duration::from_millis(4_999)).await;
    let game = public_game(&api).await;
    assert_eq!(game.move_count, 0, "the move is 59.999 s old");
    let clock = game.clock.expect("timed");
    assert_eq!(
        clock.white_ms,
        600_000 - 4_999,
        "the public clock is the clock as it was then"
    );
    advance(Duration::from_millis(1)).await;
    assert_eq!(
        moves_seen(&api, "view").await,
        (1, 1, 1),
        "60 s later: public"
    );
}

/// The instant a stream delivers its first move.
async fn first_move_at(
    mut s: impl tokio_stream::Stream<Item = Result<impl Into<pb::GameEvent>, tonic::Status>> + Unpin,
) -> Instant {
    loop {
        let e: pb::GameEvent = s.next().await.expect("open").expect("event").into();
        if matches!(e.kind, Some(pb::game_event::Kind::MovePlayed(_))) {
            return Instant::now();
        }
    }
}

/// WatchGame and WatchEvent: the viewer receives the move `delay` after it was made,
/// the arbiter at once.
#[tokio::test(start_paused = true)]
async fn streams_deliver_to_the_public_after_the_delay() {
    let api = api();
    let made = game_with_a_move(&api).await;
    let watch = |token: &'static str| {
        let api = api.clone();
        async move {
            let s = api
                .watch_game(req(
                    token,
                    pb::WatchGameRequest {
                        game_id: "g".into(),
                        from_seq: 0,
                    },
                ))
                .await
                .expect("watch")
                .into_inner();
            first_move_at(s).await
        }
    };
    let around = |token: &'static str| {
        let api = api.clone();
        async move {
            let s = api
                .watch_event(req(
                    token,
                    pb::WatchEventRequest {
                        event: "Open".into(),
                        ..Default::default()
                    },
                ))
                .await
                .expect("watch")
                .into_inner();
            first_move_at(s).await
        }
    };
    assert_eq!(watch("arb").await, made, "the arbiter at once");
    assert_eq!(around("arb").await, made);
    let (viewer, round) = tokio::join!(watch("view"), around("view"));
    for seen in [viewer, round] {
        assert_eq!(
            seen - made,
            Duration::from_millis(DELAY),
            "exactly the delay"
        );
    }
}

/// A viewer's WatchGame from seq 1 (after the creation, announced at once) on the game,
/// finished first if `finished`, is waiting out the delay for the events held back; the
/// hub shuts down. Returns the stream's first item's status code and how long it took.
async fn held_back_at_shutdown(finished: bool) -> (tonic::Code, Duration) {
    let hub = Hub::new(Arc::new(MemoryStore::new()), false);
    let api = api_over(hub.clone());
    game_with_a_move(&api).await;
    if finished {
        finish(&api).await;
    }
    let mut s = api
        .watch_game(req(
            "view",
            pb::WatchGameRequest {
                game_id: "g".into(),
                from_seq: 1,
            },
        ))
        .await
        .expect("watch")
        .into_inner();
    let began = Instant::now();
    let reader = tokio::spawn(async move { s.next().await });
    tokio::task::yield_now().await;
    hub.shutdown().await;
    let first = reader.await.expect("reader").expect("an item");
    let e = first.expect_err("the end, not a held-back event");
    (e.code(), began.elapsed())
}

/// A viewer waiting out the delay is not waited for at shutdown: its stream ends at once
/// with UNAVAILABLE, and the held-back events stay unseen.
#[tokio::test(start_paused = true)]
async fn shutdown_ends_a_delayed_stream_at_once() {
    assert_eq!(
        held_back_at_shutdown(false).await,
        (tonic::Code::Unavailable, Duration::ZERO)
    );
}

/// The same for a finished game whose last events are still held back: its watch is
/// not at the game's task (which ended it at registration), and still ends at once with
/// UNAVAILABLE. Before, shutdown waited out the delay (up to 24 hours) for it.
#[tokio::test(start_paused = true)]
async fn shutdown_ends_a_finished_games_delayed_stream_at_once() {
    assert_eq!(
        held_back_at_shutdown(true).await,
        (tonic::Code::Unavailable, Duration::ZERO)
    );
}

/// `arbiter_delayed_events` counts what the delay still holds back from the public:
/// the start and the move (and its press) while they wait, none once the delay is over.
#[tokio::test(start_paused = true)]
async fn the_delayed_events_gauge_follows_the_delay() {
    let hub = Hub::new(Arc::new(MemoryStore::new()), false);
    let api = api_over(hub.clone());
    game_with_a_move(&api).await;
    let held = hub.metrics().delayed_depth();
    assert!(held >= 2, "start and move held back: {held}");
    assert!(
        hub.metrics()
            .render()
            .contains(&format!("arbiter_delayed_events {held}"))
    );
    // The start became public 5 s before the move did.
    advance(Duration::from_millis(DELAY - 4_000)).await;
    assert!(hub.metrics().delayed_depth() < held);
    advance(Duration::from_secs(5)).await;
    assert_eq!(hub.metrics().delayed_depth(), 0);
}

/// A game whose creation is younger than its delay does not hold the public's round
/// stream back: the other games' events (here a live game's move) come at once, and
/// the delayed game's `GameCreated` too (the game is announced at once, as GetGame and
/// the PDN show it). Before, a new public WatchEvent waited out that game's delay before
/// it sent anything of any game.
#[tokio::test(start_paused = true)]
async fn a_delayed_game_does_not_hold_back_the_rest_of_its_round() {
    let api = api();
    let create = |id: &str, delay: u64| pb::CreateGameRequest {
        game_id: id.into(),
        variant: pb::Variant::Russian as i32,
        time_control: "10m".into(),
        event: "Open".into(),
        round: "1".into(),
        board: if id == "g" { 1 } else { 2 },
        settings: Some(pb::GameSettings {
            broadcast_delay_ms: Some(delay),
            ..Default::default()
        }),
        ..Default::default()
    };
    api.create_game(req("arb", create("g", DELAY)))
        .await
        .expect("create the delayed game");
    api.create_game(req("arb", create("h", 0)))
        .await
        .expect("create the live game");
    api.start_game(req(
        "arb",
        pb::StartGameRequest {
            game_id: "h".into(),
            expected_seq: 0,
        },
    ))
    .await
    .expect("start");
    api.submit_move(req(
        "other",
        pb::SubmitMoveRequest {
            game_id: "h".into(),
            r#move: "c3-d4".into(),
            ..Default::default()
        },
    ))
    .await
    .expect("move");
    let opened = Instant::now();
    let mut round = round_one(&api, "view").await;
    let mut created_g = false;
    loop {
        let e = round.next().await.expect("open").expect("event");
        created_g |= e.game_id == "g" && e.seq == 1;
        if e.game_id == "h" && matches!(e.kind, Some(pb::game_event::Kind::MovePlayed(_))) {
            break;
        }
    }
    assert_eq!(
        opened.elapsed(),
        Duration::ZERO,
        "the live game's move at once"
    );
    let mut single = api
        .watch_game(req(
            "view",
            pb::WatchGameRequest {
                game_id: "g".into(),
                from_seq: 0,
            },
        ))
        .await
        .expect("watch")
        .into_inner();
    let first = single.next().await.expect("open").expect("event");
    assert!(
        matches!(first.kind, Some(pb::game_event::Kind::GameCreated(_))),
        "{first:?}"
    );
    assert_eq!(opened.elapsed(), Duration::ZERO, "announced at once");
    if !created_g {
        let e = round.next().await.expect("open").expect("event");
        assert_eq!((e.game_id.as_str(), e.seq), ("g", 1));
        assert_eq!(opened.elapsed(), Duration::ZERO);
    }
}

/// Finishes the game (the arbiter resigns it for White); returns the seq of its final
/// event and the instant.
async fn finish(api: &Api) -> (u64, Instant) {
    let r = api
        .resign(req(
            "arb",
            pb::ResignRequest {
                game_id: "g".into(),
                side: pb::Side::White as i32,
                expected_seq: 0,
            },
        ))
        .await
        .expect("resigned")
        .into_inner();
    let seq = r.events.last().expect("an event").seq;
    (seq, Instant::now())
}

async fn unfinished_listed(api: &Api, token: &str) -> usize {
    api.list_games(req(
        token,
        pb::ListGamesRequest {
            event: "Open".into(),
            unfinished_only: true,
            ..Default::default()
        },
    ))
    .await
    .expect("list")
    .into_inner()
    .games
    .len()
}

/// ListGames with `unfinished_only`: the public still lists a game that finished less
/// than its delay ago (before, the store's live flag dropped it at once, telling viewers
/// that the game was over); the arbiter does not.
#[tokio::test(start_paused = true)]
async fn unfinished_only_lists_what_the_public_sees_unfinished() {
    let api = api();
    game_with_a_move(&api).await;
    finish(&api).await;
    assert_eq!(unfinished_listed(&api, "arb").await, 0, "over, live");
    for public in ["view", "other"] {
        assert_eq!(
            unfinished_listed(&api, public).await,
            1,
            "{public}: not yet"
        );
    }
    advance(Duration::from_millis(DELAY)).await;
    assert_eq!(unfinished_listed(&api, "view").await, 0, "over, publicly");
}

/// After a restart, a game that finished within its delay is not listed from its stored
/// summary (which tells the result): the public sees it as it was, unfinished.
#[tokio::test(start_paused = true)]
async fn a_restart_does_not_list_a_result_still_behind_the_delay() {
    let store = Arc::new(MemoryStore::new());
    let first = Hub::new(store.clone(), false);
    let api = api_over(first.clone());
    game_with_a_move(&api).await;
    finish(&api).await;
    first.shutdown().await;
    let second = Hub::new(store, false);
    second.recover().await.expect("recovered");
    let api = api_over(second);
    let listed = api
        .list_games(req(
            "view",
            pb::ListGamesRequest {
                event: "Open".into(),
                ..Default::default()
            },
        ))
        .await
        .expect("list")
        .into_inner()
        .games;
    assert_eq!(listed.len(), 1);
    assert_ne!(listed[0].status, pb::GameStatus::Finished as i32);
    assert_eq!(listed[0].result, pb::GameResult::Unspecified as i32);
    assert_eq!(unfinished_listed(&api, "view").await, 1);
}

/// A viewer cannot start a WatchGame past the last event it sees: right after the game
/// finished, its final seq is OUT_OF_RANGE for the public (before, a stream opened there
/// ended at once, which told the viewer that the game was over and its last seq). A
/// viewer following the game hears the end when the final event is public, and one who
/// comes at the final seq after that gets the end at once.
#[tokio::test(start_paused = true)]
async fn a_viewer_hears_of_the_end_when_the_public_does() {
    let api = api();
    game_with_a_move(&api).await;
    let (last, finished) = finish(&api).await;
    let open = |token: &'static str, from_seq| {
        let api = api.clone();
        async move {
            api.watch_game(req(
                token,
                pb::WatchGameRequest {
                    game_id: "g".into(),
                    from_seq,
                },
            ))
            .await
        }
    };
    let Err(e) = open("view", last).await else {
        panic!("a seq the viewer has not seen yet was accepted");
    };
    assert_eq!(e.code(), tonic::Code::OutOfRange);
    assert!(e.message().contains("(seq 1)"), "{}", e.message());
    let _ = open("arb", last).await.expect("the arbiter has seen it");
    let mut s = open("view", 1).await.expect("watch").into_inner();
    let mut seen = 1;
    while let Some(e) = s.next().await {
        seen = e.expect("an event").seq;
    }
    assert_eq!(seen, last, "every event, then the end");
    assert_eq!(
        finished.elapsed(),
        Duration::from_millis(DELAY),
        "when the final event is public"
    );
    let now = Instant::now();
    let mut s = open("view", last)
        .await
        .expect("public by now")
        .into_inner();
    assert!(s.next().await.is_none());
    assert_eq!(now.elapsed(), Duration::ZERO, "at once");
}

/// A viewer acting for a player is refused without being told whose turn it is (the
/// side to move is live; the viewer sees the game behind its delay); an unknown game is
/// still NOT_FOUND.
#[tokio::test(start_paused = true)]
async fn a_refused_viewer_is_not_told_the_side_to_move() {
    let api = api();
    game_with_a_move(&api).await;
    let submit = |game: &str| {
        api.submit_move(req(
            "view",
            pb::SubmitMoveRequest {
                game_id: game.into(),
                r#move: "f6-g5".into(),
                ..Default::default()
            },
        ))
    };
    let e = submit("g").await.expect_err("refused");
    assert_eq!(e.code(), tonic::Code::PermissionDenied);
    let m = e.message().to_lowercase();
    assert!(
        !m.contains("black") && !m.contains("white"),
        "names no side: {}",
        e.message()
    );
    assert_eq!(
        submit("nope").await.expect_err("refused").code(),
        tonic::Code::NotFound
    );
}

/// WatchEvent: a `resume_from` entry or a cursor past the last event the caller can see
/// of a game is OUT_OF_RANGE, naming the field and the game, as WatchGame's `from_seq` is
/// (before, the stream opened and waited in silence for the game to reach it), on the
/// public's shared feed ("view") and on a player's per-game stream of the same round
/// ("other", a player of another game: this one is public for them). The arbiter, who
/// sees the game live, resumes there; the request-wide `from_seq` is not checked (games
/// of a round differ in length).
#[tokio::test(start_paused = true)]
async fn a_resume_point_past_what_the_caller_sees_is_out_of_range() {
    let api = api();
    game_with_a_move(&api).await;
    let live = api
        .get_game(req(
            "arb",
            pb::GetGameRequest {
                game_id: "g".into(),
            },
        ))
        .await
        .expect("get")
        .into_inner()
        .last_seq;
    assert!(live > 1, "the start and the move are recorded");
    let open = |token: &'static str, r: pb::WatchEventRequest| {
        let api = api.clone();
        async move {
            api.watch_event(req(
                token,
                pb::WatchEventRequest {
                    event: "Open".into(),
                    round: "1".into(),
                    ..r
                },
            ))
            .await
        }
    };
    let resume = |seq| pb::WatchEventRequest {
        resume_from: [("g".to_string(), seq)].into(),
        ..Default::default()
    };
    for public in ["view", "other"] {
        let Err(e) = open(public, resume(live)).await else {
            panic!("{public}: a seq it has not seen was accepted");
        };
        assert_eq!(e.code(), tonic::Code::OutOfRange, "{public}");
        assert_eq!(
            e.message(),
            format!("resume_from[\"g\"] {live}: past the last event of game g (seq 1)"),
            "{public}"
        );
        open(public, resume(1))
            .await
            .unwrap_or_else(|e| panic!("{public}: what it has seen: {e}"));
        open(
            public,
            pb::WatchEventRequest {
                from_seq: live,
                ..Default::default()
            },
        )
        .await
        .unwrap_or_else(|e| panic!("{public}: from_seq is request-wide: {e}"));
    }
    open("arb", resume(live)).await.expect("the arbiter saw it");
    let Err(e) = open("arb", resume(live + 1)).await else {
        panic!("a seq not recorded yet was accepted");
    };
    assert_eq!(e.code(), tonic::Code::OutOfRange);
    // The arbiter's cursor after the live last event, handed to a viewer.
    let mut s = open("arb", pb::WatchEventRequest::default())
        .await
        .expect("watch")
        .into_inner();
    let cursor = loop {
        let e = s.next().await.expect("a message").expect("an event");
        if e.seq == live {
            break e.cursor.clone();
        }
    };
    open(
        "arb",
        pb::WatchEventRequest {
            from_cursor: cursor.clone(),
            ..Default::default()
        },
    )
    .await
    .expect("the arbiter resumes on its cursor");
    let Err(e) = open(
        "view",
        pb::WatchEventRequest {
            from_cursor: cursor,
            ..Default::default()
        },
    )
    .await
    else {
        panic!("an arbiter's cursor past the public's last event was accepted");
    };
    assert_eq!(e.code(), tonic::Code::OutOfRange);
    assert!(
        e.message().starts_with("from_cursor[\"g\"]"),
        "{}",
        e.message()
    );
}

/// WatchEvent of a board or a player of the event: the games of its place live, the
/// others behind their delay, on one stream (its round's feed of its view). The board of
/// game g sees g's move at once and h's after the delay; the player of h the other way
/// round; the viewer both after the delay.
#[tokio::test(start_paused = true)]
async fn a_boards_round_stream_has_its_own_game_live_and_the_others_delayed() {
    let api = api();
    for (id, board) in [("g", 1), ("h", 2)] {
        started(&api, id, board, "10m").await;
    }
    let (board, other, view) = (
        round_one(&api, "board").await,
        round_one(&api, "other").await,
        round_one(&api, "view").await,
    );
    let made = Instant::now();
    for (token, id) in [("white", "g"), ("other", "h")] {
        api.submit_move(req(
            token,
            pb::SubmitMoveRequest {
                game_id: id.into(),
                r#move: "c3-d4".into(),
                ..Default::default()
            },
        ))
        .await
        .expect("move");
    }
    let (board, other, view) = tokio::join!(
        moves_at(board, made),
        moves_at(other, made),
        moves_at(view, made)
    );
    let delay = Duration::from_millis(DELAY);
    let at = |id: &str, d: Duration| (id.to_string(), d);
    assert_eq!(
        board,
        [at("g", Duration::ZERO), at("h", delay)],
        "the board of g"
    );
    assert_eq!(
        other,
        [at("h", Duration::ZERO), at("g", delay)],
        "the player of h"
    );
    assert_eq!(view.len(), 2);
    assert!(
        view.iter().all(|(_, d)| *d == delay),
        "the viewer: {view:?}"
    );
}

/// Each game's first two moves on a round stream, in the order they arrive, with how long
/// after `made` each came.
async fn moves_at(
    mut s: impl tokio_stream::Stream<Item = Result<impl Into<pb::GameEvent>, tonic::Status>> + Unpin,
    made: Instant,
) -> Vec<(String, Duration)> {
    let mut seen = Vec::new();
    while seen.len() < 2 {
        let e: pb::GameEvent = s.next().await.expect("open").expect("event").into();
        if matches!(e.kind, Some(pb::game_event::Kind::MovePlayed(_))) {
            seen.push((e.game_id.clone(), made.elapsed()));
        }
    }
    seen
}
