//! Round feeds: one follower of a round per view, shared by every round stream
//! (WatchEvent, the HTTP PDN stream) on it. A view is an audience for every game (the
//! public, the arbiters), or a board's or a player's: its own game live, the others as
//! the public sees them ([`View`]). Every round stream runs on a feed.
//!
//! A round of 100 games followed by 10,000 displays used to hold a watcher of every game
//! per stream (a million queues, each event pushed to 10,000 of them), and converted each
//! event and worked out its cursor once per stream. A feed watches each game of the round
//! once, converts each event once, works out once where a stream that has seen everything
//! stands after it (its cursor), and publishes that on a broadcast channel.
//!
//! A stream keeps its own standing (the last seq sent of each game, in its order) and
//! takes from the feed what continues it: an event already sent is skipped, a gap is
//! filled from the game first. While its standing is the feed's, it sends the feed's
//! message as it is, encoded by the feed once for all of them (`frame.rs`); otherwise it
//! puts its own cursor in, and it is back in step as soon as its cursor equals the
//! feed's (the message on the wire is the same either way). A
//! stream that falls behind the channel catches up game by game: the live audience gets
//! each game's `Resync`, the public the events it missed from the log (a snapshot would
//! show it the game past the delay).
//!
//! A feed follows each game from where its audience stands when the feed starts, and the
//! games created in the round since from their start; it ends once every game on it has
//! finished, at shutdown, on the first error (every stream on it ends with it), or when
//! no stream has been on it for a while.

use std::collections::{HashMap, HashSet};
use std::pin::Pin;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use async_stream::stream;
use futures_util::stream::SelectAll;
use tokio::sync::{broadcast, watch};
use tokio_stream::{Stream, StreamExt};
use tonic::Status;

use super::auth::{Role, View};
use super::convert::resync_pb;
use super::cursor::Standing;
use super::error::status;
use super::feed_standings::Tracker;
use super::frame::{Encoded, EventFrame};
use super::pb;
use super::watch::{Resume, count, join, loaded, next_pb};
use crate::hub::metrics::WatchKind;
use crate::hub::{
    Audience, GameHandle, GameMeta, Hub, HubError, Snapshot, Tournaments, WatchPermit,
};
use crate::store::GameFilter;

/// How often an idle feed looks whether any stream is still on it.
const IDLE_CHECK: Duration = Duration::from_secs(1);

/// How long after a held-back result becomes public the feed reads the standings again
/// on its own. A result of a game on the feed comes sooner, with the game's final event
/// (the standings follow that event); this is for the others (a correction made after
/// the game's stream ended, a game of another round).
const REVEAL_GRACE_MS: i64 = 1_000;

/// What a feed follows: a round (empty: every round of the event) in one view.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
struct FeedKey {
    event: String,
    round: String,
    view: View,
}

impl FeedKey {
    fn filter(&self) -> GameFilter {
        GameFilter {
            event: Some(self.event.clone()),
            round: (!self.round.is_empty()).then(|| self.round.clone()),
            unfinished_only: false,
        }
    }

    /// Whose standings the feed sends: a board's or a player's view has the public's.
    fn standings_audience(&self) -> Audience {
        match self.view {
            View::All(audience) => audience,
            View::Own(_) => Audience::Public,
        }
    }
}

/// What a feed publishes.
#[derive(Debug)]
pub(super) struct FeedItem {
    /// The game's index in the feed's order.
    game: usize,
    game_id: Arc<str>,
    what: What<Arc<Encoded>>,
}

/// An item of a game's stream to its feed (`M`: the message without its cursor), and of
/// the feed to its streams (`M`: with the feed's cursor, encoded once for every stream
/// that sends it as it is).
#[derive(Debug)]
enum What<M> {
    /// The next event of the game, or its `Resync` (the feed fell behind it).
    Message { seq: u64, resync: bool, message: M },
    /// The game is over; its final event came before.
    End,
    /// The tournament's standings changed (`feed_standings`): of no game.
    Standings(M),
    /// The tournament is over and every game on the feed has ended: the streams of a
    /// whole-event feed, which stay open between rounds, end with this.
    Over,
    /// The feed stops: every stream on it ends with this.
    Failed(Status),
}

/// Where a feed stands: its games in its order, the last seq published of each, which
/// have ended.
#[derive(Debug, Clone)]
struct FeedState {
    standing: Standing,
    ids: Vec<Arc<str>>,
    ended: Vec<bool>,
    failed: Option<Status>,
    /// The tournament's standings as last published (none: not a tournament's event).
    standings: Option<Arc<Encoded>>,
    /// A whole-event feed of a tournament: it stays open between rounds, until the
    /// tournament is over.
    holds_open: bool,
}

impl FeedState {
    fn index(&mut self, id: &str, from: u64) -> usize {
        match self.standing.index_of(id) {
            Some(i) => i,
            None => {
                self.ids.push(id.into());
                self.ended.push(false);
                self.standing.push(id, from)
            }
        }
    }
}

struct Feed {
    key: FeedKey,
    tx: broadcast::Sender<Arc<FeedItem>>,
    /// Changed only with a message sent under it: a snapshot taken under it and a
    /// receiver subscribed before agree.
    state: Mutex<FeedState>,
    /// Set once the feed has its games (or failed to get them).
    ready: watch::Receiver<bool>,
}

