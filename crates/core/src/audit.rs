use serde::Serialize;
use serde_json::Value;

/// How a call (or a refused request) ended. The stable names are what dashboards count.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Outcome {
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
}

/// One line of the audit log: a tool call, or a refusal before any tool ran.
///
/// It names the calling system, never the person chatting: arguments are what the model sent,
/// with secret fields redacted.
#[derive(Debug, Clone, Serialize)]
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
    pub outcome: Outcome,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub code: Option<String>,
    pub duration_ms: f64,
    /// What the tool added about the call (upstream request id, upstream trace id, …).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub notes: Option<serde_json::Map<String, Value>>,
}

/// Replaces the values of `secret_fields` (top-level argument names) with `"***"`.
pub fn redact(arguments: &Value, secret_fields: &[String]) -> Value {
    let mut arguments = arguments.clone();
    if let Value::Object(object) = &mut arguments {
        for field in secret_fields {
            if let Some(value) = object.get_mut(field) {
                *value = Value::String("***".into());
            }
        }
    }
    arguments
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn redact_hides_only_secret_fields() {
        let redacted = redact(
            &json!({"api_key": "k-123", "query": "Latte"}),
            &["api_key".to_string()],
        );
        assert_eq!(redacted, json!({"api_key": "***", "query": "Latte"}));
    }
}
