//! `app:content:sync`: mirrors the TYPO3 feed into the [`ContentStore`], politely.
//!
//! The load rules are agreed with the TYPO3 side and are not tunable: one request at a time, at
//! most one page per second, 5 s of quiet after any answer slower than 2 s, the page phase ends
//! after three slow pages in a row, a `503` stops the run and pauses later ones for its
//! `Retry-After`, three consecutive 5xx or timeouts stop the run, nothing is retried in a loop,
//! and outside 01:00–05:00 Europe/Berlin a run fetches at most 50 pages.

use std::collections::{BTreeMap, HashSet};
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use chrono::{DateTime, Timelike, Utc};
use serde::Serialize;

use super::clock::Clock;
use super::document::{Document, Page, PageState};
use super::feed::{
    DocKey, MANIFEST_PATH, Manifest, RECORDS_BATCH, RECORDS_PATH, RecordsRequest, RecordsResponse,
    is_record_type,
};
use super::markdown::{html_to_markdown, record_markdown};
use super::store::{ContentStore, StoreError};

const PAGE_SPACING: Duration = Duration::from_secs(1);
const SLOW: Duration = Duration::from_secs(2);
const QUIET_AFTER_SLOW: Duration = Duration::from_secs(5);
const SLOW_PAGES_END_PHASE: u32 = 3;
const FAILURES_STOP_RUN: u32 = 3;
const DAYTIME_PAGE_BUDGET: usize = 50;
const REFRESH_AGE: chrono::Duration = chrono::Duration::days(7);
/// Pages between two announcements of progress to readers.
const PUBLISH_EVERY: usize = 25;
const MAX_BODY: usize = 8 * 1024 * 1024;

/// Where the feed is and how long an answer may take (10 s; tests shorten it).
#[derive(Debug, Clone)]
pub struct FeedSettings {
    pub base_url: String,
    pub api_key: String,
    pub timeout: Duration,
    /// Held for the whole run; a second run that finds it held does nothing.
    pub lock_path: PathBuf,
}

#[derive(Debug, Clone, Copy, Default)]
pub struct RunOptions {
    /// Also refetch items older than 7 days, oldest first.
    pub refresh: bool,
    /// Lift the daytime budget of 50 pages.
    pub ignore_window: bool,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "snake_case", tag = "outcome", content = "detail")]
pub enum Outcome {
    Completed,
    /// Another run holds the lock; this one did nothing (and that is a success).
    Busy,
    /// TYPO3 asked us to stay away until then.
    Paused(DateTime<Utc>),
    ManifestFailed(String),
    /// The run stopped early (kill switch, repeated failures, refused key).
    Stopped(String),
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SyncReport {
    #[serde(flatten)]
    pub outcome: Outcome,
    pub requests: u32,
    pub records_fetched: u32,
    pub pages_fetched: u32,
    pub deleted: u32,
    /// Pages that still need fetching (daytime budget, slow pages, a stop).
    pub pages_left: usize,
    pub changed: bool,
}

impl SyncReport {
    fn new(outcome: Outcome) -> Self {
        Self {
            outcome,
            requests: 0,
            records_fetched: 0,
            pages_fetched: 0,
            deleted: 0,
            pages_left: 0,
            changed: false,
        }
    }
}

pub struct Syncer {
    settings: FeedSettings,
    store: Arc<dyn ContentStore>,
    clock: Arc<dyn Clock>,
    http: reqwest::Client,
}

impl Syncer {
    pub fn new(
        settings: FeedSettings,
        store: Arc<dyn ContentStore>,
        clock: Arc<dyn Clock>,
    ) -> Result<Self, String> {
        let http = reqwest::Client::builder()
            .timeout(settings.timeout)
            // A redirect could carry the API key to a host no site names.
            .redirect(reqwest::redirect::Policy::none())
            .user_agent(concat!(
                "concierge/",
                env!("CARGO_PKG_VERSION"),
                " content-sync"
            ))
            .build()
            .map_err(|e| format!("cannot build the HTTP client: {e}"))?;
        Ok(Self {
            settings,
            store,
            clock,
            http,
        })
    }