impl Feed {
    fn lock(&self) -> MutexGuard<'_, FeedState> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn publish(&self, game: usize, what: What<Box<pb::GameEvent>>) {
        let mut state = self.lock();
        let what = match what {
            What::Message {
                seq,
                resync,
                mut message,
            } => {
                state.standing.set(game, seq);
                message.cursor = state.standing.cursor();
                What::Message {
                    seq,
                    resync,
                    message: Encoded::new(*message),
                }
            }
            What::End => {
                state.ended[game] = true;
                What::End
            }
            What::Failed(s) => {
                state.failed = Some(s.clone());
                What::Failed(s)
            }
            What::Standings(mut message) => {
                message.cursor = state.standing.cursor();
                let message = Encoded::new(*message);
                state.standings = Some(message.clone());
                What::Standings(message)
            }
            What::Over => What::Over,
        };
        let game_id = state.ids.get(game).cloned().unwrap_or_else(|| "".into());
        let _ = self.tx.send(Arc::new(FeedItem {
            game,
            game_id,
            what,
        }));
    }
}

/// The feeds running, by round and view.
#[derive(Default)]
pub(crate) struct Feeds {
    map: Mutex<HashMap<FeedKey, Arc<Feed>>>,
}

impl Feeds {
    fn lock(&self) -> MutexGuard<'_, HashMap<FeedKey, Arc<Feed>>> {
        self.map.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// The feed of `key` (started if none runs) and a receiver of what it publishes from
    /// now on. Under the map's lock, so a feed never leaves while a stream joins it.
    fn subscribe(
        self: &Arc<Self>,
        hub: &Arc<Hub>,
        tournaments: &Arc<Tournaments>,
        key: FeedKey,
    ) -> (Arc<Feed>, broadcast::Receiver<Arc<FeedItem>>) {
        let mut map = self.lock();
        if let Some(feed) = map.get(&key) {
            return (feed.clone(), feed.tx.subscribe());
        }
        // A stream may fall as many messages behind the round as a watcher behind its
        // game before it catches up game by game.
        let (tx, rx) = broadcast::channel(hub.watcher_queue().max(1));
        let (ready_tx, ready) = watch::channel(false);
        let feed = Arc::new(Feed {
            state: Mutex::new(FeedState {
                standing: Standing::new(&key.event, &key.round),
                ids: Vec::new(),
                ended: Vec::new(),
                failed: None,
                standings: None,
                holds_open: false,
            }),
            key: key.clone(),
            tx,
            ready,
        });
        map.insert(key, feed.clone());
        tokio::spawn(run(
            hub.clone(),
            tournaments.clone(),
            self.clone(),
            feed.clone(),
            ready_tx,
        ));
        (feed, rx)
    }

    /// Takes `feed` off the map (a later stream starts a new one); when `idle_only`, only
    /// if no stream is on it. Returns whether it was taken off.
    fn leave(&self, feed: &Arc<Feed>, idle_only: bool) -> bool {
        let mut map = self.lock();
        if idle_only && feed.tx.receiver_count() > 0 {
            return false;
        }
        if map.get(&feed.key).is_some_and(|f| Arc::ptr_eq(f, feed)) {
            map.remove(&feed.key);
        }
        true
    }
}

type GameStream = Pin<Box<dyn Stream<Item = (usize, What<Box<pb::GameEvent>>)> + Send>>;

/// One game's watch as the feed takes it: its messages, then its end or its failure.
fn game_stream(game: usize, mut w: crate::hub::Watch) -> GameStream {
    Box::pin(stream! {
        loop {
            match next_pb(&mut w).await {
                Some(Ok(message)) => {
                    let resync = matches!(message.kind, Some(pb::game_event::Kind::Resync(_)));
                    let seq = message.seq;
                    yield (game, What::Message { seq, resync, message: Box::new(message) });
                }
                Some(Err(s)) => {
                    yield (game, What::Failed(s));
                    break;
                }
                None => {
                    yield (game, What::End);
                    break;
                }
            }
        }
    })
}

/// The feed's watch of a game, after `from` or (`None`) from where the feed's audience
/// stands now; `None` for a game found quarantined. It takes no place among the game's
/// watchers: each stream on the feed holds one.
async fn feed_watch(
    hub: &Arc<Hub>,
    id: &str,
    audience: Audience,
    from: Option<u64>,
) -> Result<Option<crate::hub::Watch>, Status> {
    let Some(handle) = loaded(hub, id).await? else {
        return Ok(None);
    };
    let from = match from {
        Some(seq) => seq,
        None => handle
            .read_as(audience, |s, _| s.last_seq())
            .await
            .map_err(|e| status(&e))?,
    };
    handle
        .watch_shared(audience, from)
        .await
        .map(Some)
        .map_err(|e| status(&e))
}

/// What woke a feed.
enum Wake {
    Stop,
    Item(usize, What<Box<pb::GameEvent>>),
    Created(Result<Arc<GameMeta>, broadcast::error::RecvError>),
    /// A tournament recorded something (its key), or the notices were missed (`None`).
    Changed(Option<Arc<str>>),
    /// A result held back from the public became public.
    Reveal,
    Check,
}

