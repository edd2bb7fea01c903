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

/// Adds `column` (with its SQL `declaration`) to `table` when a database made by an older version
/// lacks it: SQLite has no `ADD COLUMN IF NOT EXISTS`. Another instance adding it at the same
/// moment is not an error.
pub async fn add_column(
    pool: &SqlitePool,
    table: &str,
    column: &str,
    declaration: &str,
) -> Result<(), sqlx::Error> {
    let has = |pool: &SqlitePool| {
        let pool = pool.clone();
        let (table, column) = (table.to_string(), column.to_string());
        async move {
            sqlx::query_scalar::<_, i64>("SELECT COUNT(*) FROM pragma_table_info(?) WHERE name = ?")
                .bind(table)
                .bind(column)
                .fetch_one(&pool)
                .await
        }
    };
    if has(pool).await? > 0 {
        return Ok(());
    }
    let statement = format!("ALTER TABLE {table} ADD COLUMN {column} {declaration}");
    match sqlx::query(sqlx::AssertSqlSafe(statement))
        .execute(pool)
        .await
    {
        Ok(_) => Ok(()),
        Err(_) if has(pool).await? > 0 => Ok(()),
        Err(error) => Err(error),
    }
}
