//! Conversions between the domain and the generated protobuf types: the one place that
//! knows both.

use std::sync::LazyLock;

use prost_types::Timestamp;

use super::pb;
use crate::game::describe::{self, Seen};
use crate::game::{
    Actor, BoardHealth, ClaimKind, ClockReading, ClockRun, EndReason, EventKind, GameSettings,
    GameSummary, IrregularityKind, MoveCountDraws, MoveRecord, MoveSource, OfferResponse,
    OfferTiming, OutageMeasure, Outcome, RepetitionMode, Session,
};
use crate::hub::{GameMeta, PlayerInfo, Published, Snapshot};
use crate::notation::drawing;
use crate::notation::parse_fen;
use crate::rules::{Color, Position, RuleEdition, Variant};

/// A protobuf enum value that names nothing the server knows.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BadField(pub String);

impl std::fmt::Display for BadField {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

/// The domain variant of a protobuf variant.
///
/// # Errors
/// Unspecified, or a value this build does not know.
pub fn variant(v: i32) -> Result<Variant, BadField> {
    Ok(match pb::Variant::try_from(v) {
        Ok(pb::Variant::Russian) => Variant::Russian,
        Ok(pb::Variant::International) => Variant::International,
        Ok(pb::Variant::English) => Variant::English,
        Ok(pb::Variant::Brazilian) => Variant::Brazilian,
        Ok(pb::Variant::Pool) => Variant::Pool,
        Ok(pb::Variant::Italian) => Variant::Italian,
        Ok(pb::Variant::Giveaway) => Variant::Giveaway,
        Ok(pb::Variant::Antidraughts) => Variant::Antidraughts,
        Ok(pb::Variant::Turkish) => Variant::Turkish,
        Ok(pb::Variant::Frisian) => Variant::Frisian,
        Ok(pb::Variant::Russian80) => Variant::Russian80,
        Ok(pb::Variant::Diagonal) => Variant::Diagonal,
        Ok(pb::Variant::Towers) => Variant::Towers,
        Ok(pb::Variant::Corners) => Variant::Corners,
        Ok(pb::Variant::Unspecified) => return Err(BadField("variant: required".into())),
        Err(_) => return Err(BadField(format!("variant: unknown value {v}"))),
    })
}

/// The protobuf variant of a domain variant (every reply's `Game` carries it: a match,
/// where building and looking up its name cost about 800 instructions a reply).
pub fn variant_pb(v: Variant) -> pb::Variant {
    match v {
        Variant::Russian => pb::Variant::Russian,
        Variant::International => pb::Variant::International,
        Variant::English => pb::Variant::English,
        Variant::Brazilian => pb::Variant::Brazilian,
        Variant::Pool => pb::Variant::Pool,
        Variant::Italian => pb::Variant::Italian,
        Variant::Giveaway => pb::Variant::Giveaway,
        Variant::Antidraughts => pb::Variant::Antidraughts,
        Variant::Turkish => pb::Variant::Turkish,
        Variant::Frisian => pb::Variant::Frisian,
        Variant::Russian80 => pb::Variant::Russian80,
        Variant::Diagonal => pb::Variant::Diagonal,
        Variant::Towers => pb::Variant::Towers,
        Variant::Corners => pb::Variant::Corners,
    }
}

/// The side named by a request field.
///
/// # Errors
/// Unspecified or unknown.
pub fn side(s: i32, field: &str) -> Result<Color, BadField> {
    match pb::Side::try_from(s) {
        Ok(pb::Side::White) => Ok(Color::White),
        Ok(pb::Side::Black) => Ok(Color::Black),
        _ => Err(BadField(format!(
            "{field}: SIDE_WHITE or SIDE_BLACK required"
        ))),
    }
}

/// The protobuf side of a colour.
pub fn side_pb(c: Color) -> i32 {
    match c {
        Color::White => pb::Side::White as i32,
        Color::Black => pb::Side::Black as i32,
    }
}

pub(super) fn ts(ms: i64) -> Option<Timestamp> {
    Some(Timestamp {
        seconds: ms.div_euclid(1000),
        nanos: (ms.rem_euclid(1000) * 1_000_000) as i32,
    })
}

/// Game settings from a create request.
///
/// # Errors
/// A bad time control.
pub fn settings(
    variant: Variant,
    time_control: &str,
    s: Option<&pb::GameSettings>,
) -> Result<GameSettings, BadField> {
    let mut out = GameSettings::new(variant);
    let tc = time_control.trim();
    if !tc.is_empty() && tc != "-" {
        // The friendly parser reads PDN tags too, so its error is the one to report.
        out.time_control = Some(
            tc.parse::<crate::clock::TimeControl>()
                .map_err(|e| BadField(format!("time_control {tc:?} {e}")))?,
        );
    }
    if let Some(s) = s {
        out.edition = match pb::RuleEdition::try_from(s.rule_edition) {
            Ok(pb::RuleEdition::RuleEdition2013) => RuleEdition::Edition2013,
            _ => RuleEdition::Classic,
        };
        out.press_on_move = !matches!(
            pb::ClockSwitching::try_from(s.clock_switching),
            Ok(pb::ClockSwitching::OnPress)
        );
        out.repetition = match pb::RepetitionMode::try_from(s.repetition_mode) {
            Ok(pb::RepetitionMode::Automatic) => RepetitionMode::Automatic,
            _ => RepetitionMode::Claim,
        };
        out.move_count_draws = match pb::MoveCountDraws::try_from(s.move_count_draws) {
            Ok(pb::MoveCountDraws::ReferredToArbiter) => MoveCountDraws::Referred,
            _ => MoveCountDraws::Automatic,
        };
        out.claims_need_arbiter = s.claims_need_arbiter;
        out.min_move_for_offer = s.min_move_for_draw_offer;
        out.charge_outage = s.charge_outage_to_side_on_move;
        out.touch_immovable_penalty = s.touch_immovable_penalty;
        // The edge checked it against MAX_BROADCAST_DELAY_MS (`validate`).
        if let Some(delay) = s.broadcast_delay_ms {
            out.broadcast_delay_ms = delay;
        }
        // Checked at the edge against MAX_DEFAULT_TIME_MS (`validate`).
        out.default_time_ms = s.default_time_ms;
    }
    Ok(out)
}

fn settings_pb(s: &GameSettings) -> pb::GameSettings {
    pb::GameSettings {
        rule_edition: match s.edition {
            RuleEdition::Classic => pb::RuleEdition::Classic as i32,
            RuleEdition::Edition2013 => pb::RuleEdition::RuleEdition2013 as i32,
        },
        clock_switching: if s.press_on_move {
            pb::ClockSwitching::OnMove as i32
        } else {
            pb::ClockSwitching::OnPress as i32
        },
        repetition_mode: match s.repetition {
            RepetitionMode::Claim => pb::RepetitionMode::Claim as i32,
            RepetitionMode::Automatic => pb::RepetitionMode::Automatic as i32,
        },
        move_count_draws: match s.move_count_draws {
            MoveCountDraws::Automatic => pb::MoveCountDraws::Automatic as i32,
            MoveCountDraws::Referred => pb::MoveCountDraws::ReferredToArbiter as i32,
        },
        claims_need_arbiter: s.claims_need_arbiter,
        min_move_for_draw_offer: s.min_move_for_offer,
        broadcast_delay_ms: Some(s.broadcast_delay_ms),
        charge_outage_to_side_on_move: s.charge_outage,
        touch_immovable_penalty: s.touch_immovable_penalty,
        default_time_ms: s.default_time_ms,
    }
}

/// A player from the request.
pub fn player(p: Option<&pb::Player>) -> PlayerInfo {
    p.map(|p| PlayerInfo {
        name: p.name.clone(),
        fmjd_id: p.fmjd_id.clone(),
        federation: p.federation.clone(),
        rating: p.rating,
    })
    .unwrap_or_default()
}

pub(super) fn player_pb(p: &PlayerInfo) -> pb::Player {
    pb::Player {
        name: p.name.clone(),
        fmjd_id: p.fmjd_id.clone(),
        federation: p.federation.clone(),
        rating: p.rating,
        ..pb::Player::default()
    }
}

/// A clock reading as the API shows it.
pub fn reading_pb(r: &ClockReading) -> pb::ClockSnapshot {
    let (state, running) = match r.run {
        ClockRun::NotStarted => (pb::ClockState::NotStarted, None),
        ClockRun::Running(side) => (pb::ClockState::Running, Some(side)),
        ClockRun::Paused(side) => (pb::ClockState::Paused, Some(side)),
        ClockRun::Stopped => (pb::ClockState::Stopped, None),
    };
    pb::ClockSnapshot {
        state: state as i32,
        running_side: running.map_or(0, side_pb),
        white_ms: r.white_ms as i64,
        black_ms: r.black_ms as i64,
        read_at: ts(r.at_ms as i64),
        white_period: r.white_period,
        black_period: r.black_period,
    }
}

fn outcome_pb(o: Outcome) -> i32 {
    (match o {
        Outcome::WhiteWins => pb::GameResult::WhiteWins,
        Outcome::BlackWins => pb::GameResult::BlackWins,
        Outcome::Draw => pb::GameResult::Draw,
        Outcome::DoubleForfeit => pb::GameResult::BothLose,
        Outcome::Annulled => pb::GameResult::Annulled,
    }) as i32
}

/// The domain outcome of a declared result.
///
/// # Errors
/// Unspecified.
pub fn outcome(r: i32) -> Result<Outcome, BadField> {
    match pb::GameResult::try_from(r) {
        Ok(pb::GameResult::WhiteWins) => Ok(Outcome::WhiteWins),
        Ok(pb::GameResult::BlackWins) => Ok(Outcome::BlackWins),
        Ok(pb::GameResult::Draw) => Ok(Outcome::Draw),
        Ok(pb::GameResult::BothLose) => Ok(Outcome::DoubleForfeit),
        Ok(pb::GameResult::Annulled) => Ok(Outcome::Annulled),
        _ => Err(BadField("result: required".into())),
    }
}

fn reason_pb(r: EndReason) -> i32 {
    (match r {
        EndReason::Resignation => pb::ResultReason::Resignation,
        EndReason::NoPieces => pb::ResultReason::NoPieces,
        EndReason::NoMoves => pb::ResultReason::NoMoves,
        EndReason::FlagFall => pb::ResultReason::TimeForfeit,
        EndReason::MoveLimit => pb::ResultReason::MoveLimit,
        EndReason::Agreement => pb::ResultReason::DrawAgreed,
        EndReason::Repetition => pb::ResultReason::Repetition,
        EndReason::MoveCount => pb::ResultReason::MoveCount,
        EndReason::IncorrectClaimOnTime => pb::ResultReason::IncorrectClaimOnTime,
        EndReason::TouchPenalty => pb::ResultReason::TouchPenalty,
        EndReason::ArbiterDecision => pb::ResultReason::ArbiterDecision,
        EndReason::Penalty => pb::ResultReason::Penalty,
        EndReason::CornerFilled => pb::ResultReason::CornerFilled,
        EndReason::HomeNotLeft => pb::ResultReason::HomeNotLeft,
        EndReason::Default => pb::ResultReason::Default,
        EndReason::Forfeit => pb::ResultReason::Forfeit,
    }) as i32
}

/// An offer response.
///
/// # Errors
/// Unspecified.
pub fn response(r: i32) -> Result<OfferResponse, BadField> {
    match pb::DrawResponse::try_from(r) {
        Ok(pb::DrawResponse::Accept) => Ok(OfferResponse::Accept),
        Ok(pb::DrawResponse::Decline) => Ok(OfferResponse::Decline),
        Ok(pb::DrawResponse::Postpone) => Ok(OfferResponse::Postpone),
        _ => Err(BadField(
            "response: ACCEPT, DECLINE or POSTPONE required".into(),
        )),
    }
}

/// A claim kind (repetition when unspecified).
pub fn claim_kind(k: i32) -> ClaimKind {
    match pb::DrawClaimKind::try_from(k) {
        Ok(pb::DrawClaimKind::MoveCount) => ClaimKind::MoveCount,
        _ => ClaimKind::Repetition,
    }
}

fn claim_kind_pb(k: ClaimKind) -> i32 {
    (match k {
        ClaimKind::Repetition => pb::DrawClaimKind::Repetition,
        ClaimKind::MoveCount => pb::DrawClaimKind::MoveCount,
    }) as i32
}

fn move_pb(notation: &str, path: &[u32], captured: &[u32]) -> pb::Move {
    pb::Move {
        notation: notation.to_string(),
        path: path.to_vec(),
        captured: captured.to_vec(),
    }
}

/// The legal moves of a position as the API lists them: sorted by notation.
pub fn legal_moves(pos: &crate::rules::Position) -> Vec<pb::Move> {
    crate::notation::movetext::move_records(pos)
        .into_iter()
        .map(|r| pb::Move {
            notation: r.notation,
            path: r.path,
            captured: r.captured,
        })
        .collect()
}

/// The game as protobuf at `now`; `with_moves` false leaves `moves` empty (command
/// replies, `ListGames` unless asked), `move_count` is always set.
pub fn game_pb(meta: &GameMeta, s: &Session, now: u64, with_moves: bool) -> pb::Game {
    let summary = s.summarize(now);
    let mut game = if with_moves {
        summary_pb(meta, &summary, s.moves().iter())
    } else {
        summary_pb(meta, &summary, std::iter::empty())
    };
    // The last move is marked when the position is the one it led to.
    let fen = s.official_fen();
    let last: &[u32] = s
        .moves()
        .last()
        .filter(|m| m.fen_after == fen)
        .map_or(&[], |m| &m.path);
    game.drawing = Some(drawing_pb(s.position(), last));
    game
}

/// A variant's board before its pieces: the grid, its edges and title, each playable
/// square's place, colour and label, in the geometry's order, with its PDN number. Made
/// once per variant: every reply and every move's event draws the board.
struct Blank {
    drawing: pb::BoardDrawing,
    numbers: Vec<u32>,
}

fn blank(v: Variant) -> &'static Blank {
    static BLANKS: LazyLock<Vec<(Variant, Blank)>> = LazyLock::new(|| {
        Variant::ALL
            .iter()
            .map(|&v| {
                let geo = v.geometry();
                let (files, ranks) = drawing::edges(v);
                let squares = geo
                    .order
                    .iter()
                    .map(|&sq| {
                        let (x, y) = drawing::place(sq, v);
                        pb::DrawnSquare {
                            x: u32::from(x),
                            y: u32::from(y),
                            dark: drawing::is_dark(sq, v),
                            label: drawing::label(sq, v)
                                .map_or_else(String::new, |n| n.to_string()),
                            ..pb::DrawnSquare::default()
                        }
                    })
                    .collect();
                let numbers = geo
                    .order
                    .iter()
                    .map(|&sq| geo.number(sq, v.rules().mirrored))
                    .collect();
                let drawing = pb::BoardDrawing {
                    columns: u32::from(geo.width),
                    rows: u32::from(geo.height),
                    squares,
                    files,
                    ranks,
                    turn: 0,
                    title: drawing::title(v).to_owned(),
                };
                (v, Blank { drawing, numbers })
            })
            .collect()
    });
    // Every variant is listed: the first is a fallback never taken.
    BLANKS
        .iter()
        .find(|(w, _)| *w == v)
        .map_or(&BLANKS[0].1, |(_, b)| b)
}

