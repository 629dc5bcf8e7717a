//! Pure rules of every variant: boards, pieces, move generation, outcomes and draw counters.
//!
//! No I/O, no async, no clock reads: everything here is a pure function of its arguments.
