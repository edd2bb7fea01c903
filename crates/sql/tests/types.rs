//! Values of the engines' own types, both ways, on the real engines: a parameter bound as the
//! type its statement needs (PostgreSQL says which when it prepares the statement), text in a
//! binary collation read as text (MariaDB), and a value the database cannot compute with refused
//! as the caller's to fix.

mod common;

use common::{Customer, Loaded, Shop, engines, error_code, ids, writes_at};
use serde_json::{Value, json};

/// Patients on MariaDB: their text in a binary collation (case-sensitive codes), a JSON column
/// (MariaDB's `JSON` is a `LONGTEXT` in `utf8mb4_bin` with a check), and real binary columns.
const PATIENTS: &str = r#"
CREATE TABLE patients (
    id INT PRIMARY KEY,
    code VARCHAR(20) COLLATE utf8mb4_bin NOT NULL,
    name VARCHAR(40) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin NOT NULL,
    notes TEXT COLLATE utf8mb4_bin,
    initials CHAR(3) COLLATE utf8mb4_bin,
    profile JSON,
    token VARBINARY(16),
    photo BLOB
) DEFAULT CHARSET = utf8mb4 COLLATE = utf8mb4_bin;
INSERT INTO patients VALUES
    (1, 'Ab-1', 'Zoë', 'takes tea', 'ZAB', '{"allergies": ["nuts"], "age": 41}', X'00FF10', X'0102'),
    (2, 'ab-1', 'Ana', NULL, NULL, NULL, NULL, NULL);
"#;

const PATIENT_TOOLS: &str = r#"
[[apps.shop.tool]]
name = "patient_find"
description = "A patient by their case-sensitive code."
sql = "SELECT id, code, name, notes, initials, profile, token, photo FROM patients WHERE code = :code"
input_schema = { properties = { code = { type = "string" } }, required = ["code"] }
"#;

#[tokio::test]
async fn mariadb_text_in_a_binary_collation_is_text_and_binary_stays_base64() {
    let Some(url) = concierge_testkit::mariadb::fresh_database("sql_types").await else {
        return;
    };
    let loaded = Loaded::server("mariadb", url);
    loaded.execute(PATIENTS).await;
    let shop = Shop {
        settings: &loaded.settings(),
        tools: PATIENT_TOOLS,
        ..Shop::default()
    };
    let deployment = shop.deploy().await;
    let acme = Customer::new(&deployment.router, "acme");
    // The tests' build checks every answer against the tool's published schema.
    let found = acme.call("patient_find", json!({"code": "Ab-1"})).await;
    assert_eq!(ids(&found), [1], "{found}");
    let row = &found["structuredContent"]["rows"][0];
    assert_eq!(row["code"], "Ab-1", "{row}");
    assert_eq!(row["name"], "Zoë", "{row}");
    assert_eq!(row["notes"], "takes tea", "{row}");
    assert_eq!(row["initials"], "ZAB", "{row}");
    // MariaDB's JSON is a LONGTEXT on the wire, and nothing there tells it from one (the
    // extended type info that would is not asked for by the driver): its text, as stored.
    let profile: Value = serde_json::from_str(row["profile"].as_str().expect("text")).unwrap();
    assert_eq!(profile, json!({"allergies": ["nuts"], "age": 41}), "{row}");
    assert_eq!(row["token"], "AP8Q", "{row}: VARBINARY as base64");
    assert_eq!(row["photo"], "AQI=", "{row}: BLOB as base64");
    let other = acme.call("patient_find", json!({"code": "ab-1"})).await;
    assert_eq!(ids(&other), [2], "the collation is case-sensitive");
    assert_eq!(other["structuredContent"]["rows"][0]["name"], "Ana");
}

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
