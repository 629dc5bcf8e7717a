//! What the judge is asked to do: commands from boards, players' apps and arbiters.

use serde::{Deserialize, Serialize};

use crate::rules::Color;

/// Who sent a command (authenticated by the service).
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Actor {
    /// A player, through an app.
    Player(Color),
    /// An arbiter: the token's subject, with its label when the token has one.
    Arbiter(ArbiterId),
    /// An electronic board, by id.
    Board(String),
    /// The service itself (timers, recovery).
    System,
}

/// Who an arbiter is: the subject of its token (`arbiter`, `arbiter:<event>`) and the
/// token's label (`name = "Chief arbiter I. Petrov"` in `[[tokens]]`), if it has one.
///
/// Recorded as the bare subject when there is no label, so logs written before labels
/// existed read (and write) exactly as they did; with a label, as `{"id", "name"}`.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct ArbiterId {
    /// The token's subject.
    pub id: String,
    /// The token's label.
    pub name: Option<String>,
}

impl ArbiterId {
    /// A labelled arbiter (an empty label is none).
    pub fn named(id: impl Into<String>, name: Option<&str>) -> ArbiterId {
        ArbiterId {
            id: id.into(),
            name: name
                .map(str::trim)
                .filter(|n| !n.is_empty())
                .map(str::to_string),
        }
    }

    /// How texts name the arbiter: by the label (`Chief arbiter I. Petrov`, or `arbiter
    /// I. Petrov` when the label does not say it is an arbiter), else `arbiter <subject>`;
    /// `None` for a bare `arbiter` subject without a label (texts then say "the arbiter").
    pub fn title(&self) -> Option<String> {
        if let Some(name) = &self.name {
            return Some(if name.to_lowercase().contains("arbiter") {
                name.clone()
            } else {
                format!("arbiter {name}")
            });
        }
        let id = self.id.trim();
        if id.is_empty() || id.eq_ignore_ascii_case("arbiter") {
            None
        } else {
            Some(format!("arbiter {id}"))
        }
    }
}

impl From<&str> for ArbiterId {
    fn from(id: &str) -> ArbiterId {
        ArbiterId {
            id: id.to_string(),
            name: None,
        }
    }
}

impl From<String> for ArbiterId {
    fn from(id: String) -> ArbiterId {
        ArbiterId { id, name: None }
    }
}

impl Serialize for ArbiterId {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeStruct;
        match &self.name {
            None => s.serialize_str(&self.id),
            Some(name) => {
                let mut st = s.serialize_struct("ArbiterId", 2)?;
                st.serialize_field("id", &self.id)?;
                st.serialize_field("name", name)?;
                st.end()
            }
        }
    }
}

impl<'de> Deserialize<'de> for ArbiterId {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<ArbiterId, D::Error> {
        #[derive(Deserialize)]
        #[serde(untagged)]
        enum Form {
            Bare(String),
            Named {
                id: String,
                #[serde(default)]
                name: Option<String>,
            },
        }
        Ok(match Form::deserialize(d)? {
            Form::Bare(id) => ArbiterId { id, name: None },
            Form::Named { id, name } => ArbiterId { id, name },
        })
    }
}

/// A player's answer to a draw offer.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum OfferResponse {
    /// "I agree" (RU 1.9.3).
    Accept,
    /// "I do not agree" (RU 1.9.3).
    Decline,
    /// Answer after seeing the offerer's move (RU 1.9.5).
    Postpone,
}

/// What a draw claim is about.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ClaimKind {
    /// Threefold repetition (RU 1.9.2).
    Repetition,
    /// A move-count rule (RU 1.9.1 (c)–(f), FMJD, EN 40 moves) met while such draws are
    /// referred to the arbiter.
    MoveCount,
}

/// How the offended side or the arbiter rules on an irregularity (FMJD: the opponent
/// chooses whether it stands or is corrected).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Ruling {
    /// The position on the board becomes the official one.
    Stands,
    /// The board must be put back; the official position stays.
    Corrected,
}

/// A final result an arbiter declares.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Outcome {
    /// White wins.
    WhiteWins,
    /// Black wins.
    BlackWins,
    /// Drawn.
    Draw,
    /// Both players lose (double forfeit, "0-0").
    DoubleForfeit,
    /// The game is void.
    Annulled,
}

impl Outcome {
    /// The win for `side`.
    pub fn win_for(side: Color) -> Outcome {
        match side {
            Color::White => Outcome::WhiteWins,
            Color::Black => Outcome::BlackWins,
        }
    }

    /// The PDN result token.
    pub fn pdn(self) -> &'static str {
        match self {
            Outcome::WhiteWins => "2-0",
            Outcome::BlackWins => "0-2",
            Outcome::Draw => "1-1",
            Outcome::DoubleForfeit => "0-0",
            Outcome::Annulled => "*",
        }
    }
}

