//! The keys a table of a config takes, read from its type's JSON Schema: for the unknown-key
//! reporter where serde names none — a section that embeds another with `#[serde(flatten)]`
//! (every kind's per-tool section embeds `concierge_core::ToolPolicy`) refuses an unknown key
//! with a bare "unknown field", without the list of the keys it takes.

use schemars::JsonSchema;
use serde_json::{Map, Value};
use serde_path_to_error::Segment;

/// How deep `$ref`s and `anyOf`/`oneOf`/`allOf` are followed from one table: a guard against a
/// schema that refers to itself.
const DEPTH: usize = 8;

/// The keys the table at `path` of a `T` takes, as `T`'s JSON Schema lists them, in its order
/// (empty where the path leads to no table the schema describes).
pub(super) fn keys_at<T: JsonSchema>(path: &[&Segment]) -> Vec<String> {
    let root = schemars::SchemaGenerator::default()
        .into_root_schema_for::<T>()
        .to_value();
    let empty = Map::new();
    let definitions = root
        .get("$defs")
        .and_then(Value::as_object)
        .unwrap_or(&empty);
    let mut tables = vec![&root];
    for segment in path {
        tables = tables
            .into_iter()
            .flat_map(|schema| alternatives(schema, definitions, 0))
            .filter_map(|schema| step(schema, segment))
            .collect();
    }
    let mut keys: Vec<String> = Vec::new();
    for table in tables
        .into_iter()
        .flat_map(|schema| alternatives(schema, definitions, 0))
    {
        for key in table
            .get("properties")
            .and_then(Value::as_object)
            .into_iter()
            .flat_map(Map::keys)
        {
            if !keys.contains(key) {
                keys.push(key.clone());
            }
        }
    }
    keys
}

/// `schema` and what it stands for: its `$ref` resolved, the branches of its `anyOf`, `oneOf`
/// and `allOf` (an `Option` is `anyOf` the value and null; an enum, `oneOf` its variants).
fn alternatives<'a>(
    schema: &'a Value,
    definitions: &'a Map<String, Value>,
    depth: usize,
) -> Vec<&'a Value> {
    if depth > DEPTH {
        return Vec::new();
    }
    let mut found = vec![schema];
    if let Some(name) = schema
        .get("$ref")
        .and_then(Value::as_str)
        .and_then(|reference| reference.strip_prefix("#/$defs/"))
        && let Some(definition) = definitions.get(name)
    {
        found.extend(alternatives(definition, definitions, depth + 1));
    }
    for combined in ["anyOf", "oneOf", "allOf"] {
        for branch in schema
            .get(combined)
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            found.extend(alternatives(branch, definitions, depth + 1));
        }
    }
    found
}

/// The schema one step of a path leads to from `schema`.
fn step<'a>(schema: &'a Value, segment: &Segment) -> Option<&'a Value> {
    match segment {
        Segment::Map { key } => schema
            .get("properties")
            .and_then(|properties| properties.get(key.as_str()))
            .or_else(|| schema.get("additionalProperties").filter(|s| s.is_object())),
        Segment::Seq { .. } => schema.get("items").filter(|s| s.is_object()),
        // An externally tagged variant is a key of its own; an internally tagged one is the
        // same table (its tag a property with the variant's name as its constant).
        Segment::Enum { variant } => match schema
            .get("properties")
            .and_then(|properties| properties.get(variant.as_str()))
        {
            Some(inner) => Some(inner),
            None => {
                let tags_another = (schema.get("properties").and_then(Value::as_object))
                    .is_some_and(|properties| {
                        properties.values().any(|property| {
                            (property.get("const").and_then(Value::as_str))
                                .is_some_and(|tag| tag != variant)
                        })
                    });
                (!tags_another).then_some(schema)
            }
        },
        Segment::Unknown => None,
    }
}
