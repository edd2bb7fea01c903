//! The schema `tools/list` publishes: the three payload forms as one object, so a model sees every
//! field it may fill — the V3 business root (with `relationship_type` among the event fields), the
//! V3 S10/S99 entry notice, and the V2 `ai_task_results[]` item. Which form a payload is, and the
//! rules across fields, are the adapter's (`adapter.rs`).

use serde_json::{Map, Value, json};

use crate::adapter::{NOTICE_RESULT_TYPE, NOTICE_ROUTES, V2_REQUIRED, V2_RESULT_TYPES};

pub fn input_schema() -> Map<String, Value> {
    let event_id = json!({"type": ["string", "integer"], "description": "Agent 内部事件 ID（如 E1、E_CHILD_1），MCP 层按数组顺序映射为从 1 开始的 source_event_index"});
    let case_keys = json!({
        "type": "object",
        "properties": {
            "group_code": {"type": ["string", "null"]},
            "confirmation_number": {"type": ["string", "null"]},
            "reservation_number": {"type": ["string", "null"]},
            "block_code": {"type": ["string", "null"]}
        }
    });
    let schema = json!({
        "type": "object",
        "description": "三种形态之一：V3 业务根（message_events）、V3 S10/S99 入口通知（route_code）、V2 兼容（ai_task_results）。",
        "properties": {
            "source_message": {
                "type": "object",
                "description": "V3 必填：AgentBus 原始来源消息。source_message_id 是外部消息 ID（platform_source_message_inbox.external_message_id），不是数据库主键。",
                "properties": {
                    "source_message_id": {"type": "string"},
                    "subject": {"type": "string"},
                    "from": {"type": "string"},
                    "to": {"type": "array", "items": {"type": "string"}},
                    "cc": {"type": "array", "items": {"type": "string"}},
                    "received_at": {"type": "string", "description": "ISO 8601 时间"},
                    "source_channel": {"type": "string", "description": "例如 Email"}
                },
                "additionalProperties": false
            },
            "message_events": {
                "type": "array",
                "description": "V3 业务根：按原顺序排列的业务事件；事件业务内容由入站层判定，不合法的事件记为 adapter_contract_error。",
                "items": {
                    "type": "object",
                    "required": ["source_event_index"],
                    "properties": {
                        "event_type": {"type": "string", "description": "例如 New Booking、Modify Booking、Cancel Booking、Cancel Allotment、Trace、Rate Inquiry"},
                        "event_role": {"type": "string"},
                        "source_event_index": event_id,
                        "current_or_history": {"type": "string", "enum": ["current", "history"]},
                        "case_keys": case_keys,
                        "relevant_message_excerpt": {"type": "string"},
                        "attachments": {"type": "array"},
                        "file_references": {"type": "array"},
                        "context_used": {"type": "object"},
                        "related_event_type": {"type": "string"},
                        "requires_downstream_hard_validation": {"type": "boolean"},
                        "related_source_event_index": event_id,
                        "related_source_event_indices": {"type": "array", "items": event_id, "description": "全部相关事件 ID，保持顺序；不得悬空或重复"},
                        "parent_source_event_index": event_id,
                        "extracted_fields": {
                            "type": "object",
                            "properties": {
                                "relationship_type": {"type": "string", "description": "事件关系，例如 linked_parent_release_after_child_split"},
                                "booking_object_type": {"type": "string"},
                                "cancel_scope": {"type": "string"},
                                "trace_subtype": {"type": "string"},
                                "changed_fields": {"type": "array"}
                            }
                        },
                        "manual_review": {"type": ["object", "null"]}
                    }
                }
            },
            "case_candidates": {"type": "array"},
            "extraction_warnings": {"type": "array", "description": "V3 必须存在，无警告传 []；MCP 层不解释警告"},
            "unhandled_current_intents": {"type": "array"},
            "route_code": {"type": "string", "enum": NOTICE_ROUTES, "description": "S10/S99 入口通知：为来源消息创建只读任务"},
            "result_type": {"type": "string", "enum": [NOTICE_RESULT_TYPE], "description": "入口通知的 result_type"},
            "notice_reason": {"type": "string"},
            "source_message_id": {"type": "string", "description": "V2 兼容：外部消息 ID"},
            "ai_task_results": {
                "type": "array",
                "minItems": 1,
                "description": "V2 兼容任务结果（新数据请用 V3）",
                "items": {
                    "type": "object",
                    "required": V2_REQUIRED,
                    "additionalProperties": false,
                    "properties": {
                        "source_event_index": {"type": "integer", "minimum": 1},
                        "catalog_code": {"type": "string", "minLength": 1},
                        "skill_id": {"type": "string", "minLength": 1},
                        "result_type": {"type": "string", "enum": V2_RESULT_TYPES},
                        "task_type": {"type": "string", "minLength": 1},
                        "task_subtype": {"type": ["string", "null"]},
                        "current_or_history": {"type": ["string", "null"]},
                        "case_keys": case_keys,
                        "relevant_message_excerpt": {"type": ["string", "null"]},
                        "attachments": {"type": ["array", "null"]},
                        "file_references": {"type": ["array", "null"]},
                        "context_used": {"type": ["object", "null"]},
                        "extracted_fields": {"type": ["object", "null"]},
                        "manual_review": {"type": ["object", "null"]},
                        "additional_operations": {"type": ["array", "null"]},
                        "idempotency_key": {"type": ["string", "null"]}
                    }
                }
            },
            "hotel_id": {"type": ["string", "integer"], "description": "兼容字段：接受后移除，酒店按平台唯一 ACTIVE 酒店解析"},
            "source_provider": {"type": "string", "description": "兼容字段：接受后移除"},
            "source_channel": {"type": "string", "description": "兼容字段：接受后移除"}
        },
        "additionalProperties": false
    });
    match schema {
        Value::Object(object) => object,
        _ => Map::new(),
    }
}

pub fn output_schema() -> Map<String, Value> {
    let schema = json!({
        "type": "object",
        "properties": {
            "success": {"type": "boolean"},
            "form": {"type": "string"},
            "batch_id": {"type": "integer"},
            "accepted_count": {"type": "integer"},
            "task_ids": {"type": "array", "items": {"type": "integer"}},
            "duplicate": {"type": "boolean", "description": "true：该 source_message_id 已提交过，返回既有批次，未新建"},
            "contract_errors": {"type": "array", "description": "记为 adapter_contract_error 的事件"},
            "mapping_diagnostics": {"type": "object", "description": "非业务诊断：事件 ID 到 source_event_index 的映射，不写入业务数据"},
            "error": {
                "type": "object",
                "properties": {"code": {"type": "string"}, "message": {"type": "string"}, "details": {"type": "object"}}
            }
        },
        "required": ["success"]
    });
    match schema {
        Value::Object(object) => object,
        _ => Map::new(),
    }
}
