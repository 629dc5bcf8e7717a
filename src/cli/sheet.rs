//! A game as the command line prints it: a header like a score sheet's (event, round,
//! board, site and date, both players, variant and rule edition, time control and
//! broadcast delay, status and result with its rule, what waits for the arbiter, the
//! board's health), then the numbered score sheet with both clocks and the time spent
//! on each move; and a game as a row of `game list`'s table.
//!
//! The words are the judge's ([`crate::game::describe`]): the wire's enums are turned
//! into the domain's (with [`crate::api::convert`] where it has the conversion) and
//! described there. Only the game's status has no domain type; its four words are here.

use std::fmt::Write as _;

use chrono::{DateTime, Utc};

use crate::api::{convert, pb};
use crate::game::describe::{
    board_health_words, claim_basis, clock_time, edition_words, irregularity_words, log_duration,
    outcome_words, result_phrase, side_word, variant_words,
};
use crate::game::{BoardHealth, EndReason, IrregularityKind, time_zone};
use crate::rules::{Color, RuleEdition, Variant};

/// The side a wire field names, if it names one.
fn side(s: i32) -> Option<Color> {
    convert::side(s, "side").ok()
}

/// `white`, `black`, or `?` for a side the wire does not name.
fn side_words(s: i32) -> &'static str {
    side(s).map_or("?", side_word)
}

/// Why a game ended, as the domain knows it (`convert` has the other direction only).
fn end_reason(r: i32) -> Option<EndReason> {
    use pb::ResultReason as R;
    Some(match R::try_from(r).ok()? {
        R::Unspecified => return None,
        R::Resignation => EndReason::Resignation,
        R::NoPieces => EndReason::NoPieces,
        R::NoMoves => EndReason::NoMoves,
        R::TimeForfeit => EndReason::FlagFall,
        R::DrawAgreed => EndReason::Agreement,
        R::Repetition => EndReason::Repetition,
        R::MoveCount => EndReason::MoveCount,
        R::ArbiterDecision => EndReason::ArbiterDecision,
        R::Penalty => EndReason::Penalty,
        R::MoveLimit => EndReason::MoveLimit,
        R::IncorrectClaimOnTime => EndReason::IncorrectClaimOnTime,
        R::TouchPenalty => EndReason::TouchPenalty,
        R::CornerFilled => EndReason::CornerFilled,
        R::HomeNotLeft => EndReason::HomeNotLeft,
        R::Default => EndReason::Default,
        R::Forfeit => EndReason::Forfeit,
    })
}

/// An irregularity's kind as the domain knows it (the kinds the server sends).
fn irregularity(k: i32) -> Option<IrregularityKind> {
    use pb::IrregularityKind as K;
    Some(match K::try_from(k).ok()? {
        K::MoveOutOfTurn => IrregularityKind::OutOfTurn,
        K::IllegalMove => IrregularityKind::IllegalMove,
        K::TouchMove => IrregularityKind::TouchMove,
        K::WrongRemoval => IrregularityKind::WrongRemoval,
        K::CaptureIncomplete => IrregularityKind::CaptureIncomplete,
        K::ClockPressWithoutMove => IrregularityKind::PressWithoutMove,
        K::ClockPressBeforeRemoval => IrregularityKind::PressBeforeRemoval,
        K::WrongCopy => IrregularityKind::WrongCopy,
        _ => return None,
    })
}

/// A board's health as the domain knows it (through `convert`'s own mapping).
fn health(h: i32) -> Option<BoardHealth> {
    [
        BoardHealth::Active,
        BoardHealth::NotResponding,
        BoardHealth::Disconnected,
    ]
    .into_iter()
    .find(|d| convert::board_health_pb(*d) as i32 == h)
}

/// The first letter in capitals (`white wins by resignation` → `White wins …`).
fn capital(s: &str) -> String {
    let mut c = s.chars();
    c.next().map_or_else(String::new, |f| {
        f.to_uppercase().chain(c).collect::<String>()
    })
}

