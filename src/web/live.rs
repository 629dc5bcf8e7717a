//! The live board page: `GET /live/{event}` and `GET /live/{event}/{round}` on the API
//! port, for broadcast displays and the public.
//!
//! The page is static: one HTML file, its stylesheet and script, a vendored bundle of
//! protobuf-es and connect-es (`src/web/live/vendor/README.md` says which versions and how
//! it was built) and the API's encoded `FileDescriptorSet`, all embedded in the binary.
//! The script reads the event and round from its own path, decodes the API from the
//! descriptor set (no generated JavaScript) and follows the round over grpc-web:
//! `BroadcastService/WatchEvent` from `from_seq` 0, then from the last message's `cursor`
//! after a drop. Everything the page shows comes from that stream, so the server's rules
//! for the caller hold: the public sees each game `broadcast_delay_ms` late.
//!
//! The arbiter's console, `GET /arbiter/{event}` and `GET /arbiter/{event}/{round}`, is
//! served the same way (its own HTML, `console.js` and `console.css`): every board of the
//! round with the alerts that need the arbiter, and the arbiter's commands, all over
//! grpc-web with the token the arbiter signed in with. Both pages take the token through
//! a sign-in form (`common.js`: kept in the tab's sessionStorage, sent only as
//! `authorization`), never in the URL.
//!
//! The path's segments are percent-decoded here only to refuse what the script could not
//! decode either (bad percent-encoding or UTF-8: 400); the HTML is the same for every
//! event and round.

use std::sync::LazyLock;

