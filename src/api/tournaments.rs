//! `TournamentService` (issue 40): the wire's side of `hub::Tournaments`. Each request is
//! checked at the edge (`validate`), turned into a tournament command here, decided and
//! recorded by the hub's tournaments, and answered from the state after it.

use tonic::{Request, Response, Status};

use super::auth::{Action, Caller, Role, View};
use super::convert;
use super::error::Refusal;
use super::error::{auth_status, bad, tournament_status};
use super::pb;
use super::ranking::{player_of, player_pb, standings_pb};
use super::service::Api;
use super::validate::checked;
use crate::hub::{Audience, EngineError, TournamentsError};
use crate::tournament::{
    Ballot, BallotPer, Bye, ByeKind, ByeScore, Command, Config, DEFAULT_TIME_MS, Entrant,
    GivenPairings, Pairing, PairingSource, ResultKind, RoundState, Score, Scoring, Seed, System,
    Tiebreak, Tournament, ballot, event_key, report_text, standings, swiss, trf,
};
use standings::Verdict;

/// Fresh randomness for a seed sealed before a draw (T 2).
fn fresh_seed() -> Result<Seed, Status> {
    let mut bytes = [0u8; 32];
    getrandom::fill(&mut bytes)
        .map_err(|e| Refusal::Unavailable(format!("no randomness for the lot's seed: {e}")))?;
    Ok(Seed(bytes))
}

/// The wall clock now, ms since the epoch: when a command is recorded.
fn now_ms() -> i64 {
    chrono::Utc::now().timestamp_millis()
}

fn system(v: i32) -> Result<System, Status> {
    match pb::TournamentSystem::try_from(v) {
        Ok(pb::TournamentSystem::RoundRobin) => Ok(System::RoundRobin),
        Ok(pb::TournamentSystem::DoubleRoundRobin) => Ok(System::DoubleRoundRobin),
        Ok(pb::TournamentSystem::Swiss) => Ok(System::Swiss),
        Ok(pb::TournamentSystem::Manual) => Ok(System::Manual),
        _ => Err(Refusal::Field(
            "system: required (ROUND_ROBIN, DOUBLE_ROUND_ROBIN, SWISS or MANUAL; RULES.md T 1)"
                .into(),
        )
        .into()),
    }
}

fn system_pb(s: System) -> pb::TournamentSystem {
    match s {
        System::RoundRobin => pb::TournamentSystem::RoundRobin,
        System::DoubleRoundRobin => pb::TournamentSystem::DoubleRoundRobin,
        System::Swiss => pb::TournamentSystem::Swiss,
        System::Manual => pb::TournamentSystem::Manual,
    }
}

fn tiebreak(v: i32) -> Option<Tiebreak> {
    Some(match pb::Tiebreak::try_from(v).ok()? {
        pb::Tiebreak::Unspecified => return None,
        pb::Tiebreak::Wins => Tiebreak::Wins,
        pb::Tiebreak::MutualResult => Tiebreak::MutualResult,
        pb::Tiebreak::SonnebornBerger => Tiebreak::SonnebornBerger,
        pb::Tiebreak::Solkoff => Tiebreak::Solkoff,
        pb::Tiebreak::TruncatedSolkoff => Tiebreak::TruncatedSolkoff,
        pb::Tiebreak::MedianSolkoff => Tiebreak::MedianSolkoff,
        pb::Tiebreak::GamesWithBlack => Tiebreak::GamesWithBlack,
        pb::Tiebreak::AverageRatingOfOpponents => Tiebreak::AverageRatingOfOpponents,
    })
}

