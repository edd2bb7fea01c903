//! The hotel back office (seed `th-hotel-submit-payload.zh.md`): one write tool,
//! `th_hotel_submit_task_results`. An agent hands over a frozen business result; the
//! [`adapter`] checks and maps it strictly; the intake service ([`store`]) records it exactly once.
//!
//! Error contract (seed §10): failures are `isError` results whose `structuredContent` is
//! `{"success": false, "error": {"code", "message", "details": {"field", …}}}`.

pub mod adapter;
pub mod rules;
mod schema;
pub mod store;

use std::sync::Arc;

use concierge_core::{Annotations, CallContext, Tool, ToolError, ToolFuture, ToolSet, ToolSpec};
use serde::Deserialize;
use serde_json::{Value, json};

use crate::adapter::{AdapterError, adapt};
use crate::store::{IntakeError, IntakeService};

pub const TOOL_NAME: &str = "th_hotel_submit_task_results";
pub const INVALID: &str = "MCP_SUBMIT_PAYLOAD_INVALID";

/// The `[apps.intake]` section.
#[derive(Debug, Clone, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct IntakeConfig {
    /// Where submissions are recorded: a SQLite file (created), or a `postgres://` URL — the
    /// deployment's shared database, so every instance records each source message once.
    pub database: String,
    /// The platform's single ACTIVE hotel; submissions never choose it.
    pub hotel_id: String,
}

pub async fn build(config: &IntakeConfig) -> Result<ToolSet, String> {
    let service = IntakeService::open(&config.database, config.hotel_id.clone()).await?;
    Ok(ToolSet::new(
        "intake",
        &concierge_core::messages::CHINESE,
        vec![Arc::new(SubmitTool::new(service))],
    ))
}

struct SubmitTool {
    spec: ToolSpec,
    service: IntakeService,
}

impl SubmitTool {
    fn new(service: IntakeService) -> Self {
        Self {
            spec: ToolSpec {
                title: Some("提交酒店预订 AI 任务结果".into()),
                argument_error: Some(schema_error),
                ..ToolSpec::new(
                    TOOL_NAME,
                    "提交 SuperAgent 已冻结的酒店预订业务结果，由 MCP 层严格校验后只交给业务入站服务一次。\
                    支持三种形态：V3 业务根（message_events，事件 ID 按数组顺序映射为从 1 开始的 source_event_index）、\
                    V3 S10/S99 入口通知（route_code，为来源消息创建只读任务）、V2 兼容（ai_task_results）。\
                    同一 source_message_id 重复提交不会新建批次，会返回既有批次并标记 duplicate。\
                    校验失败时返回 MCP_SUBMIT_PAYLOAD_INVALID 与 details.field；不要自动重试，修正载荷后再提交。",
                    schema::input_schema(),
                    schema::output_schema(),
                    // Writes, never overwrites; the same source message twice is one batch.
                    Annotations {
                        read_only: false,
                        destructive: false,
                        idempotent: true,
                        open_world: false,
                    },
                )
            },
            service,
        }
    }
}

/// The platform's schema check, in the seed's error contract.
fn schema_error(path: &str, message: &str) -> Value {
    let field = path.rsplit('.').next().unwrap_or(path);
    let field = field.split('[').next().unwrap_or(field);
    invalid_envelope(&AdapterError {
        field: field.into(),
        path: (field != path).then(|| path.into()),
        message: message.into(),
    })
}

fn invalid_envelope(error: &AdapterError) -> Value {
    let mut details = json!({"field": error.field});
    if let Some(path) = &error.path {
        details["path"] = json!(path);
    }
    json!({"success": false, "error": {"code": INVALID, "message": error.message, "details": details}})
}

impl Tool for SubmitTool {
    fn spec(&self) -> &ToolSpec {
        &self.spec
    }

    fn call(&self, arguments: Value, context: CallContext) -> ToolFuture<'_> {
        Box::pin(async move {
            let submission = adapt(&arguments).map_err(|error| {
                // Refused here: the intake service is never called.
                ToolError::invalid(error.field.clone(), error.message.clone())
                    .with_envelope(invalid_envelope(&error))
            })?;
            context.note("payload_form", submission.form.name());
            let accepted = self.service.accept(&submission).await.map_err(|error| match error {
                IntakeError::MissingSourceMessageId => {
                    let message = "缺少 source_message_id：V3 需要 source_message.source_message_id，V2 需要 source_message_id";
                    ToolError::rejected("MISSING_SOURCE_MESSAGE_ID", message).with_envelope(json!({
                        "success": false,
                        "error": {"code": "MISSING_SOURCE_MESSAGE_ID", "message": message, "details": {"field": "source_message_id"}}
                    }))
                }
                IntakeError::Storage(detail) => {
                    let message = "业务入站服务暂时不可用，本次提交未被记录";
                    ToolError::internal("INTAKE_UNAVAILABLE", detail).with_message(message).with_envelope(json!({
                        "success": false,
                        "error": {"code": "INTAKE_UNAVAILABLE", "message": message, "details": {}}
                    }))
                }
            })?;
            context.note("batch_id", accepted.batch_id);
            context.note("duplicate", accepted.duplicate);
            let mut result = json!({
                "success": true,
                "form": submission.form.name(),
                "batch_id": accepted.batch_id,
                "accepted_count": accepted.accepted_count,
                "task_ids": accepted.task_ids,
                "duplicate": accepted.duplicate,
                "contract_errors": accepted.contract_errors,
            });
            if let Some(mapping) = submission.mapping {
                result["mapping_diagnostics"] = mapping;
            }
            Ok(result)
        })
    }
}

/// The kind `intake`: the hotel submit adapter (seed: th-hotel-submit-payload.zh.md).
pub struct Intake;

impl concierge_core::Kind for Intake {
    const NAME: &'static str = "intake";
    type Settings = IntakeConfig;

    async fn build(settings: IntakeConfig) -> Result<concierge_core::ToolSet, String> {
        build(&settings).await
    }
}
