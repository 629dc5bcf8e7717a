//! Random streams of legal and illegal commands: the judge never panics, a refused command
//! changes nothing, and the recorded events replay to an equal session.

use draughts_arbiter::game::{
    Actor, ArbiterAction, BoardInput, ClaimKind, Command, GameSettings, Given, Now, Occupancy,
    OfferResponse, Session,
};
use draughts_arbiter::notation::movetext::write_move_full;
use draughts_arbiter::rules::{Color, Variant};
use proptest::prelude::*;

#[derive(Debug, Clone)]
enum Step {
    Wait(u64),
    LegalMove(u16, bool),
    Garbage(String),
    Press(bool),
    Offer(bool),
    Respond(bool, u8),
    Claim(bool, bool, Option<u16>),
    Resign(bool),
    Board(u8, u32),
    Arbiter(u8, u64),
}

fn step() -> impl Strategy<Value = Step> {
    prop_oneof![
        4 => (0u64..120_000).prop_map(Step::Wait),
        12 => (any::<u16>(), any::<bool>()).prop_map(|(i, o)| Step::LegalMove(i, o)),
        2 => "[a-h1-8x:\\-]{0,8}".prop_map(Step::Garbage),
        3 => any::<bool>().prop_map(Step::Press),
        2 => any::<bool>().prop_map(Step::Offer),
        2 => (any::<bool>(), 0u8..3).prop_map(|(s, r)| Step::Respond(s, r)),
        2 => (any::<bool>(), any::<bool>(), proptest::option::of(any::<u16>())).prop_map(|(s, k, w)| Step::Claim(s, k, w)),
        1 => any::<bool>().prop_map(Step::Resign),
        8 => (0u8..7, 0u32..40).prop_map(|(k, sq)| Step::Board(k, sq)),
        2 => (0u8..6, 1u64..100_000).prop_map(|(k, ms)| Step::Arbiter(k, ms)),
    ]
}

fn side(white: bool) -> Color {
    if white { Color::White } else { Color::Black }
}

fn command(s: &Session, step: &Step) -> Option<(Actor, Command)> {
    let pos = s.position();
    let pick = |i: u16| {
        let moves = pos.legal_moves();
        (!moves.is_empty()).then(|| write_move_full(pos, &moves[i as usize % moves.len()]))
    };
    let c = match step.clone() {
        Step::Wait(_) => return None,
        Step::LegalMove(i, offer) => Command::SubmitMove {
            side: pos.turn(),
            notation: pick(i)?,
            offer_draw: offer,
        },
        Step::Garbage(text) => Command::SubmitMove {
            side: pos.turn(),
            notation: text,
            offer_draw: false,
        },
        Step::Press(w) => Command::PressClock { side: side(w) },
        Step::Offer(w) => Command::OfferDraw { side: side(w) },
        Step::Respond(w, r) => Command::RespondToOffer {
            side: side(w),
            response: [
                OfferResponse::Accept,
                OfferResponse::Decline,
                OfferResponse::Postpone,
            ][r as usize],
        },
        Step::Claim(w, rep, written) => Command::ClaimDraw {
            side: side(w),
            kind: if rep {
                ClaimKind::Repetition
            } else {
                ClaimKind::MoveCount
            },
            written_move: written.and_then(pick),
        },
        Step::Resign(w) => Command::Resign { side: side(w) },
        Step::Board(k, sq) => Command::Board(match k {
            0 => BoardInput::Touch(sq),
            1 => BoardInput::Lift(sq),
            2 => BoardInput::Place(sq),
            3 => BoardInput::Release(sq),
            4 => BoardInput::ClockPress(side(sq % 2 == 0)),
            5 => BoardInput::AdjustAnnounced(side(sq % 2 == 0)),
            _ => BoardInput::Snapshot(Occupancy {
                white: vec![sq, 21, 22],
                black: vec![1, 2],
                kings: None,
            }),
        }),
        Step::Arbiter(k, ms) => Command::Arbiter(
            match k {
                0 => ArbiterAction::PauseClocks,
                1 => ArbiterAction::ResumeClocks,
                2 => ArbiterAction::AddTime {
                    side: side(ms % 2 == 0),
                    amount_ms: ms,
                },
                3 => ArbiterAction::Penalty {
                    side: side(ms % 2 == 0),
                    amount_ms: ms,
                },
                4 => ArbiterAction::RuleOnClaim {
                    upheld: ms % 2 == 0,
                    claim_seq: None,
                },
                _ => ArbiterAction::Warn {
                    side: side(ms % 2 == 0),
                },
            },
            Given::reason("p"),
        ),
    };
    Some((Actor::Arbiter("prop".into()), c))
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(150))]

    #[test]
    fn random_commands_never_panic_refusals_change_nothing_and_logs_replay(
        variant in proptest::sample::select(Variant::ALL.to_vec()),
        arbiter_claims in any::<bool>(),
        press_on_move in any::<bool>(),
        steps in proptest::collection::vec(step(), 1..80),
    ) {
        let mut settings = GameSettings::new(variant);
        settings.time_control = Some("5m+2s".parse().expect("tc"));
        settings.claims_need_arbiter = arbiter_claims;
        settings.press_on_move = press_on_move;
        let (mut s, first) = Session::create(settings, None, Actor::System, Now::from_mono(0)).expect("create");
        let mut log = vec![first];
        let mut t = 0u64;
        log.extend(s.handle(&Actor::System, Command::Start, Now::from_mono(t)).expect("start"));
        // Where each command's (or tick's) events begin in the log.
        let mut starts = vec![1, log.len()];
        for st in &steps {
            if let Step::Wait(ms) = st {
                t += ms;
            }
            let now = Now::from_mono(t);
            log.extend(s.tick(now));
            starts.push(log.len());
            let Some((actor, cmd)) = command(&s, st) else { continue };
            let before = s.clone();
            match s.handle(&actor, cmd, now) {
                Ok(events) => log.extend(events),
                Err(_) => prop_assert_eq!(&s, &before),
            }
            starts.push(log.len());
        }
        let rebuilt = Session::replay(&log).expect("replays");
        prop_assert_eq!(&rebuilt, &s);
        // A follower reads the log a command at a time (another node appended it) and
        // notes each event as the replay of the whole log does: a move pressed in its
        // command carries the clocks after the press on every node.
        let (_, noted) = Session::replay_noted(&log).expect("replays noted");
        let mut follower = Session::replay(&log[..1]).expect("created");
        let mut followed = vec![noted[0].clone()];
        for w in starts.windows(2) {
            followed.extend(follower.apply_all_noted(&log[w[0]..w[1]]).expect("follows"));
        }
        prop_assert_eq!(&follower, &s);
        prop_assert_eq!(followed, noted);
        // The log survives storage as JSON.
        let json = serde_json::to_string(&log).expect("serialises");
        let back: Vec<draughts_arbiter::game::GameEvent> = serde_json::from_str(&json).expect("deserialises");
        prop_assert_eq!(&back, &log);
    }
}
