//! The platform alone: a fake app behind the real router, driven in-process with
//! `tower::ServiceExt::oneshot` — no socket, no binary. Each policy's refusal is checked for its
//! answer and for its one audit record, on Streamable HTTP and on legacy SSE.
//!
//! Over 600 lines: one fake deployment and every refusal kind of both transports; each test reads alone.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use axum::Router;
use axum::body::Body;
use concierge_server::Platform;
use concierge_testkit::config::{TOKENS, server, stateful_endpoint, stateless_endpoint};
use concierge_testkit::fake::WriteSignals;
use concierge_testkit::{Behaviour, FakeTool, fake_app, instance, mcp_post};
use http::{Request, StatusCode};
use http_body_util::BodyExt;
use serde_json::{Value, json};
use tower::ServiceExt;

/// [`Behaviour::SlowWrite`]'s signals, shared by the deployment's `write` tool and the test.
static WRITE: std::sync::LazyLock<Arc<WriteSignals>> = std::sync::LazyLock::new(Arc::default);

struct Deployment {
    app: Router,
    platform: Platform,
    audit: PathBuf,
    _dir: tempfile::TempDir,
}

/// The callers of every endpoint.
const CALLERS: &str = "alice:token-a,bob:token-b";

/// Every endpoint records its calls in one audit file: one without sessions, one of them rate
/// limited, and one with sessions and legacy SSE.
fn config(call_timeout: &str, audit: &Path) -> String {
    [
        server(&format!(
            "call_timeout = \"{call_timeout}\"\nmax_body_bytes = 2048"
        )),
        format!(
            "\n[limits]\ncalls = \"4/minute\"\n\n[audit.main]\npath = \"{}\"\n",
            audit.display()
        ),
        stateless_endpoint("/fake/mcp", &["fake.*"]),
        "audit = \"main\"\n".into(),
        stateless_endpoint("/limited/mcp", &["fake.echo"]),
        "rate_limit = \"calls\"\naudit = \"main\"\n".into(),
        stateful_endpoint("/sessions/mcp", &["fake.echo"]),
        r#"audit = "main"
legacy_sse = { sse = "/sessions/sse", messages = "/sessions/messages" }
"#
        .into(),
    ]
    .concat()
}

async fn deploy(call_timeout: &str) -> Deployment {
    let dir = tempfile::tempdir().unwrap();
    let audit = dir.path().join("audit.jsonl");
    let apps = fake_app(vec![
        FakeTool::arc("echo", Behaviour::Echo),
        FakeTool::arc("hang", Behaviour::Hang),
        FakeTool::arc("panic", Behaviour::Panic),
        FakeTool::arc("write", Behaviour::SlowWrite(WRITE.clone())),
    ]);
    let deployed = instance(&config(call_timeout, &audit), apps, &[(TOKENS, CALLERS)]).await;
    Deployment {
        app: deployed.router,
        platform: deployed.platform,
        audit,
        _dir: dir,
    }
}

impl Deployment {
    async fn send(&self, request: Request<Body>) -> (StatusCode, http::HeaderMap, String) {
        concierge_testkit::send(&self.app, request).await
    }

    /// The records once there are any: a call's record is written when its last holder lets
    /// go, which may be just after the answer (or the tool's return) the test saw.
    async fn first_records(&self) -> Vec<Value> {
        for _ in 0..100 {
            let records = self.records();
            if !records.is_empty() {
                return records;
            }
            tokio::task::yield_now().await;
        }
        self.records()
    }

    /// Every audit record so far.
    fn records(&self) -> Vec<Value> {
        self.platform.flush_audit();
        read_records(&self.audit)
    }
}

fn read_records(path: &Path) -> Vec<Value> {
    std::fs::read_to_string(path)
        .unwrap_or_default()
        .lines()
        .map(|line| serde_json::from_str(line).unwrap())
        .collect()
}

