//! Idempotency records and the write secret on either engine ([`concierge_core::store`]): a
//! SQLite file (the default home, under `var/`, shared by every endpoint and every process on
//! this host) or the deployment's PostgreSQL (`[state] database`, shared by every instance). A
//! record is claimed before a write runs and completed with its result, so a replay — from the
//! same process, another instance, or after a restart — answers from it instead of writing
//! again; a confirm token or task id sealed by one instance opens on another.
//!
//! A claim names the process that holds it. A claim whose owner is dead (its lock file free on
//! SQLite, `lock_files.rs`; its instance row stale on PostgreSQL, `heartbeat.rs`) belongs to a
//! write that may have reached the backend or not, and nobody will ever record its result: the
//! next call with that key takes it over and sends the write again with the same key, which the
//! backend's own duplicate guard answers (Mappy's `Idempotency-Key`,
//! docs/contracts/mappy-api.md). Without this a replay after a crash answered
//! `write_in_progress` until the claim counted as abandoned (10 minutes).

use std::path::Path;
use std::sync::Arc;

use concierge_core::idempotency::{ABANDONED, Claim, Claiming, IdempotencyStore, StoreUnavailable};
use concierge_core::postgres::{Schema, SharedDatabase};
use concierge_core::sqlite::{self, SqliteFile};
use concierge_core::store::{Engine, StoreDatabase};
use concierge_core::{on_store, store_queries};
use serde_json::Value;

use super::heartbeat;
use super::lock_files::Owner;

const SQLITE_SCHEMA: &[&str] = &[
    "CREATE TABLE IF NOT EXISTS write_idempotency (key TEXT PRIMARY KEY, fingerprint TEXT NOT NULL, \
     state TEXT NOT NULL, result TEXT, started_at INTEGER NOT NULL, expires_at INTEGER NOT NULL, \
     owner TEXT)",
    "CREATE INDEX IF NOT EXISTS write_idempotency_expiry ON write_idempotency (expires_at)",
    "CREATE TABLE IF NOT EXISTS write_secret (id INTEGER PRIMARY KEY CHECK (id = 1), secret BLOB NOT NULL)",
];

/// The records, the secret and the instances that hold claims.
static POSTGRES_SCHEMA: Schema = Schema {
    table: "concierge_writes_migrations",
    migrations: &[(
        1,
        "idempotency records, write secret, instances",
        include_str!("../../migrations/writes/0001_records.sql"),
    )],
};

/// How this store tells a dead claim holder from a live one.
enum Liveness {
    /// One host: lock files beside the SQLite file.
    LockFiles(Owner),
    /// Several hosts: instance rows this heartbeat keeps fresh (stopped when the store goes).
    Heartbeat {
        id: String,
        beat: tokio::task::AbortHandle,
    },
}

impl Liveness {
    fn id(&self) -> &str {
        match self {
            Self::LockFiles(owner) => &owner.id,
            Self::Heartbeat { id, .. } => id,
        }
    }

    /// Whether the claim's holder may be dead: known dead on one host; on several, the
    /// database decides in the statement that takes the claim over.
    fn may_be_dead(&self, holder: &str) -> bool {
        match self {
            Self::LockFiles(owner) => !owner.is_alive(holder),
            Self::Heartbeat { id, .. } => holder != id,
        }
    }
}

pub struct SqlIdempotencyStore {
    database: Arc<StoreDatabase>,
    liveness: Liveness,
}

impl SqlIdempotencyStore {
    /// The records in the SQLite file at `path` (one host).
    pub async fn open_file(path: &Path) -> Result<Self, String> {
        let pool = SqliteFile::new(path)
            .open(SQLITE_SCHEMA)
            .await
            .map_err(|e| e.to_string())?;
        // Tables made before claims named their owner.
        sqlite::add_column(&pool, "write_idempotency", "owner", "TEXT")
            .await
            .map_err(|e| format!("{}: {e}", path.display()))?;
        Ok(Self {
            database: Arc::new(StoreDatabase::Sqlite(pool)),
            liveness: Liveness::LockFiles(Owner::register(path)?),
        })
    }

    /// The records in the shared PostgreSQL, with this instance's heartbeat running.
    pub fn shared(database: Arc<SharedDatabase>) -> Self {
        let database = Arc::new(StoreDatabase::postgres(database, &POSTGRES_SCHEMA));
        let id = uuid::Uuid::new_v4().simple().to_string();
        let beat = tokio::spawn(heartbeat::beat(database.clone(), id.clone())).abort_handle();
        Self {
            database,
            liveness: Liveness::Heartbeat { id, beat },
        }
    }

