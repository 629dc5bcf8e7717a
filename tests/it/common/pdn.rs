//! Every PDN export the test suite makes must replay: [`replays`] reads the text, checks
//! every record with the library function behind `draughts-arbiter replay`, and returns
//! the position the last record ends in.

use draughts_arbiter::notation::pdn::read_games;
use draughts_arbiter::notation::replay::replay_record;
use draughts_arbiter::notation::write_fen;
use draughts_arbiter::rules::Variant;

/// Replays every record of `pdn` (the variant from its `GameType` tag, else
/// `variant`, as `replay --variant` would) and returns the FEN the last record ends
/// in. Panics, showing the text, if a record is unreadable or does not replay, or if a
/// `GameType` tag names another variant.
pub fn replays(pdn: &str, variant: Variant) -> String {
    let games = read_games(pdn);
    assert!(!games.is_empty(), "no game in the export:\n{pdn}");
    let mut last = None;
    for (i, game) in games.iter().enumerate() {
        let game = game
            .as_ref()
            .unwrap_or_else(|e| panic!("record {}: unreadable: {e}\n{pdn}", i + 1));
        if let Some(n) = game.game_type() {
            assert_eq!(
                Variant::from_game_type(n),
                Some(variant),
                "record {}: GameType {n}\n{pdn}",
                i + 1
            );
        }
        let forced = game.game_type().is_none().then_some(variant);
        let replay =
            replay_record(game, forced).unwrap_or_else(|e| panic!("record {}: {e}\n{pdn}", i + 1));
        last = Some(write_fen(replay.game.position()));
    }
    last.expect("a record")
}
