//! `kind = "openapi"` against Prism (npm `@stoplight/prism-cli`, pinned in `scripts/upstreams/`),
//! which mocks each document and refuses every request that breaks it: a call that succeeds was
//! built as the document says. What Prism cannot show (the credentials that reached the API, a
//! timeout) is shown by a small recording server of the test's own.
//!
//! Over 600 lines: one area's end-to-end scenarios (documents, credentials, timeouts and what
//! an argument may not do to a request); each test reads alone.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::json;

use crate::common::cluster::{Process, free_port, wait_for};
use crate::common::{BIN, Server, call, connect, tool_names};

const TOKEN: &str = "demo:secret-token";

fn documents() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/e2e/openapi")
}

/// Prism serving `document` on a free port, or `None` (the test skips) where it is not installed.
fn prism(document: &str) -> Option<(Process, String)> {
    let folder = std::env::var_os("CONCIERGE_TEST_UPSTREAMS")
        .map(PathBuf::from)
        .unwrap_or_else(|| {
            Path::new(env!("CARGO_MANIFEST_DIR")).join("../../scripts/upstreams/node_modules/.bin")
        });
    let program = folder.join("prism");
    if !program.exists() {
        eprintln!("no Prism here (scripts/upstreams.sh): the OpenAPI tests skip");
        return None;
    }
    let port = free_port();
    let process = Process(
        std::process::Command::new(program)
            .args([
                "mock",
                "--host",
                "127.0.0.1",
                "--port",
                &port.to_string(),
                "--errors",
            ])
            .arg(documents().join(document))
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn()
            .expect("Prism starts"),
    );
    wait_for(port, "Prism");
    Some((process, format!("http://127.0.0.1:{port}")))
}

fn config(dir: &Path, app: &str) -> String {
    format!(
        r#"[server]
listen = "127.0.0.1:0"

[writes]
database = "{dir}/writes.sqlite"

[audit.api]
path = "{dir}/log/api.log"

[apps.api]
kind = "openapi"
{app}

[[endpoint]]
path = "/api/mcp"
tools = ["api.*"]
auth = {{ kind = "tokens", env = "APP_MCP_TOKENS" }}
audit = "api"
"#,
        dir = dir.display()
    )
}

fn text(result: &rmcp::model::CallToolResult) -> String {
    let content = serde_json::to_value(&result.content).unwrap();
    content[0]["text"].as_str().unwrap_or_default().to_string()
}