fn tiebreak_pb(t: Tiebreak) -> pb::Tiebreak {
    match t {
        Tiebreak::Wins => pb::Tiebreak::Wins,
        Tiebreak::MutualResult => pb::Tiebreak::MutualResult,
        Tiebreak::SonnebornBerger => pb::Tiebreak::SonnebornBerger,
        Tiebreak::Solkoff => pb::Tiebreak::Solkoff,
        Tiebreak::TruncatedSolkoff => pb::Tiebreak::TruncatedSolkoff,
        Tiebreak::MedianSolkoff => pb::Tiebreak::MedianSolkoff,
        Tiebreak::GamesWithBlack => pb::Tiebreak::GamesWithBlack,
        Tiebreak::AverageRatingOfOpponents => pb::Tiebreak::AverageRatingOfOpponents,
    }
}

fn bye_kind(v: i32) -> Result<ByeKind, Status> {
    match pb::ByeKind::try_from(v) {
        Ok(pb::ByeKind::FreeRound) => Ok(ByeKind::FreeRound),
        Ok(pb::ByeKind::PairingAllocated) => Ok(ByeKind::PairingAllocated),
        Ok(pb::ByeKind::Half) => Ok(ByeKind::Half),
        Ok(pb::ByeKind::Zero) => Ok(ByeKind::Zero),
        _ => Err(Refusal::Field(
            "byes[].kind: required (FREE_ROUND, PAIRING_ALLOCATED, HALF or ZERO; RULES.md T 6)"
                .into(),
        )
        .into()),
    }
}

fn bye_kind_pb(k: ByeKind) -> pb::ByeKind {
    match k {
        ByeKind::FreeRound => pb::ByeKind::FreeRound,
        ByeKind::PairingAllocated => pb::ByeKind::PairingAllocated,
        ByeKind::Half => pb::ByeKind::Half,
        ByeKind::Zero => pb::ByeKind::Zero,
    }
}

/// The settings of a new tournament from its request.
fn config(r: &pb::CreateTournamentRequest, delay: u64) -> Result<Config, Status> {
    let variant = convert::variant(r.variant).map_err(bad)?;
    let mut settings =
        convert::settings(variant, &r.time_control, r.settings.as_ref()).map_err(bad)?;
    if r.settings
        .as_ref()
        .is_none_or(|s| s.broadcast_delay_ms.is_none())
    {
        settings.broadcast_delay_ms = delay;
    }
    let system = system(r.system)?;
    let tiebreaks = if r.tiebreaks.is_empty() {
        Tiebreak::defaults(system)
    } else {
        r.tiebreaks
            .iter()
            .enumerate()
            .map(|(i, t)| {
                tiebreak(*t).ok_or_else(|| {
                    Refusal::Field(format!("tiebreaks[{i}]: not a tiebreak (RULES.md T 8)"))
                })
            })
            .collect::<Result<_, _>>()?
    };
    let ballot = (!r.ballot_table.is_empty()).then(|| Ballot {
        table: r.ballot_table.clone(),
        per: if r.ballot_per_round {
            BallotPer::Round
        } else {
            BallotPer::Pairing
        },
    });
    Ok(Config {
        name: r.name.trim().to_string(),
        system,
        rounds: r.rounds,
        settings,
        scoring: match pb::TournamentScoring::try_from(r.scoring) {
            Ok(pb::TournamentScoring::OneHalfZero) => Scoring::OneHalfZero,
            _ => Scoring::TwoOneZero,
        },
        tiebreaks,
        ballot,
        games_per_pairing: r.games_per_pairing.max(1),
        default_time_ms: r.default_time_ms.unwrap_or(DEFAULT_TIME_MS),
        bye_score: ByeScore::Win,
        annul_before_half: true,
        site: r.site.trim().to_string(),
        time_zone: r.time_zone.clone(),
    })
}

