//! The 百姓惠 Q&A adapter through MCP: the demo config's five tools against a Q&A API on
//! 127.0.0.1 — the simulator (docs/contracts/kgqa-api.md) for answers, and misbehaving servers for
//! every way an upstream can fail.
//!
//! Over 600 lines: one area's end-to-end scenarios; each test reads alone.

use crate::common;

use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::body::Body;
use axum::http::{Request, Response};
use common::*;
use rmcp::model::CallToolResult;
use serde_json::{Value, json};
use tower::ServiceExt;

const KEY: &str = "kg-key-9f3a-secret";
const TOKEN: &str = "bxh-token-test";

/// What the upstream received: headers we care about and the JSON body.
#[derive(Debug, Clone)]
struct Received {
    api_key: Option<String>,
    body: Value,
}

/// A Q&A API on 127.0.0.1: records each request, then answers as `behaviour` says.
struct Upstream {
    base: String,
    received: Arc<Mutex<Vec<Received>>>,
}

#[derive(Clone)]
enum Behaviour {
    /// The contract's simulator with the demo's canned answers.
    Simulator,
    /// A fixed status, content type and body.
    Fixed(u16, &'static str, String),
    /// Headers at once, then a body that never finishes.
    SlowBody,
}

impl Upstream {
    async fn start(behaviour: Behaviour) -> Self {
        let answers =
            concierge_sim_kgqa::Answers::load(&examples().join("kgqa/answers.json")).unwrap();
        let simulator = concierge_sim_kgqa::router(answers, KEY.to_string());
        let received: Arc<Mutex<Vec<Received>>> = Arc::default();
        let log = received.clone();
        let app = axum::Router::new().fallback(move |request: Request<Body>| {
            let simulator = simulator.clone();
            let log = log.clone();
            let behaviour = behaviour.clone();
            async move {
                let (parts, body) = request.into_parts();
                let bytes = axum::body::to_bytes(body, 1 << 20).await.unwrap();
                log.lock().unwrap().push(Received {
                    api_key: parts
                        .headers
                        .get("x-kg-api-key")
                        .map(|v| v.to_str().unwrap().to_string()),
                    body: serde_json::from_slice(&bytes).unwrap_or(Value::Null),
                });
                match behaviour {
                    Behaviour::Simulator => simulator
                        .oneshot(Request::from_parts(parts, Body::from(bytes)))
                        .await
                        .unwrap(),
                    Behaviour::Fixed(status, content_type, body) => Response::builder()
                        .status(status)
                        .header("content-type", content_type)
                        .header("location", "http://10.9.8.7:8102/internal/login")
                        .body(Body::from(body))
                        .unwrap(),
                    Behaviour::SlowBody => {
                        let stream = futures::stream::unfold(0, |step| async move {
                            if step > 0 {
                                tokio::time::sleep(Duration::from_secs(30)).await;
                            }
                            Some((
                                Ok::<_, std::io::Error>(bytes::Bytes::from_static(
                                    b"{\"success\": true, ",
                                )),
                                step + 1,
                            ))
                        });
                        Response::builder()
                            .status(200)
                            .header("content-type", "application/json")
                            .body(Body::from_stream(stream))
                            .unwrap()
                    }
                }
            }
        });
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let base = format!("http://{}", listener.local_addr().unwrap());
        tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
        Self { base, received }
    }

    fn requests(&self) -> Vec<Received> {
        self.received.lock().unwrap().clone()
    }

