use std::sync::Arc;

use crate::{BoxFuture, Messages, Tool};

/// What an app's health check found (`/health` reports it). Reasons are short and safe to show
/// anyone: no address, no key.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Health {
    Ok,
    /// Not ready yet: the app is still loading what it answers from (its calls say so too).
    Starting(String),
    /// A system the app depends on does not answer.
    Down(String),
}

impl From<Result<(), String>> for Health {
    fn from(result: Result<(), String>) -> Self {
        match result {
            Ok(()) => Health::Ok,
            Err(reason) => Health::Down(reason),
        }
    }
}

/// Whether an app can answer now, as `/health` reports it.
pub type HealthCheck = Arc<dyn Fn() -> BoxFuture<'static, Health> + Send + Sync>;

/// What a live check found (`concierge check --live`): problems stop the config (a statement
/// the database cannot prepare), notes are for the operator (a read-only role that could write).
/// Both name what they are about (the tool), never a secret.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct LiveReport {
    pub problems: Vec<String>,
    pub notes: Vec<String>,
}

/// A check against the systems an app's config names, run by `concierge check --live` only.
pub type LiveCheck = Arc<dyn Fn() -> BoxFuture<'static, LiveReport> + Send + Sync>;

/// Something an operator may ask an app to do now from the ops console (`sync now`). It answers
/// with a short report, or why it did nothing; it must respect the app's own rules (locks, load
/// windows) as a scheduled run does.
#[derive(Clone)]
pub struct Action {
    pub name: &'static str,
    /// The button's text.
    pub label: &'static str,
    pub run: Arc<dyn Fn() -> BoxFuture<'static, Result<String, String>> + Send + Sync>,
}

/// What an app reports about itself when `/metrics` is scraped (the ski sync's manifest age, …).
pub type Readings = Arc<dyn Fn() -> BoxFuture<'static, Vec<crate::observe::Reading>> + Send + Sync>;

/// The tool lists of an app whose tools change while it runs (an upstream MCP server's list,
/// its tools hidden while it is down).
pub type ToolList = tokio::sync::watch::Receiver<Vec<Arc<dyn Tool>>>;

/// Starts what keeps an app's tools current; run by `serve`, never by `check`. The future
/// answers once the app has its first real list (or gave up waiting for it), with the receiver
/// of every list from then on; the platform serves each new list in place of the last.
pub type ToolUpdates = Arc<dyn Fn() -> BoxFuture<'static, ToolList> + Send + Sync>;

/// What an app hands the platform: its tools, and the texts its users read.
#[derive(Clone)]
pub struct ToolSet {
    pub app: String,
    /// The platform's messages in the app's language (validation, limits, write safety).
    pub messages: &'static Messages,
    pub tools: Vec<Arc<dyn Tool>>,
    /// The app's upstream, checked by `/health`.
    pub health: Option<HealthCheck>,
    /// The deployment is whole without this app (an example that needs a program concierge does
    /// not ship): `/health` reports its upstream but leaves it out of the verdict.
    pub optional: bool,
    /// What `concierge check --live` asks of the app's systems.
    pub live_check: Option<LiveCheck>,
    pub readings: Option<Readings>,
    pub actions: Vec<Action>,
    /// For an app whose tools change while it runs: `tools` are what `check` sees and what is
    /// served until the first list arrives.
    pub updates: Option<ToolUpdates>,
    /// Why this app's state cannot be shared by several instances, when it cannot (files only
    /// one process may write): `concierge check` says so for a deployment that shares `[state]`.
    pub single_instance: Option<&'static str>,
    /// Ends what the app keeps running on its own (a connection it keeps open, a child
    /// process): called once when a reload removes or replaces the instance.
    pub stop: Option<Arc<dyn Fn() + Send + Sync>>,
    /// The files the app was built from besides its section (an OpenAPI document): a reload
    /// builds it again when one of them changed, and the server's watcher watches them.
    pub inputs: Vec<std::path::PathBuf>,
}

impl ToolSet {
    pub fn new(
        app: impl Into<String>,
        messages: &'static Messages,
        tools: Vec<Arc<dyn Tool>>,
    ) -> Self {
        Self {
            app: app.into(),
            messages,
            tools,
            health: None,
            optional: false,
            live_check: None,
            readings: None,
            actions: Vec::new(),
            updates: None,
            single_instance: None,
            stop: None,
            inputs: Vec::new(),
        }
    }

    /// Marks the app's tools as changing while it runs: `serve` starts `updates`.
    pub fn with_updates(mut self, updates: ToolUpdates) -> Self {
        self.updates = Some(updates);
        self
    }

    /// Names the files the app was built from besides its section (never a file it writes).
    pub fn with_inputs(mut self, inputs: Vec<std::path::PathBuf>) -> Self {
        self.inputs = inputs;
        self
    }

    /// What ends the app's own running parts when a reload removes or replaces it.
    pub fn with_stop(mut self, stop: Arc<dyn Fn() + Send + Sync>) -> Self {
        self.stop = Some(stop);
        self
    }

    /// Marks the app as one that only one instance may serve, and why.
    pub fn single_instance(mut self, why: &'static str) -> Self {
        self.single_instance = Some(why);
        self
    }

    /// Adds the check `/health` runs for this app's upstream.
    pub fn with_health(mut self, check: HealthCheck) -> Self {
        self.health = Some(check);
        self
    }

    /// Marks the app as one `/health` reports but does not count (see [`ToolSet::optional`]).
    pub fn optional(mut self, optional: bool) -> Self {
        self.optional = optional;
        self
    }

    /// What `concierge check --live` runs against the app's systems.
    pub fn with_live_check(mut self, check: LiveCheck) -> Self {
        self.live_check = Some(check);
        self
    }

    /// What the app reports when the platform's metrics are read.
    pub fn with_readings(mut self, readings: Readings) -> Self {
        self.readings = Some(readings);
        self
    }

    /// An action the ops console offers.
    pub fn with_action(mut self, action: Action) -> Self {
        self.actions.push(action);
        self
    }

    pub fn get(&self, name: &str) -> Option<&Arc<dyn Tool>> {
        self.tools.iter().find(|tool| tool.spec().name == name)
    }
}
