//! The audit log as a SQL table (`audit_event`), beside the JSON Lines file: the same events,
//! queryable by user, client, tool and time (each has an index with `ts`).
//!
//! Like the file, it is written off the request path: events queue, and a task inserts them in
//! batches, one transaction per batch. SQLite by default (a path); a `postgres://` URL puts the
//! table in PostgreSQL, where several instances can share it (`ts` is a `timestamptz` there and
//! `arguments` / `notes` / `output` are `jsonb`).

use std::path::Path;
use std::time::Duration;

use concierge_core::AuditEvent;
use concierge_core::sqlite::{self, SqliteFile};
use sqlx::postgres::{PgPool, PgPoolOptions};
use sqlx::sqlite::SqlitePool;
use tokio::sync::mpsc;

use concierge_core::postgres::kind;

const QUEUE: usize = 16 * 1024;
const BATCH: usize = 512;
/// How soon a batch is sent again while the database does not answer, doubling up to the max.
const RETRY_FIRST: Duration = Duration::from_millis(500);
const RETRY_MAX: Duration = Duration::from_secs(30);

/// The database did not answer, or is going away (as opposed to refusing the rows): worth
/// sending again. SQLSTATE class 08 is a connection exception, 57P a server shutting down.
fn is_unreachable(error: &sqlx::Error) -> bool {
    match error {
        sqlx::Error::Io(_) | sqlx::Error::PoolTimedOut | sqlx::Error::PoolClosed => true,
        sqlx::Error::Database(e) => e
            .code()
            .is_some_and(|code| code.starts_with("08") || code.starts_with("57P")),
        _ => false,
    }
}

pub(crate) enum Message {
    Event(Box<AuditEvent>),
    /// Answered once everything queued before it is committed.
    Flush(std::sync::mpsc::Sender<()>),
}

const COLUMNS: &str = "ts, endpoint, client_id, user_id, tool, trace_id, rpc_id, outcome, code, \
                       duration_ms, result_count, arguments, notes, output";

const INDEXES: &[&str] = &[
    "CREATE INDEX IF NOT EXISTS audit_event_ts ON audit_event (ts)",
    "CREATE INDEX IF NOT EXISTS audit_event_user ON audit_event (user_id, ts)",
    "CREATE INDEX IF NOT EXISTS audit_event_client ON audit_event (client_id, ts)",
    "CREATE INDEX IF NOT EXISTS audit_event_tool ON audit_event (tool, ts)",
];

const SQLITE_TABLE: &str = "CREATE TABLE IF NOT EXISTS audit_event (
    id INTEGER PRIMARY KEY AUTOINCREMENT, ts TEXT NOT NULL, endpoint TEXT NOT NULL,
    client_id TEXT, user_id TEXT, tool TEXT, trace_id TEXT NOT NULL, rpc_id TEXT,
    outcome TEXT NOT NULL, code TEXT, duration_ms REAL NOT NULL, result_count INTEGER,
    arguments TEXT, notes TEXT, output TEXT)";

const POSTGRES_TABLE: &str = "CREATE TABLE IF NOT EXISTS audit_event (
    id BIGSERIAL PRIMARY KEY, ts TIMESTAMPTZ NOT NULL, endpoint TEXT NOT NULL,
    client_id TEXT, user_id TEXT, tool TEXT, trace_id TEXT NOT NULL, rpc_id TEXT,
    outcome TEXT NOT NULL, code TEXT, duration_ms DOUBLE PRECISION NOT NULL, result_count BIGINT,
    arguments JSONB, notes JSONB, output JSONB)";

/// Columns added after the first release, for tables an older version made (`CREATE TABLE IF NOT
/// EXISTS` leaves those as they are): the call's output (seed §10).
const POSTGRES_MIGRATIONS: &[&str] =
    &["ALTER TABLE audit_event ADD COLUMN IF NOT EXISTS output JSONB"];

enum Database {
    Sqlite(SqlitePool),
    Postgres(PgPool),
}

