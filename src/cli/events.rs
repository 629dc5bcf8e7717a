//! How the client subcommands print what the server answers: one line per event in
//! words (seq, time, actor, what happened with move notation and clocks, the rule), a
//! short summary of a game, and, with `--json`, one JSON object per line for scripts.
//!
//! The JSON shape (prost's types do not derive serde, so it is written out here):
//! an event is `{"seq", "time" (RFC 3339, UTC), "monotonic_ms", "game_id", "actor":
//! {"kind", "id", "side"}, "rule", "kind", "data"}`, where `kind` is the name of the
//! proto's `GameEvent.kind` field (`move_played`, `clocks_paused`, …) and `data` holds
//! that message's fields under their proto names. Enums are their proto names
//! (`SIDE_WHITE`), clocks are `{"state", "running_side", "white_ms", "black_ms",
//! "white_period", "black_period"}`, moves `{"notation", "path", "captured"}`. A game
//! is one line `{"game": {…}}` (see [`game_json`]).

use chrono::{DateTime, SecondsFormat, Utc};
use serde_json::{Value, json};

use crate::api::pb;
use crate::api::pb::game_event::Kind;

/// A proto enum value by its name, or its number when the server sent one this client
/// does not know.
macro_rules! name {
    ($ty:ty, $v:expr) => {
        <$ty>::try_from($v).map_or_else(|_| Value::from($v), |e| Value::from(e.as_str_name()))
    };
}

/// A time in milliseconds as a clock shows it: `1:05:03.2`, `4:57.0`, `-0:00.4`.
pub use crate::game::describe::clock_time;

fn actor(a: Option<&pb::Actor>) -> String {
    let Some(a) = a else {
        return "-".into();
    };
    let who = |base: &str| {
        if a.id.is_empty() || a.id == base {
            base.to_string()
        } else {
            format!("{base} {}", a.id)
        }
    };
    let side = match pb::Side::try_from(a.side) {
        Ok(pb::Side::White) => "white",
        Ok(pb::Side::Black) => "black",
        _ => "?",
    };
    match pb::ActorKind::try_from(a.kind) {
        Ok(pb::ActorKind::Player) => who(side),
        Ok(pb::ActorKind::Board) => who("board"),
        // A labelled token: named as the PDN comments name it (`Chief arbiter I. Petrov`).
        Ok(pb::ActorKind::Arbiter) if !a.name.trim().is_empty() => {
            crate::game::ArbiterId::named(a.id.as_str(), Some(&a.name))
                .title()
                .unwrap_or_else(|| who("arbiter"))
        }
        Ok(pb::ActorKind::Arbiter) => who("arbiter"),
        Ok(pb::ActorKind::System) => "system".into(),
        _ => who("-"),
    }
}

fn time(t: Option<&prost_types::Timestamp>) -> String {
    t.and_then(|t| DateTime::<Utc>::from_timestamp(t.seconds, t.nanos.max(0) as u32))
        .map_or_else(
            || "-".into(),
            |d| d.to_rfc3339_opts(SecondsFormat::Millis, true),
        )
}

/// One line for an event: `#seq time actor: what happened [rule]`, what happened in the
/// server's words for it (`GameEvent.description`, the judge's one description of an
/// event: [`crate::game::describe::line`]), squares named as the game writes its moves.
pub fn describe(e: &pb::GameEvent) -> String {
    let what = if e.description.is_empty() {
        "unknown event"
    } else {
        e.description.as_str()
    };
    format!(
        "#{} {} {}: {what}",
        e.seq,
        time(e.server_time.as_ref()),
        actor(e.actor.as_ref())
    )
}

fn clock_json(c: Option<&pb::ClockSnapshot>) -> Value {
    c.map_or(Value::Null, |c| {
        json!({
            "state": name!(pb::ClockState, c.state),
            "running_side": name!(pb::Side, c.running_side),
            "white_ms": c.white_ms,
            "black_ms": c.black_ms,
            "white_period": c.white_period,
            "black_period": c.black_period,
            "read_at": c.read_at.as_ref().map_or(Value::Null, |t| time(Some(t)).into()),
        })
    })
}

fn move_json(m: Option<&pb::Move>) -> Value {
    m.map_or(
        Value::Null,
        |m| json!({"notation": m.notation, "path": m.path, "captured": m.captured}),
    )
}

fn player_json(p: Option<&pb::Player>) -> Value {
    p.map_or(Value::Null, |p| {
        json!({"name": p.name, "fmjd_id": p.fmjd_id, "federation": p.federation, "rating": p.rating})
    })
}