fn pairing_pb(t: &Tournament, p: &Pairing) -> pb::Pairing {
    let opening = p.games.first().and_then(|g| g.opening.as_ref()).map(|d| {
        let row = ballot::table(&d.table)
            .ok()
            .and_then(|table| table.opening(d.number));
        pb::Opening {
            table: d.table.clone(),
            number: d.number,
            code: d.code.clone(),
            moves: row.map(|o| o.moves.clone()).unwrap_or_default(),
            fen: row.map(|o| o.fen.clone()).unwrap_or_default(),
        }
    });
    pb::Pairing {
        board: p.board,
        white: player_of(t, p.white),
        black: player_of(t, p.black),
        game_ids: p.games.iter().map(|g| g.game_id.clone()).collect(),
        opening,
        results: p
            .games
            .iter()
            .map(|g| {
                let (result, kind) = match g.outcome {
                    None => (
                        pb::GameResult::Unspecified,
                        pb::TournamentResultKind::Unspecified,
                    ),
                    Some(o) => (
                        match o.score {
                            Score::WhiteWins => pb::GameResult::WhiteWins,
                            Score::BlackWins => pb::GameResult::BlackWins,
                            Score::Draw => pb::GameResult::Draw,
                            Score::BothLose => pb::GameResult::BothLose,
                        },
                        match o.kind {
                            ResultKind::Played => pb::TournamentResultKind::Played,
                            ResultKind::Default => pb::TournamentResultKind::Default,
                            ResultKind::Forfeit => pb::TournamentResultKind::Forfeit,
                        },
                    ),
                };
                pb::TournamentGameResult {
                    game_id: g.game_id.clone(),
                    result: result as i32,
                    kind: kind as i32,
                }
            })
            .collect(),
    }
}

fn byes_pb(t: &Tournament, byes: &[Bye]) -> Vec<pb::TournamentBye> {
    byes.iter()
        .map(|b| pb::TournamentBye {
            player: player_of(t, b.player),
            kind: bye_kind_pb(b.kind) as i32,
        })
        .collect()
}

fn round_pb(t: &Tournament, r: &RoundState) -> pb::TournamentRound {
    pb::TournamentRound {
        round: r.number,
        pairings: r.pairings.iter().map(|p| pairing_pb(t, p)).collect(),
        byes: byes_pb(t, &r.byes),
        started_at: r.started_at_ms.map(|ms| prost_types::Timestamp {
            seconds: ms.div_euclid(1000),
            nanos: i32::try_from(ms.rem_euclid(1000) * 1_000_000).unwrap_or(0),
        }),
        absent_player_ids: r.absent.clone(),
        source: match &r.source {
            PairingSource::Berger => "Berger tables".into(),
            PairingSource::Engine { engine } => engine.clone(),
            PairingSource::Arbiter { note } => note.clone(),
        },
        finished: r.finished(),
    }
}

/// A tournament as the API shows it; `whole`: with players and rounds.
fn tournament_pb(t: &Tournament, whole: bool) -> pb::Tournament {
    let Some(c) = t.config() else {
        return pb::Tournament::default();
    };
    let rounds = t.rounds();
    pb::Tournament {
        key: event_key(&c.name),
        name: c.name.clone(),
        variant: convert::variant_pb(c.settings.variant) as i32,
        system: system_pb(c.system) as i32,
        rounds: t.total_rounds(),
        time_control: c
            .settings
            .time_control
            .as_ref()
            .map(ToString::to_string)
            .unwrap_or_default(),
        ballot_table: c
            .ballot
            .as_ref()
            .map(|b| b.table.clone())
            .unwrap_or_default(),
        games_per_pairing: c.games_per_pairing,
        default_time_ms: c.default_time_ms,
        site: c.site.clone(),
        time_zone: c.time_zone.clone(),
        scoring: match c.scoring {
            Scoring::TwoOneZero => pb::TournamentScoring::TwoOneZero,
            Scoring::OneHalfZero => pb::TournamentScoring::OneHalfZero,
        } as i32,
        tiebreaks: c.tiebreaks.iter().map(|t| tiebreak_pb(*t) as i32).collect(),
        players: if whole {
            t.players().iter().map(player_pb).collect()
        } else {
            Vec::new()
        },
        paired_rounds: if whole {
            rounds.iter().map(|r| round_pb(t, r)).collect()
        } else {
            Vec::new()
        },
        seed_commitment: t.commitment().unwrap_or_default(),
        revealed_seeds: t
            .revealed_seeds()
            .iter()
            .map(|s| crate::tournament::lot::hex(&s.0))
            .collect(),
        finished: t.finished(),
    }
}

