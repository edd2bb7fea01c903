//! Operating a deployment: `/metrics` scraped by a real Prometheus after a scripted session,
//! OpenTelemetry spans received over OTLP/HTTP and decoded with the official protobuf
//! definitions, and JSON logs.

use crate::common;

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use axum::body::Body;
use axum::http::Request;
use common::cluster::free_port;
use common::*;
use opentelemetry_proto::tonic::collector::trace::v1::ExportTraceServiceRequest;
use opentelemetry_proto::tonic::trace::v1::Span;
use prost::Message;
use serde_json::{Value, json};
use tower::ServiceExt;

const KG_KEY: &str = "kg-key-operate";

/// A Q&A API on 127.0.0.1 (the contract's simulator) that keeps the `traceparent` of each
/// request it gets.
async fn kgqa_upstream() -> (String, Arc<Mutex<Vec<Option<String>>>>) {
    let answers = concierge_sim_kgqa::Answers::load(&examples().join("kgqa/answers.json")).unwrap();
    let simulator = concierge_sim_kgqa::router(answers, KG_KEY.to_string());
    let seen: Arc<Mutex<Vec<Option<String>>>> = Arc::default();
    let log = seen.clone();
    let app = axum::Router::new().fallback(move |request: Request<Body>| {
        let simulator = simulator.clone();
        let log = log.clone();
        async move {
            let traceparent = request
                .headers()
                .get("traceparent")
                .and_then(|v| v.to_str().ok())
                .map(String::from);
            log.lock().unwrap().push(traceparent);
            simulator.oneshot(request).await.unwrap()
        }
    });
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
    (base, seen)
}

/// An OTLP/HTTP receiver: every span of every export it gets.
pub(crate) async fn otlp_receiver() -> (String, Arc<Mutex<Vec<Span>>>) {
    let spans: Arc<Mutex<Vec<Span>>> = Arc::default();
    let kept = spans.clone();
    let app = axum::Router::new().route(
        "/v1/traces",
        axum::routing::post(move |body: axum::body::Bytes| {
            let kept = kept.clone();
            async move {
                let export = ExportTraceServiceRequest::decode(body).expect("OTLP protobuf");
                let mut kept = kept.lock().unwrap();
                for resource in export.resource_spans {
                    for scope in resource.scope_spans {
                        kept.extend(scope.spans);
                    }
                }
                axum::http::StatusCode::OK
            }
        }),
    );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
    (base, spans)
}

fn attribute(span: &Span, key: &str) -> Option<String> {
    use opentelemetry_proto::tonic::common::v1::any_value::Value as V;
    span.attributes
        .iter()
        .find(|a| a.key == key)
        .and_then(|a| a.value.as_ref()?.value.as_ref())
        .map(|v| match v {
            V::StringValue(s) => s.clone(),
            V::IntValue(i) => i.to_string(),
            V::BoolValue(b) => b.to_string(),
            V::DoubleValue(d) => d.to_string(),
            other => format!("{other:?}"),
        })
}

