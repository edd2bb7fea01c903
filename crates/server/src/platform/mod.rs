//! From a [`Config`] and the apps the binary registered to a running set of endpoints.
//!
//! The platform knows apps only by name: an app is either a tool factory ("given my config
//! section, here are my tools") or a protocol-level handler (the conformance fixtures).
//!
//! Building one is a list of steps, each reporting what is wrong with its part of the config and
//! going on with what it could build (so `concierge check` lists every problem in one run):
//! names and tool sets (`tool_sets.rs`), audit sinks, limiters, shared stores and write safety
//! (`stores.rs`), OAuth (`oauth.rs`), then each endpoint with its guard (`endpoints.rs`). The
//! registry of what the binary offers is `apps.rs`.

mod apps;
mod carry;
mod endpoints;
mod live_tools;
mod oauth;
mod stores;
mod tool_sets;

pub use apps::Apps;
use apps::HandlerMount;
pub use carry::Retired;
pub(crate) use carry::same as carry_same;
pub use endpoints::{BuiltEndpoint, Mounted};
pub use oauth::OAuthSetup;

use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::sync::Arc;

use crate::audit::AuditSink;
use crate::config::{Config, ConfigError};

/// Everything `serve` needs, and everything `check` verifies.
pub struct Platform {
    pub config: Config,
    pub apps: Arc<Apps>,
    pub endpoints: Vec<BuiltEndpoint>,
    /// Problems that do not stop the server but make an endpoint refuse (token lists); `check`
    /// treats them as errors, `serve` logs them.
    pub warnings: Vec<ConfigError>,
    sinks: BTreeMap<String, AuditSink>,
    /// The instances' tool sets, by name: what endpoints mount again from when an app's tools
    /// change ([`Self::start_tool_updates`]).
    tool_sets: BTreeMap<String, concierge_core::ToolSet>,
    /// How OAuth endpoints check tokens, when an endpoint uses OAuth.
    pub oauth: Option<Arc<OAuthSetup>>,
    /// The apps' upstream checks, by app name, for `/health`.
    pub health: Vec<(String, concierge_core::HealthCheck)>,
    /// The apps' checks of their systems, by instance name, for `concierge check --live`.
    pub live_checks: Vec<(String, concierge_core::LiveCheck)>,
    /// The shared stores' checks (`redis`, `postgres`), for `/health` and `concierge check`.
    pub stores: Vec<(String, concierge_core::HealthCheck)>,
    /// What the apps report about themselves, by app name, for `/metrics`.
    pub readings: Vec<(String, concierge_core::Readings)>,
    /// What the apps let an operator do from the ops console, by app name.
    pub actions: Vec<(String, concierge_core::Action)>,
    /// Signs who is calling for upstreams that are told (`forward_identity`); its public keys
    /// are served at `/identity/jwks`.
    pub identity: Arc<crate::identity::IdentitySigner>,
    /// Where `/metrics` listens, once `serve` bound `[metrics] listen`.
    pub metrics_addr: std::sync::OnceLock<SocketAddr>,
    /// The deployment's state (stores, write records, session ids, limiters' counts): made
    /// once, kept by every reload.
    kept: carry::Kept,
    /// What runs on the platform's behalf (background jobs, the tool lists it follows), ended
    /// when a reload replaces it.
    pub(crate) running: carry::Running,
}

