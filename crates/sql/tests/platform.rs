//! A SQL tool is a tool like any other to the platform: its write asks for confirmation over
//! MRTR in the 2026-07-28 era (and executes once), and each call is one audit line with what it
//! returned, never the statement or its values. On SQLite: the platform's path is the same for
//! every engine.

mod common;

use common::{Customer, Shop, order_cancel, status_of, writes_at};
use concierge_testkit::{Instance, modern_request, send};
use serde_json::{Value, json};

/// The shop on a SQLite file in `folder`, which also holds the store of writes and the audit log.
async fn deploy(folder: &std::path::Path) -> Instance {
    let script = folder.join("shop.sql");
    std::fs::write(&script, common::fixture("TEXT")).unwrap();
    let platform = format!(
        "{}\n[audit.shop]\npath = \"{}\"\n",
        writes_at(&folder.join("writes.db")),
        folder.join("audit.log").display()
    );
    let settings = format!(
        "url = \"{}\"\ncreate_from = \"{}\"\nread_only = false",
        folder.join("shop.db").display(),
        script.display()
    );
    let tools = format!(
        r#"
[[apps.shop.tool]]
name = "order_list"
description = "Orders of this customer."
sql = "SELECT id, status FROM orders WHERE customer = :customer AND (:status IS NULL OR status = :status) ORDER BY id"
bind = {{ customer = "client" }}
max_rows = 2
input_schema.properties = {{ status = {{ type = "string" }} }}
{cancel}"#,
        cancel = order_cancel()
    );
    Shop {
        platform: &platform,
        settings: &settings,
        tools: &tools,
        endpoint: "audit = \"shop\"",
    }
    .deploy()
    .await
}

/// A 2026-07-28 call of `tool`, from a client that can be asked through a form.
fn modern_call(tool: &str, params: Value) -> http::Request<axum::body::Body> {
    let mut params = params;
    params["name"] = json!(tool);
    params["_meta"] = json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {"elicitation": {"form": {}}},
    });
    modern_request("/mcp", "token-acme", 1, "tools/call", Some(tool), params)
}

async fn result(router: &axum::Router, request: http::Request<axum::body::Body>) -> Value {
    let (status, _, text) = send(router, request).await;
    assert!(status.is_success(), "{status}: {text}");
    let json = text
        .lines()
        .find_map(|line| line.strip_prefix("data: "))
        .unwrap_or(&text);
    serde_json::from_str::<Value>(json).expect("JSON-RPC")["result"].clone()
}

#[tokio::test]
async fn a_write_is_confirmed_through_a_form_in_the_2026_era_and_runs_once() {
    let folder = tempfile::tempdir().unwrap();
    let deployment = deploy(folder.path()).await;
    let router = &deployment.router;
    let arguments = json!({"id": 1, "idempotency_key": "k-1"});
    let asked = result(
        router,
        modern_call("order_cancel", json!({"arguments": arguments})),
    )
    .await;
    assert_eq!(asked["resultType"], "input_required", "{asked}");
    let open = result(
        router,
        modern_call("order_list", json!({"arguments": {"status": "open"}})),
    )
    .await;
    assert_eq!(status_of(&open, 1), "open", "asking changed nothing");

    let accept = json!({"confirm": {"action": "accept", "content": {"confirm": true}}});
    let retry = json!({"arguments": arguments, "inputResponses": accept, "requestState": asked["requestState"]});
    let done = result(router, modern_call("order_cancel", retry.clone())).await;
    assert_eq!(done["resultType"], "complete", "{done}");
    assert_eq!(done["structuredContent"]["affected_rows"], 1, "{done}");
    let replayed = result(router, modern_call("order_cancel", retry)).await;
    assert_eq!(
        replayed["isError"], true,
        "a request state is single use: {replayed}"
    );
}

#[tokio::test]
async fn each_call_is_one_audit_line_with_what_it_returned_and_no_statement() {
    let folder = tempfile::tempdir().unwrap();
    let deployment = deploy(folder.path()).await;
    let router = &deployment.router;
    let acme = Customer::new(router, "acme");
    let listed = acme
        .call("order_list", json!({"status": "open' OR 1=1 --"}))
        .await;
    assert_eq!(listed["isError"], false);
    let listed = acme.call("order_list", json!({})).await;
    assert_eq!(
        listed["structuredContent"]["truncated"], true,
        "acme has four orders, two fit"
    );
    let arguments = json!({"id": 5, "idempotency_key": "d", "dry_run": true});
    let dry = acme.call("order_cancel", arguments).await;
    assert_eq!(dry["isError"], false, "{dry}");
    deployment.platform.flush_audit();
    let audit = std::fs::read_to_string(folder.path().join("audit.log")).unwrap();
    let lines: Vec<Value> = audit
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines.len(), 3, "{audit}");
    let notes = |line: &Value| line["notes"].clone();
    assert_eq!(notes(&lines[0])["returned"], 0, "{audit}");
    assert_eq!(notes(&lines[1])["returned"], 2, "{audit}");
    assert_eq!(notes(&lines[1])["truncated"], true, "{audit}");
    assert_eq!(notes(&lines[2])["affected_rows"], 1, "{audit}");
    for never in ["SELECT", "UPDATE", "orders", "customer ="] {
        assert!(!audit.contains(never), "{never} in {audit}");
    }
}
