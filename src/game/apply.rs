//! The fold that rebuilds a session from its events: each recorded event applied to the
//! state, with what the judge knew right after it.

use std::sync::Arc;

use super::command::{BoardHealth, Ruling};
use super::error::ReplayError;
use super::event::{EventKind, GameEvent, MoveSource};
use super::note::{self, EventNote};
use super::session::{
    BoardStatus, Claim, GameResult, Hand, MoveRecord, Offer, Outstanding, Session, Touch,
    WarningRecord,
};
use crate::clock::ClockOp;
use crate::notation::fen::parse_fen;
use crate::rules::{Color, Game, Square};

impl Session {
    /// Applies one recorded event.
    ///
    /// # Errors
    /// [`ReplayError`] if the event does not follow or does not fit the state.
    pub fn apply(&mut self, e: &GameEvent) -> Result<(), ReplayError> {
        self.apply_noted(e).map(drop)
    }

    /// Applies recorded events that follow this session's last one, each noted as the
    /// judge noted it when it was decided: a move whose press came in the same command
    /// carries the clocks after the press (see [`note::push`]). The events must start
    /// at a command's first (a log is read by whole commands).
    ///
    /// # Errors
    /// As [`Session::apply`], for the first event that does not apply; those before it
    /// stay applied.
    pub fn apply_all_noted(&mut self, events: &[GameEvent]) -> Result<Vec<EventNote>, ReplayError> {
        let mut notes = Vec::with_capacity(events.len());
        for (i, e) in events.iter().enumerate() {
            let n = self.apply_noted(e)?;
            note::push(&mut notes, &events[..i], e, n);
        }
        Ok(notes)
    }

    /// Applies one recorded event and says what the judge knew right after it.
    ///
    /// # Errors
    /// As [`Session::apply`]; nothing is changed then.
    pub fn apply_noted(&mut self, e: &GameEvent) -> Result<EventNote, ReplayError> {
        let mut extra = EventNote::default();
        match &e.kind {
            EventKind::MovePlayed { .. } => {
                let spent = match self.clock.as_ref() {
                    Some(c) => c.move_elapsed(e.at.mono_ms),
                    None => e.at.mono_ms.saturating_sub(self.turn_since_ms),
                };
                extra.time_spent_ms = Some(spent);
                extra.move_number = self.move_number(self.moves.len());
            }
            EventKind::ClaimDecided { .. } => {
                extra.refers_to = self.claim.as_ref().map(|c| c.seq);
                extra.side = self.claim.as_ref().map(|c| c.by);
            }
            EventKind::IrregularityResolved {
                irregularity_seq, ..
            } => {
                extra.refers_to =
                    irregularity_seq.or_else(|| self.irregularities.last().map(|i| i.seq));
                extra.resolved = irregularity_seq.and_then(|seq| {
                    self.irregularities
                        .iter()
                        .find(|i| i.seq == seq)
                        .map(|i| i.kind)
                });
            }
            EventKind::DrawOfferAnswered { .. } => extra.refers_to = self.offer.map(|o| o.seq),
            // Whose piece it is, as the board stood when it was touched.
            EventKind::PieceTouched { square, .. } => {
                extra.side = self.square(*square).ok().and_then(|sq| {
                    [Color::White, Color::Black].into_iter().find(|&c| {
                        let side = match c {
                            Color::White => self.physical.white,
                            Color::Black => self.physical.black,
                        };
                        side & sq.bit() != 0
                    })
                });
            }
            _ => {}
        }
        self.apply_inner(e, extra.time_spent_ms.unwrap_or(0))?;
        let base = self.note_now(e.at.mono_ms);
        if let EventKind::Irregularity { .. } = &e.kind {
            extra.official_fen = Some(self.official_fen().to_string());
        }
        if let EventKind::Warning { side, .. } = &e.kind {
            extra.count = self.warnings.iter().filter(|w| w.side == *side).count() as u32;
        }
        if let (
            EventKind::ClockChanged {
                op: ClockOp::Settle { .. },
                ..
            },
            Some(c),
        ) = (&e.kind, self.clock.as_ref())
        {
            // A settle that let a flag fall: the note names the side (a `FlagFell`).
            extra.side = c.flag(e.at.mono_ms).map(|f| f.side);
        }
        if let (EventKind::MovePlayed { .. }, Some(m)) = (&e.kind, self.moves.last_mut()) {
            m.white_ms = base.clock.map(|c| c.white_ms);
            m.black_ms = base.clock.map(|c| c.black_ms);
        }
        Ok(EventNote {
            plies: base.plies,
            clock: base.clock,
            ..extra
        })
    }

