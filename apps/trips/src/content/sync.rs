//! `app:content:sync`: mirrors the TYPO3 feed into the [`ContentStore`], politely.
//!
//! A run takes the [run lock](lock), reads the manifest, takes it over (deleted and described
//! items), then runs two phases: records (50 a request), then pages, publishing to readers
//! between them and every few pages. Every request goes through [`Run::send`], which asks the
//! [`pacer`] (the agreed load rules, decided without I/O) when it may go and tells it what came
//! back; [`answer`] classifies what came back; [`merge`] decides which detail pages are read as
//! part of their record.

mod answer;
mod lock;
mod merge;
pub mod pacer;

use std::collections::{BTreeMap, HashSet};
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use chrono::{DateTime, Utc};
use serde::Serialize;

use super::clock::Clock;
use super::document::{Document, Page, PageState};
use super::feed::{
    DocKey, MANIFEST_PATH, Manifest, RECORDS_BATCH, RECORDS_PATH, RecordsRequest, RecordsResponse,
};
use super::markdown::html_to_markdown;
use super::store::{ContentStore, RunLock as SharedRunLock, StoreError};
use answer::Answer;
use lock::RunLock;
use pacer::{DAYTIME_PAGE_BUDGET, Pacer, PhaseEnd, Request};

const REFRESH_AGE: chrono::Duration = chrono::Duration::days(7);
/// Pages between two announcements of progress to readers.
const PUBLISH_EVERY: usize = 25;

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
    /// A scheduled run: it does nothing when a run of its kind began within this long (on any
    /// instance sharing the mirror), so every instance's schedule adds up to one run a slot.
    pub slot: Option<Duration>,
}

/// How long a scheduled run's slot is taken by a run that began in it: far less than the hour
/// between deltas, far more than the instances' clocks differ.
pub const SLOT: Duration = Duration::from_secs(10 * 60);

#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "snake_case", tag = "outcome", content = "detail")]
pub enum Outcome {
    Completed,
    /// Another run holds the lock, or this scheduled slot's run began already (on any
    /// instance); this one did nothing (and that is a success).
    Busy,
    /// TYPO3 asked us to stay away until then.
    Paused(DateTime<Utc>),
    ManifestFailed(String),
    /// The run stopped early (kill switch, repeated failures, refused key).
    Stopped(String),
}

