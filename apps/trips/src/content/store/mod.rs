//! Where the mirror lives. [`ContentStore`] is the seam; [`SqliteStore`] is the embedded
//! default (one file under `var/`, WAL, so `serve` reads while `concierge sync` writes);
//! [`PgContentStore`] (`postgres.rs`) is the one several instances share, with the deployment's
//! one sync run locked in the database.

mod postgres;

pub use postgres::PgContentStore;

use std::path::Path;

use async_trait::async_trait;
use chrono::{DateTime, Utc};
use concierge_core::sqlite::SqliteFile;
use serde::{Deserialize, Serialize};
use sqlx::Row;
use sqlx::sqlite::SqlitePool;

use super::document::{Document, StoredRecord};
use super::feed::{DocKey, RECORD_TYPES};

/// `content_sync_state`: what outlives a run.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct SyncState {
    /// TYPO3's kill switch: no run before this.
    pub paused_until: Option<DateTime<Utc>>,
    /// When a valid manifest was last read (`check-freshness`).
    pub last_good_manifest_at: Option<DateTime<Utc>>,
    /// Bumped whenever documents change, so readers know to rebuild their index.
    pub generation: u64,
    /// The generation a complete run that changed something ended on (readers report on it
    /// once: the trip catalog logs the codes it cannot place).
    #[serde(default)]
    pub completed_generation: Option<u64>,
    /// When the last run began, whichever instance ran it: a scheduled run finds its slot
    /// taken and does nothing, so N instances' schedules make one run per slot.
    #[serde(default)]
    pub last_run_started_at: Option<DateTime<Utc>>,
    /// When the last `--refresh` run began.
    #[serde(default)]
    pub last_refresh_started_at: Option<DateTime<Utc>>,
}

/// The deployment's one sync run, as a shared store locks it.
pub enum RunLock {
    /// This run holds it until it is released (or, should the run be dropped half-way, until
    /// the value is dropped).
    Held(Box<dyn HeldRun>),
    /// Another run (on any instance) holds it.
    Busy,
}

/// A run lock this run holds.
#[async_trait]
pub trait HeldRun: Send {
    /// Lets go now, so a run right after this one finds the lock free (a dropped connection
    /// lets go only when the database notices it is gone).
    async fn release(self: Box<Self>);
}

#[derive(Debug, thiserror::Error)]
#[error("content store: {0}")]
pub struct StoreError(String);

impl StoreError {
    pub fn new(message: impl Into<String>) -> Self {
        Self(message.into())
    }
}

impl From<sqlx::Error> for StoreError {
    fn from(error: sqlx::Error) -> Self {
        Self(error.to_string())
    }
}

impl From<serde_json::Error> for StoreError {
    fn from(error: serde_json::Error) -> Self {
        Self(error.to_string())
    }
}

#[async_trait]
pub trait ContentStore: Send + Sync {
    async fn documents(&self) -> Result<Vec<Document>, StoreError>;
    /// The documents of the record types ([`RECORD_TYPES`]) without their texts (`page` none,
    /// `body_md` empty): what the trip catalog joins, without holding every page's text.
    async fn records(&self) -> Result<Vec<Document>, StoreError> {
        let mut docs = self.documents().await?;
        docs.retain(|doc| RECORD_TYPES.contains(&doc.key.kind.as_str()));
        for doc in &mut docs {
            doc.page = None;
            doc.body_md = String::new();
        }
        Ok(docs)
    }
    /// The unmerged document a hit links to.
    async fn by_url(&self, url: &str) -> Result<Option<Document>, StoreError>;
    async fn put(&self, doc: &Document) -> Result<(), StoreError>;
    async fn delete(&self, key: &DocKey) -> Result<(), StoreError>;
    async fn state(&self) -> Result<SyncState, StoreError>;
    async fn save_state(&self, state: &SyncState) -> Result<(), StoreError>;
    /// Takes the run lock where the store keeps it (a database several hosts share); `None`
    /// for a store on one host, where the syncer locks a file next to it instead.
    async fn run_lock(&self) -> Result<Option<RunLock>, StoreError> {
        Ok(None)
    }