    /// One run. Store failures are errors; everything TYPO3 does is part of the report.
    pub async fn run(&self, options: RunOptions) -> Result<SyncReport, StoreError> {
        let Some(_lock) = RunLock::try_acquire(&self.settings.lock_path)? else {
            tracing::info!("content sync: another run holds the lock; nothing to do");
            return Ok(SyncReport::new(Outcome::Busy));
        };
        let mut state = self.store.state().await?;
        if let Some(until) = state.paused_until
            && until > self.clock.now()
        {
            tracing::warn!(%until, "content sync: paused by TYPO3 (503 Retry-After)");
            return Ok(SyncReport::new(Outcome::Paused(until)));
        }
        let mut run = Run {
            syncer: self,
            report: SyncReport::new(Outcome::Completed),
            next_request_at: None,
            last_page_at: None,
            failures: 0,
            slow_pages: 0,
            unpublished: false,
        };
        let manifest_url = format!(
            "{}{MANIFEST_PATH}",
            self.settings.base_url.trim_end_matches('/')
        );
        let manifest = match run.send(self.http.get(&manifest_url), false).await {
            Answer::Body(body) => Manifest::parse(&body),
            Answer::Unavailable(retry) => {
                self.pause(&mut state, retry).await?;
                return Ok(run.stopped("TYPO3 answered 503"));
            }
            other => Err(other.describe()),
        };
        let manifest = match manifest {
            Ok(manifest) => manifest,
            Err(why) => {
                tracing::error!(%why, "content sync: manifest failed; nothing changed");
                run.report.outcome = Outcome::ManifestFailed(why);
                return Ok(run.report);
            }
        };
        state.last_good_manifest_at = Some(self.clock.now());
        self.store.save_state(&state).await?;

        let mut docs: BTreeMap<DocKey, Document> = self
            .store
            .documents()
            .await?
            .into_iter()
            .map(|d| (d.key.clone(), d))
            .collect();
        run.reconcile(&manifest, &mut docs).await?;
        let stop = run.records(options, &mut docs, &mut state).await?;
        // Records are searchable before the (slow, paced) page phase begins.
        run.publish(&mut docs, &mut state).await?;
        let stop = match stop {
            Some(why) => Some(why),
            None => run.pages(options, &manifest, &mut docs, &mut state).await?,
        };
        run.publish(&mut docs, &mut state).await?;
        match stop {
            Some(why) => run.report.outcome = Outcome::Stopped(why),
            None if run.report.changed => {
                state.completed_generation = Some(state.generation);
                self.store.save_state(&state).await?;
            }
            None => {}
        }
        tracing::info!(report = %serde_json::to_string(&run.report).unwrap_or_default(), "content sync finished");
        Ok(run.report)
    }

    async fn pause(
        &self,
        state: &mut super::store::SyncState,
        retry_after: Option<Duration>,
    ) -> Result<(), StoreError> {
        if let Some(wait) = retry_after {
            let until = self.clock.now() + chrono::Duration::from_std(wait).unwrap_or_default();
            state.paused_until = Some(until);
            self.store.save_state(state).await?;
            tracing::warn!(%until, "content sync: TYPO3 kill switch (503); later runs wait");
        } else {
            tracing::warn!("content sync: TYPO3 kill switch (503) without Retry-After");
        }
        Ok(())
    }
}

/// What an exchange came to, as the load rules see it.
enum Answer {
    Body(Vec<u8>),
    /// 503, TYPO3's kill switch.
    Unavailable(Option<Duration>),
    /// Another 5xx.
    ServerError(u16),
    /// 401/403: our key is refused.
    Refused(u16),
    /// Any other status (404, a redirect, …).
    Status(u16),
    Timeout,
    Unreachable(String),
}

impl Answer {
    fn describe(&self) -> String {
        match self {
            Answer::Body(_) => "answered".into(),
            Answer::Unavailable(_) => "503".into(),
            Answer::ServerError(code) | Answer::Refused(code) | Answer::Status(code) => {
                format!("HTTP {code}")
            }
            Answer::Timeout => "timed out".into(),
            Answer::Unreachable(why) => format!("unreachable: {why}"),
        }
    }
}

/// One run's bookkeeping: pacing, failure counts, the report.
struct Run<'a> {
    syncer: &'a Syncer,
    report: SyncReport,
    /// Quiet after a slow answer: no request before this.
    next_request_at: Option<DateTime<Utc>>,
    last_page_at: Option<DateTime<Utc>>,
    /// Consecutive 5xx, timeouts and unreachable answers.
    failures: u32,
    /// Consecutive slow pages.
    slow_pages: u32,
    /// Changes not yet announced to readers (see [`Run::publish`]).
    unpublished: bool,
}

