//! Writes and bounds on the real engines: dry runs change nothing, confirmation, the affected
//! rows' bound, one write for fifty concurrent calls with one idempotency key, a statement
//! cancelled at its timeout (and gone from the database's own process list), a read tool whose
//! statement would write refused by the engine, an unreachable database.

mod common;

use common::{
    Customer, Loaded, engines, error_code, ids, order_cancel, order_write, servers, status_of,
};
use concierge_testkit::Instance;
use serde_json::json;

/// The shop's tools: the writes of one order, a write of many, a counter, a list and a report
/// that takes too long.
fn tools(loaded: &Loaded) -> String {
    let sleep = match loaded.engine {
        "postgres" => "SELECT pg_sleep(5) AS slept",
        "mariadb" => "SELECT SLEEP(5) AS slept",
        // SQLite has no sleep: a count that never ends.
        _ => {
            "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c) SELECT count(*) AS slept FROM c"
        }
    };
    let pay = order_write(
        "order_pay",
        "Mark one open order paid.",
        "",
        "UPDATE orders SET status = 'paid' WHERE id = :id AND customer = :customer AND status = 'open'",
    );
    let remove = order_write(
        "order_remove",
        "Remove one order, answering what was removed.",
        "",
        "DELETE FROM orders WHERE id = :id AND customer = :customer RETURNING id, status",
    );
    // A value the database makes anew on every run, as a sequence's next id is.
    let luck = if loaded.engine == "mariadb" {
        "RAND()"
    } else {
        "random()"
    };
    let add = format!(
        r#"
[[apps.shop.tool]]
name = "counter_add"
description = "Add a counter."
write = true
confirm = true
sql = "INSERT INTO counters (id, n) VALUES (:id, 0) RETURNING id, {luck} AS luck"
input_schema = {{ properties = {{ id = {{ type = "integer" }} }}, required = ["id"] }}
"#
    );
    let label = r#"
[[apps.shop.tool]]
name = "order_label"
description = "Label one order."
write = true
sql = "UPDATE orders SET status = :status WHERE id = :id AND customer = :customer"
bind = { customer = "client" }
input_schema = { properties = { id = { type = "integer" }, status = { type = "string" } }, required = ["id", "status"] }
"#;
    format!(
        r#"{cancel}{pay}{remove}{label}{add}
[[apps.shop.tool]]
name = "order_list"
description = "Orders of this customer."
sql = "SELECT id, status FROM orders WHERE customer = :customer ORDER BY id"
bind = {{ customer = "client" }}

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
"#,
        cancel = order_cancel(),
    )
}

/// The shop on `loaded` with the tools above, and the folder of its store of writes (which
/// must live as long as the deployment).
async fn deploy(loaded: &Loaded) -> (Instance, tempfile::TempDir) {
    loaded
        .serve_writes("statement_timeout = \"300ms\"", &tools(loaded))
        .await
}

