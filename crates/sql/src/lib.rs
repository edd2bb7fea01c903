//! The kind `sql`: a business's database behind MCP from config alone.
//!
//! An instance names one database (`url`: PostgreSQL, MariaDB/MySQL or SQLite) and declares its
//! tools: a name, a description, one statement with `:name` parameters, the JSON Schema of the
//! arguments, and what the platform fills in from the caller (`bind`). Values are only ever
//! bound; the only SQL text an argument can choose is a `{fragment}` the config wrote, picked by
//! an enum. Reads run in transactions the engine holds read-only, every statement within a
//! timeout the database enforces, every result within a row and a byte bound that stops the
//! fetch itself.
//!
//! - `statement.rs`: the config's SQL read into text, parameters, lists and fragments
//! - `render.rs`: those pieces in one engine's form, with typed values to bind
//! - `check.rs`: what a statement may be, by the engine's own SQL grammar
//! - `tool.rs`: a declared tool, checked, and its calls
//! - `engine/`: the three databases behind one run

pub mod check;
mod engine;
pub mod render;
pub mod settings;
pub mod statement;
mod tool;

use std::sync::Arc;

use concierge_core::{Health, ToolSet};

pub use engine::Database;
pub use settings::{SqlSettings, SqlToolSettings};
pub use tool::{SqlTool, result_schema};

/// An instance's section to its tools: every tool checked (a problem names the tool), the
/// database opened (a SQLite file now, a server on first use).
pub async fn build(settings: &SqlSettings) -> Result<ToolSet, String> {
    let code = settings.language.as_deref().unwrap_or("en");
    let messages = concierge_core::messages::by_code(code)
        .ok_or_else(|| format!("language `{code}` is not one of en, ru, zh, de, vi"))?;
    if settings.tools.is_empty() {
        return Err("declare at least one [[apps.<name>.tool]]".into());
    }
    let database = Arc::new(Database::open(settings).await?);
    let mut tools: Vec<Arc<dyn concierge_core::Tool>> = Vec::new();
    for tool in &settings.tools {
        if tools.iter().any(|t| t.spec().name == tool.name) {
            return Err(format!("tool `{}` is declared twice", tool.name));
        }
        let built = SqlTool::build(tool, settings, database.clone())
            .map_err(|e| format!("tool `{}`: {e}", tool.name))?;
        tools.push(Arc::new(built));
    }
    let health = database.clone();
    Ok(
        ToolSet::new("sql", messages, tools).with_health(Arc::new(move || {
            let database = health.clone();
            Box::pin(async move {
                match database.ping().await {
                    Ok(()) => Health::Ok,
                    // The driver's text names hosts and users: the reason stays generic.
                    Err(_) => Health::Down("the database does not answer".into()),
                }
            })
        })),
    )
}
