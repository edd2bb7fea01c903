//! The three engines behind one door: a pool, a statement in a transaction of the right kind
//! (a read on a read-only instance in its own, which the connection holds read-only), rows
//! fetched only as far as the bounds allow, and a database's failure read into what a model can
//! act on.
//!
//! One generic run ([`run`]) and one generic [`describe`] serve all three; each engine module
//! says only what differs: how a value is bound, how a value becomes JSON and which JSON type a
//! column holds, how a transaction starts and what its error codes mean.
//!
//! Somewhat over 600 lines: the generic run, describe and the steps every engine shares read top
//! to bottom here; what stands on its own is a module beside it (a page of rows, PostgreSQL's
//! numbers and its parameters' types, the warm connections).

mod mysql;
mod numeric;
mod page;
mod parameters;
mod postgres;
mod sqlite;
mod warm;

use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use futures::TryStreamExt;
use serde_json::{Map, Value};
use sqlx::{Connection, Database as SqlxDatabase, Executor, Pool};

use crate::render::{Bind, Engine, Rendered};
use crate::settings::SqlSettings;
use page::Page;
use warm::{Trust, Warm};

/// The bounds of one call.
#[derive(Debug, Clone, Copy)]
pub struct Bounds {
    pub max_rows: usize,
    pub max_bytes: usize,
    /// The statement's own bound, enforced by the database; the call waits a little longer.
    pub timeout: Duration,
}

/// What a call does with its statement.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    Read,
    /// A write: rolled back for a dry run, and refused (rolled back) past `max_affected`.
    Write {
        dry_run: bool,
        max_affected: Option<u64>,
        /// The statement returns rows (`RETURNING`): they are fetched, and counted as the
        /// affected rows.
        returns_rows: bool,
    },
}

/// What the statement did.
#[derive(Debug, Clone, PartialEq)]
pub struct Outcome {
    pub rows: Vec<Map<String, Value>>,
    /// More rows matched than the bounds let through.
    pub truncated: bool,
    /// For a write: the rows it changed (or would have, for a dry run).
    pub affected: Option<u64>,
}

/// Why a statement gave no outcome. Carries the database's own text for the log only.
#[derive(Debug, Clone, PartialEq)]
pub enum Failure {
    /// The statement ran past its timeout and the database cancelled it.
    Timeout,
    /// The database cannot be reached (or its pool is exhausted).
    Unavailable(String),
    /// A unique key already holds the value.
    Conflict(String),
    /// A foreign key points at nothing (or a row is still referenced).
    Reference(String),
    /// A NOT NULL or CHECK constraint refused the value.
    Constraint(String),
    /// The database refused to change data in a read-only transaction.
    ReadOnly(String),
    /// A value the database cannot take where the statement puts it, or compute with: not of
    /// the parameter's type, too long, out of its range, a divisor of zero (PostgreSQL's class
    /// 22, MariaDB's and SQLite's equivalents).
    BadValue(String),
    /// A value not of the type its parameter needs (PostgreSQL's parameter `at`, from 0),
    /// found before the statement ran: `reason` says what it must be.
    ParameterType {
        at: usize,
        reason: String,
    },
    /// A write would have changed more rows than its tool allows; rolled back.
    TooManyRows {
        affected: u64,
        allowed: u64,
    },
    /// A confirmed write would now change something else than the preview the user confirmed;
    /// rolled back.
    Stale,
    /// A column of a type this kind cannot pass on faithfully.
    Column(String),
    /// A write's commit was sent and its answer never came (the connection broke, or the
    /// database stopped answering): it may have been made.
    OutcomeUnknown(String),
    Other(String),
}

impl Failure {
    /// Whether trying the same call again later may succeed.
    pub fn retryable(&self) -> bool {
        matches!(self, Failure::Timeout | Failure::Unavailable(_))
    }
}

/// An instance's database: its connections, and whether the instance is read-only (then every
/// connection is opened read-only too).
pub enum Database {
    Postgres(Warm<sqlx::Postgres>, bool),
    MySql(Warm<sqlx::MySql>, bool),
    Sqlite(Pool<sqlx::Sqlite>, bool),
}