fn paired_pb(t: &Tournament, round: u32) -> Result<pb::PairRoundResponse, Status> {
    let r = t
        .round(round)
        .ok_or_else(|| Refusal::Internal(format!("round {round} not recorded")))?;
    Ok(pb::PairRoundResponse {
        round,
        pairings: r.pairings.iter().map(|p| pairing_pb(t, p)).collect(),
        byes: byes_pb(t, &r.byes),
    })
}

fn round_of(t: &Tournament, round: u32) -> Result<pb::TournamentRound, Status> {
    t.round(round)
        .map(|r| round_pb(t, r))
        .ok_or_else(|| Refusal::Internal(format!("round {round} not recorded")).into())
}

/// A crosstable cell as the wire has it.
fn cell_pb(c: &standings::Cell, number: &dyn Fn(u32) -> u32) -> pb::CrosstableCell {
    let result = match (c.verdict, c.played) {
        (None, _) if c.bye.is_some() => "-",
        (None, _) => "*",
        (Some(Verdict::Win), true) => "1",
        (Some(Verdict::Draw), true) => "½",
        (Some(Verdict::Loss), true) => "0",
        (Some(Verdict::Win), false) => "+",
        (Some(Verdict::Draw), false) => "=",
        (Some(Verdict::Loss), false) => "-",
    };
    pb::CrosstableCell {
        round: c.round,
        opponent: c.opponent.map_or(0, number),
        colour: match c.white {
            Some(true) => pb::Side::White,
            Some(false) => pb::Side::Black,
            None => pb::Side::Unspecified,
        } as i32,
        result: result.to_string(),
        points: c.points,
        game_points: c.game_points,
        bye: c.bye.map_or(pb::ByeKind::Unspecified, bye_kind_pb) as i32,
    }
}

/// The tournament as `role` may see it: live for the event's arbiters, else each result
/// behind the event's broadcast delay (the games' own delay, from their template).
fn seen_by(role: &Role, t: Tournament) -> Tournament {
    let Some(c) = t.config() else {
        return t;
    };
    if View::of(role, &c.name) == View::All(Audience::Live) {
        return t;
    }
    let delay = c.settings.broadcast_delay_ms;
    t.as_seen(now_ms(), delay)
}

impl Api {
    /// The key of a tournament named by its name or key.
    fn key(name: &str) -> String {
        event_key(name.trim())
    }

    /// The tournament named `name` (or keyed), as its log and its games have it now.
    async fn read_tournament(&self, name: &str) -> Result<Tournament, Status> {
        self.tournaments()
            .get(&Self::key(name))
            .await
            .map_err(|e| tournament_status(&e))
    }

    /// An arbiter of the tournament's event may write to it (PERMISSION_DENIED otherwise).
    async fn write_access(&self, role: &Role, key: &str) -> Result<Tournament, Status> {
        let t = self
            .tournaments()
            .get(key)
            .await
            .map_err(|e| tournament_status(&e))?;
        let name = t.config().map(|c| c.name.clone()).unwrap_or_default();
        role.allows(Action::Create { event: &name })
            .map_err(auth_status)?;
        Ok(t)
    }

    /// Runs a command on a tournament after checking the caller may write to it.
    async fn tournament_command(
        &self,
        caller: &Caller,
        name: &str,
        command: Command,
    ) -> Result<Tournament, Status> {
        let key = Self::key(name);
        self.write_access(&caller.role, &key).await?;
        let (_, after) = self
            .tournaments()
            .command(&key, &command, now_ms(), &caller.arbiter())
            .await
            .map_err(|e| tournament_status(&e))?;
        Ok(after)
    }