/// Creates the table, its new columns and indexes in one transaction under an advisory lock:
/// instances starting at once would otherwise race in `CREATE TABLE IF NOT EXISTS`, which
/// PostgreSQL lets fail on its own catalog's unique index.
async fn create_postgres_table(pool: &PgPool) -> Result<(), sqlx::Error> {
    let mut transaction = pool.begin().await?;
    sqlx::query("SELECT pg_advisory_xact_lock($1)")
        .bind(AUDIT_TABLE_LOCK)
        .execute(&mut *transaction)
        .await?;
    for statement in std::iter::once(&POSTGRES_TABLE)
        .chain(POSTGRES_MIGRATIONS)
        .chain(INDEXES)
    {
        sqlx::query(*statement).execute(&mut *transaction).await?;
    }
    transaction.commit().await
}

/// The advisory lock key of the audit table's creation ("audit" in ASCII).
const AUDIT_TABLE_LOCK: i64 = 0x61_75_64_69_74;

/// Opens (creating) the database and its table, and starts the writer task. `target` is a
/// `postgres://` URL or a SQLite file path.
pub(crate) async fn open(target: &str) -> Result<mpsc::Sender<Message>, String> {
    let database = if concierge_core::postgres::is_url(target) {
        // The URL may hold a password: errors name the kind of failure only.
        let pool = PgPoolOptions::new()
            .max_connections(2)
            .acquire_timeout(Duration::from_secs(10))
            .connect(target)
            .await
            .map_err(|e| format!("cannot connect to PostgreSQL ({})", kind(&e)))?;
        create_postgres_table(&pool)
            .await
            .map_err(|e| format!("cannot create the audit table ({})", kind(&e)))?;
        Database::Postgres(pool)
    } else {
        let path = Path::new(target.strip_prefix("sqlite://").unwrap_or(target));
        let schema: Vec<&'static str> = std::iter::once(SQLITE_TABLE)
            .chain(INDEXES.iter().copied())
            .collect();
        // One connection: the writer task is the table's only writer.
        let pool = SqliteFile::new(path)
            .connections(1)
            .open(&schema)
            .await
            .map_err(|e| e.to_string())?;
        sqlite::add_column(&pool, "audit_event", "output", "TEXT")
            .await
            .map_err(|e| format!("{}: {e}", path.display()))?;
        Database::Sqlite(pool)
    };
    let (sender, receiver) = mpsc::channel(QUEUE);
    tokio::spawn(write_events(database, receiver));
    Ok(sender)
}

async fn write_events(database: Database, mut receiver: mpsc::Receiver<Message>) {
    let mut events = Vec::with_capacity(BATCH);
    let mut flushed = Vec::new();
    while let Some(first) = receiver.recv().await {
        let mut next = Some(first);
        while let Some(message) = next.take() {
            match message {
                Message::Event(event) => events.push(event),
                Message::Flush(done) => flushed.push(done),
            }
            if events.len() < BATCH {
                next = receiver.try_recv().ok();
            }
        }
        let mut wait = RETRY_FIRST;
        while !events.is_empty() {
            let written = match &database {
                Database::Sqlite(pool) => insert_sqlite(pool, &events).await,
                Database::Postgres(pool) => insert_postgres(pool, &events).await,
            };
            match written {
                Ok(()) => break,
                // The database is away (a shared PostgreSQL restarting): the batch waits for it,
                // and what arrives meanwhile waits in the bounded queue (beyond it, the file
                // still has every event).
                Err(error) if is_unreachable(&error) => {
                    tracing::warn!(
                        error = kind(&error),
                        waiting = events.len(),
                        retry_in = ?wait,
                        "audit table unreachable; the batch is kept and sent again"
                    );
                    tokio::time::sleep(wait).await;
                    wait = (wait * 2).min(RETRY_MAX);
                }
                Err(error) => {
                    tracing::error!(
                        error = kind(&error),
                        lost = events.len(),
                        "cannot write audit events to the database"
                    );
                    break;
                }
            }
        }
        events.clear();
        for done in flushed.drain(..) {
            let _ = done.send(());
        }
    }
}

/// The row of an event, as text and numbers both databases take.
struct Row<'a> {
    event: &'a AuditEvent,
    outcome: String,
    rpc_id: Option<String>,
    arguments: Option<String>,
    notes: Option<String>,
    output: Option<String>,
}

