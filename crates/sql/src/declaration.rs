//! A declared SQL tool, checked: every rule `concierge check` holds a `[[apps.<name>.tool]]` to,
//! a function for each thing it checks — its identity, its arguments, its fragments, its
//! parameters, its statement — each refusing with the [`Problem`] that says which. What passes
//! is a [`Declared`] tool: everything a `SqlTool` needs but its database.
//!
//! Just over 600 lines with its tests, on purpose: the checks read in the order they depend on
//! each other (the statement's pieces, then the arguments, the fragments, the parameters, every
//! rendering), with the declaration's own types beside them.

use std::collections::BTreeMap;

use concierge_core::json::strings;
use concierge_core::{Annotations, ToolSpec};
use serde_json::{Map, Value, json};

use crate::answer::result_schema;
use crate::check::{self, Effect};
use crate::engine::{Bounds, Mode};
use crate::render::{Engine, Kind, Rendered, kind_of, render};
use crate::settings::{SqlSettings, SqlToolSettings};
use crate::statement::{self, Piece};

/// Why a declared tool is refused, by what was checked; its text is what `check` prints.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Problem {
    /// Its name, description or per-tool policy, or where it may be served.
    Identity(String),
    /// Its `input_schema` or `output_schema`.
    Schema(String),
    /// A `{name}` fragment and the argument that chooses it.
    Fragment(String),
    /// A `:name` parameter: its argument or its `bind`.
    Parameter(String),
    /// The statement, as the engine's parser reads it.
    Statement(String),
}

impl std::fmt::Display for Problem {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let (Problem::Identity(text)
        | Problem::Schema(text)
        | Problem::Fragment(text)
        | Problem::Parameter(text)
        | Problem::Statement(text)) = self;
        f.write_str(text)
    }
}

impl std::error::Error for Problem {}

/// Each fragment's choices (by the value of the argument that picks one), and its default.
pub(crate) type Fragments = BTreeMap<String, (BTreeMap<String, String>, Option<String>)>;

/// A declaration that passed every check.
pub(crate) struct Declared {
    pub(crate) spec: ToolSpec,
    pub(crate) pieces: Vec<Piece>,
    pub(crate) parameters: Vec<Parameter>,
    pub(crate) fragments: Fragments,
    pub(crate) bounds: Bounds,
    pub(crate) write: Option<Mode>,
    /// See `SqlTool::compares_rows`.
    pub(crate) compares_rows: bool,
    pub(crate) declared_output: bool,
}

/// `tool` of `instance`, on `engine`, checked.
pub(crate) fn declare(
    tool: &SqlToolSettings,
    instance: &SqlSettings,
    engine: Engine,
) -> Result<Declared, Problem> {
    let (name, description) = identity(tool, instance)?;
    let write = tool.policy.write;
    let pieces =
        statement::pieces(&tool.sql).map_err(|e| Problem::Statement(format!("sql: {}", e.0)))?;
    let arguments = Arguments::of(tool)?;
    let fragments = fragments(tool, &pieces, &arguments)?;
    let parameters = parameters(tool, &pieces, &arguments.properties, &fragments)?;
    let statement = checked(engine, &pieces, &parameters, &fragments, write)?;

    // What the statement implies; the config's policy goes over it.
    let implied = if write {
        Annotations {
            read_only: false,
            destructive: tool.destructive.unwrap_or(matches!(
                statement.effect,
                Effect::Updates | Effect::Deletes
            )),
            idempotent: tool.idempotent.unwrap_or(false),
            open_world: false,
        }
    } else {
        Annotations::read_only()
    };
    let output_schema = match &tool.output_schema {
        Some(Value::Object(schema)) => schema.clone(),
        Some(_) => {
            return Err(Problem::Schema(
                "output_schema must be a table (a JSON Schema object)".into(),
            ));
        }
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
    let mut spec = ToolSpec::new(name, description, arguments.schema, output_schema, implied);
    spec.from_caller = tool.bind.keys().cloned().collect();
    tool.policy.apply(&mut spec);
    Ok(Declared {
        spec,
        pieces,
        parameters,
        fragments,
        bounds: Bounds {
            max_rows: max_rows as usize,
            max_bytes,
            timeout: instance.statement_timeout,
        },
        write: write.then_some(Mode::Write {
            dry_run: false,
            max_affected: tool.max_affected_rows,
            returns_rows: statement.returns_rows,
        }),
        compares_rows: !(statement.adds_values_only && statement.returns_rows),
        declared_output: tool.output_schema.is_some(),
    })
}

/// Its name and description, its policy, and whether this instance may serve it.
fn identity<'a>(
    tool: &'a SqlToolSettings,
    instance: &SqlSettings,
) -> Result<(&'a str, &'a str), Problem> {
    let refused = |text: &str| Err(Problem::Identity(text.to_string()));
    let policy = &tool.policy;
    let Some(name) = &policy.name else {
        return refused(
            "`name` is missing: every SQL tool names itself (a lower-case letter, then lower-case letters, digits or `_`)",
        );
    };
    let Some(description) = &policy.description else {
        return refused(
            "`description` is missing: every SQL tool says what it is for, written for the model",
        );
    };
    let problems = policy.problems();
    if !problems.is_empty() {
        return Err(Problem::Identity(problems.join("; ")));
    }
    for (key, set) in [
        ("destructive", tool.destructive),
        ("idempotent", tool.idempotent),
    ] {
        let hinted = (policy.annotations.keys()).any(|hint| hint.starts_with(key));
        if set.is_some() && hinted {
            return Err(Problem::Identity(format!(
                "`{key}` and `annotations.{key}` are one hint: keep one"
            )));
        }
    }
    if !is_tool_name(name) {
        return refused(
            "a tool's name is a lower-case letter, then lower-case letters, digits or `_`, at most 64",
        );
    }
    if is_generic_name(name) {
        return refused(
            "a generic tool (sql, query, execute_*, run_*, raw_*) is not allowed: declare one tool per business question",
        );
    }
    if policy.write && instance.read_only {
        return refused("a write tool needs an instance with `read_only = false`");
    }
    if !policy.write && tool.max_affected_rows.is_some() {
        return refused("`max_affected_rows` is for write tools (`write = true`)");
    }
    Ok((name, description))
}

