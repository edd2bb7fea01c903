//! `kind = "mcp"` with real third-party servers from npm (pinned in `scripts/upstreams/`,
//! installed by the test command): the official filesystem server over stdio, the official
//! everything server over stdio and over Streamable HTTP — driven by rmcp's client through the
//! real binary. Skipped, and said so, where the servers are not installed.
//!
//! Over 600 lines: one area's end-to-end scenarios (each transport and each real server, and
//! what an upstream may and may not do); each test reads alone.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use rmcp::model::{CallToolRequestParams, ClientRequest, ProgressNotificationParam, ServerResult};
use rmcp::service::{NotificationContext, PeerRequestOptions, RunningService};
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use rmcp::{ClientHandler, RoleClient, ServiceExt};
use serde_json::{Value, json};

use crate::common::cluster::{Process, free_port, wait_for};
use crate::common::upstream_mcp::{Seen, TestUpstream, serve as serve_upstream};
use crate::common::{Server, call, connect, tool_names};

/// The folder the pinned servers' programs are in, or `None` (the test skips).
pub(crate) fn upstreams() -> Option<PathBuf> {
    let folder = std::env::var_os("CONCIERGE_TEST_UPSTREAMS")
        .map(PathBuf::from)
        .unwrap_or_else(|| {
            Path::new(env!("CARGO_MANIFEST_DIR")).join("../../scripts/upstreams/node_modules/.bin")
        });
    if folder.join("mcp-server-filesystem").exists() {
        Some(folder)
    } else {
        eprintln!("no MCP servers from npm here (scripts/upstreams.sh): the federation tests skip");
        None
    }
}

pub(crate) fn program(folder: &Path, name: &str) -> String {
    folder.join(name).to_string_lossy().into_owned()
}

/// A config serving one `mcp` instance `files`, its section's own lines after `command`/`url`.
fn config(dir: &Path, upstream: &str) -> String {
    format!(
        r#"[server]
listen = "127.0.0.1:0"

[writes]
database = "{dir}/writes.sqlite"

[audit.files]
path = "{dir}/log/files.log"

[apps.files]
kind = "mcp"
{upstream}

[[endpoint]]
path = "/files/mcp"
tools = ["files.*"]
auth = {{ kind = "tokens", env = "APP_MCP_TOKENS" }}
audit = "files"
session = "stateful"
"#,
        dir = dir.display()
    )
}

fn filesystem(folder: &Path, shared: &Path) -> String {
    format!(
        r#"command = ["{program}", "{shared}"]
tools = ["read_text_file", "list_directory", "search_files", "write_file"]
rename = {{ read_text_file = "read_file" }}

[apps.files.override.write_file]
description = "Write a text file in the shared folder (asks for confirmation)."
write = true
confirm = true

[apps.files.override.search_files]
fixed = {{ excludePatterns = ["*.key"] }}
"#,
        program = program(folder, "mcp-server-filesystem"),
        shared = shared.display()
    )
}

const TOKEN: &str = "demo:secret-token";

fn shared_folder(dir: &Path) -> PathBuf {
    let shared = dir.join("shared");
    std::fs::create_dir_all(&shared).unwrap();
    std::fs::write(shared.join("hello.txt"), "hello from the shared folder\n").unwrap();
    std::fs::write(shared.join("private.key"), "never shown\n").unwrap();
    shared
}

fn text(result: &rmcp::model::CallToolResult) -> String {
    let content = serde_json::to_value(&result.content).unwrap();
    content[0]["text"].as_str().unwrap_or_default().to_string()
}