/// ` (rule)` when there is one.
fn cite(rule: &str) -> String {
    if rule.trim().is_empty() {
        String::new()
    } else {
        format!(" ({})", rule.trim())
    }
}

/// The result in words: `white wins by resignation` (with `rule`: `… (RU 1.8.1)`); `None`
/// while the game is not over.
fn result_text(g: &pb::Game, with_rule: bool) -> Option<String> {
    let outcome = convert::outcome(g.result).ok()?;
    let words = match end_reason(g.result_reason) {
        Some(r) => result_phrase(outcome, r),
        None => outcome_words(outcome).to_string(),
    };
    Some(if with_rule {
        format!("{words}{}", cite(&g.rule))
    } else {
        words
    })
}

/// The game's status in words: `not started`, `running, black to move`, `paused, white
/// to move`, `finished: White wins by resignation (RU 1.8.1)`.
fn status_text(g: &pb::Game) -> String {
    let to_move =
        || side(g.side_to_move).map_or_else(String::new, |c| format!(", {} to move", side_word(c)));
    match pb::GameStatus::try_from(g.status) {
        Ok(pb::GameStatus::Created) => "not started".into(),
        Ok(pb::GameStatus::Running) => format!("running{}", to_move()),
        Ok(pb::GameStatus::Paused) => format!("paused{}", to_move()),
        Ok(pb::GameStatus::Finished) => match result_text(g, true) {
            Some(r) => format!("finished: {}", capital(&r)),
            None => "finished".into(),
        },
        _ => format!("status {}", g.status),
    }
}

/// Both clocks: `white 1:59:58.1, black 2:00:00.0`, or `untimed` (-1 on the wire).
fn clocks(white_ms: i64, black_ms: i64) -> String {
    if white_ms < 0 && black_ms < 0 {
        "untimed".into()
    } else {
        format!(
            "white {}, black {}",
            clock_time(white_ms),
            clock_time(black_ms)
        )
    }
}

/// A player: `Ann (FMJD 12345, RUS, 2410)`, `? (unrated)` for a player not named.
fn player(p: Option<&pb::Player>) -> String {
    let Some(p) = p else {
        return "?".into();
    };
    let name = if p.name.trim().is_empty() {
        "?"
    } else {
        p.name.trim()
    };
    let mut about = Vec::new();
    if !p.title.is_empty() {
        about.push(p.title.clone());
    }
    if !p.fmjd_id.is_empty() {
        about.push(format!("FMJD {}", p.fmjd_id));
    }
    if !p.federation.is_empty() {
        about.push(p.federation.clone());
    }
    about.push(if p.rating > 0 {
        p.rating.to_string()
    } else {
        "unrated".into()
    });
    format!("{name} ({})", about.join(", "))
}

/// A player's name alone (the list's columns), `?` when not named.
fn name(p: Option<&pb::Player>) -> &str {
    p.map(|p| p.name.trim())
        .filter(|n| !n.is_empty())
        .unwrap_or("?")
}

/// A wire time in the venue's zone, formatted.
fn local(t: Option<&prost_types::Timestamp>, zone: &str, format: &str) -> Option<String> {
    let t = t?;
    let at = DateTime::<Utc>::from_timestamp(t.seconds, t.nanos.clamp(0, 999_999_999) as u32)?;
    let zone = time_zone(zone).unwrap_or(chrono_tz::UTC);
    Some(at.with_timezone(&zone).format(format).to_string())
}

