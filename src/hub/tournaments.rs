//! The tournaments the hub serves (issue 40): each the fold of its own log in the store,
//! kept as a game's is (a [`Stream::Tournament`]), and the games of its rounds served by
//! the hub like any other.
//!
//! The tournament module decides (pure: [`Tournament::handle`]); this one feeds it the
//! facts and carries out what it decided:
//! - a command is decided against the state read from the log and appended on the seq it
//!   was read at: a write from elsewhere in between (another node on PostgreSQL) is a seq
//!   conflict, and the command is decided again on the log as it now stands;
//! - a paired round's games are created in the hub (players, the event's settings, the
//!   drawn ballot opening as the start position, T 3) once the pairing is durable;
//! - a finished game's result is a fact of the game's log: before any command or read
//!   the tournament takes the results of its finished games (and creates any game of a
//!   paired round that is missing), so a crash between the two logs loses nothing: the
//!   next load re-derives what the tournament's log lacks.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};

use super::error::HubError;
use super::error::{decode, encode};
use super::handle::GameHandle;
use super::registry::{Hub, Listed};
use crate::game::{
    Actor, ArbiterAction, Command as GameCommand, Declared, EndReason, GameError, GameResult,
    Given, Outcome as GameOutcome,
};
use crate::game::{GameMeta, PlayerInfo};
use crate::rules::Color;
use crate::store::{GameFilter, StoreError, Stream, SummaryUpdate, TournamentRecord};
use crate::tournament::{
    Command, Config, GameSlot, Outcome, ResultKind, Score, Seed, Tournament, TournamentError,
    TournamentEvent, ballot, event_key,
};

/// How often a command is decided again after another writer's append got in first.
const RETRIES: usize = 8;

/// How many changes a subscriber may fall behind before it is told it lagged.
const CHANGED_QUEUE: usize = 256;

/// Why a tournament's command or read failed.
#[derive(Debug)]
pub enum TournamentsError {
    /// The tournament refused it (nothing changed): the message names the field or the
    /// state, and the rule.
    Refused(TournamentError),
    /// The log or a game failed.
    Hub(HubError),
}

impl std::fmt::Display for TournamentsError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            TournamentsError::Refused(e) => write!(f, "{e}"),
            TournamentsError::Hub(e) => write!(f, "{e}"),
        }
    }
}

impl std::error::Error for TournamentsError {}

impl From<HubError> for TournamentsError {
    fn from(e: HubError) -> Self {
        TournamentsError::Hub(e)
    }
}

impl From<StoreError> for TournamentsError {
    fn from(e: StoreError) -> Self {
        match e {
            StoreError::TournamentNotFound(key) => TournamentsError::Refused(
                TournamentError::not_found(format!("no tournament '{key}'")),
            ),
            StoreError::TournamentExists(key) => {
                TournamentsError::Refused(TournamentError::exists(format!(
                    "a tournament named '{key}' exists already (T 1: names are unique)"
                )))
            }
            e => TournamentsError::Hub(HubError::Store(e)),
        }
    }
}

impl From<TournamentError> for TournamentsError {
    fn from(e: TournamentError) -> Self {
        TournamentsError::Refused(e)
    }
}

/// A tournament as last read from its log.
#[derive(Debug, Default)]
struct Loaded {
    state: Tournament,
    last_seq: u64,
}

/// The tournaments of one hub. Each is loaded from its log on first use and kept; a
/// command on one waits for the one before it on the same tournament.
pub struct Tournaments {
    hub: Arc<Hub>,
    open: Mutex<HashMap<String, Arc<tokio::sync::Mutex<Option<Loaded>>>>>,
    /// The key of each tournament as it records events (here: on this node).
    changed: tokio::sync::broadcast::Sender<Arc<str>>,
}