#[tokio::test]
async fn the_filesystem_server_over_stdio_behind_the_allowlist_and_write_safety() {
    let Some(folder) = upstreams() else { return };
    let dir = tempfile::tempdir().unwrap();
    let shared = shared_folder(dir.path());
    let server = Server::start_in(
        dir,
        |dir| config(dir, &filesystem(&folder, &dir.join("shared"))),
        &[("APP_MCP_TOKENS", TOKEN)],
    );
    let client = connect(&server.url("/files/mcp"), "secret-token").await;

    // Only the listed tools exist, under their served names.
    let mut names = tool_names(&client).await;
    names.sort();
    assert_eq!(
        names,
        ["list_directory", "read_file", "search_files", "write_file"]
    );
    let listed = client.list_all_tools().await.unwrap();
    let search = listed.iter().find(|t| t.name == "search_files").unwrap();
    assert!(
        search.input_schema["properties"]
            .get("excludePatterns")
            .is_none(),
        "a fixed argument is not in the schema: {:?}",
        search.input_schema
    );
    let off_list = client
        .call_tool(
            CallToolRequestParams::new("move_file").with_arguments(
                json!({"source": "hello.txt", "destination": "moved.txt"})
                    .as_object()
                    .unwrap()
                    .clone(),
            ),
        )
        .await;
    assert!(
        off_list.is_err(),
        "a tool off the allowlist is unknown: {off_list:?}"
    );

    // A read passes through unchanged: the text block and the structured content.
    let read = call(&client, "read_file", json!({"path": "hello.txt"})).await;
    assert_ne!(read.is_error, Some(true), "{read:?}");
    assert_eq!(text(&read), "hello from the shared folder\n");
    assert_eq!(
        read.structured_content,
        Some(json!({"content": "hello from the shared folder\n"}))
    );

    // A path outside the server's root: refused by the server itself, shown as it said it.
    let outside = call(&client, "read_file", json!({"path": "/etc/passwd"})).await;
    assert_eq!(outside.is_error, Some(true));
    assert!(
        text(&outside).contains("outside allowed directories"),
        "{outside:?}"
    );

    // Wrong type: refused by the upstream's own schema here, never sent.
    let wrong = call(&client, "read_file", json!({"path": 5})).await;
    assert_eq!(wrong.is_error, Some(true));
    assert!(text(&wrong).contains("\"field\":\"path\""), "{wrong:?}");

    // The fixed argument: refused when passed, always sent otherwise.
    let passed = call(
        &client,
        "search_files",
        json!({"path": ".", "pattern": "*", "excludePatterns": []}),
    )
    .await;
    assert!(text(&passed).contains("argument_not_allowed"), "{passed:?}");
    let found = call(
        &client,
        "search_files",
        json!({"path": ".", "pattern": "*"}),
    )
    .await;
    assert!(text(&found).contains("hello.txt"), "{found:?}");
    assert!(!text(&found).contains("private.key"), "{found:?}");

    // A write: a preview and a confirm token first, nothing written.
    let arguments = json!({"path": "note.txt", "content": "first", "idempotency_key": "note-1"});
    let preview = call(&client, "write_file", arguments.clone()).await;
    let preview = preview
        .structured_content
        .expect("the preview is structured");
    assert_eq!(preview["confirmationRequired"], true, "{preview}");
    assert_eq!(
        preview["preview"]["wouldCall"]["tool"], "write_file",
        "{preview}"
    );
    assert!(
        !shared.join("note.txt").exists(),
        "a preview writes nothing"
    );
    let mut confirmed = arguments.clone();
    confirmed["confirm_token"] = preview["confirmToken"].clone();
    let written = call(&client, "write_file", confirmed.clone()).await;
    assert_ne!(written.is_error, Some(true), "{written:?}");
    assert_eq!(
        std::fs::read_to_string(shared.join("note.txt")).unwrap(),
        "first"
    );

    // The same key again answers the first result; the upstream is not called again.
    std::fs::write(shared.join("note.txt"), "changed since").unwrap();
    let replayed = call(&client, "write_file", confirmed).await;
    assert_eq!(replayed.content, written.content);
    let meta = serde_json::to_value(&replayed.meta).unwrap();
    assert_eq!(meta["io.concierge/idempotentReplay"], true, "{meta}");
    assert_eq!(
        std::fs::read_to_string(shared.join("note.txt")).unwrap(),
        "changed since"
    );

    // Every call wrote one audit line, refused ones too, with its arguments.
    let lines = server.audit_lines_of("files.log", 9);
    let calls: Vec<&Value> = lines.iter().filter(|l| l["tool"].is_string()).collect();
    assert!(calls.len() >= 9, "{lines:?}");
    assert!(
        calls
            .iter()
            .any(|l| l["tool"] == "read_file" && l["arguments"]["path"] == "/etc/passwd"),
        "{lines:?}"
    );
    client.cancel().await.ok();
}

/// A stdio server gets `PATH` and its `env`, nothing else of concierge's environment.
#[tokio::test]
async fn a_stdio_server_sees_path_and_its_env_only() {
    let Some(folder) = upstreams() else { return };
    let everything = format!(
        r#"command = ["{}", "stdio"]
env = {{ GREETING = "hello" }}
tools = ["get-env", "get-structured-content", "get-tiny-image", "trigger-long-running-operation"]
"#,
        program(&folder, "mcp-server-everything")
    );
    let server = Server::start(
        |dir| config(dir, &everything),
        &[
            ("APP_MCP_TOKENS", TOKEN),
            ("CONCIERGE_SECRET_THING", "leak"),
        ],
    );
    let client = connect(&server.url("/files/mcp"), "secret-token").await;
    let env = call(&client, "get-env", json!({})).await;
    let seen: Value = serde_json::from_str(&text(&env)).expect("get-env answers JSON");
    let mut names: Vec<&str> = seen
        .as_object()
        .unwrap()
        .keys()
        .map(String::as_str)
        .collect();
    names.sort();
    assert_eq!(names, ["GREETING", "PATH"], "{seen}");
    passes_results_unchanged(&client).await;
    client.cancel().await.ok();
}

/// Structured content and an image block reach the client as the upstream sent them.
async fn passes_results_unchanged(client: &crate::common::Client) {
    let weather = call(
        client,
        "get-structured-content",
        json!({"location": "New York"}),
    )
    .await;
    let structured = weather
        .structured_content
        .clone()
        .expect("structured content");
    assert!(structured.get("temperature").is_some(), "{structured}");
    let image = call(client, "get-tiny-image", json!({})).await;
    let blocks = serde_json::to_value(&image.content).unwrap();
    let picture = blocks
        .as_array()
        .unwrap()
        .iter()
        .find(|b| b["type"] == "image")
        .expect("an image block");
    assert_eq!(picture["mimeType"], "image/png");
    assert!(picture["data"].as_str().unwrap().len() > 100);
}

