//! `ReservationAiTaskIntakeService` and its store: source message inbox, AI batches, tasks and
//! transitions in SQLite (sqlx; the same schema runs on PostgreSQL later).
//!
//! Exactly once: one source message (`external_message_id`) gets at most one batch. A second
//! submission — sequential or concurrent, from this process or another — finds the first batch and
//! is answered with it, marked as a duplicate. Writes are one transaction, begun IMMEDIATE so two
//! writers never interleave, with the UNIQUE constraints as the last word.

use std::path::Path;

use concierge_core::sqlite::SqliteFile;
use serde_json::{Map, Value, json};
use sqlx::sqlite::SqlitePool;
use sqlx::{Row, Sqlite, Transaction};

use crate::adapter::{Form, Submission};
use crate::rules::{Verdict, judge_event, judge_item, judge_notice};

const SCHEMA: &str = r#"
CREATE TABLE IF NOT EXISTS platform_source_message_inbox (
    id INTEGER PRIMARY KEY,
    external_message_id TEXT NOT NULL UNIQUE,
    hotel_id TEXT NOT NULL,
    subject TEXT,
    sender TEXT,
    received_at TEXT,
    source_channel TEXT,
    message_json TEXT,
    created_at TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS reservation_ai_batch (
    id INTEGER PRIMARY KEY,
    source_message_inbox_id INTEGER NOT NULL UNIQUE REFERENCES platform_source_message_inbox(id),
    payload_form TEXT NOT NULL,
    accepted_count INTEGER NOT NULL,
    contract_error_count INTEGER NOT NULL,
    root_json TEXT NOT NULL,
    created_at TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS reservation_ai_task (
    id INTEGER PRIMARY KEY,
    batch_id INTEGER NOT NULL REFERENCES reservation_ai_batch(id),
    source_event_index INTEGER NOT NULL,
    catalog_code TEXT NOT NULL,
    skill_id TEXT NOT NULL,
    task_type TEXT NOT NULL,
    result_type TEXT NOT NULL,
    status TEXT NOT NULL,
    created_at TEXT NOT NULL,
    UNIQUE (batch_id, source_event_index)
);
CREATE TABLE IF NOT EXISTS workflow_reservation_ai_transition (
    id INTEGER PRIMARY KEY,
    batch_id INTEGER NOT NULL REFERENCES reservation_ai_batch(id),
    task_id INTEGER REFERENCES reservation_ai_task(id),
    source_event_index INTEGER,
    transition TEXT NOT NULL,
    error_code TEXT,
    error_message TEXT,
    ai_payload_json TEXT NOT NULL,
    created_at TEXT NOT NULL
);
"#;

/// What the intake answers for an accepted (or already accepted) submission.
#[derive(Debug, Clone, PartialEq)]
pub struct Accepted {
    pub batch_id: i64,
    pub accepted_count: i64,
    pub task_ids: Vec<i64>,
    /// Events recorded as `adapter_contract_error` transitions: (source_event_index, code, message).
    pub contract_errors: Vec<Value>,
    pub duplicate: bool,
}

/// The intake's refusals, on the existing error channel.
#[derive(Debug, Clone, PartialEq)]
pub enum IntakeError {
    MissingSourceMessageId,
    Storage(String),
}

pub struct IntakeService {
    pool: SqlitePool,
    hotel_id: String,
}

impl IntakeService {
    /// Opens (creating) the database; `hotel_id` is the platform's single ACTIVE hotel.
    pub async fn open(path: &Path, hotel_id: String) -> Result<Self, String> {
        let pool = SqliteFile::new(path)
            .foreign_keys()
            .open(&[SCHEMA])
            .await
            .map_err(|e| e.to_string())?;
        Ok(Self { pool, hotel_id })
    }

    pub fn pool(&self) -> &SqlitePool {
        &self.pool
    }

    /// `ReservationAiTaskIntakeService.accept`: records the submission once.
    pub async fn accept(&self, submission: &Submission) -> Result<Accepted, IntakeError> {
        let Some(external_id) = submission.source_message_id.as_deref() else {
            return Err(IntakeError::MissingSourceMessageId);
        };
        let storage = |e: sqlx::Error| IntakeError::Storage(e.to_string());
        let mut tx = self
            .pool
            .begin_with("BEGIN IMMEDIATE")
            .await
            .map_err(storage)?;
        if let Some(existing) = existing_batch(&mut tx, external_id)
            .await
            .map_err(storage)?
        {
            tx.rollback().await.map_err(storage)?;
            return Ok(existing);
        }
        let accepted = self.record(&mut tx, external_id, submission).await;
        match accepted {
            Ok(accepted) => {
                tx.commit().await.map_err(storage)?;
                Ok(accepted)
            }
            // Another process got there between our check and our insert: answer with its batch.
            Err(e) if is_unique_violation(&e) => {
                tx.rollback().await.map_err(storage)?;
                let mut tx = self.pool.begin().await.map_err(storage)?;
                existing_batch(&mut tx, external_id)
                    .await
                    .map_err(storage)?
                    .ok_or_else(|| IntakeError::Storage("unique violation without a batch".into()))
            }
            Err(e) => Err(storage(e)),
        }
    }

    async fn record(
        &self,
        tx: &mut Transaction<'_, Sqlite>,
        external_id: &str,
        submission: &Submission,
    ) -> Result<Accepted, sqlx::Error> {
        let now = chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Millis, true);
        let message = submission.source_message.clone().unwrap_or_default();
        let text = |key: &str| message.get(key).and_then(Value::as_str).map(String::from);
        let inbox_id: i64 = sqlx::query(
            "INSERT INTO platform_source_message_inbox (external_message_id, hotel_id, subject, sender, received_at, source_channel, message_json, created_at) \
             VALUES (?, ?, ?, ?, ?, ?, ?, ?) RETURNING id",
        )
        .bind(external_id)
        .bind(&self.hotel_id)
        .bind(text("subject"))
        .bind(text("from"))
        .bind(text("received_at"))
        .bind(text("source_channel"))
        .bind(Value::Object(message.clone()).to_string())
        .bind(&now)
        .fetch_one(&mut **tx)
        .await?
        .get(0);
        let batch_id: i64 = sqlx::query(
            "INSERT INTO reservation_ai_batch (source_message_inbox_id, payload_form, accepted_count, contract_error_count, root_json, created_at) \
             VALUES (?, ?, 0, 0, ?, ?) RETURNING id",
        )
        .bind(inbox_id)
        .bind(submission.form.name())
        .bind(Value::Object(submission.root.clone()).to_string())
        .bind(&now)
        .fetch_one(&mut **tx)
        .await?
        .get(0);

        let mut task_ids = Vec::new();
        let mut contract_errors = Vec::new();
        for (position, event) in submission.events.iter().enumerate() {
            let index = event
                .get("source_event_index")
                .and_then(Value::as_i64)
                .unwrap_or(position as i64 + 1);
            let verdict = match submission.form {
                Form::V3BusinessRoot => judge_event(event),
                Form::V2TaskResults => judge_item(event),
                Form::V3EntryNotice => judge_notice(
                    event
                        .get("route_code")
                        .and_then(Value::as_str)
                        .unwrap_or("S99"),
                ),
            };
            let payload = transition_payload(event);
            match verdict {
                Verdict::Task {
                    catalog_code,
                    skill_id,
                    task_type,
                    result_type,
                    status,
                } => {
                    let task_id: i64 = sqlx::query(
                        "INSERT INTO reservation_ai_task (batch_id, source_event_index, catalog_code, skill_id, task_type, result_type, status, created_at) \
                         VALUES (?, ?, ?, ?, ?, ?, ?, ?) RETURNING id",
                    )
                    .bind(batch_id)
                    .bind(index)
                    .bind(&catalog_code)
                    .bind(&skill_id)
                    .bind(&task_type)
                    .bind(&result_type)
                    .bind(status)
                    .bind(&now)
                    .fetch_one(&mut **tx)
                    .await?
                    .get(0);
                    insert_transition(
                        tx,
                        batch_id,
                        Some(task_id),
                        index,
                        "ai_task_accepted",
                        None,
                        &payload,
                        &now,
                    )
                    .await?;
                    task_ids.push(task_id);
                }
                Verdict::ContractError { code, message } => {
                    insert_transition(
                        tx,
                        batch_id,
                        None,
                        index,
                        "adapter_contract_error",
                        Some((code, &message)),
                        &payload,
                        &now,
                    )
                    .await?;
                    contract_errors.push(
                        json!({"source_event_index": index, "code": code, "message": message}),
                    );
                }
            }
        }
        sqlx::query("UPDATE reservation_ai_batch SET accepted_count = ?, contract_error_count = ? WHERE id = ?")
            .bind(task_ids.len() as i64)
            .bind(contract_errors.len() as i64)
            .bind(batch_id)
            .execute(&mut **tx)
            .await?;
        Ok(Accepted {
            batch_id,
            accepted_count: task_ids.len() as i64,
            task_ids,
            contract_errors,
            duplicate: false,
        })
    }
}

/// What a transition stores: the event as the business layer receives it. Mapping diagnostics are
/// not part of it (seed §5): they never enter the submission's events.
fn transition_payload(event: &Map<String, Value>) -> String {
    Value::Object(event.clone()).to_string()
}

#[allow(clippy::too_many_arguments)] // one row's columns
async fn insert_transition(
    tx: &mut Transaction<'_, Sqlite>,
    batch_id: i64,
    task_id: Option<i64>,
    index: i64,
    transition: &str,
    error: Option<(&str, &str)>,
    payload: &str,
    now: &str,
) -> Result<(), sqlx::Error> {
    sqlx::query(
        "INSERT INTO workflow_reservation_ai_transition (batch_id, task_id, source_event_index, transition, error_code, error_message, ai_payload_json, created_at) \
         VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
    )
    .bind(batch_id)
    .bind(task_id)
    .bind(index)
    .bind(transition)
    .bind(error.map(|e| e.0))
    .bind(error.map(|e| e.1))
    .bind(payload)
    .bind(now)
    .execute(&mut **tx)
    .await?;
    Ok(())
}

async fn existing_batch(
    tx: &mut Transaction<'_, Sqlite>,
    external_id: &str,
) -> Result<Option<Accepted>, sqlx::Error> {
    let Some(row) = sqlx::query(
        "SELECT b.id, b.accepted_count FROM reservation_ai_batch b \
         JOIN platform_source_message_inbox i ON i.id = b.source_message_inbox_id WHERE i.external_message_id = ?",
    )
    .bind(external_id)
    .fetch_optional(&mut **tx)
    .await?
    else {
        return Ok(None);
    };
    let batch_id: i64 = row.get(0);
    let task_ids: Vec<i64> =
        sqlx::query("SELECT id FROM reservation_ai_task WHERE batch_id = ? ORDER BY id")
            .bind(batch_id)
            .fetch_all(&mut **tx)
            .await?
            .iter()
            .map(|r| r.get(0))
            .collect();
    let contract_errors = sqlx::query(
        "SELECT source_event_index, error_code, error_message FROM workflow_reservation_ai_transition \
         WHERE batch_id = ? AND transition = 'adapter_contract_error' ORDER BY id",
    )
    .bind(batch_id)
    .fetch_all(&mut **tx)
    .await?
    .iter()
    .map(|r| json!({"source_event_index": r.get::<i64, _>(0), "code": r.get::<String, _>(1), "message": r.get::<String, _>(2)}))
    .collect();
    Ok(Some(Accepted {
        batch_id,
        accepted_count: row.get(1),
        task_ids,
        contract_errors,
        duplicate: true,
    }))
}

fn is_unique_violation(error: &sqlx::Error) -> bool {
    matches!(error, sqlx::Error::Database(e) if e.is_unique_violation())
}
