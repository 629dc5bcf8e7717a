//! Standings on the round stream (issue 41): a tournament's WatchEvent carries the
//! standings once it has caught up and after every result that changes them (a finished
//! game, an arbiter's correction, a new round paired), in order after the game's final
//! event; a whole-event stream stays open between rounds and ends once the tournament is
//! over; a delayed public sees standings only as the delayed results allow.

use std::time::{Duration, Instant};

use draughts_arbiter::api::pb;
use draughts_arbiter::api::pb::arbiter_service_client::ArbiterServiceClient;
use draughts_arbiter::api::pb::broadcast_service_client::BroadcastServiceClient;
use draughts_arbiter::api::pb::game_event::Kind;
use draughts_arbiter::api::pb::tournament_service_client::TournamentServiceClient;
use tokio_stream::StreamExt;
use tonic::transport::Channel;
use tonic::{Request, Streaming};

use crate::common::server::TestServer;

const EVENT: &str = "Standings Open";

const CONFIG: &str = "[[tokens]]\ntoken = \"chief\"\nrole = \"arbiter\"\nevent = \"Standings Open\"\n\
     [[tokens]]\ntoken = \"fan\"\nrole = \"viewer\"\n\
     [[tokens]]\ntoken = \"board1\"\nrole = \"board\"\nevent = \"Standings Open\"\nboard = 1\n";

fn req<T>(token: &str, msg: T) -> Request<T> {
    let mut r = Request::new(msg);
    r.metadata_mut().insert(
        "authorization",
        format!("Bearer {token}").parse().expect("header"),
    );
    r
}

/// A 4-player round-robin (3 rounds), 2 / 1 / 0, no default time; `delay_ms` public delay.
async fn tournament(ch: &Channel, delay_ms: u64) {
    let mut t = TournamentServiceClient::new(ch.clone());
    t.create_tournament(req(
        "chief",
        pb::CreateTournamentRequest {
            name: EVENT.into(),
            variant: pb::Variant::Russian as i32,
            system: pb::TournamentSystem::RoundRobin as i32,
            time_control: "10m".into(),
            default_time_ms: Some(0),
            settings: Some(pb::GameSettings {
                broadcast_delay_ms: Some(delay_ms),
                ..Default::default()
            }),
            ..Default::default()
        },
    ))
    .await
    .expect("created");
    let players = ["Abaturov", "Borisov", "Chizhov", "Dolgov"]
        .iter()
        .map(|n| pb::Player {
            name: (*n).into(),
            rating: 2300,
            ..Default::default()
        })
        .collect();
    t.add_players(req(
        "chief",
        pb::AddPlayersRequest {
            tournament: EVENT.into(),
            players,
        },
    ))
    .await
    .expect("players");
}

/// Pairs and starts round `n`; its game ids in board order.
async fn round(ch: &Channel, n: u32) -> Vec<String> {
    let mut t = TournamentServiceClient::new(ch.clone());
    let paired = t
        .pair_round(req(
            "chief",
            pb::PairRoundRequest {
                tournament: EVENT.into(),
                round: n,
                ..Default::default()
            },
        ))
        .await
        .expect("paired")
        .into_inner();
    t.start_round(req(
        "chief",
        pb::StartRoundRequest {
            tournament: EVENT.into(),
            round: n,
        },
    ))
    .await
    .expect("started");
    paired
        .pairings
        .iter()
        .flat_map(|p| p.game_ids.iter().cloned())
        .collect()
}

async fn declare(ch: &Channel, game: &str, result: pb::GameResult) {
    ArbiterServiceClient::new(ch.clone())
        .declare_result(req(
            "chief",
            pb::DeclareResultRequest {
                game_id: game.into(),
                result: result as i32,
                explanation: "result reported and signed by both players".into(),
                ..Default::default()
            },
        ))
        .await
        .expect("declared");
}

async fn watch(ch: &Channel, token: &str, round: &str) -> Streaming<pb::GameEvent> {
    BroadcastServiceClient::new(ch.clone())
        .watch_event(req(
            token,
            pb::WatchEventRequest {
                event: EVENT.into(),
                round: round.into(),
                ..Default::default()
            },
        ))
        .await
        .expect("watch")
        .into_inner()
}

/// The next message (10 s at most); `None` when the stream ended with OK.
async fn next(s: &mut Streaming<pb::GameEvent>) -> Option<pb::GameEvent> {
    tokio::time::timeout(Duration::from_secs(10), s.next())
        .await
        .expect("a message or the end within 10 s")
        .map(|m| m.expect("no error"))
}

