//! A fast perft for the diagonal games whose rules fit one shape: men and kings on the
//! dark squares of a diagonal board, captured pieces removed after the move, a free
//! choice among captures or the most pieces (Russian, International, English, Brazilian,
//! pool, giveaway, antidraughts, 80-square, diagonal draughts). The other games (Italian,
//! Frisian, Turkish, towers, corners) and the every-path count go through the general
//! generator ([`super::perft`] decides).
//!
//! It works on bare boards (two colours and the kings), not on [`Move`](super::Move)s:
//! each legal move is written down as the position it leads to. Because of the ghost
//! squares of the diagonal layouts ([`super::Geometry`]) a diagonal step is a rotation of
//! the whole 64-bit board by `n` or `n + 1` bits (`n` dark squares a row): a square
//! stepped off the board lands on a ghost bit or past the last square, never on another
//! square, so masking with the empty squares or the opponent's pieces is all the edge
//! handling needed. Captures are found per direction for all men at once (a man, an
//! opponent's piece beside it and an empty square behind), and a flying king's first
//! blocker in a direction is the nearest bit of its ray.
//!
//! Moves are distinct by (start, end, captured set), as the arbiter counts them. Two
//! sources of repeats exist: a king that captures straight on over a second piece could
//! have stopped on any free square between the two (found here once, from the last such
//! square), and the same pieces taken in another order, which needs at least three
//! pieces (two are never taken in both orders by a piece on diagonals: the second would
//! have to stand on a line through the first landing square other than the one just
//! travelled, and no such line meets the start square's other diagonals; the tests
//! compare this generator with the general one on random positions), so only captures of three or more are compared with the ones already found. Of two
//! repeats the first found in the general generator's order is kept: they can differ
//! only in a man crowned on the way (RU 1.5.15), and that is decided while the piece is
//! still a man, whose directions are tried here in the same order as there.

use std::marker::PhantomData;

use super::{Position, Tables};
use crate::rules::Color;
use crate::rules::geometry::BoardKind;
use crate::rules::variant::{CaptureChoice, KingRange, PromotionInCapture, Removal};

/// A bare position: the pieces of White and Black, and the kings.
#[derive(Clone, Copy)]
pub(super) struct Node {
    p: [u64; 2],
    kings: u64,
}

/// The rules this generator reads, from a variant's [`Tables`].
struct Spec {
    valid: u64,
    promo: [u64; 2],
    /// The directions a man captures in, by colour, one bit per direction.
    man_caps: [u8; 2],
    flying: bool,
    max_capture: bool,
    in_capture: PromotionInCapture,
    rays: &'static [[u64; 64]; 8],
}

/// The side to move, as a type, so that each side's directions are constants.
trait Side {
    const US: usize;
    /// The order in which the general generator tries a man's capture directions
    /// (up-left, up-right, down-left, down-right as White sees them: forward first).
    const ORDER: [usize; 4];
    /// The directions a man moves in: forward.
    const FORWARD: [usize; 2];
    type Other: Side;
}

struct White;
struct Black;

impl Side for White {
    const US: usize = 0;
    const ORDER: [usize; 4] = [0, 1, 2, 3];
    const FORWARD: [usize; 2] = [0, 1];
    type Other = Black;
}

impl Side for Black {
    const US: usize = 1;
    const ORDER: [usize; 4] = [2, 3, 0, 1];
    const FORWARD: [usize; 2] = [2, 3];
    type Other = White;
}

/// One bit per direction of `dirs`.
fn mask(dirs: &[usize]) -> u8 {
    dirs.iter().fold(0, |m, &d| m | 1 << d)
}

/// Whether `dirs` lists diagonal directions in the order `order` gives them.
fn in_order(dirs: &[usize], order: [usize; 4]) -> bool {
    let mut rest = order.iter();
    dirs.iter().all(|d| rest.any(|o| o == d))
}

