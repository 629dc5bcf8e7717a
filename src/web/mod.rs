//! The HTTP side of the API port, beside the gRPC services: the live board page.

pub mod live;

/// The HTTP routes served on the API port next to the gRPC services.
pub(crate) fn routes() -> axum::Router {
    axum::Router::new().merge(live::routes())
}