    /// A stamp that moves whenever a write to the store may have happened, read without a query:
    /// a reader that finds it where it was need not read [`state`](Self::state) again. `None`: no
    /// such stamp; read the state.
    fn change_stamp(&self) -> Option<ChangeStamp> {
        None
    }
}

/// The size and modification time of each of a store's files.
pub type ChangeStamp = Vec<(u64, Option<std::time::SystemTime>)>;

const SCHEMA: &str = r#"
CREATE TABLE IF NOT EXISTS content_document (
    type TEXT NOT NULL,
    uid INTEGER NOT NULL,
    language TEXT NOT NULL,
    public_url TEXT,
    merged INTEGER NOT NULL,
    doc TEXT NOT NULL,
    record TEXT,
    PRIMARY KEY (type, uid, language)
);
CREATE INDEX IF NOT EXISTS content_document_url ON content_document (public_url);
CREATE TABLE IF NOT EXISTS content_sync_state (
    id INTEGER PRIMARY KEY CHECK (id = 1),
    state TEXT NOT NULL
);
"#;

pub struct SqliteStore {
    pool: SqlitePool,
    /// The database and its write-ahead log: every commit, from any process, changes the log
    /// (or, after a checkpoint, the database) and so their sizes or times.
    files: [std::path::PathBuf; 2],
}

impl SqliteStore {
    pub async fn open(path: &Path) -> Result<Self, StoreError> {
        let pool = SqliteFile::new(path)
            .open(&[SCHEMA])
            .await
            .map_err(|e| StoreError(e.to_string()))?;
        add_record_column(&pool).await?;
        let mut wal = path.as_os_str().to_owned();
        wal.push("-wal");
        Ok(Self {
            pool,
            files: [path.to_owned(), wal.into()],
        })
    }
}

/// A mirror from before `record` existed gets the column, filled from its documents once, and
/// every mirror the triggers that keep it current ([`RECORD_TRIGGERS`]): the catalog reads
/// records on every start and every mirror change, and without the column it would read (and
/// check as UTF-8) every record's page text too.
async fn add_record_column(pool: &SqlitePool) -> Result<(), StoreError> {
    let has_it: bool = sqlx::query_scalar(
        "SELECT COUNT(*) > 0 FROM pragma_table_info('content_document') WHERE name = 'record'",
    )
    .fetch_one(pool)
    .await?;
    if !has_it {
        let mut tx = pool.begin().await?;
        match sqlx::query("ALTER TABLE content_document ADD COLUMN record TEXT")
            .execute(&mut *tx)
            .await
        {
            Ok(_) => {
                sqlx::query(
                    "UPDATE content_document SET record = json_remove(doc, '$.page', '$.body_md') \
                     WHERE type IN (SELECT value FROM json_each(?))",
                )
                .bind(serde_json::to_string(&RECORD_TYPES)?)
                .execute(&mut *tx)
                .await?;
                tx.commit().await?;
            }
            // Another process (a sync beside the server) added it first.
            Err(error) if error.to_string().contains("duplicate column") => {}
            Err(error) => return Err(error.into()),
        }
    }
    for trigger in RECORD_TRIGGERS {
        sqlx::query(trigger).execute(pool).await?;
    }
    Ok(())
}

/// The database derives `record` from `doc` on every write of a record type's document, so
/// every writer keeps it current, also a binary from before the column (a rollback, an old
/// `concierge sync` beside the server) that writes `doc` alone. The types are [`RECORD_TYPES`].
const RECORD_TRIGGERS: [&str; 2] = [
    "CREATE TRIGGER IF NOT EXISTS content_document_record_inserted \
     AFTER INSERT ON content_document \
     WHEN NEW.type IN ('product', 'hotel', 'city', 'region', 'country', 'concept') \
     BEGIN UPDATE content_document SET record = json_remove(NEW.doc, '$.page', '$.body_md') \
     WHERE rowid = NEW.rowid; END",
    "CREATE TRIGGER IF NOT EXISTS content_document_record_updated \
     AFTER UPDATE OF doc ON content_document \
     WHEN NEW.type IN ('product', 'hotel', 'city', 'region', 'country', 'concept') \
     BEGIN UPDATE content_document SET record = json_remove(NEW.doc, '$.page', '$.body_md') \
     WHERE rowid = NEW.rowid; END",
];