    /// On PostgreSQL, this instance's row is renewed first: a claim is never made before other
    /// instances can see its owner alive.
    async fn announce(&self) -> Result<(), StoreUnavailable> {
        if let (StoreDatabase::Postgres(database), Liveness::Heartbeat { id, .. }) =
            (&*self.database, &self.liveness)
        {
            let pool = database.pool().await?;
            heartbeat::renew(pool, id).await.map_err(down)?;
        }
        Ok(())
    }
}

impl Drop for SqlIdempotencyStore {
    fn drop(&mut self) {
        if let Liveness::Heartbeat { beat, .. } = &self.liveness {
            beat.abort();
        }
    }
}

/// A failure as the trait reports it (a busy or broken file, a database away: the write is
/// refused as retryable, and the detail goes to the log).
fn down(error: sqlx::Error) -> StoreUnavailable {
    StoreUnavailable(format!(
        "idempotency store: {} — {error}",
        concierge_core::postgres::kind(&error)
    ))
}

/// A failure of a query: the database's, or the store not reachable at all.
struct Failure(StoreUnavailable);

impl From<sqlx::Error> for Failure {
    fn from(error: sqlx::Error) -> Self {
        Self(down(error))
    }
}

impl From<StoreUnavailable> for Failure {
    fn from(error: StoreUnavailable) -> Self {
        Self(error)
    }
}

#[async_trait::async_trait]
impl IdempotencyStore for SqlIdempotencyStore {
    async fn secret(&self) -> Result<[u8; 32], StoreUnavailable> {
        let stored: Result<Vec<u8>, Failure> =
            on_store!(&*self.database, queries::secret(&super::fresh_secret()));
        stored
            .map_err(|e| e.0)?
            .try_into()
            .map_err(|_| StoreUnavailable("the stored write secret is damaged".into()))
    }

    async fn claim_as_asked(&self, asked: &Claiming<'_>) -> Result<Claim, StoreUnavailable> {
        self.announce().await?;
        let claim: Result<Claim, Failure> =
            on_store!(&*self.database, queries::claim(asked, &self.liveness));
        claim.map_err(|e| e.0)
    }

    async fn peek(&self, key: &str, now: i64) -> Result<Option<Claim>, StoreUnavailable> {
        let peeked: Result<_, Failure> = on_store!(&*self.database, queries::peek(key, now));
        peeked.map_err(|e| e.0)
    }

    async fn complete(&self, key: &str, result: &Value) -> Result<(), StoreUnavailable> {
        let done: Result<(), Failure> =
            on_store!(&*self.database, queries::complete(key, &result.to_string()));
        done.map_err(|e| e.0)
    }

    async fn release(&self, key: &str) -> Result<(), StoreUnavailable> {
        let done: Result<(), Failure> = on_store!(&*self.database, queries::release(key));
        done.map_err(|e| e.0)
    }
}

/// A statement with its tables named for the engine: the SQLite file's tables predate the
/// shared database's `concierge_` prefix, and renaming them would strand a rolled-back binary's
/// records.
fn named(engine: Engine, statement: &str) -> sqlx::AssertSqlSafe<String> {
    let (records, secret) = match engine {
        Engine::Sqlite => ("write_idempotency", "write_secret"),
        Engine::Postgres => ("concierge_write_idempotency", "concierge_write_secret"),
    };
    sqlx::AssertSqlSafe(
        statement
            .replace("{records}", records)
            .replace("{secret}", secret),
    )
}

/// A stored record as a claim: its result when done, running otherwise.
fn claim_of(fingerprint: String, state: &str, result: Option<String>) -> Claim {
    match (state, result) {
        ("done", Some(result)) => Claim::Done {
            fingerprint,
            result: serde_json::from_str(&result).unwrap_or(Value::Null),
        },
        _ => Claim::Running { fingerprint },
    }
}

