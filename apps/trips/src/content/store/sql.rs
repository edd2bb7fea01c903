//! The mirror on either engine ([`concierge_core::store`]): a SQLite file, or the shared
//! PostgreSQL where every instance searches the same documents and one sync run serves the
//! whole deployment.
//!
//! What only SQLite has: a `record` column the database derives from `doc` on every write
//! ([`RECORD_TRIGGERS`]), and a change stamp read from the file's size and time. PostgreSQL
//! strips a record's texts in the query instead, and locks the sync run (`run_lock.rs`).

use std::path::{Path, PathBuf};

use async_trait::async_trait;
use concierge_core::postgres::Schema;
use concierge_core::sqlite::SqliteFile;
use concierge_core::store::StoreDatabase;
use concierge_core::{on_store, store_queries};
use sqlx::sqlite::SqlitePool;

use super::{ChangeStamp, ContentStore, RunLock, StoreError, SyncState};
use crate::content::document::{Document, StoredRecord};
use crate::content::feed::{DocKey, RECORD_TYPES};

const SQLITE_SCHEMA: &str = r#"
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

static POSTGRES_SCHEMA: Schema = Schema {
    table: "concierge_trips_migrations",
    migrations: &[(
        1,
        "content mirror: documents, sync state",
        include_str!("../../../migrations/0001_mirror.sql"),
    )],
};

pub struct SqlStore {
    database: StoreDatabase,
    /// A SQLite store's database and write-ahead log: every commit, from any process, changes
    /// the log (or, after a checkpoint, the database) and so their sizes or times.
    files: Option<[PathBuf; 2]>,
}

impl SqlStore {
    /// The mirror in a SQLite file, created (and brought up to date) here.
    pub async fn open(path: &Path) -> Result<Self, StoreError> {
        let pool = SqliteFile::new(path)
            .open(&[SQLITE_SCHEMA])
            .await
            .map_err(|e| StoreError::new(e.to_string()))?;
        add_record_column(&pool).await?;
        let mut wal = path.as_os_str().to_owned();
        wal.push("-wal");
        Ok(Self {
            database: StoreDatabase::Sqlite(pool),
            files: Some([path.to_owned(), wal.into()]),
        })
    }

