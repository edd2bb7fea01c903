//! The MCP submit payload adapter (seed §3–§7): detects the payload's form, checks what the MCP
//! layer owns (root structure, source message shape, event transport fields, relation indices),
//! maps agent event ids to 1-based `source_event_index` by array order, and strips compatibility
//! fields. It does not judge business content (that is the intake service's) and never panics:
//! every input is either a [`Submission`] or an [`AdapterError`] naming the field.

use std::collections::HashMap;

use serde_json::{Map, Value, json};

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
/// The entry-notice routes (docs/contracts/hotel-intake.md).
pub const NOTICE_ROUTES: [&str; 2] = ["S10", "S99"];
pub const NOTICE_RESULT_TYPE: &str = "entry_notice";
pub const MAPPING_POLICY: &str = "message_events_array_order_1_based";

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
        Form::V3BusinessRoot => v3(root),
        Form::V3EntryNotice => notice(root),
        Form::V2TaskResults => v2(root),
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

fn v3(root: &Map<String, Value>) -> Result<Submission, AdapterError> {
    let (source_message, source_message_id) = source_message(root)?;
    match root.get("extraction_warnings") {
        Some(Value::Array(_)) => {}
        Some(_) => {
            return Err(AdapterError::at(
                "extraction_warnings",
                "extraction_warnings 必须是数组",
            ));
        }
        None => {
            return Err(AdapterError::at(
                "extraction_warnings",
                "V3 业务根必须包含 extraction_warnings 数组，无警告时传 []",
            ));
        }
    }
    optional_array(root, "case_candidates")?;
    optional_array(root, "unhandled_current_intents")?;
    let Some(Value::Array(events)) = root.get("message_events") else {
        return Err(AdapterError::at(
            "message_events",
            "message_events 必须是数组",
        ));
    };

    // Pass 1: every event has a unique id; its number is its 1-based position.
    let mut numbers: HashMap<String, usize> = HashMap::new();
    let mut ids = Vec::with_capacity(events.len());
    for (index, event) in events.iter().enumerate() {
        let path = format!("message_events[{index}].source_event_index");
        let Value::Object(event) = event else {
            return Err(AdapterError::nested(
                "message_events",
                format!("message_events[{index}]"),
                "每个 event 必须是对象",
            ));
        };
        let id = match event.get("source_event_index") {
            None | Some(Value::Null) => {
                return Err(AdapterError::nested(
                    "source_event_index",
                    path,
                    "缺少事件 ID",
                ));
            }
            Some(value) => event_id(value).ok_or_else(|| {
                AdapterError::nested(
                    "source_event_index",
                    path.clone(),
                    "事件 ID 必须是非空字符串或整数",
                )
            })?,
        };
        if numbers.insert(id.clone(), index + 1).is_some() {
            return Err(AdapterError::nested(
                "source_event_index",
                path,
                format!("重复的事件 ID：{id}"),
            ));
        }
        ids.push(id);
    }

    // Pass 2: relations point at other events of this payload, once each; then map.
    let mut mapped_events = Vec::with_capacity(events.len());
    // Pass 1 refused every non-object, so this sees each event.
    let objects = events
        .iter()
        .enumerate()
        .filter_map(|(i, e)| e.as_object().map(|o| (i, o)));
    for (index, event) in objects {
        let own = &ids[index];
        let resolve = |field: &str, value: &Value| -> Result<usize, AdapterError> {
            let path = format!("message_events[{index}].{field}");
            let id = event_id(value).ok_or_else(|| {
                AdapterError::nested(field, path.clone(), "引用必须是事件 ID（非空字符串或整数）")
            })?;
            if &id == own {
                return Err(AdapterError::nested(
                    field,
                    path,
                    format!("事件不能引用自己：{id}"),
                ));
            }
            numbers.get(&id).copied().ok_or_else(|| {
                AdapterError::nested(
                    field,
                    path,
                    format!("悬空引用：message_events 中没有事件 {id}"),
                )
            })
        };
        let mut mapped = event.clone();
        mapped.insert("source_event_index".into(), json!(index + 1));
        for field in ["related_source_event_index", "parent_source_event_index"] {
            match event.get(field) {
                None | Some(Value::Null) => {}
                Some(value) => {
                    let number = resolve(field, value)?;
                    // The seed's types: related as a numeric string, parent as a number.
                    let mapped_value = if field == "related_source_event_index" {
                        json!(number.to_string())
                    } else {
                        json!(number)
                    };
                    mapped.insert(field.into(), mapped_value);
                }
            }
        }
        match event.get("related_source_event_indices") {
            None | Some(Value::Null) => {}
            Some(Value::Array(references)) => {
                let field = "related_source_event_indices";
                let mut seen = Vec::with_capacity(references.len());
                for reference in references {
                    let number = resolve(field, reference)?;
                    if seen.contains(&number) {
                        let id = event_id(reference).unwrap_or_default();
                        return Err(AdapterError::nested(
                            field,
                            format!("message_events[{index}].{field}"),
                            format!("重复引用：{id}"),
                        ));
                    }
                    seen.push(number);
                }
                mapped.insert(
                    field.into(),
                    json!(seen.iter().map(usize::to_string).collect::<Vec<_>>()),
                );
            }
            Some(_) => {
                return Err(AdapterError::nested(
                    "related_source_event_indices",
                    format!("message_events[{index}].related_source_event_indices"),
                    "必须是事件 ID 数组",
                ));
            }
        }
        mapped_events.push(mapped);
    }

    let mapping = json!({
        "mapping_policy": MAPPING_POLICY,
        "source_event_index_mapping": (0..events.len()).map(|i| json!({
            "original_source_event_index": original(&events[i]),
            "mapped_source_event_index": i + 1,
        })).collect::<Vec<_>>(),
    });
    let rest: Map<String, Value> = root
        .iter()
        .filter(|(k, _)| {
            !["source_message", "message_events"].contains(&k.as_str())
                && !COMPATIBILITY_FIELDS.contains(&k.as_str())
        })
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect();
    Ok(Submission {
        form: Form::V3BusinessRoot,
        source_message_id,
        source_message,
        root: rest,
        events: mapped_events,
        mapping: Some(mapping),
    })
}

