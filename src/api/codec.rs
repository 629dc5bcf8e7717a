//! The codec of the API's generated services and clients (`codec_path` in `build.rs`):
//! prost, as tonic's own `ProstCodec`, except that a message that does not decode is the
//! caller's fault, INVALID_ARGUMENT, not INTERNAL. (Over-size messages never reach a
//! decoder: the server's edge refuses them with RESOURCE_EXHAUSTED as they arrive, see
//! `server::edge`.)

use super::error::Refusal;
use std::marker::PhantomData;

use prost::Message;
use tonic::Status;
use tonic::codec::{BufferSettings, Codec, DecodeBuf, Decoder};
use tonic_prost::ProstEncoder;

/// Prost encoding and decoding; decode errors are INVALID_ARGUMENT.
#[derive(Debug, Clone, Copy)]
pub struct ProtoCodec<T, U> {
    _pd: PhantomData<(T, U)>,
}

impl<T, U> Default for ProtoCodec<T, U> {
    fn default() -> Self {
        ProtoCodec { _pd: PhantomData }
    }
}

impl<T, U> Codec for ProtoCodec<T, U>
where
    T: Message + Send + 'static,
    U: Message + Default + Send + 'static,
{
    type Encode = T;
    type Decode = U;
    type Encoder = ProstEncoder<T>;
    type Decoder = ProtoDecoder<U>;

    fn encoder(&mut self) -> Self::Encoder {
        ProstEncoder::new(BufferSettings::default())
    }

    fn decoder(&mut self) -> Self::Decoder {
        ProtoDecoder::default()
    }
}

/// Decodes one prost message; a malformed one is INVALID_ARGUMENT.
#[derive(Debug, Clone, Copy)]
pub struct ProtoDecoder<U> {
    _pd: PhantomData<U>,
}

impl<U> Default for ProtoDecoder<U> {
    fn default() -> Self {
        ProtoDecoder { _pd: PhantomData }
    }
}

impl<U: Message + Default> Decoder for ProtoDecoder<U> {
    type Item = U;
    type Error = Status;

    fn decode(&mut self, buf: &mut DecodeBuf<'_>) -> Result<Option<U>, Status> {
        U::decode(buf)
            .map(Some)
            .map_err(|e| Refusal::Field(format!("the message is not valid protobuf: {e}")).into())
    }
}
