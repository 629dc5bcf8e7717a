//! Ballot openings (RULES.md T 3): the federations' tables of openings drawn by lot, as
//! data files with their source and edition (`src/tournament/tables/`), each row checked
//! by the rules core when a table loads.
//!
//! A row is either an opening of moves (`play`: the moves must be legal from the
//! variant's start position and reach the row's position) or a start position with
//! pieces displaced (`place`: each `from-to` takes the start position's piece on `from`
//! and puts it on `to`; the result must be the row's position and a legal one). The
//! tables hold the position as a PDN FEN with squares 1–32; the opening keeps it in the
//! variant's own FEN and its moves in the variant's own notation. The 64-square tables
//! write their moves short (`ab4`), the English three-move ballot in numbers (`9-13`,
//! `13x22`).

use std::sync::OnceLock;

use crate::notation::fen::{parse_fen, write_fen};
use crate::notation::movetext::{parse_move, write_move};
use crate::notation::square::{parse_square, square_name};
use crate::rules::{Color, Position, Setup, Variant};

/// How a table's opening is given.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum OpeningKind {
    /// Moves from the start position.
    Play,
    /// The start position with pieces displaced.
    Place,
}

/// One opening of a table.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Opening {
    /// Its number in the published order, from 1.
    pub number: u32,
    /// Its label as published (`12-IV`).
    pub code: String,
    /// Moves or displaced pieces.
    pub kind: OpeningKind,
    /// The row's text as published (`ab4 ba5 ba3`, `a1-a5 a7-h4`).
    pub text: String,
    /// For `Play`, the moves in the variant's notation (`c3-d4`); empty for `Place`.
    pub moves: Vec<String>,
    /// The position the game starts from, as the variant writes its FEN.
    pub fen: String,
}

/// A table of ballot openings.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Table {
    /// The id an event names it by (`fmjd-64`).
    pub id: &'static str,
    /// Its title.
    pub name: &'static str,
    /// Where it was published, and the transcription used (its edition).
    pub source: &'static str,
    /// The variant whose games it opens.
    pub variant: Variant,
    /// The openings that may be drawn, in the published order (numbers with gaps where
    /// a row is left out).
    pub openings: Vec<Opening>,
    /// Rows of the data file not drawn in this table: number, code and why.
    pub left_out: Vec<(u32, String, &'static str)>,
}

impl Table {
    /// The opening numbered `number` (1-based, the published order), if it may be drawn.
    pub fn opening(&self, number: u32) -> Option<&Opening> {
        self.openings
            .binary_search_by_key(&number, |o| o.number)
            .ok()
            .map(|i| &self.openings[i])
    }
}

/// A table's definition: its data file and what it takes from it.
struct Definition {
    id: &'static str,
    name: &'static str,
    source: &'static str,
    variant: Variant,
    data: &'static str,
    /// Rows of the data file this table does not draw (their numbers are kept): code and
    /// why.
    without: &'static [(&'static str, &'static str)],
}

/// Why the Brazilian table leaves eleven FMJD openings out.
const NOT_BRAZILIAN: &str = "left out of the Brazilian table (lidraughts' FMJD table for \
     Brazilian, same file and commit)";

const FMJD_64: &str = include_str!("tables/fmjd-64.txt");
const IDF_64: &str = include_str!("tables/idf-64.txt");
const ACF_3MOVE: &str = include_str!("tables/acf-3move.txt");

/// Why eighteen of the ACF's 174 three-move openings are not drawn.
const ACF_BARRED: &str = "barred: not in the ACF's 156-opening three-move deck \
     (CheckerBoard's ACF list, see the data file)";

const FMJD_SOURCE: &str = "FMJD, https://results.fmjd.org/viewpage.php?page_id=2 (FMJD Drawing \
     Table 64), as transcribed in lidraughts, modules/draughts/src/main/OpeningTable.scala, \
     commit c7feaf1 (2026-08-12)";

