//! What the deployment tests of several instances share: a fake app with one `echo` tool, and
//! one instance of a config built from it behind the real router (both from `concierge-testkit`).
#![allow(dead_code)] // each test file uses a different part

use axum::Router;
use concierge_server::Platform;
use concierge_testkit::config::TOKENS;
use concierge_testkit::fake::object;
use concierge_testkit::{Behaviour, FakeTool, fake_app};
use serde_json::json;

/// One instance of `config` (its token lists read [`TOKENS`] = `tokens`) with the app `fake`
/// offering `fake.echo`, ready for `oneshot`.
pub async fn instance(config: &str, tokens: &str) -> (Router, Platform) {
    let schema = object(json!({"type": "object", "properties": {"text": {"type": "string"}}}));
    let apps = fake_app(vec![FakeTool::with_schema("echo", Behaviour::Echo, schema)]);
    let instance = concierge_testkit::instance(config, apps, &[(TOKENS, tokens)]).await;
    (instance.router, instance.platform)
}
