//! The `cursor` of a `WatchEvent` stream: where the stream stands for every game on it,
//! in one opaque string that a display gives back as `from_cursor` to resume exactly
//! after the last message it received.
//!
//! A cursor lists the stream's games, each as a 32-bit hash of its id and the last seq
//! the stream sent of it, behind a version byte and a 32-bit hash of the stream's event
//! and round:
//!
//! `base64url(2, fnv32(event NUL round) LE, varint n, n × (fnv32(id) LE, varint seq))`
//!
//! About 5–6 bytes a game (a round of 100 boards: a cursor of about 680 characters),
//! where the game ids themselves would take 10–64. Resuming matches each game listed now
//! to the entry with its id's hash ([`Cursor::resume`]), whatever the order: a stream
//! keeps its games in the order they joined it, which is not always the order of
//! creation that a listing gives (two games created in the same millisecond, or a
//! creation whose write finished after a later one's). A game not in the cursor (created
//! after it was made) starts from its beginning; an entry whose game is no longer listed
//! is left unused. Two games of the cursor with the same hash (one chance in about 2^32
//! per pair) take their entries in list order.
//!
//! Version 1 cursors (16-bit id hashes, matched in list order: games that joined out of
//! creation order resumed from their beginning) are still read, and matched by hash as
//! version 2 ones are.
//!
//! The hashes are FNV-1a, computed here (they must stay the same across server versions
//! and builds, which `std`'s hasher does not promise).

use std::collections::{HashMap, VecDeque};

use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;

/// The cursor's form; a cursor of another form (but [`VERSION_16`]) is refused.
const VERSION: u8 = 2;

/// The earlier form, with 16-bit id hashes.
const VERSION_16: u8 = 1;

/// What a cursor says: the stream it belongs to and, per game in stream order, the id
/// hash and the last seq sent.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Cursor {
    stream: u32,
    /// The ids' hashes are 32-bit ([`VERSION`]), not 16-bit ([`VERSION_16`]).
    wide: bool,
    entries: Vec<(u32, u64)>,
}

/// Why a cursor was refused (the message names the field).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BadCursor(pub &'static str);

impl std::fmt::Display for BadCursor {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.0)
    }
}

impl Cursor {
    /// The cursor of a stream of `event` / `round` (empty: every round) whose games, in
    /// stream order, stand at `games` (id, last seq sent; 0 before any).
    pub fn encode<'a>(
        event: &str,
        round: &str,
        games: impl ExactSizeIterator<Item = (&'a str, u64)>,
    ) -> String {
        Cursor::encode_hashed(
            stream_hash(event, round),
            games.map(|(id, seq)| (id_hash(id), seq)),
        )
    }

    /// [`Cursor::encode`] from the hashes ([`Cursor::stream_hash`], [`Cursor::id_hash`]),
    /// which a stream computes once rather than at every message.
    pub fn encode_hashed(stream: u32, games: impl ExactSizeIterator<Item = (u32, u64)>) -> String {
        let mut bytes = Vec::with_capacity(8 + games.len() * 6);
        bytes.push(VERSION);
        bytes.extend_from_slice(&stream.to_le_bytes());
        varint(&mut bytes, games.len() as u64);
        for (h, seq) in games {
            bytes.extend_from_slice(&h.to_le_bytes());
            varint(&mut bytes, seq);
        }
        URL_SAFE_NO_PAD.encode(bytes)
    }

    /// The hash of a stream's event and round in its cursors.
    pub fn stream_hash(event: &str, round: &str) -> u32 {
        stream_hash(event, round)
    }

    /// The hash of a game id in cursors.
    pub fn id_hash(id: &str) -> u32 {
        id_hash(id)
    }

    /// Reads a cursor made for a stream of `event` / `round`, of at most `max_games`
    /// games.
    ///
    /// # Errors
    /// Not a cursor of this form, or one made for another event or round.
    pub fn decode(
        text: &str,
        event: &str,
        round: &str,
        max_games: usize,
    ) -> Result<Cursor, BadCursor> {
        const NOT_OURS: BadCursor = BadCursor("not a cursor of a WatchEvent stream of this server");
        let bytes = URL_SAFE_NO_PAD.decode(text).map_err(|_| NOT_OURS)?;
        let mut at = bytes.as_slice();
        let (&version, rest) = at.split_first().ok_or(NOT_OURS)?;
        let wide = match version {
            VERSION => true,
            VERSION_16 => false,
            _ => return Err(NOT_OURS),
        };
        let (stream, rest) = rest.split_first_chunk::<4>().ok_or(NOT_OURS)?;
        let stream = u32::from_le_bytes(*stream);
        at = rest;
        if stream != stream_hash(event, round) {
            return Err(BadCursor(
                "made for another event or round (give the event and round the stream had)",
            ));
        }
        let n = read_varint(&mut at).ok_or(NOT_OURS)?;
        if n > max_games as u64 {
            return Err(BadCursor("more games than a stream may have"));
        }
        let mut entries = Vec::with_capacity(n as usize);
        for _ in 0..n {
            let h = if wide {
                let (h, rest) = at.split_first_chunk::<4>().ok_or(NOT_OURS)?;
                at = rest;
                u32::from_le_bytes(*h)
            } else {
                let (h, rest) = at.split_first_chunk::<2>().ok_or(NOT_OURS)?;
                at = rest;
                u32::from(u16::from_le_bytes(*h))
            };
            let seq = read_varint(&mut at).ok_or(NOT_OURS)?;
            entries.push((h, seq));
        }
        if !at.is_empty() {
            return Err(NOT_OURS);
        }
        Ok(Cursor {
            stream,
            wide,
            entries,
        })
    }