#[tokio::test(flavor = "multi_thread")]
async fn the_pet_shop_through_prism_every_request_as_the_document_says() {
    let Some((_prism, url)) = prism("petstore.yaml") else {
        return;
    };
    let spec = documents().join("petstore.yaml");
    let app = format!(
        r#"spec = "{spec}"
base_url = "{url}"
auth = {{ bearer = "${{SHOP_TOKEN}}" }}
operations = ["tag:pets", "deletePet"]
[apps.api.override.createPet]
write = true
"#,
        spec = spec.display()
    );
    let server = Server::start(
        |dir| config(dir, &app),
        &[("APP_MCP_TOKENS", TOKEN), ("SHOP_TOKEN", "shop-secret")],
    );
    let client = connect(&server.url("/api/mcp"), "secret-token").await;
    let mut names = tool_names(&client).await;
    names.sort();
    assert_eq!(
        names,
        ["create_pet", "delete_pet", "list_pets", "show_pet_by_id"]
    );
    let tools = client.list_all_tools().await.unwrap();
    let listed =
        |name: &str| serde_json::to_value(tools.iter().find(|t| t.name == name).unwrap()).unwrap();
    let list = listed("list_pets");
    assert_eq!(list["annotations"]["readOnlyHint"], true, "{list}");
    assert_eq!(
        list["inputSchema"]["properties"]["limit"]["description"],
        "How many pets at most."
    );
    // An array answer is published under `result`.
    assert_eq!(
        list["outputSchema"]["required"],
        json!(["result"]),
        "{list}"
    );
    let create = listed("create_pet");
    let inputs = &create["inputSchema"]["properties"];
    assert!(inputs.get("idempotency_key").is_some(), "{create}");
    assert!(
        inputs.get("Idempotency-Key").is_none(),
        "the platform sends it"
    );
    // `id` is readOnly: never asked for in what is sent.
    assert!(inputs["body"]["properties"].get("id").is_none(), "{create}");
    // The cycle NewPet → friends → NewPet is cut where it closes: any value there.
    let friend = &inputs["body"]["properties"]["friends"]["items"];
    assert_eq!(*friend, json!({}), "{create}");
    // An API has no dry run of its own: none is offered.
    assert!(inputs.get("dry_run").is_none(), "{create}");
    assert_eq!(listed("delete_pet")["annotations"]["destructiveHint"], true);

    // Query arrays (form, exploded), a deepObject, a required header: Prism accepts them.
    let pets = call(
        &client,
        "list_pets",
        json!({"limit": 5, "tags": ["dog", "old"], "filter": {"colour": "black"}, "X-Shop": "main"}),
    )
    .await;
    assert_ne!(pets.is_error, Some(true), "{pets:?}");
    let structured = pets.structured_content.clone().expect("structured content");
    assert!(structured["result"].is_array(), "{structured}");

    // Checked against the document's own schema before anything is sent.
    let refused = call(&client, "list_pets", json!({"X-Shop": "elsewhere"})).await;
    assert_eq!(refused.is_error, Some(true));
    assert!(text(&refused).contains("X-Shop"), "{refused:?}");

    let pet = call(&client, "show_pet_by_id", json!({"petId": 7})).await;
    assert_ne!(pet.is_error, Some(true), "{pet:?}");
    assert!(pet.structured_content.unwrap()["name"].is_string());
    // The API's 404 is a readable error carrying its own message.
    let missing = call(
        &client,
        "show_pet_by_id",
        json!({"petId": 7, "Prefer": "code=404"}),
    )
    .await;
    assert_eq!(missing.is_error, Some(true));
    assert!(text(&missing).contains("HTTP 404"), "{missing:?}");
    assert!(text(&missing).contains("Kein Haustier"), "{missing:?}");
    // Its 500 is retryable.
    let broken = call(
        &client,
        "show_pet_by_id",
        json!({"petId": 7, "Prefer": "code=500"}),
    )
    .await;
    assert!(text(&broken).contains("\"retryable\":true"), "{broken:?}");

    // A write with the platform's idempotency key; the body as the document describes it.
    let created = call(
        &client,
        "create_pet",
        json!({"body": {"name": "Rex", "tag": "dog"}, "idempotency_key": "rex-1"}),
    )
    .await;
    assert_ne!(created.is_error, Some(true), "{created:?}");
    let removed = call(&client, "delete_pet", json!({"petId": 7})).await;
    assert_ne!(removed.is_error, Some(true), "{removed:?}");
    let lines = server.audit_lines_of("api.log", 7);
    assert!(lines.iter().any(|l| l["tool"] == "create_pet"), "{lines:?}");
    client.cancel().await.ok();
}

#[tokio::test(flavor = "multi_thread")]
async fn a_3_1_document_with_a_form_body_and_an_api_key() {
    let Some((_prism, url)) = prism("library.yaml") else {
        return;
    };
    let spec = documents().join("library.yaml");
    let app = format!(
        r#"spec = "{spec}"
base_url = "{url}"
auth = {{ api_key = "library-secret" }}
operations = ["getBook", "lendBook"]
"#,
        spec = spec.display()
    );
    let server = Server::start(|dir| config(dir, &app), &[("APP_MCP_TOKENS", TOKEN)]);
    let client = connect(&server.url("/api/mcp"), "secret-token").await;
    let book = call(&client, "get_book", json!({"isbn": "978-3-16-148410-0"})).await;
    assert_ne!(book.is_error, Some(true), "{book:?}");
    let lent = call(
        &client,
        "lend_book",
        json!({"body": {"isbn": "978-3-16-148410-0", "reader": "Anna"}}),
    )
    .await;
    assert_ne!(lent.is_error, Some(true), "{lent:?}");
    let tools = client.list_all_tools().await.unwrap();
    let book_tool = serde_json::to_value(&tools[0]).unwrap();
    assert_eq!(
        book_tool["outputSchema"]["properties"]["subtitle"]["type"],
        json!(["string", "null"]),
        "{book_tool}"
    );
    client.cancel().await.ok();
}

