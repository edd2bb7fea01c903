//! The seed's §11 result envelope, always:
//! `{"success": true, "data": {…}, "trace_id"}` or
//! `{"success": false, "error": {code, message, retryable}, "trace_id"}`.
//!
//! Rules: a controlled fallback (`response_mode: llm_graph_qa_controlled_failure`) is a success
//! with its `risk_notes`; `risk_notes` are never dropped; an empty answer is a success, not an
//! error; `retryable` is true only for network errors, timeouts and 5xx. Nothing the upstream says
//! in an error reaches the client: codes and messages are ours, the detail goes to the log.

use concierge_core::{CallContext, ErrorKind, ToolError};
use concierge_upstream::{Exchange, Failure, ResponseMapper};
use serde_json::{Map, Value, json};

pub struct Envelope;

/// The fields of `data` that are passed on; anything else an upstream adds (debug output, queries)
/// stays behind.
const DATA_FIELDS: [&str; 9] = [
    "customer_reply",
    "answer",
    "confidence",
    "follow_up_questions",
    "risk_notes",
    "plans",
    "evidence",
    "response_mode",
    "latency_ms",
];

/// The failures the envelope knows, each with its code, message and retry advice.
#[derive(Debug, Clone, Copy)]
enum Refusal {
    Timeout,
    Unavailable,
    /// 5xx are worth one retry; other refusals are not.
    QueryFailed {
        retryable: bool,
    },
    AuthFailed,
    BadResponse,
}

impl Refusal {
    fn parts(self) -> (&'static str, &'static str, bool) {
        match self {
            Refusal::Timeout => (
                "CUSTOMER_SERVICE_TIMEOUT",
                "智能客服查询超时，请稍后重试",
                true,
            ),
            Refusal::Unavailable => (
                "CUSTOMER_SERVICE_UNAVAILABLE",
                "智能客服暂时无法连接，请稍后重试",
                true,
            ),
            Refusal::QueryFailed { retryable } => (
                "CUSTOMER_SERVICE_QUERY_FAILED",
                "智能客服查询失败",
                retryable,
            ),
            Refusal::AuthFailed => (
                "CUSTOMER_SERVICE_AUTH_FAILED",
                "智能客服服务鉴权失败，请联系管理员",
                false,
            ),
            Refusal::BadResponse => (
                "CUSTOMER_SERVICE_BAD_RESPONSE",
                "智能客服返回了无法识别的结果",
                false,
            ),
        }
    }
}

