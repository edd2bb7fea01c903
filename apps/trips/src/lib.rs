//! The ski-trip operator's chatbot server (seed `ski-trips-chatbot-mcp.md`).
//!
//! Part 1, here: the TYPO3 content mirror — [`content::sync`] keeps it polite and robust,
//! [`content::search`] answers `search_content` in German, [`tools`] exposes it. The trip catalog
//! (`search_trips`, `get_trip`) reads the same documents for names.
//!
//! What the binary needs: [`build`] (the tools), [`commands`] (its `sync` and `check-freshness`), and
//! [`scheduler`] (the background job `serve` runs).

pub mod catalog;
pub mod commands;
pub mod content;
pub mod tools;
pub mod trip_tools;

use std::sync::Arc;
use std::time::Duration;

use concierge_core::ToolSet;
use serde::Deserialize;

use content::clock::{Clock, SystemClock};
use content::schedule::{Freshness, Job, ScheduleConfig};
use content::search::ContentIndex;
use content::store::{ContentStore, SqlStore};
use content::sync::{FeedSettings, RunOptions, SLOT, SyncReport, Syncer};

/// `[apps.trips]`.
#[derive(Debug, Clone, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct TripsConfig {
    /// The content mirror: a SQLite file, or a `postgres://` URL — the deployment's shared
    /// database, where several instances search one mirror and one sync serves them all.
    pub database: String,
    pub feed: FeedConfig,
    #[serde(default)]
    pub schedule: ScheduleConfig,
    /// The booking system's product export and BusPro's hotel names (the trip catalog).
    #[serde(default)]
    pub export: Option<catalog::load::ExportConfig>,
    /// The site's travel period presets (`chatbot_travel_periods`); keep them in step with
    /// TYPO3's search configuration each season.
    #[serde(default)]
    pub periods: Vec<trip_tools::Period>,
    /// "Today" for upcoming dates and expired periods (sample data and tests); the real date in
    /// Europe/Berlin when unset.
    #[serde(default)]
    pub as_of: Option<chrono::NaiveDate>,
    /// `search_content`'s own words beside its German ski-travel defaults: groups of words a
    /// customer uses for one thing (`[["Skipass", "Liftkarte"], ["Rodeln", "Schlitten"]]`),
    /// one word each.
    #[serde(default)]
    pub synonyms: Vec<Vec<String>>,
}

/// `[apps.trips.feed]`: `APP_CMS_API_BASE_URL`, `APP_CMS_API_KEY`.
#[derive(Debug, Clone, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct FeedConfig {
    /// The TYPO3 content feed's base URL (`APP_CMS_API_BASE_URL`).
    pub base_url: String,
    /// The feed's API key (`APP_CMS_API_KEY`); never logged.
    pub api_key: String,
    /// A request slower than this is a timeout (the load rules say 10 s).
    #[schemars(with = "concierge_core::written::Duration")]
    #[serde(default = "ten_seconds", with = "humantime_serde")]
    pub timeout: Duration,
}

fn ten_seconds() -> Duration {
    Duration::from_secs(10)
}

impl TripsConfig {
    fn feed_settings(&self) -> Result<FeedSettings, String> {
        let timeout = self.feed.timeout;
        reqwest::Url::parse(&self.feed.base_url)
            .map_err(|e| format!("feed.base_url: `{}` is not a URL: {e}", self.feed.base_url))?;
        // The file lock of a mirror on this host (a shared one locks its runs in the database).
        let mut lock = std::ffi::OsString::from(&self.database);
        lock.push(".sync.lock");
        Ok(FeedSettings {
            base_url: self.feed.base_url.clone(),
            api_key: self.feed.api_key.clone(),
            timeout,
            lock_path: lock.into(),
        })
    }

    /// Where a mirror on this host keeps its search index, one directory per generation; a
    /// shared mirror's instances build theirs in memory.
    fn index_dir(&self) -> Option<std::path::PathBuf> {
        (!self.is_shared()).then(|| format!("{}.index", self.database).into())
    }

    fn is_shared(&self) -> bool {
        concierge_core::postgres::is_url(&self.database)
    }

    async fn store(&self) -> Result<Arc<dyn ContentStore>, String> {
        if self.is_shared() {
            let store = SqlStore::shared(&self.database).map_err(|e| format!("database: {e}"))?;
            return Ok(Arc::new(store));
        }
        let store = SqlStore::open(std::path::Path::new(&self.database))
            .await
            .map_err(|e| format!("database: {e}"))?;
        Ok(Arc::new(store))
    }
}

