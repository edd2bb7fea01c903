//! Values of the engines' own types, both ways, on the real engines: a parameter bound as the
//! type its statement needs (PostgreSQL says which when it prepares the statement), text in a
//! binary collation read as text (MariaDB), and a value the database cannot compute with refused
//! as the caller's to fix.

mod common;

use common::{Customer, Loaded, engines, error_code, ids};
use concierge_testkit::Instance;
use serde_json::{Value, json};

/// A clinic's visits in PostgreSQL's own types: an enum, a smallint, a timestamp with its zone,
/// a date, a uuid, a numeric, a real, a jsonb, a boolean; and a function that takes an `integer`.
const CLINIC: &str = r#"
CREATE TYPE visit_state AS ENUM ('booked', 'done', 'missed');
CREATE TABLE visits (
    id integer PRIMARY KEY,
    patient smallint NOT NULL,
    state visit_state NOT NULL,
    at timestamptz NOT NULL,
    day date NOT NULL,
    ref uuid NOT NULL,
    fee numeric(8,2) NOT NULL,
    score real NOT NULL,
    note jsonb NOT NULL,
    paid boolean NOT NULL
);
INSERT INTO visits VALUES
    (1, 7, 'booked', '2026-11-01 10:00:00+00', '2026-11-01', '6f1c2b1e-0000-4000-8000-000000000001',
     12.50, 1.5, '{"room": 3}', false),
    (2, 7, 'done', '2026-11-02 10:00:00+00', '2026-11-02', '6f1c2b1e-0000-4000-8000-000000000002',
     99.99, 2.5, '{"room": 4}', true),
    (3, 8, 'done', '2026-11-03 10:00:00+00', '2026-11-03', '6f1c2b1e-0000-4000-8000-000000000003',
     5.00, 3.5, '{"room": 3}', true);
CREATE FUNCTION visit_count(patient integer) RETURNS bigint LANGUAGE sql STABLE
    AS 'SELECT count(*) FROM visits WHERE visits.patient = $1';
"#;

const CLINIC_TOOLS: &str = r#"
[[apps.shop.tool]]
name = "visit_count"
description = "How many visits a patient had."
sql = "SELECT visit_count(:patient) AS visits"
input_schema = { properties = { patient = { type = "integer" } }, required = ["patient"] }

[[apps.shop.tool]]
name = "visit_find"
description = "Visits by any of their fields."
sql = """
SELECT id FROM visits
WHERE (:state IS NULL OR state = :state)
  AND (:since IS NULL OR at >= :since)
  AND (:day IS NULL OR day = :day)
  AND (:ref IS NULL OR ref = :ref)
  AND (:fee IS NULL OR fee = :fee)
  AND (:fee_text IS NULL OR fee = :fee_text)
  AND (:score IS NULL OR score = :score)
  AND (:patient IS NULL OR patient = :patient)
  AND (:patient_text IS NULL OR patient = :patient_text)
  AND (:ids IS NULL OR id IN (:ids))
  AND (:states IS NULL OR state IN (:states))
  AND (:room IS NULL OR note @> :room)
  AND (:paid IS NULL OR paid = :paid)
ORDER BY id"""
[apps.shop.tool.input_schema.properties]
state = { type = "string" }
since = { type = "string" }
day = { type = "string" }
ref = { type = "string" }
fee = { type = "number" }
fee_text = { type = "string" }
score = { type = "number" }
patient = { type = "integer" }
patient_text = { type = "string" }
ids = { type = "array", items = { type = "integer" } }
states = { type = "array", items = { type = "string" } }
room = { type = "object" }
paid = { type = "boolean" }

[[apps.shop.tool]]
name = "visit_within"
description = "Visits before a moment and a gap, labelled."
sql = "SELECT id, :label AS label FROM visits WHERE at < CAST(:from AS timestamptz) + CAST(:gap AS interval) ORDER BY id"
input_schema = { properties = { label = { type = "string" }, from = { type = "string" }, gap = { type = "string" } }, required = ["label", "from", "gap"] }

[[apps.shop.tool]]
name = "visit_close"
description = "Close one visit at a time."
write = true
sql = "UPDATE visits SET state = :state, at = :at, day = :at WHERE id = :id RETURNING id, state, at, day"
input_schema = { properties = { id = { type = "integer" }, state = { type = "string" }, at = { type = "string" } }, required = ["id", "state", "at"] }
"#;

/// The clinic on a PostgreSQL database of its own, with its store of writes; `None` when the
/// test command started no PostgreSQL.
async fn clinic() -> Option<(Instance, tempfile::TempDir)> {
    let url = concierge_testkit::postgres::fresh_database("sql_types").await?;
    let loaded = Loaded::server("postgres", url);
    loaded.execute(CLINIC).await;
    Some(loaded.serve_writes("", CLINIC_TOOLS).await)
}

