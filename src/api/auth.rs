//! Bearer tokens and roles: who may do what to which game.
//!
//! | role | reads, watches, legal moves | creates games | acts on a game |
//! |---|---|---|---|
//! | `arbiter` (all, or one event) | yes | in its event | every RPC on games of its event |
//! | `board` (one game, or one board number, of one event) | yes | no | the board stream of its game |
//! | `player` (one side of one game, or of one board number, of one event) | yes | no | moves, presses, offers, answers, claims, resignation for its side of its game |
//! | `viewer` | yes | no | nothing |
//!
//! Board and player tokens name their event and their [`Place`] in it: a game id
//! (`game = "open-r1-b3"`) or a board number (`board = 3`: the game on board 3 of every
//! round, so that one token serves the whole tournament whose game ids the pairings
//! make). They act only on a game of that event: a game id such a token names can only
//! be created in its event (an arbiter of another event cannot create it first and so
//! capture the token).
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
    /// An electronic board bound to one game, or to one board number of an event.
    Board {
        /// The game's event (tournament name).
        event: String,
        /// Its game in the event.
        #[serde(flatten)]
        place: Place,
    },
    /// A player: one side of one game, or of one board number of an event.
    Player {
        /// The game's event (tournament name).
        event: String,
        /// Its game in the event.
        #[serde(flatten)]
        place: Place,
        /// The side.
        side: Color,
    },
    /// Read and watch only.
    Viewer,
}

/// Which game of its event a board or player token acts on: written in the config as
/// `game = "<id>"` or `board = <n>`, exactly one of them.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(try_from = "PlaceFields", into = "PlaceFields")]
pub enum Place {
    /// The game of this id.
    Game(String),
    /// The game on this board number (`GameMeta.board`, from 1) in any round: the token
    /// outlives the game ids a tournament's pairings generate.
    Board(u32),
}

/// [`Place`] as the config writes it.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
struct PlaceFields {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    game: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    board: Option<u32>,
}

impl TryFrom<PlaceFields> for Place {
    type Error = String;

    fn try_from(f: PlaceFields) -> Result<Place, String> {
        match (f.game, f.board) {
            (Some(_), Some(_)) => Err("a board or player token names `game` (one game id) or \
                 `board` (a board number of its event, every round), not both"
                .into()),
            (None, None) => Err("a board or player token needs `game` (one game id) or \
                 `board` (a board number of its event, every round)"
                .into()),
            (Some(g), None) if g.trim().is_empty() => Err("game: empty".into()),
            (Some(g), None) => Ok(Place::Game(g)),
            (None, Some(0)) => Err("board: numbered from 1".into()),
            (None, Some(n)) => Ok(Place::Board(n)),
        }
    }
}

impl From<Place> for PlaceFields {
    fn from(p: Place) -> PlaceFields {
        match p {
            Place::Game(g) => PlaceFields {
                game: Some(g),
                board: None,
            },
            Place::Board(n) => PlaceFields {
                game: None,
                board: Some(n),
            },
        }
    }
}

impl Place {
    /// Whether `meta` is this place's game (its event is checked by the caller).
    pub fn holds(&self, meta: &GameMeta) -> bool {
        match self {
            Place::Game(g) => *g == meta.id,
            Place::Board(n) => *n == meta.board,
        }
    }

    /// The game id it names, if it names one.
    pub fn game(&self) -> Option<&str> {
        match self {
            Place::Game(g) => Some(g),
            Place::Board(_) => None,
        }
    }
}

impl fmt::Display for Place {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Place::Game(g) => write!(f, "game {g}"),
            Place::Board(n) => write!(f, "board {n}"),
        }
    }
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
        game: &'a GameMeta,
        /// The side acted for.
        side: Color,
    },
    /// Drive the board stream of a game.
    Board(&'a GameMeta),
    /// Arbiter powers on a game (start, clocks, rulings, results, positions).
    Arbitrate(&'a GameMeta),
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
            (Role::Arbiter { event: scope }, Action::Create { event }) => in_event(scope, event),
            (Role::Arbiter { event: scope }, Action::Play { game: m, .. })
            | (Role::Arbiter { event: scope }, Action::Board(m))
            | (Role::Arbiter { event: scope }, Action::Arbitrate(m)) => in_event(scope, &m.event),
            (Role::Board { event, place }, Action::Board(m)) => *event == m.event && place.holds(m),
            (Role::Player { event, place, side }, Action::Play { game: m, side: s }) => {
                *event == m.event && place.holds(m) && *side == s
            }
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
            Role::Board { event, place } => format!("the board of {place} of event '{event}'"),
            Role::Player { event, place, side } => {
                format!("the {side} player of {place} of event '{event}'")
            }
            Role::Viewer => "a viewer".into(),
        }
    }
}

