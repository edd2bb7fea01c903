//! One declared SQL tool: checked when the instance is built, then called with arguments the
//! platform has already validated against its schema.
//!
//! Over 600 lines with its tests: [`SqlTool::build`] is every rule `concierge check` holds a
//! declared tool to (its name, its schema, its fragments and parameters, each rendering through
//! the engine's parser), and a call binds and renders exactly what the build accepted; the two
//! read side by side, so they stay one module.

use std::collections::BTreeMap;
use std::sync::Arc;

use concierge_core::{Annotations, CallContext, Tool, ToolError, ToolFuture, ToolSpec};
use serde_json::{Map, Value, json};

use crate::answer::{answer, refusal, result_of, result_schema};
use crate::check::{self, Effect};
use crate::engine::{Bounds, Database, Mode, Outcome};
use crate::render::{Kind, Rendered, kind_of, render};
use crate::settings::{SqlSettings, SqlToolSettings};
use crate::statement::{self, Piece};

/// Where a parameter's value comes from.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Source {
    Argument,
    /// Filled from the authenticated caller; never an argument.
    Caller(CallerField),
}

#[derive(Debug, Clone, PartialEq, Eq)]
enum CallerField {
    Client,
    User,
    Role,
    /// A claim of the caller's access token (`claim.<name>`): a tenant, an organisation.
    Claim(String),
}

impl CallerField {
    /// `bind`'s word for where a parameter comes from.
    fn parse(from: &str) -> Option<Self> {
        match from {
            "client" => Some(Self::Client),
            "user" => Some(Self::User),
            "role" => Some(Self::Role),
            _ => {
                let claim = from.strip_prefix("claim.")?;
                let named = !claim.is_empty()
                    && claim.len() <= 128
                    && (claim.chars()).all(|c| c.is_ascii_alphanumeric() || "_-:.".contains(c));
                named.then(|| Self::Claim(claim.to_string()))
            }
        }
    }
}

#[derive(Debug, Clone)]
struct Parameter {
    name: String,
    kind: Kind,
    source: Source,
    default: Option<Value>,
}

