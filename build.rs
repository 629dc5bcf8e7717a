//! Compiles the gRPC contract (`proto/draughts/arbiter/v1/arbiter.proto`) into Rust with
//! tonic + prost, and writes its file descriptor set for server reflection.
//!
//! protoc comes from the `protoc-bin-vendored` crate so that a clean clone builds with
//! nothing installed but the Rust toolchain.

use std::path::PathBuf;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let proto = "proto/draughts/arbiter/v1/arbiter.proto";
    println!("cargo:rerun-if-changed={proto}");
    println!("cargo:rerun-if-changed=build.rs");

    let out_dir = PathBuf::from(std::env::var("OUT_DIR")?);
    let protoc = protoc_bin_vendored::protoc_bin_path()?;
    // The vendored include dir holds google/protobuf/*.proto (Timestamp).
    let well_known = protoc_bin_vendored::include_path()?;

    // Passing protoc through the config rather than setting PROTOC: `set_var` is unsafe
    // in edition 2024, and this keeps the choice local to this build.
    let mut config = tonic_prost_build::Config::new();
    config.protoc_executable(protoc);

    tonic_prost_build::configure()
        // No `XClient::connect(addr)` constructors: `BoardService.Connect` (a fixed name)
        // generates a client method `connect` that would clash with it. Clients build a
        // `tonic::transport::Channel` and call `XClient::new(channel)`.
        .build_transport(false)
        // Prost, but a message that does not decode is INVALID_ARGUMENT (the caller's
        // fault), not tonic's INTERNAL: see src/api/codec.rs.
        .codec_path("crate::api::codec::ProtoCodec")
        .file_descriptor_set_path(out_dir.join("arbiter_descriptor.bin"))
        .compile_with_config(
            config,
            &[PathBuf::from(proto)],
            &[PathBuf::from("proto"), well_known],
        )?;
    Ok(())
}
