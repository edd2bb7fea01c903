//! A request the pipeline refuses, at any of its steps 1–13: the record's outcome and code, the
//! message a client shows, and how it is answered. One type for every step, so every refusal is
//! recorded the same way; it renders two ways, and the transport chooses:
//!
//! - as an HTTP answer ([`Refusal::answer`]): the status, a JSON-RPC-shaped body, any headers
//!   the refusal needs (`WWW-Authenticate`, `Retry-After`) — steps 1–7, before the transport;
//! - as a tool result with `isError: true` ([`Refusal::into_tool_text`]): the error document a
//!   model reads, the app's own envelope where it has one — steps 8–13, in the dispatcher.

use axum::body::Body;
use axum::response::Response;
use concierge_core::Outcome;
use http::{HeaderName, HeaderValue, StatusCode, header};
use serde_json::{Value, json};

use super::record::RequestRecord;

#[derive(Debug, Clone)]
pub struct Refusal {
    pub status: StatusCode,
    pub outcome: Outcome,
    /// The stable code in the audit (`host_not_allowed`, `rate_limited`, …).
    pub code: &'static str,
    message: String,
    /// The HTTP answer's body when it is not the platform's error with `message` (framing's
    /// JSON-RPC errors).
    body: Option<Box<Value>>,
    /// The tool result's document when it is not `{"error": {"code", "message"}}` (the app's
    /// envelope, a field, a retry hint).
    document: Option<Box<Value>>,
    headers: Vec<(HeaderName, HeaderValue)>,
}

impl Refusal {
    /// A refusal whose body is the platform's JSON-RPC-shaped error with `message`, so MCP
    /// clients can show it.
    pub fn new(status: StatusCode, outcome: Outcome, code: &'static str, message: &str) -> Self {
        Self {
            status,
            outcome,
            code,
            message: message.to_string(),
            body: None,
            document: None,
            headers: Vec::new(),
        }
    }

    /// A refusal in the dispatcher, answered as a tool result; its HTTP status (should a
    /// transport answer it over HTTP) follows from what it is.
    pub fn of_call(outcome: Outcome, code: &'static str, message: impl Into<String>) -> Self {
        let status = match outcome {
            Outcome::Forbidden => StatusCode::FORBIDDEN,
            Outcome::RateLimited => StatusCode::TOO_MANY_REQUESTS,
            Outcome::InvalidArgument | Outcome::UnknownTool => StatusCode::BAD_REQUEST,
            Outcome::DeadlineExceeded => StatusCode::GATEWAY_TIMEOUT,
            _ => StatusCode::INTERNAL_SERVER_ERROR,
        };
        Self::new(status, outcome, code, &message.into())
    }

    /// A tool's error as the tool result a client reads — the tool's own, or one the platform
    /// refused with before or instead of the tool (a write's key, its confirmation): its
    /// envelope where it has one, else `{"error": {"code", "message", "field"}}`, an internal
    /// failure with only the request's `trace` id beside, so an operator can find the logged
    /// detail.
    pub fn of_tool_error(error: &concierge_core::ToolError, trace: Option<&str>) -> Self {
        let document = match &error.envelope {
            Some(envelope) => (**envelope).clone(),
            None => {
                let mut body = json!({"code": error.code, "message": error.message});
                if let Some(field) = &error.field {
                    body["field"] = json!(field);
                }
                if let (concierge_core::ErrorKind::Internal, Some(trace)) = (error.kind, trace) {
                    body["traceId"] = json!(trace);
                }
                json!({ "error": body })
            }
        };
        Self::of_call(outcome_of(error), error.code, error.message.clone()).document(document)
    }

    /// A refusal whose tool document is `document` as it is.
    pub fn document(mut self, document: Value) -> Self {
        self.document = Some(Box::new(document));
        self
    }

    /// A refusal answered with `body` as it is (a JSON-RPC error of the framing step).
    pub fn with_body(
        status: StatusCode,
        outcome: Outcome,
        code: &'static str,
        body: Value,
    ) -> Self {
        let message = body["error"]["message"]
            .as_str()
            .unwrap_or_default()
            .to_string();
        Self {
            body: Some(Box::new(body)),
            ..Self::new(status, outcome, code, &message)
        }
    }

    /// What a client shows.
    pub fn message(&self) -> &str {
        &self.message
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
        let body = self
            .body
            .map_or_else(|| error_body(&self.message), |body| *body);
        record.outcome(
            self.outcome,
            Some(self.code),
            Some(concierge_core::audit_document(&body)),
        );
        let mut response = json_response(self.status, &body);
        for (name, value) in self.headers {
            response.headers_mut().insert(name, value);
        }
        response
    }

    /// Records the refusal as the request's outcome, and hands back the JSON text of the document
    /// a tool result carries (the audit keeps it too, `secret_fields` redacted).
    pub fn into_tool_text(self, record: &RequestRecord, secret_fields: &[String]) -> String {
        let document = self.document.map_or_else(
            || json!({"error": {"code": self.code, "message": self.message}}),
            |document| *document,
        );
        let text = document.to_string();
        record.outcome(
            self.outcome,
            Some(self.code),
            Some(concierge_core::audit_output_of(
                &document,
                &text,
                secret_fields,
            )),
        );
        text
    }
}

/// The record's outcome for a tool's error, by its kind.
pub fn outcome_of(error: &concierge_core::ToolError) -> Outcome {
    use concierge_core::ErrorKind;
    match error.kind {
        ErrorKind::InvalidArgument => Outcome::InvalidArgument,
        ErrorKind::NotFound => Outcome::NotFound,
        ErrorKind::Rejected => Outcome::Rejected,
        ErrorKind::Internal => Outcome::InternalError,
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