impl Database {
    /// The pool for `settings.url`. PostgreSQL and MariaDB connect on first use, so an
    /// instance starts while its database is down; a SQLite file must exist (or is created
    /// from the script `create_from`). Relative paths are the working directory's, as for
    /// every app.
    pub async fn open(settings: &SqlSettings) -> Result<Self, String> {
        let url = settings.url.trim();
        if url.starts_with("postgres://") || url.starts_with("postgresql://") {
            return postgres::open(url, settings)
                .map(|pool| Database::Postgres(Warm::new(pool), settings.read_only));
        }
        if url.starts_with("mysql://") || url.starts_with("mariadb://") {
            return mysql::open(url, settings)
                .map(|pool| Database::MySql(Warm::new(pool), settings.read_only));
        }
        let path = url.strip_prefix("sqlite://").unwrap_or(url);
        if path.contains("://") {
            return Err(format!(
                "url: `{}…` is not a database this kind knows: postgres://, mysql://, mariadb://, \
                 sqlite://path or a file path",
                url.split("://").next().unwrap_or_default()
            ));
        }
        sqlite::open(std::path::Path::new(path), settings)
            .await
            .map(|pool| Database::Sqlite(pool, settings.read_only))
    }

    pub fn engine(&self) -> Engine {
        match self {
            Database::Postgres(..) => Engine::Postgres,
            Database::MySql(..) => Engine::MySql,
            Database::Sqlite(..) => Engine::Sqlite,
        }
    }

    /// Runs one rendered statement. A write with `confirmed` commits only when it holds for
    /// what the statement did (the change the user confirmed), inside the transaction.
    pub async fn run(
        &self,
        statement: Rendered,
        mode: Mode,
        bounds: Bounds,
        confirmed: Option<&Confirmed<'_>>,
    ) -> Result<Outcome, Failure> {
        // The database cancels a statement at the timeout; should it not answer at all (a
        // network that swallows packets), the call still ends.
        let grace = bounds.timeout + Duration::from_secs(2);
        // Set as a write's commit is sent: past that, no answer means it may have been made.
        let committing = AtomicBool::new(false);
        let sent = &committing;
        let running = async {
            match self {
                Database::Postgres(pool, read_only) => {
                    pooled(pool, *read_only, statement, mode, bounds, confirmed, sent).await
                }
                Database::MySql(pool, read_only) => {
                    pooled(pool, *read_only, statement, mode, bounds, confirmed, sent).await
                }
                Database::Sqlite(pool, read_only) => {
                    sqlite::run(pool, *read_only, statement, mode, bounds, confirmed, sent).await
                }
            }
        };
        tokio::time::timeout(grace, running)
            .await
            .unwrap_or_else(|_| {
                Err(if committing.load(Ordering::SeqCst) {
                    Failure::OutcomeUnknown("the commit's answer did not come in time".into())
                } else {
                    Failure::Timeout
                })
            })
    }

    /// Whether the database answers, for `/health`.
    pub async fn ping(&self) -> Result<(), String> {
        let result = match self {
            Database::Postgres(warm, _) => answers(warm).await,
            Database::MySql(warm, _) => answers(warm).await,
            Database::Sqlite(pool, _) => sqlx::query("SELECT 1").execute(pool).await.map(|_| ()),
        };
        result.map_err(|e| e.to_string())
    }

