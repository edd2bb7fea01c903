//! A confirmation asked over MRTR on one instance is good once on any instance: three instances
//! share their write state in PostgreSQL; the state one of them sealed writes on another and is
//! refused on the third, and of two handed back at once exactly one writes. Driven with
//! 2026-07-28 requests (no session; version and capabilities in `_meta`) through the real router.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use axum::Router;
use axum::body::Body;
use concierge_testkit::config::{TOKENS, server, stateless_endpoint};
use concierge_testkit::postgres::fresh_database;
use concierge_testkit::{
    Behaviour, FakeTool, Instance, fake_app, instance, json_rpc_message, modern_request, send,
};
use http::Request;
use serde_json::{Value, json};

/// One endpoint whose write state (request states included) lives in the shared database.
fn config() -> String {
    [
        server(""),
        r#"
[state]
database = "${DATABASE}"

[writes]
database = "unused-with-a-shared-database.sqlite"
"#
        .into(),
        stateless_endpoint("/w/mcp", &["fake.*"]),
    ]
    .concat()
}

async fn instances(url: &str, written: &Arc<AtomicUsize>) -> Vec<Instance> {
    let mut all = Vec::new();
    for _ in 0..3 {
        let apps = fake_app(vec![FakeTool::arc(
            "delete",
            Behaviour::CountedWrite(written.clone()),
        )]);
        let env = [("DATABASE", url), (TOKENS, "alice:token-a,bob:token-b")];
        all.push(instance(&config(), apps, &env).await);
    }
    all
}

/// A 2026-07-28 `tools/call` of `delete` as `token`, declaring form elicitation.
fn call(token: &str, params: Value) -> Request<Body> {
    let mut params = params;
    params["name"] = json!("delete");
    params["_meta"] = json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {"elicitation": {"form": {}}},
    });
    modern_request("/w/mcp", token, 1, "tools/call", Some("delete"), params)
}

/// The JSON-RPC result of one request (answered as JSON, or as one SSE event).
async fn result(router: &Router, request: Request<Body>) -> Value {
    let (status, _, text) = send(router, request).await;
    assert!(status.is_success(), "{status}: {text}");
    json_rpc_message(&text).expect("a JSON-RPC answer")["result"].clone()
}

fn error_code(result: &Value) -> Value {
    assert_eq!(result["isError"], true, "{result}");
    let text = result["content"][0]["text"].as_str().unwrap();
    serde_json::from_str::<Value>(text).unwrap()["error"]["code"].clone()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_request_state_writes_once_across_three_instances() {
    let Some(url) = fresh_database("mrtr").await else {
        return;
    };
    let written = Arc::new(AtomicUsize::new(0));
    let all = instances(&url, &written).await;
    let arguments = json!({"text": "row 7", "idempotency_key": "k-1"});
    let accept = json!({"confirm": {"action": "accept", "content": {"confirm": true}}});

    let asked = result(
        &all[0].router,
        call("token-a", json!({"arguments": arguments})),
    )
    .await;
    assert_eq!(asked["resultType"], "input_required", "{asked}");
    let state = asked["requestState"].as_str().unwrap().to_string();
    assert!(
        asked["inputRequests"]["confirm"]["params"]["message"]
            .as_str()
            .unwrap()
            .contains("row 7")
    );
    assert_eq!(written.load(Ordering::SeqCst), 0, "asking writes nothing");

    // Another principal cannot use it, on any instance.
    let retry = json!({"arguments": arguments, "inputResponses": accept, "requestState": state});
    let theirs = result(&all[1].router, call("token-b", retry.clone())).await;
    assert_eq!(error_code(&theirs), "request_state_invalid");

    let done = result(&all[1].router, call("token-a", retry.clone())).await;
    assert_eq!(done["resultType"], "complete", "{done}");
    assert_eq!(done["structuredContent"]["written"], 1, "{done}");
    let replayed = result(&all[2].router, call("token-a", retry.clone())).await;
    assert_eq!(error_code(&replayed), "request_state_used");
    assert_eq!(written.load(Ordering::SeqCst), 1, "one write");

    // Two retries with one state at once, on two instances: exactly one writes.
    let arguments = json!({"text": "row 8", "idempotency_key": "k-2"});
    let asked = result(
        &all[2].router,
        call("token-a", json!({"arguments": arguments})),
    )
    .await;
    let retry = json!({"arguments": arguments, "inputResponses": accept, "requestState": asked["requestState"]});
    let (first, second) = tokio::join!(
        result(&all[0].router, call("token-a", retry.clone())),
        result(&all[1].router, call("token-a", retry.clone())),
    );
    let wrote = [&first, &second]
        .iter()
        .filter(|r| r["isError"] != true)
        .count();
    assert_eq!(wrote, 1, "{first}\n{second}");
    assert_eq!(written.load(Ordering::SeqCst), 2);
}
