//! The one way every store of the platform and its apps opens a SQLite file (the `sqlite`
//! feature): idempotency records, the audit table, the OAuth server, the intake store, the
//! content mirror and the bot's history.
//!
//! What each of them needs and once got wrong on its own:
//! - the path is a file name, never a URL, so a directory with `?` or `#` in its name is not
//!   read as a query string or a fragment;
//! - its directory is created;
//! - WAL, so readers never wait for the writer, and `synchronous = FULL`, so a write we
//!   acknowledged survives a power cut, not only a crash of the process;
//! - a busy timeout, so a second process or pool waits its turn instead of failing with
//!   "database is locked";
//! - a connection whose transaction SQLite ended by itself is closed, not pooled: on a full disk
//!   (`SQLITE_FULL`) SQLite rolls the transaction back, sqlx's own ROLLBACK then fails, and the
//!   connection would count as inside a transaction for good ("attempted to call begin_with at
//!   non-zero transaction depth" on every later write, found by the full-disk test).

use std::path::{Path, PathBuf};
use std::time::Duration;

use sqlx::sqlite::{
    SqliteConnectOptions, SqliteJournalMode, SqlitePool, SqlitePoolOptions, SqliteSynchronous,
};

/// How long a connection waits for another one's write lock before it gives up.
const BUSY_TIMEOUT: Duration = Duration::from_secs(10);

/// Why a SQLite file could not be opened; every variant names the file.
#[derive(Debug, thiserror::Error)]
pub enum SqliteError {
    #[error("cannot create {}: {source}", dir.display())]
    Directory {
        dir: PathBuf,
        source: std::io::Error,
    },
    #[error("{}: {source}", path.display())]
    Open { path: PathBuf, source: sqlx::Error },
    #[error("{}: schema: {source}", path.display())]
    Schema { path: PathBuf, source: sqlx::Error },
}

/// A SQLite file to open: `SqliteFile::new(path).connections(4).open(&[SCHEMA]).await`.
#[derive(Debug, Clone)]
pub struct SqliteFile {
    path: PathBuf,
    connections: u32,
    foreign_keys: bool,
    read_only: bool,
}

impl SqliteFile {
    /// The file at `path`, with four connections: SQLite has one writer, so more only queue.
    pub fn new(path: impl Into<PathBuf>) -> Self {
        Self {
            path: path.into(),
            connections: 4,
            foreign_keys: false,
            read_only: false,
        }
    }

    pub fn connections(mut self, connections: u32) -> Self {
        self.connections = connections.max(1);
        self
    }

    /// Enforce `REFERENCES` (SQLite leaves foreign keys off unless each connection asks).
    pub fn foreign_keys(mut self) -> Self {
        self.foreign_keys = true;
        self
    }

