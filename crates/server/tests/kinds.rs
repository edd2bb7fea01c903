//! Apps are kinds, and a config declares instances: `[apps.<name>]` with `kind = "…"` (the
//! section's name when absent). Two instances of one kind are two apps, each built from its
//! own section, each serving its tools under its own name; an unknown kind is named with the
//! known ones.

use axum::body::Body;
use concierge_server::{Apps, Config, Platform};
use concierge_testkit::config::{TOKENS, server, stateless_endpoint};
use concierge_testkit::{Behaviour, FakeTool, instance, json_rpc_message, mcp_post, send};
use http::StatusCode;
use serde_json::json;

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

/// Three instances of the kind `greeter` (one named like it, without `kind`), served on two
/// endpoints.
fn config() -> String {
    [
        server(""),
        r#"
[apps.morning]
kind = "greeter"
tool = "good_morning"

[apps.evening]
kind = "greeter"
tool = "good_evening"

[apps.greeter]
tool = "hello"
"#
        .into(),
        stateless_endpoint("/a/mcp", &["morning.*", "greeter.*"]),
        stateless_endpoint("/b/mcp", &["evening.good_evening"]),
    ]
    .concat()
}

async fn tool_names(router: &axum::Router, path: &str) -> Vec<String> {
    let request = mcp_post(path)
        .header("authorization", "Bearer token-a")
        .body(Body::from(
            json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list"}).to_string(),
        ))
        .unwrap();
    let (status, _, text) = send(router, request).await;
    assert_eq!(status, StatusCode::OK, "{text}");
    let answer = json_rpc_message(&text).expect("JSON");
    answer["result"]["tools"]
        .as_array()
        .expect("tools")
        .iter()
        .map(|t| t["name"].as_str().unwrap().to_string())
        .collect()
}

#[tokio::test]
async fn two_instances_of_a_kind_are_two_apps_with_their_own_settings() {
    let deployment = instance(&config(), apps(), &[(TOKENS, "alice:token-a")]).await;
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

/// A config that goes wrong in one place: the case, the text it changes and what to, and the
/// problem the build must report.
type Misnamed = (&'static str, &'static str, &'static str, fn(&str) -> bool);

#[tokio::test]
async fn a_misnamed_kind_instance_or_app_is_told_so() {
    let cases: [Misnamed; 4] = [
        (
            "an unknown kind is named with the known ones",
            "[apps.evening]\nkind = \"greeter\"",
            "[apps.evening]\nkind = \"gretter\"",
            |p| p == "apps.evening.kind: no app kind `gretter`; known: greeter",
        ),
        (
            "a section without kind must be named like one",
            "[apps.greeter]",
            "[apps.hello]",
            |p| p.starts_with("apps.hello: no app kind `hello`") && p.contains("greeter"),
        ),
        (
            "an instance name is plain",
            "[apps.morning]",
            "[apps.Morning]",
            |p| p.starts_with("apps.Morning: an app instance's name"),
        ),
        (
            "an endpoint naming no instance and no kind is told so",
            "\"evening.good_evening\"",
            "\"night.*\"",
            |p| p.contains("`night.*`: no app `night`") && p.contains("known kinds: greeter"),
        ),
    ];
    for (case, from, to, expected) in cases {
        let config = config();
        assert!(config.contains(from), "{case}: the config has {from}");
        let problems = problems(&config.replace(from, to)).await;
        assert!(problems.iter().any(|p| expected(p)), "{case}: {problems:?}");
    }
}
