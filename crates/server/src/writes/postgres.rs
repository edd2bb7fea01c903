//! Idempotency records and the write secret in the deployment's PostgreSQL (`[state]
//! database`), shared by every instance: a replay answers the first result wherever the balancer
//! sends it, and a confirm token or task id sealed by one instance opens on another.
//!
//! Who holds a claim is judged like the SQLite store's lock files, but across hosts: each
//! instance keeps a row in `concierge_instance` fresh (every [`HEARTBEAT`], valid for
//! [`ALIVE_FOR`], judged by the database's clock so the instances' clocks need not agree). A
//! claim whose owner's row went stale belongs to an instance that died mid-write; the next call
//! with that key takes it over and sends the write again with the same key, which the backend's
//! own duplicate guard answers (docs/contracts/mappy-api.md). A live instance cut off from the
//! database for longer than `ALIVE_FOR` may have a claim taken over the same way; the backend's
//! guard makes that resend safe too.

use std::sync::Arc;
use std::time::Duration;

use concierge_core::idempotency::{ABANDONED, Claim, IdempotencyStore, StoreUnavailable};
use serde_json::Value;
use sqlx::Row;
use sqlx::postgres::PgPool;

use concierge_core::postgres::{Migrated, Schema, SharedDatabase, unavailable};

/// How often an instance renews its row.
pub const HEARTBEAT: Duration = Duration::from_secs(3);
/// How long a row says its instance is alive; several heartbeats, so a slow one is no death.
pub const ALIVE_FOR: Duration = Duration::from_secs(15);

const STORE: &str = "idempotency store";

/// The records, the secret and the instances that hold claims.
static SCHEMA: Schema = Schema {
    table: "concierge_writes_migrations",
    migrations: &[(
        1,
        "idempotency records, write secret, instances",
        include_str!("../../migrations/writes/0001_records.sql"),
    )],
};

pub struct PgIdempotencyStore {
    database: Arc<Migrated>,
    owner: String,
    heartbeat: tokio::task::AbortHandle,
}

impl PgIdempotencyStore {
    /// The store, with this instance's heartbeat running (it stops when the store is dropped).
    pub fn new(database: Arc<SharedDatabase>) -> Self {
        let database = Arc::new(Migrated::new(database, &SCHEMA));
        let owner = uuid::Uuid::new_v4().simple().to_string();
        let heartbeat = tokio::spawn(beat(database.clone(), owner.clone())).abort_handle();
        Self {
            database,
            owner,
            heartbeat,
        }
    }

    /// The pool, once the schema is current and this instance's row is there: a claim is never
    /// made before other instances can see its owner alive.
    async fn pool(&self) -> Result<&PgPool, StoreUnavailable> {
        let pool = self.database.pool().await?;
        renew(pool, &self.owner)
            .await
            .map_err(|e| unavailable(STORE, e))?;
        Ok(pool)
    }

    async fn claim_sql(
        &self,
        pool: &PgPool,
        key: &str,
        fingerprint: &str,
        now: i64,
        window: Duration,
    ) -> Result<Claim, sqlx::Error> {
        loop {
            // Records past their window go (judged by the platform's clock, as they were
            // written), and this key's claim if it names no owner and was abandoned.
            sqlx::query(
                "DELETE FROM concierge_write_idempotency WHERE expires_at <= $2 \
                 OR (key = $1 AND state = 'running' AND owner IS NULL AND started_at <= $3)",
            )
            .bind(key)
            .bind(now)
            .bind(now - ABANDONED.as_secs() as i64)
            .execute(pool)
            .await?;
            let inserted = sqlx::query(
                "INSERT INTO concierge_write_idempotency \
                 (key, fingerprint, state, started_at, expires_at, owner) \
                 VALUES ($1, $2, 'running', $3, $4, $5) ON CONFLICT (key) DO NOTHING",
            )
            .bind(key)
            .bind(fingerprint)
            .bind(now)
            .bind(now + window.as_secs() as i64)
            .bind(&self.owner)
            .execute(pool)
            .await?;
            if inserted.rows_affected() == 1 {
                return Ok(Claim::Claimed);
            }
            let Some(row) = sqlx::query(
                "SELECT fingerprint, state, result, owner FROM concierge_write_idempotency \
                 WHERE key = $1",
            )
            .bind(key)
            .fetch_optional(pool)
            .await?
            else {
                // Released between our insert and select: the key is free again.
                continue;
            };
            let stored: String = row.get(0);
            let state: String = row.get(1);
            let result: Option<String> = row.get(2);
            let owner: Option<String> = row.get(3);
            match (state.as_str(), result, owner) {
                ("done", Some(result), _) => {
                    return Ok(Claim::Done {
                        fingerprint: stored,
                        result: serde_json::from_str(&result).unwrap_or(Value::Null),
                    });
                }
                ("running", _, Some(owner)) if stored == fingerprint && owner != self.owner => {
                    // Taken over only if its owner is dead, in one statement: of several
                    // instances trying at once, one wins.
                    let taken = sqlx::query(
                        "UPDATE concierge_write_idempotency SET owner = $1, started_at = $2 \
                         WHERE key = $3 AND state = 'running' AND owner = $4 AND NOT EXISTS \
                         (SELECT 1 FROM concierge_instance i \
                          WHERE i.owner = $4 AND i.alive_until > now())",
                    )
                    .bind(&self.owner)
                    .bind(now)
                    .bind(key)
                    .bind(&owner)
                    .execute(pool)
                    .await?;
                    if taken.rows_affected() == 1 {
                        tracing::info!(
                            "idempotency: a write whose instance ended before recording it is sent again with its key"
                        );
                        return Ok(Claim::Claimed);
                    }
                    return Ok(Claim::Running {
                        fingerprint: stored,
                    });
                }
                _ => {
                    return Ok(Claim::Running {
                        fingerprint: stored,
                    });
                }
            }
        }
    }
}

