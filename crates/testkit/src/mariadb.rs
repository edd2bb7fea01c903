//! A database of a test's own on the MariaDB the test command starts (`CONCIERGE_TEST_MARIADB`,
//! `scripts/mariadb.sh`).

use crate::server_database::Server;

const SERVER: Server = Server {
    variable: "CONCIERGE_TEST_MARIADB",
    name: "MariaDB",
    // The server's URL names no database: the new one's name follows it.
    root: |url| Some(url.trim_end_matches('/')),
};

/// A new, empty database on the test server, as its URL; `None` (and a line saying why) when the
/// test command started no server here, so the test skips.
pub async fn fresh_database(purpose: &str) -> Option<String> {
    SERVER.fresh_database::<sqlx::MySql>(purpose).await
}