/// A POST of `body` to the MCP endpoint at `path`, with `token` as its bearer if any.
fn post(path: &str, token: Option<&str>, body: impl Into<Body>) -> Request<Body> {
    let mut builder = mcp_post(path).header("mcp-protocol-version", "2025-06-18");
    if let Some(token) = token {
        builder = builder.header("authorization", format!("Bearer {token}"));
    }
    builder.body(body.into()).unwrap()
}

fn call_body(tool: &str, arguments: Value) -> String {
    json!({"jsonrpc": "2.0", "id": 7, "method": "tools/call",
           "params": {"name": tool, "arguments": arguments}})
    .to_string()
}

fn call(path: &str, token: Option<&str>, tool: &str, arguments: Value) -> Request<Body> {
    post(path, token, call_body(tool, arguments))
}

/// alice's call of `tool` on `/fake/mcp` with a text it accepts.
fn alice_calls(tool: &str) -> Request<Body> {
    call("/fake/mcp", Some("token-a"), tool, json!({"text": "x"}))
}

/// The one record the requests so far added by `what`, checked for its outcome and code.
fn only_new(
    what: &str,
    records: &[Value],
    before: usize,
    outcome: &str,
    code: Option<&str>,
) -> Value {
    assert_eq!(
        records.len(),
        before + 1,
        "{what}: exactly one new record: {records:#?}"
    );
    let record = records[before].clone();
    assert_eq!(record["outcome"], outcome, "{what}: {record}");
    assert_eq!(record["code"].as_str(), code, "{what}: {record}");
    record
}

