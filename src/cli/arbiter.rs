//! `draughts-arbiter arbiter …`: the arbiter's command line, one subcommand per
//! `ArbiterService` RPC (and `press`, `GameService.PressClock` for a side). Every field
//! of each request has a flag; reasons and rules are sent as the arbiter gives them.

use std::process::ExitCode;

use clap::{Args, Subcommand};

use super::client::{
    Connection, SideArg, block_on, connect, follow_owner, print_reply, request, side, status_text,
};
use crate::api::pb;
use crate::api::pb::arbiter_service_client::ArbiterServiceClient;
use crate::api::pb::game_service_client::GameServiceClient;

/// `draughts-arbiter arbiter …`.
#[derive(Debug, Args)]
pub struct ArbiterArgs {
    /// Where the server is and how to talk to it (the token must be an arbiter's).
    #[command(flatten)]
    pub connection: Connection,
    /// What to do.
    #[command(subcommand)]
    pub action: ArbiterAction,
}

/// A game's result as the arbiter declares it.
#[derive(Debug, Clone, Copy, clap::ValueEnum)]
pub enum ResultArg {
    /// White wins.
    WhiteWins,
    /// Black wins.
    BlackWins,
    /// Draw.
    Draw,
    /// Both sides lose (double forfeit).
    BothLose,
    /// The game is void.
    Annulled,
}

/// Why a game ended, as the arbiter gives it.
#[derive(Debug, Clone, Copy, clap::ValueEnum)]
pub enum ReasonArg {
    /// A side resigned.
    Resignation,
    /// The side to move has no pieces.
    NoPieces,
    /// The side to move has no legal move.
    NoMoves,
    /// A flag fell.
    TimeForfeit,
    /// A draw offer was accepted.
    DrawAgreed,
    /// A repetition draw.
    Repetition,
    /// A move-count draw rule.
    MoveCount,
    /// The arbiter's decision (the default).
    ArbiterDecision,
    /// Lost as a penalty for a rule violation.
    Penalty,
    /// English "Time!" rule.
    MoveLimit,
    /// The claimant's flag fell during an incorrect claim.
    IncorrectClaimOnTime,
    /// English touch rule.
    TouchPenalty,
    /// Corners: a corner filled.
    CornerFilled,
    /// Corners: home not left.
    HomeNotLeft,
    /// Lost by default (T 5; the judge records it itself).
    Default,
    /// A forfeit: the game was not played (a no-show, a withdrawal; T 6).
    Forfeit,
}

impl ReasonArg {
    fn proto(self) -> pb::ResultReason {
        use pb::ResultReason as R;
        match self {
            ReasonArg::Resignation => R::Resignation,
            ReasonArg::NoPieces => R::NoPieces,
            ReasonArg::NoMoves => R::NoMoves,
            ReasonArg::TimeForfeit => R::TimeForfeit,
            ReasonArg::DrawAgreed => R::DrawAgreed,
            ReasonArg::Repetition => R::Repetition,
            ReasonArg::MoveCount => R::MoveCount,
            ReasonArg::ArbiterDecision => R::ArbiterDecision,
            ReasonArg::Penalty => R::Penalty,
            ReasonArg::MoveLimit => R::MoveLimit,
            ReasonArg::IncorrectClaimOnTime => R::IncorrectClaimOnTime,
            ReasonArg::TouchPenalty => R::TouchPenalty,
            ReasonArg::CornerFilled => R::CornerFilled,
            ReasonArg::HomeNotLeft => R::HomeNotLeft,
            ReasonArg::Default => R::Default,
            ReasonArg::Forfeit => R::Forfeit,
        }
    }
}

/// A ruling on a draw claim.
#[derive(Debug, Clone, Copy, clap::ValueEnum)]
pub enum ClaimRulingArg {
    /// The claim is correct: the game is drawn.
    Correct,
    /// The claim is incorrect: the written move is played and the game goes on.
    Incorrect,
}

/// A ruling on an irregularity.
#[derive(Debug, Clone, Copy, clap::ValueEnum)]
pub enum IrregularityRulingArg {
    /// What happened on the board stands.
    Stands,
    /// The position is corrected to the last legal one.
    Corrected,
}

impl From<ClaimRulingArg> for pb::ClaimRuling {
    fn from(r: ClaimRulingArg) -> pb::ClaimRuling {
        match r {
            ClaimRulingArg::Correct => pb::ClaimRuling::Correct,
            ClaimRulingArg::Incorrect => pb::ClaimRuling::Incorrect,
        }
    }
}

