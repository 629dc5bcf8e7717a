//! `draughts-arbiter tournament standings` and `crosstable`: GetStandings and
//! GetCrosstable as an arbiter reads them off a wall chart.

use serde_json::{Value, json};

use super::entrant::{player_json, player_text};
use crate::api::pb;

/// `1  4. Dolgov (2300)  6  5 games +2 =2 -1  16 2 0`, one line a player after a heading.
pub(super) fn print_standings(json: bool, s: &pb::GetStandingsResponse) {
    if json {
        println!("{}", standings_json(s));
        return;
    }
    println!(
        "standings after round {}; tiebreaks: {}",
        s.round,
        if s.tiebreak_names.is_empty() {
            "none".to_string()
        } else {
            s.tiebreak_names.join(", ")
        }
    );
    let names: Vec<String> = s
        .rows
        .iter()
        .map(|r| player_text(r.player.as_ref()))
        .collect();
    let width = names.iter().map(|n| n.chars().count()).max().unwrap_or(0);
    for (r, name) in s.rows.iter().zip(&names) {
        let forfeits = if r.forfeits > 0 {
            format!(", {} unplayed", r.forfeits)
        } else {
            String::new()
        };
        let tiebreaks: Vec<String> = r.tiebreaks.iter().map(ToString::to_string).collect();
        println!(
            "{:>3}  {name:<width$}  {:>5}  {} games +{} ={} -{}{forfeits}  {}",
            r.rank,
            r.points,
            r.games,
            r.wins,
            r.draws,
            r.losses,
            tiebreaks.join(" "),
        );
    }
}

/// The standings as one JSON object (`tournament standings --json`, and the
/// `standings_updated` messages of `watch --json`).
pub(super) fn standings_json(s: &pb::GetStandingsResponse) -> Value {
    json!({
        "round": s.round,
        "tiebreak_names": s.tiebreak_names,
        "rows": s.rows.iter().map(|r| json!({
            "rank": r.rank,
            "player": r.player.as_ref().map(player_json),
            "points": r.points,
            "games": r.games,
            "wins": r.wins,
            "draws": r.draws,
            "losses": r.losses,
            "forfeits": r.forfeits,
            "tiebreaks": r.tiebreaks,
        })).collect::<Vec<Value>>(),
    })
}

/// Round by round (`4w 1` = against number 4 with White, won), or as a round-robin's
/// matrix (`matrix`: a column a pairing number, each cell the results against that
/// player in round order).
pub(super) fn print_crosstable(json: bool, matrix: bool, c: &pb::GetCrosstableResponse) {
    if json {
        println!(
            "{}",
            json!({
                "rows": c.rows.iter().map(|r| json!({
                    "player": r.player.as_ref().map(player_json),
                    "rank": r.rank,
                    "points": r.points,
                    "cells": r.cells.iter().map(|cell| json!({
                        "round": cell.round,
                        "opponent": cell.opponent,
                        "colour": pb::Side::try_from(cell.colour).map_or("?", |s| s.as_str_name()),
                        "result": cell.result,
                        "points": cell.points,
                        "game_points": cell.game_points,
                        "bye": pb::ByeKind::try_from(cell.bye).map_or("?", |k| k.as_str_name()),
                    })).collect::<Vec<Value>>(),
                })).collect::<Vec<Value>>(),
            })
        );
        return;
    }
    let names: Vec<String> = c
        .rows
        .iter()
        .map(|r| player_text(r.player.as_ref()))
        .collect();
    let width = names.iter().map(|n| n.chars().count()).max().unwrap_or(0);
    for (r, name) in c.rows.iter().zip(&names) {
        let cells: Vec<String> = if matrix {
            let me = r.player.as_ref().map_or(0, |p| p.pairing_number);
            (1..=c.rows.len() as u32)
                .map(|n| {
                    if n == me {
                        return "x".to_string();
                    }
                    let against: String = r
                        .cells
                        .iter()
                        .filter(|cell| cell.opponent == n)
                        .map(|cell| cell.result.as_str())
                        .collect();
                    if against.is_empty() {
                        ".".to_string()
                    } else {
                        against
                    }
                })
                .collect()
        } else {
            r.cells
                .iter()
                .map(|cell| {
                    let colour = match pb::Side::try_from(cell.colour) {
                        Ok(pb::Side::White) => "w",
                        Ok(pb::Side::Black) => "b",
                        _ => "",
                    };
                    if cell.opponent == 0 {
                        format!("bye {}", cell.result)
                    } else {
                        format!("{}{colour} {}", cell.opponent, cell.result)
                    }
                })
                .collect()
        };
        println!(
            "{name:<width$}  {:>5}  rank {:>2}  | {}",
            r.points,
            r.rank,
            cells.join(" | ")
        );
    }
}
