//! The server's SQLite files (idempotency records, the audit table): opened the same way —
//! directory created, WAL so readers never wait for the writer, a busy timeout instead of
//! "database is locked".

use std::path::Path;
use std::time::Duration;

use sqlx::sqlite::{SqliteConnectOptions, SqliteJournalMode, SqlitePool, SqlitePoolOptions};

/// Opens (creating) the database at `path` with up to `connections` connections, then runs
/// `schema`. Errors name the file.
pub async fn open(
    path: &Path,
    connections: u32,
    schema: &[&'static str],
) -> Result<SqlitePool, String> {
    let named = |e: &dyn std::fmt::Display| format!("{}: {e}", path.display());
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    }
    let options = SqliteConnectOptions::new()
        .filename(path)
        .create_if_missing(true)
        .journal_mode(SqliteJournalMode::Wal)
        .busy_timeout(Duration::from_secs(10));
    let pool = SqlitePoolOptions::new()
        .max_connections(connections)
        .connect_with(options)
        .await
        .map_err(|e| named(&e))?;
    for statement in schema {
        sqlx::query(*statement)
            .execute(&pool)
            .await
            .map_err(|e| named(&e))?;
    }
    Ok(pool)
}
