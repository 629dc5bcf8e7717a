//! What the watch streams send: a `GameEvent` of their own, or one encoded once for every
//! stream that sends it as it is: a round feed's message, and a game's event on its
//! `WatchGame` streams (`watch::shared_event`).
//!
//! 10,000 displays in step on a round each sent the feed's message as it was, but each
//! cloned it (a dozen strings, the cursor among them) and encoded it again: one move
//! of a 100-board round was 20,000 clones and encodings of the same two messages. A
//! [`Encoded`] message is encoded once, and each stream copies its bytes.
//!
//! tonic's generated servers encode the proto's message type, so `BroadcastService`'s
//! server is generated a second time from a description in `build.rs` (the same routes
//! and the same messages on the wire) whose streams yield [`EventFrame`], encoded by
//! [`FrameCodec`]. Clients, reflection and the rest of the API keep the proto's types.

use std::marker::PhantomData;
use std::sync::Arc;

use prost::Message;
use prost::bytes::{BufMut, Bytes};
use tonic::Status;
use tonic::codec::{BufferSettings, Codec, EncodeBuf, Encoder};

use super::codec::ProtoDecoder;
use super::error::Refusal;
use super::pb;

/// The server of `BroadcastService` whose streams yield [`EventFrame`] (see the module).
#[allow(missing_docs, clippy::all, clippy::pedantic, rustdoc::all)]
mod generated {
    include!(concat!(
        env!("OUT_DIR"),
        "/draughts.arbiter.v1.BroadcastService.rs"
    ));
}

pub use generated::broadcast_service_server::{BroadcastService, BroadcastServiceServer};

/// A `GameEvent` on its way to a watch stream.
#[derive(Debug, Clone)]
pub enum EventFrame {
    /// The stream's own message.
    Own(Box<pb::GameEvent>),
    /// A message shared by every stream that sends it as it is, encoded once.
    Shared(Arc<Encoded>),
}

impl EventFrame {
    /// The message.
    pub fn message(&self) -> &pb::GameEvent {
        match self {
            EventFrame::Own(m) => m,
            EventFrame::Shared(s) => &s.message,
        }
    }

    /// The message, owned (cloned if shared).
    pub fn into_message(self) -> pb::GameEvent {
        match self {
            EventFrame::Own(m) => *m,
            EventFrame::Shared(s) => s.message.clone(),
        }
    }
}

/// A frame reads as its message.
impl std::ops::Deref for EventFrame {
    type Target = pb::GameEvent;

    fn deref(&self) -> &pb::GameEvent {
        self.message()
    }
}

impl From<pb::GameEvent> for EventFrame {
    fn from(m: pb::GameEvent) -> EventFrame {
        EventFrame::Own(Box::new(m))
    }
}

impl From<EventFrame> for pb::GameEvent {
    fn from(f: EventFrame) -> pb::GameEvent {
        f.into_message()
    }
}

/// A message and its encoding.
#[derive(Debug)]
pub struct Encoded {
    message: pb::GameEvent,
    bytes: Bytes,
}

impl Encoded {
    /// Encodes `message`.
    pub fn new(message: pb::GameEvent) -> Arc<Encoded> {
        let bytes = Bytes::from(message.encode_to_vec());
        Arc::new(Encoded { message, bytes })
    }

    /// The message.
    pub fn message(&self) -> &pb::GameEvent {
        &self.message
    }
}

/// The codec of the watch streams: [`EventFrame`] out, the request (prost, a message
/// that does not decode INVALID_ARGUMENT as everywhere) in.
#[derive(Debug, Clone, Copy)]
pub struct FrameCodec<U> {
    _pd: PhantomData<U>,
}

impl<U> Default for FrameCodec<U> {
    fn default() -> Self {
        FrameCodec { _pd: PhantomData }
    }
}

impl<U: Message + Default + Send + 'static> Codec for FrameCodec<U> {
    type Encode = EventFrame;
    type Decode = U;
    type Encoder = FrameEncoder;
    type Decoder = ProtoDecoder<U>;

    fn encoder(&mut self) -> FrameEncoder {
        FrameEncoder
    }

    fn decoder(&mut self) -> ProtoDecoder<U> {
        ProtoDecoder::default()
    }
}

/// Encodes an [`EventFrame`]: its own message, or a copy of the shared bytes.
#[derive(Debug, Clone, Copy)]
pub struct FrameEncoder;

impl Encoder for FrameEncoder {
    type Item = EventFrame;
    type Error = Status;

    fn encode(&mut self, item: EventFrame, buf: &mut EncodeBuf<'_>) -> Result<(), Status> {
        match item {
            EventFrame::Own(m) => m
                .encode(buf)
                .map_err(|e| Refusal::Internal(format!("encoding a GameEvent: {e}")).into()),
            EventFrame::Shared(s) => {
                buf.put_slice(&s.bytes);
                Ok(())
            }
        }
    }

    fn buffer_settings(&self) -> BufferSettings {
        BufferSettings::new(STREAM_BUFFER, YIELD_THRESHOLD)
    }
}

/// The buffer a watch stream encodes its messages in, allocated when the stream opens
/// and kept while it runs (it grows for a larger message or a run of them, as a
/// `BytesMut` does). tonic's default is 8 KiB a stream; a message is a few hundred bytes.
/// 10,000 streams opening at once held 80 MB of these, half the server's peak of 150 MB,
/// which glibc's arenas kept once the streams had gone (issue 37).
pub const STREAM_BUFFER: usize = 1024;

/// How much a stream encodes before it hands the bytes to HTTP/2 (tonic's default).
const YIELD_THRESHOLD: usize = 32 * 1024;

#[cfg(test)]
mod tests {
    use super::*;

    /// A shared message goes on the wire as the message itself would.
    #[test]
    fn a_shared_message_is_its_own_encoding() {
        let message = pb::GameEvent {
            seq: 7,
            game_id: "g1".into(),
            cursor: "AQID".into(),
            monotonic_ms: 1_700_000_000_123,
            ..Default::default()
        };
        let shared = Encoded::new(message.clone());
        assert_eq!(shared.bytes.as_ref(), message.encode_to_vec().as_slice());
        assert_eq!(EventFrame::Shared(shared).into_message(), message);
    }
}
