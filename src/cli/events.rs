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
use crate::notation::square::write_square;
use crate::rules::Variant;

/// A proto enum value by its name, or its number when the server sent one this client
/// does not know.
macro_rules! name {
    ($ty:ty, $v:expr) => {
        <$ty>::try_from($v).map_or_else(|_| Value::from($v), |e| Value::from(e.as_str_name()))
    };
}

fn side_word(side: i32) -> &'static str {
    match pb::Side::try_from(side) {
        Ok(pb::Side::White) => "white",
        Ok(pb::Side::Black) => "black",
        _ => "?",
    }
}

/// A time in milliseconds as a clock shows it: `1:05:03.2`, `4:57.0`, `-0:00.4`.
pub fn clock_time(ms: i64) -> String {
    let sign = if ms < 0 { "-" } else { "" };
    let ms = ms.unsigned_abs();
    let tenths = (ms % 1000) / 100;
    let s = ms / 1000;
    let (h, m, s) = (s / 3600, (s / 60) % 60, s % 60);
    if h > 0 {
        format!("{sign}{h}:{m:02}:{s:02}.{tenths}")
    } else {
        format!("{sign}{m}:{s:02}.{tenths}")
    }
}

/// A duration in words: `3.2 s`, `1:30.0`.
fn duration(ms: i64) -> String {
    if ms.unsigned_abs() < 60_000 {
        format!("{:.1} s", ms as f64 / 1000.0)
    } else {
        clock_time(ms)
    }
}

fn clocks(c: Option<&pb::ClockSnapshot>) -> String {
    let Some(c) = c else {
        return String::new();
    };
    let state = match pb::ClockState::try_from(c.state) {
        Ok(pb::ClockState::Running) => format!(", {} to move", side_word(c.running_side)),
        Ok(pb::ClockState::Paused) => ", paused".into(),
        Ok(pb::ClockState::Stopped) => ", stopped".into(),
        Ok(pb::ClockState::NotStarted) => ", not started".into(),
        _ => String::new(),
    };
    format!(
        "; clocks white {}, black {}{state}",
        clock_time(c.white_ms),
        clock_time(c.black_ms)
    )
}

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
    match pb::ActorKind::try_from(a.kind) {
        Ok(pb::ActorKind::Player) => who(side_word(a.side)),
        Ok(pb::ActorKind::Board) => who("board"),
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

fn with_reason(text: String, reason: &str) -> String {
    if reason.is_empty() {
        text
    } else {
        format!("{text}: {reason}")
    }
}

/// Squares, or "none".
fn or_none(s: &[u32], variant: Option<Variant>) -> String {
    if s.is_empty() {
        "none".into()
    } else {
        squares(s, variant)
    }
}

/// Squares in the variant's notation ([`square_text`]), comma-separated.
fn squares(s: &[u32], variant: Option<Variant>) -> String {
    s.iter()
        .map(|&n| square_text(n, variant))
        .collect::<Vec<_>>()
        .join(", ")
}

fn result_words(result: i32) -> &'static str {
    match pb::GameResult::try_from(result) {
        Ok(pb::GameResult::WhiteWins) => "white wins",
        Ok(pb::GameResult::BlackWins) => "black wins",
        Ok(pb::GameResult::Draw) => "draw",
        Ok(pb::GameResult::BothLose) => "both lose",
        Ok(pb::GameResult::Annulled) => "annulled",
        _ => "no result",
    }
}

fn reason_words(reason: i32) -> String {
    pb::ResultReason::try_from(reason).map_or_else(
        |_| format!("reason {reason}"),
        |r| {
            r.as_str_name()
                .trim_start_matches("RESULT_REASON_")
                .to_ascii_lowercase()
                .replace('_', " ")
        },
    )
}

fn enum_words(name: &str, prefix: &str) -> String {
    name.trim_start_matches(prefix)
        .to_ascii_lowercase()
        .replace('_', " ")
}

/// A square of the wire (its PDN number) as the variant writes its moves: `c3` in a
/// Russian game, `22` in an International one; the number itself when the variant is not
/// known (issue 38: texts name squares in the game's own notation).
fn square_text(n: u32, variant: Option<Variant>) -> String {
    variant
        .and_then(|v| {
            v.geometry()
                .from_number(n, v.rules().mirrored)
                .map(|sq| write_square(sq, v))
        })
        .unwrap_or_else(|| n.to_string())
}

