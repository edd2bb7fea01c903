//! The MCP submit payload adapter (seed §3–§7): detects the payload's form, checks what the MCP
//! layer owns (root structure, source message shape, event transport fields, relation indices),
//! maps agent event ids to 1-based `source_event_index` by array order, and strips compatibility
//! fields. It does not judge business content (that is the intake service's) and never panics:
//! every input is either a [`Submission`] or an [`AdapterError`] naming the field.
//!
//! Here: what all forms share (detection, the root's keys, the source message, the error and the
//! result types). Each form's own checks are in its module: `v3` (business root and the id
//! mapping), `notice` (S10/S99 entry notice), `v2` (compatibility).

mod notice;
mod v2;
mod v3;

use serde_json::{Map, Value};

pub use notice::{NOTICE_RESULT_TYPE, NOTICE_ROUTES};
pub use v2::{V2_REQUIRED, V2_RESULT_TYPES};
pub use v3::MAPPING_POLICY;

/// Root fields the V3 forms accept for compatibility and drop before intake (seed §3).
const COMPATIBILITY_FIELDS: [&str; 3] = ["hotel_id", "source_provider", "source_channel"];
const V3_ROOT: [&str; 5] = [
    "source_message",
    "message_events",
    "case_candidates",
    "extraction_warnings",
    "unhandled_current_intents",
];
const NOTICE_ROOT: [&str; 5] = [
    "source_message",
    "route_code",
    "result_type",
    "notice_reason",
    "extraction_warnings",
];
const V2_ROOT: [&str; 3] = [
    "source_message_id",
    "ai_task_results",
    "extraction_warnings",
];
const SOURCE_MESSAGE_FIELDS: [&str; 7] = [
    "source_message_id",
    "subject",
    "from",
    "to",
    "cc",
    "received_at",
    "source_channel",
];

/// A refused payload: `MCP_SUBMIT_PAYLOAD_INVALID` with `details.field` (and where, when nested).
#[derive(Debug, Clone, PartialEq)]
pub struct AdapterError {
    pub field: String,
    pub path: Option<String>,
    pub message: String,
}

impl AdapterError {
    fn at(field: &str, message: impl Into<String>) -> Self {
        Self {
            field: field.into(),
            path: None,
            message: message.into(),
        }
    }

    fn nested(field: &str, path: String, message: impl Into<String>) -> Self {
        Self {
            field: field.into(),
            path: Some(path),
            message: message.into(),
        }
    }
}

/// Which form a payload has (seed §3).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Form {
    V3BusinessRoot,
    V3EntryNotice,
    V2TaskResults,
}

impl Form {
    pub fn name(self) -> &'static str {
        match self {
            Form::V3BusinessRoot => "v3_business_root",
            Form::V3EntryNotice => "v3_entry_notice",
            Form::V2TaskResults => "v2_ai_task_results",
        }
    }
}

/// What the intake service receives: the payload with compatibility fields removed and indices
/// mapped. `source_message_id` is `None` when the payload has none (intake answers
/// `MISSING_SOURCE_MESSAGE_ID`, the existing channel, seed §3).
#[derive(Debug, Clone, PartialEq)]
pub struct Submission {
    pub form: Form,
    pub source_message_id: Option<String>,
    pub source_message: Option<Map<String, Value>>,
    /// The V3 root without `source_message` and `message_events`, for the record.
    pub root: Map<String, Value>,
    /// V3 events with mapped indices; V2 items as given; one synthetic entry for a notice.
    pub events: Vec<Map<String, Value>>,
    /// Not business data: returned to the caller, never stored (seed §5).
    pub mapping: Option<Value>,
}