impl Tournaments {
    /// The tournaments of `hub` (its store holds their logs).
    #[must_use]
    pub fn new(hub: Arc<Hub>) -> Arc<Tournaments> {
        Arc::new(Tournaments {
            hub,
            open: Mutex::new(HashMap::new()),
            changed: tokio::sync::broadcast::channel(CHANGED_QUEUE).0,
        })
    }

    /// The keys of the tournaments that record events from now on (on this node), each
    /// once per command or per result taken in: what a standings display waits for. A
    /// receiver that falls behind gets `Lagged` and should read every tournament it
    /// follows again.
    #[must_use]
    pub fn subscribe_changes(&self) -> tokio::sync::broadcast::Receiver<Arc<str>> {
        self.changed.subscribe()
    }

    /// How many tournaments are held in memory (loaded, or being loaded).
    #[must_use]
    pub fn held(&self) -> usize {
        self.open
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .len()
    }

    fn entry(&self, key: &str) -> Arc<tokio::sync::Mutex<Option<Loaded>>> {
        let mut open = self.open.lock().unwrap_or_else(PoisonError::into_inner);
        Arc::clone(open.entry(key.to_string()).or_default())
    }

    /// Creates a tournament from its settings, `seed` sealed for its first draw (T 2),
    /// at `at_ms` (wall time, ms since the epoch). Returns its key and state.
    ///
    /// # Errors
    /// The settings refused (naming the field); the name taken (ALREADY_EXISTS); the
    /// store failing.
    pub async fn create(
        &self,
        config: Config,
        seed: Seed,
        at_ms: i64,
    ) -> Result<(String, Tournament), TournamentsError> {
        let key = event_key(&config.name);
        let name = config.name.clone();
        let empty = Tournament::new();
        let events = empty.handle(&Command::Create { config, seed }, at_ms)?;
        let state = replay(&key, &events)?;
        let record = TournamentRecord {
            key: key.clone(),
            name,
            created_at_ms: at_ms,
            finished: false,
            summary_json: summary(&state).summary_json,
        };
        let entry = self.entry(&key);
        let mut slot = entry.lock().await;
        let last_seq = self
            .hub
            .store()
            .create_tournament(record, encode(&events)?)
            .await?;
        *slot = Some(Loaded {
            state: state.clone(),
            last_seq,
        });
        Ok((key, state))
    }

    /// The tournament `key` as its log and its games have it now.
    ///
    /// # Errors
    /// NOT_FOUND; the store or a game failing.
    pub async fn get(&self, key: &str) -> Result<Tournament, TournamentsError> {
        let entry = self.entry(key);
        let mut slot = entry.lock().await;
        let settled = self.settle(key, &mut slot).await;
        self.forget_unloaded(key, &slot);
        settled?;
        Ok(loaded(&slot)?.state.clone())
    }

    /// Drops the entry of a tournament that could not be loaded (an unknown name), so
    /// that asking for names that do not exist leaves nothing behind.
    fn forget_unloaded(&self, key: &str, slot: &Option<Loaded>) {
        if slot.is_none() {
            self.open
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .remove(key);
        }
    }