/// Polls `ready` until it answers (the exporter sends in batches; the audit writes off the
/// request path), for at most 20 s.
async fn eventually<T>(mut ready: impl FnMut() -> Option<T>) -> T {
    let started = Instant::now();
    loop {
        if let Some(value) = ready() {
            return value;
        }
        assert!(started.elapsed() < Duration::from_secs(20), "timed out");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn a_kgqa_call_is_one_trace_down_to_its_upstream_request_named_by_its_audit_line() {
    let (upstream, traceparents) = kgqa_upstream().await;
    let (collector, spans) = otlp_receiver().await;
    let server = Server::start_demo(&[
        ("BXH_KG_API_BASE", &upstream),
        ("BXH_KG_API_KEY", KG_KEY),
        ("OTEL_EXPORTER_OTLP_ENDPOINT", &collector),
        ("OTEL_BSP_SCHEDULE_DELAY", "50"),
        ("OTEL_SERVICE_NAME", "concierge-test"),
    ]);
    let client = connect(&server.url("/kgqa/mcp"), "demo-token").await;
    let result = call(
        &client,
        "ask_customer_service",
        json!({"question": "黄小西适合亲子吗？", "session_id": "s-1"}),
    )
    .await;
    assert_ne!(result.is_error, Some(true), "{result:?}");

    let audit = server.audit_lines_of("demo.kgqa.log", 1);
    let trace_id = audit[0]["trace_id"].as_str().unwrap().to_string();
    let tree = eventually(|| {
        let spans = spans.lock().unwrap();
        let of_trace: Vec<Span> = spans
            .iter()
            .filter(|s| hex(&s.trace_id) == trace_id)
            .cloned()
            .collect();
        (of_trace.len() >= 3).then_some(of_trace)
    })
    .await;
    let named = |name: &str| {
        tree.iter()
            .find(|s| s.name == name)
            .unwrap_or_else(|| panic!("no span `{name}` in {tree:#?}"))
            .clone()
    };
    // SERVER span, named as the MCP conventions say, with their attributes.
    let server_span = named("tools/call ask_customer_service");
    assert_eq!(server_span.kind, 2, "SERVER");
    assert!(
        server_span.parent_span_id.is_empty(),
        "a root: no traceparent was sent"
    );
    assert_eq!(
        attribute(&server_span, "mcp.method.name").as_deref(),
        Some("tools/call")
    );
    assert_eq!(
        attribute(&server_span, "gen_ai.tool.name").as_deref(),
        Some("ask_customer_service")
    );
    assert_eq!(
        attribute(&server_span, "gen_ai.operation.name").as_deref(),
        Some("execute_tool")
    );
    assert_eq!(
        attribute(&server_span, "network.transport").as_deref(),
        Some("tcp")
    );
    // The tool runs in a child of it; the upstream request is a CLIENT span under the tool.
    let tool = named("execute_tool");
    assert_eq!(tool.parent_span_id, server_span.span_id);
    let upstream_span = named("POST");
    assert_eq!(upstream_span.kind, 3, "CLIENT");
    assert_eq!(upstream_span.parent_span_id, tool.span_id);
    assert_eq!(
        attribute(&upstream_span, "http.response.status_code").as_deref(),
        Some("200")
    );
    let url = attribute(&upstream_span, "url.full").unwrap();
    assert!(url.ends_with("/v1/openapi/knowledge-qa/query"), "{url}");
    // The Q&A API was told the trace and the CLIENT span: W3C traceparent.
    let sent = traceparents.lock().unwrap()[0]
        .clone()
        .expect("a traceparent");
    assert_eq!(
        sent,
        format!("00-{trace_id}-{}-01", hex(&upstream_span.span_id))
    );

    // A client's own traceparent (a header) is continued: its trace id is the audit line's.
    let theirs = "0af7651916cd43dd8448eb211c80319c";
    let http = reqwest::Client::new();
    let answer = http
        .post(server.url("/kgqa/mcp"))
        .bearer_auth("demo-token")
        .header("accept", "application/json, text/event-stream")
        .header("traceparent", format!("00-{theirs}-b7ad6b7169203331-01"))
        .json(&initialize(1))
        .send()
        .await
        .unwrap();
    let session = header(&answer, "mcp-session-id");
    let mut request = http
        .post(server.url("/kgqa/mcp"))
        .bearer_auth("demo-token")
        .header("accept", "application/json, text/event-stream")
        .header("mcp-protocol-version", "2025-11-25")
        .header("traceparent", format!("00-{theirs}-b7ad6b7169203331-01"));
    if !session.is_empty() {
        request = request.header("mcp-session-id", &session);
    }
    let answer = request
        .json(&tools_call(2, "no_such_tool", json!({})))
        .send()
        .await
        .unwrap();
    let _ = answer.text().await;
    let audit = server.audit_lines_of("demo.kgqa.log", 2);
    assert_eq!(audit[1]["trace_id"], theirs, "{audit:?}");
    let continued = eventually(|| {
        let spans = spans.lock().unwrap();
        spans
            .iter()
            .find(|s| hex(&s.trace_id) == theirs && s.name.starts_with("tools/call"))
            .cloned()
    })
    .await;
    assert_eq!(hex(&continued.parent_span_id), "b7ad6b7169203331");
}

pub(crate) fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// Prometheus's answer to an instant query: each series' labels and value.
async fn query(prometheus: &str, promql: &str) -> Vec<(Value, f64)> {
    // While Prometheus starts, it answers with text: no series yet.
    let answer: Value = match reqwest::Client::new()
        .get(format!("{prometheus}/api/v1/query"))
        .query(&[("query", promql)])
        .send()
        .await
    {
        Ok(response) => response.json().await.unwrap_or_default(),
        Err(_) => Value::Null,
    };
    answer["data"]["result"]
        .as_array()
        .cloned()
        .unwrap_or_default()
        .into_iter()
        .map(|series| {
            let value = series["value"][1].as_str().unwrap().parse().unwrap();
            (series["metric"].clone(), value)
        })
        .collect()
}

#[tokio::test(flavor = "multi_thread")]
async fn a_real_prometheus_scrapes_calls_refusals_and_upstream_durations() {
    let Ok(binary) = std::env::var("CONCIERGE_TEST_PROMETHEUS") else {
        eprintln!(
            "CONCIERGE_TEST_PROMETHEUS is unset: no Prometheus to scrape with (scripts/test.sh installs Debian's)"
        );
        return;
    };
    let server = Server::start_demo(&[("CONCIERGE_METRICS_LISTEN", "127.0.0.1:0")]);
    let metrics = server
        .banner_url("metrics")
        .expect("the banner names /metrics");
    let target = metrics
        .trim_start_matches("http://")
        .trim_end_matches("/metrics")
        .to_string();

    // The scripted session: two searches, a kgqa question, and one refusal of each kind.
    let coffee = connect(&server.url("/coffee/mcp"), "demo-token").await;
    for query in ["латте", "чай"] {
        let found = call(&coffee, "search_menu", json!({ "query": query })).await;
        assert_ne!(found.is_error, Some(true));
    }
    let invalid = call(&coffee, "search_menu", json!({ "query": 5 })).await;
    assert_eq!(invalid.is_error, Some(true));
    let kgqa = connect(&server.url("/kgqa/mcp"), "demo-token").await;
    call(
        &kgqa,
        "ask_customer_service",
        json!({"question": "黄小西适合亲子吗？", "session_id": "s-1"}),
    )
    .await;
    let raw = Raw::new();
    let coffee_url = server.url("/coffee/mcp");
    let wrong_token = raw
        .post(&coffee_url, Some("wrong"), None, tools_list(1))
        .await;
    assert_eq!(wrong_token.status, 401);
    let foreign_origin = reqwest::Client::new()
        .post(&coffee_url)
        .bearer_auth("demo-token")
        .header("origin", "https://evil.example")
        .header("accept", "application/json, text/event-stream")
        .json(&tools_list(1))
        .send()
        .await
        .unwrap();
    assert_eq!(foreign_origin.status(), 403);
    let stale_session = raw
        .post(
            &coffee_url,
            Some("demo-token"),
            Some("not-a-session"),
            tools_list(1),
        )
        .await;
    assert!(
        [400, 403, 404].contains(&stale_session.status),
        "{}",
        stale_session.status
    );
    // The demo's chatbot limit is 60 calls a minute per client.
    let mut limited = false;
    for _ in 0..70 {
        let answer = call(&coffee, "get_menu", json!({})).await;
        if answer.is_error == Some(true) && text_json(&answer).to_string().contains("rate") {
            limited = true;
            break;
        }
    }
    assert!(limited, "the chatbot limit never refused");

    // Prometheus scrapes the metrics listener every second.
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("prometheus.yml");
    std::fs::write(
        &config,
        format!(
            "global:\n  scrape_interval: 1s\nscrape_configs:\n  - job_name: concierge\n    static_configs:\n      - targets: ['{target}']\n"
        ),
    )
    .unwrap();
    let port = free_port();
    let mut prometheus = std::process::Command::new(binary)
        .arg(format!("--config.file={}", config.display()))
        .arg(format!(
            "--storage.tsdb.path={}",
            dir.path().join("data").display()
        ))
        .arg(format!("--web.listen-address=127.0.0.1:{port}"))
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .expect("start prometheus");
    let api = format!("http://127.0.0.1:{port}");
    let started = Instant::now();
    let calls = loop {
        let calls = tokio::time::timeout(
            Duration::from_secs(2),
            query(&api, r#"concierge_calls_total{tool="search_menu"}"#),
        )
        .await;
        if let Ok(calls) = calls
            && !calls.is_empty()
        {
            break calls;
        }
        assert!(
            started.elapsed() < Duration::from_secs(60),
            "Prometheus never scraped concierge"
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    };
    let total: f64 = calls.iter().map(|(_, v)| v).sum();
    assert_eq!(total, 2.0, "{calls:?}");
    assert_eq!(calls[0].0["client"], "demo");
    assert_eq!(calls[0].0["outcome"], "ok");
    assert_eq!(calls[0].0["job"], "concierge");

    let refusals = query(&api, "sum by (kind) (concierge_refusals_total)").await;
    let kind = |k: &str| {
        refusals
            .iter()
            .find(|(labels, _)| labels["kind"] == k)
            .map(|(_, v)| *v)
            .unwrap_or(0.0)
    };
    assert_eq!(kind("auth"), 1.0, "{refusals:?}");
    assert_eq!(kind("origin"), 1.0, "{refusals:?}");
    assert!(kind("session") >= 1.0, "{refusals:?}");
    assert_eq!(kind("validation"), 1.0, "{refusals:?}");
    assert_eq!(kind("rate_limit"), 1.0, "{refusals:?}");

    // The MCP conventions' histogram, with their attribute names.
    let operations = query(
        &api,
        r#"mcp_server_operation_duration_seconds_count{mcp_method_name="tools/call",gen_ai_tool_name="search_menu",error_type=""}"#,
    )
    .await;
    assert_eq!(operations.len(), 1, "{operations:?}");
    assert_eq!(operations[0].1, 2.0);
    assert_eq!(operations[0].0["gen_ai_operation_name"], "execute_tool");
    assert_eq!(operations[0].0["network_transport"], "tcp");
    assert_eq!(operations[0].0["mcp_protocol_version"], "2025-11-25");

    // The kgqa question's request to the Q&A API.
    let upstream = query(
        &api,
        r#"concierge_upstream_request_duration_seconds_count{upstream="kgqa"}"#,
    )
    .await;
    assert_eq!(upstream.len(), 1, "{upstream:?}");
    assert_eq!(upstream[0].0["status_class"], "2xx");
    assert_eq!(upstream[0].1, 1.0);
    let memory = query(&api, "process_resident_memory_bytes").await;
    assert!(memory[0].1 > 1_000_000.0, "{memory:?}");
    let sessions = query(&api, r#"concierge_sessions_open{endpoint="/coffee/mcp"}"#).await;
    assert!(sessions[0].1 >= 1.0, "{sessions:?}");

    // Every query of the shipped Grafana dashboard runs on this Prometheus.
    let dashboard: Value = serde_json::from_str(
        &std::fs::read_to_string(
            std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
                .join("../../deploy/grafana/concierge.json"),
        )
        .unwrap(),
    )
    .unwrap();
    for panel in dashboard["panels"].as_array().unwrap() {
        for target in panel["targets"].as_array().unwrap() {
            let expr = target["expr"]
                .as_str()
                .unwrap()
                .replace("$__rate_interval", "1m")
                .replace("\"$instance\"", "\".*\"");
            let answer: Value = reqwest::Client::new()
                .get(format!("{api}/api/v1/query"))
                .query(&[("query", expr.as_str())])
                .send()
                .await
                .unwrap()
                .json()
                .await
                .unwrap();
            assert_eq!(answer["status"], "success", "{expr}: {answer}");
        }
    }

    let _ = prometheus.kill();
    let _ = prometheus.wait();
}

#[tokio::test(flavor = "multi_thread")]
async fn metrics_on_the_main_listener_need_their_token_and_logs_can_be_json() {
    // The Q&A API does not answer: the kgqa call logs its failed upstream request.
    let closed = format!("http://127.0.0.1:{}", free_port());
    let server = Server::start_demo(&[
        ("CONCIERGE_METRICS_TOKEN", "metrics-secret"),
        ("CONCIERGE_LOG_FORMAT", "json"),
        ("RUST_LOG", "info"),
        ("BXH_KG_API_BASE", &closed),
    ]);
    let kgqa = connect(&server.url("/kgqa/mcp"), "demo-token").await;
    call(
        &kgqa,
        "ask_customer_service",
        json!({"question": "黄小西适合亲子吗？", "session_id": "s-1"}),
    )
    .await;
    let audit = server.audit_lines_of("demo.kgqa.log", 1);
    let trace_id = audit[0]["trace_id"].as_str().unwrap().to_string();
    // One session opened: the first operation is measured.
    let _client = connect(&server.url("/coffee/mcp"), "demo-token").await;
    let http = reqwest::Client::new();
    let refused = http.get(server.url("/metrics")).send().await.unwrap();
    assert_eq!(refused.status(), 401);
    let wrong = http
        .get(server.url("/metrics"))
        .bearer_auth("metrics-secreT")
        .send()
        .await
        .unwrap();
    assert_eq!(wrong.status(), 401);
    let scraped = http
        .get(server.url("/metrics"))
        .bearer_auth("metrics-secret")
        .send()
        .await
        .unwrap();
    assert_eq!(scraped.status(), 200);
    assert!(
        header(&scraped, "content-type").starts_with("application/openmetrics-text"),
        "{scraped:?}"
    );
    let text = scraped.text().await.unwrap();
    assert!(text.contains("# TYPE mcp_server_operation_duration_seconds histogram"));
    assert!(text.contains("# UNIT mcp_server_operation_duration_seconds seconds"));
    assert!(text.trim_end().ends_with("# EOF"));
    // The ski sync reports itself once its first run read the manifest.
    assert!(
        text.contains("concierge_trips_sync_paused_until_timestamp_seconds"),
        "{text}"
    );

    // Every log line is one JSON object.
    let stderr = server.kill_and_read_log();
    let lines: Vec<&str> = stderr.lines().filter(|l| !l.trim().is_empty()).collect();
    assert!(!lines.is_empty());
    let mut objects = Vec::new();
    for line in lines {
        let object: Value = serde_json::from_str(line).unwrap_or_else(|_| panic!("{line}"));
        assert!(
            object["level"].is_string() && object["timestamp"].is_string(),
            "{line}"
        );
        objects.push(object);
    }
    // The line the failed call wrote names its trace, as its audit line does.
    let upstream = objects
        .iter()
        .find(|o| o["message"] == "upstream request failed")
        .unwrap_or_else(|| panic!("no upstream failure logged: {stderr}"));
    let traces: Vec<&Value> = upstream["spans"]
        .as_array()
        .map(|spans| spans.iter().map(|s| &s["trace_id"]).collect())
        .unwrap_or_default();
    assert!(traces.contains(&&json!(trace_id)), "{upstream}");
}