impl Platform {
    /// What `serve` prints once it listens on `addr`: each endpoint's URL, with a line on how a
    /// client gets in (the demo's token, OAuth discovery, the legacy transport).
    pub fn banner(&self, addr: SocketAddr) -> String {
        let mut banner = format!("concierge listening on http://{addr}\n");
        for endpoint in &self.endpoints {
            let section = &endpoint.section;
            banner.push_str(&format!("  MCP endpoint http://{addr}{}\n", section.path));
            let mut hints = Vec::new();
            if matches!(section.auth, crate::config::AuthSection::Oauth { .. }) {
                hints.push("OAuth 2.1: clients discover the sign-in page from the endpoint".into());
            } else if let Some(hint) = &endpoint.demo_hint {
                hints.push(hint.clone());
            }
            if let Some(legacy) = &section.legacy_sse {
                hints.push(format!("legacy HTTP+SSE transport at {}", legacy.sse));
            }
            for hint in hints {
                banner.push_str(&format!("               {hint}\n"));
            }
        }
        // `health` stays the last line: tests read the banner up to it.
        if let Some(metrics) = self.metrics_addr.get() {
            banner.push_str(&format!("  metrics      http://{metrics}/metrics\n"));
        } else if self.config.metrics.token.is_some() {
            banner.push_str(&format!(
                "  metrics      http://{addr}/metrics (Authorization: Bearer <[metrics] token>)\n"
            ));
        }
        banner.push_str(&format!("  health       http://{addr}/health\n"));
        banner
    }

    /// Builds apps, limiters, audit sinks and endpoints, in the steps of the steps (each
    /// reports what is wrong with its part and goes on, so `check` lists every problem at
    /// once). `env` reads token variables.
    pub async fn build(
        config: Config,
        apps: Apps,
        env: &(dyn Fn(&str) -> Option<String> + Sync),
    ) -> Result<Self, Vec<ConfigError>> {
        Self::build_next(config, Arc::new(apps), env, None).await
    }

    /// As [`Self::build`]; with `previous` (a reload), the deployment's state is `previous`'s,
    /// and each part whose config did not change is `previous`'s own (an app's connections, an
    /// audit file, a limiter's counts): nothing is opened twice, nothing counted is forgotten.
    pub async fn build_next(
        config: Config,
        apps: Arc<Apps>,
        env: &(dyn Fn(&str) -> Option<String> + Sync),
        previous: Option<&Platform>,
    ) -> Result<Self, Vec<ConfigError>> {
        let mut errors = Vec::new();
        let mut warnings = Vec::new();
        tool_sets::check_names(&config, &apps, &mut errors);
        let tool_sets = tool_sets::tool_sets(&config, &apps, previous, &mut errors).await;
        let sinks = carry::audit_sinks(&config, previous, &mut errors).await;
        let kept = match previous {
            Some(previous) => previous.kept.following(&config, &sinks, &mut errors),
            None => carry::Kept::make(&config, &sinks, &mut errors).await,
        };
        let shared = endpoints::Shared {
            config: &config,
            apps: &apps,
            env,
            limiters: carry::limiters(&config, kept.redis.as_ref(), previous),
            redis: kept.redis.clone(),
            writes: kept.writes.clone(),
            browser: endpoints::browser_rules(&config, &mut errors),
            session_ids: kept.session_ids.clone(),
            identity: kept.identity.clone(),
            redaction: Arc::new(crate::redaction::Redaction::of_sections(
                config.apps.values(),
            )),
            tool_sets: &tool_sets,
            sinks: &sinks,
            oauth: kept.oauth.as_deref(),
        };
        let endpoints = (config.endpoints.iter().enumerate())
            .map(|(index, section)| shared.endpoint(index, section, &mut errors, &mut warnings))
            .collect();
        let limiters = shared.limiters.clone();
        stores::single_instance_apps(&config, &tool_sets, &mut warnings);
        stores::shared_sessions(&config, &mut warnings);
        let health = tool_sets
            .iter()
            .filter_map(|(name, set)| set.health.clone().map(|check| (name.clone(), check)))
            .collect();
        let live_checks = tool_sets
            .iter()
            .filter_map(|(name, set)| set.live_check.clone().map(|c| (name.clone(), c)))
            .collect();
        let readings = tool_sets
            .iter()
            .filter_map(|(name, set)| set.readings.clone().map(|r| (name.clone(), r)))
            .collect();
        let actions = tool_sets
            .iter()
            .flat_map(|(name, set)| set.actions.iter().map(|a| (name.clone(), a.clone())))
            .collect();
        let stores = (kept.redis.clone().into_iter().map(stores::redis_health))
            .chain(
                kept.database
                    .clone()
                    .into_iter()
                    .map(stores::database_health),
            )
            .collect();
        if !errors.is_empty() {
            return Err(errors);
        }
        Ok(Self {
            identity: kept.identity.clone(),
            oauth: kept.oauth.clone(),
            running: carry::Running::new(carry::fingerprints(&config, &tool_sets), limiters),
            kept,
            config,
            apps,
            endpoints,
            warnings,
            sinks,
            tool_sets,
            health,
            live_checks,
            stores,
            readings,
            actions,
            metrics_addr: std::sync::OnceLock::new(),
        })
    }