/// Sleeps until `at_ms` (wall ms since the epoch).
async fn until_wall(at_ms: i64) {
    let wait = at_ms.saturating_sub(wall_ms()).max(0);
    tokio::time::sleep(Duration::from_millis(u64::try_from(wait).unwrap_or(0))).await;
}

fn wall_ms() -> i64 {
    chrono::Utc::now().timestamp_millis()
}

/// The feed's standings read again (after a result at `result_ms`, when one caused it):
/// published when they changed. A failure to read them is logged and left for the next
/// change (the games' events go on).
async fn restand(feed: &Feed, tracker: &mut Option<Tracker>, result_ms: Option<i64>) {
    let Some(t) = tracker else { return };
    let on_feed = |id: &str| feed.lock().standing.has(id);
    match t.update(wall_ms(), result_ms, on_feed).await {
        Ok(Some(message)) => feed.publish(usize::MAX, What::Standings(Box::new(message))),
        Ok(None) => {}
        Err(e) => tracing::warn!(
            event = %feed.key.event,
            error = %e,
            "round feed: standings not read; they wait for the next change"
        ),
    }
}

/// A feed's task: its games, then what they publish until it ends.
async fn run(
    hub: Arc<Hub>,
    tournaments: Arc<Tournaments>,
    feeds: Arc<Feeds>,
    feed: Arc<Feed>,
    ready: watch::Sender<bool>,
) {
    let _running = hub.metrics().round_feed();
    let key = feed.key.clone();
    let filter = key.filter();
    let mut created = hub.subscribe_created();
    // Before the standings are first read: no change after it is missed.
    let mut changes = tournaments.subscribe_changes();
    let mut map: SelectAll<GameStream> = SelectAll::new();
    // The games the feed follows ahead of its standings (a board's own game, live, on a
    // feed whose standings are the public's), by index.
    let mut ahead = HashSet::new();
    let started = async {
        let metas = hub
            .list_by_creation(&filter)
            .await
            .map_err(|e| status(&e))?;
        let mut watches = Vec::with_capacity(metas.len());
        for m in metas {
            let audience = key.view.audience(&m);
            if let Some(w) = feed_watch(&hub, &m.id, audience, None).await? {
                watches.push((m.id, audience, w));
            }
        }
        let mut tracker =
            Tracker::start(tournaments.clone(), &key.event, key.standings_audience()).await?;
        let standings = match &mut tracker {
            // Every game the feed has is where its audience stands: their results show.
            Some(t) => t.update(wall_ms(), None, |_| false).await?,
            None => None,
        };
        Ok::<_, Status>((watches, tracker, standings))
    }
    .await;
    let mut tracker = match started {
        Ok((watches, tracker, standings)) => {
            let mut state = feed.lock();
            for (id, audience, w) in watches {
                let i = state.index(&id, w.last_seq());
                if audience != key.standings_audience() {
                    ahead.insert(i);
                }
                map.push(game_stream(i, w));
            }
            // Not published: a stream takes the first standings from the feed's state.
            state.standings = standings.map(|mut m| {
                m.cursor = state.standing.cursor();
                Encoded::new(m)
            });
            state.holds_open = tracker.is_some() && key.round.is_empty();
            tracker
        }
        Err(e) => {
            feed.lock().failed = Some(e);
            feeds.leave(&feed, false);
            let _ = ready.send(true);
            return;
        }
    };
    let holds_open = feed.lock().holds_open;
    let _ = ready.send(true);
    let mut stopped = std::pin::pin!(hub.stopped());
    let mut listening = true;
    let mut check = tokio::time::interval(IDLE_CHECK);
    check.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    let mut reveal = tracker.as_ref().and_then(Tracker::next_reveal);
    loop {
        let wake = tokio::select! {
            biased;
            () = &mut stopped => Wake::Stop,
            Some((game, what)) = StreamExt::next(&mut map), if !map.is_empty() => {
                Wake::Item(game, what)
            }
            c = created.recv(), if listening => Wake::Created(c),
            c = changes.recv(), if tracker.is_some() => Wake::Changed(match c {
                Ok(key) => Some(key),
                Err(broadcast::error::RecvError::Lagged(_)) => None,
                // The tournaments outlive their feeds: not reached.
                Err(broadcast::error::RecvError::Closed) => continue,
            }),
            () = until_wall(reveal.unwrap_or(0).saturating_add(REVEAL_GRACE_MS)),
                if reveal.is_some() => Wake::Reveal,
            _ = check.tick() => Wake::Check,
        };
        match wake {
            Wake::Stop => {
                feeds.leave(&feed, false);
                feed.publish(usize::MAX, What::Failed(status(&HubError::ShuttingDown)));
                return;
            }
            Wake::Item(game, what) => {
                let failed = matches!(what, What::Failed(_));
                // A game's final event: the standings after it follow it on the feed.
                let result_ms = match &what {
                    What::Message { message, .. } => match (&message.kind, &message.server_time) {
                        (Some(pb::game_event::Kind::GameFinished(_)), Some(t)) => {
                            if let Some(tracker) = &mut tracker {
                                tracker.result_shown(&message.game_id);
                            }
                            Some(t.seconds * 1000 + i64::from(t.nanos / 1_000_000))
                        }
                        _ => None,
                    },
                    _ => None,
                };
                feed.publish(game, what);
                if failed {
                    feeds.leave(&feed, false);
                    return;
                }
                if result_ms.is_some() {
                    // A board's own game, live on its feed: its result counts in the
                    // public's standings once it is public (a reveal).
                    let public_ms = result_ms.filter(|_| !ahead.contains(&game));
                    restand(&feed, &mut tracker, public_ms).await;
                }
            }
            Wake::Changed(changed) => {
                let ours = tracker
                    .as_ref()
                    .is_some_and(|t| changed.as_deref().is_none_or(|k| k == t.key()));
                if ours {
                    restand(&feed, &mut tracker, None).await;
                }
            }
            Wake::Reveal => restand(&feed, &mut tracker, None).await,
            Wake::Created(c) => {
                let has = |id: &str| feed.lock().standing.has(id);
                let joining = match joining(&hub, &filter, c, &mut listening, has).await {
                    Ok(metas) => metas,
                    Err(e) => {
                        feeds.leave(&feed, false);
                        feed.publish(usize::MAX, What::Failed(e));
                        return;
                    }
                };
                for meta in joining {
                    // A game that joins is followed from its start.
                    let audience = key.view.audience(&meta);
                    match feed_watch(&hub, &meta.id, audience, Some(0)).await {
                        Ok(Some(w)) => {
                            let i = feed.lock().index(&meta.id, 0);
                            if audience != key.standings_audience() {
                                ahead.insert(i);
                            }
                            map.push(game_stream(i, w));
                        }
                        Ok(None) => {}
                        Err(e) => {
                            feeds.leave(&feed, false);
                            feed.publish(usize::MAX, What::Failed(e));
                            return;
                        }
                    }
                }
            }
            Wake::Check => {
                if feeds.leave(&feed, true) {
                    return;
                }
            }
        }
        if map.is_empty() && feed.lock().standing.len() > 0 {
            // Every game on it has finished: the streams on it end after their ends; on a
            // whole-event feed of a tournament, once the tournament is over too.
            if !holds_open {
                feeds.leave(&feed, false);
                return;
            }
            if tracker.as_ref().is_some_and(Tracker::finished) {
                feeds.leave(&feed, false);
                feed.publish(usize::MAX, What::Over);
                return;
            }
        }
        reveal = tracker.as_ref().and_then(Tracker::next_reveal);
    }
}