/// What a client heard while a call ran.
#[derive(Clone, Default)]
pub(crate) struct Heard {
    pub(crate) progress: Arc<Mutex<Vec<f64>>>,
    pub(crate) list_changed: Arc<std::sync::atomic::AtomicUsize>,
}

impl ClientHandler for Heard {
    async fn on_progress(
        &self,
        params: ProgressNotificationParam,
        _context: NotificationContext<RoleClient>,
    ) {
        self.progress.lock().unwrap().push(params.progress);
    }

    async fn on_tool_list_changed(&self, _context: NotificationContext<RoleClient>) {
        self.list_changed
            .fetch_add(1, std::sync::atomic::Ordering::SeqCst);
    }
}

impl Heard {
    /// Waits (at most 10 s) until a `notifications/tools/list_changed` was heard; `what` names
    /// the change that should have sent it.
    pub(crate) async fn list_changed_after(&self, what: &str) {
        let deadline = Instant::now() + Duration::from_secs(10);
        while self.list_changed.load(std::sync::atomic::Ordering::SeqCst) == 0 {
            assert!(
                Instant::now() < deadline,
                "no notifications/tools/list_changed after {what}"
            );
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }
}

/// A client with `token` that records what it hears.
pub(crate) async fn connect_hearing(
    url: &str,
    token: &str,
) -> (RunningService<RoleClient, Heard>, Heard) {
    let config = StreamableHttpClientTransportConfig::with_uri(url.to_string())
        .auth_header(token.to_string());
    let heard = Heard::default();
    let client = heard
        .clone()
        .serve(StreamableHttpClientTransport::from_config(config))
        .await
        .expect("MCP client connects");
    (client, heard)
}

/// The everything server in `mode` (`streamableHttp`, `sse`) on a free port.
fn everything(folder: &Path, mode: &str) -> (Process, u16) {
    let port = free_port();
    let process = Process(
        std::process::Command::new(program(folder, "mcp-server-everything"))
            .arg(mode)
            .env("PORT", port.to_string())
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn()
            .expect("the everything server starts"),
    );
    wait_for(port, "the everything server");
    (process, port)
}

/// A call of `name` under way, its answer still to come. (rmcp's client sends a progress token
/// with every request.)
async fn started(
    peer: &rmcp::service::Peer<RoleClient>,
    name: &str,
    arguments: Value,
) -> rmcp::service::RequestHandle<RoleClient> {
    let Value::Object(arguments) = arguments else {
        panic!("arguments are an object")
    };
    let request = ClientRequest::CallToolRequest(rmcp::model::CallToolRequest::new(
        CallToolRequestParams::new(name.to_string()).with_arguments(arguments),
    ));
    peer.send_request_with_option(request, PeerRequestOptions::no_options())
        .await
        .unwrap()
}

/// The everything server's long operation in four steps: it completes, and at least three of
/// its reports reach the client, in order (the last leaves the upstream together with the
/// result, and a report that arrives after its call has ended has nowhere to go).
async fn a_long_operation_reports_progress(
    client: &RunningService<RoleClient, Heard>,
    heard: &Heard,
) {
    let handle = started(
        client.peer(),
        "trigger-long-running-operation",
        json!({"duration": 0.4, "steps": 4}),
    )
    .await;
    let answer = handle.await_response().await.expect("the call answers");
    let ServerResult::CallToolResult(done) = answer else {
        panic!("a tool result: {answer:?}")
    };
    assert!(text(&done).contains("completed"), "{done:?}");
    let deadline = Instant::now() + Duration::from_secs(5);
    while heard.progress.lock().unwrap().len() < 3 && Instant::now() < deadline {
        tokio::task::yield_now().await;
    }
    let progress = heard.progress.lock().unwrap().clone();
    assert!(
        progress.len() >= 3 && [1.0, 2.0, 3.0, 4.0].starts_with(&progress),
        "{progress:?}"
    );
}

/// The everything server in `mode` behind concierge with `section`'s connection lines (given
/// its port): results unchanged, progress passed through.
async fn the_everything_server_in(mode: &str, section: impl Fn(u16) -> String) {
    let Some(folder) = upstreams() else { return };
    let (_everything, port) = everything(&folder, mode);
    let upstream = format!(
        "{}tools = [\"get-structured-content\", \"get-tiny-image\", \"trigger-long-running-operation\"]\n",
        section(port)
    );
    let server = Server::start(|dir| config(dir, &upstream), &[("APP_MCP_TOKENS", TOKEN)]);
    let (client, heard) = connect_hearing(&server.url("/files/mcp"), "secret-token").await;
    let plain = connect(&server.url("/files/mcp"), "secret-token").await;
    passes_results_unchanged(&plain).await;
    a_long_operation_reports_progress(&client, &heard).await;
    client.cancel().await.ok();
    plain.cancel().await.ok();
}

/// The everything server over Streamable HTTP: results unchanged, progress passed through.
#[tokio::test]
async fn the_everything_server_over_streamable_http_with_progress() {
    the_everything_server_in("streamableHttp", |port| {
        format!(
            "url = \"http://127.0.0.1:{port}/mcp\"\nheaders = {{ X-Concierge-Test = \"yes\" }}\n"
        )
    })
    .await;
}

/// The everything server over the legacy HTTP+SSE transport (`transport = "sse"`): results
/// unchanged, progress passed through.
#[tokio::test]
async fn the_everything_server_over_legacy_sse() {
    the_everything_server_in("sse", |port| {
        format!("url = \"http://127.0.0.1:{port}/sse\"\ntransport = \"sse\"\n")
    })
    .await;
}

/// The pids of processes whose command line contains `needle`.
pub(crate) fn pids_with(needle: &str) -> Vec<i32> {
    let mut pids = Vec::new();
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        let Ok(pid) = entry.file_name().to_string_lossy().parse::<i32>() else {
            continue;
        };
        let cmdline = std::fs::read(entry.path().join("cmdline")).unwrap_or_default();
        if String::from_utf8_lossy(&cmdline).contains(needle) {
            pids.push(pid);
        }
    }
    pids
}