/// A game as `game show` prints it (and every command's reply after its events, where
/// the server leaves the score sheet out: the number of moves is given instead). The
/// first line is `game ID (variant) status`.
pub fn game_text(g: &pb::Game) -> String {
    let variant = convert::variant(g.variant).ok();
    let mut out = format!(
        "game {} ({}) {}",
        g.id,
        variant.map_or_else(|| "?".to_string(), variant_words),
        status_text(g)
    );
    let mut line = |label: &str, text: &str| {
        let _ = write!(out, "\n  {label:<9} {text}");
    };
    if let Some(q) = &g.quarantine {
        line(
            "QUARANTINED",
            &format!("at seq {}: {} (DATA_LOSS)", q.seq, q.reason),
        );
    }
    // Event, round, board.
    let mut at = Vec::new();
    if !g.event.is_empty() {
        at.push(g.event.clone());
    }
    if !g.round.is_empty() {
        at.push(format!("round {}", g.round));
    }
    if g.board > 0 {
        at.push(format!("board {}", g.board));
    }
    if !at.is_empty() {
        line("event", &at.join(", "));
    }
    // Site and the day the game started, there.
    let date = local(g.started_at.as_ref(), &g.time_zone, "%Y-%m-%d");
    match (g.site.trim(), date) {
        ("", Some(d)) => line("date", &d),
        ("", None) => {}
        (site, Some(d)) => line("site", &format!("{site}, {d}")),
        (site, None) => line("site", site),
    }
    line("white", &player(g.white.as_ref()));
    line("black", &player(g.black.as_ref()));
    // Variant and rules.
    if let Some(v) = variant {
        let mut rules = format!("{} draughts", variant_words(v));
        let settings = g.settings.as_ref();
        if v == Variant::Russian {
            let edition = match settings.map(|s| pb::RuleEdition::try_from(s.rule_edition)) {
                Some(Ok(pb::RuleEdition::RuleEdition2013)) => RuleEdition::Edition2013,
                _ => RuleEdition::Classic,
            };
            let _ = write!(rules, ", {}", edition_words(edition));
        }
        if settings.is_some_and(|s| s.claims_need_arbiter) {
            rules.push_str("; claims wait for the arbiter");
        }
        line("rules", &rules);
    }
    // Time control, default time, broadcast delay.
    let tc = g.time_control.trim();
    let mut time = if tc.is_empty() || tc == "-" {
        "untimed".to_string()
    } else {
        tc.to_string()
    };
    if let Some(s) = &g.settings {
        if s.default_time_ms > 0 {
            let _ = write!(
                time,
                "; default time {} (T 5)",
                log_duration(i64::try_from(s.default_time_ms).unwrap_or(i64::MAX))
            );
        }
        match s.broadcast_delay_ms {
            Some(d) if d > 0 => {
                let _ = write!(
                    time,
                    "; broadcast delay {}",
                    log_duration(i64::try_from(d).unwrap_or(i64::MAX))
                );
            }
            _ => time.push_str("; broadcast live (no delay)"),
        }
    }
    line("time", &time);
    line("clocks", &clocks(g.white_clock_ms, g.black_clock_ms));
    // What waits for the arbiter or a player.
    if let Some(o) = &g.pending_draw_offer {
        let postponed = if o.postponed {
            ", the answer postponed until after the move"
        } else {
            ""
        };
        line(
            "offer",
            &format!(
                "{} offered a draw (#{}){postponed}",
                side_words(o.side),
                o.seq
            ),
        );
    }
    if let Some(c) = &g.pending_claim {
        let written = c
            .written_move
            .as_ref()
            .filter(|m| !m.notation.is_empty())
            .map_or_else(String::new, |m| format!(", written move {}", m.notation));
        line(
            "claim",
            &format!(
                "{} claimed a draw by {}{written} (#{}), waiting for a ruling",
                side_words(c.side),
                claim_basis(convert::claim_kind(c.kind)),
                c.seq
            ),
        );
    }
    for i in &g.pending_irregularities {
        line(
            "irregular",
            &format!(
                "#{} by {}: {}{}, waiting for a ruling",
                i.seq,
                side_words(i.side),
                irregularity(i.kind).map_or("?", irregularity_words),
                cite(&i.rule)
            ),
        );
    }
    for w in &g.warnings {
        let reason = if w.reason.trim().is_empty() {
            String::new()
        } else {
            format!(": {}", w.reason.trim())
        };
        line(
            "warning",
            &format!(
                "#{} to {}{reason}{}",
                w.seq,
                side_words(w.side),
                cite(&w.rule)
            ),
        );
    }
    // The electronic board.
    if let Some(b) = &g.board_status {
        let since = local(b.since.as_ref(), &g.time_zone, "%H:%M:%S")
            .map_or_else(String::new, |t| format!(" since {t}"));
        line(
            "board",
            &format!(
                "{} {}{since}",
                b.board_id,
                health(b.health).map_or("?", board_health_words)
            ),
        );
    }
    if let Some(v) = g.board_view.as_ref().filter(|v| !v.in_step) {
        let fill: Vec<String> = v.to_fill.iter().map(|p| p.square.to_string()).collect();
        let clear: Vec<String> = v.to_clear.iter().map(u32::to_string).collect();
        line(
            "board",
            &format!(
                "out of step: clear [{}], put down [{}]",
                clear.join(", "),
                fill.join(", ")
            ),
        );
    }
    line("position", &g.fen);
    if g.moves.is_empty() {
        if g.move_count > 0 {
            line(
                "moves",
                &format!(
                    "{} played (`game show {}`: the score sheet)",
                    g.move_count, g.id
                ),
            );
        }
    } else {
        let _ = write!(out, "{}", score_sheet(&g.moves));
    }
    if let Some(r) = result_text(g, true) {
        let _ = write!(out, "\n  final     {}", capital(&r));
    }
    let _ = write!(out, "\n  last seq  {}", g.last_seq);
    out
}