/// The tools, over whatever the mirror holds now (a sync fills it in the background).
pub async fn build(config: &TripsConfig) -> Result<ToolSet, String> {
    config.feed_settings()?;
    config.schedule.check()?;
    for period in &config.periods {
        if period.to < period.from {
            return Err(format!("periods: `{}` ends before it starts", period.name));
        }
    }
    let store = config.store().await?;
    // The index and the catalog load side by side: start-up waits for the slower, not the sum.
    let catalog = async {
        match &config.export {
            Some(export) => catalog::load::CatalogHandle::open(export.clone(), store.clone())
                .await
                .map(Some),
            None => Ok(None),
        }
    };
    let index = async {
        let lexicon = content::words::lexicon(&config.synonyms)?;
        ContentIndex::open(store.clone(), config.index_dir())
            .await
            .map(|index| index.with_lexicon(lexicon))
            .map_err(|e| e.to_string())
    };
    let (index, catalog) = tokio::join!(index, catalog);
    let (index, catalog) = (Arc::new(index?), catalog?);
    let mut tools = tools::content_tools(index.clone(), store.clone());
    let mut health = None;
    let store_for_readings = store.clone();
    let mut catalog_for_readings = None;
    if let Some(catalog) = catalog {
        health = Some(catalog_health(&catalog));
        catalog_for_readings = Some(Arc::downgrade(&catalog));
        let settings = Arc::new(trip_tools::TripSettings {
            periods: config.periods.clone(),
            as_of: config.as_of,
        });
        tools.extend(trip_tools::trip_tools(catalog, index, settings));
    }
    let for_action = config.clone();
    let set = ToolSet::new("trips", &concierge_core::messages::GERMAN, tools)
        .with_readings(readings(store_for_readings, catalog_for_readings))
        .with_action(concierge_core::Action {
            name: "sync",
            label: "Sync the content now",
            // A delta run as the schedule makes one: the lock, the kill switch and the daytime
            // page budget hold.
            run: Arc::new(move || {
                let config = for_action.clone();
                Box::pin(async move {
                    let report = sync(&config, RunOptions::default()).await?;
                    Ok(serde_json::to_string(&report).unwrap_or_default())
                })
            }),
        });
    Ok(match health {
        Some(check) => set.with_health(check),
        None => set,
    })
}

/// What an operator graphs and alerts on (`concierge_trips_*`): the seed's freshness rule
/// (`check-freshness --max-age 150` minutes) is `sync_manifest_age_seconds > 9000`.
fn readings(
    store: Arc<dyn ContentStore>,
    catalog: Option<std::sync::Weak<catalog::load::CatalogHandle>>,
) -> concierge_core::Readings {
    use concierge_core::observe::Reading;
    Arc::new(move || {
        let store = store.clone();
        let catalog = catalog.clone();
        Box::pin(async move {
            let mut readings = Vec::new();
            let now = chrono::Utc::now();
            let stamp = |t: Option<chrono::DateTime<chrono::Utc>>| {
                t.map(|t| t.timestamp() as f64).unwrap_or(0.0)
            };
            if let Ok(state) = store.state().await {
                if let Some(at) = state.last_good_manifest_at {
                    readings.push(Reading::new(
                        "sync_manifest_age_seconds",
                        "Seconds since the content sync last read a valid manifest.",
                        (now - at).num_seconds().max(0) as f64,
                    ));
                }
                let stamps = [
                    (
                        "sync_last_good_manifest_timestamp_seconds",
                        "When the content sync last read a valid manifest (0: never).",
                        stamp(state.last_good_manifest_at),
                    ),
                    (
                        "sync_paused_until_timestamp_seconds",
                        "TYPO3's kill switch: no content sync before this time (0: not paused).",
                        stamp(state.paused_until),
                    ),
                    (
                        "sync_last_run_started_timestamp_seconds",
                        "When the last content sync run began, on any instance (0: never).",
                        stamp(state.last_run_started_at),
                    ),
                    (
                        "sync_generation",
                        "The mirror's generation: it moves whenever documents change.",
                        state.generation as f64,
                    ),
                ];
                for (name, help, value) in stamps {
                    readings.push(Reading::new(name, help, value));
                }
            }
            let last = content::sync::LAST_RUN
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .clone();
            if let Some(last) = last {
                for (result, count) in [
                    ("fetched", last.pages_fetched),
                    ("failed", last.pages_failed),
                    ("empty", last.pages_empty),
                    ("left", last.pages_left as u32),
                ] {
                    readings.push(
                        Reading::new(
                            "sync_last_run_pages",
                            "Pages of this instance's last content sync run, by result.",
                            count as f64,
                        )
                        .label("result", result),
                    );
                }
            }
            if let Some(catalog) = catalog.as_ref().and_then(|c| c.upgrade())
                && let Some(built) = catalog.built()
            {
                let unmatched = built.unmatched.len();
                readings.push(Reading::new(
                    "catalog_unmatched_codes",
                    "Feed codes with no product in the booking export (or the reverse).",
                    unmatched as f64,
                ));
            }
            readings
        })
    })
}

