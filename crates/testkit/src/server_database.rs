//! What [`crate::postgres`] and [`crate::mariadb`] share: a database of a test's own on a server
//! the test command started. Each module names its server; creating the database is the same.

use sqlx::{Connection, Database, Executor};

/// The server a test command may start: where its URL is, and how a database's URL is made
/// from it.
pub(crate) struct Server {
    /// The variable the test command exports the server's URL in.
    pub variable: &'static str,
    /// The server's name, for the line that says the test skips.
    pub name: &'static str,
    /// The server's URL up to where a database's name goes.
    pub root: fn(&str) -> Option<&str>,
}

impl Server {
    /// A new, empty database on the server, as its URL; `None` (and a line saying why) when the
    /// test command started no server here, so the test skips.
    pub(crate) async fn fresh_database<DB: Database>(&self, purpose: &str) -> Option<String>
    where
        for<'c> &'c mut DB::Connection: Executor<'c, Database = DB>,
    {
        let Ok(server) = std::env::var(self.variable) else {
            eprintln!(
                "{} is unset: no {} here (scripts/test.sh starts one)",
                self.variable, self.name
            );
            return None;
        };
        let root = (self.root)(&server)?;
        let mut admin = DB::Connection::connect(&server)
            .await
            .expect("the test server");
        // A name of its own per call: tests of one binary run at once, and a crashed run's
        // databases must not be in the next one's way.
        let name = format!("{purpose}_{}", uuid::Uuid::new_v4().simple());
        admin
            .execute(sqlx::AssertSqlSafe(format!("CREATE DATABASE {name}")))
            .await
            .expect("the test server creates a database");
        let _ = admin.close().await;
        Some(format!("{root}/{name}"))
    }
}
