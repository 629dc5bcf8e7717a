//! Legal move generation for every variant, driven by the [`Rules`] data.
//!
//! Captures are found by a depth-first search over landing squares. Captured pieces stay
//! on the board until the move is over (RU 1.5.7 / 1.5.12, "Turkish strike") where the
//! variant says so: they block, and cannot be jumped twice (RU 1.5.9). Where the variant
//! removes them at once (Turkish) their squares are free again for the rest of the
//! capture. The capturing piece has left its start square, so a capture may pass over or
//! end on it.
//!
//! A capture never turns 180° between two jumps. Turkish forbids it outright; wherever
//! captured pieces stay until the move is over it is impossible anyway (the piece just
//! jumped blocks the way back), so the rule is applied to every variant.
//!
//! Corners (ugolki) captures nothing: its moves are steps and chains of jumps over any
//! piece ([`crate::rules::Rules::hops`]), one move per (start, end) pair with a canonical
//! route (`generate_hops`). Its pieces have no capture directions and no kings, so the
//! capture search never finds anything for it.

use std::sync::LazyLock;

mod fast;

use super::geometry::{Direction, Geometry, NONE, Square};
use super::mv::{MAX_CAPTURES, Move};
use super::position::Position;
use super::variant::{CaptureChoice, KingRange, PromotionInCapture, Removal, Rules, Variant};
use super::{Bitboard, Color};

/// A variant's rules turned into the tables the generator reads.
pub(crate) struct Tables {
    pub(crate) g: &'static Geometry,
    pub(crate) rules: &'static Rules,
    promo: [Bitboard; 2],
    man_moves: [Vec<usize>; 2],
    man_caps: [Vec<usize>; 2],
    king_dirs: Vec<usize>,
    king_caps: Vec<usize>,
    /// Non-capturing jump directions (corners), in the order that visits landing squares
    /// by increasing bit index; empty in the capturing games.
    hops: Vec<usize>,
    flying: bool,
}

/// A direction as Black sees White's: forward becomes backward.
fn for_black(d: Direction) -> Direction {
    match d {
        Direction::UpLeft => Direction::DownLeft,
        Direction::UpRight => Direction::DownRight,
        Direction::DownLeft => Direction::UpLeft,
        Direction::DownRight => Direction::UpRight,
        Direction::Up => Direction::Down,
        Direction::Down => Direction::Up,
        other => other,
    }
}

impl Tables {
    fn build(variant: Variant) -> Tables {
        let rules = variant.rules();
        let dirs = |list: &[Direction], color: Color| -> Vec<usize> {
            list.iter()
                .map(|&d| match color {
                    Color::White => d.index(),
                    Color::Black => for_black(d).index(),
                })
                .collect()
        };
        Tables {
            g: rules.geometry(),
            rules,
            promo: [
                rules.promotion_rank(Color::White),
                rules.promotion_rank(Color::Black),
            ],
            man_moves: [
                dirs(rules.man_moves, Color::White),
                dirs(rules.man_moves, Color::Black),
            ],
            man_caps: [
                dirs(rules.man_captures, Color::White),
                dirs(rules.man_captures, Color::Black),
            ],
            king_dirs: rules.king_dirs.iter().map(|d| d.index()).collect(),
            king_caps: rules.king_captures.iter().map(|d| d.index()).collect(),
            hops: {
                let mut hops: Vec<usize> = rules.hops.iter().map(|d| d.index()).collect();
                // Up, left, right, down: the landing squares in increasing bit order
                // (rows from the top, files from the left), for the canonical route.
                hops.sort_by_key(|&d| match Direction::ALL[d] {
                    Direction::Up => 0,
                    Direction::Left => 1,
                    Direction::Right => 2,
                    _ => 3,
                });
                hops
            },
            flying: rules.king_range == KingRange::Flying,
        }
    }

    pub(crate) fn of(variant: Variant) -> &'static Tables {
        static ALL: LazyLock<Vec<Tables>> =
            LazyLock::new(|| Variant::ALL.iter().map(|&v| Tables::build(v)).collect());
        &ALL[variant as usize]
    }
}

/// Bit index increases when stepping in this direction (down or right). Holds on every
/// board: rows are laid out top to bottom and, within a row, left to right.
#[inline]
fn increasing(dir: usize) -> bool {
    matches!(dir, 2 | 3 | 5 | 7)
}

/// No direction yet (the first jump of a capture).
const NO_DIR: usize = 8;

