//! The JSON Schema of the deployment file (`concierge config schema`), derived from the very
//! types the file is read into, so an editor that completes keys and `concierge check` cannot
//! disagree about what a key is.
//!
//! The deployment's own sections come from [`Config`]'s derive. An `[apps.<name>]` section is
//! read by its kind's code, which the binary registers ([`crate::Apps::settings`]); each kind's
//! settings schema gains its `kind` key here, and a section is checked against the kind it names
//! (or, with no `kind`, the kind of its own name). Simulators likewise, by name.
//!
//! Draft 7, the newest draft Taplo ("Even Better TOML") reads.

use std::collections::BTreeMap;

use schemars::generate::SchemaSettings;
use schemars::{Schema, SchemaGenerator};
use serde_json::{Map, Value, json};

use super::apps::KIND;
use super::{Config, ConfigError};

/// A kind's settings schema: `schemars::SchemaGenerator::subschema_for::<Settings>`.
pub type SettingsSchema = fn(&mut SchemaGenerator) -> Schema;

/// Where the schema says it is served from, for the `$id`.
pub const SCHEMA_ID: &str = "https://concierge.invalid/schema/concierge.toml.json";

/// The whole document's schema: the deployment's sections, `[apps.<name>]` by kind and
/// `[simulators.<name>]` by name.
pub fn document(
    kinds: &BTreeMap<String, SettingsSchema>,
    simulators: &BTreeMap<String, SettingsSchema>,
) -> Value {
    let mut generator = SchemaGenerator::new(SchemaSettings::draft07());
    let kinds: Vec<(String, Schema)> = kinds
        .iter()
        .map(|(name, schema)| (name.clone(), schema(&mut generator)))
        .collect();
    let simulators: Vec<(String, Schema)> = simulators
        .iter()
        .map(|(name, schema)| (name.clone(), schema(&mut generator)))
        .collect();
    let mut root = generator.into_root_schema_for::<Config>().to_value();
    let definitions = root
        .get("definitions")
        .and_then(Value::as_object)
        .cloned()
        .unwrap_or_default();
    let resolve = |schema: &Schema| -> Value {
        let value = schema.as_value().clone();
        match value.get("$ref").and_then(Value::as_str) {
            Some(reference) => definitions
                .get(reference.trim_start_matches("#/definitions/"))
                .cloned()
                .unwrap_or(value),
            None => value,
        }
    };

    let mut added = Map::new();
    let names: Vec<Value> = kinds.iter().map(|(name, _)| json!(name)).collect();
    let mut by_kind = Vec::new();
    let mut named = Map::new();
    for (kind, settings) in &kinds {
        let mut settings = resolve(settings);
        with_kind(&mut settings, kind);
        let id = format!("app.{kind}");
        added.insert(id.clone(), settings);
        by_kind.push(json!({
            "if": {"properties": {KIND: {"const": kind}}, "required": [KIND]},
            "then": {"$ref": format!("#/definitions/{id}")},
        }));
        // `[apps.coffee]` with no `kind` is the coffee kind; with one, the kind it names.
        named.insert(
            kind.clone(),
            json!({
                "if": {"required": [KIND]},
                "then": {"$ref": "#/definitions/app"},
                "else": {"$ref": format!("#/definitions/{id}")},
            }),
        );
    }
    added.insert(
        "app".into(),
        json!({
            "type": "object",
            "description": "An app instance: `kind` names the code that serves it; the other keys are that kind's settings.",
            "required": [KIND],
            "properties": {KIND: {"enum": names, "description": "The kind of app (the section's name when absent)."}},
            "allOf": by_kind,
        }),
    );
    let apps = json!({
        "type": "object",
        "description": root["properties"]["apps"]["description"],
        "propertyNames": {"pattern": "^[a-z][a-z0-9_-]{0,63}$"},
        "properties": named,
        "additionalProperties": {"$ref": "#/definitions/app"},
    });
    let simulators = json!({
        "type": "object",
        "description": root["properties"]["simulators"]["description"],
        "properties": simulators
            .iter()
            .map(|(name, schema)| (name.clone(), resolve(schema)))
            .collect::<Map<String, Value>>(),
        "additionalProperties": false,
    });
    root["properties"]["apps"] = apps;
    root["properties"]["simulators"] = simulators;
    if let Some(definitions) = root.get_mut("definitions").and_then(Value::as_object_mut) {
        definitions.extend(added);
    }
    accept_interpolation(&mut root);
    if let Some(definitions) = root.get_mut("definitions").and_then(Value::as_object_mut) {
        definitions.insert(
            INTERPOLATED.into(),
            json!({
                "type": "string",
                "pattern": "\\$\\{",
                "description": "`${VAR}` or `${VAR:-default}`: read from the environment when the config is loaded.",
            }),
        );
    }
    root["$id"] = json!(SCHEMA_ID);
    root["title"] = json!("concierge.toml");
    root
}