    /// The mirror in the PostgreSQL at `url`; connected (and its tables migrated) on first use.
    pub fn shared(url: &str) -> Result<Self, StoreError> {
        Ok(Self {
            database: StoreDatabase::postgres_url(url, &POSTGRES_SCHEMA)
                .map_err(StoreError::new)?,
            files: None,
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
pub(super) const RECORD_TRIGGERS: [&str; 2] = [
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
impl ContentStore for SqlStore {
    fn change_stamp(&self) -> Option<ChangeStamp> {
        let files = self.files.as_ref()?;
        Some(
            files
                .iter()
                .map(|file| match std::fs::metadata(file) {
                    Ok(meta) => (meta.len(), meta.modified().ok()),
                    Err(_) => (0, None),
                })
                .collect(),
        )
    }

    async fn documents(&self) -> Result<Vec<Document>, StoreError> {
        on_store!(&self.database, queries::documents())
    }

    async fn records(&self) -> Result<Vec<Document>, StoreError> {
        on_store!(&self.database, queries::records())
    }

    async fn by_url(&self, url: &str) -> Result<Option<Document>, StoreError> {
        on_store!(&self.database, queries::by_url(url))
    }

    async fn put(&self, doc: &Document) -> Result<(), StoreError> {
        on_store!(&self.database, queries::put(doc))
    }

    async fn delete(&self, key: &DocKey) -> Result<(), StoreError> {
        on_store!(&self.database, queries::delete(key))
    }

    async fn state(&self) -> Result<SyncState, StoreError> {
        on_store!(&self.database, queries::state())
    }

    async fn save_state(&self, state: &SyncState) -> Result<(), StoreError> {
        on_store!(&self.database, queries::save_state(state))
    }

    /// Several instances share a PostgreSQL mirror and lock its run there; one host locks a
    /// file next to its SQLite mirror instead.
    async fn run_lock(&self) -> Result<Option<RunLock>, StoreError> {
        match &self.database {
            StoreDatabase::Postgres(database) => {
                Ok(Some(super::run_lock::take(database.pool().await?).await?))
            }
            StoreDatabase::Sqlite(_) => Ok(None),
        }
    }
}

store_queries! {
    /// The mirror's queries, once for both engines.
    mod queries {
        fn documents_of(texts: Vec<String>) -> Result<Vec<Document>, StoreError> {
            texts.iter().map(|text| Ok(serde_json::from_str(text)?)).collect()
        }

        pub async fn documents(pool: &Pool) -> Result<Vec<Document>, StoreError> {
            let texts: Vec<String> =
                sqlx::query_scalar("SELECT doc FROM content_document ORDER BY type, uid, language")
                    .fetch_all(pool)
                    .await?;
            documents_of(texts)
        }

        /// The record types' documents without page and body: on SQLite the `record` column
        /// the database keeps ([`RECORD_TRIGGERS`]), on PostgreSQL stripped in the query; a
        /// `doc` read instead has them skipped while parsing ([`StoredRecord`]).
        pub async fn records(pool: &Pool) -> Result<Vec<Document>, StoreError> {
            let texts: Vec<String> = sqlx::query_scalar(ENGINE.pick(
                "SELECT COALESCE(record, doc) FROM content_document \
                 WHERE type IN (SELECT value FROM json_each($1)) ORDER BY type, uid, language",
                "SELECT ((doc::jsonb - 'page') || '{\"body_md\": \"\"}')::text FROM content_document \
                 WHERE type IN (SELECT jsonb_array_elements_text($1::jsonb)) \
                 ORDER BY type, uid, language",
            ))
            .bind(serde_json::to_string(&RECORD_TYPES)?)
            .fetch_all(pool)
            .await?;
            texts
                .iter()
                .map(|text| Ok(serde_json::from_str::<StoredRecord>(text)?.into_record()))
                .collect()
        }

        pub async fn by_url(pool: &Pool, url: &str) -> Result<Option<Document>, StoreError> {
            let text: Option<String> = sqlx::query_scalar(
                "SELECT doc FROM content_document WHERE public_url = $1 AND NOT merged \
                 ORDER BY type = 'page', type = 'blog', uid LIMIT 1",
            )
            .bind(url)
            .fetch_optional(pool)
            .await?;
            Ok(documents_of(text.into_iter().collect())?.pop())
        }

        pub async fn put(pool: &Pool, doc: &Document) -> Result<(), StoreError> {
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
            .execute(pool)
            .await?;
            Ok(())
        }

        pub async fn delete(pool: &Pool, key: &DocKey) -> Result<(), StoreError> {
            sqlx::query("DELETE FROM content_document WHERE type = $1 AND uid = $2 AND language = $3")
                .bind(&key.kind)
                .bind(key.uid as i64)
                .bind(&key.language)
                .execute(pool)
                .await?;
            Ok(())
        }

        pub async fn state(pool: &Pool) -> Result<SyncState, StoreError> {
            let text: Option<String> =
                sqlx::query_scalar("SELECT state FROM content_sync_state WHERE id = 1")
                    .fetch_optional(pool)
                    .await?;
            match text {
                Some(text) => Ok(serde_json::from_str(&text)?),
                None => Ok(SyncState::default()),
            }
        }

        pub async fn save_state(pool: &Pool, state: &SyncState) -> Result<(), StoreError> {
            sqlx::query(
                "INSERT INTO content_sync_state (id, state) VALUES (1, $1) \
                 ON CONFLICT (id) DO UPDATE SET state = EXCLUDED.state",
            )
            .bind(serde_json::to_string(state)?)
            .execute(pool)
            .await?;
            Ok(())
        }
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