impl Run<'_> {
    fn mark_changed(&mut self) {
        self.report.changed = true;
        self.unpublished = true;
    }

    /// Recomputes merges and, when something changed, bumps the generation so readers (the
    /// search index) rebuild. Called between phases and every few pages, so a long page phase
    /// shows its progress.
    async fn publish(
        &mut self,
        docs: &mut BTreeMap<DocKey, Document>,
        state: &mut super::store::SyncState,
    ) -> Result<(), StoreError> {
        self.merge(docs).await?;
        if self.unpublished {
            state.generation += 1;
            self.syncer.store.save_state(state).await?;
            self.unpublished = false;
        }
        Ok(())
    }

    fn stopped(mut self, why: &str) -> SyncReport {
        self.report.outcome = Outcome::Stopped(why.to_string());
        self.report
    }

    /// Sends one request when the load rules allow it, and classifies the answer.
    async fn send(&mut self, request: reqwest::RequestBuilder, page: bool) -> Answer {
        let clock = &self.syncer.clock;
        let mut ready = self.next_request_at;
        if page && let Some(last) = self.last_page_at {
            let spaced = last + chrono::Duration::from_std(PAGE_SPACING).unwrap_or_default();
            ready = ready.max(Some(spaced));
        }
        if let Some(ready) = ready {
            let now = clock.now();
            if ready > now {
                clock
                    .sleep((ready - now).to_std().unwrap_or_default())
                    .await;
            }
        }
        let started = clock.now();
        if page {
            self.last_page_at = Some(started);
        }
        self.report.requests += 1;
        let request = request.header("X-Api-Key", &self.syncer.settings.api_key);
        let answer = match request.send().await {
            Ok(response) => classify(response).await,
            Err(error) => Err(error),
        };
        let answer = match answer {
            Ok(answer) => answer,
            Err(error) if error.is_timeout() => Answer::Timeout,
            Err(error) => Answer::Unreachable(error_kind(&error)),
        };
        let elapsed = (clock.now() - started).to_std().unwrap_or_default();
        let slow = elapsed > SLOW || matches!(answer, Answer::Timeout);
        self.next_request_at = slow.then(|| {
            clock.now() + chrono::Duration::from_std(QUIET_AFTER_SLOW).unwrap_or_default()
        });
        if page {
            self.slow_pages = if slow { self.slow_pages + 1 } else { 0 };
        }
        match answer {
            Answer::ServerError(_)
            | Answer::Unavailable(_)
            | Answer::Timeout
            | Answer::Unreachable(_) => self.failures += 1,
            _ => self.failures = 0,
        }
        answer
    }

    fn too_many_failures(&self) -> Option<String> {
        (self.failures >= FAILURES_STOP_RUN)
            .then(|| format!("{FAILURES_STOP_RUN} consecutive 5xx answers or timeouts"))
    }

    /// Takes over the manifest: items it no longer lists are deleted, the others described anew.
    async fn reconcile(
        &mut self,
        manifest: &Manifest,
        docs: &mut BTreeMap<DocKey, Document>,
    ) -> Result<(), StoreError> {
        let listed: HashSet<DocKey> = manifest.items.iter().map(|i| i.key()).collect();
        let gone: Vec<DocKey> = docs
            .keys()
            .filter(|k| !listed.contains(*k))
            .cloned()
            .collect();
        for key in gone {
            self.delete(docs, &key).await?;
        }
        for item in &manifest.items {
            let (doc, inserted) = match docs.entry(item.key()) {
                std::collections::btree_map::Entry::Vacant(slot) => {
                    (slot.insert(Document::new(item)), true)
                }
                std::collections::btree_map::Entry::Occupied(slot) => (slot.into_mut(), false),
            };
            let before = doc.clone();
            doc.describe(item);
            if inserted || *doc != before {
                self.syncer.store.put(doc).await?;
                self.mark_changed();
            }
        }
        Ok(())
    }

    async fn delete(
        &mut self,
        docs: &mut BTreeMap<DocKey, Document>,
        key: &DocKey,
    ) -> Result<(), StoreError> {
        docs.remove(key);
        self.syncer.store.delete(key).await?;
        self.report.deleted += 1;
        self.mark_changed();
        Ok(())
    }

    /// Records phase: changed records first, then (with `--refresh`) stale ones, 50 a request.
    /// Returns why the run must stop, if it must.
    async fn records(
        &mut self,
        options: RunOptions,
        docs: &mut BTreeMap<DocKey, Document>,
        state: &mut super::store::SyncState,
    ) -> Result<Option<String>, StoreError> {
        let now = self.syncer.clock.now();
        let wanted = wanted(docs, options, now, Document::needs_record, |d| {
            d.record_fetched_at
        });
        let url = format!(
            "{}{RECORDS_PATH}",
            self.syncer.settings.base_url.trim_end_matches('/')
        );
        for batch in wanted.chunks(RECORDS_BATCH) {
            let request = self
                .syncer
                .http
                .post(&url)
                .json(&RecordsRequest { items: batch });
            match self.send(request, false).await {
                Answer::Body(body) => match serde_json::from_slice::<RecordsResponse>(&body) {
                    Ok(response) => self.take_records(batch, response, docs).await?,
                    Err(error) => {
                        tracing::error!(%error, "content sync: records answer is not the contract's; batch skipped")
                    }
                },
                Answer::Unavailable(retry) => {
                    self.syncer.pause(state, retry).await?;
                    return Ok(Some("TYPO3 answered 503".into()));
                }
                Answer::Refused(code) => {
                    return Ok(Some(format!("TYPO3 refused the API key (HTTP {code})")));
                }
                other => {
                    tracing::warn!(answer = %other.describe(), "content sync: records batch failed; asked again next run");
                    if let Some(why) = self.too_many_failures() {
                        return Ok(Some(why));
                    }
                }
            }
        }
        Ok(None)
    }

    async fn take_records(
        &mut self,
        batch: &[DocKey],
        response: RecordsResponse,
        docs: &mut BTreeMap<DocKey, Document>,
    ) -> Result<(), StoreError> {
        let now = self.syncer.clock.now();
        let mut answered = HashSet::new();
        for record in response.records {
            let key = record.key();
            if !batch.contains(&key) {
                continue; // not asked for: the manifest decides what exists
            }
            if let Some(doc) = docs.get_mut(&key) {
                doc.data = Some(record.data);
                doc.record_modified = Some(doc.modified.clone());
                doc.record_fetched_at = Some(now);
                self.syncer.store.put(doc).await?;
                self.report.records_fetched += 1;
                self.mark_changed();
            }
            answered.insert(key);
        }
        for key in batch.iter().filter(|k| !answered.contains(*k)) {
            tracing::info!(item = %key, "content sync: record no longer exists; deleted");
            self.delete(docs, key).await?;
        }
        Ok(())
    }

    /// Page phase: new and changed pages, then (with `--refresh`) stale ones oldest first.
    async fn pages(
        &mut self,
        options: RunOptions,
        manifest: &Manifest,
        docs: &mut BTreeMap<DocKey, Document>,
        state: &mut super::store::SyncState,
    ) -> Result<Option<String>, StoreError> {
        let now = self.syncer.clock.now();
        let wanted = wanted(docs, options, now, Document::needs_page, |d| {
            d.page.as_ref().map(|p| p.fetched_at)
        });
        let budget = if options.ignore_window || in_night_window(now) {
            usize::MAX
        } else {
            DAYTIME_PAGE_BUDGET
        };
        let mut fetched = 0;
        for (index, key) in wanted.iter().enumerate() {
            let left = wanted.len() - index;
            if fetched >= budget {
                tracing::info!(
                    left,
                    "content sync: daytime budget of {DAYTIME_PAGE_BUDGET} pages reached"
                );
                self.report.pages_left = left;
                break;
            }
            if self.slow_pages >= SLOW_PAGES_END_PHASE {
                tracing::warn!(
                    left,
                    "content sync: three slow pages in a row; page phase ends"
                );
                self.report.pages_left = left;
                break;
            }
            let Some(doc) = docs.get_mut(key) else {
                continue;
            };
            let Some(content_url) = doc.content_url.clone() else {
                continue;
            };
            let stored = |state: PageState, markdown: String, doc: &Document| Page {
                state,
                markdown,
                modified: doc.modified.clone(),
                fetched_at: now,
            };
            let url = match reqwest::Url::parse(&content_url) {
                Ok(url) if manifest.serves(&url) => url,
                _ => {
                    tracing::warn!(item = %key, "content sync: contentUrl is not on a host of the manifest's sites; not fetched");
                    doc.page = Some(stored(PageState::Failed, String::new(), doc));
                    self.syncer.store.put(doc).await?;
                    self.mark_changed();
                    continue;
                }
            };
            fetched += 1;
            let answer = self.send(self.syncer.http.get(url), true).await;
            let page = match answer {
                Answer::Body(body) => {
                    self.report.pages_fetched += 1;
                    let markdown = html_to_markdown(&String::from_utf8_lossy(&body));
                    let state = if markdown.is_empty() {
                        PageState::Empty
                    } else {
                        PageState::Ok
                    };
                    Some(stored(state, markdown, doc))
                }
                Answer::Unavailable(retry) => {
                    self.syncer.pause(state, retry).await?;
                    self.report.pages_left = left;
                    return Ok(Some("TYPO3 answered 503".into()));
                }
                Answer::Refused(code) => {
                    self.report.pages_left = left;
                    return Ok(Some(format!("TYPO3 refused the API key (HTTP {code})")));
                }
                Answer::ServerError(_) | Answer::Status(_) => {
                    tracing::info!(item = %key, answer = %answer.describe(), "content sync: page failed");
                    Some(stored(PageState::Failed, String::new(), doc))
                }
                // Not stored: the page is asked for again next run.
                Answer::Timeout | Answer::Unreachable(_) => None,
            };
            if let Some(page) = page {
                doc.page = Some(page);
                self.syncer.store.put(doc).await?;
                self.mark_changed();
            }
            if fetched % PUBLISH_EVERY == 0 {
                self.publish(docs, state).await?;
            }
            if let Some(why) = self.too_many_failures() {
                self.report.pages_left = left - 1;
                return Ok(Some(why));
            }
        }
        Ok(None)
    }

    /// Recomputes, for every document, what is merged into what, its body and its public URL.
    async fn merge(&mut self, docs: &mut BTreeMap<DocKey, Document>) -> Result<(), StoreError> {
        let mut details: BTreeMap<DocKey, Vec<DocKey>> = BTreeMap::new();
        for doc in docs.values() {
            if is_record_type(&doc.key.kind) {
                continue;
            }
            if let Some(target) = &doc.detail_of {
                let target = DocKey {
                    kind: target.kind.clone(),
                    uid: target.uid,
                    language: doc.key.language.clone(),
                };
                if is_record_type(&target.kind) && docs.contains_key(&target) {
                    details.entry(target).or_default().push(doc.key.clone());
                }
            }
        }
        let merged_pages: HashSet<&DocKey> = details.values().flatten().collect();
        let mut updates = Vec::new();
        for doc in docs.values() {
            let mut next = doc.clone();
            if is_record_type(&doc.key.kind) {
                let pages: Vec<&Document> = details
                    .get(&doc.key)
                    .into_iter()
                    .flatten()
                    .filter_map(|k| docs.get(k))
                    .collect();
                let mut parts = Vec::new();
                if let Some(data) = &doc.data {
                    parts.push(record_markdown(&doc.key.kind, data));
                }
                parts.extend(doc.page_markdown().map(str::to_string));
                parts.extend(
                    pages
                        .iter()
                        .filter_map(|p| p.page_markdown())
                        .map(str::to_string),
                );
                parts.retain(|p| !p.is_empty());
                next.body_md = parts.join("\n\n");
                next.public_url = doc
                    .url
                    .clone()
                    .or_else(|| pages.iter().find_map(|p| p.url.clone()));
                next.merged_into = None;
            } else {
                next.merged_into = merged_pages
                    .contains(&doc.key)
                    .then(|| doc.detail_of.clone())
                    .flatten();
                next.body_md = doc.page_markdown().unwrap_or_default().to_string();
                next.public_url = doc.url.clone();
            }
            if next != *doc {
                updates.push(next);
            }
        }
        for doc in updates {
            self.syncer.store.put(&doc).await?;
            docs.insert(doc.key.clone(), doc);
            self.mark_changed();
        }
        Ok(())
    }
}