/// An upstream killed under load: the other endpoint keeps answering, its tools answer a
/// retryable error, it is started again, and a client with a session hears the list change.
#[tokio::test]
async fn a_killed_upstream_fails_open_and_comes_back() {
    let Some(folder) = upstreams() else { return };
    let dir = tempfile::tempdir().unwrap();
    shared_folder(dir.path());
    let server = Server::start_in(
        dir,
        |dir| {
            let mut config = config(dir, &filesystem(&folder, &dir.join("shared")));
            let notes = dir.join("notes");
            std::fs::create_dir_all(&notes).unwrap();
            std::fs::write(notes.join("note.txt"), "a second server\n").unwrap();
            config.push_str(&format!(
                r#"
[apps.notes]
kind = "mcp"
command = ["{program}", "{notes}"]
tools = ["read_text_file"]

[[endpoint]]
path = "/notes/mcp"
tools = ["notes.*"]
auth = {{ kind = "tokens", env = "APP_MCP_TOKENS" }}
"#,
                program = program(&folder, "mcp-server-filesystem"),
                notes = notes.display()
            ));
            config.push_str(
                r#"
[apps.other]
kind = "mcp"
command = ["/nonexistent/mcp-server"]
tools = ["anything"]

[[endpoint]]
path = "/health-only/mcp"
tools = ["other.*"]
auth = { kind = "tokens", env = "APP_MCP_TOKENS" }

[apps.hidden]
kind = "mcp"
command = ["/nonexistent/mcp-server"]
tools = ["anything"]
when_down = "hide"

[[endpoint]]
path = "/hidden/mcp"
tools = ["hidden.*"]
auth = { kind = "tokens", env = "APP_MCP_TOKENS" }
"#,
            );
            config
        },
        &[("APP_MCP_TOKENS", TOKEN)],
    );
    let shared = server.dir.path().join("shared").display().to_string();
    let (client, heard) = connect_hearing(&server.url("/files/mcp"), "secret-token").await;
    let plain = connect(&server.url("/files/mcp"), "secret-token").await;
    let read = || call(&plain, "read_file", json!({"path": "hello.txt"}));
    assert_ne!(read().await.is_error, Some(true));

    // A server that cannot start does not stop the others; its tool answers retryably.
    let other = connect(&server.url("/health-only/mcp"), "secret-token").await;
    let down = call(&other, "anything", json!({})).await;
    assert_eq!(down.is_error, Some(true));
    assert!(text(&down).contains("\"retryable\":true"), "{down:?}");
    assert!(
        !text(&down).contains("nonexistent"),
        "no path reaches a client: {down:?}"
    );
    // With `when_down = "hide"` a server that is down has no tools listed at all.
    let hidden = connect(&server.url("/hidden/mcp"), "secret-token").await;
    assert!(tool_names(&hidden).await.is_empty());
    hidden.cancel().await.ok();

    // Load: four clients calling without pause while the server is killed under them. Every
    // answer is the file or a retryable error; none hangs past the call timeout.
    let stop = Arc::new(std::sync::atomic::AtomicBool::new(false));
    let mut load = Vec::new();
    for _ in 0..4 {
        let client = connect(&server.url("/files/mcp"), "secret-token").await;
        let stop = stop.clone();
        load.push(tokio::spawn(async move {
            let (mut read, mut retryable) = (0, 0);
            while !stop.load(std::sync::atomic::Ordering::SeqCst) {
                let answer = call(&client, "read_file", json!({"path": "hello.txt"})).await;
                if answer.is_error == Some(true) {
                    assert!(text(&answer).contains("\"retryable\":true"), "{answer:?}");
                    retryable += 1;
                } else {
                    read += 1;
                }
            }
            client.cancel().await.ok();
            (read, retryable)
        }));
    }
    let pids = pids_with(&shared);
    assert!(!pids.is_empty(), "the filesystem server runs");
    for pid in &pids {
        // SAFETY: a signal to a process of this test's own server.
        unsafe { libc::kill(*pid, libc::SIGKILL) };
    }
    // The other server's tools answer meanwhile.
    let notes = connect(&server.url("/notes/mcp"), "secret-token").await;
    let note = call(&notes, "read_text_file", json!({"path": "note.txt"})).await;
    assert!(text(&note).contains("a second server"), "{note:?}");
    // Calls meanwhile answer at once, retryably, until the server is back.
    let deadline = Instant::now() + Duration::from_secs(20);
    let mut refused = 0;
    loop {
        let answer = read().await;
        if answer.is_error != Some(true) {
            break;
        }
        assert!(text(&answer).contains("\"retryable\":true"), "{answer:?}");
        refused += 1;
        assert!(
            Instant::now() < deadline,
            "the server was not started again"
        );
        tokio::task::yield_now().await;
    }
    stop.store(true, std::sync::atomic::Ordering::SeqCst);
    for task in load {
        let (read, retryable) = task.await.expect("no answer broke the rules");
        eprintln!("a loading client: {read} reads, {retryable} retryable refusals");
    }
    notes.cancel().await.ok();
    eprintln!("{refused} calls answered retryably while the server was down");
    assert!(!pids_with(&shared).iter().any(|p| pids.contains(p)));
    let deadline = Instant::now() + Duration::from_secs(5);
    while heard.list_changed.load(std::sync::atomic::Ordering::SeqCst) == 0 {
        assert!(
            Instant::now() < deadline,
            "no notifications/tools/list_changed"
        );
        tokio::task::yield_now().await;
    }
    let health = crate::common::oauth::get_json(&server.url("/health")).await;
    assert_eq!(health["status"], "degraded", "{health}");
    assert_eq!(health["upstreams"]["files"]["status"], "ok", "{health}");
    assert_eq!(health["upstreams"]["other"]["status"], "down", "{health}");
    client.cancel().await.ok();
    plain.cancel().await.ok();
    other.cancel().await.ok();

    // concierge stopping (SIGTERM) takes its servers' process groups along.
    let running = pids_with(&shared);
    assert!(!running.is_empty());
    let mut server = server;
    // SAFETY: a signal to this test's own server.
    unsafe { libc::kill(server.child.id() as i32, libc::SIGTERM) };
    server.child.wait().unwrap();
    let deadline = Instant::now() + Duration::from_secs(10);
    while running.iter().any(|p| pids_with(&shared).contains(p)) {
        assert!(Instant::now() < deadline, "a server outlived concierge");
        tokio::task::yield_now().await;
    }
}