fn describe(action: Action<'_>) -> String {
    match action {
        Action::Read => "read".into(),
        Action::Create { event } => format!("create games in event '{event}'"),
        Action::Play { game, side } => format!("act for {side} in {}", on(game)),
        Action::Board(m) => format!("drive the board of {}", on(m)),
        Action::Arbitrate(m) => format!("use arbiter powers in {}", on(m)),
    }
}

/// A game as a refusal names it: its id, and its board and event when it has a board.
fn on(m: &GameMeta) -> String {
    if m.board > 0 {
        format!("game {} (board {} of event '{}')", m.id, m.board, m.event)
    } else {
        format!("game {} of event '{}'", m.id, m.event)
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
            Role::Board { event, place } => format!("board:{event}:{place}"),
            Role::Player { event, place, side } => format!("{side}:{event}:{place}"),
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
            Role::Board { event, place } | Role::Player { event, place, .. }
                if place.game() == Some(game) =>
            {
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
        Role::Board { event, place } | Role::Player { event, place, .. }
            if *event == meta.event && place.holds(meta) =>
        {
            Audience::Live
        }
        _ => Audience::Public,
    }
}

/// How `role` sees the games of an event on a round stream: every game alike, or (a board
/// or a player of the event) the games of its place live and the others as the public
/// does. A round's feed is shared by the streams of one view (`round_feed.rs`).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub(super) enum View {
    /// Every game with this audience.
    All(Audience),
    /// The games its place holds live, the others public.
    Own(Place),
}

impl View {
    /// The view `role` has of the games of `event`.
    pub(super) fn of(role: &Role, event: &str) -> View {
        match role {
            Role::Arbiter { event: None } => View::All(Audience::Live),
            Role::Arbiter { event: Some(e) } if e == event => View::All(Audience::Live),
            Role::Board { event: e, place }
            | Role::Player {
                event: e, place, ..
            } if e == event => View::Own(place.clone()),
            _ => View::All(Audience::Public),
        }
    }

