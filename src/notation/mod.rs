//! Notation: squares, moves, FEN and PDN, read and written. Pure, like [`crate::rules`].

pub mod clock_comment;
pub mod drawing;
pub mod fen;
pub mod movetext;
pub mod pdn;
pub mod replay;
pub mod square;

pub use fen::{FenError, parse_fen, write_fen};
pub use movetext::{MoveError, parse_move, write_move, write_move_full};
pub use square::{SquareError, parse_square, square_name, square_number, write_square};