/// `concierge check --live` starts each server and names a listed tool it does not offer.
#[tokio::test]
async fn check_live_names_a_listed_tool_the_server_lacks() {
    let Some(folder) = upstreams() else { return };
    let dir = tempfile::tempdir().unwrap();
    let shared = shared_folder(dir.path());
    let section = filesystem(&folder, &shared).replace(
        r#"tools = ["read_text_file", "#,
        r#"tools = ["summon_file", "read_text_file", "#,
    );
    let path = dir.path().join("concierge.toml");
    std::fs::write(&path, config(dir.path(), &section)).unwrap();
    let out = std::process::Command::new(crate::common::BIN)
        .args(["check", "--live", "--config"])
        .arg(&path)
        .env("APP_MCP_TOKENS", TOKEN)
        .output()
        .unwrap();
    let said =
        String::from_utf8_lossy(&out.stdout).to_string() + &String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{said}");
    assert!(said.contains("summon_file"), "{said}");
}

/// A config serving the test's own upstream at `url` as instance `files`.
fn own_upstream(dir: &Path, url: &str, extra: &str) -> String {
    config(
        dir,
        &format!(
            r#"url = "{url}"
headers = {{ Authorization = "Bearer upstream-secret" }}
tools = ["wait", "whoami", "huge", "chatty", "steps", "report"]
{extra}"#
        ),
    )
}

async fn test_upstream(fillers: usize) -> (String, Arc<Seen>) {
    let seen = Arc::new(Seen::default());
    let url = serve_upstream(TestUpstream {
        seen: seen.clone(),
        fillers,
    })
    .await;
    (url, seen)
}