store_queries! {
    /// The records' queries, once for both engines.
    mod queries {
        pub async fn secret(pool: &Pool, fresh: &[u8; 32]) -> Result<Vec<u8>, Failure> {
            sqlx::query(named(
                ENGINE,
                "INSERT INTO {secret} (id, secret) VALUES (1, $1) ON CONFLICT (id) DO NOTHING",
            ))
            .bind(fresh.to_vec())
            .execute(pool)
            .await?;
            Ok(sqlx::query_scalar(named(ENGINE, "SELECT secret FROM {secret} WHERE id = 1"))
                .fetch_one(pool)
                .await?)
        }

        pub async fn claim(pool: &Pool, asked: &Claiming<'_>, liveness: &Liveness) -> Result<Claim, Failure> {
            let me = liveness.id();
            loop {
                // Records past their window go (judged by the platform's clock, as they were
                // written), and this key's claim if it names no owner and was abandoned.
                sqlx::query(named(
                    ENGINE,
                    "DELETE FROM {records} WHERE expires_at <= $2 \
                     OR (key = $1 AND state = 'running' AND owner IS NULL AND started_at <= $3)",
                ))
                .bind(asked.key)
                .bind(asked.now)
                .bind(asked.now - ABANDONED.as_secs() as i64)
                .execute(pool)
                .await?;
                let inserted = sqlx::query(named(
                    ENGINE,
                    "INSERT INTO {records} (key, fingerprint, state, started_at, expires_at, owner) \
                     VALUES ($1, $2, 'running', $3, $4, $5) ON CONFLICT (key) DO NOTHING",
                ))
                .bind(asked.key)
                .bind(asked.fingerprint)
                .bind(asked.now)
                .bind(asked.now + asked.window.as_secs() as i64)
                .bind(me)
                .execute(pool)
                .await?;
                if inserted.rows_affected() == 1 {
                    return Ok(Claim::Claimed);
                }
                let stored: Option<(String, String, Option<String>, Option<String>)> =
                    sqlx::query_as(named(
                        ENGINE,
                        "SELECT fingerprint, state, result, owner FROM {records} WHERE key = $1",
                    ))
                    .bind(asked.key)
                    .fetch_optional(pool)
                    .await?;
                let Some((fingerprint, state, result, holder)) = stored else {
                    // Released between our insert and select: the key is free again.
                    continue;
                };
                let orphaned = state == "running"
                    && fingerprint == asked.fingerprint
                    && holder.as_deref().is_some_and(|holder| liveness.may_be_dead(holder));
                if !orphaned {
                    return Ok(claim_of(fingerprint, &state, result));
                }
                // Taken over in one statement that names the dead holder: of several callers
                // trying at once, one wins. PostgreSQL checks the holder's death itself.
                let taken = sqlx::query(named(
                    ENGINE,
                    ENGINE.pick(
                        "UPDATE {records} SET owner = $1, started_at = $2 \
                         WHERE key = $3 AND state = 'running' AND owner = $4",
                        "UPDATE {records} SET owner = $1, started_at = $2 \
                         WHERE key = $3 AND state = 'running' AND owner = $4 AND NOT EXISTS \
                         (SELECT 1 FROM concierge_instance i \
                          WHERE i.owner = $4 AND i.alive_until > now())",
                    ),
                ))
                .bind(me)
                .bind(asked.now)
                .bind(asked.key)
                .bind(holder)
                .execute(pool)
                .await?;
                if taken.rows_affected() == 1 {
                    tracing::info!(
                        "idempotency: a write whose process ended before recording it is sent again with its key"
                    );
                    return Ok(Claim::Claimed);
                }
                return Ok(Claim::Running { fingerprint });
            }
        }

        pub async fn peek(pool: &Pool, key: &str, now: i64) -> Result<Option<Claim>, Failure> {
            let stored: Option<(String, String, Option<String>)> = sqlx::query_as(named(
                ENGINE,
                "SELECT fingerprint, state, result FROM {records} WHERE key = $1 AND expires_at > $2",
            ))
            .bind(key)
            .bind(now)
            .fetch_optional(pool)
            .await?;
            Ok(stored.map(|(fingerprint, state, result)| claim_of(fingerprint, &state, result)))
        }

        pub async fn complete(pool: &Pool, key: &str, result: &str) -> Result<(), Failure> {
            sqlx::query(named(
                ENGINE,
                "UPDATE {records} SET state = 'done', result = $1 WHERE key = $2",
            ))
            .bind(result)
            .bind(key)
            .execute(pool)
            .await?;
            Ok(())
        }

        pub async fn release(pool: &Pool, key: &str) -> Result<(), Failure> {
            sqlx::query(named(ENGINE, "DELETE FROM {records} WHERE key = $1 AND state = 'running'"))
                .bind(key)
                .execute(pool)
                .await?;
            Ok(())
        }
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;

    impl SqlIdempotencyStore {
        fn pool(&self) -> &sqlx::SqlitePool {
            match &*self.database {
                StoreDatabase::Sqlite(pool) => pool,
                StoreDatabase::Postgres(_) => unreachable!("a file store"),
            }
        }
    }

    const DAY: Duration = Duration::from_secs(24 * 3600);

    /// Clock jumps against the 24-hour window: set back, a finished key still answers its
    /// result (never claimable again early); set past the window, the key is free for a new
    /// write; set back again, that new write's record stands.
    #[tokio::test]
    async fn a_key_keeps_its_result_when_the_clock_jumps_back_and_frees_after_the_window() {
        let dir = tempfile::tempdir().unwrap();
        let store = SqlIdempotencyStore::open_file(&dir.path().join("writes.sqlite"))
            .await
            .unwrap();
        let now = 1_000_000;
        let hour = 3600;
        assert_eq!(
            store.claim("k", "f", now, DAY).await.unwrap(),
            Claim::Claimed
        );
        store
            .complete("k", &serde_json::json!({"batch": 1}))
            .await
            .unwrap();
        let done = Claim::Done {
            fingerprint: "f".into(),
            result: serde_json::json!({"batch": 1}),
        };
        for jump in [-hour, -48 * hour, 23 * hour] {
            assert_eq!(
                store.claim("k", "f", now + jump, DAY).await.unwrap(),
                done,
                "{jump}"
            );
        }
        let later = now + 25 * hour;
        assert_eq!(
            store.claim("k", "g", later, DAY).await.unwrap(),
            Claim::Claimed
        );
        store
            .complete("k", &serde_json::json!({"batch": 2}))
            .await
            .unwrap();
        assert_eq!(
            store.claim("k", "g", now + hour, DAY).await.unwrap(),
            Claim::Done {
                fingerprint: "g".into(),
                result: serde_json::json!({"batch": 2}),
            },
            "set back after the new write"
        );
    }

    #[tokio::test]
    async fn a_claim_of_a_dead_process_is_taken_over_and_a_live_ones_is_not() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("writes.sqlite");
        let first = SqlIdempotencyStore::open_file(&path).await.unwrap();
        let second = SqlIdempotencyStore::open_file(&path).await.unwrap();
        let now = 1_000_000;

        // Held by a process that runs: the other one waits for its result.
        assert_eq!(
            first.claim("k1", "f", now, DAY).await.unwrap(),
            Claim::Claimed
        );
        assert_eq!(
            second.claim("k1", "f", now + 1, DAY).await.unwrap(),
            Claim::Running {
                fingerprint: "f".into()
            }
        );

        // A process killed mid-write leaves its claim and an unlocked lock file behind.
        let dead = "0123456789abcdef0123456789abcdef";
        let stale = path
            .with_extension("sqlite.owners")
            .join(format!("{dead}.lock"));
        std::fs::write(&stale, b"").unwrap();
        sqlx::query(
            "INSERT INTO write_idempotency (key, fingerprint, state, started_at, expires_at, owner) \
             VALUES ('k2', 'f', 'running', $1, $2, $3)",
        )
        .bind(now)
        .bind(now + 3600)
        .bind(dead)
        .execute(first.pool())
        .await
        .unwrap();
        // Other arguments under that key are still refused as a reuse, not taken over.
        assert_eq!(
            second.claim("k2", "g", now + 1, DAY).await.unwrap(),
            Claim::Running {
                fingerprint: "f".into()
            }
        );
        assert_eq!(
            second.claim("k2", "f", now + 1, DAY).await.unwrap(),
            Claim::Claimed
        );
        assert!(!stale.exists(), "the dead process's file is cleaned up");
        // Now the second process holds it, and it is alive.
        assert_eq!(
            first.claim("k2", "f", now + 2, DAY).await.unwrap(),
            Claim::Running {
                fingerprint: "f".into()
            }
        );

        // A process that stops cleanly leaves no file; its claims are free at once too.
        assert_eq!(
            first.claim("k3", "f", now, DAY).await.unwrap(),
            Claim::Claimed
        );
        drop(first);
        assert_eq!(
            second.claim("k3", "f", now + 1, DAY).await.unwrap(),
            Claim::Claimed
        );

        // A claim from before owners were recorded keeps the old rule: free after 10 minutes.
        sqlx::query(
            "INSERT INTO write_idempotency (key, fingerprint, state, started_at, expires_at) \
             VALUES ('k4', 'f', 'running', $1, $2)",
        )
        .bind(now)
        .bind(now + 3600)
        .execute(second.pool())
        .await
        .unwrap();
        assert!(matches!(
            second.claim("k4", "f", now + 60, DAY).await.unwrap(),
            Claim::Running { .. }
        ));
        let later = now + ABANDONED.as_secs() as i64;
        assert_eq!(
            second.claim("k4", "f", later, DAY).await.unwrap(),
            Claim::Claimed
        );
    }
}
