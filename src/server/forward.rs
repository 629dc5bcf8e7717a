//! Several nodes: a command sent to a node that does not own its game is forwarded to the
//! owner, so a client behind a load balancer (which cannot reach the nodes' own
//! addresses) is served by any node.
//!
//! The node answers the call itself first, as always: a follower refuses a command with
//! UNAVAILABLE naming the owner (`arbiter-owner-addr`, see `api::error`). On that refusal
//! this layer sends the same request (its bytes, its metadata and token, marked with
//! `arbiter-forwarded-by`) to the owner's address and gives the caller the owner's answer,
//! marked with `arbiter-forwarded-to`. Nothing was done by the follower, so the forward is
//! as safe as the client's own retry would be. A request that was forwarded already is
//! never forwarded again (no loops between nodes that disagree for a moment); an owner
//! that does not answer within the forward timeout (it died, or is paused: its lease then
//! runs out) leaves the caller with the first refusal, owner address included, as
//! before.
//!
//! Only unary gRPC calls of `GameService` and `ArbiterService` are forwarded (reads are
//! served by every node; watch and board streams are not forwarded). grpc-web calls and
//! servers with TLS keep the redirect: the refusal names the owner and the client sends
//! it there (the `game` and `arbiter` commands do).

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};
use std::time::Duration;

use http_body_util::{BodyExt, Full};
use tonic::body::Body;
use tonic::codegen::http::{self, HeaderValue};
use tonic::codegen::{Bytes, Service};
use tonic::transport::{Channel, Endpoint};

use super::edge::BoxFuture;
use crate::api::OWNER_ADDR;
use crate::api::pb;
use crate::hub::metrics::Metrics;

/// The metadata a forwarded request carries: the node that forwarded it.
pub const FORWARDED_BY: &str = "arbiter-forwarded-by";
/// The metadata of an answer that came from the owner: its address.
pub const FORWARDED_TO: &str = "arbiter-forwarded-to";

/// Forwards refused commands to their game's owner (see the module).
#[derive(Clone)]
pub struct ForwardLayer {
    node: HeaderValue,
    timeout: Duration,
    /// A channel per owner address, connected on first use.
    channels: Arc<Mutex<HashMap<String, Channel>>>,
    metrics: Arc<Metrics>,
}

impl ForwardLayer {
    /// This node (`node_id`, named in what it forwards); an owner's answer is awaited at
    /// most `timeout`; forwards are counted in `metrics`.
    pub fn new(node_id: &str, timeout: Duration, metrics: Arc<Metrics>) -> ForwardLayer {
        ForwardLayer {
            // The configuration keeps node ids to printable ASCII, which metadata carries.
            node: HeaderValue::from_str(node_id).unwrap_or(HeaderValue::from_static("?")),
            timeout,
            channels: Arc::default(),
            metrics,
        }
    }

    fn channel(&self, addr: &str) -> Option<Channel> {
        let mut channels = self
            .channels
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        if let Some(c) = channels.get(addr) {
            return Some(c.clone());
        }
        let channel = Endpoint::from_shared(format!("http://{addr}"))
            .ok()?
            .connect_timeout(self.timeout)
            .tcp_nodelay(true)
            .connect_lazy();
        channels.insert(addr.to_string(), channel.clone());
        Some(channel)
    }

    /// The owner's answer to `request`, or `None` if it gave none in time.
    async fn send(
        &self,
        addr: &str,
        mut request: http::Request<Body>,
    ) -> Option<http::Response<Body>> {
        let channel = self.channel(addr)?;
        request
            .headers_mut()
            .insert(FORWARDED_BY, self.node.clone());
        let call = tower::ServiceExt::oneshot(channel, request);
        let failure = match tokio::time::timeout(self.timeout, call).await {
            Ok(Ok(mut response)) => {
                if let Ok(v) = HeaderValue::from_str(addr) {
                    response.headers_mut().insert(FORWARDED_TO, v);
                }
                return Some(response.map(Body::new));
            }
            Ok(Err(e)) => e.to_string(),
            Err(_) => "no answer in time".to_string(),
        };
        tracing::debug!(owner = %addr, error = %failure, "forward to the owner failed");
        self.forget(addr);
        None
    }

    /// Drops the channel to an owner that failed (the next forward connects afresh, not
    /// behind a reconnection of the old one).
    fn forget(&self, addr: &str) {
        self.channels
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .remove(addr);
    }
}

impl<S> tower::Layer<S> for ForwardLayer {
    type Service = Forward<S>;

    fn layer(&self, inner: S) -> Forward<S> {
        Forward {
            inner,
            layer: self.clone(),
        }
    }
}

/// The forwarding around the services.
#[derive(Clone)]
pub struct Forward<S> {
    inner: S,
    layer: ForwardLayer,
}

/// Whether a refused `request` may go to the owner: a unary gRPC command call, not
/// forwarded already.
fn forwardable(request: &http::Request<Body>) -> bool {
    let path = request.uri().path();
    let service = path.trim_start_matches('/').split('/').next().unwrap_or("");
    let grpc = request
        .headers()
        .get(http::header::CONTENT_TYPE)
        .is_some_and(|v| {
            let v = v.as_bytes();
            v.starts_with(b"application/grpc") && !v.starts_with(b"application/grpc-web")
        });
    grpc && !request.headers().contains_key(FORWARDED_BY)
        && (service == pb::game_service_server::SERVICE_NAME
            || service == pb::arbiter_service_server::SERVICE_NAME)
}

/// The owner a response refuses the call for (UNAVAILABLE naming it), if it does.
fn refused_for(response: &http::Response<Body>) -> Option<String> {
    let headers = response.headers();
    if headers.get("grpc-status").map(HeaderValue::as_bytes) != Some(b"14") {
        return None;
    }
    let addr = headers.get(OWNER_ADDR)?.to_str().ok()?;
    (!addr.is_empty()).then(|| addr.to_string())
}

impl<S> Service<http::Request<Body>> for Forward<S>
where
    S: Service<http::Request<Body>, Response = http::Response<Body>> + Clone + Send + 'static,
    S::Future: Send + 'static,
{
    type Response = http::Response<Body>;
    type Error = S::Error;
    type Future = BoxFuture<Result<Self::Response, Self::Error>>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, request: http::Request<Body>) -> Self::Future {
        // The clone that was made ready serves this call (tower's usual swap).
        let clone = self.inner.clone();
        let mut inner = std::mem::replace(&mut self.inner, clone);
        if !forwardable(&request) {
            return Box::pin(inner.call(request));
        }
        let layer = self.layer.clone();
        Box::pin(async move {
            // A unary request is one small message (the edge has checked its size): kept
            // whole, it can be sent twice.
            let (parts, body) = request.into_parts();
            let bytes = match body.collect().await {
                Ok(collected) => collected.to_bytes(),
                Err(status) => return Ok(status.into_http()),
            };
            let mut copy = http::Request::new(Body::new(Full::new(bytes.clone())));
            *copy.method_mut() = parts.method.clone();
            *copy.uri_mut() = parts.uri.clone();
            *copy.version_mut() = http::Version::HTTP_2;
            *copy.headers_mut() = parts.headers.clone();
            copy.headers_mut().remove(http::header::HOST);
            let here = http::Request::from_parts(parts, Body::new(Full::<Bytes>::new(bytes)));
            let response = inner.call(here).await?;
            let Some(owner) = refused_for(&response) else {
                return Ok(response);
            };
            let answer = layer.send(&owner, copy).await;
            layer.metrics.forwarded(answer.is_some());
            Ok(answer.unwrap_or(response))
        })
    }
}
