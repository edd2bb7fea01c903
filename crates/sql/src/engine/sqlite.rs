//! SQLite: `?` parameters (lists expanded), a read-only connection on a read-only instance and
//! `query_only` around every read on a writable one, and the statement interrupted at its
//! timeout by a progress handler (SQLite has no server to cancel it). Values come back as they
//! are stored: SQLite has no decimal or time types.

use std::path::Path;
use std::time::Instant;

use serde_json::Value;
use sqlx::error::DatabaseError;
use sqlx::sqlite::{
    SqliteConnectOptions, SqliteConnection, SqliteRow, SqliteStatement, SqliteValueRef,
};
use sqlx::{Executor, Pool, Row, Sqlite, TypeInfo, ValueRef};

use super::{
    Bounds, Driver, Failure, Mode, Outcome, Query, base64, bind_plain, bound_each, failure_of,
    float, pool_options, prepared_plainly,
};
use crate::render::{Bind, Kind, Rendered};
use crate::settings::SqlSettings;

/// How often (in SQLite's virtual machine steps) a running statement looks at the clock.
const STEPS_BETWEEN_CHECKS: i32 = 1000;

pub(super) async fn open(path: &Path, settings: &SqlSettings) -> Result<Pool<Sqlite>, String> {
    if !path.exists() {
        let Some(script) = &settings.create_from else {
            return Err(format!(
                "url: there is no SQLite database at {} (set `create_from` to a SQL script to \
                 create it)",
                path.display()
            ));
        };
        create(path, Path::new(script)).await?;
    }
    let options = SqliteConnectOptions::new()
        .filename(path)
        .read_only(settings.read_only)
        .busy_timeout(settings.statement_timeout)
        .foreign_keys(true)
        .pragma("query_only", if settings.read_only { "ON" } else { "OFF" });
    pool_options(settings)
        .connect_with(options)
        .await
        .map_err(|e| format!("url: cannot open {}: {e}", path.display()))
}

/// Creates the database at `path` from the SQL `script`, whole or not at all: the script runs
/// into a file beside it, which then takes the path's place.
async fn create(path: &Path, script: &Path) -> Result<(), String> {
    let sql = std::fs::read_to_string(script)
        .map_err(|e| format!("create_from: cannot read {}: {e}", script.display()))?;
    if let Some(folder) = path.parent() {
        std::fs::create_dir_all(folder)
            .map_err(|e| format!("url: cannot create {}: {e}", folder.display()))?;
    }
    let partial = path.with_extension("creating");
    let _ = std::fs::remove_file(&partial);
    let options = SqliteConnectOptions::new()
        .filename(&partial)
        .create_if_missing(true);
    let mut connection = sqlx::ConnectOptions::connect(&options)
        .await
        .map_err(|e| format!("url: cannot create {}: {e}", path.display()))?;
    sqlx::raw_sql(sqlx::AssertSqlSafe(sql))
        .execute(&mut connection)
        .await
        .map_err(|e| format!("create_from: {}: {e}", script.display()))?;
    sqlx::Connection::close(connection)
        .await
        .map_err(|e| e.to_string())?;
    std::fs::rename(&partial, path).map_err(|e| format!("url: {}: {e}", path.display()))
}

pub(super) async fn run(
    pool: &Pool<Sqlite>,
    read_only: bool,
    statement: Rendered,
    mode: Mode,
    bounds: Bounds,
    confirmed: Option<&super::Confirmed<'_>>,
    committing: &std::sync::atomic::AtomicBool,
) -> Result<Outcome, Failure> {
    let mut connection = Box::pin(pool.acquire())
        .await
        .map_err(failure_of::<Sqlite>)?;
    let deadline = Instant::now() + bounds.timeout;
    connection
        .lock_handle()
        .await
        .map_err(failure_of::<Sqlite>)?
        .set_progress_handler(STEPS_BETWEEN_CHECKS, move || Instant::now() < deadline);
    // A writable instance's read runs on a connection that refuses to write.
    let guard_read = mode == Mode::Read && !read_only;
    if guard_read {
        connection
            .execute("PRAGMA query_only = ON")
            .await
            .map_err(failure_of::<Sqlite>)?;
    }
    // SQLite computes rows when asked: a result left unread leaves nothing behind.
    let outcome = super::run::<Sqlite>(
        &mut connection,
        statement,
        mode,
        bounds,
        confirmed,
        read_only,
        committing,
    )
    .await
    .map(|(outcome, _)| outcome);
    if guard_read {
        // Should this fail, the connection must not serve a write: close it.
        if connection.execute("PRAGMA query_only = OFF").await.is_err() {
            let _ = connection.detach();
            return outcome;
        }
    }
    if let Ok(mut handle) = connection.lock_handle().await {
        handle.remove_progress_handler();
    }
    outcome
}