/// A played move's notation, `?` when the server sent none.
fn notation(m: &pb::PlayedMove) -> &str {
    m.r#move.as_ref().map_or("?", |m| m.notation.as_str())
}

/// The score sheet: a row per move number, `1. c3-d4  0.9 s  1:59:59.1 / 2:00:00.0`
/// for each side's move (the time spent on it, then White's and Black's clocks after
/// it; an untimed game gives the time spent only).
fn score_sheet(moves: &[pb::PlayedMove]) -> String {
    // Rows by move number, in the order played.
    let mut rows: Vec<(u32, Vec<&pb::PlayedMove>)> = Vec::new();
    for m in moves {
        match rows.last_mut() {
            Some((n, row)) if *n == m.move_number => row.push(m),
            _ => rows.push((m.move_number, vec![m])),
        }
    }
    // The side that opens a move number (White, or Black in English): the side of a
    // full row's first move, else of the first move.
    let lead = rows
        .iter()
        .find(|(_, r)| r.len() > 1)
        .or(rows.first())
        .and_then(|(_, r)| side(r[0].side));
    let spent = |m: &pb::PlayedMove| log_duration(m.time_spent_ms);
    let timed = |m: &pb::PlayedMove| m.white_clock_ms >= 0 || m.black_clock_ms >= 0;
    // Column widths, so that the rows line up.
    let widest = |f: &dyn Fn(&pb::PlayedMove) -> String| {
        moves
            .iter()
            .map(|m| f(m).chars().count())
            .max()
            .unwrap_or(0)
    };
    let w_move = widest(&|m| notation(m).to_string());
    let w_spent = widest(&spent);
    let w_clock =
        widest(&|m| clock_time(m.white_clock_ms)).max(widest(&|m| clock_time(m.black_clock_ms)));
    let cell = |m: &pb::PlayedMove| {
        let mut s = format!("{:<w_move$}  {:>w_spent$}", notation(m), spent(m));
        if timed(m) {
            let _ = write!(
                s,
                "  {:>w_clock$} / {:>w_clock$}",
                clock_time(m.white_clock_ms),
                clock_time(m.black_clock_ms)
            );
        }
        s
    };
    let mut out = String::from(if moves.iter().any(timed) {
        "\n  score sheet (each move: the time spent, then White's / Black's clock after it)"
    } else {
        "\n  score sheet (each move: the time spent)"
    });
    let blank = " ".repeat(cell(&moves[0]).chars().count());
    let width = rows.last().map_or(1, |(n, _)| n.to_string().len());
    for (n, row) in &rows {
        let mut cells: Vec<String> = row.iter().map(|m| cell(m)).collect();
        if side(row[0].side) != lead && lead.is_some() {
            // The number opened by the other side (a game set up with it to move).
            let mut gap = String::from("...");
            gap.push_str(&blank[3.min(blank.len())..]);
            cells.insert(0, gap);
        }
        let _ = write!(out, "\n  {n:>width$}. {}", cells.join("     ").trim_end());
    }
    out
}