    /// Prepares statements without running them, one after the other on one connection: a
    /// misspelt column is reported before anything is served. Answers each statement's
    /// columns, by name and JSON Schema, or what the database said of it; the first statement
    /// that takes longer than `each` ends the list there (the database is not answering); no
    /// connection within `each` is an error.
    pub async fn describe_all(
        &self,
        statements: &[Rendered],
        each: Duration,
    ) -> Result<Vec<Result<Columns, String>>, String> {
        match self {
            Database::Postgres(warm, _) => described(warm, statements, each).await,
            Database::MySql(warm, _) => described(warm, statements, each).await,
            Database::Sqlite(pool, _) => {
                let mut connection = tokio::time::timeout(each, pool.acquire())
                    .await
                    .map_err(|_| "no connection within the wait".to_string())?
                    .map_err(|e| e.to_string())?;
                let mut answers = Vec::with_capacity(statements.len());
                for statement in statements {
                    let described = describe::<sqlx::Sqlite>(&mut connection, statement);
                    match tokio::time::timeout(each, described).await {
                        Ok(answer) => answers.push(answer),
                        Err(_) => break,
                    }
                }
                Ok(answers)
            }
        }
    }
}

/// A result's columns, by name and JSON Schema.
pub type Columns = Vec<(String, Value)>;

impl Database {
    /// Whether the instance's role could change data although the instance is read-only (the
    /// engine still holds every statement read-only; a role that cannot write is a second wall).
    /// `None` when the database does not say.
    pub async fn role_could_write(&self) -> Option<bool> {
        match self {
            Database::Postgres(warm, _) => {
                let (mut connection, _) = warm.take(true).await.ok()?;
                let could = sqlx::query_scalar::<_, bool>(
                    "SELECT rolsuper OR EXISTS (SELECT 1 FROM information_schema.table_privileges \
                     WHERE grantee = current_user AND privilege_type IN ('INSERT', 'UPDATE', 'DELETE', 'TRUNCATE')) \
                     FROM pg_roles WHERE rolname = current_user",
                )
                .fetch_one(&mut *connection)
                .await
                .ok();
                warm.give_back(connection);
                could
            }
            Database::MySql(warm, _) => {
                let (mut connection, _) = warm.take(true).await.ok()?;
                let grants: Vec<String> = sqlx::query_scalar("SHOW GRANTS")
                    .fetch_all(&mut *connection)
                    .await
                    .ok()?;
                warm.give_back(connection);
                Some(grants.iter().any(|grant| {
                    let grant = grant.to_ascii_uppercase();
                    ["ALL PRIVILEGES", "INSERT", "UPDATE", "DELETE"]
                        .iter()
                        .any(|word| grant.contains(word))
                }))
            }
            // The connection is opened read-only; the file's permissions are the operator's.
            Database::Sqlite(..) => None,
        }
    }
}

/// Whether a write's outcome is the change the user confirmed.
pub type Confirmed<'a> = dyn Fn(&Outcome) -> bool + Sync + 'a;

/// Every engine's pool: as many connections as the instance allows, and a wait for one no
/// longer than a statement may take.
fn pool_options<DB: SqlxDatabase>(settings: &SqlSettings) -> sqlx::pool::PoolOptions<DB> {
    sqlx::pool::PoolOptions::new()
        .max_connections(settings.max_connections)
        .acquire_timeout(settings.statement_timeout)
        // sqlx pings every connection before handing it out: a second round trip on every
        // call. A connection that served a call moments ago is taken as it is (should the
        // database have gone meanwhile, the call fails as retryable, like any call at that
        // moment); one idle for longer — a firewall's or the server's idle cut — is asked first.
        .test_before_acquire(false)
        .before_acquire(|connection: &mut DB::Connection, meta| {
            Box::pin(async move {
                if meta.idle_for < warm::TRUSTED_IDLE {
                    return Ok(true);
                }
                connection.ping().await.map(|()| true)
            })
        })
}

/// A statement with its values bound so far.
type Query<'q, DB> = sqlx::query::Query<'q, DB, <DB as SqlxDatabase>::Arguments>;

