//! The 2026-07-28 era on an app endpoint, through the real router: no session, each request
//! carrying its version and capabilities in `_meta`; `resultType` and cache hints on results,
//! headers that must match the body, an unknown version refused with the supported list,
//! `subscriptions/listen` carrying tool changes, `tasks/*` only for a client that declared the
//! extension — and a client that sends `initialize` after a successful discover is served.

use axum::body::Body;
use concierge_testkit::config::{TOKENS, server, stateful_endpoint, stateless_endpoint};
use concierge_testkit::{
    Behaviour, FakeTool, Instance, fake_app, instance, json_rpc_message, mcp_post, modern_request,
    send,
};
use http::{HeaderMap, Request, StatusCode};
use http_body_util::BodyExt;
use serde_json::{Value, json};

/// A fake app's endpoint with and without sessions, and one of followed jobs (whose writes
/// need `[writes]`).
fn config(writes: &str) -> String {
    [
        server(""),
        writes.into(),
        stateless_endpoint("/fake/mcp", &["fake.*"]),
        stateless_endpoint("/jobs/mcp", &["jobs.*"]),
        stateful_endpoint("/sessions/mcp", &["fake.*"]),
    ]
    .concat()
}

/// `[writes]` in a SQLite file of `dir`.
fn writes_in(dir: &tempfile::TempDir) -> String {
    format!(
        "[writes]\ndatabase = {:?}\n",
        dir.path().join("writes.sqlite")
    )
}

async fn deployment() -> (Instance, tempfile::TempDir) {
    let dir = tempfile::tempdir().unwrap();
    let job = json!({"type": "object", "properties": {"what": {"type": "string"}}});
    let status = json!({"type": "object", "properties": {"job_id": {"type": "string"}}, "required": ["job_id"]});
    let apps = fake_app(vec![FakeTool::arc("echo", Behaviour::Echo)]).tools("jobs", move |_| {
        Ok(concierge_core::ToolSet::new(
            "jobs",
            &concierge_core::messages::ENGLISH,
            vec![
                FakeTool::with_schema("start", Behaviour::Job, job.as_object().cloned().unwrap()),
                FakeTool::with_schema(
                    "status",
                    Behaviour::JobStatus,
                    status.as_object().cloned().unwrap(),
                ),
            ],
        ))
    });
    let config = config(&writes_in(&dir));
    (
        instance(&config, apps, &[(TOKENS, "alice:token-a")]).await,
        dir,
    )
}

fn meta(capabilities: Value) -> Value {
    json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": capabilities,
    })
}

/// A 2026-07-28 request of `method` to `path` as alice.
fn modern(path: &str, id: u64, method: &str, name: Option<&str>, params: Value) -> Request<Body> {
    modern_request(path, "token-a", id, method, name, params)
}

/// A 2026-07-28 request of `method` to `path` as alice, sent: the status, headers and body.
async fn ask(
    d: &Instance,
    path: &str,
    id: u64,
    method: &str,
    name: Option<&str>,
    params: Value,
) -> (StatusCode, HeaderMap, String) {
    send(&d.router, modern(path, id, method, name, params)).await
}

/// The params of a request that carries nothing but a client's plain `_meta`.
fn plain() -> Value {
    json!({"_meta": meta(json!({}))})
}

/// The JSON-RPC message of an answer (JSON, or the first SSE event's data).
fn message(text: &str) -> Value {
    json_rpc_message(text).unwrap_or_else(|| panic!("a JSON-RPC message: {text}"))
}

#[tokio::test]
async fn modern_requests_are_served_without_a_session_on_both_endpoint_modes() {
    let (d, _dir) = deployment().await;
    for path in ["/fake/mcp", "/sessions/mcp"] {
        let (status, headers, text) = ask(&d, path, 1, "tools/list", None, plain()).await;
        assert_eq!(status, StatusCode::OK, "{text}");
        assert!(
            headers.get("mcp-session-id").is_none(),
            "no session: {headers:?}"
        );
        let listed = message(&text)["result"].clone();
        assert_eq!(listed["resultType"], "complete", "{listed}");
        assert!(
            listed["ttlMs"].is_u64() && listed["cacheScope"].is_string(),
            "{listed}"
        );

        let params =
            json!({"name": "echo", "arguments": {"text": "hallo"}, "_meta": meta(json!({}))});
        let (_, _, text) = ask(&d, path, 2, "tools/call", Some("echo"), params).await;
        let called = message(&text)["result"].clone();
        assert_eq!(called["resultType"], "complete", "{called}");
        assert_eq!(called["structuredContent"]["said"], "hallo", "{called}");
    }
}

