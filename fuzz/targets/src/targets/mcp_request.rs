//! A whole HTTP request body through the MCP pipeline: framing, ids, methods, params, batches.
//! The first byte picks the endpoint (stateless or stateful) and the headers a client might send.

use crate::mcp::{TOKEN, deployment};
use crate::{contains, send};
use axum::body::Body;
use http::Request;

pub fn run(data: &[u8]) {
    let Some((&selector, body)) = data.split_first() else {
        return;
    };
    let path = if selector & 1 == 0 {
        "/fake/mcp"
    } else {
        "/sessions/mcp"
    };
    let mut request = Request::post(path)
        .header("host", "127.0.0.1:8080")
        .header("authorization", format!("Bearer {TOKEN}"))
        .header(
            "content-type",
            if selector & 2 == 0 {
                "application/json"
            } else {
                "application/json; charset=utf-8"
            },
        )
        .header(
            "accept",
            if selector & 4 == 0 {
                "application/json, text/event-stream"
            } else {
                "text/event-stream"
            },
        );
    if selector & 8 != 0 {
        request = request.header("mcp-protocol-version", "2025-06-18");
    }
    let request = request.body(Body::from(body.to_vec())).expect("a request");
    let (status, headers, answer) = send(&deployment().router, request);
    assert!(
        status.as_u16() < 500,
        "HTTP {status} for {:?}: {}",
        String::from_utf8_lossy(body),
        String::from_utf8_lossy(&answer)
    );
    // An unknown method's name is echoed in its error: only a bearer the body did not hold
    // itself would be a leak (libFuzzer learns the bearer from the comparisons it watches).
    assert!(
        contains(body, TOKEN.as_bytes()) || !contains(&answer, TOKEN.as_bytes()),
        "the bearer came back"
    );
    let json = headers
        .get("content-type")
        .and_then(|v| v.to_str().ok())
        .is_some_and(|t| t.starts_with("application/json"));
    if json && !answer.is_empty() {
        serde_json::from_slice::<serde_json::Value>(&answer)
            .unwrap_or_else(|e| panic!("a JSON answer that is not JSON ({e})"));
    }
}
