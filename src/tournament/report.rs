//! The arbiter's round report (issue 41): what the arbiter owes the federation at the end
//! of a round, as data. Per board of the round, in board order (a micro-match's games
//! together): the players; each game's result with its reason and rule; every incident
//! of the game (warnings, rulings, claims and their decisions, draw offers and answers,
//! irregularities flagged and ruled, clock adjustments, pauses and resumes, flag falls,
//! outages, positions set, board health changes, absences marked, results declared or
//! corrected), each with its time, its rule and who did it; then the score sheet, each
//! move numbered as the game writes it, with the wall time it was played, the time it
//! took and both clocks after it. Then the round's byes and absences.
//!
//! Pure: made from the tournament's round (pairings, byes, forfeits without a game,
//! absences) and each game's log; the words of every event come from the one
//! description of events ([`crate::game::describe`]), never from a table of their own
//! here. Rendered as HTML, CSV and JSON by [`super::report_text`].

use std::collections::BTreeMap;

use chrono::{DateTime, SecondsFormat, Utc};
use serde::Serialize;

use super::event::{ByeKind, GameSlot, Player, ResultKind, Score};
use super::state::{RoundState, Tournament};
use crate::clock::ClockOp;
use crate::game::describe::{self, Seen, clock_time};
use crate::game::pdn::result_form;
use crate::game::{
    Actor, EndReason, EventKind, EventNote, GameEvent, GameMeta, Outcome as GameOutcome, Session,
};
use crate::notation::pdn::PdnResult;
use crate::rules::Color;

/// A game's log as the store keeps it, with its metadata.
#[derive(Debug, Clone, Default)]
pub struct GameLog {
    /// The game's metadata (the names a `GameCreated` line gives).
    pub meta: GameMeta,
    /// Its events, in seq order from 1 (a prefix of the log for a game still playing).
    pub events: Vec<GameEvent>,
}

/// Where a round stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum RoundStatus {
    /// Paired, not started.
    NotStarted,
    /// Started; some game has no result yet: the report is the round as it stands.
    InProgress,
    /// Every game has a result.
    Finished,
}

impl RoundStatus {
    /// In words: `not started`, `in progress`, `finished`.
    pub fn words(self) -> &'static str {
        match self {
            RoundStatus::NotStarted => "not started",
            RoundStatus::InProgress => "in progress",
            RoundStatus::Finished => "finished",
        }
    }
}

/// Where a game stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum GameStatus {
    /// No log yet (the round has not started), or created and not started.
    NotStarted,
    /// Being played.
    Playing,
    /// Over, with a result.
    Finished,
    /// Decided without a game (a forfeit entered, a withdrawn player, T 5, T 6).
    NotPlayed,
    /// A game whose default the arbiter annulled (T 5): the board played again.
    Replaced,
}

/// A player as the report names them.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct ReportPlayer {
    /// The tournament's id of the player (0: not a player of the event).
    pub id: u32,
    /// The pairing number (T 2), 0 until given.
    pub number: u32,
    /// The name as the event lists it.
    pub name: String,
    /// The federation's code.
    pub federation: String,
    /// The rating; 0 unrated.
    pub rating: u32,
}

/// A game's result as the report writes it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ReportResult {
    /// The score in the game's form: `1-0`, `2-0`, `1/2-1/2`, `0-0`, `*` (annulled).
    pub score: String,
    /// Why, in the record's words (`the flag fell`).
    pub reason: String,
    /// The rule (RULES.md numbering), if one decided it.
    pub rule: Option<String>,
    /// Who decided it (see [`actor`]).
    pub actor: String,
    /// When (RFC 3339, UTC), if known.
    pub time: Option<String>,
    /// The whole line: `1-0, the flag fell (RU 1.6.3)`.
    pub text: String,
}

/// One incident of a game: an event the arbiter reports.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Incident {
    /// Its seq in the game's log (0: from the tournament, not the game's log).
    pub seq: u64,
    /// When (RFC 3339, UTC, milliseconds).
    pub time: String,
    /// What kind: `warning`, `claim`, `claim_ruling`, `draw_offer`, `draw_answer`,
    /// `irregularity`, `irregularity_ruling`, `pause`, `resume`, `clock_adjustment`,
    /// `flag`, `time_called`, `outage`, `position_set`, `board_health`, `board_flood`,
    /// `absent`, `draw_condition`, `forty_move_count`, `start`, `result`, `correction`,
    /// `forfeit`.
    pub kind: &'static str,
    /// Who did it (see [`actor`]).
    pub actor: String,
    /// The rule it cites (RULES.md numbering), if any.
    pub rule: Option<String>,
    /// In words, as the game's record comments it (or the log's words where the record
    /// has none: board health).
    pub text: String,
}

