//! PDN export of a game (BroadcastService.ExportPdn).

use crate::game::Session;
use crate::hub::GameMeta;
use crate::notation::pdn::{PdnGame, PdnMove, PdnResult, write_game};

/// The game as a PDN 3.0 record.
pub fn export(meta: &GameMeta, s: &Session) -> String {
    let mut g = PdnGame::default();
    let v = s.variant();
    g.set_tag("Event", &meta.event);
    g.set_tag("Round", &meta.round);
    g.set_tag("White", &meta.white.name);
    g.set_tag("Black", &meta.black.name);
    let result = s.result().map(|r| match r.outcome {
        crate::game::Outcome::WhiteWins => PdnResult::WhiteWins,
        crate::game::Outcome::BlackWins => PdnResult::BlackWins,
        crate::game::Outcome::Draw => PdnResult::Draw,
        crate::game::Outcome::DoubleForfeit => PdnResult::DoubleForfeit,
        crate::game::Outcome::Annulled => PdnResult::Unknown,
    });
    g.set_tag("Result", result.unwrap_or(PdnResult::Unknown).as_str());
    if let Some(n) = v.game_type() {
        g.set_tag("GameType", &n.to_string());
    }
    let start = s.game().start();
    if *start != crate::rules::Position::start(v) {
        g.set_tag("SetUp", "1");
        g.set_tag("FEN", &crate::notation::write_fen(start));
    }
    g.moves = s
        .moves()
        .iter()
        .map(|m| PdnMove::new(&m.notation))
        .collect();
    let black_first = start.turn() == crate::rules::Color::Black;
    g.number_moves(1, black_first);
    g.result = Some(result.unwrap_or(PdnResult::Unknown));
    write_game(&g)
}
