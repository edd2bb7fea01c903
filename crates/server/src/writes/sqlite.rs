//! Idempotency records in a SQLite file (the default home, under `var/`), shared by every
//! endpoint of a deployment and every process on this host. A record is claimed before a write runs and completed with its
//! result, so a replay — from the same process, another instance on the same file, or after a
//! restart — answers from it instead of writing again.
//!
//! A claim names the process that holds it (its owner id). Each process holds an exclusive lock
//! on a file of its own, `<database>.owners/<owner>.lock`, for as long as it runs; the operating
//! system lets go of it when the process ends, however it ends (a `kill -9` included). So a claim
//! whose owner's file can be locked — or is gone — belongs to a process that is dead, and the
//! write it started may have reached the backend or not: nobody will ever record its result.
//! Such a claim is taken over at once by the next call with that key, which sends the write again
//! with the same key; the backend's own duplicate guard (Mappy's `Idempotency-Key`,
//! docs/contracts/mappy-api.md) answers its first answer instead of writing twice. Without this a
//! replay after a crash answered `write_in_progress` until the claim counted as abandoned (10
//! minutes). The lock file works because everything sharing this SQLite file runs on one host (SQLite
//! is not shared over a network); the PostgreSQL store (`postgres.rs`) answers the same question
//! with an owner row that expires unless its process keeps refreshing it.

use std::fs::File;
use std::path::{Path, PathBuf};
use std::time::Duration;

use concierge_core::idempotency::{ABANDONED, Claim, IdempotencyStore, StoreUnavailable};
use concierge_core::sqlite::{self, SqliteFile};
use serde_json::Value;
use sqlx::Row;
use sqlx::sqlite::SqlitePool;

const SCHEMA: &[&str] = &[
    "CREATE TABLE IF NOT EXISTS write_idempotency (key TEXT PRIMARY KEY, fingerprint TEXT NOT NULL, \
     state TEXT NOT NULL, result TEXT, started_at INTEGER NOT NULL, expires_at INTEGER NOT NULL, \
     owner TEXT)",
    "CREATE INDEX IF NOT EXISTS write_idempotency_expiry ON write_idempotency (expires_at)",
    "CREATE TABLE IF NOT EXISTS write_secret (id INTEGER PRIMARY KEY CHECK (id = 1), secret BLOB NOT NULL)",
];

/// This process as an owner of claims: its id and the lock that says it is alive.
struct Owner {
    id: String,
    dir: PathBuf,
    /// Held (locked) until the store is dropped or the process ends.
    _lock: File,
}

impl Owner {
    fn register(database: &Path) -> Result<Self, String> {
        let mut dir = database.as_os_str().to_owned();
        dir.push(".owners");
        let dir = PathBuf::from(dir);
        std::fs::create_dir_all(&dir).map_err(|e| format!("{}: {e}", dir.display()))?;
        let id = uuid::Uuid::new_v4().simple().to_string();
        // Locked under a name no one checks, then renamed: a file under its final name is
        // always locked, so another process never takes a starting one for a dead one.
        let path = dir.join(format!("{id}.lock"));
        let starting = dir.join(format!("{id}.starting"));
        let named = |e: std::io::Error| format!("{}: {e}", path.display());
        let lock = File::create(&starting).map_err(named)?;
        lock.try_lock().map_err(|e| named(e.into()))?;
        std::fs::rename(&starting, &path).map_err(named)?;
        let owner = Self {
            id,
            dir,
            _lock: lock,
        };
        owner.forget_the_dead();
        Ok(owner)
    }

    fn path(&self, id: &str) -> PathBuf {
        self.dir.join(format!("{id}.lock"))
    }

    /// Whether the process that wrote claims as `id` still runs. Ids come from our own table;
    /// anything that is not one of ours counts as alive, so it is never taken over by mistake.
    fn is_alive(&self, id: &str) -> bool {
        if id == self.id {
            return true;
        }
        if id.is_empty() || !id.chars().all(|c| c.is_ascii_hexdigit()) {
            return true;
        }
        let path = self.path(id);
        let file = match File::open(&path) {
            Ok(file) => file,
            Err(error) if error.kind() == std::io::ErrorKind::NotFound => return false,
            Err(_) => return true,
        };
        match file.try_lock_shared() {
            Ok(()) => {
                // Nobody holds it: its process is gone. Its file goes too.
                let _ = std::fs::remove_file(&path);
                false
            }
            Err(_) => true,
        }
    }

    /// Removes the lock files of processes that ended without removing their own (crashes), so
    /// the directory does not grow with every restart.
    fn forget_the_dead(&self) {
        let Ok(entries) = std::fs::read_dir(&self.dir) else {
            return;
        };
        for entry in entries.flatten() {
            let name = entry.file_name();
            if let Some(id) = name.to_str().and_then(|n| n.strip_suffix(".lock")) {
                self.is_alive(id);
            }
        }
    }
}

impl Drop for Owner {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(self.path(&self.id));
    }
}

pub struct SqliteIdempotencyStore {
    pool: SqlitePool,
    owner: Owner,
}

impl SqliteIdempotencyStore {
    pub async fn open(path: &Path) -> Result<Self, String> {
        let pool = SqliteFile::new(path)
            .open(SCHEMA)
            .await
            .map_err(|e| e.to_string())?;
        // Tables made before claims named their owner.
        sqlite::add_column(&pool, "write_idempotency", "owner", "TEXT")
            .await
            .map_err(|e| format!("{}: {e}", path.display()))?;
        let owner = Owner::register(path)?;
        Ok(Self { pool, owner })
    }

