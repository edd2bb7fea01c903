//! Writes and bounds on the real engines: dry runs change nothing, confirmation, the affected
//! rows' bound, one write for fifty concurrent calls with one idempotency key, a statement
//! cancelled at its timeout (and gone from the database's own process list), a read tool whose
//! statement would write refused by the engine, an unreachable database.

mod common;

use common::{Loaded, TOKENS, apps, call, engines, error_code, ids};
use concierge_testkit::instance;
use serde_json::{Value, json};

fn config(loaded: &Loaded, writes: &std::path::Path) -> String {
    let (url, create_from) = match loaded.url.split_once("?create_from=") {
        Some((url, script)) => (url.to_string(), format!("create_from = \"{script}\"")),
        None => (loaded.url.clone(), String::new()),
    };
    let sleep = match loaded.engine {
        "postgres" => "SELECT pg_sleep(5) AS slept",
        "mariadb" => "SELECT SLEEP(5) AS slept",
        // SQLite has no sleep: a count that never ends.
        _ => {
            "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c) SELECT count(*) AS slept FROM c"
        }
    };
    format!(
        r#"
[server]
listen = "127.0.0.1:0"

[writes]
database = "{writes}"

[apps.shop]
kind = "sql"
url = "{url}"
{create_from}
read_only = false
statement_timeout = "300ms"

[[apps.shop.tool]]
name = "order_list"
description = "Orders of this customer."
sql = "SELECT id, status FROM orders WHERE customer = :customer ORDER BY id"
bind = {{ customer = "client" }}

[[apps.shop.tool]]
name = "order_cancel"
description = "Cancel one open order."
write = true
confirm = true
max_affected_rows = 1
sql = "UPDATE orders SET status = 'cancelled' WHERE id = :id AND customer = :customer AND status = 'open'"
bind = {{ customer = "client" }}
[apps.shop.tool.input_schema]
properties = {{ id = {{ type = "integer" }} }}
required = ["id"]

[[apps.shop.tool]]
name = "order_pay"
description = "Mark one open order paid."
write = true
sql = "UPDATE orders SET status = 'paid' WHERE id = :id AND customer = :customer AND status = 'open'"
bind = {{ customer = "client" }}
[apps.shop.tool.input_schema]
properties = {{ id = {{ type = "integer" }} }}
required = ["id"]

[[apps.shop.tool]]
name = "order_remove"
description = "Remove one order, answering what was removed."
write = true
sql = "DELETE FROM orders WHERE id = :id AND customer = :customer RETURNING id, status"
bind = {{ customer = "client" }}
[apps.shop.tool.input_schema]
properties = {{ id = {{ type = "integer" }} }}
required = ["id"]

[[apps.shop.tool]]
name = "orders_close_all"
description = "Close every open order of this customer."
write = true
max_affected_rows = 1
sql = "UPDATE orders SET status = 'closed' WHERE customer = :customer AND status = 'open'"
bind = {{ customer = "client" }}

[[apps.shop.tool]]
name = "counter_bump"
description = "Count one."
write = true
sql = "UPDATE counters SET n = n + 1 WHERE id = 1"

[[apps.shop.tool]]
name = "counter_get"
description = "The count."
sql = "SELECT n AS id FROM counters WHERE id = 1"

[[apps.shop.tool]]
name = "slow_report"
description = "A report that takes too long."
sql = "{sleep}"

[[endpoint]]
path = "/mcp"
tools = ["shop.*"]
auth = {{ kind = "tokens", env = "TOKENS" }}
session = "stateless"
"#,
        writes = writes.display()
    )
}

fn status_of(result: &Value, id: i64) -> String {
    result["structuredContent"]["rows"]
        .as_array()
        .unwrap()
        .iter()
        .find(|row| row["id"] == id)
        .map(|row| row["status"].as_str().unwrap().to_string())
        .unwrap_or_default()
}

