//! The audit log as a SQL table (`audit_event`), beside the JSON Lines file: the same events,
//! queryable by user, client, tool and time (each has an index with `ts`).
//!
//! Like the file, it is written off the request path: events queue, and a task inserts them in
//! batches, one transaction per batch. SQLite by default (a path); a `postgres://` URL puts the
//! table in PostgreSQL, where several instances can share it (`ts` is a `timestamptz` there and
//! `arguments` / `notes` / `output` are `jsonb`).

use std::path::Path;
use std::time::Duration;

use concierge_core::postgres::{Schema, kind};
use concierge_core::sqlite::{self, SqliteFile};
use concierge_core::store::StoreDatabase;
use concierge_core::{AuditEvent, StoreUnavailable, on_store, store_queries};
use tokio::sync::mpsc;

const QUEUE: usize = 16 * 1024;
const BATCH: usize = 512;
/// How soon a batch is sent again while the database does not answer, doubling up to the max.
const RETRY_FIRST: Duration = Duration::from_millis(500);
const RETRY_MAX: Duration = Duration::from_secs(30);

/// Why a batch or a read failed: the database did not answer (or its table could not be made
/// yet), or it refused the statement.
enum Failure {
    Unavailable,
    Sql(sqlx::Error),
}

impl From<StoreUnavailable> for Failure {
    fn from(_: StoreUnavailable) -> Self {
        Self::Unavailable
    }
}

impl From<sqlx::Error> for Failure {
    fn from(error: sqlx::Error) -> Self {
        Self::Sql(error)
    }
}

impl Failure {
    /// The database did not answer, or is going away (as opposed to refusing the rows): worth
    /// sending again. SQLSTATE class 08 is a connection exception, 57P a server shutting down.
    fn is_unreachable(&self) -> bool {
        match self {
            Self::Unavailable => true,
            Self::Sql(sqlx::Error::Io(_) | sqlx::Error::PoolTimedOut | sqlx::Error::PoolClosed) => {
                true
            }
            Self::Sql(sqlx::Error::Database(e)) => e
                .code()
                .is_some_and(|code| code.starts_with("08") || code.starts_with("57P")),
            Self::Sql(_) => false,
        }
    }

    /// What went wrong, without the URL (and its password) a driver may quote.
    fn kind(&self) -> &'static str {
        match self {
            Self::Unavailable => "unreachable",
            Self::Sql(error) => kind(error),
        }
    }
}

pub(crate) enum Message {
    Event(Box<AuditEvent>),
    /// Answered once everything queued before it is committed.
    Flush(std::sync::mpsc::Sender<()>),
}

const INDEXES: &str = "
CREATE INDEX IF NOT EXISTS audit_event_ts ON audit_event (ts);
CREATE INDEX IF NOT EXISTS audit_event_user ON audit_event (user_id, ts);
CREATE INDEX IF NOT EXISTS audit_event_client ON audit_event (client_id, ts);
CREATE INDEX IF NOT EXISTS audit_event_tool ON audit_event (tool, ts);";

const SQLITE_TABLE: &str = "CREATE TABLE IF NOT EXISTS audit_event (
    id INTEGER PRIMARY KEY AUTOINCREMENT, ts TEXT NOT NULL, endpoint TEXT NOT NULL,
    client_id TEXT, user_id TEXT, tool TEXT, trace_id TEXT NOT NULL, rpc_id TEXT,
    outcome TEXT NOT NULL, code TEXT, duration_ms REAL NOT NULL, result_count INTEGER,
    arguments TEXT, notes TEXT, output TEXT)";

/// The table in PostgreSQL: `ts` a `timestamptz`, the documents `jsonb`. Every statement is
/// `IF NOT EXISTS`, so a table an older version made without migrations (and without `output`,
/// seed §10) is adopted as it is.
static POSTGRES_SCHEMA: Schema = Schema {
    table: "concierge_audit_migrations",
    migrations: &[(
        1,
        "audit events",
        include_str!("../migrations/audit/0001_audit_event.sql"),
    )],
};