impl<'a> Row<'a> {
    fn of(event: &'a AuditEvent) -> Self {
        Self {
            event,
            outcome: serde_json::to_value(event.outcome)
                .ok()
                .and_then(|v| v.as_str().map(str::to_string))
                .unwrap_or_default(),
            rpc_id: event.rpc_id.as_ref().map(|v| v.to_string()),
            arguments: event.arguments.as_ref().map(|v| v.to_string()),
            notes: event
                .notes
                .as_ref()
                .map(|v| serde_json::Value::Object(v.clone()).to_string()),
            output: event.output.as_ref().map(|raw| raw.get().to_owned()),
        }
    }
}

/// Inserts a batch in one transaction; the same for both databases but for the statement.
macro_rules! insert_events {
    ($pool:expr, $statement:expr, $events:expr) => {{
        let mut transaction = $pool.begin().await?;
        for event in $events {
            let row = Row::of(event);
            sqlx::query(sqlx::AssertSqlSafe($statement))
                .bind(&row.event.ts)
                .bind(&row.event.endpoint)
                .bind(&row.event.client)
                .bind(&row.event.user)
                .bind(&row.event.tool)
                .bind(&row.event.trace_id)
                .bind(&row.rpc_id)
                .bind(&row.outcome)
                .bind(&row.event.code)
                .bind(row.event.duration_ms)
                .bind(row.event.result_count.map(|n| n as i64))
                .bind(&row.arguments)
                .bind(&row.notes)
                .bind(&row.output)
                .execute(&mut *transaction)
                .await?;
        }
        transaction.commit().await
    }};
}

async fn insert_sqlite(pool: &SqlitePool, events: &[Box<AuditEvent>]) -> Result<(), sqlx::Error> {
    let statement = format!(
        "INSERT INTO audit_event ({COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"
    );
    insert_events!(pool, statement.as_str(), events)
}

async fn insert_postgres(pool: &PgPool, events: &[Box<AuditEvent>]) -> Result<(), sqlx::Error> {
    let statement = format!(
        "INSERT INTO audit_event ({COLUMNS}) VALUES ($1::timestamptz, $2, $3, $4, $5, $6, $7, $8, \
         $9, $10, $11, $12::jsonb, $13::jsonb, $14::jsonb)"
    );
    insert_events!(pool, statement.as_str(), events)
}

/// Which events to read back (`concierge audit`): every filter given must hold.
#[derive(Debug, Clone, Default)]
pub struct AuditQuery {
    pub user: Option<String>,
    pub client: Option<String>,
    pub tool: Option<String>,
    /// RFC 3339 times, inclusive from, exclusive until.
    pub since: Option<String>,
    pub until: Option<String>,
    pub limit: u32,
}

/// Runs `statement` with `values` bound in order, on either database.
macro_rules! fetch {
    ($pool:expr, $statement:expr, $values:expr) => {{
        let mut query = sqlx::query(sqlx::AssertSqlSafe($statement.as_str()));
        for value in $values {
            query = query.bind(value);
        }
        query.fetch_all($pool).await
    }};
}

/// `concierge audit`: the events of the sink that `sink` names, or of the only sink with a
/// database when it is left out. A choice that fits no sink or several says which there are.
pub async fn read_back(
    config: &crate::config::Config,
    sink: Option<&str>,
    filter: &AuditQuery,
) -> Result<Vec<serde_json::Value>, String> {
    let with_table: Vec<(&str, &str)> = config
        .audit
        .iter()
        .filter_map(|(name, section)| Some((name.as_str(), section.database.as_deref()?)))
        .collect();
    let names = || {
        with_table
            .iter()
            .map(|(name, _)| *name)
            .collect::<Vec<_>>()
            .join(", ")
    };
    let database = match (sink, with_table.as_slice()) {
        (Some(sink), _) => with_table
            .iter()
            .find(|(name, _)| *name == sink)
            .map(|(_, database)| *database)
            .ok_or_else(|| {
                format!(
                    "no sink `{sink}` with a database; sinks with one: {}",
                    names()
                )
            })?,
        (None, [(_, database)]) => database,
        (None, []) => return Err("no [audit.<name>] sink has a database".into()),
        (None, _) => {
            return Err(format!(
                "several sinks have a database; choose one with --sink: {}",
                names()
            ));
        }
    };
    query(database, filter).await
}