/// The last run this process made, for its metrics.
pub static LAST_RUN: std::sync::Mutex<Option<SyncReport>> = std::sync::Mutex::new(None);

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SyncReport {
    #[serde(flatten)]
    pub outcome: Outcome,
    pub requests: u32,
    pub records_fetched: u32,
    pub pages_fetched: u32,
    /// Pages that answered an error, or are on no host of the manifest's sites.
    #[serde(default)]
    pub pages_failed: u32,
    /// Pages that converted to no text.
    #[serde(default)]
    pub pages_empty: u32,
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
            pages_failed: 0,
            pages_empty: 0,
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

fn busy() -> SyncReport {
    tracing::info!("content sync: another run holds the lock; nothing to do");
    SyncReport::new(Outcome::Busy)
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
        // The deployment's one run: locked in a shared store, or in a file beside a local one.
        match self.store.run_lock().await? {
            Some(SharedRunLock::Held(lock)) => {
                let report = self.run_locked(options).await;
                lock.release().await;
                report
            }
            Some(SharedRunLock::Busy) => Ok(busy()),
            None => match RunLock::try_acquire(&self.settings.lock_path)? {
                Some(_lock) => self.run_locked(options).await,
                None => Ok(busy()),
            },
        }
    }

    /// One run, its lock held.
    async fn run_locked(&self, options: RunOptions) -> Result<SyncReport, StoreError> {
        let mut state = self.store.state().await?;
        if let Some(until) = pacer::paused(state.paused_until, self.clock.now()) {
            tracing::warn!(%until, "content sync: paused by TYPO3 (503 Retry-After)");
            return Ok(SyncReport::new(Outcome::Paused(until)));
        }
        let now = self.clock.now();
        let last = match options.refresh {
            true => state.last_refresh_started_at,
            false => state.last_run_started_at,
        };
        // Taken when the last run began less than a slot ago, either way: another instance's
        // clock may be a little ahead. A last run far in the future means our clock was set
        // back: counting that as this slot's run would stop every scheduled run until the clock
        // caught up (an hour, or a day).
        if let (Some(slot), Some(last)) = (options.slot, last)
            && chrono::Duration::from_std(slot).is_ok_and(|slot| (now - last).abs() < slot)
        {
            tracing::info!(%last, "content sync: this slot's run began already; nothing to do");
            return Ok(SyncReport::new(Outcome::Busy));
        }
        state.last_run_started_at = Some(now);
        if options.refresh {
            state.last_refresh_started_at = Some(now);
        }
        self.store.save_state(&state).await?;
        let mut run = Run {
            syncer: self,
            report: SyncReport::new(Outcome::Completed),
            pacer: Pacer::new(),
            unpublished: false,
        };
        let manifest_url = format!(
            "{}{MANIFEST_PATH}",
            self.settings.base_url.trim_end_matches('/')
        );
        let manifest = match run.send(self.http.get(&manifest_url), Request::Feed).await {
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
        *LAST_RUN.lock().unwrap_or_else(|p| p.into_inner()) = Some(run.report.clone());
        Ok(run.report)
    }

    async fn pause(
        &self,
        state: &mut super::store::SyncState,
        retry_after: Option<Duration>,
    ) -> Result<(), StoreError> {
        if let Some(until) = pacer::pause_until(self.clock.now(), retry_after) {
            state.paused_until = Some(until);
            self.store.save_state(state).await?;
            tracing::warn!(%until, "content sync: TYPO3 kill switch (503); later runs wait");
        } else {
            tracing::warn!("content sync: TYPO3 kill switch (503) without Retry-After");
        }
        Ok(())
    }
}

/// One run's bookkeeping: the pacing, the report.
struct Run<'a> {
    syncer: &'a Syncer,
    report: SyncReport,
    pacer: Pacer,
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
    async fn send(&mut self, request: reqwest::RequestBuilder, kind: Request) -> Answer {
        let clock = &self.syncer.clock;
        let wait = self.pacer.wait(kind, clock.now());
        if !wait.is_zero() {
            clock.sleep(wait).await;
        }
        let in_flight = self.pacer.start(kind, clock.now());
        self.report.requests += 1;
        let answer = Answer::of(request.header("X-Api-Key", &self.syncer.settings.api_key)).await;
        in_flight.answered(clock.now(), answer.exchange());
        answer
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
            match self.send(request, Request::Feed).await {
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
                    if let Some(why) = self.pacer.stop_run() {
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
        self.pacer.begin_pages(now, options.ignore_window);
        for (index, key) in wanted.iter().enumerate() {
            let left = wanted.len() - index;
            match self.pacer.page_phase_end() {
                Some(PhaseEnd::BudgetSpent) => {
                    tracing::info!(
                        left,
                        "content sync: daytime budget of {DAYTIME_PAGE_BUDGET} pages reached"
                    );
                    self.report.pages_left = left;
                    break;
                }
                Some(PhaseEnd::SlowPages) => {
                    tracing::warn!(
                        left,
                        "content sync: three slow pages in a row; page phase ends"
                    );
                    self.report.pages_left = left;
                    break;
                }
                None => {}
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
                    self.report.pages_failed += 1;
                    doc.page = Some(stored(PageState::Failed, String::new(), doc));
                    self.syncer.store.put(doc).await?;
                    self.mark_changed();
                    continue;
                }
            };
            let answer = self.send(self.syncer.http.get(url), Request::Page).await;
            let page = match answer {
                Answer::Body(body) => {
                    self.report.pages_fetched += 1;
                    let markdown = html_to_markdown(&String::from_utf8_lossy(&body));
                    let state = if markdown.is_empty() {
                        self.report.pages_empty += 1;
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
                    self.report.pages_failed += 1;
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
            if self.pacer.pages_sent().is_multiple_of(PUBLISH_EVERY) {
                self.publish(docs, state).await?;
            }
            if let Some(why) = self.pacer.stop_run() {
                self.report.pages_left = left - 1;
                return Ok(Some(why));
            }
        }
        Ok(None)
    }

    /// Recomputes, for every document, what is merged into what, its body and its public URL
    /// ([`merge`]), and stores what changed.
    async fn merge(&mut self, docs: &mut BTreeMap<DocKey, Document>) -> Result<(), StoreError> {
        for doc in merge::changed(docs) {
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