/// The upstream sees concierge's own credentials, never the client's token, and the call's
/// trace context in `_meta` (the trace of the call's audit line); its latency is in
/// `/metrics`; a call the client cancels is cancelled upstream.
#[tokio::test(flavor = "multi_thread")]
async fn the_upstream_sees_concierges_credentials_and_hears_a_cancel() {
    let (url, seen) = test_upstream(0).await;
    let (collector, _spans) = crate::operate::otlp_receiver().await;
    let server = Server::start(
        |dir| own_upstream(dir, &url, "[metrics]\ntoken = \"metrics-secret\"\n"),
        &[
            ("APP_MCP_TOKENS", TOKEN),
            ("OTEL_EXPORTER_OTLP_ENDPOINT", &collector),
            ("OTEL_BSP_SCHEDULE_DELAY", "50"),
        ],
    );
    let (client, _) = connect_hearing(&server.url("/files/mcp"), "secret-token").await;
    let plain = connect(&server.url("/files/mcp"), "secret-token").await;
    call(&plain, "whoami", json!({})).await;
    let (authorization, meta) = seen.whoami.lock().unwrap().clone().expect("whoami ran");
    assert_eq!(authorization.as_deref(), Some("Bearer upstream-secret"));
    let audit = server.audit_lines_of("files.log", 1);
    let trace_id = audit[0]["trace_id"].as_str().expect("a traced call");
    let traceparent = meta["traceparent"].as_str().expect("traceparent in _meta");
    assert!(
        traceparent.starts_with(&format!("00-{trace_id}-")),
        "{traceparent} continues {trace_id}"
    );
    let metrics = crate::common::metrics_text(&server.url("/metrics"), "metrics-secret").await;
    assert!(
        metrics.contains(
            "concierge_upstream_request_duration_seconds_count{upstream=\"mcp\",status_class=\"2xx\"} 1"
        ),
        "{metrics}"
    );

    let handle = started(client.peer(), "wait", json!({})).await;
    // Once the call is under way upstream, the client cancels it.
    let deadline = Instant::now() + Duration::from_secs(10);
    while seen.waiting.load(std::sync::atomic::Ordering::SeqCst) == 0 {
        assert!(
            Instant::now() < deadline,
            "the call did not reach the upstream"
        );
        tokio::task::yield_now().await;
    }
    handle
        .cancel(Some("the user changed their mind".into()))
        .await
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(10);
    while seen.cancelled.load(std::sync::atomic::Ordering::SeqCst) == 0 {
        assert!(
            Instant::now() < deadline,
            "the upstream was not told to cancel"
        );
        tokio::task::yield_now().await;
    }
    let lines = server.audit_lines_of("files.log", 2);
    assert!(
        lines
            .iter()
            .any(|l| l["tool"] == "wait" && l["outcome"] == "cancelled"),
        "{lines:?}"
    );
    client.cancel().await.ok();
    plain.cancel().await.ok();
}

/// A call to a 2026-07-28 server goes out as a POST of concierge's own (the id the upstream sees
/// is concierge's, not one of the rmcp connection's numbers), with the progress the upstream
/// reports on the call's stream passed on and the result unchanged; at 2025-11-25 the same
/// call goes over the session, with the same answer.
#[tokio::test(flavor = "multi_thread")]
async fn a_call_to_a_2026_server_goes_directly_with_its_progress() {
    for (protocol, direct) in [("2026-07-28", true), ("2025-11-25", false)] {
        let (url, seen) = test_upstream(0).await;
        let server = Server::start(
            |dir| own_upstream(dir, &url, &format!("protocol = \"{protocol}\"")),
            &[("APP_MCP_TOKENS", TOKEN)],
        );
        let (client, heard) = connect_hearing(&server.url("/files/mcp"), "secret-token").await;
        let handle = started(client.peer(), "steps", json!({})).await;
        let answer = handle.await_response().await.expect("the call answers");
        let ServerResult::CallToolResult(done) = answer else {
            panic!("{protocol}: a tool result: {answer:?}")
        };
        assert_eq!(text(&done), "three steps", "{protocol}");
        // Reports that come faster than a client is sent them merge (the latest goes next),
        // and the last leaves the upstream together with the result: some reach the client.
        // (rmcp's client runs each notification's handler as a task of its own, so reports
        // this close together may be heard in any order.)
        let deadline = Instant::now() + Duration::from_secs(5);
        while heard.progress.lock().unwrap().is_empty() && Instant::now() < deadline {
            tokio::task::yield_now().await;
        }
        let progress = heard.progress.lock().unwrap().clone();
        assert!(
            !progress.is_empty() && progress.iter().all(|p| [1.0, 2.0, 3.0].contains(p)),
            "{protocol}: {progress:?}"
        );
        let id = seen
            .last_id
            .lock()
            .unwrap()
            .clone()
            .expect("the call arrived");
        let concierges = id.as_str().is_some_and(|i| i.starts_with("concierge-"));
        assert_eq!(
            concierges, direct,
            "{protocol}: the upstream saw the id {id}"
        );
        client.cancel().await.ok();
    }
}

