//! Loading the catalog: the export (URL with an optional bearer token, or a file) and
//! `hotel.xml`, re-read every `refresh` (default 5 min), and rebuilt whenever the content mirror
//! changes; each new catalog is swapped in whole. A failed refresh keeps the last good catalog.

use std::path::PathBuf;
use std::sync::{Arc, RwLock};
use std::time::{Duration, Instant};

use serde::Deserialize;

use super::TripCatalog;
use super::export::{BusproHotels, Export};
use crate::content::document::Document;
use crate::content::store::{ChangeStamp, ContentStore, SyncState};

/// How often the watcher looks whether the mirror or the export is due for a rebuild.
const RECHECK: Duration = Duration::from_secs(1);
/// How long the first sync may take to fill the mirror before the catalog stops saying "loading"
/// and says the trip data is not available (the first sync failed or never ran).
pub const FIRST_SYNC_GRACE: Duration = Duration::from_secs(10 * 60);
/// How long after a failed read of the export it is tried again (at most; sooner when the
/// configured refresh is shorter).
const RETRY_EXPORT: Duration = Duration::from_secs(30);

/// `[apps.trips.export]`.
#[derive(Debug, Clone, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ExportConfig {
    /// `GET /api/exports/products` of the booking system (used when set and not empty)…
    #[serde(default)]
    pub url: Option<String>,
    /// …otherwise a file holding the same JSON.
    #[serde(default)]
    pub file: Option<PathBuf>,
    /// Bearer token for `url`.
    #[serde(default)]
    pub token: Option<String>,
    /// BusPro's `hotel.xml`: a file, or an http(s) URL.
    pub hotels: String,
    /// How often the export is read again.
    #[schemars(with = "concierge_core::written::Duration")]
    #[serde(default = "five_minutes", with = "humantime_serde")]
    pub refresh: Duration,
}

fn five_minutes() -> Duration {
    Duration::from_secs(5 * 60)
}

impl ExportConfig {
    pub fn check(&self) -> Result<Duration, String> {
        if self.url().is_none() && self.file.is_none() {
            return Err("export: give the export's `url` or `file`".into());
        }
        Ok(self.refresh)
    }

    /// The URL, when one is set (`${APP_PRODUCT_EXPORT_URL:-}` may leave it empty).
    fn url(&self) -> Option<&str> {
        self.url.as_deref().map(str::trim).filter(|u| !u.is_empty())
    }
}

struct Inputs {
    export: Export,
    hotels: BusproHotels,
    loaded_at: Instant,
}

/// A catalog and the mirror generation it was built from.
struct Built {
    catalog: Arc<TripCatalog>,
    generation: u64,
}

struct Progress {
    inputs: Option<Arc<Inputs>>,
    /// When reading the export last failed: it is tried again after [`RETRY_EXPORT`], not on
    /// every tick.
    failed_at: Option<Instant>,
    /// The generation the last build saw, for the once-per-run report.
    generation: Option<u64>,
}

/// Why no catalog can answer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum NotReady {
    /// The content mirror has not been filled yet and the first sync may still be under way:
    /// "try again in a few seconds", not "no trips".
    Loading,
    /// The mirror was still empty [`FIRST_SYNC_GRACE`] after start: the first sync failed or
    /// never ran (schedule disabled, stdio serving).
    NotSynced,
    /// The export or the mirror could not be read (logged).
    Unavailable,
}

/// The trip catalog, rebuilt whenever the content mirror changes and re-read from the export
/// every `refresh`.
///
/// The rule it keeps: no call is answered from a catalog older than a mirror change this process
/// can know of. Each call compares the mirror's generation (one small read) with the one its
/// catalog was built from and waits for the rebuild when they differ; a watcher rebuilds as soon
/// as a sync (in this process or `concierge sync`) moves the generation, so calls seldom wait.
/// The read is skipped while the store's [change stamp](ContentStore::change_stamp) stands where
/// the last read found it (and the last read is under [`RECHECK`] old): a read per call, through
/// SQLite's worker thread, was a third of `search_trips`' CPU under 32 clients.
/// The export is fetched by the watcher alone and outside the build lock: a call never waits for
/// a slow export.
pub struct CatalogHandle {
    config: ExportConfig,
    refresh: Duration,
    store: Arc<dyn ContentStore>,
    http: reqwest::Client,
    opened: Instant,
    /// When a read of the mirror's generation last found the catalog current, and the store's
    /// change stamp just before that read.
    confirmed: std::sync::Mutex<Option<(Instant, Option<ChangeStamp>)>>,
    current: RwLock<Option<Arc<Built>>>,
    /// Held while building: one rebuild at a time, and callers that need it wait for it.
    progress: tokio::sync::Mutex<Progress>,
}