/// The arguments' schema: an object with declared properties, nothing else accepted.
struct Arguments {
    schema: Map<String, Value>,
    properties: Map<String, Value>,
    required: Vec<String>,
}

impl Arguments {
    fn of(tool: &SqlToolSettings) -> Result<Self, Problem> {
        let refused = |text: &str| Err(Problem::Schema(text.to_string()));
        let mut schema = match &tool.input_schema {
            None => Map::new(),
            Some(Value::Object(schema)) => schema.clone(),
            Some(_) => return refused("input_schema must be a table (a JSON Schema object)"),
        };
        match schema.get("type") {
            None => {
                schema.insert("type".into(), json!("object"));
            }
            Some(Value::String(t)) if t == "object" => {}
            Some(_) => return refused("input_schema must have type = \"object\""),
        }
        schema
            .entry("additionalProperties")
            .or_insert(Value::Bool(false));
        let properties = match schema.entry("properties").or_insert_with(|| json!({})) {
            Value::Object(properties) => {
                properties.values_mut().for_each(bound_parameter);
                properties.clone()
            }
            _ => return refused("input_schema.properties must be a table"),
        };
        for (name, parameter) in &properties {
            if kind_of(parameter) == Kind::Json
                && parameter.get("type").is_some()
                && !tool.fragments.contains_key(name)
                && parameter.get("type") != Some(&json!("object"))
            {
                return Err(Problem::Schema(format!(
                    "input_schema.properties.{name}: a parameter is a string, integer, number, boolean or an array of one of them"
                )));
            }
        }
        let required = schema.get("required").and_then(strings).unwrap_or_default();
        Ok(Self {
            schema,
            properties,
            required,
        })
    }
}