fn settings_json(s: Option<&pb::GameSettings>) -> Value {
    s.map_or(Value::Null, |s| {
        json!({
            "rule_edition": name!(pb::RuleEdition, s.rule_edition),
            "clock_switching": name!(pb::ClockSwitching, s.clock_switching),
            "repetition_mode": name!(pb::RepetitionMode, s.repetition_mode),
            "move_count_draws": name!(pb::MoveCountDraws, s.move_count_draws),
            "claims_need_arbiter": s.claims_need_arbiter,
            "min_move_for_draw_offer": s.min_move_for_draw_offer,
            "broadcast_delay_ms": s.broadcast_delay_ms,
            "charge_outage_to_side_on_move": s.charge_outage_to_side_on_move,
            "touch_immovable_penalty": s.touch_immovable_penalty,
            "default_time_ms": s.default_time_ms,
        })
    })
}

/// The kind's field name in the proto and its data.
fn kind_json(kind: &Kind) -> (&'static str, Value) {
    match kind {
        Kind::GameCreated(e) => (
            "game_created",
            json!({
                "variant": name!(pb::Variant, e.variant),
                "time_control": e.time_control,
                "white": player_json(e.white.as_ref()),
                "black": player_json(e.black.as_ref()),
                "event": e.event, "round": e.round, "board": e.board,
                "start_fen": e.start_fen,
                "settings": settings_json(e.settings.as_ref()),
            }),
        ),
        Kind::GameStarted(e) => (
            "game_started",
            json!({"clock": clock_json(e.clock.as_ref())}),
        ),
        Kind::MovePlayed(e) => (
            "move_played",
            json!({
                "move": move_json(e.r#move.as_ref()),
                "side": name!(pb::Side, e.side),
                "move_number": e.move_number,
                "fen_after": e.fen_after,
                "clock": clock_json(e.clock.as_ref()),
                "time_spent_ms": e.time_spent_ms,
                "source": name!(pb::MoveSource, e.source),
                "board_time_ms": e.board_time_ms,
            }),
        ),
        Kind::PieceTouched(e) => (
            "piece_touched",
            json!({"square": e.square, "side": name!(pb::Side, e.side), "binding": e.binding,
                   "board_time_ms": e.board_time_ms, "immovable": e.immovable}),
        ),
        Kind::PieceLifted(e) => (
            "piece_lifted",
            json!({"square": e.square, "board_time_ms": e.board_time_ms}),
        ),
        Kind::PiecePlaced(e) => (
            "piece_placed",
            json!({"square": e.square, "board_time_ms": e.board_time_ms}),
        ),
        Kind::PieceReleased(e) => (
            "piece_released",
            json!({"square": e.square, "board_time_ms": e.board_time_ms}),
        ),
        Kind::BoardFlooded(e) => (
            "board_flooded",
            json!({"messages_per_s": e.messages_per_s, "burst": e.burst, "board_time_ms": e.board_time_ms}),
        ),
        Kind::BoardHealthChanged(e) => (
            "board_health_changed",
            json!({"board_id": e.board_id, "health": name!(pb::BoardHealth, e.health), "silent_ms": e.silent_ms}),
        ),
        Kind::AdjustAnnounced(e) => (
            "adjust_announced",
            json!({"side": name!(pb::Side, e.side), "board_time_ms": e.board_time_ms}),
        ),
        Kind::BoardSnapshot(e) => {
            let o = e.occupancy.clone().unwrap_or_default();
            (
                "board_snapshot",
                json!({
                    "occupancy": {"occupied": o.occupied, "white": o.white, "black": o.black, "kings": o.kings},
                    "board_time_ms": e.board_time_ms,
                    "matches_official": e.matches_official, "missing": e.missing,
                    "extra": e.extra, "wrong_colour": e.wrong_colour, "wrong_kind": e.wrong_kind,
                }),
            )
        }
        Kind::ClockPressed(e) => (
            "clock_pressed",
            json!({"side": name!(pb::Side, e.side), "clock": clock_json(e.clock.as_ref()),
                   "board_time_ms": e.board_time_ms}),
        ),
        Kind::ClockState(e) => (
            "clock_state",
            json!({"clock": clock_json(e.clock.as_ref())}),
        ),
        Kind::DrawOffered(e) => (
            "draw_offered",
            json!({"side": name!(pb::Side, e.side), "timing": name!(pb::DrawOfferTiming, e.timing)}),
        ),
        Kind::DrawOfferAccepted(e) => (
            "draw_offer_accepted",
            json!({"side": name!(pb::Side, e.side)}),
        ),
        Kind::DrawOfferDeclined(e) => (
            "draw_offer_declined",
            json!({"side": name!(pb::Side, e.side), "by_move": e.by_move,
                   "board_time_ms": e.board_time_ms}),
        ),
        Kind::DrawOfferPostponed(e) => (
            "draw_offer_postponed",
            json!({"side": name!(pb::Side, e.side)}),
        ),
        Kind::DrawClaimed(e) => (
            "draw_claimed",
            json!({"side": name!(pb::Side, e.side), "kind": name!(pb::DrawClaimKind, e.kind),
                   "written_move": move_json(e.written_move.as_ref()),
                   "checked_correct": e.checked_correct}),
        ),
        Kind::ClaimDecided(e) => (
            "claim_decided",
            json!({"side": name!(pb::Side, e.side), "claim_seq": e.claim_seq,
                   "ruling": name!(pb::ClaimRuling, e.ruling), "reason": e.reason}),
        ),
        Kind::IrregularityFlagged(e) => (
            "irregularity_flagged",
            json!({"kind": name!(pb::IrregularityKind, e.kind), "side": name!(pb::Side, e.side),
                   "description": e.description, "squares": e.squares,
                   "official_fen": e.official_fen, "retake_with": e.retake_with,
                   "board_time_ms": e.board_time_ms}),
        ),
        Kind::IrregularityRuled(e) => (
            "irregularity_ruled",
            json!({"irregularity_seq": e.irregularity_seq,
                   "ruling": name!(pb::IrregularityRuling, e.ruling),
                   "fen_after": e.fen_after, "reason": e.reason,
                   "board_time_ms": e.board_time_ms}),
        ),
        Kind::WarningIssued(e) => (
            "warning_issued",
            json!({"side": name!(pb::Side, e.side), "reason": e.reason, "count": e.count,
                   "board_time_ms": e.board_time_ms}),
        ),
        Kind::GameFinished(e) => (
            "game_finished",
            json!({"result": name!(pb::GameResult, e.result),
                   "reason": name!(pb::ResultReason, e.reason),
                   "explanation": e.explanation, "clock": clock_json(e.clock.as_ref()),
                   "board_time_ms": e.board_time_ms}),
        ),
        Kind::OutageRecorded(e) => (
            "outage_recorded",
            json!({"last_seen": time(e.last_seen.as_ref()), "resumed_at": time(e.resumed_at.as_ref()),
                   "duration_ms": e.duration_ms, "charged": e.charged,
                   "measured_by": name!(pb::OutageMeasure, e.measured_by),
                   "clock": clock_json(e.clock.as_ref())}),
        ),
        Kind::ClocksPaused(e) => (
            "clocks_paused",
            json!({"reason": e.reason, "clock": clock_json(e.clock.as_ref())}),
        ),
        Kind::ClocksResumed(e) => (
            "clocks_resumed",
            json!({"reason": e.reason, "clock": clock_json(e.clock.as_ref())}),
        ),
        Kind::ClockAdjusted(e) => {
            use pb::clock_adjusted::Change;
            let (set, add) = match e.change {
                Some(Change::SetRemainingMs(ms)) => (Value::from(ms), Value::Null),
                Some(Change::AddMs(ms)) => (Value::Null, Value::from(ms)),
                None => (Value::Null, Value::Null),
            };
            (
                "clock_adjusted",
                json!({"side": name!(pb::Side, e.side), "set_remaining_ms": set, "add_ms": add,
                       "reason": e.reason, "clock": clock_json(e.clock.as_ref())}),
            )
        }
        Kind::PositionSet(e) => ("position_set", json!({"fen": e.fen, "reason": e.reason})),
        Kind::DrawConditionReached(e) => (
            "draw_condition_reached",
            json!({"mode": name!(pb::DrawMode, e.mode), "description": e.description,
                   "board_time_ms": e.board_time_ms}),
        ),
        Kind::FlagFell(e) => (
            "flag_fell",
            json!({"side": name!(pb::Side, e.side), "clock": clock_json(e.clock.as_ref())}),
        ),
        Kind::BoardOutOfStep(e) => (
            "board_out_of_step",
            json!({
                "cause": name!(pb::BoardFollowCause, e.cause),
                "white": e.white, "black": e.black, "kings": e.kings,
                "to_clear": e.to_clear,
                "to_fill": e.to_fill.iter().map(|p| json!({
                    "square": p.square, "side": name!(pb::Side, p.side), "king": p.king,
                })).collect::<Vec<_>>(),
            }),
        ),
        Kind::BoardInStep(e) => ("board_in_step", json!({"board_time_ms": e.board_time_ms})),
        Kind::RemovalComplete(e) => (
            "removal_complete",
            json!({"side": name!(pb::Side, e.side), "board_time_ms": e.board_time_ms}),
        ),
        Kind::TimeCalled(e) => ("time_called", json!({"side": name!(pb::Side, e.side)})),
        Kind::FortyMoveCountStarted(e) => (
            "forty_move_count_started",
            json!({"side": name!(pb::Side, e.side)}),
        ),
        Kind::PlayerMarkedAbsent(e) => (
            "player_marked_absent",
            json!({"side": name!(pb::Side, e.side)}),
        ),
        Kind::StandingsUpdated(e) => (
            "standings_updated",
            json!({
                "tournament": e.tournament,
                "finished": e.finished,
                "standings": e.standings.as_ref().map_or(Value::Null, super::standings::standings_json),
            }),
        ),
        Kind::Resync(e) => (
            "resync",
            json!({"game": e.game.as_ref().map_or(Value::Null, game_json)}),
        ),
    }
}

/// An event as one JSON object (the shape is in the module documentation).
pub fn event_json(e: &pb::GameEvent) -> Value {
    let (kind, data) = e.kind.as_ref().map_or(("unknown", Value::Null), kind_json);
    let actor = e.actor.as_ref().map_or(Value::Null, |a| {
        json!({"kind": name!(pb::ActorKind, a.kind), "id": a.id, "side": name!(pb::Side, a.side)})
    });
    json!({
        "seq": e.seq,
        "time": time(e.server_time.as_ref()),
        "monotonic_ms": e.monotonic_ms,
        "game_id": e.game_id,
        "actor": actor,
        "rule": e.rule,
        "kind": kind,
        "data": data,
    })
}

/// A game as JSON: its id, variant, status, position, clocks, result, players, event,
/// settings, the score sheet (when the answer carries it) and what is pending.
pub fn game_json(g: &pb::Game) -> Value {
    let moves: Vec<Value> = g
        .moves
        .iter()
        .map(|m| {
            json!({
                "move": move_json(m.r#move.as_ref()),
                "side": name!(pb::Side, m.side),
                "move_number": m.move_number,
                "seq": m.seq,
                "white_clock_ms": m.white_clock_ms,
                "black_clock_ms": m.black_clock_ms,
                "time_spent_ms": m.time_spent_ms,
                "fen_after": m.fen_after,
            })
        })
        .collect();
    json!({
        "id": g.id,
        "variant": name!(pb::Variant, g.variant),
        "status": name!(pb::GameStatus, g.status),
        "fen": g.fen,
        "side_to_move": name!(pb::Side, g.side_to_move),
        "white_clock_ms": g.white_clock_ms,
        "black_clock_ms": g.black_clock_ms,
        "move_count": g.move_count,
        "moves": moves,
        "result": name!(pb::GameResult, g.result),
        "result_reason": name!(pb::ResultReason, g.result_reason),
        "rule": g.rule,
        "last_seq": g.last_seq,
        "white": player_json(g.white.as_ref()),
        "black": player_json(g.black.as_ref()),
        "event": g.event,
        "round": g.round,
        "board": g.board,
        "time_control": g.time_control,
        "settings": settings_json(g.settings.as_ref()),
        "clock": clock_json(g.clock.as_ref()),
        "start_fen": g.start_fen,
        "pending_draw_offer": g.pending_draw_offer.as_ref().map_or(Value::Null, |o| {
            json!({"side": name!(pb::Side, o.side), "seq": o.seq, "postponed": o.postponed})
        }),
        "pending_claim": g.pending_claim.as_ref().map_or(Value::Null, |c| {
            json!({"side": name!(pb::Side, c.side), "seq": c.seq,
                   "kind": name!(pb::DrawClaimKind, c.kind),
                   "written_move": move_json(c.written_move.as_ref())})
        }),
        "pending_irregularities": g.pending_irregularities.iter().map(|i| {
            json!({"seq": i.seq, "kind": name!(pb::IrregularityKind, i.kind),
                   "side": name!(pb::Side, i.side), "rule": i.rule})
        }).collect::<Vec<_>>(),
        "warnings": g.warnings.iter().map(|w| {
            json!({"side": name!(pb::Side, w.side), "reason": w.reason, "rule": w.rule, "seq": w.seq})
        }).collect::<Vec<_>>(),
        "board_status": g.board_status.as_ref().map_or(Value::Null, |b| {
            json!({"board_id": b.board_id, "health": name!(pb::BoardHealth, b.health),
                   "since_ms": b.since.as_ref().map_or(0, |t| t.seconds * 1000 + i64::from(t.nanos / 1_000_000))})
        }),
        "board_view": g.board_view.as_ref().map_or(Value::Null, |v| {
            let piece = |p: &pb::BoardPiece| json!({"square": p.square, "side": name!(pb::Side, p.side), "king": p.king});
            json!({"white": v.white, "black": v.black, "kings": v.kings,
                   "in_hand": v.in_hand.as_ref().map_or(Value::Null, |h| json!({"from": h.from, "side": name!(pb::Side, h.side), "king": h.king})),
                   "pending_removal": v.pending_removal, "in_step": v.in_step,
                   "to_clear": v.to_clear, "to_fill": v.to_fill.iter().map(piece).collect::<Vec<_>>()})
        }),
    })
}
