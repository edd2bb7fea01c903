//! What `concierge check` refuses in a declaration, each named by its tool, before anything is
//! served (on a SQLite file: the rules are the same on every engine).

mod common;

use common::{apps, writes_at};
use concierge_server::{Config, Platform};
use concierge_testkit::config;

/// The problems of an instance with `tool` (a `[[apps.shop.tool]]` body) on a fixture file.
async fn problems(tool: &str, read_only: bool) -> Vec<String> {
    match platform(tool, read_only).await {
        Ok(_) => Vec::new(),
        Err(problems) => problems,
    }
}

/// The deployment of an instance with `tool` on a fixture file, or its problems.
async fn platform(
    tool: &str,
    read_only: bool,
) -> Result<(Platform, tempfile::TempDir), Vec<String>> {
    let folder = tempfile::tempdir().unwrap();
    let script = folder.path().join("shop.sql");
    std::fs::write(
        &script,
        "CREATE TABLE orders (id INTEGER PRIMARY KEY, customer TEXT, status TEXT);",
    )
    .unwrap();
    let text = format!(
        r#"{server}{writes}
[apps.shop]
kind = "sql"
url = "{db}"
create_from = "{script}"
read_only = {read_only}

[[apps.shop.tool]]
{tool}

[[endpoint]]
path = "/mcp"
tools = ["shop.*"]
auth = {{ kind = "none" }}
"#,
        server = config::server(""),
        writes = writes_at(&folder.path().join("writes.db")),
        db = folder.path().join("shop.db").display(),
        script = script.display(),
    );
    let config = Config::parse(&text, &|_| None).expect("parses");
    match Platform::build(config, apps(), &|_| None).await {
        Ok(platform) => Ok((platform, folder)),
        Err(errors) => Err(errors.iter().map(ToString::to_string).collect()),
    }
}

/// The deployment of a read-only instance with `tool`, which must pass the checks.
async fn accepted(tool: &str) -> (Platform, tempfile::TempDir) {
    platform(tool, true)
        .await
        .unwrap_or_else(|problems| panic!("{tool}\n→ {problems:?}"))
}

async fn refused(tool: &str, says: &str) {
    refused_on(tool, says, true).await;
}

async fn refused_on(tool: &str, says: &str, read_only: bool) {
    let problems = problems(tool, read_only).await;
    assert!(
        problems
            .iter()
            .any(|p| p.starts_with("apps.shop: tool `") && p.contains(says)),
        "{tool}\n→ {problems:?}"
    );
}

#[tokio::test]
async fn a_good_declaration_passes() {
    let problems = problems(
        r#"name = "order_list"
description = "x"
sql = "SELECT id FROM orders WHERE customer = :customer AND (:status IS NULL OR status = :status) ORDER BY {sort}"
bind = { customer = "client" }
fragments.sort = { newest = "id DESC", oldest = "id ASC" }
input_schema.properties = { status = { type = "string" }, sort = { type = "string", enum = ["newest", "oldest"], default = "newest" } }"#,
        true,
    )
    .await;
    assert!(problems.is_empty(), "{problems:?}");
}

#[tokio::test]
async fn statements_a_tool_may_not_run_are_refused() {
    let with_sql = |sql: &str| format!("name = \"t\"\ndescription = \"x\"\nsql = \"{sql}\"");
    refused(&with_sql("SELECT 1; SELECT 2"), "exactly one statement").await;
    refused(&with_sql("DROP TABLE orders"), "is not allowed").await;
    refused(&with_sql("PRAGMA writable_schema = 1"), "is not allowed").await;
    refused(&with_sql("ATTACH DATABASE 'x' AS x"), "is not allowed").await;
    refused(&with_sql("DELETE FROM orders WHERE id = 1"), "write = true").await;
    refused(
        &with_sql("SELECT * FROM orders WHERE id = ?"),
        "`?` is not a parameter",
    )
    .await;
    refused(
        &with_sql("SELECT * FROM orders WHERE id = :id"),
        "`:id` is not declared",
    )
    .await;
}

#[tokio::test]
async fn writes_are_refused_where_they_cannot_be_safe() {
    let write =
        |sql: &str| format!("name = \"t\"\ndescription = \"x\"\nwrite = true\nsql = \"{sql}\"");
    refused(
        &write("UPDATE orders SET status = 'x' WHERE id = 1"),
        "read_only = false",
    )
    .await;
    refused_on(
        &write("UPDATE orders SET status = 'x'"),
        "without WHERE",
        false,
    )
    .await;
    refused_on(&write("DELETE FROM orders"), "without WHERE", false).await;
    refused_on(&write("SELECT 1"), "read tool", false).await;
    refused(
        "name = \"t\"\ndescription = \"x\"\nconfirm = true\nsql = \"SELECT 1\"",
        "for write tools",
    )
    .await;
}