/// Fragments: one enum argument each, whose values are exactly the choices.
fn fragments(
    tool: &SqlToolSettings,
    pieces: &[Piece],
    arguments: &Arguments,
) -> Result<Fragments, Problem> {
    let refused = |text: String| Err(Problem::Fragment(text));
    let used = statement::fragments(pieces);
    let mut fragments = BTreeMap::new();
    for name in &used {
        let Some(choices) = tool.fragments.get(*name) else {
            return refused(format!("sql: `{{{name}}}` has no `fragments.{name}`"));
        };
        let Some(property) = arguments.properties.get(*name) else {
            return refused(format!(
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
            return refused(format!(
                "fragment `{name}`: the choices ({}) and the argument's enum ({}) must be the same",
                keys.join(", "),
                listed.join(", ")
            ));
        }
        for (choice, sql) in choices {
            if sql.contains([':', '{', ';']) || sql.contains("--") || sql.contains("/*") {
                return refused(format!(
                    "fragment `{name}.{choice}`: a fragment is plain SQL, without parameters, fragments, `;` or comments"
                ));
            }
        }
        let default = property
            .get("default")
            .and_then(Value::as_str)
            .map(String::from);
        if default.is_none() && !arguments.required.iter().any(|r| r == name) {
            return refused(format!(
                "fragment `{name}`: its argument needs a `default` or must be required"
            ));
        }
        fragments.insert(name.to_string(), (choices.clone(), default));
    }
    if let Some(unused) = tool.fragments.keys().find(|f| !used.contains(&f.as_str())) {
        return refused(format!(
            "fragments.{unused} is not used in the statement (`{{{unused}}}`)"
        ));
    }
    Ok(fragments)
}

/// Parameters: each declared once (an argument or a `bind`), each declared one used.
fn parameters(
    tool: &SqlToolSettings,
    pieces: &[Piece],
    properties: &Map<String, Value>,
    fragments: &Fragments,
) -> Result<Vec<Parameter>, Problem> {
    let refused = |text: String| Err(Problem::Parameter(text));
    let used = statement::parameters(pieces);
    let mut parameters = Vec::new();
    for name in &used {
        if let Some(from) = tool.bind.get(*name) {
            if properties.contains_key(*name) {
                return refused(format!(
                    "`{name}` is filled from the caller (bind), so it cannot be an argument too"
                ));
            }
            let Some(field) = CallerField::parse(from) else {
                return refused(format!(
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
                return refused(format!(
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
            return refused(format!(
                "sql: `:{name}` is not declared: add it to input_schema.properties, or to bind"
            ));
        }
    }
    for name in properties.keys() {
        if !used.contains(&name.as_str()) && !fragments.contains_key(name) {
            return refused(format!(
                "input_schema.properties.{name} is not used in the statement"
            ));
        }
    }
    for name in tool.bind.keys() {
        if !used.contains(&name.as_str()) {
            return refused(format!("bind.{name} is not used in the statement"));
        }
    }
    Ok(parameters)
}

/// What every rendering the fragments allow does, as the engine's parser reads it.
struct Checked {
    effect: Effect,
    returns_rows: bool,
    adds_values_only: bool,
}

fn checked(
    engine: Engine,
    pieces: &[Piece],
    parameters: &[Parameter],
    fragments: &Fragments,
    write: bool,
) -> Result<Checked, Problem> {
    let mut all = Checked {
        effect: Effect::Reads,
        returns_rows: write,
        adds_values_only: true,
    };
    for rendered in renderings(engine, pieces, parameters, fragments) {
        let checked = check::statement(&rendered.sql, engine, write)
            .map_err(|e| Problem::Statement(format!("sql: {e}")))?;
        all.effect = checked.effect;
        all.returns_rows &= checked.returns_rows;
        all.adds_values_only &= checked.adds_values_only;
    }
    Ok(all)
}

/// Where a parameter's value comes from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Source {
    Argument,
    /// Filled from the authenticated caller; never an argument.
    Caller(CallerField),
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum CallerField {
    Client,
    User,
    Role,
    /// A claim of the caller's access token (`claim.<name>`): a tenant, an organisation.
    Claim(String),
}

impl CallerField {
    /// `bind`'s word for where a parameter comes from.
    pub(crate) fn parse(from: &str) -> Option<Self> {
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
pub(crate) struct Parameter {
    pub(crate) name: String,
    pub(crate) kind: Kind,
    pub(crate) source: Source,
    pub(crate) default: Option<Value>,
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

/// The statement written out for every fragment choice ([`variants`]), with stand-in values
/// (NULL, a one-element array) of each parameter's kind: what `check` parses and `check --live`
/// has the database prepare.
pub(crate) fn renderings(
    engine: crate::render::Engine,
    pieces: &[Piece],
    parameters: &[Parameter],
    fragments: &Fragments,
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
fn variants(fragments: &Fragments) -> Vec<BTreeMap<String, String>> {
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

    /// Each check refuses as what it checks, with the words `check` prints.
    #[test]
    fn a_refusal_says_which_check_it_is() {
        let declare_one = |tool: Value| {
            let instance: SqlSettings = serde_json::from_value(
                json!({"url": "shop.db", "read_only": false, "tool": [tool]}),
            )
            .expect("settings");
            declare(&instance.tools[0], &instance, Engine::Sqlite).map(|_| ())
        };
        let tool = |sql: &str| json!({"name": "order_list", "description": "Orders.", "sql": sql});
        assert!(declare_one(tool("SELECT id FROM orders")).is_ok());
        let mut wrong_schema = tool("SELECT 1");
        wrong_schema["input_schema"] = json!({"type": "array"});
        let cases = [
            (
                json!({"name": "sql", "description": "x", "sql": "SELECT 1"}),
                "Identity",
            ),
            (tool("SELECT id FROM orders WHERE id = :id"), "Parameter"),
            (tool("SELECT {col} FROM orders"), "Fragment"),
            (wrong_schema, "Schema"),
            (tool("DROP TABLE orders"), "Statement"),
        ];
        for (declared, which) in cases {
            let problem = declare_one(declared.clone()).expect_err(&declared.to_string());
            assert!(
                format!("{problem:?}").starts_with(which),
                "{declared}: {problem:?}"
            );
            assert!(!problem.to_string().is_empty());
        }
    }
}
