//! From a [`Config`] and the apps the binary registered to a running set of endpoints.
//!
//! The platform knows apps only by name: an app is either a tool factory ("given my config
//! section, here are my tools") or a protocol-level handler (the conformance fixtures).
//!
//! Building one is a list of steps, each in [`build`]: names, tool sets, audit sinks, OAuth,
//! limiters, write safety, browser rules, then each endpoint with its guard.

mod build;

use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::sync::Arc;

use concierge_core::ToolSet;
use rmcp::ServerHandler;
use rmcp::transport::StreamableHttpServerConfig;
use rmcp::transport::StreamableHttpService;

use crate::audit::AuditSink;
use crate::config::{Config, ConfigError, EndpointSection};
use crate::pipeline::Guard;

type ToolsFactory =
    Box<dyn Fn(toml::Value) -> BoxFuture<'static, Result<ToolSet, String>> + Send + Sync>;
/// Starts an app's background job from its config section: opens what it needs, then returns
/// the future that runs.
pub type BackgroundStart = Box<
    dyn Fn(toml::Value) -> BoxFuture<'static, Result<BoxFuture<'static, ()>, String>> + Send + Sync,
>;
/// Starts a simulator from its config section: binds its listener (port 0 picks a free one), then
/// returns the address it got and the future that serves.
pub type SimulatorStart = Box<
    dyn Fn(toml::Value) -> BoxFuture<'static, Result<(SocketAddr, BoxFuture<'static, ()>), String>>
        + Send
        + Sync,
>;
type BoxFuture<'a, T> = std::pin::Pin<Box<dyn std::future::Future<Output = T> + Send + 'a>>;
type HandlerMount = Box<
    dyn Fn(
            &str,
            StreamableHttpServerConfig,
            Arc<crate::session_streams::SessionStreams>,
        ) -> axum::Router
        + Send
        + Sync,
>;

/// The apps a binary offers, by the names configs use.
#[derive(Default)]
pub struct Apps {
    tools: BTreeMap<String, ToolsFactory>,
    handlers: BTreeMap<String, HandlerMount>,
    simulators: BTreeMap<String, SimulatorStart>,
    background: BTreeMap<String, BackgroundStart>,
}

impl Apps {
    pub fn new() -> Self {
        Self::default()
    }

    /// Starts the simulators of `sections` (binding their ports); returns each one's URL, by
    /// name, and their serving futures. A section no simulator is registered for is left to
    /// [`Platform::build`] to report.
    pub async fn start_simulators(
        &self,
        sections: &BTreeMap<String, toml::Value>,
    ) -> Result<(BTreeMap<String, String>, Vec<BoxFuture<'static, ()>>), String> {
        let mut urls = BTreeMap::new();
        let mut running = Vec::new();
        for (name, section) in sections {
            if let Some(start) = self.simulators.get(name) {
                let (addr, serving) = start(section.clone())
                    .await
                    .map_err(|e| format!("simulators.{name}: {e}"))?;
                urls.insert(name.clone(), crate::BoundUrls::url_of(addr));
                running.push(serving);
            }
        }
        Ok((urls, running))
    }

    /// A tool app: `build` gets the app's `[apps.<name>]` section (an empty table if absent).
    pub fn tools(
        self,
        name: &str,
        build: impl Fn(&toml::Value) -> Result<ToolSet, String> + Send + Sync + 'static,
    ) -> Self {
        self.tools_async(name, move |section| std::future::ready(build(&section)))
    }

    /// A tool app whose start-up waits on I/O (opening a database, say).
    pub fn tools_async<F, S>(mut self, name: &str, build: F) -> Self
    where
        F: Fn(toml::Value) -> S + Send + Sync + 'static,
        S: std::future::Future<Output = Result<ToolSet, String>> + Send + 'static,
    {
        self.tools.insert(
            name.to_string(),
            Box::new(move |section| Box::pin(build(section))),
        );
        self
    }

