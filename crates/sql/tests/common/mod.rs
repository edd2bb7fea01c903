//! What the SQL tools' tests share: the engines with one fixture loaded, the kind registered,
//! and a client's call over the platform's HTTP endpoint.

#![allow(dead_code)] // each test file uses its own part

use axum::body::Body;
use concierge_server::{Apps, section};
use concierge_testkit::send;
use http::{Request, StatusCode};
use serde_json::{Value, json};

/// The fixture, with the one type the engines spell differently.
pub fn fixture(timestamp: &str) -> String {
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
            (5, 'acme', 'open', 1.00, '2026-11-05 10:00:00');
        CREATE TABLE counters (id INTEGER PRIMARY KEY, n INTEGER NOT NULL);
        INSERT INTO counters (id, n) VALUES (1, 0);"
    )
}

/// An engine with the fixture loaded: its name and the instance's `url` (plus, for SQLite,
/// the folder that holds the file).
pub struct Loaded {
    pub engine: &'static str,
    pub url: String,
    pub _folder: Option<tempfile::TempDir>,
}

pub async fn engines() -> Vec<Loaded> {
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

pub fn apps() -> Apps {
    Apps::new().tools_async("sql", |settings| async move {
        concierge_sql::build(&section(&settings)?).await
    })
}

pub const TOKENS: &str = "acme:token-acme,bolt:token-bolt";

pub async fn call(router: &axum::Router, token: &str, tool: &str, arguments: Value) -> Value {
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

pub fn ids(result: &Value) -> Vec<i64> {
    assert_eq!(result["isError"], false, "{result}");
    result["structuredContent"]["rows"]
        .as_array()
        .expect("rows")
        .iter()
        .map(|row| row["id"].as_i64().expect("an id"))
        .collect()
}

pub fn error_code(result: &Value) -> String {
    assert_eq!(result["isError"], true, "{result}");
    let text = result["content"][0]["text"].as_str().unwrap();
    let error: Value = serde_json::from_str(text).expect("a JSON error");
    error["error"]["code"].as_str().unwrap().to_string()
}