    /// Runs a command on round `round` and answers with the round after it.
    async fn round_command(
        &self,
        caller: &Caller,
        name: &str,
        round: u32,
        command: Command,
    ) -> Result<Option<pb::TournamentRound>, Status> {
        let t = self.tournament_command(caller, name, command).await?;
        Ok(Some(round_of(&t, round)?))
    }

    /// Pairs a round with the given pairings (or the Berger tables), numbering the players
    /// first by the system's rule if round 1 finds them unnumbered.
    async fn pair(
        &self,
        caller: &Caller,
        name: &str,
        round: u32,
        given: Option<GivenPairings>,
    ) -> Result<pb::PairRoundResponse, Status> {
        let key = Self::key(name);
        let before = self.write_access(&caller.role, &key).await?;
        let by = caller.arbiter();
        if before.numbers().0.is_empty() && before.rounds().is_empty() {
            let number = Command::NumberPlayers {
                hall: None,
                next_seed: fresh_seed()?,
            };
            self.tournaments()
                .command(&key, &number, now_ms(), &by)
                .await
                .map_err(|e| tournament_status(&e))?;
        }
        let swiss = before.config().is_some_and(|c| c.system == System::Swiss);
        let given = match given {
            None if swiss => Some(self.engine_pairs(&key, round).await?),
            given => given,
        };
        let command = Command::PairRound {
            round,
            given,
            next_seed: fresh_seed()?,
        };
        let (_, after) = self
            .tournaments()
            .command(&key, &command, now_ms(), &by)
            .await
            .map_err(|e| tournament_status(&e))?;
        paired_pb(&after, round)
    }
}

impl Api {
    /// A Swiss round's pairings from the configured engine (T 1), asked on the
    /// tournament as it stands: UNAVAILABLE with the engine's own words when it is
    /// missing or fails; FAILED_PRECONDITION when none is configured.
    async fn engine_pairs(&self, key: &str, round: u32) -> Result<GivenPairings, Status> {
        let engine = self.pairing_engine().cloned().ok_or_else(|| {
            Refusal::NotNow(
                "a Swiss round's pairings come from an engine (RULES.md T 1): configure \
                 [tournaments] pairing_engine, or give them (PairRound.boards, ImportPairings)"
                    .into(),
            )
        })?;
        let state = self
            .tournaments()
            .get(key)
            .await
            .map_err(|e| tournament_status(&e))?;
        let asked = tokio::task::spawn_blocking(move || engine.pair_blocking(&state, round))
            .await
            .map_err(|e| Refusal::Internal(format!("the pairing engine's thread: {e}")))?;
        asked.map_err(|e| match e {
            EngineError::Unavailable(words) => Refusal::Unavailable(words).into(),
            EngineError::Refused(r) => tournament_status(&r.into()),
        })
    }
}

#[tonic::async_trait]
impl pb::tournament_service_server::TournamentService for Api {
    async fn create_tournament(
        &self,
        req: Request<pb::CreateTournamentRequest>,
    ) -> Result<Response<pb::CreateTournamentResponse>, Status> {
        let role = self.role(&req)?;
        let r = checked(req)?;
        role.allows(Action::Create {
            event: r.name.trim(),
        })
        .map_err(auth_status)?;
        if !r.ballot_table.is_empty() {
            ballot::table(&r.ballot_table)
                .map_err(|e| Refusal::Field(format!("ballot_table: {e} (RULES.md T 3)")))?;
        }
        let config = config(&r, self.event_delay(r.name.trim()))?;
        let (_, t) = self
            .tournaments()
            .create(config, fresh_seed()?, now_ms())
            .await
            .map_err(|e| tournament_status(&e))?;
        Ok(Response::new(pb::CreateTournamentResponse {
            tournament: Some(tournament_pb(&t, true)),
        }))
    }

    async fn get_tournament(
        &self,
        req: Request<pb::GetTournamentRequest>,
    ) -> Result<Response<pb::GetTournamentResponse>, Status> {
        let role = self.role(&req)?;
        let r = checked(req)?;
        let t = seen_by(&role, self.read_tournament(&r.tournament).await?);
        Ok(Response::new(pb::GetTournamentResponse {
            tournament: Some(tournament_pb(&t, true)),
        }))
    }

