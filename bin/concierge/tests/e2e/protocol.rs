//! Protocol edges: stateless JSON mode, methods we do not serve, and stdio.

use crate::common;

use common::*;
use rmcp::ServiceExt;
use serde_json::json;

const TOKENS: &str = "bot:token-bot";

#[tokio::test]
async fn stateless_mode_answers_json_and_needs_no_session() {
    let server = Server::start(
        |dir| coffee_config(dir, "session = \"stateless\""),
        &[("APP_MCP_TOKENS", TOKENS)],
    );
    let raw = Raw::new();
    let url = server.url("/coffee/mcp");

    let init = raw.post(&url, Some("token-bot"), None, initialize(1)).await;
    assert_eq!(init.status, 200);
    assert!(
        init.session().is_none(),
        "stateless mode issues no session id"
    );
    assert!(
        init.headers["content-type"]
            .to_str()
            .unwrap()
            .starts_with("application/json")
    );

    // Any request stands alone: a call with no session, as another instance would receive it.
    let answer = raw
        .post(
            &url,
            Some("token-bot"),
            None,
            tools_call(2, "search_menu", json!({"query": "мята"})),
        )
        .await;
    assert_eq!(answer.status, 200, "{}", answer.body);
    assert!(
        answer.headers["content-type"]
            .to_str()
            .unwrap()
            .starts_with("application/json")
    );
    let result = &answer.message()["result"];
    assert_eq!(
        result["structuredContent"]["results"][0]["drink"],
        "Розовая волна"
    );

    // rmcp's own client also works against it.
    let client = connect(&url, "token-bot").await;
    assert_eq!(client.list_all_tools().await.unwrap().len(), 4);
}

#[tokio::test]
async fn unknown_methods_and_discover_get_json_rpc_answers() {
    let server = Server::start(|dir| coffee_config(dir, ""), &[("APP_MCP_TOKENS", TOKENS)]);
    let raw = Raw::new();
    let url = server.url("/coffee/mcp");
    let session = raw.open_session(&url, "token-bot").await;

    let unknown = raw
        .post(
            &url,
            Some("token-bot"),
            Some(&session),
            json!({"jsonrpc": "2.0", "id": 7, "method": "frobnicate/now", "params": {}}),
        )
        .await;
    assert_eq!(unknown.status, 200, "{}", unknown.body);
    let message = unknown.message();
    assert_eq!(message["id"], 7);
    assert!(message["error"]["code"].is_i64(), "{message}");

    let not_served = raw
        .post(
            &url,
            Some("token-bot"),
            Some(&session),
            json!({"jsonrpc": "2.0", "id": 8, "method": "resources/list"}),
        )
        .await;
    assert!(
        not_served.message()["error"]["code"].is_i64(),
        "{}",
        not_served.body
    );

    // The Python SDK 2.x tries server/discover before initialize and falls back on an error.
    let discover = Raw::new()
        .http
        .post(&url)
        .bearer_auth("token-bot")
        .header("accept", "application/json, text/event-stream")
        .json(&json!({"jsonrpc": "2.0", "id": 1, "method": "server/discover", "params": {}}))
        .send()
        .await
        .expect("an answer, not a dropped connection");
    let status = discover.status().as_u16();
    let body = discover.text().await.unwrap();
    assert!(status < 500, "{status} {body}");
    assert!(body.contains("\"jsonrpc\""), "{body}");
}

