//! Watch streams over the hub's watchers: every event with `seq > from_seq` in order, then
//! the live ones, with no gap and no duplicate; a `Resync` with the whole game when the
//! watcher fell behind; the end after the game's final event, and `UNAVAILABLE "server
//! shutting down"` at shutdown.

use std::sync::Arc;

use async_stream::stream;
use tokio_stream::Stream;
use tonic::Status;

use super::auth::{Role, audience};
use super::convert::{event_pb, resync_pb};
use super::error::Refusal;
use super::error::status;
use super::frame::{Encoded, EventFrame};
use super::pb;
use crate::hub::metrics::{Metrics, WatchKind};
use crate::hub::{
    Audience, GameHandle, GameMeta, Hub, HubError, Published, Watch, WatchEnd, WatchItem,
    WatchPermit,
};

/// The next message of a watch as the API sends it; `None` at the end.
pub(super) async fn next_pb(watch: &mut Watch) -> Option<Result<pb::GameEvent, Status>> {
    let item = watch.next().await?;
    message(watch, item, |e, meta| event_pb(e, meta))
}

/// The next message of a game's own stream (WatchGame) as the API sends it: an event as
/// the message every such stream of the game sends, encoded once ([`shared_event`]).
async fn next_frame(watch: &mut Watch) -> Option<Result<EventFrame, Status>> {
    let item = watch.next().await?;
    message(watch, item, |e, meta| {
        EventFrame::Shared(shared_event(e, meta))
    })
}

/// A watch's item as a message, its events made by `event`; `None` at the end.
fn message<T: From<pb::GameEvent>>(
    watch: &Watch,
    item: Result<WatchItem, HubError>,
    event: impl FnOnce(&Published, &Arc<GameMeta>) -> T,
) -> Option<Result<T, Status>> {
    let meta = watch.game().meta();
    match item {
        Ok(WatchItem::Event(e)) => Some(Ok(event(&e, meta))),
        Ok(WatchItem::Resync(snap)) => Some(Ok(resync_pb(meta, &snap).into())),
        Ok(WatchItem::End(WatchEnd::Finished)) => None,
        Ok(WatchItem::End(WatchEnd::ShuttingDown)) => Some(Err(status(&HubError::ShuttingDown))),
        Err(e) => Some(Err(status(&e))),
    }
}

/// `p` as its game's streams send it, converted and encoded by the first of them: a
/// move watched by 100 displays is one message encoded once, each stream copying its
/// bytes. Kept with the game's metadata it was made with; another's gets its own.
pub(super) fn shared_event(p: &Published, meta: &Arc<GameMeta>) -> Arc<Encoded> {
    type Made = (Arc<GameMeta>, Arc<Encoded>);
    let made = p
        .wire
        .get_or_init(|| Box::new((meta.clone(), Encoded::new(event_pb(p, meta)))));
    match made.downcast_ref::<Made>() {
        Some((with, encoded)) if Arc::ptr_eq(with, meta) => encoded.clone(),
        _ => Encoded::new(event_pb(p, meta)),
    }
}

/// Counts a message to a watcher: a delivery (a PDN stream counts its texts, not the
/// events behind them) and a resync.
pub(super) fn count(metrics: &Metrics, kind: WatchKind, e: &pb::GameEvent) {
    if kind != WatchKind::PdnStream {
        metrics.delivered(kind);
    }
    if matches!(e.kind, Some(pb::game_event::Kind::Resync(_))) {
        metrics.resynced();
    }
}

/// One game's stream; counted in the watchers gauge while open.
pub fn watch(
    metrics: &Arc<Metrics>,
    mut watch: Watch,
) -> impl Stream<Item = Result<EventFrame, Status>> + Send + use<> {
    let open = metrics.watcher(WatchKind::Game);
    let metrics = metrics.clone();
    stream! {
        let _open = open;
        while let Some(item) = next_frame(&mut watch).await {
            let failed = item.is_err();
            if let Ok(e) = &item {
                count(&metrics, WatchKind::Game, e);
            }
            yield item;
            if failed {
                break;
            }
        }
    }
}

/// The last seq of game `handle` as `audience` sees it (for the public of a delayed game,
/// the last event already public) when `from` is past it: a resume point the caller
/// cannot have reached, refused rather than waited for in silence. Seqs only grow, so
/// one that passes here still passes when the watch registers.
///
/// # Errors
/// The game's task gone (shutdown).
pub(super) async fn past_last(
    handle: &GameHandle,
    audience: Audience,
    from: u64,
) -> Result<Option<u64>, Status> {
    if from == 0 {
        return Ok(None);
    }
    let last = handle
        .read_as(audience, |s, _| s.last_seq())
        .await
        .map_err(|e| status(&e))?;
    Ok((from > last).then_some(last))
}

