//! Rate limits shared through Redis (`[state] redis`), against a real `redis-server` this test
//! starts on a free loopback port: exact across instances, refused (or passed) readably while
//! Redis is down, and back by themselves when it returns.
//!
//! Needs `redis-server` (test.sh installs Debian's and sets `CONCIERGE_TEST_REDIS_SERVER`);
//! without one, and without that variable, the tests say so and pass.

mod common;

use concierge_testkit::redis::Redis;

use std::sync::Arc;
use std::time::{Duration, Instant};

use axum::Router;
use axum::body::Body;
use concierge_core::{LimitPolicy, Limited, RateLimitStore};
use concierge_server::Platform;
use concierge_server::config::Rate;
use concierge_server::limits::redis::{RedisLimiter, connect};
use concierge_testkit::config::{server, stateless_endpoint};
use concierge_testkit::{json_rpc_message, mcp_post, send};
use http::{Request, StatusCode};
use serde_json::{Value, json};

fn rate(text: &str) -> Rate {
    Rate::parse(text).unwrap()
}

/// 64 calls at once, spread over three limiters with a connection each (three instances),
/// against one budget of 60: exactly 60 pass, under both policies.
#[tokio::test]
async fn parallel_calls_over_three_instances_spend_one_budget_exactly() {
    let Some(redis) = Redis::start() else { return };
    for (name, policy) in [
        ("window", LimitPolicy::SlidingWindow),
        ("bucket", LimitPolicy::Bucket),
    ] {
        let instances: Vec<Arc<RedisLimiter>> = (0..3)
            .map(|_| {
                let conn = connect(&redis.url()).unwrap();
                Arc::new(RedisLimiter::new(
                    conn,
                    name,
                    rate("60/minute"),
                    "60/minute",
                    policy,
                ))
            })
            .collect();
        let calls = (0..64).map(|i| {
            let limiter = instances[i % 3].clone();
            tokio::spawn(async move { limiter.check("n8n").await })
        });
        let results = futures::future::join_all(calls).await;
        let mut passed = 0;
        for result in results {
            match result.unwrap() {
                Ok(()) => passed += 1,
                Err(Limited::Retry(retry)) => {
                    assert!(
                        retry.0 > Duration::ZERO && retry.0 <= Duration::from_secs(60),
                        "{name}: {retry:?}"
                    );
                }
                Err(other) => panic!("{name}: {other:?}"),
            }
        }
        assert_eq!(passed, 60, "{name}");
        // Another caller's budget is its own.
        assert_eq!(instances[1].check("claude-desktop").await, Ok(()), "{name}");
    }
}

/// One instance of a deployment whose limits live in `redis`.
async fn instance(redis: &str, when_down: &str) -> (Router, Platform) {
    let limits = format!(
        "\n[state]\nredis = \"{redis}\"\nlimits_when_down = \"{when_down}\"\n\n[limits]\ncalls = \"60/minute\"\n"
    );
    let config = [
        server(""),
        limits,
        stateless_endpoint("/fake/mcp", &["fake.*"]),
        "rate_limit = \"calls\"\n".into(),
    ]
    .concat();
    common::instance(&config, "alice:token-a").await
}

/// A `tools/call` of `echo`; its status and the JSON-RPC answer.
async fn echo(app: &Router) -> (StatusCode, Value) {
    let body = json!({"jsonrpc": "2.0", "id": 7, "method": "tools/call",
                      "params": {"name": "echo", "arguments": {"text": "hallo"}}})
    .to_string();
    let request = mcp_post("/fake/mcp")
        .header("mcp-protocol-version", "2025-06-18")
        .header("authorization", "Bearer token-a")
        .body(Body::from(body))
        .unwrap();
    let (status, _, text) = send(app, request).await;
    (status, json_rpc_message(&text).unwrap_or(Value::Null))
}

/// The error code of a refused call (`rate_limited`, `rate_limit_unavailable`), `None` for a
/// call that was answered.
fn refusal(answer: &Value) -> Option<String> {
    let result = &answer["result"];
    if result["isError"] != true {
        return None;
    }
    let text = result["content"][0]["text"].as_str().unwrap_or_default();
    let document: Value = serde_json::from_str(text).unwrap_or_default();
    Some(
        document["error"]["code"]
            .as_str()
            .unwrap_or_default()
            .to_string(),
    )
}

async fn health(app: &Router) -> Value {
    let request = Request::get("/health")
        .header("host", "127.0.0.1:8080")
        .body(Body::empty())
        .unwrap();
    let (_, _, text) = send(app, request).await;
    serde_json::from_str(&text).unwrap()
}

#[tokio::test]
async fn three_instances_behind_one_budget_answer_exactly_sixty_calls() {
    let Some(redis) = Redis::start() else { return };
    let mut instances = Vec::new();
    for _ in 0..3 {
        instances.push(instance(&redis.url(), "refuse").await.0);
    }
    let calls = (0..64).map(|i| {
        let app = instances[i % 3].clone();
        async move { echo(&app).await }
    });
    let answers = futures::future::join_all(calls).await;
    let refused: Vec<Option<String>> = answers.iter().map(|(_, a)| refusal(a)).collect();
    assert_eq!(refused.iter().filter(|r| r.is_none()).count(), 60);
    assert_eq!(
        refused
            .iter()
            .filter(|r| r.as_deref() == Some("rate_limited"))
            .count(),
        4,
        "{refused:?}"
    );
}

#[tokio::test]
async fn while_redis_is_down_limits_refuse_or_pass_as_configured_and_come_back_by_themselves() {
    let Some(mut redis) = Redis::start() else {
        return;
    };
    let (strict, platform) = instance(&redis.url(), "refuse").await;
    let (lenient, _) = instance(&redis.url(), "allow").await;
    assert_eq!(platform.unreachable_stores().await.len(), 0);
    assert_eq!(refusal(&echo(&strict).await.1), None);
    assert_eq!(health(&strict).await["stores"]["redis"]["status"], "ok");

    redis.stop();
    let (status, answer) = echo(&strict).await;
    assert_eq!(status, StatusCode::OK, "a tool error, not an HTTP failure");
    assert_eq!(refusal(&answer).as_deref(), Some("rate_limit_unavailable"));
    let text = answer["result"]["content"][0]["text"].as_str().unwrap();
    let document: Value = serde_json::from_str(text).unwrap();
    assert_eq!(document["error"]["retryAfterSeconds"], 5, "{document}");
    assert!(
        !text.contains("127.0.0.1") && !text.contains("redis://"),
        "no address reaches a client: {text}"
    );
    assert_eq!(
        refusal(&echo(&lenient).await.1),
        None,
        "allow lets it through"
    );
    // Health in a fresh instance (a cached report would hide the change for a second).
    let (fresh, down) = instance(&redis.url(), "refuse").await;
    let report = health(&fresh).await;
    assert_eq!(report["status"], "degraded", "{report}");
    assert_eq!(report["stores"]["redis"]["status"], "down", "{report}");
    let problems = down.unreachable_stores().await;
    assert_eq!(problems.len(), 1);
    assert!(
        problems[0].to_string().starts_with("state.redis"),
        "{}",
        problems[0]
    );

    redis.resume();
    // No restart of the instance: its connection reconnects on its own within seconds.
    let deadline = Instant::now() + Duration::from_secs(15);
    loop {
        if refusal(&echo(&strict).await.1).is_none() {
            break;
        }
        assert!(Instant::now() < deadline, "the limits did not come back");
        tokio::task::yield_now().await;
    }
}
