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
//! - `answer.rs`: what a call answers, and a failure in a model's terms
//! - `engine/`: the three databases behind one run

mod answer;
pub mod check;
pub mod declaration;
mod engine;
pub mod render;
pub mod settings;
pub mod statement;
mod tool;

use std::sync::Arc;

use concierge_core::{Health, LiveReport, ToolSet};

pub use answer::result_schema;
use engine::Columns;
pub use engine::Database;
pub use settings::{SqlSettings, SqlToolSettings};
pub use tool::SqlTool;

/// How long start-up waits for a database to answer, and then to describe each statement's
/// rows: a database that is down must not hold the server back (its tools then declare rows
/// without columns).
const DESCRIBE_WAIT: std::time::Duration = std::time::Duration::from_secs(2);

/// An instance's section to its tools: every tool checked (a problem names the tool), the
/// database opened (a SQLite file now, a server on first use), and each read tool's rows
/// described by the database when it answers at once.
pub async fn build(settings: &SqlSettings) -> Result<ToolSet, String> {
    let messages = concierge_core::messages::for_language(settings.language.as_deref())?;
    if settings.tools.is_empty() {
        return Err("declare at least one [[apps.<name>.tool]]".into());
    }
    let database = Arc::new(Database::open(settings).await?);
    let mut tools: Vec<SqlTool> = Vec::new();
    for tool in &settings.tools {
        if tools.iter().any(|t| t.name() == tool.name()) {
            return Err(format!("tool `{}` is declared twice", tool.name()));
        }
        let built = SqlTool::build(tool, settings, database.clone())
            .map_err(|e| format!("tool `{}`: {e}", tool.name()))?;
        tools.push(built);
    }
    if tokio::time::timeout(DESCRIBE_WAIT, database.ping())
        .await
        .is_ok_and(|answered| answered.is_ok())
    {
        // Each tool's statement as every fragment choice renders it, all on one connection,
        // each within the wait (a database that stops answering ends the list there; the
        // tools after it declare bare rows).
        let (owners, statements): (Vec<usize>, Vec<_>) = tools
            .iter()
            .enumerate()
            .flat_map(|(at, tool)| tool.rendered_for_check().into_iter().map(move |s| (at, s)))
            .unzip();
        if let Ok(answers) = database.describe_all(&statements, DESCRIBE_WAIT).await {
            // Each tool's renderings as described; `None` once one of them was not.
            let mut described: Vec<Option<Vec<Columns>>> = vec![Some(Vec::new()); tools.len()];
            for (at, answer) in owners
                .iter()
                .zip(answers.into_iter().map(Some).chain(std::iter::repeat(None)))
            {
                match (answer, &mut described[*at]) {
                    (Some(Ok(columns)), Some(renderings)) => renderings.push(columns),
                    (_, whole) => *whole = None,
                }
            }
            for (at, renderings) in described.iter().enumerate() {
                if let Some(renderings) = renderings.as_ref().filter(|r| !r.is_empty()) {
                    tools[at].describe_rows(&agreed(renderings));
                }
            }
        }
    }
    let tools: Vec<Arc<SqlTool>> = tools.into_iter().map(Arc::new).collect();
    let health = database.clone();
    let live = (database.clone(), tools.clone(), settings.read_only);
    let served: Vec<Arc<dyn concierge_core::Tool>> = tools
        .iter()
        .map(|t| t.clone() as Arc<dyn concierge_core::Tool>)
        .collect();
    Ok(ToolSet::new("sql", messages, served)
        .with_health(Arc::new(move || {
            let database = health.clone();
            Box::pin(async move {
                match database.ping().await {
                    Ok(()) => Health::Ok,
                    // The driver's text names hosts and users: the reason stays generic.
                    Err(_) => Health::Down("the database does not answer".into()),
                }
            })
        }))
        .with_live_check(Arc::new(move || {
            let (database, tools, read_only) = live.clone();
            Box::pin(async move { live_check(&database, &tools, read_only).await })
        })))
}

/// A tool's columns as all its renderings describe them: a column whose type one fragment
/// choice changes (`count(*)` or `avg(price)`) may be either, so it promises nothing (`{}`); a
/// column only some choices return is one a row may lack, as a NULL one is.
fn agreed(renderings: &[Columns]) -> Columns {
    let mut columns: Columns = Vec::new();
    for (name, schema) in renderings.iter().flatten() {
        match columns.iter_mut().find(|(known, _)| known == name) {
            Some((_, known)) if known != schema => *known = serde_json::json!({}),
            Some(_) => {}
            None => columns.push((name.clone(), schema.clone())),
        }
    }
    columns
}

/// `check --live`: every statement (each fragment choice) prepared by the database, and a note
/// when a read-only instance's role could write.
async fn live_check(database: &Database, tools: &[Arc<SqlTool>], read_only: bool) -> LiveReport {
    let mut report = LiveReport::default();
    if let Err(error) = database.ping().await {
        report
            .problems
            .push(format!("the database does not answer: {error}"));
        return report;
    }
    // Every statement of every tool, on one connection.
    let (owners, statements): (Vec<&Arc<SqlTool>>, Vec<_>) = tools
        .iter()
        .flat_map(|tool| {
            tool.rendered_for_check()
                .into_iter()
                .map(move |s| (tool, s))
        })
        .unzip();
    let answers = match database.describe_all(&statements, DESCRIBE_WAIT).await {
        Ok(answers) => answers,
        Err(error) => {
            report
                .problems
                .push(format!("the database does not answer: {error}"));
            return report;
        }
    };
    if answers.len() < statements.len() {
        report.problems.push(format!(
            "the database did not describe a statement within {} s",
            DESCRIBE_WAIT.as_secs()
        ));
    }
    for (tool, answer) in owners.into_iter().zip(answers) {
        match answer {
            Ok(columns) if !columns.is_empty() => {
                let names: Vec<&str> = columns.iter().map(|(n, _)| n.as_str()).collect();
                report.notes.push(format!(
                    "tool `{}` returns {}",
                    tool.name(),
                    names.join(", ")
                ));
            }
            Ok(_) => {}
            Err(error) => {
                let problem = format!(
                    "tool `{}`: the database cannot prepare its statement: {error}",
                    tool.name()
                );
                // One line for a problem every fragment choice shares.
                if !report.problems.contains(&problem) {
                    report.problems.push(problem);
                }
            }
        }
    }
    if read_only && database.role_could_write().await == Some(true) {
        report.notes.push(
            "the instance is read-only, but its database role could write: every statement \
             still runs read-only, and a role without write grants would be a second wall"
                .into(),
        );
    }
    report.notes.dedup();
    report
}

/// The kind `sql`: a database: tools declared as statements over PostgreSQL, MariaDB/MySQL or SQLite.
pub struct Sql;

impl concierge_core::Kind for Sql {
    const NAME: &'static str = "sql";
    type Settings = SqlSettings;

    async fn build(settings: SqlSettings) -> Result<concierge_core::ToolSet, String> {
        build(&settings).await
    }
}