#[tokio::test]
async fn a_dry_run_changes_nothing_and_a_confirmed_write_changes_one_row() {
    for loaded in engines().await {
        let at = loaded.engine;
        let folder = tempfile::tempdir().unwrap();
        let config = config(&loaded, &folder.path().join("writes.db"));
        let deployment = instance(&config, apps(), &[("TOKENS", TOKENS)]).await;
        let router = &deployment.router;
        let list = || call(router, "token-acme", "order_list", json!({}));

        let dry = call(
            router,
            "token-acme",
            "order_cancel",
            json!({"id": 1, "idempotency_key": "d1", "dry_run": true}),
        )
        .await;
        assert_eq!(dry["structuredContent"]["affected_rows"], 1, "{at}: {dry}");
        assert_eq!(
            status_of(&list().await, 1),
            "open",
            "{at}: the dry run changed nothing"
        );

        let preview = call(
            router,
            "token-acme",
            "order_cancel",
            json!({"id": 1, "idempotency_key": "c1"}),
        )
        .await;
        let preview = &preview["structuredContent"];
        assert_eq!(preview["confirmationRequired"], true, "{at}: {preview}");
        assert_eq!(preview["preview"]["affected_rows"], 1, "{at}");
        assert_eq!(
            status_of(&list().await, 1),
            "open",
            "{at}: the preview changed nothing"
        );
        let token = preview["confirmToken"].as_str().unwrap();
        let done = call(
            router,
            "token-acme",
            "order_cancel",
            json!({"id": 1, "idempotency_key": "c1", "confirm_token": token}),
        )
        .await;
        assert_eq!(
            done["structuredContent"]["affected_rows"], 1,
            "{at}: {done}"
        );
        assert_eq!(status_of(&list().await, 1), "cancelled", "{at}");
        // Another customer's order is not theirs to cancel: nothing matches.
        let preview = call(
            router,
            "token-acme",
            "order_cancel",
            json!({"id": 4, "idempotency_key": "c2"}),
        )
        .await;
        assert_eq!(
            preview["structuredContent"]["preview"]["affected_rows"], 0,
            "{at}"
        );
    }
}

#[tokio::test]
async fn a_confirmation_of_a_preview_the_data_has_since_outgrown_is_refused_as_stale() {
    for loaded in engines().await {
        let at = loaded.engine;
        let folder = tempfile::tempdir().unwrap();
        let config = config(&loaded, &folder.path().join("writes.db"));
        let deployment = instance(&config, apps(), &[("TOKENS", TOKENS)]).await;
        let router = &deployment.router;
        let preview = call(
            router,
            "token-acme",
            "order_cancel",
            json!({"id": 5, "idempotency_key": "s1"}),
        )
        .await;
        assert_eq!(
            preview["structuredContent"]["preview"]["affected_rows"], 1,
            "{at}: {preview}"
        );
        let token = preview["structuredContent"]["confirmToken"]
            .as_str()
            .unwrap()
            .to_string();
        // Meanwhile the order is paid: the cancel would now change nothing.
        let paid = call(
            router,
            "token-acme",
            "order_pay",
            json!({"id": 5, "idempotency_key": "p1"}),
        )
        .await;
        assert_eq!(
            paid["structuredContent"]["affected_rows"], 1,
            "{at}: {paid}"
        );
        let stale = call(
            router,
            "token-acme",
            "order_cancel",
            json!({"id": 5, "idempotency_key": "s1", "confirm_token": token}),
        )
        .await;
        assert_eq!(error_code(&stale), "stale_preview", "{at}: {stale}");
        let list = call(router, "token-acme", "order_list", json!({})).await;
        assert_eq!(status_of(&list, 5), "paid", "{at}: nothing changed");
        // A token whose preview digest was swapped does not verify.
        let preview = call(
            router,
            "token-acme",
            "order_cancel",
            json!({"id": 1, "idempotency_key": "s2"}),
        )
        .await;
        let token = preview["structuredContent"]["confirmToken"]
            .as_str()
            .unwrap();
        let (signed, _) = token.rsplit_once('.').unwrap();
        let swapped = format!("{signed}.0000000000000000");
        let refused = call(
            router,
            "token-acme",
            "order_cancel",
            json!({"id": 1, "idempotency_key": "s2", "confirm_token": swapped}),
        )
        .await;
        assert_eq!(
            error_code(&refused),
            "confirm_token_invalid",
            "{at}: {refused}"
        );
    }
}

#[tokio::test]
async fn a_dry_run_of_a_write_with_returning_shows_the_rows_it_would_change() {
    for loaded in engines().await {
        let at = loaded.engine;
        let folder = tempfile::tempdir().unwrap();
        let config = config(&loaded, &folder.path().join("writes.db"));
        let deployment = instance(&config, apps(), &[("TOKENS", TOKENS)]).await;
        let router = &deployment.router;
        let dry = call(
            router,
            "token-acme",
            "order_remove",
            json!({"id": 2, "idempotency_key": "r1", "dry_run": true}),
        )
        .await;
        let result = &dry["structuredContent"];
        assert_eq!(result["affected_rows"], 1, "{at}: {dry}");
        assert_eq!(
            result["rows"],
            json!([{"id": 2, "status": "paid"}]),
            "{at}: {dry}"
        );
        let list = call(router, "token-acme", "order_list", json!({})).await;
        assert_eq!(status_of(&list, 2), "paid", "{at}: still there");
        let done = call(
            router,
            "token-acme",
            "order_remove",
            json!({"id": 2, "idempotency_key": "r2"}),
        )
        .await;
        assert_eq!(
            done["structuredContent"]["affected_rows"], 1,
            "{at}: {done}"
        );
        let list = call(router, "token-acme", "order_list", json!({})).await;
        assert_eq!(status_of(&list, 2), "", "{at}: removed");
    }
}