#[tokio::test]
async fn a_plain_2026_call_is_answered_alike_by_the_direct_path_and_by_rmcp() {
    let (d, _dir) = deployment().await;
    let answer = |meta: Value| {
        let params = json!({"name": "echo", "arguments": {"text": "hallo"}, "_meta": meta});
        modern("/fake/mcp", 12, "tools/call", Some("echo"), params)
    };
    // Plain: the direct path. With a progress token: rmcp's service.
    let (status, headers, direct) = send(&d.router, answer(meta(json!({})))).await;
    assert_eq!(status, StatusCode::OK);
    let mut through_rmcp = meta(json!({}));
    through_rmcp["progressToken"] = json!("p-1");
    let (_, _, rmcp) = send(&d.router, answer(through_rmcp)).await;
    assert_eq!(message(&direct), message(&rmcp), "{direct}\n{rmcp}");
    assert_eq!(headers["content-type"], "application/json");

    // A confirmable write for a client that declared elicitation: asked, on either path.
    let written = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let confirm = |meta: Value| {
        let params = json!({"name": "delete", "arguments": {"text": "row", "idempotency_key": "k"}, "_meta": meta});
        modern("/confirm/mcp", 13, "tools/call", Some("delete"), params)
    };
    let dir = tempfile::tempdir().unwrap();
    let apps = fake_app(vec![FakeTool::arc(
        "delete",
        Behaviour::CountedWrite(written.clone()),
    )]);
    let config = [
        server(""),
        writes_in(&dir),
        stateless_endpoint("/confirm/mcp", &["fake.*"]),
    ]
    .concat();
    let w = instance(&config, apps, &[(TOKENS, "alice:token-a")]).await;
    let eliciting = json!({"elicitation": {"form": {}}});
    let (_, _, direct) = send(&w.router, confirm(meta(eliciting.clone()))).await;
    let mut through_rmcp = meta(eliciting);
    through_rmcp["progressToken"] = json!("p-2");
    let (_, _, rmcp) = send(&w.router, confirm(through_rmcp)).await;
    for answer in [&direct, &rmcp] {
        let result = message(answer)["result"].clone();
        assert_eq!(result["resultType"], "input_required", "{answer}");
        assert!(result["requestState"].is_string(), "{answer}");
        assert_eq!(
            result["inputRequests"]["confirm"]["method"],
            "elicitation/create"
        );
    }
    assert_eq!(written.load(std::sync::atomic::Ordering::SeqCst), 0);
}

#[tokio::test]
async fn headers_must_match_the_body_and_an_unknown_version_names_the_supported_ones() {
    let (d, _dir) = deployment().await;
    let params = json!({"name": "echo", "arguments": {"text": "x"}, "_meta": meta(json!({}))});
    let (status, _, text) = ask(&d, "/fake/mcp", 3, "tools/call", Some("other"), params).await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{text}");
    assert_eq!(message(&text)["error"]["code"], -32020, "{text}");

    let mut unknown = modern(
        "/fake/mcp",
        4,
        "tools/list",
        None,
        json!({"_meta": {
            "io.modelcontextprotocol/protocolVersion": "2099-01-01",
            "io.modelcontextprotocol/clientCapabilities": {},
        }}),
    );
    unknown
        .headers_mut()
        .insert("mcp-protocol-version", "2099-01-01".parse().unwrap());
    let (status, _, text) = send(&d.router, unknown).await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{text}");
    let error = message(&text)["error"].clone();
    assert_eq!(error["code"], -32022, "{error}");
    assert!(
        error["data"]["supported"]
            .as_array()
            .is_some_and(|v| v.contains(&json!("2026-07-28")) && v.contains(&json!("2025-11-25"))),
        "{error}"
    );
}

#[tokio::test]
async fn tasks_are_for_a_client_that_declared_the_extension() {
    let (d, _dir) = deployment().await;
    // An endpoint without followed jobs has no tasks at all.
    let params = json!({"taskId": "gate-test", "_meta": meta(json!({}))});
    let (status, _, text) = ask(&d, "/fake/mcp", 5, "tasks/get", Some("gate-test"), params).await;
    assert_eq!(status, StatusCode::NOT_FOUND, "{text}");
    assert_eq!(message(&text)["error"]["code"], -32601, "{text}");

    // One with them: a client that did not declare the extension is refused before any lookup.
    for method in ["tasks/get", "tasks/update", "tasks/cancel"] {
        let params = json!({"taskId": "gate-test", "inputResponses": {}, "_meta": meta(json!({}))});
        let (status, _, text) = ask(&d, "/jobs/mcp", 6, method, Some("gate-test"), params).await;
        assert_eq!(status, StatusCode::BAD_REQUEST, "{method}: {text}");
        let error = message(&text)["error"].clone();
        assert_eq!(error["code"], -32021, "{method}: {error}");
        assert!(
            error["data"]["requiredCapabilities"]["extensions"]["io.modelcontextprotocol/tasks"]
                .is_object(),
            "{error}"
        );
    }

    // A declaring client gets its write as a task, follows it, and cannot cancel it.
    let declared = meta(json!({"extensions": {"io.modelcontextprotocol/tasks": {}}}));
    let params = json!({"name": "start", "arguments": {"what": "x", "idempotency_key": "k1"}, "_meta": declared});
    let (_, _, text) = ask(&d, "/jobs/mcp", 7, "tools/call", Some("start"), params).await;
    let created = message(&text)["result"].clone();
    assert_eq!(created["resultType"], "task", "{created}");
    let task = created["taskId"].as_str().unwrap().to_string();
    let params = json!({"taskId": task, "_meta": declared});
    let (_, _, text) = ask(&d, "/jobs/mcp", 8, "tasks/get", Some(&task), params.clone()).await;
    let state = message(&text);
    assert_eq!(state["result"]["status"], "completed", "{state}");
    let (_, _, text) = ask(
        &d,
        "/jobs/mcp",
        9,
        "tasks/cancel",
        Some(&task),
        params.clone(),
    )
    .await;
    assert_eq!(message(&text)["error"]["code"], -32600, "{text}");
    let mut update = params.clone();
    update["inputResponses"] = json!({});
    let (_, _, text) = ask(&d, "/jobs/mcp", 10, "tasks/update", Some(&task), update).await;
    assert_eq!(message(&text)["result"]["resultType"], "complete", "{text}");
    let params = json!({"taskId": "gate-test", "_meta": declared});
    let (_, _, text) = ask(&d, "/jobs/mcp", 11, "tasks/get", Some("gate-test"), params).await;
    assert_eq!(
        message(&text)["error"]["code"],
        -32602,
        "an unknown task: {text}"
    );
}