/// The index of the opposite direction ([`Direction::opposite`]), and none for
/// [`NO_DIR`].
const OPPOSITE: [usize; 9] = [3, 2, 1, 0, 5, 4, 7, 6, NO_DIR];

/// The nearest set bit of `bits` along a ray in `dir`.
#[inline]
fn nearest(bits: Bitboard, dir: usize) -> u8 {
    if increasing(dir) {
        bits.trailing_zeros() as u8
    } else {
        63 - bits.leading_zeros() as u8
    }
}

struct CaptureSearch<'a> {
    t: &'a Tables,
    g: &'static Geometry,
    us: usize,
    promo: Bitboard,
    flying: bool,
    immediate: bool,
    men_take_kings: bool,
    enemy: Bitboard,
    enemy_kings: Bitboard,
    /// Pieces that block the capturing piece (its own start square excluded).
    occupied: Bitboard,
    from: u8,
    path: [u8; MAX_CAPTURES],
    order: [u8; MAX_CAPTURES],
    depth: usize,
    out: &'a mut Vec<Move>,
}

impl CaptureSearch<'_> {
    /// Whether the capturing piece may pass or land on `sq`. Captured pieces block until
    /// the move is over unless the variant removes them at once.
    #[inline]
    fn free(&self, sq: u8, captured: Bitboard) -> bool {
        if sq == NONE {
            return false;
        }
        let blockers = if self.immediate {
            self.occupied & !captured
        } else {
            self.occupied
        };
        blockers & (1u64 << sq) == 0
    }

    /// Whether the piece on `sq` may be jumped now (RU 1.5.9: not twice).
    #[inline]
    fn victim(&self, sq: u8, captured: Bitboard, king: bool) -> bool {
        let bit = 1u64 << sq;
        self.enemy & bit != 0
            && captured & bit == 0
            && (king || self.men_take_kings || self.enemy_kings & bit == 0)
    }

    /// The first capture from `sq` in `dir`: (victim, first landing), if any.
    #[inline]
    fn jump(&self, sq: u8, dir: usize, king: bool, captured: Bitboard) -> Option<(u8, u8)> {
        let g = self.g;
        let mut s = g.neighbour_raw(sq, dir);
        if king && self.flying {
            while self.free(s, captured) {
                s = g.neighbour_raw(s, dir);
            }
        }
        if s == NONE || !self.victim(s, captured, king) {
            return None;
        }
        let land = g.neighbour_raw(s, dir);
        self.free(land, captured).then_some((s, land))
    }

    fn dirs(&self, king: bool) -> &[usize] {
        if king {
            &self.t.king_caps
        } else {
            &self.t.man_caps[self.us]
        }
    }

    /// Whether any capture continues from `sq` after a jump in direction `last`.
    fn can_capture(&self, sq: u8, king: bool, captured: Bitboard, last: usize) -> bool {
        let back = OPPOSITE[last];
        self.dirs(king)
            .iter()
            .any(|&d| d != back && self.jump(sq, d, king, captured).is_some())
    }

    fn emit(&mut self, to: u8, promotes: bool, captured: Bitboard) {
        let mut path = self.path;
        path[self.depth - 1] = to;
        self.out.push(Move {
            from: self.from,
            landings: self.depth as u8,
            captures: self.depth as u8,
            promotes,
            captured_set: captured,
            path,
            order: self.order,
        });
    }

    /// Extends the capture from `sq`, reached by a jump in direction `last`; emits the
    /// finished moves.
    fn search(&mut self, sq: u8, king: bool, promoted: bool, captured: Bitboard, last: usize) {
        let g = self.g;
        let mut found = false;
        let back = OPPOSITE[last];
        let dirs: &[usize] = if king {
            &self.t.king_caps
        } else {
            &self.t.man_caps[self.us]
        };
        // Copy the (at most eight) directions so the search can borrow `self` mutably.
        let mut list = [0usize; 8];
        let n = dirs.len();
        list[..n].copy_from_slice(dirs);
        for &dir in &list[..n] {
            if dir == back {
                continue;
            }
            let Some((victim, first)) = self.jump(sq, dir, king, captured) else {
                continue;
            };
            found = true;
            let captured = captured | (1u64 << victim);
            if self.depth >= MAX_CAPTURES {
                continue;
            }
            self.order[self.depth] = victim;
            self.depth += 1;
            // The landing squares: one for a short piece, every free square beyond the
            // victim for a flying king (RU 1.5.2).
            let mut landings = [0u8; 16];
            let mut count = 0;
            let mut land = first;
            loop {
                landings[count] = land;
                count += 1;
                if !(king && self.flying) {
                    break;
                }
                land = g.neighbour_raw(land, dir);
                if !self.free(land, captured) || count == landings.len() {
                    break;
                }
            }
            // RU 1.5.6 decision: if the capture can go on from some landing square, the
            // king must land on one of those.
            let mut must = [false; 16];
            let mut any_must = false;
            if count > 1 {
                for i in 0..count {
                    must[i] = self.can_capture(landings[i], king, captured, dir);
                    any_must |= must[i];
                }
            }
            for i in 0..count {
                if any_must && !must[i] {
                    continue;
                }
                let land = landings[i];
                self.path[self.depth - 1] = land;
                let crowning = !king && self.promo & (1u64 << land) != 0;
                if crowning {
                    match self.t.rules.promotion_in_capture {
                        PromotionInCapture::ContinueAsKing => {
                            self.search(land, true, true, captured, dir);
                        }
                        PromotionInCapture::ContinueAsMan => {
                            self.search(land, false, promoted, captured, dir);
                        }
                        PromotionInCapture::EndsMove => self.emit(land, true, captured),
                    }
                } else {
                    self.search(land, king, promoted, captured, dir);
                }
            }
            self.depth -= 1;
        }
        if !found && self.depth > 0 {
            let crowned = !king && self.promo & (1u64 << sq) != 0;
            self.emit(sq, promoted || crowned, captured);
        }
    }
}

