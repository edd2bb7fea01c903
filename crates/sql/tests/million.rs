//! A query over a million rows answers `max_rows` of them and holds one page: the fetch stops
//! one row past the bound, so memory stays flat whatever the table's size. What is left of the
//! result is not read either: past a thousand rows the connection is closed, so the database
//! stops sending (the printed time of three calls shows it: the rest read and dropped, it was
//! about 0.6 s on the test machine; closed, about 15 ms).

mod common;

use common::{Customer, Loaded, engines};
use serde_json::json;

const ROWS: i64 = 1_000_000;

/// The one tool: every row of `big`.
const BIG_LIST: &str = r#"
[[apps.shop.tool]]
name = "big_list"
description = "Everything."
sql = "SELECT id, pad FROM big ORDER BY id"
"#;

/// Fills `big` with a million rows of about a hundred bytes each.
async fn fill(loaded: &Loaded) -> bool {
    let pad = "repeat('x', 100)";
    let statements: Vec<String> = match loaded.engine {
        "postgres" => vec![
            "CREATE TABLE big (id BIGINT PRIMARY KEY, pad TEXT NOT NULL)".into(),
            format!("INSERT INTO big SELECT g, {pad} FROM generate_series(1, {ROWS}) AS g"),
        ],
        // MariaDB's sequence engine: seq_1_to_N is a table of 1..N.
        "mariadb" => vec![
            "CREATE TABLE big (id BIGINT PRIMARY KEY, pad TEXT NOT NULL)".into(),
            format!("INSERT INTO big SELECT seq, REPEAT('x', 100) FROM seq_1_to_{ROWS}"),
        ],
        _ => return false,
    };
    for statement in statements {
        loaded.execute(&statement).await;
    }
    true
}

fn resident_kib() -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .unwrap_or_default()
        .lines()
        .find_map(|line| line.strip_prefix("VmRSS:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .unwrap_or(0)
}

#[tokio::test]
async fn a_million_rows_answer_one_page_in_flat_memory() {
    for loaded in engines().await {
        // SQLite's file is the fixture's; the two servers get a big table.
        if !fill(&loaded).await {
            continue;
        }
        let at = loaded.engine;
        let deployment = loaded
            .serve("statement_timeout = \"10s\"\nmax_rows = 50", BIG_LIST)
            .await;
        let acme = Customer::new(&deployment.router, "acme");
        let before = resident_kib();
        let started = std::time::Instant::now();
        for _ in 0..3 {
            let answer = acme.call("big_list", json!({})).await;
            let result = &answer["structuredContent"];
            assert_eq!(result["returned"], 50, "{at}");
            assert_eq!(result["truncated"], true, "{at}");
        }
        let grown = resident_kib().saturating_sub(before);
        eprintln!(
            "{at}: three calls in {:?}, resident memory grew {grown} KiB",
            started.elapsed()
        );
        // The whole result is over 100 MiB as JSON; one page is a few KiB.
        assert!(grown < 32 * 1024, "{at}: grew {grown} KiB");
        // Nothing of it still runs in the database, and the pool still serves (its closed
        // connections replaced). The close is asynchronous: asked until done.
        let running = match at {
            "postgres" => {
                "SELECT count(*) FROM pg_stat_activity WHERE query LIKE '%FROM big%' AND state <> 'idle' AND pid <> pg_backend_pid()"
            }
            _ => {
                "SELECT count(*) FROM information_schema.processlist WHERE info LIKE '%FROM big%' AND id <> CONNECTION_ID()"
            }
        };
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
        let mut left = loaded.number(running).await;
        while left > 0 && std::time::Instant::now() < deadline {
            tokio::time::sleep(std::time::Duration::from_millis(50)).await;
            left = loaded.number(running).await;
        }
        assert_eq!(left, 0, "{at}: the statement is gone from the process list");
        let again = acme.call("big_list", json!({})).await;
        assert_eq!(again["structuredContent"]["returned"], 50, "{at}");
    }
}
