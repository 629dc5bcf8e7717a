//! What a Swiss engine is told and what it answers (RULES.md T 1): the event's state
//! before a round in the two contracts the server speaks — TRF-16 for bbpPairings and
//! JaVaFo (`ENGINE --dutch IN.trf -p OUT`, see [`super::trf`]) and the JSON of
//! caissify-pairings' command line — and the answer turned into the round's pairings.
//! The engine itself runs outside (the server runs the configured command); nothing here
//! pairs anybody.
//!
//! The JSON is derived exactly as caissify-pairings' own checker derives it from a TRF
//! (`fpc._build_engine_players`): scores on TRF's 1 / ½ / 0 scale, colours of played games
//! only, floats from the scores before each round, byes and forfeit wins counted, and
//! previous pairings from played games only (opponents of a forfeit may meet again).

use serde_json::{Value, json};

use super::command::GivenPairings;
use super::error::TournamentError;
use super::event::{Bye, ByeKind, ByeScore, PairingSource};
use super::state::Tournament;
use super::trf::{TrfRound, cell};

/// The JSON caissify-pairings reads on its standard input to pair `round` with the FIDE
/// Dutch system: players by pairing number (`id` = `starting_number`), their state
/// after the rounds before, the pairs that played, and the event's options.
///
/// # Errors
/// Numbers not given yet, or a round that is not the next one.
pub fn caissify_request(t: &Tournament, round: u32) -> Result<String, TournamentError> {
    let c = t
        .config()
        .ok_or_else(|| TournamentError::not_found("the tournament does not exist"))?;
    let (numbers, _) = t.numbers();
    if numbers.is_empty() {
        return Err(TournamentError::precondition(
            "the pairing numbers are not given yet",
            Some("T 2"),
        ));
    }
    if round as usize != t.rounds().len() + 1 {
        return Err(TournamentError::precondition(
            format!("round {round} is not the next round to pair"),
            Some("T 1"),
        ));
    }
    // Points (half-points, TRF scale) at the end of each round, by pairing number.
    let rounds = round - 1;
    let mut score_at = vec![vec![0u32; rounds as usize + 1]; numbers.len() + 1];
    for (i, id) in numbers.iter().enumerate() {
        let mut total = 0;
        for r in 1..=rounds {
            total += cell(t, r, *id).half_points();
            score_at[i + 1][r as usize] = total;
        }
    }
    let mut players = Vec::new();
    let mut previous = Vec::new();
    for (i, id) in numbers.iter().enumerate() {
        let number = i as u32 + 1;
        if !t.active_in(*id, round) {
            continue;
        }
        let p = t.player(*id).expect("numbered players exist");
        let (mut colours, mut floats) = (Vec::new(), Vec::new());
        let (mut byes, mut forfeit_wins) = (0, 0);
        for r in 1..=rounds {
            let cell = cell(t, r, *id);
            if cell.opponent == 0 {
                if cell.result == ' ' {
                    // Not in that round at all (entered later): nothing to count.
                    continue;
                }
                byes += 1;
                floats.push("down");
                continue;
            }
            let played = matches!(cell.result, '1' | '0' | '=');
            if played {
                colours.push(if cell.colour == 'w' { "white" } else { "black" });
                let mine = score_at[number as usize][r as usize - 1];
                let theirs = score_at[cell.opponent as usize][r as usize - 1];
                floats.push(match mine.cmp(&theirs) {
                    std::cmp::Ordering::Greater => "down",
                    std::cmp::Ordering::Less => "up",
                    std::cmp::Ordering::Equal => "none",
                });
                if number < cell.opponent {
                    previous.push([number, cell.opponent]);
                }
            } else if cell.result == '+' {
                forfeit_wins += 1;
                floats.push("down");
            } else {
                floats.push("none");
            }
        }
        players.push(json!({
            "id": number,
            "name": p.entrant.name,
            "score": f64::from(score_at[number as usize][rounds as usize]) / 2.0,
            "rating": p.entrant.rating,
            "starting_number": number,
            "title": p.entrant.title,
            "color_hist": colours,
            "float_history": floats,
            "bye_count": byes,
            "forfeit_win_count": forfeit_wins,
        }));
    }
    let bye_value = match c.bye_score {
        ByeScore::Win => 1.0,
        ByeScore::Draw => 0.5,
        ByeScore::Zero => 0.0,
    };
    let request: Value = json!({
        "system": "dutch",
        "players": players,
        "previous_pairings": previous,
        "round_number": round,
        "total_rounds": c.rounds,
        "initial_color": if t.top_white().unwrap_or(true) { "white" } else { "black" },
        "bye_value": bye_value,
        "max_byes_per_player": 1,
    });
    Ok(request.to_string())
}

/// caissify-pairings' answer: `[{"white_id", "black_id", "table", "bye"?}, …]`, in
/// pairing numbers; boards in the order of `table`.
///
/// # Errors
/// What does not read as that answer (the engine's own words are kept by the caller).
pub fn read_caissify_answer(text: &str) -> Result<TrfRound, String> {
    #[derive(serde::Deserialize)]
    struct Row {
        white_id: u32,
        black_id: Option<u32>,
        table: u32,
        #[serde(default)]
        bye: bool,
    }
    let mut rows: Vec<Row> =
        serde_json::from_str(text).map_err(|e| format!("not caissify-pairings' JSON: {e}"))?;
    rows.sort_by_key(|r| r.table);
    let mut out = TrfRound::default();
    for r in rows {
        match (r.black_id, r.bye) {
            (Some(black), false) => out.boards.push((r.white_id, black)),
            (None, _) | (Some(_), true) => out.byes.push((r.white_id, 'U')),
        }
    }
    Ok(out)
}

/// An engine's or a TRF's round in pairing numbers, as the tournament's command takes it
/// (player ids), checked only for numbers the event knows; the round's own checks come
/// when it is paired.
///
/// # Errors
/// A number no player has (INVALID_ARGUMENT, naming it).
pub fn given_from(
    t: &Tournament,
    round: &TrfRound,
    source: PairingSource,
) -> Result<GivenPairings, TournamentError> {
    let (numbers, _) = t.numbers();
    let id = |n: u32, at: &str| {
        n.checked_sub(1)
            .and_then(|i| numbers.get(i as usize))
            .copied()
            .ok_or_else(|| {
                TournamentError::invalid(format!("{at}: no player has pairing number {n}"))
                    .by("T 1")
            })
    };
    let mut boards = Vec::with_capacity(round.boards.len());
    for (i, &(w, b)) in round.boards.iter().enumerate() {
        boards.push((
            id(w, &format!("pairings[{i}].white"))?,
            id(b, &format!("pairings[{i}].black"))?,
        ));
    }
    let mut byes = Vec::with_capacity(round.byes.len());
    for (i, &(n, code)) in round.byes.iter().enumerate() {
        let kind = match code {
            'U' | 'F' | '+' => ByeKind::PairingAllocated,
            'H' => ByeKind::Half,
            'Z' | '-' => ByeKind::Zero,
            other => {
                return Err(TournamentError::invalid(format!(
                    "byes[{i}]: unknown bye code {other:?}"
                )));
            }
        };
        byes.push(Bye {
            player: id(n, &format!("byes[{i}]"))?,
            kind,
        });
    }
    Ok(GivenPairings {
        boards,
        byes,
        source,
    })
}
