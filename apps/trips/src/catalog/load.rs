//! Loading the catalog: the export (URL with an optional bearer token, or a file) and
//! `hotel.xml`, re-read every `refresh` (default 5 min) and whenever the content mirror changes;
//! each new catalog is swapped in whole. A failed refresh keeps the last good catalog.

use std::path::PathBuf;
use std::sync::{Arc, RwLock};
use std::time::{Duration, Instant};

use serde::Deserialize;

use super::TripCatalog;
use super::export::{BusproHotels, Export};
use crate::content::store::ContentStore;

/// How often a call looks whether the mirror or the export is due for a rebuild.
const RECHECK: Duration = Duration::from_secs(2);

/// `[apps.trips.export]`.
#[derive(Debug, Clone, Deserialize)]
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
    #[serde(default = "five_minutes")]
    pub refresh: String,
}

fn five_minutes() -> String {
    "5m".into()
}

impl ExportConfig {
    pub fn check(&self) -> Result<Duration, String> {
        if self.url().is_none() && self.file.is_none() {
            return Err("export: give the export's `url` or `file`".into());
        }
        humantime::parse_duration(&self.refresh).map_err(|e| format!("export.refresh: {e}"))
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

struct Progress {
    checked: Instant,
    generation: Option<u64>,
    inputs: Option<Arc<Inputs>>,
}

pub struct CatalogHandle {
    config: ExportConfig,
    refresh: Duration,
    store: Arc<dyn ContentStore>,
    http: reqwest::Client,
    current: RwLock<Arc<TripCatalog>>,
    progress: tokio::sync::Mutex<Progress>,
}

impl CatalogHandle {
    /// Loads the catalog once. A failure leaves it empty (and logged); later calls try again.
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
            current: RwLock::new(Arc::new(TripCatalog::default())),
            progress: tokio::sync::Mutex::new(Progress {
                checked: Instant::now(),
                generation: None,
                inputs: None,
            }),
        });
        handle.rebuild_if_due(true).await;
        Ok(handle)
    }

    /// The current catalog; starts a rebuild in the background when one is due.
    pub fn get(self: &Arc<Self>) -> Arc<TripCatalog> {
        let due = self
            .progress
            .try_lock()
            .is_ok_and(|p| p.checked.elapsed() >= self.recheck());
        if due {
            let this = self.clone();
            tokio::spawn(async move { this.rebuild_if_due(false).await });
        }
        self.current
            .read()
            .unwrap_or_else(|p| p.into_inner())
            .clone()
    }

    async fn rebuild_if_due(&self, first: bool) {
        let Ok(mut progress) = self.progress.try_lock() else {
            return; // another rebuild is under way
        };
        if !first && progress.checked.elapsed() < self.recheck() {
            return;
        }
        progress.checked = Instant::now();
        let (generation, completed) = match self.store.state().await {
            Ok(state) => (Some(state.generation), state.completed_generation),
            Err(error) => {
                tracing::error!(%error, "trip catalog: cannot read the content mirror");
                return;
            }
        };
        let stale = progress
            .inputs
            .as_ref()
            .is_none_or(|i| i.loaded_at.elapsed() >= self.refresh);
        if stale {
            match self.inputs().await {
                Ok(inputs) => progress.inputs = Some(Arc::new(inputs)),
                Err(error) => {
                    tracing::error!(%error, "trip catalog: refresh failed; keeping the last good catalog")
                }
            }
        } else if generation == progress.generation {
            return;
        }
        let Some(inputs) = progress.inputs.clone() else {
            return;
        };
        let docs = match self.store.documents().await {
            Ok(docs) => docs,
            Err(error) => {
                tracing::error!(%error, "trip catalog: cannot read the content mirror");
                return;
            }
        };
        // "After a complete run that changed something": once per such run, not per rebuild.
        let report_unmatched =
            completed.is_some() && completed == generation && progress.generation != generation;
        progress.generation = generation;
        let built = tokio::task::spawn_blocking(move || {
            TripCatalog::build(&inputs.export, &inputs.hotels, &docs)
        })
        .await;
        match built {
            Ok(catalog) => {
                if report_unmatched && !catalog.unmatched.is_empty() {
                    tracing::warn!(codes = %catalog.unmatched.join(", "), "Content feed: unmatched codes");
                }
                tracing::info!(rows = catalog.rows.len(), data_as_of = %catalog.data_as_of, "trip catalog loaded");
                *self.current.write().unwrap_or_else(|p| p.into_inner()) = Arc::new(catalog);
            }
            Err(error) => tracing::error!(%error, "trip catalog: build failed"),
        }
    }

    /// How often to look: every two seconds, or as often as the export is to be re-read.
    fn recheck(&self) -> Duration {
        RECHECK.min(self.refresh)
    }

    async fn inputs(&self) -> Result<Inputs, String> {
        let export = match (self.config.url(), &self.config.file) {
            (Some(url), _) => self.fetch(url, self.config.token.as_deref()).await?,
            (_, Some(file)) => tokio::fs::read(file)
                .await
                .map_err(|e| format!("{}: {e}", file.display()))?,
            (None, None) => return Err("no export configured".into()),
        };
        let export = Export::parse(&export)?;
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
        let response = request
            .send()
            .await
            .map_err(|e| format!("export request failed: {}", e.without_url()))?;
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