/// Messages up to and including the next standings message.
async fn until_standings(
    s: &mut Streaming<pb::GameEvent>,
) -> (Vec<pb::GameEvent>, pb::StandingsUpdated) {
    let mut before = Vec::new();
    loop {
        let e = next(s).await.expect("standings before the end");
        if let Some(Kind::StandingsUpdated(u)) = e.kind {
            assert_eq!(e.seq, 0, "standings are no event of a game");
            assert!(e.game_id.is_empty());
            assert!(!e.cursor.is_empty(), "standings carry the stream's cursor");
            assert!(
                e.description.starts_with("standings of Standings Open"),
                "{}",
                e.description
            );
            return (before, u);
        }
        before.push(e);
    }
}

/// Points by player name.
fn points(u: &pb::StandingsUpdated) -> Vec<(String, f64)> {
    let s = u.standings.as_ref().expect("standings");
    s.rows
        .iter()
        .map(|r| (r.player.as_ref().expect("player").name.clone(), r.points))
        .collect()
}

fn points_of(u: &pb::StandingsUpdated, name: &str) -> f64 {
    points(u)
        .into_iter()
        .find(|(n, _)| n == name)
        .map_or_else(|| panic!("{name} in the standings"), |(_, p)| p)
}

fn finished_game(e: &pb::GameEvent) -> bool {
    matches!(e.kind, Some(Kind::GameFinished(_)))
}

