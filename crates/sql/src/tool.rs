//! One declared SQL tool: checked when the instance is built, then called with arguments the
//! platform has already validated against its schema.
//!
//! What the declaration checks are in [`crate::declaration`]; here a call binds and renders
//! exactly what they accepted.

use std::collections::BTreeMap;
use std::sync::Arc;

use concierge_core::{CallContext, Tool, ToolError, ToolFuture, ToolSpec};
use serde_json::{Map, Value, json};

use crate::answer::{answer, refusal, result_of, result_schema};
use crate::declaration::{self, CallerField, Fragments, Parameter, Problem, Source, renderings};
use crate::engine::{Bounds, Database, Mode, Outcome};
use crate::render::{Kind, Rendered, render};
use crate::settings::{SqlSettings, SqlToolSettings};
use crate::statement::Piece;

pub struct SqlTool {
    spec: ToolSpec,
    pieces: Vec<Piece>,
    parameters: Vec<Parameter>,
    /// Each fragment's choices, and its default choice.
    fragments: Fragments,
    database: Arc<Database>,
    bounds: Bounds,
    write: Option<Mode>,
    /// A confirmed write runs only as the change previewed, its rows compared — except a plain
    /// `INSERT … VALUES … RETURNING`: its rows are new, with values the database makes anew on
    /// every run (a sequence the preview's rollback does not give back, a time), so no run would
    /// ever match; it adds exactly the confirmed arguments' rows. An upsert or an
    /// `INSERT … SELECT` is still compared: it can touch rows the preview did not show.
    compares_rows: bool,
    /// The config declared the output schema: it wins over what the database describes.
    declared_output: bool,
}

impl SqlTool {
    /// Checks `tool` against every rule `concierge check` holds it to
    /// ([`declaration`](crate::declaration)), and builds it over `database`.
    pub fn build(
        tool: &SqlToolSettings,
        instance: &SqlSettings,
        database: Arc<Database>,
    ) -> Result<Self, Problem> {
        let declared = declaration::declare(tool, instance, database.engine())?;
        Ok(Self {
            spec: declared.spec,
            pieces: declared.pieces,
            parameters: declared.parameters,
            fragments: declared.fragments,
            database,
            bounds: declared.bounds,
            write: declared.write,
            compares_rows: declared.compares_rows,
            declared_output: declared.declared_output,
        })
    }

    pub fn name(&self) -> &str {
        &self.spec.name
    }

    /// The statement as it runs for each fragment choice, for `check --live` to prepare.
    pub fn rendered_for_check(&self) -> Vec<Rendered> {
        renderings(
            self.database.engine(),
            &self.pieces,
            &self.parameters,
            &self.fragments,
        )
    }

    /// The tool's rows as the database describes them, when the config declares no output
    /// schema: each column by name, typed where the engine types its values (SQLite's are as
    /// stored, so any JSON value there).
    pub fn describe_rows(&mut self, columns: &[(String, Value)]) {
        if self.declared_output || self.write.is_some() {
            return;
        }
        let sqlite = self.database.engine() == crate::render::Engine::Sqlite;
        let properties: Map<String, Value> = columns
            .iter()
            .map(|(name, schema)| {
                (
                    name.clone(),
                    if sqlite { json!({}) } else { schema.clone() },
                )
            })
            .collect();
        // No column is required: the platform leaves a null out of every answer (a model pays
        // tokens for it), so a NULL column is a key the row does not have.
        let row = json!({"type": "object", "properties": properties});
        self.spec.output_schema = result_schema(row, false);
    }

    /// A parameter's value for this call, and the kind it is bound as: an argument's as the
    /// schema declares it; a caller's field as text; a claim as the JSON type the token gives it.
    fn value_of(
        &self,
        parameter: &Parameter,
        arguments: &Map<String, Value>,
        context: &CallContext,
    ) -> Result<(Value, Kind), ToolError> {
        let caller = &context.caller;
        let text = |value: Option<&String>| value.map(|v| (Value::String(v.clone()), Kind::Text));
        let found = match &parameter.source {
            Source::Argument => {
                let value = (arguments.get(&parameter.name))
                    .or(parameter.default.as_ref())
                    .cloned()
                    .unwrap_or(Value::Null);
                return Ok((value, parameter.kind));
            }
            Source::Caller(CallerField::Client) => text(Some(&caller.client)),
            Source::Caller(CallerField::User) => text(caller.user.as_ref()),
            Source::Caller(CallerField::Role) => text(caller.role.as_ref()),
            Source::Caller(CallerField::Claim(name)) => {
                return claim_value(caller.claim(name), name);
            }
        };
        found.ok_or_else(|| {
            ToolError::rejected(
                "sign_in_required",
                "this tool answers for a signed-in user; sign in and try again",
            )
        })
    }
}

