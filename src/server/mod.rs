//! The service around the judge: configuration, authentication, and (with the gRPC API)
//! the server itself.

pub mod config;
pub mod conn;
pub mod edge;
pub mod forward;
pub mod memory;
pub mod probes;
pub mod run;
pub mod tls;