impl ResponseMapper for Envelope {
    fn upstream(&self) -> &'static str {
        "kgqa"
    }

    fn output_schema(&self) -> Map<String, Value> {
        let schema = json!({
            "type": "object",
            "properties": {
                "success": {"type": "boolean", "description": "false: see `error`; true: see `data`"},
                "data": {
                    "type": "object",
                    "properties": {
                        "customer_reply": {"type": "string", "description": "可直接发送给客户的话术"},
                        "answer": {"type": "string", "description": "完整回答"},
                        "confidence": {"type": "number"},
                        "follow_up_questions": {"type": "array", "items": {"type": "string"}},
                        "risk_notes": {"type": "array", "items": {"type": "string"}, "description": "必须转告客户的核实提醒"},
                        "plans": {"type": "array"},
                        "evidence": {"type": "array"},
                        "response_mode": {"type": "string", "description": "llm_graph_qa_controlled_failure 表示受控兜底"},
                        "latency_ms": {"type": "number"}
                    }
                },
                "error": {
                    "type": "object",
                    "properties": {
                        "code": {"type": "string"},
                        "message": {"type": "string"},
                        "retryable": {"type": "boolean", "description": "只有为 true 时才值得重试"}
                    },
                    "required": ["code", "message", "retryable"]
                },
                "trace_id": {"type": "string"}
            },
            "required": ["success", "trace_id"]
        });
        match schema {
            Value::Object(object) => object,
            _ => Map::new(),
        }
    }

    fn map(&self, exchange: Exchange, context: &CallContext) -> Result<Value, ToolError> {
        if let Some(request_id) = exchange.request.as_ref().and_then(|r| r.get("request_id")) {
            context.note("request_id", request_id.clone());
        }
        let latency_ms = exchange.latency.as_millis() as u64;
        let ours = format!("trc_{}", context.trace_id);
        let answer = match exchange.outcome {
            Err(Failure::Timeout) => {
                let detail = format!("upstream timed out after {latency_ms} ms");
                return Err(failure(context, &ours, Refusal::Timeout, detail));
            }
            Err(Failure::Connection) => {
                return Err(failure(
                    context,
                    &ours,
                    Refusal::Unavailable,
                    "upstream connection failed".into(),
                ));
            }
            Err(Failure::TooLarge) => {
                return Err(failure(
                    context,
                    &ours,
                    Refusal::BadResponse,
                    "upstream body over the size limit".into(),
                ));
            }
            Ok(answer) => answer,
        };
        let document: Option<Map<String, Value>> = serde_json::from_slice(&answer.body).ok();
        let trace = document
            .as_ref()
            .and_then(|d| d.get("trace_id"))
            .and_then(Value::as_str)
            .filter(|t| is_safe_trace_id(t))
            .map(String::from);
        if let Some(trace) = &trace {
            context.note("upstream_trace_id", trace.clone());
        }
        let trace = trace.unwrap_or(ours);
        let status = answer.status;
        let refused = |failed| {
            let detail = format!("upstream status {status}: {}", snippet(&answer.body));
            Err(failure(context, &trace, failed, detail))
        };
        let upstream = match (status, &document) {
            (500.., _) => return refused(Refusal::QueryFailed { retryable: true }),
            (401 | 403, _) => return refused(Refusal::AuthFailed),
            // The API asked for time (rate limit, its own timeout): worth asking again later.
            (408 | 429, _) => return refused(Refusal::QueryFailed { retryable: true }),
            (200..300, Some(document)) if document.get("success") == Some(&Value::Bool(false)) => {
                return refused(Refusal::QueryFailed { retryable: false });
            }
            (200..300, Some(document)) => match document.get("data") {
                Some(Value::Object(data)) => data,
                _ => return refused(Refusal::BadResponse),
            },
            (200..300, None) => return refused(Refusal::BadResponse),
            _ => return refused(Refusal::QueryFailed { retryable: false }),
        };
        let mut data = Map::new();
        for field in DATA_FIELDS {
            if let Some(value) = upstream.get(field).filter(|v| !v.is_null()) {
                data.insert(field.to_string(), value.clone());
            }
        }
        for list in ["follow_up_questions", "risk_notes", "plans", "evidence"] {
            data.entry(list).or_insert_with(|| json!([]));
        }
        data.entry("latency_ms")
            .or_insert_with(|| json!(latency_ms));
        if let Some(mode) = data.get("response_mode").and_then(Value::as_str) {
            context.note("response_mode", mode.to_string());
        }
        Ok(json!({"success": true, "data": data, "trace_id": trace}))
    }
}

fn failure(context: &CallContext, trace: &str, failed: Refusal, detail: String) -> ToolError {
    let (code, message, retryable) = failed.parts();
    context.note("error_code", code);
    let mut error = ToolError::internal(code, detail).with_envelope(json!({
        "success": false,
        "error": {"code": code, "message": message, "retryable": retryable},
        "trace_id": trace,
    }));
    // Worth a retry: ours or the upstream's fault. Not worth one: the answer itself is the refusal.
    error.kind = if retryable {
        ErrorKind::Internal
    } else {
        ErrorKind::Rejected
    };
    error.message = message.into();
    error
}

/// An upstream trace id is passed on only if it looks like one: it must not carry text.
fn is_safe_trace_id(trace: &str) -> bool {
    !trace.is_empty()
        && trace.len() <= 64
        && trace
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
}

/// The start of a body, for the log only.
fn snippet(body: &[u8]) -> String {
    String::from_utf8_lossy(&body[..body.len().min(200)]).replace('\n', " ")
}
