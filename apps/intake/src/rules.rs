//! The intake's business rules for V3 events (docs/contracts/hotel-intake.md): which event types
//! exist, which catalog code and skill each routes to, and which `extracted_fields` each needs.
//! An event that breaks them is not refused: it is recorded as an `adapter_contract_error`
//! transition, so nothing the agent sent is lost and a person can look at it.

use serde_json::{Map, Value};

/// One known event type.
pub struct EventType {
    pub event_type: &'static str,
    pub catalog_code: &'static str,
    pub skill_id: &'static str,
    pub required_fields: &'static [&'static str],
}

pub const CATALOG: [EventType; 6] = [
    EventType {
        event_type: "New Booking",
        catalog_code: "S01",
        skill_id: "S01_new_booking_skill",
        required_fields: &["booking_object_type"],
    },
    EventType {
        event_type: "Modify Booking",
        catalog_code: "S02",
        skill_id: "S02_modify_booking_skill",
        required_fields: &["changed_fields"],
    },
    EventType {
        event_type: "Cancel Booking",
        catalog_code: "S03",
        skill_id: "S03_cancel_booking_skill",
        required_fields: &["cancel_scope"],
    },
    EventType {
        event_type: "Cancel Allotment",
        catalog_code: "S04",
        skill_id: "S04_cancel_allotment_skill",
        required_fields: &["relationship_type", "cancel_scope"],
    },
    EventType {
        event_type: "Trace",
        catalog_code: "S05",
        skill_id: "S05_trace_skill",
        required_fields: &["trace_subtype"],
    },
    EventType {
        event_type: "Rate Inquiry",
        catalog_code: "S06",
        skill_id: "S06_rate_inquiry_skill",
        required_fields: &[],
    },
];

/// What the intake makes of one event or item.
#[derive(Debug, Clone, PartialEq)]
pub enum Verdict {
    Task {
        catalog_code: String,
        skill_id: String,
        task_type: String,
        result_type: String,
        status: &'static str,
    },
    ContractError {
        code: &'static str,
        message: String,
    },
}

/// A V3 event against the catalog.
pub fn judge_event(event: &Map<String, Value>) -> Verdict {
    let Some(event_type) = event.get("event_type").and_then(Value::as_str) else {
        return Verdict::ContractError {
            code: "MISSING_EVENT_TYPE",
            message: "event_type 缺失或不是字符串".into(),
        };
    };
    let Some(known) = CATALOG.iter().find(|t| t.event_type == event_type) else {
        let names: Vec<&str> = CATALOG.iter().map(|t| t.event_type).collect();
        return Verdict::ContractError {
            code: "UNKNOWN_EVENT_TYPE",
            message: format!(
                "未知的 event_type：{event_type}（已知：{}）",
                names.join("、")
            ),
        };
    };
    let Some(fields) = event.get("extracted_fields").and_then(Value::as_object) else {
        return Verdict::ContractError {
            code: "MISSING_EXTRACTED_FIELDS",
            message: "extracted_fields 缺失或不是对象".into(),
        };
    };
    if let Some(missing) = known
        .required_fields
        .iter()
        .find(|f| fields.get(**f).is_none_or(Value::is_null))
    {
        return Verdict::ContractError {
            code: "MISSING_EXTRACTED_FIELD",
            message: format!("{event_type} 需要 extracted_fields.{missing}"),
        };
    }
    let manual = event.get("manual_review").is_some_and(Value::is_object);
    Verdict::Task {
        catalog_code: known.catalog_code.into(),
        skill_id: known.skill_id.into(),
        task_type: event_type.into(),
        result_type: if manual {
            "manual_review"
        } else {
            "normal_task"
        }
        .into(),
        status: if manual { "manual_review" } else { "open" },
    }
}

/// A V2 item already carries its routing (checked by the adapter); it becomes a task as given.
pub fn judge_item(item: &Map<String, Value>) -> Verdict {
    let text = |key: &str| {
        item.get(key)
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_string()
    };
    let result_type = text("result_type");
    let status = match result_type.as_str() {
        "manual_review" => "manual_review",
        "informational_message" => "informational",
        _ => "open",
    };
    Verdict::Task {
        catalog_code: text("catalog_code"),
        skill_id: text("skill_id"),
        task_type: text("task_type"),
        result_type,
        status,
    }
}

/// An S10/S99 entry notice becomes one read-only source-message task.
pub fn judge_notice(route_code: &str) -> Verdict {
    Verdict::Task {
        catalog_code: route_code.into(),
        skill_id: format!("{route_code}_source_message_notice"),
        task_type: "Source Message Notice".into(),
        result_type: "informational_message".into(),
        status: "read_only",
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn event(value: Value) -> Map<String, Value> {
        value.as_object().unwrap().clone()
    }

    #[test]
    fn known_events_with_their_fields_become_tasks() {
        let verdict = judge_event(&event(
            json!({"event_type": "New Booking", "extracted_fields": {"booking_object_type": "Group Block"}}),
        ));
        assert!(
            matches!(verdict, Verdict::Task { ref catalog_code, status: "open", .. } if catalog_code == "S01")
        );
        let manual = judge_event(&event(
            json!({"event_type": "Trace", "extracted_fields": {"trace_subtype": "x"}, "manual_review": {"reason": "unclear"}}),
        ));
        assert!(matches!(
            manual,
            Verdict::Task {
                status: "manual_review",
                ..
            }
        ));
    }

    #[test]
    fn business_contract_breaks_are_named() {
        let code = |value| match judge_event(&event(value)) {
            Verdict::ContractError { code, .. } => code,
            other => panic!("{other:?}"),
        };
        assert_eq!(code(json!({"extracted_fields": {}})), "MISSING_EVENT_TYPE");
        assert_eq!(
            code(json!({"event_type": "Teleport", "extracted_fields": {}})),
            "UNKNOWN_EVENT_TYPE"
        );
        assert_eq!(
            code(json!({"event_type": "Trace"})),
            "MISSING_EXTRACTED_FIELDS"
        );
        assert_eq!(
            code(
                json!({"event_type": "Cancel Allotment", "extracted_fields": {"cancel_scope": "all"}})
            ),
            "MISSING_EXTRACTED_FIELD"
        );
    }
}
