//! The audit log as a SQL table (`audit_event`), beside the JSON Lines file: the same events,
//! queryable by user, client, tool and time (each has an index with `ts`).
//!
//! Like the file, it is written off the request path: events queue, and a task inserts them in
//! batches, one transaction per batch. SQLite by default; the table uses only portable types.

use std::path::Path;
use std::time::Duration;

use concierge_core::AuditEvent;
use sqlx::sqlite::{SqliteConnectOptions, SqliteJournalMode, SqlitePool, SqlitePoolOptions};
use tokio::sync::mpsc;

const QUEUE: usize = 16 * 1024;
const BATCH: usize = 512;

pub(crate) enum Message {
    Event(Box<AuditEvent>),
    /// Answered once everything queued before it is committed.
    Flush(std::sync::mpsc::Sender<()>),
}

const SCHEMA: &[&str] = &[
    "CREATE TABLE IF NOT EXISTS audit_event (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        ts TEXT NOT NULL,
        endpoint TEXT NOT NULL,
        client_id TEXT,
        user_id TEXT,
        tool TEXT,
        trace_id TEXT NOT NULL,
        rpc_id TEXT,
        outcome TEXT NOT NULL,
        code TEXT,
        duration_ms REAL NOT NULL,
        result_count INTEGER,
        arguments TEXT,
        notes TEXT
    )",
    "CREATE INDEX IF NOT EXISTS audit_event_ts ON audit_event (ts)",
    "CREATE INDEX IF NOT EXISTS audit_event_user ON audit_event (user_id, ts)",
    "CREATE INDEX IF NOT EXISTS audit_event_client ON audit_event (client_id, ts)",
    "CREATE INDEX IF NOT EXISTS audit_event_tool ON audit_event (tool, ts)",
];

/// Opens (creating) the database and its table, and starts the writer task.
pub(crate) async fn open(path: &Path) -> Result<mpsc::Sender<Message>, String> {
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    }
    let options = SqliteConnectOptions::new()
        .filename(path)
        .create_if_missing(true)
        .journal_mode(SqliteJournalMode::Wal)
        .busy_timeout(Duration::from_secs(10));
    let pool = SqlitePoolOptions::new()
        .max_connections(1)
        .connect_with(options)
        .await
        .map_err(|e| format!("{}: {e}", path.display()))?;
    for statement in SCHEMA {
        sqlx::query(*statement)
            .execute(&pool)
            .await
            .map_err(|e| format!("{}: {e}", path.display()))?;
    }
    let (sender, receiver) = mpsc::channel(QUEUE);
    tokio::spawn(write_events(pool, receiver));
    Ok(sender)
}

async fn write_events(pool: SqlitePool, mut receiver: mpsc::Receiver<Message>) {
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
        if let Err(error) = insert(&pool, &events).await {
            tracing::error!(%error, lost = events.len(), "cannot write audit events to the database");
        }
        events.clear();
        for done in flushed.drain(..) {
            let _ = done.send(());
        }
    }
}

async fn insert(pool: &SqlitePool, events: &[Box<AuditEvent>]) -> Result<(), sqlx::Error> {
    if events.is_empty() {
        return Ok(());
    }
    let mut transaction = pool.begin().await?;
    for event in events {
        let outcome = serde_json::to_value(event.outcome)
            .ok()
            .and_then(|v| v.as_str().map(str::to_string))
            .unwrap_or_default();
        sqlx::query(
            "INSERT INTO audit_event (ts, endpoint, client_id, user_id, tool, trace_id, rpc_id, \
             outcome, code, duration_ms, result_count, arguments, notes) \
             VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
        )
        .bind(&event.ts)
        .bind(&event.endpoint)
        .bind(&event.client)
        .bind(&event.user)
        .bind(&event.tool)
        .bind(&event.trace_id)
        .bind(event.rpc_id.as_ref().map(|v| v.to_string()))
        .bind(outcome)
        .bind(&event.code)
        .bind(event.duration_ms)
        .bind(event.result_count.map(|n| n as i64))
        .bind(event.arguments.as_ref().map(|v| v.to_string()))
        .bind(
            event
                .notes
                .as_ref()
                .map(|v| serde_json::Value::Object(v.clone()).to_string()),
        )
        .execute(&mut *transaction)
        .await?;
    }
    transaction.commit().await
}