/// The event id as the agent wrote it (a string or a number), for the diagnostics.
fn original(event: &Value) -> Value {
    event
        .get("source_event_index")
        .cloned()
        .unwrap_or(Value::Null)
}

fn notice(root: &Map<String, Value>) -> Result<Submission, AdapterError> {
    let (source_message, source_message_id) = source_message(root)?;
    let route = match root.get("route_code") {
        Some(Value::String(route)) if NOTICE_ROUTES.contains(&route.as_str()) => route.clone(),
        Some(_) => {
            return Err(AdapterError::at(
                "route_code",
                format!("route_code 只能是 {}", NOTICE_ROUTES.join(" 或 ")),
            ));
        }
        None => {
            return Err(AdapterError::at(
                "route_code",
                "入口通知必须包含 route_code（S10 或 S99）",
            ));
        }
    };
    match root.get("result_type") {
        None => {}
        Some(Value::String(t)) if t == NOTICE_RESULT_TYPE => {}
        Some(_) => {
            return Err(AdapterError::at(
                "result_type",
                format!("入口通知的 result_type 只能是 {NOTICE_RESULT_TYPE}"),
            ));
        }
    }
    match root.get("notice_reason") {
        None | Some(Value::Null) | Some(Value::String(_)) => {}
        Some(_) => {
            return Err(AdapterError::at(
                "notice_reason",
                "notice_reason 必须是字符串",
            ));
        }
    }
    optional_array(root, "extraction_warnings")?;
    let mut event = Map::new();
    event.insert("route_code".into(), json!(route));
    if let Some(reason) = root.get("notice_reason").filter(|r| r.is_string()) {
        event.insert("notice_reason".into(), reason.clone());
    }
    let rest: Map<String, Value> = root
        .iter()
        .filter(|(k, _)| k.as_str() == "extraction_warnings")
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect();
    Ok(Submission {
        form: Form::V3EntryNotice,
        source_message_id,
        source_message,
        root: rest,
        events: vec![event],
        mapping: None,
    })
}

