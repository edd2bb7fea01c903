//! The audit table in PostgreSQL: a real `concierge` process writes its events to a fresh database
//! of the server `scripts/test.sh` starts (`CONCIERGE_TEST_POSTGRES`), and the test queries them.
//! Without that variable (a plain `cargo test`) there is no server, and the test says so and passes.

use crate::common;

use common::{Server, call, coffee_config, connect};
use serde_json::json;
use sqlx::Row;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_event_lands_in_the_postgres_audit_table() {
    let Ok(admin_url) = std::env::var("CONCIERGE_TEST_POSTGRES") else {
        eprintln!(
            "CONCIERGE_TEST_POSTGRES is unset: no PostgreSQL to test against (scripts/test.sh starts one)"
        );
        return;
    };
    let admin = sqlx::PgPool::connect(&admin_url)
        .await
        .expect("the test server");
    let name = format!("audit_{}", uuid_like());
    sqlx::query(sqlx::AssertSqlSafe(format!("CREATE DATABASE {name}")))
        .execute(&admin)
        .await
        .unwrap();
    let url = format!("{}/{name}", admin_url.rsplit_once('/').unwrap().0);
    // The table as the version before outputs made it: the server adds the column.
    let before = sqlx::PgPool::connect(&url).await.unwrap();
    sqlx::query(
        "CREATE TABLE audit_event (
            id BIGSERIAL PRIMARY KEY, ts TIMESTAMPTZ NOT NULL, endpoint TEXT NOT NULL,
            client_id TEXT, user_id TEXT, tool TEXT, trace_id TEXT NOT NULL, rpc_id TEXT,
            outcome TEXT NOT NULL, code TEXT, duration_ms DOUBLE PRECISION NOT NULL,
            result_count BIGINT, arguments JSONB, notes JSONB)",
    )
    .execute(&before)
    .await
    .unwrap();
    before.close().await;

    let server = Server::start(
        |dir| {
            coffee_config(dir, "").replace(
                "[audit.chatbot]\n",
                &format!("[audit.chatbot]\ndatabase = \"{url}\"\n"),
            )
        },
        &[("APP_MCP_TOKENS", "n8n:secret-token")],
    );
    let client = connect(&server.url("/coffee/mcp"), "secret-token").await;
    call(&client, "search_menu", json!({"query": "латте"})).await;
    call(&client, "get_order_status", json!({"order_id": "nope"})).await;
    let refused = reqwest::Client::new()
        .post(server.url("/coffee/mcp"))
        .bearer_auth("wrong")
        .json(&json!({}))
        .send()
        .await
        .unwrap();
    assert_eq!(refused.status(), 401);

    let pool = sqlx::PgPool::connect(&url).await.unwrap();
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    let rows = loop {
        let rows = sqlx::query(
            "SELECT client_id, tool, outcome, arguments->>'query' AS query, ts > now() - interval '5 minutes' AS recent, \
             output->'error'->>'code' AS error_code \
             FROM audit_event ORDER BY id",
        )
        .fetch_all(&pool)
        .await
        .unwrap();
        if rows.len() >= 3 || std::time::Instant::now() > deadline {
            break rows;
        }
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    };
    let summary: Vec<(Option<String>, Option<String>, String)> = rows
        .iter()
        .map(|r| (r.get("client_id"), r.get("tool"), r.get("outcome")))
        .collect();
    assert_eq!(
        summary,
        vec![
            (Some("n8n".into()), Some("search_menu".into()), "ok".into()),
            (
                Some("n8n".into()),
                Some("get_order_status".into()),
                "invalid_argument".into()
            ),
            (None, None, "unauthorized".into()),
        ]
    );
    assert_eq!(
        rows[0].get::<Option<String>, _>("query").as_deref(),
        Some("латте")
    );
    assert!(rows.iter().all(|r| r.get::<bool, _>("recent")));
    assert_eq!(
        rows[1].get::<Option<String>, _>("error_code").as_deref(),
        Some("invalid_argument"),
        "the refusal's error document is the output"
    );

    // `concierge audit` reads the same table back, filtered.
    let lines = server
        .audit_cli(&["--client", "n8n", "--tool", "search_menu"])
        .unwrap();
    assert_eq!(lines.len(), 1, "{lines:?}");
    assert_eq!(lines[0]["arguments"], json!({"query": "латте"}));
    assert!(lines[0]["output"]["results"].is_array(), "{lines:?}");
    assert!(lines[0]["ts"].as_str().unwrap().ends_with('Z'), "{lines:?}");
}

/// A name part no other run uses.
fn uuid_like() -> String {
    format!(
        "{}_{}",
        std::process::id(),
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .as_nanos()
    )
}