    fn questions(&self) -> Vec<String> {
        self.requests()
            .iter()
            .map(|r| r.body["question"].as_str().unwrap_or_default().to_string())
            .collect()
    }
}

/// Accepts connections and resets them at once.
async fn resetting_upstream() -> String {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    tokio::spawn(async move {
        while let Ok((stream, _)) = listener.accept().await {
            let _ = stream.set_zero_linger();
            drop(stream);
        }
    });
    base
}

fn demo(base: &str, timeout: &str) -> Server {
    Server::start_demo(&[
        ("BXH_KG_API_BASE", base),
        ("BXH_KG_API_KEY", KEY),
        ("BXH_MCP_TOKEN", TOKEN),
        ("BXH_MCP_TIMEOUT_SECONDS", timeout),
    ])
}

async fn ask(server: &Server, tool: &str, arguments: Value) -> CallToolResult {
    let client = connect(&server.url("/kgqa/mcp"), TOKEN).await;
    call(&client, tool, arguments).await
}

/// Nothing internal in what the client sees.
fn assert_no_leak(result: &CallToolResult, upstream: &str) {
    let text = serde_json::to_string(result).unwrap();
    let port = upstream.rsplit(':').next().unwrap();
    for secret in [
        KEY,
        upstream,
        port,
        "127.0.0.1",
        "10.9.8.7",
        "Traceback",
        "Exception",
        "<html",
        "at com.",
        "password",
    ] {
        assert!(!text.contains(secret), "`{secret}` leaked: {text}");
    }
}

#[tokio::test]
async fn the_five_tools_are_listed_read_only_in_chinese_and_nothing_generic() {
    let upstream = Upstream::start(Behaviour::Simulator).await;
    let server = demo(&upstream.base, "15");
    let client = connect(&server.url("/kgqa/mcp"), TOKEN).await;
    let tools = client.list_all_tools().await.unwrap();
    let names: Vec<_> = tools.iter().map(|t| t.name.to_string()).collect();
    assert_eq!(
        names,
        [
            "ask_customer_service",
            "query_route_price",
            "list_travel_routes",
            "query_route_detail",
            "compare_routes"
        ]
    );
    for tool in &tools {
        let annotations = tool.annotations.as_ref().unwrap();
        assert_eq!(annotations.read_only_hint, Some(true), "{}", tool.name);
        assert_eq!(annotations.destructive_hint, Some(false));
        assert!(
            tool.description.as_ref().unwrap().contains("百姓惠")
                || tool.name == "query_route_detail"
        );
        assert_eq!(tool.input_schema["additionalProperties"], json!(false));
        assert!(tool.output_schema.is_some());
    }
    assert_eq!(tools[1].input_schema["required"], json!(["route_name"]));
    assert_eq!(
        tools[4].input_schema["required"],
        json!(["route_names", "compare_focus"])
    );
}

#[tokio::test]
async fn acceptance_15_1_route_price() {
    let upstream = Upstream::start(Behaviour::Simulator).await;
    let server = demo(&upstream.base, "15");
    let result = ask(
        &server,
        "query_route_price",
        json!({"route_name": "黄小西", "days": 3}),
    )
    .await;
    assert_eq!(result.is_error, Some(false));
    let envelope = structured(&result);
    assert_eq!(envelope["success"], true);
    assert!(
        envelope["data"]["customer_reply"]
            .as_str()
            .unwrap()
            .contains("成人")
    );
    assert!(
        envelope["data"]["risk_notes"][0]
            .as_str()
            .unwrap()
            .contains("核实")
    );
    assert_eq!(
        envelope["trace_id"], "trc_sim_000001",
        "the upstream's trace id is kept"
    );

    let sent = &upstream.requests()[0];
    assert_eq!(sent.api_key.as_deref(), Some(KEY));
    assert_eq!(
        sent.body["question"],
        "黄小西3日游多少钱？成人价、儿童价和单房差是多少？"
    );
    assert_eq!(sent.body["channel"], "mcp");
    assert_eq!(sent.body["graph_name"], "baixinghui_travel_agency");
    assert!(
        sent.body["request_id"]
            .as_str()
            .unwrap()
            .starts_with("mcp-req-")
    );
    assert!(sent.body.get("session_id").is_none() && sent.body.get("customer_context").is_none());

    let audit = server.audit_lines_of("demo.kgqa.log", 1);
    let line = &audit[0];
    assert_eq!(
        (
            line["client"].clone(),
            line["tool"].clone(),
            line["outcome"].clone()
        ),
        (json!("agent"), json!("query_route_price"), json!("ok"))
    );
    assert_eq!(line["notes"]["request_id"], sent.body["request_id"]);
    assert_eq!(line["notes"]["upstream_trace_id"], "trc_sim_000001");
    assert!(line["notes"]["upstream_latency_ms"].is_number());
}

#[tokio::test]
async fn acceptance_15_2_route_detail_with_hotels() {
    let upstream = Upstream::start(Behaviour::Simulator).await;
    let server = demo(&upstream.base, "15");
    let result = ask(
        &server,
        "query_route_detail",
        json!({"route_name": "轻奢黄小西纯玩3日游", "scenic_name": "小七孔"}),
    )
    .await;
    let data = structured(&result)["data"].clone();
    let reply = data["customer_reply"].as_str().unwrap();
    for expected in ["3天", "610", "西江千户苗寨", "荔波天泰酒店"] {
        assert!(reply.contains(expected), "{expected} in {reply}");
    }
    assert_eq!(
        upstream.questions(),
        ["轻奢黄小西纯玩3日游多少钱，可以玩几天，期间可以去哪些景区，小七孔附近可以入住什么酒店？"]
    );
}

#[tokio::test]
async fn acceptance_15_3_compare_routes() {
    let upstream = Upstream::start(Behaviour::Simulator).await;
    let server = demo(&upstream.base, "15");
    let result = ask(
        &server,
        "compare_routes",
        json!({"route_names": ["黄小西", "小西镇梵"], "compare_focus": "老人小孩、不要太累"}),
    )
    .await;
    let data = structured(&result)["data"].clone();
    assert!(
        data["customer_reply"]
            .as_str()
            .unwrap()
            .contains("更推荐黄小西")
    );
    assert!(data["answer"].as_str().unwrap().contains("理由"));
    assert!(data["risk_notes"][0].as_str().unwrap().contains("核实"));
    assert_eq!(
        upstream.questions(),
        ["黄小西和小西镇梵哪个更适合老人小孩、不要太累，为什么？"]
    );
}

#[tokio::test]
async fn acceptance_15_4_long_tail_is_a_controlled_fallback() {
    let upstream = Upstream::start(Behaviour::Simulator).await;
    let server = demo(&upstream.base, "15");
    let result = ask(
        &server,
        "ask_customer_service",
        json!({"question": "美酒中秋有什么活动或者套餐？"}),
    )
    .await;
    assert_eq!(result.is_error, Some(false));
    let envelope = structured(&result);
    assert_eq!(envelope["success"], true);
    assert_eq!(
        envelope["data"]["response_mode"],
        "llm_graph_qa_controlled_failure"
    );
    assert!(
        envelope["data"]["customer_reply"]
            .as_str()
            .unwrap()
            .contains("补充")
    );
    assert_eq!(
        envelope["data"]["risk_notes"][0],
        "当前回复为受控兜底，不代表图谱已有明确业务证据。"
    );
}

#[tokio::test]
async fn every_question_template_variant() {
    let upstream = Upstream::start(Behaviour::Simulator).await;
    let server = demo(&upstream.base, "15");
    let client = connect(&server.url("/kgqa/mcp"), TOKEN).await;
    let cases = [
        (
            "query_route_price",
            json!({"route_name": "黄小西"}),
            "黄小西多少钱？成人价、儿童价和单房差是多少？",
        ),
        (
            "query_route_price",
            json!({"route_name": "轻奢黄小西纯玩3日游", "days": 3}),
            "轻奢黄小西纯玩3日游多少钱？成人价、儿童价和单房差是多少？",
        ),
        ("list_travel_routes", json!({}), "旅行车线路有哪些？"),
        (
            "list_travel_routes",
            json!({"keyword": "黄小西"}),
            "黄小西相关线路有哪些？",
        ),
        (
            "list_travel_routes",
            json!({"keyword": "  "}),
            "旅行车线路有哪些？",
        ),
        (
            "query_route_detail",
            json!({"route_name": "黄小西"}),
            "黄小西多少钱，可以玩几天，期间可以去哪些景区？",
        ),
        (
            "compare_routes",
            json!({"route_names": ["黄小西", "小西镇梵", "小七孔"], "compare_focus": "景点数量"}),
            "黄小西、小西镇梵和小七孔哪个更适合景点数量，为什么？",
        ),
        (
            "ask_customer_service",
            json!({"question": "黄果树门票多少钱？"}),
            "黄果树门票多少钱？",
        ),
    ];
    for (tool, arguments, _) in &cases {
        let result = call(&client, tool, arguments.clone()).await;
        assert_eq!(result.is_error, Some(false), "{tool} {arguments}");
    }
    let expected: Vec<&str> = cases.iter().map(|(_, _, q)| *q).collect();
    assert_eq!(upstream.questions(), expected);

    // The caller's own ids and context pass through unchanged.
    let context = json!({"adults": 2, "children": 1, "budget": 3000, "date": "2026-10-01"});
    call(&client, "ask_customer_service", json!({"question": "黄小西适合亲子吗？", "session_id": "s-1", "request_id": "r-1", "customer_context": context})).await;
    let last = upstream.requests().pop().unwrap();
    assert_eq!(
        (
            last.body["session_id"].clone(),
            last.body["request_id"].clone()
        ),
        (json!("s-1"), json!("r-1"))
    );
    assert_eq!(last.body["customer_context"], context);
}

#[tokio::test]
async fn missing_or_invalid_arguments_are_refused_in_chinese_and_never_sent() {
    let upstream = Upstream::start(Behaviour::Simulator).await;
    let server = demo(&upstream.base, "15");
    let client = connect(&server.url("/kgqa/mcp"), TOKEN).await;
    let cases = [
        ("query_route_price", json!({}), "route_name", "缺少必填参数"),
        (
            "query_route_price",
            json!({"route_name": "黄小西", "days": "三"}),
            "days",
            "类型错误",
        ),
        (
            "query_route_price",
            json!({"route_name": ""}),
            "route_name",
            "字符数至少为",
        ),
        (
            "compare_routes",
            json!({"route_names": ["黄小西"], "compare_focus": "价格"}),
            "route_names",
            "元素数量至少为",
        ),
        (
            "ask_customer_service",
            json!({"question": "你好", "url": "http://evil"}),
            "url",
            "未知参数",
        ),
    ];
    for (tool, arguments, field, phrase) in cases {
        let result = call(&client, tool, arguments.clone()).await;
        assert_eq!(result.is_error, Some(true));
        let error = text_json(&result)["error"].clone();
        assert_eq!(error["field"], field, "{tool} {arguments}");
        assert!(
            error["message"].as_str().unwrap().contains(phrase),
            "{error}"
        );
    }
    assert!(
        upstream.requests().is_empty(),
        "refused calls never reach the upstream"
    );
}

async fn failing(behaviour: Behaviour) -> (Value, CallToolResult, String) {
    let upstream = Upstream::start(behaviour).await;
    let server = demo(&upstream.base, "0.3");
    let result = ask(
        &server,
        "query_route_price",
        json!({"route_name": "黄小西"}),
    )
    .await;
    assert_no_leak(&result, &upstream.base);
    let audit = server.audit_lines_of("demo.kgqa.log", 1);
    (
        structured(&result),
        result,
        audit[0]["trace_id"].as_str().unwrap().to_string(),
    )
}

fn assert_failure(envelope: &Value, result: &CallToolResult, code: &str, retryable: bool) {
    assert_eq!(result.is_error, Some(true), "{envelope}");
    assert_eq!(envelope["success"], false);
    assert_eq!(envelope["error"]["code"], code, "{envelope}");
    assert_eq!(envelope["error"]["retryable"], retryable, "{envelope}");
    assert!(
        envelope["error"]["message"]
            .as_str()
            .unwrap()
            .contains("智能客服")
    );
    assert!(envelope["trace_id"].as_str().unwrap().starts_with("trc_"));
}

#[tokio::test]
async fn a_500_with_a_stack_trace_is_a_retryable_failure_without_the_trace() {
    let body = "Traceback (most recent call last):\n  File \"/srv/qa/engine.py\", line 12\nException: FalkorDB at 10.9.8.7:6379 password=hunter2".to_string();
    let (envelope, result, trace) = failing(Behaviour::Fixed(500, "text/plain", body)).await;
    assert_failure(&envelope, &result, "CUSTOMER_SERVICE_QUERY_FAILED", true);
    assert_eq!(
        envelope["trace_id"],
        format!("trc_{trace}"),
        "our trace id is the audit line's"
    );
}

#[tokio::test]
async fn html_garbage_and_empty_bodies_are_bad_responses_not_retried() {
    for (content_type, body) in [
        (
            "text/html",
            "<html><body>502 Bad Gateway nginx</body></html>",
        ),
        ("application/json", "{\"success\": tru"),
        ("application/json", "[1, 2, 3]"),
        ("application/json", ""),
    ] {
        let (envelope, result, _) =
            failing(Behaviour::Fixed(200, content_type, body.to_string())).await;
        assert_failure(&envelope, &result, "CUSTOMER_SERVICE_BAD_RESPONSE", false);
    }
}

#[tokio::test]
async fn a_redirect_is_not_followed_and_not_shown() {
    let (envelope, result, _) = failing(Behaviour::Fixed(
        302,
        "text/html",
        "<html>moved</html>".into(),
    ))
    .await;
    assert_failure(&envelope, &result, "CUSTOMER_SERVICE_QUERY_FAILED", false);
}

#[tokio::test]
async fn a_wrong_api_key_is_an_auth_failure_not_retried() {
    let (envelope, result, _) = failing(Behaviour::Fixed(401, "application/json", "{\"success\":false,\"error\":{\"code\":\"UNAUTHORIZED\",\"message\":\"key kg-key-9f3a-secret invalid\"}}".into())).await;
    assert_failure(&envelope, &result, "CUSTOMER_SERVICE_AUTH_FAILED", false);
}

#[tokio::test]
async fn a_slow_body_times_out_at_the_configured_limit() {
    let started = std::time::Instant::now();
    let (envelope, result, _) = failing(Behaviour::SlowBody).await;
    assert_failure(&envelope, &result, "CUSTOMER_SERVICE_TIMEOUT", true);
    assert!(
        started.elapsed() < Duration::from_secs(10),
        "gave up at the 0.3 s limit, not the body's 30 s"
    );
}

#[tokio::test]
async fn reset_and_refused_connections_are_retryable_unavailability() {
    let reset = resetting_upstream().await;
    let server = demo(&reset, "2");
    let result = ask(&server, "list_travel_routes", json!({})).await;
    assert_no_leak(&result, &reset);
    assert_failure(
        &structured(&result),
        &result,
        "CUSTOMER_SERVICE_UNAVAILABLE",
        true,
    );

    // Nothing listens on a port we just freed.
    let closed = {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        format!("http://{}", listener.local_addr().unwrap())
    };
    let server = demo(&closed, "2");
    let result = ask(&server, "list_travel_routes", json!({})).await;
    assert_no_leak(&result, &closed);
    assert_failure(
        &structured(&result),
        &result,
        "CUSTOMER_SERVICE_UNAVAILABLE",
        true,
    );
}

#[tokio::test]
async fn an_empty_answer_is_a_success_and_unknown_fields_stay_behind() {
    let body = json!({"success": true, "trace_id": "trc_up_1", "data": {"customer_reply": "", "risk_notes": ["需核实"], "debug_cypher": "MATCH (n) RETURN n"}}).to_string();
    let upstream = Upstream::start(Behaviour::Fixed(200, "application/json", body)).await;
    let server = demo(&upstream.base, "15");
    let result = ask(&server, "ask_customer_service", json!({"question": "？"})).await;
    assert_eq!(result.is_error, Some(false));
    let envelope = structured(&result);
    assert_eq!(envelope["success"], true);
    assert_eq!(envelope["data"]["customer_reply"], "");
    assert_eq!(envelope["data"]["risk_notes"], json!(["需核实"]));
    assert!(envelope["data"].get("debug_cypher").is_none());
    assert!(envelope["data"]["latency_ms"].is_number());
}

#[tokio::test]
async fn the_single_bxh_token_is_required() {
    let upstream = Upstream::start(Behaviour::Simulator).await;
    let server = demo(&upstream.base, "15");
    let raw = Raw::new();
    assert_eq!(
        raw.post(&server.url("/kgqa/mcp"), Some("wrong"), None, initialize(1))
            .await
            .status,
        401
    );
    assert_eq!(
        raw.post(&server.url("/kgqa/mcp"), Some(TOKEN), None, initialize(1))
            .await
            .status,
        200
    );
}

#[tokio::test]
async fn the_demo_answers_at_once_from_its_own_simulator() {
    // Exactly what `cargo run -- serve` does: the simulator on a free port that the app's
    // default upstream URL (`${simulators.kgqa.url}`) names.
    let server = Server::start_demo(&[]);
    let client = connect(&server.url("/kgqa/mcp"), "demo-token").await;
    let result = call(
        &client,
        "query_route_price",
        json!({"route_name": "黄小西", "days": 3}),
    )
    .await;
    let envelope = structured(&result);
    assert_eq!(envelope["success"], true, "{envelope}");
    assert!(
        envelope["trace_id"]
            .as_str()
            .unwrap()
            .starts_with("trc_sim_")
    );
}

/// The Q&A API behind a fault proxy, one server for every fault: each answers its seed class
/// (`retryable` as the seed's agent retries), within the configured timeout, with nothing of the
/// network in it; each ends with a call that succeeds again; no socket is left behind.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_network_fault_answers_its_class_in_time_and_then_recovers() {
    use common::faults::{Fault, FaultProxy, open_fds};
    let upstream = Upstream::start(Behaviour::Simulator).await;
    let proxy = FaultProxy::start(&upstream.base).await;
    let server = demo(&proxy.base, "1");
    let client = connect(&server.url("/kgqa/mcp"), TOKEN).await;
    let route = || call(&client, "list_travel_routes", json!({}));
    assert_ne!(route().await.is_error, Some(true), "passes at first");