/// A round stream as `role` may see it (`view`: [`View::of`] the role).
pub(super) struct RoundStream {
    pub event: String,
    pub round: String,
    pub role: Role,
    pub view: View,
    pub kind: WatchKind,
}

/// One of a stream's games.
struct Followed {
    id: Arc<str>,
    /// Who the stream is of the game (the view's audience of it).
    audience: Audience,
    /// Its place among the game's watchers.
    permit: WatchPermit,
    done: bool,
}

/// The stream's side: its games and where it stands in each.
struct Follower {
    hub: Arc<Hub>,
    /// The feed it follows (its games' order).
    feed: Arc<Feed>,
    role: Role,
    view: View,
    standing: Standing,
    games: Vec<Followed>,
    /// The stream's index of each of the feed's games (`usize::MAX`: not on the stream).
    by_feed: Vec<usize>,
    /// A whole-event stream of a tournament: open until the feed says it is over.
    holds_open: bool,
    /// The feed said the tournament is over.
    over: bool,
}

impl Follower {
    /// The stream's index of a game of the feed, if it is on the stream.
    fn find(&self, feed_index: usize, id: &str) -> Option<usize> {
        match self.by_feed.get(feed_index) {
            Some(&i) if i != usize::MAX => Some(i),
            _ => self.standing.index_of(id),
        }
    }

    /// The stream's index of a game of the feed, adding it (from its start) if new.
    ///
    /// The feed's games before it that the stream does not have yet (created in the
    /// round since the stream opened) join first, in the feed's order, whichever of
    /// them the feed published first: the stream's order, and so its cursor, stays the
    /// feed's. (A cursor listing two of them the other way round would resume the one
    /// it misplaced from its start, and the stream would never be in step again.)
    async fn game(&mut self, feed_index: usize, id: &Arc<str>) -> Result<Option<usize>, Status> {
        if let Some(&i) = self.by_feed.get(feed_index)
            && i != usize::MAX
        {
            return Ok(Some(i));
        }
        let earlier: Vec<(usize, Arc<str>)> = {
            let state = self.feed.lock();
            state
                .ids
                .iter()
                .take(feed_index)
                .enumerate()
                .filter(|&(f, _)| self.by_feed.get(f).is_none_or(|&i| i == usize::MAX))
                .map(|(f, id)| (f, id.clone()))
                .collect()
        };
        for (f, id) in earlier {
            self.join_at(f, &id).await?;
        }
        self.join_at(feed_index, id).await
    }