impl From<IrregularityRulingArg> for pb::IrregularityRuling {
    fn from(r: IrregularityRulingArg) -> pb::IrregularityRuling {
        match r {
            IrregularityRulingArg::Stands => pb::IrregularityRuling::Stands,
            IrregularityRulingArg::Corrected => pb::IrregularityRuling::Corrected,
        }
    }
}

/// The arbiter's actions.
#[derive(Debug, Subcommand)]
pub enum ArbiterAction {
    /// Pause both clocks (PauseClocks).
    Pause {
        /// Game id.
        id: String,
        /// Why (recorded).
        #[arg(long, default_value = "")]
        reason: String,
        /// The rule applied, if one is (recorded as the event's rule), e.g. "RU 1.8".
        #[arg(long, default_value = "")]
        rule: String,
    },
    /// Resume the clocks (ResumeClocks).
    Resume {
        /// Game id.
        id: String,
        /// Why (recorded).
        #[arg(long, default_value = "")]
        reason: String,
        /// The rule applied, if one is (recorded as the event's rule), e.g. "RU 1.8".
        #[arg(long, default_value = "")]
        rule: String,
    },
    /// Change a side's time (AdjustClock): `--set 4m30s`, `--add 2m`, `--add -30s`.
    Adjust {
        /// Game id.
        id: String,
        /// The side whose time changes.
        #[arg(long, value_enum)]
        side: SideArg,
        /// Set the remaining time (a duration with units: 4m30s, 90s, 1500ms).
        #[arg(long, value_parser = parse_duration_ms, allow_hyphen_values = true,
              conflicts_with = "add", required_unless_present = "add")]
        set: Option<i64>,
        /// Add time; negative removes it, a time penalty (`--add -30s`).
        #[arg(long, value_parser = parse_duration_ms, allow_hyphen_values = true)]
        add: Option<i64>,
        /// Why (recorded).
        #[arg(long, default_value = "")]
        reason: String,
        /// The rule applied, if one is (recorded as the event's rule), e.g. "RU 1.8".
        #[arg(long, default_value = "")]
        rule: String,
    },
    /// Declare or correct the result (DeclareResult).
    Declare {
        /// Game id.
        id: String,
        /// The result.
        #[arg(value_enum)]
        result: ResultArg,
        /// Why the game ended (default: arbiter-decision).
        #[arg(long, value_enum)]
        reason: Option<ReasonArg>,
        /// The rule applied, e.g. "RU 1.9.4".
        #[arg(long, default_value = "")]
        rule: String,
        /// The arbiter's explanation (recorded).
        #[arg(long, default_value = "")]
        explanation: String,
    },
    /// Warn a player (IssueWarning).
    Warn {
        /// Game id.
        id: String,
        /// The side warned.
        #[arg(long, value_enum)]
        side: SideArg,
        /// Why (recorded).
        #[arg(long, default_value = "")]
        reason: String,
        /// The rule, if one applies, e.g. "RU 1.9.4".
        #[arg(long, default_value = "")]
        rule: String,
    },
    /// Start the English 40-move count for the side that must show a win
    /// (StartFortyMoveCount; English draughts only).
    FortyMoveCount {
        /// Game id.
        id: String,
        /// The side that must show a win within 40 moves.
        #[arg(long, value_enum)]
        side: SideArg,
        /// Why (recorded).
        #[arg(long, default_value = "")]
        reason: String,
        /// The rule applied, if one is (recorded as the event's rule).
        #[arg(long, default_value = "")]
        rule: String,
    },
    /// Rule on the pending draw claim (RuleOnClaim).
    RuleClaim {
        /// Game id.
        id: String,
        /// Correct or incorrect.
        #[arg(value_enum)]
        ruling: ClaimRulingArg,
        /// The claim's seq; the server refuses another than the pending claim's (default:
        /// whatever claim is pending).
        #[arg(long)]
        seq: Option<u64>,
        /// Why (recorded).
        #[arg(long, default_value = "")]
        reason: String,
        /// The rule applied, if one is (recorded as the event's rule), e.g. "RU 1.8".
        #[arg(long, default_value = "")]
        rule: String,
    },
    /// Rule on a pending irregularity (RuleOnIrregularity).
    RuleIrregularity {
        /// Game id.
        id: String,
        /// Stands or corrected.
        #[arg(value_enum)]
        ruling: IrregularityRulingArg,
        /// The irregularity's seq (`pending_irregularities[].seq`); the server refuses one
        /// that is not outstanding (default: the only outstanding irregularity; with
        /// several, the seq is required).
        #[arg(long)]
        seq: Option<u64>,
        /// Why (recorded).
        #[arg(long, default_value = "")]
        reason: String,
        /// The rule applied, if one is (recorded as the event's rule), e.g. "RU 1.8".
        #[arg(long, default_value = "")]
        rule: String,
    },
    /// Set the official position (SetPosition).
    SetPosition {
        /// Game id.
        id: String,
        /// The position as FEN, side to move included.
        fen: String,
        /// Why (recorded).
        #[arg(long, default_value = "")]
        reason: String,
        /// The rule applied, if one is (recorded as the event's rule), e.g. "RU 1.8".
        #[arg(long, default_value = "")]
        rule: String,
    },
    /// Press the clock for a side (PressClock).
    Press {
        /// Game id.
        id: String,
        /// The side pressing.
        #[arg(long, value_enum)]
        side: SideArg,
        /// Refused unless this is the game's last seq (0: no check).
        #[arg(long, default_value_t = 0)]
        expected_seq: u64,
    },
}

