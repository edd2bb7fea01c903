//! Framing is ours, in both protocol eras and on every transport path: a malformed message —
//! an `id` of the wrong type, `params` that is not an object, a body that is not UTF-8, nesting
//! past the bound, a message rmcp cannot read — is answered 400 with a JSON-RPC error document
//! (`-32700`, `-32600` or `-32602`), never with the MCP library's 415 and its deserializer text.

use axum::body::Body;
use concierge_testkit::config::{TOKENS, server, stateful_endpoint, stateless_endpoint};
use concierge_testkit::{Behaviour, FakeTool, fake_app, instance, mcp_post, send};
use http::{Request, StatusCode};
use serde_json::Value;

/// Every transport path: the direct one of an endpoint without sessions, and rmcp's session
/// and legacy SSE paths of one with them.
fn config() -> String {
    [
        server(""),
        stateless_endpoint("/direct/mcp", &["fake.*"]),
        stateful_endpoint("/sessions/mcp", &["fake.*"]),
        r#"legacy_sse = { sse = "/sessions/sse", messages = "/sessions/messages" }"#.into(),
    ]
    .concat()
}

/// Each malformed kind, and the JSON-RPC error code it is answered with.
fn malformed() -> Vec<(&'static str, Vec<u8>, i64)> {
    let with_id = |id: &str| {
        format!(r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{{"name":"echo","arguments":{{"text":"x"}}}}}}"#)
            .into_bytes()
    };
    let mut latin1 = br#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"text":"M"#.to_vec();
    latin1.extend_from_slice(b"\xfcnchen\"}}}");
    let deep = format!(
        r#"{{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{{"name":"echo","arguments":{{"text":{}"x"{}}}}}}}"#,
        "[".repeat(200),
        "]".repeat(200)
    );
    vec![
        ("an object id", with_id(r#"{"a":1}"#), -32600),
        ("a boolean id", with_id("true"), -32600),
        ("a fraction id", with_id("1.5"), -32600),
        (
            "an id past 64 bits",
            with_id("18446744073709551616"),
            -32600,
        ),
        ("a null id", with_id("null"), -32600),
        (
            "params that is an array",
            br#"{"jsonrpc":"2.0","id":1,"method":"tools/list","params":[1]}"#.to_vec(),
            -32602,
        ),
        (
            "params that is a string",
            br#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":"echo"}"#.to_vec(),
            -32602,
        ),
        ("invalid UTF-8", latin1, -32700),
        ("nesting past the bound", deep.into_bytes(), -32600),
        (
            "an error rmcp cannot read",
            br#"{"jsonrpc":"2.0","id":1,"error":{"code":"x"}}"#.to_vec(),
            -32600,
        ),
        ("not JSON", b"{\"jsonrpc\":".to_vec(), -32700),
        // A plain call's own shape, which the direct path reads once: serde would fill its
        // params from an array field by field, and skips the values of `_meta` it ignores.
        (
            "tools/call params that is an array",
            br#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":["echo",{"text":"x"}]}"#
                .to_vec(),
            -32602,
        ),
        (
            "invalid UTF-8 in an ignored client info",
            modern_call(b"\"M\xfcnchen\""),
            -32700,
        ),
        (
            "nesting past the bound in an ignored client info",
            modern_call(format!("{}{}", "[".repeat(100), "]".repeat(100)).as_bytes()),
            -32600,
        ),
    ]
}

/// A plain 2026-07-28 call whose client info carries the JSON value `info`.
fn modern_call(info: &[u8]) -> Vec<u8> {
    let mut body = br#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"text":"x"},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{},"io.modelcontextprotocol/clientInfo":{"name":"c","version":"1","x":"#.to_vec();
    body.extend_from_slice(info);
    body.extend_from_slice(b"}}}}");
    body
}

fn post(path: &str, revision: &str, body: Vec<u8>) -> Request<Body> {
    mcp_post(path)
        .header("mcp-protocol-version", revision)
        .header("mcp-method", "tools/call")
        .header("mcp-name", "echo")
        .header("authorization", "Bearer token-a")
        .body(Body::from(body))
        .unwrap()
}

#[tokio::test]
async fn every_malformed_message_is_a_400_with_a_json_rpc_error_on_every_path_in_both_eras() {
    let deployment = instance(
        &config(),
        fake_app(vec![FakeTool::arc("echo", Behaviour::Echo)]),
        &[(TOKENS, "alice:token-a")],
    )
    .await;
    let paths = [
        "/direct/mcp",
        "/sessions/mcp",
        "/sessions/messages?sessionId=nope",
    ];
    for path in paths {
        for revision in ["2025-11-25", "2026-07-28"] {
            for (kind, body, code) in malformed() {
                let (status, headers, text) =
                    send(&deployment.router, post(path, revision, body)).await;
                let at = format!("{kind} to {path} ({revision}): {text}");
                assert_eq!(status, StatusCode::BAD_REQUEST, "{at}");
                assert_eq!(headers["content-type"], "application/json", "{at}");
                let answer: Value = serde_json::from_str(&text).expect("a JSON document");
                assert_eq!(answer["jsonrpc"], "2.0", "{at}");
                assert_eq!(answer["error"]["code"], code, "{at}");
                for library in ["deserialize", "serde", "rmcp", "Unsupported Media Type"] {
                    assert!(!text.contains(library), "{at}");
                }
            }
        }
    }
}
