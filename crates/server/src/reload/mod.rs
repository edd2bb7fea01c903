//! Changing a running deployment: the config read again, checked as `concierge check` checks
//! it, and — only when nothing is wrong — put in place of the running one in one step.
//!
//! A [`Deployment`] holds the running [`Platform`] and the routes built from it. A reload
//! builds the next platform beside the running one (carrying over its state and every part
//! whose config did not change, see `platform/carry.rs`), and on success lets it succeed the
//! running one: endpoints that stay are adopted in place (sessions go on and hear
//! `list_changed`), then the routes are swapped. A call already running finishes on what it
//! started with. What cannot change without a restart is pinned to the running value and named.
//! The triggers (SIGHUP, a watcher, `concierge reload`) are in `triggers.rs`.

mod settling;
pub mod triggers;

use std::sync::{Arc, Mutex};
use std::time::Instant;

use arc_swap::ArcSwap;
use axum::Router;
use serde::Serialize;
use tokio_util::sync::CancellationToken;

use crate::config::{Config, ConfigError};
use crate::launch::Source;
use crate::platform::Platform;

pub use crate::connections::Routes;

/// Reads the environment (token variables, secrets) as the process has it now.
pub type Env = Arc<dyn Fn(&str) -> Option<String> + Send + Sync>;

/// How the last attempt to change the config went, for `/health`, the ops console, the log and
/// `concierge reload`.
#[derive(Debug, Clone, Serialize)]
pub struct Status {
    /// 0 for the config the server started with; one more for every applied reload.
    pub generation: u64,
    /// `started`, `applied` or `rejected`.
    pub status: &'static str,
    /// Why the last attempt was rejected (the running config stays).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// Keys the last applied change could not change without a restart (the rest applied).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub needs_restart: Vec<String>,
    /// Attempts so far (applied or rejected): what `concierge reload` waits to see grow.
    pub attempts: u64,
    /// How long the last attempt took, from reading the file to serving.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub took_ms: Option<u64>,
}

/// The running deployment, and what it is reloaded from.
pub struct Deployment {
    current: ArcSwap<Platform>,
    routes: Routes,
    /// The `[metrics] listen` listener's routes, when it has its own.
    pub(crate) metrics_routes: Routes,
    source: Option<Source>,
    env: Env,
    status: Mutex<Status>,
    /// Where each attempt's outcome is written for `concierge reload` (set with the pid file).
    pub(crate) status_file: std::sync::OnceLock<std::path::PathBuf>,
    one_at_a_time: tokio::sync::Mutex<()>,
    /// The config and the files it names as the last reload (or the start) found them; the
    /// watcher follows it to learn of files a reload named for the first time.
    found: tokio::sync::watch::Sender<triggers::Stamps>,
    /// The config schema of this binary's kinds, compiled once (ahead, on a spare thread).
    schema: std::sync::OnceLock<Option<crate::config::schema::Compiled>>,
    /// The server's stop: every endpoint's sessions end with it.
    stop: CancellationToken,
}

impl Deployment {
    /// `platform` as the server starts it; `source` is where a reload reads the config again
    /// (none: it cannot be reloaded).
    pub fn new(platform: Platform, source: Option<Source>, env: Env) -> Arc<Self> {
        let deployment = Arc::new(Self {
            current: ArcSwap::from_pointee(platform),
            routes: Arc::new(ArcSwap::from_pointee(Router::new())),
            metrics_routes: Arc::new(ArcSwap::from_pointee(Router::new())),
            source,
            env,
            status: Mutex::new(Status {
                generation: 0,
                status: "started",
                error: None,
                needs_restart: Vec::new(),
                attempts: 0,
                took_ms: None,
            }),
            status_file: std::sync::OnceLock::new(),
            one_at_a_time: tokio::sync::Mutex::new(()),
            found: tokio::sync::watch::Sender::new(triggers::Stamps::new()),
            schema: std::sync::OnceLock::new(),
            stop: CancellationToken::new(),
        });
        deployment.mount();
        // The schema compiled ahead, on a spare thread: the first reload takes no longer than
        // the next.
        if deployment.source.is_some()
            && let Ok(runtime) = tokio::runtime::Handle::try_current()
        {
            let me = Arc::downgrade(&deployment);
            drop(runtime.spawn_blocking(move || {
                if let Some(me) = me.upgrade() {
                    me.schema();
                }
            }));
        }
        deployment
    }