#[tokio::test]
async fn a_dry_run_changes_nothing_and_a_confirmed_write_changes_one_row() {
    for loaded in engines().await {
        let at = loaded.engine;
        let (deployment, _writes) = deploy(&loaded).await;
        let acme = Customer::new(&deployment.router, "acme");
        let list = || acme.call("order_list", json!({}));

        let arguments = json!({"id": 1, "idempotency_key": "d1", "dry_run": true});
        let dry = acme.call("order_cancel", arguments).await;
        assert_eq!(dry["structuredContent"]["affected_rows"], 1, "{at}: {dry}");
        assert_eq!(
            status_of(&list().await, 1),
            "open",
            "{at}: the dry run changed nothing"
        );

        let arguments = json!({"id": 1, "idempotency_key": "c1"});
        let preview = acme.call("order_cancel", arguments).await;
        let preview = &preview["structuredContent"];
        assert_eq!(preview["confirmationRequired"], true, "{at}: {preview}");
        assert_eq!(preview["preview"]["affected_rows"], 1, "{at}");
        assert_eq!(
            status_of(&list().await, 1),
            "open",
            "{at}: the preview changed nothing"
        );
        let token = preview["confirmToken"].as_str().unwrap();
        let arguments = json!({"id": 1, "idempotency_key": "c1", "confirm_token": token});
        let done = acme.call("order_cancel", arguments).await;
        assert_eq!(
            done["structuredContent"]["affected_rows"], 1,
            "{at}: {done}"
        );
        assert_eq!(status_of(&list().await, 1), "cancelled", "{at}");
        // Another customer's order is not theirs to cancel: nothing matches.
        let arguments = json!({"id": 4, "idempotency_key": "c2"});
        let preview = acme.call("order_cancel", arguments).await;
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
        let (deployment, _writes) = deploy(&loaded).await;
        let acme = Customer::new(&deployment.router, "acme");
        let arguments = json!({"id": 5, "idempotency_key": "s1"});
        let preview = acme.call("order_cancel", arguments).await;
        assert_eq!(
            preview["structuredContent"]["preview"]["affected_rows"], 1,
            "{at}: {preview}"
        );
        let token = preview["structuredContent"]["confirmToken"]
            .as_str()
            .unwrap()
            .to_string();
        // Meanwhile the order is paid: the cancel would now change nothing.
        let paid = acme
            .call("order_pay", json!({"id": 5, "idempotency_key": "p1"}))
            .await;
        assert_eq!(
            paid["structuredContent"]["affected_rows"], 1,
            "{at}: {paid}"
        );
        let arguments = json!({"id": 5, "idempotency_key": "s1", "confirm_token": token});
        let stale = acme.call("order_cancel", arguments).await;
        assert_eq!(error_code(&stale), "stale_preview", "{at}: {stale}");
        let list = acme.call("order_list", json!({})).await;
        assert_eq!(status_of(&list, 5), "paid", "{at}: nothing changed");
        // A token whose preview digest was swapped does not verify.
        let arguments = json!({"id": 1, "idempotency_key": "s2"});
        let preview = acme.call("order_cancel", arguments).await;
        let token = preview["structuredContent"]["confirmToken"]
            .as_str()
            .unwrap();
        let (signed, _) = token.rsplit_once('.').unwrap();
        let swapped = format!("{signed}.0000000000000000");
        let arguments = json!({"id": 1, "idempotency_key": "s2", "confirm_token": swapped});
        let refused = acme.call("order_cancel", arguments).await;
        assert_eq!(
            error_code(&refused),
            "confirm_token_invalid",
            "{at}: {refused}"
        );
    }
}

/// A confirmed insert that returns what the database made for it (an id from a sequence, a
/// time) commits: its preview's rows cannot be the run's, and the insert is the confirmed
/// arguments' all the same.
#[tokio::test]
async fn a_confirmed_insert_returning_what_the_database_made_commits() {
    for loaded in engines().await {
        let at = loaded.engine;
        let (deployment, _writes) = deploy(&loaded).await;
        let acme = Customer::new(&deployment.router, "acme");
        let preview = acme
            .call("counter_add", json!({"id": 7, "idempotency_key": "a1"}))
            .await;
        let token = preview["structuredContent"]["confirmToken"]
            .as_str()
            .unwrap_or_else(|| panic!("{at}: {preview}"))
            .to_string();
        let arguments = json!({"id": 7, "idempotency_key": "a1", "confirm_token": token});
        let done = acme.call("counter_add", arguments).await;
        assert_eq!(done["isError"], false, "{at}: {done}");
        assert_eq!(
            done["structuredContent"]["rows"][0]["id"], 7,
            "{at}: {done}"
        );
    }
}