#[tokio::test]
async fn a_write_past_its_row_bound_is_rolled_back_and_refused() {
    for loaded in engines().await {
        let at = loaded.engine;
        let folder = tempfile::tempdir().unwrap();
        let config = config(&loaded, &folder.path().join("writes.db"));
        let deployment = instance(&config, apps(), &[("TOKENS", TOKENS)]).await;
        let router = &deployment.router;
        // acme has two open orders; the tool may change one.
        let refused = call(
            router,
            "token-acme",
            "orders_close_all",
            json!({"idempotency_key": "x1"}),
        )
        .await;
        assert_eq!(error_code(&refused), "too_many_rows", "{at}: {refused}");
        let text = refused["content"][0]["text"].as_str().unwrap();
        assert!(
            text.contains("2 rows") && text.contains("nothing was changed"),
            "{at}: {text}"
        );
        let list = call(router, "token-acme", "order_list", json!({})).await;
        assert_eq!(status_of(&list, 1), "open", "{at}: rolled back");
        assert_eq!(status_of(&list, 5), "open", "{at}: rolled back");
        // bolt has one: allowed.
        let done = call(
            router,
            "token-bolt",
            "orders_close_all",
            json!({"idempotency_key": "x2"}),
        )
        .await;
        assert_eq!(
            done["structuredContent"]["affected_rows"], 1,
            "{at}: {done}"
        );
    }
}

#[tokio::test]
async fn fifty_concurrent_calls_with_one_idempotency_key_write_once() {
    for loaded in engines().await {
        let at = loaded.engine;
        let folder = tempfile::tempdir().unwrap();
        let config = config(&loaded, &folder.path().join("writes.db"));
        let deployment = instance(&config, apps(), &[("TOKENS", TOKENS)]).await;
        let router = &deployment.router;
        let calls = (0..50).map(|_| {
            call(
                router,
                "token-acme",
                "counter_bump",
                json!({"idempotency_key": "same"}),
            )
        });
        let answers = futures::future::join_all(calls).await;
        let written = answers.iter().filter(|a| a["isError"] == false).count();
        assert!(written >= 1, "{at}: {:?}", answers.first());
        let count = call(router, "token-acme", "counter_get", json!({})).await;
        assert_eq!(ids(&count), [1], "{at}: one update for fifty calls");
    }
}

#[tokio::test]
async fn a_statement_past_its_timeout_is_cancelled_in_the_database() {
    for loaded in engines().await {
        let at = loaded.engine;
        let folder = tempfile::tempdir().unwrap();
        let config = config(&loaded, &folder.path().join("writes.db"));
        let deployment = instance(&config, apps(), &[("TOKENS", TOKENS)]).await;
        let started = std::time::Instant::now();
        let answer = call(&deployment.router, "token-acme", "slow_report", json!({})).await;
        assert_eq!(error_code(&answer), "timeout", "{at}: {answer}");
        assert!(
            started.elapsed() < std::time::Duration::from_secs(4),
            "{at}: not waited out"
        );
        let text = answer["content"][0]["text"].as_str().unwrap();
        assert!(text.contains("try again"), "{at}: {text}");
        // Nothing left running in the database.
        let running: i64 = match at {
            "postgres" => {
                let pool = sqlx::PgPool::connect(&loaded.url).await.unwrap();
                sqlx::query_scalar("SELECT count(*) FROM pg_stat_activity WHERE query LIKE '%pg_sleep(5)%' AND state = 'active' AND pid <> pg_backend_pid()")
                    .fetch_one(&pool).await.unwrap()
            }
            "mariadb" => {
                let pool = sqlx::MySqlPool::connect(&loaded.url).await.unwrap();
                sqlx::query_scalar("SELECT count(*) FROM information_schema.processlist WHERE info LIKE '%SLEEP(5)%' AND id <> CONNECTION_ID()")
                    .fetch_one(&pool).await.unwrap()
            }
            _ => 0,
        };
        assert_eq!(
            running, 0,
            "{at}: the statement is gone from the process list"
        );
        // The pool still serves.
        let list = call(&deployment.router, "token-acme", "order_list", json!({})).await;
        assert_eq!(list["isError"], false, "{at}");
    }
}