/// Detects, checks and maps a payload.
pub fn adapt(payload: &Value) -> Result<Submission, AdapterError> {
    let Value::Object(root) = payload else {
        return Err(AdapterError::at("arguments", "载荷必须是 JSON 对象"));
    };
    let form = detect(root)?;
    let allowed: &[&str] = match form {
        Form::V3BusinessRoot => &V3_ROOT,
        Form::V3EntryNotice => &NOTICE_ROOT,
        Form::V2TaskResults => &V2_ROOT,
    };
    let compatibility = form != Form::V2TaskResults;
    for key in root.keys() {
        let known = allowed.contains(&key.as_str())
            || (compatibility && COMPATIBILITY_FIELDS.contains(&key.as_str()));
        if !known {
            return Err(AdapterError::at(
                key,
                format!(
                    "未知的根字段（{} 形态允许：{}）",
                    form.name(),
                    allowed.join(", ")
                ),
            ));
        }
    }
    match form {
        Form::V3BusinessRoot => v3::business_root(root),
        Form::V3EntryNotice => notice::entry_notice(root),
        Form::V2TaskResults => v2::task_results(root),
    }
}

fn detect(root: &Map<String, Value>) -> Result<Form, AdapterError> {
    let has = |key: &str| root.contains_key(key);
    let forms: Vec<(&str, Form)> = [
        ("message_events", Form::V3BusinessRoot),
        ("route_code", Form::V3EntryNotice),
        ("ai_task_results", Form::V2TaskResults),
    ]
    .into_iter()
    .filter(|(key, _)| has(key))
    .collect();
    match forms.as_slice() {
        [(_, form)] => Ok(*form),
        [] if has("result_type") => Ok(Form::V3EntryNotice),
        [] => Err(AdapterError::at(
            "message_events",
            "无法识别载荷形态：需要 message_events（V3 业务根）、route_code（S10/S99 入口通知）或 ai_task_results（V2）之一",
        )),
        [_, (second, _), ..] => Err(AdapterError::at(
            second,
            "一个载荷只能是一种形态：message_events、route_code、ai_task_results 不能同时出现",
        )),
    }
}

/// The source message object (if any) and its id (if usable).
type SourceMessage = (Option<Map<String, Value>>, Option<String>);

fn source_message(root: &Map<String, Value>) -> Result<SourceMessage, AdapterError> {
    let Some(value) = root.get("source_message") else {
        return Ok((None, None));
    };
    let Value::Object(message) = value else {
        return Err(AdapterError::at(
            "source_message",
            "source_message 必须是对象",
        ));
    };
    for (key, value) in message {
        let path = format!("source_message.{key}");
        let ok = match key.as_str() {
            "cc" | "to" => {
                value.is_null()
                    || value
                        .as_array()
                        .is_some_and(|a| a.iter().all(Value::is_string))
            }
            _ if SOURCE_MESSAGE_FIELDS.contains(&key.as_str()) => {
                value.is_null() || value.is_string()
            }
            _ => {
                return Err(AdapterError::nested(
                    key,
                    path,
                    format!(
                        "source_message 中的未知字段（允许：{}）",
                        SOURCE_MESSAGE_FIELDS.join(", ")
                    ),
                ));
            }
        };
        if !ok {
            return Err(AdapterError::nested(
                key,
                path,
                "类型错误：应为字符串（cc/to 为字符串数组）",
            ));
        }
    }
    let id = message
        .get("source_message_id")
        .and_then(Value::as_str)
        .map(str::trim)
        .filter(|id| !id.is_empty())
        .map(String::from);
    Ok((Some(message.clone()), id))
}

fn optional_array(root: &Map<String, Value>, key: &str) -> Result<(), AdapterError> {
    match root.get(key) {
        None | Some(Value::Array(_)) => Ok(()),
        Some(_) => Err(AdapterError::at(key, format!("{key} 必须是数组"))),
    }
}

/// An agent event id: a non-empty string or an integer, compared as text.
fn event_id(value: &Value) -> Option<String> {
    match value {
        Value::String(s) if !s.trim().is_empty() => Some(s.trim().to_string()),
        Value::Number(n) if n.is_i64() || n.is_u64() => Some(n.to_string()),
        _ => None,
    }
}