/// A claim as a bound value: a string, a number or a boolean, as the token carries it.
fn claim_value(claim: Option<&Value>, name: &str) -> Result<(Value, Kind), ToolError> {
    let kind = match claim {
        Some(Value::String(_)) => Kind::Text,
        Some(Value::Number(n)) if n.is_i64() => Kind::Integer,
        Some(Value::Number(_)) => Kind::Number,
        Some(Value::Bool(_)) => Kind::Boolean,
        Some(_) => {
            return Err(ToolError::rejected(
                "claim_unusable",
                format!(
                    "the access token's `{name}` claim is not a single value this tool can use"
                ),
            ));
        }
        None => {
            return Err(ToolError::rejected(
                "claim_required",
                format!(
                    "this tool answers from the access token's `{name}` claim, which this token does not carry; sign in with an account that has it"
                ),
            ));
        }
    };
    Ok((claim.cloned().unwrap_or_default(), kind))
}

impl Tool for SqlTool {
    fn spec(&self) -> &ToolSpec {
        &self.spec
    }

    fn call(&self, arguments: Value, context: CallContext) -> ToolFuture<'_> {
        self.run(arguments, context, false)
    }

    /// A write's dry run is the statement in a transaction rolled back: the rows it would change.
    fn dry_run(&self) -> Option<&dyn concierge_core::DryRun> {
        self.write
            .is_some()
            .then_some(self as &dyn concierge_core::DryRun)
    }
}

impl concierge_core::DryRun for SqlTool {
    fn dry_run(&self, arguments: Value, context: CallContext) -> ToolFuture<'_> {
        self.run(arguments, context, true)
    }
}

impl SqlTool {
    /// One call: the statement rendered from the arguments and run, or (`dry_run`) run in a
    /// transaction that is rolled back.
    fn run(&self, arguments: Value, context: CallContext, dry_run: bool) -> ToolFuture<'_> {
        Box::pin(async move {
            let arguments = match arguments {
                Value::Object(arguments) => arguments,
                _ => Map::new(),
            };
            let mut values = BTreeMap::new();
            for parameter in &self.parameters {
                let bound = self.value_of(parameter, &arguments, &context)?;
                values.insert(parameter.name.as_str(), bound);
            }
            let mut chosen = BTreeMap::new();
            for (name, (choices, default)) in &self.fragments {
                let choice = arguments
                    .get(name)
                    .and_then(Value::as_str)
                    .or(default.as_deref());
                let Some(sql) = choice.and_then(|c| choices.get(c)) else {
                    let allowed: Vec<&str> = choices.keys().map(String::as_str).collect();
                    return Err(ToolError::invalid(
                        name.clone(),
                        format!("must be one of: {}", allowed.join(", ")),
                    ));
                };
                chosen.insert(name.as_str(), sql.as_str());
            }
            let value = |name: &str| {
                values
                    .get(name)
                    .cloned()
                    .unwrap_or((Value::Null, Kind::Text))
            };
            let choose = |name: &str| chosen.get(name).copied().unwrap_or("");
            let rendered = render(self.database.engine(), &self.pieces, &value, &choose);
            let mode = match self.write {
                Some(Mode::Write {
                    max_affected,
                    returns_rows,
                    ..
                }) => Mode::Write {
                    dry_run,
                    max_affected,
                    returns_rows,
                },
                _ => Mode::Read,
            };
            // A confirmed write commits only if it is the change previewed: the same rows.
            let previewed = context.confirmed_preview.clone();
            let same_change = |outcome: &Outcome| {
                previewed.as_deref()
                    == Some(
                        concierge_core::preview_digest(&result_of(outcome.clone(), true)).as_str(),
                    )
            };
            let confirmed: Option<&crate::engine::Confirmed<'_>> = match (&previewed, mode) {
                (Some(_), Mode::Write { dry_run: false, .. }) if self.compares_rows => {
                    Some(&same_change)
                }
                _ => None,
            };
            // A value not of its parameter's type names the argument it came from.
            let argument = |at: usize| {
                (self.parameters.get(at))
                    .filter(|parameter| parameter.source == Source::Argument)
                    .map(|parameter| parameter.name.clone())
            };
            let outcome = self
                .database
                .run(rendered, mode, self.bounds, confirmed)
                .await
                .map_err(|failure| refusal(failure, argument))?;
            Ok(answer(outcome, &context, self.write.is_some()))
        })
    }
}