/// What differs between the engines in running a statement.
trait Driver: SqlxDatabase {
    /// How a read transaction starts: one the engine holds read-only.
    const BEGIN_READ: &'static str;
    const BEGIN_WRITE: &'static str;
    /// Whether the rows of a result nobody reads stay queued on the connection: a server
    /// (PostgreSQL, MariaDB) sends a result whole, and the next use of the connection must read
    /// the rest first; SQLite computes each row when asked, so a dropped result is simply over.
    const SENDS_WHOLE_RESULTS: bool = true;
    /// The statement with its values bound as the engine takes them, to run on `connection`
    /// next: MariaDB and SQLite bind each value as its kind says ([`bound_each`]); PostgreSQL
    /// first asks the database which type each parameter needs (`parameters/`).
    fn bound<'c>(
        connection: &'c mut <Self as SqlxDatabase>::Connection,
        statement: Rendered,
    ) -> impl Future<Output = Result<Query<'static, Self>, Failure>> + Send + 'c;
    /// Prepares the statement without running it, its parameters typed as [`Driver::bound`]
    /// will bind them.
    fn prepared<'c>(
        connection: &'c mut <Self as SqlxDatabase>::Connection,
        statement: &'c Rendered,
    ) -> impl Future<Output = Result<<Self as SqlxDatabase>::Statement, sqlx::Error>> + Send + 'c;
    /// One column's value as JSON, as faithfully as the engine types it; `raw` is the value as
    /// the database sent it, never NULL.
    fn value<'r>(
        row: &'r Self::Row,
        index: usize,
        raw: <Self as SqlxDatabase>::ValueRef<'r>,
    ) -> Result<Value, String>;
    /// One row as a JSON object, columns in the statement's order.
    fn row(row: &Self::Row) -> Result<Map<String, Value>, String>
    where
        usize: sqlx::ColumnIndex<Self::Row>,
    {
        use sqlx::{Column, Row, ValueRef};
        let mut object = Map::with_capacity(row.columns().len());
        for column in row.columns() {
            let index = column.ordinal();
            let raw = row.try_get_raw(index).map_err(|e| e.to_string())?;
            // A NULL is null in JSON whatever the column's type.
            let value = if raw.is_null() {
                Value::Null
            } else {
                Self::value(row, index, raw)?
            };
            object.insert(column.name().to_string(), value);
        }
        Ok(object)
    }
    fn affected(result: &Self::QueryResult) -> u64;
    /// A database error in the terms of [`Failure`].
    fn failure(error: &dyn sqlx::error::DatabaseError) -> Failure;
    /// The JSON type of a column's values, by the engine's name of the column's type; `None`
    /// for JSON, whose values may be of any type.
    fn value_type(name: &str) -> Option<&'static str>;
}

/// `statement` with each value bound by `bind`: an engine whose database does not say what a
/// parameter needs (MariaDB, SQLite) binds each as its kind says.
fn bound_each<DB: SqlxDatabase>(
    statement: Rendered,
    bind: fn(Query<'static, DB>, Bind) -> Query<'static, DB>,
) -> Query<'static, DB> {
    let mut query = sqlx::query::<DB>(sqlx::AssertSqlSafe(statement.sql));
    for value in statement.binds {
        query = bind(query, value);
    }
    query
}

/// `statement` prepared with no parameter types declared: the database infers each.
fn prepared_plainly<'c, DB: SqlxDatabase>(
    connection: &'c mut DB::Connection,
    statement: &Rendered,
) -> futures::future::BoxFuture<'c, Result<DB::Statement, sqlx::Error>>
where
    &'c mut DB::Connection: Executor<'c, Database = DB>,
{
    let sql = sqlx::SqlSafeStr::into_sql_str(sqlx::AssertSqlSafe(statement.sql.clone()));
    connection.prepare_with(sql, &[])
}

/// The values MariaDB and SQLite bind alike: a null the engine need not type, text, numbers and
/// booleans. JSON and lists go as their JSON text: these engines take a list expanded by the
/// renderer, so an array reaches here only as JSON.
fn bind_plain<'q, DB>(query: Query<'q, DB>, value: Bind) -> Query<'q, DB>
where
    DB: SqlxDatabase,
    String: sqlx::Encode<'q, DB> + sqlx::Type<DB>,
    Option<String>: sqlx::Encode<'q, DB>,
    i64: sqlx::Encode<'q, DB> + sqlx::Type<DB>,
    f64: sqlx::Encode<'q, DB> + sqlx::Type<DB>,
    bool: sqlx::Encode<'q, DB> + sqlx::Type<DB>,
{
    match value {
        Bind::Null(_) => query.bind(None::<String>),
        Bind::Text(text) => query.bind(text),
        Bind::Integer(n) => query.bind(n),
        Bind::Number(n) => query.bind(n),
        Bind::Boolean(b) => query.bind(b),
        Bind::Json(value) => query.bind(value.to_string()),
        Bind::Array(_, items) => query.bind(Value::Array(items).to_string()),
    }
}

