//! The gRPC API (`draughts.arbiter.v1`): generated types sealed in [`pb`], conversions in
//! one module, the services, and the error table.

pub mod auth;
mod board;
pub mod convert;
pub mod pb;
mod pdn;
pub mod service;
mod watch;

pub use service::{Api, status};