impl CatalogHandle {
    /// Builds the catalog from the persisted mirror before returning (a restart serves at once),
    /// and starts the watcher that rebuilds it when the mirror or the export changes.
    pub async fn open(
        config: ExportConfig,
        store: Arc<dyn ContentStore>,
    ) -> Result<Arc<Self>, String> {
        let refresh = config.check()?;
        let http = reqwest::Client::builder()
            .timeout(Duration::from_secs(30))
            .redirect(reqwest::redirect::Policy::none())
            .build()
            .map_err(|e| e.to_string())?;
        let handle = Arc::new(Self {
            config,
            refresh,
            store,
            http,
            opened: Instant::now(),
            confirmed: std::sync::Mutex::new(None),
            current: RwLock::new(None),
            progress: tokio::sync::Mutex::new(Progress {
                inputs: None,
                failed_at: None,
                generation: None,
            }),
        });
        // The export and the mirror's records are read side by side: start-up waits for the slower.
        let mirror = async {
            let state = handle.store.state().await.ok()?;
            let records = handle.store.records().await.ok()?;
            Some((state, records))
        };
        let ((), mirror) = tokio::join!(handle.read_export(), mirror);
        handle.rebuild_from(true, mirror).await;
        let watched = Arc::downgrade(&handle);
        tokio::spawn(async move {
            let mut tick = tokio::time::interval(RECHECK);
            tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
            loop {
                tick.tick().await;
                let Some(handle) = watched.upgrade() else {
                    return; // the tools are gone
                };
                if handle.export_due().await {
                    handle.read_export().await;
                    handle.rebuild(true).await;
                } else {
                    handle.rebuild(false).await;
                }
            }
        });
        Ok(handle)
    }

    /// The catalog as of the mirror now: rebuilt first when the mirror changed since it was
    /// built. `Err` while nothing can answer.
    pub async fn get(&self) -> Result<Arc<TripCatalog>, NotReady> {
        // Stamped before the read: a write after this moves the stamp for the next call.
        let stamp = self.store.change_stamp();
        if self.unchanged_since_confirmed(&stamp) {
            return self.ready();
        }
        match self.store.state().await {
            Ok(state) => {
                if self.built_generation() != Some(state.generation) {
                    self.rebuild(false).await;
                }
                if self.built_generation() == Some(state.generation) {
                    *self.confirmed.lock().unwrap_or_else(|p| p.into_inner()) =
                        Some((Instant::now(), stamp));
                }
            }
            // The mirror cannot be read: the catalog built from it last is the best answer.
            Err(error) => tracing::error!(%error, "trip catalog: cannot read the content mirror"),
        }
        self.ready()
    }

    /// Whether the store's stamp stands where it stood when a read last found the catalog
    /// current (under [`RECHECK`] ago). A store without a stamp is read every time.
    fn unchanged_since_confirmed(&self, stamp: &Option<ChangeStamp>) -> bool {
        let confirmed = self.confirmed.lock().unwrap_or_else(|p| p.into_inner());
        match (stamp, confirmed.as_ref()) {
            (Some(stamp), Some((at, Some(seen)))) => stamp == seen && at.elapsed() < RECHECK,
            _ => false,
        }
    }

    /// Whether the catalog can answer (for `/health`), without rebuilding.
    pub fn ready(&self) -> Result<Arc<TripCatalog>, NotReady> {
        let current = self.current.read().unwrap_or_else(|p| p.into_inner());
        match current.as_ref() {
            // Generation 0: no sync has ever put a document into the mirror.
            Some(built) if built.generation == 0 => {
                if self.opened.elapsed() < FIRST_SYNC_GRACE {
                    Err(NotReady::Loading)
                } else {
                    Err(NotReady::NotSynced)
                }
            }
            Some(built) => Ok(built.catalog.clone()),
            None => Err(NotReady::Unavailable),
        }
    }

    /// The last catalog built, whether or not it can answer yet (a mirror never filled still
    /// joins nothing): what the export alone decides, for tests and diagnostics.
    pub fn built(&self) -> Option<Arc<TripCatalog>> {
        let current = self.current.read().unwrap_or_else(|p| p.into_inner());
        current.as_ref().map(|b| b.catalog.clone())
    }

    fn built_generation(&self) -> Option<u64> {
        let current = self.current.read().unwrap_or_else(|p| p.into_inner());
        current.as_ref().map(|b| b.generation)
    }

    /// Whether the export is to be read again: its refresh is due, and a failed read is not too
    /// recent.
    async fn export_due(&self) -> bool {
        let progress = self.progress.lock().await;
        let stale = progress
            .inputs
            .as_ref()
            .is_none_or(|i| i.loaded_at.elapsed() >= self.refresh);
        let retry = RETRY_EXPORT.min(self.refresh);
        stale && progress.failed_at.is_none_or(|at| at.elapsed() >= retry)
    }

    /// Reads the export and BusPro's hotels, without holding the build lock; a failure keeps the
    /// last good inputs.
    async fn read_export(&self) {
        let started = Instant::now();
        let read = self.inputs().await;
        tracing::debug!(
            ms = started.elapsed().as_millis() as u64,
            "trip catalog: export read"
        );
        let mut progress = self.progress.lock().await;
        match read {
            Ok(inputs) => {
                progress.inputs = Some(Arc::new(inputs));
                progress.failed_at = None;
            }
            Err(error) => {
                progress.failed_at = Some(Instant::now());
                tracing::error!(%error, "trip catalog: refresh failed; keeping the last good catalog");
            }
        }
    }

