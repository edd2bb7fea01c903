//! The content mirror in the deployment's shared PostgreSQL: every instance searches the same
//! documents, and one sync run serves the whole deployment. The run lock is a session-level
//! advisory lock on a connection the run keeps for itself: PostgreSQL lets go of it when that
//! connection ends, however the instance holding it ends (a kill -9 included), so a dead
//! instance never blocks the sync.

use std::sync::Arc;

use async_trait::async_trait;
use concierge_core::postgres::{Migrated, Schema, SharedDatabase};
use sqlx::Connection;
use sqlx::Row;
use sqlx::postgres::PgPool;

use super::{ContentStore, Document, HeldRun, RunLock, StoreError, SyncState};
use crate::content::feed::{DocKey, RECORD_TYPES};

static SCHEMA: Schema = Schema {
    table: "concierge_trips_migrations",
    migrations: &[(
        1,
        "content mirror: documents, sync state",
        include_str!("../../../migrations/0001_mirror.sql"),
    )],
};

/// The advisory lock key of the content sync ("ctsync" in ASCII).
const RUN_LOCK: i64 = 0x63_74_73_79_6e_63;

pub struct PgContentStore {
    database: Migrated,
}

impl PgContentStore {
    /// The store on `url`; connected (and its tables migrated) on first use.
    pub fn new(url: &str) -> Result<Self, StoreError> {
        let shared = SharedDatabase::new(url).map_err(StoreError::new)?;
        Ok(Self {
            database: Migrated::new(Arc::new(shared), &SCHEMA),
        })
    }

    async fn pool(&self) -> Result<&PgPool, StoreError> {
        self.database.pool().await.map_err(|e| StoreError::new(e.0))
    }
}

/// The run lock, held by the session of this connection.
struct AdvisoryLock(sqlx::PgConnection);

#[async_trait]
impl HeldRun for AdvisoryLock {
    async fn release(self: Box<Self>) {
        let mut connection = self.0;
        let unlocked = sqlx::query("SELECT pg_advisory_unlock($1)")
            .bind(RUN_LOCK)
            .execute(&mut connection)
            .await;
        if let Err(error) = unlocked {
            // Closing the session lets go of the lock all the same.
            tracing::debug!(%error, "content sync: run lock not released by query");
        }
        let _ = connection.close().await;
    }
}

#[async_trait]
impl ContentStore for PgContentStore {
    async fn documents(&self) -> Result<Vec<Document>, StoreError> {
        let rows = sqlx::query("SELECT doc FROM content_document ORDER BY type, uid, language")
            .fetch_all(self.pool().await?)
            .await?;
        rows.iter()
            .map(|row| Ok(serde_json::from_str(row.get::<&str, _>(0))?))
            .collect()
    }

    async fn records(&self) -> Result<Vec<Document>, StoreError> {
        let kinds: Vec<&str> = RECORD_TYPES.to_vec();
        let rows = sqlx::query(
            "SELECT ((doc::jsonb - 'page') || '{\"body_md\": \"\"}')::text FROM content_document \
             WHERE type = ANY($1) ORDER BY type, uid, language",
        )
        .bind(kinds)
        .fetch_all(self.pool().await?)
        .await?;
        rows.iter()
            .map(|row| Ok(serde_json::from_str(row.get::<&str, _>(0))?))
            .collect()
    }

    async fn by_url(&self, url: &str) -> Result<Option<Document>, StoreError> {
        let row = sqlx::query(
            "SELECT doc FROM content_document WHERE public_url = $1 AND NOT merged \
             ORDER BY type = 'page', type = 'blog', uid LIMIT 1",
        )
        .bind(url)
        .fetch_optional(self.pool().await?)
        .await?;
        row.map(|row| Ok(serde_json::from_str(row.get::<&str, _>(0))?))
            .transpose()
    }

    async fn put(&self, doc: &Document) -> Result<(), StoreError> {
        sqlx::query(
            "INSERT INTO content_document (type, uid, language, public_url, merged, doc) \
             VALUES ($1, $2, $3, $4, $5, $6) \
             ON CONFLICT (type, uid, language) DO UPDATE SET \
             public_url = EXCLUDED.public_url, merged = EXCLUDED.merged, doc = EXCLUDED.doc",
        )
        .bind(&doc.key.kind)
        .bind(doc.key.uid as i64)
        .bind(&doc.key.language)
        .bind(&doc.public_url)
        .bind(doc.merged_into.is_some())
        .bind(serde_json::to_string(doc)?)
        .execute(self.pool().await?)
        .await?;
        Ok(())
    }

    async fn delete(&self, key: &DocKey) -> Result<(), StoreError> {
        sqlx::query("DELETE FROM content_document WHERE type = $1 AND uid = $2 AND language = $3")
            .bind(&key.kind)
            .bind(key.uid as i64)
            .bind(&key.language)
            .execute(self.pool().await?)
            .await?;
        Ok(())
    }

    async fn state(&self) -> Result<SyncState, StoreError> {
        let row = sqlx::query("SELECT state FROM content_sync_state WHERE id = 1")
            .fetch_optional(self.pool().await?)
            .await?;
        match row {
            Some(row) => Ok(serde_json::from_str(row.get::<&str, _>(0))?),
            None => Ok(SyncState::default()),
        }
    }

    async fn save_state(&self, state: &SyncState) -> Result<(), StoreError> {
        sqlx::query(
            "INSERT INTO content_sync_state (id, state) VALUES (1, $1) \
             ON CONFLICT (id) DO UPDATE SET state = EXCLUDED.state",
        )
        .bind(serde_json::to_string(state)?)
        .execute(self.pool().await?)
        .await?;
        Ok(())
    }

    async fn run_lock(&self) -> Result<Option<RunLock>, StoreError> {
        let pool = self.pool().await?;
        // A connection of the run's own, out of the pool: returned to it, it would keep the
        // lock for whoever used it next. Dropped, it closes, and the lock goes with it.
        let mut connection = pool.acquire().await?.detach();
        let held: bool = sqlx::query_scalar("SELECT pg_try_advisory_lock($1)")
            .bind(RUN_LOCK)
            .fetch_one(&mut connection)
            .await?;
        if held {
            Ok(Some(RunLock::Held(Box::new(AdvisoryLock(connection)))))
        } else {
            let _ = connection.close().await;
            Ok(Some(RunLock::Busy))
        }
    }
}