/// A stateless endpoint answers a plain call itself and hands a federated result on as the
/// upstream wrote it; the answer is the one rmcp writes for the same call (one with a progress
/// token goes through rmcp), in both eras of the client: `resultType` at 2026-07-28 only.
#[tokio::test(flavor = "multi_thread")]
async fn a_stateless_endpoint_hands_a_result_on_as_rmcp_would() {
    let (url, _seen) = test_upstream(0).await;
    let server = Server::start(
        |dir| {
            own_upstream(dir, &url, "protocol = \"2026-07-28\"")
                + r#"
[[endpoint]]
path = "/plain/mcp"
tools = ["files.*"]
auth = { kind = "tokens", env = "APP_MCP_TOKENS" }
audit = "files"
session = "stateless"
"#
        },
        &[("APP_MCP_TOKENS", TOKEN)],
    );
    let http = reqwest::Client::new();
    let ask = |modern: bool, progress: bool| {
        let mut meta = serde_json::Map::new();
        if modern {
            meta.insert(
                "io.modelcontextprotocol/protocolVersion".into(),
                json!("2026-07-28"),
            );
            meta.insert(
                "io.modelcontextprotocol/clientCapabilities".into(),
                json!({}),
            );
        }
        if progress {
            meta.insert("progressToken".into(), json!("p"));
        }
        let mut params = json!({"name": "report", "arguments": {}});
        if !meta.is_empty() {
            params["_meta"] = Value::Object(meta);
        }
        let version = if modern { "2026-07-28" } else { "2025-11-25" };
        let request = http
            .post(server.url("/plain/mcp"))
            .bearer_auth("secret-token")
            .header("accept", "application/json, text/event-stream")
            .header("mcp-protocol-version", version)
            .header("mcp-method", "tools/call")
            .header("mcp-name", "report")
            .json(&json!({"jsonrpc": "2.0", "id": 5, "method": "tools/call", "params": params}));
        async move {
            let response = request.send().await.expect("answered");
            let json = response
                .headers()
                .get("content-type")
                .is_some_and(|v| v.as_bytes().starts_with(b"application/json"));
            let body = response.text().await.expect("a body");
            let message = crate::common::RawAnswer {
                status: 200,
                headers: Default::default(),
                body,
            }
            .message();
            (json, message)
        }
    };
    for modern in [false, true] {
        let (json, plain) = ask(modern, false).await;
        assert!(json, "a plain call is answered as one JSON body");
        let (_, through_rmcp) = ask(modern, true).await;
        assert_eq!(plain, through_rmcp, "modern: {modern}");
        let result = &plain["result"];
        assert_eq!(
            result["content"],
            json!([{"type": "text", "text": "Латте: 2"}])
        );
        assert_eq!(
            result["structuredContent"],
            json!({"items": 2, "name": "Латте"})
        );
        assert_eq!(result["isError"], json!(false));
        assert_eq!(
            result.get("resultType"),
            modern.then(|| json!("complete")).as_ref(),
            "{plain}"
        );
    }
    // A stateless answer's stream ends with its result, so a report still held back when the
    // upstream answered is written ahead of it: the last one (3) is the event before the result.
    for _ in 0..5 {
        let body = http
            .post(server.url("/plain/mcp"))
            .bearer_auth("secret-token")
            .header("accept", "application/json, text/event-stream")
            .header("mcp-protocol-version", "2025-11-25")
            .json(&json!({"jsonrpc": "2.0", "id": 6, "method": "tools/call",
                "params": {"name": "steps", "arguments": {}, "_meta": {"progressToken": "s"}}}))
            .send()
            .await
            .expect("answered")
            .text()
            .await
            .expect("a body");
        let events: Vec<Value> = body
            .lines()
            .filter_map(|l| l.strip_prefix("data:"))
            .filter_map(|d| serde_json::from_str(d.trim()).ok())
            .collect();
        let [.., last_report, result] = events.as_slice() else {
            panic!("reports and a result: {body}")
        };
        assert_eq!(last_report["params"]["progress"], json!(3.0), "{body}");
        assert_eq!(
            result["result"]["content"][0]["text"], "three steps",
            "{body}"
        );
    }
}

/// An HTTP upstream that forgot concierge's session (it restarted) answers 404; concierge
/// starts a new session and the call goes through, as the spec says. (Sessions are the
/// 2025-11-25 era's: at 2026-07-28 there are none to forget.)
#[tokio::test(flavor = "multi_thread")]
async fn a_forgotten_upstream_session_is_started_again() {
    let (url, seen) = test_upstream(0).await;
    let server = Server::start(
        |dir| own_upstream(dir, &url, "protocol = \"2025-11-25\""),
        &[("APP_MCP_TOKENS", TOKEN)],
    );
    let client = connect(&server.url("/files/mcp"), "secret-token").await;
    let first = call(&client, "whoami", json!({})).await;
    assert_ne!(first.is_error, Some(true), "{first:?}");
    let sessions = seen.sessions.get().expect("the upstream serves");
    let forgotten = std::mem::take(&mut *sessions.sessions.write().await);
    assert_eq!(forgotten.len(), 1, "concierge holds one session upstream");
    drop(forgotten);
    let again = call(&client, "whoami", json!({})).await;
    assert_ne!(again.is_error, Some(true), "{again:?}");
    assert_eq!(sessions.sessions.read().await.len(), 1, "a new session");
    client.cancel().await.ok();
}

