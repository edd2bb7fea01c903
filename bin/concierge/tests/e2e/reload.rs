//! Changing a running deployment (docs/src/guides/reload.md): the config and the
//! files it names edited while the server serves, applied by `concierge reload`, SIGHUP or the
//! watcher — tokens revoked at once with their sessions, tools added with `list_changed` to an
//! open session, a broken config refused while the running one serves on, and no growth over
//! a hundred reloads (and a hundred that rebuild an instance).
//!
//! Over 600 lines: one area's end-to-end scenarios (every way a running deployment changes);
//! each test reads alone.

use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};

use rmcp::RoleClient;
use rmcp::model::CallToolRequestParams;
use rmcp::service::RunningService;
use serde_json::{Value, json};

use crate::common::{BIN, Server, call, coffee_app, connect, tool_names};
use crate::federation::{Heard, connect_hearing};

/// A coffee deployment whose tokens are in `mcp-tokens` beside the config, with `tools` served.
fn config(dir: &Path, tools: &str, description: &str) -> String {
    format!(
        r#"
[server]
listen = "127.0.0.1:0"

{coffee}
[[endpoint]]
path = "/coffee/mcp"
tools = [{tools}]
instructions = "{description}"
auth = {{ kind = "tokens", file = "mcp-tokens" }}
"#,
        coffee = coffee_app(&dir.join("coffee/orders.xlsx")),
    )
}

fn write_tokens(dir: &Path, lines: &str) {
    let path = dir.join("mcp-tokens");
    let partial = dir.join("mcp-tokens.partial");
    std::fs::write(&partial, lines).unwrap();
    std::fs::set_permissions(&partial, std::fs::Permissions::from_mode(0o600)).unwrap();
    // Replaced whole, as a deploy tool or a Kubernetes secret does.
    std::fs::rename(partial, path).unwrap();
}

fn start(tools: &str) -> Server {
    Server::start(
        |dir| {
            write_tokens(dir, "alice:token-alice\n");
            config(dir, tools, "Coffee.")
        },
        &[],
    )
}

/// `concierge reload` for `server`: its exit status and what it said.
fn reload(server: &Server) -> (bool, String) {
    let out = std::process::Command::new(BIN)
        .args(["reload", "--config"])
        .arg(server.dir.path().join("concierge.toml"))
        .output()
        .unwrap();
    let said =
        String::from_utf8_lossy(&out.stdout).to_string() + &String::from_utf8_lossy(&out.stderr);
    (out.status.success(), said)
}

/// A call of `tool` without arguments answered without an error.
async fn answers(client: &rmcp::service::RunningService<RoleClient, ()>, tool: &str) -> bool {
    call(client, tool, json!({})).await.is_error == Some(false)
}

async fn listed(client: &RunningService<RoleClient, Heard>) -> Vec<String> {
    let tools = client.list_all_tools().await.expect("tools/list answered");
    tools.into_iter().map(|t| t.name.to_string()).collect()
}

async fn health(server: &Server) -> Value {
    reqwest::get(server.url("/health"))
        .await
        .unwrap()
        .json()
        .await
        .unwrap()
}

