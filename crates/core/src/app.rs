use std::sync::Arc;

use crate::{Language, Tool};

/// What an app hands the platform: its tools, and the language its users read.
#[derive(Clone)]
pub struct ToolSet {
    pub app: String,
    pub language: Language,
    pub tools: Vec<Arc<dyn Tool>>,
}

impl ToolSet {
    pub fn new(app: impl Into<String>, language: Language, tools: Vec<Arc<dyn Tool>>) -> Self {
        Self {
            app: app.into(),
            language,
            tools,
        }
    }

    pub fn get(&self, name: &str) -> Option<&Arc<dyn Tool>> {
        self.tools.iter().find(|tool| tool.spec().name == name)
    }
}