/// Opens (creating) the database and its table, and starts the writer task. `target` is a
/// `postgres://` URL or a SQLite file path.
pub(crate) async fn open(target: &str) -> Result<mpsc::Sender<Message>, String> {
    let database = if concierge_core::postgres::is_url(target) {
        let database = StoreDatabase::postgres_url(target, &POSTGRES_SCHEMA)?;
        // Connected and its table made now: a sink that cannot be reached at start is a
        // config error the operator sees, not events queued for a database that never was.
        if let StoreDatabase::Postgres(migrated) = &database {
            migrated.pool().await.map_err(|e| {
                format!(
                    "cannot create the audit table ({})",
                    Failure::from(e).kind()
                )
            })?;
        }
        database
    } else {
        let path = Path::new(target.strip_prefix("sqlite://").unwrap_or(target));
        // One connection: the writer task is the table's only writer.
        let pool = SqliteFile::new(path)
            .connections(1)
            .open(&[SQLITE_TABLE, INDEXES])
            .await
            .map_err(|e| e.to_string())?;
        sqlite::add_column(&pool, "audit_event", "output", "TEXT")
            .await
            .map_err(|e| format!("{}: {e}", path.display()))?;
        StoreDatabase::Sqlite(pool)
    };
    let (sender, receiver) = mpsc::channel(QUEUE);
    tokio::spawn(write_events(database, receiver));
    Ok(sender)
}

async fn write_events(database: StoreDatabase, mut receiver: mpsc::Receiver<Message>) {
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
            let written: Result<(), Failure> = on_store!(&database, queries::insert(&events));
            match written {
                Ok(()) => break,
                // The database is away (a shared PostgreSQL restarting): the batch waits for it,
                // and what arrives meanwhile waits in the bounded queue (beyond it, the file
                // still has every event).
                Err(error) if error.is_unreachable() => {
                    tracing::warn!(
                        error = error.kind(),
                        waiting = events.len(),
                        retry_in = ?wait,
                        "audit table unreachable; the batch is kept and sent again"
                    );
                    tokio::time::sleep(wait).await;
                    wait = (wait * 2).min(RETRY_MAX);
                }
                Err(error) => {
                    tracing::error!(
                        error = error.kind(),
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

/// A stored document (arguments, notes, output) as JSON again.
fn document(text: Option<String>) -> Option<serde_json::Value> {
    text.and_then(|t| serde_json::from_str(&t).ok())
}

store_queries! {
    /// Writing a batch and reading events back, once for both databases.
    mod queries {
        use sqlx::Row as _;

        /// Inserts a batch in one transaction.
        pub async fn insert(pool: &Pool, events: &[Box<AuditEvent>]) -> Result<(), Failure> {
            let statement = ENGINE.pick(
                "INSERT INTO audit_event (ts, endpoint, client_id, user_id, tool, trace_id, \
                 rpc_id, outcome, code, duration_ms, result_count, arguments, notes, output) \
                 VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14)",
                "INSERT INTO audit_event (ts, endpoint, client_id, user_id, tool, trace_id, \
                 rpc_id, outcome, code, duration_ms, result_count, arguments, notes, output) \
                 VALUES ($1::timestamptz, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12::jsonb, \
                 $13::jsonb, $14::jsonb)",
            );
            let mut transaction = pool.begin().await?;
            for event in events {
                let row = Row::of(event);
                sqlx::query(statement)
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
            Ok(transaction.commit().await?)
        }

        /// Runs a `SELECT` made by [`query`] with `values` bound in order; each row an event.
        pub async fn select(
            pool: &Pool,
            statement: &str,
            values: &[String],
        ) -> Result<Vec<serde_json::Value>, Failure> {
            let mut query = sqlx::query(sqlx::AssertSqlSafe(statement));
            for value in values {
                query = query.bind(value);
            }
            let rows = query.fetch_all(pool).await?;
            Ok(rows
                .iter()
                .map(|row| {
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
                        "arguments": document(row.get("arguments")),
                        "notes": document(row.get("notes")),
                        "output": document(row.get("output")),
                    });
                    if let serde_json::Value::Object(fields) = &mut event {
                        fields.retain(|_, v| !v.is_null());
                    }
                    event
                })
                .collect())
        }
    }
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
    let database = if postgres {
        StoreDatabase::postgres_url(target, &POSTGRES_SCHEMA)?
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
        StoreDatabase::Sqlite(pool)
    };
    let rows: Result<_, Failure> = on_store!(&database, queries::select(&statement, &values));
    rows.map_err(|e| format!("cannot read the audit table ({})", e.kind()))
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