    /// Decides `command` on tournament `key` at `at_ms` and records what it decided;
    /// returns the events recorded (none when there was nothing to record) and the state
    /// after them. A refusal changes nothing. What the command does in the games (a
    /// round's start, an absence, a forfeit, an annulled default) is recorded there as
    /// done `by` the arbiter who gave it.
    ///
    /// # Errors
    /// The refusal (naming the field or the state and the rule); NOT_FOUND; the store or a
    /// game failing.
    pub async fn command(
        &self,
        key: &str,
        command: &Command,
        at_ms: i64,
        by: &Actor,
    ) -> Result<(Vec<TournamentEvent>, Tournament), TournamentsError> {
        let entry = self.entry(key);
        let mut slot = entry.lock().await;
        let settled = self.settle(key, &mut slot).await;
        self.forget_unloaded(key, &slot);
        settled?;
        // T 5: a player is marked absent in their games first (each game judges its own
        // default time and may refuse: the player has acted); the tournament decides
        // first whether it would take the mark, so a refusal anywhere records nothing.
        if let Command::MarkAbsent { round, player } = command {
            loaded(&slot)?.state.handle(command, at_ms)?;
            self.mark_absent(&loaded(&slot)?.state, *round, *player, by)
                .await?;
        }
        let before = loaded(&slot)?.state.clone();
        let events = self.record(key, &mut slot, command, at_ms).await?;
        let state = loaded(&slot)?.state.clone();
        match command {
            Command::PairRound { .. } => self.open_games(&state).await?,
            Command::StartRound { .. } => self.start_games(&state, by).await?,
            Command::RecordForfeit { .. } => {
                for (game_id, outcome, round) in forfeits_recorded(&before, &state) {
                    self.forfeit_game(&game_id, outcome, round, by).await?;
                }
            }
            Command::AnnulDefault { game_id, reason } => {
                self.annul_replayed(game_id, reason, by).await?;
                self.open_games(&state).await?;
                self.start_replays(&before, &state, by).await?;
            }
            _ => {}
        }
        Ok((events, state))
    }

    /// Decides and appends one command, deciding again on a seq conflict.
    async fn record(
        &self,
        key: &str,
        slot: &mut Option<Loaded>,
        command: &Command,
        at_ms: i64,
    ) -> Result<Vec<TournamentEvent>, TournamentsError> {
        for _ in 0..RETRIES {
            let now = loaded(slot)?;
            let events = now.state.handle(command, at_ms)?;
            if events.is_empty() {
                return Ok(events);
            }
            let mut after = now.state.clone();
            for e in &events {
                after
                    .apply(e)
                    .map_err(|m| HubError::Internal(format!("{key}: decided event: {m}")))?;
            }
            let appended = self
                .hub
                .store()
                .append(
                    Stream::Tournament(key),
                    now.last_seq + 1,
                    encode(&events)?,
                    Some(summary(&after)),
                )
                .await;
            match appended {
                Ok(last_seq) => {
                    *slot = Some(Loaded {
                        state: after,
                        last_seq,
                    });
                    let _ = self.changed.send(key.into());
                    return Ok(events);
                }
                // Another writer got in first: read what it wrote and decide again.
                Err(StoreError::Conflict { .. }) => *slot = Some(self.load(key).await?),
                Err(e) => return Err(e.into()),
            }
        }
        Err(HubError::Internal(format!(
            "{key}: {RETRIES} appends in a row lost to other writers"
        ))
        .into())
    }

    /// Reads the tournament's log and replays it.
    async fn load(&self, key: &str) -> Result<Loaded, TournamentsError> {
        let rows = self.hub.store().load(Stream::Tournament(key), 1).await?;
        let events: Vec<TournamentEvent> = decode(key, &rows)?;
        let last_seq = rows.last().map_or(0, |r| r.seq);
        Ok(Loaded {
            state: replay(key, &events)?,
            last_seq,
        })
    }