/// A position as a page draws it ([`crate::notation::drawing`]), the squares of
/// `last_move` (a move's path) marked.
pub fn drawing_pb(pos: &Position, last_move: &[u32]) -> pb::BoardDrawing {
    let v = pos.variant();
    let blank = blank(v);
    let mut out = blank.drawing.clone();
    for ((square, &sq), &n) in out
        .squares
        .iter_mut()
        .zip(v.geometry().order.iter())
        .zip(&blank.numbers)
    {
        if let Some((c, king)) = pos.piece_at(sq) {
            square.piece = side_pb(c);
            square.king = king;
        }
        square.beneath = pos.beneath(sq).into_iter().map(side_pb).collect();
        if let Some(part) = drawing::part_in_move(last_move, n) {
            part.clone_into(&mut square.last_move);
        }
    }
    out.turn = side_pb(pos.turn());
    out
}

/// The position of `fen` drawn, the squares of `path` marked; `None` when it does not
/// read (a recorded FEN always does).
fn fen_drawing(fen: &str, v: Variant, path: &[u32]) -> Option<pb::BoardDrawing> {
    parse_fen(fen, v).ok().map(|pos| drawing_pb(&pos, path))
}

/// The game as protobuf from its summary (a stored one, for a game not in memory) and
/// the score sheet to show (empty: none).
pub fn summary_pb<'a>(
    meta: &GameMeta,
    sum: &GameSummary,
    moves: impl Iterator<Item = &'a MoveRecord>,
) -> pb::Game {
    let view = &sum.view;
    let status = if view.result.is_some() {
        pb::GameStatus::Finished
    } else if !view.started {
        pb::GameStatus::Created
    } else if matches!(sum.clock.map(|c| c.run), Some(ClockRun::Paused(_))) {
        pb::GameStatus::Paused
    } else {
        pb::GameStatus::Running
    };
    let moves = moves
        .enumerate()
        .map(|(i, m)| pb::PlayedMove {
            r#move: Some(move_pb(&m.notation, &m.path, &m.captured)),
            side: side_pb(m.side),
            move_number: ((i + usize::from(sum.second_first)) / 2 + 1) as u32,
            seq: m.seq,
            white_clock_ms: m.white_ms.map_or(-1, |c| c as i64),
            black_clock_ms: m.black_ms.map_or(-1, |c| c as i64),
            time_spent_ms: m.spent_ms as i64,
            fen_after: m.fen_after.to_string(),
        })
        .collect();
    let stamps = &sum.stamps;
    pb::Game {
        id: meta.id.clone(),
        variant: variant_pb(view.variant) as i32,
        status: status as i32,
        result: view.result.as_ref().map_or(0, |r| outcome_pb(r.outcome)),
        result_reason: view.result.as_ref().map_or(0, |r| reason_pb(r.reason)),
        rule: view
            .result
            .as_ref()
            .and_then(|r| r.rule.clone())
            .unwrap_or_default(),
        fen: view.fen.clone(),
        moves,
        move_count: sum.move_count,
        white_clock_ms: view.white_ms.map_or(-1, |m| m as i64),
        black_clock_ms: view.black_ms.map_or(-1, |m| m as i64),
        side_to_move: side_pb(view.side_to_move),
        last_seq: view.last_seq,
        white: Some(player_pb(&meta.white)),
        black: Some(player_pb(&meta.black)),
        event: meta.event.clone(),
        round: meta.round.clone(),
        board: meta.board,
        site: meta.site.clone(),
        time_zone: meta.time_zone.clone(),
        time_control: sum
            .settings
            .time_control
            .as_ref()
            .map(|t| t.to_string())
            .unwrap_or_default(),
        settings: Some(settings_pb(&sum.settings)),
        clock: sum.clock.as_ref().map(reading_pb),
        start_fen: sum.start_fen.clone(),
        pending_draw_offer: view.offer.map(|o| pb::PendingDrawOffer {
            side: side_pb(o.by),
            seq: o.seq,
            postponed: o.postponed,
        }),
        pending_claim: view.claim.as_ref().map(|c| pb::PendingClaim {
            side: side_pb(c.by),
            seq: c.seq,
            kind: claim_kind_pb(c.kind),
            written_move: c.written_move.as_ref().map(|m| pb::Move {
                notation: m.clone(),
                path: Vec::new(),
                captured: Vec::new(),
            }),
        }),
        pending_irregularities: view
            .irregularities
            .iter()
            .map(|i| pb::PendingIrregularity {
                seq: i.seq,
                kind: irregularity_pb(i.kind),
                side: side_pb(i.side),
                rule: i.rule.clone().unwrap_or_default(),
            })
            .collect(),
        warnings: view
            .warnings
            .iter()
            .map(|w| pb::Warning {
                side: side_pb(w.side),
                reason: w.reason.clone(),
                rule: w.rule.clone().unwrap_or_default(),
                seq: w.seq,
            })
            .collect(),
        created_at: ts(stamps.created.timestamp_millis()),
        started_at: stamps.started.and_then(|t| ts(t.timestamp_millis())),
        finished_at: stamps.finished.and_then(|t| ts(t.timestamp_millis())),
        quarantine: None,
        board_status: view.board.as_ref().map(|b| pb::BoardStatus {
            board_id: b.board_id.clone(),
            health: board_health_pb(b.health) as i32,
            since: ts(b.since.timestamp_millis()),
        }),
        board_view: Some(board_view_pb(&view.board_view)),
        drawing: None,
    }
}