    let cases = [
        (
            Fault::Latency(Duration::from_secs(3)),
            "CUSTOMER_SERVICE_TIMEOUT",
            true,
        ),
        (Fault::ResetMidBody, "CUSTOMER_SERVICE_UNAVAILABLE", true),
        (
            Fault::Trickle(Duration::from_millis(100)),
            "CUSTOMER_SERVICE_TIMEOUT",
            true,
        ),
        (Fault::TruncatedJson, "CUSTOMER_SERVICE_BAD_RESPONSE", false),
        (
            Fault::RetryAfter {
                status: 429,
                seconds: 30,
            },
            "CUSTOMER_SERVICE_QUERY_FAILED",
            true,
        ),
        (
            Fault::RetryAfter {
                status: 503,
                seconds: 30,
            },
            "CUSTOMER_SERVICE_QUERY_FAILED",
            true,
        ),
    ];
    // Three rounds of every fault: a leak grows with each round, the pool's idle sockets do not.
    let mut sockets = Vec::new();
    for _ in 0..3 {
        for (fault, code, retryable) in cases.clone() {
            proxy.set(fault.clone());
            let started = std::time::Instant::now();
            let result = route().await;
            // The 1 s limit plus the round trip; a fault that held the call longer is a hang.
            assert!(
                started.elapsed() < Duration::from_millis(2500),
                "{fault:?} held the call {:?}",
                started.elapsed()
            );
            assert_no_leak(&result, &proxy.base);
            assert_failure(&structured(&result), &result, code, retryable);
            proxy.set(Fault::Pass);
            let again = route().await;
            assert_ne!(again.is_error, Some(true), "recovered after {fault:?}");
        }
        sockets.push(open_fds(server.child.id()));
    }

