//! The arbiter session, one test per procedure of RULES.md, driven by scripted commands
//! with explicit instants. Every test also checks that the recorded events replay to an
//! equal session.

use draughts_arbiter::game::{
    Actor, ArbiterAction, BoardInput, BoardPiece, ClaimKind, Command, Declared, EndReason,
    EventKind, FollowCause, GameError, GameEvent, GameSettings, Given, IrregularityKind,
    MoveCountDraws, Now, Occupancy, OfferResponse, OfferTiming, OutageMeasure, Outcome,
    RepetitionMode, Ruling, Session,
};
use draughts_arbiter::rules::{Color, Variant};

use Color::{Black, White};

struct Table {
    s: Session,
    log: Vec<GameEvent>,
    t: u64,
}

impl Table {
    fn new(
        variant: Variant,
        tc: Option<&str>,
        fen: Option<&str>,
        f: impl FnOnce(&mut GameSettings),
    ) -> Table {
        let mut settings = GameSettings::new(variant);
        settings.time_control = tc.map(|t| t.parse().expect("time control"));
        f(&mut settings);
        let (s, first) =
            Session::create(settings, fen, Actor::Arbiter("a".into()), Now::from_mono(0))
                .expect("create");
        let mut table = Table {
            s,
            log: vec![first],
            t: 0,
        };
        table.ok(arb(), Command::Start);
        table
    }

    fn russian() -> Table {
        Table::new(Variant::Russian, Some("10m"), None, |_| {})
    }

    fn at(&mut self, ms: u64) -> &mut Table {
        self.t = ms;
        let ev = self.s.tick(Now::from_mono(ms));
        self.log.extend(ev);
        self
    }

    fn try_cmd(&mut self, actor: Actor, cmd: Command) -> Result<Vec<GameEvent>, GameError> {
        let before = self.s.clone();
        let r = self.s.handle(&actor, cmd, Now::from_mono(self.t));
        match &r {
            Ok(ev) => self.log.extend(ev.iter().cloned()),
            Err(_) => assert_eq!(self.s, before, "a refused command changed the session"),
        }
        r
    }

    fn ok(&mut self, actor: Actor, cmd: Command) -> Vec<GameEvent> {
        let r = self.try_cmd(actor, cmd.clone());
        r.unwrap_or_else(|e| panic!("{cmd:?} refused: {e}"))
    }

    fn err(&mut self, actor: Actor, cmd: Command) -> GameError {
        let r = self.try_cmd(actor, cmd.clone());
        r.expect_err("refused")
    }

    fn mv(&mut self, side: Color, notation: &str) -> Vec<GameEvent> {
        self.ok(
            Actor::Player(side),
            Command::SubmitMove {
                side,
                notation: notation.into(),
                offer_draw: false,
            },
        )
    }

    fn board(&mut self, input: BoardInput) -> Vec<GameEvent> {
        self.ok(Actor::Board("b1".into()), Command::Board(input))
    }

    fn fen(&self) -> String {
        self.s.view(self.t).fen
    }

    fn replays(&self) {
        let rebuilt = Session::replay(&self.log).expect("log replays");
        assert_eq!(rebuilt, self.s, "replayed session differs");
        for (i, e) in self.log.iter().enumerate() {
            assert_eq!(e.seq, i as u64 + 1, "seq is dense");
        }
    }
}

impl Drop for Table {
    fn drop(&mut self) {
        if !std::thread::panicking() {
            self.replays();
        }
    }
}

fn arb() -> Actor {
    Actor::Arbiter("a".into())
}

fn kinds(ev: &[GameEvent]) -> Vec<&EventKind> {
    ev.iter().map(|e| &e.kind).collect()
}

fn rules(ev: &[GameEvent]) -> Vec<String> {
    ev.iter().filter_map(|e| e.rule.clone()).collect()
}

fn result(t: &Table) -> (Outcome, EndReason, Option<String>) {
    let r = t.s.result().expect("game over");
    (r.outcome, r.reason, r.rule.clone())
}

// ---- Moves and the clock ----------------------------------------------------------

#[test]
fn ru_1_4_1_players_alternate_and_a_wrong_turn_changes_nothing() {
    let mut t = Table::russian();
    let e = t.err(
        Actor::Player(Black),
        Command::SubmitMove {
            side: Black,
            notation: "b6-a5".into(),
            offer_draw: false,
        },
    );
    assert_eq!(e, GameError::NotYourTurn { side: Black });
    assert_eq!(e.rule(), Some("RU 1.4.1"));
    t.at(1_000);
    let ev = t.mv(White, "c3-d4");
    assert!(matches!(
        ev[0].kind,
        EventKind::MovePlayed { side: White, .. }
    ));
    assert!(matches!(
        ev[1].kind,
        EventKind::ClockPressed {
            side: White,
            white_ms: 599_000,
            black_ms: 600_000,
            with_move: true,
        }
    ));
    assert_eq!(ev[0].rule.as_deref(), Some("RU 1.4.6"));
}

#[test]
fn ru_1_5_3_an_illegal_move_is_refused_naming_the_rule() {
    let mut t = Table::russian();
    t.mv(White, "c3-d4");
    t.mv(Black, "b6-c5");
    let e = t.err(
        Actor::Player(White),
        Command::SubmitMove {
            side: White,
            notation: "a3-b4".into(),
            offer_draw: false,
        },
    );
    assert_eq!(e.rule(), Some("RU 1.5.3"), "{e}");
    t.mv(White, "d4:b6");
}

#[test]
fn clock_press_is_separate_when_moves_do_not_press() {
    let mut t = Table::new(Variant::Russian, Some("5m"), None, |s| {
        s.press_on_move = false
    });
    t.at(2_000);
    t.mv(White, "c3-d4");
    assert_eq!(t.s.awaiting_press(), Some(White));
    // Black may not move before White presses; White may not move twice.
    t.err(
        Actor::Player(Black),
        Command::SubmitMove {
            side: Black,
            notation: "b6-a5".into(),
            offer_draw: false,
        },
    );
    t.at(3_000);
    t.ok(Actor::Player(White), Command::PressClock { side: White });
    let view = t.s.view(3_000);
    assert_eq!(view.white_ms, Some(297_000));
    assert_eq!(view.moves[0].clock_ms, Some(297_000));
    t.err(Actor::Player(White), Command::PressClock { side: White });
}

// ---- Electronic boards -------------------------------------------------------------

#[test]
fn ru_1_4_6_a_quiet_move_is_made_at_release() {
    let mut t = Table::russian();
    t.board(BoardInput::Lift(22));
    t.board(BoardInput::Place(18));
    assert_eq!(t.s.game().moves().len(), 0, "still held: no move yet");
    let ev = t.board(BoardInput::Release(18));
    assert!(matches!(&ev[0].kind, EventKind::MovePlayed { notation, .. } if notation == "c3-d4"));
    t.board(BoardInput::ClockPress(White));
    assert_eq!(t.s.clock_side(), Black);
}

#[test]
fn ru_1_4_8_while_held_the_piece_may_go_to_another_square() {
    let mut t = Table::russian();
    t.board(BoardInput::Lift(22));
    t.board(BoardInput::Place(18));
    t.board(BoardInput::Place(17));
    let ev = t.board(BoardInput::Release(17));
    assert!(matches!(&ev[0].kind, EventKind::MovePlayed { notation, .. } if notation == "c3-b4"));
}

#[test]
fn ru_1_4_7_the_first_touched_movable_piece_must_be_moved() {
    let mut t = Table::russian();
    let ev = t.board(BoardInput::Touch(22));
    assert!(matches!(
        ev[0].kind,
        EventKind::PieceTouched { binding: true, .. }
    ));
    assert_eq!(ev[0].rule.as_deref(), Some("RU 1.4.7"));
    // Moving a3-b4 instead is an irregularity; the official position stays.
    let before = t.fen();
    t.board(BoardInput::Lift(21));
    let ev = t.board(BoardInput::Release(17));
    assert!(matches!(
        ev[1].kind,
        EventKind::Irregularity {
            kind: IrregularityKind::TouchMove,
            ..
        }
    ));
    assert_eq!(ev[1].rule.as_deref(), Some("RU 1.4.7"));
    assert_eq!(t.fen(), before);
    // A digital move of another piece is refused as well.
    let e = t.err(
        Actor::Player(White),
        Command::SubmitMove {
            side: White,
            notation: "g3-h4".into(),
            offer_draw: false,
        },
    );
    assert!(e.to_string().contains("irregularity"), "{e}");
    // Put back: the board matches again; then the touched piece moves.
    t.board(BoardInput::Lift(17));
    let ev = t.board(BoardInput::Release(21));
    assert!(matches!(
        ev.last().map(|e| &e.kind),
        Some(EventKind::IrregularityResolved { ruling: None, .. })
    ));
    t.board(BoardInput::Lift(22));
    let ev = t.board(BoardInput::Release(18));
    assert!(matches!(&ev[0].kind, EventKind::MovePlayed { notation, .. } if notation == "c3-d4"));
}

#[test]
fn ru_1_4_7_touching_a_piece_with_no_legal_move_has_no_consequence() {
    let mut t = Table::russian();
    let ev = t.board(BoardInput::Touch(29)); // a1 cannot move
    // Said (issue 38: `immovable` in every variant), with nothing following from it.
    assert!(matches!(
        ev[0].kind,
        EventKind::PieceTouched {
            binding: false,
            immovable: true,
            ..
        }
    ));
    assert_eq!(ev.len(), 1);
    assert!(t.s.warnings().is_empty());
    t.mv(White, "g3-h4");
}

#[test]
fn ru_1_4_9_adjusting_only_on_ones_turn_and_then_touches_do_not_bind() {
    let mut t = Table::russian();
    let e = t.err(
        Actor::Board("b1".into()),
        Command::Board(BoardInput::AdjustAnnounced(Black)),
    );
    assert_eq!(e.rule(), Some("RU 1.4.9"));
    t.board(BoardInput::AdjustAnnounced(White));
    let ev = t.board(BoardInput::Touch(22));
    assert!(matches!(
        ev[0].kind,
        EventKind::PieceTouched { binding: false, .. }
    ));
    t.mv(White, "g3-h4");
}

#[test]
fn en_touching_an_immovable_piece_is_warned_then_loses() {
    let mut t = Table::new(Variant::English, Some("30m"), None, |_| {});
    // Black moves first in English; square 1 (b8) cannot move at the start.
    let ev = t.board(BoardInput::Touch(1));
    assert!(rules(&ev).contains(&"EN touch rule".to_string()));
    assert_eq!(t.s.warnings().len(), 1);
    t.board(BoardInput::Touch(2));
    assert_eq!(
        result(&t),
        (
            Outcome::WhiteWins,
            EndReason::TouchPenalty,
            Some("EN touch rule".into())
        )
    );
}