fn v2(root: &Map<String, Value>) -> Result<Submission, AdapterError> {
    let source_message_id = match root.get("source_message_id") {
        None | Some(Value::Null) => None,
        Some(Value::String(id)) => Some(id.trim().to_string()).filter(|id| !id.is_empty()),
        Some(_) => {
            return Err(AdapterError::at(
                "source_message_id",
                "source_message_id 必须是字符串",
            ));
        }
    };
    optional_array(root, "extraction_warnings")?;
    let Some(Value::Array(items)) = root.get("ai_task_results") else {
        return Err(AdapterError::at(
            "ai_task_results",
            "ai_task_results 必须是数组",
        ));
    };
    if items.is_empty() {
        return Err(AdapterError::at(
            "ai_task_results",
            "ai_task_results 至少需要一项",
        ));
    }
    let mut seen = Vec::new();
    let mut events = Vec::with_capacity(items.len());
    for (index, item) in items.iter().enumerate() {
        let item = v2_item(item, index)?;
        let number = item
            .get("source_event_index")
            .and_then(Value::as_u64)
            .unwrap_or_default();
        if seen.contains(&number) {
            return Err(AdapterError::nested(
                "source_event_index",
                format!("ai_task_results[{index}].source_event_index"),
                format!("重复的 source_event_index：{number}"),
            ));
        }
        seen.push(number);
        events.push(item);
    }
    let rest = root
        .iter()
        .filter(|(k, _)| k.as_str() == "extraction_warnings")
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect();
    Ok(Submission {
        form: Form::V2TaskResults,
        source_message_id,
        source_message: None,
        root: rest,
        events,
        mapping: None,
    })
}

/// The V2 item schema (seed §6). The published schema says the same; this is the adapter's own
/// check so the rule holds whoever calls it.
pub const V2_REQUIRED: [&str; 5] = [
    "source_event_index",
    "catalog_code",
    "skill_id",
    "result_type",
    "task_type",
];
pub const V2_RESULT_TYPES: [&str; 3] = ["normal_task", "manual_review", "informational_message"];
const V2_OPTIONAL: [&str; 11] = [
    "task_subtype",
    "current_or_history",
    "case_keys",
    "relevant_message_excerpt",
    "attachments",
    "file_references",
    "context_used",
    "extracted_fields",
    "manual_review",
    "additional_operations",
    "idempotency_key",
];

/// An optional item field, the check of its JSON type, and the type's name for the message.
type TypedField = (&'static str, fn(&Value) -> bool, &'static str);

fn v2_item(item: &Value, index: usize) -> Result<Map<String, Value>, AdapterError> {
    let at = |field: &str, message: String| {
        AdapterError::nested(field, format!("ai_task_results[{index}].{field}"), message)
    };
    let Value::Object(item) = item else {
        return Err(AdapterError::nested(
            "ai_task_results",
            format!("ai_task_results[{index}]"),
            "每一项必须是对象",
        ));
    };
    for key in item.keys() {
        if !V2_REQUIRED.contains(&key.as_str()) && !V2_OPTIONAL.contains(&key.as_str()) {
            return Err(at(key, "未知的 item 字段".into()));
        }
    }
    for field in V2_REQUIRED {
        if item.get(field).is_none_or(Value::is_null) {
            return Err(at(field, "缺少必填字段".into()));
        }
    }
    if item["source_event_index"].as_u64().is_none_or(|n| n < 1) {
        return Err(at(
            "source_event_index",
            "source_event_index 必须是 ≥ 1 的整数".into(),
        ));
    }
    for field in ["catalog_code", "skill_id", "task_type"] {
        if item[field].as_str().is_none_or(|s| s.trim().is_empty()) {
            return Err(at(field, "必须是非空字符串".into()));
        }
    }
    if !item["result_type"]
        .as_str()
        .is_some_and(|t| V2_RESULT_TYPES.contains(&t))
    {
        return Err(at(
            "result_type",
            format!("result_type 只能是 {}", V2_RESULT_TYPES.join("、")),
        ));
    }
    let typed: [TypedField; 8] = [
        ("task_subtype", Value::is_string, "字符串"),
        ("current_or_history", Value::is_string, "字符串"),
        ("relevant_message_excerpt", Value::is_string, "字符串"),
        ("idempotency_key", Value::is_string, "字符串"),
        ("case_keys", Value::is_object, "对象"),
        ("context_used", Value::is_object, "对象"),
        ("extracted_fields", Value::is_object, "对象"),
        ("manual_review", Value::is_object, "对象"),
    ];
    for (field, is_type, name) in typed {
        if let Some(value) = item.get(field).filter(|v| !v.is_null())
            && !is_type(value)
        {
            return Err(at(field, format!("类型错误：应为{name}")));
        }
    }
    for field in ["attachments", "file_references", "additional_operations"] {
        if let Some(value) = item.get(field).filter(|v| !v.is_null())
            && !value.is_array()
        {
            return Err(at(field, "类型错误：应为数组".into()));
        }
    }
    Ok(item.clone())
}
