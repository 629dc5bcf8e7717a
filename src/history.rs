//! An append-only record shared between copies: the growing parts of a game (positions,
//! moves, the score sheet, warnings, the clock's per-move times).
//!
//! The judge decides every command on a copy of the session and keeps the original until
//! the events are recorded (`game::Session::handled`), so a copy must not cost more as the
//! game grows. A [`History`] is full chunks of [`CHUNK`] items, frozen and shared
//! (`Arc`), plus a short tail of its own: copying one copies at most [`CHUNK`] items and
//! one pointer, whatever its length; appending copies the list of chunk pointers once
//! every [`CHUNK`] appends, and only while another copy shares it.
//!
//! Only appending, the last item and clearing change it; equality, hashing, `Debug` and
//! serde see the items in order, as for a `Vec`.

use std::fmt;
use std::hash::{Hash, Hasher};
use std::ops::Index;
use std::sync::Arc;

use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// Items per frozen chunk (and the most a tail holds).
pub const CHUNK: usize = 8;

/// An append-only sequence whose copies share their frozen chunks (see the module).
pub struct History<T> {
    /// Full chunks, each exactly [`CHUNK`] items, oldest first.
    chunks: Arc<Vec<Arc<[T]>>>,
    /// The newest items: never empty unless the whole history is (a full tail is frozen
    /// only when the next item comes, so the last item is always here and
    /// [`History::last_mut`] never writes into a shared chunk).
    tail: Vec<T>,
}

impl<T> History<T> {
    /// An empty history.
    pub fn new() -> History<T> {
        History {
            chunks: Arc::new(Vec::new()),
            tail: Vec::new(),
        }
    }

    /// The number of items.
    pub fn len(&self) -> usize {
        self.chunks.len() * CHUNK + self.tail.len()
    }

    /// Whether there is no item.
    pub fn is_empty(&self) -> bool {
        self.tail.is_empty()
    }

    /// The item at `index`, oldest first.
    pub fn get(&self, index: usize) -> Option<&T> {
        let frozen = self.chunks.len() * CHUNK;
        if index < frozen {
            Some(&self.chunks[index / CHUNK][index % CHUNK])
        } else {
            self.tail.get(index - frozen)
        }
    }

    /// The first item.
    pub fn first(&self) -> Option<&T> {
        self.get(0)
    }

    /// The last item.
    pub fn last(&self) -> Option<&T> {
        self.tail.last()
    }

    /// The last item, to complete it (a move's clock readings come after the move).
    pub fn last_mut(&mut self) -> Option<&mut T> {
        self.tail.last_mut()
    }

    /// The items, oldest first (reversible).
    pub fn iter(&self) -> impl DoubleEndedIterator<Item = &T> + '_ {
        self.chunks
            .iter()
            .flat_map(|c| c.iter())
            .chain(self.tail.iter())
    }

    /// Removes every item.
    pub fn clear(&mut self) {
        self.chunks = Arc::new(Vec::new());
        self.tail.clear();
    }

    /// Appends an item.
    pub fn push(&mut self, item: T) {
        if self.tail.len() == CHUNK {
            let full: Arc<[T]> =
                std::mem::replace(&mut self.tail, Vec::with_capacity(CHUNK)).into();
            // Copies the chunk pointers (not the items) when another copy shares them.
            Arc::make_mut(&mut self.chunks).push(full);
        }
        self.tail.push(item);
    }
}

impl<T> Default for History<T> {
    fn default() -> History<T> {
        History::new()
    }
}

impl<T: Clone> Clone for History<T> {
    fn clone(&self) -> History<T> {
        // The tail gets its chunk's whole room: a clone is what a command appends to, and
        // a tail cloned to its length reallocated at the next push.
        let mut tail = Vec::new();
        if !self.tail.is_empty() {
            tail.reserve_exact(CHUNK);
            tail.extend_from_slice(&self.tail);
        }
        History {
            chunks: Arc::clone(&self.chunks),
            tail,
        }
    }
}

impl<T: fmt::Debug> fmt::Debug for History<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_list().entries(self.iter()).finish()
    }
}

impl<T: PartialEq> PartialEq for History<T> {
    fn eq(&self, other: &History<T>) -> bool {
        self.len() == other.len() && self.iter().eq(other.iter())
    }
}

impl<T: Eq> Eq for History<T> {}

impl<T: PartialEq> PartialEq<[T]> for History<T> {
    fn eq(&self, other: &[T]) -> bool {
        self.len() == other.len() && self.iter().eq(other.iter())
    }
}

impl<T: PartialEq, const N: usize> PartialEq<[T; N]> for History<T> {
    fn eq(&self, other: &[T; N]) -> bool {
        self == other.as_slice()
    }
}

impl<T: Hash> Hash for History<T> {
    fn hash<H: Hasher>(&self, state: &mut H) {
        state.write_usize(self.len());
        for item in self.iter() {
            item.hash(state);
        }
    }
}

impl<T> Index<usize> for History<T> {
    type Output = T;

    fn index(&self, index: usize) -> &T {
        self.get(index).expect("history index out of range")
    }
}

impl<'a, T> IntoIterator for &'a History<T> {
    type Item = &'a T;
    type IntoIter = Box<dyn DoubleEndedIterator<Item = &'a T> + 'a>;

    fn into_iter(self) -> Self::IntoIter {
        Box::new(self.iter())
    }
}

impl<T> FromIterator<T> for History<T> {
    fn from_iter<I: IntoIterator<Item = T>>(iter: I) -> History<T> {
        let mut h = History::new();
        for item in iter {
            h.push(item);
        }
        h
    }
}

impl<T: Serialize> Serialize for History<T> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_seq(self.iter())
    }
}

impl<'de, T: Deserialize<'de>> Deserialize<'de> for History<T> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<History<T>, D::Error> {
        Ok(Vec::<T>::deserialize(deserializer)?.into_iter().collect())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn copies_share_chunks_and_see_their_own_appends() {
        let mut a: History<u32> = (0..20).collect();
        let b = a.clone();
        a.push(20);
        assert_eq!(a.len(), 21);
        assert_eq!(b.len(), 20);
        assert!(a.iter().copied().eq(0..21));
        assert!(b.iter().copied().eq(0..20));
        assert!(b.iter().rev().copied().eq((0..20).rev()));
        assert_eq!(a[17], 17);
        assert_eq!(a.last(), Some(&20));
        assert_eq!(b.get(20), None);
        *a.last_mut().expect("not empty") = 99;
        assert_eq!(a.last(), Some(&99));
        assert_eq!(b.last(), Some(&19));
        assert_ne!(a, b);
        let c: History<u32> = b.iter().copied().collect();
        assert_eq!(b, c);
    }

    #[test]
    fn empty_and_cleared() {
        let mut h: History<u8> = History::new();
        assert!(h.is_empty());
        assert_eq!(h.last(), None);
        for i in 0..(CHUNK as u8 * 2) {
            h.push(i);
            assert!(!h.is_empty());
        }
        h.clear();
        assert!(h.is_empty());
        assert_eq!(h, [0u8; 0]);
    }
}
