//! Quarantine: a game whose stored log does not replay is set aside, not fatal.
//!
//! A log is checked row by row, in the order the judge would fold it: the rows' seqs must
//! be dense from 1, each payload must decode as an event carrying its row's seq, and the
//! judge must accept each event after the ones before it. The first row that fails is
//! the game's bad seq. The server keeps such a game out of the way of everyone else (every
//! other game starts and serves); `draughts-arbiter check` runs the same check offline.

use serde::{Deserialize, Serialize};

use crate::game::{GameEvent, Session};
use crate::store::StoredEvent;

/// Why a game's log does not replay, and where.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Quarantine {
    /// The first seq that does not replay (for a gap: the seq that is missing).
    pub seq: u64,
    /// What is wrong there.
    pub reason: String,
}

impl std::fmt::Display for Quarantine {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "seq {}: {}", self.seq, self.reason)
    }
}

/// Rebuilds a game from its stored rows, checking each one (see the module's comment).
/// An empty log is refused with seq 1 (the caller decides whether a game without events
/// exists at all).
///
/// # Errors
/// The first row that does not replay, with its seq and why.
pub fn verify_log(rows: &[StoredEvent]) -> Result<(Session, Vec<GameEvent>), Quarantine> {
    let mut events: Vec<GameEvent> = Vec::with_capacity(rows.len());
    let mut session: Option<Session> = None;
    for (expected, row) in (1u64..).zip(rows) {
        if row.seq != expected {
            return Err(Quarantine {
                seq: expected,
                reason: format!(
                    "seq gap: event {expected} is missing (the next row is seq {})",
                    row.seq
                ),
            });
        }
        let event: GameEvent = serde_json::from_slice(&row.payload).map_err(|e| Quarantine {
            seq: row.seq,
            reason: format!("undecodable event: {e}"),
        })?;
        if event.seq != row.seq {
            return Err(Quarantine {
                seq: row.seq,
                reason: format!("the row's event says seq {}", event.seq),
            });
        }
        let applied = match session.as_mut() {
            None => Session::replay(std::slice::from_ref(&event)).map(|s| session = Some(s)),
            Some(s) => s.apply(&event),
        };
        applied.map_err(|e| Quarantine {
            seq: e.seq,
            reason: format!("the judge refuses it: {}", e.message),
        })?;
        events.push(event);
    }
    match session {
        Some(s) => Ok((s, events)),
        None => Err(Quarantine {
            seq: 1,
            reason: "no events: the game's creation was never recorded".into(),
        }),
    }
}

/// A game whose row says `finished` but whose log replays to no result: the log's last
/// rows are missing (never written that way: the row is written with the event that
/// finishes the game), so its log is not all there.
#[must_use]
pub fn unfinished_log(finished: bool, session: &Session) -> Option<Quarantine> {
    (finished && session.result().is_none()).then(|| Quarantine {
        seq: session.last_seq() + 1,
        reason: format!(
            "its row says finished but its log ends at seq {} without a result: rows \
             missing (a damaged index? draughts-arbiter check)",
            session.last_seq()
        ),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::game::{Actor, Command, GameSettings, Now};
    use crate::rules::Variant;

    fn rows(events: &[GameEvent]) -> Vec<StoredEvent> {
        events
            .iter()
            .map(|e| StoredEvent {
                game_id: "g".into(),
                seq: e.seq,
                payload: serde_json::to_vec(e).expect("encode"),
                written_at_ms: 0,
            })
            .collect()
    }

    fn now(ms: u64) -> Now {
        Now {
            mono_ms: ms,
            wall: chrono::DateTime::from_timestamp_millis(1_700_000_000_000 + ms as i64)
                .expect("a wall time"),
        }
    }

    /// A short game's events: created, started, two moves.
    fn log() -> Vec<GameEvent> {
        let actor = Actor::Arbiter("a".into());
        let (mut s, first) = Session::create(
            GameSettings::new(Variant::Russian),
            None,
            actor.clone(),
            now(0),
        )
        .expect("create");
        let mut events = vec![first];
        for (i, cmd) in [
            Command::Start,
            Command::SubmitMove {
                side: crate::rules::Color::White,
                notation: "c3-d4".into(),
                offer_draw: false,
            },
            Command::SubmitMove {
                side: crate::rules::Color::Black,
                notation: "b6-a5".into(),
                offer_draw: false,
            },
        ]
        .into_iter()
        .enumerate()
        {
            let d = s
                .handled(&actor, cmd, now(10 + i as u64))
                .expect("accepted");
            events.extend(d.events);
            s = d.session;
        }
        events
    }

    #[test]
    fn a_good_log_replays() {
        let events = log();
        let (s, back) = verify_log(&rows(&events)).expect("replays");
        assert_eq!(back, events);
        assert_eq!(s.last_seq(), events.len() as u64);
    }

    #[test]
    fn an_undecodable_row_is_named() {
        let mut r = rows(&log());
        r[2].payload = b"{not json".to_vec();
        let q = verify_log(&r).expect_err("corrupt");
        assert_eq!(q.seq, 3);
        assert!(q.reason.contains("undecodable"), "{q}");
    }

    #[test]
    fn a_gap_names_the_missing_seq() {
        let mut r = rows(&log());
        r.remove(1);
        let q = verify_log(&r).expect_err("gap");
        assert_eq!(q.seq, 2);
        assert!(q.reason.contains("gap"), "{q}");
    }

    #[test]
    fn an_event_the_judge_refuses_is_named() {
        let mut events = log();
        // White's move again where Black is to move.
        let n = events.len();
        let white = events
            .iter()
            .position(|e| matches!(e.kind, crate::game::EventKind::MovePlayed { .. }))
            .expect("a move");
        events[n - 1] = GameEvent {
            seq: events[n - 1].seq,
            ..events[white].clone()
        };
        let q = verify_log(&rows(&events)).expect_err("refused");
        assert_eq!(q.seq, n as u64, "{q}");
        assert!(q.reason.contains("judge"), "{q}");
    }

    #[test]
    fn an_empty_log_is_refused() {
        assert_eq!(verify_log(&[]).expect_err("empty").seq, 1);
    }
}