/// The events matching `filter`, oldest first, as JSON objects.
pub async fn query(target: &str, filter: &AuditQuery) -> Result<Vec<serde_json::Value>, String> {
    let postgres = concierge_core::postgres::is_url(target);
    // Stored times are UTC with milliseconds; filters are brought to the same form, so SQLite's
    // text comparison and PostgreSQL's timestamptz agree for any offset a user types.
    let utc = |time: &Option<String>| -> Result<Option<String>, String> {
        time.as_ref()
            .map(|t| {
                chrono::DateTime::parse_from_rfc3339(t)
                    .map(|t| {
                        t.with_timezone(&chrono::Utc)
                            .to_rfc3339_opts(chrono::SecondsFormat::Millis, true)
                    })
                    .map_err(|_| format!("`{t}` is not a time like 2026-12-01T08:00:00Z"))
            })
            .transpose()
    };
    let (since, until) = (utc(&filter.since)?, utc(&filter.until)?);
    let conditions = [
        ("user_id = ", &filter.user, ""),
        ("client_id = ", &filter.client, ""),
        ("tool = ", &filter.tool, ""),
        ("ts >= ", &since, "::timestamptz"),
        ("ts < ", &until, "::timestamptz"),
    ];
    let mut clauses = Vec::new();
    let mut values = Vec::new();
    for (clause, value, cast) in conditions {
        if let Some(value) = value {
            values.push(value.clone());
            clauses.push(if postgres {
                format!("{clause}${}{cast}", values.len())
            } else {
                format!("{clause}?")
            });
        }
    }
    let select = if postgres {
        "to_char(ts AT TIME ZONE 'UTC', 'YYYY-MM-DD\"T\"HH24:MI:SS.MS\"Z\"') AS ts, endpoint, \
         client_id, user_id, tool, trace_id, outcome, code, duration_ms, result_count, \
         arguments::text AS arguments, notes::text AS notes, output::text AS output"
    } else {
        "ts, endpoint, client_id, user_id, tool, trace_id, outcome, code, duration_ms, \
         result_count, arguments, notes, output"
    };
    let mut statement = format!("SELECT {select} FROM audit_event");
    if !clauses.is_empty() {
        statement.push_str(&format!(" WHERE {}", clauses.join(" AND ")));
    }
    // The newest `limit`, shown oldest first.
    statement = format!(
        "SELECT * FROM ({statement} ORDER BY id DESC LIMIT {}) AS newest ORDER BY ts",
        filter.limit.max(1)
    );
    if postgres {
        let pool = PgPoolOptions::new()
            .max_connections(1)
            .connect(target)
            .await
            .map_err(|e| format!("cannot connect to PostgreSQL ({})", kind(&e)))?;
        let rows = fetch!(&pool, &statement, &values)
            .map_err(|e| format!("cannot read the audit table ({})", kind(&e)))?;
        Ok(rows.iter().map(pg_row).collect())
    } else {
        let path = target.strip_prefix("sqlite://").unwrap_or(target);
        let pool = SqliteFile::new(path)
            .connections(1)
            .read_only()
            .open(&[])
            .await
            .map_err(|e| e.to_string())?;
        // A table no server of this version has opened yet lacks `output`: read it as empty.
        let has_output = sqlite::has_column(&pool, "audit_event", "output")
            .await
            .map_err(|e| format!("{path}: {e}"))?;
        if !has_output {
            statement = statement.replace("notes, output FROM", "notes, NULL AS output FROM");
        }
        let rows = fetch!(&pool, &statement, &values).map_err(|e| format!("{path}: {e}"))?;
        Ok(rows.iter().map(sqlite_row).collect())
    }
}

