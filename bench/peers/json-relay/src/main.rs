//! Benchmark peer: relays every POST to one upstream MCP server, on the stack concierge is built
//! on (axum in front, reqwest behind, serde_json between), doing only what any gateway that
//! understands MCP must: read the request as JSON, send it on, read the answer as JSON and
//! write it out again. No auth, no limits, no validation, no audit, no sessions. Beside nginx
//! (which relays without reading) it shows the floor under concierge's CPU a call on the
//! machine at hand. Usage: `json-relay LISTEN UPSTREAM_URL`.

use axum::body::Bytes;
use axum::extract::State;
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use serde_json::Value;

#[derive(Clone)]
struct Relay {
    http: reqwest::Client,
    upstream: String,
}

/// The headers an MCP server reads from a client, handed on as they came.
const HANDED_ON: [&str; 3] = ["mcp-protocol-version", "mcp-session-id", "accept"];

async fn relay(State(relay): State<Relay>, headers: HeaderMap, body: Bytes) -> Response {
    let Ok(request) = serde_json::from_slice::<Value>(&body) else {
        return (StatusCode::BAD_REQUEST, "not JSON").into_response();
    };
    let mut upstream = relay
        .http
        .post(&relay.upstream)
        .header(header::CONTENT_TYPE, "application/json")
        .body(serde_json::to_vec(&request).unwrap_or_default());
    for name in HANDED_ON {
        if let Some(value) = headers.get(name) {
            upstream = upstream.header(name, value);
        }
    }
    let answer = match upstream.send().await {
        Ok(answer) => answer,
        Err(_) => return StatusCode::BAD_GATEWAY.into_response(),
    };
    let status = answer.status();
    let Ok(text) = answer.bytes().await else {
        return StatusCode::BAD_GATEWAY.into_response();
    };
    // FastMCP in `json_response` mode answers one JSON object; anything else goes back as it came.
    let Ok(message) = serde_json::from_slice::<Value>(&text) else {
        return (status, text).into_response();
    };
    let json = HeaderValue::from_static("application/json");
    (
        status,
        [(header::CONTENT_TYPE, json)],
        serde_json::to_vec(&message).unwrap_or_default(),
    )
        .into_response()
}

#[tokio::main]
async fn main() {
    let mut args = std::env::args().skip(1);
    let (Some(listen), Some(upstream)) = (args.next(), args.next()) else {
        eprintln!("usage: json-relay LISTEN UPSTREAM_URL");
        std::process::exit(2);
    };
    let state = Relay {
        http: reqwest::Client::new(),
        upstream,
    };
    let app = axum::Router::new()
        .fallback(axum::routing::post(relay))
        .with_state(state);
    let listener = tokio::net::TcpListener::bind(&listen)
        .await
        .expect("bind LISTEN");
    axum::serve(listener, app).await.expect("serve");
}
