//! A deployment in this process: a config built with the real platform behind the real router,
//! driven with `oneshot` — every pipeline step, no socket.

use axum::Router;
use axum::body::Body;
use concierge_server::{Apps, Config, Platform, router};
use http::{HeaderMap, Request, StatusCode};
use http_body_util::BodyExt;
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;
use tower::ServiceExt;

/// One instance of a deployment.
pub struct Instance {
    pub router: Router,
    pub platform: Platform,
}

/// `config` built with `apps`; `env` is the whole environment it reads (token lists, secrets).
pub async fn instance(config: &str, apps: Apps, env: &[(&str, &str)]) -> Instance {
    let env = |name: &str| {
        env.iter()
            .find(|(key, _)| *key == name)
            .map(|(_, value)| value.to_string())
    };
    let config = Config::parse(config, &env).expect("the test config parses");
    let platform = Platform::build(config, apps, &env)
        .await
        .unwrap_or_else(|e| panic!("{e:?}"));
    Instance {
        router: router(&platform, &CancellationToken::new()),
        platform,
    }
}

/// One request through `router`: the status, the headers and the body as text.
pub async fn send(router: &Router, request: Request<Body>) -> (StatusCode, HeaderMap, String) {
    let (status, headers, body) = send_bytes(router, request).await;
    (status, headers, String::from_utf8_lossy(&body).into_owned())
}

/// One request through `router`, its body read to its end (empty if it broke off).
pub async fn send_bytes(
    router: &Router,
    request: Request<Body>,
) -> (StatusCode, HeaderMap, Vec<u8>) {
    let response = router
        .clone()
        .oneshot(request)
        .await
        .expect("a router's error is infallible");
    let status = response.status();
    let headers = response.headers().clone();
    let body = response
        .into_body()
        .collect()
        .await
        .map(|b| b.to_bytes().to_vec())
        .unwrap_or_default();
    (status, headers, body)
}

/// A POST to `path` with the headers every MCP client sends with a JSON-RPC message: the host
/// the platform allows, a JSON body, and either kind of answer accepted. The caller adds its
/// protocol version, credentials and body.
pub fn mcp_post(path: &str) -> http::request::Builder {
    Request::post(path)
        .header("host", "127.0.0.1:8080")
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
}

/// The JSON-RPC message an answer's body carries: the JSON document itself, or the first SSE
/// event's data (a priming event without data skipped); `None` when it carries none.
pub fn json_rpc_message(body: &str) -> Option<Value> {
    let data = body
        .lines()
        .find_map(|line| line.strip_prefix("data: ").filter(|data| !data.is_empty()))
        .unwrap_or(body);
    serde_json::from_str(data).ok()
}

/// A `tools/call` of `tool` as the client of `token`, over a stateless endpoint at `/mcp`: the
/// JSON-RPC result, a tool's failure included (the request itself must be answered 200).
pub async fn call_tool(router: &Router, token: &str, tool: &str, arguments: Value) -> Value {
    let body = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
                      "params": {"name": tool, "arguments": arguments}});
    let request = mcp_post("/mcp")
        .header("authorization", format!("Bearer {token}"))
        .body(Body::from(body.to_string()))
        .expect("a request");
    let (status, _, text) = send(router, request).await;
    assert_eq!(status, StatusCode::OK, "{text}");
    serde_json::from_str::<Value>(&text).expect("JSON")["result"].clone()
}

/// A 2026-07-28 request of `method` to `path` as `token`, its headers as a client sends them:
/// the version, `Mcp-Method`, and `name` as `Mcp-Name`. `params` go as they are (their `_meta`
/// included).
pub fn modern_request(
    path: &str,
    token: &str,
    id: u64,
    method: &str,
    name: Option<&str>,
    params: Value,
) -> Request<Body> {
    let body = json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params});
    let mut builder = mcp_post(path)
        .header("mcp-protocol-version", "2026-07-28")
        .header("mcp-method", method)
        .header("authorization", format!("Bearer {token}"));
    if let Some(name) = name {
        builder = builder.header("mcp-name", name);
    }
    builder
        .body(Body::from(body.to_string()))
        .expect("a request")
}
