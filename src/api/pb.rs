//! Generated code for the `draughts.arbiter.v1` package, sealed in one module so the rest
//! of the crate never names a generated type by accident.
//!
//! The proto file's comments are the documentation of every message and field; they are
//! copied into the generated code as doc comments.

// Generated code: prost/tonic output is not ours to document or lint.
#![allow(missing_docs, clippy::all, clippy::pedantic, rustdoc::all)]

tonic::include_proto!("draughts.arbiter.v1");

/// The encoded `FileDescriptorSet` of the API, for server reflection
/// (`tonic_reflection::server::Builder::register_encoded_file_descriptor_set`).
pub const FILE_DESCRIPTOR_SET: &[u8] = tonic::include_file_descriptor_set!("arbiter_descriptor");

/// The fully qualified names of the API's services, as reflection lists them.
pub const SERVICE_NAMES: [&str; 6] = [
    "draughts.arbiter.v1.RulesService",
    "draughts.arbiter.v1.GameService",
    "draughts.arbiter.v1.BoardService",
    "draughts.arbiter.v1.ArbiterService",
    "draughts.arbiter.v1.BroadcastService",
    "draughts.arbiter.v1.TournamentService",
];
