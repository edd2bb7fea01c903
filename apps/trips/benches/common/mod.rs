//! What the trips benches share: generated documents, a store in memory, the export at size.

// Each bench compiles its own copy and uses a part of it.
#![allow(dead_code)]

use std::collections::HashSet;
use std::net::SocketAddr;
use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use async_trait::async_trait;
use chrono::{NaiveDate, TimeZone, Utc};
use concierge_sim_typo3::SimulatorConfig;
use concierge_trips::content::clock::ManualClock;
use concierge_trips::content::document::{Document, Page, PageState};
use concierge_trips::content::feed::{DocKey, Item};
use concierge_trips::content::markdown::html_to_markdown;
use concierge_trips::content::store::{ContentStore, SqlStore, StoreError, SyncState};
use concierge_trips::content::sync::{FeedSettings, RunOptions, Syncer};
use serde_json::{Value, json};

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

/// `count` German documents of ~700 words (uids from `first_uid`), built from the sample feed's own
/// sentences in a fixed order (same corpus every run): products and hotels 20 %, destinations
/// 15 %, pages 40 %, blog posts 25 %. Also the total word count.
pub fn corpus(feed: &Path, count: usize, first_uid: u64) -> (Vec<Document>, usize) {
    let sentences = sentences(feed);
    assert!(
        !sentences.is_empty(),
        "no sample sentences in {}",
        feed.display()
    );
    let mut rng = 0x9E37_79B9_7F4A_7C15u64;
    let mut next = move || {
        rng ^= rng << 13;
        rng ^= rng >> 7;
        rng ^= rng << 17;
        rng
    };
    let mut docs = Vec::with_capacity(count);
    let mut words = 0usize;
    for uid in first_uid..first_uid + count as u64 {
        let kind = match next() % 20 {
            0..=1 => "product",
            2..=3 => "hotel",
            4..=6 => "city",
            7..=14 => "page",
            _ => "blog",
        };
        let mut body = String::new();
        let mut body_words = 0;
        while body_words < 700 {
            let sentence = &sentences[(next() % sentences.len() as u64) as usize];
            body_words += sentence.split_whitespace().count();
            body.push_str(sentence);
            body.push(if next() % 6 == 0 { '\n' } else { ' ' });
        }
        words += body_words;
        let title: String = sentences[(next() % sentences.len() as u64) as usize]
            .split_whitespace()
            .take(5)
            .collect::<Vec<_>>()
            .join(" ");
        docs.push(generated(kind, uid, title, &["Reisen", "Frankreich"], body));
    }
    (docs, words)
}

/// The sentences of every sample page, as the sync would convert them.
fn sentences(feed: &Path) -> Vec<String> {
    let mut out = Vec::new();
    let mut stack = vec![feed.join("pages")];
    while let Some(dir) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        for entry in entries.flatten() {
            let path = entry.path();
            if path.is_dir() {
                stack.push(path);
            } else if path.extension().is_some_and(|e| e == "html") {
                let markdown =
                    html_to_markdown(&std::fs::read_to_string(&path).unwrap_or_default());
                out.extend(
                    markdown
                        .split(['.', '\n'])
                        .map(|s| s.trim().trim_start_matches(['#', '-', '*', ' ']))
                        .filter(|s| s.split_whitespace().count() >= 4)
                        .map(|s| format!("{s}.")),
                );
            }
        }
    }
    out.sort();
    out.dedup();
    out
}

/// The sample's products with every date repeated `copies` times, half a year apart (the sample
/// season is shorter, so no copy repeats a date code); date codes follow the new start dates.
pub fn repeat(sample: &Value, copies: i64) -> Value {
    let mut products = Vec::new();
    for product in sample["products"].as_array().expect("products") {
        let code = product["code"].as_str().expect("code");
        let mut seen = HashSet::new();
        let mut dates = Vec::new();
        for copy in 0..copies {
            for date in product["dates"].as_array().expect("dates") {
                let shift = chrono::Duration::weeks(26 * copy);
                let day = |key: &str| {
                    NaiveDate::parse_from_str(date[key].as_str().expect("date"), "%Y-%m-%d")
                        .expect("date")
                        + shift
                };
                let (start, end) = (day("start"), day("end"));
                let date_code = format!("{code}{}", start.format("%d%m%y"));
                if !seen.insert(date_code.clone()) {
                    continue;
                }
                let mut date = date.clone();
                date["dateCode"] = json!(date_code);
                date["start"] = json!(start.to_string());
                date["end"] = json!(end.to_string());
                dates.push(date);
            }
        }
        let mut product = product.clone();
        product["dates"] = json!(dates);
        products.push(product);
    }
    json!({"generatedAt": sample["generatedAt"], "products": products})
}

/// The sample feed (`examples/ski/feed`) served by the TYPO3 simulator and synced into
/// `dir/content.sqlite` on a manual clock (the load rules' waits cost no time). The simulator
/// keeps serving at the address returned.
pub async fn sample_mirror(dir: &Path) -> (SocketAddr, Arc<dyn ContentStore>) {
    let examples = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/ski");
    let (addr, serving) = concierge_sim_typo3::start(&SimulatorConfig {
        listen: "127.0.0.1:0".into(),
        feed: examples.join("feed"),
        api_key: "bench".into(),
    })
    .await
    .expect("the simulator");
    tokio::spawn(serving);
    let store: Arc<dyn ContentStore> = Arc::new(
        SqlStore::open(&dir.join("content.sqlite"))
            .await
            .expect("the store"),
    );
    Syncer::new(
        FeedSettings {
            base_url: format!("http://{addr}"),
            api_key: "bench".into(),
            timeout: Duration::from_secs(10),
            lock_path: dir.join("sync.lock"),
        },
        store.clone(),
        Arc::new(ManualClock::at(
            Utc.with_ymd_and_hms(2026, 12, 1, 1, 0, 0).unwrap(),
        )),
    )
    .expect("the syncer")
    .run(RunOptions::default())
    .await
    .expect("the sample sync");
    (addr, store)
}