/// Runs `$body` once for each direction of `$order`, `$d` bound to it: a constant after
/// inlining, so that each step is a rotation by a constant (a `for` loop over the four
/// directions was left rolled, each step a table look-up).
macro_rules! each_dir {
    ($d:ident in $order:expr => $body:block) => {{
        let order: [usize; 4] = $order;
        {
            let $d = order[0];
            $body
        }
        {
            let $d = order[1];
            $body
        }
        {
            let $d = order[2];
            $body
        }
        {
            let $d = order[3];
            $body
        }
    }};
}

/// The bit rotations of a step in each diagonal direction (up-left, up-right, down-left,
/// down-right) on a board with `N` dark squares a row.
struct Rot<const N: u32>;

impl<const N: u32> Rot<N> {
    const BY: [u32; 4] = [64 - (N + 1), 64 - N, N, N + 1];
}

/// Every square of `b` one step in direction `d` (bits off the board land outside it).
#[inline(always)]
fn step<const N: u32>(b: u64, d: usize) -> u64 {
    b.rotate_left(Rot::<N>::BY[d & 3])
}

/// The four diagonal directions.
const ALL: [usize; 4] = [0, 1, 2, 3];

/// The squares of `through` reached from `from` (a subset of it) by going on in direction
/// `d` over squares of `through` only, up to nine squares in all: an occluded fill in
/// three doubling steps and one more, without a loop (so without a branch to mispredict).
/// Every square between is in `through`, so none is a ghost square or off the board.
#[inline(always)]
fn slide<const N: u32>(from: u64, through: u64, d: usize) -> u64 {
    let r = Rot::<N>::BY[d & 3];
    let mut g = from;
    let mut p = through;
    g |= p & g.rotate_left(r);
    p &= p.rotate_left(r);
    g |= p & g.rotate_left((2 * r) % 64);
    p &= p.rotate_left((2 * r) % 64);
    g |= p & g.rotate_left((4 * r) % 64);
    g | (through & g.rotate_left(r))
}

/// The opposite diagonal direction.
#[inline(always)]
const fn back(d: usize) -> usize {
    3 - d
}

/// The two diagonal directions at right angles to `d`.
#[inline(always)]
const fn sideways(d: usize) -> [usize; 2] {
    if d == 0 || d == 3 { [1, 2] } else { [0, 3] }
}

/// Whether the fast generator plays `pos`'s game exactly as the general one does.
pub(super) fn applies(pos: &Position) -> bool {
    let t = Tables::of(pos.variant);
    let r = t.rules;
    t.g.kind != BoardKind::Orthogonal8x8
        && pos.stacked == 0
        && r.removal == Removal::AfterMove
        && matches!(
            r.capture_choice,
            CaptureChoice::Free | CaptureChoice::MaximumPieces
        )
        && r.men_capture_kings
        && t.hops.is_empty()
        && t.king_caps == [0, 1, 2, 3]
        && t.king_dirs == [0, 1, 2, 3]
        && t.man_moves[0] == White::FORWARD
        && t.man_moves[1] == Black::FORWARD
        && in_order(&t.man_caps[0], White::ORDER)
        && in_order(&t.man_caps[1], Black::ORDER)
}

/// Perft from `pos` (which [`applies`]) with distinct moves, the last ply bulk-counted.
pub(super) fn perft(pos: &Position, depth: u32) -> u64 {
    let t = Tables::of(pos.variant);
    let spec = Spec {
        valid: t.g.valid,
        promo: t.promo,
        man_caps: [mask(&t.man_caps[0]), mask(&t.man_caps[1])],
        flying: t.rules.king_range == KingRange::Flying,
        max_capture: t.rules.capture_choice == CaptureChoice::MaximumPieces,
        in_capture: t.rules.promotion_in_capture,
        rays: t.g.rays(),
    };
    let node = Node {
        p: pos.pieces,
        kings: pos.kings,
    };
    if depth == 0 {
        return 1;
    }
    let mut buffers: Vec<Vec<Node>> = (0..depth).map(|_| Vec::with_capacity(64)).collect();
    let backwards = spec.man_caps == [0b1111, 0b1111];
    match (t.g.kind, backwards) {
        (BoardKind::Diagonal8x8, true) => {
            run::<4, true>(&spec, node, pos.turn, depth, &mut buffers)
        }
        (BoardKind::Diagonal8x8, false) => {
            run::<4, false>(&spec, node, pos.turn, depth, &mut buffers)
        }
        (_, true) => run::<5, true>(&spec, node, pos.turn, depth, &mut buffers),
        (_, false) => run::<5, false>(&spec, node, pos.turn, depth, &mut buffers),
    }
}