/// The definition a string of fixed choices or format may also be: an environment reference.
pub const INTERPOLATED: &str = "Interpolated";

/// Any string value may be `${VAR}` (see `interpolate.rs`), read before the value is: a choice
/// (`log_format = "${CONCIERGE_LOG_FORMAT:-text}"`) or a date is then any such reference. Other
/// strings take it as they are; numbers and booleans cannot be interpolated.
fn accept_interpolation(value: &mut Value) {
    match value {
        Value::Object(object) => {
            for inner in object.values_mut() {
                accept_interpolation(inner);
            }
            let strings_only = |choices: &Value| {
                choices
                    .as_array()
                    .is_some_and(|c| !c.is_empty() && c.iter().all(Value::is_string))
            };
            let constant_strings =
                object
                    .get("oneOf")
                    .and_then(Value::as_array)
                    .is_some_and(|variants| {
                        !variants.is_empty()
                            && variants
                                .iter()
                                .all(|v| v.get("const").is_some_and(Value::is_string))
                    });
            let formatted = object.contains_key("format")
                && match object.get("type") {
                    Some(Value::String(kind)) => kind == "string",
                    Some(Value::Array(kinds)) => kinds.contains(&json!("string")),
                    _ => false,
                };
            if object.get("enum").is_some_and(strings_only) || constant_strings || formatted {
                let mut original = std::mem::take(object);
                // What describes the key stays beside the choices, where a reader looks.
                for key in ["description", "default", "x-env"] {
                    if let Some(kept) = original.remove(key) {
                        object.insert(key.into(), kept);
                    }
                }
                let original = Value::Object(original);
                object.insert(
                    "anyOf".into(),
                    json!([original, {"$ref": format!("#/definitions/{INTERPOLATED}")}]),
                );
            }
        }
        Value::Array(items) => items.iter_mut().for_each(accept_interpolation),
        _ => {}
    }
}

/// A kind's settings with the `kind` key that names it.
fn with_kind(settings: &mut Value, kind: &str) {
    let Some(object) = settings.as_object_mut() else {
        return;
    };
    object.insert("type".into(), json!("object"));
    let properties = object
        .entry("properties")
        .or_insert_with(|| json!({}))
        .as_object_mut();
    if let Some(properties) = properties {
        properties.insert(
            KIND.into(),
            json!({"const": kind, "description": "The kind of app (the section's name when absent)."}),
        );
    }
}

/// What `schema` finds wrong with a config's text as written (before `${VAR}` is read), each at
/// its key path: `concierge check` reports these too, so that it and an editor reading the schema
/// never disagree — also about a section no endpoint serves, which `check` does not build.
pub fn problems(text: &str, schema: &Value) -> Vec<ConfigError> {
    match Compiled::new(schema) {
        Some(compiled) => compiled.problems(text),
        None => vec![ConfigError::new("", "the config schema does not compile")],
    }
}

/// The config schema compiled once, for a process that reads its config again and again (a
/// reload checks the file against it exactly as `concierge check` does).
pub struct Compiled(jsonschema::Validator);

impl Compiled {
    /// `None` when `schema` is no draft-7 schema (a bug of the binary, not of a config).
    pub fn new(schema: &Value) -> Option<Self> {
        jsonschema::draft7::new(schema).ok().map(Self)
    }

    /// What the schema finds wrong with a config's text; see [`problems`].
    pub fn problems(&self, text: &str) -> Vec<ConfigError> {
        let Ok(document) = toml::from_str::<toml::Value>(text) else {
            return Vec::new(); // a syntax error is reported by the config's own reading
        };
        let document = json_of(document);
        self.0
            .iter_errors(&document)
            .map(|error| {
                let at: Vec<String> = error
                    .instance_path()
                    .into_iter()
                    .map(|segment| match segment {
                        jsonschema::paths::LocationSegment::Property(key) => key.to_string(),
                        jsonschema::paths::LocationSegment::Index(index) => format!("[{index}]"),
                    })
                    .collect();
                ConfigError::new(at.join(".").replace(".[", "["), error.to_string())
            })
            .collect()
    }
}

/// A TOML document as JSON Schema reads it (an editor's view too): a date is its text.
fn json_of(value: toml::Value) -> Value {
    match value {
        toml::Value::String(text) => Value::String(text),
        toml::Value::Integer(number) => Value::from(number),
        toml::Value::Float(number) => Value::from(number),
        toml::Value::Boolean(flag) => Value::Bool(flag),
        toml::Value::Datetime(datetime) => Value::String(datetime.to_string()),
        toml::Value::Array(items) => Value::Array(items.into_iter().map(json_of).collect()),
        toml::Value::Table(table) => Value::Object(
            table
                .into_iter()
                .map(|(key, value)| (key, json_of(value)))
                .collect(),
        ),
    }
}