#[tokio::test]
async fn every_refusal_of_streamable_http_is_answered_and_recorded_once() {
    let d = deploy("5m").await;
    let ok = |a| call("/fake/mcp", Some("token-a"), "echo", a);

    // A call that passes every step.
    let (status, _, body) = d.send(ok(json!({"text": "hallo"}))).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert!(body.contains(r#"\"said\":\"hallo\""#), "{body}");
    let record = only_new("an ok call", &d.records(), 0, "ok", None);
    assert_eq!(record["client"], "alice");
    assert_eq!(record["tool"], "echo");
    assert_eq!(record["rpc_id"], 7);

    // Each refusal: the request, the status it is answered with, the record's outcome and code.
    let mut wrong_host = ok(json!({"text": "x"}));
    wrong_host
        .headers_mut()
        .insert("host", "evil.example".parse().unwrap());
    let mut wrong_origin = ok(json!({"text": "x"}));
    wrong_origin
        .headers_mut()
        .insert("origin", "https://evil.example".parse().unwrap());
    let big = call_body("echo", json!({"text": "x".repeat(4096)}));
    let cases: Vec<(&str, Request<Body>, StatusCode, &str, &str)> = vec![
        (
            "host",
            wrong_host,
            StatusCode::FORBIDDEN,
            "forbidden",
            "host_not_allowed",
        ),
        (
            "origin",
            wrong_origin,
            StatusCode::FORBIDDEN,
            "forbidden",
            "origin_not_allowed",
        ),
        (
            "no token",
            call("/fake/mcp", None, "echo", json!({"text": "x"})),
            StatusCode::UNAUTHORIZED,
            "unauthorized",
            "unauthorized",
        ),
        (
            "a wrong token",
            call("/fake/mcp", Some("token-x"), "echo", json!({"text": "x"})),
            StatusCode::UNAUTHORIZED,
            "unauthorized",
            "unauthorized",
        ),
        (
            "a body over max_body_bytes",
            post("/fake/mcp", Some("token-a"), big.clone()),
            StatusCode::PAYLOAD_TOO_LARGE,
            "invalid_argument",
            "body_too_large",
        ),
        (
            "not JSON",
            post("/fake/mcp", Some("token-a"), "{nope"),
            StatusCode::BAD_REQUEST,
            "invalid_argument",
            "parse_error",
        ),
        (
            "a batch",
            post("/fake/mcp", Some("token-a"), "[]"),
            StatusCode::BAD_REQUEST,
            "invalid_argument",
            "invalid_request",
        ),
    ];
    for (what, request, status, outcome, code) in cases {
        let before = d.records().len();
        let (answered, _, body) = d.send(request).await;
        assert_eq!(answered, status, "{what}: {body}");
        let record = only_new(what, &d.records(), before, outcome, Some(code));
        assert_eq!(record["endpoint"], "/fake/mcp", "{what}");
    }

    // The dispatcher's refusals are tool results (200) with the error document.
    let before = d.records().len();
    let (_, _, body) = d.send(ok(json!({"text": 5}))).await;
    assert!(
        body.contains("invalid_argument") && body.contains("text"),
        "{body}"
    );
    let record = only_new(
        "invalid arguments",
        &d.records(),
        before,
        "invalid_argument",
        Some("invalid_argument"),
    );
    assert_eq!(record["output"]["error"]["field"], "text");

    let before = d.records().len();
    let (_, _, body) = d
        .send(call("/fake/mcp", Some("token-a"), "nope", json!({})))
        .await;
    assert!(body.contains("unknown tool"), "{body}");
    only_new(
        "an unknown tool",
        &d.records(),
        before,
        "unknown_tool",
        None,
    );

    // Four calls a minute on /limited/mcp: the fifth is refused and says when to retry.
    let limited = || {
        call(
            "/limited/mcp",
            Some("token-b"),
            "echo",
            json!({"text": "x"}),
        )
    };
    let before = d.records().len();
    for _ in 0..4 {
        d.send(limited()).await;
    }
    let (_, _, body) = d.send(limited()).await;
    assert!(
        body.contains("rate_limited") && body.contains("4/minute"),
        "{body}"
    );
    let records = d.records();
    assert_eq!(records.len(), before + 5);
    assert_eq!(records[before + 4]["code"], "rate_limited");
    assert_eq!(records[before + 4]["client"], "bob");
}

/// A stateless endpoint answers a plain `tools/call` itself (`direct_call.rs`) and leaves every
/// other request to rmcp. A weighted `Accept` sends the very same call to rmcp: each pair of
/// answers must be the same JSON, with the same status, type and audit record.
#[tokio::test]
async fn a_plain_call_is_answered_as_rmcp_answers_it() {
    let d = deploy("5m").await;
    let cases = [
        (
            "a result",
            call_body("echo", json!({"text": "grüß dich"})),
            Some("2025-06-18"),
        ),
        (
            "no version header",
            call_body("echo", json!({"text": "x"})),
            None,
        ),
        (
            "an older revision",
            call_body("echo", json!({"text": "x"})),
            Some("2024-11-05"),
        ),
        (
            "invalid arguments",
            call_body("echo", json!({"text": 1})),
            Some("2025-06-18"),
        ),
        (
            "an unknown tool",
            call_body("nope", json!({})),
            Some("2025-06-18"),
        ),
        (
            "a panic",
            call_body("panic", json!({"text": "x"})),
            Some("2025-06-18"),
        ),
        (
            "no arguments, a string id",
            json!({"jsonrpc": "2.0", "id": "a-1", "method": "tools/call",
                   "params": {"name": "echo"}})
            .to_string(),
            Some("2025-06-18"),
        ),
    ];
    for (case, body, version) in cases {
        let mut answers = Vec::new();
        for accept in [
            "application/json, text/event-stream",
            "application/json;q=1, text/event-stream",
        ] {
            let mut request = Request::post("/fake/mcp")
                .header("host", "127.0.0.1:8080")
                .header("content-type", "application/json")
                .header("accept", accept)
                .header("authorization", "Bearer token-a");
            if let Some(version) = version {
                request = request.header("mcp-protocol-version", version);
            }
            let before = d.records().len();
            let (status, headers, text) = d
                .send(request.body(Body::from(body.clone())).unwrap())
                .await;
            let records = d.records();
            assert_eq!(records.len(), before + 1, "{case}: one record");
            let record = &records[before];
            answers.push((
                status,
                headers.get("content-type").cloned(),
                serde_json::from_str::<Value>(&without_trace_ids(&text))
                    .unwrap_or_else(|e| panic!("{case}: {e}: {text}")),
                (
                    record["outcome"].clone(),
                    record["code"].clone(),
                    record["tool"].clone(),
                ),
            ));
        }
        assert_eq!(answers[0], answers[1], "{case}: direct, then rmcp");
        assert!(
            answers[0].2.get("resultType").is_none() && answers[0].2["jsonrpc"] == "2.0",
            "{case}: {:?}",
            answers[0].2
        );
    }
}

/// A client that hangs up does not stop a write halfway: on the direct path as under rmcp, the
/// write runs in a task of its own, to its end and its audit record.
#[tokio::test]
async fn a_write_runs_to_its_end_when_the_client_hangs_up() {
    let d = deploy("5m").await;
    let app = d.app.clone();
    let sending = tokio::spawn(async move {
        app.oneshot(call(
            "/fake/mcp",
            Some("token-a"),
            "write",
            json!({"text": "x"}),
        ))
        .await
    });
    WRITE.started.notified().await;
    sending.abort();
    assert!(
        sending.await.unwrap_err().is_cancelled(),
        "the client hung up"
    );
    WRITE.released.notify_one();
    // Bounded, so a write that was stopped fails the test instead of hanging it.
    tokio::time::timeout(
        std::time::Duration::from_secs(30),
        WRITE.finished.notified(),
    )
    .await
    .expect("the write ran to its end");
    let records = d.first_records().await;
    let record = only_new("a write", &records, 0, "ok", None);
    assert_eq!(record["tool"], "write");
}

/// `text` with every trace id (each request has its own) written as zeros.
fn without_trace_ids(text: &str) -> String {
    let mut out = String::new();
    let mut rest = text;
    while let Some(at) = rest.find("traceId") {
        let (head, tail) = rest.split_at(at);
        out.push_str(head);
        let id_start = tail
            .char_indices()
            .skip("traceId".len())
            .find(|(_, c)| c.is_ascii_hexdigit())
            .map_or(tail.len(), |(i, _)| i);
        let id_end = tail[id_start..]
            .find(|c: char| !c.is_ascii_hexdigit())
            .map_or(tail.len(), |n| id_start + n);
        out.push_str(&tail[..id_start]);
        out.push_str(&"0".repeat(id_end - id_start));
        rest = &tail[id_end..];
    }
    out.push_str(rest);
    out
}

#[tokio::test]
async fn a_request_that_is_no_call_and_no_refusal_leaves_no_record() {
    let d = deploy("5m").await;
    let list = r#"{"jsonrpc":"2.0","id":1,"method":"tools/list"}"#;
    let (status, _, body) = d.send(post("/fake/mcp", Some("token-a"), list)).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert!(body.contains("\"echo\""), "{body}");
    // A stateless endpoint's 405 for the standalone stream is how a client learns it has no
    // sessions, not a refusal.
    let stream = Request::get("/fake/mcp")
        .header("host", "127.0.0.1:8080")
        .header("accept", "text/event-stream")
        .header("authorization", "Bearer token-a")
        .body(Body::empty())
        .unwrap();
    let (status, _, _) = d.send(stream).await;
    assert_eq!(status, StatusCode::METHOD_NOT_ALLOWED);
    assert!(d.records().is_empty(), "{:?}", d.records());
}

#[tokio::test]
async fn exactly_one_record_per_request_under_concurrency() {
    let d = deploy("5m").await;
    let requests: Vec<_> = (0..60)
        .map(|i| match i % 4 {
            0 => call(
                "/fake/mcp",
                Some("token-a"),
                "echo",
                json!({"text": format!("{i}")}),
            ),
            1 => call("/fake/mcp", None, "echo", json!({"text": "x"})),
            2 => call("/fake/mcp", Some("token-b"), "echo", json!({"text": 1})),
            _ => post("/fake/mcp", Some("token-a"), "{"),
        })
        .collect();
    futures::future::join_all(requests.into_iter().map(|r| d.send(r))).await;
    let records = d.records();
    assert_eq!(records.len(), 60);
    let mut traces: Vec<&str> = records
        .iter()
        .map(|r| r["trace_id"].as_str().unwrap())
        .collect();
    traces.sort();
    traces.dedup();
    assert_eq!(traces.len(), 60, "every record is its own request");
    let count = |code: &str| records.iter().filter(|r| r["code"] == code).count();
    assert_eq!(records.iter().filter(|r| r["outcome"] == "ok").count(), 15);
    assert_eq!(count("unauthorized"), 15);
    assert_eq!(count("invalid_argument"), 15);
    assert_eq!(count("parse_error"), 15);
}

#[tokio::test]
async fn a_tool_past_the_call_deadline_is_stopped_and_recorded() {
    // The real clock: the shortest deadline the config takes is a second.
    let d = deploy("1s").await;
    let (status, _, body) = d.send(alice_calls("hang")).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert!(
        body.contains("deadline_exceeded") && body.contains("1 s"),
        "{body}"
    );
    only_new(
        "a hanging tool",
        &d.records(),
        0,
        "deadline_exceeded",
        Some("deadline_exceeded"),
    );
}

#[tokio::test]
async fn a_tool_that_panics_is_still_recorded() {
    let d = deploy("5m").await;
    let (status, _, body) = d.send(alice_calls("panic")).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert!(
        body.contains("internal_error") && body.contains("traceId"),
        "{body}"
    );
    assert!(
        !body.contains("the tool broke"),
        "the panic's text stays in the log: {body}"
    );
    let record = only_new("a panic", &d.records(), 0, "internal_error", Some("panic"));
    assert_eq!(record["tool"], "panic");
}

/// An `initialize` on the stateful endpoint, as `token`: the session id.
async fn initialize(d: &Deployment, token: &str) -> String {
    let body = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {},
        "clientInfo": {"name": "test", "version": "1"}}})
    .to_string();
    let request = post("/sessions/mcp", Some(token), body);
    let response = d.app.clone().oneshot(request).await.unwrap();
    assert_eq!(response.status(), StatusCode::OK);
    response.headers()["mcp-session-id"]
        .to_str()
        .unwrap()
        .to_string()
}