impl Position {
    /// Whether the side to move has a capture (and so must capture, RU 1.5.3).
    #[inline]
    pub fn has_capture(&self) -> bool {
        self.capturers() != 0
    }

    /// The pieces of the side to move that can capture something.
    fn capturers(&self) -> Bitboard {
        let t = Tables::of(self.variant);
        let us = self.turn.index();
        let occupied = self.occupied();
        let empty = t.g.valid & !occupied;
        let enemy = self.pieces[1 - us];
        let men_victims = if t.rules.men_capture_kings {
            enemy
        } else {
            enemy & !self.kings
        };
        // Step back from the empty landing squares over a victim to find the jumpers.
        let jumpers = |pieces: Bitboard, victims: Bitboard, dirs: &[usize]| {
            dirs.iter().fold(0, |acc, &d| {
                let back = Direction::ALL[d].opposite().index();
                acc | (t.g.step_all(t.g.step_all(empty, back) & victims, back) & pieces)
            })
        };
        let mut found = jumpers(self.men(self.turn), men_victims, &t.man_caps[us]);
        let kings = self.kings_of(self.turn);
        if kings == 0 {
            return found;
        }
        if !t.flying {
            return found | jumpers(kings, enemy, &t.king_caps);
        }
        let mut bits = kings;
        while bits != 0 {
            let k = bits.trailing_zeros() as u8;
            bits &= bits - 1;
            for &d in &t.king_caps {
                let blockers = t.g.ray(k, d) & occupied;
                if blockers == 0 {
                    continue;
                }
                let b = nearest(blockers, d);
                if enemy & (1u64 << b) != 0 {
                    let beyond = t.g.neighbour_raw(b, d);
                    if beyond != NONE && empty & (1u64 << beyond) != 0 {
                        found |= 1u64 << k;
                        break;
                    }
                }
            }
        }
        found
    }

    /// Appends every capture of the side to move to `out`, every path (no merging), after
    /// applying the variant's capture-choice rule.
    fn generate_captures(&self, capturers: Bitboard, out: &mut Vec<Move>) {
        let t = Tables::of(self.variant);
        let us = self.turn.index();
        let start = out.len();
        let mut bits = capturers;
        while bits != 0 {
            let from = bits.trailing_zeros() as u8;
            bits &= bits - 1;
            let king = self.kings & (1u64 << from) != 0;
            let mut search = CaptureSearch {
                t,
                g: t.g,
                us,
                promo: t.promo[us],
                flying: t.flying,
                immediate: t.rules.removal == Removal::Immediate,
                men_take_kings: t.rules.men_capture_kings,
                enemy: self.pieces[1 - us],
                enemy_kings: self.kings & self.pieces[1 - us],
                occupied: self.occupied() & !(1u64 << from),
                from,
                path: [0; MAX_CAPTURES],
                order: [0; MAX_CAPTURES],
                depth: 0,
                out: &mut *out,
            };
            search.search(from, king, false, 0, NO_DIR);
        }
        let enemy_kings = self.kings & self.pieces[1 - us];
        let rank: fn(&Move, Bitboard, Bitboard) -> u64 = match t.rules.capture_choice {
            CaptureChoice::Free => return,
            CaptureChoice::MaximumPieces => |m, _, _| u64::from(m.captures),
            CaptureChoice::Frisian => frisian_value,
            // The kings are those of the position before the move: a captured king is
            // still a king when the precedence is judged.
            CaptureChoice::Italian => return keep_italian_precedence(out, start, self.kings),
        };
        let best = out[start..]
            .iter()
            .map(|m| rank(m, enemy_kings, self.kings))
            .max()
            .unwrap_or(0);
        let mut i = start;
        while i < out.len() {
            if rank(&out[i], enemy_kings, self.kings) < best {
                out.swap_remove(i);
            } else {
                i += 1;
            }
        }
        out[start..].sort_unstable_by_key(|m| (m.from, m.path));
    }