    async fn secret_sql(&self) -> Result<[u8; 32], String> {
        let fresh = super::fresh_secret();
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

    async fn claim_sql(
        &self,
        key: &str,
        fingerprint: &str,
        now: i64,
        window: Duration,
    ) -> Result<Claim, sqlx::Error> {
        sqlx::query(
            "DELETE FROM write_idempotency WHERE expires_at <= ? \
             OR (key = ? AND state = 'running' AND owner IS NULL AND started_at <= ?)",
        )
        .bind(now)
        .bind(key)
        .bind(now - ABANDONED.as_secs() as i64)
        .execute(&self.pool)
        .await?;
        let inserted = sqlx::query(
            "INSERT INTO write_idempotency (key, fingerprint, state, started_at, expires_at, owner) \
             VALUES (?, ?, 'running', ?, ?, ?) ON CONFLICT (key) DO NOTHING",
        )
        .bind(key)
        .bind(fingerprint)
        .bind(now)
        .bind(now + window.as_secs() as i64)
        .bind(&self.owner.id)
        .execute(&self.pool)
        .await?;
        if inserted.rows_affected() == 1 {
            return Ok(Claim::Claimed);
        }
        let row = sqlx::query(
            "SELECT fingerprint, state, result, owner FROM write_idempotency WHERE key = ?",
        )
        .bind(key)
        .fetch_optional(&self.pool)
        .await?;
        let Some(row) = row else {
            // Released between our insert and select: the key is free again.
            return Box::pin(self.claim_sql(key, fingerprint, now, window)).await;
        };
        let stored: String = row.get(0);
        let state: String = row.get(1);
        let result: Option<String> = row.get(2);
        let owner: Option<String> = row.get(3);
        match (state.as_str(), result, owner) {
            ("done", Some(result), _) => Ok(Claim::Done {
                fingerprint: stored,
                result: serde_json::from_str(&result).unwrap_or(Value::Null),
            }),
            ("running", _, Some(owner))
                if stored == fingerprint && !self.owner.is_alive(&owner) =>
            {
                // Its process died mid-write. Take the claim over (only one caller can: the
                // update names the dead owner) and let the caller send the write again.
                let taken = sqlx::query(
                    "UPDATE write_idempotency SET owner = ?, started_at = ? \
                     WHERE key = ? AND state = 'running' AND owner = ?",
                )
                .bind(&self.owner.id)
                .bind(now)
                .bind(key)
                .bind(&owner)
                .execute(&self.pool)
                .await?;
                if taken.rows_affected() == 1 {
                    tracing::info!(
                        "idempotency: a write whose process ended before recording it is sent again with its key"
                    );
                    Ok(Claim::Claimed)
                } else {
                    Box::pin(self.claim_sql(key, fingerprint, now, window)).await
                }
            }
            _ => Ok(Claim::Running {
                fingerprint: stored,
            }),
        }
    }

    async fn peek_sql(&self, key: &str, now: i64) -> Result<Option<Claim>, sqlx::Error> {
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

    async fn complete_sql(&self, key: &str, result: &Value) -> Result<(), sqlx::Error> {
        sqlx::query("UPDATE write_idempotency SET state = 'done', result = ? WHERE key = ?")
            .bind(result.to_string())
            .bind(key)
            .execute(&self.pool)
            .await
            .map(|_| ())
    }

    async fn release_sql(&self, key: &str) -> Result<(), sqlx::Error> {
        sqlx::query("DELETE FROM write_idempotency WHERE key = ? AND state = 'running'")
            .bind(key)
            .execute(&self.pool)
            .await
            .map(|_| ())
    }
}

/// A SQLite failure as the trait reports it (a busy or broken file: the write is refused as
/// retryable, and the detail goes to the log).
fn down(error: sqlx::Error) -> StoreUnavailable {
    StoreUnavailable(format!("idempotency store (SQLite): {error}"))
}

#[async_trait::async_trait]
impl IdempotencyStore for SqliteIdempotencyStore {
    async fn secret(&self) -> Result<[u8; 32], StoreUnavailable> {
        self.secret_sql().await.map_err(StoreUnavailable)
    }

    async fn claim(
        &self,
        key: &str,
        fingerprint: &str,
        now: i64,
        window: Duration,
    ) -> Result<Claim, StoreUnavailable> {
        self.claim_sql(key, fingerprint, now, window)
            .await
            .map_err(down)
    }

    async fn peek(&self, key: &str, now: i64) -> Result<Option<Claim>, StoreUnavailable> {
        self.peek_sql(key, now).await.map_err(down)
    }

    async fn complete(&self, key: &str, result: &Value) -> Result<(), StoreUnavailable> {
        self.complete_sql(key, result).await.map_err(down)
    }

    async fn release(&self, key: &str) -> Result<(), StoreUnavailable> {
        self.release_sql(key).await.map_err(down)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const DAY: Duration = Duration::from_secs(24 * 3600);

    /// Clock jumps against the 24-hour window: set back, a finished key still answers its
    /// result (never claimable again early); set past the window, the key is free for a new
    /// write; set back again, that new write's record stands.
    #[tokio::test]
    async fn a_key_keeps_its_result_when_the_clock_jumps_back_and_frees_after_the_window() {
        let dir = tempfile::tempdir().unwrap();
        let store = SqliteIdempotencyStore::open(&dir.path().join("writes.sqlite"))
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
        let first = SqliteIdempotencyStore::open(&path).await.unwrap();
        let second = SqliteIdempotencyStore::open(&path).await.unwrap();
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
             VALUES ('k2', 'f', 'running', ?, ?, ?)",
        )
        .bind(now)
        .bind(now + 3600)
        .bind(dead)
        .execute(&first.pool)
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
             VALUES ('k4', 'f', 'running', ?, ?)",
        )
        .bind(now)
        .bind(now + 3600)
        .execute(&second.pool)
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