#[test]
fn ru_1_5_10_king_capture_shown_square_by_square_and_1_5_13_removal_in_order() {
    // The seed's e1 king: e1:c3:e5:g3:e1 takes d2, d4, f4, f2.
    let fen = "W:WKe1:Ba3,b4,d2,d4,f2,f4";
    let mut t = Table::new(Variant::Russian, Some("10m"), Some(fen), |_| {});
    // Squares: e1=31 c3=22 e5=15 g3=24 d2=26 d4=18 f4=19 f2=27.
    t.board(BoardInput::Lift(31));
    for sq in [22, 15, 24] {
        t.board(BoardInput::Place(sq));
    }
    let ev = t.board(BoardInput::Release(31));
    assert!(
        matches!(&ev[0].kind, EventKind::MovePlayed { notation, captured, .. }
            if notation == "e1:c3:e5:g3:e1" && captured == &vec![26, 18, 19, 27]),
        "{:?}",
        kinds(&ev)
    );
    assert_eq!(ev[0].rule.as_deref(), Some("RU 1.5.11"));
    // Pressing before the captured pieces are off the board is an irregularity.
    let ev = t.board(BoardInput::ClockPress(White));
    assert!(matches!(
        ev[0].kind,
        EventKind::Irregularity {
            kind: IrregularityKind::PressBeforeRemoval,
            ..
        }
    ));
    assert_eq!(ev[0].rule.as_deref(), Some("RU 1.5.13"));
    assert_eq!(t.s.clock_side(), White, "the clocks did not switch");
    assert_eq!(t.s.pending_removal(), vec![26, 18, 19, 27]);
    for sq in [26, 18, 19] {
        let ev = t.board(BoardInput::Lift(sq));
        assert_eq!(ev.len(), 1);
    }
    let ev = t.board(BoardInput::Lift(27));
    assert!(matches!(
        ev[1].kind,
        EventKind::RemovalComplete { side: White }
    ));
    t.board(BoardInput::ClockPress(White));
    assert_eq!(t.s.clock_side(), Black);
}

#[test]
fn ru_1_5_12_removal_out_of_capture_order_is_an_irregularity() {
    let mut t = Table::new(
        Variant::Russian,
        Some("10m"),
        Some("W:Wc3:Bd4,f6,h6"),
        |_| {},
    );
    // c3:e5:g7 takes d4 (18) then f6 (11).
    t.board(BoardInput::Lift(22));
    t.board(BoardInput::Place(15));
    t.board(BoardInput::Release(8));
    let ev = t.board(BoardInput::Lift(11));
    assert!(matches!(
        ev[1].kind,
        EventKind::Irregularity {
            kind: IrregularityKind::WrongRemoval,
            ..
        }
    ));
    assert_eq!(ev[1].rule.as_deref(), Some("RU 1.5.12"));
}

#[test]
fn fmjd_4_4_captured_pieces_may_be_removed_in_either_order() {
    let mut t = Table::new(
        Variant::International,
        Some("10m"),
        Some("W:W12:B8,9,35"),
        |_| {},
    );
    t.board(BoardInput::Lift(12));
    t.board(BoardInput::Place(3));
    t.board(BoardInput::Release(14));
    t.board(BoardInput::Lift(9));
    let ev = t.board(BoardInput::Lift(8));
    assert!(
        matches!(ev[1].kind, EventKind::RemovalComplete { .. }),
        "{:?}",
        kinds(&ev)
    );
}

#[test]
fn ru_1_5_15_promotion_during_a_capture_shown_on_the_board() {
    let mut t = Table::new(Variant::Russian, Some("10m"), Some("W:Wb6:Bc7,e7"), |_| {});
    // b6=9, d8=2, c7=6, e7=7, h4=20
    t.board(BoardInput::Lift(9));
    t.board(BoardInput::Place(2));
    let ev = t.board(BoardInput::Release(20));
    assert!(
        matches!(&ev[0].kind, EventKind::MovePlayed { notation, .. } if notation == "b6:d8:h4")
    );
    assert_eq!(t.s.position().kings_of(White).count_ones(), 1);
}

#[test]
fn an_illegal_move_on_the_board_is_retaken_with_the_same_piece() {
    let mut t = Table::russian();
    t.board(BoardInput::Lift(22));
    let ev = t.board(BoardInput::Release(13)); // c3 to a5: not a move
    assert!(matches!(
        ev[1].kind,
        EventKind::Irregularity {
            kind: IrregularityKind::IllegalMove,
            retake_with: Some(22),
            ..
        }
    ));
    // The opponent lets it stand? Not here: the arbiter orders a correction.
    t.ok(
        arb(),
        Command::Arbiter(
            ArbiterAction::RuleOnIrregularity {
                ruling: Ruling::Corrected,
                irregularity_seq: None,
            },
            Given::default(),
        ),
    );
    let e = t.err(
        Actor::Player(White),
        Command::SubmitMove {
            side: White,
            notation: "g3-h4".into(),
            offer_draw: false,
        },
    );
    assert_eq!(e.rule(), Some("RU 1.4.7"), "{e}");
    t.mv(White, "c3-b4");
}

#[test]
fn fmjd_5_4_an_irregular_move_may_stand() {
    let mut t = Table::russian();
    t.board(BoardInput::Lift(22));
    t.board(BoardInput::Release(13));
    t.ok(
        arb(),
        Command::Arbiter(
            ArbiterAction::RuleOnIrregularity {
                ruling: Ruling::Stands,
                irregularity_seq: None,
            },
            Given::default(),
        ),
    );
    assert_eq!(t.fen(), "B:W13,21,23-32:B1-12");
    // The judge presses for nobody: White's move stands, White's clock runs until White
    // presses.
    assert_eq!(t.s.clock_side(), White);
    assert!(
        !kinds(&t.log)
            .iter()
            .any(|k| matches!(k, EventKind::ClockPressed { .. }))
    );
    t.board(BoardInput::ClockPress(White));
    assert_eq!(t.s.clock_side(), Black);
}

#[test]
fn snapshot_boards_recognise_a_move_and_wait_on_intermediate_states() {
    let mut t = Table::russian();
    let start: Vec<u32> = (21..=32).collect();
    let black: Vec<u32> = (1..=12).collect();
    // c3 in the air: an intermediate state, nothing happens.
    let lifted: Vec<u32> = start.iter().copied().filter(|&s| s != 22).collect();
    let ev = t.board(BoardInput::Snapshot(Occupancy {
        white: lifted.clone(),
        black: black.clone(),
        kings: None,
    }));
    // Recorded, with exactly what differs; nothing else happens.
    assert_eq!(ev.len(), 1);
    assert!(
        matches!(&ev[0].kind, EventKind::BoardSnapshot { missing, extra, wrong_colour, wrong_kind, .. }
        if missing == &vec![22] && extra.is_empty() && wrong_colour.is_empty() && wrong_kind.is_empty())
    );
    let mut moved = lifted;
    moved.push(18);
    let ev = t.board(BoardInput::Snapshot(Occupancy {
        white: moved,
        black,
        kings: None,
    }));
    assert!(matches!(&ev[0].kind, EventKind::MovePlayed { notation, .. } if notation == "c3-d4"));
    // The reading after the move: nothing differs.
    assert!(
        matches!(&ev[1].kind, EventKind::BoardSnapshot { missing, extra, .. }
        if missing.is_empty() && extra.is_empty())
    );
}

/// A board out of step gets back in with a snapshot: after an illegal move on the board
/// its picture is wrong; a reading with a stray piece says what differs (a piece of the
/// wrong colour, an extra one, a missing one) and resolves nothing; the official
/// position read back resolves the irregularity, and the board plays on.
#[test]
fn fmjd_5_4_a_snapshot_brings_a_board_back_in_step() {
    let mut t = Table::russian();
    t.board(BoardInput::Lift(22));
    let ev = t.board(BoardInput::Release(13)); // c3 to a5: not a move
    assert!(matches!(ev[1].kind, EventKind::Irregularity { .. }));
    let white: Vec<u32> = (21..=32).collect();
    let black: Vec<u32> = (1..=12).collect();
    // Not yet right: 22 still empty, a white piece on 13, 12 shows a white piece.
    let mut w: Vec<u32> = white.iter().copied().filter(|&s| s != 22).collect();
    w.extend([13, 12]);
    let b: Vec<u32> = black.iter().copied().filter(|&s| s != 12).collect();
    let ev = t.board(BoardInput::Snapshot(Occupancy {
        white: w,
        black: b,
        kings: None,
    }));
    assert_eq!(ev.len(), 1, "{ev:?}");
    assert!(
        matches!(&ev[0].kind, EventKind::BoardSnapshot { missing, extra, wrong_colour, .. }
        if missing == &vec![22] && extra == &vec![13] && wrong_colour == &vec![12])
    );
    assert_eq!(t.s.view(t.t).irregularities.len(), 1);
    // The official position: in step again.
    let ev = t.board(BoardInput::Snapshot(Occupancy {
        white,
        black,
        kings: Some(Vec::new()),
    }));
    assert!(
        matches!(&ev[0].kind, EventKind::BoardSnapshot { missing, extra, wrong_colour, wrong_kind, .. }
        if missing.is_empty() && extra.is_empty() && wrong_colour.is_empty() && wrong_kind.is_empty())
    );
    assert!(matches!(
        ev[1].kind,
        EventKind::IrregularityResolved { ruling: None, .. }
    ));
    // The board plays on from its new picture (the retake rule binds the piece on 22).
    t.board(BoardInput::Lift(22));
    let ev = t.board(BoardInput::Release(18));
    assert!(
        matches!(&ev[0].kind, EventKind::MovePlayed { notation, .. } if notation == "c3-d4"),
        "{ev:?}"
    );
}

// ---- The board's irregularities and the judge's picture of it (issue 38) ------------

/// White's c3 takes d4 and f6 (c3:e5:g7: 22, 15, 8; captured 18, 11), h6 (12) stands by.
fn capture_table() -> Table {
    Table::new(
        Variant::Russian,
        Some("10m"),
        Some("W:Wc3,a1:Bd4,f6,h6"),
        |_| {},
    )
}

fn rule_on(seq: u64, ruling: Ruling) -> Command {
    Command::Arbiter(
        ArbiterAction::RuleOnIrregularity {
            ruling,
            irregularity_seq: Some(seq),
        },
        Given::default(),
    )
}

fn flagged(ev: &[GameEvent]) -> Vec<(u64, IrregularityKind)> {
    ev.iter()
        .filter_map(|e| match &e.kind {
            EventKind::Irregularity { kind, .. } => Some((e.seq, *kind)),
            _ => None,
        })
        .collect()
}

fn pending(t: &Table) -> Vec<IrregularityKind> {
    t.s.irregularities().iter().map(|i| i.kind).collect()
}

