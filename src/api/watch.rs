//! Watch streams: every event with `seq > from_seq` in order, then the live ones, with no
//! gap and no duplicate. The live subscription is taken before the history is read, and
//! anything already sent is skipped by seq; a watcher that falls behind the live channel
//! re-reads the missed events from the store.

use std::sync::Arc;

use async_stream::try_stream;
use tokio::sync::broadcast::error::RecvError;
use tokio_stream::Stream;
use tonic::Status;

use super::convert::event_pb;
use super::pb;
use super::service::status;
use crate::game::GameEvent;
use crate::hub::{GameHandle, Registry};

async fn stored_after(
    registry: &Registry,
    handle: &GameHandle,
    after: u64,
) -> Result<Vec<GameEvent>, Status> {
    let rows = registry
        .store()
        .load(&handle.meta.id, after + 1)
        .await
        .map_err(|e| status(&e.into()))?;
    rows.iter()
        .map(|r| {
            serde_json::from_slice(&r.payload)
                .map_err(|e| Status::data_loss(format!("event {}: {e}", r.seq)))
        })
        .collect()
}

/// One game's events after `from_seq`, then live; counted in the watchers gauge while
/// the stream is open.
pub fn watch(
    registry: Arc<Registry>,
    handle: Arc<GameHandle>,
    from_seq: u64,
) -> impl Stream<Item = Result<pb::GameEvent, Status>> + Send {
    let open = registry.metrics().watcher();
    tokio_stream::StreamExt::map(game_events(registry, handle, from_seq), move |item| {
        let _still_open = &open;
        item
    })
}

fn game_events(
    registry: Arc<Registry>,
    handle: Arc<GameHandle>,
    from_seq: u64,
) -> impl Stream<Item = Result<pb::GameEvent, Status>> + Send {
    try_stream! {
        let mut live = handle.subscribe();
        let id = handle.meta.id.clone();
        let mut last = from_seq;
        for e in stored_after(&registry, &handle, last).await? {
            last = e.seq;
            yield event_pb(&e, &id);
        }
        loop {
            match live.recv().await {
                Ok(e) => {
                    if e.seq <= last {
                        continue;
                    }
                    if e.seq > last + 1 {
                        for missed in stored_after(&registry, &handle, last).await? {
                            if missed.seq < e.seq {
                                yield event_pb(&missed, &id);
                            }
                        }
                    }
                    last = e.seq;
                    yield event_pb(&e, &id);
                }
                Err(RecvError::Lagged(_)) => {
                    for missed in stored_after(&registry, &handle, last).await? {
                        last = missed.seq;
                        yield event_pb(&missed, &id);
                    }
                }
                Err(RecvError::Closed) => break,
            }
        }
    }
}

/// Several games' streams merged (a round on one stream), each in its own order; one
/// watcher in the gauge.
pub fn watch_many(
    registry: Arc<Registry>,
    games: Vec<(Arc<GameHandle>, u64)>,
) -> impl Stream<Item = Result<pb::GameEvent, Status>> + Send {
    let open = registry.metrics().watcher();
    let mut map = tokio_stream::StreamMap::new();
    for (i, (handle, from)) in games.into_iter().enumerate() {
        map.insert(i, Box::pin(game_events(registry.clone(), handle, from)));
    }
    tokio_stream::StreamExt::map(map, move |(_, item)| {
        let _still_open = &open;
        item
    })
}
