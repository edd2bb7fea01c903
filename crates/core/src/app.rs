use std::sync::Arc;

use crate::{BoxFuture, Language, Tool};

/// Whether a system an app depends on answers (`/health` reports it). `Err` is a short reason
/// safe to show anyone: no address, no key.
pub type HealthCheck = Arc<dyn Fn() -> BoxFuture<'static, Result<(), String>> + Send + Sync>;

/// What an app hands the platform: its tools, and the language its users read.
#[derive(Clone)]
pub struct ToolSet {
    pub app: String,
    pub language: Language,
    pub tools: Vec<Arc<dyn Tool>>,
    /// The app's upstream, checked by `/health`.
    pub health: Option<HealthCheck>,
}

impl ToolSet {
    pub fn new(app: impl Into<String>, language: Language, tools: Vec<Arc<dyn Tool>>) -> Self {
        Self {
            app: app.into(),
            language,
            tools,
            health: None,
        }
    }

    /// Adds the check `/health` runs for this app's upstream.
    pub fn with_health(mut self, check: HealthCheck) -> Self {
        self.health = Some(check);
        self
    }

    pub fn get(&self, name: &str) -> Option<&Arc<dyn Tool>> {
        self.tools.iter().find(|tool| tool.spec().name == name)
    }
}