/// One move of the score sheet.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct SheetMove {
    /// Its seq in the game's log.
    pub seq: u64,
    /// The score sheet's number (a move of the first player and its answer share one).
    pub number: u32,
    /// The side that moved: `white` or `black`.
    pub side: String,
    /// The move in the game's notation.
    pub notation: String,
    /// As the score sheet writes it: `1. c3-d4`, `1... f6-g5`.
    pub written: String,
    /// When it was played (RFC 3339, UTC, milliseconds).
    pub time: String,
    /// How long the mover thought, ms (pauses excluded).
    pub spent_ms: Option<u64>,
    /// White's time after the move (after its press), ms; `None` untimed.
    pub white_ms: Option<u64>,
    /// Black's time after the move, ms.
    pub black_ms: Option<u64>,
}

impl SheetMove {
    /// The time it took and the clocks after it: `0:03.2 spent; clocks 4:57.0 / 5:00.0`.
    pub fn timing(&self) -> String {
        let mut s = self
            .spent_ms
            .map(|ms| format!("{} spent", clock_time(ms_i64(ms))))
            .unwrap_or_default();
        if let (Some(w), Some(b)) = (self.white_ms, self.black_ms) {
            if !s.is_empty() {
                s.push_str("; ");
            }
            s.push_str(&format!(
                "clocks white {}, black {}",
                clock_time(ms_i64(w)),
                clock_time(ms_i64(b))
            ));
        }
        s
    }
}

/// One game of a board.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct GameReport {
    /// The game's id.
    pub game_id: String,
    /// Its number in the pairing (1 unless a micro-match, T 4).
    pub game: u32,
    /// White.
    pub white: ReportPlayer,
    /// Black.
    pub black: ReportPlayer,
    /// The variant (`russian`), when the game has a log.
    pub variant: Option<String>,
    /// The time control as the game has it, when timed.
    pub time_control: Option<String>,
    /// Where it stands.
    pub status: GameStatus,
    /// Its result, once it has one.
    pub result: Option<ReportResult>,
    /// Every incident, in the order of the log.
    pub incidents: Vec<Incident>,
    /// The score sheet.
    pub sheet: Vec<SheetMove>,
    /// Why the log could not be read, if it could not (the rest of the report stands).
    pub problem: Option<String>,
}

/// One board of the round.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct BoardReport {
    /// The board number.
    pub board: u32,
    /// The player with White in the first game.
    pub white: ReportPlayer,
    /// The player with Black in the first game.
    pub black: ReportPlayer,
    /// Its games: games replaced after an annulled default first, then the game(s) of
    /// the pairing in playing order.
    pub games: Vec<GameReport>,
}

/// A player without a game in the round.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ReportBye {
    /// Who.
    pub player: ReportPlayer,
    /// What kind (`free_round`, `pairing_allocated`, `half`, `zero`).
    pub kind: ByeKind,
    /// In words, with the rule.
    pub text: String,
}

/// The arbiter's report of one round.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct RoundReport {
    /// The event's name.
    pub event: String,
    /// The round.
    pub round: u32,
    /// Where the round stands (`in_progress`: the report is the round as it stands).
    pub status: RoundStatus,
    /// When it started (RFC 3339, UTC), if it has.
    pub started_at: Option<String>,
    /// When the report was made (RFC 3339, UTC): a round in progress is reported as it
    /// stood then.
    pub as_of: String,
    /// The boards in board order.
    pub boards: Vec<BoardReport>,
    /// Who had no game.
    pub byes: Vec<ReportBye>,
    /// Players the arbiter marked absent for the round (T 5).
    pub absent: Vec<ReportPlayer>,
}