    async fn list_tournaments(
        &self,
        req: Request<pb::ListTournamentsRequest>,
    ) -> Result<Response<pb::ListTournamentsResponse>, Status> {
        let role = self.role(&req)?;
        let records = self
            .hub()
            .store()
            .list_tournaments()
            .await
            .map_err(|e| tournament_status(&e.into()))?;
        let mut tournaments = Vec::with_capacity(records.len());
        for record in records {
            match self.tournaments().get(&record.key).await {
                Ok(t) => tournaments.push(tournament_pb(&seen_by(&role, t), false)),
                Err(TournamentsError::Refused(_)) => {}
                Err(e) => return Err(tournament_status(&e)),
            }
        }
        Ok(Response::new(pb::ListTournamentsResponse { tournaments }))
    }

    async fn add_players(
        &self,
        req: Request<pb::AddPlayersRequest>,
    ) -> Result<Response<pb::AddPlayersResponse>, Status> {
        let caller = self.caller(&req)?;
        let r = checked(req)?;
        let players = r
            .players
            .iter()
            .map(|p| Entrant {
                name: p.name.trim().to_string(),
                fmjd_id: p.fmjd_id.clone(),
                federation: p.federation.clone(),
                rating: p.rating,
                title: p.title.clone(),
            })
            .collect();
        let t = self
            .tournament_command(&caller, &r.tournament, Command::AddPlayers { players })
            .await?;
        Ok(Response::new(pb::AddPlayersResponse {
            players: t.players().iter().map(player_pb).collect(),
        }))
    }

    async fn withdraw_player(
        &self,
        req: Request<pb::WithdrawPlayerRequest>,
    ) -> Result<Response<pb::WithdrawPlayerResponse>, Status> {
        let caller = self.caller(&req)?;
        let r = checked(req)?;
        let t = self
            .tournament_command(
                &caller,
                &r.tournament,
                Command::Withdraw {
                    player: r.player_id,
                    reason: r.reason.clone(),
                },
            )
            .await?;
        Ok(Response::new(pb::WithdrawPlayerResponse {
            player: player_of(&t, r.player_id),
        }))
    }

    async fn number_players(
        &self,
        req: Request<pb::NumberPlayersRequest>,
    ) -> Result<Response<pb::NumberPlayersResponse>, Status> {
        let caller = self.caller(&req)?;
        let r = checked(req)?;
        let next_seed = fresh_seed()?;
        let t = self
            .tournament_command(
                &caller,
                &r.tournament,
                Command::NumberPlayers {
                    hall: (!r.hall_order.is_empty()).then(|| r.hall_order.clone()),
                    next_seed,
                },
            )
            .await?;
        Ok(Response::new(pb::NumberPlayersResponse {
            players: t.players().iter().map(player_pb).collect(),
        }))
    }

    async fn pair_round(
        &self,
        req: Request<pb::PairRoundRequest>,
    ) -> Result<Response<pb::PairRoundResponse>, Status> {
        let caller = self.caller(&req)?;
        let r = checked(req)?;
        let given = if r.boards.is_empty() && r.byes.is_empty() {
            None
        } else {
            Some(GivenPairings {
                boards: r
                    .boards
                    .iter()
                    .map(|b| (b.white_player_id, b.black_player_id))
                    .collect(),
                byes: r
                    .byes
                    .iter()
                    .map(|b| {
                        Ok(Bye {
                            player: b.player_id,
                            kind: bye_kind(b.kind)?,
                        })
                    })
                    .collect::<Result<_, Status>>()?,
                source: PairingSource::Arbiter {
                    note: if r.source_note.is_empty() {
                        "entered by the arbiter".into()
                    } else {
                        r.source_note.clone()
                    },
                },
            })
        };
        Ok(Response::new(
            self.pair(&caller, &r.tournament, r.round, given).await?,
        ))
    }