    /// The feed's game `feed_index` on the stream: found, or added from its start.
    async fn join_at(&mut self, feed_index: usize, id: &str) -> Result<Option<usize>, Status> {
        let i = match self.standing.index_of(id) {
            Some(i) => i,
            None => match self.add(id, 0).await? {
                Some(i) => i,
                None => return Ok(None),
            },
        };
        self.place(feed_index, i);
        Ok(Some(i))
    }

    /// Notes that the feed's game `feed_index` is the stream's game `i`.
    fn place(&mut self, feed_index: usize, i: usize) {
        if self.by_feed.len() <= feed_index {
            self.by_feed.resize(feed_index + 1, usize::MAX);
        }
        self.by_feed[feed_index] = i;
    }

    /// Adds a game at `from`; `None` for a game quarantined as it loads.
    async fn add(&mut self, id: &str, from: u64) -> Result<Option<usize>, Status> {
        let Some(handle) = loaded(&self.hub, id).await? else {
            return Ok(None);
        };
        let audience = self.view.audience(handle.meta());
        let permit = handle.watch_permit(audience).map_err(|e| status(&e))?;
        self.games.push(Followed {
            id: id.into(),
            audience,
            permit,
            done: false,
        });
        Ok(Some(self.standing.push(id, from)))
    }

    /// The messages that take game `i` from where the stream stands to `until`, from the
    /// game's watch (its log, then what it holds), each with the stream's cursor.
    async fn catch_up(&mut self, i: usize, until: u64) -> Result<Vec<EventFrame>, Status> {
        let from = self.standing.seq(i);
        let mut out = Vec::new();
        if from >= until {
            return Ok(out);
        }
        // In the place the stream holds for the game: catching up takes no second one.
        let game = &self.games[i];
        let Some(mut w) = join(&self.hub, &self.role, &game.id, from, Some(&game.permit)).await?
        else {
            return Ok(out);
        };
        while w.last_seq() < until {
            match next_pb(&mut w).await {
                Some(Ok(mut e)) => {
                    self.standing.set(i, e.seq);
                    e.cursor = self.standing.cursor();
                    out.push(e.into());
                }
                Some(Err(s)) => return Err(s),
                None => break,
            }
        }
        Ok(out)
    }

    /// After falling behind the feed: each game whose messages the stream lost brought to
    /// the first message of it still in the channel (`retained`), or to where the feed
    /// stood then (`state`) when none is. The live audience gets the game's `Resync`;
    /// the public the events from the log, each already past its delay.
    async fn recover(
        &mut self,
        state: &FeedState,
        retained: &[Arc<FeedItem>],
    ) -> Result<Vec<EventFrame>, Status> {
        let mut first: HashMap<usize, (u64, bool)> = HashMap::new();
        let mut kept = vec![false; state.ids.len()];
        for item in retained {
            if let Some(k) = kept.get_mut(item.game) {
                *k = true;
            }
            if let What::Message { seq, resync, .. } = item.what {
                first.entry(item.game).or_insert((seq, resync));
            }
        }
        let mut out = Vec::new();
        for (f, id) in state.ids.iter().enumerate() {
            let Some(i) = self.game(f, id).await? else {
                continue;
            };
            let target = match first.get(&f) {
                Some(&(seq, false)) => seq - 1,
                // A resync in the channel replaces what came before it.
                Some(&(_, true)) => 0,
                None => state.standing.seq(f),
            };
            if self.standing.seq(i) < target {
                match self.games[i].audience {
                    Audience::Live => {
                        if let Some(mut e) = self.resync(i).await? {
                            self.standing.set(i, self.standing.seq(i).max(e.seq));
                            e.cursor = self.standing.cursor();
                            out.push(e.into());
                        }
                    }
                    Audience::Public => out.extend(self.catch_up(i, target).await?),
                }
            }
            // Its end was among what the stream lost (an end comes after its game's
            // last message, so nothing of the game is left in the channel).
            if state.ended[f] && !kept[f] && self.standing.seq(i) >= target {
                self.games[i].done = true;
            }
        }
        Ok(out)
    }

    /// Game `i` as it stands now, as a `Resync` message (live audience only).
    async fn resync(&self, i: usize) -> Result<Option<pb::GameEvent>, Status> {
        let handle: GameHandle = match self.hub.game(&self.games[i].id).await {
            Ok(h) => h,
            Err(HubError::Quarantined { .. }) => return Ok(None),
            Err(e) => return Err(status(&e)),
        };
        let snap = handle
            .read(|session, now_ms| Snapshot {
                session: session.clone(),
                now_ms,
            })
            .await
            .map_err(|e| status(&e))?;
        Ok(Some(resync_pb(handle.meta(), &snap)))
    }

    fn finished(&self) -> bool {
        self.over
            || (!self.holds_open && !self.games.is_empty() && self.games.iter().all(|g| g.done))
    }

    /// A standings message of the feed as this stream sends it: as it is when the stream
    /// stands where the feed did, with the stream's cursor otherwise.
    fn standings(&self, message: &Arc<Encoded>, in_step: bool) -> EventFrame {
        if in_step {
            return EventFrame::Shared(message.clone());
        }
        let cursor = self.standing.cursor();
        if cursor == message.message().cursor {
            return EventFrame::Shared(message.clone());
        }
        let mut own = message.message().clone();
        own.cursor = cursor;
        own.into()
    }
}