/// Perft on a board with `N` dark squares a row; `B`: men capture in all four directions
/// (every fast game but English), so that their directions need no test.
fn run<const N: u32, const B: bool>(
    spec: &Spec,
    node: Node,
    turn: Color,
    depth: u32,
    buffers: &mut [Vec<Node>],
) -> u64 {
    match turn {
        Color::White => perft_node::<N, B, White>(spec, node, depth, buffers),
        Color::Black => perft_node::<N, B, Black>(spec, node, depth, buffers),
    }
}

fn perft_node<const N: u32, const B: bool, S: Side>(
    spec: &Spec,
    node: Node,
    depth: u32,
    buffers: &mut [Vec<Node>],
) -> u64 {
    let (moves, rest) = buffers.split_first_mut().expect("one buffer per ply");
    moves.clear();
    if depth == 1 {
        return count::<N, B, S>(spec, &node, moves);
    }
    generate::<N, B, S>(spec, &node, moves);
    let mut total = 0;
    if depth == 2 {
        let scratch = &mut rest[0];
        for child in moves.iter() {
            scratch.clear();
            total += count::<N, B, S::Other>(spec, child, scratch);
        }
        return total;
    }
    for child in moves.iter() {
        total += perft_node::<N, B, S::Other>(spec, *child, depth - 1, rest);
    }
    total
}

/// The men of `men` that can capture in some direction of `dirs` (an opponent's piece
/// beside them, an empty square behind it).
#[inline(always)]
fn jumpers<const N: u32, const B: bool>(men: u64, opp: u64, empty: u64, dirs: u8) -> u64 {
    let mut found = 0;
    each_dir!(d in ALL => {
        if B || dirs & 1 << d != 0 {
            let b = back(d);
            found |= step::<N>(step::<N>(empty, b) & opp, b);
        }
    });
    found & men
}

/// The kings of `kings` that can capture: for each direction, the squares a king could
/// take from are found by walking back from every opponent's piece with an empty square
/// behind it over the empty squares before it.
#[inline(always)]
fn king_jumpers<const N: u32>(kings: u64, opp: u64, empty: u64, flying: bool) -> u64 {
    let mut found = 0;
    each_dir!(d in ALL => {
        let b = back(d);
        let victims = opp & step::<N>(empty, b);
        let from = step::<N>(victims, b);
        found |= if flying {
            from | step::<N>(slide::<N>(from & empty, empty, b), b)
        } else {
            from
        };
    });
    found & kings
}

/// Appends the captures of the side to move to `out`; returns whether there were any.
#[inline(always)]
fn captures<const N: u32, const B: bool, S: Side>(
    spec: &Spec,
    node: &Node,
    out: &mut Vec<Node>,
) -> bool {
    let us = S::US;
    let own = node.p[us];
    let opp = node.p[1 - us];
    let empty = spec.valid & !(own | opp);
    let men = own & !node.kings;
    let kings = own & node.kings;
    let mut movers = jumpers::<N, B>(men, opp, empty, spec.man_caps[us]);
    let mut kings = if kings == 0 {
        0
    } else {
        king_jumpers::<N>(kings, opp, empty, spec.flying)
    };
    if movers == 0 && kings == 0 {
        return false;
    }
    let start = out.len();
    let mut search = Capture::<N, B, S> {
        spec,
        side: PhantomData,
        node: *node,
        opp,
        empty,
        from: 0,
        best: 0,
        start,
        out,
    };
    while movers != 0 {
        let from = movers & movers.wrapping_neg();
        movers ^= from;
        search.from = from;
        search.empty = empty | from;
        search.man(from, 0);
    }
    while kings != 0 {
        let from = kings & kings.wrapping_neg();
        kings ^= from;
        search.from = from;
        search.empty = empty | from;
        search.king(from, 0, 4);
    }
    search.out.len() > start
}

