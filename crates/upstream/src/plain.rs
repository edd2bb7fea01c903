//! `kind = "http"`: upstream tools whose result is the API's own answer, as JSON.
//!
//! kgqa wraps its API's answers in the envelope its seed asks for; a business that just wants
//! its API behind MCP wants the answer itself. A 2xx answer is the result: `{"status", "body"}`
//! with the body as JSON (as text when it is not JSON), so the result is always an object, as
//! MCP's `structuredContent` must be. Anything else is a tool error a model can act on — what
//! happened and whether trying again may help — while the API's own text stays in the log: it
//! may hold addresses, stack traces or other callers' data.

use concierge_core::{CallContext, ToolError};
use serde_json::{Map, Value, json};

use crate::{Exchange, Failure, ResponseMapper};

/// Maps an exchange to the API's answer, unwrapped.
pub struct PlainJson;

impl ResponseMapper for PlainJson {
    fn upstream(&self) -> &'static str {
        "http"
    }

    fn hands_on_json(&self) -> bool {
        true
    }

    fn output_schema(&self) -> Map<String, Value> {
        let schema = json!({
            "type": "object",
            "properties": {
                "status": {"type": "integer", "description": "the API's HTTP status (2xx)"},
                "body": {"description": "the API's answer: JSON, or text when it is not JSON"}
            },
            "required": ["status", "body"]
        });
        match schema {
            Value::Object(object) => object,
            _ => Map::new(),
        }
    }

    fn map(&self, exchange: Exchange, _: &CallContext) -> Result<Value, ToolError> {
        let answer = match exchange.outcome {
            Ok(answer) => answer,
            Err(Failure::Timeout) => {
                return Err(ToolError::internal(
                    "upstream_timeout",
                    format!("no answer within {} ms", exchange.latency.as_millis()),
                )
                .with_message("the API did not answer in time; trying again may help"));
            }
            Err(Failure::Connection) => {
                return Err(ToolError::internal("upstream_unavailable", "no connection")
                    .with_message("the API cannot be reached right now; try again later"));
            }
            Err(Failure::TooLarge) => {
                return Err(
                    ToolError::internal("upstream_too_large", "body over the limit").with_message(
                        "the API's answer is too large to pass on; narrow the request",
                    ),
                );
            }
        };
        let body = serde_json::from_slice::<Value>(&answer.body)
            .unwrap_or_else(|_| Value::String(String::from_utf8_lossy(&answer.body).into_owned()));
        let status = answer.status;
        match status {
            200..=299 => Ok(json!({"status": status, "body": body})),
            400..=499 if status != 429 => Err(ToolError::rejected(
                "upstream_refused",
                format!(
                    "the API refused the request (HTTP {status}); check the arguments, \
                     trying the same again will not help"
                ),
            )
            .with_detail(snippet(&body))),
            _ => Err(ToolError::internal(
                "upstream_failed",
                format!("HTTP {status}: {}", snippet(&body)),
            )
            .with_message(format!(
                "the API failed to answer (HTTP {status}); trying again later may help"
            ))),
        }
    }
}

/// The start of an answer, for the log.
fn snippet(body: &Value) -> String {
    let text = match body {
        Value::String(text) => text.clone(),
        other => other.to_string(),
    };
    text.chars().take(300).collect()
}
