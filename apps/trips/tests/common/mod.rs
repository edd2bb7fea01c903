//! A TYPO3 content feed on 127.0.0.1 that follows `docs/contracts/typo3-content-feed.md` and can
//! be scripted per request (latency, status, `Retry-After`, hanging), with a log of every request
//! and the (manual) time it arrived. The sync under test runs on the same [`ManualClock`]: a
//! scripted latency moves the clock, so "slower than 2 s" and "wait 5 s" are exact and instant.

#![allow(dead_code)]

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::extract::{Request, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use chrono::{DateTime, TimeZone, Utc};
use concierge_trips::content::clock::ManualClock;
use concierge_trips::content::feed::DocKey;
use concierge_trips::content::store::{ContentStore, SqlStore};
use concierge_trips::content::sync::{FeedSettings, RunOptions, SyncReport, Syncer};
use serde_json::{Value, json};

pub const KEY: &str = "test-cms-key";
pub const MODIFIED: &str = "2026-11-01T10:00:00+01:00";

/// 14:00 Berlin on a weekday: outside the night window.
pub fn daytime() -> DateTime<Utc> {
    Utc.with_ymd_and_hms(2026, 11, 30, 13, 0, 0).unwrap()
}

/// 02:00 Berlin.
pub fn night() -> DateTime<Utc> {
    Utc.with_ymd_and_hms(2026, 12, 1, 1, 0, 0).unwrap()
}

#[derive(Clone, Debug)]
pub struct Reply {
    pub status: u16,
    pub body: String,
    pub latency: Duration,
    pub retry_after: Option<String>,
    /// Never answers: the client's timeout decides.
    pub hang: bool,
}

impl Reply {
    pub fn ok(body: impl Into<String>) -> Self {
        Self {
            status: 200,
            body: body.into(),
            latency: Duration::ZERO,
            retry_after: None,
            hang: false,
        }
    }
    pub fn status(status: u16) -> Self {
        Self {
            status,
            ..Self::ok("")
        }
    }
    pub fn hang() -> Self {
        Self {
            hang: true,
            ..Self::ok("")
        }
    }
    pub fn slow(mut self, seconds: u64) -> Self {
        self.latency = Duration::from_secs(seconds);
        self
    }
    pub fn retry_after(mut self, value: &str) -> Self {
        self.retry_after = Some(value.into());
        self
    }
}

#[derive(Clone, Debug, PartialEq)]
pub struct Logged {
    /// Manual-clock time the request arrived.
    pub at: DateTime<Utc>,
    pub method: String,
    pub path: String,
    pub api_key: Option<String>,
    /// The keys asked for, on records requests.
    pub asked: Vec<String>,
}

#[derive(Default)]
pub struct Script {
    pub sites: Vec<Value>,
    pub items: Vec<Value>,
    pub records: HashMap<String, Value>,
    /// Page replies by path; a page without one answers a paragraph of text.
    pub pages: HashMap<String, Vec<Reply>>,
    /// Overrides for the manifest and the records endpoint, used once each in order.
    pub manifest_replies: Vec<Reply>,
    pub records_replies: Vec<Reply>,
}

pub struct Typo3 {
    pub addr: String,
    pub clock: ManualClock,
    pub log: Arc<Mutex<Vec<Logged>>>,
    pub script: Arc<Mutex<Script>>,
}

#[derive(Clone)]
struct Shared {
    clock: ManualClock,
    log: Arc<Mutex<Vec<Logged>>>,
    script: Arc<Mutex<Script>>,
}

impl Typo3 {
    pub async fn start(clock: ManualClock) -> Self {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .expect("bind");
        let addr = listener.local_addr().expect("addr").to_string();
        let shared = Shared {
            clock: clock.clone(),
            log: Arc::default(),
            script: Arc::new(Mutex::new(Script {
                sites: vec![json!({"site": "ser", "hosts": [addr.clone()]})],
                ..Script::default()
            })),
        };
        let app = axum::Router::new()
            .fallback(handle)
            .with_state(shared.clone());
        tokio::spawn(async move {
            let _ = axum::serve(listener, app).await;
        });
        Self {
            addr,
            clock,
            log: shared.log,
            script: shared.script,
        }
    }

    pub fn page_url(&self, path: &str) -> String {
        format!("http://{}{path}", self.addr)
    }

    /// A manifest item; `extra` adds or overrides fields.
    pub fn item(&self, kind: &str, uid: u64, extra: Value) -> Value {
        let mut item = json!({
            "type": kind, "uid": uid, "language": "de", "modified": MODIFIED, "site": "ser",
            "url": format!("https://www.ser.de/{kind}/{uid}/"), "title": format!("{kind} {uid}"),
        });
        if let (Some(item), Some(extra)) = (item.as_object_mut(), extra.as_object()) {
            for (k, v) in extra {
                item.insert(k.clone(), v.clone());
            }
        }
        item
    }

    /// Adds a page item whose `contentUrl` is on this server at `/pages/<uid>`.
    pub fn add_page(&self, uid: u64, extra: Value) {
        let mut item = self.item("page", uid, extra);
        if item.get("contentUrl").is_none() {
            item["contentUrl"] = json!(self.page_url(&format!("/pages/{uid}")));
        }
        self.script.lock().unwrap().items.push(item);
    }

    /// Adds a record item and its record.
    pub fn add_record(&self, kind: &str, uid: u64, extra: Value, data: Value) {
        let item = self.item(kind, uid, extra);
        let mut script = self.script.lock().unwrap();
        script.items.push(item);
        script.records.insert(
            format!("{kind}:{uid}:de"),
            json!({"type": kind, "uid": uid, "language": "de", "data": data}),
        );
    }

    pub fn script_page(&self, uid: u64, replies: Vec<Reply>) {
        self.script
            .lock()
            .unwrap()
            .pages
            .insert(format!("/pages/{uid}"), replies);
    }

    pub fn set_modified(&self, kind: &str, uid: u64, modified: &str) {
        let mut script = self.script.lock().unwrap();
        for item in &mut script.items {
            if item["type"] == kind && item["uid"] == uid {
                item["modified"] = json!(modified);
            }
        }
    }

    pub fn requests(&self) -> Vec<Logged> {
        self.log.lock().unwrap().clone()
    }

    pub fn paths(&self) -> Vec<String> {
        self.requests().into_iter().map(|r| r.path).collect()
    }

    pub fn clear_log(&self) {
        self.log.lock().unwrap().clear();
    }
}

async fn handle(State(shared): State<Shared>, request: Request) -> Response {
    let method = request.method().to_string();
    let path = request.uri().path().to_string();
    let api_key = request
        .headers()
        .get("x-api-key")
        .and_then(|v| v.to_str().ok())
        .map(str::to_string);
    let body = axum::body::to_bytes(request.into_body(), 1 << 20)
        .await
        .unwrap_or_default();
    let asked: Vec<String> = serde_json::from_slice::<Value>(&body)
        .ok()
        .and_then(|v| v.get("items").cloned())
        .and_then(|v| serde_json::from_value::<Vec<DocKey>>(v).ok())
        .unwrap_or_default()
        .into_iter()
        .map(|k| k.to_string())
        .collect();
    shared.log.lock().unwrap().push(Logged {
        at: shared_now(&shared),
        method,
        path: path.clone(),
        api_key: api_key.clone(),
        asked: asked.clone(),
    });
    if api_key.as_deref() != Some(KEY) {
        return StatusCode::UNAUTHORIZED.into_response();
    }
    let reply = {
        let mut script = shared.script.lock().unwrap();
        match path.as_str() {
            "/api/content/manifest" => {
                if script.manifest_replies.is_empty() {
                    Reply::ok(json!({"sites": script.sites, "items": script.items}).to_string())
                } else {
                    script.manifest_replies.remove(0)
                }
            }
            "/api/content/records" => {
                if script.records_replies.is_empty() {
                    let found: Vec<&Value> =
                        asked.iter().filter_map(|k| script.records.get(k)).collect();
                    Reply::ok(json!({"records": found}).to_string())
                } else {
                    script.records_replies.remove(0)
                }
            }
            page => match script.pages.get_mut(page) {
                Some(replies) if replies.len() > 1 => replies.remove(0),
                Some(replies) if !replies.is_empty() => replies[0].clone(),
                _ => Reply::ok(format!(
                    "<html><body><nav>Menü</nav><main><h1>Seite</h1><p>Inhalt von {page}.</p></main></body></html>"
                )),
            },
        }
    };
    shared.clock.advance(reply.latency);
    if reply.hang {
        std::future::pending::<()>().await;
    }
    let mut response = (
        StatusCode::from_u16(reply.status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR),
        reply.body,
    )
        .into_response();
    if let Some(retry) = reply.retry_after {
        response
            .headers_mut()
            .insert("retry-after", retry.parse().expect("header value"));
    }
    response
}

fn shared_now(shared: &Shared) -> DateTime<Utc> {
    use concierge_trips::content::clock::Clock;
    shared.clock.now()
}

/// A store in a temp dir and a syncer on the manual clock, against a [`Typo3`].
pub struct Mirror {
    pub dir: tempfile::TempDir,
    pub store: Arc<dyn ContentStore>,
    pub syncer: Syncer,
}

impl Mirror {
    pub async fn new(typo3: &Typo3) -> Self {
        let dir = tempfile::tempdir().expect("temp dir");
        let store: Arc<dyn ContentStore> = Arc::new(
            SqlStore::open(&dir.path().join("content.sqlite"))
                .await
                .expect("store"),
        );
        let syncer = Syncer::new(
            FeedSettings {
                base_url: format!("http://{}", typo3.addr),
                api_key: KEY.into(),
                // Short, so a hanging page costs the suite a fraction of a second.
                timeout: Duration::from_millis(300),
                lock_path: dir.path().join("content.sqlite.sync.lock"),
            },
            store.clone(),
            Arc::new(typo3.clock.clone()),
        )
        .expect("syncer");
        Self { dir, store, syncer }
    }

    pub async fn run(&self, options: RunOptions) -> SyncReport {
        self.syncer.run(options).await.expect("store works")
    }

    pub async fn delta(&self) -> SyncReport {
        self.run(RunOptions::default()).await
    }

    pub async fn keys(&self) -> Vec<String> {
        self.store
            .documents()
            .await
            .expect("documents")
            .into_iter()
            .map(|d| d.key.to_string())
            .collect()
    }

    pub async fn doc(&self, key: &str) -> concierge_trips::content::document::Document {
        self.store
            .documents()
            .await
            .expect("documents")
            .into_iter()
            .find(|d| d.key.to_string() == key)
            .unwrap_or_else(|| panic!("no document {key}"))
    }
}
