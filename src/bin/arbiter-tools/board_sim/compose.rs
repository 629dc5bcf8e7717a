//! One recorded ply as the board's messages: the plain move (plan.rs) or, with
//! `--noise`, harmless noise around it or an irregular incident instead (incident.rs).
//! Apart from both so that neither needs the other.

use draughts_arbiter::api::pb;
use draughts_arbiter::api::pb::board_message::Kind;

use super::incident::{self, Noiser};
use super::plan::{
    Act, Mode, MovePlan, Noise, Ply, Step, lift_and_put_back, move_steps, n, numbers, other_piece,
    pieces, pre_noise, removal_steps, square,
};

/// The messages a board sends for `ply` in `mode`, its clock press last (timed games);
/// `noise` adds harmless noise or one irregularity and how it ends.
pub fn move_plan(ply: &Ply<'_>, mode: Mode, mut noise: Option<&mut Noiser>) -> MovePlan {
    let pos = ply.before;
    let mv = ply.mv;
    let v = pos.variant();
    let mover = pos.turn();
    let from = n(v, mv.from());
    let mut plan = MovePlan {
        plies: 1,
        ..MovePlan::default()
    };
    if let Some(nz) = noise.as_deref_mut()
        && let Some(made) = incident::plan(ply, mode, nz)
    {
        plan = made;
    } else {
        let official = pieces(pos);
        if let Some(nz) = noise.as_deref_mut() {
            let r = &mut nz.rng;
            match pre_noise(r, mode) {
                Some(Noise::Adjust) => {
                    plan.noise.push(Noise::Adjust);
                    plan.steps.push(Step::quiet(Kind::Adjust(pb::BoardAdjust {
                        side: draughts_arbiter::api::convert::side_pb(mover),
                    })));
                    // Straighten another own piece (or the one to move, when alone).
                    let piece = other_piece(pos, mover, mv.from()).unwrap_or(from);
                    plan.steps
                        .extend(lift_and_put_back(v, mode, official, mover, piece));
                }
                Some(Noise::OpponentTouch) => {
                    if let Some(p) = numbers(v, pos.pieces(!mover)).first().copied() {
                        plan.noise.push(Noise::OpponentTouch);
                        plan.steps.push(Step::quiet(Kind::Touch(square(p))));
                    }
                }
                Some(Noise::LiftPutBack) => {
                    plan.noise.push(Noise::LiftPutBack);
                    plan.steps
                        .extend(lift_and_put_back(v, mode, official, mover, from));
                }
                _ => {}
            }
        }
        let mut rng = noise.as_deref_mut().map(|nz| &mut nz.rng);
        let steps = move_steps(
            pos,
            mv,
            ply.legal,
            mode,
            rng.as_deref_mut(),
            &mut plan.noise,
        );
        plan.steps.extend(steps);
        plan.steps.extend(removal_steps(v, mv, mode, rng));
        if ply.timed {
            plan.steps.push(Step::act(Act::Press(mover)));
        }
    }
    if let Some(nz) = noise
        && nz.rng.chance(300)
    {
        plan.noise.push(Noise::Jitter);
        for s in &mut plan.steps {
            s.jitter_ms = i64::try_from(nz.rng.below(251)).unwrap_or(0);
        }
    }
    plan
}