/// What reached the API: its headers and path, from a server of the test's own that also
/// holds one route without answering.
/// Each request's path and `Authorization` header.
type Seen = Arc<Mutex<Vec<(String, Option<String>)>>>;

async fn recorder() -> (String, Seen) {
    let seen: Seen = Arc::default();
    let kept = seen.clone();
    let app = axum::Router::new()
        .route(
            "/pets/{id}",
            axum::routing::get(
                move |uri: axum::http::Uri, headers: axum::http::HeaderMap| {
                    let kept = kept.clone();
                    async move {
                        let authorization = headers
                            .get("authorization")
                            .map(|v| v.to_str().unwrap().to_string());
                        kept.lock().unwrap().push((uri.to_string(), authorization));
                        axum::Json(json!({"id": 1, "name": "Rex"}))
                    }
                },
            ),
        )
        .route(
            "/petstore.yaml",
            axum::routing::get(|| async {
                std::fs::read_to_string(documents().join("petstore.yaml")).unwrap()
            }),
        )
        .route(
            "/pets",
            axum::routing::get(|| async {
                tokio::time::sleep(Duration::from_secs(3600)).await;
                "never"
            }),
        );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
    (base, seen)
}

#[tokio::test(flavor = "multi_thread")]
async fn the_api_sees_concierges_credentials_and_a_slow_one_times_out() {
    let (url, seen) = recorder().await;
    let spec = documents().join("petstore.yaml");
    let app = format!(
        r#"spec = "{spec}"
base_url = "{url}"
auth = {{ bearer = "shop-secret" }}
operations = ["showPetById", "listPets"]
timeout = "1s"
"#,
        spec = spec.display()
    );
    let server = Server::start(|dir| config(dir, &app), &[("APP_MCP_TOKENS", TOKEN)]);
    let client = connect(&server.url("/api/mcp"), "secret-token").await;
    let pet = call(&client, "show_pet_by_id", json!({"petId": 42})).await;
    assert_ne!(pet.is_error, Some(true), "{pet:?}");
    let (path, authorization) = seen.lock().unwrap()[0].clone();
    assert_eq!(path, "/pets/42");
    assert_eq!(authorization.as_deref(), Some("Bearer shop-secret"));
    let slow = call(&client, "list_pets", json!({"X-Shop": "main"})).await;
    assert_eq!(slow.is_error, Some(true));
    assert!(text(&slow).contains("upstream_timeout"), "{slow:?}");
    assert!(text(&slow).contains("\"retryable\":true"), "{slow:?}");
    assert!(
        !text(&slow).contains("127.0.0.1"),
        "no address reaches a client"
    );
    client.cancel().await.ok();
}