#[tokio::test]
async fn parameters_and_fragments_must_be_declared_and_used() {
    refused(
        "name = \"t\"\ndescription = \"x\"\nsql = \"SELECT 1\"\ninput_schema.properties = { x = { type = \"string\" } }",
        "properties.x is not used",
    )
    .await;
    refused(
        "name = \"t\"\ndescription = \"x\"\nsql = \"SELECT 1\"\nbind = { who = \"client\" }",
        "bind.who is not used",
    )
    .await;
    refused(
        "name = \"t\"\ndescription = \"x\"\nsql = \"SELECT id FROM orders WHERE customer = :who\"\nbind = { who = \"everyone\" }",
        "\"client\", \"user\", \"role\" or \"claim.<name>\"",
    )
    .await;
    refused(
        "name = \"t\"\ndescription = \"x\"\nsql = \"SELECT id FROM orders WHERE customer = :who\"\nbind = { who = \"client\" }\ninput_schema.properties = { who = { type = \"string\" } }",
        "cannot be an argument too",
    )
    .await;
    refused(
        "name = \"t\"\ndescription = \"x\"\nsql = \"SELECT id FROM orders ORDER BY {sort}\"\nfragments.sort = { a = \"id\", b = \"status\" }\ninput_schema.properties = { sort = { type = \"string\", enum = [\"a\", \"c\"], default = \"a\" } }",
        "must be the same",
    )
    .await;
    refused(
        "name = \"t\"\ndescription = \"x\"\nsql = \"SELECT id FROM orders ORDER BY {sort}\"\nfragments.sort = { a = \"id; DROP TABLE orders\" }\ninput_schema.properties = { sort = { type = \"string\", enum = [\"a\"], default = \"a\" } }",
        "plain SQL",
    )
    .await;
}

#[tokio::test]
async fn names_must_be_plain_and_specific() {
    refused(
        "name = \"Order List\"\ndescription = \"x\"\nsql = \"SELECT 1\"",
        "lower-case",
    )
    .await;
    refused(
        "name = \"run_sql\"\ndescription = \"x\"\nsql = \"SELECT 1\"",
        "generic tool",
    )
    .await;
}

#[tokio::test]
async fn check_live_has_the_database_prepare_every_statement() {
    let (platform, _folder) = accepted(
        r#"name = "order_list"
description = "x"
sql = "SELECT id, statsu FROM orders ORDER BY {sort}"
fragments.sort = { newest = "id DESC", oldest = "id ASC" }
input_schema.properties = { sort = { type = "string", enum = ["newest", "oldest"], default = "newest" } }"#,
    )
    .await;
    let (name, check) = &platform.live_checks[0];
    assert_eq!(name, "shop");
    let report = check().await;
    assert_eq!(report.problems.len(), 1, "{report:?}");
    assert!(
        report.problems[0].starts_with("tool `order_list`: the database cannot prepare")
            && report.problems[0].contains("statsu"),
        "{report:?}"
    );
}

#[tokio::test]
async fn a_tool_names_and_describes_itself() {
    for (tool, says) in [
        (
            "description = \"x\"\nsql = \"SELECT 1\"",
            "`name` is missing",
        ),
        (
            "name = \"t\"\nsql = \"SELECT 1\"",
            "`description` is missing",
        ),
    ] {
        refused(tool, says).await;
    }
}

/// The per-tool keys every kind takes (`concierge_core::ToolPolicy`), on a SQL tool.
#[tokio::test]
async fn a_tool_takes_the_keys_every_kind_s_tools_take() {
    let (platform, _folder) = accepted(
        r#"name = "order_list"
title = "Orders"
description = "x"
sql = "SELECT id FROM orders"
annotations = { openWorldHint = true, idempotent = false }
scopes = ["orders:read"]"#,
    )
    .await;
    let tools = platform.endpoints[0].guard.endpoint.tools();
    let spec = tools[0].spec();
    assert_eq!(spec.title.as_deref(), Some("Orders"));
    assert!(spec.annotations.read_only && spec.annotations.open_world);
    assert!(!spec.annotations.idempotent && !spec.annotations.destructive);
    assert_eq!(spec.scopes, ["orders:read"]);
    refused(
        "name = \"t\"\ndescription = \"x\"\nsql = \"SELECT 1\"\nannotations = { dangerous = true }",
        "`dangerous` is none of",
    )
    .await;
    refused_on(
        "name = \"t\"\ndescription = \"x\"\nwrite = true\nsql = \"UPDATE orders SET status = 'x' WHERE id = 1\"\ndestructive = true\nannotations = { destructiveHint = false }",
        "`destructive` and `annotations.destructive` are one hint",
        false,
    )
    .await;
}
