//! The fixtures of MCP 2026-07-28's session-less era (SEP-2575): a tool that needs a client
//! capability, tools whose answer streams must hold no server→client request and no log the
//! request did not ask for, and `subscriptions/listen` streams that list changes reach.

use std::sync::{LazyLock, Mutex};

use rmcp::ErrorData;
use rmcp::model::{
    CallToolResponse, CallToolResult, ClientCapabilities, LoggingMessageNotificationParam,
    PromptListChangedNotification, RequestMetaObject, ServerNotification,
    ToolListChangedNotification,
};
use rmcp::service::{RequestContext, SubscriptionSink};
use rmcp::{Peer, RoleServer};
use serde_json::{Value, json};

use crate::{complete, model};

/// The open `subscriptions/listen` streams of this process.
static LISTENERS: LazyLock<Mutex<Vec<SubscriptionSink>>> = LazyLock::new(Mutex::default);

pub fn tools() -> Vec<Value> {
    let plain = |name: &str, description: &str| json!({"name": name, "description": description, "inputSchema": {"type": "object", "properties": {}}});
    vec![
        plain(
            "test_missing_capability",
            "Needs the client's sampling capability (-32021 without it)",
        ),
        plain(
            "test_streaming_elicitation",
            "Answers on its own stream without asking the client anything",
        ),
        plain(
            "test_logging_tool",
            "Logs only when the request asks for a log level",
        ),
        plain(
            "test_trigger_tool_change",
            "Tells the listen streams that asked for it that the tools changed",
        ),
        plain(
            "test_trigger_prompt_change",
            "Tells the listen streams that asked for it that the prompts changed",
        ),
    ]
}

fn done(text: &str) -> Result<CallToolResponse, ErrorData> {
    let result: CallToolResult = complete(json!({"content": [{"type": "text", "text": text}]}))?;
    Ok(result.into())
}

/// One of these tools' answer; `None` for another tool.
pub async fn call(
    name: &str,
    meta: &RequestMetaObject,
    capabilities: Option<&ClientCapabilities>,
    peer: &Peer<RoleServer>,
) -> Option<Result<CallToolResponse, ErrorData>> {
    Some(match name {
        "test_missing_capability" => {
            if capabilities.is_some_and(|c| c.sampling.is_some()) {
                done("Success")
            } else {
                let required: ClientCapabilities = match model(json!({"sampling": {}})) {
                    Ok(required) => required,
                    Err(error) => return Some(Err(error)),
                };
                Err(ErrorData::missing_required_client_capability(required))
            }
        }
        "test_streaming_elicitation" => done("Streaming complete"),
        "test_logging_tool" => {
            if meta.get("io.modelcontextprotocol/logLevel").is_some()
                && let Ok(params) = model::<LoggingMessageNotificationParam>(
                    json!({"level": "info", "data": "Diagnostic trace logging activated"}),
                )
            {
                let _ = peer.notify_logging_message(params).await;
            }
            done("Logging evaluated")
        }
        "test_trigger_tool_change" => {
            notify(ServerNotification::ToolListChangedNotification(
                ToolListChangedNotification::default(),
            ))
            .await;
            done("Mutation triggered")
        }
        "test_trigger_prompt_change" => {
            notify(ServerNotification::PromptListChangedNotification(
                PromptListChangedNotification::default(),
            ))
            .await;
            done("Mutation triggered")
        }
        _ => return None,
    })
}

/// Sends `notification` on every open listen stream; each sink passes on only what its stream
/// asked for, tagged with its subscription id.
async fn notify(notification: ServerNotification) {
    let sinks: Vec<SubscriptionSink> = LISTENERS.lock().unwrap_or_else(|p| p.into_inner()).clone();
    for sink in sinks {
        let _ = sink.send(notification.clone()).await;
    }
}

/// Keeps a listen stream reachable until it ends.
pub async fn listen(sink: SubscriptionSink, until: impl std::future::Future<Output = ()>) {
    let id = sink.id().clone();
    LISTENERS
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .push(sink);
    until.await;
    LISTENERS
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .retain(|s| *s.id() != id);
}

/// The request's `_meta`, for the fixtures that read it.
pub fn meta(context: &RequestContext<RoleServer>) -> &RequestMetaObject {
    &context.meta
}