/// Prepares `statement` without running it: the result's columns, by name and JSON Schema.
async fn describe<DB: Driver>(
    connection: &mut <DB as SqlxDatabase>::Connection,
    statement: &Rendered,
) -> Result<Vec<(String, Value)>, String>
where
    for<'c> &'c mut <DB as SqlxDatabase>::Connection: Executor<'c, Database = DB>,
{
    use sqlx::{Column, Statement, TypeInfo};
    let prepared = DB::prepared(connection, statement)
        .await
        .map_err(|e| e.to_string())?;
    Ok(prepared
        .columns()
        .iter()
        .map(|column| {
            let schema = match DB::value_type(column.type_info().name()) {
                Some(ty) => serde_json::json!({"type": [ty, "null"]}),
                None => serde_json::json!({}),
            };
            (column.name().to_string(), schema)
        })
        .collect())
}

/// [`run`] on a warm connection, handed back when the statement ran to its end; the pool's own
/// failure (exhausted, closed) as the engine's.
async fn pooled<DB: Driver>(
    warm: &Warm<DB>,
    held_read_only: bool,
    statement: Rendered,
    mode: Mode,
    bounds: Bounds,
    confirmed: Option<&Confirmed<'_>>,
    committing: &AtomicBool,
) -> Result<Outcome, Failure>
where
    for<'c> &'c mut <DB as SqlxDatabase>::Connection: Executor<'c, Database = DB>,
    <DB as SqlxDatabase>::Arguments: sqlx::IntoArguments<DB>,
    usize: sqlx::ColumnIndex<DB::Row>,
{
    let (mut connection, trust) = warm.take(false).await.map_err(failure_of::<DB>)?;
    // Kept for a read on a connection taken on trust, should it turn out to be gone (a read
    // changes nothing, so sending it again is safe; a write is never sent twice).
    let mut again = (trust == Trust::Trusted && mode == Mode::Read).then(|| statement.clone());
    let mut statement = statement;
    let ran = loop {
        let ran = run::<DB>(
            &mut connection,
            statement,
            mode,
            bounds,
            confirmed,
            held_read_only,
            committing,
        )
        .await;
        match (ran, again.take()) {
            (Err(Failure::Unavailable(_)), Some(retry)) => {
                (connection, _) = warm.take(true).await.map_err(failure_of::<DB>)?;
                statement = retry;
            }
            (ran, _) => break ran,
        }
    };
    match ran {
        Ok((outcome, AfterRun::Clean)) => {
            warm.give_back(connection);
            Ok(outcome)
        }
        Ok((outcome, AfterRun::Unread)) => Ok(outcome),
        Err(failure) => Err(failure),
    }
}

/// Whether a connection is ready for the next statement after [`run`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum AfterRun {
    Clean,
    /// A result was left unread: the connection is closed when dropped, never reused.
    Unread,
}

/// [`describe`] on a warm connection.
async fn described<DB: Driver>(
    warm: &Warm<DB>,
    statements: &[Rendered],
    each: Duration,
) -> Result<Vec<Result<Columns, String>>, String>
where
    for<'c> &'c mut <DB as SqlxDatabase>::Connection: Executor<'c, Database = DB>,
{
    let (mut connection, _) = tokio::time::timeout(each, warm.take(true))
        .await
        .map_err(|_| "no connection within the wait".to_string())?
        .map_err(|e| e.to_string())?;
    let mut answers = Vec::with_capacity(statements.len());
    for statement in statements {
        match tokio::time::timeout(each, describe::<DB>(&mut connection, statement)).await {
            Ok(answer) => answers.push(answer),
            // A connection left mid-statement is not given back.
            Err(_) => return Ok(answers),
        }
    }
    warm.give_back(connection);
    Ok(answers)
}