    async fn start_round(
        &self,
        req: Request<pb::StartRoundRequest>,
    ) -> Result<Response<pb::StartRoundResponse>, Status> {
        let caller = self.caller(&req)?;
        let r = checked(req)?;
        let round = Command::StartRound { round: r.round };
        Ok(Response::new(pb::StartRoundResponse {
            round: self
                .round_command(&caller, &r.tournament, r.round, round)
                .await?,
        }))
    }

    async fn mark_absent(
        &self,
        req: Request<pb::MarkAbsentRequest>,
    ) -> Result<Response<pb::MarkAbsentResponse>, Status> {
        let caller = self.caller(&req)?;
        let r = checked(req)?;
        let absent = Command::MarkAbsent {
            round: r.round,
            player: r.player_id,
        };
        Ok(Response::new(pb::MarkAbsentResponse {
            round: self
                .round_command(&caller, &r.tournament, r.round, absent)
                .await?,
        }))
    }

    async fn record_forfeit(
        &self,
        req: Request<pb::RecordForfeitRequest>,
    ) -> Result<Response<pb::RecordForfeitResponse>, Status> {
        let caller = self.caller(&req)?;
        let r = checked(req)?;
        let forfeit = Command::RecordForfeit {
            round: r.round,
            player: r.player_id,
        };
        Ok(Response::new(pb::RecordForfeitResponse {
            round: self
                .round_command(&caller, &r.tournament, r.round, forfeit)
                .await?,
        }))
    }

    async fn annul_default(
        &self,
        req: Request<pb::AnnulDefaultRequest>,
    ) -> Result<Response<pb::AnnulDefaultResponse>, Status> {
        let caller = self.caller(&req)?;
        let r = checked(req)?;
        let annul = Command::AnnulDefault {
            game_id: r.game_id.clone(),
            reason: r.reason.clone(),
        };
        let t = self
            .tournament_command(&caller, &r.tournament, annul)
            .await?;
        let (round, slot) = t.replacing(&r.game_id).ok_or_else(|| {
            Refusal::Internal(format!("{}: the replay is not recorded", r.game_id))
        })?;
        Ok(Response::new(pb::AnnulDefaultResponse {
            round: Some(round_of(&t, round)?),
            replay_game_id: slot.game_id.clone(),
        }))
    }

    async fn import_pairings(
        &self,
        req: Request<pb::ImportPairingsRequest>,
    ) -> Result<Response<pb::ImportPairingsResponse>, Status> {
        let caller = self.caller(&req)?;
        let r = checked(req)?;
        let key = Self::key(&r.tournament);
        let before = self.write_access(&caller.role, &key).await?;
        let read =
            trf::read_round(&r.trf, r.round).map_err(|e| Refusal::Field(format!("trf: {e}")))?;
        let note = if r.source_note.is_empty() {
            "imported from TRF".to_string()
        } else {
            r.source_note.clone()
        };
        let given = swiss::given_from(&before, &read, PairingSource::Arbiter { note })
            .map_err(|e| tournament_status(&e.into()))?;
        let paired = self
            .pair(&caller, &r.tournament, r.round, Some(given))
            .await?;
        Ok(Response::new(pb::ImportPairingsResponse {
            paired: Some(paired),
        }))
    }

    async fn get_standings(
        &self,
        req: Request<pb::GetStandingsRequest>,
    ) -> Result<Response<pb::GetStandingsResponse>, Status> {
        let role = self.role(&req)?;
        let r = checked(req)?;
        Ok(Response::new(self.standings_for(&role, &r).await?))
    }

    async fn get_crosstable(
        &self,
        req: Request<pb::GetCrosstableRequest>,
    ) -> Result<Response<pb::GetCrosstableResponse>, Status> {
        let role = self.role(&req)?;
        let r = checked(req)?;
        Ok(Response::new(self.crosstable_for(&role, &r).await?))
    }

