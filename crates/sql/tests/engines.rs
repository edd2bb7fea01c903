//! The kind `sql` on the real engines: SQLite always, PostgreSQL and MariaDB when the test
//! command started them (`scripts/postgres.sh`, `scripts/mariadb.sh`). One fixture is loaded
//! into each, the same tool declarations serve it, and the tools are called over the
//! platform's HTTP endpoint as a client calls them.

use axum::body::Body;
use concierge_server::{Apps, section};
use concierge_testkit::{instance, send};
use http::{Request, StatusCode};
use serde_json::{Value, json};

/// The fixture, with the one type the engines spell differently.
fn fixture(timestamp: &str) -> String {
    format!(
        "CREATE TABLE orders (
            id INTEGER PRIMARY KEY,
            customer VARCHAR(40) NOT NULL,
            status VARCHAR(20) NOT NULL,
            total DECIMAL(10,2) NOT NULL,
            placed_at {timestamp} NOT NULL
        );
        INSERT INTO orders (id, customer, status, total, placed_at) VALUES
            (1, 'acme', 'open', 10.50, '2026-11-01 10:00:00'),
            (2, 'acme', 'paid', 99.99, '2026-11-02 10:00:00'),
            (3, 'acme', 'shipped', 5.00, '2026-11-03 10:00:00'),
            (4, 'bolt', 'open', 7.25, '2026-11-04 10:00:00'),
            (5, 'acme', 'open', 1.00, '2026-11-05 10:00:00');"
    )
}

/// An engine with the fixture loaded: its name and the instance's `url` (plus, for SQLite,
/// the folder that holds the file).
struct Loaded {
    engine: &'static str,
    url: String,
    _folder: Option<tempfile::TempDir>,
}

async fn engines() -> Vec<Loaded> {
    let folder = tempfile::tempdir().unwrap();
    let path = folder.path().join("shop.db");
    let script = folder.path().join("shop.sql");
    std::fs::write(&script, fixture("TEXT")).unwrap();
    let mut engines = vec![Loaded {
        engine: "sqlite",
        // Created by the instance itself from `create_from` (see `config`).
        url: format!(
            "sqlite://{}?create_from={}",
            path.display(),
            script.display()
        ),
        _folder: Some(folder),
    }];
    if let Some(url) = concierge_testkit::postgres::fresh_database("sql_kind").await {
        let pool = sqlx::PgPool::connect(&url).await.unwrap();
        sqlx::raw_sql(sqlx::AssertSqlSafe(fixture("TIMESTAMP")))
            .execute(&pool)
            .await
            .unwrap();
        pool.close().await;
        engines.push(Loaded {
            engine: "postgres",
            url,
            _folder: None,
        });
    }
    if let Some(url) = concierge_testkit::mariadb::fresh_database("sql_kind").await {
        let pool = sqlx::MySqlPool::connect(&url).await.unwrap();
        sqlx::raw_sql(sqlx::AssertSqlSafe(fixture("DATETIME")))
            .execute(&pool)
            .await
            .unwrap();
        pool.close().await;
        engines.push(Loaded {
            engine: "mariadb",
            url,
            _folder: None,
        });
    }
    engines
}

fn config(loaded: &Loaded) -> String {
    let (url, create_from) = match loaded.url.split_once("?create_from=") {
        Some((url, script)) => (url.to_string(), format!("create_from = \"{script}\"")),
        None => (loaded.url.clone(), String::new()),
    };
    format!(
        r#"
[server]
listen = "127.0.0.1:0"

[apps.shop]
kind = "sql"
url = "{url}"
{create_from}
statement_timeout = "300ms"

[[apps.shop.tool]]
name = "order_list"
description = "Orders of this customer, newest first."
sql = """
SELECT id, status, total, placed_at FROM orders
WHERE customer = :customer
  AND (:status IS NULL OR status = :status)
  AND (:ids IS NULL OR id IN (:ids))
ORDER BY {{sort}}"""
bind = {{ customer = "client" }}
fragments.sort = {{ newest = "placed_at DESC", oldest = "placed_at ASC" }}
[apps.shop.tool.input_schema.properties]
status = {{ type = "string", enum = ["open", "paid", "shipped"] }}
ids = {{ type = "array", items = {{ type = "integer" }}, maxItems = 50 }}
sort = {{ type = "string", enum = ["newest", "oldest"], default = "newest" }}

[[apps.shop.tool]]
name = "order_by_status"
description = "Orders in a status written freely."
sql = "SELECT id FROM orders WHERE customer = :customer AND status = :status ORDER BY id"
bind = {{ customer = "client" }}
max_rows = 2
[apps.shop.tool.input_schema]
properties = {{ status = {{ type = "string", maxLength = 100 }} }}
required = ["status"]

[[apps.shop.tool]]
name = "order_ids"
description = "Every order id of this customer."
sql = "SELECT id FROM orders WHERE customer = :customer ORDER BY id"
bind = {{ customer = "client" }}
max_rows = 3

[[endpoint]]
path = "/mcp"
tools = ["shop.*"]
auth = {{ kind = "tokens", env = "TOKENS" }}
session = "stateless"
"#
    )
}

fn apps() -> Apps {
    Apps::new().tools_async("sql", |settings| async move {
        concierge_sql::build(&section(&settings)?).await
    })
}

const TOKENS: &str = "acme:token-acme,bolt:token-bolt";

async fn call(router: &axum::Router, token: &str, tool: &str, arguments: Value) -> Value {
    let request = Request::post("/mcp")
        .header("host", "127.0.0.1:8080")
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .header("authorization", format!("Bearer {token}"))
        .body(Body::from(
            json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
                   "params": {"name": tool, "arguments": arguments}})
            .to_string(),
        ))
        .unwrap();
    let (status, _, text) = send(router, request).await;
    assert_eq!(status, StatusCode::OK, "{text}");
    serde_json::from_str::<Value>(&text).expect("JSON")["result"].clone()
}

