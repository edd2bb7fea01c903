//! Where the mirror lives. [`ContentStore`] is the seam; [`SqlStore`] (`sql.rs`) keeps it in
//! a SQLite file (the embedded default, under `var/`, WAL, so `serve` reads while `concierge
//! sync` writes) or in the PostgreSQL several instances share, with the deployment's one sync
//! run locked in the database (`run_lock.rs`).

mod run_lock;
mod sql;

pub use sql::SqlStore;

use async_trait::async_trait;
use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

use super::document::Document;
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

impl From<concierge_core::StoreUnavailable> for StoreError {
    fn from(error: concierge_core::StoreUnavailable) -> Self {
        Self(error.0)
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
