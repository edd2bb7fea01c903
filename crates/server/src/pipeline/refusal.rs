//! A request the HTTP pipeline refuses: the status, the record's outcome and code, the message
//! a client shows, and any headers the refusal needs (`WWW-Authenticate`, `Retry-After`). One
//! type for every step, so every refusal is answered the same way and recorded the same way.

use axum::body::Body;
use axum::response::Response;
use concierge_core::Outcome;
use http::{HeaderName, HeaderValue, StatusCode, header};
use serde_json::{Value, json};

use super::record::RequestRecord;

#[derive(Debug)]
pub struct Refusal {
    pub status: StatusCode,
    pub outcome: Outcome,
    /// The stable code in the audit (`host_not_allowed`, `rate_limited`, …).
    pub code: &'static str,
    /// The answer's JSON-RPC-shaped body.
    body: Value,
    headers: Vec<(HeaderName, HeaderValue)>,
}

impl Refusal {
    /// A refusal whose body is the platform's JSON-RPC-shaped error with `message`, so MCP
    /// clients can show it.
    pub fn new(status: StatusCode, outcome: Outcome, code: &'static str, message: &str) -> Self {
        Self::with_body(status, outcome, code, error_body(message))
    }

    /// A refusal answered with `body` as it is (a JSON-RPC error of the framing step).
    pub fn with_body(
        status: StatusCode,
        outcome: Outcome,
        code: &'static str,
        body: Value,
    ) -> Self {
        Self {
            status,
            outcome,
            code,
            body,
            headers: Vec::new(),
        }
    }

    pub fn header(mut self, name: HeaderName, value: &str) -> Self {
        if let Ok(value) = HeaderValue::from_str(value) {
            self.headers.push((name, value));
        }
        self
    }

    /// `Retry-After` in whole seconds.
    pub fn retry_after(self, seconds: u64) -> Self {
        self.header(header::RETRY_AFTER, &seconds.to_string())
    }

    /// Records the refusal as the request's outcome, and answers it.
    pub fn answer(self, record: &RequestRecord) -> Response {
        record.outcome(
            self.outcome,
            Some(self.code),
            Some(concierge_core::audit_document(&self.body)),
        );
        let mut response = json_response(self.status, &self.body);
        for (name, value) in self.headers {
            response.headers_mut().insert(name, value);
        }
        response
    }
}

/// A JSON-RPC-shaped error body (`id` null: the request's id is not trusted before framing).
fn error_body(message: &str) -> Value {
    json!({"jsonrpc": "2.0", "id": null, "error": {"code": -32001, "message": message}})
}

fn json_response(status: StatusCode, body: &Value) -> Response {
    let mut response = Response::new(Body::from(body.to_string()));
    *response.status_mut() = status;
    response.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/json"),
    );
    response
}

/// What the transport (rmcp, or the legacy SSE routes) refused by itself, read from its answer's
/// status, so that refusal is recorded too: an unknown or expired session, a wrong `Accept`.
pub fn from_transport(status: StatusCode) -> Option<(Outcome, &'static str)> {
    Some(match status {
        s if s.is_success() || s.is_redirection() || s.is_informational() => return None,
        StatusCode::NOT_FOUND => (Outcome::SessionRefused, "session_not_found"),
        // A stateless endpoint answers the standalone GET stream and DELETE with 405: that is
        // how a client learns there are no sessions (the spec's own answer), not a refusal.
        StatusCode::METHOD_NOT_ALLOWED => return None,
        StatusCode::SERVICE_UNAVAILABLE => (Outcome::SessionRefused, "transport_unavailable"),
        s if s.is_client_error() => (Outcome::InvalidArgument, "transport_refused"),
        _ => (Outcome::InternalError, "transport_failed"),
    })
}