fn ids(result: &Value) -> Vec<i64> {
    assert_eq!(result["isError"], false, "{result}");
    result["structuredContent"]["rows"]
        .as_array()
        .expect("rows")
        .iter()
        .map(|row| row["id"].as_i64().expect("an id"))
        .collect()
}

fn error_code(result: &Value) -> String {
    assert_eq!(result["isError"], true, "{result}");
    let text = result["content"][0]["text"].as_str().unwrap();
    let error: Value = serde_json::from_str(text).expect("a JSON error");
    error["error"]["code"].as_str().unwrap().to_string()
}

#[tokio::test]
async fn optional_filters_arrays_and_fragments_return_the_same_rows_on_every_engine() {
    for loaded in engines().await {
        let at = loaded.engine;
        let deployment = instance(&config(&loaded), apps(), &[("TOKENS", TOKENS)]).await;
        let router = &deployment.router;
        let list = |arguments: Value| call(router, "token-acme", "order_list", arguments);
        assert_eq!(ids(&list(json!({})).await), [5, 3, 2, 1], "{at}: no filter");
        assert_eq!(
            ids(&list(json!({"status": "open"})).await),
            [5, 1],
            "{at}: a status"
        );
        assert_eq!(
            ids(&list(json!({"ids": [1, 2, 4]})).await),
            [2, 1],
            "{at}: an array (4 is another customer's)"
        );
        assert_eq!(
            ids(&list(json!({"ids": []})).await),
            Vec::<i64>::new(),
            "{at}: an empty array"
        );
        assert_eq!(
            ids(&list(json!({"sort": "oldest", "status": "open"})).await),
            [1, 5],
            "{at}: a fragment"
        );
        // Another client sees only its own rows.
        assert_eq!(
            ids(&call(router, "token-bolt", "order_list", json!({})).await),
            [4],
            "{at}: bolt"
        );
        // What `bind` fills in cannot be passed.
        assert_eq!(
            error_code(&list(json!({"customer": "bolt"})).await),
            "argument_not_allowed",
            "{at}"
        );
    }
}

#[tokio::test]
async fn injection_is_refused_by_the_schema_or_bound_harmlessly() {
    for loaded in engines().await {
        let at = loaded.engine;
        let deployment = instance(&config(&loaded), apps(), &[("TOKENS", TOKENS)]).await;
        let router = &deployment.router;
        for arguments in [
            json!({"status": "open' OR '1'='1"}),
            json!({"ids": ["1 OR 1=1"]}),
            json!({"sort": "placed_at; DROP TABLE orders"}),
        ] {
            let answer = call(router, "token-acme", "order_list", arguments.clone()).await;
            assert_eq!(error_code(&answer), "invalid_argument", "{at}: {arguments}");
        }
        for status in [
            "x' OR '1'='1",
            "open'; DELETE FROM orders; --",
            "' UNION SELECT 1 --",
        ] {
            let answer = call(
                router,
                "token-acme",
                "order_by_status",
                json!({"status": status}),
            )
            .await;
            assert_eq!(ids(&answer), Vec::<i64>::new(), "{at}: {status}");
        }
        // Nothing changed.
        assert_eq!(
            ids(&call(router, "token-acme", "order_list", json!({})).await),
            [5, 3, 2, 1],
            "{at}"
        );
    }
}

#[tokio::test]
async fn a_result_stops_at_the_tools_row_bound_and_says_so() {
    for loaded in engines().await {
        let at = loaded.engine;
        let deployment = instance(&config(&loaded), apps(), &[("TOKENS", TOKENS)]).await;
        let answer = call(
            &deployment.router,
            "token-acme",
            "order_by_status",
            json!({"status": "open"}),
        )
        .await;
        assert_eq!(ids(&answer), [1, 5], "{at}");
        let result = &answer["structuredContent"];
        assert_eq!(result["truncated"], false, "{at}: exactly the bound");
        let answer = call(&deployment.router, "token-acme", "order_ids", json!({})).await;
        assert_eq!(ids(&answer), [1, 2, 3], "{at}");
        let result = &answer["structuredContent"];
        assert_eq!(result["truncated"], true, "{at}");
        assert_eq!(result["returned"], 3, "{at}");
        assert!(result["note"].as_str().unwrap().contains("narrow"), "{at}");
    }
}

#[tokio::test]
async fn values_are_typed_faithfully() {
    for loaded in engines().await {
        let at = loaded.engine;
        let deployment = instance(&config(&loaded), apps(), &[("TOKENS", TOKENS)]).await;
        let answer = call(
            &deployment.router,
            "token-acme",
            "order_list",
            json!({"ids": [1]}),
        )
        .await;
        let row = &answer["structuredContent"]["rows"][0];
        assert_eq!(row["id"], 1, "{at}: {row}");
        assert_eq!(row["status"], "open", "{at}");
        match at {
            // SQLite keeps what it was given: a number, and the text of the time.
            "sqlite" => {
                assert_eq!(row["total"], 10.5, "{at}");
                assert_eq!(row["placed_at"], "2026-11-01 10:00:00", "{at}");
            }
            _ => {
                assert_eq!(row["total"], "10.50", "{at}: a decimal is exact");
                assert_eq!(
                    row["placed_at"], "2026-11-01T10:00:00Z",
                    "{at}: UTC, RFC 3339"
                );
            }
        }
        assert_eq!(answer["structuredContent"]["returned"], 1);
    }
}
