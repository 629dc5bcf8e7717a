//! The arbiter's round report ([`super::report`]) as text: an HTML page to print (its
//! stylesheet, `report.css`, embedded in the page: A4, one board per section, a page
//! break before each board), CSV (RFC 4180: a header row `board,game,time,kind,actor,
//! rule,text`, then one row per incident, result and move) and JSON (the report's own
//! fields, serde).

use std::fmt::Write as _;

use super::report::{GameReport, GameStatus, Incident, ReportPlayer, RoundReport, SheetMove};

/// The page's stylesheet, screen and print (`@media print`, `@page` A4).
const CSS: &str = include_str!("report.css");

/// The formats the report is given in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    /// A page to read and print.
    Html,
    /// One row per incident and move.
    Csv,
    /// The report's data.
    Json,
}

impl Format {
    /// `html`, `csv` or `json` (as `?format=` and `--format` take them); `None` otherwise.
    pub fn parse(s: &str) -> Option<Format> {
        match s {
            "html" => Some(Format::Html),
            "csv" => Some(Format::Csv),
            "json" => Some(Format::Json),
            _ => None,
        }
    }

    /// Its media type.
    pub fn content_type(self) -> &'static str {
        match self {
            Format::Html => "text/html; charset=utf-8",
            Format::Csv => "text/csv; charset=utf-8",
            Format::Json => "application/json",
        }
    }
}

/// The report in `format`.
pub fn render(r: &RoundReport, format: Format) -> String {
    match format {
        Format::Html => html(r),
        Format::Csv => csv(r),
        Format::Json => json(r),
    }
}

/// The report as JSON (its fields as [`RoundReport`] names them).
pub fn json(r: &RoundReport) -> String {
    // Strings, numbers and options only: serializing cannot fail.
    serde_json::to_string_pretty(r).unwrap_or_else(|e| format!("{{\"error\":\"{e}\"}}"))
}

/// One RFC 4180 field: quoted when it holds a comma, a quote or a line break, its quotes
/// doubled.
fn field(v: &str) -> String {
    if v.contains([',', '"', '\n', '\r']) {
        format!("\"{}\"", v.replace('"', "\"\""))
    } else {
        v.to_string()
    }
}

/// The report as CSV: `board,game,time,kind,actor,rule,text`, one row per incident (the
/// game's result among them), then per move of the score sheet (`kind` `move`, `text` the
/// move as written with its time spent and the clocks after it); a round's byes and
/// absences last, without a board. Lines end CRLF.
pub fn csv(r: &RoundReport) -> String {
    let mut out = String::from("board,game,time,kind,actor,rule,text\r\n");
    let mut row =
        |board: &str, game: &str, time: &str, kind: &str, actor: &str, rule: &str, text: &str| {
            let cells = [board, game, time, kind, actor, rule, text].map(field);
            out.push_str(&cells.join(","));
            out.push_str("\r\n");
        };
    for b in &r.boards {
        let board = b.board.to_string();
        for g in &b.games {
            if g.incidents.is_empty() && g.sheet.is_empty() {
                row(&board, &g.game_id, "", "status", "", "", &game_status(g));
            }
            if let Some(p) = &g.problem {
                row(&board, &g.game_id, "", "problem", "server", "", p);
            }
            for i in &g.incidents {
                row(
                    &board,
                    &g.game_id,
                    &i.time,
                    i.kind,
                    &i.actor,
                    i.rule.as_deref().unwrap_or_default(),
                    &i.text,
                );
            }
            for m in &g.sheet {
                let text = match m.timing() {
                    t if t.is_empty() => m.written.clone(),
                    t => format!("{}, {t}", m.written),
                };
                row(
                    &board,
                    &g.game_id,
                    &m.time,
                    "move",
                    &format!("{} player", m.side),
                    "",
                    &text,
                );
            }
        }
    }
    for bye in &r.byes {
        row(
            "",
            "",
            "",
            "bye",
            "",
            "T 6",
            &format!("{}: {}", name(&bye.player), bye.text),
        );
    }
    for p in &r.absent {
        row(
            "",
            "",
            "",
            "absent",
            "arbiter",
            "T 5",
            &format!("{} marked absent", name(p)),
        );
    }
    out
}

/// A player as the report writes them: `Petrov, Ivan (3)`.
fn name(p: &ReportPlayer) -> String {
    let n = if p.name.trim().is_empty() {
        format!("player {}", p.id)
    } else {
        p.name.clone()
    };
    if p.number > 0 {
        format!("{n} ({})", p.number)
    } else {
        n
    }
}