/// `OUT_OF_RANGE` for a resume point past the last event of game `id` the caller can
/// see (`what` names the request's field and, for a map, its key).
pub(super) fn out_of_range(what: &str, from: u64, id: &str, last: u64) -> Status {
    Refusal::PastEnd(format!(
        "{what} {from}: past the last event of game {id} (seq {last})"
    ))
    .into()
}

/// Where a round stream starts a game: after `seq`, and whether the caller said so for
/// this game (a `resume_from` entry or a cursor, named in `field`) rather than through
/// the request-wide `from_seq`.
#[derive(Debug, Clone, Copy)]
pub(super) struct Resume {
    pub seq: u64,
    pub field: Option<&'static str>,
}

impl Resume {
    /// Refuses a resume point the caller gave for game `id` past the last event `role`
    /// can see of it (the request-wide `from_seq` is not checked: games of a round differ
    /// in length). A game found quarantined is left to the stream, which leaves it out.
    ///
    /// # Errors
    /// `OUT_OF_RANGE`; the game failing to load.
    pub(super) async fn check(&self, hub: &Arc<Hub>, role: &Role, id: &str) -> Result<(), Status> {
        let Some(field) = self.field.filter(|_| self.seq > 0) else {
            return Ok(());
        };
        let Some(handle) = loaded(hub, id).await? else {
            return Ok(());
        };
        match past_last(&handle, audience(role, handle.meta()), self.seq).await? {
            Some(last) => Err(out_of_range(
                &format!("{field}[{id:?}]"),
                self.seq,
                id,
                last,
            )),
            None => Ok(()),
        }
    }
}

/// A round stream's game, loaded if need be; `None` for one found quarantined (left out
/// of the stream).
///
/// # Errors
/// The game failing to load otherwise.
pub(super) async fn loaded(hub: &Arc<Hub>, id: &str) -> Result<Option<GameHandle>, Status> {
    match hub.game(id).await {
        Ok(h) => Ok(Some(h)),
        Err(HubError::Quarantined { .. }) => Ok(None),
        Err(e) => Err(status(&e)),
    }
}

/// A round stream's watch of a game, as `role` may see it, after `from`; `None` for a
/// game found quarantined as it loads (left out of the stream). With `permit`, in the
/// place the stream already holds among the game's watchers (no second one taken).
pub(super) async fn join(
    hub: &Arc<Hub>,
    role: &Role,
    id: &str,
    from: u64,
    permit: Option<&WatchPermit>,
) -> Result<Option<Watch>, Status> {
    let Some(handle) = loaded(hub, id).await? else {
        return Ok(None);
    };
    let audience = audience(role, handle.meta());
    match permit {
        Some(permit) => handle.watch_in(permit, audience, from).await,
        None => handle.watch_as(audience, from).await,
    }
    .map(Some)
    .map_err(|e| status(&e))
}

#[cfg(test)]
mod tests {
    use chrono::{TimeZone, Utc};

    use super::*;
    use crate::game::{Actor, EventKind, EventNote, GameEvent, Now};

    fn started(seq: u64) -> Published {
        Published::new(
            GameEvent {
                seq,
                at: Now {
                    mono_ms: 1_000 + seq,
                    wall: Utc.timestamp_millis_opt(1_700_000_000_000).unwrap(),
                },
                actor: Actor::System,
                rule: None,
                kind: EventKind::GameStarted,
                board_ms: None,
            },
            EventNote::default(),
            crate::rules::Variant::Russian,
        )
    }

    fn meta(id: &str) -> Arc<GameMeta> {
        Arc::new(GameMeta {
            id: id.into(),
            ..GameMeta::default()
        })
    }

    /// The watchers of a game share one encoding of each event, and it is the event's
    /// own message; a watcher of another game's metadata gets a message of its own.
    #[test]
    fn a_games_watchers_share_one_encoding_of_an_event() {
        let (p, g1) = (started(2), meta("g1"));
        let first = shared_event(&p, &g1);
        let second = shared_event(&p, &g1);
        assert!(Arc::ptr_eq(&first, &second));
        assert_eq!(first.message(), &event_pb(&p, &g1));
        // The same event under other metadata (never so in the hub: one game's task
        // publishes it) is converted anew, not taken from the first.
        let other = shared_event(&p, &meta("g2"));
        assert!(!Arc::ptr_eq(&first, &other));
        assert_eq!(other.message().game_id, "g2");
        assert_eq!(shared_event(&p, &g1).message().game_id, "g1");
        // A copy of the event starts without an encoding (and equals the original).
        let copy = p.clone();
        assert_eq!(copy, p);
        assert!(!Arc::ptr_eq(&shared_event(&copy, &g1), &first));
    }
}