#[tokio::test]
async fn postgres_binds_each_parameter_as_the_type_its_statement_needs() {
    let Some((deployment, _writes)) = clinic().await else {
        return;
    };
    let acme = Customer::new(&deployment.router, "acme");
    // A function over an `integer`, called with a JSON integer.
    let counted = acme.call("visit_count", json!({"patient": 7})).await;
    assert_eq!(counted["isError"], false, "{counted}");
    assert_eq!(counted["structuredContent"]["rows"][0]["visits"], 2);

    for (arguments, expected) in [
        (json!({}), vec![1, 2, 3]),
        (json!({"state": "done"}), vec![2, 3]),
        (json!({"since": "2026-11-02T00:00:00Z"}), vec![2, 3]),
        (json!({"since": "2026-11-02T11:00:00+02:00"}), vec![2, 3]),
        (json!({"day": "2026-11-01"}), vec![1]),
        (
            json!({"ref": "6f1c2b1e-0000-4000-8000-000000000002"}),
            vec![2],
        ),
        (json!({"fee": 99.99}), vec![2]),
        (json!({"fee": 5}), vec![3]),
        (json!({"fee_text": "12.50"}), vec![1]),
        (json!({"score": 2.5}), vec![2]),
        (json!({"patient": 8}), vec![3]),
        (json!({"patient_text": "7"}), vec![1, 2]),
        (json!({"ids": [1, 3]}), vec![1, 3]),
        (json!({"states": ["booked", "missed"]}), vec![1]),
        (json!({"room": {"room": 3}}), vec![1, 3]),
        (json!({"paid": false}), vec![1]),
    ] {
        let found = acme.call("visit_find", arguments.clone()).await;
        assert_eq!(ids(&found), expected, "{arguments}");
    }

    // A value that is not of the type its parameter needs is refused naming the argument and
    // what it must be; a label the enum does not have, by the database's own data exception.
    for (arguments, says) in [
        (json!({"ref": "not-a-uuid"}), "must be a uuid"),
        (json!({"day": "yesterday-ish"}), "must be a date"),
        (json!({"since": "2026-13-45"}), "must be a date and time"),
        (json!({"fee_text": "twelve"}), "must be a decimal number"),
        (json!({"patient": 70_000}), "from -32768 to 32767"),
        (json!({"patient_text": "seven"}), "must be a whole number"),
        (json!({"ids": [10_000_000_000i64]}), "each item must be"),
    ] {
        let refused = acme.call("visit_find", arguments.clone()).await;
        assert_eq!(error_code(&refused), "invalid_argument", "{arguments}");
        let error: Value =
            serde_json::from_str(refused["content"][0]["text"].as_str().unwrap()).unwrap();
        let field = arguments.as_object().unwrap().keys().next().unwrap();
        assert_eq!(error["error"]["field"], field.as_str(), "{error}");
        let message = error["error"]["message"].as_str().unwrap();
        assert!(message.contains(says), "{arguments}: {message}");
    }
    let refused = acme.call("visit_find", json!({"state": "lost"})).await;
    assert_eq!(error_code(&refused), "invalid_value", "{refused}");

    // Where PostgreSQL cannot tell (a value only selected) or needs a type no JSON value is
    // written as (an interval), the value is bound as its schema's type: a cast works as written.
    let arguments =
        json!({"label": "soon", "from": "2026-11-01T00:00:00Z", "gap": "1 day 12 hours"});
    let within = acme.call("visit_within", arguments).await;
    assert_eq!(ids(&within), [1, 2], "{within}");
    assert_eq!(within["structuredContent"]["rows"][0]["label"], "soon");

    // A write assigns a string to an enum, a timestamp and a date alike.
    let arguments =
        json!({"id": 1, "state": "missed", "at": "2026-11-04T09:30:00Z", "idempotency_key": "v1"});
    let closed = acme.call("visit_close", arguments).await;
    assert_eq!(closed["isError"], false, "{closed}");
    let row = &closed["structuredContent"]["rows"][0];
    assert_eq!(row["state"], "missed", "{row}");
    assert_eq!(row["at"], "2026-11-04T09:30:00Z", "{row}");
    assert_eq!(row["day"], "2026-11-04", "{row}");

    // `check --live` prepares the same statements the same way.
    let (_, check) = &deployment.platform.live_checks[0];
    let report = check().await;
    assert!(report.problems.is_empty(), "{report:?}");
    assert!(
        report
            .notes
            .contains(&"tool `visit_count` returns visits".to_string()),
        "{report:?}"
    );
}

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
    let deployment = loaded.serve("", PATIENT_TOOLS).await;
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
        let (deployment, _writes) = loaded.serve_writes("", TOOLS).await;
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