    /// Brings the tournament up to date with its games: loads it if it is not, creates any
    /// game of a paired round that is missing, carries out forfeits its log has and its
    /// games lack, and records every result of its games that its log lacks: a game that
    /// finished, and an arbiter's later correction of a result.
    async fn settle(&self, key: &str, slot: &mut Option<Loaded>) -> Result<(), TournamentsError> {
        if slot.is_none() {
            *slot = Some(self.load(key).await?);
        }
        let state = loaded(slot)?.state.clone();
        let Some(config) = state.config() else {
            return Ok(());
        };
        self.open_games(&state).await?;
        // Catching up (a start another node recorded in the log but not in the games).
        self.start_games(&state, &Actor::System).await?;
        // One listing of the event's games: in memory, the live game; otherwise the
        // stored summary of a finished game (a game is loaded only when the listing
        // needs it, one finished within its public delay).
        let filter = GameFilter {
            event: Some(config.name.clone()),
            ..GameFilter::default()
        };
        for listed in self.hub.listing(&filter).await? {
            let (game_id, result, finished) = match listed {
                Listed::Live(game) => {
                    let id = game.meta().id.clone();
                    let (result, finished) = game
                        .read(|s, _| (s.result().cloned(), s.stamps().finished))
                        .await?;
                    (id, result, finished)
                }
                Listed::Stored(meta, summary) | Listed::Quarantined(meta, _, Some(summary)) => (
                    meta.id.clone(),
                    summary.view.result,
                    summary.stamps.finished,
                ),
                Listed::Quarantined(..) => continue,
            };
            let Some((round, game)) = state.game(&game_id) else {
                continue;
            };
            let counted = result.as_ref().and_then(counted);
            let decided_at_ms = finished.map(|t| t.timestamp_millis());
            // A forfeit the tournament recorded after the game's last result (or on a
            // game without one): carried out on the game (a crash came in between).
            if let Some(
                forfeit @ Outcome {
                    kind: ResultKind::Forfeit,
                    ..
                },
            ) = game.outcome
                && counted != Some(forfeit)
                && (result.is_none() || decided_at_ms < game.results.last().map(|d| d.at_ms))
            {
                self.forfeit_game(&game_id, forfeit, round, &Actor::System)
                    .await?;
                continue;
            }
            let (Some(result), Some(outcome)) = (result, counted) else {
                continue;
            };
            if game.outcome == Some(outcome) {
                continue;
            }
            let finished = Command::GameFinished {
                game_id,
                outcome,
                rule: result.rule,
                decided_at_ms,
            };
            let at_ms = self.hub.now().wall.timestamp_millis();
            self.record(key, slot, &finished, at_ms).await?;
        }
        Ok(())
    }

    /// Creates the games of every paired round that the hub does not have yet.
    async fn open_games(&self, state: &Tournament) -> Result<(), TournamentsError> {
        let Some(config) = state.config() else {
            return Ok(());
        };
        for round in state.rounds() {
            for pairing in &round.pairings {
                // A game with a result exists already: only the others are looked up
                // (a finished game may have left memory; loading it back is not needed).
                for game in pairing
                    .games
                    .iter()
                    .filter(|g| g.played && g.outcome.is_none())
                {
                    if self.existing(&game.game_id).await?.is_some() {
                        continue;
                    }
                    let meta = GameMeta {
                        id: game.game_id.clone(),
                        event: config.name.clone(),
                        round: round.number.to_string(),
                        board: pairing.board,
                        white: player_info(state, game.white),
                        black: player_info(state, game.black),
                        site: config.site.clone(),
                        time_zone: config.time_zone.clone(),
                    };
                    let fen = start_position(game)?;
                    // Every game of the event runs the event's default time (T 5).
                    let mut settings = config.settings.clone();
                    settings.default_time_ms = config.default_time_ms;
                    let created = self
                        .hub
                        .create(meta, settings, fen.as_deref(), Actor::System)
                        .await;
                    match created {
                        // Created meanwhile by another command or node: the same game.
                        Ok(_) | Err(HubError::Store(StoreError::GameExists(_))) => {}
                        Err(e) => return Err(e.into()),
                    }
                }
            }
        }
        Ok(())
    }
}

impl Tournaments {
    /// Starts the first game of every pairing of every started round that has not started
    /// (all boards of a round together; a micro-match's later games start when the
    /// arbiter starts them, after the game before).
    async fn start_games(&self, state: &Tournament, by: &Actor) -> Result<(), TournamentsError> {
        for round in state.rounds().iter().filter(|r| r.started_at_ms.is_some()) {
            for pairing in &round.pairings {
                let Some(first) = pairing
                    .games
                    .first()
                    .filter(|g| g.played && g.outcome.is_none())
                else {
                    continue;
                };
                let Some(game) = self.existing(&first.game_id).await? else {
                    continue;
                };
                let waiting = game
                    .read(|s, _| !s.started() && s.result().is_none())
                    .await?;
                if !waiting {
                    continue;
                }
                start(&game, by).await?;
            }
        }
        Ok(())
    }
}

