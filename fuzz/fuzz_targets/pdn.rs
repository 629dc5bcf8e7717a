//! Reads arbitrary bytes as PDN. The reader must never panic, and every game
//! it reads must come back unchanged from `write_game` then `read_games`
//! (up to positions and the writer's order of tags), and write the same
//! text again.
//!
//! Run with `cargo +nightly fuzz run pdn` from the crate root.
#![no_main]

use draughts_arbiter::notation::pdn::{
    PdnGame, ordered_tags, read_games, read_games_bytes, write_game,
};
use libfuzzer_sys::fuzz_target;

/// The game as the writer orders it, without positions.
fn normalized(game: &PdnGame) -> PdnGame {
    let mut game = game.clone();
    game.clear_positions();
    game.tags = ordered_tags(&game.tags).into_iter().cloned().collect();
    game
}

fuzz_target!(|data: &[u8]| {
    for game in read_games_bytes(data).into_iter().flatten() {
        let text = write_game(&game);
        let mut back = read_games(&text);
        assert_eq!(
            back.len(),
            1,
            "one game written, {} read: {text:?}",
            back.len()
        );
        let back = match back.remove(0) {
            Ok(back) => back,
            Err(e) => panic!("written game does not read: {e}: {text:?}"),
        };
        assert_eq!(normalized(&back), normalized(&game), "{text:?}");
        assert_eq!(write_game(&back), text);
    }
});
