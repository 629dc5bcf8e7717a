//! Flag precision: many running games whose flags fall close together, in-process on a
//! [`Hub`] over the memory store with nobody sending anything, so every flag is the game
//! task's own timer. Game `i` gets sudden death of `base + i * window / games` ms and
//! the games are started one after another as fast as they go, so the flags fall over
//! about `window` (plus the time the starts took). The exact flag instant is the
//! session's deadline right after its start; the recorded flag is the `GameEnded
//! { FlagFall }` event in the game's log, read afterwards; its lateness is the event's
//! `monotonic_ms` minus the deadline (whole milliseconds, as the log keeps them).

use std::sync::Arc;
use std::time::{Duration, Instant};

use super::stats::percentile_ms_f64;
use draughts_arbiter::clock::TimeControl;
use draughts_arbiter::game::{Actor, Command, EndReason, EventKind, GameEvent, GameSettings};
use draughts_arbiter::hub::{GameMeta, Hub};
use draughts_arbiter::rules::Variant;
use draughts_arbiter::store::{EventStore, MemoryStore, Stream};

/// The sizes of a flag run.
pub(super) struct FlagPlan {
    /// Games.
    pub games: usize,
    /// The first game's time, ms.
    pub base_ms: u64,
    /// The spread of the flags, ms.
    pub window_ms: u64,
}

/// Issue 11 item 6.
pub(super) async fn run(plan: &FlagPlan) -> Result<(), String> {
    let games = plan.games.max(1);
    let store = Arc::new(MemoryStore::new());
    let hub = Hub::new(store.clone(), false);
    let actor = Actor::Arbiter("bench".into());
    let mut handles = Vec::with_capacity(games);
    let began = Instant::now();
    for i in 0..games {
        let mut settings = GameSettings::new(Variant::Russian);
        settings.time_control = Some(TimeControl::sudden_death(
            plan.base_ms + i as u64 * plan.window_ms / games as u64,
        ));
        let meta = GameMeta {
            id: format!("f{i}"),
            event: "Bench".into(),
            round: "1".into(),
            board: i as u32 + 1,
            ..GameMeta::default()
        };
        handles.push(
            hub.create(meta, settings, None, actor.clone())
                .await
                .map_err(|e| format!("flags: create: {e}"))?,
        );
    }
    let created = began.elapsed();
    let starting = Instant::now();
    let mut deadlines = Vec::with_capacity(games);
    for h in &handles {
        let (_, deadline) = h
            .command(actor.clone(), Command::Start, None, |s, _| {
                s.next_deadline()
            })
            .await
            .map_err(|e| format!("flags: start: {e}"))?;
        deadlines.push(deadline.ok_or("flags: a started timed game has no deadline")?);
    }
    let started = starting.elapsed();
    let first = deadlines.iter().min().copied().unwrap_or(0);
    let last = deadlines.iter().max().copied().unwrap_or(0);
    let now = hub.now().mono_ms;
    if first <= now {
        tracing::warn!("flags: the first flag fell before every game had started");
    }
    // Until a second after the last flag.
    tokio::time::sleep(Duration::from_millis(last.saturating_sub(now) + 1000)).await;

    let mut lateness = Vec::with_capacity(games);
    let mut missing = 0;
    for (h, deadline) in handles.iter().zip(&deadlines) {
        let id = &h.meta().id;
        let rows = store
            .load(Stream::Game(id), 1)
            .await
            .map_err(|e| format!("flags: {id}: {e}"))?;
        let flag = rows.iter().rev().find_map(|r| {
            let e: GameEvent = serde_json::from_slice(&r.payload).ok()?;
            matches!(
                e.kind,
                EventKind::GameEnded {
                    reason: EndReason::FlagFall,
                    ..
                }
            )
            .then_some(e.at.mono_ms)
        });
        match flag {
            Some(at) => lateness.push(at as f64 - *deadline as f64),
            None => missing += 1,
        }
    }
    hub.shutdown().await;
    println!(
        "flags: {games} games created in {:.2} s, started in {:.2} s; flags due over {:.2} s \
         ({:.0} flags/s), nobody moving (memory store, in-process hub)",
        created.as_secs_f64(),
        started.as_secs_f64(),
        (last - first) as f64 / 1000.0,
        games as f64 / ((last - first) as f64 / 1000.0).max(1e-3)
    );
    println!(
        "flags: {} recorded, {missing} missing; lateness (recorded - exact instant) p50 {:.0} ms  p99 {:.0} ms  max {:.0} ms  \
         (target p99 <= 5 ms)",
        lateness.len(),
        percentile_ms_f64(&lateness, 0.50),
        percentile_ms_f64(&lateness, 0.99),
        percentile_ms_f64(&lateness, 1.0),
    );
    Ok(())
}