/// The judge's picture of the physical board on the wire.
fn board_view_pb(b: &crate::game::BoardView) -> pb::BoardView {
    pb::BoardView {
        white: b.white.clone(),
        black: b.black.clone(),
        kings: b.kings.clone(),
        in_hand: b.in_hand.map(|h| pb::BoardHand {
            from: h.from,
            side: side_pb(h.side),
            king: h.king,
        }),
        pending_removal: b.pending_removal.clone(),
        in_step: b.in_step,
        to_clear: b.to_clear.clone(),
        to_fill: board_pieces_pb(&b.to_fill),
    }
}

fn board_pieces_pb(pieces: &[crate::game::BoardPiece]) -> Vec<pb::BoardPiece> {
    pieces
        .iter()
        .map(|p| pb::BoardPiece {
            square: p.square,
            side: side_pb(p.side),
            king: p.king,
        })
        .collect()
}

/// A board's health on the wire.
pub fn board_health_pb(h: BoardHealth) -> pb::BoardHealth {
    match h {
        BoardHealth::Active => pb::BoardHealth::Active,
        BoardHealth::NotResponding => pb::BoardHealth::NotResponding,
        BoardHealth::Disconnected => pb::BoardHealth::Disconnected,
    }
}

fn irregularity_pb(k: IrregularityKind) -> i32 {
    (match k {
        IrregularityKind::IllegalMove => pb::IrregularityKind::IllegalMove,
        IrregularityKind::CaptureIncomplete => pb::IrregularityKind::CaptureIncomplete,
        IrregularityKind::TouchMove => pb::IrregularityKind::TouchMove,
        IrregularityKind::OutOfTurn => pb::IrregularityKind::MoveOutOfTurn,
        IrregularityKind::WrongRemoval => pb::IrregularityKind::WrongRemoval,
        IrregularityKind::PressBeforeRemoval => pb::IrregularityKind::ClockPressBeforeRemoval,
        IrregularityKind::PressWithoutMove => pb::IrregularityKind::ClockPressWithoutMove,
        IrregularityKind::WrongCopy => pb::IrregularityKind::WrongCopy,
    }) as i32
}

