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
    // What the bundled SQLite was compiled with (.cargo/config.toml sets it for every
    // build script), for the test that its commits sync with fdatasync.
    println!("cargo:rerun-if-env-changed=LIBSQLITE3_FLAGS");
    println!(
        "cargo:rustc-env=ARBITER_LIBSQLITE3_FLAGS={}",
        std::env::var("LIBSQLITE3_FLAGS").unwrap_or_default()
    );

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
    broadcast_server();
    Ok(())
}

/// The server side of `BroadcastService` once more, by hand, with the same routes and
/// messages on the wire: its watch streams yield `crate::api::frame::EventFrame` (a
/// `GameEvent`, or one encoded once for every stream that sends it as it is)
/// where the generated one yields `GameEvent`. Written to
/// `$OUT_DIR/draughts.arbiter.v1.BroadcastService.rs`, included by `src/api/frame.rs`;
/// the routes are the proto's (`tests/it/round_stream.rs` and the others call them with
/// the generated client).
fn broadcast_server() {
    use tonic_build::manual::{Builder, Method, Service};
    let stream = |name: &str, route: &str, input: &str| {
        Method::builder()
            .name(name)
            .route_name(route)
            .input_type(format!("crate::api::pb::{input}"))
            .output_type("crate::api::frame::EventFrame")
            .codec_path("crate::api::frame::FrameCodec")
            .server_streaming()
            .build()
    };
    let service = Service::builder()
        .name("BroadcastService")
        .package("draughts.arbiter.v1")
        .comment("`BroadcastService` (see the proto), its streams of `EventFrame`.")
        .method(stream("watch_game", "WatchGame", "WatchGameRequest"))
        .method(stream("watch_event", "WatchEvent", "WatchEventRequest"))
        .method(
            Method::builder()
                .name("export_pdn")
                .route_name("ExportPdn")
                .input_type("crate::api::pb::ExportPdnRequest")
                .output_type("crate::api::pb::ExportPdnResponse")
                .codec_path("crate::api::codec::ProtoCodec")
                .build(),
        )
        .build();
    Builder::new()
        .build_client(false)
        .build_transport(false)
        .compile(&[service]);
}
