//! Bearer tokens and roles: who may do what to which game.
//!
//! | role | reads, watches, legal moves | creates games | acts on a game |
//! |---|---|---|---|
//! | `arbiter` (all, or one event) | yes | in its event | every RPC on games of its event |
//! | `board` (one game of one event) | yes | no | the board stream of its game |
//! | `player` (one side of one game of one event) | yes | no | moves, presses, offers, answers, claims, resignation for its side of its game |
//!
//! Board and player tokens name their event as well as their game: they act only on the
//! game of that id *in that event*, and a game id such a token names can only be created
//! in its event (an arbiter of another event cannot create it first and so capture the
//! token).
//! | `viewer` | yes | no | nothing |
//!
//! With no tokens configured the server runs open (everyone is a global arbiter) and
//! refuses to listen beyond loopback unless `--insecure` is given.

use std::collections::HashMap;
use std::fmt;

use serde::{Deserialize, Serialize};

use crate::game::{Actor, ArbiterId};
use crate::hub::{Audience, GameMeta};
use crate::rules::Color;

/// A token's role.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "role", rename_all = "snake_case")]
pub enum Role {
    /// An arbiter or organiser: every game, or the games of one event.
    Arbiter {
        /// The event (tournament name) it is limited to; all events if absent.
        #[serde(default)]
        event: Option<String>,
    },
    /// An electronic board bound to one game.
    Board {
        /// The game's event (tournament name).
        event: String,
        /// The game id.
        game: String,
    },
    /// A player: one side of one game.
    Player {
        /// The game's event (tournament name).
        event: String,
        /// The game id.
        game: String,
        /// The side.
        side: Color,
    },
    /// Read and watch only.
    Viewer,
}

/// What a request wants to do.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Action<'a> {
    /// Read a game, list games, watch streams, ask for legal moves.
    Read,
    /// Create a game in an event.
    Create {
        /// The event of the new game.
        event: &'a str,
    },
    /// Act as a player of `side` (move, press, offer, answer, claim, resign).
    Play {
        /// The game.
        game: &'a str,
        /// Its event.
        event: &'a str,
        /// The side acted for.
        side: Color,
    },
    /// Drive the board stream of a game.
    Board {
        /// The game.
        game: &'a str,
        /// Its event.
        event: &'a str,
    },
    /// Arbiter powers on a game (start, clocks, rulings, results, positions).
    Arbitrate {
        /// The game.
        game: &'a str,
        /// Its event.
        event: &'a str,
    },
}

/// A refusal: no token or an unknown one, or a role without the right.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum AuthError {
    /// No usable bearer token (gRPC `UNAUTHENTICATED`).
    Unauthenticated(&'static str),
    /// The role may not do this (gRPC `PERMISSION_DENIED`).
    Denied(String),
}

impl fmt::Display for AuthError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            AuthError::Unauthenticated(why) => f.write_str(why),
            AuthError::Denied(why) => f.write_str(why),
        }
    }
}

impl std::error::Error for AuthError {}

impl Role {
    /// Whether this role may perform `action`.
    ///
    /// # Errors
    /// [`AuthError::Denied`] saying why not.
    pub fn allows(&self, action: Action<'_>) -> Result<(), AuthError> {
        let in_event =
            |scope: &Option<String>, event: &str| scope.as_deref().is_none_or(|e| e == event);
        let ok = match (self, action) {
            (_, Action::Read) => true,
            (Role::Arbiter { event: scope }, Action::Create { event })
            | (Role::Arbiter { event: scope }, Action::Play { event, .. })
            | (Role::Arbiter { event: scope }, Action::Board { event, .. })
            | (Role::Arbiter { event: scope }, Action::Arbitrate { event, .. }) => {
                in_event(scope, event)
            }
            (
                Role::Board { event, game },
                Action::Board {
                    game: g, event: e, ..
                },
            ) => game == g && event == e,
            (
                Role::Player { event, game, side },
                Action::Play {
                    game: g,
                    event: e,
                    side: s,
                },
            ) => game == g && event == e && *side == s,
            _ => false,
        };
        if ok {
            Ok(())
        } else {
            Err(AuthError::Denied(format!(
                "{} may not {}",
                self.describe(),
                describe(action)
            )))
        }
    }