/// A call of `echo` on the stateful endpoint as `token`, in the session `session`.
fn call_in_session(token: &str, session: &str) -> Request<Body> {
    let mut request = call("/sessions/mcp", Some(token), "echo", json!({"text": "x"}));
    request
        .headers_mut()
        .insert("mcp-session-id", session.parse().unwrap());
    request
}

#[tokio::test]
async fn a_session_is_its_openers_and_an_unknown_one_is_recorded() {
    let d = deploy("5m").await;
    let session = initialize(&d, "token-a").await;
    assert!(d.records().is_empty(), "an initialize is no call");

    let (status, _, body) = d.send(call_in_session("token-b", &session)).await;
    assert_eq!(status, StatusCode::FORBIDDEN, "{body}");
    let record = only_new(
        "a stolen session",
        &d.records(),
        0,
        "session_refused",
        Some("session_not_owned"),
    );
    assert_eq!(record["client"], "bob");

    let (status, _, _) = d.send(call_in_session("token-a", "no-such-session")).await;
    assert_eq!(status, StatusCode::NOT_FOUND);
    only_new(
        "an unknown session",
        &d.records(),
        1,
        "session_refused",
        Some("session_not_found"),
    );
}

/// A legacy SSE stream of `token`: the messages URL, and the stream's body to read answers from.
async fn open_stream(d: &Deployment, token: &str) -> (String, Body) {
    let request = Request::get("/sessions/sse")
        .header("host", "127.0.0.1:8080")
        .header("authorization", format!("Bearer {token}"))
        .body(Body::empty())
        .unwrap();
    let response = d.app.clone().oneshot(request).await.unwrap();
    assert_eq!(response.status(), StatusCode::OK);
    let mut body = response.into_body();
    let first = next_event(&mut body).await;
    let url = first
        .lines()
        .find_map(|l| l.strip_prefix("data: "))
        .unwrap()
        .to_string();
    (url, body)
}