/// The report of round `round` of `t` as it stands at `now_ms` (wall ms since the epoch),
/// from the logs of its games by id (a game with no log is reported from the tournament:
/// not started, or decided without play). `None` when the round is not paired.
pub fn build(
    t: &Tournament,
    round: u32,
    logs: &BTreeMap<String, GameLog>,
    now_ms: i64,
) -> Option<RoundReport> {
    let r = t.round(round)?;
    let boards = r
        .pairings
        .iter()
        .map(|p| {
            let mut games = Vec::new();
            for (i, slot) in p.games.iter().enumerate() {
                for old in &slot.replaced {
                    let mut g = game_report(t, r, slot, i as u32 + 1, old, logs.get(old));
                    g.status = GameStatus::Replaced;
                    games.push(g);
                }
                games.push(game_report(
                    t,
                    r,
                    slot,
                    i as u32 + 1,
                    &slot.game_id,
                    logs.get(&slot.game_id),
                ));
            }
            BoardReport {
                board: p.board,
                white: player(t, p.white),
                black: player(t, p.black),
                games,
            }
        })
        .collect();
    let status = if r.started_at_ms.is_none() && r.games().any(|g| g.outcome.is_none()) {
        RoundStatus::NotStarted
    } else if r.finished() {
        RoundStatus::Finished
    } else {
        RoundStatus::InProgress
    };
    Some(RoundReport {
        event: t.config().map(|c| c.name.clone()).unwrap_or_default(),
        round,
        status,
        started_at: r.started_at_ms.and_then(wall_ms),
        as_of: wall_ms(now_ms).unwrap_or_default(),
        boards,
        byes: r
            .byes
            .iter()
            .map(|b| ReportBye {
                player: player(t, b.player),
                kind: b.kind,
                text: bye_words(b.kind).to_string(),
            })
            .collect(),
        absent: r.absent.iter().map(|&p| player(t, p)).collect(),
    })
}

/// A bye in words, with its rule.
fn bye_words(k: ByeKind) -> &'static str {
    match k {
        ByeKind::FreeRound => "free round: no game, no points (T 6)",
        ByeKind::PairingAllocated => "pairing-allocated bye: the event's bye score (T 6)",
        ByeKind::Half => "half-point bye: a draw's points (T 6)",
        ByeKind::Zero => "zero-point bye (T 6)",
    }
}

fn player(t: &Tournament, id: u32) -> ReportPlayer {
    t.player(id).map_or(
        ReportPlayer {
            id,
            ..ReportPlayer::default()
        },
        |p: &Player| ReportPlayer {
            id,
            number: p.pairing_number,
            name: p.entrant.name.clone(),
            federation: p.entrant.federation.clone(),
            rating: p.entrant.rating,
        },
    )
}

fn ms_i64(v: u64) -> i64 {
    i64::try_from(v).unwrap_or(i64::MAX)
}

fn rfc3339(t: DateTime<Utc>) -> String {
    t.to_rfc3339_opts(SecondsFormat::Millis, true)
}

fn wall_ms(ms: i64) -> Option<String> {
    DateTime::<Utc>::from_timestamp_millis(ms).map(rfc3339)
}

/// Who did it, as the report names them: an arbiter by its token's label (`Chief arbiter
/// I. Petrov`), else by the subject the event records (`arbiter:Chief arbiter`; `arbiter`
/// when it says no more), else the role (`white player`, `black player`, `board:<id>`,
/// `server`).
pub fn actor(a: &Actor) -> String {
    match a {
        Actor::Arbiter(who) if who.name.is_some() => who.title().unwrap_or_default(),
        Actor::Arbiter(who) => {
            let id = who.id.trim();
            if id.is_empty() || id.eq_ignore_ascii_case("arbiter") {
                "arbiter".into()
            } else if id.starts_with("arbiter") {
                id.to_string()
            } else {
                format!("arbiter:{id}")
            }
        }
        Actor::Player(c) => format!("{c} player"),
        Actor::Board(id) if id.trim().is_empty() => "board".into(),
        Actor::Board(id) => format!("board:{}", id.trim()),
        Actor::System => "server".into(),
    }
}

