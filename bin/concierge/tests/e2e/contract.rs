//! The platform's promises, held to every registered kind at once: a write is never sent on its
//! dry run, its preview or a declined confirmation, and runs once however often it is replayed;
//! and no secret of the config comes back from the system behind.
//!
//! Each kind that serves write tools has a fixture here — an instance of it in one deployment and
//! its real upstream (a SQLite file, an HTTP API, an MCP server of the test's own), which counts
//! what reached it. The kinds are read from the config schema the code generates (checked
//! against the registry by `reference_tests`): a kind registered without a fixture here, or
//! without a reason it has none, fails [`every_registered_kind_is_held_to_the_write_contract`].

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, ListToolsResult,
    PaginatedRequestParams, ServerCapabilities, ServerConfig, Tool,
};
use rmcp::service::RequestContext;
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::{StreamableHttpServerConfig, StreamableHttpService};
use rmcp::{ErrorData, RoleServer, ServerHandler};
use serde_json::{Value, json};

use crate::common::{Client, Server, call, connect};

const TOKEN: &str = "contract:contract-token";

/// The kinds with write tools, and how each is held here; the others, and why they have none.
const FIXTURES: &[(&str, &str)] = &[
    ("sql", "fixture: a SQLite table"),
    ("openapi", "fixture: an HTTP API of the test's own"),
    (
        "mcp",
        "fixture: an MCP server of the test's own, with and without a dry-run flag",
    ),
    (
        "mappy",
        "own dry run through the Mappy API: mappy::writes_dry_run_replay_and_async_batches",
    ),
    (
        "coffee",
        "no write safety: its orders are the seed's own flow",
    ),
    (
        "http",
        "no write safety: tools declared by request template only",
    ),
    ("kgqa", "read only"),
    (
        "intake",
        "no write safety: submissions are deduplicated by the store",
    ),
    ("trips", "read only"),
    ("conformance", "a protocol fixture, no business tools"),
];

/// What each upstream counts: writes that reached it (a dry run asked of an upstream that has
/// its own is not one).
#[derive(Default)]
struct Reached {
    api: AtomicUsize,
    mcp: AtomicUsize,
}

#[test]
fn every_registered_kind_is_held_to_the_write_contract() {
    let schema: Value = serde_json::from_str(
        &std::fs::read_to_string(
            std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
                .join("../../docs/src/reference/concierge.schema.json"),
        )
        .expect("the generated config schema"),
    )
    .expect("JSON");
    let registered: Vec<&str> = schema["definitions"]
        .as_object()
        .expect("definitions")
        .keys()
        .filter_map(|name| name.strip_prefix("app."))
        .collect();
    let missing: Vec<&&str> = registered
        .iter()
        .filter(|kind| !FIXTURES.iter().any(|(listed, _)| listed == *kind))
        .collect();
    assert!(
        missing.is_empty(),
        "kinds without a write-contract fixture (add one to contract.rs): {missing:?}"
    );
}

/// The API: `POST /notes` counts, `GET /whoami` refuses with the credential it was sent (as a
/// careless API does).
async fn api(reached: Arc<Reached>) -> String {
    let app = axum::Router::new()
        .route(
            "/notes",
            axum::routing::post(move || {
                let reached = reached.clone();
                async move {
                    reached.api.fetch_add(1, Ordering::SeqCst);
                    (
                        axum::http::StatusCode::CREATED,
                        axum::Json(json!({"id": 7, "done": true})),
                    )
                }
            }),
        )
        .route(
            "/whoami",
            axum::routing::get(|headers: axum::http::HeaderMap| async move {
                let sent = headers
                    .get("authorization")
                    .and_then(|v| v.to_str().ok())
                    .unwrap_or_default()
                    .to_string();
                (
                    axum::http::StatusCode::UNAUTHORIZED,
                    axum::Json(json!({"message": format!("invalid credentials: {sent}")})),
                )
            }),
        );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    tokio::spawn(async move { axum::serve(listener, app).await });
    base
}