#[tokio::test]
async fn an_unreachable_database_is_a_retryable_error_and_health_says_so() {
    // A port nothing listens on.
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    for (engine, url) in [
        (
            "postgres",
            format!("postgres://nobody@127.0.0.1:{port}/shop"),
        ),
        ("mariadb", format!("mysql://nobody@127.0.0.1:{port}/shop")),
    ] {
        let loaded = Loaded {
            engine,
            url,
            _folder: None,
        };
        let folder = tempfile::tempdir().unwrap();
        let config = config(&loaded, &folder.path().join("writes.db"));
        let deployment = instance(&config, apps(), &[("TOKENS", TOKENS)]).await;
        let answer = call(&deployment.router, "token-acme", "order_list", json!({})).await;
        assert_eq!(
            error_code(&answer),
            "database_unavailable",
            "{engine}: {answer}"
        );
        let text = answer["content"][0]["text"].as_str().unwrap();
        assert!(
            !text.contains("127.0.0.1") && !text.contains("nobody"),
            "{engine}: {text}"
        );
        let request = http::Request::get("/health")
            .header("host", "127.0.0.1:8080")
            .body(axum::body::Body::empty())
            .unwrap();
        let (_, _, health) = concierge_testkit::send(&deployment.router, request).await;
        assert!(health.contains("degraded"), "{engine}: {health}");
        assert!(!health.contains(&port.to_string()), "{engine}: {health}");
    }
}

#[tokio::test]
async fn a_read_whose_statement_would_write_is_refused_by_the_engine() {
    // SQLite has no function a statement could write through; the other two do.
    for loaded in engines().await {
        let (setup, statement, left): (&[&str], &str, &str) = match loaded.engine {
            "postgres" => (
                &["CREATE SEQUENCE order_numbers"],
                "SELECT nextval('order_numbers') AS id",
                "SELECT CASE WHEN is_called THEN 1 ELSE 0 END FROM order_numbers",
            ),
            "mariadb" => (
                &[
                    "CREATE TABLE notes (n INT)",
                    "CREATE FUNCTION note_it() RETURNS INT MODIFIES SQL DATA BEGIN INSERT INTO notes VALUES (1); RETURN 1; END",
                ],
                "SELECT note_it() AS id",
                "SELECT count(*) FROM notes",
            ),
            _ => continue,
        };
        let at = loaded.engine;
        let run = |sql: &str| sqlx::AssertSqlSafe(sql.to_string());
        let changed: i64 = if at == "postgres" {
            let pool = sqlx::PgPool::connect(&loaded.url).await.unwrap();
            for sql in setup {
                sqlx::query(run(sql)).execute(&pool).await.unwrap();
            }
            let deployment = reading(&loaded, statement).await;
            let answer = call(&deployment.router, "token-acme", "number_next", json!({})).await;
            assert_eq!(error_code(&answer), "read_only", "{at}: {answer}");
            sqlx::query_scalar::<_, i32>(run(left))
                .fetch_one(&pool)
                .await
                .unwrap()
                .into()
        } else {
            let pool = sqlx::MySqlPool::connect(&loaded.url).await.unwrap();
            for sql in setup {
                sqlx::query(run(sql)).execute(&pool).await.unwrap();
            }
            let deployment = reading(&loaded, statement).await;
            let answer = call(&deployment.router, "token-acme", "number_next", json!({})).await;
            assert_eq!(error_code(&answer), "read_only", "{at}: {answer}");
            sqlx::query_scalar::<_, i64>(run(left))
                .fetch_one(&pool)
                .await
                .unwrap()
        };
        assert_eq!(changed, 0, "{at}: nothing changed");
    }
}

/// A read-only instance with one read tool running `statement`.
async fn reading(loaded: &Loaded, statement: &str) -> concierge_testkit::Instance {
    let config = format!(
        r#"
[server]
listen = "127.0.0.1:0"

[apps.shop]
kind = "sql"
url = "{url}"

[[apps.shop.tool]]
name = "number_next"
description = "The next number."
sql = "{statement}"

[[endpoint]]
path = "/mcp"
tools = ["shop.*"]
auth = {{ kind = "tokens", env = "TOKENS" }}
session = "stateless"
"#,
        url = loaded.url
    );
    instance(&config, apps(), &[("TOKENS", TOKENS)]).await
}