/// Where a game stands, in words.
fn game_status(g: &GameReport) -> String {
    match (&g.result, g.status) {
        (Some(res), _) => res.text.clone(),
        (None, GameStatus::Playing) => "in progress".into(),
        (None, GameStatus::NotStarted) => "not started".into(),
        (None, GameStatus::NotPlayed) => "not played".into(),
        (None, GameStatus::Finished | GameStatus::Replaced) => "no result".into(),
    }
}

/// HTML's five characters escaped (the round report's pages and the standings page).
#[must_use]
pub fn esc(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

/// `23:14:05` of an RFC 3339 UTC time (the date is the report's), the text itself if it
/// is not one.
fn clock_of(time: &str) -> &str {
    time.get(11..19).unwrap_or(time)
}

/// The report as an HTML page: a heading with the event, round and status, a summary of
/// the boards, then a section per board (a page break before each when printed) with
/// each game's players, result, incidents and score sheet; byes and absences last.
pub fn html(r: &RoundReport) -> String {
    let mut h = String::with_capacity(16 * 1024);
    let title = format!("{} — round {} — arbiter's report", r.event, r.round);
    let _ = write!(
        h,
        "<!doctype html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n\
         <title>{}</title>\n<style>\n{CSS}</style>\n</head>\n<body>\n",
        esc(&title)
    );
    let _ = write!(
        h,
        "<header class=\"head\">\n<h1>{}</h1>\n<p class=\"sub\">Round {} · arbiter's report · \
         <span class=\"status\" data-status=\"{}\">{}</span></p>\n<p class=\"meta\">",
        esc(&r.event),
        r.round,
        status_key(r.status),
        esc(r.status.words())
    );
    if let Some(s) = &r.started_at {
        let _ = write!(
            h,
            "Started {} UTC · ",
            esc(&s.replace('T', " ")[..s.len().min(19)])
        );
    }
    let _ = write!(
        h,
        "Report as of {} UTC",
        esc(&r.as_of.replace('T', " ")[..r.as_of.len().min(19)])
    );
    if r.status != super::report::RoundStatus::Finished {
        h.push_str(" · <strong>the round as it stands: games still to finish</strong>");
    }
    h.push_str("</p>\n</header>\n");

    // Summary of the boards.
    h.push_str(
        "<section class=\"summary\">\n<h2>Boards</h2>\n<table>\n<thead><tr><th>Board</th>\
         <th>Game</th><th>White</th><th>Black</th><th>Result</th><th>Incidents</th></tr></thead>\n<tbody>\n",
    );
    for b in &r.boards {
        for g in &b.games {
            let _ = writeln!(
                h,
                "<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
                b.board,
                esc(&g.game_id),
                esc(&name(&g.white)),
                esc(&name(&g.black)),
                esc(&game_status(g)),
                g.incidents.iter().filter(|i| i.kind != "start").count()
            );
        }
    }
    h.push_str("</tbody>\n</table>\n");
    if !r.byes.is_empty() || !r.absent.is_empty() {
        h.push_str("<ul class=\"byes\">\n");
        for b in &r.byes {
            let _ = writeln!(
                h,
                "<li>Bye: {} — {}</li>",
                esc(&name(&b.player)),
                esc(&b.text)
            );
        }
        for p in &r.absent {
            let _ = writeln!(h, "<li>Marked absent (T 5): {}</li>", esc(&name(p)));
        }
        h.push_str("</ul>\n");
    }
    h.push_str("</section>\n");

    for b in &r.boards {
        let _ = write!(
            h,
            "<section class=\"board\" id=\"board-{}\">\n<h2>Board {}: {} – {}</h2>\n",
            b.board,
            b.board,
            esc(&name(&b.white)),
            esc(&name(&b.black))
        );
        for g in &b.games {
            game_html(&mut h, g, b.games.len() > 1);
        }
        h.push_str("</section>\n");
    }
    h.push_str(
        "<footer class=\"foot\">draughts-arbiter · every incident from the games' logs; \
         rules as RULES.md numbers them</footer>\n</body>\n</html>\n",
    );
    h
}

fn status_key(s: super::report::RoundStatus) -> &'static str {
    match s {
        super::report::RoundStatus::NotStarted => "not_started",
        super::report::RoundStatus::InProgress => "in_progress",
        super::report::RoundStatus::Finished => "finished",
    }
}

