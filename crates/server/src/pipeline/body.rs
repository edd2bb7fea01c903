//! Request bodies are read whole, within a size and a time, before anything looks at them.
//! The MCP endpoints read them after the browser rules and authentication (a stranger without a
//! token cannot make us hold a megabyte); the authorization server's and `/health` here, with a
//! small cap, since a stranger is who they serve.
//!
//! Every body concierge accepts is small (a JSON-RPC message, an OAuth form, a registration), so
//! reading it whole costs nothing and bounds what a stranger can hold: a body larger than
//! `[server] max_body_bytes` is refused with 413 without being read, and one that has not fully
//! arrived within `[server] body_read_timeout` (a client trickling a byte a second) with 408,
//! and its connection closed. The time counts for the whole body, not per chunk: a per-chunk
//! timeout is what a trickle defeats.

use std::time::Duration;

use axum::body::Body;
use axum::extract::{Request, State};
use axum::middleware::Next;
use axum::response::Response;
use bytes::Bytes;
use concierge_core::Outcome;
use http::StatusCode;
use http_body_util::BodyExt;

use super::Refusal;

#[derive(Debug, Clone, Copy)]
pub struct BodyLimits {
    pub max_bytes: usize,
    pub read_timeout: Duration,
}

/// axum middleware: replace the streaming body by the whole body, or refuse.
pub async fn read_whole(
    State(limits): State<BodyLimits>,
    request: Request,
    next: Next,
) -> Response {
    let (parts, body) = request.into_parts();
    match read(body, limits).await {
        Ok(bytes) => {
            next.run(Request::from_parts(parts, Body::from(bytes)))
                .await
        }
        // Not an endpoint: nothing is recorded for the authorization server's pages.
        Err(refusal) => refusal.answer(&super::RequestRecord::unrecorded()),
    }
}

/// The whole of `body` (empty when there is none), or the refusal to answer.
pub async fn read(body: Body, limits: BodyLimits) -> Result<Bytes, Refusal> {
    use http_body::Body as _;
    if body.is_end_stream() {
        return Ok(Bytes::new());
    }
    if let Some(length) = body.size_hint().exact()
        && length > limits.max_bytes as u64
    {
        return Err(too_large(limits.max_bytes));
    }
    let limited = http_body_util::Limited::new(body, limits.max_bytes);
    match tokio::time::timeout(limits.read_timeout, limited.collect()).await {
        Err(_) => Err(Refusal::new(
            StatusCode::REQUEST_TIMEOUT,
            Outcome::InvalidArgument,
            "body_timeout",
            &format!(
                "the request body did not arrive within {}",
                humantime::format_duration(limits.read_timeout)
            ),
        )
        .header(http::header::CONNECTION, "close")),
        Ok(Err(error)) if error.is::<http_body_util::LengthLimitError>() => {
            Err(too_large(limits.max_bytes))
        }
        Ok(Err(_)) => Err(Refusal::new(
            StatusCode::BAD_REQUEST,
            Outcome::InvalidArgument,
            "body_unreadable",
            "the request body could not be read",
        )),
        Ok(Ok(collected)) => Ok(collected.to_bytes()),
    }
}

fn too_large(max: usize) -> Refusal {
    Refusal::new(
        StatusCode::PAYLOAD_TOO_LARGE,
        Outcome::InvalidArgument,
        "body_too_large",
        &format!("the request body is larger than the {max} bytes allowed"),
    )
}