/// A whole-board reading from a board that reports states rather than piece moves:
/// the PDN squares holding white and black pieces, and the kings when the board can
/// tell them apart.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Occupancy {
    /// Squares with a white piece.
    pub white: Vec<u32>,
    /// Squares with a black piece.
    pub black: Vec<u32>,
    /// Squares with a king, if the board knows.
    pub kings: Option<Vec<u32>>,
}

/// What an electronic board reports (squares are PDN numbers of the variant).
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum BoardInput {
    /// A hand touched the piece on a square.
    Touch(u32),
    /// A piece was lifted off a square.
    Lift(u32),
    /// The held piece was put down on a square (the hand still holds it).
    Place(u32),
    /// The hand left the piece on a square (RU 1.4.6: this makes the move).
    Release(u32),
    /// The player said "I adjust" (RU 1.4.9).
    AdjustAnnounced(Color),
    /// A side pressed its clock button.
    ClockPress(Color),
    /// A whole-board reading.
    Snapshot(Occupancy),
    /// The board sent more messages than the server takes (`per_s` a second, `burst`
    /// at once): recorded once per flood so the arbiter sees it; the excess itself was
    /// refused and never reached the judge.
    Flooded {
        /// The rate it exceeded, messages a second.
        per_s: u32,
        /// The burst allowed above the rate.
        burst: u32,
    },
    /// Not from the board: what the service sees of its stream (bound, silent while the
    /// clock runs, talking again, gone). Recorded only when it changes the board's
    /// state, and never after the game's end.
    Health {
        /// The board's state now.
        health: BoardHealth,
        /// How long it had been silent, ms.
        silent_ms: u64,
    },
}

/// How the electronic board bound to a game is doing, as the service sees its stream.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum BoardHealth {
    /// The stream is open and the board talks.
    Active,
    /// The stream is open, but the board has been silent too long while the clock runs.
    NotResponding,
    /// The stream ended (or the service stopped) while the game was not over.
    Disconnected,
}

/// What an arbiter gives with any action, recorded as given: the reason in their words
/// (at most [`MAX_REASON_BYTES`]) and the rule they apply (at most [`MAX_RULE_BYTES`]),
/// which becomes the event's rule in place of the judge's own citation.
#[derive(Debug, Clone, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Given {
    /// Why, in the arbiter's words.
    pub reason: Option<String>,
    /// The rule applied ("RU 1.9.4").
    pub rule: Option<String>,
}

/// The longest reason an arbiter may give (bytes of UTF-8).
pub const MAX_REASON_BYTES: usize = 1000;
/// The longest rule an arbiter may cite (bytes of UTF-8).
pub const MAX_RULE_BYTES: usize = 64;

impl Given {
    /// A reason only.
    pub fn reason(text: impl Into<String>) -> Given {
        Given {
            reason: Some(text.into()),
            rule: None,
        }
    }
}

/// What kind of result an arbiter declares.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Declared {
    /// The arbiter's decision (recorded as `EndReason::ArbiterDecision`).
    Decision,
    /// A loss as a penalty for a breach of the rules, the given rule naming it
    /// (recorded as `EndReason::Penalty`).
    Penalty,
    /// A forfeit: the game is not played (a no-show before the round, a withdrawal;
    /// recorded as `EndReason::Forfeit`, under T 5 unless a rule is given).
    Forfeit,
}

/// An arbiter's action.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ArbiterAction {
    /// Stop the running clock.
    PauseClocks,
    /// Restart the paused clock.
    ResumeClocks,
    /// Set a side's remaining time.
    SetTime {
        /// The side.
        side: Color,
        /// Remaining time, ms.
        remaining_ms: u64,
    },
    /// Give a side extra time.
    AddTime {
        /// The side.
        side: Color,
        /// Time to add, ms.
        amount_ms: u64,
    },
    /// Take time from a side as a penalty (the reason is required).
    Penalty {
        /// The side.
        side: Color,
        /// Time to take, ms.
        amount_ms: u64,
    },
    /// Warn a player (the reason is required).
    Warn {
        /// The side.
        side: Color,
    },
    /// Declare (or correct) the result (the reason is required).
    DeclareResult {
        /// The result.
        outcome: Outcome,
        /// Why, as a kind.
        kind: Declared,
    },
    /// Rule on the pending draw claim.
    RuleOnClaim {
        /// Whether the claim is upheld.
        upheld: bool,
        /// The seq of the claim ruled on, if the arbiter quoted one: refused unless it
        /// is the pending claim's.
        claim_seq: Option<u64>,
    },
    /// Rule on the outstanding irregularity.
    RuleOnIrregularity {
        /// Stands or corrected.
        ruling: Ruling,
        /// The seq of the irregularity ruled on, if quoted: refused unless it is the
        /// outstanding one's.
        irregularity_seq: Option<u64>,
    },
    /// Set up a position (FEN); the move history starts again from it.
    SetPosition {
        /// The position.
        fen: String,
    },
    /// Start the English 40-move count for a side (EN, on request).
    StartFortyMoveCount {
        /// The side that must show a win.
        side: Color,
    },
    /// Mark a player absent for the default time (T 5).
    MarkAbsent {
        /// The side absent.
        side: Color,
    },
}

