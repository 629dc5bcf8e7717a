//! Feeds arbitrary bytes to the path every RPC's request takes from the wire to the judge:
//! protobuf decoding of that RPC's input message and the edge's checks
//! (`api::validate::check_encoded`). The first byte picks the message. It must never
//! panic; every refusal is INVALID_ARGUMENT with a message that starts with a field's
//! path (or says the bytes do not decode) and stays within 200 bytes (the status bound).
//!
//! Run with `cargo +nightly fuzz run requests` from the crate root.
#![no_main]

use draughts_arbiter::api::validate::{REQUEST_MESSAGES, check_encoded};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Some((&pick, bytes)) = data.split_first() else {
        return;
    };
    let message = REQUEST_MESSAGES[usize::from(pick) % REQUEST_MESSAGES.len()];
    if let Err(e) = check_encoded(message, bytes) {
        assert_eq!(e.code(), tonic::Code::InvalidArgument, "{message}: {e:?}");
        assert!(e.message().len() <= 200, "{message}: {} bytes", e.message().len());
    }
});