const DEFINITIONS: &[Definition] = &[
    Definition {
        id: "fmjd-64",
        name: "FMJD Drawing Table 64",
        source: FMJD_SOURCE,
        variant: Variant::Russian,
        data: FMJD_64,
        without: &[],
    },
    // The Brazilian table is the FMJD one without the eleven openings lidraughts' table
    // for Brazilian leaves out (same file and commit).
    Definition {
        id: "fmjd-64-brazilian",
        name: "FMJD Drawing Table 64 (Brazilian)",
        source: FMJD_SOURCE,
        variant: Variant::Brazilian,
        data: FMJD_64,
        without: &[
            ("1-IX", NOT_BRAZILIAN),
            ("4-XV", NOT_BRAZILIAN),
            ("5-IX", NOT_BRAZILIAN),
            ("5-XI", NOT_BRAZILIAN),
            ("19-V", NOT_BRAZILIAN),
            ("25-XIII", NOT_BRAZILIAN),
            ("30-XVI", NOT_BRAZILIAN),
            ("40-XIV", NOT_BRAZILIAN),
            ("41-XIII", NOT_BRAZILIAN),
            ("42-XIV", NOT_BRAZILIAN),
            ("43-II", NOT_BRAZILIAN),
        ],
    },
    Definition {
        id: "idf-64",
        name: "IDF Drawing Table 64 (basic positions)",
        source: "International Draughts Federation, https://idf64.org/tables-of-draw/ (IDF \
             Drawing Table 64, basic positions), as transcribed in lidraughts, \
             modules/draughts/src/main/OpeningTable.scala, commit c7feaf1 (2026-08-12)",
        variant: Variant::Russian,
        data: IDF_64,
        without: &[(
            "2-IV",
            "the transcription's moves (ef4 fe5 ab4) and its position (White on a5, none \
             on b4 or f4) disagree; not drawn until checked against the IDF's own table",
        )],
    },
    // The ACF's numbering of the 174 three-move openings; the 156 of the current deck
    // are drawn, the barred ones keep their numbers.
    Definition {
        id: "acf-3move",
        name: "ACF three-move ballot (156-opening deck)",
        source: "American Checker Federation, three-move deck of 156 openings (2003; \
             http://www.usacheckers.com/156openingdeck.php), ACF numbers and moves as \
             listed in CheckerBoard, github.com/eygilbert/CheckerBoard, utility.c, \
             commit 691ab49 (2024-08-01)",
        variant: Variant::English,
        data: ACF_3MOVE,
        without: &[
            ("3", ACF_BARRED),
            ("13", ACF_BARRED),
            ("26", ACF_BARRED),
            ("35", ACF_BARRED),
            ("44", ACF_BARRED),
            ("45", ACF_BARRED),
            ("48", ACF_BARRED),
            ("52", ACF_BARRED),
            ("77", ACF_BARRED),
            ("88", ACF_BARRED),
            ("94", ACF_BARRED),
            ("109", ACF_BARRED),
            ("114", ACF_BARRED),
            ("137", ACF_BARRED),
            ("145", ACF_BARRED),
            ("156", ACF_BARRED),
            ("168", ACF_BARRED),
            ("171", ACF_BARRED),
        ],
    },
];

/// The ids of the known tables, in the order they are listed.
pub fn table_ids() -> Vec<&'static str> {
    DEFINITIONS.iter().map(|d| d.id).collect()
}

/// The table named `id`.
///
/// # Errors
/// An unknown id (the message lists the known ones), or a table whose data does not
/// check (a bug in the data files, caught by the tests).
pub fn table(id: &str) -> Result<&'static Table, String> {
    static TABLES: OnceLock<Vec<Result<Table, String>>> = OnceLock::new();
    let tables = TABLES.get_or_init(|| DEFINITIONS.iter().map(load).collect());
    match DEFINITIONS.iter().position(|d| d.id == id) {
        Some(i) => tables[i].as_ref().map_err(Clone::clone),
        None => Err(format!(
            "unknown ballot table {id:?}; known: {}",
            table_ids().join(", ")
        )),
    }
}

