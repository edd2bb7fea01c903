//! The V2 compatibility form (seed §6): `ai_task_results`, items that already carry their
//! numeric `source_event_index`; checked item by item, passed on as given.

use serde_json::{Map, Value};

use super::{AdapterError, Form, Submission, optional_array};

pub(super) fn task_results(root: &Map<String, Value>) -> Result<Submission, AdapterError> {
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