/// The normal "move, then press" with an illegal move: both are flagged and both stay
/// pending; `corrected` on the move tells the board what to put back, the board's
/// steps bring it back in step, the piece is retaken (RU), and the press is ruled on by
/// itself, changing nothing on the clocks.
#[test]
fn fmjd_5_4_an_illegal_move_and_its_press_are_two_irregularities_each_ruled() {
    let mut t = Table::russian();
    t.board(BoardInput::Lift(22));
    let ev = t.board(BoardInput::Release(13)); // c3 to a5: not a move
    let illegal = flagged(&ev);
    assert_eq!(illegal.len(), 1);
    assert_eq!(illegal[0].1, IrregularityKind::IllegalMove);
    // The text names squares as Russian moves are written.
    assert!(
        matches!(&ev[1].kind, EventKind::Irregularity { detail, .. } if detail.starts_with("c3 to a5")),
        "{:?}",
        ev[1].kind
    );
    let ev = t.board(BoardInput::ClockPress(White));
    let press = flagged(&ev);
    assert_eq!(press[0].1, IrregularityKind::PressWithoutMove);
    assert_eq!(
        pending(&t),
        vec![
            IrregularityKind::IllegalMove,
            IrregularityKind::PressWithoutMove
        ]
    );
    // Without a seq, with two outstanding: which one?
    let e = t.err(
        arb(),
        Command::Arbiter(
            ArbiterAction::RuleOnIrregularity {
                ruling: Ruling::Corrected,
                irregularity_seq: None,
            },
            Given::default(),
        ),
    );
    assert!(e.to_string().contains("irregularity_seq: required"), "{e}");
    let ev = t.ok(arb(), rule_on(illegal[0].0, Ruling::Corrected));
    assert!(matches!(
        &ev[0].kind,
        EventKind::IrregularityResolved { ruling: Some(Ruling::Corrected), irregularity_seq: Some(s), .. }
            if *s == illegal[0].0
    ));
    assert!(
        matches!(&ev[1].kind, EventKind::BoardOutOfStep { cause: FollowCause::Corrected, to_clear, to_fill, .. }
            if to_clear == &vec![13] && to_fill == &vec![BoardPiece { square: 22, side: White, king: false }]),
        "{:?}",
        ev[1].kind
    );
    let view = t.s.board_view();
    assert!(!view.in_step);
    assert_eq!(view.to_clear, vec![13]);
    assert!(view.white.contains(&13) && !view.white.contains(&22));
    // The board follows: a5 off, c3 back (lifts and releases as steps, not moves).
    t.board(BoardInput::Lift(13));
    let ev = t.board(BoardInput::Release(22));
    assert!(matches!(
        ev.last().map(|e| &e.kind),
        Some(EventKind::BoardInStep)
    ));
    assert!(t.s.board_view().in_step);
    // The press is still there; the retake binds c3 (RU).
    assert_eq!(pending(&t), vec![IrregularityKind::PressWithoutMove]);
    t.board(BoardInput::Lift(21));
    let ev = t.board(BoardInput::Release(17));
    assert_eq!(flagged(&ev)[0].1, IrregularityKind::TouchMove);
    t.board(BoardInput::Lift(17));
    t.board(BoardInput::Release(21));
    t.board(BoardInput::Lift(22));
    let ev = t.board(BoardInput::Release(18));
    assert!(matches!(&ev[0].kind, EventKind::MovePlayed { notation, .. } if notation == "c3-d4"));
    // The press ruled on its own: nothing happens to the clocks.
    let clock_side = t.s.clock_side();
    let ev = t.ok(arb(), rule_on(press[0].0, Ruling::Stands));
    assert_eq!(ev.len(), 1);
    assert_eq!(t.s.clock_side(), clock_side);
    assert!(pending(&t).is_empty());
    t.board(BoardInput::ClockPress(White));
    assert_eq!(t.s.clock_side(), Black);
}

/// `stands` works for every kind, and the judge presses for nobody: a move on one's turn
/// stands as a move whose press is due; out of turn, the side to move stays.
#[test]
fn fmjd_5_4_stands_for_every_kind_and_presses_for_nobody() {
    // Out of turn: Black moves f6-e5 while White is to move.
    let mut t = Table::russian();
    t.board(BoardInput::Lift(11));
    let ev = t.board(BoardInput::Release(15));
    let (seq, kind) = flagged(&ev)[0];
    assert_eq!(kind, IrregularityKind::OutOfTurn);
    t.ok(arb(), rule_on(seq, Ruling::Stands));
    assert_eq!(t.s.position().turn(), White);
    assert_eq!(t.s.clock_side(), White);
    assert!(t.s.board_view().in_step);
    t.board(BoardInput::Lift(22));
    let ev = t.board(BoardInput::Release(18));
    assert!(matches!(&ev[0].kind, EventKind::MovePlayed { notation, .. } if notation == "c3-d4"));

    // Touch-move: c3 touched, a3-b4 played; it stands, White's press is due.
    let mut t = Table::russian();
    t.board(BoardInput::Touch(22));
    t.board(BoardInput::Lift(21));
    let ev = t.board(BoardInput::Release(17));
    let (seq, kind) = flagged(&ev)[0];
    assert_eq!(kind, IrregularityKind::TouchMove);
    t.ok(arb(), rule_on(seq, Ruling::Stands));
    assert_eq!(t.s.position().turn(), Black);
    assert_eq!(t.s.awaiting_press(), Some(White));
    t.board(BoardInput::ClockPress(White));
    assert_eq!(t.s.clock_side(), Black);

    // A wrong removal stands: the piece taken off wrongly stays off, with the captured ones.
    let mut t = capture_table();
    t.board(BoardInput::Lift(22));
    t.board(BoardInput::Place(15));
    t.board(BoardInput::Release(8));
    let ev = t.board(BoardInput::Lift(12)); // h6: not captured
    let (seq, kind) = flagged(&ev)[0];
    assert_eq!(kind, IrregularityKind::WrongRemoval);
    t.ok(arb(), rule_on(seq, Ruling::Stands));
    // The piece in hand goes back where it came from; the captured ones are off.
    assert_eq!(t.fen(), "B:W8,29:B12");
    assert_eq!(t.s.awaiting_press(), Some(White));

    // A capture stopped early stands where it stopped.
    let mut t = capture_table();
    t.board(BoardInput::Lift(22));
    let ev = t.board(BoardInput::Release(15));
    let (seq, kind) = flagged(&ev)[0];
    assert_eq!(kind, IrregularityKind::CaptureIncomplete);
    t.ok(arb(), rule_on(seq, Ruling::Stands));
    assert_eq!(t.s.position().turn(), Black);
    assert!(t.s.board_view().in_step);

    // A press before the removal, ruled either way: the clocks stay as they are.
    let mut t = capture_table();
    t.board(BoardInput::Lift(22));
    t.board(BoardInput::Place(15));
    t.board(BoardInput::Release(8));
    let ev = t.board(BoardInput::ClockPress(White));
    let (seq, kind) = flagged(&ev)[0];
    assert_eq!(kind, IrregularityKind::PressBeforeRemoval);
    let fen = t.fen();
    t.ok(arb(), rule_on(seq, Ruling::Stands));
    assert_eq!(t.fen(), fen);
    assert_eq!(t.s.clock_side(), White);
    assert_eq!(t.s.pending_removal(), vec![18, 11]);
    t.board(BoardInput::Lift(18));
    t.board(BoardInput::Lift(11));
    t.board(BoardInput::ClockPress(White));
    assert_eq!(t.s.clock_side(), Black);
}

/// A capture stopped early is finished on the board: the piece taken up again where it
/// stopped and released at the capture's end plays the capture (RU 1.5.5); or put back
/// on its first square, the irregularity is cleared.
#[test]
fn ru_1_5_5_a_capture_stopped_early_is_finished_on_the_board() {
    let mut t = capture_table();
    t.board(BoardInput::Lift(22));
    let ev = t.board(BoardInput::Release(15)); // c3:e5, short of g7
    assert_eq!(flagged(&ev)[0].1, IrregularityKind::CaptureIncomplete);
    let fen = t.fen();
    t.board(BoardInput::Lift(15));
    let ev = t.board(BoardInput::Release(8));
    assert!(
        matches!(&ev[0].kind, EventKind::IrregularityResolved { ruling: None, reason: Some(r), .. }
            if r.contains("finished")),
        "{:?}",
        kinds(&ev)
    );
    assert_eq!(ev[0].rule.as_deref(), Some("RU 1.5.5"));
    assert!(
        matches!(&ev[1].kind, EventKind::MovePlayed { notation, .. } if notation == "c3:e5:g7")
    );
    assert_ne!(t.fen(), fen);
    assert_eq!(t.s.pending_removal(), vec![18, 11]);
    t.board(BoardInput::Lift(18));
    let ev = t.board(BoardInput::Lift(11));
    assert!(matches!(
        ev[1].kind,
        EventKind::RemovalComplete { side: White }
    ));

    // Put back instead.
    let mut t = capture_table();
    t.board(BoardInput::Lift(22));
    t.board(BoardInput::Release(15));
    t.board(BoardInput::Lift(15));
    let ev = t.board(BoardInput::Release(22));
    assert!(matches!(
        ev.last().map(|e| &e.kind),
        Some(EventKind::IrregularityResolved { ruling: None, .. })
    ));
    assert!(pending(&t).is_empty());
    t.board(BoardInput::Lift(22));
    t.board(BoardInput::Place(15));
    let ev = t.board(BoardInput::Release(8));
    assert!(
        matches!(&ev[0].kind, EventKind::MovePlayed { notation, .. } if notation == "c3:e5:g7")
    );
}

/// A wrong removal is cleared when the board is right again: the wrongly lifted piece
/// back and the captured ones off, not before, and not by an unrelated lift.
#[test]
fn ru_1_5_12_a_wrong_removal_clears_when_the_board_is_right() {
    let mut t = capture_table();
    t.board(BoardInput::Lift(22));
    t.board(BoardInput::Place(15));
    t.board(BoardInput::Release(8));
    let ev = t.board(BoardInput::Lift(12)); // h6 was not captured
    assert_eq!(flagged(&ev)[0].1, IrregularityKind::WrongRemoval);
    let ev = t.board(BoardInput::Release(12));
    assert_eq!(ev.len(), 1, "{:?}", kinds(&ev));
    assert_eq!(pending(&t), vec![IrregularityKind::WrongRemoval]);
    t.board(BoardInput::Lift(18));
    assert_eq!(pending(&t), vec![IrregularityKind::WrongRemoval]);
    let ev = t.board(BoardInput::Lift(11));
    assert!(
        kinds(&ev)
            .iter()
            .any(|k| matches!(k, EventKind::IrregularityResolved { ruling: None, .. })),
        "{:?}",
        kinds(&ev)
    );
    assert!(pending(&t).is_empty());
    t.board(BoardInput::ClockPress(White));
    assert_eq!(t.s.clock_side(), Black);
}

/// A removal out of capture order that stands: the capture stands as made, and the
/// captured pieces still on the board are still to be lifted (they are off the standing
/// position, not off the board); the board takes them off as the removal goes on and the
/// capturer presses.
#[test]
fn ru_1_5_13_a_wrong_removal_that_stands_leaves_the_captured_pieces_to_lift() {
    let mut t = capture_table();
    t.board(BoardInput::Lift(22));
    t.board(BoardInput::Place(15));
    t.board(BoardInput::Release(8));
    let ev = t.board(BoardInput::Lift(11)); // f6 before d4: out of capture order
    let (seq, kind) = flagged(&ev)[0];
    assert_eq!(kind, IrregularityKind::WrongRemoval);
    t.ok(arb(), rule_on(seq, Ruling::Stands));
    assert_eq!(t.fen(), "B:W8,29:B12");
    let view = t.s.board_view();
    assert!(view.in_step);
    assert_eq!(view.pending_removal, vec![18]);
    assert!(view.black.contains(&18), "{view:?}");
    // The board lifts d4: a removal, nothing flagged, and the removal is complete.
    let ev = t.board(BoardInput::Lift(18));
    assert!(flagged(&ev).is_empty(), "{:?}", kinds(&ev));
    assert!(
        matches!(
            ev.last().map(|e| &e.kind),
            Some(EventKind::RemovalComplete { side: White })
        ),
        "{:?}",
        kinds(&ev)
    );
    assert!(t.s.board_view().pending_removal.is_empty());
    let ev = t.board(BoardInput::ClockPress(White));
    assert!(flagged(&ev).is_empty(), "{:?}", kinds(&ev));
    assert_eq!(t.s.clock_side(), Black);
}

