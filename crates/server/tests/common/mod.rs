//! What the deployment tests of several instances share: a fake app with one `echo` tool, and
//! one instance of a config built from it behind the real router; a Redis of the test's own.
#![allow(dead_code)] // each test file uses a different part

pub mod redis;

use std::sync::Arc;

use axum::Router;
use concierge_core::{
    Annotations, BoxFuture, CallContext, Tool, ToolError, ToolOutput, ToolSet, ToolSpec,
};
use concierge_server::{Apps, Config, Platform, router};
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

/// A tool that says back its `text`.
struct Echo(ToolSpec);

impl Tool for Echo {
    fn spec(&self) -> &ToolSpec {
        &self.0
    }

    fn call(
        &self,
        arguments: Value,
        _: CallContext,
    ) -> BoxFuture<'_, Result<ToolOutput, ToolError>> {
        Box::pin(async move { Ok(json!({"said": arguments["text"]})) })
    }
}

/// The app `fake`, offering `fake.echo`.
fn echo_app() -> Apps {
    Apps::new().tools("fake", |_| {
        let object = |v: Value| v.as_object().cloned().unwrap();
        let spec = ToolSpec::new(
            "echo",
            "a tool of the test",
            object(json!({"type": "object", "properties": {"text": {"type": "string"}}})),
            object(json!({"type": "object"})),
            Annotations::read_only(),
        );
        Ok(ToolSet::new(
            "fake",
            &concierge_core::messages::ENGLISH,
            vec![Arc::new(Echo(spec)) as Arc<dyn Tool>],
        ))
    })
}

/// One instance of `config` (its token lists read `FAKE_TOKENS` = `tokens`), ready for
/// `oneshot`.
pub async fn instance(config: &str, tokens: &str) -> (Router, Platform) {
    let env = |name: &str| (name == "FAKE_TOKENS").then(|| tokens.to_string());
    let config = Config::parse(config, &env).expect("the test config parses");
    let platform = Platform::build(config, echo_app(), &env)
        .await
        .unwrap_or_else(|e| panic!("{e:?}"));
    (router(&platform, &CancellationToken::new()), platform)
}
