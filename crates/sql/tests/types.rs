//! Values of the engines' own types, both ways, on the real engines: a parameter bound as the
//! type its statement needs (PostgreSQL says which when it prepares the statement), text in a
//! binary collation read as text (MariaDB), and a value the database cannot compute with refused
//! as the caller's to fix.

mod common;

use common::{Customer, Shop, engines, error_code, writes_at};
use serde_json::{Value, json};

#[tokio::test]
async fn a_division_by_zero_is_the_callers_value_to_fix() {
    const TOOLS: &str = r#"
[[apps.shop.tool]]
name = "order_share"
description = "One order's total split in parts."
sql = "SELECT total / :parts AS share FROM orders WHERE id = 1"
input_schema = { properties = { parts = { type = "integer" } }, required = ["parts"] }

[[apps.shop.tool]]
name = "counter_split"
description = "Set the counter to ten split in parts."
write = true
sql = "UPDATE counters SET n = 10 / :parts WHERE id = 1"
input_schema = { properties = { parts = { type = "integer" } }, required = ["parts"] }
"#;
    for loaded in engines().await {
        let at = loaded.engine;
        let folder = tempfile::tempdir().unwrap();
        let shop = Shop {
            platform: &writes_at(&folder.path().join("writes.db")),
            settings: &format!("{}read_only = false", loaded.settings()),
            tools: TOOLS,
            ..Shop::default()
        };
        let deployment = shop.deploy().await;
        let acme = Customer::new(&deployment.router, "acme");
        let split = acme
            .call(
                "counter_split",
                json!({"parts": 0, "idempotency_key": "z1"}),
            )
            .await;
        let share = acme.call("order_share", json!({"parts": 0})).await;
        match at {
            // SQLite's division by zero is NULL, which the counter's NOT NULL refuses; a read
            // answers it (as MariaDB's does, with a warning).
            "sqlite" => {
                assert_eq!(error_code(&split), "constraint_failed", "{at}: {split}");
                assert_eq!(share["isError"], false, "{at}: {share}");
            }
            _ => {
                assert_eq!(error_code(&split), "invalid_value", "{at}: {split}");
                assert_no_sql(&split, at);
                if at == "postgres" {
                    assert_eq!(error_code(&share), "invalid_value", "{at}: {share}");
                    assert_no_sql(&share, at);
                } else {
                    assert_eq!(share["isError"], false, "{at}: {share}");
                }
            }
        }
    }
}

/// The error's text names nothing of the database: no table, column or the database's words.
fn assert_no_sql(answer: &Value, at: &str) {
    let text = answer["content"][0]["text"]
        .as_str()
        .unwrap()
        .to_lowercase();
    for word in [
        "orders", "counters", "division", "select", "update", "total",
    ] {
        assert!(!text.contains(word), "{at}: {word} in {text}");
    }
}
