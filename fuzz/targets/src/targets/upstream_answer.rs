//! What another MCP server can send concierge about one tool: its listing (name, schemas, hints)
//! and a call's answer, `{"tool": {...}, "config": {...}, "result": {...}}` with `config` an
//! `[apps.x]` section's override of it. The listing is served as a `kind = "mcp"` instance serves
//! it and mounted by the platform (an unusable schema is refused at mounting, never at a call);
//! the answer is handed on through the dispatcher. Beyond no panic: a success that reaches the
//! client carries structured content valid against the output schema it publishes (clients refuse
//! anything else), and a fixed argument is never in the published input schema.

use std::sync::Arc;

use concierge_core::{CallContext, Caller, Tool, ToolFuture, ToolSpec};
use concierge_server::pipeline::{RequestRecord, Transport};
use concierge_server::{CallAnswer, Endpoint, MountedTool, ToolAnswer};
use serde_json::{Map, Value, json};

/// A tool with the served spec that answers the upstream's result as an instance would.
struct Answering {
    spec: ToolSpec,
    result: Value,
}

impl Tool for Answering {
    fn spec(&self) -> &ToolSpec {
        &self.spec
    }

    fn call(&self, _: Value, _: CallContext) -> ToolFuture<'_> {
        let result = concierge_core::mcp_result(self.result.clone());
        Box::pin(async move { Ok(result) })
    }
}

pub fn run(data: &[u8]) {
    let Ok(Value::Object(input)) = serde_json::from_slice::<Value>(data) else {
        return;
    };
    let Some(listing) = input
        .get("tool")
        .and_then(|t| serde_json::from_value::<rmcp::model::Tool>(t.clone()).ok())
    else {
        return;
    };
    let name = listing.name.to_string();
    let mut section = Map::new();
    section.insert("url".into(), json!("http://127.0.0.1:9/mcp"));
    section.insert("tools".into(), json!([name]));
    if let Some(Value::Object(edit)) = input.get("config") {
        section.insert("override".into(), json!({ name.clone(): edit }));
    }
    let Ok(settings) = serde_json::from_value::<concierge_mcp::McpSettings>(Value::Object(section))
    else {
        return;
    };
    if !settings.problems().is_empty() {
        return;
    }
    let fixed: Vec<String> = settings
        .overrides
        .get(&name)
        .map(|o| o.fixed.keys().cloned().collect())
        .unwrap_or_default();
    let served = concierge_mcp::tool_of_listing(settings, &name, &listing);
    let spec = served.spec().clone();
    for argument in &fixed {
        assert!(
            spec.input_schema
                .get("properties")
                .and_then(|p| p.get(argument))
                .is_none(),
            "the fixed argument `{argument}` is published: {:?}",
            spec.input_schema
        );
    }
    let messages = &concierge_core::messages::ENGLISH;
    let answering: Arc<dyn Tool> = Arc::new(Answering {
        spec: spec.clone(),
        result: input.get("result").cloned().unwrap_or(Value::Null),
    });
    let Ok(mounted) = MountedTool::new(answering, messages) else {
        return; // an unusable schema: refused when mounted, never served
    };
    let published = Value::Object(spec.output_schema.clone());
    let endpoint = Endpoint::new("/fuzz".into(), None, vec![mounted]);
    let answer = crate::runtime().block_on(async {
        let record = RequestRecord::arrive("/fuzz", Transport::Stdio, None);
        endpoint
            .call(
                &name,
                Some(Map::new()),
                Caller::client("fuzz"),
                json!(1),
                &record,
            )
            .await
    });
    // Refused before the call (the arguments), or not passed on: nothing of the upstream's.
    let CallAnswer::Result(ToolAnswer {
        passed: Some(result),
        is_error: false,
        ..
    }) = answer
    else {
        return;
    };
    if let Some(structured) = result.get("structuredContent")
        && !spec.output_schema.is_empty()
    {
        let validator = jsonschema::validator_for(&published).expect("a mounted schema compiles");
        assert!(
            validator.is_valid(structured),
            "a handed-on success breaks its published outputSchema: {structured} against {published}"
        );
    }
}
