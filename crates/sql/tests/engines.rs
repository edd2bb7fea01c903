//! The kind `sql` on the real engines: SQLite always, PostgreSQL and MariaDB when the test
//! command started them (`scripts/postgres.sh`, `scripts/mariadb.sh`). One fixture is loaded
//! into each, the same tool declarations serve it, and the tools are called over the
//! platform's HTTP endpoint as a client calls them.

mod common;

use common::{Customer, Loaded, engines, error_code, ids, servers};
use concierge_testkit::Instance;
use serde_json::{Value, json};

/// The same tools on every engine: a list with optional filters, an array and a fragment, a
/// lookup by a status written freely, and every id of a customer.
const TOOLS: &str = r#"
[[apps.shop.tool]]
name = "order_list"
description = "Orders of this customer, newest first."
sql = """
SELECT id, status, total, placed_at FROM orders
WHERE customer = :customer
  AND (:status IS NULL OR status = :status)
  AND (:ids IS NULL OR id IN (:ids))
ORDER BY {sort}"""
bind = { customer = "client" }
fragments.sort = { newest = "placed_at DESC", oldest = "placed_at ASC" }
[apps.shop.tool.input_schema.properties]
status = { type = "string", enum = ["open", "paid", "shipped"] }
ids = { type = "array", items = { type = "integer" }, maxItems = 50 }
sort = { type = "string", enum = ["newest", "oldest"], default = "newest" }

[[apps.shop.tool]]
name = "order_by_status"
description = "Orders in a status written freely."
sql = "SELECT id FROM orders WHERE customer = :customer AND status = :status ORDER BY id"
bind = { customer = "client" }
max_rows = 2
input_schema = { properties = { status = { type = "string", maxLength = 100 } }, required = ["status"] }

[[apps.shop.tool]]
name = "order_amounts"
description = "One order's total, worked several ways, each beside the database's own text of it."
sql = """
SELECT total, CAST(total AS CHAR(40)) AS total_text,
       -total AS negative, CAST(-total AS CHAR(40)) AS negative_text,
       total * 100000000 AS large, CAST(total * 100000000 AS CHAR(40)) AS large_text,
       total / 1000000 AS tiny, CAST(total / 1000000 AS CHAR(60)) AS tiny_text,
       total - total AS nothing, CAST(total - total AS CHAR(40)) AS nothing_text
FROM orders WHERE id = 2"""

[[apps.shop.tool]]
name = "order_settled"
description = "Every order of this customer, with its status once it is no longer open."
sql = "SELECT id, NULLIF(status, 'open') AS settled FROM orders WHERE customer = :customer ORDER BY id"
bind = { customer = "client" }

[[apps.shop.tool]]
name = "order_figure"
description = "A figure of this customer's orders: how many, or their mean total."
sql = "SELECT {figure} AS figure FROM orders WHERE customer = :customer"
bind = { customer = "client" }
fragments.figure = { count = "count(*)", mean = "avg(total)" }
input_schema.properties = { figure = { type = "string", enum = ["count", "mean"], default = "count" } }

[[apps.shop.tool]]
name = "order_ids"
description = "Every order id of this customer."
sql = "SELECT id FROM orders WHERE customer = :customer ORDER BY id"
bind = { customer = "client" }
max_rows = 3
"#;

/// The shop with [`TOOLS`] on `loaded`.
async fn deploy(loaded: &Loaded) -> Instance {
    loaded.serve("statement_timeout = \"300ms\"", TOOLS).await
}