/// A signed duration with units (`4m30s`, `-30s`, `1h`, `1500ms`, `2min`) in ms.
fn parse_duration_ms(s: &str) -> Result<i64, String> {
    let example = "a duration with units, e.g. 4m30s, 90s, -30s or 1500ms";
    let t = s.trim();
    let (negative, body) = match t.strip_prefix('-') {
        Some(rest) => (true, rest),
        None => (false, t.strip_prefix('+').unwrap_or(t)),
    };
    if body.is_empty() {
        return Err(format!("'{s}': expected {example}"));
    }
    let mut total: i64 = 0;
    let mut rest = body;
    while !rest.is_empty() {
        let digits = rest.bytes().take_while(u8::is_ascii_digit).count();
        if digits == 0 {
            return Err(format!("'{s}': expected a number, {example}"));
        }
        let (n, after) = rest.split_at(digits);
        let n: i64 = n.parse().map_err(|_| format!("'{s}': number too large"))?;
        let (size, len) = if after.starts_with("ms") {
            (1, 2)
        } else if after.starts_with("min") {
            (60_000, 3)
        } else if after.starts_with('h') {
            (3_600_000, 1)
        } else if after.starts_with('m') {
            (60_000, 1)
        } else if after.starts_with('s') {
            (1_000, 1)
        } else {
            return Err(format!(
                "'{s}': expected a unit (h, min, m, s or ms), {example}"
            ));
        };
        total = n
            .checked_mul(size)
            .and_then(|v| total.checked_add(v))
            .ok_or_else(|| format!("'{s}': too large"))?;
        rest = after.get(len..).unwrap_or_default();
    }
    Ok(if negative { -total } else { total })
}

pub(super) fn run_arbiter(args: &ArbiterArgs) -> ExitCode {
    block_on(follow_owner(&args.connection, |server| {
        arbiter(args, server)
    }))
}