use axum::Router;
use axum::extract::Path;
use axum::extract::rejection::PathRejection;
use axum::http::header::{
    CACHE_CONTROL, CONTENT_SECURITY_POLICY, CONTENT_TYPE, ETAG, IF_NONE_MATCH, REFERRER_POLICY,
    X_CONTENT_TYPE_OPTIONS,
};
use axum::http::{HeaderMap, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use percent_encoding::{AsciiSet, NON_ALPHANUMERIC, utf8_percent_encode};

use crate::api::pb::FILE_DESCRIPTOR_SET;

/// Scripts, styles, fonts, images and connections from this origin only; nothing inline,
/// no plugins, no framing, no forms. The page's gRPC calls go to the same origin.
pub(super) const CSP: &str = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; \
     connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'";

/// The prefix of the page's assets.
pub(crate) const ASSETS: &str = "/assets/live";

/// One embedded file.
struct Asset {
    name: &'static str,
    content_type: &'static str,
    body: &'static [u8],
}

impl Asset {
    /// A file served with the content type its name's extension says.
    const fn new(name: &'static str, body: &'static [u8]) -> Asset {
        let content_type = match name.as_bytes() {
            [.., b'h', b't', b'm', b'l'] => "text/html; charset=utf-8",
            [.., b'c', b's', b's'] => "text/css; charset=utf-8",
            [.., b'.', b'j', b's'] => "text/javascript; charset=utf-8",
            _ => "application/octet-stream",
        };
        Asset {
            name,
            content_type,
            body,
        }
    }
}

const PAGE: Asset = Asset::new("live.html", include_bytes!("live/live.html"));

/// The arbiter's console (`/arbiter/<event>[/<round>]`).
const CONSOLE: Asset = Asset::new("console.html", include_bytes!("live/console.html"));

/// The pages, before [`FILES`] in [`TAGS`].
const PAGES: [&Asset; 2] = [&PAGE, &CONSOLE];

/// The files under [`ASSETS`], by the name in their URL.
const FILES: [Asset; 8] = [
    Asset::new("live.css", include_bytes!("live/live.css")),
    // The standings page's (`/standings/<event>`, written by `super::standings`).
    Asset::new("standings.css", include_bytes!("live/standings.css")),
    Asset::new("live.js", include_bytes!("live/live.js")),
    // What the live page and the console share: the API, the token, the sign-in.
    Asset::new("common.js", include_bytes!("live/common.js")),
    Asset::new("console.js", include_bytes!("live/console.js")),
    Asset::new("console.css", include_bytes!("live/console.css")),
    Asset::new(
        "connect-protobuf.js",
        include_bytes!("live/vendor/connect-protobuf.js"),
    ),
    // The API's encoded FileDescriptorSet (google.protobuf.FileDescriptorSet, binary),
    // the same bytes server reflection serves.
    Asset::new("arbiter.binpb", FILE_DESCRIPTOR_SET),
];

/// An entity tag per file (FNV-1a of its bytes), so a browser revalidates with one small
/// request and a new build's files are never served stale from its cache.
static TAGS: LazyLock<Vec<HeaderValue>> = LazyLock::new(|| {
    PAGES
        .into_iter()
        .chain(FILES.iter())
        .map(|a| {
            let hash = a.body.iter().fold(0xcbf2_9ce4_8422_2325_u64, |h, &b| {
                (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
            });
            HeaderValue::from_str(&format!("\"{hash:016x}\"")).expect("hex is a valid header")
        })
        .collect()
});

/// The page's routes, to be merged into the API port's router.
pub(crate) fn routes() -> Router {
    Router::new()
        .route("/live/{event}", get(page_of_event))
        .route("/live/{event}/{round}", get(page_of_round))
        .route("/arbiter/{event}", get(console_of_event))
        .route("/arbiter/{event}/{round}", get(console_of_round))
        .route(&format!("{ASSETS}/{{file}}"), get(asset))
}

async fn page_of_event(path: Result<Path<String>, PathRejection>, headers: HeaderMap) -> Response {
    page(path, &PAGE, &headers)
}

async fn page_of_round(
    path: Result<Path<(String, String)>, PathRejection>,
    headers: HeaderMap,
) -> Response {
    page(path, &PAGE, &headers)
}

async fn console_of_event(
    path: Result<Path<String>, PathRejection>,
    headers: HeaderMap,
) -> Response {
    page(path, &CONSOLE, &headers)
}

async fn console_of_round(
    path: Result<Path<(String, String)>, PathRejection>,
    headers: HeaderMap,
) -> Response {
    page(path, &CONSOLE, &headers)
}

/// One of [`PAGES`], the same for every event and round, once the path has decoded.
fn page<T>(path: Result<Path<T>, PathRejection>, which: &Asset, headers: &HeaderMap) -> Response {
    match path {
        Ok(_) => {
            let index = PAGES.iter().position(|p| p.name == which.name).unwrap_or(0);
            serve(which, index, headers)
        }
        Err(e) => bad_path(&e),
    }
}

async fn asset(path: Result<Path<String>, PathRejection>, headers: HeaderMap) -> Response {
    let name = match path {
        Ok(Path(name)) => name,
        Err(e) => return bad_path(&e),
    };
    match FILES.iter().position(|a| a.name == name) {
        Some(i) => serve(&FILES[i], i + PAGES.len(), &headers),
        None => (
            StatusCode::NOT_FOUND,
            [(CONTENT_TYPE, "text/plain; charset=utf-8")],
            "no such asset\n",
        )
            .into_response(),
    }
}

/// What a path segment keeps as it is (RFC 3986's unreserved characters).
const SEGMENT: &AsciiSet = &NON_ALPHANUMERIC
    .remove(b'-')
    .remove(b'.')
    .remove(b'_')
    .remove(b'~');

/// `text` as one percent-encoded path segment (RFC 3986: all but the unreserved
/// characters encoded), for links to `/live/<event>`.
pub(super) fn path_segment(text: &str) -> String {
    utf8_percent_encode(text, SEGMENT).to_string()
}

/// A path whose segments do not decode (bad percent-encoding, not UTF-8).
fn bad_path(e: &PathRejection) -> Response {
    (
        StatusCode::BAD_REQUEST,
        [(CONTENT_TYPE, "text/plain; charset=utf-8")],
        format!("bad path: {}\n", e.body_text()),
    )
        .into_response()
}

fn serve(asset: &Asset, index: usize, request: &HeaderMap) -> Response {
    let tag = &TAGS[index];
    let fresh = request
        .get_all(IF_NONE_MATCH)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(','))
        .any(|t| t.trim() == tag.to_str().unwrap_or_default() || t.trim() == "*");
    let mut response = if fresh {
        StatusCode::NOT_MODIFIED.into_response()
    } else {
        (
            [(CONTENT_TYPE, HeaderValue::from_static(asset.content_type))],
            asset.body,
        )
            .into_response()
    };
    let headers = response.headers_mut();
    headers.insert(ETAG, tag.clone());
    // Revalidated on every load (a 304 when unchanged): the files are small and a new
    // server version must not meet an old script.
    headers.insert(CACHE_CONTROL, HeaderValue::from_static("no-cache"));
    headers.insert(X_CONTENT_TYPE_OPTIONS, HeaderValue::from_static("nosniff"));
    if PAGES.iter().any(|p| p.name == asset.name) {
        headers.insert(CONTENT_SECURITY_POLICY, HeaderValue::from_static(CSP));
        // A `?token=` link must not leak through the Referer header, not even for the
        // page's own requests made before its script takes the token out of the URL.
        headers.insert(REFERRER_POLICY, HeaderValue::from_static("no-referrer"));
    }
    response
}

#[cfg(test)]
mod tests {
    use super::*;
    use axum::body::Body;
    use axum::http::Request;
    use tower::ServiceExt;

    async fn get_path(path: &str, etag: Option<&str>) -> Response {
        let mut request = Request::get(path);
        if let Some(tag) = etag {
            request = request.header(IF_NONE_MATCH, tag);
        }
        routes()
            .oneshot(request.body(Body::empty()).expect("request"))
            .await
            .expect("infallible")
    }

    fn header(r: &Response, name: axum::http::HeaderName) -> &str {
        r.headers()
            .get(name)
            .and_then(|v| v.to_str().ok())
            .unwrap_or("")
    }

    #[tokio::test]
    async fn page_for_event_and_round_with_its_policy() {
        for path in [
            "/live/Open",
            "/live/Open%202026/3.2",
            "/live/%D0%A7%D0%B5%D0%BC%D0%BF",
            "/arbiter/Open",
            "/arbiter/Open%202026/3",
        ] {
            let r = get_path(path, None).await;
            assert_eq!(r.status(), StatusCode::OK, "{path}");
            assert_eq!(header(&r, CONTENT_TYPE), "text/html; charset=utf-8");
            assert!(header(&r, CONTENT_SECURITY_POLICY).contains("script-src 'self'"));
            assert!(!header(&r, CONTENT_SECURITY_POLICY).contains("unsafe"));
            assert_eq!(header(&r, REFERRER_POLICY), "no-referrer");
        }
    }

    #[tokio::test]
    async fn the_console_is_its_own_page() {
        let r = get_path("/arbiter/Open/1", None).await;
        let body = axum::body::to_bytes(r.into_body(), usize::MAX)
            .await
            .expect("body");
        let text = String::from_utf8_lossy(&body);
        assert!(text.contains("/assets/live/console.js"), "{text}");
        assert!(text.contains("id=\"signin\""), "{text}");
        assert_eq!(
            get_path("/arbiter", None).await.status(),
            StatusCode::NOT_FOUND
        );
    }

    #[tokio::test]
    async fn undecodable_segments_are_400() {
        for path in [
            "/live/%FF",
            "/live/Open/%C3%28",
            "/assets/live/%FE",
            "/arbiter/%FF",
            "/arbiter/Open/%C3%28",
        ] {
            let r = get_path(path, None).await;
            assert_eq!(r.status(), StatusCode::BAD_REQUEST, "{path}");
        }
    }

    #[tokio::test]
    async fn assets_with_their_types_and_revalidation() {
        for (name, ty) in [
            ("live.js", "text/javascript; charset=utf-8"),
            ("common.js", "text/javascript; charset=utf-8"),
            ("console.js", "text/javascript; charset=utf-8"),
            ("console.css", "text/css; charset=utf-8"),
            ("connect-protobuf.js", "text/javascript; charset=utf-8"),
            ("live.css", "text/css; charset=utf-8"),
            ("standings.css", "text/css; charset=utf-8"),
            ("arbiter.binpb", "application/octet-stream"),
        ] {
            let r = get_path(&format!("/assets/live/{name}"), None).await;
            assert_eq!(r.status(), StatusCode::OK, "{name}");
            assert_eq!(header(&r, CONTENT_TYPE), ty, "{name}");
            assert_eq!(header(&r, CACHE_CONTROL), "no-cache");
            let tag = header(&r, ETAG).to_string();
            assert!(tag.starts_with('"') && tag.len() == 18, "{tag}");
            let again = get_path(&format!("/assets/live/{name}"), Some(&tag)).await;
            assert_eq!(again.status(), StatusCode::NOT_MODIFIED, "{name}");
        }
        assert_eq!(
            get_path("/assets/live/nope.js", None).await.status(),
            StatusCode::NOT_FOUND
        );
    }

    #[tokio::test]
    async fn descriptor_set_is_the_apis() {
        let r = get_path("/assets/live/arbiter.binpb", None).await;
        let body = axum::body::to_bytes(r.into_body(), usize::MAX)
            .await
            .expect("body");
        assert_eq!(&body[..], FILE_DESCRIPTOR_SET);
    }
}