/// The other side's move from an app reaches the board as a target: the board copies it
/// with plain steps, in any order (the captured piece first here), and is in step; its
/// next lifts and releases are moves again.
#[test]
fn ru_1_4_6_a_move_made_in_an_app_is_copied_onto_the_board_in_any_order() {
    let mut t = Table::new(
        Variant::Russian,
        Some("10m"),
        Some("W:Wc3,e3:Bb6,f6"),
        |_| {},
    );
    // White on the board: c3-d4 (22-18), pressed.
    t.board(BoardInput::Lift(22));
    t.board(BoardInput::Release(18));
    t.board(BoardInput::ClockPress(White));
    // Black in the app: f6-e5 (11-15).
    let ev = t.mv(Black, "f6-e5");
    let out = ev
        .iter()
        .find_map(|e| match &e.kind {
            EventKind::BoardOutOfStep {
                cause,
                to_clear,
                to_fill,
                ..
            } => Some((*cause, to_clear.clone(), to_fill.clone())),
            _ => None,
        })
        .expect("the board is told");
    assert_eq!(out.0, FollowCause::MoveElsewhere);
    assert_eq!(out.1, vec![11]);
    assert_eq!(
        out.2,
        vec![BoardPiece {
            square: 15,
            side: Black,
            king: false
        }]
    );
    // White's capture d4:f6 (18x15 to 11) is made in the app too, before the board caught up.
    let ev = t.mv(White, "d4:f6");
    assert!(
        kinds(&ev)
            .iter()
            .any(|k| matches!(k, EventKind::BoardOutOfStep { .. }))
    );
    let view = t.s.board_view();
    // d4's white piece off, and f6's black one (the target has White's there).
    assert_eq!(view.to_clear, vec![11, 18]);
    assert_eq!(
        view.to_fill,
        vec![BoardPiece {
            square: 11,
            side: White,
            king: false
        }]
    );
    // The board: d4 (white) off, then onto f6 — which still holds Black's piece: take
    // that off first (it is where the target has White's).
    let e = t.err(
        Actor::Board("b1".into()),
        Command::Board(BoardInput::Release(11)),
    );
    assert!(e.to_string().contains("board out of step"), "{e}");
    t.board(BoardInput::Lift(11)); // the black piece that moved in the app and was captured
    t.board(BoardInput::Lift(18)); // the white piece: the black one is now off the board
    let ev = t.board(BoardInput::Release(11));
    assert!(
        matches!(ev.last().map(|e| &e.kind), Some(EventKind::BoardInStep)),
        "{:?}",
        kinds(&ev)
    );
    assert!(t.s.board_view().in_step);
    // Black's move on the board again.
    t.board(BoardInput::Lift(9));
    let ev = t.board(BoardInput::Release(13));
    assert!(matches!(&ev[0].kind, EventKind::MovePlayed { notation, .. } if notation == "b6-a5"));
}

/// A wrong copy is flagged at once and cleared when the board shows the position; an
/// arbiter's position is copied the same way, here with one snapshot.
#[test]
fn ru_1_4_6_a_wrong_copy_is_flagged_and_a_set_position_is_copied() {
    let mut t = Table::russian();
    t.board(BoardInput::Lift(22));
    t.board(BoardInput::Release(18));
    t.board(BoardInput::ClockPress(White));
    t.mv(Black, "f6-g5"); // 11-16
    t.board(BoardInput::Lift(11));
    let ev = t.board(BoardInput::Release(15)); // e5, not g5
    let (_, kind) = flagged(&ev)[0];
    assert_eq!(kind, IrregularityKind::WrongCopy);
    assert_eq!(ev.last().map(|e| e.rule.as_deref()), Some(Some("RU 1.4.6")));
    t.board(BoardInput::Lift(15));
    let ev = t.board(BoardInput::Release(16));
    let k = kinds(&ev);
    assert!(
        matches!(k[1], EventKind::IrregularityResolved { ruling: None, .. }),
        "{k:?}"
    );
    assert!(matches!(k[2], EventKind::BoardInStep), "{k:?}");

    // The arbiter's position, read back by a snapshot board.
    let ev = t.ok(
        arb(),
        Command::Arbiter(
            ArbiterAction::SetPosition {
                fen: "W:Wc3,e3:Bb6".into(),
            },
            Given::default(),
        ),
    );
    assert!(matches!(
        ev[1].kind,
        EventKind::BoardOutOfStep {
            cause: FollowCause::PositionSet,
            ..
        }
    ));
    let ev = t.board(BoardInput::Snapshot(Occupancy {
        white: vec![22, 23],
        black: vec![9],
        kings: None,
    }));
    assert!(
        matches!(ev.last().map(|e| &e.kind), Some(EventKind::BoardInStep)),
        "{:?}",
        kinds(&ev)
    );
    t.board(BoardInput::Lift(22));
    let ev = t.board(BoardInput::Release(17));
    assert!(matches!(&ev[0].kind, EventKind::MovePlayed { notation, .. } if notation == "c3-b4"));
}

/// A scanning board's reading that shows a move no legal move explains is flagged as an
/// illegal move (a capture whose captured pieces are still coming off is not).
#[test]
fn fmjd_5_4_a_snapshot_showing_an_illegal_move_is_flagged() {
    let mut t = Table::russian();
    let black: Vec<u32> = (1..=12).collect();
    let mut white: Vec<u32> = (21..=32).filter(|&s| s != 22).collect();
    white.push(13); // c3 to a5
    let ev = t.board(BoardInput::Snapshot(Occupancy {
        white,
        black: black.clone(),
        kings: None,
    }));
    assert_eq!(flagged(&ev)[0].1, IrregularityKind::IllegalMove);
    // Back to the start position: cleared.
    let ev = t.board(BoardInput::Snapshot(Occupancy {
        white: (21..=32).collect(),
        black,
        kings: None,
    }));
    assert!(matches!(
        ev.last().map(|e| &e.kind),
        Some(EventKind::IrregularityResolved { ruling: None, .. })
    ));
    // A capture with one of two captured pieces still on the board: waiting, not flagged.
    let mut t = capture_table();
    let ev = t.board(BoardInput::Snapshot(Occupancy {
        white: vec![8, 29],
        black: vec![11, 12],
        kings: None,
    }));
    assert!(flagged(&ev).is_empty(), "{:?}", kinds(&ev));
    let ev = t.board(BoardInput::Snapshot(Occupancy {
        white: vec![8, 29],
        black: vec![12],
        kings: None,
    }));
    assert!(
        matches!(&ev[0].kind, EventKind::MovePlayed { notation, .. } if notation == "c3:e5:g7")
    );
}

/// Logs written while one irregularity at most was outstanding (no `irregularity_seq` on
/// the resolution) still replay.
#[test]
fn logs_from_before_the_irregularity_list_replay() {
    let mut t = Table::russian();
    t.board(BoardInput::Lift(22));
    t.board(BoardInput::Release(13));
    t.ok(
        arb(),
        Command::Arbiter(
            ArbiterAction::RuleOnIrregularity {
                ruling: Ruling::Stands,
                irregularity_seq: None,
            },
            Given::default(),
        ),
    );
    t.board(BoardInput::ClockPress(White));
    let old: Vec<GameEvent> = t
        .log
        .iter()
        .map(|e| {
            let mut json = serde_json::to_value(e).expect("json");
            let text = json.to_string();
            if text.contains("irregularity_seq") {
                strip(&mut json, "irregularity_seq");
            }
            serde_json::from_value(json).expect("reads")
        })
        .collect();
    assert!(old.iter().any(|e| matches!(
        e.kind,
        EventKind::IrregularityResolved {
            irregularity_seq: None,
            ..
        }
    )));
    let s = Session::replay(&old).expect("an old log replays");
    assert_eq!(s.position(), t.s.position());
    assert!(s.irregularities().is_empty());
}

fn strip(v: &mut serde_json::Value, key: &str) {
    match v {
        serde_json::Value::Object(m) => {
            m.remove(key);
            for x in m.values_mut() {
                strip(x, key);
            }
        }
        serde_json::Value::Array(a) => a.iter_mut().for_each(|x| strip(x, key)),
        _ => {}
    }
}

// ---- Draw offers --------------------------------------------------------------------

#[test]
fn ru_1_9_3_offer_with_the_move_then_accepted() {
    let mut t = Table::russian();
    let ev = t.ok(
        Actor::Player(White),
        Command::SubmitMove {
            side: White,
            notation: "c3-d4".into(),
            offer_draw: true,
        },
    );
    assert!(kinds(&ev).iter().any(|k| matches!(
        k,
        EventKind::DrawOffered {
            timing: OfferTiming::AfterOwnMove,
            ..
        }
    )));
    assert!(t.s.warnings().is_empty());
    t.ok(
        Actor::Player(Black),
        Command::RespondToOffer {
            side: Black,
            response: OfferResponse::Accept,
        },
    );
    assert_eq!(
        result(&t),
        (
            Outcome::Draw,
            EndReason::Agreement,
            Some("RU 1.9.1(a)".into())
        )
    );
}

#[test]
fn ru_1_9_3_a_move_declines_the_offer() {
    let mut t = Table::russian();
    t.ok(
        Actor::Player(White),
        Command::SubmitMove {
            side: White,
            notation: "c3-d4".into(),
            offer_draw: true,
        },
    );
    let ev = t.mv(Black, "b6-a5");
    assert!(matches!(
        ev[0].kind,
        EventKind::DrawOfferAnswered {
            by_move: true,
            response: OfferResponse::Decline,
            ..
        }
    ));
    assert!(t.s.offer().is_none());
}

#[test]
fn ru_1_9_4_offer_while_the_opponents_clock_runs_is_valid_but_warned() {
    let mut t = Table::russian();
    t.mv(White, "c3-d4");
    let ev = t.ok(Actor::Player(White), Command::OfferDraw { side: White });
    assert!(matches!(
        ev[0].kind,
        EventKind::DrawOffered {
            timing: OfferTiming::DuringOpponentsTurn,
            ..
        }
    ));
    assert!(matches!(ev[1].kind, EventKind::Warning { side: White, .. }));
    assert_eq!(ev[1].rule.as_deref(), Some("RU 1.9.4"));
    t.ok(
        Actor::Player(Black),
        Command::RespondToOffer {
            side: Black,
            response: OfferResponse::Accept,
        },
    );
    assert_eq!(result(&t).0, Outcome::Draw);
}

