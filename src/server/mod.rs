//! The service around the judge: configuration, authentication, and (with the gRPC API)
//! the server itself.

pub mod auth;
pub mod config;
pub mod metrics;
pub mod registry;
pub mod run;
pub mod tls;