    /// The config schema of this binary's kinds, compiled once.
    fn schema(&self) -> Option<&crate::config::schema::Compiled> {
        self.schema
            .get_or_init(|| {
                crate::config::schema::Compiled::new(&self.current().apps.config_schema())
            })
            .as_ref()
    }

    /// The platform serving now.
    pub fn current(&self) -> Arc<Platform> {
        self.current.load_full()
    }

    pub fn routes(&self) -> Routes {
        self.routes.clone()
    }

    pub fn stop(&self) -> &CancellationToken {
        &self.stop
    }

    pub fn status(&self) -> Status {
        self.status
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clone()
    }

    /// Remembers the files as a reload (or the start) found them.
    fn found(&self, stamps: triggers::Stamps) {
        self.found.send_replace(stamps);
    }

    /// The files as the last reload (or the start) found them.
    fn last_found(&self) -> triggers::Stamps {
        self.found.borrow().clone()
    }

    /// Where the config is read from, when it can be reloaded.
    pub fn source(&self) -> Option<&Source> {
        self.source.as_ref()
    }

    /// Builds the routes of the current platform and serves them from now on.
    fn mount(self: &Arc<Self>) {
        let platform = self.current();
        let me = Arc::downgrade(self);
        let status: crate::health::ConfigStatus = {
            let me = me.clone();
            Arc::new(move || {
                me.upgrade()
                    .map(|d| serde_json::to_value(d.status()).unwrap_or_default())
                    .unwrap_or_default()
            })
        };
        let reload = concierge_core::Action {
            name: "reload",
            label: "Reload the config",
            run: Arc::new(move || {
                let me = me.clone();
                Box::pin(async move {
                    let deployment = me.upgrade().ok_or("the server is stopping")?;
                    match deployment.reload("ops console").await {
                        Ok(status) => Ok(format!(
                            "applied: generation {} in {} ms",
                            status.generation,
                            status.took_ms.unwrap_or(0)
                        )),
                        Err(status) => Err(format!(
                            "rejected, nothing changed: {}",
                            status.error.unwrap_or_default()
                        )),
                    }
                })
            }),
        };
        let ops = crate::ops::Extras {
            actions: if self.source.is_some() {
                vec![("config".to_string(), reload)]
            } else {
                Vec::new()
            },
            config_status: Some(status),
        };
        self.routes
            .store(Arc::new(crate::serve::app(&platform, &self.stop, ops)));
        self.metrics_routes
            .store(Arc::new(crate::serve::metrics_router(&platform)));
    }

    /// Reads the config again and, when it is right, serves it; `why` names the trigger for the
    /// log. One reload at a time: a second waits for the first.
    pub async fn reload(self: &Arc<Self>, why: &str) -> Result<Status, Status> {
        let _one = self.one_at_a_time.lock().await;
        // The files as they are before they are read: a change made while the reload runs
        // differs from these, and the watcher reloads again.
        let before = self
            .source
            .as_ref()
            .map(|source| triggers::stamps(&source.path, self));
        let outcome = self.reload_once(why).await;
        if let (Some(mut found), Some(source)) = (before, &self.source) {
            // Files the new config names for the first time, as they are now.
            for (file, stamp) in triggers::stamps(&source.path, self) {
                found.entry(file).or_insert(stamp);
            }
            self.found(found);
        }
        if let Some(path) = self.status_file.get() {
            triggers::write_status(path, outcome.as_ref().unwrap_or_else(|s| s));
        }
        outcome
    }

