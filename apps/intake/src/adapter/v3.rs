//! The V3 business root (seed §4–§5): `message_events` with agent event ids, mapped to 1-based
//! `source_event_index` by array order; relations must point at other events of the same payload,
//! once each. The mapping is returned as diagnostics, never stored.

use std::collections::HashMap;

use serde_json::{Map, Value, json};

use super::{
    AdapterError, COMPATIBILITY_FIELDS, Form, Submission, event_id, optional_array, source_message,
};

pub const MAPPING_POLICY: &str = "message_events_array_order_1_based";

pub(super) fn business_root(root: &Map<String, Value>) -> Result<Submission, AdapterError> {
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
