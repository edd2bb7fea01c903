//! Where idempotency records live: SQLite by default (a file under `var/`), shared by every
//! endpoint of a deployment. A record is claimed before a write runs and completed with its
//! result, so a replay — from the same process, another instance on the same file, or after a
//! restart — answers from it instead of writing again.

use std::path::Path;
use std::time::Duration;

use serde_json::Value;
use sqlx::Row;
use sqlx::sqlite::SqlitePool;

/// What a claim found.
#[derive(Debug, Clone, PartialEq)]
pub enum Claim {
    /// Nobody holds the key: the caller runs the write.
    Claimed,
    /// A write with this key finished within the window.
    Done { fingerprint: String, result: Value },
    /// A write with this key is running now (elsewhere).
    Running { fingerprint: String },
}

/// A claim older than this whose write never finished was abandoned (a crash mid-write): the key
/// may be claimed again. Write tools must give up sooner (Mappy's write timeout is at most 5
/// minutes), and the idempotency window must be longer (the config check says so), so a live
/// write is never taken over.
pub const ABANDONED: Duration = Duration::from_secs(10 * 60);

const SCHEMA: &[&str] = &[
    "CREATE TABLE IF NOT EXISTS write_idempotency (key TEXT PRIMARY KEY, fingerprint TEXT NOT NULL, \
     state TEXT NOT NULL, result TEXT, started_at INTEGER NOT NULL, expires_at INTEGER NOT NULL)",
    "CREATE INDEX IF NOT EXISTS write_idempotency_expiry ON write_idempotency (expires_at)",
    "CREATE TABLE IF NOT EXISTS write_secret (id INTEGER PRIMARY KEY CHECK (id = 1), secret BLOB NOT NULL)",
];

pub struct WriteStore {
    pool: SqlitePool,
}

impl WriteStore {
    pub async fn open(path: &Path) -> Result<Self, String> {
        let pool = crate::sqlite::open(path, 4, SCHEMA).await?;
        Ok(Self { pool })
    }

    /// The deployment's secret for confirm tokens: made once, kept here, so every instance on
    /// this database and every restart accept the same tokens.
    pub async fn secret(&self) -> Result<[u8; 32], String> {
        let mut fresh = [0u8; 32];
        fresh[..16].copy_from_slice(uuid::Uuid::new_v4().as_bytes());
        fresh[16..].copy_from_slice(uuid::Uuid::new_v4().as_bytes());
        sqlx::query(
            "INSERT INTO write_secret (id, secret) VALUES (1, ?) ON CONFLICT (id) DO NOTHING",
        )
        .bind(fresh.to_vec())
        .execute(&self.pool)
        .await
        .map_err(|e| e.to_string())?;
        let stored: Vec<u8> = sqlx::query_scalar("SELECT secret FROM write_secret WHERE id = 1")
            .fetch_one(&self.pool)
            .await
            .map_err(|e| e.to_string())?;
        stored
            .try_into()
            .map_err(|_| "the stored write secret is damaged".to_string())
    }

    pub async fn claim(
        &self,
        key: &str,
        fingerprint: &str,
        now: i64,
        window: Duration,
    ) -> Result<Claim, sqlx::Error> {
        sqlx::query(
            "DELETE FROM write_idempotency WHERE expires_at <= ? \
             OR (key = ? AND state = 'running' AND started_at <= ?)",
        )
        .bind(now)
        .bind(key)
        .bind(now - ABANDONED.as_secs() as i64)
        .execute(&self.pool)
        .await?;
        let inserted = sqlx::query(
            "INSERT INTO write_idempotency (key, fingerprint, state, started_at, expires_at) \
             VALUES (?, ?, 'running', ?, ?) ON CONFLICT (key) DO NOTHING",
        )
        .bind(key)
        .bind(fingerprint)
        .bind(now)
        .bind(now + window.as_secs() as i64)
        .execute(&self.pool)
        .await?;
        if inserted.rows_affected() == 1 {
            return Ok(Claim::Claimed);
        }
        let row =
            sqlx::query("SELECT fingerprint, state, result FROM write_idempotency WHERE key = ?")
                .bind(key)
                .fetch_optional(&self.pool)
                .await?;
        let Some(row) = row else {
            // Released between our insert and select: the key is free again.
            return Box::pin(self.claim(key, fingerprint, now, window)).await;
        };
        let fingerprint: String = row.get(0);
        let state: String = row.get(1);
        let result: Option<String> = row.get(2);
        Ok(match (state.as_str(), result) {
            ("done", Some(result)) => Claim::Done {
                fingerprint,
                result: serde_json::from_str(&result).unwrap_or(Value::Null),
            },
            _ => Claim::Running { fingerprint },
        })
    }

    /// What the key holds now, without claiming it (`None`: nothing live).
    pub async fn peek(&self, key: &str, now: i64) -> Result<Option<Claim>, sqlx::Error> {
        let row = sqlx::query(
            "SELECT fingerprint, state, result FROM write_idempotency WHERE key = ? AND expires_at > ?",
        )
        .bind(key)
        .bind(now)
        .fetch_optional(&self.pool)
        .await?;
        Ok(row.map(|row| {
            let fingerprint: String = row.get(0);
            match (
                row.get::<String, _>(1).as_str(),
                row.get::<Option<String>, _>(2),
            ) {
                ("done", Some(result)) => Claim::Done {
                    fingerprint,
                    result: serde_json::from_str(&result).unwrap_or(Value::Null),
                },
                _ => Claim::Running { fingerprint },
            }
        }))
    }

    /// Records the write's result: from now on the key answers it.
    pub async fn complete(&self, key: &str, result: &Value) -> Result<(), sqlx::Error> {
        sqlx::query("UPDATE write_idempotency SET state = 'done', result = ? WHERE key = ?")
            .bind(result.to_string())
            .bind(key)
            .execute(&self.pool)
            .await
            .map(|_| ())
    }

    /// Frees a key whose write failed, so the caller may send it again.
    pub async fn release(&self, key: &str) -> Result<(), sqlx::Error> {
        sqlx::query("DELETE FROM write_idempotency WHERE key = ? AND state = 'running'")
            .bind(key)
            .execute(&self.pool)
            .await
            .map(|_| ())
    }
}
