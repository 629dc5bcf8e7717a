//! Players and standings as the wire has them (`TournamentService` answers, the
//! standings on round streams): written once, for both.

use super::pb;
use crate::tournament::{Player, Tournament, standings};

/// A tournament's player on the wire.
pub(super) fn player_pb(p: &Player) -> pb::Player {
    pb::Player {
        name: p.entrant.name.clone(),
        fmjd_id: p.entrant.fmjd_id.clone(),
        federation: p.entrant.federation.clone(),
        rating: p.entrant.rating,
        title: p.entrant.title.clone(),
        pairing_number: p.pairing_number,
        player_id: p.id,
        withdrawn_from_round: p.withdrawn_from.unwrap_or(0),
    }
}

pub(super) fn player_of(t: &Tournament, id: u32) -> Option<pb::Player> {
    t.player(id).map(player_pb)
}

/// The standings after `round` (0: every result so far) of a tournament as the caller
/// sees it (`tournaments::seen_by`), as GetStandings answers.
pub(super) fn standings_pb(t: &Tournament, round: u32) -> pb::GetStandingsResponse {
    let s = t.standings(round);
    pb::GetStandingsResponse {
        round: s.round,
        tiebreak_names: s
            .tiebreaks
            .iter()
            .map(|t| standings::tiebreak_name(*t).to_string())
            .collect(),
        tiebreak_abbreviations: s
            .tiebreaks
            .iter()
            .map(|t| standings::tiebreak_abbreviation(*t).to_string())
            .collect(),
        rows: s
            .rows
            .iter()
            .map(|row| pb::StandingsRow {
                rank: row.rank,
                player: player_of(t, row.player),
                points: row.points,
                games: row.games,
                wins: row.wins,
                draws: row.draws,
                losses: row.losses,
                forfeits: row.forfeits,
                tiebreaks: row.tiebreaks.clone(),
            })
            .collect(),
    }
}