macro_rules! event_json {
    ($row:expr) => {{
        use sqlx::Row;
        let row = $row;
        let json = |text: Option<String>| {
            text.and_then(|t| serde_json::from_str::<serde_json::Value>(&t).ok())
        };
        let mut event = serde_json::json!({
            "ts": row.get::<String, _>("ts"),
            "endpoint": row.get::<String, _>("endpoint"),
            "client": row.get::<Option<String>, _>("client_id"),
            "user": row.get::<Option<String>, _>("user_id"),
            "tool": row.get::<Option<String>, _>("tool"),
            "trace_id": row.get::<String, _>("trace_id"),
            "outcome": row.get::<String, _>("outcome"),
            "code": row.get::<Option<String>, _>("code"),
            "duration_ms": row.get::<f64, _>("duration_ms"),
            "result_count": row.get::<Option<i64>, _>("result_count"),
            "arguments": json(row.get::<Option<String>, _>("arguments")),
            "notes": json(row.get::<Option<String>, _>("notes")),
            "output": json(row.get::<Option<String>, _>("output")),
        });
        if let serde_json::Value::Object(fields) = &mut event {
            fields.retain(|_, v| !v.is_null());
        }
        event
    }};
}

fn sqlite_row(row: &sqlx::sqlite::SqliteRow) -> serde_json::Value {
    event_json!(row)
}

fn pg_row(row: &sqlx::postgres::PgRow) -> serde_json::Value {
    event_json!(row)
}

#[cfg(test)]
mod tests {
    use concierge_core::{AuditEvent, Outcome};
    use serde_json::json;

    use super::*;

    fn event(output: Option<serde_json::Value>) -> AuditEvent {
        AuditEvent {
            ts: "2026-12-01T08:00:00.000Z".into(),
            endpoint: "/mappy/mcp".into(),
            client: Some("claude".into()),
            user: Some("10".into()),
            tool: Some("review_reply".into()),
            rpc_id: None,
            trace_id: "t1".into(),
            arguments: Some(json!({"review_id": 1})),
            result_count: Some(1),
            output: output.map(|v| concierge_core::audit_document(&v)),
            outcome: Outcome::Ok,
            code: None,
            duration_ms: 1.0,
            notes: None,
        }
    }

    #[tokio::test]
    async fn a_table_made_before_outputs_gains_the_column_and_keeps_its_rows() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("audit.sqlite");
        let target = path.to_str().unwrap().to_string();
        // The table as the previous version made it, with one row.
        let old = "CREATE TABLE audit_event (
            id INTEGER PRIMARY KEY AUTOINCREMENT, ts TEXT NOT NULL, endpoint TEXT NOT NULL,
            client_id TEXT, user_id TEXT, tool TEXT, trace_id TEXT NOT NULL, rpc_id TEXT,
            outcome TEXT NOT NULL, code TEXT, duration_ms REAL NOT NULL, result_count INTEGER,
            arguments TEXT, notes TEXT)";
        let pool = SqliteFile::new(&path).open(&[old]).await.unwrap();
        sqlx::query(
            "INSERT INTO audit_event (ts, endpoint, trace_id, outcome, duration_ms) \
             VALUES ('2026-12-01T07:00:00.000Z', '/mappy/mcp', 't0', 'ok', 1.0)",
        )
        .execute(&pool)
        .await
        .unwrap();
        let filter = AuditQuery {
            limit: 10,
            ..Default::default()
        };
        // Read before any server of this version opened it: the old rows, without output.
        let rows = query(&target, &filter).await.unwrap();
        assert_eq!(rows.len(), 1);
        pool.close().await;

        let sender = open(&target).await.unwrap();
        let answer = json!({"batch_id": "b_1", "status": "queued"});
        sender
            .send(Message::Event(Box::new(event(Some(answer.clone())))))
            .await
            .unwrap();
        let (done, wait) = std::sync::mpsc::channel();
        sender.send(Message::Flush(done)).await.unwrap();
        tokio::task::spawn_blocking(move || wait.recv().unwrap())
            .await
            .unwrap();
        let rows = query(&target, &filter).await.unwrap();
        assert_eq!(rows.len(), 2, "{rows:?}");
        assert!(rows[0].get("output").is_none(), "{rows:?}");
        assert_eq!(rows[1]["output"], answer);
        // Opening again (the column is there now) changes nothing.
        open(&target).await.unwrap();
    }
}