    fn apply_inner(&mut self, e: &GameEvent, spent_ms: u64) -> Result<(), ReplayError> {
        let bad = |message: String| ReplayError {
            seq: e.seq,
            message,
        };
        if e.seq != self.seq + 1 {
            return Err(bad(format!("expected seq {}", self.seq + 1)));
        }
        if e.at.mono_ms < self.last_ms {
            return Err(bad("time goes back".into()));
        }
        let now = e.at.mono_ms;
        let v = self.variant();
        match &e.kind {
            EventKind::GameCreated { .. } => return Err(bad("a second GameCreated".into())),
            EventKind::GameStarted => {
                self.started = true;
                self.started_ms = Some(now);
                self.turn_since_ms = now;
                self.stamps.started = Some(e.at.wall);
                let turn = self.position().turn();
                if let Some(c) = self.clock.as_mut() {
                    c.start(turn, now).map_err(|e| bad(e.to_string()))?;
                }
            }
            EventKind::MovePlayed {
                side,
                notation,
                path,
                captured,
                source,
                fen_after,
            } => {
                let mv = self
                    .move_by_path(path)
                    .ok_or_else(|| bad(format!("move {notation} is not legal")))?;
                let before = *self.position();
                let on_board = self.physical.white | self.physical.black;
                self.game.play(&mv).map_err(|e| bad(e.to_string()))?;
                let fen_after: Arc<str> = Arc::from(fen_after.as_str());
                self.fens.official = Some((*self.position(), fen_after.clone()));
                self.moves.push(MoveRecord {
                    side: *side,
                    notation: Arc::from(notation.as_str()),
                    at_ms: now,
                    clock_ms: None,
                    seq: e.seq,
                    path: Arc::from(path.as_slice()),
                    captured: Arc::from(captured.as_slice()),
                    fen_after: fen_after.clone(),
                    spent_ms,
                    white_ms: None,
                    black_ms: None,
                });
                self.turn_since_ms = now;
                self.awaiting_press = self.clock.as_ref().map(|_| *side);
                self.touch = Touch {
                    immovable: self.touch.immovable,
                    ..Touch::default()
                };
                self.hand = None;
                self.time_called = None;
                self.physical = self.position().to_setup();
                self.pending_removal.clear();
                if *source == MoveSource::Board {
                    // The captured pieces are still on the board until they are lifted;
                    // one already lifted (a capture stopped early, then finished, RU
                    // 1.5.5) is not lifted again.
                    for sq in mv.captured().filter(|sq| on_board & sq.bit() != 0) {
                        let (color, king) =
                            before.piece_at(sq).ok_or_else(|| bad("no victim".into()))?;
                        *self.physical.pieces_mut(color) |= sq.bit();
                        if king {
                            self.physical.kings |= sq.bit();
                        }
                        self.pending_removal.push(sq);
                    }
                }
                if let Some(o) = self.offer.as_mut()
                    && o.by == *side
                {
                    o.postponed = false;
                }
            }
            EventKind::ClockPressed { side, .. } => {
                if let Some(c) = self.clock.as_mut() {
                    c.press(*side, now).map_err(|e| bad(e.to_string()))?;
                    let r = c.reading(now);
                    if let Some(m) = self.moves.last_mut() {
                        m.clock_ms = Some(r.remaining(*side));
                        m.white_ms = Some(r.remaining(Color::White));
                        m.black_ms = Some(r.remaining(Color::Black));
                    }
                }
                self.awaiting_press = None;
            }
            EventKind::ClockChanged { op, .. } => {
                let c = self
                    .clock
                    .as_mut()
                    .ok_or_else(|| bad("untimed game".into()))?;
                c.apply(*op).map_err(|e| bad(e.to_string()))?;
            }
            EventKind::TimeCalled { side } => self.time_called = Some(*side),
            EventKind::PieceTouched {
                square,
                binding,
                immovable,
            } => {
                let sq = self.square(*square).map_err(bad)?;
                if *binding {
                    self.touch.bound = Some(sq);
                }
                if *immovable {
                    self.touch.immovable[self.position().turn().index()] += 1;
                }
            }
            EventKind::PieceLifted { square } => {
                let sq = self.square(*square).map_err(bad)?;
                let (color, king) = self
                    .physical_piece(sq)
                    .ok_or_else(|| bad(format!("no piece on {square}")))?;
                self.remove_physical(sq);
                if let Some(i) = self.pending_removal.iter().position(|&s| s == sq) {
                    self.pending_removal.remove(i);
                } else {
                    // A capture stopped early, taken up again from where it stopped: the
                    // hand carries on from the capture's first square (RU 1.5.5).
                    let resumed = self.resumed_capture(sq, color);
                    self.hand = Some(match resumed {
                        Some(from) => Hand {
                            from,
                            color,
                            king,
                            placements: vec![sq],
                        },
                        None => Hand {
                            from: sq,
                            color,
                            king,
                            placements: Vec::new(),
                        },
                    });
                }
            }
            EventKind::PiecePlaced { square } => {
                let sq = self.square(*square).map_err(bad)?;
                let hand = self
                    .hand
                    .as_mut()
                    .ok_or_else(|| bad("nothing in hand".into()))?;
                if hand.placements.last() != Some(&sq) {
                    hand.placements.push(sq);
                }
            }
            EventKind::PieceReleased { square } => {
                let sq = self.square(*square).map_err(bad)?;
                let hand = self
                    .hand
                    .take()
                    .ok_or_else(|| bad("nothing in hand".into()))?;
                *self.physical.pieces_mut(hand.color) |= sq.bit();
                if hand.king {
                    self.physical.kings |= sq.bit();
                }
                // The hand left the piece: an adjustment announced ends here (RU 1.4.9);
                // the next touch binds (RU 1.4.7) unless "I adjust" is said again.
                self.touch.adjusting = None;
            }
            EventKind::AdjustAnnounced { side } => self.touch.adjusting = Some(*side),
            // A record for the arbiter: the board's flood changes nothing in the game.
            EventKind::BoardFlooded { .. } => {}
            EventKind::BoardHealthChanged {
                board_id, health, ..
            } => {
                self.board = Some(BoardStatus {
                    board_id: board_id.clone(),
                    health: *health,
                    since: e.at.wall,
                });
            }
            EventKind::RemovalComplete { .. } => self.pending_removal.clear(),
            EventKind::BoardSnapshot {
                white,
                black,
                kings,
                ..
            } => {
                // The board as it says it stands: the judge's picture follows it.
                let bits = |list: &[u32]| self.bits(list).map_err(bad);
                let (w, b) = (bits(white)?, bits(black)?);
                let k = match kings {
                    Some(k) => bits(k)?,
                    None => self.position().kings() & (w | b),
                };
                self.physical.white = w;
                self.physical.black = b;
                self.physical.kings = k;
                self.hand = None;
                let occupied = w | b;
                self.pending_removal.retain(|sq| occupied & sq.bit() != 0);
            }
            EventKind::DrawOffered { side, timing } => {
                if self.offer_barred == Some(!*side) {
                    self.offer_barred = None;
                }
                self.offer = Some(Offer {
                    by: *side,
                    timing: *timing,
                    postponed: false,
                    ply: self.game.moves().len(),
                    seq: e.seq,
                });
            }
            EventKind::DrawOfferAnswered { response, .. } => {
                use super::command::OfferResponse;
                let offer = self.offer.ok_or_else(|| bad("no offer".into()))?;
                match response {
                    OfferResponse::Accept => self.offer = None,
                    OfferResponse::Decline => {
                        self.offer = None;
                        self.offer_barred = Some(offer.by);
                    }
                    OfferResponse::Postpone => {
                        if let Some(o) = self.offer.as_mut() {
                            o.postponed = true;
                        }
                    }
                }
            }
            EventKind::ClaimMade {
                side,
                kind,
                written_move,
                correct,
            } => {
                self.claim = Some(Claim {
                    by: *side,
                    kind: *kind,
                    written_move: written_move.clone(),
                    correct: *correct,
                    seq: e.seq,
                })
            }
            EventKind::ClaimDecided { .. } => self.claim = None,
            EventKind::Irregularity {
                side,
                kind,
                retake_with,
                squares,
                ..
            } => {
                self.irregularities.push(Outstanding {
                    side: *side,
                    kind: *kind,
                    seq: e.seq,
                    rule: e.rule.clone(),
                    squares: squares.clone(),
                });
                if let Some(n) = retake_with {
                    self.touch.bound = Some(self.square(*n).map_err(bad)?);
                }
            }
            EventKind::IrregularityResolved {
                ruling,
                fen,
                irregularity_seq: None,
                ..
            } => {
                // Written while one irregularity at most was outstanding: it resolved
                // them all, and the board was taken to show the official position.
                self.irregularities.clear();
                if *ruling == Some(Ruling::Stands) {
                    let pos = parse_fen(fen, v).map_err(|e| bad(e.to_string()))?;
                    self.game = Game::new(pos, self.settings.edition);
                    self.touch.bound = None;
                    self.awaiting_press = self.clock.as_ref().map(|_| !pos.turn());
                }
                self.physical = self.position().to_setup();
                self.hand = None;
                self.pending_removal.clear();
            }
            EventKind::IrregularityResolved {
                ruling,
                fen,
                irregularity_seq: Some(seq),
                ..
            } => {
                let at = self
                    .irregularities
                    .iter()
                    .position(|i| i.seq == *seq)
                    .ok_or_else(|| bad(format!("no outstanding irregularity {seq}")))?;
                let out = self.irregularities.remove(at);
                match ruling {
                    // A capture stopped early, finished on the board (RU 1.5.5): its move
                    // follows and takes the picture from the board as it stands, so that
                    // captured pieces lifted meanwhile are not to be lifted again.
                    None if !self.occupancy_matches() => {}
                    // The board put back: it shows the official position.
                    None => {
                        self.physical = self.position().to_setup();
                        self.hand = None;
                        self.pending_removal.clear();
                    }
                    // What the board shows becomes the official position (FMJD 5.4): the
                    // offender's move when it moved on its turn, whose press is then
                    // due; no press is made for anyone.
                    Some(Ruling::Stands) if out.kind.on_board() => {
                        let pos = parse_fen(fen, v).map_err(|e| bad(e.to_string()))?;
                        let clock_side = self.clock_side();
                        // Captured pieces still on the board are off the standing
                        // position but not off the board: they stay there, still to be
                        // lifted, as the capture's removal goes on (RU 1.5.12-1.5.13).
                        let left: Vec<(Square, Color, bool)> = self
                            .pending_removal
                            .iter()
                            .filter_map(|&sq| self.physical_piece(sq).map(|(c, k)| (sq, c, k)))
                            .collect();
                        self.game = Game::new(pos, self.settings.edition);
                        self.touch.bound = None;
                        self.awaiting_press = self
                            .clock
                            .as_ref()
                            .and_then(|_| (clock_side == !pos.turn()).then_some(clock_side));
                        self.physical = pos.to_setup();
                        // A piece in hand stands where it was lifted but is still in
                        // hand: off the board until the board releases it (a put-back
                        // there, RU 1.4.6).
                        if let Some(hand) = self.hand.take() {
                            self.remove_physical(hand.from);
                            self.hand = Some(Hand {
                                placements: Vec::new(),
                                ..hand
                            });
                        }
                        self.pending_removal.clear();
                        for (sq, color, king) in left {
                            *self.physical.pieces_mut(color) |= sq.bit();
                            if king {
                                self.physical.kings |= sq.bit();
                            }
                            self.pending_removal.push(sq);
                        }
                        // What else was on the board is part of what stands.
                        self.irregularities.retain(|i| !i.kind.on_board());
                    }
                    // Corrected: the official position stays; the board is put back to
                    // it (a `BoardOutOfStep` follows). A clock irregularity ruled either
                    // way changes nothing but the list.
                    Some(_) => {}
                }
            }
            EventKind::BoardOutOfStep {
                white,
                black,
                kings,
                ..
            } => {
                let bits = |list: &[u32]| self.bits(list).map_err(bad);
                let (w, b, k) = (bits(white)?, bits(black)?, bits(kings)?);
                self.physical.white = w;
                self.physical.black = b;
                self.physical.kings = k;
                self.behind = true;
            }
            EventKind::BoardInStep => {
                self.behind = false;
                self.physical = self.position().to_setup();
                self.hand = None;
                self.pending_removal.clear();
            }
            EventKind::Warning { side, reason } => self.warnings.push(WarningRecord {
                side: *side,
                reason: reason.clone(),
                rule: e.rule.clone(),
                at_ms: now,
                seq: e.seq,
            }),
            EventKind::DrawConditionReached => {
                self.referred.push(e.rule.clone().unwrap_or_default());
            }
            EventKind::FortyMoveCountStarted { side } => self.game.start_forty_move_count(*side),
            EventKind::MarkedAbsent { side } => self.absent[side.index()] = true,
            EventKind::PositionSet { fen, .. } => {
                let pos = parse_fen(fen, v).map_err(|e| bad(e.to_string()))?;
                self.game = Game::new(pos, self.settings.edition);
                self.physical = pos.to_setup();
                self.hand = None;
                self.pending_removal.clear();
                self.awaiting_press = None;
                self.touch.bound = None;
                self.irregularities.clear();
                self.behind = false;
                self.referred.clear();
            }
            EventKind::Outage {
                from_ms,
                until_ms,
                charged,
                ..
            } => {
                // The service was down: no board stream outlived it.
                if let Some(b) = self.board.as_mut()
                    && b.health != BoardHealth::Disconnected
                {
                    b.health = BoardHealth::Disconnected;
                    let gap = i64::try_from(until_ms.saturating_sub(*from_ms)).unwrap_or(0);
                    b.since = e.at.wall - chrono::Duration::milliseconds(gap);
                }
                if let Some(c) = self.clock.as_mut()
                    && !*charged
                    && matches!(c.phase(*from_ms), crate::clock::Phase::Running(_))
                {
                    c.apply(ClockOp::Pause { now: *from_ms })
                        .map_err(|e| bad(e.to_string()))?;
                    c.apply(ClockOp::Resume { now: *until_ms })
                        .map_err(|e| bad(e.to_string()))?;
                }
            }
            EventKind::GameEnded {
                outcome, reason, ..
            } => {
                self.stamps.finished = Some(e.at.wall);
                self.result = Some(GameResult {
                    outcome: *outcome,
                    reason: *reason,
                    rule: e.rule.clone(),
                });
                self.offer = None;
                self.claim = None;
                if let Some(c) = self.clock.as_mut()
                    && matches!(
                        c.phase(now),
                        crate::clock::Phase::Running(_) | crate::clock::Phase::Paused(_)
                    )
                {
                    c.stop(now).map_err(|e| bad(e.to_string()))?;
                }
            }
        }
        if matches!(e.actor, super::command::Actor::Board(_)) {
            self.tracked = true;
        }
        if let Some(side) = acting_side(e) {
            self.acted[side.index()] = true;
        }
        self.seq = e.seq;
        self.last_ms = now;
        Ok(())
    }