const DOCUMENT: &str = r#"{
  "openapi": "3.0.3",
  "info": {"title": "Notes", "version": "1"},
  "paths": {
    "/notes": {"post": {
      "operationId": "createNote",
      "requestBody": {"required": true, "content": {"application/json": {"schema": {
        "type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]}}}},
      "responses": {"201": {"description": "made", "content": {"application/json": {"schema": {
        "type": "object", "properties": {"id": {"type": "integer"}, "done": {"type": "boolean"}}}}}}}
    }},
    "/whoami": {"get": {
      "operationId": "whoAmI",
      "responses": {"200": {"description": "you", "content": {"application/json": {"schema": {
        "type": "object"}}}}}
    }}
  }
}"#;

/// The MCP server: `note_write` has no dry run; `note_plan` takes `dry_run` (not a write when
/// set); `whoami` answers the `Authorization` header it received.
#[derive(Clone)]
struct Notes {
    reached: Arc<Reached>,
}

fn listed(name: &str, properties: Value) -> Tool {
    let schema = json!({"type": "object", "properties": properties});
    Tool::new(
        name.to_string(),
        format!("the test server's {name}"),
        Arc::new(schema.as_object().cloned().unwrap()),
    )
}

impl ServerHandler for Notes {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
    }

    async fn list_tools(
        &self,
        _: Option<PaginatedRequestParams>,
        _: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        Ok(ListToolsResult::with_all_items(vec![
            listed("note_write", json!({"text": {"type": "string"}})),
            listed(
                "note_plan",
                json!({"text": {"type": "string"}, "dry_run": {"type": "boolean"}}),
            ),
            listed("whoami", json!({})),
        ]))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let arguments = request.arguments.unwrap_or_default();
        let text = match request.name.as_ref() {
            "note_plan" if arguments.get("dry_run") == Some(&json!(true)) => {
                "would write".to_string()
            }
            "note_write" | "note_plan" => {
                self.reached.mcp.fetch_add(1, Ordering::SeqCst);
                "written".to_string()
            }
            _ => context
                .extensions
                .get::<http::request::Parts>()
                .and_then(|parts| parts.headers.get("authorization"))
                .and_then(|value| value.to_str().ok())
                .unwrap_or_default()
                .to_string(),
        };
        Ok(CallToolResult::success(vec![ContentBlock::text(text)]).into())
    }
}

async fn mcp_server(reached: Arc<Reached>) -> String {
    let server = Notes { reached };
    let service = StreamableHttpService::new(
        move || Ok(server.clone()),
        Arc::new(LocalSessionManager::default()),
        StreamableHttpServerConfig::default(),
    );
    let app = axum::Router::new().route_service("/mcp", service);
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/mcp", listener.local_addr().unwrap());
    tokio::spawn(async move { axum::serve(listener, app).await });
    url
}

/// One deployment with a write instance of each kind that has a fixture.
fn config(dir: &std::path::Path, api: &str, mcp: &str) -> String {
    let document = dir.join("notes.json");
    std::fs::write(&document, DOCUMENT).unwrap();
    let script = dir.join("shop.sql");
    std::fs::write(
        &script,
        "CREATE TABLE counters (id INTEGER PRIMARY KEY, n INTEGER NOT NULL);
         INSERT INTO counters (id, n) VALUES (1, 0);",
    )
    .unwrap();
    format!(
        r#"
[server]
listen = "127.0.0.1:0"

[writes]
database = "{dir}/writes.db"

[audit.log]
path = "{dir}/log/audit.log"

[[endpoint]]
path = "/mcp"
tools = ["db.*", "api.*", "notes.*"]
auth = {{ kind = "tokens", env = "APP_MCP_TOKENS" }}
audit = "log"

[apps.db]
kind = "sql"
url = "{dir}/shop.db"
create_from = "{script}"
read_only = false

[[apps.db.tool]]
name = "counter_bump"
description = "Adds one to the counter."
write = true
confirm = true
sql = "UPDATE counters SET n = n + 1 WHERE id = :id"
input_schema = {{ properties = {{ id = {{ type = "integer" }} }}, required = ["id"] }}

[[apps.db.tool]]
name = "counter_read"
description = "The counter."
sql = "SELECT n FROM counters WHERE id = 1"

[apps.api]
kind = "openapi"
spec = "{document}"
base_url = "{api}"
auth = {{ bearer = "api-secret-4711" }}
operations = ["createNote", "whoAmI"]
override.createNote = {{ write = true, confirm = true }}

[apps.notes]
kind = "mcp"
url = "{mcp}"
headers = {{ Authorization = "Bearer mcp-secret-0815" }}
tools = ["note_write", "note_plan", "whoami"]
override.note_write = {{ write = true, confirm = true }}
override.note_plan = {{ write = true, confirm = true, dry_run = "dry_run" }}
"#,
        dir = dir.display(),
        script = script.display(),
        document = document.display(),
    )
}

/// A tool's JSON answer: its structured content, else its text read as JSON.
fn answer(result: &CallToolResult) -> Value {
    if let Some(structured) = &result.structured_content {
        return structured.clone();
    }
    let content = serde_json::to_value(&result.content).unwrap();
    let text = content[0]["text"].as_str().unwrap_or_default();
    serde_json::from_str(text).unwrap_or_else(|_| json!(text))
}

/// Dry run (where offered), preview, a forged and a foreign confirmation, the confirmed write,
/// and its replay: `reached` counts 0 until the confirmed write, then 1 however often it is
/// sent again.
async fn hold_to_the_contract(
    client: &Client,
    tool: &str,
    arguments: Value,
    offers_dry_run: bool,
    reached: impl AsyncFn() -> usize,
) {
    let with = |extra: Value| {
        let mut all = arguments.clone();
        for (key, value) in extra.as_object().unwrap() {
            all[key] = value.clone();
        }
        all
    };
    if offers_dry_run {
        let dry = call(
            client,
            tool,
            with(json!({"idempotency_key": "k", "dry_run": true})),
        )
        .await;
        assert_ne!(dry.is_error, Some(true), "{tool}: {dry:?}");
        // Marked in the answer, or in `_meta` for another MCP server's result handed on.
        let marked = answer(&dry)["dryRun"] == true
            || dry.meta.as_ref().and_then(|m| m.get("io.concierge/dryRun")) == Some(&json!(true));
        assert!(marked, "{tool}: {dry:?}");
        assert_eq!(reached().await, 0, "{tool}: a dry run reached the upstream");
    }
    let preview = answer(&call(client, tool, with(json!({"idempotency_key": "k"}))).await);
    assert_eq!(preview["confirmationRequired"], true, "{tool}: {preview}");
    assert!(preview["preview"].is_object(), "{tool}: {preview}");
    assert_eq!(
        reached().await,
        0,
        "{tool}: the preview reached the upstream"
    );
    let token = preview["confirmToken"]
        .as_str()
        .expect("a token")
        .to_string();

    // Declined: the person never confirmed, and what a model makes up is refused.
    let forged = call(
        client,
        tool,
        with(json!({"idempotency_key": "k", "confirm_token": "ct1.0.forged.0"})),
    )
    .await;
    assert_eq!(forged.is_error, Some(true), "{tool}: {forged:?}");
    let mut other = with(json!({"idempotency_key": "k2", "confirm_token": token}));
    other["idempotency_key"] = json!("k2");
    let foreign = call(client, tool, other).await;
    assert_eq!(foreign.is_error, Some(true), "{tool}: {foreign:?}");
    assert_eq!(
        reached().await,
        0,
        "{tool}: a refused confirmation reached the upstream"
    );

    let confirmed = with(json!({"idempotency_key": "k", "confirm_token": token}));
    let written = call(client, tool, confirmed.clone()).await;
    assert_ne!(written.is_error, Some(true), "{tool}: {written:?}");
    assert_eq!(reached().await, 1, "{tool}: the confirmed write ran once");
    for _ in 0..2 {
        let again = call(client, tool, confirmed.clone()).await;
        assert_ne!(again.is_error, Some(true), "{tool}: {again:?}");
        assert_eq!(reached().await, 1, "{tool}: a replay wrote again");
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn no_kind_writes_on_a_dry_run_a_preview_a_declined_or_a_replayed_call() {
    let reached = Arc::new(Reached::default());
    let api = api(reached.clone()).await;
    let mcp = mcp_server(reached.clone()).await;
    let server = Server::start(|dir| config(dir, &api, &mcp), &[("APP_MCP_TOKENS", TOKEN)]);
    let client = connect(&server.url("/mcp"), "contract-token").await;

    // The SQL write's own dry run is a transaction rolled back: what reached the table is
    // read back from it.
    let counter = async || {
        answer(&call(&client, "counter_read", json!({})).await)["rows"][0]["n"]
            .as_u64()
            .expect("the counter") as usize
    };
    hold_to_the_contract(&client, "counter_bump", json!({"id": 1}), true, counter).await;

    let api_reached = reached.clone();
    hold_to_the_contract(
        &client,
        "create_note",
        json!({"body": {"text": "hello"}}),
        false,
        async || api_reached.api.load(Ordering::SeqCst),
    )
    .await;
    let mcp_reached = reached.clone();
    hold_to_the_contract(
        &client,
        "note_write",
        json!({"text": "hello"}),
        false,
        async || mcp_reached.mcp.load(Ordering::SeqCst),
    )
    .await;
    let planned = reached.clone();
    let before = reached.mcp.load(Ordering::SeqCst);
    hold_to_the_contract(
        &client,
        "note_plan",
        json!({"text": "hello"}),
        true,
        async || planned.mcp.load(Ordering::SeqCst) - before,
    )
    .await;
    client.cancel().await.ok();
}

#[tokio::test(flavor = "multi_thread")]
async fn an_upstream_echoing_our_credential_hands_on_only_redacted() {
    let reached = Arc::new(Reached::default());
    let api = api(reached.clone()).await;
    let mcp = mcp_server(reached.clone()).await;
    let server = Server::start(|dir| config(dir, &api, &mcp), &[("APP_MCP_TOKENS", TOKEN)]);
    let client = connect(&server.url("/mcp"), "contract-token").await;

    let refused = call(&client, "who_am_i", json!({})).await;
    let shown = serde_json::to_string(&refused).unwrap();
    assert_eq!(refused.is_error, Some(true), "{shown}");
    assert!(!shown.contains("api-secret-4711"), "{shown}");
    assert!(shown.contains("[redacted]"), "{shown}");

    let echoed = call(&client, "whoami", json!({})).await;
    let shown = serde_json::to_string(&echoed).unwrap();
    assert!(!shown.contains("mcp-secret-0815"), "{shown}");
    assert!(shown.contains("[redacted]"), "{shown}");

    let lines = server.audit_lines_of("audit.log", 2);
    let all = format!("{lines:?}");
    assert!(!all.contains("api-secret-4711"), "the audit kept the key");
    assert!(
        !all.contains("mcp-secret-0815"),
        "the audit kept the header"
    );
    client.cancel().await.ok();
}
