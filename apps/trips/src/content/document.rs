//! `content_document`: one per `(type, uid, language)` — what the manifest says of the item,
//! its structured record, its page as Markdown, and what the merge made of them.

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::feed::{DocKey, Item, ItemRef};

/// What became of an item's HTML page.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum PageState {
    Ok,
    /// 404, 5xx, or a host no site names: not asked again until `modified` changes.
    Failed,
    /// Converted to no text.
    Empty,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Page {
    pub state: PageState,
    pub markdown: String,
    /// The item's `modified` when the page was fetched.
    pub modified: String,
    pub fetched_at: DateTime<Utc>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(from = "Stored<Page, String>")]
pub struct Document {
    #[serde(flatten)]
    pub key: DocKey,
    pub site: Option<String>,
    /// The public page, as the manifest names it.
    pub url: Option<String>,
    pub title: String,
    pub breadcrumb: Vec<String>,
    /// The manifest's `modified`.
    pub modified: String,
    pub content_url: Option<String>,
    pub detail_of: Option<ItemRef>,
    /// The structured payload (records only).
    pub data: Option<Value>,
    /// The item's `modified` when the record was fetched.
    pub record_modified: Option<String>,
    pub record_fetched_at: Option<DateTime<Utc>>,
    pub page: Option<Page>,
    /// Set on a detail page whose record exists: its text lives in that record's body.
    pub merged_into: Option<ItemRef>,
    /// Where a hit links to: the item's own `url`, or the URL a detail page lends it.
    pub public_url: Option<String>,
    /// Everything searchable about the item, in Markdown.
    pub body_md: String,
}

/// A document as stored: [`Document`]'s fields with its key's inline. Documents are read
/// through this, not through `#[serde(flatten)]`, which buffers a whole document (page text and
/// all) before reading it; `P` and `B` are the page's and the body's types, so that a reader
/// that needs neither skips them as [`serde::de::IgnoredAny`] without holding them.
#[derive(Deserialize)]
pub(crate) struct Stored<P, B> {
    #[serde(rename = "type")]
    kind: String,
    uid: u64,
    language: String,
    site: Option<String>,
    url: Option<String>,
    title: String,
    breadcrumb: Vec<String>,
    modified: String,
    content_url: Option<String>,
    detail_of: Option<ItemRef>,
    data: Option<Value>,
    record_modified: Option<String>,
    record_fetched_at: Option<DateTime<Utc>>,
    page: Option<P>,
    merged_into: Option<ItemRef>,
    public_url: Option<String>,
    /// Absent from a store's record text, which leaves page and body out.
    #[serde(default)]
    body_md: B,
}

/// A stored document without its page and body: what the trip catalog reads.
pub(crate) type StoredRecord = Stored<serde::de::IgnoredAny, serde::de::IgnoredAny>;

impl<P, B> Stored<P, B> {
    fn into_document(self, page: Option<Page>, body_md: String) -> Document {
        Document {
            key: DocKey {
                kind: self.kind,
                uid: self.uid,
                language: self.language,
            },
            site: self.site,
            url: self.url,
            title: self.title,
            breadcrumb: self.breadcrumb,
            modified: self.modified,
            content_url: self.content_url,
            detail_of: self.detail_of,
            data: self.data,
            record_modified: self.record_modified,
            record_fetched_at: self.record_fetched_at,
            page,
            merged_into: self.merged_into,
            public_url: self.public_url,
            body_md,
        }
    }
}

impl StoredRecord {
    /// The document with no page and an empty body.
    pub(crate) fn into_record(self) -> Document {
        self.into_document(None, String::new())
    }
}

impl From<Stored<Page, String>> for Document {
    fn from(mut stored: Stored<Page, String>) -> Self {
        let page = stored.page.take();
        let body = std::mem::take(&mut stored.body_md);
        stored.into_document(page, body)
    }
}

impl Document {
    pub fn new(item: &Item) -> Self {
        let mut doc = Self {
            key: item.key(),
            site: None,
            url: None,
            title: String::new(),
            breadcrumb: Vec::new(),
            modified: String::new(),
            content_url: None,
            detail_of: None,
            data: None,
            record_modified: None,
            record_fetched_at: None,
            page: None,
            merged_into: None,
            public_url: None,
            body_md: String::new(),
        };
        doc.describe(item);
        doc
    }

    /// Takes over what the manifest says now.
    pub fn describe(&mut self, item: &Item) {
        self.site = item.site.clone();
        self.url = item.url.clone();
        self.title = item.title.clone().unwrap_or_default();
        self.breadcrumb = item.breadcrumb.clone();
        self.modified = item.modified.clone();
        self.content_url = item.content_url.clone();
        self.detail_of = item.detail_of.clone();
        if self.content_url.is_none() {
            // The item has no page any more: its old text must not linger in the body.
            self.page = None;
        }
    }

    pub fn reference(&self) -> ItemRef {
        ItemRef {
            kind: self.key.kind.clone(),
            uid: self.key.uid,
        }
    }

    pub fn needs_record(&self) -> bool {
        super::feed::is_record_type(&self.key.kind)
            && self.record_modified.as_deref() != Some(&self.modified)
    }

    /// A page is asked for when it is new or changed; a failed or empty one waits for a change,
    /// a timed-out one (never stored) is asked again.
    pub fn needs_page(&self) -> bool {
        self.content_url.is_some()
            && self.page.as_ref().map(|p| p.modified.as_str()) != Some(self.modified.as_str())
    }

    /// The last time anything of the item was fetched, for `--refresh` (oldest first).
    pub fn fetched_at(&self) -> Option<DateTime<Utc>> {
        let page = self.page.as_ref().map(|p| p.fetched_at);
        match (self.record_fetched_at, page) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
    }

    /// The page's Markdown when it was fetched and had text.
    pub fn page_markdown(&self) -> Option<&str> {
        self.page
            .as_ref()
            .filter(|p| p.state == PageState::Ok)
            .map(|p| p.markdown.as_str())
    }

    /// Shown in search: not merged into a record, reachable, and with something to show.
    pub fn is_searchable(&self) -> bool {
        self.merged_into.is_none()
            && self.public_url.is_some()
            && if super::feed::is_record_type(&self.key.kind) {
                self.data.is_some()
            } else {
                self.page_markdown().is_some()
            }
    }
}