#[tokio::test]
async fn stdio_serves_the_demo_endpoint_from_any_working_directory() {
    // As a desktop client does it: the demo config by absolute path, started from elsewhere.
    let state = tempfile::tempdir().unwrap();
    let config = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../concierge.toml");
    let mut command = tokio::process::Command::new(BIN);
    command
        .args(["serve", "--stdio", "--endpoint", "/coffee/mcp", "--config"])
        .arg(&config)
        .current_dir("/")
        .env("CONCIERGE_VAR", state.path())
        .env("RUST_LOG", "error")
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .kill_on_drop(true);
    // The child's pipes as rmcp's transport (not rmcp's child-process transport: that feature
    // exists only in tests, and a feature only tests enable makes `cargo run` after `cargo test`
    // rebuild half the dependency tree).
    let mut child = command.spawn().expect("spawn concierge --stdio");
    let pipes = (child.stdout.take().unwrap(), child.stdin.take().unwrap());
    let client = ().serve(pipes).await.expect("stdio MCP session");
    let tools = client.list_all_tools().await.unwrap();
    assert_eq!(tools.len(), 4);
    let order = rmcp::model::CallToolRequestParams::new("create_order").with_arguments(
        json!({"items": [{"drink": "Американо", "qty": 2}]})
            .as_object()
            .unwrap()
            .clone(),
    );
    let result = client.call_tool(order).await.unwrap();
    assert_eq!(
        result.structured_content.unwrap(),
        json!({"id": 1, "totalMinutes": 6})
    );
    client.cancel().await.unwrap();
    // Its input closed, the server ends, its audit line written first.
    let ended = tokio::time::timeout(std::time::Duration::from_secs(20), child.wait()).await;
    assert!(
        ended
            .expect("the server ends when its input closes")
            .unwrap()
            .success()
    );

    assert!(state.path().join("coffee/orders.xlsx").exists());
    let audit =
        std::fs::read_to_string(state.path().join("log/demo.chatbot.log")).unwrap_or_default();
    assert!(
        audit
            .lines()
            .any(|l| l.contains("\"client\":\"stdio\"") && l.contains("create_order")),
        "{audit}"
    );
}

#[tokio::test]
async fn sigterm_stops_despite_open_streams_and_keeps_the_last_audit_lines() {
    let mut server = Server::start(|dir| coffee_config(dir, ""), &[("APP_MCP_TOKENS", TOKENS)]);
    let raw = Raw::new();
    let url = server.url("/coffee/mcp");
    let session = raw.open_session(&url, "token-bot").await;
    // A standalone GET stream that a client never closes.
    let stream = raw
        .http
        .get(&url)
        .bearer_auth("token-bot")
        .header("accept", "text/event-stream")
        .header("mcp-session-id", &session)
        .header("mcp-protocol-version", "2025-11-25")
        .send()
        .await
        .unwrap();
    assert_eq!(stream.status(), 200);
    let answer = raw
        .post(
            &url,
            Some("token-bot"),
            Some(&session),
            tools_call(2, "get_menu", json!({})),
        )
        .await;
    assert_eq!(answer.status, 200);

    let pid = server.child.id().to_string();
    assert!(
        std::process::Command::new("kill")
            .args(["-TERM", &pid])
            .status()
            .unwrap()
            .success()
    );
    let exit = tokio::task::spawn_blocking(move || {
        let status = server.child.wait();
        (status, server)
    });
    let (status, server) = tokio::time::timeout(std::time::Duration::from_secs(10), exit)
        .await
        .expect("stopped within 10 s")
        .unwrap();
    assert!(status.unwrap().success());
    drop(stream);
    let log = std::fs::read_to_string(server.dir.path().join("log/test.chatbot.log")).unwrap();
    assert!(
        log.lines().any(|l| l.contains("\"tool\":\"get_menu\"")),
        "{log}"
    );
}

#[tokio::test]
async fn older_protocol_versions_negotiate_as_asked() {
    let server = Server::start(|dir| coffee_config(dir, ""), &[("APP_MCP_TOKENS", TOKENS)]);
    let raw = Raw::new();
    for version in ["2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25"] {
        let mut request = initialize(1);
        request["params"]["protocolVersion"] = json!(version);
        let answer = raw
            .post(&server.url("/coffee/mcp"), Some("token-bot"), None, request)
            .await;
        assert_eq!(answer.status, 200, "{version}: {}", answer.body);
        assert_eq!(answer.message()["result"]["protocolVersion"], version);
        assert!(answer.session().is_some(), "{version} keeps sessions");
    }
}