    async fn reload_once(self: &Arc<Self>, why: &str) -> Result<Status, Status> {
        let began = Instant::now();
        let outcome = self.attempt().await;
        let took_ms = began.elapsed().as_millis() as u64;
        let mut status = self.status.lock().unwrap_or_else(|p| p.into_inner());
        status.attempts += 1;
        status.took_ms = Some(took_ms);
        if let Some(metrics) = crate::telemetry::metrics::get() {
            metrics.config_reload(if outcome.is_ok() {
                "applied"
            } else {
                "rejected"
            });
        }
        match outcome {
            Ok((needs_restart, retired)) => {
                status.generation += 1;
                status.status = "applied";
                status.error = None;
                status.needs_restart = needs_restart;
                tracing::info!(
                    trigger = why,
                    generation = status.generation,
                    took_ms,
                    apps_stopped = ?retired.apps,
                    endpoints_removed = ?retired.endpoints,
                    sessions_closed = retired.sessions_closed,
                    "config reloaded"
                );
                for key in &status.needs_restart {
                    tracing::warn!(key = %key, "config: this change needs a restart; the running value stays");
                }
                Ok(status.clone())
            }
            Err(problems) => {
                let error = problems
                    .iter()
                    .map(ToString::to_string)
                    .collect::<Vec<_>>()
                    .join("; ");
                tracing::error!(trigger = why, %error, "config rejected; the running one stays");
                status.status = "rejected";
                status.error = Some(error);
                Err(status.clone())
            }
        }
    }

    /// Read, pin, build, check; then succeed the running platform and swap the routes — all of
    /// it on a thread of its own: parsing and validating a large file, compiling hundreds of
    /// schemas and freeing the replaced platform is CPU work that would otherwise hold a worker
    /// the calls under way need (the scheduler shares the cores). One blocking task a reload, so
    /// reloads add no threads to the blocking pool.
    async fn attempt(
        self: &Arc<Self>,
    ) -> Result<(Vec<String>, crate::platform::Retired), Vec<ConfigError>> {
        let runtime = tokio::runtime::Handle::current();
        let me = self.clone();
        tokio::task::spawn_blocking(move || runtime.block_on(me.attempt_beside_the_calls()))
            .await
            .map_err(|_| {
                vec![ConfigError::new(
                    "",
                    "building the new config failed; the log says why",
                )]
            })?
    }

    async fn attempt_beside_the_calls(
        self: &Arc<Self>,
    ) -> Result<(Vec<String>, crate::platform::Retired), Vec<ConfigError>> {
        let Some(source) = &self.source else {
            return Err(vec![ConfigError::new(
                "",
                "this server was not started from a config file",
            )]);
        };
        let previous = self.current();
        let text = source.text()?;
        // What `concierge check` reads against the schema (also sections no endpoint serves), a
        // reload does too: the two never disagree about a file.
        if let Some(schema) = self.schema() {
            let problems = schema.problems(&text);
            if !problems.is_empty() {
                return Err(problems);
            }
        }
        let mut config = source.parse(&text, &*self.env)?;
        let needs_restart = pin(&mut config, &previous.config);
        let mut next =
            Platform::build_next(config, previous.apps.clone(), &*self.env, Some(&previous))
                .await?;
        if let Err(problems) = check(&next, &previous).await {
            // What the rejected platform started of its own (a live check connects an
            // upstream) ends with it.
            next.stop_new_instances(&previous);
            return Err(problems);
        }
        // From here the new config is committed: a job that cannot start is said, and the
        // rest applies.
        let retired = next.succeed(&previous).await;
        if let Err(error) = next.start_background(Some(&previous)).await {
            tracing::error!(%error, "a background job of the new config did not start");
        }
        previous.running.abort_jobs();
        next.start_tool_updates().await;
        // The last handles on the old platform and its routes (a SQL instance of hundreds of
        // statements, an index) may be these, freed on this thread as they are replaced.
        self.current.store(Arc::new(next));
        self.mount();
        Ok((needs_restart, retired))
    }
}