impl Tournaments {
    /// T 5: marks `player` absent in each of their games of `round` without a result. A
    /// game that refuses (the player has acted in it) refuses the command.
    async fn mark_absent(
        &self,
        state: &Tournament,
        round: u32,
        player: u32,
        by: &Actor,
    ) -> Result<(), TournamentsError> {
        let Some(r) = state.round(round) else {
            return Ok(());
        };
        for g in r.games().filter(|g| g.played && g.outcome.is_none()) {
            let side = if g.white == player {
                Color::White
            } else if g.black == player {
                Color::Black
            } else {
                continue;
            };
            let Some(game) = self.existing(&g.game_id).await? else {
                continue;
            };
            let already = game.read(move |s, _| s.marked_absent(side)).await?;
            if already {
                continue;
            }
            let action = ArbiterAction::MarkAbsent { side };
            let given = Given::reason(format!("marked absent in round {round}"));
            arbitrate(&game, action, given, by).await?;
        }
        Ok(())
    }

    /// Ends game `game_id` of round `round` as the forfeit `outcome` the tournament
    /// recorded (T 5, T 6).
    async fn forfeit_game(
        &self,
        game_id: &str,
        outcome: Outcome,
        round: u32,
        by: &Actor,
    ) -> Result<(), TournamentsError> {
        let Some(game) = self.existing(game_id).await? else {
            return Ok(());
        };
        let declared = match outcome.score {
            Score::WhiteWins => GameOutcome::WhiteWins,
            Score::BlackWins => GameOutcome::BlackWins,
            Score::BothLose | Score::Draw => GameOutcome::DoubleForfeit,
        };
        let action = ArbiterAction::DeclareResult {
            outcome: declared,
            kind: Declared::Forfeit,
        };
        let given = Given {
            reason: Some(format!("forfeit recorded in round {round}")),
            rule: Some("T 5".into()),
        };
        arbitrate(&game, action, given, by).await
    }

    /// T 5: the default of `game_id` annulled: the game itself is annulled (its record
    /// says why), its replay takes its place.
    async fn annul_replayed(
        &self,
        game_id: &str,
        reason: &str,
        by: &Actor,
    ) -> Result<(), TournamentsError> {
        let Some(game) = self.existing(game_id).await? else {
            return Ok(());
        };
        let action = ArbiterAction::DeclareResult {
            outcome: GameOutcome::Annulled,
            kind: Declared::Decision,
        };
        let given = Given {
            reason: Some(format!("default annulled, the game is replayed: {reason}")),
            rule: Some("T 5".into()),
        };
        arbitrate(&game, action, given, by).await
    }

    /// Starts the games that replaced others between `before` and `after` (the players
    /// are at the board: the arbiter has just ruled).
    async fn start_replays(
        &self,
        before: &Tournament,
        after: &Tournament,
        by: &Actor,
    ) -> Result<(), TournamentsError> {
        for round in after.rounds() {
            for g in round.games() {
                if g.replaced.is_empty() || before.game(&g.game_id).is_some() {
                    continue;
                }
                if let Some(game) = self.existing(&g.game_id).await? {
                    start(&game, by).await?;
                }
            }
        }
        Ok(())
    }

    /// The game `id` if the hub has it.
    async fn existing(&self, id: &str) -> Result<Option<GameHandle>, TournamentsError> {
        match self.hub.game(id).await {
            Ok(game) => Ok(Some(game)),
            Err(HubError::NotFound(_)) => Ok(None),
            Err(e) => Err(e.into()),
        }
    }
}