impl Driver for Sqlite {
    const BEGIN_READ: &'static str = "BEGIN";
    /// The write lock at once, so two writers never interleave.
    const BEGIN_WRITE: &'static str = "BEGIN IMMEDIATE";
    const SENDS_WHOLE_RESULTS: bool = false;

    fn bound<'c>(
        _: &'c mut SqliteConnection,
        statement: Rendered,
    ) -> impl Future<Output = Result<Query<'static, Self>, Failure>> + Send + 'c {
        std::future::ready(Ok(bound_each(statement, bind)))
    }

    fn prepared<'c>(
        connection: &'c mut SqliteConnection,
        statement: &'c Rendered,
    ) -> impl Future<Output = Result<SqliteStatement, sqlx::Error>> + Send + 'c {
        prepared_plainly::<Self>(connection, statement)
    }

    fn value(row: &SqliteRow, index: usize, raw: SqliteValueRef<'_>) -> Result<Value, String> {
        // The value's own storage class, whatever the column declared.
        let class = raw.type_info().name().to_string();
        let get = |e: sqlx::Error| format!("column {index} ({class}): {e}");
        Ok(match class.as_str() {
            "INTEGER" => Value::from(row.try_get::<i64, _>(index).map_err(get)?),
            "REAL" => float(row.try_get::<f64, _>(index).map_err(get)?),
            "BLOB" => base64(&row.try_get::<Vec<u8>, _>(index).map_err(get)?),
            _ => Value::String(row.try_get::<String, _>(index).map_err(get)?),
        })
    }

    fn value_type(name: &str) -> Option<&'static str> {
        Some(match name {
            "INTEGER" | "BOOLEAN" => "integer",
            "REAL" => "number",
            _ => "string",
        })
    }

    fn affected(result: &sqlx::sqlite::SqliteQueryResult) -> u64 {
        result.rows_affected()
    }

    fn failure(error: &dyn DatabaseError) -> Failure {
        let text = error.message().to_string();
        let code: i32 = error
            .code()
            .and_then(|c| c.parse().ok())
            .unwrap_or_default();
        match error.kind() {
            sqlx::error::ErrorKind::UniqueViolation => return Failure::Conflict(text),
            sqlx::error::ErrorKind::ForeignKeyViolation => return Failure::Reference(text),
            sqlx::error::ErrorKind::NotNullViolation | sqlx::error::ErrorKind::CheckViolation => {
                return Failure::Constraint(text);
            }
            _ => {}
        }
        // A STRICT table's column refused a value of another type (SQLITE_CONSTRAINT_DATATYPE).
        if code == 3091 {
            return Failure::BadValue(text);
        }
        // The primary result code is the low byte of the extended one.
        match code & 0xff {
            9 => Failure::Timeout,
            8 => Failure::ReadOnly(text),
            20 => Failure::BadValue(text),
            5 | 6 => Failure::Unavailable(text),
            _ => Failure::Other(text),
        }
    }
}

/// A value as SQLite takes it: a NULL typed as its kind, the rest as every engine binds them.
fn bind(query: Query<'static, Sqlite>, value: Bind) -> Query<'static, Sqlite> {
    match value {
        Bind::Null(Kind::Integer | Kind::Boolean) => query.bind(None::<i64>),
        Bind::Null(Kind::Number) => query.bind(None::<f64>),
        plain => bind_plain(query, plain),
    }
}
