//! The token endpoint's form: every grant, every parameter. Never a server error; every refusal
//! is RFC 6749 §5.2 JSON.

use crate::oauth::deployment;
use crate::send;
use axum::body::Body;
use http::Request;

pub fn run(data: &[u8]) {
    let request = Request::post("/token")
        .header("host", "mcp.example")
        .header("content-type", "application/x-www-form-urlencoded")
        .body(Body::from(data.to_vec()))
        .expect("a request");
    let (status, _, body) = send(&deployment().router, request);
    assert!(status.as_u16() < 500, "HTTP {status}");
    if status.is_client_error() {
        let error: serde_json::Value = serde_json::from_slice(&body).expect("a JSON refusal");
        assert!(error["error"].is_string(), "no error code: {error}");
    }
}
