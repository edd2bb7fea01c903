//! Dynamic client registration (RFC 7591): the JSON a stranger posts to /register.

use crate::oauth::deployment;
use crate::send;
use axum::body::Body;
use http::Request;

pub fn run(data: &[u8]) {
    let request = Request::post("/register")
        .header("host", "mcp.example")
        .header("content-type", "application/json")
        .body(Body::from(data.to_vec()))
        .expect("a request");
    let (status, _, body) = send(&deployment().router, request);
    assert!(status.as_u16() < 500, "HTTP {status}");
    let answer: serde_json::Value = serde_json::from_slice(&body).expect("a JSON answer");
    if status.is_success() {
        // What was registered is bounded, whatever was asked for.
        let uris = answer["redirect_uris"].as_array().expect("redirect_uris");
        assert!(!uris.is_empty() && uris.len() <= 10, "{answer}");
    } else {
        assert!(answer["error"].is_string(), "no error code: {answer}");
    }
}
