use serde::Serialize;
use serde_json::Value;
use serde_json::value::RawValue;

/// How a call (or a refused request) ended. The stable names are what dashboards count.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Outcome {
    #[default]
    Ok,
    InvalidArgument,
    NotFound,
    Rejected,
    InternalError,
    UnknownTool,
    RateLimited,
    Unauthorized,
    /// Authenticated, but the token lacks a scope the tool needs.
    Forbidden,
    SessionRefused,
    Misconfigured,
    /// The request ended before it was answered: the client went away, the server stopped, or
    /// the tool panicked (then `code` is `panic`).
    Cancelled,
    /// The platform's call deadline passed before the tool answered.
    DeadlineExceeded,
}

impl Outcome {
    /// Every outcome, in the order the ops console offers them to filter by (a new outcome is
    /// added here too, or the console cannot filter by it).
    pub const ALL: [Outcome; 13] = [
        Outcome::Ok,
        Outcome::InvalidArgument,
        Outcome::NotFound,
        Outcome::Rejected,
        Outcome::InternalError,
        Outcome::UnknownTool,
        Outcome::RateLimited,
        Outcome::Unauthorized,
        Outcome::Forbidden,
        Outcome::SessionRefused,
        Outcome::Misconfigured,
        Outcome::Cancelled,
        Outcome::DeadlineExceeded,
    ];

    /// The outcome's name in the audit (as it is serialized), in metrics and in the console.
    pub const fn name(self) -> &'static str {
        match self {
            Outcome::Ok => "ok",
            Outcome::InvalidArgument => "invalid_argument",
            Outcome::NotFound => "not_found",
            Outcome::Rejected => "rejected",
            Outcome::InternalError => "internal_error",
            Outcome::UnknownTool => "unknown_tool",
            Outcome::RateLimited => "rate_limited",
            Outcome::Unauthorized => "unauthorized",
            Outcome::Forbidden => "forbidden",
            Outcome::SessionRefused => "session_refused",
            Outcome::Misconfigured => "misconfigured",
            Outcome::Cancelled => "cancelled",
            Outcome::DeadlineExceeded => "deadline_exceeded",
        }
    }

    /// The outcome an audit line names, if it is one.
    pub fn named(name: &str) -> Option<Outcome> {
        Outcome::ALL
            .into_iter()
            .find(|outcome| outcome.name() == name)
    }
}

/// One line of the audit log: a tool call, or a refusal before any tool ran.
///
/// It names the calling system, never the person chatting: arguments are what the model sent,
/// with secret fields redacted.
#[derive(Debug, Clone, Default, Serialize)]
pub struct AuditEvent {
    pub ts: String,
    pub endpoint: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub client: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub user: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tool: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rpc_id: Option<Value>,
    pub trace_id: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub arguments: Option<Value>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub result_count: Option<usize>,
    /// What the call answered (seed §10: input, output, duration, result code): the result, or
    /// the error document on a failure or refusal; secret fields redacted at any depth and the
    /// whole capped by [`audit_output`]. Kept as JSON text: the answer's text is already
    /// written once for the client, and the audit line embeds it as it is instead of copying the
    /// tree and writing it again.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub output: Option<Box<RawValue>>,
    pub outcome: Outcome,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub code: Option<String>,
    pub duration_ms: f64,
    /// What the tool added about the call (upstream request id, upstream trace id, …).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub notes: Option<serde_json::Map<String, Value>>,
}

impl AuditEvent {
    /// An event of `endpoint` happening now under `trace_id`, with nothing else known yet.
    pub fn now(endpoint: impl Into<String>, trace_id: impl Into<String>) -> Self {
        Self {
            ts: chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Millis, true),
            endpoint: endpoint.into(),
            trace_id: trace_id.into(),
            ..Self::default()
        }
    }
}

/// Replaces the values of `secret_fields` (top-level argument names) with `"***"`.
pub fn redact(arguments: &Value, secret_fields: &[String]) -> Value {
    let mut arguments = arguments.clone();
    redact_in_place(&mut arguments, secret_fields);
    arguments
}

/// [`redact`] on arguments the caller already owns (no second copy on every call).
pub fn redact_in_place(arguments: &mut Value, secret_fields: &[String]) {
    if let Value::Object(object) = arguments {
        for field in secret_fields {
            if let Some(value) = object.get_mut(field) {
                *value = Value::String("***".into());
            }
        }
    }
}

/// The most of an answer the audit keeps, as JSON text: 4 KiB holds every write's answer (batch
/// id, status, items), every error document and a handful of search results in full, while a row
/// per call stays small enough for thousands of calls a second and a table kept for months. Longer
/// answers (full-text search pages, documents) keep their first 4 KiB; `result_count` says how
/// many results there were, and the upstream holds the data itself.
pub const AUDIT_OUTPUT_CAP: usize = 4096;

