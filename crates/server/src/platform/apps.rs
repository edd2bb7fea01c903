//! The app kinds a binary offers, by the names configs use (`kind = "…"`, or the section's
//! name): tool factories, protocol-level handlers, simulators and background jobs. A config's
//! `[apps.<name>]` is an instance of one of them; each instance is built from its own section.
//! This registry is the one place a kind is registered.

use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::sync::Arc;

use concierge_core::ToolSet;

use crate::config::schema::SettingsSchema;
use rmcp::ServerHandler;
use rmcp::transport::StreamableHttpServerConfig;
use rmcp::transport::StreamableHttpService;

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
use concierge_core::BoxFuture;
pub(super) type HandlerMount = Box<
    dyn Fn(
            &str,
            StreamableHttpServerConfig,
            Arc<crate::transport::session_streams::SessionStreams>,
        ) -> axum::Router
        + Send
        + Sync,
>;

/// The app kinds a binary offers, by the names configs use.
#[derive(Default)]
pub struct Apps {
    pub(super) tools: BTreeMap<String, ToolsFactory>,
    pub(super) handlers: BTreeMap<String, HandlerMount>,
    pub(super) simulators: BTreeMap<String, SimulatorStart>,
    pub(super) background: BTreeMap<String, BackgroundStart>,
    /// Each kind's settings type, for the config's JSON Schema (and the reference made from it).
    settings: BTreeMap<String, SettingsSchema>,
    /// Each simulator's settings type, likewise.
    simulator_settings: BTreeMap<String, SettingsSchema>,
}

impl Apps {
    pub fn new() -> Self {
        Self::default()
    }

    /// Kind `K`: its name, its settings type (the config's JSON Schema) and its builder, and its
    /// background job where it has one — one registration.
    pub fn kind<K: concierge_core::Kind>(self) -> Self {
        let apps = self
            .settings::<K::Settings>(K::NAME)
            .tools_async(K::NAME, |section| async move {
                K::build(crate::config::section(&section)?).await
            });
        match K::background() {
            Some(start) => apps.background(K::NAME, move |section| async move {
                start(crate::config::section(&section)?).await
            }),
            None => apps,
        }
    }

    /// The type kind `name` reads its `[apps.<name>]` section into, for the config's JSON
    /// Schema: every kind registers one (a test of the binary holds it to that).
    pub fn settings<T: schemars::JsonSchema>(mut self, name: &str) -> Self {
        self.settings
            .insert(name.to_string(), |generator| generator.subschema_for::<T>());
        self
    }

    /// The type simulator `name` reads its `[simulators.<name>]` section into.
    pub fn simulator_settings<T: schemars::JsonSchema>(mut self, name: &str) -> Self {
        self.simulator_settings
            .insert(name.to_string(), |generator| generator.subschema_for::<T>());
        self
    }

    /// The JSON Schema of a config this binary reads (`concierge config schema`).
    pub fn config_schema(&self) -> serde_json::Value {
        crate::config::schema::document(&self.settings, &self.simulator_settings)
    }

    /// The kinds and simulators offered without a settings type: what the schema cannot
    /// describe (empty when every registration is complete).
    pub fn without_settings(&self) -> Vec<String> {
        let kinds = self.tools.keys().chain(self.handlers.keys());
        let mut missing: Vec<String> = kinds
            .filter(|name| !self.settings.contains_key(*name))
            .map(|name| format!("apps kind `{name}`"))
            .collect();
        missing.extend(
            self.simulators
                .keys()
                .filter(|name| !self.simulator_settings.contains_key(*name))
                .map(|name| format!("simulator `{name}`")),
        );
        missing
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
                urls.insert(name.clone(), crate::config::BoundUrls::url_of(addr));
                running.push(serving);
            }
        }
        Ok((urls, running))
    }

    /// A kind of tool app: `build` gets an instance's `[apps.<name>]` section without its
    /// `kind` (an empty table if absent), once per instance an endpoint serves.
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

    /// A kind's background job (a content sync schedule, say), started by `serve` after the
    /// simulators for each `[apps.<name>]` of the kind; it gets that section without `kind`.
    /// `check` and stdio serving never start it.
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