    /// For each of `ids` (the games listed now), the seq to resume after: the entry with
    /// its id's hash, whatever the order (see the module), or 0 for a game the cursor
    /// does not know.
    pub fn resume<'a>(&self, ids: impl IntoIterator<Item = &'a str>) -> Vec<u64> {
        let mut by_hash: HashMap<u32, VecDeque<u64>> = HashMap::with_capacity(self.entries.len());
        for &(h, seq) in &self.entries {
            by_hash.entry(h).or_default().push_back(seq);
        }
        ids.into_iter()
            .map(|id| {
                let h = if self.wide {
                    id_hash(id)
                } else {
                    u32::from(id_hash_16(id))
                };
                by_hash
                    .get_mut(&h)
                    .and_then(VecDeque::pop_front)
                    .unwrap_or(0)
            })
            .collect()
    }

    /// How many games the cursor covers.
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// Whether it covers no game.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }
}

fn fnv1a(parts: &[&[u8]]) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for part in parts {
        for b in *part {
            h ^= u64::from(*b);
            h = h.wrapping_mul(0x0000_0100_0000_01b3);
        }
    }
    h
}

fn stream_hash(event: &str, round: &str) -> u32 {
    let h = fnv1a(&[event.as_bytes(), b"\0", round.as_bytes()]);
    (h ^ (h >> 32)) as u32
}

fn id_hash(id: &str) -> u32 {
    let h = fnv1a(&[id.as_bytes()]);
    (h ^ (h >> 32)) as u32
}

/// A game id's hash in [`VERSION_16`] cursors.
fn id_hash_16(id: &str) -> u16 {
    let h = fnv1a(&[id.as_bytes()]);
    (h ^ (h >> 16) ^ (h >> 32) ^ (h >> 48)) as u16
}