pub struct SqlTool {
    spec: ToolSpec,
    pieces: Vec<Piece>,
    parameters: Vec<Parameter>,
    /// Each fragment's choices, and its default choice.
    fragments: BTreeMap<String, (BTreeMap<String, String>, Option<String>)>,
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

/// Names that would promise a model a door to any SQL. A tool is one business question.
fn is_generic_name(name: &str) -> bool {
    [
        "sql",
        "query",
        "run_query",
        "execute",
        "raw_sql",
        "query_sql",
        "run_sql",
    ]
    .contains(&name)
        || ["execute_", "run_", "raw_", "sql_"]
            .iter()
            .any(|prefix| name.starts_with(prefix))
}

fn is_tool_name(name: &str) -> bool {
    let mut chars = name.chars();
    chars.next().is_some_and(|c| c.is_ascii_lowercase())
        && name.len() <= 64
        && chars.all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_')
}

impl SqlTool {
    /// Checks `tool` against every rule `concierge check` holds it to, and builds it.
    pub fn build(
        tool: &SqlToolSettings,
        instance: &SqlSettings,
        database: Arc<Database>,
    ) -> Result<Self, String> {
        let engine = database.engine();
        let policy = &tool.policy;
        let Some(name) = &policy.name else {
            return Err("`name` is missing: every SQL tool names itself (a lower-case letter, then lower-case letters, digits or `_`)".into());
        };
        let Some(description) = &policy.description else {
            return Err("`description` is missing: every SQL tool says what it is for, written for the model".into());
        };
        let problems = policy.problems();
        if !problems.is_empty() {
            return Err(problems.join("; "));
        }
        for (key, set) in [
            ("destructive", tool.destructive),
            ("idempotent", tool.idempotent),
        ] {
            let hinted = (policy.annotations.keys()).any(|hint| hint.starts_with(key));
            if set.is_some() && hinted {
                return Err(format!(
                    "`{key}` and `annotations.{key}` are one hint: keep one"
                ));
            }
        }
        let write = policy.write;
        if !is_tool_name(name) {
            return Err("a tool's name is a lower-case letter, then lower-case letters, digits or `_`, at most 64".into());
        }
        if is_generic_name(name) {
            return Err("a generic tool (sql, query, execute_*, run_*, raw_*) is not allowed: declare one tool per business question".into());
        }
        if write && instance.read_only {
            return Err("a write tool needs an instance with `read_only = false`".into());
        }
        if !write && tool.max_affected_rows.is_some() {
            return Err("`max_affected_rows` is for write tools (`write = true`)".into());
        }
        let pieces = statement::pieces(&tool.sql).map_err(|e| format!("sql: {}", e.0))?;

        // The schema: an object with declared properties, nothing else accepted.
        let mut schema = match &tool.input_schema {
            None => Map::new(),
            Some(Value::Object(schema)) => schema.clone(),
            Some(_) => return Err("input_schema must be a table (a JSON Schema object)".into()),
        };
        match schema.get("type") {
            None => {
                schema.insert("type".into(), json!("object"));
            }
            Some(Value::String(t)) if t == "object" => {}
            Some(_) => return Err("input_schema must have type = \"object\"".into()),
        }
        schema
            .entry("additionalProperties")
            .or_insert(Value::Bool(false));
        let properties = match schema.entry("properties").or_insert_with(|| json!({})) {
            Value::Object(properties) => {
                properties.values_mut().for_each(bound_parameter);
                properties.clone()
            }
            _ => return Err("input_schema.properties must be a table".into()),
        };
        let required: Vec<&str> = schema
            .get("required")
            .and_then(Value::as_array)
            .map(|r| r.iter().filter_map(Value::as_str).collect())
            .unwrap_or_default();

        // Fragments: one enum argument each, whose values are exactly the choices.
        let used_fragments = statement::fragments(&pieces);
        let mut fragments = BTreeMap::new();
        for name in &used_fragments {
            let Some(choices) = tool.fragments.get(*name) else {
                return Err(format!("sql: `{{{name}}}` has no `fragments.{name}`"));
            };
            let Some(property) = properties.get(*name) else {
                return Err(format!(
                    "fragment `{name}` needs an argument `{name}` in input_schema.properties with an enum of its choices"
                ));
            };
            let mut listed: Vec<String> = property
                .get("enum")
                .and_then(Value::as_array)
                .map(|e| {
                    e.iter()
                        .filter_map(|v| v.as_str().map(String::from))
                        .collect()
                })
                .unwrap_or_default();
            listed.sort();
            let keys: Vec<String> = choices.keys().cloned().collect();
            if listed != keys {
                return Err(format!(
                    "fragment `{name}`: the choices ({}) and the argument's enum ({}) must be the same",
                    keys.join(", "),
                    listed.join(", ")
                ));
            }
            for (choice, sql) in choices {
                if sql.contains([':', '{', ';']) || sql.contains("--") || sql.contains("/*") {
                    return Err(format!(
                        "fragment `{name}.{choice}`: a fragment is plain SQL, without parameters, fragments, `;` or comments"
                    ));
                }
            }
            let default = property
                .get("default")
                .and_then(Value::as_str)
                .map(String::from);
            if default.is_none() && !required.contains(name) {
                return Err(format!(
                    "fragment `{name}`: its argument needs a `default` or must be required"
                ));
            }
            fragments.insert(name.to_string(), (choices.clone(), default));
        }
        if let Some(unused) = tool
            .fragments
            .keys()
            .find(|f| !used_fragments.contains(&f.as_str()))
        {
            return Err(format!(
                "fragments.{unused} is not used in the statement (`{{{unused}}}`)"
            ));
        }

        // Parameters: each declared once, each declared one used.
        let used = statement::parameters(&pieces);
        let mut parameters = Vec::new();
        for name in &used {
            if let Some(from) = tool.bind.get(*name) {
                if properties.contains_key(*name) {
                    return Err(format!(
                        "`{name}` is filled from the caller (bind), so it cannot be an argument too"
                    ));
                }
                let Some(field) = CallerField::parse(from) else {
                    return Err(format!(
                        "bind.{name} = \"{from}\": a parameter is filled from \"client\", \"user\", \"role\" or \"claim.<name>\" (a claim of the access token)"
                    ));
                };
                parameters.push(Parameter {
                    name: name.to_string(),
                    kind: Kind::Text,
                    source: Source::Caller(field),
                    default: None,
                });
            } else if let Some(property) = properties.get(*name) {
                if fragments.contains_key(*name) {
                    return Err(format!(
                        "`{name}` is a fragment; it cannot be a parameter too"
                    ));
                }
                parameters.push(Parameter {
                    name: name.to_string(),
                    kind: kind_of(property),
                    source: Source::Argument,
                    default: property.get("default").cloned(),
                });
            } else {
                return Err(format!(
                    "sql: `:{name}` is not declared: add it to input_schema.properties, or to bind"
                ));
            }
        }
        for name in properties.keys() {
            if !used.contains(&name.as_str()) && !fragments.contains_key(name) {
                return Err(format!(
                    "input_schema.properties.{name} is not used in the statement"
                ));
            }
        }
        for name in tool.bind.keys() {
            if !used.contains(&name.as_str()) {
                return Err(format!("bind.{name} is not used in the statement"));
            }
        }
        for (name, parameter) in properties.iter() {
            if kind_of(parameter) == Kind::Json
                && parameter.get("type").is_some()
                && !fragments.contains_key(name)
                && parameter.get("type") != Some(&json!("object"))
            {
                return Err(format!(
                    "input_schema.properties.{name}: a parameter is a string, integer, number, boolean or an array of one of them"
                ));
            }
        }

        // Every rendering the fragments allow, through the engine's parser.
        let mut effect = Effect::Reads;
        let mut returns_rows = write;
        let mut adds_values_only = true;
        for rendered in renderings(engine, &pieces, &parameters, &fragments) {
            let checked =
                check::statement(&rendered.sql, engine, write).map_err(|e| format!("sql: {e}"))?;
            effect = checked.effect;
            returns_rows &= checked.returns_rows;
            adds_values_only &= checked.adds_values_only;
        }

        // What the statement implies; the config's policy goes over it.
        let implied = if write {
            Annotations {
                read_only: false,
                destructive: tool
                    .destructive
                    .unwrap_or(matches!(effect, Effect::Updates | Effect::Deletes)),
                idempotent: tool.idempotent.unwrap_or(false),
                open_world: false,
            }
        } else {
            Annotations::read_only()
        };
        let output_schema = match &tool.output_schema {
            Some(Value::Object(schema)) => schema.clone(),
            Some(_) => return Err("output_schema must be a table (a JSON Schema object)".into()),
            None => result_schema(json!({"type": "object"}), write),
        };
        let max_rows = tool
            .max_rows
            .unwrap_or(instance.max_rows)
            .min(instance.max_rows);
        let max_bytes = tool
            .max_bytes
            .unwrap_or(instance.max_bytes)
            .min(instance.max_bytes);
        let mut spec = ToolSpec::new(name, description, schema, output_schema, implied);
        spec.from_caller = tool.bind.keys().cloned().collect();
        policy.apply(&mut spec);
        Ok(Self {
            spec,
            pieces,
            parameters,
            fragments,
            database,
            bounds: Bounds {
                max_rows: max_rows as usize,
                max_bytes,
                timeout: instance.statement_timeout,
            },
            write: write.then_some(Mode::Write {
                dry_run: false,
                max_affected: tool.max_affected_rows,
                returns_rows,
            }),
            compares_rows: !(adds_values_only && returns_rows),
            declared_output: tool.output_schema.is_some(),
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

/// The statement written out for every fragment choice ([`variants`]), with stand-in values
/// (NULL, a one-element array) of each parameter's kind: what `check` parses and `check --live`
/// has the database prepare.
fn renderings(
    engine: crate::render::Engine,
    pieces: &[Piece],
    parameters: &[Parameter],
    fragments: &BTreeMap<String, (BTreeMap<String, String>, Option<String>)>,
) -> Vec<Rendered> {
    let stand_in = |name: &str| {
        let kind = parameters
            .iter()
            .find(|p| p.name == name)
            .map_or(Kind::Text, |p| p.kind);
        let value = match kind {
            Kind::Array(_) => json!([1]),
            _ => Value::Null,
        };
        (value, kind)
    };
    variants(fragments)
        .iter()
        .map(|variant| {
            let choose = |name: &str| variant.get(name).map_or("", String::as_str);
            render(engine, pieces, &stand_in, &choose)
        })
        .collect()
}

/// Every choice of each fragment, the others at their default (or first) choice: each
/// fragment's choices are checked without multiplying them.
fn variants(
    fragments: &BTreeMap<String, (BTreeMap<String, String>, Option<String>)>,
) -> Vec<BTreeMap<String, String>> {
    let base: BTreeMap<String, String> = fragments
        .iter()
        .map(|(name, (choices, default))| {
            let chosen = default
                .as_ref()
                .and_then(|d| choices.get(d))
                .or_else(|| choices.values().next())
                .cloned()
                .unwrap_or_default();
            (name.clone(), chosen)
        })
        .collect();
    let mut all = vec![base.clone()];
    for (name, (choices, _)) in fragments {
        for sql in choices.values() {
            if base.get(name) != Some(sql) {
                let mut variant = base.clone();
                variant.insert(name.clone(), sql.clone());
                all.push(variant);
            }
        }
    }
    all
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
        self.write.is_some().then_some(self as &dyn concierge_core::DryRun)
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

/// The most items a list parameter takes unless its schema says otherwise: each is a bound
/// value, and the engines cap those (SQLite at 32,766 a statement, MariaDB at 65,535).
const MAX_LIST_ITEMS: u64 = 10_000;

/// Bounds a parameter's schema by what a database binds, where the config did not: an integer
/// within a 64-bit one (a larger one would fail as the database's error, or drop out of a
/// PostgreSQL array — and `NOT IN` would then match every row), a list within
/// [`MAX_LIST_ITEMS`]. The schema check then refuses such a value readably, naming the field.
fn bound_parameter(parameter: &mut Value) {
    // `["integer", "null"]` is an integer where there is one, as `kind_of` reads it.
    let kind = crate::render::declared_type(parameter).map(String::from);
    let Value::Object(parameter) = parameter else {
        return;
    };
    match kind.as_deref() {
        Some("integer") => {
            parameter.entry("minimum").or_insert(json!(i64::MIN));
            parameter.entry("maximum").or_insert(json!(i64::MAX));
        }
        Some("array") => {
            parameter.entry("maxItems").or_insert(json!(MAX_LIST_ITEMS));
            if let Some(items) = parameter.get_mut("items") {
                bound_parameter(items);
            }
        }
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parameters_are_bounded_by_what_a_database_binds() {
        let mut nullable = json!({"type": ["integer", "null"]});
        bound_parameter(&mut nullable);
        assert_eq!(nullable["minimum"], json!(i64::MIN));
        assert_eq!(nullable["maximum"], json!(i64::MAX));
        let mut list =
            json!({"type": ["array", "null"], "items": {"type": "integer", "maximum": 9}});
        bound_parameter(&mut list);
        assert_eq!(list["maxItems"], json!(MAX_LIST_ITEMS));
        assert_eq!(list["items"]["maximum"], 9, "the config's own bound stays");
        assert_eq!(list["items"]["minimum"], json!(i64::MIN));
        let mut text = json!({"type": "string"});
        bound_parameter(&mut text);
        assert_eq!(text, json!({"type": "string"}));
    }

    #[test]
    fn generic_and_badly_named_tools_are_recognised() {
        for name in ["sql", "run_sql", "execute_anything", "raw_query"] {
            assert!(is_generic_name(name), "{name}");
        }
        assert!(!is_generic_name("order_list"));
        assert!(is_tool_name("order_list"));
        for bad in ["Order", "order-list", "1x", ""] {
            assert!(!is_tool_name(bad), "{bad}");
        }
    }
}
