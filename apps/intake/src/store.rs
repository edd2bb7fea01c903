//! `ReservationAiTaskIntakeService` and its store: source message inbox, AI batches, tasks and
//! transitions, in a SQLite file (one host) or in PostgreSQL (`database = "postgres://…"`,
//! shared by every instance of the deployment).
//!
//! Exactly once: one source message (`external_message_id`) gets at most one batch. A second
//! submission — sequential or concurrent, from this process or another instance — finds the
//! first batch and is answered with it, marked as a duplicate. Writes are one transaction (on
//! SQLite begun IMMEDIATE, so two writers never interleave), and the database's UNIQUE
//! constraint on the message id is the last word: of two instances inserting the same message at
//! once, PostgreSQL makes the second wait for the first and then refuses it, and the second
//! answers with the first one's batch.
//!
//! The queries are written once, for both databases, the platform's way
//! ([`concierge_core::store`]).

use std::path::Path;
use std::sync::LazyLock;

use concierge_core::StoreUnavailable;
use concierge_core::postgres::Schema;
use concierge_core::sqlite::SqliteFile;
use concierge_core::store::StoreDatabase;
use concierge_core::{on_store, store_queries};
use serde_json::{Map, Value, json};
use sqlx::Row;

use crate::adapter::{Form, Submission};
use crate::rules::{Verdict, judge_event, judge_item, judge_notice};

/// The same tables in PostgreSQL, with identity columns where SQLite has its rowid.
const POSTGRES_TABLES: &str = include_str!("../migrations/0001_intake.sql");

/// The SQLite file's tables: the PostgreSQL migration in SQLite's words — an `INTEGER PRIMARY
/// KEY` (the rowid) where PostgreSQL has an identity column, and `IF NOT EXISTS` for files made
/// before. One text, so the two schemas cannot drift apart.
static SQLITE_SCHEMA: LazyLock<String> = LazyLock::new(|| {
    POSTGRES_TABLES
        .replace(
            "BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY",
            "INTEGER PRIMARY KEY",
        )
        .replace("CREATE TABLE ", "CREATE TABLE IF NOT EXISTS ")
});

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

impl From<StoreUnavailable> for IntakeError {
    fn from(error: StoreUnavailable) -> Self {
        Self::Storage(error.0)
    }
}

static POSTGRES_SCHEMA: Schema = Schema {
    table: "concierge_intake_migrations",
    migrations: &[(
        1,
        "intake: inbox, batches, tasks, transitions",
        POSTGRES_TABLES,
    )],
};

pub struct IntakeService {
    database: StoreDatabase,
    hotel_id: String,
}

impl IntakeService {
    /// Opens the store at `target` — a `postgres://` URL, or a SQLite file path (created) —;
    /// `hotel_id` is the platform's single ACTIVE hotel. PostgreSQL is connected (and its tables
    /// migrated) on the first submission, so an instance starts while its database is down.
    pub async fn open(target: &str, hotel_id: String) -> Result<Self, String> {
        let database = if concierge_core::postgres::is_url(target) {
            StoreDatabase::postgres_url(target, &POSTGRES_SCHEMA)?
        } else {
            let pool = SqliteFile::new(Path::new(target))
                .foreign_keys()
                .open(&[SQLITE_SCHEMA.as_str()])
                .await
                .map_err(|e| e.to_string())?;
            StoreDatabase::Sqlite(pool)
        };
        Ok(Self { database, hotel_id })
    }

    /// `ReservationAiTaskIntakeService.accept`: records the submission once.
    pub async fn accept(&self, submission: &Submission) -> Result<Accepted, IntakeError> {
        let Some(external_id) = submission.source_message_id.as_deref() else {
            return Err(IntakeError::MissingSourceMessageId);
        };
        on_store!(
            &self.database,
            queries::accept(&self.hotel_id, external_id, submission)
        )
    }
}

