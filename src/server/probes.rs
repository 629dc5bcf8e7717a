//! The plain-HTTP port: `/metrics` (Prometheus text) and the probes of orchestrators that
//! cannot speak gRPC over TLS (kubelet's gRPC probes are plaintext only): `/healthz` (200
//! while the process serves) and `/readyz` (200 from the end of recovery, when the gRPC
//! health service turns SERVING, until shutdown begins; 503 otherwise).

use std::convert::Infallible;
use std::sync::Arc;
use std::time::Duration;

use http_body_util::Full;
use hyper::body::{Bytes, Incoming};
use hyper::header::HeaderValue;
use hyper::{Method, Request, Response, StatusCode};
use tokio::net::TcpListener;

use crate::hub::metrics::{CONTENT_TYPE, Metrics};

/// Serves `GET /metrics` on `listener` until `shutdown` resolves; then stops accepting and
/// closes the port. One request per connection (no keep-alive), headers within 10 s.
pub async fn serve(
    metrics: Arc<Metrics>,
    listener: TcpListener,
    shutdown: impl Future<Output = ()> + Send,
) {
    tokio::pin!(shutdown);
    loop {
        let stream = tokio::select! {
            () = &mut shutdown => break,
            accepted = listener.accept() => match accepted {
                Ok((stream, _)) => stream,
                Err(e) => {
                    // Out of file descriptors and the like: wait a little, keep serving.
                    tracing::warn!(error = %e, "metrics accept");
                    tokio::time::sleep(Duration::from_millis(100)).await;
                    continue;
                }
            },
        };
        let metrics = metrics.clone();
        tokio::spawn(async move {
            let service = hyper::service::service_fn(move |req| {
                let metrics = metrics.clone();
                async move { Ok::<_, Infallible>(answer(&metrics, &req)) }
            });
            let conn = hyper::server::conn::http1::Builder::new()
                .keep_alive(false)
                .timer(hyper_util::rt::TokioTimer::new())
                .header_read_timeout(Duration::from_secs(10))
                .serve_connection(hyper_util::rt::TokioIo::new(stream), service);
            if let Err(e) = conn.await {
                tracing::debug!(error = %e, "metrics connection");
            }
        });
    }
    tracing::info!("metrics listener stopped");
}

fn answer(metrics: &Metrics, req: &Request<Incoming>) -> Response<Full<Bytes>> {
    respond(metrics, req.method(), req.uri().path())
}

/// The answer to `method path`: the metrics, a probe, or an error naming what is served.
fn respond(metrics: &Metrics, method: &Method, path: &str) -> Response<Full<Bytes>> {
    const TEXT: &str = "text/plain; charset=utf-8";
    let reply = |status: StatusCode, content_type: &str, body: String| {
        let body = if *method == Method::HEAD {
            String::new()
        } else {
            body
        };
        let mut r = Response::new(Full::new(Bytes::from(body)));
        *r.status_mut() = status;
        if let Ok(v) = content_type.parse() {
            r.headers_mut().insert(hyper::header::CONTENT_TYPE, v);
        }
        r
    };
    if !matches!(path, "/metrics" | "/healthz" | "/readyz") {
        return reply(
            StatusCode::NOT_FOUND,
            TEXT,
            "not found: this port serves /metrics, /healthz and /readyz\n".into(),
        );
    }
    if !matches!(*method, Method::GET | Method::HEAD) {
        let mut r = reply(
            StatusCode::METHOD_NOT_ALLOWED,
            TEXT,
            format!("only GET or HEAD {path}\n"),
        );
        r.headers_mut()
            .insert(hyper::header::ALLOW, HeaderValue::from_static("GET, HEAD"));
        return r;
    }
    match path {
        "/metrics" => reply(StatusCode::OK, CONTENT_TYPE, metrics.render()),
        "/healthz" => reply(StatusCode::OK, TEXT, "ok\n".into()),
        _ if metrics.is_ready() => reply(StatusCode::OK, TEXT, "ready\n".into()),
        _ => reply(
            StatusCode::SERVICE_UNAVAILABLE,
            TEXT,
            "not ready: recovering the unfinished games, or shutting down\n".into(),
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    async fn body(r: Response<Full<Bytes>>) -> (StatusCode, String) {
        use http_body_util::BodyExt;
        let status = r.status();
        let bytes = r.into_body().collect().await.expect("body").to_bytes();
        (status, String::from_utf8(bytes.to_vec()).expect("utf-8"))
    }

    /// `/readyz` follows the ready flag (503 before recovery and after shutdown begins),
    /// `/healthz` is always 200, HEAD answers without a body, other paths and methods are
    /// refused naming what is served.
    #[tokio::test]
    async fn probes_follow_the_ready_flag() {
        let m = Metrics::new();
        let ready = || respond(&m, &Method::GET, "/readyz");
        assert_eq!(body(ready()).await.0, StatusCode::SERVICE_UNAVAILABLE);
        m.set_ready(true);
        assert_eq!(body(ready()).await, (StatusCode::OK, "ready\n".into()));
        m.set_ready(false);
        assert_eq!(body(ready()).await.0, StatusCode::SERVICE_UNAVAILABLE);
        assert_eq!(
            body(respond(&m, &Method::GET, "/healthz")).await,
            (StatusCode::OK, "ok\n".into())
        );
        assert_eq!(
            body(respond(&m, &Method::HEAD, "/metrics")).await,
            (StatusCode::OK, String::new())
        );
        let (status, text) = body(respond(&m, &Method::GET, "/")).await;
        assert_eq!(status, StatusCode::NOT_FOUND);
        assert!(text.contains("/readyz"), "{text}");
        let refused = respond(&m, &Method::POST, "/readyz");
        assert_eq!(
            refused.headers().get(hyper::header::ALLOW),
            Some(&HeaderValue::from_static("GET, HEAD"))
        );
        assert_eq!(body(refused).await.0, StatusCode::METHOD_NOT_ALLOWED);
    }
}