    /// Open an existing file for reading only (`concierge audit` beside a running server): it
    /// is neither created nor switched to WAL, which would need a write.
    pub fn read_only(mut self) -> Self {
        self.read_only = true;
        self
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Opens the pool, then runs each `schema` script (statements that may be repeated:
    /// `CREATE TABLE IF NOT EXISTS …`).
    pub async fn open(&self, schema: &[&'static str]) -> Result<SqlitePool, SqliteError> {
        let path = self.path.clone();
        let mut options = SqliteConnectOptions::new()
            .filename(&path)
            .busy_timeout(BUSY_TIMEOUT)
            .foreign_keys(self.foreign_keys);
        if self.read_only {
            options = options.read_only(true);
        } else {
            if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
                std::fs::create_dir_all(dir).map_err(|source| SqliteError::Directory {
                    dir: dir.to_path_buf(),
                    source,
                })?;
            }
            options = options
                .create_if_missing(true)
                .journal_mode(SqliteJournalMode::Wal)
                .synchronous(SqliteSynchronous::Full);
        }
        let pool = SqlitePoolOptions::new()
            .max_connections(self.connections)
            // Off the request path (a released connection is checked in the background); the
            // ping queues behind the dropped transaction's rollback, so the depth read after it
            // is the settled one.
            .after_release(|connection, _| {
                Box::pin(async move {
                    use sqlx::Connection;
                    connection.ping().await?;
                    Ok(!connection.is_in_transaction())
                })
            })
            .connect_with(options)
            .await
            .map_err(|source| SqliteError::Open {
                path: path.clone(),
                source,
            })?;
        for script in schema {
            sqlx::raw_sql(*script)
                .execute(&pool)
                .await
                .map_err(|source| SqliteError::Schema {
                    path: path.clone(),
                    source,
                })?;
        }
        Ok(pool)
    }
}

/// Whether `table` has `column` (a database made by an older version may lack it).
pub async fn has_column(pool: &SqlitePool, table: &str, column: &str) -> Result<bool, sqlx::Error> {
    let count: i64 = sqlx::query_scalar("SELECT COUNT(*) FROM pragma_table_info(?) WHERE name = ?")
        .bind(table)
        .bind(column)
        .fetch_one(pool)
        .await?;
    Ok(count > 0)
}

/// Adds `column` (with its SQL `declaration`) to `table` when a database made by an older version
/// lacks it: SQLite has no `ADD COLUMN IF NOT EXISTS`. Another instance adding it at the same
/// moment is not an error. Returns whether this call added it.
pub async fn add_column(
    pool: &SqlitePool,
    table: &str,
    column: &str,
    declaration: &str,
) -> Result<bool, sqlx::Error> {
    if has_column(pool, table, column).await? {
        return Ok(false);
    }
    let statement = format!("ALTER TABLE {table} ADD COLUMN {column} {declaration}");
    match sqlx::query(sqlx::AssertSqlSafe(statement))
        .execute(pool)
        .await
    {
        Ok(_) => Ok(true),
        Err(_) if has_column(pool, table, column).await? => Ok(false),
        Err(error) => Err(error),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_path_with_url_characters_is_the_file_it_names() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("a?mode=ro#x").join("store.sqlite");
        let pool = SqliteFile::new(&path)
            .open(&["CREATE TABLE IF NOT EXISTS t (v INTEGER)"])
            .await
            .unwrap();
        sqlx::query("INSERT INTO t VALUES (1)")
            .execute(&pool)
            .await
            .unwrap();
        assert!(path.is_file(), "the file is where its path says");
        let mode: String = sqlx::query_scalar("PRAGMA journal_mode")
            .fetch_one(&pool)
            .await
            .unwrap();
        assert_eq!(mode, "wal");
        let synchronous: i64 = sqlx::query_scalar("PRAGMA synchronous")
            .fetch_one(&pool)
            .await
            .unwrap();
        assert_eq!(synchronous, 2, "FULL");
    }

    #[tokio::test]
    async fn read_only_reads_and_refuses_to_write() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("store.sqlite");
        let writer = SqliteFile::new(&path)
            .open(&["CREATE TABLE IF NOT EXISTS t (v INTEGER); INSERT INTO t VALUES (7);"])
            .await
            .unwrap();
        let reader = SqliteFile::new(&path).read_only().open(&[]).await.unwrap();
        let v: i64 = sqlx::query_scalar("SELECT v FROM t")
            .fetch_one(&reader)
            .await
            .unwrap();
        assert_eq!(v, 7);
        assert!(
            sqlx::query("INSERT INTO t VALUES (8)")
                .execute(&reader)
                .await
                .is_err()
        );
        drop(writer);
    }

    #[tokio::test]
    async fn a_missing_column_is_added_once_and_an_error_names_the_file() {
        let dir = tempfile::tempdir().unwrap();
        let pool = SqliteFile::new(dir.path().join("s.sqlite"))
            .open(&["CREATE TABLE IF NOT EXISTS t (v INTEGER)"])
            .await
            .unwrap();
        assert!(add_column(&pool, "t", "w", "TEXT").await.unwrap());
        assert!(!add_column(&pool, "t", "w", "TEXT").await.unwrap());

        let missing = dir.path().join("absent.sqlite");
        let error = SqliteFile::new(&missing)
            .read_only()
            .open(&[])
            .await
            .unwrap_err();
        assert!(error.to_string().contains("absent.sqlite"), "{error}");
    }
}
