//! How a board is drawn: where each square stands as White sees the board, its colour, the
//! number written on it, the labels of an algebraic board's edges and the variant's title.
//! Pages get the position in these terms (`api::convert::drawing_pb`) and draw it as it
//! is, so the board's geometry, its numbering and the FEN format are known in one place,
//! here and in `rules/`.

use crate::rules::variant::NotationStyle;
use crate::rules::{Square, Variant};

/// The variant's name as a page titles a board.
#[must_use]
pub fn title(v: Variant) -> &'static str {
    match v {
        Variant::Russian => "Russian",
        Variant::International => "International",
        Variant::English => "English",
        Variant::Brazilian => "Brazilian",
        Variant::Pool => "Pool",
        Variant::Italian => "Italian",
        Variant::Giveaway => "Giveaway",
        Variant::Antidraughts => "Antidraughts",
        Variant::Russian80 => "Russian 10×8",
        Variant::Diagonal => "Diagonal",
        Variant::Turkish => "Turkish",
        Variant::Frisian => "Frisian",
        Variant::Towers => "Towers",
        Variant::Corners => "Corners",
    }
}

/// Where `sq` is drawn: its column from the left and its row from the top as White sees
/// the board, 0-based.
#[must_use]
pub fn place(sq: Square, v: Variant) -> (u8, u8) {
    let geo = v.geometry();
    (geo.file_rank(sq, v.rules().mirrored).0, geo.row(sq))
}

/// Whether `sq` is drawn dark: every playable square of a diagonal board, alternate
/// squares of an orthogonal one.
#[must_use]
pub fn is_dark(sq: Square, v: Variant) -> bool {
    let (x, y) = place(sq, v);
    v.geometry().is_diagonal() || (x + y) % 2 == 1
}

/// The number written on `sq` on a board whose moves are written with numbers; `None`
/// on an algebraic board (its edges carry the names, [`edges`]).
#[must_use]
pub fn label(sq: Square, v: Variant) -> Option<u32> {
    (v.rules().notation == NotationStyle::Numeric)
        .then(|| v.geometry().number(sq, v.rules().mirrored))
}

/// The letters under the bottom row (left to right) and the numbers beside the left
/// column (top to bottom) of an algebraic board; both empty on a numbered one.
#[must_use]
pub fn edges(v: Variant) -> (Vec<String>, Vec<String>) {
    if v.rules().notation == NotationStyle::Numeric {
        return (Vec::new(), Vec::new());
    }
    let geo = v.geometry();
    let files = (0..geo.width)
        .map(|f| char::from(b'a' + f).to_string())
        .collect();
    let ranks = (0..geo.height)
        .map(|r| (geo.height - r).to_string())
        .collect();
    (files, ranks)
}

/// The part square `n` (a PDN number) plays in a move's `path` (from the start through
/// every landing square): `from`, `via` or `to`.
#[must_use]
pub fn part_in_move(path: &[u32], n: u32) -> Option<&'static str> {
    let i = path.iter().rposition(|&m| m == n)?;
    Some(if i == 0 {
        "from"
    } else if i == path.len() - 1 {
        "to"
    } else {
        "via"
    })
}

#[cfg(test)]
mod tests {
    use super::{Variant, edges, is_dark, label, part_in_move, place};

    #[test]
    fn ru_1_1_a_russian_board_is_drawn_as_white_sees_it() {
        let c3 = crate::notation::parse_square("c3", Variant::Russian).expect("c3");
        let v = Variant::Russian;
        assert_eq!(place(c3, v), (2, 5));
        assert!(is_dark(c3, v));
        assert_eq!(label(c3, v), None, "algebraic boards carry no numbers");
        let (files, ranks) = edges(v);
        assert_eq!((files[0].as_str(), ranks[0].as_str()), ("a", "8"));
        // 1. c3-d4 is 22-18.
        assert_eq!(part_in_move(&[22, 18], 22), Some("from"));
        assert_eq!(part_in_move(&[22, 18], 18), Some("to"));
        assert_eq!(part_in_move(&[22, 18], 17), None);
    }

    #[test]
    fn an_international_board_is_numbered_from_the_top_left() {
        let v = Variant::International;
        let one = v.geometry().from_number(1, false).expect("square 1");
        assert_eq!(place(one, v), (1, 0));
        assert_eq!(label(one, v), Some(1));
        assert_eq!(edges(v), (Vec::new(), Vec::new()));
    }
}