/// What a stream does with one item of its feed.
enum Step {
    Send(Vec<EventFrame>),
    /// The feed's message as it is (the common case: no allocation).
    One(EventFrame),
    Skip,
    Fail(Status),
    SendThenFail(Vec<EventFrame>, Status),
}

/// A round stream on its round's feed: the games listed now, each from where the
/// request says (a cursor, `resume_from`, `from_seq`), brought up to the feed, then the
/// feed's messages, with games created in the round joining from their start. Ends once
/// every game on it has finished (a stream with no game yet waits), with the first
/// error, or at shutdown.
///
/// # Errors
/// The store failing, a game that cannot load, a watcher limit, a cursor that is not for
/// this round.
pub(super) async fn open(
    hub: &Arc<Hub>,
    tournaments: &Arc<Tournaments>,
    feeds: &Arc<Feeds>,
    req: RoundStream,
    froms: &(dyn Fn(&[GameMeta]) -> Vec<Resume> + Sync),
) -> Result<impl Stream<Item = Result<EventFrame, Status>> + Send + use<>, Status> {
    let key = FeedKey {
        event: req.event.clone(),
        round: req.round.clone(),
        view: req.view.clone(),
    };
    let (feed, mut rx) = feeds.subscribe(hub, tournaments, key.clone());
    let mut ready = feed.ready.clone();
    if ready.wait_for(|r| *r).await.is_err() {
        return Err(status(&HubError::ShuttingDown));
    }
    let state = feed.lock().clone();
    if let Some(s) = state.failed {
        return Err(s);
    }
    let metas = hub
        .list_by_creation(&key.filter())
        .await
        .map_err(|e| status(&e))?;
    let froms = froms(&metas);
    let mut follower = Follower {
        hub: hub.clone(),
        feed: feed.clone(),
        role: req.role,
        view: req.view,
        standing: Standing::new(&req.event, &req.round),
        games: Vec::with_capacity(metas.len()),
        by_feed: Vec::new(),
        holds_open: state.holds_open,
        over: false,
    };
    // Where each game is to be brought before the feed's messages, and whether it has
    // ended there.
    let mut targets = Vec::with_capacity(metas.len());
    for (m, from) in metas.iter().zip(froms) {
        if let Some(i) = follower.add(&m.id, from.seq).await? {
            let f = state.standing.index_of(&m.id);
            let target = match f {
                Some(f) => (state.standing.seq(f), state.ended[f]),
                None => (0, false),
            };
            // A resume point the feed has not reached yet is looked at in the game
            // itself (the feed may trail it by a message).
            if from.seq > target.0 {
                from.check(hub, &follower.role, &m.id).await?;
            }
            targets.push(target);
            if let Some(f) = f {
                follower.place(f, i);
            }
        }
    }
    let open = hub.metrics().watcher(req.kind);
    let (hub, kind) = (hub.clone(), req.kind);
    Ok(stream! {
        let _open = open;
        let metrics = hub.metrics().clone();
        let mut stopped = std::pin::pin!(hub.stopped());
        for (i, &(until, ended)) in targets.iter().enumerate() {
            match follower.catch_up(i, until).await {
                Ok(messages) => {
                    for e in messages {
                        count(&metrics, kind, e.message());
                        yield Ok(e);
                    }
                }
                Err(s) => {
                    yield Err(s);
                    return;
                }
            }
            follower.games[i].done = ended && follower.standing.seq(i) >= until;
        }
        // The standings as the feed last had them, once the games are caught up.
        if let Some(standings) = &state.standings {
            let e = follower.standings(standings, false);
            count(&metrics, kind, e.message());
            yield Ok(e);
        }
        // In step: the stream stands where the feed does, and sends its messages as
        // they are.
        let mut in_step = false;
        while !follower.finished() {
            // The feed first, and the stop signal's lock-free flag at each message:
            // 10,000 streams polling the signal itself at every message contend for its
            // lock. (Shutdown also reaches the stream through the feed's failure, but
            // only after what is queued before it.)
            if follower.hub.stopping() {
                yield Err(status(&HubError::ShuttingDown));
                return;
            }
            let item = tokio::select! {
                biased;
                item = rx.recv() => item,
                () = &mut stopped => {
                    yield Err(status(&HubError::ShuttingDown));
                    return;
                }
            };
            let step = match item {
                Ok(item) => match in_step_next(&mut follower, &item, in_step) {
                    Some(step) => step,
                    None => take(&mut follower, &item, &mut in_step).await,
                },
                Err(broadcast::error::RecvError::Lagged(_)) => {
                    in_step = false;
                    lagged(&mut follower, &feed, &mut rx, &mut in_step).await
                }
                // The feed is held here: never closed while the stream runs.
                Err(broadcast::error::RecvError::Closed) => {
                    Step::Fail(status(&HubError::ShuttingDown))
                }
            };
            match step {
                Step::Send(messages) => {
                    for e in messages {
                        count(&metrics, kind, e.message());
                        yield Ok(e);
                    }
                }
                Step::One(e) => {
                    count(&metrics, kind, e.message());
                    yield Ok(e);
                }
                Step::Skip => {}
                Step::Fail(s) => {
                    yield Err(s);
                    return;
                }
                Step::SendThenFail(messages, s) => {
                    for e in messages {
                        count(&metrics, kind, e.message());
                        yield Ok(e);
                    }
                    yield Err(s);
                    return;
                }
            }
        }
    })
}