/// What a stranger can send is bounded: a result over `max_result_bytes` is a readable error,
/// one over what the transport takes (16 MiB) fails the call and the connection, endless progress ends at the call
/// timeout, ten thousand tools are read and only the allowlisted served — and concierge stays up.
#[tokio::test(flavor = "multi_thread")]
async fn what_an_upstream_sends_is_bounded() {
    let (url, _seen) = test_upstream(10_000).await;
    let server = Server::start(
        |dir| {
            own_upstream(
                dir,
                &url,
                "max_result_bytes = \"64KiB\"\ncall_timeout = \"1s\"\n",
            )
        },
        &[("APP_MCP_TOKENS", TOKEN)],
    );
    let client = connect(&server.url("/files/mcp"), "secret-token").await;
    let mut names = tool_names(&client).await;
    names.sort();
    assert_eq!(
        names,
        ["chatty", "huge", "report", "steps", "wait", "whoami"]
    );
    let big = call(&client, "huge", json!({"bytes": 100_000})).await;
    assert_eq!(big.is_error, Some(true));
    assert!(text(&big).contains("upstream_result_too_large"), "{big:?}");
    let endless = call(&client, "chatty", json!({})).await;
    assert_eq!(endless.is_error, Some(true));
    assert!(text(&endless).contains("upstream_timeout"), "{endless:?}");
    // A message larger than the transport takes ends that connection: the call fails, and
    // concierge connects again.
    let beyond = call(&client, "huge", json!({"bytes": 20_000_000})).await;
    assert_eq!(beyond.is_error, Some(true), "{beyond:?}");
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        let small = call(&client, "huge", json!({"bytes": 10})).await;
        if small.is_error != Some(true) {
            assert_eq!(text(&small), "xxxxxxxxxx");
            break;
        }
        assert!(text(&small).contains("\"retryable\":true"), "{small:?}");
        assert!(
            Instant::now() < deadline,
            "the upstream was not connected again"
        );
        tokio::task::yield_now().await;
    }
    client.cancel().await.ok();
}

/// `forward_identity`: the upstream is told who is calling as a JWT concierge signs for its
/// audience, verifiable with the keys concierge publishes; the caller's token is never sent.
#[tokio::test(flavor = "multi_thread")]
async fn forward_identity_sends_a_jwt_an_upstream_can_verify() {
    let (url, seen) = test_upstream(0).await;
    let server = Server::start(
        |dir| {
            own_upstream(
                dir,
                &url,
                "forward_identity = true\nidentity_audience = \"https://tools.example/mcp\"\n",
            )
        },
        &[("APP_MCP_TOKENS", TOKEN)],
    );
    let client = connect(&server.url("/files/mcp"), "secret-token").await;
    call(&client, "whoami", json!({})).await;
    let (authorization, meta) = seen.whoami.lock().unwrap().clone().expect("whoami ran");
    assert_eq!(authorization.as_deref(), Some("Bearer upstream-secret"));
    assert!(!meta.to_string().contains("secret-token"), "{meta}");
    let token = meta["io.concierge/identity"]
        .as_str()
        .expect("an identity JWT");

    let keys: jsonwebtoken::jwk::JwkSet = reqwest::get(server.url("/identity/jwks"))
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let header = jsonwebtoken::decode_header(token).unwrap();
    assert_eq!(header.typ.as_deref(), Some("concierge-id+jwt"));
    let key = keys
        .find(header.kid.as_deref().unwrap())
        .expect("the kid is published");
    let mut validation = jsonwebtoken::Validation::new(jsonwebtoken::Algorithm::EdDSA);
    validation.set_audience(&["https://tools.example/mcp"]);
    validation.set_issuer(&["concierge"]);
    let claims = jsonwebtoken::decode::<Value>(
        token,
        &jsonwebtoken::DecodingKey::from_jwk(key).unwrap(),
        &validation,
    )
    .expect("the JWT verifies")
    .claims;
    assert_eq!(claims["sub"], "demo", "{claims}");
    assert_eq!(claims["client_id"], "demo", "{claims}");
    let life = claims["exp"].as_i64().unwrap() - claims["iat"].as_i64().unwrap();
    assert!(life <= 60, "{claims}");
    client.cancel().await.ok();
}

/// The demo is whole with only Rust: with its `/files/mcp` server (npm's, installed by the test
/// command) missing, `/health` goes from `starting` to 200 `ok` — the instance is `optional`, so
/// it is listed as down and marked so, not counted — and the endpoint still answers: its tools
/// say the server is not reachable.
#[tokio::test]
async fn the_demo_is_ok_without_its_npm_server() {
    let missing = tempfile::tempdir().unwrap();
    let program = missing.path().join("mcp-server-filesystem");
    let server = Server::start_demo(&[("CONCIERGE_FILES_SERVER", program.to_str().unwrap())]);
    let deadline = Instant::now() + Duration::from_secs(60);
    let health = loop {
        let answer = reqwest::get(server.url("/health")).await.unwrap();
        let status = answer.status();
        let health: Value = answer.json().await.unwrap();
        if status == 200 && health["upstreams"]["files"]["status"] == "down" {
            break health;
        }
        assert!(Instant::now() < deadline, "{status}: {health}");
        tokio::time::sleep(Duration::from_millis(100)).await;
    };
    assert_eq!(health["status"], "ok", "{health}");
    assert_eq!(health["upstreams"]["files"]["optional"], true, "{health}");

    let client = connect(&server.url("/files/mcp"), "demo-token").await;
    let answer = call(&client, "list_directory", json!({"path": "."})).await;
    assert_eq!(answer.is_error, Some(true), "{answer:?}");
    assert!(
        format!("{answer:?}").contains("not reachable"),
        "{answer:?}"
    );
    client.cancel().await.ok();
}
