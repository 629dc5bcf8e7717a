//! The standings a round feed carries (issue 41): on a tournament's event, a
//! `standings_updated` message once a stream has caught up and whenever a result changes
//! them, as the feed's audience may see them.
//!
//! One tracker per feed, not per stream: the feed reads the tournament again when one of
//! its games finishes, when the tournament records something (a forfeit, a withdrawal, a
//! round paired, an arbiter's correction taken in), and, for the public of a delayed
//! event, when a result held back becomes public; it publishes the standings only when
//! they differ from the last ones it published.

use std::collections::HashSet;
use std::sync::Arc;

use tonic::{Code, Status};

use super::convert::ts;
use super::error::tournament_status;
use super::pb;
use super::ranking::standings_pb;
use crate::hub::{Audience, Tournaments};
use crate::tournament::{Tournament, event_key};

/// Rows a standings message's `description` names before it says "…".
const DESCRIBED_ROWS: usize = 8;

/// The standings of one feed's tournament.
pub(super) struct Tracker {
    tournaments: Arc<Tournaments>,
    /// The tournament's key (what its change notices carry).
    key: Arc<str>,
    audience: Audience,
    /// The last standings published, and whether they said the tournament was over.
    last: Option<(pb::GetStandingsResponse, bool)>,
    /// When (wall ms) the next result held back from the feed's audience becomes visible.
    next_reveal: Option<i64>,
    /// The games whose results the feed's streams may show: those decided when the
    /// tracker started and those whose final event the feed has published since. A
    /// result the tournament took in (an arbiter's declaration is read at once) before
    /// the game's final event reached the feed waits for that event.
    shown: HashSet<String>,
}

impl Tracker {
    /// The tracker of `event`'s standings for `audience`, if the event is a tournament's
    /// (its name exactly; a tournament found by key under another name is not this
    /// event's games).
    ///
    /// # Errors
    /// The store failing as the tournament is read.
    pub(super) async fn start(
        tournaments: Arc<Tournaments>,
        event: &str,
        audience: Audience,
    ) -> Result<Option<Tracker>, Status> {
        let key = event_key(event.trim());
        match tournaments.get(&key).await {
            Ok(t) if t.config().is_some_and(|c| c.name == event) => {
                let shown = t
                    .rounds()
                    .iter()
                    .flat_map(|r| r.games())
                    .filter(|g| !g.results.is_empty())
                    .map(|g| g.game_id.clone())
                    .collect();
                Ok(Some(Tracker {
                    tournaments,
                    key: key.into(),
                    audience,
                    last: None,
                    next_reveal: None,
                    shown,
                }))
            }
            Ok(_) => Ok(None),
            Err(e) => {
                let s = tournament_status(&e);
                if s.code() == Code::NotFound {
                    Ok(None)
                } else {
                    Err(s)
                }
            }
        }
    }

    /// The key of the tournament (as its change notices name it).
    pub(super) fn key(&self) -> &str {
        &self.key
    }

    /// The feed published the final event of `game_id`: its result may show.
    pub(super) fn result_shown(&mut self, game_id: &str) {
        self.shown.insert(game_id.to_string());
    }

    /// When (wall ms) a result held back from the audience becomes visible, if one is.
    pub(super) fn next_reveal(&self) -> Option<i64> {
        self.next_reveal
    }

    /// Whether the last standings said the tournament was over.
    pub(super) fn finished(&self) -> bool {
        self.last.as_ref().is_some_and(|(_, over)| *over)
    }

    /// Reads the tournament again and returns the standings message if they changed
    /// since the last one (the first read always gives one). The public sees the
    /// tournament as it was the event's delay before `now_ms`; after a game's final
    /// event recorded at `result_ms` (the feed publishing it to the public now), at
    /// least as it was then: that result counts, whatever the wall clock says of the
    /// delay.
    ///
    /// # Errors
    /// The store or a game failing as the tournament takes its results in.
    /// The results of the feed's games (`on_feed`) whose final event it has not published
    /// yet are left out.
    pub(super) async fn update(
        &mut self,
        now_ms: i64,
        result_ms: Option<i64>,
        on_feed: impl Fn(&str) -> bool,
    ) -> Result<Option<pb::GameEvent>, Status> {
        let full = self
            .tournaments
            .get(&self.key)
            .await
            .map_err(|e| tournament_status(&e))?
            .holding_back(|id| on_feed(id) && !self.shown.contains(id));
        let Some(config) = full.config() else {
            return Ok(None);
        };
        let name = config.name.clone();
        let delay = config.settings.broadcast_delay_ms;
        let (seen, reveal) = match self.audience {
            Audience::Live => (full, None),
            Audience::Public => {
                let delay_i = i64::try_from(delay).unwrap_or(i64::MAX);
                let at = result_ms.map_or(now_ms, |r| now_ms.max(r.saturating_add(delay_i)));
                let reveal = next_reveal(&full, at, delay);
                (full.as_seen(at, delay), reveal)
            }
        };
        self.next_reveal = reveal;
        let standings = standings_pb(&seen, 0);
        let over = seen.finished();
        if self
            .last
            .as_ref()
            .is_some_and(|(s, o)| *s == standings && *o == over)
        {
            return Ok(None);
        }
        let description = describe(&name, &standings, over);
        self.last = Some((standings.clone(), over));
        Ok(Some(pb::GameEvent {
            server_time: ts(now_ms),
            description,
            kind: Some(pb::game_event::Kind::StandingsUpdated(
                pb::StandingsUpdated {
                    tournament: name,
                    standings: Some(standings),
                    finished: over,
                },
            )),
            ..pb::GameEvent::default()
        }))
    }
}

/// The first instant after `at_ms` at which a result of `t` decided `delay_ms` earlier
/// becomes visible to the public, if any is still held back.
fn next_reveal(t: &Tournament, at_ms: i64, delay_ms: u64) -> Option<i64> {
    if delay_ms == 0 {
        return None;
    }
    let delay = i64::try_from(delay_ms).unwrap_or(i64::MAX);
    t.rounds()
        .iter()
        .flat_map(|r| r.games())
        .flat_map(|g| g.results.iter())
        .map(|d| d.at_ms.saturating_add(delay))
        .filter(|&visible| visible > at_ms)
        .min()
}

/// The standings in words, for an operator's log: `standings of E after round 2 (T 7,
/// T 8): 1. Ivanov 4, 2= Petrov 3, 2= Sidorov 3, …`.
fn describe(name: &str, s: &pb::GetStandingsResponse, over: bool) -> String {
    let mut rows = Vec::new();
    for (i, row) in s.rows.iter().enumerate() {
        if i == DESCRIBED_ROWS {
            rows.push("…".to_string());
            break;
        }
        let shared = s.rows.iter().filter(|r| r.rank == row.rank).count() > 1;
        let player = row.player.as_ref().map_or("?", |p| p.name.as_str());
        rows.push(format!(
            "{}{} {player} {}",
            row.rank,
            if shared { "=" } else { "." },
            row.points
        ));
    }
    let when = match (over, s.round) {
        (true, r) => format!("final, after round {r}"),
        (false, 0) => "before the first round".to_string(),
        (false, r) => format!("after round {r}"),
    };
    format!(
        "standings of {name} {when} (T 7, T 8): {}",
        if rows.is_empty() {
            "no players yet".to_string()
        } else {
            rows.join(", ")
        }
    )
}