fn load(d: &Definition) -> Result<Table, String> {
    let mut openings = Vec::new();
    let mut left_out = Vec::new();
    let mut errors = Vec::new();
    let mut number = 0;
    for (at, line) in d.data.lines().enumerate() {
        if line.starts_with('#') || line.trim().is_empty() {
            continue;
        }
        number += 1;
        let code = line.split('\t').next().unwrap_or("");
        if let Some((_, why)) = d.without.iter().find(|(c, _)| *c == code) {
            left_out.push((number, code.to_string(), *why));
            continue;
        }
        match row(line, d.variant, number) {
            Ok(o) => openings.push(o),
            Err(e) => errors.push(format!("table {}, line {}: {e}", d.id, at + 1)),
        }
    }
    if left_out.len() != d.without.len() {
        errors.push(format!(
            "table {}: {} openings to leave out, {} found",
            d.id,
            d.without.len(),
            left_out.len()
        ));
    }
    if !errors.is_empty() {
        return Err(errors.join("; "));
    }
    Ok(Table {
        id: d.id,
        name: d.name,
        source: d.source,
        variant: d.variant,
        openings,
        left_out,
    })
}

/// One row of a table's data, checked by the rules core.
fn row(line: &str, variant: Variant, number: u32) -> Result<Opening, String> {
    let cols: Vec<&str> = line.split('\t').collect();
    let [code, kind, text, fen] = cols[..] else {
        return Err(format!("4 columns expected, got {}", cols.len()));
    };
    let kind = match kind {
        "play" => OpeningKind::Play,
        "place" => OpeningKind::Place,
        other => return Err(format!("unknown kind {other:?}")),
    };
    let stated = parse_fen(fen, variant).map_err(|e| format!("FEN: {e}"))?;
    let (reached, moves) = match kind {
        OpeningKind::Play => play(text, variant)?,
        OpeningKind::Place => (place(text, variant, stated.turn())?, Vec::new()),
    };
    if reached.to_setup() != stated.to_setup() {
        return Err(format!(
            "{code}: the {} give {} but the table says {}",
            if kind == OpeningKind::Play {
                "moves"
            } else {
                "displaced pieces"
            },
            write_fen(&reached),
            write_fen(&stated)
        ));
    }
    Ok(Opening {
        number,
        code: code.to_string(),
        kind,
        text: text.to_string(),
        moves,
        fen: write_fen(&stated),
    })
}

/// Plays the table's short moves (`ab4`: the man from the a-file to b4; `bd6` a capture
/// landing on d6), or its numeric ones (`9-13`, `13x22`: a capture written with `x`),
/// from the start position; each must name exactly one legal move. `Free` is the start
/// position itself.
fn play(text: &str, variant: Variant) -> Result<(Position, Vec<String>), String> {
    let mut pos = Position::start(variant);
    let mut written = Vec::new();
    // "Free": the start position itself, as the IDF table publishes it.
    for short in text.split_whitespace().filter(|s| *s != "Free") {
        let b = short.as_bytes();
        if b[0].is_ascii_digit() {
            // Numeric: resolved among the legal moves, so a capture is forced.
            let mv = parse_move(short, &pos).map_err(|e| format!("move {short:?}: {e}"))?;
            if mv.is_capture() != short.contains('x') {
                return Err(format!(
                    "move {short:?}: written as {} in {}",
                    if mv.is_capture() {
                        "a move, but it captures"
                    } else {
                        "a capture, but it does not"
                    },
                    write_fen(&pos)
                ));
            }
            written.push(write_move(&pos, &mv));
            pos = pos.play(&mv).map_err(|e| format!("move {short:?}: {e}"))?;
            continue;
        }
        if b.len() < 3 || !b[0].is_ascii_lowercase() {
            return Err(format!("move {short:?}: expected a file then a square"));
        }
        let to = parse_square(&short[1..], variant).map_err(|e| format!("move {short:?}: {e}"))?;
        let file = b[0];
        let matching: Vec<_> = pos
            .legal_moves()
            .into_iter()
            .filter(|m| m.to() == to && square_name(m.from(), variant).as_bytes()[0] == file)
            .collect();
        let [mv] = &matching[..] else {
            return Err(format!(
                "move {short:?} names {} legal moves in {}",
                matching.len(),
                write_fen(&pos)
            ));
        };
        written.push(write_move(&pos, mv));
        pos = pos.play(mv).map_err(|e| format!("move {short:?}: {e}"))?;
    }
    Ok((pos, written))
}

