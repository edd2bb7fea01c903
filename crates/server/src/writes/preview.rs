//! What a write would do, for a dry run and a confirmation's preview — the platform's, not the
//! tool's to remember.
//!
//! A tool's `call` always changes things. Only a tool that has a dry run of its own
//! ([`Tool::dry_run`]) is asked for one; for every other write the platform writes the preview
//! from the call it would make ([`Tool::would_send`]) and the tool is never reached. A kind that
//! knows nothing of dry runs is therefore safe by default: the worst it can do is preview less.

use concierge_core::{CallContext, Tool, ToolError};
use serde_json::{Map, Value, json};

/// What a secret argument's value is shown as in a preview.
const HIDDEN: &str = "[secret]";

/// The preview of `tool` called with `arguments` (the platform's own arguments already split
/// off): its own dry run's answer as it is (its digest is what a confirmation carries, for a
/// tool that compares it at execution), or the platform's account of the call.
pub(super) async fn preview(
    tool: &dyn Tool,
    arguments: Value,
    context: CallContext,
) -> Result<Value, ToolError> {
    match tool.dry_run() {
        Some(own) => own.dry_run(arguments, context).await,
        None => Ok(would_call(tool, &arguments)),
    }
}

/// `{"dryRun": true, "wouldCall": {"tool", "arguments", …what the tool says it would send}}`:
/// the tool's name and arguments as the caller gave them (secret ones hidden), so the person
/// confirming sees the change asked for.
fn would_call(tool: &dyn Tool, arguments: &Value) -> Value {
    let spec = tool.spec();
    let mut shown = arguments.clone();
    if let Value::Object(fields) = &mut shown {
        for secret in &spec.secret_fields {
            if let Some(value) = fields.get_mut(secret) {
                *value = json!(HIDDEN);
            }
        }
    }
    let mut call = Map::new();
    call.insert("tool".into(), json!(spec.name));
    call.insert("arguments".into(), shown);
    if let Some(Value::Object(sent)) = tool.would_send(arguments) {
        for (key, value) in sent {
            call.entry(key).or_insert(value);
        }
    }
    json!({"dryRun": true, "wouldCall": call})
}

#[cfg(test)]
mod tests {
    use super::*;
    use concierge_core::{Annotations, Caller, ToolFuture, ToolSpec};
    use std::sync::atomic::{AtomicUsize, Ordering};

    /// A write that knows nothing of dry runs, counting how often it is reached.
    struct Unaware {
        spec: ToolSpec,
        calls: AtomicUsize,
    }

    impl Tool for Unaware {
        fn spec(&self) -> &ToolSpec {
            &self.spec
        }

        fn call(&self, _: Value, _: CallContext) -> ToolFuture<'_> {
            self.calls.fetch_add(1, Ordering::SeqCst);
            Box::pin(async { Ok(json!({"written": true})) })
        }
    }

    #[tokio::test]
    async fn a_tool_without_a_dry_run_is_never_reached_and_its_secrets_stay_out() {
        let mut spec = ToolSpec::new(
            "pay",
            "pays",
            Map::new(),
            Map::new(),
            Annotations::additive_write(),
        );
        spec.secret_fields = vec!["card".into()];
        let tool = Unaware {
            spec,
            calls: AtomicUsize::new(0),
        };
        let context = CallContext::new(Caller::client("c"), "t");
        let answer = preview(&tool, json!({"amount": 3, "card": "4111"}), context)
            .await
            .unwrap();
        assert_eq!(tool.calls.load(Ordering::SeqCst), 0);
        assert_eq!(
            answer,
            json!({"dryRun": true, "wouldCall": {"tool": "pay", "arguments": {"amount": 3, "card": HIDDEN}}})
        );
    }
}