    /// The squares of a list of PDN numbers, as a bitboard.
    fn bits(&self, list: &[u32]) -> Result<u64, String> {
        list.iter()
            .try_fold(0u64, |acc, &n| Ok(acc | self.square(n)?.bit()))
    }

    /// A capture stopped early (an outstanding `CaptureIncomplete`) is taken up again
    /// when the capturer's piece is lifted from the square where it stopped: the capture's
    /// first square, where the hand carries on from.
    pub(super) fn resumed_capture(&self, sq: Square, color: Color) -> Option<Square> {
        let v = self.variant();
        let out = self
            .irregularities
            .iter()
            .rev()
            .find(|i| i.kind == super::event::IrregularityKind::CaptureIncomplete)?;
        let (&from, &stop) = (out.squares.first()?, out.squares.get(1)?);
        (out.side == color && crate::notation::square::square_number(sq, v) == stop)
            .then(|| self.square(from).ok())
            .flatten()
    }

    fn remove_physical(&mut self, sq: Square) {
        self.physical.white &= !sq.bit();
        self.physical.black &= !sq.bit();
        self.physical.kings &= !sq.bit();
    }
}

/// The side an event shows at the board (T 5's presence): a move, a press, an offer, an
/// answer, a claim, or anything its player did through their app.
fn acting_side(e: &GameEvent) -> Option<Color> {
    match &e.kind {
        EventKind::MovePlayed { side, .. }
        | EventKind::ClockPressed { side, .. }
        | EventKind::DrawOffered { side, .. }
        | EventKind::DrawOfferAnswered { side, .. }
        | EventKind::ClaimMade { side, .. } => Some(*side),
        _ => match e.actor {
            super::command::Actor::Player(side) => Some(side),
            _ => None,
        },
    }
}