/// A stream that fell behind its feed: what is left in the channel and where the feed
/// stood after it, taken together; the games it lost messages of brought up to that;
/// then what is left, as usual.
async fn lagged(
    follower: &mut Follower,
    feed: &Feed,
    rx: &mut broadcast::Receiver<Arc<FeedItem>>,
    in_step: &mut bool,
) -> Step {
    let (retained, state) = {
        // The feed publishes under this lock: nothing arrives while the channel drains.
        let state = feed.lock();
        let mut retained = Vec::new();
        loop {
            match rx.try_recv() {
                Ok(item) => retained.push(item),
                Err(broadcast::error::TryRecvError::Lagged(_)) => {}
                Err(_) => break,
            }
        }
        (retained, state.clone())
    };
    let mut out = match follower.recover(&state, &retained).await {
        Ok(messages) => messages,
        Err(s) => return Step::Fail(s),
    };
    // Standings the stream lost and the channel no longer holds: the feed's last ones.
    let kept = retained
        .iter()
        .any(|item| matches!(item.what, What::Standings(_)));
    if let (false, Some(standings)) = (kept, &state.standings) {
        out.push(follower.standings(standings, false));
    }
    for item in &retained {
        match take(follower, item, in_step).await {
            Step::Send(messages) => out.extend(messages),
            Step::One(e) => out.push(e),
            Step::Skip => {}
            // What was ready goes first; the failure then ends the stream.
            Step::Fail(s) => return Step::SendThenFail(out, s),
            Step::SendThenFail(messages, s) => {
                out.extend(messages);
                return Step::SendThenFail(out, s);
            }
        }
    }
    Step::Send(out)
}

/// What one item of the feed means for a stream.
async fn take(follower: &mut Follower, item: &FeedItem, in_step: &mut bool) -> Step {
    let (seq, resync, message) = match &item.what {
        What::Failed(s) => return Step::Fail(s.clone()),
        What::Standings(message) => return Step::One(follower.standings(message, *in_step)),
        What::Over => {
            follower.over = true;
            return Step::Skip;
        }
        What::End => {
            if let Some(i) = follower.find(item.game, &item.game_id) {
                follower.games[i].done = true;
            }
            return Step::Skip;
        }
        What::Message {
            seq,
            resync,
            message,
        } => (*seq, *resync, message),
    };
    let i = match follower.game(item.game, &item.game_id).await {
        Ok(Some(i)) => i,
        Ok(None) => return Step::Skip,
        Err(s) => return Step::Fail(s),
    };
    let stands = follower.standing.seq(i);
    if seq <= stands {
        return Step::Skip;
    }
    let mut out = Vec::new();
    if !resync && seq > stands + 1 {
        // A gap (the game joined the stream after events the feed had sent): filled
        // from the game first.
        *in_step = false;
        match follower.catch_up(i, seq - 1).await {
            Ok(messages) => out = messages,
            Err(s) => return Step::Fail(s),
        }
        if follower.standing.seq(i) >= seq {
            return Step::Send(out);
        }
    }
    follower.standing.set(i, seq);
    if *in_step {
        out.push(EventFrame::Shared(message.clone()));
    } else {
        let cursor = follower.standing.cursor();
        if cursor == message.message().cursor {
            *in_step = true;
            out.push(EventFrame::Shared(message.clone()));
        } else {
            let mut own = message.message().clone();
            own.cursor = cursor;
            out.push(own.into());
        }
    }
    Step::Send(out)
}

/// [`take`] without waiting, for the common case: a stream in step with its feed gets
/// the next message of a game it has, and sends it as it is. `None`: anything else
/// (not in step, a game to add, a gap, a resync, an end), for [`take`].
fn in_step_next(follower: &mut Follower, item: &FeedItem, in_step: bool) -> Option<Step> {
    let What::Message {
        seq,
        resync: false,
        message,
    } = &item.what
    else {
        return None;
    };
    let i = match follower.by_feed.get(item.game) {
        Some(&i) if in_step && i != usize::MAX => i,
        _ => return None,
    };
    let stands = follower.standing.seq(i);
    if *seq <= stands {
        return Some(Step::Skip);
    }
    if *seq != stands + 1 {
        return None;
    }
    follower.standing.set(i, *seq);
    Some(Step::One(EventFrame::Shared(message.clone())))
}

