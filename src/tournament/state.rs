//! The tournament's state: the fold of its events, and the decisions on commands.

use std::collections::BTreeSet;

use super::ballot;
use super::berger;
use super::command::{Command, GivenPairings};
use super::error::TournamentError;
use super::event::{
    Bye, ByeKind, Config, Decision, DrawnOpening, Entrant, EventKind, GameSlot, NumbersSource,
    Outcome, Pairing, PairingSource, Player, ResultKind, Score, System, TournamentEvent,
};
use super::lot::Seed;
use super::{event_key, game_id};

/// A round as recorded: its pairings, byes, start and absences.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RoundState {
    /// The round, from 1.
    pub number: u32,
    /// Where its pairings came from.
    pub source: PairingSource,
    /// Its boards.
    pub pairings: Vec<Pairing>,
    /// Who has no game.
    pub byes: Vec<Bye>,
    /// When it started (ms since the epoch), if it has.
    pub started_at_ms: Option<i64>,
    /// Players the arbiter marked absent (T 5).
    pub absent: Vec<u32>,
    /// The ballot numbers drawn for it, in the order drawn (T 3).
    pub draws: Vec<u32>,
}

impl RoundState {
    /// Every game of the round, board by board.
    pub fn games(&self) -> impl Iterator<Item = &GameSlot> {
        self.pairings.iter().flat_map(|p| p.games.iter())
    }

    /// Whether every game has a result.
    pub fn finished(&self) -> bool {
        self.games().all(|g| g.outcome.is_some())
    }
}

/// A tournament: the fold of its events.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Tournament {
    config: Option<Config>,
    key: String,
    players: Vec<Player>,
    /// Player ids by pairing number, once given.
    numbers: Vec<u32>,
    numbers_source: Option<NumbersSource>,
    top_white: Option<bool>,
    sealed: Option<Seed>,
    revealed: Vec<Seed>,
    rounds: Vec<RoundState>,
    events: u64,
}

/// The most players an event takes.
pub const MAX_PLAYERS: usize = 1_000;

impl Tournament {
    /// An empty tournament (before `Create`).
    pub fn new() -> Tournament {
        Tournament::default()
    }