#[tokio::test]
async fn optional_filters_arrays_and_fragments_return_the_same_rows_on_every_engine() {
    for loaded in engines().await {
        let at = loaded.engine;
        let deployment = deploy(&loaded).await;
        let acme = Customer::new(&deployment.router, "acme");
        for (case, arguments, expected) in [
            ("no filter", json!({}), vec![5, 3, 2, 1]),
            ("a status", json!({"status": "open"}), vec![5, 1]),
            (
                "an array (4 is another customer's)",
                json!({"ids": [1, 2, 4]}),
                vec![2, 1],
            ),
            ("an empty array", json!({"ids": []}), vec![]),
            (
                "a fragment",
                json!({"sort": "oldest", "status": "open"}),
                vec![1, 5],
            ),
        ] {
            let listed = acme.call("order_list", arguments).await;
            assert_eq!(ids(&listed), expected, "{at}: {case}");
        }
        // Another client sees only its own rows.
        let bolt = Customer::new(&deployment.router, "bolt");
        let listed = bolt.call("order_list", json!({})).await;
        assert_eq!(ids(&listed), [4], "{at}: bolt");
        // What `bind` fills in cannot be passed.
        let refused = acme.call("order_list", json!({"customer": "bolt"})).await;
        assert_eq!(error_code(&refused), "argument_not_allowed", "{at}");
    }
}

#[tokio::test]
async fn injection_is_refused_by_the_schema_or_bound_harmlessly() {
    for loaded in engines().await {
        let at = loaded.engine;
        let deployment = deploy(&loaded).await;
        let acme = Customer::new(&deployment.router, "acme");
        for arguments in [
            json!({"status": "open' OR '1'='1"}),
            json!({"ids": ["1 OR 1=1"]}),
            json!({"sort": "placed_at; DROP TABLE orders"}),
            // Integers a database cannot bind as one: refused, never dropped from a list.
            json!({"ids": [10_000_000_000_000_000_000u64]}),
            json!({"ids": [1e19]}),
            json!({"ids": [-1e19]}),
        ] {
            let answer = acme.call("order_list", arguments.clone()).await;
            assert_eq!(error_code(&answer), "invalid_argument", "{at}: {arguments}");
        }
        for status in [
            "x' OR '1'='1",
            "open'; DELETE FROM orders; --",
            "' UNION SELECT 1 --",
        ] {
            let answer = acme
                .call("order_by_status", json!({"status": status}))
                .await;
            assert_eq!(ids(&answer), Vec::<i64>::new(), "{at}: {status}");
        }
        // Nothing changed.
        let listed = acme.call("order_list", json!({})).await;
        assert_eq!(ids(&listed), [5, 3, 2, 1], "{at}");
    }
}