    /// A simulator of an external system, started by `serve` (and the commands that call an
    /// upstream) when the config has `[simulators.<name>]`. Its address is what
    /// `${simulators.<name>.url}` stands for in the rest of the config.
    pub fn simulator<F, S>(mut self, name: &str, start: F) -> Self
    where
        F: Fn(toml::Value) -> S + Send + Sync + 'static,
        S: std::future::Future<Output = Result<(SocketAddr, BoxFuture<'static, ()>), String>>
            + Send
            + 'static,
    {
        self.simulators.insert(
            name.to_string(),
            Box::new(move |section| Box::pin(start(section))),
        );
        self
    }

    /// An app's background job (a content sync schedule, say), started by `serve` after the
    /// simulators when the config has `[apps.<name>]`; it gets that section. `check` and stdio
    /// serving never start it.
    pub fn background<F, S>(mut self, name: &str, start: F) -> Self
    where
        F: Fn(toml::Value) -> S + Send + Sync + 'static,
        S: std::future::Future<Output = Result<BoxFuture<'static, ()>, String>> + Send + 'static,
    {
        self.background.insert(
            name.to_string(),
            Box::new(move |section| Box::pin(start(section))),
        );
        self
    }

    /// A protocol-level app: an rmcp handler served as it is, for fixtures that need resources,
    /// prompts, sampling or elicitation rather than business tools.
    pub fn handler<S>(
        mut self,
        name: &str,
        make: impl Fn() -> S + Send + Sync + Clone + 'static,
    ) -> Self
    where
        S: ServerHandler + Send + 'static,
    {
        let mount: HandlerMount = Box::new(move |path, config, sessions| {
            let make = make.clone();
            let service = StreamableHttpService::new(move || Ok(make()), sessions, config);
            axum::Router::new().route_service(path, service)
        });
        self.handlers.insert(name.to_string(), mount);
        self
    }
}

/// What an endpoint serves.
pub enum Mounted {
    /// The platform's dispatcher over the configured tools.
    Tools,
    /// A protocol-level handler app, served as it is (behind the same guard).
    Handler { app: String },
}

/// An endpoint ready to mount.
pub struct BuiltEndpoint {
    pub section: EndpointSection,
    pub mounted: Mounted,
    /// Authentication and session binding in front of it; its endpoint holds tools and policies.
    pub guard: Arc<Guard>,
    /// How to call the endpoint when it runs on the config's demo token default, for the banner.
    /// Never set from a real environment variable: real tokens are not printed.
    pub demo_hint: Option<String>,
}

/// Everything `serve` needs, and everything `check` verifies.
pub struct Platform {
    pub config: Config,
    pub apps: Apps,
    pub endpoints: Vec<BuiltEndpoint>,
    /// Problems that do not stop the server but make an endpoint refuse (token lists); `check`
    /// treats them as errors, `serve` logs them.
    pub warnings: Vec<ConfigError>,
    sinks: BTreeMap<String, AuditSink>,
    /// How OAuth endpoints check tokens, when an endpoint uses OAuth.
    pub oauth: Option<OAuthSetup>,
    /// The apps' upstream checks, by app name, for `/health`.
    pub health: Vec<(String, concierge_core::HealthCheck)>,
    /// The shared stores' checks (`redis`, `postgres`), for `/health` and `concierge check`.
    pub stores: Vec<(String, concierge_core::HealthCheck)>,
    /// What the apps report about themselves, by app name, for `/metrics`.
    pub readings: Vec<(String, concierge_core::Readings)>,
    /// What the apps let an operator do from the ops console, by app name.
    pub actions: Vec<(String, concierge_core::Action)>,
    /// Where `/metrics` listens, once `serve` bound `[metrics] listen`.
    pub metrics_addr: std::sync::OnceLock<SocketAddr>,
}

/// The OAuth side of a deployment.
pub struct OAuthSetup {
    /// Our public base URL: resource URLs are built on it.
    pub base: String,
    /// Scopes the metadata advertises.
    pub scopes: Vec<String>,
    pub verifier: concierge_oauth::Verifier,
    /// The built-in authorization server, whose routes `serve` mounts (none with an external IdP).
    pub builtin: Option<Arc<concierge_oauth::AuthServer>>,
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

    /// Builds apps, limiters, audit sinks and endpoints, in the steps of [`build`] (each
    /// reports what is wrong with its part and goes on, so `check` lists every problem at
    /// once). `env` reads token variables.
    pub async fn build(
        config: Config,
        apps: Apps,
        env: &dyn Fn(&str) -> Option<String>,
    ) -> Result<Self, Vec<ConfigError>> {
        let mut errors = Vec::new();
        let mut warnings = Vec::new();
        build::check_names(&config, &apps, &mut errors);
        let tool_sets = build::tool_sets(&config, &apps, &mut errors).await;
        let sinks = build::audit_sinks(&config, &mut errors).await;
        let database = build::database(&config, &mut errors);
        let oauth = build::oauth(&config, &sinks, database.as_ref(), &mut errors).await;
        let redis = build::redis(&config, &mut errors);
        let shared = build::Shared {
            config: &config,
            apps: &apps,
            env,
            limiters: build::limiters(&config, redis.as_ref()),
            redis: redis.clone(),
            writes: build::writes(&config, database.as_ref(), redis.as_ref(), &mut errors).await,
            browser: build::browser_rules(&config, &mut errors),
            session_ids: build::session_ids(&config, &mut errors),
            tool_sets: &tool_sets,
            sinks: &sinks,
            oauth: oauth.as_ref(),
        };
        let endpoints = (config.endpoints.iter().enumerate())
            .map(|(index, section)| shared.endpoint(index, section, &mut errors, &mut warnings))
            .collect();
        build::single_instance_apps(&config, &tool_sets, &mut warnings);
        build::shared_sessions(&config, &mut warnings);
        let health = tool_sets
            .iter()
            .filter_map(|(name, set)| set.health.clone().map(|check| (name.clone(), check)))
            .collect();
        let readings = tool_sets
            .iter()
            .filter_map(|(name, set)| set.readings.clone().map(|r| (name.clone(), r)))
            .collect();
        let actions = tool_sets
            .iter()
            .flat_map(|(name, set)| set.actions.iter().map(|a| (name.clone(), a.clone())))
            .collect();
        let stores = (redis.into_iter().map(build::redis_health))
            .chain(database.into_iter().map(build::database_health))
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
            oauth,
            health,
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

    /// Starts the background jobs of the configured apps; returns their futures.
    pub async fn start_background(&self) -> Result<Vec<BoxFuture<'static, ()>>, String> {
        let mut running = Vec::new();
        for (name, section) in &self.config.apps {
            if let Some(start) = self.apps.background.get(name) {
                running.push(
                    start(section.clone())
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
        self.apps.handlers.get(app)
    }

    pub fn endpoint(&self, path: &str) -> Option<&BuiltEndpoint> {
        self.endpoints.iter().find(|e| e.section.path == path)
    }
}