fn varint(out: &mut Vec<u8>, mut v: u64) {
    while v >= 0x80 {
        out.push((v as u8) | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

fn read_varint(at: &mut &[u8]) -> Option<u64> {
    let mut v: u64 = 0;
    for shift in (0..64).step_by(7) {
        let (&b, rest) = at.split_first()?;
        *at = rest;
        let bits = u64::from(b & 0x7f);
        if shift == 63 && bits > 1 {
            return None;
        }
        v |= bits << shift;
        if b & 0x80 == 0 {
            return Some(v);
        }
    }
    None
}

/// A round stream's games in stream order (listed at the start by creation, then as
/// they joined) and the last seq sent of each: what its cursor says.
#[derive(Debug, Clone)]
pub(super) struct Standing {
    /// The cursor's hash of the event and round.
    stream: u32,
    /// The cursor's hash of each game's id, in stream order.
    hashes: Vec<u32>,
    seqs: Vec<u64>,
    index: HashMap<String, usize>,
}

impl Standing {
    /// No game yet, for the stream of `event` and `round` (empty: every round).
    pub(super) fn new(event: &str, round: &str) -> Standing {
        Standing {
            stream: Cursor::stream_hash(event, round),
            hashes: Vec::new(),
            seqs: Vec::new(),
            index: HashMap::new(),
        }
    }

    pub(super) fn has(&self, id: &str) -> bool {
        self.index.contains_key(id)
    }

    /// The index of a game in the order.
    pub(super) fn index_of(&self, id: &str) -> Option<usize> {
        self.index.get(id).copied()
    }

    /// The last seq of the game at `i`.
    pub(super) fn seq(&self, i: usize) -> u64 {
        self.seqs[i]
    }

    /// Sets the last seq of the game at `i`.
    pub(super) fn set(&mut self, i: usize, seq: u64) {
        self.seqs[i] = seq;
    }

    /// How many games.
    pub(super) fn len(&self) -> usize {
        self.seqs.len()
    }

    /// Adds a game at the end of the order; returns its index.
    pub(super) fn push(&mut self, id: &str, from: u64) -> usize {
        let i = self.hashes.len();
        self.hashes.push(Cursor::id_hash(id));
        self.seqs.push(from);
        self.index.insert(id.to_string(), i);
        i
    }

    pub(super) fn cursor(&self) -> String {
        Cursor::encode_hashed(
            self.stream,
            self.hashes.iter().copied().zip(self.seqs.iter().copied()),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn enc(games: &[(&str, u64)]) -> String {
        Cursor::encode("Open", "3", games.iter().copied())
    }

    #[test]
    fn round_trip_resumes_each_game_at_its_seq() {
        let c = enc(&[("g1", 7), ("g2", 0), ("g3", 300)]);
        let cur = Cursor::decode(&c, "Open", "3", 10).expect("ours");
        assert_eq!(cur.len(), 3);
        assert_eq!(cur.resume(["g1", "g2", "g3"]), vec![7, 0, 300]);
    }

    #[test]
    fn games_created_since_start_from_the_beginning() {
        let c = enc(&[("a", 5), ("b", 9)]);
        let cur = Cursor::decode(&c, "Open", "3", 10).expect("ours");
        assert_eq!(cur.resume(["a", "b", "c", "d"]), vec![5, 9, 0, 0]);
    }

    #[test]
    fn a_game_no_longer_listed_is_skipped() {
        let c = enc(&[("a", 5), ("b", 9), ("c", 2)]);
        let cur = Cursor::decode(&c, "Open", "3", 10).expect("ours");
        assert_eq!(cur.resume(["a", "c"]), vec![5, 2]);
    }

    #[test]
    fn another_stream_or_garbage_is_refused() {
        let c = enc(&[("a", 5)]);
        assert!(
            Cursor::decode(&c, "Open", "4", 10)
                .unwrap_err()
                .0
                .contains("another event or round")
        );
        assert!(Cursor::decode(&c, "Other", "3", 10).is_err());
        for bad in ["", "!!!", "AQ", &c[..c.len() - 1], &format!("{c}AA")] {
            assert!(Cursor::decode(bad, "Open", "3", 10).is_err(), "{bad:?}");
        }
        let many: Vec<(String, u64)> = (0..11).map(|i| (format!("g{i}"), 1)).collect();
        let c = Cursor::encode("Open", "3", many.iter().map(|(i, s)| (i.as_str(), *s)));
        assert_eq!(
            Cursor::decode(&c, "Open", "3", 10).unwrap_err().0,
            "more games than a stream may have"
        );
    }

    #[test]
    fn a_round_of_100_boards_is_under_700_characters() {
        let games: Vec<(String, u64)> = (0..100).map(|i| (format!("open-r3-b{i}"), 120)).collect();
        let c = Cursor::encode("Open", "3", games.iter().map(|(i, s)| (i.as_str(), *s)));
        assert!(c.len() < 700, "{}", c.len());
    }

    /// A stream keeps its games in the order they joined; a listing gives them by
    /// creation (millisecond, then id): "z" joined before "a", created in the same
    /// millisecond. Each still resumes at its own seq (version 1 walked the list in order
    /// and sent "z" again from its beginning).
    #[test]
    fn games_listed_in_another_order_resume_at_their_own_seqs() {
        let c = enc(&[("old", 4), ("z", 7), ("a", 3)]);
        let cur = Cursor::decode(&c, "Open", "3", 10).expect("ours");
        assert_eq!(cur.resume(["old", "a", "new", "z"]), vec![4, 3, 0, 7]);
    }

    /// Games whose ids share a hash take their entries in list order.
    #[test]
    fn games_with_the_same_hash_take_their_entries_in_order() {
        let cur = Cursor {
            stream: stream_hash("Open", "3"),
            wide: true,
            entries: vec![(id_hash("p"), 5), (id_hash("q"), 6), (id_hash("p"), 8)],
        };
        assert_eq!(cur.resume(["p", "q", "p"]), vec![5, 6, 8]);
    }

    /// A version 1 cursor (16-bit hashes) made before an upgrade still resumes, matched
    /// by hash too.
    #[test]
    fn a_version_1_cursor_still_resumes() {
        let mut bytes = vec![VERSION_16];
        bytes.extend_from_slice(&stream_hash("Open", "3").to_le_bytes());
        varint(&mut bytes, 2);
        for (id, seq) in [("z", 7), ("a", 3)] {
            bytes.extend_from_slice(&id_hash_16(id).to_le_bytes());
            varint(&mut bytes, seq);
        }
        let cur = Cursor::decode(&URL_SAFE_NO_PAD.encode(&bytes), "Open", "3", 10).expect("v1");
        assert_eq!(cur.resume(["a", "z", "b"]), vec![3, 7, 0]);
    }

    proptest! {
        #[test]
        fn any_text_decodes_or_is_refused(text in ".{0,200}") {
            let _ = Cursor::decode(&text, "Open", "3", 10_000);
        }

        #[test]
        fn any_bytes_decode_or_are_refused(bytes in proptest::collection::vec(any::<u8>(), 0..200)) {
            let _ = Cursor::decode(&URL_SAFE_NO_PAD.encode(&bytes), "Open", "3", 10_000);
        }

        #[test]
        fn encode_then_decode_is_the_identity(seqs in proptest::collection::vec(any::<u64>(), 0..50)) {
            let ids: Vec<String> = (0..seqs.len()).map(|i| format!("game-{i}")).collect();
            let c = Cursor::encode("E", "", ids.iter().map(String::as_str).zip(seqs.iter().copied()));
            let cur = Cursor::decode(&c, "E", "", 10_000).expect("ours");
            prop_assert_eq!(cur.resume(ids.iter().map(String::as_str)), seqs);
        }
    }
}