#[tokio::test]
async fn a_result_stops_at_the_tools_row_bound_and_says_so() {
    for loaded in engines().await {
        let at = loaded.engine;
        let deployment = deploy(&loaded).await;
        let acme = Customer::new(&deployment.router, "acme");
        let answer = acme
            .call("order_by_status", json!({"status": "open"}))
            .await;
        assert_eq!(ids(&answer), [1, 5], "{at}");
        let result = &answer["structuredContent"];
        assert_eq!(result["truncated"], false, "{at}: exactly the bound");
        let answer = acme.call("order_ids", json!({})).await;
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
        let deployment = deploy(&loaded).await;
        let acme = Customer::new(&deployment.router, "acme");
        let answer = acme.call("order_list", json!({"ids": [1]})).await;
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

/// The tool `name` as `tools/list` lists it to a customer.
async fn listed(deployment: &Instance, name: &str) -> Value {
    let request = concierge_testkit::mcp_post("/mcp")
        .header("authorization", "Bearer token-acme")
        .body(axum::body::Body::from(
            json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list"}).to_string(),
        ))
        .unwrap();
    let (_, _, text) = concierge_testkit::send(&deployment.router, request).await;
    let listed: Value = serde_json::from_str(&text).expect("JSON");
    let tools = listed["result"]["tools"].as_array().expect("tools");
    tools
        .iter()
        .find(|t| t["name"] == name)
        .unwrap_or_else(|| panic!("{name} listed"))
        .clone()
}

#[tokio::test]
async fn a_read_tools_rows_are_described_by_the_database() {
    for loaded in engines().await {
        let at = loaded.engine;
        let deployment = deploy(&loaded).await;
        let tool = listed(&deployment, "order_list").await;
        let row = &tool["outputSchema"]["properties"]["rows"]["items"];
        let columns: Vec<&String> = row["properties"].as_object().unwrap().keys().collect();
        assert_eq!(columns, ["id", "status", "total", "placed_at"], "{at}");
        // A NULL column is left out of its row, as the platform leaves out every null.
        assert!(row.get("required").is_none(), "{at}: {row}");
        let id = &row["properties"]["id"];
        match at {
            // SQLite's values are as stored: any JSON value.
            "sqlite" => assert_eq!(id, &json!({}), "{at}"),
            _ => assert_eq!(id["type"][0], "integer", "{at}: {row}"),
        }
    }
}

/// A column whose type a fragment choice changes (a count, or a decimal mean) promises no type,
/// and the answer of either choice is valid against the published schema (the tests' build
/// checks every result against it).
#[tokio::test]
async fn a_column_a_fragment_choice_retypes_promises_no_type() {
    for loaded in engines().await {
        let at = loaded.engine;
        let deployment = deploy(&loaded).await;
        let tool = listed(&deployment, "order_figure").await;
        let row = &tool["outputSchema"]["properties"]["rows"]["items"];
        assert_eq!(row["properties"]["figure"], json!({}), "{at}: {row}");
        let acme = Customer::new(&deployment.router, "acme");
        for figure in ["count", "mean"] {
            let answer = acme.call("order_figure", json!({"figure": figure})).await;
            assert_eq!(answer["isError"], false, "{at}: {figure}: {answer}");
        }
    }
}

#[tokio::test]
async fn a_null_column_is_left_out_of_its_row_and_the_answer_keeps_its_schema() {
    for loaded in engines().await {
        let at = loaded.engine;
        let deployment = deploy(&loaded).await;
        let acme = Customer::new(&deployment.router, "acme");
        // The tests' build checks every result against its tool's outputSchema.
        let answer = acme.call("order_settled", json!({})).await;
        assert_eq!(answer["isError"], false, "{at}: {answer}");
        let rows = answer["structuredContent"]["rows"]
            .as_array()
            .unwrap()
            .clone();
        let settled: Vec<(i64, Option<&str>)> = (rows.iter())
            .map(|row| {
                (
                    row["id"].as_i64().unwrap(),
                    row.get("settled").and_then(Value::as_str),
                )
            })
            .collect();
        let statuses: Vec<(i64, Option<&str>)> = vec![
            (1, None),
            (2, Some("paid")),
            (3, Some("shipped")),
            (5, None),
        ];
        assert_eq!(settled, statuses, "{at}: {rows:?}");
    }
}

#[tokio::test]
async fn a_decimal_reads_exactly_as_the_database_writes_it() {
    // SQLite has no decimal type: its numbers are kept as stored.
    for loaded in servers().await {
        let at = loaded.engine;
        let deployment = deploy(&loaded).await;
        let acme = Customer::new(&deployment.router, "acme");
        let answer = acme.call("order_amounts", json!({})).await;
        let row = &answer["structuredContent"]["rows"][0];
        for column in ["total", "negative", "large", "tiny", "nothing"] {
            let text = row[format!("{column}_text")]
                .as_str()
                .expect("the database's text");
            assert_eq!(
                row[column].as_str(),
                Some(text.trim()),
                "{at}: {column}: {row}"
            );
        }
    }
}

#[tokio::test]
async fn a_read_after_the_database_closed_every_connection_is_answered() {
    for loaded in engines().await {
        let at = loaded.engine;
        let deployment = deploy(&loaded).await;
        let acme = Customer::new(&deployment.router, "acme");
        let warm = acme.call("order_ids", json!({})).await;
        assert_eq!(warm["isError"], false, "{at}: {warm}");
        // The database ends every session of the shop's (a restart, a failover): the
        // connections kept warm are gone without a word.
        if at == "sqlite" {
            continue;
        }
        loaded.end_other_sessions().await;
        let answer = acme.call("order_ids", json!({})).await;
        assert_eq!(answer["isError"], false, "{at}: {answer}");
        assert_eq!(ids(&answer), ids(&warm), "{at}");
    }
}