/// `/health` for the trips: `starting` until the catalog has loaded from a filled mirror.
fn catalog_health(catalog: &Arc<catalog::load::CatalogHandle>) -> concierge_core::HealthCheck {
    let catalog = Arc::downgrade(catalog);
    Arc::new(move || {
        use crate::catalog::load::NotReady;
        use concierge_core::Health;
        let state = match catalog.upgrade().map(|c| c.ready().map(|_| ())) {
            Some(Ok(())) | None => Health::Ok,
            Some(Err(NotReady::Loading)) => {
                Health::Starting("the trip catalog is still loading (first content sync)".into())
            }
            Some(Err(NotReady::NotSynced)) => {
                Health::Down("the content mirror has never been synced".into())
            }
            Some(Err(NotReady::Unavailable)) => {
                Health::Down("the product export or the content mirror could not be read".into())
            }
        };
        Box::pin(std::future::ready(state))
    })
}

/// One sync run (`concierge sync`).
pub async fn sync(config: &TripsConfig, options: RunOptions) -> Result<SyncReport, String> {
    let syncer = Syncer::new(
        config.feed_settings()?,
        config.store().await?,
        Arc::new(SystemClock),
    )?;
    syncer.run(options).await.map_err(|e| e.to_string())
}

/// `concierge check-freshness`: is the last good manifest younger than `max_age`?
pub async fn check_freshness(config: &TripsConfig, max_age: Duration) -> Result<Freshness, String> {
    let store = config.store().await?;
    content::schedule::freshness(store.as_ref(), SystemClock.now(), max_age)
        .await
        .map_err(|e| e.to_string())
}

/// The built-in schedule, for `serve`: `None` when it is disabled.
pub async fn scheduler(
    config: &TripsConfig,
) -> Result<Option<impl std::future::Future<Output = ()> + Send + 'static>, String> {
    if !config.schedule.enabled {
        return Ok(None);
    }
    let weekly = config.schedule.check()?;
    let store = config.store().await?;
    let clock: Arc<dyn Clock> = Arc::new(SystemClock);
    let syncer = Syncer::new(config.feed_settings()?, store.clone(), clock.clone())?;
    let schedule = config.schedule.clone();
    // Every instance sharing the mirror runs this schedule: a run whose slot another instance
    // took does nothing (one instance alone never meets its own runs in a slot).
    let slot = config.is_shared().then_some(SLOT);
    let http = reqwest::Client::builder()
        .timeout(Duration::from_secs(10))
        .build()
        .map_err(|e| e.to_string())?;
    Ok(Some(async move {
        let delta = |options| {
            let syncer = &syncer;
            async move {
                if let Err(error) = syncer.run(options).await {
                    tracing::error!(%error, "content sync failed");
                }
            }
        };
        let scheduled = RunOptions {
            slot,
            ..RunOptions::default()
        };
        if schedule.at_start {
            delta(scheduled).await;
        }
        loop {
            let (at, job) = schedule.next(weekly, clock.now());
            let wait = (at - clock.now()).to_std().unwrap_or_default();
            clock.sleep(wait).await;
            match job {
                Job::Delta => delta(scheduled).await,
                Job::Refresh => {
                    delta(RunOptions {
                        refresh: true,
                        ..scheduled
                    })
                    .await
                }
                Job::Freshness => {
                    content::schedule::check_and_alert(
                        store.as_ref(),
                        clock.now(),
                        &schedule,
                        &http,
                    )
                    .await;
                }
            }
        }
    }))
}

/// The kind `trips`: the ski-trip catalog, trip search and the content mirror with its sync
/// schedule (seed: ski-trips-chatbot-mcp.md).
pub struct Trips;

impl concierge_core::Kind for Trips {
    const NAME: &'static str = "trips";
    type Settings = TripsConfig;

    async fn build(settings: TripsConfig) -> Result<concierge_core::ToolSet, String> {
        build(&settings).await
    }

    /// The content sync on its schedule, when the section enables one.
    fn background() -> Option<concierge_core::BackgroundJob<TripsConfig>> {
        Some(|settings| {
            Box::pin(async move {
                Ok(match scheduler(&settings).await? {
                    Some(job) => Box::pin(job) as concierge_core::BoxFuture<'static, ()>,
                    None => Box::pin(std::future::ready(())),
                })
            })
        })
    }
}