/// What a phase fetches: new and changed items first, then (with `--refresh`) the rest of those
/// fetched more than 7 days ago, oldest first.
fn wanted(
    docs: &BTreeMap<DocKey, Document>,
    options: RunOptions,
    now: DateTime<Utc>,
    changed: fn(&Document) -> bool,
    fetched_at: fn(&Document) -> Option<DateTime<Utc>>,
) -> Vec<DocKey> {
    let mut wanted: Vec<DocKey> = docs
        .values()
        .filter(|d| changed(d))
        .map(|d| d.key.clone())
        .collect();
    if options.refresh {
        let mut stale: Vec<(DateTime<Utc>, DocKey)> = docs
            .values()
            .filter(|d| !changed(d))
            .filter_map(|d| fetched_at(d).map(|at| (at, d.key.clone())))
            .filter(|(at, _)| *at < now - REFRESH_AGE)
            .collect();
        stale.sort();
        wanted.extend(stale.into_iter().map(|(_, key)| key));
    }
    wanted
}

async fn classify(response: reqwest::Response) -> Result<Answer, reqwest::Error> {
    let status = response.status().as_u16();
    Ok(match status {
        200..=299 => {
            let mut response = response;
            let mut body = Vec::new();
            while let Some(chunk) = response.chunk().await? {
                if body.len() + chunk.len() > MAX_BODY {
                    return Ok(Answer::Status(413));
                }
                body.extend_from_slice(&chunk);
            }
            Answer::Body(body)
        }
        503 => Answer::Unavailable(retry_after(&response)),
        500..=599 => Answer::ServerError(status),
        401 | 403 => Answer::Refused(status),
        _ => Answer::Status(status),
    })
}