async fn arbiter(args: &ArbiterArgs, server: String) -> Result<(), String> {
    let ch = connect(&args.connection, &server).await?;
    let mut arb = ArbiterServiceClient::new(ch.clone());
    let mut games = GameServiceClient::new(ch);
    let t = &args.connection.token;
    let json = args.connection.json;
    let st = |s: tonic::Status| status_text(&s);
    // One request: sent with the token, its refusal as text, the game and events back.
    macro_rules! call {
        ($client:ident . $method:ident ($request:expr)) => {{
            let r = $client
                .$method(request(t, $request))
                .await
                .map_err(st)?
                .into_inner();
            (r.game, r.events)
        }};
    }
    let (game, events) = match &args.action {
        ArbiterAction::Pause { id, reason, rule } => {
            call!(arb.pause_clocks(pb::PauseClocksRequest {
                game_id: id.clone(),
                reason: reason.clone(),
                rule: rule.clone(),
            }))
        }
        ArbiterAction::Resume { id, reason, rule } => {
            call!(arb.resume_clocks(pb::ResumeClocksRequest {
                game_id: id.clone(),
                reason: reason.clone(),
                rule: rule.clone(),
            }))
        }
        ArbiterAction::Adjust {
            id,
            side: s,
            set,
            add,
            reason,
            rule,
        } => {
            use pb::adjust_clock_request::Change;
            let change = match (set, add) {
                (Some(ms), _) => Change::SetRemainingMs(*ms),
                (None, Some(ms)) => Change::AddMs(*ms),
                (None, None) => return Err("adjust: --set or --add required".into()),
            };
            call!(arb.adjust_clock(pb::AdjustClockRequest {
                game_id: id.clone(),
                side: side(Some(*s)),
                change: Some(change),
                reason: reason.clone(),
                rule: rule.clone(),
            }))
        }
        ArbiterAction::Declare {
            id,
            result,
            reason,
            rule,
            explanation,
        } => {
            let result = match result {
                ResultArg::WhiteWins => pb::GameResult::WhiteWins,
                ResultArg::BlackWins => pb::GameResult::BlackWins,
                ResultArg::Draw => pb::GameResult::Draw,
                ResultArg::BothLose => pb::GameResult::BothLose,
                ResultArg::Annulled => pb::GameResult::Annulled,
            };
            call!(arb.declare_result(pb::DeclareResultRequest {
                game_id: id.clone(),
                result: result as i32,
                reason: reason.map_or(0, |r| r.proto() as i32),
                rule: rule.clone(),
                explanation: explanation.clone(),
            }))
        }
        ArbiterAction::Warn {
            id,
            side: s,
            reason,
            rule,
        } => {
            call!(arb.issue_warning(pb::IssueWarningRequest {
                game_id: id.clone(),
                side: side(Some(*s)),
                reason: reason.clone(),
                rule: rule.clone(),
            }))
        }
        ArbiterAction::FortyMoveCount {
            id,
            side: s,
            reason,
            rule,
        } => {
            call!(arb.start_forty_move_count(pb::StartFortyMoveCountRequest {
                game_id: id.clone(),
                side: side(Some(*s)),
                reason: reason.clone(),
                rule: rule.clone(),
            }))
        }
        ArbiterAction::RuleClaim {
            id,
            ruling,
            seq,
            reason,
            rule,
        } => {
            call!(arb.rule_on_claim(pb::RuleOnClaimRequest {
                game_id: id.clone(),
                // No --seq: 0, which the server takes as the pending claim.
                claim_seq: seq.unwrap_or(0),
                ruling: pb::ClaimRuling::from(*ruling) as i32,
                reason: reason.clone(),
                rule: rule.clone(),
            }))
        }
        ArbiterAction::RuleIrregularity {
            id,
            ruling,
            seq,
            reason,
            rule,
        } => {
            call!(arb.rule_on_irregularity(pb::RuleOnIrregularityRequest {
                game_id: id.clone(),
                // No --seq: 0, which the server takes as the only outstanding irregularity.
                irregularity_seq: seq.unwrap_or(0),
                ruling: pb::IrregularityRuling::from(*ruling) as i32,
                reason: reason.clone(),
                rule: rule.clone(),
            }))
        }
        ArbiterAction::SetPosition {
            id,
            fen,
            reason,
            rule,
        } => {
            call!(arb.set_position(pb::SetPositionRequest {
                game_id: id.clone(),
                fen: fen.clone(),
                reason: reason.clone(),
                rule: rule.clone(),
            }))
        }
        ArbiterAction::Press {
            id,
            side: s,
            expected_seq,
        } => {
            call!(games.press_clock(pb::PressClockRequest {
                game_id: id.clone(),
                side: side(Some(*s)),
                expected_seq: *expected_seq,
            }))
        }
    };
    print_reply(json, game.as_ref(), &events);
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::parse_duration_ms;

    #[test]
    fn durations_with_units() {
        assert_eq!(parse_duration_ms("4m30s"), Ok(270_000));
        assert_eq!(parse_duration_ms("-30s"), Ok(-30_000));
        assert_eq!(parse_duration_ms("+2min"), Ok(120_000));
        assert_eq!(parse_duration_ms("1h"), Ok(3_600_000));
        assert_eq!(parse_duration_ms("1500ms"), Ok(1_500));
        for bad in ["", "-", "30", "3x", "m", "99999999999999999999h"] {
            assert!(parse_duration_ms(bad).is_err(), "{bad:?}");
        }
    }
}