/// The columns of `game list`'s table for one game.
pub struct Row {
    /// Board number (empty when none).
    pub board: String,
    /// The game's id.
    pub id: String,
    /// The event.
    pub event: String,
    /// The round.
    pub round: String,
    /// White's name.
    pub white: String,
    /// Black's name.
    pub black: String,
    /// Status or result in words.
    pub status: String,
    /// Both clocks.
    pub clocks: String,
}

/// A listed game as a row of the table.
pub fn row(g: &pb::Game) -> Row {
    let status = match &g.quarantine {
        // A quarantined game (arbiters only see it) says so, with its bad seq.
        Some(q) => format!("QUARANTINED at seq {}: {}", q.seq, q.reason),
        None => match pb::GameStatus::try_from(g.status) {
            Ok(pb::GameStatus::Finished) => {
                result_text(g, false).unwrap_or_else(|| "finished".into())
            }
            _ => status_text(g),
        },
    };
    let clocks = if g.white_clock_ms < 0 && g.black_clock_ms < 0 {
        "untimed".to_string()
    } else {
        format!(
            "{} {}",
            clock_time(g.white_clock_ms),
            clock_time(g.black_clock_ms)
        )
    };
    Row {
        board: if g.board > 0 {
            g.board.to_string()
        } else {
            String::new()
        },
        id: g.id.clone(),
        event: g.event.clone(),
        round: g.round.clone(),
        white: name(g.white.as_ref()).to_string(),
        black: name(g.black.as_ref()).to_string(),
        status,
        clocks,
    }
}

/// `game list`'s table: a header, then a row per game, columns aligned; the event and
/// round columns only when the list was not filtered by them.
pub fn table(rows: &[Row], event_column: bool, round_column: bool) -> String {
    let mut columns: Vec<(&str, Vec<&str>)> = Vec::new();
    let mut add = |title: &'static str, pick: fn(&Row) -> &str| {
        columns.push((title, rows.iter().map(pick).collect()));
    };
    if event_column {
        add("event", |r| &r.event);
    }
    if round_column {
        add("round", |r| &r.round);
    }
    add("board", |r| &r.board);
    add("game", |r| &r.id);
    add("white", |r| &r.white);
    add("black", |r| &r.black);
    add("clocks (white black)", |r| &r.clocks);
    add("status", |r| &r.status);
    let widths: Vec<usize> = columns
        .iter()
        .map(|(t, cells)| {
            cells
                .iter()
                .map(|c| c.chars().count())
                .chain(std::iter::once(t.chars().count()))
                .max()
                .unwrap_or(0)
        })
        .collect();
    let line = |cells: Vec<&str>| {
        let mut s = String::new();
        for (i, c) in cells.iter().enumerate() {
            if i > 0 {
                s.push_str("  ");
            }
            let pad = widths[i].saturating_sub(c.chars().count());
            s.push_str(c);
            if i + 1 < cells.len() {
                s.push_str(&" ".repeat(pad));
            }
        }
        s
    };
    let mut out = line(columns.iter().map(|(t, _)| *t).collect());
    for i in 0..rows.len() {
        out.push('\n');
        out.push_str(&line(columns.iter().map(|(_, c)| c[i]).collect()));
    }
    out
}