    /// The `[state]` key that names a store of [`Self::stores`] (`/health` names PostgreSQL by
    /// what it is; the config by its role).
    pub fn store_key(name: &str) -> String {
        match name {
            "postgres" => "state.database".into(),
            other => format!("state.{other}"),
        }
    }

    /// The shared stores that do not answer now, as problems of the config (`concierge check`:
    /// `serve` starts without them and reports them in `/health` until they answer).
    pub async fn unreachable_stores(&self) -> Vec<ConfigError> {
        let mut problems = Vec::new();
        for (name, check) in &self.stores {
            if let concierge_core::Health::Down(reason) = check().await {
                problems.push(ConfigError::new(Self::store_key(name), reason));
            }
        }
        problems
    }

    /// Writes out every audit event recorded so far; call it before the process exits.
    pub fn flush_audit(&self) {
        for sink in self.sinks.values() {
            sink.flush(std::time::Duration::from_secs(5));
        }
    }

    /// Starts the background jobs of the configured instances, each by its kind, except those
    /// `previous` runs for an unchanged instance (they are taken over); they run until a
    /// reload removes or changes their instance, or the process ends. A job that cannot start
    /// does not keep the others from starting; the error names each.
    pub async fn start_background(&self, previous: Option<&Platform>) -> Result<(), String> {
        let mut failed = Vec::new();
        for name in self.config.apps.keys() {
            let kind = match self.config.app_kind(name) {
                Ok(kind) => kind,
                Err(error) => {
                    failed.push(error.to_string());
                    continue;
                }
            };
            let Some(start) = self.apps.background.get(kind) else {
                continue;
            };
            if let Some(previous) = previous
                && let Some(job) = previous.running.take_job(name)
            {
                if carry::unchanged_app(previous, &self.config, name) {
                    self.running.keep_job(name, job);
                    continue;
                }
                // Changed: the old job ends before the new one starts (a bot must not poll twice).
                job.abort();
            }
            match start(self.config.app_settings(name)).await {
                Ok(job) => self
                    .running
                    .keep_job(name, tokio::spawn(job).abort_handle()),
                Err(error) => failed.push(format!("apps.{name}: {error}")),
            }
        }
        if failed.is_empty() {
            Ok(())
        } else {
            Err(failed.join("; "))
        }
    }

    /// The audit sinks, by name.
    pub fn sinks(&self) -> impl Iterator<Item = (&String, &AuditSink)> {
        self.sinks.iter()
    }

    /// The instances `/health` reports but leaves out of its verdict (`optional`).
    pub(crate) fn optional_apps(&self) -> std::collections::BTreeSet<String> {
        (self.tool_sets.iter())
            .filter(|(_, set)| set.optional)
            .map(|(name, _)| name.clone())
            .collect()
    }

    pub(crate) fn handler_mount(&self, app: &str) -> Option<&HandlerMount> {
        self.apps
            .handlers
            .get(self.config.app_kind(app).unwrap_or(app))
    }

    pub fn endpoint(&self, path: &str) -> Option<&BuiltEndpoint> {
        self.endpoints.iter().find(|e| e.section.path == path)
    }
}