#[test]
fn ru_1_9_5_offer_before_ones_move_may_be_postponed_until_after_it() {
    let mut t = Table::russian();
    let ev = t.ok(Actor::Player(White), Command::OfferDraw { side: White });
    assert!(matches!(
        ev[0].kind,
        EventKind::DrawOffered {
            timing: OfferTiming::BeforeOwnMove,
            ..
        }
    ));
    assert_eq!(ev[0].rule.as_deref(), Some("RU 1.9.5"));
    t.ok(
        Actor::Player(Black),
        Command::RespondToOffer {
            side: Black,
            response: OfferResponse::Postpone,
        },
    );
    t.mv(White, "c3-d4");
    // After seeing the move Black must answer; postponing again is refused.
    let e = t.err(
        Actor::Player(Black),
        Command::RespondToOffer {
            side: Black,
            response: OfferResponse::Postpone,
        },
    );
    assert_eq!(e.rule(), Some("RU 1.9.5"));
    t.ok(
        Actor::Player(Black),
        Command::RespondToOffer {
            side: Black,
            response: OfferResponse::Accept,
        },
    );
    assert_eq!(result(&t).0, Outcome::Draw);
}

#[test]
fn ru_1_9_5_an_offer_during_the_opponents_turn_cannot_be_postponed() {
    let mut t = Table::russian();
    t.mv(White, "c3-d4");
    t.ok(Actor::Player(White), Command::OfferDraw { side: White });
    let e = t.err(
        Actor::Player(Black),
        Command::RespondToOffer {
            side: Black,
            response: OfferResponse::Postpone,
        },
    );
    assert_eq!(e.rule(), Some("RU 1.9.5"));
}

#[test]
fn ru_1_9_6_declined_offer_cannot_be_repeated_until_opponent_offers() {
    let mut t = Table::russian();
    t.ok(
        Actor::Player(White),
        Command::SubmitMove {
            side: White,
            notation: "c3-d4".into(),
            offer_draw: true,
        },
    );
    t.ok(
        Actor::Player(Black),
        Command::RespondToOffer {
            side: Black,
            response: OfferResponse::Decline,
        },
    );
    t.mv(Black, "b6-a5");
    let e = t.err(
        Actor::Player(White),
        Command::SubmitMove {
            side: White,
            notation: "b2-c3".into(),
            offer_draw: true,
        },
    );
    assert_eq!(e.rule(), Some("RU 1.9.6"));
    t.mv(White, "b2-c3");
    // Black uses its right to offer; White declines; now White may offer again.
    t.ok(
        Actor::Player(Black),
        Command::SubmitMove {
            side: Black,
            notation: "a7-b6".into(),
            offer_draw: true,
        },
    );
    t.ok(
        Actor::Player(White),
        Command::RespondToOffer {
            side: White,
            response: OfferResponse::Decline,
        },
    );
    t.ok(
        Actor::Player(White),
        Command::SubmitMove {
            side: White,
            notation: "g3-h4".into(),
            offer_draw: true,
        },
    );
}

#[test]
fn event_rule_no_offers_before_the_set_move() {
    let mut t = Table::new(Variant::Russian, Some("10m"), None, |s| {
        s.min_move_for_offer = 2
    });
    let e = t.err(Actor::Player(White), Command::OfferDraw { side: White });
    assert!(e.to_string().contains("before move 2"));
    t.mv(White, "c3-d4");
    t.mv(Black, "b6-a5");
    t.ok(Actor::Player(White), Command::OfferDraw { side: White });
}

// ---- Repetition claims ----------------------------------------------------------------

/// Kings shuffle: after `n` full cycles the start position has occurred n+1 times.
fn shuffle_table(f: impl FnOnce(&mut GameSettings)) -> Table {
    Table::new(
        Variant::Russian,
        Some("10m"),
        Some("W:WKc1,e3,g3,h2,f2:BKh8,b6,d6,c7"),
        f,
    )
}

fn cycle(t: &mut Table, n: usize) {
    for _ in 0..n {
        t.mv(White, "c1-d2");
        t.mv(Black, "h8-g7");
        t.mv(White, "d2-c1");
        t.mv(Black, "g7-h8");
    }
}

#[test]
fn ru_1_9_2_a_correct_repetition_claim_is_a_draw() {
    let mut t = shuffle_table(|_| {});
    cycle(&mut t, 2);
    // The position with White to move has now occurred three times.
    let ev = t.ok(
        Actor::Player(White),
        Command::ClaimDraw {
            side: White,
            kind: ClaimKind::Repetition,
            written_move: None,
        },
    );
    assert!(matches!(
        ev[0].kind,
        EventKind::ClaimMade { correct: true, .. }
    ));
    assert_eq!(
        result(&t),
        (
            Outcome::Draw,
            EndReason::Repetition,
            Some("RU 1.9.2".into())
        )
    );
}

#[test]
fn ru_1_9_2_a_claim_with_the_written_move_that_would_repeat() {
    let mut t = shuffle_table(|_| {});
    cycle(&mut t, 1);
    t.mv(White, "c1-d2");
    t.mv(Black, "h8-g7");
    t.mv(White, "d2-c1");
    // Black writes g7-h8, which would make the position occur a third time.
    let ev = t.ok(
        Actor::Player(Black),
        Command::ClaimDraw {
            side: Black,
            kind: ClaimKind::Repetition,
            written_move: Some("g7-h8".into()),
        },
    );
    assert!(
        matches!(&ev[0].kind, EventKind::ClaimMade { correct: true, written_move: Some(m), .. } if m == "g7-h8")
    );
    assert_eq!(result(&t).0, Outcome::Draw);
}

#[test]
fn ru_1_9_2_wrong_claim_plays_the_written_move() {
    let mut t = shuffle_table(|_| {});
    cycle(&mut t, 1);
    t.mv(White, "c1-d2");
    let ev = t.ok(
        Actor::Player(Black),
        Command::ClaimDraw {
            side: Black,
            kind: ClaimKind::Repetition,
            written_move: Some("h8-g7".into()),
        },
    );
    assert!(matches!(
        ev[0].kind,
        EventKind::ClaimMade { correct: false, .. }
    ));
    assert!(matches!(
        ev[1].kind,
        EventKind::ClaimDecided { upheld: false, .. }
    ));
    assert!(
        matches!(&ev[2].kind, EventKind::MovePlayed { notation, source: draughts_arbiter::game::MoveSource::WrittenClaim, .. } if notation == "h8-g7")
    );
    assert!(t.s.result().is_none());
    assert_eq!(t.s.position().turn(), White);
}

#[test]
fn ru_1_9_2_playing_the_repeating_move_loses_the_right_to_claim_it() {
    let mut t = Table::new(
        Variant::Russian,
        Some("10m"),
        Some("W:WKc1,e3,g3,h2,f2:BKh8,b6,d6,c7"),
        |s| s.press_on_move = false,
    );
    for (side, m) in [
        (White, "c1-d2"),
        (Black, "h8-g7"),
        (White, "d2-c1"),
        (Black, "g7-h8"),
        (White, "c1-d2"),
        (Black, "h8-g7"),
        (White, "d2-c1"),
    ] {
        t.mv(side, m);
        t.ok(Actor::Player(side), Command::PressClock { side });
    }
    // Black plays g7-h8 on the board (third occurrence) and only then claims.
    t.mv(Black, "g7-h8");
    let e = t.err(
        Actor::Player(Black),
        Command::ClaimDraw {
            side: Black,
            kind: ClaimKind::Repetition,
            written_move: None,
        },
    );
    assert_eq!(e.rule(), Some("RU 1.9.2"));
    assert!(e.to_string().contains("right to claim"));
    t.ok(Actor::Player(Black), Command::PressClock { side: Black });
    // White, whose turn it now is, may claim.
    t.ok(
        Actor::Player(White),
        Command::ClaimDraw {
            side: White,
            kind: ClaimKind::Repetition,
            written_move: None,
        },
    );
    assert_eq!(result(&t).0, Outcome::Draw);
}

#[test]
fn ru_1_9_2_the_claimants_clock_runs_until_the_arbiter_rules() {
    let mut t = shuffle_table(|s| s.claims_need_arbiter = true);
    cycle(&mut t, 2);
    t.at(10_000);
    t.ok(
        Actor::Player(White),
        Command::ClaimDraw {
            side: White,
            kind: ClaimKind::Repetition,
            written_move: None,
        },
    );
    assert!(t.s.claim().is_some());
    t.at(40_000);
    assert_eq!(t.s.view(40_000).white_ms, Some(560_000));
    t.ok(
        arb(),
        Command::Arbiter(
            ArbiterAction::RuleOnClaim {
                upheld: true,
                claim_seq: None,
            },
            Given::default(),
        ),
    );
    assert_eq!(result(&t).0, Outcome::Draw);
}

#[test]
fn ru_1_9_2_time_runs_out_during_the_check_correct_claim_draws() {
    let mut t = Table::new(
        Variant::Russian,
        Some("60s"),
        Some("W:WKc1,e3,g3,h2,f2:BKh8,b6,d6,c7"),
        |s| s.claims_need_arbiter = true,
    );
    cycle(&mut t, 2);
    t.ok(
        Actor::Player(White),
        Command::ClaimDraw {
            side: White,
            kind: ClaimKind::Repetition,
            written_move: None,
        },
    );
    t.at(60_000);
    assert_eq!(
        result(&t),
        (
            Outcome::Draw,
            EndReason::Repetition,
            Some("RU 1.9.2".into())
        )
    );
}

#[test]
fn ru_1_9_2_time_runs_out_during_the_check_incorrect_claim_loses() {
    let mut t = Table::new(
        Variant::Russian,
        Some("60s"),
        Some("W:WKc1,e3,g3,h2,f2:BKh8,b6,d6,c7"),
        |s| s.claims_need_arbiter = true,
    );
    cycle(&mut t, 1);
    t.ok(
        Actor::Player(White),
        Command::ClaimDraw {
            side: White,
            kind: ClaimKind::Repetition,
            written_move: None,
        },
    );
    t.at(60_000);
    assert_eq!(
        result(&t),
        (
            Outcome::BlackWins,
            EndReason::IncorrectClaimOnTime,
            Some("RU 1.9.2".into())
        )
    );
}

#[test]
fn automatic_repetition_mode_draws_at_the_third_occurrence() {
    let mut t = shuffle_table(|s| s.repetition = RepetitionMode::Automatic);
    cycle(&mut t, 2);
    assert_eq!(
        result(&t),
        (
            Outcome::Draw,
            EndReason::Repetition,
            Some("RU 1.9.1(g)".into())
        )
    );
}

// ---- Move-count draws -------------------------------------------------------------------

#[test]
fn ru_1_9_1_f_fifteen_king_moves_each_draws_automatically() {
    let mut t = shuffle_table(|_| {});
    // 15 moves each: 30 plies, i.e. 7 cycles and a half.
    cycle(&mut t, 7);
    t.mv(White, "c1-d2");
    assert!(t.s.result().is_none());
    t.mv(Black, "h8-g7");
    assert_eq!(
        result(&t),
        (
            Outcome::Draw,
            EndReason::MoveCount,
            Some("RU 1.9.1(f)".into())
        )
    );
}

