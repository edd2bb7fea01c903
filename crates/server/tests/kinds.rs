//! Apps are kinds, and a config declares instances: `[apps.<name>]` with `kind = "…"` (the
//! section's name when absent). Two instances of one kind are two apps, each built from its
//! own section, each serving its tools under its own name; an unknown kind is named with the
//! known ones.

use axum::body::Body;
use concierge_server::{Apps, Config, Platform};
use concierge_testkit::{Behaviour, FakeTool, instance, send};
use http::{Request, StatusCode};
use serde_json::{Value, json};

/// A kind whose one tool is named by its instance's `tool` setting.
fn apps() -> Apps {
    Apps::new().tools("greeter", |settings| {
        let name = settings
            .get("tool")
            .and_then(|t| t.as_str())
            .ok_or("`tool` is missing")?;
        Ok(concierge_core::ToolSet::new(
            "greeter",
            &concierge_core::messages::ENGLISH,
            vec![FakeTool::arc(name, Behaviour::Echo)],
        ))
    })
}

const CONFIG: &str = r#"
[server]
listen = "127.0.0.1:0"

[apps.morning]
kind = "greeter"
tool = "good_morning"

[apps.evening]
kind = "greeter"
tool = "good_evening"

[apps.greeter]
tool = "hello"

[[endpoint]]
path = "/a/mcp"
tools = ["morning.*", "greeter.*"]
auth = { kind = "tokens", env = "TOKENS" }
session = "stateless"

[[endpoint]]
path = "/b/mcp"
tools = ["evening.good_evening"]
auth = { kind = "tokens", env = "TOKENS" }
session = "stateless"
"#;

async fn tool_names(router: &axum::Router, path: &str) -> Vec<String> {
    let request = Request::post(path)
        .header("host", "127.0.0.1:8080")
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .header("authorization", "Bearer token-a")
        .body(Body::from(
            json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list"}).to_string(),
        ))
        .unwrap();
    let (status, _, text) = send(router, request).await;
    assert_eq!(status, StatusCode::OK, "{text}");
    let data = text
        .lines()
        .find_map(|line| line.strip_prefix("data: "))
        .unwrap_or(&text);
    let answer: Value = serde_json::from_str(data).expect("JSON");
    answer["result"]["tools"]
        .as_array()
        .expect("tools")
        .iter()
        .map(|t| t["name"].as_str().unwrap().to_string())
        .collect()
}

#[tokio::test]
async fn two_instances_of_a_kind_are_two_apps_with_their_own_settings() {
    let deployment = instance(CONFIG, apps(), &[("TOKENS", "alice:token-a")]).await;
    assert_eq!(
        tool_names(&deployment.router, "/a/mcp").await,
        ["good_morning", "hello"]
    );
    assert_eq!(
        tool_names(&deployment.router, "/b/mcp").await,
        ["good_evening"]
    );
}

async fn problems(config: &str) -> Vec<String> {
    let config = Config::parse(config, &|_| Some("alice:token-a".into())).expect("parses");
    match Platform::build(config, apps(), &|_| Some("alice:token-a".into())).await {
        Ok(_) => Vec::new(),
        Err(errors) => errors.iter().map(ToString::to_string).collect(),
    }
}

#[tokio::test]
async fn an_unknown_kind_is_named_with_the_known_ones() {
    let problems = problems(&CONFIG.replace(
        "[apps.evening]\nkind = \"greeter\"",
        "[apps.evening]\nkind = \"gretter\"",
    ))
    .await;
    assert!(
        problems
            .iter()
            .any(|p| p == "apps.evening.kind: no app kind `gretter`; known: greeter"),
        "{problems:?}"
    );
}

#[tokio::test]
async fn a_section_without_kind_must_be_named_like_one() {
    let problems = problems(&CONFIG.replace("[apps.greeter]", "[apps.hello]")).await;
    assert!(
        problems
            .iter()
            .any(|p| p.starts_with("apps.hello: no app kind `hello`") && p.contains("greeter")),
        "{problems:?}"
    );
}

#[tokio::test]
async fn an_instance_name_is_plain() {
    let problems = problems(&CONFIG.replace("[apps.morning]", "[apps.Morning]")).await;
    assert!(
        problems
            .iter()
            .any(|p| p.starts_with("apps.Morning: an app instance's name")),
        "{problems:?}"
    );
}

#[tokio::test]
async fn an_endpoint_naming_no_instance_and_no_kind_is_told_so() {
    let problems = problems(&CONFIG.replace("\"evening.good_evening\"", "\"night.*\"")).await;
    assert!(
        problems
            .iter()
            .any(|p| p.contains("`night.*`: no app `night`") && p.contains("known kinds: greeter")),
        "{problems:?}"
    );
}