    /// The fold of `events`, in order.
    ///
    /// # Errors
    /// An event that does not apply to the state before it (a damaged log).
    pub fn replay<'a>(
        events: impl IntoIterator<Item = &'a TournamentEvent>,
    ) -> Result<Tournament, String> {
        let mut t = Tournament::new();
        for (i, e) in events.into_iter().enumerate() {
            t.apply(e).map_err(|m| format!("event {}: {m}", i + 1))?;
        }
        Ok(t)
    }

    /// The settings; `None` before the event is created.
    pub fn config(&self) -> Option<&Config> {
        self.config.as_ref()
    }

    /// The key its games are named by.
    pub fn key(&self) -> &str {
        &self.key
    }

    /// The players in the order entered (ids from 1).
    pub fn players(&self) -> &[Player] {
        &self.players
    }

    /// The player with this id.
    pub fn player(&self, id: u32) -> Option<&Player> {
        id.checked_sub(1).and_then(|i| self.players.get(i as usize))
    }

    /// Player ids by pairing number (empty until given), and how they were given.
    pub fn numbers(&self) -> (&[u32], Option<&NumbersSource>) {
        (&self.numbers, self.numbers_source.as_ref())
    }

    /// Swiss: whether pairing number 1 has White in round 1 (drawn by lot, T 2).
    pub fn top_white(&self) -> Option<bool> {
        self.top_white
    }

    /// The hash of the sealed seed the next draw uses (T 2), published before it.
    pub fn commitment(&self) -> Option<String> {
        self.sealed.map(|s| s.commitment())
    }

    /// The seeds revealed so far, in order.
    pub fn revealed_seeds(&self) -> &[Seed] {
        &self.revealed
    }

    /// The rounds paired so far.
    pub fn rounds(&self) -> &[RoundState] {
        &self.rounds
    }

    /// Round `n` (from 1), if paired.
    pub fn round(&self, n: u32) -> Option<&RoundState> {
        n.checked_sub(1).and_then(|i| self.rounds.get(i as usize))
    }

    /// How many events it has recorded.
    pub fn event_count(&self) -> u64 {
        self.events
    }

    /// Whether every round has been paired and every game of it has a result.
    pub fn finished(&self) -> bool {
        let total = self.total_rounds();
        total > 0
            && self.rounds.len() as u32 == total
            && self.rounds.iter().all(RoundState::finished)
    }

    /// The number of rounds the event has: a round-robin's from its field, the
    /// configured number otherwise.
    pub fn total_rounds(&self) -> u32 {
        let Some(c) = &self.config else { return 0 };
        let field = if self.numbers.is_empty() {
            self.players.len() as u32
        } else {
            self.numbers.len() as u32
        };
        match c.system {
            System::RoundRobin => berger::rounds_per_cycle(field),
            System::DoubleRoundRobin => 2 * berger::rounds_per_cycle(field),
            System::Swiss | System::Manual => c.rounds,
        }
    }

    /// The game slot with this id, and its round.
    pub fn game(&self, game_id: &str) -> Option<(u32, &GameSlot)> {
        self.rounds.iter().find_map(|r| {
            r.games()
                .find(|g| g.game_id == game_id)
                .map(|g| (r.number, g))
        })
    }

    /// Whether the player plays in `round` (entered and not withdrawn before it).
    pub fn active_in(&self, player: u32, round: u32) -> bool {
        self.player(player)
            .is_some_and(|p| p.withdrawn_from.is_none_or(|w| round < w))
    }

    /// The tournament as a viewer behind the games' public delay sees it at `now_ms`: each
    /// game's result the last one decided `delay_ms` before (none while the first is not
    /// yet public), and what follows from them (finished rounds, the event finished).
    #[must_use]
    pub fn as_seen(&self, now_ms: i64, delay_ms: u64) -> Tournament {
        let mut seen = self.clone();
        if delay_ms == 0 {
            return seen;
        }
        let delay = i64::try_from(delay_ms).unwrap_or(i64::MAX);
        for slot in seen
            .rounds
            .iter_mut()
            .flat_map(|r| r.pairings.iter_mut())
            .flat_map(|p| p.games.iter_mut())
        {
            // A result recorded without a time (a withdrawn player's forfeit, given at
            // pairing) is public at once.
            if slot.results.is_empty() {
                continue;
            }
            slot.results
                .retain(|d| d.at_ms.saturating_add(delay) <= now_ms);
            slot.outcome = slot.results.last().map(|d| d.outcome);
        }
        seen
    }

    /// The tournament as if the games `held` picks had no result yet (a display that has
    /// not shown their final event yet), and what follows from that.
    #[must_use]
    pub fn holding_back(&self, held: impl Fn(&str) -> bool) -> Tournament {
        let mut seen = self.clone();
        for slot in seen
            .rounds
            .iter_mut()
            .flat_map(|r| r.pairings.iter_mut())
            .flat_map(|p| p.games.iter_mut())
        {
            if slot.played && !slot.results.is_empty() && held(&slot.game_id) {
                slot.results.clear();
                slot.outcome = None;
            }
        }
        seen
    }

    /// The round and the game slot that replaced `game_id` (T 5: a default annulled).
    pub fn replacing(&self, game_id: &str) -> Option<(u32, &GameSlot)> {
        self.rounds.iter().find_map(|r| {
            r.games()
                .find(|g| g.replaced.iter().any(|old| old == game_id))
                .map(|g| (r.number, g))
        })
    }

    /// Decides `command` at `at_ms` (wall time, ms since the epoch): the events to
    /// record, in order. The state is not changed: apply the events (or replay).
    ///
    /// # Errors
    /// The refusal, naming the field or the state and the rule.
    pub fn handle(
        &self,
        command: &Command,
        at_ms: i64,
    ) -> Result<Vec<TournamentEvent>, TournamentError> {
        let kinds = match command {
            Command::Create { config, seed } => self.create(config, *seed)?,
            _ if self.config.is_none() => {
                return Err(TournamentError::not_found("the tournament does not exist"));
            }
            Command::AddPlayers { players } => self.add_players(players)?,
            Command::Withdraw { player, reason } => self.withdraw(*player, reason)?,
            Command::NumberPlayers { hall, next_seed } => {
                self.number_players(hall.as_deref(), *next_seed)?
            }
            Command::PairRound {
                round,
                given,
                next_seed,
            } => self.pair_round(*round, given.as_ref(), *next_seed)?,
            Command::StartRound { round } => self.start_round(*round)?,
            Command::MarkAbsent { round, player } => self.mark_absent(*round, *player)?,
            Command::RecordForfeit { round, player } => self.record_forfeit(*round, *player)?,
            Command::GameFinished {
                game_id,
                outcome,
                rule,
                decided_at_ms,
            } => self.game_finished(game_id, *outcome, rule.clone(), *decided_at_ms)?,
            Command::AnnulDefault { game_id, reason } => self.replay_game(game_id, reason)?,
        };
        Ok(kinds
            .into_iter()
            .map(|kind| TournamentEvent { at_ms, kind })
            .collect())
    }

    /// Applies a recorded event.
    ///
    /// # Errors
    /// An event that does not fit the state (a damaged or foreign log).
    pub fn apply(&mut self, e: &TournamentEvent) -> Result<(), String> {
        match &e.kind {
            EventKind::Created { config, sealed } => {
                if self.config.is_some() {
                    return Err("created twice".into());
                }
                self.key = event_key(&config.name);
                self.config = Some(config.clone());
                self.sealed = Some(*sealed);
            }
            _ if self.config.is_none() => return Err("an event before Created".into()),
            EventKind::PlayersAdded { players } => {
                for entrant in players {
                    let id = self.players.len() as u32 + 1;
                    self.players.push(Player {
                        id,
                        entrant: entrant.clone(),
                        pairing_number: 0,
                        withdrawn_from: None,
                    });
                }
            }
            EventKind::PlayerWithdrawn {
                player, from_round, ..
            } => {
                let p = self
                    .players
                    .get_mut((*player as usize).wrapping_sub(1))
                    .ok_or_else(|| format!("no player {player}"))?;
                p.withdrawn_from = Some(*from_round);
            }
            EventKind::NumbersGiven {
                numbers,
                source,
                top_white,
            } => {
                for (i, id) in numbers.iter().enumerate() {
                    let p = self
                        .players
                        .get_mut((*id as usize).wrapping_sub(1))
                        .ok_or_else(|| format!("no player {id}"))?;
                    p.pairing_number = i as u32 + 1;
                }
                self.numbers = numbers.clone();
                self.numbers_source = Some(source.clone());
                self.top_white = *top_white;
            }
            EventKind::RoundPaired {
                round,
                source,
                pairings,
                byes,
                draws,
            } => {
                if *round as usize != self.rounds.len() + 1 {
                    return Err(format!("round {round} paired out of order"));
                }
                self.rounds.push(RoundState {
                    number: *round,
                    source: source.clone(),
                    pairings: pairings.clone(),
                    byes: byes.clone(),
                    started_at_ms: None,
                    absent: Vec::new(),
                    draws: draws.clone(),
                });
            }
            EventKind::LotRevealed { seed, sealed } => {
                if self.sealed != Some(*seed) {
                    return Err("a revealed seed that was not the sealed one".into());
                }
                self.revealed.push(*seed);
                self.sealed = Some(*sealed);
            }
            EventKind::RoundStarted { round } => {
                let r = self
                    .rounds
                    .get_mut((*round as usize).wrapping_sub(1))
                    .ok_or_else(|| format!("round {round} is not paired"))?;
                r.started_at_ms = Some(e.at_ms);
            }
            EventKind::MarkedAbsent { round, player } => {
                let r = self
                    .rounds
                    .get_mut((*round as usize).wrapping_sub(1))
                    .ok_or_else(|| format!("round {round} is not paired"))?;
                r.absent.push(*player);
            }
            EventKind::GameResult {
                game_id,
                outcome,
                decided_at_ms,
                ..
            } => {
                let slot = self.slot_mut(game_id)?;
                slot.outcome = Some(*outcome);
                slot.results.push(Decision {
                    outcome: *outcome,
                    at_ms: decided_at_ms.unwrap_or(e.at_ms),
                });
            }
            EventKind::GameReplayed {
                game_id, replay_id, ..
            } => {
                let slot = self.slot_mut(game_id)?;
                slot.replaced
                    .push(std::mem::replace(&mut slot.game_id, replay_id.clone()));
                slot.outcome = None;
                slot.results.clear();
            }
        }
        self.events += 1;
        Ok(())
    }

    fn slot_mut(&mut self, game_id: &str) -> Result<&mut GameSlot, String> {
        self.rounds
            .iter_mut()
            .flat_map(|r| r.pairings.iter_mut())
            .flat_map(|p| p.games.iter_mut())
            .find(|g| g.game_id == game_id)
            .ok_or_else(|| format!("no game {game_id}"))
    }

    fn config_ref(&self) -> &Config {
        self.config
            .as_ref()
            .expect("handle checks that the tournament exists")
    }

    fn create(&self, c: &Config, seed: Seed) -> Result<Vec<EventKind>, TournamentError> {
        if self.config.is_some() {
            return Err(TournamentError {
                class: super::Class::AlreadyExists,
                message: format!("the tournament {:?} already exists", c.name),
                rule: None,
            });
        }
        if c.name.trim().is_empty() {
            return Err(TournamentError::invalid("name: required"));
        }
        crate::game::time_zone(&c.time_zone)
            .map_err(|e| TournamentError::invalid(format!("time_zone: {e}")))?;
        let g = c.games_per_pairing;
        if g == 0 || (g > 1 && g % 2 == 1) || g > 20 {
            return Err(TournamentError::invalid(format!(
                "games_per_pairing: 1, or an even number up to 20 for a micro-match, got {g}"
            ))
            .by("T 4"));
        }
        match c.system {
            System::Swiss | System::Manual if c.rounds == 0 || c.rounds > 99 => {
                return Err(TournamentError::invalid(format!(
                    "rounds: a {} event has 1 to 99 rounds, got {}",
                    c.system.name(),
                    c.rounds
                )));
            }
            System::RoundRobin | System::DoubleRoundRobin if c.rounds != 0 => {
                return Err(TournamentError::invalid(format!(
                    "rounds: a {} event's rounds follow from its players; leave it 0, got {}",
                    c.system.name(),
                    c.rounds
                )));
            }
            _ => {}
        }
        if let Some(b) = &c.ballot {
            let table = ballot::table(&b.table)
                .map_err(|e| TournamentError::invalid(format!("ballot_table: {e}")).by("T 3"))?;
            if table.variant != c.settings.variant {
                return Err(TournamentError::invalid(format!(
                    "ballot_table: {} opens {} games, the event plays {}",
                    table.id, table.variant, c.settings.variant
                ))
                .by("T 3"));
            }
        }
        let mut seen = BTreeSet::new();
        if let Some(t) = c.tiebreaks.iter().find(|t| !seen.insert(**t)) {
            return Err(TournamentError::invalid(format!(
                "tiebreaks: {t:?} given twice"
            )));
        }
        Ok(vec![EventKind::Created {
            config: c.clone(),
            sealed: seed,
        }])
    }

    fn add_players(&self, players: &[Entrant]) -> Result<Vec<EventKind>, TournamentError> {
        let c = self.config_ref();
        if players.is_empty() {
            return Err(TournamentError::invalid("players: none given"));
        }
        if matches!(c.system, System::RoundRobin | System::DoubleRoundRobin)
            && !self.numbers.is_empty()
        {
            return Err(TournamentError::precondition(
                "a round-robin's field is fixed once its pairing numbers are given",
                Some("T 1"),
            ));
        }
        if self.players.len() + players.len() > MAX_PLAYERS {
            return Err(TournamentError::invalid(format!(
                "players: at most {MAX_PLAYERS} in an event"
            )));
        }
        for (i, p) in players.iter().enumerate() {
            if p.name.trim().is_empty() {
                return Err(TournamentError::invalid(format!(
                    "players[{i}].name: required"
                )));
            }
            let same =
                |q: &Entrant| q.name == p.name && (q.fmjd_id == p.fmjd_id || p.fmjd_id.is_empty());
            if self.players.iter().any(|q| same(&q.entrant)) || players[..i].iter().any(same) {
                return Err(TournamentError {
                    class: super::Class::AlreadyExists,
                    message: format!("players[{i}]: {:?} is already entered", p.name),
                    rule: None,
                });
            }
            if !p.fmjd_id.is_empty()
                && (self.players.iter().any(|q| q.entrant.fmjd_id == p.fmjd_id)
                    || players[..i].iter().any(|q| q.fmjd_id == p.fmjd_id))
            {
                return Err(TournamentError {
                    class: super::Class::AlreadyExists,
                    message: format!("players[{i}].fmjd_id: {:?} is already entered", p.fmjd_id),
                    rule: None,
                });
            }
        }
        Ok(vec![EventKind::PlayersAdded {
            players: players.to_vec(),
        }])
    }

    fn known_player(&self, id: u32) -> Result<&Player, TournamentError> {
        self.player(id)
            .ok_or_else(|| TournamentError::not_found(format!("no player {id} in the event")))
    }

    fn withdraw(&self, player: u32, reason: &str) -> Result<Vec<EventKind>, TournamentError> {
        let p = self.known_player(player)?;
        if p.withdrawn_from.is_some() {
            return Err(TournamentError::precondition(
                format!("{} has already withdrawn", p.entrant.name),
                Some("T 6"),
            ));
        }
        // From the first round not yet paired: the rounds paired stay as they are (the
        // arbiter enters forfeits for them).
        Ok(vec![EventKind::PlayerWithdrawn {
            player,
            from_round: self.rounds.len() as u32 + 1,
            reason: reason.to_string(),
        }])
    }

    /// The players not withdrawn, in entry order: at least two, to `doing` (T 1).
    fn field(&self, doing: &str) -> Result<Vec<u32>, TournamentError> {
        let active: Vec<u32> = self
            .players
            .iter()
            .filter(|p| p.withdrawn_from.is_none())
            .map(|p| p.id)
            .collect();
        if active.len() < 2 {
            return Err(TournamentError::invalid(format!(
                "players: {} to {doing}; an event needs at least 2",
                active.len()
            ))
            .by("T 1"));
        }
        Ok(active)
    }

    fn number_players(
        &self,
        hall: Option<&[u32]>,
        next_seed: Seed,
    ) -> Result<Vec<EventKind>, TournamentError> {
        if !self.numbers.is_empty() {
            return Err(TournamentError::precondition(
                "the pairing numbers are already given",
                Some("T 2"),
            ));
        }
        if !self.rounds.is_empty() {
            return Err(TournamentError::precondition(
                "rounds are already paired",
                Some("T 2"),
            ));
        }
        let active = self.field("number")?;
        if let Some(order) = hall {
            let given: BTreeSet<u32> = order.iter().copied().collect();
            let want: BTreeSet<u32> = active.iter().copied().collect();
            if given.len() != order.len() || given != want {
                return Err(TournamentError::invalid(format!(
                    "numbers: every active player once (ids {}), got {order:?}",
                    ids(&active)
                ))
                .by("T 2"));
            }
            return Ok(vec![EventKind::NumbersGiven {
                numbers: order.to_vec(),
                source: NumbersSource::Hall,
                top_white: None,
            }]);
        }
        let numbers = self.numbers_by_rule(&active);
        let lot = drew_lot(&numbers);
        let mut events = vec![numbers];
        if lot {
            events.push(self.reveal(next_seed));
        }
        Ok(events)
    }

    /// The system's own numbering: a round-robin's by lot with the sealed seed (the
    /// caller reveals it), a Swiss's or manual event's by rating, then title, then name
    /// (C.04.2).
    fn numbers_by_rule(&self, active: &[u32]) -> EventKind {
        let c = self.config_ref();
        match c.system {
            System::RoundRobin | System::DoubleRoundRobin => {
                let seed = self.sealed.expect("a created tournament has a sealed seed");
                let order = seed.draw("pairing-numbers").shuffle(active.len());
                EventKind::NumbersGiven {
                    numbers: order.into_iter().map(|i| active[i]).collect(),
                    source: NumbersSource::Lot,
                    top_white: None,
                }
            }
            System::Swiss | System::Manual => {
                let mut order = active.to_vec();
                order.sort_by(|a, b| {
                    let (pa, pb) = (
                        &self.players[*a as usize - 1],
                        &self.players[*b as usize - 1],
                    );
                    pb.entrant
                        .rating
                        .cmp(&pa.entrant.rating)
                        .then(title_rank(&pa.entrant.title).cmp(&title_rank(&pb.entrant.title)))
                        .then(pa.entrant.name.cmp(&pb.entrant.name))
                        .then(a.cmp(b))
                });
                // The lot decides number 1's colour in round 1 (T 2).
                let seed = self.sealed.expect("a created tournament has a sealed seed");
                EventKind::NumbersGiven {
                    numbers: order,
                    source: NumbersSource::Rating,
                    top_white: Some(seed.draw("first-colour").below(2) == 0),
                }
            }
        }
    }

    /// The seed a command's draws used, revealed, and the next one sealed.
    fn reveal(&self, next_seed: Seed) -> EventKind {
        EventKind::LotRevealed {
            seed: self.sealed.expect("a created tournament has a sealed seed"),
            sealed: next_seed,
        }
    }

    fn pair_round(
        &self,
        round: u32,
        given: Option<&GivenPairings>,
        next_seed: Seed,
    ) -> Result<Vec<EventKind>, TournamentError> {
        let c = self.config_ref().clone();
        let paired = self.rounds.len() as u32;
        if round == 0 {
            return Err(TournamentError::invalid("round: from 1"));
        }
        if round <= paired {
            return Err(TournamentError::precondition(
                format!("round {round} is already paired"),
                Some("T 1"),
            ));
        }
        if round > paired + 1 {
            return Err(TournamentError::precondition(
                format!("round {} is not paired yet", paired + 1),
                Some("T 1"),
            ));
        }
        if let Some(prev) = self.rounds.last()
            && !prev.finished()
        {
            let open: Vec<&str> = prev
                .games()
                .filter(|g| g.outcome.is_none())
                .map(|g| g.game_id.as_str())
                .take(5)
                .collect();
            return Err(TournamentError::precondition(
                format!(
                    "round {} has not finished: {} without a result",
                    prev.number,
                    open.join(", ")
                ),
                Some("T 1"),
            ));
        }
        let mut events = Vec::new();
        let mut lot = false;
        let mut t = self.clone();
        if t.numbers.is_empty() {
            let active = t.field("pair")?;
            let kind = t.numbers_by_rule(&active);
            lot |= drew_lot(&kind);
            t.apply(&TournamentEvent {
                at_ms: 0,
                kind: kind.clone(),
            })
            .map_err(|m| TournamentError::precondition(m, None))?;
            events.push(kind);
        }
        let total = t.total_rounds();
        if round > total {
            return Err(TournamentError::precondition(
                format!("the event has {total} rounds"),
                Some("T 1"),
            ));
        }
        let (boards, byes, source) = match c.system {
            System::RoundRobin | System::DoubleRoundRobin => {
                if given.is_some() {
                    return Err(TournamentError::invalid(
                        "pairings: a round-robin is paired by the Berger tables",
                    )
                    .by("T 1"));
                }
                let cycles = if c.system == System::DoubleRoundRobin {
                    2
                } else {
                    1
                };
                let r = berger::round_robin_round(t.numbers.len() as u32, cycles, round)
                    .ok_or_else(|| {
                        TournamentError::precondition(
                            format!("the event has {total} rounds"),
                            Some("T 1"),
                        )
                    })?;
                let id = |n: u32| t.numbers[n as usize - 1];
                let boards: Vec<(u32, u32)> = r
                    .boards
                    .iter()
                    .map(|b| (id(b.white), id(b.black)))
                    .collect();
                let byes = r
                    .free
                    .map(|f| Bye {
                        player: id(f),
                        kind: ByeKind::FreeRound,
                    })
                    .into_iter()
                    .collect();
                (boards, byes, PairingSource::Berger)
            }
            System::Swiss | System::Manual => {
                let g = given.ok_or_else(|| {
                    TournamentError::invalid(format!(
                        "pairings: a {} round needs its pairings (from the engine or the arbiter)",
                        c.system.name()
                    ))
                    .by("T 1")
                })?;
                t.check_given(round, g, c.system)?;
                (g.boards.clone(), g.byes.clone(), g.source.clone())
            }
        };
        // Name the games, draw the openings, decide the withdrawn players' games.
        let per_pair = c.games_per_pairing.max(1);
        let draws = t.ballot_draws(round, boards.len() as u32)?;
        lot |= !draws.is_empty();
        let mut pairings = Vec::with_capacity(boards.len());
        for (i, &(white, black)) in boards.iter().enumerate() {
            let board = i as u32 + 1;
            let mut games = Vec::with_capacity(per_pair as usize);
            for game in 1..=per_pair {
                let (w, b) = if game % 2 == 1 {
                    (white, black)
                } else {
                    (black, white)
                };
                let opening = draws.take(board, game);
                let gone_w = !t.active_in(w, round);
                let gone_b = !t.active_in(b, round);
                let outcome = match (gone_w, gone_b) {
                    (false, false) => None,
                    (true, false) => Some(Score::BlackWins),
                    (false, true) => Some(Score::WhiteWins),
                    (true, true) => Some(Score::BothLose),
                }
                .map(|score| Outcome {
                    score,
                    kind: ResultKind::Forfeit,
                });
                games.push(GameSlot {
                    game_id: game_id(&t.key, round, board, game, per_pair),
                    white: w,
                    black: b,
                    opening,
                    outcome,
                    played: outcome.is_none(),
                    results: Vec::new(),
                    replaced: Vec::new(),
                });
            }
            pairings.push(Pairing {
                board,
                white,
                black,
                games,
            });
        }
        events.push(EventKind::RoundPaired {
            round,
            source,
            pairings,
            byes,
            draws: draws.numbers,
        });
        if lot {
            events.push(t.reveal(next_seed));
        }
        Ok(events)
    }

    /// Checks pairings made elsewhere (T 1): known, active players, each once; no
    /// pairing repeated in a Swiss; a pairing-allocated bye only to a player without
    /// one; every active player paired or given a bye.
    fn check_given(
        &self,
        round: u32,
        g: &GivenPairings,
        system: System,
    ) -> Result<(), TournamentError> {
        let bad = |m: String| TournamentError::invalid(m).by("T 1");
        let mut seen = BTreeSet::new();
        let mut check = |id: u32, at: String| -> Result<(), TournamentError> {
            let p = self
                .player(id)
                .ok_or_else(|| bad(format!("{at}: no player {id} in the event")))?;
            if !self.active_in(id, round) {
                return Err(bad(format!("{at}: {} has withdrawn", p.entrant.name)));
            }
            if !seen.insert(id) {
                return Err(bad(format!("{at}: {} appears twice", p.entrant.name)));
            }
            Ok(())
        };
        for (i, &(w, b)) in g.boards.iter().enumerate() {
            check(w, format!("pairings[{i}].white"))?;
            check(b, format!("pairings[{i}].black"))?;
        }
        for (i, bye) in g.byes.iter().enumerate() {
            check(bye.player, format!("byes[{i}]"))?;
            if bye.kind == ByeKind::FreeRound {
                return Err(bad(format!(
                    "byes[{i}]: a free round is a round-robin's; a Swiss gives a pairing-allocated, half or zero bye"
                )));
            }
        }
        if g.boards.is_empty() {
            return Err(bad("pairings: none".into()));
        }
        if system == System::Swiss {
            for (i, &(w, b)) in g.boards.iter().enumerate() {
                if let Some(r) = self.met(w, b) {
                    return Err(bad(format!(
                        "pairings[{i}]: {} and {} already met in round {r}",
                        self.players[w as usize - 1].entrant.name,
                        self.players[b as usize - 1].entrant.name
                    )));
                }
            }
            for (i, bye) in g.byes.iter().enumerate() {
                if bye.kind == ByeKind::PairingAllocated
                    && let Some(r) = self.had_bye(bye.player)
                {
                    return Err(bad(format!(
                        "byes[{i}]: {} had the pairing-allocated bye in round {r}",
                        self.players[bye.player as usize - 1].entrant.name
                    )));
                }
            }
        }
        let missing: Vec<&str> = self
            .players
            .iter()
            .filter(|p| self.active_in(p.id, round) && !seen.contains(&p.id))
            .map(|p| p.entrant.name.as_str())
            .collect();
        if !missing.is_empty() {
            return Err(bad(format!(
                "pairings: neither paired nor given a bye: {}",
                missing.join(", ")
            )));
        }
        Ok(())
    }

    /// The round in which `a` and `b` played each other, if they did (a pairing decided
    /// by forfeit or default was not played, and may be paired again, as the Swiss
    /// engines count it).
    pub fn met(&self, a: u32, b: u32) -> Option<u32> {
        self.rounds.iter().find_map(|r| {
            r.pairings
                .iter()
                .any(|p| {
                    ((p.white == a && p.black == b) || (p.white == b && p.black == a))
                        && p.games
                            .iter()
                            .any(|g| g.outcome.is_none_or(|o| o.kind == ResultKind::Played))
                })
                .then_some(r.number)
        })
    }

    /// The round in which the player had a pairing-allocated bye, if any.
    pub fn had_bye(&self, player: u32) -> Option<u32> {
        self.rounds.iter().find_map(|r| {
            r.byes
                .iter()
                .any(|b| b.player == player && b.kind == ByeKind::PairingAllocated)
                .then_some(r.number)
        })
    }

    /// The openings of a round's games (T 3): none without a ballot; else one per pair
    /// of games of each pairing (per pairing) or of the round (per round), drawn with
    /// the sealed seed among the table's numbers not yet drawn in the event (all of
    /// them again once the table is exhausted).
    fn ballot_draws(&self, round: u32, boards: u32) -> Result<Draws, TournamentError> {
        let c = self.config_ref();
        let Some(b) = &c.ballot else {
            return Ok(Draws::default());
        };
        let table = ballot::table(&b.table).map_err(|e| {
            TournamentError::precondition(format!("ballot_table: {e}"), Some("T 3"))
        })?;
        let size = table.openings.len() as u32;
        let numbers_in_table: Vec<u32> = table.openings.iter().map(|o| o.number).collect();
        let seed = self.sealed.expect("a created tournament has a sealed seed");
        // The numbers drawn since the table was last exhausted.
        let mut used: BTreeSet<u32> = BTreeSet::new();
        for n in self.rounds.iter().flat_map(|r| r.draws.iter()) {
            used.insert(*n);
            if used.len() as u32 >= size {
                used.clear();
            }
        }
        let pairs = c.games_per_pairing.max(1).div_ceil(2);
        let mut numbers = Vec::new();
        let mut draw = |label: String| -> DrawnOpening {
            let free: Vec<u32> = numbers_in_table
                .iter()
                .copied()
                .filter(|n| !used.contains(n))
                .collect();
            let n = free[seed.draw(&label).below(free.len() as u64) as usize];
            numbers.push(n);
            used.insert(n);
            if used.len() as u32 >= size {
                used.clear();
            }
            let o = table.opening(n).expect("a number of the table");
            DrawnOpening {
                table: table.id.to_string(),
                number: n,
                code: o.code.clone(),
            }
        };
        let mut by_game = Vec::new();
        match b.per {
            super::event::BallotPer::Round => {
                let round_draws: Vec<DrawnOpening> = (1..=pairs)
                    .map(|k| draw(format!("round-{round} opening-{k}")))
                    .collect();
                for board in 1..=boards {
                    for (k, o) in round_draws.iter().enumerate() {
                        by_game.push(((board, k as u32 + 1), o.clone()));
                    }
                }
            }
            super::event::BallotPer::Pairing => {
                for board in 1..=boards {
                    for k in 1..=pairs {
                        let o = draw(format!("round-{round} board-{board} opening-{k}"));
                        by_game.push(((board, k), o));
                    }
                }
            }
        }
        Ok(Draws { by_game, numbers })
    }

    fn start_round(&self, round: u32) -> Result<Vec<EventKind>, TournamentError> {
        let r = self.round(round).ok_or_else(|| {
            TournamentError::precondition(format!("round {round} is not paired"), Some("T 1"))
        })?;
        if r.started_at_ms.is_some() {
            return Err(TournamentError::precondition(
                format!("round {round} has already started"),
                None,
            ));
        }
        if let Some(prev) = round.checked_sub(1).and_then(|p| self.round(p))
            && prev.started_at_ms.is_none()
        {
            return Err(TournamentError::precondition(
                format!("round {} has not started", prev.number),
                None,
            ));
        }
        Ok(vec![EventKind::RoundStarted { round }])
    }

    fn in_round(&self, round: u32, player: u32) -> Result<&RoundState, TournamentError> {
        let p = self.known_player(player)?;
        let r = self.round(round).ok_or_else(|| {
            TournamentError::precondition(format!("round {round} is not paired"), Some("T 1"))
        })?;
        if !r.games().any(|g| g.white == player || g.black == player) {
            return Err(TournamentError::precondition(
                format!("{} has no game in round {round}", p.entrant.name),
                None,
            ));
        }
        Ok(r)
    }

    fn mark_absent(&self, round: u32, player: u32) -> Result<Vec<EventKind>, TournamentError> {
        let r = self.in_round(round, player)?;
        if r.absent.contains(&player) {
            return Err(TournamentError::precondition(
                format!("player {player} is already marked absent in round {round}"),
                Some("T 5"),
            ));
        }
        Ok(vec![EventKind::MarkedAbsent { round, player }])
    }

    fn record_forfeit(&self, round: u32, player: u32) -> Result<Vec<EventKind>, TournamentError> {
        let r = self.in_round(round, player)?;
        let mut events = Vec::new();
        for g in r.games().filter(|g| g.white == player || g.black == player) {
            let white = g.white == player;
            let score = match g.outcome {
                None => {
                    if white {
                        Score::BlackWins
                    } else {
                        Score::WhiteWins
                    }
                }
                // The opponent forfeited first (so this player was winning): both lose.
                Some(Outcome {
                    kind: ResultKind::Forfeit,
                    score: Score::WhiteWins,
                }) if white => Score::BothLose,
                Some(Outcome {
                    kind: ResultKind::Forfeit,
                    score: Score::BlackWins,
                }) if !white => Score::BothLose,
                Some(_) => {
                    return Err(TournamentError::precondition(
                        format!(
                            "{} already has a result; correct it with a result instead",
                            g.game_id
                        ),
                        None,
                    ));
                }
            };
            events.push(EventKind::GameResult {
                game_id: g.game_id.clone(),
                outcome: Outcome {
                    score,
                    kind: ResultKind::Forfeit,
                },
                rule: Some("T 5".into()),
                decided_at_ms: None,
            });
        }
        Ok(events)
    }

    fn game_finished(
        &self,
        game_id: &str,
        outcome: Outcome,
        rule: Option<String>,
        decided_at_ms: Option<i64>,
    ) -> Result<Vec<EventKind>, TournamentError> {
        let (_, slot) = self
            .game(game_id)
            .ok_or_else(|| TournamentError::not_found(format!("no game {game_id} in the event")))?;
        if slot.outcome == Some(outcome) {
            // The same result reported again (a restart's recovery): nothing to record.
            return Ok(Vec::new());
        }
        Ok(vec![EventKind::GameResult {
            game_id: game_id.to_string(),
            outcome,
            rule,
            decided_at_ms,
        }])
    }

    /// T 5: the arbiter annuls a default; the board plays the game again under a new id
    /// (`ID-replayN`), which takes the game's place in the pairing.
    fn replay_game(&self, game_id: &str, reason: &str) -> Result<Vec<EventKind>, TournamentError> {
        let (_, slot) = self
            .game(game_id)
            .ok_or_else(|| TournamentError::not_found(format!("no game {game_id} in the event")))?;
        if reason.trim().is_empty() {
            return Err(TournamentError::invalid(
                "reason: required: why the default is annulled (T 5: a documented delay)",
            ));
        }
        match slot.outcome {
            Some(Outcome {
                kind: ResultKind::Default,
                ..
            }) => {}
            _ => {
                return Err(TournamentError::precondition(
                    format!(
                        "{game_id} was not lost by default: only a default is annulled and \
                         replayed; correct any other result on the game"
                    ),
                    Some("T 5"),
                ));
            }
        }
        let first = slot.replaced.first().map_or(game_id, String::as_str);
        let replay_id = format!("{first}-replay{}", slot.replaced.len() + 1);
        Ok(vec![EventKind::GameReplayed {
            game_id: game_id.to_string(),
            replay_id,
            reason: reason.trim().to_string(),
        }])
    }
}