/// Whether a PostgreSQL or MariaDB instance answers, for `/health`.
async fn answers<DB: Driver>(warm: &Warm<DB>) -> Result<(), sqlx::Error> {
    let (connection, _) = warm.take(true).await?;
    warm.give_back(connection);
    Ok(())
}

/// A database failure, or the pool's.
fn failure_of<DB: Driver>(error: sqlx::Error) -> Failure {
    match &error {
        sqlx::Error::Database(database) => DB::failure(database.as_ref()),
        sqlx::Error::Io(_)
        | sqlx::Error::Tls(_)
        | sqlx::Error::PoolTimedOut
        | sqlx::Error::PoolClosed
        | sqlx::Error::WorkerCrashed
        | sqlx::Error::Protocol(_) => Failure::Unavailable(error.to_string()),
        _ => Failure::Other(error.to_string()),
    }
}

/// A statement in a transaction: rows fetched up to the bounds, a write checked and rolled back
/// or committed. A read on a connection the engine already holds read-only (`held_read_only`)
/// runs in the statement's own transaction.
async fn run<DB: Driver>(
    pooled: &mut sqlx::pool::PoolConnection<DB>,
    statement: Rendered,
    mode: Mode,
    bounds: Bounds,
    confirmed: Option<&Confirmed<'_>>,
    held_read_only: bool,
    committing: &AtomicBool,
) -> Result<(Outcome, AfterRun), Failure>
where
    for<'c> &'c mut <DB as SqlxDatabase>::Connection: Executor<'c, Database = DB>,
    <DB as SqlxDatabase>::Arguments: sqlx::IntoArguments<DB>,
    usize: sqlx::ColumnIndex<DB::Row>,
{
    let connection: &mut <DB as SqlxDatabase>::Connection = pooled;
    // Bound before any transaction starts: PostgreSQL may prepare the statement to learn its
    // parameters' types, and a statement it cannot prepare would abort a transaction.
    let query = DB::bound(&mut *connection, statement).await?;
    if mode == Mode::Read && held_read_only {
        // The connection itself is read-only (`default_transaction_read_only`, the session's
        // `TRANSACTION READ ONLY`, a read-only SQLite handle): the statement's own implicit
        // transaction is held read-only by the engine, without two more round trips.
        let mut rows = query.fetch(&mut *connection);
        let mut page = Page::new(bounds);
        let mut ended = true;
        while let Some(row) = rows.try_next().await.map_err(failure_of::<DB>)? {
            if !page.add(DB::row(&row).map_err(Failure::Column)?) {
                ended = rest_read::<DB>(&mut rows).await?;
                break;
            }
        }
        drop(rows);
        if !ended {
            pooled.close_on_drop();
            return Ok((page.finish(false), AfterRun::Unread));
        }
        return Ok((page.finish(false), AfterRun::Clean));
    }
    let begin = match mode {
        Mode::Read => DB::BEGIN_READ,
        Mode::Write { .. } => DB::BEGIN_WRITE,
    };
    // Owned: a `&'static str` here trips the compiler's proof that the future is `Send` for
    // every lifetime the generic run is called with.
    let mut tx = connection
        .begin_with(sqlx::AssertSqlSafe(begin.to_string()))
        .await
        .map_err(failure_of::<DB>)?;
    let outcome = match mode {
        Mode::Read
        | Mode::Write {
            returns_rows: true, ..
        } => {
            let mut rows = query.fetch(&mut *tx);
            let mut page = Page::new(bounds);
            while let Some(row) = rows.try_next().await.map_err(failure_of::<DB>)? {
                let counted = matches!(mode, Mode::Write { .. });
                if !page.add(DB::row(&row).map_err(Failure::Column)?) && !counted {
                    if !rest_read::<DB>(&mut rows).await? {
                        // The read's transaction ends with the connection: a rollback would
                        // have to read the rest first.
                        drop(rows);
                        drop(tx);
                        pooled.close_on_drop();
                        return Ok((page.finish(false), AfterRun::Unread));
                    }
                    break;
                }
            }
            drop(rows);
            page.finish(matches!(mode, Mode::Write { .. }))
        }
        Mode::Write { .. } => {
            let result = query.execute(&mut *tx).await.map_err(failure_of::<DB>)?;
            Outcome {
                rows: Vec::new(),
                truncated: false,
                affected: Some(DB::affected(&result)),
            }
        }
    };
    match mode {
        Mode::Read => {
            // Nothing to keep; a read-only transaction ends the same either way.
            tx.rollback().await.map_err(failure_of::<DB>)?;
        }
        Mode::Write {
            dry_run,
            max_affected,
            ..
        } => {
            let affected = outcome.affected.unwrap_or_default();
            if let Some(allowed) = max_affected
                && affected > allowed
            {
                tx.rollback().await.map_err(failure_of::<DB>)?;
                return Err(Failure::TooManyRows { affected, allowed });
            }
            if !dry_run
                && let Some(confirmed) = confirmed
                && !confirmed(&outcome)
            {
                tx.rollback().await.map_err(failure_of::<DB>)?;
                return Err(Failure::Stale);
            }
            if dry_run {
                tx.rollback().await.map_err(failure_of::<DB>)?;
            } else {
                // A commit the database refused (a deferred constraint, a serialization
                // failure) rolled back; one whose answer never came may have been made.
                committing.store(true, Ordering::SeqCst);
                tx.commit().await.map_err(|error| match &error {
                    sqlx::Error::Io(_) | sqlx::Error::Protocol(_) | sqlx::Error::WorkerCrashed => {
                        Failure::OutcomeUnknown(error.to_string())
                    }
                    _ => failure_of::<DB>(error),
                })?;
            }
        }
    }
    Ok((outcome, AfterRun::Clean))
}