fn actor_pb(a: &Actor) -> pb::Actor {
    let (kind, id, side, name) = match a {
        Actor::Player(c) => (pb::ActorKind::Player, String::new(), side_pb(*c), None),
        Actor::Arbiter(who) => (pb::ActorKind::Arbiter, who.id.clone(), 0, who.name.clone()),
        Actor::Board(id) => (pb::ActorKind::Board, id.clone(), 0, None),
        Actor::System => (pb::ActorKind::System, String::new(), 0, None),
    };
    pb::Actor {
        kind: kind as i32,
        id,
        side,
        name: name.unwrap_or_default(),
    }
}

/// The `Resync` message a watcher that fell behind gets: the whole game at the
/// snapshot's seq (the stream continues after it).
pub fn resync_pb(meta: &GameMeta, snap: &Snapshot) -> pb::GameEvent {
    let game = game_pb(meta, &snap.session, snap.now_ms, true);
    let description = describe::resync_line(game.moves.len(), snap.seq());
    pb::GameEvent {
        description,
        comment: String::new(),
        drawing: None,
        seq: snap.seq(),
        server_time: ts(snap.session.last_ms() as i64),
        actor: Some(actor_pb(&Actor::System)),
        rule: String::new(),
        game_id: meta.id.clone(),
        monotonic_ms: snap.now_ms as i64,
        cursor: String::new(),
        kind: Some(pb::game_event::Kind::Resync(pb::Resync {
            game: Some(game),
        })),
    }
}