#[async_trait]
impl ContentStore for SqliteStore {
    fn change_stamp(&self) -> Option<ChangeStamp> {
        Some(
            self.files
                .iter()
                .map(|file| match std::fs::metadata(file) {
                    Ok(meta) => (meta.len(), meta.modified().ok()),
                    Err(_) => (0, None),
                })
                .collect(),
        )
    }

    async fn documents(&self) -> Result<Vec<Document>, StoreError> {
        let rows = sqlx::query("SELECT doc FROM content_document ORDER BY type, uid, language")
            .fetch_all(&self.pool)
            .await?;
        rows.iter()
            .map(|row| Ok(serde_json::from_str(row.get::<&str, _>(0))?))
            .collect()
    }

    async fn records(&self) -> Result<Vec<Document>, StoreError> {
        let kinds = serde_json::to_string(&RECORD_TYPES)?;
        let rows = sqlx::query(
            "SELECT COALESCE(record, doc) FROM content_document \
             WHERE type IN (SELECT value FROM json_each(?)) ORDER BY type, uid, language",
        )
        .bind(kinds)
        .fetch_all(&self.pool)
        .await?;
        // `record` is the document without page and body, derived by the database on every
        // write ([`RECORD_TRIGGERS`]); a `doc` read instead has them skipped while parsing.
        rows.iter()
            .map(|row| {
                let stored: StoredRecord = serde_json::from_str(row.get::<&str, _>(0))?;
                Ok(stored.into_record())
            })
            .collect()
    }

    async fn by_url(&self, url: &str) -> Result<Option<Document>, StoreError> {
        let row = sqlx::query(
            "SELECT doc FROM content_document WHERE public_url = ? AND merged = 0 \
             ORDER BY type = 'page', type = 'blog', uid LIMIT 1",
        )
        .bind(url)
        .fetch_optional(&self.pool)
        .await?;
        row.map(|row| Ok(serde_json::from_str(row.get::<&str, _>(0))?))
            .transpose()
    }

    async fn put(&self, doc: &Document) -> Result<(), StoreError> {
        sqlx::query(
            "INSERT INTO content_document (type, uid, language, public_url, merged, doc) \
             VALUES (?, ?, ?, ?, ?, ?) \
             ON CONFLICT (type, uid, language) DO UPDATE SET \
             public_url = excluded.public_url, merged = excluded.merged, doc = excluded.doc",
        )
        .bind(&doc.key.kind)
        .bind(doc.key.uid as i64)
        .bind(&doc.key.language)
        .bind(&doc.public_url)
        .bind(doc.merged_into.is_some())
        .bind(serde_json::to_string(doc)?)
        .execute(&self.pool)
        .await?;
        Ok(())
    }

    async fn delete(&self, key: &DocKey) -> Result<(), StoreError> {
        sqlx::query("DELETE FROM content_document WHERE type = ? AND uid = ? AND language = ?")
            .bind(&key.kind)
            .bind(key.uid as i64)
            .bind(&key.language)
            .execute(&self.pool)
            .await?;
        Ok(())
    }

    async fn state(&self) -> Result<SyncState, StoreError> {
        let row = sqlx::query("SELECT state FROM content_sync_state WHERE id = 1")
            .fetch_optional(&self.pool)
            .await?;
        match row {
            Some(row) => Ok(serde_json::from_str(row.get::<&str, _>(0))?),
            None => Ok(SyncState::default()),
        }
    }

    async fn save_state(&self, state: &SyncState) -> Result<(), StoreError> {
        sqlx::query(
            "INSERT INTO content_sync_state (id, state) VALUES (1, ?) \
             ON CONFLICT (id) DO UPDATE SET state = excluded.state",
        )
        .bind(serde_json::to_string(state)?)
        .execute(&self.pool)
        .await?;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_record_triggers_name_every_record_type() {
        for trigger in RECORD_TRIGGERS {
            let (_, list) = trigger.split_once("NEW.type IN (").expect("the list");
            let (list, _) = list.split_once(')').expect("its end");
            let listed: Vec<&str> = list.split(", ").map(|t| t.trim_matches('\'')).collect();
            assert_eq!(listed, RECORD_TYPES);
        }
    }
}