/// The variant a wire number names, if it is one.
pub fn variant_of(v: i32) -> Option<Variant> {
    crate::api::convert::variant(v).ok()
}

/// What happened, in words; squares in `variant`'s notation when it is known.
fn what(kind: &Kind, variant: Option<Variant>) -> String {
    let sq = |n: u32| square_text(n, variant);
    match kind {
        Kind::GameCreated(e) => {
            let variant = pb::Variant::try_from(e.variant)
                .map_or("?".into(), |v| enum_words(v.as_str_name(), "VARIANT_"));
            let tc = if e.time_control.is_empty() || e.time_control == "-" {
                "untimed".to_string()
            } else {
                format!("time control {}", e.time_control)
            };
            let name = |p: &Option<pb::Player>| {
                p.as_ref()
                    .map(|p| p.name.clone())
                    .filter(|n| !n.is_empty())
                    .unwrap_or_else(|| "?".into())
            };
            let mut s = format!(
                "game created: {variant}, {tc}, {} - {}",
                name(&e.white),
                name(&e.black)
            );
            if !e.event.is_empty() {
                s.push_str(&format!(", event {}", e.event));
            }
            if !e.round.is_empty() {
                s.push_str(&format!(", round {}", e.round));
            }
            if e.board > 0 {
                s.push_str(&format!(", board {}", e.board));
            }
            s
        }
        Kind::GameStarted(e) => format!("game started{}", clocks(e.clock.as_ref())),
        Kind::MovePlayed(e) => {
            let dots = if pb::Side::try_from(e.side) == Ok(pb::Side::Black) {
                "..."
            } else {
                "."
            };
            let notation = e.r#move.as_ref().map_or("?", |m| m.notation.as_str());
            let source = match pb::MoveSource::try_from(e.source) {
                Ok(pb::MoveSource::Board) => " on the board",
                Ok(pb::MoveSource::Snapshot) => " (board snapshot)",
                Ok(pb::MoveSource::WrittenClaim) => " (the claim's written move)",
                _ => "",
            };
            format!(
                "{} played {}{dots} {notation}{source}, {} spent{}",
                side_word(e.side),
                e.move_number,
                duration(e.time_spent_ms),
                clocks(e.clock.as_ref())
            )
        }
        Kind::PieceTouched(e) => format!(
            "{} piece touched on {}{}{}",
            side_word(e.side),
            sq(e.square),
            if e.binding { " (binding)" } else { "" },
            if e.immovable { " (cannot move)" } else { "" }
        ),
        Kind::PieceLifted(e) => format!("piece lifted from {}", sq(e.square)),
        Kind::PiecePlaced(e) => format!("piece placed on {}", sq(e.square)),
        Kind::PieceReleased(e) => format!("piece released on {}", sq(e.square)),
        Kind::AdjustAnnounced(e) => format!("{} announced \"I adjust\"", side_word(e.side)),
        Kind::BoardFlooded(e) => format!(
            "board flood: more than {} messages a second (burst {}); the excess was refused",
            e.messages_per_s, e.burst
        ),
        Kind::BoardHealthChanged(e) => {
            let health = match pb::BoardHealth::try_from(e.health) {
                Ok(pb::BoardHealth::Active) if e.silent_ms > 0 => "active again",
                Ok(pb::BoardHealth::Active) => "active",
                Ok(pb::BoardHealth::NotResponding) => "not responding",
                Ok(pb::BoardHealth::Disconnected) => "disconnected",
                _ => "in an unknown state",
            };
            let mut s = format!("board {health}");
            if e.silent_ms > 0 {
                s.push_str(&format!(" (silent {})", clock_time(e.silent_ms)));
            }
            s
        }
        Kind::BoardSnapshot(e) => {
            let o = e.occupancy.clone().unwrap_or_default();
            let n = o.occupied.len() + o.white.len() + o.black.len();
            let mut s = format!("board snapshot: {n} squares occupied");
            if e.matches_official {
                s.push_str(", as the official position");
            }
            for (what, list) in [
                ("missing", &e.missing),
                ("extra", &e.extra),
                ("wrong colour", &e.wrong_colour),
                ("wrong kind", &e.wrong_kind),
            ] {
                if !list.is_empty() {
                    s.push_str(&format!(", {what} {}", squares(list, variant)));
                }
            }
            s
        }
        Kind::ClockPressed(e) => format!(
            "{} pressed the clock{}",
            side_word(e.side),
            clocks(e.clock.as_ref())
        ),
        Kind::ClockState(e) => format!("clock state changed{}", clocks(e.clock.as_ref())),
        Kind::DrawOffered(e) => {
            let when = match pb::DrawOfferTiming::try_from(e.timing) {
                Ok(pb::DrawOfferTiming::AfterOwnMove) => " with the move",
                Ok(pb::DrawOfferTiming::DuringOpponentsTurn) => " on the opponent's time",
                Ok(pb::DrawOfferTiming::BeforeOwnMove) => " before moving",
                _ => "",
            };
            format!("{} offered a draw{when}", side_word(e.side))
        }
        Kind::DrawOfferAccepted(e) => format!("{} accepted the draw offer", side_word(e.side)),
        Kind::DrawOfferDeclined(e) => format!(
            "{} declined the draw offer{}",
            side_word(e.side),
            if e.by_move { " by moving" } else { "" }
        ),
        Kind::DrawOfferPostponed(e) => {
            format!(
                "{} postponed the answer to the draw offer",
                side_word(e.side)
            )
        }
        Kind::DrawClaimed(e) => {
            let basis = match pb::DrawClaimKind::try_from(e.kind) {
                Ok(pb::DrawClaimKind::MoveCount) => "a move-count rule",
                _ => "repetition",
            };
            let written = e
                .written_move
                .as_ref()
                .map(|m| format!(", written move {}", m.notation))
                .unwrap_or_default();
            format!(
                "{} claimed a draw by {basis}{written}; the judge's check: {}",
                side_word(e.side),
                if e.checked_correct {
                    "correct"
                } else {
                    "incorrect"
                }
            )
        }
        Kind::ClaimDecided(e) => {
            let ruling = pb::ClaimRuling::try_from(e.ruling)
                .map_or("?".into(), |r| enum_words(r.as_str_name(), "CLAIM_RULING_"));
            with_reason(
                format!(
                    "{}'s claim #{} found {ruling}",
                    side_word(e.side),
                    e.claim_seq
                ),
                &e.reason,
            )
        }
        Kind::IrregularityFlagged(e) => {
            let kind = pb::IrregularityKind::try_from(e.kind).map_or("?".into(), |k| {
                enum_words(k.as_str_name(), "IRREGULARITY_KIND_")
            });
            let mut s = format!("irregularity by {}: {kind}", side_word(e.side));
            if !e.description.is_empty() {
                s.push_str(&format!(" ({})", e.description));
            }
            if !e.squares.is_empty() {
                s.push_str(&format!(", squares {}", squares(&e.squares, variant)));
            }
            if e.retake_with > 0 {
                s.push_str(&format!(", retake with {}", e.retake_with));
            }
            if !e.official_fen.is_empty() {
                s.push_str(&format!(", official position {}", e.official_fen));
            }
            s
        }
        Kind::IrregularityRuled(e) => {
            let ruling = match pb::IrregularityRuling::try_from(e.ruling) {
                Ok(pb::IrregularityRuling::Stands) => "ruled: stands",
                Ok(pb::IrregularityRuling::Corrected) => "ruled: corrected",
                _ => "resolved: the board was put back",
            };
            let s = with_reason(
                format!("irregularity #{} {ruling}", e.irregularity_seq),
                &e.reason,
            );
            if e.fen_after.is_empty() {
                s
            } else {
                format!("{s}; position {}", e.fen_after)
            }
        }
        Kind::WarningIssued(e) => with_reason(
            format!("{} warned (warning {})", side_word(e.side), e.count),
            &e.reason,
        ),
        Kind::GameFinished(e) => {
            let s = with_reason(
                format!(
                    "game over: {} by {}",
                    result_words(e.result),
                    reason_words(e.reason)
                ),
                &e.explanation,
            );
            format!("{s}{}", clocks(e.clock.as_ref()))
        }
        Kind::OutageRecorded(e) => format!(
            "service outage of {}{} recorded ({}){}",
            duration(e.duration_ms),
            match pb::OutageMeasure::try_from(e.measured_by) {
                Ok(pb::OutageMeasure::BootClock) => ", measured on the host's boot clock,",
                Ok(pb::OutageMeasure::DatabaseClock) => ", measured on the database's clock,",
                Ok(pb::OutageMeasure::WallClock) => ", measured on the wall clock,",
                Ok(pb::OutageMeasure::LowerBound) =>
                    " at least (the wall clock was behind the log)",
                Ok(pb::OutageMeasure::LastEvent) => " from the last event",
                Ok(pb::OutageMeasure::Unspecified) | Err(_) => "",
            },
            if e.charged {
                "charged to the side on move"
            } else {
                "not charged"
            },
            clocks(e.clock.as_ref())
        ),
        Kind::ClocksPaused(e) => format!(
            "{}{}",
            with_reason("clocks paused".into(), &e.reason),
            clocks(e.clock.as_ref())
        ),
        Kind::ClocksResumed(e) => format!(
            "{}{}",
            with_reason("clocks resumed".into(), &e.reason),
            clocks(e.clock.as_ref())
        ),
        Kind::ClockAdjusted(e) => {
            use pb::clock_adjusted::Change;
            let change = match e.change {
                Some(Change::SetRemainingMs(ms)) => format!("set to {}", clock_time(ms)),
                Some(Change::AddMs(ms)) if ms < 0 => format!("- {}", duration(-ms)),
                Some(Change::AddMs(ms)) => format!("+ {}", duration(ms)),
                None => "changed".into(),
            };
            format!(
                "{}{}",
                with_reason(format!("{}'s clock {change}", side_word(e.side)), &e.reason),
                clocks(e.clock.as_ref())
            )
        }
        Kind::PositionSet(e) => with_reason(format!("position set to {}", e.fen), &e.reason),
        Kind::DrawConditionReached(e) => {
            let mode = match pb::DrawMode::try_from(e.mode) {
                Ok(pb::DrawMode::Automatic) => "the game is drawn",
                Ok(pb::DrawMode::Claimable) => "a draw may be claimed",
                Ok(pb::DrawMode::Referred) => "referred to the arbiter",
                _ => "?",
            };
            with_reason(format!("draw rule applies ({mode})"), &e.description)
        }
        Kind::FlagFell(e) => format!(
            "{}'s flag fell{}",
            side_word(e.side),
            clocks(e.clock.as_ref())
        ),
        Kind::RemovalComplete(e) => {
            format!("{}'s captured pieces are all removed", side_word(e.side))
        }
        Kind::BoardOutOfStep(e) => {
            let cause = match pb::BoardFollowCause::try_from(e.cause) {
                Ok(pb::BoardFollowCause::MoveElsewhere) => "a move made elsewhere",
                Ok(pb::BoardFollowCause::PositionSet) => "the arbiter's position",
                Ok(pb::BoardFollowCause::Corrected) => "a corrected irregularity",
                _ => "a change elsewhere",
            };
            let fill: Vec<u32> = e.to_fill.iter().map(|p| p.square).collect();
            format!(
                "board out of step after {cause}: clear {}; fill {}",
                or_none(&e.to_clear, variant),
                or_none(&fill, variant)
            )
        }
        Kind::BoardInStep(_) => "board in step with the official position".to_string(),
        Kind::TimeCalled(e) => format!("\"Time!\" called for {}", side_word(e.side)),
        Kind::FortyMoveCountStarted(e) => format!(
            "40-move count started: {} must win within 40 moves",
            side_word(e.side)
        ),
        Kind::Resync(e) => match &e.game {
            Some(g) => format!(
                "resync (this watcher fell behind): the game now, {} moves, last seq {}",
                g.move_count, g.last_seq
            ),
            None => "resync (this watcher fell behind)".into(),
        },
    }
}

/// One line for an event: `#seq time actor: what happened [rule]`, squares in the
/// notation of `variant` (the game's) when it is known.
pub fn describe(e: &pb::GameEvent, variant: Option<Variant>) -> String {
    let what = e
        .kind
        .as_ref()
        .map_or_else(|| "unknown event".into(), |k| what(k, variant));
    let rule = if e.rule.is_empty() {
        String::new()
    } else {
        format!(" [{}]", e.rule)
    };
    format!(
        "#{} {} {}: {what}{rule}",
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn clock_times_read_as_on_a_clock() {
        assert_eq!(clock_time(300_000), "5:00.0");
        assert_eq!(clock_time(297_340), "4:57.3");
        assert_eq!(clock_time(3_903_200), "1:05:03.2");
        assert_eq!(clock_time(-400), "-0:00.4");
        assert_eq!(duration(3_250), "3.2 s");
        assert_eq!(duration(90_000), "1:30.0");
    }
}
