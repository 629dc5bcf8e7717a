//! Watch streams over the hub's watchers: every event with `seq > from_seq` in order, then
//! the live ones, with no gap and no duplicate; a `Resync` with the whole game when the
//! watcher fell behind; the end after the game's final event, and `UNAVAILABLE "server
//! shutting down"` at shutdown.

use std::sync::Arc;

use async_stream::stream;
use tokio_stream::Stream;
use tonic::Status;

use super::convert::{event_pb, resync_pb};
use super::error::status;
use super::pb;
use crate::hub::metrics::Metrics;
use crate::hub::{HubError, Watch, WatchEnd, WatchItem};

/// The next message of a watch as the API sends it; `None` at the end.
pub(super) async fn next_pb(watch: &mut Watch) -> Option<Result<pb::GameEvent, Status>> {
    match watch.next().await? {
        Ok(WatchItem::Event(e)) => Some(Ok(event_pb(&e, watch.game().meta()))),
        Ok(WatchItem::Resync(snap)) => Some(Ok(resync_pb(watch.game().meta(), &snap))),
        Ok(WatchItem::End(WatchEnd::Finished)) => None,
        Ok(WatchItem::End(WatchEnd::ShuttingDown)) => Some(Err(status(&HubError::ShuttingDown))),
        Err(e) => Some(Err(status(&e))),
    }
}

/// One game's stream; counted in the watchers gauge while open.
pub fn watch(
    metrics: &Arc<Metrics>,
    mut watch: Watch,
) -> impl Stream<Item = Result<pb::GameEvent, Status>> + Send + use<> {
    let open = metrics.watcher();
    stream! {
        let _open = open;
        while let Some(item) = next_pb(&mut watch).await {
            let failed = item.is_err();
            yield item;
            if failed {
                break;
            }
        }
    }
}

/// Several games on one stream (a round), each in its own order; one watcher in the
/// gauge. It ends when every game on it has finished, or with the first error (at
/// shutdown: UNAVAILABLE).
pub fn watch_many(
    metrics: &Arc<Metrics>,
    watches: Vec<Watch>,
) -> impl Stream<Item = Result<pb::GameEvent, Status>> + Send + use<> {
    let open = metrics.watcher();
    let mut map = tokio_stream::StreamMap::new();
    for (i, mut w) in watches.into_iter().enumerate() {
        map.insert(
            i,
            Box::pin(stream! {
                while let Some(item) = next_pb(&mut w).await {
                    yield item;
                }
            }),
        );
    }
    stream! {
        let _open = open;
        while let Some((_, item)) = tokio_stream::StreamExt::next(&mut map).await {
            let failed = item.is_err();
            yield item;
            if failed {
                break;
            }
        }
    }
}