#[tokio::test]
async fn a_dry_run_of_a_write_with_returning_shows_the_rows_it_would_change() {
    for loaded in engines().await {
        let at = loaded.engine;
        let (deployment, _writes) = deploy(&loaded).await;
        let acme = Customer::new(&deployment.router, "acme");
        let arguments = json!({"id": 2, "idempotency_key": "r1", "dry_run": true});
        let dry = acme.call("order_remove", arguments).await;
        let result = &dry["structuredContent"];
        assert_eq!(result["affected_rows"], 1, "{at}: {dry}");
        assert_eq!(
            result["rows"],
            json!([{"id": 2, "status": "paid"}]),
            "{at}: {dry}"
        );
        let list = acme.call("order_list", json!({})).await;
        assert_eq!(status_of(&list, 2), "paid", "{at}: still there");
        let done = acme
            .call("order_remove", json!({"id": 2, "idempotency_key": "r2"}))
            .await;
        assert_eq!(
            done["structuredContent"]["affected_rows"], 1,
            "{at}: {done}"
        );
        let list = acme.call("order_list", json!({})).await;
        assert_eq!(status_of(&list, 2), "", "{at}: removed");
    }
}

#[tokio::test]
async fn a_write_past_its_row_bound_is_rolled_back_and_refused() {
    for loaded in engines().await {
        let at = loaded.engine;
        let (deployment, _writes) = deploy(&loaded).await;
        let acme = Customer::new(&deployment.router, "acme");
        // acme has two open orders; the tool may change one.
        let arguments = json!({"idempotency_key": "x1"});
        let refused = acme.call("orders_close_all", arguments).await;
        assert_eq!(error_code(&refused), "too_many_rows", "{at}: {refused}");
        let text = refused["content"][0]["text"].as_str().unwrap();
        assert!(
            text.contains("2 rows") && text.contains("nothing was changed"),
            "{at}: {text}"
        );
        let list = acme.call("order_list", json!({})).await;
        assert_eq!(status_of(&list, 1), "open", "{at}: rolled back");
        assert_eq!(status_of(&list, 5), "open", "{at}: rolled back");
        // bolt has one: allowed.
        let bolt = Customer::new(&deployment.router, "bolt");
        let arguments = json!({"idempotency_key": "x2"});
        let done = bolt.call("orders_close_all", arguments).await;
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
        let (deployment, _writes) = deploy(&loaded).await;
        let acme = Customer::new(&deployment.router, "acme");
        let calls = (0..50).map(|_| acme.call("counter_bump", json!({"idempotency_key": "same"})));
        let answers = futures::future::join_all(calls).await;
        let written = answers.iter().filter(|a| a["isError"] == false).count();
        assert!(written >= 1, "{at}: {:?}", answers.first());
        let count = acme.call("counter_get", json!({})).await;
        assert_eq!(ids(&count), [1], "{at}: one update for fifty calls");
    }
}

#[tokio::test]
async fn a_statement_past_its_timeout_is_cancelled_in_the_database() {
    for loaded in engines().await {
        let at = loaded.engine;
        let (deployment, _writes) = deploy(&loaded).await;
        let acme = Customer::new(&deployment.router, "acme");
        let started = std::time::Instant::now();
        let answer = acme.call("slow_report", json!({})).await;
        assert_eq!(error_code(&answer), "timeout", "{at}: {answer}");
        assert!(
            started.elapsed() < std::time::Duration::from_secs(4),
            "{at}: not waited out"
        );
        let text = answer["content"][0]["text"].as_str().unwrap();
        assert!(text.contains("try again"), "{at}: {text}");
        // Nothing left running in the database.
        let running = match at {
            "postgres" => {
                "SELECT count(*) FROM pg_stat_activity WHERE query LIKE '%pg_sleep(5)%' AND state = 'active' AND pid <> pg_backend_pid()"
            }
            "mariadb" => {
                "SELECT count(*) FROM information_schema.processlist WHERE info LIKE '%SLEEP(5)%' AND id <> CONNECTION_ID()"
            }
            _ => "",
        };
        if !running.is_empty() {
            // The engine ends a killed statement on its own time (MariaDB's KILL QUERY is
            // asynchronous): it is gone within seconds, not the five it asked for.
            let deadline = std::time::Instant::now() + std::time::Duration::from_secs(3);
            while loaded.number(running).await != 0 {
                assert!(
                    std::time::Instant::now() < deadline,
                    "{at}: the statement is gone from the process list"
                );
                tokio::task::yield_now().await;
            }
        }
        // The pool still serves.
        let list = acme.call("order_list", json!({})).await;
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
        let (deployment, _writes) = deploy(&Loaded::server(engine, url)).await;
        let acme = Customer::new(&deployment.router, "acme");
        let answer = acme.call("order_list", json!({})).await;
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
                "SELECT count(*) FROM order_numbers WHERE is_called",
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
        for sql in setup {
            loaded.execute(sql).await;
        }
        let deployment = reading(&loaded, statement).await;
        let answer = Customer::new(&deployment.router, "acme")
            .call("number_next", json!({}))
            .await;
        assert_eq!(error_code(&answer), "read_only", "{at}: {answer}");
        assert_eq!(loaded.number(left).await, 0, "{at}: nothing changed");
    }
}