    /// Rebuilds from the inputs at hand when the mirror's generation is not the one built (any
    /// change, also a mirror that was reset), or always when `inputs_changed`. The generation is
    /// read under the lock, so callers that queued behind a rebuild find it done.
    async fn rebuild(&self, inputs_changed: bool) {
        self.rebuild_from(inputs_changed, None).await;
    }

    /// [`rebuild`](Self::rebuild), from the mirror's state and records when already read.
    async fn rebuild_from(
        &self,
        inputs_changed: bool,
        mut read: Option<(SyncState, Vec<Document>)>,
    ) {
        let mut progress = self.progress.lock().await;
        let state = match &read {
            Some((state, _)) => Ok(state.clone()),
            None => self.store.state().await,
        };
        let state = match state {
            Ok(state) => state,
            Err(error) => {
                tracing::error!(%error, "trip catalog: cannot read the content mirror");
                return;
            }
        };
        let generation = state.generation;
        if !inputs_changed && self.built_generation() == Some(generation) {
            return;
        }
        let Some(inputs) = progress.inputs.clone() else {
            return; // no export read yet: nothing to build from
        };
        let started = Instant::now();
        let records = match read.take() {
            Some((_, records)) => Ok(records),
            None => self.store.records().await,
        };
        let docs = match records {
            Ok(docs) => docs,
            Err(error) => {
                tracing::error!(%error, "trip catalog: cannot read the content mirror");
                return;
            }
        };
        // "After a complete run that changed something": once per such run, not per rebuild.
        let report_unmatched = state.completed_generation == Some(generation)
            && progress.generation != Some(generation);
        progress.generation = Some(generation);
        tracing::debug!(
            records = docs.len(),
            ms = started.elapsed().as_millis() as u64,
            "trip catalog: records read"
        );
        let built = tokio::task::spawn_blocking(move || {
            TripCatalog::build(&inputs.export, &inputs.hotels, &docs)
        })
        .await;
        match built {
            Ok(catalog) => {
                if report_unmatched && !catalog.unmatched.is_empty() {
                    tracing::warn!(codes = %catalog.unmatched.join(", "), "Content feed: unmatched codes");
                }
                tracing::info!(rows = catalog.rows.len(), generation, data_as_of = %catalog.data_as_of, ms = started.elapsed().as_millis() as u64, "trip catalog loaded");
                *self.current.write().unwrap_or_else(|p| p.into_inner()) = Some(Arc::new(Built {
                    catalog: Arc::new(catalog),
                    generation,
                }));
            }
            Err(error) => tracing::error!(%error, "trip catalog: build failed"),
        }
    }

    async fn inputs(&self) -> Result<Inputs, String> {
        let export = match (self.config.url(), &self.config.file) {
            (Some(url), _) => self.fetch(url, self.config.token.as_deref()).await?,
            (_, Some(file)) => tokio::fs::read(file)
                .await
                .map_err(|e| format!("{}: {e}", file.display()))?,
            (None, None) => return Err("no export configured".into()),
        };
        // Off the runtime's workers: a large export takes a good part of a second to parse, and
        // calls on the same worker would wait for it at every refresh.
        let export = tokio::task::spawn_blocking(move || Export::parse(&export))
            .await
            .map_err(|e| format!("parsing the export: {e}"))??;
        let hotels = if self.config.hotels.starts_with("http://")
            || self.config.hotels.starts_with("https://")
        {
            self.fetch(&self.config.hotels, None).await?
        } else {
            tokio::fs::read(&self.config.hotels)
                .await
                .map_err(|e| format!("{}: {e}", self.config.hotels))?
        };
        let hotels = BusproHotels::parse(&String::from_utf8_lossy(&hotels))?;
        Ok(Inputs {
            export,
            hotels,
            loaded_at: Instant::now(),
        })
    }

    async fn fetch(&self, url: &str, token: Option<&str>) -> Result<Vec<u8>, String> {
        let mut request = self.http.get(url);
        if let Some(token) = token.filter(|t| !t.is_empty()) {
            request = request.bearer_auth(token);
        }
        let call = concierge_core::observe::UpstreamCall::start("product_export", "GET", url);
        for (name, value) in call.headers() {
            request = request.header(name, value);
        }
        let response = request
            .send()
            .await
            .map_err(|e| format!("export request failed: {}", e.without_url()))?;
        call.finish(Some(response.status().as_u16()));
        if !response.status().is_success() {
            return Err(format!(
                "export answered HTTP {}",
                response.status().as_u16()
            ));
        }
        let body = response
            .bytes()
            .await
            .map_err(|e| format!("export body: {}", e.without_url()))?;
        Ok(body.to_vec())
    }
}
