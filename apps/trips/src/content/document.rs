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