    fn generate_quiet(&self, out: &mut Vec<Move>) {
        let t = Tables::of(self.variant);
        if !t.hops.is_empty() {
            self.generate_hops(t, out);
            return;
        }
        let us = self.turn.index();
        let occupied = self.occupied();
        let empty = t.g.valid & !occupied;
        let men = self.men(self.turn);
        for &d in &t.man_moves[us] {
            let mut targets = t.g.step_all(men, d) & empty;
            let back = Direction::ALL[d].opposite().index();
            while targets != 0 {
                let to = targets.trailing_zeros() as u8;
                targets &= targets - 1;
                let from = t.g.neighbour_raw(to, back);
                out.push(Move::quiet(from, to, t.promo[us] & (1u64 << to) != 0));
            }
        }
        let mut kings = self.kings_of(self.turn);
        while kings != 0 {
            let from = kings.trailing_zeros() as u8;
            kings &= kings - 1;
            for &d in &t.king_dirs {
                let mut s = t.g.neighbour_raw(from, d);
                while s != NONE && empty & (1u64 << s) != 0 {
                    out.push(Move::quiet(from, s, false));
                    if !t.flying {
                        break;
                    }
                    s = t.g.neighbour_raw(s, d);
                }
            }
        }
    }

    /// Appends the legal moves to `out`. With `distinct`, capture paths that share start,
    /// end and captured set are merged into one move (the arbiter's notion of a move);
    /// otherwise every path is kept.
    pub fn generate(&self, out: &mut Vec<Move>, distinct: bool) {
        let start = out.len();
        let capturers = self.capturers();
        if capturers != 0 {
            self.generate_captures(capturers, out);
            if distinct {
                dedup(out, start);
            }
        } else {
            self.generate_quiet(out);
        }
    }

    /// The legal moves, different paths to the same result merged.
    pub fn legal_moves(&self) -> Vec<Move> {
        let mut out = Vec::with_capacity(32);
        self.generate(&mut out, true);
        out
    }

    /// The legal moves with every capture path kept apart.
    pub fn legal_moves_all_paths(&self) -> Vec<Move> {
        let mut out = Vec::with_capacity(32);
        self.generate(&mut out, false);
        out
    }

    /// The number of legal moves, counted without building quiet moves.
    pub fn count_moves(&self, distinct: bool) -> u64 {
        self.count_moves_in(&mut Vec::new(), distinct)
    }

    /// [`Position::count_moves`] with a scratch buffer for captures (cleared first).
    pub fn count_moves_in(&self, scratch: &mut Vec<Move>, distinct: bool) -> u64 {
        let capturers = self.capturers();
        if capturers != 0 {
            scratch.clear();
            self.generate_captures(capturers, scratch);
            if distinct {
                dedup(scratch, 0);
            }
            return scratch.len() as u64;
        }
        let t = Tables::of(self.variant);
        if !t.hops.is_empty() {
            return self.count_hops(t, scratch);
        }
        let us = self.turn.index();
        let occupied = self.occupied();
        let empty = t.g.valid & !occupied;
        let men = self.men(self.turn);
        let mut n = 0u64;
        for &d in &t.man_moves[us] {
            n += (t.g.step_all(men, d) & empty).count_ones() as u64;
        }
        let kings = self.kings_of(self.turn);
        if kings != 0 {
            if t.flying {
                let mut bits = kings;
                while bits != 0 {
                    let k = bits.trailing_zeros() as u8;
                    bits &= bits - 1;
                    for &d in &t.king_dirs {
                        let ray = t.g.ray(k, d);
                        let blockers = ray & occupied;
                        n += if blockers == 0 {
                            ray.count_ones() as u64
                        } else {
                            let b = nearest(blockers, d);
                            (ray & !t.g.ray(b, d) & !(1u64 << b)).count_ones() as u64
                        };
                    }
                }
            } else {
                for &d in &t.king_dirs {
                    n += (t.g.step_all(kings, d) & empty).count_ones() as u64;
                }
            }
        }
        n
    }
}

