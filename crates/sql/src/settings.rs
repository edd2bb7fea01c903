//! An `[apps.<name>]` section of kind `sql`, as the config writes it.

use std::collections::BTreeMap;
use std::time::Duration;

use concierge_core::ToolPolicy;
use serde::{Deserialize, Deserializer};
use serde_json::Value;

/// One database and the tools declared over it.
#[derive(Debug, Clone, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SqlSettings {
    /// `postgres://` or `postgresql://`; `mysql://` or `mariadb://`; `sqlite://path` or a path.
    pub url: String,
    /// Every statement runs in a transaction the engine holds read-only (a read-only connection
    /// on SQLite). `false` allows write tools.
    #[serde(default = "yes")]
    pub read_only: bool,
    /// Connections to the database at most.
    #[serde(default = "four")]
    pub max_connections: u32,
    /// How long one statement may run; the database cancels it then.
    #[schemars(with = "concierge_core::written::Duration", extend("default" = "5s"))]
    #[serde(default = "five_seconds", deserialize_with = "bounded_duration")]
    pub statement_timeout: Duration,
    /// Rows in one result at most; a tool may lower it.
    #[serde(default = "two_hundred")]
    pub max_rows: u32,
    /// Bytes of one result at most (its JSON); whole rows are dropped from the end.
    #[schemars(with = "concierge_core::written::Size")]
    #[serde(
        default = "sixty_four_kib",
        deserialize_with = "concierge_core::sizes::size"
    )]
    pub max_bytes: usize,
    /// SQLite only: a SQL script that creates the database file when there is none (the demo's
    /// shop, a test's fixture). Never run against a file that exists.
    #[serde(default)]
    pub create_from: Option<String>,
    /// `en`, `ru`, `zh`, `de` or `vi`: the language of the platform's messages to the model.
    #[serde(default)]
    pub language: Option<String>,
    #[serde(default, rename = "tool")]
    /// The tools, one `[[apps.<name>.tool]]` each: a name, a description and one SQL statement.
    pub tools: Vec<SqlToolSettings>,
}

/// One tool: one statement, with the keys every kind's tools take (`name` and `description`
/// required here).
#[derive(Debug, Clone, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
#[schemars(transform = name_and_description_required)]
pub struct SqlToolSettings {
    #[serde(flatten)]
    pub policy: ToolPolicy,
    /// One statement; `:name` parameters, `{name}` fragments.
    pub sql: String,
    /// Parameters filled from the caller: `"client"`, `"user"`, `"role"` or `"claim.<name>"` (a
    /// claim of the OAuth access token, bound as the JSON type the token gives it).
    #[serde(default)]
    pub bind: BTreeMap<String, String>,
    /// For each `{name}`: the SQL of each choice, keyed by the values of the enum argument
    /// `name` declares.
    #[serde(default)]
    pub fragments: BTreeMap<String, BTreeMap<String, String>>,
    /// JSON Schema of the arguments (`type = "object"` and `additionalProperties = false` are
    /// added); a tool without parameters needs none.
    #[serde(default)]
    pub input_schema: Option<Value>,
    /// The result's JSON Schema; derived from the statement's columns by `check --live` when
    /// absent.
    #[serde(default)]
    pub output_schema: Option<Value>,
    /// A write that would change more rows is rolled back and refused.
    pub max_affected_rows: Option<u64>,
    /// This tool's own bound, at most the instance's.
    pub max_rows: Option<u32>,
    /// This tool's own bound of a result's bytes, at most the instance's.
    #[schemars(with = "Option<concierge_core::written::Size>")]
    #[serde(default, deserialize_with = "concierge_core::sizes::optional_size")]
    pub max_bytes: Option<usize>,
    /// The write may overwrite or delete (default: for `UPDATE` and `DELETE`); the same as
    /// `annotations.destructive`.
    pub destructive: Option<bool>,
    /// Calling the write twice with the same arguments has no extra effect (default: no); the
    /// same as `annotations.idempotent`.
    pub idempotent: Option<bool>,
}

impl SqlToolSettings {
    /// The tool's name as written (empty when it has none: a problem the tool's check names).
    pub fn name(&self) -> &str {
        self.policy.name.as_deref().unwrap_or_default()
    }
}

/// Every SQL tool names and describes itself (there is no operation or listing to take them
/// from): the schema says so, as the tool's check does.
fn name_and_description_required(schema: &mut schemars::Schema) {
    if let Some(object) = schema.as_object_mut() {
        let required = object
            .entry("required")
            .or_insert_with(|| Value::Array(Vec::new()));
        if let Value::Array(required) = required {
            for key in ["name", "description"] {
                if !required.iter().any(|k| k == key) {
                    required.push(Value::String(key.into()));
                }
            }
        }
    }
}

fn yes() -> bool {
    true
}

fn four() -> u32 {
    4
}

fn five_seconds() -> Duration {
    Duration::from_secs(5)
}

fn two_hundred() -> u32 {
    200
}

fn sixty_four_kib() -> usize {
    64 * 1024
}

fn bounded_duration<'de, D: Deserializer<'de>>(deserializer: D) -> Result<Duration, D::Error> {
    let value: Duration = humantime_serde::deserialize(deserializer)?;
    if value >= Duration::from_millis(10) && value <= Duration::from_secs(600) {
        Ok(value)
    } else {
        Err(serde::de::Error::custom(
            "must be at least 10ms and at most 10m",
        ))
    }
}