/// What the report calls an event, or `None` for what it leaves out (moves, which are the
/// score sheet; board mechanics; presses; a clock's own steps).
fn incident_kind(e: &GameEvent, note: &EventNote, ended_before: bool) -> Option<&'static str> {
    Some(match &e.kind {
        EventKind::GameStarted => "start",
        EventKind::Warning { .. } => "warning",
        EventKind::ClaimMade { .. } => "claim",
        EventKind::ClaimDecided { .. } => "claim_ruling",
        EventKind::DrawOffered { .. } => "draw_offer",
        EventKind::DrawOfferAnswered { .. } => "draw_answer",
        EventKind::Irregularity { .. } => "irregularity",
        EventKind::IrregularityResolved { .. } => "irregularity_ruling",
        EventKind::ClockChanged { op, .. } => match op {
            ClockOp::Pause { .. } => "pause",
            ClockOp::Resume { .. } => "resume",
            ClockOp::SetRemaining { .. }
            | ClockOp::AddTime { .. }
            | ClockOp::SubtractTime { .. } => "clock_adjustment",
            ClockOp::Settle { .. } if note.side.is_some() => "flag",
            _ => return None,
        },
        EventKind::TimeCalled { .. } => "time_called",
        EventKind::Outage { .. } => "outage",
        EventKind::PositionSet { .. } => "position_set",
        EventKind::BoardHealthChanged { .. } => "board_health",
        EventKind::BoardFlooded { .. } => "board_flood",
        EventKind::MarkedAbsent { .. } => "absent",
        EventKind::DrawConditionReached => "draw_condition",
        EventKind::FortyMoveCountStarted { .. } => "forty_move_count",
        EventKind::GameEnded { .. } if ended_before => "correction",
        EventKind::GameEnded { .. } => "result",
        EventKind::GameCreated { .. }
        | EventKind::MovePlayed { .. }
        | EventKind::ClockPressed { .. }
        | EventKind::PieceTouched { .. }
        | EventKind::PieceLifted { .. }
        | EventKind::PiecePlaced { .. }
        | EventKind::PieceReleased { .. }
        | EventKind::AdjustAnnounced { .. }
        | EventKind::BoardSnapshot { .. }
        | EventKind::BoardOutOfStep { .. }
        | EventKind::BoardInStep
        | EventKind::RemovalComplete { .. } => return None,
    })
}

fn pdn_result(o: GameOutcome) -> PdnResult {
    match o {
        GameOutcome::WhiteWins => PdnResult::WhiteWins,
        GameOutcome::BlackWins => PdnResult::BlackWins,
        GameOutcome::Draw => PdnResult::Draw,
        GameOutcome::DoubleForfeit => PdnResult::DoubleForfeit,
        GameOutcome::Annulled => PdnResult::Unknown,
    }
}

fn score_result(s: Score) -> PdnResult {
    match s {
        Score::WhiteWins => PdnResult::WhiteWins,
        Score::BlackWins => PdnResult::BlackWins,
        Score::Draw => PdnResult::Draw,
        Score::BothLose => PdnResult::DoubleForfeit,
    }
}

/// `1-0, the flag fell (RU 1.6.3)`.
fn result_text(score: &str, reason: &str, rule: Option<&str>) -> String {
    match rule.filter(|r| !r.trim().is_empty()) {
        Some(r) => format!("{score}, {reason} ({r})"),
        None => format!("{score}, {reason}"),
    }
}

/// The report of one game of a board: from its log when it has one, else from the slot.
fn game_report(
    t: &Tournament,
    r: &RoundState,
    slot: &GameSlot,
    game: u32,
    id: &str,
    log: Option<&GameLog>,
) -> GameReport {
    let mut g = GameReport {
        game_id: id.to_string(),
        game,
        white: player(t, slot.white),
        black: player(t, slot.black),
        variant: None,
        time_control: None,
        status: GameStatus::NotStarted,
        result: None,
        incidents: Vec::new(),
        sheet: Vec::new(),
        problem: None,
    };
    match log.filter(|l| !l.events.is_empty()) {
        Some(log) => read_log(&mut g, log),
        None if !slot.played => g.status = GameStatus::NotPlayed,
        None => {}
    }
    // A result the tournament has and the game's log does not (a forfeit entered, a
    // withdrawn player's game, T 5, T 6): from the slot.
    if g.result.is_none()
        && id == slot.game_id
        && let Some(o) = slot.outcome
    {
        let withdrawn = [slot.white, slot.black].iter().any(|&p| {
            t.player(p)
                .and_then(|p| p.withdrawn_from)
                .is_some_and(|from| from <= r.number)
        });
        let (reason, rule) = match o.kind {
            ResultKind::Default => (describe::end_reason_words(EndReason::Default), "T 5"),
            ResultKind::Forfeit | ResultKind::Played => (
                describe::end_reason_words(EndReason::Forfeit),
                if withdrawn { "T 6" } else { "T 5" },
            ),
        };
        let score = score_result(o.score).token(form_of(&g));
        let decided = slot.results.last().map(|d| d.at_ms);
        let text = result_text(score, reason, Some(rule));
        let actor = if withdrawn && !slot.played {
            "server"
        } else {
            "arbiter"
        };
        g.incidents.push(Incident {
            seq: 0,
            time: decided.and_then(wall_ms).unwrap_or_default(),
            kind: "forfeit",
            actor: actor.into(),
            rule: Some(rule.into()),
            text: text.clone(),
        });
        g.result = Some(ReportResult {
            score: score.into(),
            reason: reason.into(),
            rule: Some(rule.into()),
            actor: actor.into(),
            time: decided.and_then(wall_ms),
            text,
        });
        if g.status == GameStatus::NotStarted {
            g.status = GameStatus::NotPlayed;
        }
    }
    g
}