    async fn get_round_report(
        &self,
        req: Request<pb::GetRoundReportRequest>,
    ) -> Result<Response<pb::GetRoundReportResponse>, Status> {
        let role = self.role(&req)?;
        let r = checked(req)?;
        let format = match pb::ReportFormat::try_from(r.format) {
            Ok(pb::ReportFormat::Csv) => report_text::Format::Csv,
            Ok(pb::ReportFormat::Json) => report_text::Format::Json,
            _ => report_text::Format::Html,
        };
        let text = self
            .round_report(&role, &r.tournament, r.round, format)
            .await?;
        Ok(Response::new(pb::GetRoundReportResponse {
            text,
            content_type: format.content_type().to_string(),
        }))
    }

    async fn export_trf(
        &self,
        req: Request<pb::ExportTrfRequest>,
    ) -> Result<Response<pb::ExportTrfResponse>, Status> {
        let role = self.role(&req)?;
        let r = checked(req)?;
        let t = seen_by(&role, self.read_tournament(&r.tournament).await?);
        Ok(Response::new(pb::ExportTrfResponse {
            trf: trf::write_trf(&t),
        }))
    }
}

impl Api {
    /// The crosstable (GetCrosstable) as `role` sees the tournament.
    ///
    /// # Errors
    /// NOT_FOUND; the store or a game failing.
    pub(crate) async fn crosstable_for(
        &self,
        role: &Role,
        r: &pb::GetCrosstableRequest,
    ) -> Result<pb::GetCrosstableResponse, Status> {
        let t = seen_by(role, self.read_tournament(&r.tournament).await?);
        let s = t.standings(0);
        let number = |id: u32| t.player(id).map_or(0, |p| p.pairing_number);
        let mut rows: Vec<pb::CrosstableRow> = s
            .rows
            .iter()
            .map(|row| pb::CrosstableRow {
                player: player_of(&t, row.player),
                rank: row.rank,
                points: row.points,
                cells: row.cells.iter().map(|c| cell_pb(c, &number)).collect(),
            })
            .collect();
        rows.sort_by_key(|row| {
            row.player
                .as_ref()
                .map_or((u32::MAX, 0), |p| (p.pairing_number, p.player_id))
        });
        Ok(pb::GetCrosstableResponse { rows })
    }

    /// ExportTrf's text for `GET /trf/<event>`, which only the event's arbiter may read
    /// (the TRF names every player with their FMJD id and rating: a file for the
    /// federation and the rating officer, not for the public).
    ///
    /// # Errors
    /// NOT_FOUND; PERMISSION_DENIED for any role but the arbiter of the event.
    pub(crate) async fn trf_for(&self, role: &Role, tournament: &str) -> Result<String, Status> {
        let t = self.read_tournament(tournament).await?;
        let name = t.config().map(|c| c.name.clone()).unwrap_or_default();
        match role {
            Role::Arbiter { event } if event.as_deref().is_none_or(|e| e == name) => {}
            _ => {
                return Err(Refusal::Denied(format!(
                    "authorization: the TRF of {name:?} is for its arbiter; {} may not \
                     read it",
                    role.describe()
                ))
                .into());
            }
        }
        Ok(trf::write_trf(&seen_by(role, t)))
    }

    /// GetStandings's answer for `role` (HTTP's `/standings/<event>.json` and `.csv` too):
    /// behind the broadcast delay for non-arbiters.
    ///
    /// # Errors
    /// NOT_FOUND; FAILED_PRECONDITION for a round not paired.
    pub(crate) async fn standings_for(
        &self,
        role: &Role,
        r: &pb::GetStandingsRequest,
    ) -> Result<pb::GetStandingsResponse, Status> {
        let t = seen_by(role, self.read_tournament(&r.tournament).await?);
        let paired = t.rounds().len() as u32;
        if r.round > paired {
            return Err(Refusal::NotNow(format!(
                "round: round {} is not paired ({paired} so far)",
                r.round
            ))
            .into());
        }
        Ok(standings_pb(&t, r.round))
    }
}