/// Appends every legal move's position to `out`.
fn generate<const N: u32, const B: bool, S: Side>(spec: &Spec, node: &Node, out: &mut Vec<Node>) {
    let us = S::US;
    if captures::<N, B, S>(spec, node, out) {
        return;
    }
    let own = node.p[us];
    let empty = spec.valid & !(own | node.p[1 - us]);
    let men = own & !node.kings;
    let promo = spec.promo[us];
    for d in S::FORWARD {
        let mut to = step::<N>(men, d) & empty;
        while to != 0 {
            let t = to & to.wrapping_neg();
            to ^= t;
            let f = step::<N>(t, back(d));
            let mut next = *node;
            next.p[us] ^= f | t;
            next.kings |= t & promo;
            out.push(next);
        }
    }
    let mut kings = own & node.kings;
    while kings != 0 {
        let k = kings & kings.wrapping_neg();
        kings ^= k;
        each_dir!(d in ALL => {
            let mut s = step::<N>(k, d) & empty;
            while s != 0 {
                let mut next = *node;
                next.p[us] ^= k | s;
                next.kings ^= k | s;
                out.push(next);
                if !spec.flying {
                    break;
                }
                s = step::<N>(s, d) & empty;
            }
        });
    }
}

/// The number of legal moves; `scratch` holds the captures, if any. Inlined into the
/// loop over the last ply but one, where most of the time goes.
#[inline(always)]
fn count<const N: u32, const B: bool, S: Side>(
    spec: &Spec,
    node: &Node,
    scratch: &mut Vec<Node>,
) -> u64 {
    let us = S::US;
    if captures::<N, B, S>(spec, node, scratch) {
        return scratch.len() as u64;
    }
    let own = node.p[us];
    let occupied = own | node.p[1 - us];
    let empty = spec.valid & !occupied;
    let men = own & !node.kings;
    let [left, right] = S::FORWARD;
    let mut n = u64::from((step::<N>(men, left) & empty).count_ones())
        + u64::from((step::<N>(men, right) & empty).count_ones());
    let kings = own & node.kings;
    if kings == 0 {
        return n;
    }
    if !spec.flying {
        each_dir!(d in ALL => {
            n += u64::from((step::<N>(kings, d) & empty).count_ones());
        });
        return n;
    }
    // The kings' rays in one direction never overlap: each stops at the next piece.
    each_dir!(d in ALL => {
        n += u64::from(slide::<N>(step::<N>(kings, d) & empty, empty, d).count_ones());
    });
    n
}

/// The nearest bit of `bits` (a subset of a ray in direction `d`) to the ray's start.
#[inline(always)]
fn nearest(bits: u64, d: usize) -> u64 {
    if d >= 2 {
        bits & bits.wrapping_neg()
    } else {
        1u64 << (63 - bits.leading_zeros())
    }
}

/// The capture search of one position: one piece at a time (`from`), its moves appended
/// to `out` from `start` on.
struct Capture<'a, const N: u32, const B: bool, S: Side> {
    spec: &'a Spec,
    side: PhantomData<S>,
    node: Node,
    /// The opponent's pieces, those already taken included (they stay until the end).
    opp: u64,
    /// The empty squares, the capturing piece's start square included.
    empty: u64,
    from: u64,
    /// Under the most-pieces rule: the most pieces a capture found so far takes.
    best: u32,
    start: usize,
    out: &'a mut Vec<Node>,
}