/// The games of `filter` a creation notice brings to a round stream that it does not
/// have yet (`has`): the game created, or, after falling behind the notices, every game
/// listed again. Once no notice can come, `listening` is cleared.
///
/// # Errors
/// The store failing while the games are listed again.
async fn joining(
    hub: &Hub,
    filter: &GameFilter,
    notice: Result<Arc<GameMeta>, broadcast::error::RecvError>,
    listening: &mut bool,
    has: impl Fn(&str) -> bool,
) -> Result<Vec<GameMeta>, Status> {
    let metas = match notice {
        Ok(meta) => vec![meta.as_ref().clone()],
        Err(broadcast::error::RecvError::Lagged(_)) => {
            hub.list_by_creation(filter).await.map_err(|e| status(&e))?
        }
        Err(broadcast::error::RecvError::Closed) => {
            *listening = false;
            Vec::new()
        }
    };
    Ok(metas
        .into_iter()
        .filter(|m| {
            filter.event.as_ref().is_none_or(|e| *e == m.event)
                && filter.round.as_ref().is_none_or(|r| *r == m.round)
                && !has(&m.id)
        })
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::api::cursor::Cursor;
    use crate::game::{Actor, GameSettings};
    use crate::rules::Variant;
    use crate::store::MemoryStore;

    /// An empty feed of round 1 of event E, and a stream on it for `role`.
    fn stream_on(hub: &Arc<Hub>, role: Role, audience: Audience) -> (Arc<Feed>, Follower) {
        let feed = Arc::new(Feed {
            state: Mutex::new(FeedState {
                standing: Standing::new("E", "1"),
                ids: Vec::new(),
                ended: Vec::new(),
                failed: None,
                standings: None,
                holds_open: false,
            }),
            key: FeedKey {
                event: "E".into(),
                round: "1".into(),
                view: View::All(audience),
            },
            tx: broadcast::channel(8).0,
            ready: watch::channel(true).1,
        });
        let follower = Follower {
            hub: hub.clone(),
            feed: feed.clone(),
            role,
            view: View::All(audience),
            standing: Standing::new("E", "1"),
            games: Vec::new(),
            by_feed: Vec::new(),
            holds_open: false,
            over: false,
        };
        (feed, follower)
    }

    /// Creates game `id` in round 1 of event E.
    async fn create(hub: &Arc<Hub>, id: &str) -> crate::hub::GameHandle {
        let meta = GameMeta {
            id: id.into(),
            event: "E".into(),
            round: "1".into(),
            ..GameMeta::default()
        };
        hub.create(
            meta,
            GameSettings::new(Variant::Russian),
            None,
            Actor::Arbiter("x".into()),
        )
        .await
        .expect("created")
    }

    /// Two games join the round while a stream is open, and the feed publishes the later
    /// one's first message first: the stream still lists them in the feed's order, so
    /// its cursor is the feed's (before, it listed them as their messages came, and a
    /// resume from its cursor replayed the misplaced game from its start).
    #[tokio::test]
    async fn games_that_join_keep_the_feeds_order() {
        let hub = Hub::new(Arc::new(MemoryStore::new()), false);
        for id in ["a", "b", "c"] {
            create(&hub, id).await;
        }
        let (feed, mut follower) = stream_on(&hub, Role::Arbiter { event: None }, Audience::Live);
        // The stream opened on `a`; `b` and `c` joined the feed after it, in that order.
        let a = follower
            .add("a", 1)
            .await
            .expect("a")
            .expect("not quarantined");
        follower.place(feed.lock().index("a", 1), a);
        feed.lock().index("b", 0);
        feed.lock().index("c", 0);
        let first = |game: usize, id: &str| FeedItem {
            game,
            game_id: id.into(),
            what: What::Message {
                seq: 1,
                resync: false,
                message: Encoded::new(pb::GameEvent {
                    seq: 1,
                    game_id: id.into(),
                    ..Default::default()
                }),
            },
        };
        let mut in_step = false;
        for (game, id) in [(2, "c"), (1, "b")] {
            let step = take(&mut follower, &first(game, id), &mut in_step).await;
            assert!(matches!(step, Step::Send(ref m) if m.len() == 1), "{id}");
        }
        let fed = Cursor::encode("E", "1", [("a", 1), ("b", 1), ("c", 1)].into_iter());
        assert_eq!(follower.standing.cursor(), fed);
    }

    /// A stream catching a game up from the log does so in the place it holds among the
    /// game's watchers: with one public watcher allowed per game, a round stream that
    /// holds it still catches up (before, catching up took a second place and the
    /// stream failed with RESOURCE_EXHAUSTED).
    #[tokio::test]
    async fn catching_up_takes_no_second_place() {
        let hub = Hub::with_config(
            Arc::new(MemoryStore::new()),
            false,
            Arc::new(crate::hub::metrics::Metrics::new()),
            crate::hub::HubConfig {
                max_watchers_per_game: 1,
                ..crate::hub::HubConfig::default()
            },
        );
        let g = create(&hub, "a").await;
        g.command(
            Actor::Arbiter("x".into()),
            crate::game::Command::Start,
            None,
            |_, _| (),
        )
        .await
        .expect("started");
        let (_feed, mut follower) = stream_on(&hub, Role::Viewer, Audience::Public);
        let i = follower
            .add("a", 0)
            .await
            .expect("a")
            .expect("not quarantined");
        assert!(
            g.watch_as(Audience::Public, 0).await.is_err(),
            "the stream holds the game's one place"
        );
        let caught = follower.catch_up(i, 2).await.expect("caught up");
        assert_eq!(caught.len(), 2, "GameCreated and GameStarted");
        assert_eq!(follower.standing.seq(i), 2);
    }
}