impl Drop for PgIdempotencyStore {
    fn drop(&mut self) {
        self.heartbeat.abort();
    }
}

async fn renew(pool: &PgPool, owner: &str) -> Result<(), sqlx::Error> {
    sqlx::query(
        "INSERT INTO concierge_instance (owner, alive_until) \
         VALUES ($1, now() + make_interval(secs => $2)) \
         ON CONFLICT (owner) DO UPDATE SET alive_until = EXCLUDED.alive_until",
    )
    .bind(owner)
    .bind(ALIVE_FOR.as_secs_f64())
    .execute(pool)
    .await
    .map(|_| ())
}

/// Keeps this instance's row fresh, and forgets instances gone for an hour.
async fn beat(database: Arc<Migrated>, owner: String) {
    let mut ticks = tokio::time::interval(HEARTBEAT);
    ticks.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        ticks.tick().await;
        let Ok(pool) = database.pool().await else {
            continue;
        };
        if let Err(error) = renew(pool, &owner).await {
            tracing::debug!(%error, "idempotency: heartbeat not written");
            continue;
        }
        let _ = sqlx::query(
            "DELETE FROM concierge_instance WHERE alive_until < now() - interval '1 hour'",
        )
        .execute(pool)
        .await;
    }
}

#[async_trait::async_trait]
impl IdempotencyStore for PgIdempotencyStore {
    async fn secret(&self) -> Result<[u8; 32], StoreUnavailable> {
        let pool = self.database.pool().await?;
        let fresh = super::fresh_secret();
        sqlx::query(
            "INSERT INTO concierge_write_secret (id, secret) VALUES (1, $1) \
             ON CONFLICT (id) DO NOTHING",
        )
        .bind(fresh.to_vec())
        .execute(pool)
        .await
        .map_err(|e| unavailable(STORE, e))?;
        let stored: Vec<u8> =
            sqlx::query_scalar("SELECT secret FROM concierge_write_secret WHERE id = 1")
                .fetch_one(pool)
                .await
                .map_err(|e| unavailable(STORE, e))?;
        stored
            .try_into()
            .map_err(|_| StoreUnavailable("the stored write secret is damaged".into()))
    }

    async fn claim(
        &self,
        key: &str,
        fingerprint: &str,
        now: i64,
        window: Duration,
    ) -> Result<Claim, StoreUnavailable> {
        let pool = self.pool().await?;
        self.claim_sql(pool, key, fingerprint, now, window)
            .await
            .map_err(|e| unavailable(STORE, e))
    }

    async fn peek(&self, key: &str, now: i64) -> Result<Option<Claim>, StoreUnavailable> {
        let pool = self.database.pool().await?;
        let row = sqlx::query(
            "SELECT fingerprint, state, result FROM concierge_write_idempotency \
             WHERE key = $1 AND expires_at > $2",
        )
        .bind(key)
        .bind(now)
        .fetch_optional(pool)
        .await
        .map_err(|e| unavailable(STORE, e))?;
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

    async fn complete(&self, key: &str, result: &Value) -> Result<(), StoreUnavailable> {
        let pool = self.database.pool().await?;
        sqlx::query(
            "UPDATE concierge_write_idempotency SET state = 'done', result = $1 WHERE key = $2",
        )
        .bind(result.to_string())
        .bind(key)
        .execute(pool)
        .await
        .map(|_| ())
        .map_err(|e| unavailable(STORE, e))
    }

    async fn release(&self, key: &str) -> Result<(), StoreUnavailable> {
        let pool = self.database.pool().await?;
        sqlx::query("DELETE FROM concierge_write_idempotency WHERE key = $1 AND state = 'running'")
            .bind(key)
            .execute(pool)
            .await
            .map(|_| ())
            .map_err(|e| unavailable(STORE, e))
    }
}