    /// Who the role is, for messages.
    pub(super) fn describe(&self) -> String {
        match self {
            Role::Arbiter { event: Some(e) } => format!("the arbiter of event '{e}'"),
            Role::Arbiter { event: None } => "an arbiter".into(),
            Role::Board { event, game } => format!("the board of game {game} of event '{event}'"),
            Role::Player { event, game, side } => {
                format!("the {side} player of game {game} of event '{event}'")
            }
            Role::Viewer => "a viewer".into(),
        }
    }
}

fn describe(action: Action<'_>) -> String {
    match action {
        Action::Read => "read".into(),
        Action::Create { event } => format!("create games in event '{event}'"),
        Action::Play { game, side, .. } => format!("act for {side} in game {game}"),
        Action::Board { game, .. } => format!("drive the board of game {game}"),
        Action::Arbitrate { game, .. } => format!("use arbiter powers in game {game}"),
    }
}

/// One configured token.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TokenConfig {
    /// The secret sent as `authorization: Bearer <token>`.
    pub token: String,
    /// Its label (`name = "Chief arbiter I. Petrov"`): an arbiter's rulings record it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// Its role.
    #[serde(flatten)]
    pub role: Role,
}

/// Who is calling: the token's role and its label.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Caller {
    /// What the token may do.
    pub role: Role,
    /// The token's label, if it has one (as configured: [`ArbiterId::named`] trims it).
    pub name: Option<String>,
}

impl Caller {
    /// A caller without a label.
    pub fn of(role: Role) -> Caller {
        Caller { role, name: None }
    }

    /// The actor an arbiter's command records: the token's scope and its label.
    pub fn arbiter(&self) -> Actor {
        let id = match &self.role {
            Role::Arbiter { event: Some(e) } => format!("arbiter:{e}"),
            Role::Arbiter { event: None } => "arbiter".into(),
            Role::Board { game, .. } => format!("board:{game}"),
            Role::Player { game, side, .. } => format!("{side}:{game}"),
            Role::Viewer => "viewer".into(),
        };
        Actor::Arbiter(ArbiterId::named(id, self.name.as_deref()))
    }
}

/// The token table.
#[derive(Debug, Clone, Default)]
pub struct Tokens {
    map: HashMap<String, Caller>,
}

impl Tokens {
    /// Builds the table; an empty list means open mode.
    pub fn new(list: &[TokenConfig]) -> Tokens {
        Tokens {
            map: list
                .iter()
                .map(|t| {
                    let caller = Caller {
                        role: t.role.clone(),
                        name: t.name.clone(),
                    };
                    (t.token.clone(), caller)
                })
                .collect(),
        }
    }

    /// The event that board or player tokens name for game id `game`, if any: the only
    /// event in which a game of that id may be created.
    pub fn reserved_event(&self, game: &str) -> Option<&str> {
        self.map.values().find_map(|c| match &c.role {
            Role::Board { event, game: g } | Role::Player { event, game: g, .. } if g == game => {
                Some(event.as_str())
            }
            _ => None,
        })
    }

    /// How many tokens there are.
    pub fn count(&self) -> usize {
        self.map.len()
    }

    /// How many of these tokens `other` lacks or gives another caller.
    pub fn changed_from(&self, other: &Tokens) -> usize {
        self.map
            .iter()
            .filter(|(token, caller)| other.map.get(*token) != Some(*caller))
            .count()
    }

    /// Whether no token is configured (open mode).
    pub fn is_open(&self) -> bool {
        self.map.is_empty()
    }

    /// The role of an `authorization` header value.
    ///
    /// # Errors
    /// [`AuthError::Unauthenticated`] when the header is missing, malformed or unknown.
    pub fn role(&self, header: Option<&str>) -> Result<Role, AuthError> {
        self.caller(header).map(|c| c.role)
    }

    /// The caller (role and label) of an `authorization` header value.
    ///
    /// # Errors
    /// [`AuthError::Unauthenticated`] when the header is missing, malformed or unknown.
    pub fn caller(&self, header: Option<&str>) -> Result<Caller, AuthError> {
        if self.is_open() {
            return Ok(Caller::of(Role::Arbiter { event: None }));
        }
        let header = header.ok_or(AuthError::Unauthenticated(
            "missing authorization: Bearer <token>",
        ))?;
        let token = header
            .strip_prefix("Bearer ")
            .or_else(|| header.strip_prefix("bearer "))
            .ok_or(AuthError::Unauthenticated(
                "authorization must be 'Bearer <token>'",
            ))?;
        self.map
            .get(token.trim())
            .cloned()
            .ok_or(AuthError::Unauthenticated("unknown token"))
    }
}