fn game_html(h: &mut String, g: &GameReport, several: bool) {
    h.push_str("<article class=\"game\">\n");
    let heading = if several || g.status == GameStatus::Replaced {
        format!("Game {} ({})", g.game, g.game_id)
    } else {
        format!("Game {}", g.game_id)
    };
    let _ = writeln!(
        h,
        "<h3>{}{}</h3>",
        esc(&heading),
        if g.status == GameStatus::Replaced {
            " — replaced: its default annulled (T 5)"
        } else {
            ""
        }
    );
    let mut facts = vec![
        format!("White: {}", esc(&name(&g.white))),
        format!("Black: {}", esc(&name(&g.black))),
    ];
    if let Some(v) = &g.variant {
        facts.push(format!("Variant: {}", esc(v)));
    }
    if let Some(tc) = &g.time_control {
        facts.push(format!("Time control: {}", esc(tc)));
    }
    let _ = writeln!(h, "<p class=\"facts\">{}</p>", facts.join(" · "));
    let result = match &g.result {
        Some(res) => format!(
            "Result: <strong>{}</strong> — {}{}",
            esc(&res.text),
            esc(&res.actor),
            res.time
                .as_deref()
                .map(|t| format!(", {} UTC", esc(clock_of(t))))
                .unwrap_or_default()
        ),
        None => format!("Result: <strong>{}</strong>", esc(&game_status(g))),
    };
    let _ = writeln!(h, "<p class=\"result\">{result}</p>");
    if let Some(p) = &g.problem {
        let _ = writeln!(h, "<p class=\"problem\">{}</p>", esc(p));
    }
    if g.incidents.is_empty() {
        h.push_str("<p class=\"none\">No incidents.</p>\n");
    } else {
        h.push_str(
            "<table class=\"incidents\">\n<thead><tr><th>Time (UTC)</th><th>Kind</th>\
             <th>By</th><th>Rule</th><th>What happened</th></tr></thead>\n<tbody>\n",
        );
        for i in &g.incidents {
            incident_html(h, i);
        }
        h.push_str("</tbody>\n</table>\n");
    }
    if !g.sheet.is_empty() {
        h.push_str(
            "<h4>Score sheet</h4>\n<table class=\"sheet\">\n<thead><tr><th>Move</th>\
             <th>Played (UTC)</th><th>Spent</th><th>Clocks after (white / black)</th></tr></thead>\n<tbody>\n",
        );
        for m in &g.sheet {
            sheet_html(h, m);
        }
        h.push_str("</tbody>\n</table>\n");
    }
    h.push_str("</article>\n");
}

fn incident_html(h: &mut String, i: &Incident) {
    let _ = writeln!(
        h,
        "<tr data-kind=\"{}\"><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
        i.kind,
        esc(clock_of(&i.time)),
        esc(&i.kind.replace('_', " ")),
        esc(&i.actor),
        esc(i.rule.as_deref().unwrap_or("")),
        esc(&i.text)
    );
}

fn sheet_html(h: &mut String, m: &SheetMove) {
    let clocks = match (m.white_ms, m.black_ms) {
        (Some(w), Some(b)) => format!(
            "{} / {}",
            crate::game::describe::clock_time(i64::try_from(w).unwrap_or(i64::MAX)),
            crate::game::describe::clock_time(i64::try_from(b).unwrap_or(i64::MAX))
        ),
        _ => "—".into(),
    };
    let spent = m.spent_ms.map_or_else(
        || "—".into(),
        |s| crate::game::describe::clock_time(i64::try_from(s).unwrap_or(i64::MAX)),
    );
    let _ = writeln!(
        h,
        "<tr><td class=\"mv\">{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
        esc(&m.written),
        esc(clock_of(&m.time)),
        esc(&spent),
        esc(&clocks)
    );
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rfc_4180_fields() {
        assert_eq!(field("plain"), "plain");
        assert_eq!(field("a, b"), "\"a, b\"");
        assert_eq!(field("say \"x\""), "\"say \"\"x\"\"\"");
        assert_eq!(field("two\nlines"), "\"two\nlines\"");
    }

    #[test]
    fn html_escapes_what_players_and_arbiters_wrote() {
        assert_eq!(esc("<b>&'\""), "&lt;b&gt;&amp;&#39;&quot;");
    }

    #[test]
    fn formats_by_name() {
        assert_eq!(Format::parse("csv"), Some(Format::Csv));
        assert_eq!(Format::parse("json"), Some(Format::Json));
        assert_eq!(Format::parse("html"), Some(Format::Html));
        assert_eq!(Format::parse("pdf"), None);
    }
}