impl Position {
    /// The moves of a hopping game (corners): for each piece of the side to move, a step
    /// to each free neighbouring square in the man's directions, and one move to every
    /// square a chain of jumps can reach (a jump goes over a piece of either colour on the
    /// neighbouring square to the free square behind it; see [`Rules::hops`]).
    ///
    /// Nothing is captured, so the resulting position depends only on the start and the
    /// end: each (start, end) pair is one move, listed once, whatever routes lead there.
    /// Its route is the canonical one: the fewest jumps, and among equally short routes
    /// the one whose landing squares, compared in turn, come first in bit order (ranks
    /// from the top, 8 to 1, files a to h within a rank). It is found by a breadth-first
    /// search that tries the directions in that order. A chain never lands twice on one
    /// square and never ends on its start square (no move); any square reachable with a
    /// revisit is reachable without one, so that rule does not change the set of moves.
    /// Out of line and marked cold so that the capturing games' generator keeps its code
    /// layout (the branch to it is never taken there).
    #[cold]
    #[inline(never)]
    fn generate_hops(&self, t: &Tables, out: &mut Vec<Move>) {
        let us = self.turn.index();
        let occupied = self.occupied();
        let mut pieces = self.pieces[us];
        while pieces != 0 {
            let from = pieces.trailing_zeros() as u8;
            pieces &= pieces - 1;
            for &d in &t.man_moves[us] {
                let to = t.g.neighbour_raw(from, d);
                if to != NONE && occupied & (1u64 << to) == 0 {
                    out.push(Move::quiet(from, to, false));
                }
            }
            // The moving piece has left its square: it neither blocks nor can be jumped.
            let others = occupied & !(1u64 << from);
            let mut parent = [NONE; 64];
            let mut depth = [0u8; 64];
            let mut queue = [0u8; 64];
            let (mut head, mut tail) = (0, 0);
            let mut seen = 1u64 << from;
            queue[tail] = from;
            tail += 1;
            while head < tail {
                let sq = queue[head];
                head += 1;
                for &d in &t.hops {
                    let over = t.g.neighbour_raw(sq, d);
                    if over == NONE || others & (1u64 << over) == 0 {
                        continue;
                    }
                    let land = t.g.neighbour_raw(over, d);
                    if land == NONE || (others | seen) & (1u64 << land) != 0 {
                        continue;
                    }
                    seen |= 1u64 << land;
                    parent[land as usize] = sq;
                    depth[land as usize] = depth[sq as usize] + 1;
                    queue[tail] = land;
                    tail += 1;
                }
            }
            for &to in &queue[1..tail] {
                let n = depth[to as usize] as usize;
                let mut path = [0u8; MAX_CAPTURES];
                let mut s = to;
                for i in (0..n).rev() {
                    path[i] = s;
                    s = parent[s as usize];
                }
                out.push(Move {
                    from,
                    landings: n as u8,
                    captures: 0,
                    promotes: false,
                    captured_set: 0,
                    path,
                    order: [0; MAX_CAPTURES],
                });
            }
        }
    }

    /// The number of moves of a hopping game ([`Position::generate_hops`]).
    #[cold]
    #[inline(never)]
    fn count_hops(&self, t: &Tables, scratch: &mut Vec<Move>) -> u64 {
        scratch.clear();
        self.generate_hops(t, scratch);
        scratch.len() as u64
    }

    /// Whether `landings` is a route a piece on `from` may take in a hopping game
    /// (corners): every landing one jump from the one before it over an occupied square to
    /// a free one, no square landed on twice, the start not landed on. The moving piece's
    /// own square counts as free once it has left.
    pub fn is_hop_route(&self, from: Square, landings: &[Square]) -> bool {
        let t = Tables::of(self.variant);
        let others = self.occupied() & !from.bit();
        let mut seen = from.bit();
        let mut at = from.0;
        for &land in landings {
            let ok = t.hops.iter().any(|&d| {
                let over = t.g.neighbour_raw(at, d);
                over != NONE && others & (1u64 << over) != 0 && t.g.neighbour_raw(over, d) == land.0
            });
            if !ok || (others | seen) & land.bit() != 0 {
                return false;
            }
            seen |= land.bit();
            at = land.0;
        }
        !landings.is_empty()
    }
}