/// The start position with each `from-to` piece moved, `turn` to move (the table says
/// which side starts). The steps are one arrangement, not moves in turn (`b2-h6 h6-a5`:
/// White's b2 goes to h6 as Black's h6 goes to a5): every piece is lifted from the start
/// position first, then put down.
fn place(text: &str, variant: Variant, turn: Color) -> Result<Position, String> {
    let start = Position::start(variant).to_setup();
    let mut setup: Setup = start.clone();
    setup.turn = turn;
    let mut moved = Vec::new();
    // `-----` stands for a side none of whose pieces is displaced.
    for step in text.split_whitespace().filter(|s| *s != "-----") {
        let (from, to) = step
            .split_once('-')
            .ok_or_else(|| format!("{step:?}: expected from-to"))?;
        let from = parse_square(from, variant).map_err(|e| format!("{step:?}: {e}"))?;
        let to = parse_square(to, variant).map_err(|e| format!("{step:?}: {e}"))?;
        let f = from.bit();
        let white = if start.white & f != 0 {
            true
        } else if start.black & f != 0 {
            false
        } else {
            return Err(format!("{step:?}: no piece on the square moved from"));
        };
        setup.white &= !f;
        setup.black &= !f;
        moved.push((step, white, to.bit()));
    }
    for (step, white, t) in moved {
        if (setup.white | setup.black) & t != 0 {
            return Err(format!("{step:?}: the square moved to is taken"));
        }
        if white {
            setup.white |= t;
        } else {
            setup.black |= t;
        }
    }
    Position::from_setup(&setup).map_err(|e| format!("{text:?}: {e}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// T 3: every known table loads, every row checked by the rules core.
    #[test]
    fn t_3_every_table_loads_and_checks() {
        for id in table_ids() {
            let t = table(id).unwrap_or_else(|e| panic!("{e}"));
            assert!(!t.openings.is_empty());
            assert!(t.openings.windows(2).all(|w| w[0].number < w[1].number));
            let rows = t.openings.len() + t.left_out.len();
            assert!(t.openings.iter().all(|o| o.number as usize <= rows));
        }
        assert_eq!(table("fmjd-64").expect("fmjd").openings.len(), 736);
        let br = table("fmjd-64-brazilian").expect("br");
        assert_eq!(br.openings.len(), 725);
        assert_eq!(br.left_out[0].1, "1-IX");
        assert!(br.opening(9).is_none(), "1-IX keeps its number, not drawn");
        assert_eq!(br.opening(10).expect("1-X").code, "1-X");
        let idf = table("idf-64").expect("idf");
        assert_eq!((idf.openings.len(), idf.left_out.len()), (149, 1));
        let acf = table("acf-3move").expect("acf");
        assert_eq!((acf.openings.len(), acf.left_out.len()), (156, 18));
        let e = table("acf").expect_err("unknown");
        assert!(e.contains("fmjd-64") && e.contains("idf-64"), "{e}");
    }

    /// T 3: an opening keeps its published label and text and its moves in the
    /// variant's notation.
    #[test]
    fn t_3_an_opening_reads_as_published() {
        let t = table("fmjd-64").expect("fmjd");
        let o = t.opening(1).expect("first");
        assert_eq!(o.code, "1-I");
        assert_eq!(o.text, "ab4 ba5 ba3 ab6 ab2 dc5");
        assert_eq!(
            o.moves,
            ["a3-b4", "b6-a5", "b2-a3", "a7-b6", "a1-b2", "d6-c5"]
        );
        let p = t
            .openings
            .iter()
            .find(|o| o.code == "11-IV")
            .expect("a displaced row");
        assert_eq!(p.kind, OpeningKind::Place);
        assert_eq!(p.text, "a1-a5 a7-h4");
        assert!(p.moves.is_empty());
        assert!(t.opening(0).is_none() && t.opening(737).is_none());
    }

    /// T 3: the English three-move ballot keeps the ACF's numbers, Black moving first;
    /// the barred openings keep theirs and are not drawn.
    #[test]
    fn t_3_the_acf_three_move_ballot_reads_as_published() {
        let t = table("acf-3move").expect("acf");
        assert_eq!(t.variant, Variant::English);
        let o = t.opening(1).expect("ACF #1");
        assert_eq!(o.code, "1");
        assert_eq!(o.text, "9-13 21-17 5-9");
        assert_eq!(o.moves, ["9-13", "21-17", "5-9"]);
        assert_eq!(o.fen, "W:W17,22-32:B1-4,6-13");
        // A capture among the three moves: the Double Cross.
        let d = t.opening(46).expect("ACF #46");
        assert_eq!(d.moves, ["9-14", "23-18", "14x23"]);
        assert_eq!(d.fen, "W:W21,22,24-32:B1-8,10-12,23");
        assert_eq!(t.left_out[0], (3, "3".to_string(), ACF_BARRED));
        assert!(t.opening(3).is_none() && t.opening(171).is_none());
        assert_eq!(t.opening(174).expect("ACF #174").text, "12-16 24-20 10-15");
        assert!(t.opening(175).is_none());
        // The barred rows are checked too, though never drawn.
        let barred: Vec<_> = ACF_3MOVE
            .lines()
            .filter(|l| !l.starts_with('#'))
            .filter(|l| {
                let code = l.split('\t').next().unwrap_or("");
                t.left_out.iter().any(|(_, c, _)| c == code)
            })
            .map(|l| row(l, Variant::English, 0).expect("a barred row checks"))
            .collect();
        assert_eq!(barred.len(), 18);
        assert_eq!(barred[17].text, "12-16 23-19 16x23");
    }

    /// A row whose moves do not reach its position, or name no legal move, is refused.
    #[test]
    fn t_3_a_wrong_row_is_refused() {
        let d = Definition {
            id: "bad",
            name: "bad",
            source: "test",
            variant: Variant::Russian,
            data: "1-I\tplay\tab4 ba5\tW:W17,21,22,23,24,25,26,27,28,29,30,31:B1,2,3,4,5,6,7,8,9,10,11,12\n",
            without: &[],
        };
        assert!(
            load(&d)
                .expect_err("wrong position")
                .contains("the moves give")
        );
        let d = Definition {
            data: "1-I\tplay\tac5\tW:W17,21,22,23,24,25,26,27,28,29,30,31:B1,2,3,4,5,6,7,8,9,10,11,12\n",
            ..d
        };
        let e = load(&d).expect_err("no such move");
        assert!(e.contains("names 0 legal moves"), "{e}");
        // English: after 9-14 23-18 Black must take 14x23; 5-9 is refused.
        let d = Definition {
            variant: Variant::English,
            data: "1\tplay\t9-14 23-18 5-9\tW:W18,21,22,24,25,26,27,28,29,30,31,32:B1,2,3,4,6,7,8,9,10,11,12,14\n",
            ..d
        };
        let e = load(&d).expect_err("a capture not taken");
        assert!(e.contains("\"5-9\""), "{e}");
        // A capture written as a move is refused too.
        let d = Definition {
            data: "1\tplay\t9-14 23-18 14-23\tW:W21,22,24,25,26,27,28,29,30,31,32:B1,2,3,4,5,6,7,8,10,11,12,23\n",
            ..d
        };
        let e = load(&d).expect_err("a capture written as a move");
        assert!(e.contains("but it captures"), "{e}");
    }
}