/// `Retry-After` as seconds or as an HTTP date.
fn retry_after(response: &reqwest::Response) -> Option<Duration> {
    let value = response
        .headers()
        .get(reqwest::header::RETRY_AFTER)?
        .to_str()
        .ok()?
        .trim();
    if let Ok(seconds) = value.parse::<u64>() {
        return Some(Duration::from_secs(seconds));
    }
    let at = DateTime::parse_from_rfc2822(value)
        .ok()?
        .with_timezone(&Utc);
    (at - Utc::now()).to_std().ok()
}

/// What went wrong in transport, in words that carry no URL or address.
fn error_kind(error: &reqwest::Error) -> String {
    if error.is_connect() {
        "connection failed".into()
    } else if error.is_body() || error.is_decode() {
        "broken answer".into()
    } else {
        "request failed".into()
    }
}

/// 01:00–05:00 Europe/Berlin: the hours TYPO3 has to spare.
pub fn in_night_window(now: DateTime<Utc>) -> bool {
    let hour = now.with_timezone(&chrono_tz::Europe::Berlin).hour();
    (1..5).contains(&hour)
}

/// One run at a time, across processes: an exclusive lock on a file next to the store.
struct RunLock {
    _file: std::fs::File,
}

impl RunLock {
    fn try_acquire(path: &std::path::Path) -> Result<Option<Self>, StoreError> {
        if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
            let _ = std::fs::create_dir_all(dir);
        }
        let file = std::fs::OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true)
            .open(path)
            .map_err(|e| StoreError::new(format!("cannot open the sync lock: {e}")))?;
        match file.try_lock() {
            Ok(()) => Ok(Some(Self { _file: file })),
            Err(std::fs::TryLockError::WouldBlock) => Ok(None),
            Err(std::fs::TryLockError::Error(e)) => {
                Err(StoreError::new(format!("cannot take the sync lock: {e}")))
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use chrono::TimeZone;

    #[test]
    fn the_night_window_is_berlin_time_across_dst() {
        // Winter: 01:30 in Berlin is 00:30 UTC.
        assert!(in_night_window(
            Utc.with_ymd_and_hms(2026, 12, 1, 0, 30, 0).unwrap()
        ));
        assert!(!in_night_window(
            Utc.with_ymd_and_hms(2026, 12, 1, 4, 0, 0).unwrap()
        ));
        // Summer: 04:59 in Berlin is 02:59 UTC; 05:00 is 03:00 UTC.
        assert!(in_night_window(
            Utc.with_ymd_and_hms(2026, 7, 1, 2, 59, 0).unwrap()
        ));
        assert!(!in_night_window(
            Utc.with_ymd_and_hms(2026, 7, 1, 3, 0, 0).unwrap()
        ));
        assert!(!in_night_window(
            Utc.with_ymd_and_hms(2026, 7, 1, 22, 59, 0).unwrap()
        ));
    }
}
