//! A database of a test's own on the MariaDB the test command starts (`CONCIERGE_TEST_MARIADB`,
//! `scripts/mariadb.sh`).

/// A new, empty database on the test server, as its URL; `None` (and a line saying why) when the
/// test command started no server here, so the test skips.
pub async fn fresh_database(purpose: &str) -> Option<String> {
    let Ok(server) = std::env::var("CONCIERGE_TEST_MARIADB") else {
        eprintln!("CONCIERGE_TEST_MARIADB is unset: no MariaDB here (scripts/test.sh starts one)");
        return None;
    };
    let admin = sqlx::MySqlPool::connect(&server)
        .await
        .expect("the test server");
    let name = format!("{purpose}_{}", uuid::Uuid::new_v4().simple());
    sqlx::query(sqlx::AssertSqlSafe(format!("CREATE DATABASE {name}")))
        .execute(&admin)
        .await
        .expect("the test server creates a database");
    admin.close().await;
    Some(format!("{}/{name}", server.trim_end_matches('/')))
}