/// Who sees a game live: arbiters (of its event, or of all), its own board and its own
/// players. Everyone else is its public and sees it behind its broadcast delay.
pub(super) fn audience(role: &Role, meta: &GameMeta) -> Audience {
    match role {
        Role::Arbiter { event: None } => Audience::Live,
        Role::Arbiter { event: Some(e) } if *e == meta.event => Audience::Live,
        Role::Board { event, game } | Role::Player { event, game, .. }
            if *game == meta.id && *event == meta.event =>
        {
            Audience::Live
        }
        _ => Audience::Public,
    }
}

/// The audience every game of `event` has for `role` on a round stream, when it is the
/// same for all of them; `None` for a board or a player of the event (their own game is
/// live, the others public): their streams follow the games one by one.
pub(super) fn round_audience(role: &Role, event: &str) -> Option<Audience> {
    match role {
        Role::Arbiter { event: None } => Some(Audience::Live),
        Role::Arbiter { event: Some(e) } if e == event => Some(Audience::Live),
        Role::Board { event: e, .. } | Role::Player { event: e, .. } if e == event => None,
        _ => Some(Audience::Public),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn role_matrix() {
        let arbiter = Role::Arbiter {
            event: Some("Open".into()),
        };
        let board = Role::Board {
            event: "Open".into(),
            game: "g1".into(),
        };
        let white = Role::Player {
            event: "Open".into(),
            game: "g1".into(),
            side: Color::White,
        };
        let viewer = Role::Viewer;
        let play = |side| Action::Play {
            game: "g1",
            event: "Open",
            side,
        };
        let arb = Action::Arbitrate {
            game: "g1",
            event: "Open",
        };
        let other_event = Action::Arbitrate {
            game: "g2",
            event: "Cup",
        };
        let brd = Action::Board {
            game: "g1",
            event: "Open",
        };
        for role in [&arbiter, &board, &white, &viewer] {
            assert!(role.allows(Action::Read).is_ok());
        }
        assert!(arbiter.allows(arb).is_ok());
        assert!(arbiter.allows(other_event).is_err());
        assert!(arbiter.allows(Action::Create { event: "Open" }).is_ok());
        assert!(arbiter.allows(Action::Create { event: "Cup" }).is_err());
        assert!(board.allows(brd).is_ok());
        assert!(board.allows(play(Color::White)).is_err());
        assert!(white.allows(play(Color::White)).is_ok());
        assert!(white.allows(play(Color::Black)).is_err());
        assert!(
            white
                .allows(Action::Play {
                    game: "g2",
                    event: "Open",
                    side: Color::White
                })
                .is_err()
        );
        assert!(white.allows(arb).is_err());
        // The same game id in another event is another game.
        assert!(
            white
                .allows(Action::Play {
                    game: "g1",
                    event: "Cup",
                    side: Color::White
                })
                .is_err()
        );
        assert!(
            board
                .allows(Action::Board {
                    game: "g1",
                    event: "Cup"
                })
                .is_err()
        );
        assert!(viewer.allows(play(Color::White)).is_err());
        assert!(viewer.allows(Action::Create { event: "Open" }).is_err());
    }

    #[test]
    fn tokens_from_headers() {
        let tokens = Tokens::new(&[TokenConfig {
            token: "s3".into(),
            name: None,
            role: Role::Viewer,
        }]);
        assert_eq!(tokens.role(Some("Bearer s3")), Ok(Role::Viewer));
        assert!(matches!(
            tokens.role(None),
            Err(AuthError::Unauthenticated(_))
        ));
        assert!(matches!(
            tokens.role(Some("Bearer nope")),
            Err(AuthError::Unauthenticated(_))
        ));
        assert!(matches!(
            tokens.role(Some("s3")),
            Err(AuthError::Unauthenticated(_))
        ));
        assert_eq!(
            Tokens::new(&[]).role(None),
            Ok(Role::Arbiter { event: None })
        );
    }
}