/// The openings drawn for a round: by (board, pair of games), and the numbers in the
/// order drawn.
#[derive(Default)]
struct Draws {
    by_game: Vec<((u32, u32), DrawnOpening)>,
    numbers: Vec<u32>,
}

impl Draws {
    fn is_empty(&self) -> bool {
        self.numbers.is_empty()
    }

    /// The opening of game `game` (1-based) of `board`: the games of a pair share one.
    fn take(&self, board: u32, game: u32) -> Option<DrawnOpening> {
        let k = game.div_ceil(2);
        self.by_game
            .iter()
            .find(|((b, p), _)| *b == board && *p == k)
            .map(|(_, o)| o.clone())
    }
}

/// C.04.2's order of titles (draughts titles, FMJD): grandmaster, master, FMJD master,
/// candidate master, then the women's titles; anything else after, untitled last.
fn title_rank(title: &str) -> u8 {
    const ORDER: [&str; 8] = ["GMI", "MI", "MF", "CMF", "GMIF", "MIF", "MFF", "CMFF"];
    match ORDER
        .iter()
        .position(|t| t.eq_ignore_ascii_case(title.trim()))
    {
        Some(i) => i as u8,
        None if title.trim().is_empty() => u8::MAX,
        None => ORDER.len() as u8,
    }
}

/// Whether giving these numbers drew by lot (the numbers, or number 1's colour).
fn drew_lot(numbers: &EventKind) -> bool {
    matches!(
        numbers,
        EventKind::NumbersGiven {
            source: NumbersSource::Lot,
            ..
        } | EventKind::NumbersGiven {
            top_white: Some(_),
            ..
        }
    )
}

fn ids(list: &[u32]) -> String {
    list.iter()
        .map(u32::to_string)
        .collect::<Vec<_>>()
        .join(", ")
}