/// The forfeits `after` records that `before` did not: (game, outcome, round), for games
/// played on a board.
fn forfeits_recorded(before: &Tournament, after: &Tournament) -> Vec<(String, Outcome, u32)> {
    after
        .rounds()
        .iter()
        .flat_map(|r| r.games().map(move |g| (r.number, g)))
        .filter_map(|(round, g)| {
            let outcome = g.outcome.filter(|o| o.kind == ResultKind::Forfeit)?;
            let was = before.game(&g.game_id).and_then(|(_, b)| b.outcome);
            (g.played && was != Some(outcome)).then(|| (g.game_id.clone(), outcome, round))
        })
        .collect()
}

/// Carries out on `game` what the tournament decided, as `by` (the arbiter whose command
/// it is; the tournament's own rules, T 5, T 6).
async fn arbitrate(
    game: &GameHandle,
    action: ArbiterAction,
    given: Given,
    by: &Actor,
) -> Result<(), TournamentsError> {
    game.command(
        by.clone(),
        GameCommand::Arbiter(action, given),
        None,
        |_, _| (),
    )
    .await?;
    Ok(())
}

/// Starts `game` for the tournament, as `by`; one started meanwhile (by the arbiter, or
/// another node) is as wanted.
async fn start(game: &GameHandle, by: &Actor) -> Result<(), TournamentsError> {
    match game
        .command(by.clone(), GameCommand::Start, None, |_, _| ())
        .await
    {
        Ok(_) | Err(HubError::Game(GameError::AlreadyStarted)) => Ok(()),
        Err(e) => Err(e.into()),
    }
}

/// A game's result as the tournament counts it: played, by default (T 5) or a forfeit.
/// An annulled game counts nothing (it is to be played again).
fn counted(r: &GameResult) -> Option<Outcome> {
    let score = match r.outcome {
        GameOutcome::WhiteWins => Score::WhiteWins,
        GameOutcome::BlackWins => Score::BlackWins,
        GameOutcome::Draw => Score::Draw,
        GameOutcome::DoubleForfeit => Score::BothLose,
        GameOutcome::Annulled => return None,
    };
    let kind = match r.reason {
        EndReason::Default => ResultKind::Default,
        EndReason::Forfeit => ResultKind::Forfeit,
        _ => ResultKind::Played,
    };
    Some(Outcome { score, kind })
}

/// The position a game starts from: its ballot opening's (T 3), or the variant's.
fn start_position(game: &GameSlot) -> Result<Option<String>, TournamentsError> {
    let Some(drawn) = &game.opening else {
        return Ok(None);
    };
    let opening = ballot::table(&drawn.table)
        .ok()
        .and_then(|t| t.opening(drawn.number))
        .ok_or_else(|| {
            HubError::Internal(format!(
                "{}: opening {} of table {} not found",
                game.game_id, drawn.number, drawn.table
            ))
        })?;
    Ok(Some(opening.fen.clone()))
}

fn player_info(state: &Tournament, id: u32) -> PlayerInfo {
    state
        .player(id)
        .map(|p| PlayerInfo {
            name: p.entrant.name.clone(),
            fmjd_id: p.entrant.fmjd_id.clone(),
            federation: p.entrant.federation.clone(),
            rating: p.entrant.rating,
        })
        .unwrap_or_default()
}

fn loaded(slot: &Option<Loaded>) -> Result<&Loaded, TournamentsError> {
    slot.as_ref()
        .ok_or_else(|| HubError::Internal("tournament not loaded".into()).into())
}

fn replay(key: &str, events: &[TournamentEvent]) -> Result<Tournament, TournamentsError> {
    Tournament::replay(events)
        .map_err(|m| HubError::Corrupt(format!("tournament {key}: {m}")).into())
}

/// The row's summary: what a listing shows without replaying.
fn summary(state: &Tournament) -> SummaryUpdate {
    let rounds = state.rounds();
    let finished = state.finished();
    let summary = serde_json::json!({
        "name": state.config().map(|c| c.name.as_str()),
        "system": state.config().map(|c| c.system.name()),
        "players": state.players().len(),
        "rounds": state.total_rounds(),
        "paired": rounds.len(),
    });
    SummaryUpdate {
        finished,
        summary_json: summary.to_string(),
    }
}