#[test]
fn ru_1_9_1_f_referred_to_the_arbiter_when_so_set() {
    let mut t = shuffle_table(|s| s.move_count_draws = MoveCountDraws::Referred);
    cycle(&mut t, 7);
    t.mv(White, "c1-d2");
    let ev = t.mv(Black, "h8-g7");
    assert!(
        ev.iter().any(|e| e.kind == EventKind::DrawConditionReached
            && e.rule.as_deref() == Some("RU 1.9.1(f)"))
    );
    assert!(t.s.result().is_none());
    // Referred once, not at every move.
    let ev = t.mv(White, "d2-c1");
    assert!(!ev.iter().any(|e| e.kind == EventKind::DrawConditionReached));
    t.ok(
        Actor::Player(Black),
        Command::ClaimDraw {
            side: Black,
            kind: ClaimKind::MoveCount,
            written_move: None,
        },
    );
    assert_eq!(result(&t).1, EndReason::MoveCount);
}

// ---- Results ------------------------------------------------------------------------------

#[test]
fn ru_1_8_resignation_and_nothing_after_the_result_but_arbiter_corrections() {
    let mut t = Table::russian();
    t.ok(Actor::Player(White), Command::Resign { side: White });
    assert_eq!(
        result(&t),
        (
            Outcome::BlackWins,
            EndReason::Resignation,
            Some("RU 1.8".into())
        )
    );
    let e = t.err(
        Actor::Player(Black),
        Command::SubmitMove {
            side: Black,
            notation: "b6-a5".into(),
            offer_draw: false,
        },
    );
    assert_eq!(
        e,
        GameError::GameOver {
            rule: Some("RU 1.8".into())
        }
    );
    t.ok(
        arb(),
        Command::Arbiter(
            ArbiterAction::DeclareResult {
                outcome: Outcome::Draw,
                kind: Declared::Decision,
            },
            Given::reason("scoresheet error"),
        ),
    );
    assert_eq!(result(&t).1, EndReason::ArbiterDecision);
}

/// A command after the end names the rule that ended the game, in every variant: an
/// International resignation is FMJD's, not the Russian winning rule.
#[test]
fn a_finished_game_refuses_moves_citing_the_rule_that_ended_it() {
    let mut t = Table::new(Variant::International, Some("10m"), None, |_| {});
    t.ok(Actor::Player(White), Command::Resign { side: White });
    assert_eq!(result(&t).2.as_deref(), Some("FMJD resignation"));
    let e = t.err(
        Actor::Player(Black),
        Command::SubmitMove {
            side: Black,
            notation: "19-23".into(),
            offer_draw: false,
        },
    );
    assert_eq!(e.rule(), Some("FMJD resignation"));
    assert_eq!(
        e.to_string(),
        "the game is over (ended under FMJD resignation)"
    );
}

#[test]
fn ru_1_8_no_pieces_left_loses() {
    let mut t = Table::new(Variant::Russian, Some("10m"), Some("W:Wc3:Bd4"), |_| {});
    t.mv(White, "c3:e5");
    assert_eq!(
        result(&t),
        (
            Outcome::WhiteWins,
            EndReason::NoPieces,
            Some("RU 1.8".into())
        )
    );
}

#[test]
fn ru_1_8_blocked_side_loses() {
    // The black man on h4 can neither step to g3 nor take it (f2 is guarded).
    let mut t = Table::new(
        Variant::Russian,
        Some("10m"),
        Some("W:Wa1,f2,g3:Bh4"),
        |_| {},
    );
    t.mv(White, "a1-b2");
    assert_eq!(
        result(&t),
        (
            Outcome::WhiteWins,
            EndReason::NoMoves,
            Some("RU 1.8".into())
        )
    );
}

#[test]
fn ru_1_8_flag_fall_loses_at_the_exact_instant() {
    let mut t = Table::new(Variant::Russian, Some("60s"), None, |_| {});
    t.at(59_999);
    assert!(t.s.result().is_none());
    assert_eq!(t.s.next_deadline(), Some(60_000));
    t.at(60_000);
    assert_eq!(
        result(&t),
        (
            Outcome::BlackWins,
            EndReason::FlagFall,
            Some("RU 1.8".into())
        )
    );
}

#[test]
fn a_command_after_a_missed_deadline_asks_for_a_tick() {
    let mut t = Table::new(Variant::Russian, Some("60s"), None, |_| {});
    t.t = 70_000;
    let e = t.err(
        Actor::Player(White),
        Command::SubmitMove {
            side: White,
            notation: "c3-d4".into(),
            offer_draw: false,
        },
    );
    assert_eq!(e, GameError::TickFirst);
}

#[test]
fn en_time_rule_warns_then_forfeits() {
    let mut t = Table::new(
        Variant::English,
        Some("24h; move-limit 5m+1m"),
        None,
        |_| {},
    );
    let ev = {
        t.at(300_000);
        t.log.clone()
    };
    assert!(
        ev.iter()
            .any(|e| matches!(e.kind, EventKind::TimeCalled { side: Black }))
    );
    t.at(360_000);
    assert_eq!(
        result(&t),
        (
            Outcome::WhiteWins,
            EndReason::MoveLimit,
            Some("EN Time!".into())
        )
    );
}

// ---- Arbiter --------------------------------------------------------------------------------

#[test]
fn arbiter_pause_does_not_charge_and_penalty_takes_time() {
    let mut t = Table::russian();
    t.at(10_000);
    t.ok(
        arb(),
        Command::Arbiter(ArbiterAction::PauseClocks, Given::default()),
    );
    t.at(70_000);
    t.ok(
        arb(),
        Command::Arbiter(ArbiterAction::ResumeClocks, Given::default()),
    );
    assert_eq!(t.s.view(70_000).white_ms, Some(590_000));
    t.ok(
        arb(),
        Command::Arbiter(
            ArbiterAction::Penalty {
                side: White,
                amount_ms: 60_000,
            },
            Given::reason("phone"),
        ),
    );
    assert_eq!(t.s.view(70_000).white_ms, Some(530_000));
    t.ok(
        arb(),
        Command::Arbiter(
            ArbiterAction::Warn { side: Black },
            Given::reason("talking"),
        ),
    );
    assert_eq!(t.s.warnings().len(), 1);
}

#[test]
fn arbiter_sets_a_position_for_the_side_whose_clock_runs() {
    let mut t = Table::russian();
    let e = t.err(
        arb(),
        Command::Arbiter(
            ArbiterAction::SetPosition {
                fen: "B:W21-32:B1-12".into(),
            },
            Given::default(),
        ),
    );
    assert_eq!(e.rule(), Some("RU 1.4.1"));
    t.ok(
        arb(),
        Command::Arbiter(
            ArbiterAction::SetPosition {
                fen: "W:WKc1:Bh8".into(),
            },
            Given::default(),
        ),
    );
    assert_eq!(t.fen(), "W:WK30:B4");
    t.mv(White, "c1-d2");
}

/// The arbiter's override, logged with what they gave (RULES.md's preamble; issue #12
/// item 3): an arbiter's reason and rule are recorded as given, on
/// every action; a result by penalty names the rule broken.
#[test]
fn the_arbiters_reason_and_rule_are_recorded_as_given() {
    let mut t = Table::russian();
    t.at(1_000);
    let given = |reason: &str, rule: &str| Given {
        reason: Some(reason.into()),
        rule: Some(rule.into()),
    };
    let ev = t.ok(
        arb(),
        Command::Arbiter(
            ArbiterAction::PauseClocks,
            given("the light failed", "Open 2026 regulations 4.2"),
        ),
    );
    assert!(
        matches!(&ev[0].kind, EventKind::ClockChanged { reason: Some(r), .. } if r == "the light failed")
    );
    assert_eq!(ev[0].rule.as_deref(), Some("Open 2026 regulations 4.2"));
    let ev = t.ok(
        arb(),
        Command::Arbiter(ArbiterAction::ResumeClocks, Given::reason("light back")),
    );
    assert!(
        matches!(&ev[0].kind, EventKind::ClockChanged { reason: Some(r), .. } if r == "light back")
    );
    let ev = t.ok(
        arb(),
        Command::Arbiter(
            ArbiterAction::Warn { side: White },
            given("  talking to a spectator  ", "RU 1.9.4"),
        ),
    );
    assert!(
        matches!(&ev[0].kind, EventKind::Warning { reason, .. } if reason == "talking to a spectator")
    );
    assert_eq!(ev[0].rule.as_deref(), Some("RU 1.9.4"));
    assert_eq!(
        t.s.view(1_000).warnings[0].rule.as_deref(),
        Some("RU 1.9.4")
    );
    // A result by penalty needs the rule broken.
    let e = t.err(
        arb(),
        Command::Arbiter(
            ArbiterAction::DeclareResult {
                outcome: Outcome::WhiteWins,
                kind: Declared::Penalty,
            },
            Given::reason("third warning"),
        ),
    );
    assert!(
        e.to_string().starts_with("rule: a result by penalty"),
        "{e}"
    );
    let ev = t.ok(
        arb(),
        Command::Arbiter(
            ArbiterAction::DeclareResult {
                outcome: Outcome::WhiteWins,
                kind: Declared::Penalty,
            },
            given("third warning", "RU 1.9.4"),
        ),
    );
    assert_eq!(ev[0].rule.as_deref(), Some("RU 1.9.4"));
    assert!(
        matches!(&ev[0].kind, EventKind::GameEnded { note: Some(n), .. } if n == "third warning")
    );
    assert_eq!(
        result(&t),
        (
            Outcome::WhiteWins,
            EndReason::Penalty,
            Some("RU 1.9.4".into())
        )
    );
}

/// Free text within limits: blank is none, too long or with control characters is
/// refused and changes nothing.
#[test]
fn the_arbiters_words_have_limits() {
    let mut t = Table::russian();
    let e = t.err(
        arb(),
        Command::Arbiter(
            ArbiterAction::Warn { side: Black },
            Given::reason("x".repeat(1001)),
        ),
    );
    assert_eq!(e.to_string(), "reason: at most 1000 bytes, got 1001");
    let e = t.err(
        arb(),
        Command::Arbiter(
            ArbiterAction::Warn { side: Black },
            Given {
                reason: Some("noise".into()),
                rule: Some("RU\u{7}1".into()),
            },
        ),
    );
    assert_eq!(e.to_string(), "rule: no control characters but line breaks");
    let e = t.err(
        arb(),
        Command::Arbiter(ArbiterAction::Warn { side: Black }, Given::reason("   ")),
    );
    assert_eq!(e.to_string(), "reason: a warning needs a reason");
}

/// Rulings quote the seq of what they rule on; another seq is refused, naming the
/// pending one, and changes nothing (issue #12 item 4).
#[test]
fn ru_1_9_2_a_ruling_quoting_another_claim_is_refused() {
    let mut t = shuffle_table(|s| s.claims_need_arbiter = true);
    cycle(&mut t, 2);
    t.at(10_000);
    t.ok(
        Actor::Player(White),
        Command::ClaimDraw {
            side: White,
            kind: ClaimKind::Repetition,
            written_move: None,
        },
    );
    let pending = t.s.claim().expect("pending").seq;
    let rule = |seq| {
        Command::Arbiter(
            ArbiterAction::RuleOnClaim {
                upheld: true,
                claim_seq: Some(seq),
            },
            Given::reason("checked the scoresheets"),
        )
    };
    let e = t.err(arb(), rule(pending - 1));
    assert_eq!(e.rule(), Some("RU 1.9.2"));
    assert_eq!(
        e.to_string(),
        format!(
            "claim_seq {} is not the pending claim: that is seq {pending} (RU 1.9.2)",
            pending - 1
        )
    );
    let ev = t.ok(arb(), rule(pending));
    assert!(
        matches!(&ev[0].kind, EventKind::ClaimDecided { upheld: true, reason: Some(r) } if r == "checked the scoresheets")
    );
    assert_eq!(result(&t).0, Outcome::Draw);
}