/// `check` names what is wrong before anything starts: an operation the document lacks, a
/// Swagger 2.0 document; `import openapi` prints a section that `check` accepts.
#[test]
fn check_and_import_speak_of_the_document() {
    let dir = tempfile::tempdir().unwrap();
    let spec = documents().join("petstore.yaml");
    let check = |app: &str| {
        let path = dir.path().join("concierge.toml");
        std::fs::write(&path, config(dir.path(), app)).unwrap();
        std::process::Command::new(BIN)
            .args(["check", "--config"])
            .arg(&path)
            .env("APP_MCP_TOKENS", TOKEN)
            .output()
            .unwrap()
    };
    let unknown = check(&format!(
        "spec = \"{}\"\noperations = [\"listPets\", \"adoptPet\"]\n",
        spec.display()
    ));
    assert!(!unknown.status.success());
    let said = String::from_utf8_lossy(&unknown.stderr).to_string()
        + &String::from_utf8_lossy(&unknown.stdout);
    assert!(said.contains("adoptPet"), "{said}");
    let swagger = dir.path().join("swagger.json");
    std::fs::write(&swagger, r#"{"swagger": "2.0", "paths": {}}"#).unwrap();
    let old = check(&format!(
        "spec = \"{}\"\noperations = [\"x\"]\n",
        swagger.display()
    ));
    let said =
        String::from_utf8_lossy(&old.stderr).to_string() + &String::from_utf8_lossy(&old.stdout);
    assert!(said.contains("Swagger 2.0"), "{said}");
    // A document that does not parse is named with where it broke.
    let broken = dir.path().join("broken.yaml");
    std::fs::write(&broken, "openapi: 3.0.3\npaths:\n  /x: [unclosed\n").unwrap();
    let unparsed = check(&format!(
        "spec = \"{}\"\noperations = [\"x\"]\n",
        broken.display()
    ));
    assert!(!unparsed.status.success());
    let said = String::from_utf8_lossy(&unparsed.stderr).to_string()
        + &String::from_utf8_lossy(&unparsed.stdout);
    assert!(
        said.contains("broken.yaml") && said.contains("line"),
        "{said}"
    );

    let imported = std::process::Command::new(BIN)
        .args(["import", "openapi"])
        .arg(&spec)
        .args(["--tag", "pets", "--name", "api"])
        .output()
        .unwrap();
    assert!(imported.status.success(), "{imported:?}");
    let section = String::from_utf8(imported.stdout).unwrap();
    assert!(section.contains("tokens"), "{section}");
    assert!(
        section.contains("  # \"deletePet\""),
        "not chosen: commented out\n{section}"
    );
    let body = section
        .lines()
        .filter(|l| !l.starts_with("[apps.api]") && !l.starts_with("kind ="))
        .collect::<Vec<_>>()
        .join("\n");
    let accepted = check(&body);
    assert!(
        accepted.status.success(),
        "{}\n{section}",
        String::from_utf8_lossy(&accepted.stderr)
    );
}

/// GitHub's own document (npm `@octokit/openapi`, 1,000+ operations, cyclic refs): a handful of
/// operations chosen from it check, within bounds.
#[test]
fn a_handful_of_githubs_operations() {
    let Some(spec) = std::env::var_os("CONCIERGE_TEST_GITHUB_SPEC") else {
        eprintln!("no GitHub document here (scripts/openapi-specs.sh): skipped");
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("concierge.toml");
    let app = format!(
        "spec = \"{}\"\noperations = [\"repos/get\", \"issues/list-for-repo\", \"repos/get-content\", \"pulls/create\"]\n",
        Path::new(&spec).display()
    );
    std::fs::write(&path, config(dir.path(), &app)).unwrap();
    let started = std::time::Instant::now();
    let checked = std::process::Command::new(BIN)
        .args(["check", "--config"])
        .arg(&path)
        .env("APP_MCP_TOKENS", TOKEN)
        .output()
        .unwrap();
    eprintln!("check with GitHub's document: {:?}", started.elapsed());
    assert!(
        checked.status.success(),
        "{}",
        String::from_utf8_lossy(&checked.stderr)
    );
}

/// A document named by URL: read when the server starts (its tools served from it), by
/// `check --live`, and never by a plain `check`, which needs no network.
#[tokio::test(flavor = "multi_thread")]
async fn a_document_read_from_a_url() {
    let (url, seen) = recorder().await;
    let app = format!(
        r#"spec = "{url}/petstore.yaml"
base_url = "{url}"
auth = {{ bearer = "shop-secret" }}
operations = ["showPetById"]
"#
    );
    let server = Server::start(|dir| config(dir, &app), &[("APP_MCP_TOKENS", TOKEN)]);
    let client = connect(&server.url("/api/mcp"), "secret-token").await;
    let pet = call(&client, "show_pet_by_id", json!({"petId": 3})).await;
    assert_ne!(pet.is_error, Some(true), "{pet:?}");
    assert_eq!(seen.lock().unwrap()[0].0, "/pets/3");
    client.cancel().await.ok();

    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("concierge.toml");
    let check = |app: &str, live: bool| {
        std::fs::write(&path, config(dir.path(), app)).unwrap();
        let mut command = std::process::Command::new(BIN);
        command.args(["check", "--config"]).arg(&path);
        if live {
            command.arg("--live");
        }
        command.env("APP_MCP_TOKENS", TOKEN).output().unwrap()
    };
    let unreachable = "spec = \"http://127.0.0.1:9/petstore.yaml\"\nbase_url = \"http://127.0.0.1:9\"\noperations = [\"showPetById\"]\n";
    let plain = check(unreachable, false);
    assert!(plain.status.success(), "{plain:?}");
    let live = check(unreachable, true);
    assert!(!live.status.success(), "{live:?}");
    let said =
        String::from_utf8_lossy(&live.stdout).to_string() + &String::from_utf8_lossy(&live.stderr);
    assert!(said.contains("could not be read"), "{said}");
    let elsewhere = check(
        "spec = \"http://example.com/petstore.yaml\"\noperations = [\"showPetById\"]\n",
        false,
    );
    assert!(!elsewhere.status.success());
    let said = String::from_utf8_lossy(&elsewhere.stdout).to_string()
        + &String::from_utf8_lossy(&elsewhere.stderr);
    assert!(said.contains("use https"), "{said}");
    // A document from a URL does not choose where concierge's credentials go.
    let unpointed = check(
        "spec = \"http://127.0.0.1:9/petstore.yaml\"\noperations = [\"showPetById\"]\n",
        false,
    );
    assert!(!unpointed.status.success());
    let said = String::from_utf8_lossy(&unpointed.stdout).to_string()
        + &String::from_utf8_lossy(&unpointed.stderr);
    assert!(said.contains("set `base_url`"), "{said}");
}

/// `auth.oauth`: concierge's own token from the API's authorization server (client
/// credentials), fetched once and reused while it lives.
#[tokio::test(flavor = "multi_thread")]
async fn the_api_gets_concierges_own_oauth_token() {
    let (url, seen) = recorder().await;
    let grants = Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let counted = grants.clone();
    let authority = axum::Router::new().route(
        "/token",
        axum::routing::post(
            move |headers: axum::http::HeaderMap, body: String| {
                let counted = counted.clone();
                async move {
                    use base64::Engine;
                    let expected = format!(
                        "Basic {}",
                        base64::engine::general_purpose::STANDARD.encode("concierge:client-secret")
                    );
                    if headers.get("authorization").map(|v| v.to_str().unwrap()) != Some(&expected)
                        || !body.contains("grant_type=client_credentials")
                    {
                        return (axum::http::StatusCode::UNAUTHORIZED, axum::Json(json!({"error": "invalid_client"})));
                    }
                    counted.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
                    (
                        axum::http::StatusCode::OK,
                        axum::Json(json!({"access_token": "granted-token", "token_type": "Bearer", "expires_in": 3600})),
                    )
                }
            },
        ),
    );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let token_url = format!("http://{}/token", listener.local_addr().unwrap());
    tokio::spawn(async move { axum::serve(listener, authority).await.unwrap() });
    let spec = documents().join("petstore.yaml");
    let app = format!(
        r#"spec = "{spec}"
base_url = "{url}"
auth = {{ oauth = {{ client_id = "concierge", client_secret = "client-secret", token_url = "{token_url}" }} }}
operations = ["showPetById"]
"#,
        spec = spec.display()
    );
    let server = Server::start(|dir| config(dir, &app), &[("APP_MCP_TOKENS", TOKEN)]);
    let client = connect(&server.url("/api/mcp"), "secret-token").await;
    for id in [1, 2] {
        let pet = call(&client, "show_pet_by_id", json!({ "petId": id })).await;
        assert_ne!(pet.is_error, Some(true), "{pet:?}");
    }
    let seen = seen.lock().unwrap().clone();
    assert!(
        seen.iter()
            .all(|(_, auth)| auth.as_deref() == Some("Bearer granted-token")),
        "{seen:?}"
    );
    assert_eq!(
        grants.load(std::sync::atomic::Ordering::SeqCst),
        1,
        "the token is reused"
    );
    client.cancel().await.ok();
}

/// Every request that reached the files API: its path, and its `X-Trace` and `Cookie` headers.
type Reached = Arc<Mutex<Vec<(String, Option<String>, Option<String>)>>>;

/// The files API (`files.yaml`): answers any path, recording it, so a request that went
/// elsewhere than its operation shows; a pet's answer holds a null.
async fn files_api() -> (String, Reached) {
    let reached: Reached = Arc::default();
    let kept = reached.clone();
    let app = axum::Router::new().fallback(
        move |uri: axum::http::Uri, headers: axum::http::HeaderMap| {
            let kept = kept.clone();
            async move {
                let header = |name: &str| {
                    headers
                        .get(name)
                        .map(|v| String::from_utf8_lossy(v.as_bytes()).into_owned())
                };
                let path = uri.path().to_string();
                kept.lock()
                    .unwrap()
                    .push((path.clone(), header("x-trace"), header("cookie")));
                if path.starts_with("/pets/") {
                    axum::Json(json!({"id": 1, "name": "Rex", "microchip": null}))
                } else {
                    axum::Json(json!({ "path": path }))
                }
            }
        },
    );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
    (base, reached)
}

fn files_app(url: &str) -> String {
    format!(
        "spec = \"{spec}\"\nbase_url = \"{url}\"\noperations = [\"fileMeta\", \"bundleMeta\", \"showPet\"]\n",
        spec = documents().join("files.yaml").display()
    )
}

/// The `error` of a refused call's JSON text.
fn error_of(result: &rmcp::model::CallToolResult) -> serde_json::Value {
    assert_eq!(result.is_error, Some(true), "{result:?}");
    serde_json::from_str::<serde_json::Value>(&text(result)).unwrap()["error"].clone()
}

/// A path is judged once its parameters are expanded: a segment left empty, `.` or `..` would
/// reach another operation (`/files/{name}/meta` with a label-style `""` is `/files/./meta`,
/// read as `/files/meta`, which was not chosen), so the caller is told and nothing is sent.
#[tokio::test(flavor = "multi_thread")]
async fn no_argument_expands_into_another_path() {
    let (url, reached) = files_api().await;
    let app = files_app(&url);
    let server = Server::start(|dir| config(dir, &app), &[("APP_MCP_TOKENS", TOKEN)]);
    let client = connect(&server.url("/api/mcp"), "secret-token").await;
    for (tool, arguments, field) in [
        ("file_meta", json!({"name": ""}), "name"),
        ("file_meta", json!({"name": "."}), "name"),
        ("bundle_meta", json!({"parts": [".."]}), "parts"),
        ("bundle_meta", json!({"parts": ["."]}), "parts"),
        ("bundle_meta", json!({"parts": []}), "parts"),
    ] {
        let error = error_of(&call(&client, tool, arguments.clone()).await);
        assert_eq!(error["code"], "invalid_argument", "{arguments}: {error}");
        assert_eq!(error["field"], field, "{arguments}: {error}");
        let message = error["message"].as_str().unwrap();
        assert!(
            message.contains("empty, `.` or `..`"),
            "{arguments}: {message}"
        );
    }
    assert!(reached.lock().unwrap().is_empty(), "{reached:?}");
    let file = call(&client, "file_meta", json!({"name": "report"})).await;
    assert_ne!(file.is_error, Some(true), "{file:?}");
    let bundle = call(&client, "bundle_meta", json!({"parts": ["a", ".."]})).await;
    assert_ne!(bundle.is_error, Some(true), "{bundle:?}");
    let paths: Vec<String> = reached
        .lock()
        .unwrap()
        .iter()
        .map(|r| r.0.clone())
        .collect();
    assert_eq!(paths, ["/files/.report/meta", "/bundles/a,../meta"]);
    client.cancel().await.ok();
}

/// A header's or a cookie's value with a control character is the caller's mistake, named as
/// theirs, not an API that cannot be reached; nothing is sent.
#[tokio::test(flavor = "multi_thread")]
async fn a_control_character_in_a_header_or_cookie_names_the_argument() {
    let (url, reached) = files_api().await;
    let app = files_app(&url);
    let server = Server::start(|dir| config(dir, &app), &[("APP_MCP_TOKENS", TOKEN)]);
    let client = connect(&server.url("/api/mcp"), "secret-token").await;
    for (arguments, field) in [
        (json!({"name": "a", "X-Trace": "t\u{0}1"}), "X-Trace"),
        (
            json!({"name": "a", "X-Trace": "t\r\nHost: elsewhere"}),
            "X-Trace",
        ),
        (json!({"name": "a", "X-Trace": "t\u{1b}[1m"}), "X-Trace"),
        (json!({"name": "a", "session": "s\n1"}), "session"),
        (json!({"name": "a", "session": "s\u{0}1"}), "session"),
    ] {
        let error = error_of(&call(&client, "file_meta", arguments.clone()).await);
        assert_eq!(error["code"], "invalid_argument", "{arguments}: {error}");
        assert_eq!(error["field"], field, "{arguments}: {error}");
    }
    assert!(reached.lock().unwrap().is_empty(), "{reached:?}");
    let fine = call(
        &client,
        "file_meta",
        json!({"name": "a", "X-Trace": "t 1", "session": "s 1"}),
    )
    .await;
    assert_ne!(fine.is_error, Some(true), "{fine:?}");
    let (_, trace, cookie) = reached.lock().unwrap()[0].clone();
    assert_eq!(trace.as_deref(), Some("t 1"));
    assert_eq!(cookie.as_deref(), Some("session=s%201"));
    client.cancel().await.ok();
}

/// The API's JSON is handed on as it came: a null field stays, in the structured content and
/// in the text, and the result still fits the schema the tool publishes.
#[tokio::test(flavor = "multi_thread")]
async fn the_apis_nulls_are_handed_on() {
    let (url, _) = files_api().await;
    let app = files_app(&url);
    let server = Server::start(|dir| config(dir, &app), &[("APP_MCP_TOKENS", TOKEN)]);
    let client = connect(&server.url("/api/mcp"), "secret-token").await;
    let pet = call(&client, "show_pet", json!({"petId": 1})).await;
    assert_ne!(pet.is_error, Some(true), "{pet:?}");
    let expected = json!({"id": 1, "name": "Rex", "microchip": null});
    assert_eq!(pet.structured_content, Some(expected.clone()));
    let said: serde_json::Value = serde_json::from_str(&text(&pet)).unwrap();
    assert_eq!(said, expected);
    let tools = client.list_all_tools().await.unwrap();
    let show = tools.iter().find(|t| t.name == "show_pet").unwrap();
    let schema = serde_json::to_value(&show.output_schema).unwrap();
    assert_eq!(
        schema["properties"]["microchip"]["type"],
        json!(["string", "null"]),
        "{schema}"
    );
    client.cancel().await.ok();
}