/// `concierge check`'s verdict on a platform a reload built: its warnings are problems, and the
/// live checks of the instances it did not take over run (within their own bounds).
async fn check(next: &Platform, previous: &Platform) -> Result<(), Vec<ConfigError>> {
    let mut problems = next.warnings.clone();
    for (name, check) in &next.live_checks {
        if previous.live_checks.iter().any(|(n, _)| n == name) && next.carried(previous, name) {
            continue;
        }
        let at = format!("apps.{name}");
        problems.extend(
            check()
                .await
                .problems
                .into_iter()
                .map(|p| ConfigError::new(&at, p)),
        );
    }
    if problems.is_empty() {
        Ok(())
    } else {
        Err(problems)
    }
}

/// Sets what only a restart can change back to the running value; returns those keys that
/// differed. The listen addresses are bound sockets; `[state]`, `[writes]` and `[oauth]`'s
/// issuer and stores are the deployment's state (stores, records, keys), which a reload keeps;
/// telemetry and the simulators are started once per process.
/// `[oauth]`'s keys that need new state: whether there is an authorization server at all, its
/// issuer (every token names it), its database, an external issuer, the user directory, the
/// per-peer limits (their counts) and metadata-document clients (their resolver). Scopes,
/// lifetimes, wording, redirect rules and the audit sink reload.
fn pin_oauth(
    new: &mut Option<concierge_oauth::OAuthConfig>,
    old: &Option<concierge_oauth::OAuthConfig>,
) -> Vec<String> {
    use crate::platform::carry_same as same;
    let (Some(new), Some(old)) = (new.as_mut(), old.as_ref()) else {
        if new.is_some() != old.is_some() {
            *new = old.clone();
            return vec!["oauth".to_string()];
        }
        return Vec::new();
    };
    let mut changed = Vec::new();
    macro_rules! keep {
        ($($key:ident),*) => {$(
            if !same(&new.$key, &old.$key) {
                changed.push(concat!("oauth.", stringify!($key)).to_string());
                new.$key = old.$key.clone();
            }
        )*};
    }
    keep!(
        issuer,
        database,
        external,
        users,
        limits,
        client_id_metadata_documents,
        cimd_test_allow_loopback
    );
    changed
}

fn pin(config: &mut Config, running: &Config) -> Vec<String> {
    use crate::platform::carry_same as same;
    let mut changed = Vec::new();
    if config.server.listen != running.server.listen {
        changed.push("server.listen".to_string());
        config.server.listen = running.server.listen.clone();
    }
    if !same(&config.state, &running.state) {
        changed.push("state".to_string());
        config.state = running.state.clone();
    }
    if !same(&config.writes, &running.writes) {
        changed.push("writes".to_string());
        config.writes = running.writes.clone();
    }
    changed.extend(pin_oauth(&mut config.oauth, &running.oauth));
    if !same(&config.metrics.listen, &running.metrics.listen) {
        changed.push("metrics.listen".to_string());
        config.metrics.listen = running.metrics.listen.clone();
    }
    // The listener's caps and timers, and the log's format, are set once when it starts.
    let (new, old) = (&mut config.server, &running.server);
    if new.header_read_timeout != old.header_read_timeout
        || new.keep_alive_timeout != old.keep_alive_timeout
        || new.max_connections != old.max_connections
        || new.max_connections_per_peer != old.max_connections_per_peer
        || new.log_format != old.log_format
    {
        changed.push("server (connection limits, log_format)".to_string());
        new.header_read_timeout = old.header_read_timeout;
        new.keep_alive_timeout = old.keep_alive_timeout;
        new.max_connections = old.max_connections;
        new.max_connections_per_peer = old.max_connections_per_peer;
        new.log_format = old.log_format;
    }
    if config.server.pid_file != running.server.pid_file {
        changed.push("server.pid_file".to_string());
        config.server.pid_file = running.server.pid_file.clone();
    }
    if config.simulators != running.simulators {
        changed.push("simulators".to_string());
        config.simulators = running.simulators.clone();
    }
    changed
}
