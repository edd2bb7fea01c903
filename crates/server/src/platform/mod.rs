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
mod endpoints;
mod live_tools;
mod oauth;
mod stores;
mod tool_sets;

pub use apps::Apps;
use apps::{BoxFuture, HandlerMount};
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
    pub apps: Apps,
    pub endpoints: Vec<BuiltEndpoint>,
    /// Problems that do not stop the server but make an endpoint refuse (token lists); `check`
    /// treats them as errors, `serve` logs them.
    pub warnings: Vec<ConfigError>,
    sinks: BTreeMap<String, AuditSink>,
    /// The instances' tool sets, by name: what endpoints mount again from when an app's tools
    /// change ([`Self::start_tool_updates`]).
    tool_sets: BTreeMap<String, concierge_core::ToolSet>,
    /// How OAuth endpoints check tokens, when an endpoint uses OAuth.
    pub oauth: Option<OAuthSetup>,
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
        env: &dyn Fn(&str) -> Option<String>,
    ) -> Result<Self, Vec<ConfigError>> {
        let mut errors = Vec::new();
        let mut warnings = Vec::new();
        tool_sets::check_names(&config, &apps, &mut errors);
        let tool_sets = tool_sets::tool_sets(&config, &apps, &mut errors).await;
        let sinks = stores::audit_sinks(&config, &mut errors).await;
        let database = stores::database(&config, &mut errors);
        let oauth = oauth::oauth(&config, &sinks, database.as_ref(), &mut errors).await;
        let redis = stores::redis(&config, &mut errors);
        // `iss` of the identity assertions: the built-in authorization server's issuer when
        // there is one, else the product's name (README, "Servers you already run").
        let identity = crate::identity::IdentitySigner::new(
            config.state.session_secret(),
            config.oauth.as_ref().map_or_else(
                || "concierge".to_string(),
                |o| o.issuer.trim_end_matches('/').to_string(),
            ),
        );
        let shared = endpoints::Shared {
            config: &config,
            apps: &apps,
            env,
            limiters: stores::limiters(&config, redis.as_ref()),
            redis: redis.clone(),
            writes: stores::writes(&config, database.as_ref(), redis.as_ref(), &mut errors).await,
            browser: endpoints::browser_rules(&config, &mut errors),
            session_ids: stores::session_ids(&config, &mut errors),
            identity: identity.clone(),
            tool_sets: &tool_sets,
            sinks: &sinks,
            oauth: oauth.as_ref(),
        };
        let endpoints = (config.endpoints.iter().enumerate())
            .map(|(index, section)| shared.endpoint(index, section, &mut errors, &mut warnings))
            .collect();
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
        let stores = (redis.into_iter().map(stores::redis_health))
            .chain(database.into_iter().map(stores::database_health))
            .collect();
        if !errors.is_empty() {
            return Err(errors);
        }
        Ok(Self {
            config,
            apps,
            endpoints,
            warnings,
            sinks,
            tool_sets,
            identity,
            oauth,
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

    /// Starts the background jobs of the configured instances, each by its kind; returns their
    /// futures.
    pub async fn start_background(&self) -> Result<Vec<BoxFuture<'static, ()>>, String> {
        let mut running = Vec::new();
        for name in self.config.apps.keys() {
            let kind = self.config.app_kind(name).map_err(|e| e.to_string())?;
            if let Some(start) = self.apps.background.get(kind) {
                running.push(
                    start(self.config.app_settings(name))
                        .await
                        .map_err(|e| format!("apps.{name}: {e}"))?,
                );
            }
        }
        Ok(running)
    }

    /// The audit sinks, by name.
    pub fn sinks(&self) -> impl Iterator<Item = (&String, &AuditSink)> {
        self.sinks.iter()
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
