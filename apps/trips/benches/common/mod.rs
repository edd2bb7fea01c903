//! What the content benches share: generated documents and a store in memory.

use std::sync::Mutex;

use async_trait::async_trait;
use chrono::Utc;
use concierge_trips::content::document::{Document, Page, PageState};
use concierge_trips::content::feed::{DocKey, Item};
use concierge_trips::content::store::{ContentStore, StoreError, SyncState};

/// A mirrored document as a sync would leave it: a record type with its data, a page type with
/// its page, `body` as the indexed text either way.
pub fn generated(
    kind: &str,
    uid: u64,
    title: String,
    breadcrumb: &[&str],
    body: String,
) -> Document {
    let item: Item = serde_json::from_value(serde_json::json!({
        "type": kind, "uid": uid, "language": "de", "modified": "2026-11-01T10:00:00+01:00",
        "site": "ser", "url": format!("https://www.ser.de/{kind}/{uid}/"), "title": title,
        "breadcrumb": breadcrumb,
    }))
    .expect("item");
    let mut doc = Document::new(&item);
    doc.public_url = doc.url.clone();
    if concierge_trips::content::feed::is_record_type(kind) {
        doc.data = Some(serde_json::json!({"title": doc.title}));
    } else {
        doc.page = Some(Page {
            state: PageState::Ok,
            markdown: body.clone(),
            modified: doc.modified.clone(),
            fetched_at: Utc::now(),
        });
    }
    doc.body_md = body;
    doc
}

/// A store that lives in memory: the benchmark measures search, not SQLite inserts.
pub struct MemoryStore {
    docs: Mutex<Vec<Document>>,
}

impl MemoryStore {
    pub fn new(docs: Vec<Document>) -> Self {
        Self {
            docs: Mutex::new(docs),
        }
    }
}

#[async_trait]
impl ContentStore for MemoryStore {
    async fn documents(&self) -> Result<Vec<Document>, StoreError> {
        Ok(self.docs.lock().unwrap().clone())
    }
    async fn by_url(&self, url: &str) -> Result<Option<Document>, StoreError> {
        Ok(self
            .docs
            .lock()
            .unwrap()
            .iter()
            .find(|d| d.public_url.as_deref() == Some(url))
            .cloned())
    }
    async fn put(&self, _doc: &Document) -> Result<(), StoreError> {
        Ok(())
    }
    async fn delete(&self, _key: &DocKey) -> Result<(), StoreError> {
        Ok(())
    }
    async fn state(&self) -> Result<SyncState, StoreError> {
        Ok(SyncState::default())
    }
    async fn save_state(&self, _state: &SyncState) -> Result<(), StoreError> {
        Ok(())
    }
}