#[test]
fn fmjd_5_4_a_ruling_quoting_another_irregularity_is_refused() {
    let mut t = Table::russian();
    t.board(BoardInput::Lift(22));
    let ev = t.board(BoardInput::Release(13));
    let flagged = ev[1].seq;
    assert!(matches!(
        &ev[1].kind,
        EventKind::Irregularity { squares, .. } if squares == &vec![22, 13]
    ));
    let rule = |seq| {
        Command::Arbiter(
            ArbiterAction::RuleOnIrregularity {
                ruling: Ruling::Stands,
                irregularity_seq: Some(seq),
            },
            Given::reason("both players agreed"),
        )
    };
    let e = t.err(arb(), rule(flagged + 5));
    assert_eq!(
        e.to_string(),
        format!(
            "irregularity_seq {} is not an outstanding irregularity: outstanding are seq {flagged} (FMJD 5.4)",
            flagged + 5
        )
    );
    let ev = t.ok(arb(), rule(flagged));
    assert!(matches!(
        &ev[0].kind,
        EventKind::IrregularityResolved { reason: Some(r), .. } if r == "both players agreed"
    ));
}

/// Move numbers follow the variant's first player: in English draughts Black moves first,
/// so Black's first move is 1 and White's answer is 1 too (it was numbered as if White
/// had started: 1..., 2).
#[test]
fn move_numbers_count_from_the_variants_first_player() {
    let mut t = Table::new(Variant::English, Some("10m"), None, |_| {});
    t.mv(Black, "11-15");
    t.mv(White, "23-19");
    t.mv(Black, "8-11");
    let (_, notes) = Session::replay_noted(&t.log).expect("replays");
    let numbers: Vec<u32> = t
        .log
        .iter()
        .zip(&notes)
        .filter(|(e, _)| matches!(e.kind, EventKind::MovePlayed { .. }))
        .map(|(_, n)| n.move_number)
        .collect();
    assert_eq!(numbers, vec![1, 1, 2]);
    // Russian: White first, the same count.
    let mut r = Table::russian();
    r.mv(White, "c3-d4");
    r.mv(Black, "f6-g5");
    r.mv(White, "g3-h4");
    let (_, notes) = Session::replay_noted(&r.log).expect("replays");
    let numbers: Vec<u32> = r
        .log
        .iter()
        .zip(&notes)
        .filter(|(e, _)| matches!(e.kind, EventKind::MovePlayed { .. }))
        .map(|(_, n)| n.move_number)
        .collect();
    assert_eq!(numbers, vec![1, 1, 2]);
}

/// Board health (issue 16 item 3): recorded when it changes the bound board's state,
/// by the board as actor; a repeat, another board's silence or end, a silence with the
/// clocks stopped and anything after the end record nothing; an outage leaves no board
/// connected.
#[test]
fn board_health_is_recorded_only_when_it_changes_and_while_it_matters() {
    use draughts_arbiter::game::BoardHealth::{Active, Disconnected, NotResponding};
    let health = |h, silent_ms| {
        Command::Board(BoardInput::Health {
            health: h,
            silent_ms,
        })
    };
    let b1 = || Actor::Board("b1".into());
    let mut t = Table::russian();
    assert_eq!(t.s.view(0).board, None, "no board bound yet");
    let ev = t.ok(b1(), health(Active, 0));
    assert!(
        matches!(&ev[..], [e] if matches!(&e.kind, EventKind::BoardHealthChanged { board_id, health: Active, silent_ms: 0 } if board_id == "b1")),
        "{ev:?}"
    );
    assert!(t.ok(b1(), health(Active, 0)).is_empty(), "a repeat");
    let other = Actor::Board("b2".into());
    assert!(t.ok(other.clone(), health(NotResponding, 9_000)).is_empty());
    assert!(t.ok(other, health(Disconnected, 9_000)).is_empty());
    // Silent while White's clock runs.
    t.at(12_000);
    let ev = t.ok(b1(), health(NotResponding, 12_000));
    assert!(
        matches!(&ev[..], [e] if matches!(e.kind, EventKind::BoardHealthChanged { health: NotResponding, .. }))
    );
    let view = t.s.view(12_000);
    let board = view.board.expect("the board");
    assert_eq!(
        (board.board_id.as_str(), board.health),
        ("b1", NotResponding)
    );
    assert_eq!(t.ok(b1(), health(Active, 12_500)).len(), 1, "talking again");
    // With the clocks stopped a silence is no silence.
    t.ok(
        arb(),
        Command::Arbiter(ArbiterAction::PauseClocks, Given::default()),
    );
    t.at(30_000);
    assert!(t.ok(b1(), health(NotResponding, 20_000)).is_empty());
    t.ok(
        arb(),
        Command::Arbiter(ArbiterAction::ResumeClocks, Given::default()),
    );
    assert_eq!(t.ok(b1(), health(Disconnected, 100)).len(), 1);
    assert_eq!(t.s.view(30_000).board.map(|b| b.health), Some(Disconnected));
    // Bound again, then the service is down for a while: no board outlived it.
    t.ok(b1(), health(Active, 0));
    t.at(31_000);
    let outage = t.s.record_outage(
        Now::from_mono(40_000),
        None,
        false,
        OutageMeasure::LastEvent,
    );
    t.log.extend(outage);
    t.t = 40_000;
    assert_eq!(t.s.view(40_000).board.map(|b| b.health), Some(Disconnected));
    t.ok(Actor::Player(White), Command::Resign { side: White });
    assert!(t.ok(b1(), health(Active, 0)).is_empty(), "after the end");
}

/// DESIGN.md 5 (outage not charged): the outage counts from when the service last served
/// the game (its last alive mark), not from the game's last event. White thinks 30 s
/// while the service runs, then it is down 10 s: White pays the 30 s, not the 10 s.
#[test]
fn an_outage_starts_when_the_service_stopped_not_at_the_last_event() {
    let t = Table::russian();
    let down =
        t.s.outage(
            Now::from_mono(40_000),
            Some(30_000),
            false,
            OutageMeasure::WallClock,
        )
        .expect("an outage");
    assert!(
        matches!(&down.events[..], [e] if matches!(e.kind, EventKind::Outage { from_ms: 30_000, until_ms: 40_000, charged: false, measured: Some(OutageMeasure::WallClock) })),
        "{:?}",
        down.events
    );
    assert_eq!(down.session.view(40_000).white_ms, Some(570_000));
    assert_eq!(down.session.view(45_000).white_ms, Some(565_000));
    // Not known when the service stopped: from the last event, all of it free.
    let unknown =
        t.s.outage(
            Now::from_mono(40_000),
            None,
            false,
            OutageMeasure::WallClock,
        )
        .expect("an outage");
    assert_eq!(unknown.session.view(40_000).white_ms, Some(600_000));
    // Charged: the mark only says how long the service was down.
    let charged =
        t.s.outage(
            Now::from_mono(40_000),
            Some(30_000),
            true,
            OutageMeasure::WallClock,
        )
        .expect("an outage");
    assert_eq!(charged.session.view(40_000).white_ms, Some(560_000));
    // Served until now (a mark at or after the restart): nothing was down.
    assert!(
        t.s.outage(
            Now::from_mono(40_000),
            Some(40_000),
            false,
            OutageMeasure::WallClock
        )
        .is_none()
    );
}

/// Issue 38: a scanning board's reading that shows the other side's move made before the
/// mover pressed the clock is a move out of turn (RU 1.4.1), flagged as a board that
/// senses lifts flags it; the board put back clears it and the mover presses.
#[test]
fn ru_1_4_1_a_snapshot_showing_a_move_before_the_press_is_out_of_turn() {
    let mut t = Table::russian();
    let black: Vec<u32> = (1..=12).collect();
    let mut white: Vec<u32> = (21..=32).filter(|&s| s != 22).collect();
    white.push(18); // c3-d4
    let ev = t.board(BoardInput::Snapshot(Occupancy {
        white: white.clone(),
        black: black.clone(),
        kings: None,
    }));
    assert!(matches!(&ev[0].kind, EventKind::MovePlayed { notation, .. } if notation == "c3-d4"));
    assert_eq!(t.s.awaiting_press(), Some(White));
    // Black plays f6-e5 (11 to 15), a move of its own, before White pressed.
    let mut moved: Vec<u32> = black.iter().copied().filter(|&s| s != 11).collect();
    moved.push(15);
    let ev = t.board(BoardInput::Snapshot(Occupancy {
        white: white.clone(),
        black: moved,
        kings: None,
    }));
    let out: Vec<&GameEvent> = ev
        .iter()
        .filter(|e| matches!(e.kind, EventKind::Irregularity { .. }))
        .collect();
    assert_eq!(out.len(), 1, "{:?}", kinds(&ev));
    assert!(
        matches!(&out[0].kind, EventKind::Irregularity { side: Black, kind: IrregularityKind::OutOfTurn, squares, .. }
            if squares == &vec![11, 15]),
        "{:?}",
        out[0].kind
    );
    assert_eq!(out[0].rule.as_deref(), Some("RU 1.4.1"));
    assert!(!t.s.board_view().in_step);
    // Put back: cleared; White presses and Black moves.
    let ev = t.board(BoardInput::Snapshot(Occupancy {
        white,
        black,
        kings: None,
    }));
    assert!(matches!(
        ev.last().map(|e| &e.kind),
        Some(EventKind::IrregularityResolved { ruling: None, .. })
    ));
    assert!(pending(&t).is_empty());
    t.board(BoardInput::ClockPress(White));
    assert_eq!(t.s.clock_side(), Black);
    t.mv(Black, "f6-e5");
}

/// Issue 38: `stands` while a piece is in hand keeps it in hand: what stands has it back
/// where it was lifted (FMJD 5.4), and the board's release of it puts it down there, a
/// piece put back (RU 1.4.6), not a board out of step.
#[test]
fn fmjd_5_4_stands_with_a_piece_in_hand_keeps_it_in_hand() {
    let mut t = Table::russian();
    t.board(BoardInput::Touch(22));
    t.board(BoardInput::Lift(21));
    let ev = t.board(BoardInput::Release(17)); // a3-b4 with c3 touched
    let (seq, kind) = flagged(&ev)[0];
    assert_eq!(kind, IrregularityKind::TouchMove);
    // The player takes b4 up again to put it back; meanwhile the ruling: it stands.
    t.board(BoardInput::Lift(17));
    t.ok(arb(), rule_on(seq, Ruling::Stands));
    assert_eq!(t.fen(), "B:W17,22-32:B1-12");
    let view = t.s.board_view();
    assert!(view.in_step, "{view:?}");
    let hand = view.in_hand.expect("still in hand");
    assert_eq!((hand.from, hand.side, hand.king), (17, White, false));
    assert!(!view.white.contains(&17), "{view:?}");
    // The board puts it down where it stands: accepted, nothing flagged.
    let ev = t.board(BoardInput::Release(17));
    assert!(flagged(&ev).is_empty(), "{:?}", kinds(&ev));
    let view = t.s.board_view();
    assert!(view.in_step && view.in_hand.is_none() && view.white.contains(&17));
    t.board(BoardInput::ClockPress(White));
    assert_eq!(t.s.clock_side(), Black);
    t.board(BoardInput::Lift(11));
    let ev = t.board(BoardInput::Release(15));
    assert!(matches!(&ev[0].kind, EventKind::MovePlayed { notation, .. } if notation == "f6-e5"));
}

