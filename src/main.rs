//! The `draughts-arbiter` command line.
fn main() {}