/// A read-only instance with one read tool running `statement`.
async fn reading(loaded: &Loaded, statement: &str) -> Instance {
    let tool = format!(
        "[[apps.shop.tool]]\nname = \"number_next\"\ndescription = \"The next number.\"\nsql = \"{statement}\""
    );
    loaded.serve("", &tool).await
}

/// A value the database cannot take where the statement puts it (a status longer than its
/// `VARCHAR(20)`) is the caller's to fix: a refusal that says so, not an internal error, and
/// without the database's text (which names the column). SQLite does not hold a `VARCHAR` to
/// its length: there the label is simply written.
#[tokio::test]
async fn a_value_the_database_cannot_take_is_refused_as_the_callers() {
    for loaded in servers().await {
        let at = loaded.engine;
        let (deployment, _writes) = deploy(&loaded).await;
        let acme = Customer::new(&deployment.router, "acme");
        let long = "x".repeat(30);
        let arguments = json!({"id": 2, "status": long, "idempotency_key": "l1"});
        let answer = acme.call("order_label", arguments).await;
        assert_eq!(error_code(&answer), "invalid_value", "{at}: {answer}");
        let text = answer["content"][0]["text"].as_str().unwrap();
        assert!(
            !text.contains("status") && !text.contains("orders"),
            "{at}: {text}"
        );
        assert_eq!(
            status_of(&acme.call("order_list", json!({})).await, 2),
            "paid",
            "{at}"
        );
    }
}

/// PostgreSQL's endless dates and times are answered as it spells them, and a date of the usual
/// kind as ever: chrono's arithmetic, which panics past its range, is not asked.
#[tokio::test]
async fn postgres_infinite_dates_are_answered_as_it_spells_them() {
    for loaded in engines().await {
        if loaded.engine != "postgres" {
            continue;
        }
        let statement = "SELECT 'infinity'::date AS d, '-infinity'::timestamp AS t, \
            'infinity'::timestamptz AS z, DATE '2026-12-07' AS today, \
            TIMESTAMP '2026-12-07 10:30:00.25' AS at";
        let deployment = reading(&loaded, statement).await;
        let acme = Customer::new(&deployment.router, "acme");
        let answer = acme.call("number_next", json!({})).await;
        assert_eq!(
            answer["structuredContent"]["rows"][0],
            json!({"d": "infinity", "t": "-infinity", "z": "infinity",
                   "today": "2026-12-07", "at": "2026-12-07T10:30:00.250Z"}),
            "{answer}"
        );
    }
}

/// MariaDB's `YEAR` and `BIT` columns are answered as the integers its schema says.
#[tokio::test]
async fn mariadb_years_and_bits_are_integers() {
    for loaded in engines().await {
        if loaded.engine != "mariadb" {
            continue;
        }
        loaded
            .execute("CREATE TABLE calendar (y YEAR NOT NULL, flags BIT(10) NOT NULL)")
            .await;
        loaded
            .execute("INSERT INTO calendar (y, flags) VALUES (2026, b'1000000001')")
            .await;
        let deployment = reading(&loaded, "SELECT y, flags FROM calendar").await;
        let acme = Customer::new(&deployment.router, "acme");
        let answer = acme.call("number_next", json!({})).await;
        assert_eq!(
            answer["structuredContent"]["rows"][0],
            json!({"y": 2026, "flags": 513}),
            "{answer}"
        );
    }
}
