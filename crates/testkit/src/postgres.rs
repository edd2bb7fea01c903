//! A database of a test's own on the PostgreSQL the test command starts
//! (`CONCIERGE_TEST_POSTGRES`, `scripts/postgres.sh`).

/// A new, empty database on the test server, as its URL; `None` (and a line saying why) when the
/// test command started no server here, so the test skips.
pub async fn fresh_database(purpose: &str) -> Option<String> {
    let Ok(admin_url) = std::env::var("CONCIERGE_TEST_POSTGRES") else {
        eprintln!(
            "CONCIERGE_TEST_POSTGRES is unset: no PostgreSQL here (scripts/test.sh starts one)"
        );
        return None;
    };
    let admin = sqlx::PgPool::connect(&admin_url)
        .await
        .expect("the test server");
    // A name of its own per call: tests of one binary run at once, and a crashed run's
    // databases must not be in the next one's way.
    let name = format!("{purpose}_{}", uuid::Uuid::new_v4().simple());
    sqlx::query(sqlx::AssertSqlSafe(format!("CREATE DATABASE {name}")))
        .execute(&admin)
        .await
        .expect("the test server creates a database");
    admin.close().await;
    Some(format!("{}/{name}", admin_url.rsplit_once('/')?.0))
}