/// The Italian precedence of a capture as a key that orders the preferred capture
/// highest (FID, "le 10 regole" 5–9): (1) the number of pieces taken; (2) taken by a king
/// rather than a man; (3) the number of kings taken; (4) the kings taken as early as
/// possible — the captured pieces read in capture order as bits (king 1, man 0), first
/// capture most significant, so that with equal length a larger number meets a king
/// earlier (and, that equal, the next king earlier). `kings` are the kings of the position
/// before the move.
fn italian_precedence(m: &Move, kings: Bitboard) -> (u8, bool, u32, u32) {
    let with_king = kings & (1u64 << m.from) != 0;
    let taken_kings = (m.captured_set & kings).count_ones();
    let order = m.order[..m.captures as usize]
        .iter()
        .fold(0u32, |acc, &sq| {
            (acc << 1) | u32::from(kings & (1u64 << sq) != 0)
        });
    (m.captures, with_king, taken_kings, order)
}

/// Keeps in `out[start..]` only the captures with the highest Italian precedence.
/// Out of line so that the other capture rules' code stays as it was.
#[inline(never)]
fn keep_italian_precedence(out: &mut Vec<Move>, start: usize, kings: Bitboard) {
    let key = |m: &Move| italian_precedence(m, kings);
    let best = out[start..].iter().map(key).max().unwrap_or_default();
    let mut i = start;
    while i < out.len() {
        if key(&out[i]) < best {
            out.swap_remove(i);
        } else {
            i += 1;
        }
    }
    out[start..].sort_unstable_by_key(|m| (m.from, m.path));
}

/// The Frisian precedence of a capture ([`CaptureChoice::Frisian`]): its value, a man
/// counting `N` and a king `2N - 1` (`N` = 64, more than any number of kings), times two,
/// plus one when a king makes the capture. `enemy_kings` are the opponent's kings before
/// the move, `kings` every king before the move.
fn frisian_value(m: &Move, enemy_kings: Bitboard, kings: Bitboard) -> u64 {
    let pieces = u64::from(m.captures);
    let taken_kings = u64::from((m.captured_set & enemy_kings).count_ones());
    let value = (pieces + taken_kings) * 64 - taken_kings;
    let with_king = u64::from(kings & (1u64 << m.from) != 0);
    value * 2 + with_king
}

/// Removes from `out[start..]` every move that repeats an earlier one's start, end and
/// captured set, keeping the first path found.
pub(crate) fn dedup(out: &mut Vec<Move>, start: usize) {
    let mut i = start;
    while i < out.len() {
        if out[start..i].iter().any(|m| m.same_move(&out[i])) {
            out.remove(i);
        } else {
            i += 1;
        }
    }
}

/// Counts the leaf nodes `depth` plies below `pos` (perft), with the last ply
/// bulk-counted. `distinct` merges capture paths with the same start, end and captured set.
///
/// The diagonal games with flying or short kings, captures removed after the move and a
/// free or most-pieces choice go through a faster generator of their own when
/// `distinct` (`fast.rs`); the others, and every count with `distinct` false, through
/// the general one.
pub fn perft(pos: &Position, depth: u32, distinct: bool) -> u64 {
    if distinct && fast::applies(pos) {
        return fast::perft(pos, depth);
    }
    perft_general(pos, depth, distinct)
}

/// [`perft`] by the general generator, whatever the variant.
fn perft_general(pos: &Position, depth: u32, distinct: bool) -> u64 {
    let mut buffers: Vec<Vec<Move>> = (0..=depth).map(|_| Vec::with_capacity(64)).collect();
    perft_inner(pos, depth, distinct, &mut buffers)
}

fn perft_inner(pos: &Position, depth: u32, distinct: bool, buffers: &mut [Vec<Move>]) -> u64 {
    match depth {
        0 => 1,
        1 => pos.count_moves_in(&mut buffers[0], distinct),
        _ => {
            let (moves, rest) = buffers.split_first_mut().expect("one buffer per ply");
            moves.clear();
            pos.generate(moves, distinct);
            let mut total = 0;
            for mv in moves.iter() {
                let mut next = *pos;
                next.apply(mv);
                total += perft_inner(&next, depth - 1, distinct, rest);
            }
            total
        }
    }
}