#[tokio::test]
async fn a_listen_stream_is_acknowledged_and_hears_the_tools_change() {
    let (d, _dir) = deployment().await;
    let params = json!({"notifications": {"toolsListChanged": true, "promptsListChanged": true}, "_meta": meta(json!({}))});
    let response = d
        .router
        .clone()
        .oneshot_listen(modern(
            "/fake/mcp",
            77,
            "subscriptions/listen",
            None,
            params,
        ))
        .await;
    let mut body = response.into_body();
    let ack = next_message(&mut body).await;
    assert_on_subscription_77(&ack, "notifications/subscriptions/acknowledged");
    assert_eq!(
        ack["params"]["notifications"],
        json!({"toolsListChanged": true}),
        "{ack}"
    );

    let endpoint = &d.platform.endpoints[0].guard.endpoint;
    let same = endpoint
        .tools()
        .iter()
        .map(|t| concierge_server::MountedTool::new(t.tool.clone(), t.messages))
        .collect::<Result<Vec<_>, _>>()
        .expect("the tools mount again");
    endpoint.replace_tools(same);
    let changed = next_message(&mut body).await;
    assert_on_subscription_77(&changed, "notifications/tools/list_changed");
}

/// `notification` is a `method` of the listen request with the id 77: the id is how a client
/// tells its subscriptions apart.
fn assert_on_subscription_77(notification: &Value, method: &str) {
    assert_eq!(notification["method"], method, "{notification}");
    let subscription = &notification["params"]["_meta"]["io.modelcontextprotocol/subscriptionId"];
    assert_eq!(subscription, 77, "{notification}");
}

#[tokio::test]
async fn initialize_after_a_successful_discover_opens_a_session() {
    let (d, _dir) = deployment().await;
    let (status, _, text) = ask(&d, "/sessions/mcp", 8, "server/discover", None, plain()).await;
    assert_eq!(status, StatusCode::OK, "{text}");
    assert!(
        message(&text)["result"]["supportedVersions"].is_array(),
        "{text}"
    );
    let body = json!({"jsonrpc": "2.0", "id": 9, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {},
        "clientInfo": {"name": "mixed-up", "version": "1"}}});
    let request = mcp_post("/sessions/mcp")
        .header("authorization", "Bearer token-a")
        .body(Body::from(body.to_string()))
        .unwrap();
    let (status, headers, text) = send(&d.router, request).await;
    assert_eq!(status, StatusCode::OK, "{text}");
    assert!(
        headers.get("mcp-session-id").is_some(),
        "a session: {headers:?}"
    );
    assert_eq!(
        message(&text)["result"]["protocolVersion"],
        "2025-11-25",
        "{text}"
    );
}

/// One streaming answer, not read to its end.
trait Listen {
    async fn oneshot_listen(self, request: Request<Body>) -> http::Response<Body>;
}

impl Listen for axum::Router {
    async fn oneshot_listen(self, request: Request<Body>) -> http::Response<Body> {
        use tower::ServiceExt;
        let response = self.oneshot(request).await.unwrap();
        assert_eq!(response.status(), StatusCode::OK);
        response
    }
}

/// The next JSON-RPC message on an SSE stream (comments and empty events skipped).
async fn next_message(body: &mut Body) -> Value {
    let read = async {
        let mut pending = String::new();
        loop {
            let frame = body.frame().await.expect("the stream goes on").unwrap();
            if let Ok(data) = frame.into_data() {
                pending.push_str(&String::from_utf8_lossy(&data));
            }
            while let Some(end) = pending.find("\n\n") {
                let event: String = pending.drain(..end + 2).collect();
                if let Some(data) = event
                    .lines()
                    .find_map(|l| l.strip_prefix("data: ").or_else(|| l.strip_prefix("data:")))
                    .filter(|d| !d.trim().is_empty())
                {
                    return serde_json::from_str::<Value>(data.trim()).unwrap();
                }
            }
        }
    };
    tokio::time::timeout(std::time::Duration::from_secs(10), read)
        .await
        .expect("a message within 10 s")
}