store_queries! {
    /// `accept` and its queries.
    mod queries {
        pub async fn accept(
            pool: &Pool,
            hotel_id: &str,
            external_id: &str,
            submission: &Submission,
        ) -> Result<Accepted, IntakeError> {
            let storage = |e: sqlx::Error| IntakeError::Storage(e.to_string());
            let mut tx = begin_write(pool).await.map_err(storage)?;
            if let Some(existing) = existing_batch(&mut tx, external_id)
                .await
                .map_err(storage)?
            {
                tx.rollback().await.map_err(storage)?;
                return Ok(existing);
            }
            match record(&mut tx, hotel_id, external_id, submission).await {
                Ok(accepted) => {
                    tx.commit().await.map_err(storage)?;
                    Ok(accepted)
                }
                // Another process got there between our check and our insert: answer with
                // its batch.
                Err(e) if is_unique_violation(&e) => {
                    tx.rollback().await.map_err(storage)?;
                    let mut tx = pool.begin().await.map_err(storage)?;
                    existing_batch(&mut tx, external_id)
                        .await
                        .map_err(storage)?
                        .ok_or_else(|| {
                            IntakeError::Storage("unique violation without a batch".into())
                        })
                }
                Err(e) => Err(storage(e)),
            }
        }

        async fn record(
            tx: &mut Tx<'_>,
            hotel_id: &str,
            external_id: &str,
            submission: &Submission,
        ) -> Result<Accepted, sqlx::Error> {
            let now = chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Millis, true);
            let message = submission.source_message.clone().unwrap_or_default();
            let text = |key: &str| message.get(key).and_then(Value::as_str).map(String::from);
            let inbox_id: i64 = sqlx::query(
                "INSERT INTO platform_source_message_inbox (external_message_id, hotel_id, subject, sender, received_at, source_channel, message_json, created_at) \
                 VALUES ($1, $2, $3, $4, $5, $6, $7, $8) RETURNING id",
            )
            .bind(external_id)
            .bind(hotel_id)
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
                 VALUES ($1, $2, 0, 0, $3, $4) RETURNING id",
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
                let payload = transition_payload(event);
                match verdict(submission.form, event) {
                    Verdict::Task {
                        catalog_code,
                        skill_id,
                        task_type,
                        result_type,
                        status,
                    } => {
                        let task_id: i64 = sqlx::query(
                            "INSERT INTO reservation_ai_task (batch_id, source_event_index, catalog_code, skill_id, task_type, result_type, status, created_at) \
                             VALUES ($1, $2, $3, $4, $5, $6, $7, $8) RETURNING id",
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
                        let row = Transition::accepted(batch_id, task_id, index);
                        insert_transition(tx, row, &payload, &now).await?;
                        task_ids.push(task_id);
                    }
                    Verdict::ContractError { code, message } => {
                        let row = Transition::contract_error(batch_id, index, code, &message);
                        insert_transition(tx, row, &payload, &now).await?;
                        contract_errors.push(
                            json!({"source_event_index": index, "code": code, "message": message}),
                        );
                    }
                }
            }
            sqlx::query(
                "UPDATE reservation_ai_batch SET accepted_count = $1, contract_error_count = $2 WHERE id = $3",
            )
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

        async fn insert_transition(
            tx: &mut Tx<'_>,
            row: Transition<'_>,
            payload: &str,
            now: &str,
        ) -> Result<(), sqlx::Error> {
            sqlx::query(
                "INSERT INTO workflow_reservation_ai_transition (batch_id, task_id, source_event_index, transition, error_code, error_message, ai_payload_json, created_at) \
                 VALUES ($1, $2, $3, $4, $5, $6, $7, $8)",
            )
            .bind(row.batch_id)
            .bind(row.task_id)
            .bind(row.index)
            .bind(row.transition)
            .bind(row.error.map(|e| e.0))
            .bind(row.error.map(|e| e.1))
            .bind(payload)
            .bind(now)
            .execute(&mut **tx)
            .await?;
            Ok(())
        }

        async fn existing_batch(
            tx: &mut Tx<'_>,
            external_id: &str,
        ) -> Result<Option<Accepted>, sqlx::Error> {
            let Some(row) = sqlx::query(
                "SELECT b.id, b.accepted_count FROM reservation_ai_batch b \
                 JOIN platform_source_message_inbox i ON i.id = b.source_message_inbox_id WHERE i.external_message_id = $1",
            )
            .bind(external_id)
            .fetch_optional(&mut **tx)
            .await?
            else {
                return Ok(None);
            };
            let batch_id: i64 = row.get(0);
            let task_ids: Vec<i64> =
                sqlx::query("SELECT id FROM reservation_ai_task WHERE batch_id = $1 ORDER BY id")
                    .bind(batch_id)
                    .fetch_all(&mut **tx)
                    .await?
                    .iter()
                    .map(|r| r.get(0))
                    .collect();
            let contract_errors = sqlx::query(
                "SELECT source_event_index, error_code, error_message FROM workflow_reservation_ai_transition \
                 WHERE batch_id = $1 AND transition = 'adapter_contract_error' ORDER BY id",
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
    }
}

/// One transition row's own columns.
#[derive(Clone, Copy)]
struct Transition<'a> {
    batch_id: i64,
    task_id: Option<i64>,
    index: i64,
    transition: &'static str,
    error: Option<(&'a str, &'a str)>,
}

impl<'a> Transition<'a> {
    fn accepted(batch_id: i64, task_id: i64, index: i64) -> Self {
        Self {
            batch_id,
            task_id: Some(task_id),
            index,
            transition: "ai_task_accepted",
            error: None,
        }
    }

    fn contract_error(batch_id: i64, index: i64, code: &'a str, message: &'a str) -> Self {
        Self {
            batch_id,
            task_id: None,
            index,
            transition: "adapter_contract_error",
            error: Some((code, message)),
        }
    }
}

/// What the rules make of one event of the submission's form.
fn verdict(form: Form, event: &Map<String, Value>) -> Verdict {
    match form {
        Form::V3BusinessRoot => judge_event(event),
        Form::V2TaskResults => judge_item(event),
        Form::V3EntryNotice => judge_notice(
            event
                .get("route_code")
                .and_then(Value::as_str)
                .unwrap_or("S99"),
        ),
    }
}

/// What a transition stores: the event as the business layer receives it. Mapping diagnostics are
/// not part of it (seed §5): they never enter the submission's events.
fn transition_payload(event: &Map<String, Value>) -> String {
    Value::Object(event.clone()).to_string()
}

fn is_unique_violation(error: &sqlx::Error) -> bool {
    matches!(error, sqlx::Error::Database(e) if e.is_unique_violation())
}