/// The next SSE event's text (keep-alive comments skipped).
async fn next_event(body: &mut Body) -> String {
    loop {
        let frame = body.frame().await.unwrap().unwrap();
        if let Ok(data) = frame.into_data() {
            let text = String::from_utf8_lossy(&data).into_owned();
            if text.contains("data:") {
                return text;
            }
        }
    }
}

async fn deliver(d: &Deployment, url: &str, token: Option<&str>, message: Value) -> StatusCode {
    d.send(post(url, token, message.to_string())).await.0
}

#[tokio::test]
async fn legacy_sse_passes_the_same_steps_and_records_the_same_way() {
    let d = deploy("5m").await;
    let (url, mut stream) = open_stream(&d, "token-a").await;
    let initialize = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2024-11-05", "capabilities": {},
        "clientInfo": {"name": "test", "version": "1"}}});
    assert_eq!(
        deliver(&d, &url, Some("token-a"), initialize).await,
        StatusCode::ACCEPTED
    );
    assert!(next_event(&mut stream).await.contains("protocolVersion"));
    let initialized = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
    assert_eq!(
        deliver(&d, &url, Some("token-a"), initialized).await,
        StatusCode::ACCEPTED
    );

    let echo =
        serde_json::from_str::<Value>(&call_body("echo", json!({"text": "legacy"}))).unwrap();
    assert_eq!(
        deliver(&d, &url, Some("token-a"), echo.clone()).await,
        StatusCode::ACCEPTED
    );
    assert!(next_event(&mut stream).await.contains("legacy"));
    let records = d.first_records().await;
    let record = only_new("a legacy ok call", &records, 0, "ok", None);
    assert_eq!(record["tool"], "echo");
    assert_eq!(record["client"], "alice");

    // The same steps refuse on this transport: who delivers where, the answer, and the record
    // each adds after the ok call's. The session id spelt another way (percent-encoded) is still
    // the same session, and still not bob's.
    let (path, id) = url.split_once("sessionId=").unwrap();
    let encoded = format!("{path}sessionId=%{:02X}{}", id.as_bytes()[0], &id[1..]);
    let refusals = [
        (
            "no token",
            url.as_str(),
            None,
            StatusCode::UNAUTHORIZED,
            "unauthorized",
            "unauthorized",
        ),
        (
            "bob",
            &url,
            Some("token-b"),
            StatusCode::FORBIDDEN,
            "session_refused",
            "session_not_owned",
        ),
        (
            "bob, percent-encoded",
            &encoded,
            Some("token-b"),
            StatusCode::FORBIDDEN,
            "session_refused",
            "session_not_owned",
        ),
        (
            "an unknown session",
            "/sessions/messages?sessionId=nope",
            Some("token-a"),
            StatusCode::NOT_FOUND,
            "session_refused",
            "session_not_found",
        ),
    ];
    for (before, (case, to, token, status, outcome, code)) in (1..).zip(refusals) {
        assert_eq!(deliver(&d, to, token, echo.clone()).await, status, "{case}");
        only_new(case, &d.records(), before, outcome, Some(code));
    }
    let (status, _, _) = d.send(post(&url, Some("token-a"), "{")).await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    only_new(
        "a legacy message that is not JSON",
        &d.records(),
        5,
        "invalid_argument",
        Some("parse_error"),
    );
    drop(stream);
}