/// A player's command without its side: what a request wants before the side it acts
/// for is known (an arbiter acting for the side to move: the game's task decides it).
#[derive(Debug, Clone)]
pub enum Play {
    /// A move, with a draw offer or not (RU 1.9.3).
    Move {
        /// As written.
        notation: String,
        /// Offer a draw with it.
        offer_draw: bool,
    },
    /// A clock press.
    Press,
    /// A draw offer.
    Offer,
    /// An answer to the opponent's offer.
    Respond(OfferResponse),
    /// A draw claim.
    Claim {
        /// Its ground.
        kind: ClaimKind,
        /// The move the claimant writes and does not play (RU 1.9.2).
        written_move: Option<String>,
    },
    /// Resignation.
    Resign,
}

impl Play {
    /// The command for `side`.
    pub fn by(self, side: Color) -> Command {
        match self {
            Play::Move {
                notation,
                offer_draw,
            } => Command::SubmitMove {
                side,
                notation,
                offer_draw,
            },
            Play::Press => Command::PressClock { side },
            Play::Offer => Command::OfferDraw { side },
            Play::Respond(response) => Command::RespondToOffer { side, response },
            Play::Claim { kind, written_move } => Command::ClaimDraw {
                side,
                kind,
                written_move,
            },
            Play::Resign => Command::Resign { side },
        }
    }

    /// Whether an arbiter must name the side: resignation is irreversible, so the side
    /// to move is not guessed (a player's token names its own).
    pub fn side_required_of_an_arbiter(&self) -> bool {
        matches!(self, Play::Resign)
    }
}

/// A command to a game's judge.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Command {
    /// Start the game: the first side's clock runs.
    Start,
    /// A move from an app, in any accepted notation.
    SubmitMove {
        /// The side moving.
        side: Color,
        /// The move.
        notation: String,
        /// Offer a draw with the move, before the press (RU 1.9.3).
        offer_draw: bool,
    },
    /// Press the clock after a move.
    PressClock {
        /// The side pressing.
        side: Color,
    },
    /// Offer a draw.
    OfferDraw {
        /// The side offering.
        side: Color,
    },
    /// Answer a draw offer.
    RespondToOffer {
        /// The side answering.
        side: Color,
        /// The answer.
        response: OfferResponse,
    },
    /// Claim a draw.
    ClaimDraw {
        /// The side claiming.
        side: Color,
        /// Repetition or move count.
        kind: ClaimKind,
        /// The move written on the scoresheet and not played (RU 1.9.2).
        written_move: Option<String>,
    },
    /// Resign.
    Resign {
        /// The side resigning.
        side: Color,
    },
    /// An electronic board's report.
    Board(BoardInput),
    /// An arbiter's action.
    Arbiter(ArbiterAction, Given),
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A log written before labels existed reads as it did, and an unlabelled arbiter is
    /// still written the old way; a labelled one carries its label.
    #[test]
    fn arbiter_ids_old_and_labelled() {
        let old: Actor = serde_json::from_str(r#"{"arbiter":"arbiter:Open"}"#).expect("old");
        assert_eq!(old, Actor::Arbiter("arbiter:Open".into()));
        assert_eq!(
            serde_json::to_string(&old).expect("json"),
            r#"{"arbiter":"arbiter:Open"}"#
        );
        let named = Actor::Arbiter(ArbiterId::named("arbiter:Open", Some(" I. Petrov ")));
        let text = serde_json::to_string(&named).expect("json");
        assert_eq!(
            text,
            r#"{"arbiter":{"id":"arbiter:Open","name":"I. Petrov"}}"#
        );
        assert_eq!(serde_json::from_str::<Actor>(&text).expect("back"), named);
        assert!(serde_json::from_str::<Actor>(r#"{"arbiter":7}"#).is_err());
    }

    #[test]
    fn how_texts_name_an_arbiter() {
        let t = |id: &str, name: Option<&str>| ArbiterId::named(id, name).title();
        assert_eq!(t("arbiter", None), None);
        assert_eq!(t(" ", Some("  ")), None);
        assert_eq!(
            t("arbiter:Open", None).as_deref(),
            Some("arbiter arbiter:Open")
        );
        assert_eq!(
            t("arbiter:Open", Some("Chief arbiter I. Petrov")).as_deref(),
            Some("Chief arbiter I. Petrov")
        );
        assert_eq!(
            t("arbiter", Some("I. Petrov")).as_deref(),
            Some("arbiter I. Petrov")
        );
    }
}