/// The result form of the game's variant (`2-0` for FMJD's games), `1-0` without a log.
fn form_of(g: &GameReport) -> crate::notation::pdn::ResultForm {
    g.variant
        .as_deref()
        .and_then(|v| v.parse::<crate::rules::Variant>().ok())
        .map_or(crate::notation::pdn::ResultForm::Default, result_form)
}

/// Fills `g` from the game's log: incidents, score sheet, result, status.
fn read_log(g: &mut GameReport, log: &GameLog) {
    let (session, notes) = match Session::replay_noted(&log.events) {
        Ok(s) => s,
        Err(e) => {
            g.problem = Some(format!("the log does not replay: {e}"));
            return;
        }
    };
    let variant = session.variant();
    g.variant = Some(variant.name().to_string());
    g.time_control = session
        .settings()
        .time_control
        .as_ref()
        .map(ToString::to_string);
    let form = result_form(variant);
    let mut started = false;
    let mut ended = false;
    let mut flag_noted = false;
    for (e, note) in log.events.iter().zip(&notes) {
        let seen = Seen {
            variant,
            note,
            meta: &log.meta,
        };
        let time = rfc3339(e.at.wall);
        if let EventKind::MovePlayed { side, notation, .. } = &e.kind {
            let dots = if *side == Color::Black { "..." } else { "." };
            g.sheet.push(SheetMove {
                seq: e.seq,
                number: note.move_number,
                side: side.to_string(),
                notation: notation.clone(),
                written: format!("{}{dots} {notation}", note.move_number),
                time,
                spent_ms: note.time_spent_ms,
                white_ms: note.clock.map(|c| c.white_ms),
                black_ms: note.clock.map(|c| c.black_ms),
            });
            continue;
        }
        let Some(kind) = incident_kind(e, note, ended) else {
            continue;
        };
        // A flag fall is reported once (a settle after it says nothing new).
        if kind == "flag" && std::mem::replace(&mut flag_noted, true) {
            continue;
        }
        started |= kind == "start";
        let words = describe::describe(e, seen);
        let text = words.comment.unwrap_or(words.line);
        if let EventKind::GameEnded {
            outcome, reason, ..
        } = &e.kind
        {
            ended = true;
            let score = pdn_result(*outcome).token(form);
            let reason = describe::end_reason_words(*reason);
            g.result = Some(ReportResult {
                score: score.into(),
                reason: reason.into(),
                rule: e.rule.clone(),
                actor: actor(&e.actor),
                time: Some(time.clone()),
                text: result_text(score, reason, e.rule.as_deref()),
            });
        }
        g.incidents.push(Incident {
            seq: e.seq,
            time,
            kind,
            actor: actor(&e.actor),
            rule: e.rule.clone().filter(|r| !r.trim().is_empty()),
            text,
        });
    }
    g.status = if ended {
        GameStatus::Finished
    } else if started {
        GameStatus::Playing
    } else {
        GameStatus::NotStarted
    };
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::game::{
        ArbiterAction, BoardHealth, BoardInput, ClaimKind, Command as GameCommand, Declared,
        GameSettings, Given, Now, OutageMeasure, Ruling,
    };
    use crate::rules::Variant;
    use crate::tournament::{
        ByeScore, Command, Config, DEFAULT_TIME_MS, Entrant, Scoring, Seed, System, Tiebreak,
    };

    const T0: i64 = 1_780_000_000_000;

    /// A 4-player round-robin with round 1 paired and started: 2 boards.
    fn tournament() -> Tournament {
        let mut t = Tournament::new();
        let mut at = T0;
        let mut run = |t: &mut Tournament, c: Command| {
            at += 1000;
            for e in t.handle(&c, at).expect("decided") {
                t.apply(&e).expect("applies");
            }
        };
        run(
            &mut t,
            Command::Create {
                config: Config {
                    name: "Report Open".into(),
                    system: System::RoundRobin,
                    rounds: 0,
                    settings: GameSettings::new(Variant::Russian),
                    scoring: Scoring::TwoOneZero,
                    tiebreaks: Tiebreak::defaults(System::RoundRobin),
                    ballot: None,
                    games_per_pairing: 1,
                    default_time_ms: DEFAULT_TIME_MS,
                    bye_score: ByeScore::Win,
                    annul_before_half: true,
                    site: String::new(),
                    time_zone: String::new(),
                },
                seed: Seed([1; 32]),
            },
        );
        run(
            &mut t,
            Command::AddPlayers {
                players: [
                    "Petrov, Ivan",
                    "Sidorova, Anna",
                    "Kuznetsov, Oleg",
                    "Orlova, Vera",
                ]
                .iter()
                .map(|n| Entrant {
                    name: (*n).into(),
                    ..Entrant::default()
                })
                .collect(),
            },
        );
        run(
            &mut t,
            Command::NumberPlayers {
                hall: Some(vec![1, 2, 3, 4]),
                next_seed: Seed([2; 32]),
            },
        );
        run(
            &mut t,
            Command::PairRound {
                round: 1,
                given: None,
                next_seed: Seed([3; 32]),
            },
        );
        run(&mut t, Command::StartRound { round: 1 });
        t
    }

    fn at(ms: u64) -> Now {
        Now {
            mono_ms: ms,
            wall: DateTime::<Utc>::from_timestamp_millis(T0 + ms as i64).expect("in range"),
        }
    }

    fn given(reason: &str, rule: &str) -> Given {
        Given {
            reason: Some(reason.into()),
            rule: Some(rule.into()),
        }
    }

    /// A Russian game with every kind of incident: a warning, a claim the arbiter
    /// refuses, an irregularity ruled, a clock adjustment, a pause and resume, an outage,
    /// board health changes, and a flag fall that ends it.
    fn eventful_game() -> Vec<GameEvent> {
        let chief = Actor::Arbiter("arbiter:Chief arbiter".into());
        let mut settings = GameSettings::new(Variant::Russian);
        settings.time_control = Some("5m".parse().expect("time control"));
        settings.claims_need_arbiter = true;
        let (mut s, first) =
            Session::create(settings, None, chief.clone(), at(0)).expect("created");
        let mut log = vec![first];
        let white = Actor::Player(Color::White);
        let black = Actor::Player(Color::Black);
        let board = Actor::Board("dgt-7".into());
        let mv = |side, n: &str| GameCommand::SubmitMove {
            side,
            notation: n.into(),
            offer_draw: false,
        };
        let steps: Vec<(u64, Actor, GameCommand)> = vec![
            (1_000, chief.clone(), GameCommand::Start),
            (
                1_500,
                board.clone(),
                GameCommand::Board(BoardInput::Health {
                    health: BoardHealth::Active,
                    silent_ms: 0,
                }),
            ),
            (4_200, white.clone(), mv(Color::White, "c3-d4")),
            (9_000, black.clone(), mv(Color::Black, "f6-g5")),
            (
                12_000,
                chief.clone(),
                GameCommand::Arbiter(
                    ArbiterAction::Warn { side: Color::Black },
                    given("talking to a spectator", "RU 1.9.4"),
                ),
            ),
            (
                15_000,
                white.clone(),
                GameCommand::ClaimDraw {
                    side: Color::White,
                    kind: ClaimKind::Repetition,
                    written_move: None,
                },
            ),
            (
                20_000,
                chief.clone(),
                GameCommand::Arbiter(
                    ArbiterAction::RuleOnClaim {
                        upheld: false,
                        claim_seq: None,
                    },
                    given("no position occurred three times", "RU 1.9.2"),
                ),
            ),
            (
                22_000,
                board.clone(),
                GameCommand::Board(BoardInput::Lift(22)),
            ),
            (
                23_000,
                board.clone(),
                GameCommand::Board(BoardInput::Release(13)),
            ),
            (
                30_000,
                chief.clone(),
                GameCommand::Arbiter(
                    ArbiterAction::RuleOnIrregularity {
                        ruling: Ruling::Corrected,
                        irregularity_seq: None,
                    },
                    given("the piece goes back to c3", "FMJD 5.4"),
                ),
            ),
            (
                31_000,
                chief.clone(),
                GameCommand::Arbiter(
                    ArbiterAction::AddTime {
                        side: Color::Black,
                        amount_ms: 60_000,
                    },
                    given("disturbed by the claim", "RU 1.6.5"),
                ),
            ),
            (
                32_000,
                chief.clone(),
                GameCommand::Arbiter(
                    ArbiterAction::PauseClocks,
                    Given::reason("a spectator's phone"),
                ),
            ),
            (
                92_000,
                chief.clone(),
                GameCommand::Arbiter(ArbiterAction::ResumeClocks, Given::default()),
            ),
            (
                95_000,
                board.clone(),
                GameCommand::Board(BoardInput::Health {
                    health: BoardHealth::Disconnected,
                    silent_ms: 3_000,
                }),
            ),
        ];
        for (ms, actor, cmd) in steps {
            let shown = format!("{cmd:?}");
            log.extend(
                s.handle(&actor, cmd, at(ms))
                    .unwrap_or_else(|e| panic!("{shown}: {e}")),
            );
        }
        log.extend(s.record_outage(at(100_000), Some(96_000), false, OutageMeasure::BootClock));
        // White on move with 5 minutes (less the first move's time): the flag falls.
        log.extend(s.tick(at(1_000_000)));
        assert!(s.result().is_some(), "the flag fell");
        log
    }

    fn logs(t: &Tournament, games: Vec<(u32, Vec<GameEvent>)>) -> BTreeMap<String, GameLog> {
        let r = t.round(1).expect("paired");
        games
            .into_iter()
            .map(|(board, events)| {
                let id = r.pairings[board as usize - 1].games[0].game_id.clone();
                (
                    id.clone(),
                    GameLog {
                        meta: GameMeta {
                            id,
                            ..GameMeta::default()
                        },
                        events,
                    },
                )
            })
            .collect()
    }

    /// Every incident once, with its rule, actor and time; the result with its reason
    /// and rule; the score sheet numbered as the game writes it.
    #[test]
    fn ru_1_9_2_every_incident_once_with_its_rule_actor_and_time() {
        let t = tournament();
        let log = eventful_game();
        let report = build(&t, 1, &logs(&t, vec![(1, log.clone())]), T0 + 2_000_000)
            .expect("round 1 is paired");
        assert_eq!(report.event, "Report Open");
        assert_eq!(
            report.status,
            RoundStatus::InProgress,
            "board 2 still plays"
        );
        assert_eq!(report.boards.len(), 2);
        let g = &report.boards[0].games[0];
        assert_eq!(g.status, GameStatus::Finished);
        assert_eq!(g.white.name, "Petrov, Ivan");
        let kinds: Vec<&str> = g.incidents.iter().map(|i| i.kind).collect();
        assert_eq!(
            kinds,
            [
                "start",
                "board_health",
                "warning",
                "claim",
                "claim_ruling",
                "irregularity",
                "irregularity_ruling",
                "clock_adjustment",
                "pause",
                "resume",
                "board_health",
                "outage",
                "flag",
                "result",
            ]
        );
        let one = |kind: &str| {
            let found: Vec<&Incident> = g.incidents.iter().filter(|i| i.kind == kind).collect();
            assert_eq!(found.len(), 1, "{kind}: {found:?}");
            found[0]
        };
        let warning = one("warning");
        assert_eq!(warning.actor, "arbiter:Chief arbiter");
        assert_eq!(warning.rule.as_deref(), Some("RU 1.9.4"));
        assert_eq!(warning.time, "2026-05-28T20:26:52.000Z");
        assert!(
            warning.text.contains("talking to a spectator"),
            "{}",
            warning.text
        );
        let claim = one("claim");
        assert_eq!(claim.actor, "white player");
        let ruling = one("claim_ruling");
        assert_eq!(ruling.rule.as_deref(), Some("RU 1.9.2"));
        assert!(ruling.text.contains("rejected"), "{}", ruling.text);
        assert_eq!(one("irregularity").actor, "board:dgt-7");
        assert_eq!(one("irregularity_ruling").rule.as_deref(), Some("FMJD 5.4"));
        let added = one("clock_adjustment");
        assert_eq!(added.rule.as_deref(), Some("RU 1.6.5"));
        assert!(
            added.text.contains("added to Black's clock"),
            "{}",
            added.text
        );
        assert!(one("pause").text.contains("a spectator's phone"));
        assert_eq!(one("resume").actor, "arbiter:Chief arbiter");
        let outage = one("outage");
        assert_eq!(outage.actor, "server");
        assert!(outage.text.contains("not charged"), "{}", outage.text);
        assert_eq!(one("flag").actor, "server");
        // Each incident's words are the one description's (describe::comment, or the
        // log's line where the record has none).
        for i in &g.incidents {
            let e = log.iter().find(|e| e.seq == i.seq).expect("from the log");
            assert_eq!(i.time, rfc3339(e.at.wall));
            assert_eq!(i.actor, actor(&e.actor));
        }
        let result = g.result.as_ref().expect("a result");
        assert_eq!(result.score, "0-1", "white's flag fell");
        assert_eq!(result.reason, "the flag fell");
        assert!(result.rule.is_some(), "the flag fall cites its rule");
        assert_eq!(
            result.text,
            format!(
                "0-1, the flag fell ({})",
                result.rule.as_deref().unwrap_or_default()
            )
        );
        // The score sheet: the game's own numbering, times and clocks.
        let sheet: Vec<&str> = g.sheet.iter().map(|m| m.written.as_str()).collect();
        assert_eq!(sheet, ["1. c3-d4", "1... f6-g5"]);
        assert_eq!(g.sheet[0].spent_ms, Some(3_200));
        assert_eq!(g.sheet[0].white_ms, Some(300_000 - 3_200));
        assert_eq!(g.sheet[1].time, "2026-05-28T20:26:49.000Z");
        // Board 2 is playing, without a log: not started as far as the report knows.
        assert_eq!(report.boards[1].games[0].status, GameStatus::NotStarted);
        assert!(report.boards[1].games[0].result.is_none());
    }

    /// A forfeit the arbiter entered without a game being played (T 5) shows its result
    /// and rule; a finished round says so.
    #[test]
    fn t_5_a_forfeit_without_a_game() {
        let mut t = tournament();
        let r = t.round(1).expect("paired").clone();
        let board2 = &r.pairings[1];
        for c in [Command::RecordForfeit {
            round: 1,
            player: board2.games[0].black,
        }] {
            for e in t.handle(&c, T0 + 50_000).expect("decided") {
                t.apply(&e).expect("applies");
            }
        }
        // Board 1 ends by the arbiter's decision.
        let chief = Actor::Arbiter("arbiter".into());
        let (mut s, first) = Session::create(
            GameSettings::new(Variant::Russian),
            None,
            chief.clone(),
            at(0),
        )
        .expect("created");
        let mut log = vec![first];
        log.extend(
            s.handle(&chief, GameCommand::Start, at(10))
                .expect("starts"),
        );
        log.extend(
            s.handle(
                &chief,
                GameCommand::Arbiter(
                    ArbiterAction::DeclareResult {
                        outcome: GameOutcome::Draw,
                        kind: Declared::Decision,
                    },
                    given("both players agreed before the arbiter", "RU 1.9.3"),
                ),
                at(20),
            )
            .expect("declared"),
        );
        for e in t
            .handle(
                &Command::GameFinished {
                    game_id: r.pairings[0].games[0].game_id.clone(),
                    outcome: super::super::Outcome {
                        score: Score::Draw,
                        kind: ResultKind::Played,
                    },
                    rule: None,
                    decided_at_ms: None,
                },
                T0 + 60_000,
            )
            .expect("decided")
        {
            t.apply(&e).expect("applies");
        }
        let report = build(&t, 1, &logs(&t, vec![(1, log)]), T0 + 70_000).expect("paired");
        assert_eq!(report.status, RoundStatus::Finished);
        let g1 = &report.boards[0].games[0];
        let res = g1.result.as_ref().expect("declared");
        assert_eq!(res.text, "1/2-1/2, arbiter's decision (RU 1.9.3)");
        assert_eq!(res.actor, "arbiter");
        let g2 = &report.boards[1].games[0];
        assert_eq!(g2.status, GameStatus::NotPlayed);
        let res = g2.result.as_ref().expect("the forfeit");
        assert_eq!(res.score, "1-0");
        assert_eq!(res.rule.as_deref(), Some("T 5"));
        assert_eq!(res.text, "1-0, forfeit: the game was not played (T 5)");
        assert_eq!(g2.incidents.len(), 1);
        assert_eq!(g2.incidents[0].kind, "forfeit");
        assert!(
            build(&t, 2, &BTreeMap::new(), T0).is_none(),
            "round 2 is not paired"
        );
    }
}