    // A burst of three 502s: three failures, then answers with no restart and no pause.
    proxy.set(Fault::Status {
        status: 502,
        times: 3,
    });
    for _ in 0..3 {
        let result = route().await;
        assert_failure(
            &structured(&result),
            &result,
            "CUSTOMER_SERVICE_QUERY_FAILED",
            true,
        );
    }
    assert_ne!(route().await.is_error, Some(true), "the burst is over");

    // Every cut, slow and abandoned exchange closed its socket.
    assert!(
        sockets[2] <= sockets[0] + 1,
        "open files after each round: {sockets:?}"
    );
}

/// A host that does not resolve and a TLS handshake that fails are the API being unreachable:
/// retryable, in time, and neither the host nor the TLS library's words reach the client.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn dns_and_tls_failures_are_retryable_unavailability() {
    use common::faults::{FaultProxy, UNRESOLVABLE, tls_mismatch};
    let upstream = Upstream::start(Behaviour::Simulator).await;
    let proxy = FaultProxy::start(&upstream.base).await;
    for base in [UNRESOLVABLE.to_string(), tls_mismatch(&proxy)] {
        let server = demo(&base, "2");
        let started = std::time::Instant::now();
        let result = ask(&server, "list_travel_routes", json!({})).await;
        assert!(started.elapsed() < Duration::from_secs(5), "{base}");
        assert_no_leak(&result, &base);
        let text = serde_json::to_string(&result).unwrap();
        for word in ["upstream.invalid", "dns", "tls", "certificate", "handshake"] {
            assert!(
                !text.to_lowercase().contains(word),
                "`{word}` leaked: {text}"
            );
        }
        assert_failure(
            &structured(&result),
            &result,
            "CUSTOMER_SERVICE_UNAVAILABLE",
            true,
        );
    }
}
