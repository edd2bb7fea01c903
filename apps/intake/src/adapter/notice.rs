//! The V3 entry notice (seed §3): an S10/S99 route instead of business events. It becomes one
//! synthetic event for intake.

use serde_json::{Map, Value, json};

use super::{AdapterError, Form, Submission, optional_array, source_message};

/// The entry-notice routes (docs/contracts/hotel-intake.md).
pub const NOTICE_ROUTES: [&str; 2] = ["S10", "S99"];
pub const NOTICE_RESULT_TYPE: &str = "entry_notice";

pub(super) fn entry_notice(root: &Map<String, Value>) -> Result<Submission, AdapterError> {
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