    /// The audience of a game of the event in this view ([`audience`] of the role).
    pub(super) fn audience(&self, meta: &GameMeta) -> Audience {
        match self {
            View::All(audience) => *audience,
            View::Own(place) if place.holds(meta) => Audience::Live,
            View::Own(_) => Audience::Public,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn meta(event: &str, id: &str, board: u32) -> GameMeta {
        GameMeta {
            id: id.into(),
            event: event.into(),
            round: "1".into(),
            board,
            ..GameMeta::default()
        }
    }

    #[test]
    fn role_matrix() {
        let arbiter = Role::Arbiter {
            event: Some("Open".into()),
        };
        let board = Role::Board {
            event: "Open".into(),
            place: Place::Game("g1".into()),
        };
        let white = Role::Player {
            event: "Open".into(),
            place: Place::Game("g1".into()),
            side: Color::White,
        };
        let viewer = Role::Viewer;
        let g1 = meta("Open", "g1", 1);
        let g2 = meta("Open", "g2", 2);
        let cup_g1 = meta("Cup", "g1", 1);
        let play = |game, side| Action::Play { game, side };
        for role in [&arbiter, &board, &white, &viewer] {
            assert!(role.allows(Action::Read).is_ok());
        }
        assert!(arbiter.allows(Action::Arbitrate(&g1)).is_ok());
        assert!(arbiter.allows(Action::Arbitrate(&cup_g1)).is_err());
        assert!(arbiter.allows(Action::Create { event: "Open" }).is_ok());
        assert!(arbiter.allows(Action::Create { event: "Cup" }).is_err());
        assert!(board.allows(Action::Board(&g1)).is_ok());
        assert!(board.allows(Action::Board(&g2)).is_err());
        assert!(board.allows(play(&g1, Color::White)).is_err());
        assert!(white.allows(play(&g1, Color::White)).is_ok());
        assert!(white.allows(play(&g1, Color::Black)).is_err());
        assert!(white.allows(play(&g2, Color::White)).is_err());
        assert!(white.allows(Action::Arbitrate(&g1)).is_err());
        // The same game id in another event is another game.
        assert!(white.allows(play(&cup_g1, Color::White)).is_err());
        assert!(board.allows(Action::Board(&cup_g1)).is_err());
        assert!(viewer.allows(play(&g1, Color::White)).is_err());
        assert!(viewer.allows(Action::Create { event: "Open" }).is_err());
        let refusal = white.allows(play(&g2, Color::White)).unwrap_err();
        assert_eq!(
            refusal.to_string(),
            "the white player of game g1 of event 'Open' may not act for white in game g2 \
             (board 2 of event 'Open')"
        );
    }

    /// A round stream's view of an event gives each of its games the audience the role
    /// has of it; only a board or a player of the event has a view of its own.
    #[test]
    fn a_round_streams_view_is_the_roles_audience_game_by_game() {
        let roles = [
            Role::Arbiter { event: None },
            Role::Arbiter {
                event: Some("Open".into()),
            },
            Role::Arbiter {
                event: Some("Cup".into()),
            },
            Role::Viewer,
            Role::Board {
                event: "Open".into(),
                place: Place::Board(2),
            },
            Role::Player {
                event: "Open".into(),
                place: Place::Game("g1".into()),
                side: Color::Black,
            },
            Role::Board {
                event: "Cup".into(),
                place: Place::Game("g1".into()),
            },
        ];
        let games = [meta("Open", "g1", 1), meta("Open", "g2", 2)];
        for role in &roles {
            let view = View::of(role, "Open");
            for game in &games {
                assert_eq!(
                    view.audience(game),
                    audience(role, game),
                    "{role:?} {game:?}"
                );
            }
            let own = matches!(role, Role::Board { event, .. } | Role::Player { event, .. } if event == "Open");
            assert_eq!(matches!(view, View::Own(_)), own, "{role:?}");
        }
        let board2 = View::of(&roles[4], "Open");
        assert_eq!(board2.audience(&games[1]), Audience::Live);
        assert_eq!(board2.audience(&games[0]), Audience::Public);
    }

    #[test]
    fn tokens_scoped_to_a_board_number_follow_the_rounds() {
        let board3 = Role::Board {
            event: "Open".into(),
            place: Place::Board(3),
        };
        let black3 = Role::Player {
            event: "Open".into(),
            place: Place::Board(3),
            side: Color::Black,
        };
        let r1 = meta("Open", "open-r1-b3", 3);
        let mut r2 = meta("Open", "open-r2-b3", 3);
        r2.round = "2".into();
        let other_board = meta("Open", "open-r2-b4", 4);
        let other_event = meta("Cup", "cup-r1-b3", 3);
        for game in [&r1, &r2] {
            assert!(board3.allows(Action::Board(game)).is_ok());
            assert!(
                black3
                    .allows(Action::Play {
                        game,
                        side: Color::Black
                    })
                    .is_ok()
            );
            assert!(
                black3
                    .allows(Action::Play {
                        game,
                        side: Color::White
                    })
                    .is_err()
            );
            assert_eq!(audience(&black3, game), Audience::Live);
        }
        for game in [&other_board, &other_event] {
            assert!(board3.allows(Action::Board(game)).is_err());
            assert!(
                black3
                    .allows(Action::Play {
                        game,
                        side: Color::Black
                    })
                    .is_err()
            );
            assert_eq!(audience(&board3, game), Audience::Public);
        }
        assert_eq!(
            board3
                .allows(Action::Board(&other_board))
                .unwrap_err()
                .to_string(),
            "the board of board 3 of event 'Open' may not drive the board of game open-r2-b4 \
             (board 4 of event 'Open')"
        );
        // A board number reserves no game id.
        let tokens = Tokens::new(&[TokenConfig {
            token: "b3".into(),
            name: None,
            role: board3,
        }]);
        assert_eq!(tokens.reserved_event("open-r1-b3"), None);
    }

    #[test]
    fn a_place_is_a_game_or_a_board_never_both() {
        #[derive(Debug, Deserialize)]
        struct File {
            tokens: Vec<TokenConfig>,
        }
        let parse = |body: &str| toml::from_str::<File>(body).map(|f| f.tokens);
        let ok = parse(
            "[[tokens]]\ntoken = \"b\"\nrole = \"board\"\nevent = \"Open\"\nboard = 3\n\
             [[tokens]]\ntoken = \"w\"\nrole = \"player\"\nevent = \"Open\"\ngame = \"g1\"\nside = \"white\"\n",
        )
        .expect("both forms");
        assert_eq!(
            ok[0].role,
            Role::Board {
                event: "Open".into(),
                place: Place::Board(3)
            }
        );
        assert_eq!(
            ok[1].role,
            Role::Player {
                event: "Open".into(),
                place: Place::Game("g1".into()),
                side: Color::White
            }
        );
        for (body, says) in [
            ("board = 3\ngame = \"g1\"", "not both"),
            ("", "needs `game`"),
            ("board = 0", "numbered from 1"),
            ("game = \" \"", "game: empty"),
        ] {
            let file =
                format!("[[tokens]]\ntoken = \"b\"\nrole = \"board\"\nevent = \"Open\"\n{body}\n");
            let e = parse(&file).expect_err(body).to_string();
            assert!(e.contains(says), "{body}: {e}");
        }
        // Written back as it was read.
        let back = serde_json::to_string(&ok[0]).expect("json");
        assert_eq!(
            back,
            r#"{"token":"b","role":"board","event":"Open","board":3}"#
        );
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
