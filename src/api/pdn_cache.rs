//! Each game's latest PDN export, shared by every caller: the text of a game up to a
//! seq is the same for all (the public sees a prefix of the log), so the relays following
//! a round cost one export per change of a game.

use std::sync::Arc;

/// The latest PDN text exported of each game, with the seq it goes up to.
#[derive(Debug, Default)]
pub(crate) struct PdnCache {
    games: std::sync::Mutex<std::collections::HashMap<String, (u64, Arc<str>)>>,
}

/// Games whose text [`PdnCache`] keeps; one more empties it (the next export of each
/// game fills it again).
const PDN_CACHE_GAMES: usize = 4096;

impl PdnCache {
    fn lock(
        &self,
    ) -> std::sync::MutexGuard<'_, std::collections::HashMap<String, (u64, Arc<str>)>> {
        self.games.lock().unwrap_or_else(|p| p.into_inner())
    }

    pub(super) fn get(&self, id: &str, last: u64) -> Option<Arc<str>> {
        self.lock()
            .get(id)
            .filter(|(seq, _)| *seq == last)
            .map(|(_, text)| text.clone())
    }

    pub(super) fn put(&self, id: &str, last: u64, text: Arc<str>) {
        let mut games = self.lock();
        if games.len() >= PDN_CACHE_GAMES && !games.contains_key(id) {
            games.clear();
        }
        // A newer text is never replaced by an older one a slower caller made.
        match games.get(id) {
            Some((seq, _)) if *seq > last => {}
            _ => {
                games.insert(id.to_string(), (last, text));
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_text_is_found_at_its_seq_only_and_never_replaced_by_an_older_one() {
        let cache = PdnCache::default();
        cache.put("g", 5, "five".into());
        assert_eq!(cache.get("g", 5).as_deref(), Some("five"));
        assert_eq!(cache.get("g", 6), None, "another seq is another text");
        cache.put("g", 4, "four".into());
        assert_eq!(
            cache.get("g", 5).as_deref(),
            Some("five"),
            "an older text is ignored"
        );
        cache.put("g", 6, "six".into());
        assert_eq!(cache.get("g", 6).as_deref(), Some("six"));
    }

    #[test]
    fn it_stays_within_its_size() {
        let cache = PdnCache::default();
        for i in 0..PDN_CACHE_GAMES + 10 {
            cache.put(&format!("g{i}"), 1, "x".into());
        }
        assert!(cache.lock().len() <= PDN_CACHE_GAMES);
        assert_eq!(
            cache
                .get(&format!("g{}", PDN_CACHE_GAMES + 9), 1)
                .as_deref(),
            Some("x")
        );
    }
}