/// An answer as the audit keeps it: every value of a key in `secret_fields`, at any depth
/// (answers nest, unlike arguments), replaced with `"***"`; when its JSON is longer than
/// [`AUDIT_OUTPUT_CAP`] bytes, `{"truncated": true, "bytes": <full length>, "head": <the first
/// bytes of the JSON text, cut on a character boundary>}` instead, so a reader can never take a
/// cut answer for a whole one.
pub fn audit_output(output: &Value, secret_fields: &[String]) -> Box<RawValue> {
    let mut output = output.clone();
    redact_deep(&mut output, secret_fields);
    let text = output.to_string();
    if text.len() <= AUDIT_OUTPUT_CAP {
        return raw(text);
    }
    truncated(&text)
}

/// [`audit_output`] of `output` whose JSON text is `text` (the answer's own), so an answer is
/// neither cloned nor serialized again when nothing in it needs redacting.
pub fn audit_output_of(output: &Value, text: &str, secret_fields: &[String]) -> Box<RawValue> {
    match (secret_fields.is_empty(), text.len() <= AUDIT_OUTPUT_CAP) {
        (true, true) => raw(text.to_owned()),
        (true, false) => truncated(text),
        (false, _) => audit_output(output, secret_fields),
    }
}

/// A JSON document as the audit keeps it.
pub fn audit_document(document: &Value) -> Box<RawValue> {
    raw(document.to_string())
}

/// `text` is JSON written by serde_json here, so it is valid; the fallback never runs.
fn raw(text: String) -> Box<RawValue> {
    RawValue::from_string(text).unwrap_or_else(|_| RawValue::NULL.to_owned())
}

fn truncated(text: &str) -> Box<RawValue> {
    // Room for the marker itself, so the stored row stays near the cap.
    let mut end = AUDIT_OUTPUT_CAP - 128;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    // Written straight into the raw value: a `json!` document would copy the head, and
    // `RawValue::from_string` would read the text again to check it.
    #[derive(serde::Serialize)]
    struct Truncated<'a> {
        truncated: bool,
        bytes: usize,
        head: &'a str,
    }
    let document = Truncated {
        truncated: true,
        bytes: text.len(),
        head: &text[..end],
    };
    serde_json::value::to_raw_value(&document).unwrap_or_else(|_| RawValue::NULL.to_owned())
}

fn redact_deep(value: &mut Value, secret_fields: &[String]) {
    match value {
        Value::Object(object) => {
            for (key, value) in object.iter_mut() {
                if secret_fields.iter().any(|f| f == key) {
                    *value = Value::String("***".into());
                } else {
                    redact_deep(value, secret_fields);
                }
            }
        }
        Value::Array(items) => items.iter_mut().for_each(|v| redact_deep(v, secret_fields)),
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn every_outcome_is_listed_once_under_its_serialized_name() {
        let mut names: Vec<_> = Outcome::ALL.iter().map(|o| o.name()).collect();
        names.sort();
        names.dedup();
        assert_eq!(names.len(), Outcome::ALL.len());
        for outcome in Outcome::ALL {
            assert_eq!(serde_json::to_value(outcome).unwrap(), outcome.name());
            assert_eq!(Outcome::named(outcome.name()), Some(outcome));
        }
        assert_eq!(Outcome::named("made"), None);
    }

    #[test]
    fn redact_hides_only_secret_fields() {
        let redacted = redact(
            &json!({"api_key": "k-123", "query": "Latte"}),
            &["api_key".to_string()],
        );
        assert_eq!(redacted, json!({"api_key": "***", "query": "Latte"}));
    }

    #[test]
    fn outputs_are_redacted_at_any_depth_and_capped_with_a_marker() {
        let secret = vec!["phone".to_string()];
        let kept = audit_output(
            &json!({"results": [{"name": "Anna", "phone": "+49 171"}], "phone": "x"}),
            &secret,
        );
        assert_eq!(
            parsed(&kept),
            json!({"results": [{"name": "Anna", "phone": "***"}], "phone": "***"})
        );
        let long = json!({"results": ["ä".repeat(5000)]});
        let cut = parsed(&audit_output(&long, &[]));
        assert_eq!(cut["truncated"], true);
        assert_eq!(cut["bytes"], long.to_string().len());
        let head = cut["head"].as_str().unwrap();
        assert!(long.to_string().starts_with(head));
        assert!(
            cut.to_string().len() <= AUDIT_OUTPUT_CAP,
            "{}",
            cut.to_string().len()
        );
    }

    fn parsed(raw: &RawValue) -> Value {
        serde_json::from_str(raw.get()).unwrap()
    }

    #[test]
    fn an_answer_without_secrets_is_kept_as_its_own_text() {
        let answer = json!({"results": [{"name": "Латте", "note": "a \"quoted\" word"}]});
        let text = answer.to_string();
        let kept = audit_output_of(&answer, &text, &[]);
        assert_eq!(kept.get(), text);
        let line = serde_json::to_string(&AuditEvent {
            output: Some(kept),
            ..AuditEvent::now("/coffee/mcp", "t")
        })
        .unwrap();
        let read: Value = serde_json::from_str(&line).unwrap();
        assert_eq!(read["output"], answer);
        let secret = audit_output_of(&answer, &text, &["note".to_string()]);
        assert_eq!(parsed(&secret)["results"][0]["note"], "***");
    }
}
