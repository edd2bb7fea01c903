//! `kind = "mcp"` with an upstream that misbehaves or goes away, played by the tests' own MCP
//! server (`common::upstream_mcp`): over HTTP it answers a redirect or is killed; over stdio
//! (this test binary started again as the server's program) it writes a line over the bound;
//! and it lists a tool with texts no model should be handed whole.

use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::common::cluster::free_port;
use crate::common::oauth::get_json;
use crate::common::upstream_mcp::{Killable, Seen, TestUpstream, router, serve_stdio};
use crate::common::{Server, call, connect, tool_names};

const TOKEN: &str = "demo:secret-token";

/// A config serving the `mcp` instance `files` (its section's lines after `kind`), `/health`
/// read afresh each time.
fn config(dir: &Path, section: &str, more: &str) -> String {
    format!(
        r#"[server]
listen = "127.0.0.1:0"
health_cache = "0s"

[audit.files]
path = "{dir}/log/files.log"

[apps.files]
kind = "mcp"
{section}

[[endpoint]]
path = "/files/mcp"
tools = ["files.*"]
auth = {{ kind = "tokens", env = "APP_MCP_TOKENS" }}
audit = "files"
session = "stateful"
{more}"#,
        dir = dir.display()
    )
}

fn upstream() -> TestUpstream {
    TestUpstream {
        seen: Arc::new(Seen::default()),
        fillers: 0,
    }
}

fn text(result: &rmcp::model::CallToolResult) -> String {
    let content = serde_json::to_value(&result.content).unwrap();
    content[0]["text"].as_str().unwrap_or_default().to_string()
}

/// The answer of a call that failed: its envelope.
fn error_of(result: &rmcp::model::CallToolResult) -> Value {
    assert_eq!(result.is_error, Some(true), "{result:?}");
    serde_json::from_str(&text(result)).unwrap_or_else(|_| json!({"text": text(result)}))
}