/// A recorded event as the API streams it, with what the judge knew right after it.
pub fn event_pb(p: &Published, meta: &GameMeta) -> pb::GameEvent {
    use pb::game_event::Kind;
    let e = &p.event;
    let note = &p.note;
    let clock = note.clock.as_ref().map(reading_pb);
    // The board's own clock on the message that caused the event (0: no board's).
    let board_time_ms = e.board_ms.unwrap_or(0);
    let seen = Seen {
        variant: p.variant,
        note,
        meta,
    };
    let words = describe::describe(e, seen);
    let drawing = match &e.kind {
        EventKind::GameCreated { start_fen: fen, .. }
        | EventKind::PositionSet { fen, .. }
        | EventKind::IrregularityResolved {
            ruling: Some(crate::game::Ruling::Stands),
            fen,
            ..
        } if note.resolved.is_none_or(IrregularityKind::on_board) => {
            fen_drawing(fen, p.variant, &[])
        }
        EventKind::MovePlayed {
            fen_after, path, ..
        } => fen_drawing(fen_after, p.variant, path),
        _ => None,
    };
    let kind = match &e.kind {
        EventKind::GameCreated {
            settings,
            start_fen,
        } => Kind::GameCreated(pb::GameCreated {
            variant: variant_pb(settings.variant) as i32,
            time_control: settings
                .time_control
                .as_ref()
                .map(|t| t.to_string())
                .unwrap_or_default(),
            white: Some(player_pb(&meta.white)),
            black: Some(player_pb(&meta.black)),
            event: meta.event.clone(),
            round: meta.round.clone(),
            board: meta.board,
            start_fen: start_fen.clone(),
            settings: Some(settings_pb(settings)),
        }),
        EventKind::GameStarted => Kind::GameStarted(pb::GameStarted { clock }),
        EventKind::MovePlayed {
            side,
            notation,
            path,
            captured,
            source,
            fen_after,
        } => Kind::MovePlayed(pb::MovePlayed {
            r#move: Some(move_pb(notation, path, captured)),
            side: side_pb(*side),
            move_number: note.move_number,
            fen_after: fen_after.clone(),
            clock,
            time_spent_ms: note.time_spent_ms.unwrap_or(0) as i64,
            source: (match source {
                MoveSource::Digital => pb::MoveSource::Digital,
                MoveSource::Board => pb::MoveSource::Board,
                MoveSource::Snapshot => pb::MoveSource::Snapshot,
                MoveSource::WrittenClaim => pb::MoveSource::WrittenClaim,
            }) as i32,
            board_time_ms,
        }),
        EventKind::ClockPressed { side, .. } => Kind::ClockPressed(pb::ClockPressed {
            side: side_pb(*side),
            clock,
            board_time_ms,
        }),
        EventKind::ClockChanged { op, reason } => match op {
            crate::clock::ClockOp::Pause { .. } => Kind::ClocksPaused(pb::ClocksPaused {
                reason: reason.clone().unwrap_or_default(),
                clock,
            }),
            crate::clock::ClockOp::Resume { .. } => Kind::ClocksResumed(pb::ClocksResumed {
                clock,
                reason: reason.clone().unwrap_or_default(),
            }),
            crate::clock::ClockOp::SetRemaining {
                side, remaining, ..
            } => Kind::ClockAdjusted(pb::ClockAdjusted {
                side: side_pb(*side),
                change: Some(pb::clock_adjusted::Change::SetRemainingMs(
                    *remaining as i64,
                )),
                reason: reason.clone().unwrap_or_default(),
                clock,
            }),
            crate::clock::ClockOp::AddTime { side, amount, .. } => {
                Kind::ClockAdjusted(pb::ClockAdjusted {
                    side: side_pb(*side),
                    change: Some(pb::clock_adjusted::Change::AddMs(*amount as i64)),
                    reason: reason.clone().unwrap_or_default(),
                    clock,
                })
            }
            crate::clock::ClockOp::SubtractTime { side, amount, .. } => {
                Kind::ClockAdjusted(pb::ClockAdjusted {
                    side: side_pb(*side),
                    change: Some(pb::clock_adjusted::Change::AddMs(-(*amount as i64))),
                    reason: reason.clone().unwrap_or_default(),
                    clock,
                })
            }
            crate::clock::ClockOp::Settle { .. } => match note.side {
                Some(side) => Kind::FlagFell(pb::FlagFell {
                    side: side_pb(side),
                    clock,
                }),
                None => Kind::ClockState(pb::ClockStateChanged { clock }),
            },
            _ => Kind::ClockState(pb::ClockStateChanged { clock }),
        },
        EventKind::TimeCalled { side } => Kind::TimeCalled(pb::TimeCalled {
            side: side_pb(*side),
        }),
        EventKind::PieceTouched {
            square,
            binding,
            immovable,
        } => Kind::PieceTouched(pb::PieceTouched {
            square: *square,
            side: note.side.map_or(0, side_pb),
            binding: *binding,
            board_time_ms,
            immovable: *immovable,
        }),
        EventKind::PieceLifted { square } => Kind::PieceLifted(pb::PieceLifted {
            square: *square,
            board_time_ms,
        }),
        EventKind::PiecePlaced { square } => Kind::PiecePlaced(pb::PiecePlaced {
            square: *square,
            board_time_ms,
        }),
        EventKind::PieceReleased { square } => Kind::PieceReleased(pb::PieceReleased {
            square: *square,
            board_time_ms,
        }),
        EventKind::BoardFlooded { per_s, burst } => Kind::BoardFlooded(pb::BoardFlooded {
            messages_per_s: *per_s,
            burst: *burst,
            board_time_ms,
        }),
        EventKind::BoardHealthChanged {
            board_id,
            health,
            silent_ms,
        } => Kind::BoardHealthChanged(pb::BoardHealthChanged {
            board_id: board_id.clone(),
            health: board_health_pb(*health) as i32,
            silent_ms: i64::try_from(*silent_ms).unwrap_or(i64::MAX),
        }),
        EventKind::AdjustAnnounced { side } => Kind::AdjustAnnounced(pb::AdjustAnnounced {
            side: side_pb(*side),
            board_time_ms,
        }),
        EventKind::BoardSnapshot {
            white,
            black,
            kings,
            missing,
            extra,
            wrong_colour,
            wrong_kind,
        } => Kind::BoardSnapshot(pb::BoardSnapshotReceived {
            occupancy: Some(pb::BoardOccupancy {
                white: white.clone(),
                black: black.clone(),
                kings: kings.clone().unwrap_or_default(),
                occupied: Vec::new(),
            }),
            board_time_ms,
            matches_official: missing.is_empty()
                && extra.is_empty()
                && wrong_colour.is_empty()
                && wrong_kind.is_empty(),
            missing: missing.clone(),
            extra: extra.clone(),
            wrong_colour: wrong_colour.clone(),
            wrong_kind: wrong_kind.clone(),
        }),
        EventKind::BoardOutOfStep {
            cause,
            white,
            black,
            kings,
            to_clear,
            to_fill,
        } => Kind::BoardOutOfStep(pb::BoardOutOfStep {
            cause: match cause {
                crate::game::FollowCause::MoveElsewhere => pb::BoardFollowCause::MoveElsewhere,
                crate::game::FollowCause::PositionSet => pb::BoardFollowCause::PositionSet,
                crate::game::FollowCause::Corrected => pb::BoardFollowCause::Corrected,
            } as i32,
            white: white.clone(),
            black: black.clone(),
            kings: kings.clone(),
            to_clear: to_clear.clone(),
            to_fill: board_pieces_pb(to_fill),
        }),
        EventKind::BoardInStep => Kind::BoardInStep(pb::BoardInStep { board_time_ms }),
        EventKind::RemovalComplete { side } => Kind::RemovalComplete(pb::RemovalComplete {
            side: side_pb(*side),
            board_time_ms,
        }),
        EventKind::DrawOffered { side, timing } => Kind::DrawOffered(pb::DrawOffered {
            side: side_pb(*side),
            timing: (match timing {
                OfferTiming::AfterOwnMove => pb::DrawOfferTiming::AfterOwnMove,
                OfferTiming::DuringOpponentsTurn => pb::DrawOfferTiming::DuringOpponentsTurn,
                OfferTiming::BeforeOwnMove => pb::DrawOfferTiming::BeforeOwnMove,
            }) as i32,
        }),
        EventKind::DrawOfferAnswered {
            side,
            response,
            by_move,
        } => match response {
            OfferResponse::Accept => Kind::DrawOfferAccepted(pb::DrawOfferAccepted {
                side: side_pb(*side),
            }),
            OfferResponse::Decline => Kind::DrawOfferDeclined(pb::DrawOfferDeclined {
                side: side_pb(*side),
                by_move: *by_move,
                board_time_ms,
            }),
            OfferResponse::Postpone => Kind::DrawOfferPostponed(pb::DrawOfferPostponed {
                side: side_pb(*side),
            }),
        },
        EventKind::ClaimMade {
            side,
            kind,
            written_move,
            correct,
        } => Kind::DrawClaimed(pb::DrawClaimed {
            side: side_pb(*side),
            kind: claim_kind_pb(*kind),
            written_move: written_move.as_ref().map(|m| pb::Move {
                notation: m.clone(),
                path: Vec::new(),
                captured: Vec::new(),
            }),
            checked_correct: *correct,
        }),
        EventKind::ClaimDecided { upheld, reason } => Kind::ClaimDecided(pb::ClaimDecided {
            reason: reason.clone().unwrap_or_default(),
            side: note.side.map_or(0, side_pb),
            claim_seq: note.refers_to.unwrap_or(0),
            ruling: if *upheld {
                pb::ClaimRuling::Correct as i32
            } else {
                pb::ClaimRuling::Incorrect as i32
            },
        }),
        EventKind::Irregularity {
            side,
            kind,
            detail,
            retake_with,
            squares,
        } => Kind::IrregularityFlagged(pb::IrregularityFlagged {
            kind: irregularity_pb(*kind),
            side: side_pb(*side),
            description: detail.clone(),
            squares: squares.clone(),
            official_fen: note.official_fen.clone().unwrap_or_default(),
            retake_with: retake_with.unwrap_or(0),
            board_time_ms,
        }),
        EventKind::IrregularityResolved {
            ruling,
            fen,
            reason: given,
            ..
        } => Kind::IrregularityRuled(pb::IrregularityRuled {
            irregularity_seq: note.refers_to.unwrap_or(0),
            ruling: match ruling {
                Some(crate::game::Ruling::Stands) => pb::IrregularityRuling::Stands as i32,
                Some(crate::game::Ruling::Corrected) => pb::IrregularityRuling::Corrected as i32,
                // Nobody ruled: the board was put back (the proto's UNSPECIFIED).
                None => pb::IrregularityRuling::Unspecified as i32,
            },
            fen_after: fen.clone(),
            reason: match (ruling, given) {
                (None, None) => "the board was put back".into(),
                (_, given) => given.clone().unwrap_or_default(),
            },
            board_time_ms,
        }),
        EventKind::Warning { side, reason } => Kind::WarningIssued(pb::WarningIssued {
            side: side_pb(*side),
            reason: reason.clone(),
            count: note.count,
            board_time_ms,
        }),
        EventKind::DrawConditionReached => Kind::DrawConditionReached(pb::DrawConditionReached {
            mode: pb::DrawMode::Referred as i32,
            description: e.rule.clone().unwrap_or_default(),
            board_time_ms,
        }),
        EventKind::FortyMoveCountStarted { side } => {
            Kind::FortyMoveCountStarted(pb::FortyMoveCountStarted {
                side: side_pb(*side),
            })
        }
        EventKind::MarkedAbsent { side } => Kind::PlayerMarkedAbsent(pb::PlayerMarkedAbsent {
            side: side_pb(*side),
        }),
        EventKind::PositionSet { fen, reason } => Kind::PositionSet(pb::PositionSet {
            fen: fen.clone(),
            reason: reason.clone().unwrap_or_default(),
        }),
        EventKind::Outage {
            from_ms,
            until_ms,
            charged,
            measured,
        } => Kind::OutageRecorded(pb::OutageRecorded {
            last_seen: ts(*from_ms as i64),
            resumed_at: ts(*until_ms as i64),
            duration_ms: until_ms.saturating_sub(*from_ms) as i64,
            charged: *charged,
            clock,
            measured_by: measured.map_or(pb::OutageMeasure::Unspecified, measure_pb) as i32,
        }),
        EventKind::GameEnded {
            outcome,
            reason,
            note: text,
        } => Kind::GameFinished(pb::GameFinished {
            result: outcome_pb(*outcome),
            reason: reason_pb(*reason),
            explanation: text.clone().unwrap_or_default(),
            clock,
            board_time_ms,
        }),
    };
    pb::GameEvent {
        seq: e.seq,
        server_time: ts(e.at.wall.timestamp_millis()),
        actor: Some(actor_pb(&e.actor)),
        rule: e.rule.clone().unwrap_or_default(),
        game_id: meta.id.clone(),
        monotonic_ms: e.at.mono_ms as i64,
        cursor: String::new(),
        description: words.line,
        comment: words.comment.unwrap_or_default(),
        drawing,
        kind: Some(kind),
    }
}