#[tokio::test]
async fn a_token_added_then_removed_is_refused_at_once_and_its_session_closed() {
    let server = start(r#""coffee.*""#);
    let url = server.url("/coffee/mcp");
    let alice = connect(&url, "token-alice").await;
    assert!(answers(&alice, "get_menu").await);

    write_tokens(server.dir.path(), "alice:token-alice\nbob:token-bob\n");
    let (applied, said) = reload(&server);
    assert!(applied, "{said}");
    let bob = connect(&url, "token-bob").await;
    assert!(answers(&bob, "get_menu").await);
    // The same session goes on across the reload.
    assert!(answers(&alice, "get_menu").await);

    write_tokens(server.dir.path(), "bob:token-bob\n");
    let (applied, said) = reload(&server);
    assert!(applied, "{said}");
    // Alice's session is gone, and her token with it.
    let refused = alice
        .call_tool(CallToolRequestParams::new("get_menu"))
        .await;
    assert!(refused.is_err(), "{refused:?}");
    let status = reqwest::Client::new()
        .post(&url)
        .bearer_auth("token-alice")
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .body(r#"{"jsonrpc":"2.0","id":1,"method":"tools/list"}"#)
        .send()
        .await
        .unwrap()
        .status();
    assert_eq!(status, 401);
    assert!(answers(&bob, "get_menu").await);
    let health = health(&server).await;
    assert_eq!(health["config"]["status"], "applied", "{health}");
    assert_eq!(health["config"]["generation"], 2, "{health}");
}

#[tokio::test]
async fn a_tool_added_to_an_endpoint_is_announced_to_an_open_session() {
    let server = start(r#""coffee.get_menu""#);
    let url = server.url("/coffee/mcp");
    let (client, heard) = connect_hearing(&url, "token-alice").await;
    assert_eq!(listed(&client).await, ["get_menu"]);

    let path = server.dir.path().join("concierge.toml");
    std::fs::write(
        &path,
        config(
            server.dir.path(),
            r#""coffee.get_menu", "coffee.search_menu""#,
            "Coffee, and a search.",
        ),
    )
    .unwrap();
    // The watcher sees the file change; no command is needed.
    heard.list_changed_after("the config changed").await;
    assert_eq!(listed(&client).await, ["get_menu", "search_menu"]);
    let found = client
        .call_tool(
            CallToolRequestParams::new("search_menu")
                .with_arguments(json!({"query": "кокос"}).as_object().unwrap().clone()),
        )
        .await
        .unwrap();
    assert_eq!(found.is_error, Some(false));
    client.cancel().await.ok();
    // A new session is told the new instructions.
    let fresh = connect(&url, "token-alice").await;
    assert_eq!(
        fresh
            .peer_info()
            .and_then(|i| i.instructions.clone())
            .as_deref(),
        Some("Coffee, and a search.")
    );
}

#[tokio::test]
async fn a_broken_config_changes_nothing_and_the_next_good_one_applies() {
    let server = start(r#""coffee.*""#);
    let url = server.url("/coffee/mcp");
    let client = connect(&url, "token-alice").await;
    let path = server.dir.path().join("concierge.toml");
    let good = std::fs::read_to_string(&path).unwrap();
    std::fs::write(
        &path,
        good.replace(r#"tools = ["coffee.*"]"#, r#"tools = ["coffee.nope"]"#),
    )
    .unwrap();
    let (applied, said) = reload(&server);
    assert!(!applied, "{said}");
    assert!(
        said.contains("rejected") && said.contains("coffee.nope"),
        "{said}"
    );
    let report = health(&server).await;
    assert_eq!(report["status"], "ok", "{report}");
    assert_eq!(report["config"]["status"], "rejected", "{report}");
    assert!(
        report["config"]["error"]
            .as_str()
            .unwrap()
            .contains("coffee.nope"),
        "{report}"
    );
    // Still serving what it served.
    assert_eq!(tool_names(&client).await.len(), 4);
    assert!(answers(&client, "get_menu").await);

    // A misspelt key in a section no endpoint serves: `check` refuses it (it reads the whole
    // file against the schema), and so does a reload.
    std::fs::write(
        &path,
        format!(
            "{good}\n[apps.spare]\nkind = \"sql\"\nurl = \"spare.db\"\nstatment_timeout = \"5s\"\n"
        ),
    )
    .unwrap();
    let (applied, said) = reload(&server);
    assert!(!applied, "{said}");
    assert!(said.contains("statment_timeout"), "{said}");
    assert_eq!(tool_names(&client).await.len(), 4);

    std::fs::write(
        &path,
        good.replace(r#"tools = ["coffee.*"]"#, r#"tools = ["coffee.get_menu"]"#),
    )
    .unwrap();
    let (applied, said) = reload(&server);
    assert!(applied, "{said}");
    assert_eq!(tool_names(&client).await, ["get_menu"]);
    assert_eq!(health(&server).await["config"]["status"], "applied");
}

/// Descriptors, threads and resident memory of the server process.
fn footprint(server: &Server) -> (usize, usize, u64) {
    let pid = server.child.id();
    let fds = std::fs::read_dir(format!("/proc/{pid}/fd"))
        .unwrap()
        .count();
    let threads = std::fs::read_dir(format!("/proc/{pid}/task"))
        .unwrap()
        .count();
    (fds, threads, server.rss_kib())
}

/// Each config written in turn as `server`'s file and applied by `concierge reload`.
fn reload_each(server: &Server, configs: impl IntoIterator<Item = String>) {
    let path = server.dir.path().join("concierge.toml");
    for text in configs {
        std::fs::write(&path, text).unwrap();
        let (applied, said) = reload(server);
        assert!(applied, "{said}");
    }
}

#[tokio::test]
async fn a_hundred_reloads_leave_nothing_behind() {
    let server = start(r#""coffee.*""#);
    let url = server.url("/coffee/mcp");
    let client = connect(&url, "token-alice").await;
    let warm = |i: usize| config(server.dir.path(), r#""coffee.*""#, &format!("Coffee {i}."));
    // A few first: allocators and pools settle.
    reload_each(&server, (0..5).map(warm));
    let before = footprint(&server);
    reload_each(&server, (0..100).map(warm));
    assert!(answers(&client, "get_menu").await);
    let after = footprint(&server);
    eprintln!("before {before:?}, after {after:?} (descriptors, threads, RSS KiB)");
    assert!(
        after.0 <= before.0 + 2,
        "descriptors grew: {before:?} -> {after:?}"
    );
    assert!(after.1 <= before.1, "threads grew: {before:?} -> {after:?}");
    assert!(
        after.2 <= before.2 + 4096,
        "memory grew: {before:?} -> {after:?}"
    );
}

/// The same with an instance built anew by every reload (a SQL tool's description changes):
/// each reload opens a pool (SQLite's worker thread, the file's descriptors) and retires the
/// one before, which must end with nothing left of it.
#[tokio::test]
async fn a_hundred_rebuilt_instances_leave_nothing_behind() {
    const SQL: &str = "SELECT name FROM drinks ORDER BY name";
    let server = Server::start(
        |dir| {
            write_tokens(dir, "alice:token-alice\n");
            sql_config(dir, "The drinks.", SQL)
        },
        &[],
    );
    let client = connect(&server.url("/bar/mcp"), "token-alice").await;
    let rebuilt = |i: usize| sql_config(server.dir.path(), &format!("The drinks ({i})."), SQL);
    reload_each(&server, (0..5).map(rebuilt));
    let before = footprint(&server);
    reload_each(&server, (5..105).map(rebuilt));
    assert!(answers(&client, "drinks").await);
    // The last retired pool closes beside the reload that replaced it: its end is awaited, not
    // assumed.
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let after = footprint(&server);
        if after.0 <= before.0 + 2 && after.1 <= before.1 && after.2 <= before.2 + 4096 {
            eprintln!("before {before:?}, after {after:?} (descriptors, threads, RSS KiB)");
            break;
        }
        assert!(
            Instant::now() < deadline,
            "grew across 100 rebuilt instances: {before:?} -> {after:?} (descriptors, threads, RSS KiB)"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// A SQL instance on a SQLite file made from a script: one tool with `description` and `sql`.
fn sql_config(dir: &Path, description: &str, sql: &str) -> String {
    std::fs::write(
        dir.join("drinks.sql"),
        "CREATE TABLE drinks (name TEXT NOT NULL);\n\
         INSERT INTO drinks VALUES ('latte'), ('mocha'), ('lungo');\n",
    )
    .unwrap();
    format!(
        r#"
[server]
listen = "127.0.0.1:0"

[apps.bar]
kind = "sql"
url = "sqlite://{database}"
create_from = "{script}"

[[apps.bar.tool]]
name = "drinks"
description = "{description}"
sql = "{sql}"

[[endpoint]]
path = "/bar/mcp"
tools = ["bar.*"]
auth = {{ kind = "tokens", file = "mcp-tokens" }}
"#,
        database = dir.join("bar.db").display(),
        script = dir.join("drinks.sql").display(),
    )
}

#[tokio::test]
async fn a_sql_tools_statement_and_description_change_in_place() {
    let server = Server::start(
        |dir| {
            write_tokens(dir, "alice:token-alice\n");
            sql_config(dir, "Every drink.", "SELECT name FROM drinks ORDER BY name")
        },
        &[],
    );
    let (client, heard) = connect_hearing(&server.url("/bar/mcp"), "token-alice").await;
    let rows = |result: rmcp::model::CallToolResult| {
        serde_json::to_string(&result.structured_content).unwrap()
    };
    let all = client
        .call_tool(CallToolRequestParams::new("drinks"))
        .await
        .unwrap();
    assert!(rows(all.clone()).contains("mocha"), "{all:?}");

    std::fs::write(
        server.dir.path().join("concierge.toml"),
        sql_config(
            server.dir.path(),
            "The drinks that start with an l.",
            "SELECT name FROM drinks WHERE name LIKE 'l%' ORDER BY name",
        ),
    )
    .unwrap();
    let (applied, said) = reload(&server);
    assert!(applied, "{said}");
    let tools = client.list_all_tools().await.unwrap();
    assert_eq!(
        tools[0].description.as_deref(),
        Some("The drinks that start with an l.")
    );
    let some = client
        .call_tool(CallToolRequestParams::new("drinks"))
        .await
        .unwrap();
    let some = rows(some);
    assert!(some.contains("latte") && some.contains("lungo"), "{some}");
    assert!(!some.contains("mocha"), "{some}");
    // The description changed what the session is listed: it was told.
    assert!(heard.list_changed.load(std::sync::atomic::Ordering::SeqCst) >= 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn calls_under_a_steady_load_never_fail_across_reloads() {
    let server = start(r#""coffee.*""#);
    let url = server.url("/coffee/mcp");
    let stop = Arc::new(std::sync::atomic::AtomicBool::new(false));
    let mut load = Vec::new();
    for _ in 0..4 {
        let client = connect(&url, "token-alice").await;
        let stop = stop.clone();
        load.push(tokio::spawn(async move {
            let mut answered = 0usize;
            while !stop.load(std::sync::atomic::Ordering::SeqCst) {
                let result = call(&client, "search_menu", json!({"query": "кокос"})).await;
                assert_eq!(result.is_error, Some(false), "{result:?}");
                answered += 1;
            }
            client.cancel().await.ok();
            answered
        }));
    }
    let path = server.dir.path().join("concierge.toml");
    for i in 0..20 {
        // Alternately one tool more and one less than the calls need; the calls' tool stays.
        let tools = if i % 2 == 0 {
            r#""coffee.search_menu", "coffee.get_menu""#
        } else {
            r#""coffee.*""#
        };
        std::fs::write(
            &path,
            config(server.dir.path(), tools, &format!("Coffee {i}.")),
        )
        .unwrap();
        let (applied, said) = reload(&server);
        assert!(applied, "{said}");
    }
    stop.store(true, std::sync::atomic::Ordering::SeqCst);
    let mut answered = 0;
    for task in load {
        answered += task.await.expect("no call failed");
    }
    assert!(answered > 20, "{answered} calls answered");
    eprintln!("{answered} calls answered across 20 reloads, none failed");
}

/// A federated stdio server through reloads: an unchanged instance is not restarted (the same
/// child serves on), a changed one is replaced (the old child ends), a removed one ends — no
/// child left behind.
#[tokio::test]
async fn a_stdio_servers_child_is_kept_replaced_and_ended_with_its_instance() {
    let Some(folder) = crate::federation::upstreams() else {
        return;
    };
    let program = crate::federation::program(&folder, "mcp-server-filesystem");
    let files = |dir: &Path, tools: &str, shared: &str| {
        std::fs::create_dir_all(dir.join(shared)).unwrap();
        std::fs::write(dir.join(shared).join("note.txt"), "a note\n").unwrap();
        format!(
            r#"
[server]
listen = "127.0.0.1:0"

[apps.files]
kind = "mcp"
command = ["{program}", "{root}"]
tools = ["read_text_file", "list_directory"]

[[endpoint]]
path = "/files/mcp"
tools = [{tools}]
auth = {{ kind = "tokens", file = "mcp-tokens" }}
"#,
            root = dir.join(shared).display(),
        )
    };
    let server = Server::start(
        |dir| {
            write_tokens(dir, "alice:token-alice\n");
            files(dir, r#""files.*""#, "one")
        },
        &[],
    );
    let dir = server.dir.path().to_path_buf();
    let own = server.child.id() as i32;
    let children = || {
        let mut pids = crate::federation::pids_with(&dir.display().to_string());
        pids.retain(|pid| *pid != own);
        pids
    };
    let client = connect(&server.url("/files/mcp"), "token-alice").await;
    let read = |name: &str| json!({"path": dir.join(name).display().to_string()});
    assert_eq!(
        call(&client, "read_text_file", read("one/note.txt"))
            .await
            .is_error,
        None,
        "the server's own answer, handed on unchanged"
    );
    let first = children();
    assert_eq!(first.len(), 1, "{first:?}");

    // The endpoint changes, the instance does not: the same child.
    let path = dir.join("concierge.toml");
    std::fs::write(&path, files(&dir, r#""files.read_text_file""#, "one")).unwrap();
    assert!(reload(&server).0);
    assert_eq!(children(), first);
    assert_eq!(
        call(&client, "read_text_file", read("one/note.txt"))
            .await
            .is_error,
        None,
        "the server's own answer, handed on unchanged"
    );

    // The instance changes: a new child, the old one gone.
    std::fs::write(&path, files(&dir, r#""files.read_text_file""#, "two")).unwrap();
    assert!(reload(&server).0);
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let now = children();
        if now.len() == 1 && now != first {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "children {now:?} after {first:?}"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let answer = call(&client, "read_text_file", read("two/note.txt")).await;
        if answer.is_error != Some(true) {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "{answer:?}\nthe server's log:\n{}",
            server.log_tail()
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }

    // The instance goes: no child left.
    std::fs::write(
        &path,
        config(&dir, r#""coffee.get_menu""#, "Coffee instead."),
    )
    .unwrap();
    assert!(reload(&server).0);
    let deadline = Instant::now() + Duration::from_secs(10);
    while !children().is_empty() {
        assert!(Instant::now() < deadline, "children left: {:?}", children());
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// An OpenAPI instance built from a document beside the config: the document is an input of
/// the config, so editing it reloads the instance (the watcher sees it) and the open session
/// is told.
#[tokio::test]
async fn an_edited_openapi_document_reloads_its_instance() {
    let petstore = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/e2e/openapi/petstore.yaml");
    let server = Server::start(
        |dir| {
            write_tokens(dir, "alice:token-alice\n");
            std::fs::copy(&petstore, dir.join("petstore.yaml")).unwrap();
            r#"
[server]
listen = "127.0.0.1:0"

[apps.pets]
kind = "openapi"
spec = "petstore.yaml"
base_url = "http://127.0.0.1:9"
operations = ["listPets"]

[[endpoint]]
path = "/pets/mcp"
tools = ["pets.*"]
auth = { kind = "tokens", file = "mcp-tokens" }
"#
            .to_string()
        },
        &[],
    );
    let (client, heard) = connect_hearing(&server.url("/pets/mcp"), "token-alice").await;
    let description = |tools: Vec<rmcp::model::Tool>| {
        tools[0]
            .description
            .as_deref()
            .unwrap_or_default()
            .to_string()
    };
    let before = description(client.list_all_tools().await.unwrap());
    assert!(before.contains("filtered by tags"), "{before}");

    let spec = server.dir.path().join("petstore.yaml");
    let text = std::fs::read_to_string(&spec).unwrap().replace(
        "Pets in the shop, filtered by tags and colour.",
        "Every pet of the shop, by tag and colour.",
    );
    std::fs::write(server.dir.path().join("petstore.partial"), text).unwrap();
    std::fs::rename(server.dir.path().join("petstore.partial"), &spec).unwrap();
    heard.list_changed_after("the document changed").await;
    let after = description(client.list_all_tools().await.unwrap());
    assert!(after.contains("Every pet of the shop"), "{after}");
}

/// A limit's budget survives a reload that leaves the limit as it was: a reload is no way
/// around it.
#[tokio::test]
async fn a_reload_does_not_reset_a_limits_budget() {
    let limited = |dir: &Path, description: &str| {
        config(dir, r#""coffee.*""#, description)
            .replace("auth = {", "rate_limit = \"three\"\nauth = {")
            + "\n[limits]\nthree = \"3/minute\"\n"
    };
    let server = Server::start(
        |dir| {
            write_tokens(dir, "alice:token-alice\n");
            limited(dir, "Coffee.")
        },
        &[],
    );
    let client = connect(&server.url("/coffee/mcp"), "token-alice").await;
    for _ in 0..3 {
        assert!(answers(&client, "get_menu").await);
    }
    std::fs::write(
        server.dir.path().join("concierge.toml"),
        limited(server.dir.path(), "Coffee, reloaded."),
    )
    .unwrap();
    let (applied, said) = reload(&server);
    assert!(applied, "{said}");
    let refused = call(&client, "get_menu", json!({})).await;
    assert_eq!(refused.is_error, Some(true), "{refused:?}");
    assert!(
        serde_json::to_string(&refused.content)
            .unwrap()
            .contains("rate_limited"),
        "{refused:?}"
    );
}

/// A reload rejected by an instance's live check (a federated server lacks a listed tool)
/// changes nothing and leaves nothing of the rejected config running: the server the check
/// started is stopped with it.
#[tokio::test]
async fn a_rejected_federated_instance_leaves_no_child_behind() {
    let Some(folder) = crate::federation::upstreams() else {
        return;
    };
    let server = start(r#""coffee.*""#);
    let dir = server.dir.path().to_path_buf();
    std::fs::create_dir_all(dir.join("rejected")).unwrap();
    let broken = config(&dir, r#""coffee.*", "files.*""#, "Coffee.")
        + &format!(
            r#"
[apps.files]
kind = "mcp"
command = ["{program}", "{root}"]
tools = ["read_text_file", "no_such_tool"]
"#,
            program = crate::federation::program(&folder, "mcp-server-filesystem"),
            root = dir.join("rejected").display(),
        );
    std::fs::write(dir.join("concierge.toml"), broken).unwrap();
    let (applied, said) = reload(&server);
    assert!(!applied, "{said}");
    assert!(said.contains("no_such_tool"), "{said}");
    let needle = dir.join("rejected").display().to_string();
    let deadline = Instant::now() + Duration::from_secs(10);
    while !crate::federation::pids_with(&needle).is_empty() {
        assert!(
            Instant::now() < deadline,
            "the rejected config's server still runs"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let client = connect(&server.url("/coffee/mcp"), "token-alice").await;
    assert_eq!(tool_names(&client).await.len(), 4);
}

/// A token revoked while its holder keeps calling is refused within a bound: the audit log
/// beside the tokens file, written on every call, is no change of a file the config names, so
/// it never holds the watcher's reload back.
#[tokio::test]
async fn a_revoked_token_is_refused_while_its_holder_keeps_calling() {
    let server = Server::start(
        |dir| {
            write_tokens(dir, "alice:token-alice\nbob:token-bob\n");
            config(dir, r#""coffee.*""#, "Coffee.")
                .replace("auth = {", "audit = \"calls\"\nauth = {")
                + &format!(
                    "\n[audit.calls]\npath = \"{}\"\n",
                    dir.join("calls.log").display()
                )
        },
        &[],
    );
    let url = server.url("/coffee/mcp");
    let raw = crate::common::Raw::new();
    let session = raw.open_session(&url, "token-alice").await;
    let mut id = 1;
    let mut calls = async || {
        id += 1;
        raw.post(
            &url,
            Some("token-alice"),
            Some(&session),
            crate::common::tools_call(id, "get_menu", json!({})),
        )
        .await
    };
    let first = calls().await;
    assert_eq!(first.status, 200, "{}", first.body);
    assert!(server.dir.path().join("calls.log").exists());

    write_tokens(server.dir.path(), "bob:token-bob\n");
    let revoked = Instant::now();
    let mut answered = 0;
    loop {
        let answer = calls().await;
        if answer.status == 401 {
            break;
        }
        assert_eq!(answer.status, 200, "{}", answer.body);
        answered += 1;
        assert!(
            revoked.elapsed() < Duration::from_secs(5),
            "the revoked token still answered after {answered} calls in 5 s: {}",
            server.log_tail()
        );
    }
    eprintln!(
        "refused {} ms after the revocation, {answered} calls answered before",
        revoked.elapsed().as_millis()
    );
}

/// A tokens file mounted as Kubernetes mounts a Secret — `mcp-tokens -> ..data/mcp-tokens`,
/// `..data -> ..v1` — is reloaded when the volume swaps `..data` for a new version: the
/// watcher hears the link it reaches the file through.
#[tokio::test]
async fn a_tokens_file_swapped_as_a_kubernetes_volume_swaps_it_is_reloaded() {
    use std::os::unix::fs::symlink;
    let version = |dir: &Path, name: &str, lines: &str| {
        std::fs::create_dir(dir.join(name)).unwrap();
        let file = dir.join(name).join("mcp-tokens");
        std::fs::write(&file, lines).unwrap();
        std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o600)).unwrap();
    };
    let server = Server::start(
        |dir| {
            version(dir, "..v1", "alice:token-alice\nbob:token-bob\n");
            symlink("..v1", dir.join("..data")).unwrap();
            symlink("..data/mcp-tokens", dir.join("mcp-tokens")).unwrap();
            config(dir, r#""coffee.*""#, "Coffee.")
        },
        &[],
    );
    let url = server.url("/coffee/mcp");
    let status = async |token: &str| {
        crate::common::Raw::new()
            .post(&url, Some(token), None, crate::common::initialize(1))
            .await
            .status
    };
    assert_eq!(status("token-alice").await, 200);

    let dir = server.dir.path();
    version(dir, "..v2", "bob:token-bob\n");
    symlink("..v2", dir.join("..data_tmp")).unwrap();
    std::fs::rename(dir.join("..data_tmp"), dir.join("..data")).unwrap();
    let deadline = Instant::now() + Duration::from_secs(5);
    while status("token-alice").await != 401 {
        assert!(Instant::now() < deadline, "the swap was not reloaded");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert_eq!(status("token-bob").await, 200);
}