impl<const N: u32, const B: bool, S: Side> Capture<'_, N, B, S> {
    /// A finished capture ending on `to` that took `taken`; `king`: the piece is (or has
    /// become) a king there.
    #[inline(always)]
    fn emit(&mut self, to: u64, taken: u64, king: bool) {
        let n = taken.count_ones();
        if self.spec.max_capture {
            if n < self.best {
                return;
            }
            if n > self.best {
                self.best = n;
                self.out.truncate(self.start);
            }
        }
        let us = S::US;
        let mut next = self.node;
        next.p[us] = (next.p[us] ^ self.from) | to;
        next.p[1 - us] &= !taken;
        next.kings &= !(taken | self.from);
        if king {
            next.kings |= to;
        }
        if n >= 3 && self.out[self.start..].iter().any(|m| m.p == next.p) {
            return;
        }
        self.out.push(next);
    }

    /// Extends a man's capture from `at`, having taken `taken`.
    fn man(&mut self, at: u64, taken: u64) {
        let opp = self.opp & !taken;
        let spec = self.spec;
        let promo = spec.promo[S::US];
        let dirs = spec.man_caps[S::US];
        let mut found = false;
        each_dir!(d in S::ORDER => {
            let victim = step::<N>(at, d) & opp;
            let land = step::<N>(victim, d) & self.empty;
            if (B || dirs & 1 << d != 0) && land != 0 {
                found = true;
                let taken = taken | victim;
                if land & promo != 0 {
                    match spec.in_capture {
                        PromotionInCapture::ContinueAsKing => self.king(land, taken, back(d)),
                        PromotionInCapture::ContinueAsMan => self.man(land, taken),
                        PromotionInCapture::EndsMove => self.emit(land, taken, true),
                    }
                } else if self.man_goes_on(land, taken) {
                    self.man(land, taken);
                } else {
                    // Most captures end here: no call for them.
                    self.emit(land, taken, false);
                }
            }
        });
        if !found && taken != 0 {
            self.emit(at, taken, at & promo != 0);
        }
    }

    /// Whether a man on `at`, having taken `taken`, can take another piece.
    #[inline(always)]
    fn man_goes_on(&self, at: u64, taken: u64) -> bool {
        let opp = self.opp & !taken;
        let dirs = self.spec.man_caps[S::US];
        let mut on = 0;
        each_dir!(d in ALL => {
            if B || dirs & 1 << d != 0 {
                on |= step::<N>(step::<N>(at, d) & opp, d);
            }
        });
        on & self.empty != 0
    }

    /// The piece a king on `at` can take in direction `d`, or 0.
    #[inline(always)]
    fn target(&self, at: u64, d: usize, opp: u64) -> u64 {
        let victim = if self.spec.flying {
            let blockers = self.spec.rays[d][at.trailing_zeros() as usize] & !self.empty;
            if blockers == 0 {
                return 0;
            }
            nearest(blockers, d) & opp
        } else {
            step::<N>(at, d) & opp
        };
        if victim != 0 && step::<N>(victim, d) & self.empty != 0 {
            victim
        } else {
            0
        }
    }

    /// Extends a king's capture from `at` (its start square, or a man's crowning square),
    /// having taken `taken`, in every direction but `skip` (4: none).
    fn king(&mut self, at: u64, taken: u64, skip: usize) {
        let opp = self.opp & !taken;
        let mut found = false;
        each_dir!(d in ALL => {
            if d != skip {
                let victim = self.target(at, d, opp);
                if victim != 0 {
                    found = true;
                    self.king_beyond(victim, d, taken | victim);
                }
            }
        });
        if !found && taken != 0 {
            self.emit(at, taken, true);
        }
    }

    /// A king has jumped `victim` in direction `d`, taking `taken` in all: it lands on
    /// a free square beyond and goes on from there if it can, from any of them (RU 1.5.6);
    /// if it can from none, each is the end of a capture.
    fn king_beyond(&mut self, victim: u64, d: usize, taken: u64) {
        let opp = self.opp & !taken;
        let first = step::<N>(victim, d) & self.empty;
        let mut on = false;
        let mut at = first;
        loop {
            for s in sideways(d) {
                let next = self.target(at, s, opp);
                if next != 0 {
                    on = true;
                    self.king_beyond(next, s, taken | next);
                }
            }
            let further = step::<N>(at, d) & self.empty;
            if further == 0 || !self.spec.flying {
                break;
            }
            at = further;
        }
        // Straight on over the next piece: once, whichever free square it was from.
        let next = step::<N>(at, d) & opp;
        if next != 0 && step::<N>(next, d) & self.empty != 0 {
            on = true;
            self.king_beyond(next, d, taken | next);
        }
        if on {
            return;
        }
        let mut land = first;
        while land != 0 {
            self.emit(land, taken, true);
            if !self.spec.flying {
                break;
            }
            land = step::<N>(land, d) & self.empty;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::perft_general;
    use super::*;
    use crate::rules::{Setup, Variant};

    const FAST: [Variant; 9] = [
        Variant::Russian,
        Variant::International,
        Variant::English,
        Variant::Brazilian,
        Variant::Pool,
        Variant::Giveaway,
        Variant::Antidraughts,
        Variant::Russian80,
        Variant::Diagonal,
    ];

    /// A small deterministic generator (xorshift64).
    struct Rng(u64);

    impl Rng {
        fn next(&mut self) -> u64 {
            self.0 ^= self.0 << 13;
            self.0 ^= self.0 >> 7;
            self.0 ^= self.0 << 17;
            self.0
        }

        fn below(&mut self, n: usize) -> usize {
            (self.next() % n as u64) as usize
        }
    }

    #[test]
    fn the_fast_games_are_those_of_the_fast_shape() {
        for v in Variant::ALL {
            let fast = applies(&Position::start(v));
            assert_eq!(fast, FAST.contains(&v), "{v}");
        }
    }

    #[test]
    fn a_step_is_a_rotation_that_never_lands_on_another_square() {
        for v in [Variant::Russian, Variant::International, Variant::Russian80] {
            let g = v.geometry();
            for &sq in &g.order {
                for d in 0..4 {
                    let n = match g.neighbour_raw(sq.0, d) {
                        crate::rules::geometry::NONE => 0,
                        n => 1u64 << n,
                    };
                    let stepped = if g.width == 8 {
                        step::<4>(sq.bit(), d)
                    } else {
                        step::<5>(sq.bit(), d)
                    };
                    assert_eq!(stepped & g.valid, n, "{v} square {} direction {d}", sq.0);
                }
            }
        }
    }

    fn check(pos: &Position, depth: u32) {
        for d in 0..=depth {
            assert_eq!(
                perft(pos, d),
                perft_general(pos, d, true),
                "{pos:?} depth {d}"
            );
        }
    }

    #[test]
    fn agrees_with_the_general_generator_along_random_games() {
        let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
        for v in FAST {
            for _ in 0..12 {
                let mut pos = Position::start(v);
                for _ in 0..80 {
                    check(&pos, 2);
                    let moves = pos.legal_moves();
                    if moves.is_empty() {
                        break;
                    }
                    pos.apply(&moves[rng.below(moves.len())]);
                }
            }
        }
    }

    #[test]
    fn agrees_with_the_general_generator_on_random_boards_with_kings() {
        let mut rng = Rng(0x2545_f491_4f6c_dd1d);
        for v in FAST {
            let rules = v.rules();
            let g = v.geometry();
            let mut with_capture = 0;
            for i in 0..1500 {
                let mut setup = Setup::empty(
                    v,
                    if i % 2 == 0 {
                        Color::White
                    } else {
                        Color::Black
                    },
                );
                let pieces = 4 + rng.below(g.len() / 2);
                for _ in 0..pieces {
                    let sq = g.order[rng.below(g.len())];
                    if (setup.white | setup.black) & sq.bit() != 0 {
                        continue;
                    }
                    let color = if rng.below(2) == 0 {
                        Color::White
                    } else {
                        Color::Black
                    };
                    let king = rng.below(3) == 0 || rules.promotion_rank(color) & sq.bit() != 0;
                    *setup.pieces_mut(color) |= sq.bit();
                    if king {
                        setup.kings |= sq.bit();
                    }
                }
                let pos = Position::from_setup(&setup).expect("a legal setup");
                with_capture += usize::from(pos.has_capture());
                check(&pos, 3);
            }
            assert!(
                with_capture > 300,
                "{v}: only {with_capture} boards with a capture"
            );
        }
    }
}