fn measure_pb(m: OutageMeasure) -> pb::OutageMeasure {
    match m {
        OutageMeasure::BootClock => pb::OutageMeasure::BootClock,
        OutageMeasure::DatabaseClock => pb::OutageMeasure::DatabaseClock,
        OutageMeasure::WallClock => pb::OutageMeasure::WallClock,
        OutageMeasure::LowerBound => pb::OutageMeasure::LowerBound,
        OutageMeasure::LastEvent => pb::OutageMeasure::LastEvent,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every variant goes to the proto value named after it (`VARIANT_` and its name in
    /// capitals, the proto's convention) and back, and those are all the proto's values.
    #[test]
    fn every_variant_maps_to_the_proto_value_of_its_name_and_back() {
        for v in Variant::ALL {
            let p = variant_pb(v);
            assert_eq!(
                p.as_str_name(),
                format!("VARIANT_{}", v.name().to_ascii_uppercase()),
                "{v:?}"
            );
            assert_eq!(variant(p as i32), Ok(v));
        }
        let named = (0..64)
            .filter(|&n| pb::Variant::try_from(n).is_ok_and(|p| p != pb::Variant::Unspecified))
            .count();
        assert_eq!(named, Variant::ALL.len());
        assert!(variant(pb::Variant::Unspecified as i32).is_err());
    }

    /// A drawing made from the variant's blank board is the position square by square
    /// as `notation::drawing` places, colours and labels it, its pieces, and the move's
    /// squares marked; a later drawing of the same variant keeps nothing of an earlier
    /// one's marks.
    #[test]
    fn ru_1_1_a_drawing_is_its_position_square_by_square_in_every_variant() {
        for v in Variant::ALL {
            let pos = Position::start(v);
            let geo = v.geometry();
            let mirrored = v.rules().mirrored;
            let n = |i: usize| geo.number(geo.order[i], mirrored);
            let path = [n(0), n(geo.order.len() / 2), n(geo.order.len() - 1)];
            for marked in [true, false, true] {
                let last_move: &[u32] = if marked { &path } else { &[] };
                let d = drawing_pb(&pos, last_move);
                assert_eq!(
                    (d.columns, d.rows),
                    (u32::from(geo.width), u32::from(geo.height))
                );
                assert_eq!(
                    (d.files.clone(), d.ranks.clone()),
                    drawing::edges(v),
                    "{v:?}"
                );
                assert_eq!(d.title, drawing::title(v));
                assert_eq!(d.turn, side_pb(pos.turn()));
                assert_eq!(d.squares.len(), geo.order.len());
                for (square, &sq) in d.squares.iter().zip(&geo.order) {
                    let (x, y) = drawing::place(sq, v);
                    let piece = pos.piece_at(sq);
                    let want = pb::DrawnSquare {
                        x: u32::from(x),
                        y: u32::from(y),
                        dark: drawing::is_dark(sq, v),
                        label: drawing::label(sq, v).map_or_else(String::new, |n| n.to_string()),
                        piece: piece.map_or(0, |(c, _)| side_pb(c)),
                        king: piece.is_some_and(|(_, k)| k),
                        beneath: pos.beneath(sq).into_iter().map(side_pb).collect(),
                        last_move: drawing::part_in_move(last_move, geo.number(sq, mirrored))
                            .unwrap_or_default()
                            .to_owned(),
                    };
                    assert_eq!(*square, want, "{v:?} {sq:?} marked {marked}");
                }
                let marks = d.squares.iter().filter(|s| !s.last_move.is_empty()).count();
                assert_eq!(marks, if marked { 3 } else { 0 }, "{v:?}");
            }
        }
    }
}