/// How many rows past a full page are read and dropped so the connection can serve the next
/// call; a result with more left is not read at all — the connection is closed instead, which is
/// what stops the database sending (and holding a snapshot for) the rest of a huge result.
const DRAIN_ROWS: usize = 1_000;

/// Reads what is left of a result past its page, up to [`DRAIN_ROWS`]: whether it ended there
/// (always so on an engine that computes rows only when asked).
async fn rest_read<DB: Driver>(
    rows: &mut (impl futures::Stream<Item = Result<DB::Row, sqlx::Error>> + Unpin),
) -> Result<bool, Failure> {
    if !DB::SENDS_WHOLE_RESULTS {
        return Ok(true);
    }
    for _ in 0..DRAIN_ROWS {
        if rows.try_next().await.map_err(failure_of::<DB>)?.is_none() {
            return Ok(true);
        }
    }
    Ok(false)
}

/// A timestamp without a zone, as UTC in RFC 3339.
pub(crate) fn naive_utc(value: chrono::NaiveDateTime) -> Value {
    Value::String(
        value
            .and_utc()
            .to_rfc3339_opts(chrono::SecondsFormat::AutoSi, true),
    )
}

pub(crate) fn utc(value: chrono::DateTime<chrono::Utc>) -> Value {
    Value::String(value.to_rfc3339_opts(chrono::SecondsFormat::AutoSi, true))
}

/// A value whose JSON form is its text: a date, a time, a UUID.
pub(crate) fn text(value: impl ToString) -> Value {
    Value::String(value.to_string())
}

pub(crate) fn base64(bytes: &[u8]) -> Value {
    use base64::Engine as _;
    Value::String(base64::engine::general_purpose::STANDARD.encode(bytes))
}

/// A float as JSON: NaN and the infinities have no JSON number, so they are null.
pub(crate) fn float(value: f64) -> Value {
    serde_json::Number::from_f64(value).map_or(Value::Null, Value::Number)
}
