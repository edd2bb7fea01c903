//! A database of a test's own on the PostgreSQL the test command starts
//! (`CONCIERGE_TEST_POSTGRES`, `scripts/postgres.sh`).

use crate::server_database::Server;

const SERVER: Server = Server {
    variable: "CONCIERGE_TEST_POSTGRES",
    name: "PostgreSQL",
    // The server's URL names the database it is reached through: a new one takes its place.
    root: |url| Some(url.rsplit_once('/')?.0),
};

/// A new, empty database on the test server, as its URL; `None` (and a line saying why) when the
/// test command started no server here, so the test skips.
pub async fn fresh_database(purpose: &str) -> Option<String> {
    SERVER.fresh_database::<sqlx::Postgres>(purpose).await
}