/// The white player's name of a game (from its GameCreated on a stream).
fn names(events: &[pb::GameEvent]) -> std::collections::HashMap<String, (String, String)> {
    events
        .iter()
        .filter_map(|e| match &e.kind {
            Some(Kind::GameCreated(c)) => Some((
                e.game_id.clone(),
                (
                    c.white.as_ref().expect("white").name.clone(),
                    c.black.as_ref().expect("black").name.clone(),
                ),
            )),
            _ => None,
        })
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn standings_ride_the_round_stream_and_the_event_stream_stays_open_between_rounds() {
    let server = TestServer::start(CONFIG).await;
    let ch = server.channel.clone();
    tournament(&ch, 0).await;
    let r1 = round(&ch, 1).await;
    assert_eq!(r1.len(), 2);

    let mut event = watch(&ch, "fan", "").await;
    let mut round1 = watch(&ch, "chief", "1").await;
    // Caught up (each game's created and started), then the standings: nobody has a point.
    let (caught, first) = until_standings(&mut event).await;
    let players = names(&caught);
    assert_eq!(players.len(), 2, "both games of round 1 first: {caught:?}");
    assert_eq!(first.tournament, EVENT);
    assert!(!first.finished);
    let s = first.standings.as_ref().expect("standings");
    assert_eq!(s.round, 1);
    assert_eq!(s.rows.len(), 4);
    assert!(points(&first).iter().all(|(_, p)| *p == 0.0));
    let (_, first_round) = until_standings(&mut round1).await;
    assert_eq!(first_round, first, "the arbiter sees the same standings");

    // Board 1: White wins. The game's final event, then the standings after it.
    let (w1, b1) = players[&r1[0]].clone();
    declare(&ch, &r1[0], pb::GameResult::WhiteWins).await;
    for s in [&mut event, &mut round1] {
        let (before, after) = until_standings(s).await;
        let last = before.last().expect("the game's events first");
        assert!(finished_game(last) && last.game_id == r1[0], "{last:?}");
        assert_eq!(points_of(&after, &w1), 2.0, "T 7: a win is 2");
        assert_eq!(points_of(&after, &b1), 0.0);
        assert_eq!(
            after.standings.as_ref().expect("s").rows[0]
                .player
                .as_ref()
                .expect("p")
                .name,
            w1
        );
    }
    // Board 2 drawn: the round's stream sends the standings, then ends; the event's
    // stream stays open.
    let (w2, b2) = players[&r1[1]].clone();
    declare(&ch, &r1[1], pb::GameResult::Draw).await;
    let (_, after) = until_standings(&mut round1).await;
    assert_eq!(points_of(&after, &w2), 1.0);
    assert_eq!(points_of(&after, &b2), 1.0);
    let end = next(&mut round1).await;
    assert!(
        end.is_none(),
        "the round's stream ends after its round: {end:?}"
    );
    let (_, same) = until_standings(&mut event).await;
    assert_eq!(same, after);
    assert!(
        tokio::time::timeout(Duration::from_millis(700), event.next())
            .await
            .is_err(),
        "the event's stream stays open between rounds"
    );

    // An arbiter's correction of board 1 (a draw after all) updates the standings.
    declare(&ch, &r1[0], pb::GameResult::Draw).await;
    let (_, corrected) = until_standings(&mut event).await;
    assert_eq!(points_of(&corrected, &w1), 1.0, "{:?}", points(&corrected));
    assert_eq!(points_of(&corrected, &b1), 1.0);

    // Round 2 paired: its games join the stream, the standings say round 2.
    let r2 = round(&ch, 2).await;
    let mut joined = std::collections::HashSet::new();
    let mut round_two = false;
    while joined.len() < 2 || !round_two {
        let e = next(&mut event).await.expect("round 2 on the stream");
        match &e.kind {
            Some(Kind::GameCreated(_)) => {
                joined.insert(e.game_id.clone());
            }
            Some(Kind::StandingsUpdated(u)) => {
                round_two |= u.standings.as_ref().expect("s").round == 2;
            }
            _ => {}
        }
    }
    assert_eq!(joined, r2.iter().cloned().collect());

    // Rounds 2 and 3 played out: the final standings, then the end.
    for g in &r2 {
        declare(&ch, g, pb::GameResult::BlackWins).await;
    }
    let r3 = round(&ch, 3).await;
    for g in &r3 {
        declare(&ch, g, pb::GameResult::WhiteWins).await;
    }
    let mut last = None;
    while let Some(e) = next(&mut event).await {
        if let Some(Kind::StandingsUpdated(u)) = e.kind {
            last = Some(u);
        }
    }
    let last = last.expect("final standings");
    assert!(
        last.finished,
        "the last standings say the tournament is over"
    );
    let s = last.standings.as_ref().expect("s");
    assert_eq!(s.round, 3);
    let total: f64 = s.rows.iter().map(|r| r.points).sum();
    assert_eq!(total, 12.0, "6 games, 2 points each");
    assert!(s.rows.iter().all(|r| r.games == 3));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_delayed_public_sees_standings_only_as_the_results_become_public() {
    const DELAY: Duration = Duration::from_millis(1_500);
    let server = TestServer::start(CONFIG).await;
    let ch = server.channel.clone();
    tournament(&ch, DELAY.as_millis() as u64).await;
    let r1 = round(&ch, 1).await;
    let mut public = watch(&ch, "fan", "1").await;
    let mut arbiter = watch(&ch, "chief", "1").await;
    let (_, first) = until_standings(&mut public).await;
    assert!(points(&first).iter().all(|(_, p)| *p == 0.0));
    let (_, _) = until_standings(&mut arbiter).await;

    let declared = Instant::now();
    declare(&ch, &r1[0], pb::GameResult::WhiteWins).await;
    // The arbiter: at once.
    let (before, live) = until_standings(&mut arbiter).await;
    assert!(before.last().is_some_and(finished_game));
    assert!(
        declared.elapsed() < DELAY,
        "the arbiter's standings at once"
    );
    assert!(points(&live).iter().any(|(_, p)| *p == 2.0));
    // Meanwhile the public's standings show nothing of it.
    let shown = TournamentServiceClient::new(ch.clone())
        .get_standings(req(
            "fan",
            pb::GetStandingsRequest {
                tournament: EVENT.into(),
                round: 0,
            },
        ))
        .await
        .expect("standings")
        .into_inner();
    assert!(
        shown.rows.iter().all(|r| r.points == 0.0),
        "held back: {shown:?}"
    );
    // The public: the result's final event after the delay, the standings right after.
    let (before, public_after) = until_standings(&mut public).await;
    let waited = declared.elapsed();
    assert!(
        waited >= DELAY - Duration::from_millis(50),
        "the public's standings only after the delay: {waited:?}"
    );
    let finish = before.last().expect("the game's events first");
    assert!(
        finished_game(finish) && finish.game_id == r1[0],
        "{finish:?}"
    );
    assert_eq!(
        points(&public_after),
        points(&live),
        "the same standings, {DELAY:?} later"
    );
}

/// A board's stream of its round: its own game live (the result's final event at once),
/// the standings as the public has them (GetStandings gives a board the same), so after
/// the delay.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_boards_stream_has_its_game_live_and_the_publics_standings() {
    const DELAY: Duration = Duration::from_millis(1_500);
    let server = TestServer::start(CONFIG).await;
    let ch = server.channel.clone();
    tournament(&ch, DELAY.as_millis() as u64).await;
    let r1 = round(&ch, 1).await;
    assert!(r1[0].ends_with("-b1"), "board 1 first: {r1:?}");
    let mut board = watch(&ch, "board1", "1").await;
    let (_, first) = until_standings(&mut board).await;
    assert!(points(&first).iter().all(|(_, p)| *p == 0.0));

    let declared = Instant::now();
    declare(&ch, &r1[0], pb::GameResult::WhiteWins).await;
    let finish = loop {
        let e = next(&mut board).await.expect("the result");
        assert!(
            !matches!(e.kind, Some(Kind::StandingsUpdated(_))),
            "no standings before the result is public: {e:?}"
        );
        if finished_game(&e) {
            break e;
        }
    };
    assert_eq!(finish.game_id, r1[0]);
    assert!(declared.elapsed() < DELAY, "its own game at once");
    let (_, after) = until_standings(&mut board).await;
    assert!(
        declared.elapsed() >= DELAY - Duration::from_millis(50),
        "the public's standings, after the delay: {:?}",
        declared.elapsed()
    );
    assert!(points(&after).iter().any(|(_, p)| *p == 2.0), "{after:?}");
}