/// Issue 38: a capture stopped early whose captured piece was already lifted, then
/// finished on the board (RU 1.5.5): only the captured pieces still on the board are
/// left to lift (RU 1.5.13), not the one already off.
#[test]
fn ru_1_5_5_a_capture_finished_after_a_captured_piece_was_lifted_does_not_list_it_again() {
    let mut t = capture_table();
    t.board(BoardInput::Lift(22));
    let ev = t.board(BoardInput::Release(15)); // c3:e5, short of g7
    assert_eq!(flagged(&ev)[0].1, IrregularityKind::CaptureIncomplete);
    t.board(BoardInput::Lift(18)); // d4, captured so far, taken off
    t.board(BoardInput::Lift(15));
    let ev = t.board(BoardInput::Release(8));
    assert!(
        matches!(&ev[1].kind, EventKind::MovePlayed { notation, .. } if notation == "c3:e5:g7"),
        "{:?}",
        kinds(&ev)
    );
    let view = t.s.board_view();
    assert_eq!(view.pending_removal, vec![11], "{view:?}");
    assert_eq!(view.black, vec![11, 12]);
    let ev = t.board(BoardInput::Lift(11));
    assert!(flagged(&ev).is_empty(), "{:?}", kinds(&ev));
    assert!(matches!(
        ev.last().map(|e| &e.kind),
        Some(EventKind::RemovalComplete { side: White })
    ));
    assert!(t.s.board_view().in_step);
    let ev = t.board(BoardInput::ClockPress(White));
    assert!(flagged(&ev).is_empty(), "{:?}", kinds(&ev));
    assert_eq!(t.s.clock_side(), Black);
}

/// Issue 38: "I adjust" covers the adjustment it announces, the touches and lifts until
/// the hand leaves a piece (RU 1.4.9, RU 1.4.6); a piece touched after that binds again
/// (RU 1.4.7) unless "I adjust" is said again.
#[test]
fn ru_1_4_9_an_adjustment_ends_at_the_release_and_touches_bind_again() {
    let mut t = Table::russian();
    t.board(BoardInput::AdjustAnnounced(White));
    let ev = t.board(BoardInput::Lift(21)); // a3 straightened
    assert!(
        !kinds(&ev)
            .iter()
            .any(|k| matches!(k, EventKind::PieceTouched { .. })),
        "{:?}",
        kinds(&ev)
    );
    t.board(BoardInput::Release(21));
    let ev = t.board(BoardInput::Touch(22));
    assert!(
        matches!(ev[0].kind, EventKind::PieceTouched { binding: true, .. }),
        "{:?}",
        ev[0].kind
    );
    assert_eq!(ev[0].rule.as_deref(), Some("RU 1.4.7"));
    t.board(BoardInput::Lift(23));
    let ev = t.board(BoardInput::Release(19)); // e3-f4, c3 touched
    assert_eq!(flagged(&ev)[0].1, IrregularityKind::TouchMove);
    t.board(BoardInput::Lift(19));
    t.board(BoardInput::Release(23));
    assert!(pending(&t).is_empty());
    // Said again: the next touch is an adjustment.
    t.board(BoardInput::AdjustAnnounced(White));
    let ev = t.board(BoardInput::Touch(24));
    assert!(matches!(
        ev[0].kind,
        EventKind::PieceTouched { binding: false, .. }
    ));
    t.board(BoardInput::Lift(22));
    let ev = t.board(BoardInput::Release(18));
    assert!(matches!(&ev[0].kind, EventKind::MovePlayed { notation, .. } if notation == "c3-d4"));
}

// ---------------------------------------------------------------------------------------
// T 5: the default time. The game starts at 0 (Table::new) with a default time of 30 min.

const DEFAULT_MS: u64 = 30 * 60 * 1000;

fn with_default() -> Table {
    Table::new(Variant::Russian, Some("90m"), None, |s| {
        s.default_time_ms = DEFAULT_MS;
    })
}

fn ended(ev: &[GameEvent]) -> Option<(Outcome, EndReason, Option<&str>, u64)> {
    ev.iter().find_map(|e| match e.kind {
        EventKind::GameEnded {
            outcome, reason, ..
        } => Some((outcome, reason, e.rule.as_deref(), e.at.mono_ms)),
        _ => None,
    })
}

#[test]
fn t5_the_side_to_move_that_never_acted_loses_at_exactly_the_default_time() {
    let mut t = with_default();
    assert_eq!(
        t.s.next_deadline(),
        Some(DEFAULT_MS),
        "the timer is armed for it"
    );
    assert!(
        t.at(DEFAULT_MS - 1).log.len() == 2,
        "nothing before the default time"
    );
    // The service wakes late (a busy host): the default is recorded at the instant it
    // passed, not when it was noticed.
    t.at(DEFAULT_MS + 750);
    let end = ended(&t.log).expect("a default");
    assert_eq!(
        end,
        (
            Outcome::BlackWins,
            EndReason::Default,
            Some("T 5"),
            DEFAULT_MS
        )
    );
    assert_eq!(t.s.next_deadline(), None);
}

#[test]
fn t5_a_command_after_the_default_time_finds_the_game_lost_by_default() {
    let mut t = with_default();
    t.t = DEFAULT_MS + 10;
    let e = t.err(
        Actor::Player(White),
        Command::SubmitMove {
            side: White,
            notation: "c3-d4".into(),
            offer_draw: false,
        },
    );
    assert_eq!(e, GameError::TickFirst, "time's verdict first");
    t.at(DEFAULT_MS + 10);
    assert_eq!(
        ended(&t.log).map(|e| (e.0, e.1, e.3)),
        Some((Outcome::BlackWins, EndReason::Default, DEFAULT_MS))
    );
    let late = t.err(
        Actor::Player(White),
        Command::SubmitMove {
            side: White,
            notation: "c3-d4".into(),
            offer_draw: false,
        },
    );
    assert!(matches!(late, GameError::GameOver { .. }), "{late:?}");
}

#[test]
fn t5_the_side_to_move_is_judged_white_moved_black_did_not() {
    let mut t = with_default();
    t.t = 60_000;
    t.mv(White, "c3-d4");
    t.at(DEFAULT_MS);
    assert_eq!(
        ended(&t.log).map(|e| (e.0, e.1)),
        Some((Outcome::WhiteWins, EndReason::Default)),
        "Black, to move, never acted"
    );
}

#[test]
fn t5_a_side_that_acted_is_present_and_no_default_follows() {
    let mut t = with_default();
    t.t = 1_000;
    t.mv(White, "c3-d4");
    t.t = 2_000;
    // An offer is acting too (RULES.md T 5's list): Black is at the board.
    t.ok(Actor::Player(Black), Command::OfferDraw { side: Black });
    assert!(t.s.default_deadline().is_none());
    t.at(DEFAULT_MS + 1);
    assert_eq!(
        ended(&t.log),
        None,
        "both present: time alone decides nothing"
    );
    assert!(!t.s.tick_due(Now::from_mono(DEFAULT_MS * 2)));
}

#[test]
fn t5_both_lose_when_the_other_side_was_marked_absent() {
    let mut t = with_default();
    t.t = 5_000;
    let marked = t.ok(
        arb(),
        Command::Arbiter(ArbiterAction::MarkAbsent { side: Black }, Given::default()),
    );
    assert_eq!(
        kinds(&marked),
        vec![&EventKind::MarkedAbsent { side: Black }]
    );
    assert_eq!(rules(&marked), vec!["T 5".to_string()]);
    let twice = t.err(
        arb(),
        Command::Arbiter(ArbiterAction::MarkAbsent { side: Black }, Given::default()),
    );
    assert!(twice.to_string().contains("already"), "{twice}");
    t.at(DEFAULT_MS);
    assert_eq!(
        ended(&t.log).map(|e| (e.0, e.1, e.2)),
        Some((Outcome::DoubleForfeit, EndReason::Default, Some("T 5")))
    );
}

#[test]
fn t5_a_player_who_acted_cannot_be_marked_absent_and_the_mover_still_loses() {
    let mut t = with_default();
    t.t = 1_000;
    t.mv(White, "c3-d4");
    let e = t.err(
        arb(),
        Command::Arbiter(ArbiterAction::MarkAbsent { side: White }, Given::default()),
    );
    assert!(e.to_string().contains("has acted"), "{e}");
    // White absent would not matter anyway: Black is to move; White present (it moved).
    t.ok(
        arb(),
        Command::Arbiter(ArbiterAction::MarkAbsent { side: Black }, Given::default()),
    );
    t.at(DEFAULT_MS);
    assert_eq!(
        ended(&t.log).map(|e| e.0),
        Some(Outcome::WhiteWins),
        "one absent side to move loses alone"
    );
}

#[test]
fn t5_a_flag_that_falls_first_decides_before_the_default_time() {
    let mut t = Table::new(Variant::Russian, Some("1m"), None, |s| {
        s.default_time_ms = DEFAULT_MS;
    });
    assert_eq!(t.s.next_deadline(), Some(60_000), "the flag comes first");
    t.at(DEFAULT_MS + 5);
    assert_eq!(
        ended(&t.log).map(|e| e.1),
        Some(EndReason::FlagFall),
        "the flag fell at one minute"
    );
}

#[test]
fn t5_no_default_time_none_armed() {
    let mut t = Table::russian();
    assert_eq!(t.s.default_deadline(), None);
    t.at(DEFAULT_MS * 2 / 10);
    assert_eq!(ended(&t.log), None);
}

#[test]
fn t6_a_forfeit_is_recorded_as_one_and_is_never_a_draw() {
    let mut t = Table::russian();
    let draw = t.err(
        arb(),
        Command::Arbiter(
            ArbiterAction::DeclareResult {
                outcome: Outcome::Draw,
                kind: Declared::Forfeit,
            },
            Given::reason("no-show"),
        ),
    );
    assert!(draw.to_string().contains("forfeit"), "{draw}");
    let ev = t.ok(
        arb(),
        Command::Arbiter(
            ArbiterAction::DeclareResult {
                outcome: Outcome::WhiteWins,
                kind: Declared::Forfeit,
            },
            Given::reason("Black did not come"),
        ),
    );
    assert_eq!(
        ended(&ev).map(|e| (e.0, e.1, e.2)),
        Some((Outcome::WhiteWins, EndReason::Forfeit, Some("T 6")))
    );
}