/// An upstream's status in `/health`, waiting (at most 10 s) until it is `status`.
async fn health_until(server: &Server, upstream: &str, status: &str) -> Value {
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let health = get_json(&server.url("/health")).await;
        if health["upstreams"][upstream]["status"] == status {
            return health;
        }
        assert!(
            Instant::now() < deadline,
            "{upstream} is not {status}: {health}"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// A server on 127.0.0.1 that counts every request it gets and answers 200; its base URL.
async fn elsewhere(seen: Arc<AtomicUsize>) -> String {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    let router = axum::Router::new().fallback(move || {
        let seen = seen.clone();
        async move {
            seen.fetch_add(1, Ordering::SeqCst);
            axum::Json(json!({"jsonrpc": "2.0", "id": 0, "result": {}}))
        }
    });
    tokio::spawn(async move { axum::serve(listener, router).await });
    base
}

/// The test upstream, answering every POST with a 307 to `to` once `redirecting` is set (what
/// a server that moved does); its URL.
async fn redirecting_upstream(to: String, redirecting: Arc<AtomicBool>) -> String {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/mcp", listener.local_addr().unwrap());
    let router = router(upstream()).layer(axum::middleware::from_fn(
        move |request: axum::extract::Request, next: axum::middleware::Next| {
            let moved = redirecting.load(Ordering::SeqCst) && request.method() == "POST";
            let to = to.clone();
            async move {
                if moved {
                    return axum::response::Response::builder()
                        .status(307)
                        .header("location", to)
                        .body(axum::body::Body::empty())
                        .unwrap();
                }
                next.run(request).await
            }
        },
    ));
    tokio::spawn(async move { axum::serve(listener, router).await });
    url
}

/// An upstream that answers a redirect is not followed, in either era (2025-11-25 calls go
/// over rmcp's session, 2026-07-28 ones as concierge's own POST): the call answers that the
/// server is unavailable, nothing reaches the other address, and the log says what to do; a
/// server that redirects its handshake is down with that reason, its address not shown.
#[tokio::test(flavor = "multi_thread")]
async fn an_upstreams_redirect_is_not_followed() {
    for protocol in ["2025-11-25", "2026-07-28"] {
        let seen_elsewhere = Arc::new(AtomicUsize::new(0));
        let other = elsewhere(seen_elsewhere.clone()).await;
        let redirecting = Arc::new(AtomicBool::new(false));
        let url = redirecting_upstream(format!("{other}/mcp"), redirecting.clone()).await;
        let moved =
            redirecting_upstream(format!("{other}/mcp"), Arc::new(AtomicBool::new(true))).await;
        let server = Server::start(
            |dir| {
                config(
                    dir,
                    &format!("url = \"{url}\"\nprotocol = \"{protocol}\"\ntools = [\"whoami\"]"),
                    &format!(
                        r#"
[apps.moved]
kind = "mcp"
url = "{moved}"
tools = ["whoami"]

[[endpoint]]
path = "/moved/mcp"
tools = ["moved.*"]
auth = {{ kind = "tokens", env = "APP_MCP_TOKENS" }}
"#
                    ),
                )
            },
            &[("APP_MCP_TOKENS", TOKEN)],
        );
        let client = connect(&server.url("/files/mcp"), "secret-token").await;
        let first = call(&client, "whoami", json!({})).await;
        assert_ne!(first.is_error, Some(true), "{protocol}: {first:?}");

        redirecting.store(true, Ordering::SeqCst);
        let answer = call(&client, "whoami", json!({"secret": "the caller's"})).await;
        let error = error_of(&answer);
        assert_eq!(
            error["error"]["code"], "upstream_unavailable",
            "{protocol}: {error}"
        );
        assert_eq!(error["error"]["retryable"], true, "{protocol}: {error}");
        assert_eq!(
            seen_elsewhere.load(Ordering::SeqCst),
            0,
            "{protocol}: a request reached the address the redirect named"
        );
        let said = "the upstream answered a redirect; concierge does not follow redirects for \
                    MCP servers: set the URL it points to";
        let deadline = Instant::now() + Duration::from_secs(10);
        while !server.log_tail().contains(said) {
            assert!(
                Instant::now() < deadline,
                "{protocol}: the log does not say it: {}",
                server.log_tail()
            );
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        // The server whose handshake is redirected is down (the log says why).
        let health = health_until(&server, "moved", "down").await;
        assert!(!health.to_string().contains("127.0.0.1"), "{health}");
        assert_eq!(seen_elsewhere.load(Ordering::SeqCst), 0, "{protocol}");
        client.cancel().await.ok();
    }
}

/// An HTTP upstream that dies is unavailable, not refusing: a call answers at once, retryably;
/// `/health` says it is down right away; when the server is back the connection is made again
/// with backoff and calls go through; and `/health` notices a death without any call.
#[tokio::test(flavor = "multi_thread")]
async fn a_dead_http_upstream_is_unavailable_and_comes_back() {
    for protocol in ["2025-11-25", "2026-07-28"] {
        let port = free_port();
        let alive = Killable::start(upstream(), port);
        let url = format!("http://127.0.0.1:{port}/mcp");
        let server = Server::start(
            |dir| {
                config(
                    dir,
                    &format!("url = \"{url}\"\nprotocol = \"{protocol}\"\ntools = [\"whoami\"]"),
                    "",
                )
            },
            &[("APP_MCP_TOKENS", TOKEN)],
        );
        let client = connect(&server.url("/files/mcp"), "secret-token").await;
        let first = call(&client, "whoami", json!({})).await;
        assert_ne!(first.is_error, Some(true), "{protocol}: {first:?}");
        health_until(&server, "files", "ok").await;

        alive.kill();
        let answer = call(&client, "whoami", json!({})).await;
        let error = error_of(&answer);
        assert_eq!(
            error["error"]["code"], "upstream_unavailable",
            "{protocol}: {error}"
        );
        assert_eq!(error["error"]["retryable"], true, "{protocol}: {error}");
        // Down at once, without waiting for a probe.
        let health = get_json(&server.url("/health")).await;
        assert_eq!(health["status"], "degraded", "{protocol}: {health}");
        assert_eq!(
            health["upstreams"]["files"]["status"], "down",
            "{protocol}: {health}"
        );
        let reason = health["upstreams"]["files"]["reason"].as_str().unwrap();
        assert!(!reason.contains("127.0.0.1"), "no address: {reason}");

        // Back: the connection is made again, and calls go through.
        let again = Killable::start(upstream(), port);
        let deadline = Instant::now() + Duration::from_secs(40);
        loop {
            let answer = call(&client, "whoami", json!({})).await;
            if answer.is_error != Some(true) {
                break;
            }
            assert_eq!(error_of(&answer)["error"]["retryable"], true, "{answer:?}");
            assert!(Instant::now() < deadline, "{protocol}: not connected again");
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        health_until(&server, "files", "ok").await;

        // Dead again, and no call made: `/health` notices by itself.
        again.kill();
        let health = health_until(&server, "files", "down").await;
        assert_eq!(health["status"], "degraded", "{protocol}: {health}");
        client.cancel().await.ok();
    }
}

/// The test binary as an MCP server on stdio (`serve_stdio`): what `stdio_upstream` starts as
/// an instance's `command`. Ignored in a test run; it only serves when started so.
#[test]
#[ignore = "a program the tests start: the tests' MCP server on stdio"]
fn stdio_upstream_program() {
    if std::env::var_os("CONCIERGE_TEST_STDIO_UPSTREAM").is_none() {
        return;
    }
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap()
        .block_on(serve_stdio(upstream()));
}

/// An instance's section that starts the tests' own MCP server over stdio. (libtest writes a
/// line of its own first, which a client ignores as it does any line that is not JSON.)
fn stdio_upstream(tools: &str) -> String {
    let program = std::env::current_exe().unwrap();
    format!(
        r#"command = ["{}", "--ignored", "--exact", "-q", "federation_faults::stdio_upstream_program"]
env = {{ CONCIERGE_TEST_STDIO_UPSTREAM = "1" }}
tools = {tools}
call_timeout = "30s""#,
        program.display()
    )
}

/// A line over the bound from a stdio server ends its connection, as the guide says: the call
/// waiting for it answers at once that the server went away (not at its timeout), and the
/// server is started again.
#[tokio::test(flavor = "multi_thread")]
async fn a_stdio_line_over_the_bound_ends_the_connection() {
    let server = Server::start(
        |dir| config(dir, &stdio_upstream(r#"["huge"]"#), ""),
        &[("APP_MCP_TOKENS", TOKEN)],
    );
    let client = connect(&server.url("/files/mcp"), "secret-token").await;
    let small = call(&client, "huge", json!({"bytes": 10})).await;
    assert_eq!(text(&small), "xxxxxxxxxx", "{small:?}");

    let began = Instant::now();
    let beyond = call(&client, "huge", json!({"bytes": 20_000_000})).await;
    let error = error_of(&beyond);
    assert_eq!(error["error"]["code"], "upstream_unavailable", "{error}");
    assert_eq!(error["error"]["retryable"], true, "{error}");
    assert!(
        began.elapsed() < Duration::from_secs(20),
        "answered after {:?}",
        began.elapsed()
    );
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let small = call(&client, "huge", json!({"bytes": 10})).await;
        if small.is_error != Some(true) {
            assert_eq!(text(&small), "xxxxxxxxxx");
            break;
        }
        assert_eq!(error_of(&small)["error"]["retryable"], true, "{small:?}");
        assert!(
            Instant::now() < deadline,
            "the server was not started again"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    client.cancel().await.ok();
}

/// A tool's 200 KB description and 300-character title are published cut (at a character,
/// with an ellipsis), and `concierge check --live` says so.
#[tokio::test(flavor = "multi_thread")]
async fn an_upstream_tools_long_texts_are_cut() {
    let section = stdio_upstream(r#"["wordy", "whoami"]"#);
    let server = Server::start(
        |dir| config(dir, &section, ""),
        &[("APP_MCP_TOKENS", TOKEN)],
    );
    let client = connect(&server.url("/files/mcp"), "secret-token").await;
    let mut names = tool_names(&client).await;
    names.sort();
    assert_eq!(names, ["whoami", "wordy"]);
    let listed = client.list_all_tools().await.unwrap();
    let wordy = listed.iter().find(|t| t.name == "wordy").unwrap();
    let description = wordy.description.as_deref().unwrap();
    assert!(description.len() <= 4096, "{} bytes", description.len());
    assert!(description.starts_with("Говорит много. "), "{description}");
    assert!(description.ends_with('…'), "{description}");
    let title = wordy
        .annotations
        .as_ref()
        .and_then(|a| a.title.as_deref())
        .expect("a title");
    assert!(title.chars().count() <= 200, "{title}");
    assert!(title.ends_with('…'), "{title}");
    let whoami = listed.iter().find(|t| t.name == "whoami").unwrap();
    assert_eq!(
        whoami.description.as_deref(),
        Some("the test upstream's whoami")
    );
    client.cancel().await.ok();

    let path = server.dir.path().join("concierge.toml");
    let out = tokio::task::spawn_blocking(move || {
        std::process::Command::new(crate::common::BIN)
            .args(["check", "--live", "--config"])
            .arg(&path)
            .env("APP_MCP_TOKENS", TOKEN)
            .output()
            .unwrap()
    })
    .await
    .unwrap();
    let said =
        String::from_utf8_lossy(&out.stdout).to_string() + &String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{said}");
    assert!(
        said.contains("tool `wordy`: the MCP server's description is")
            && said.contains("published cut to 4096"),
        "{said}"
    );
    assert!(
        said.contains("the MCP server's title is 300 characters"),
        "{said}"
    );
}
