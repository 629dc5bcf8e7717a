//! The gRPC surface: generated protobuf types and (later) the service handlers.
//!
//! Only this layer sees protobuf types; conversions to and from domain types live here.

pub mod pb;
