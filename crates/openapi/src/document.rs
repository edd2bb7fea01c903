//! The OpenAPI document: read (JSON or YAML, 3.0 or 3.1), its `$ref`s resolved where a tool
//! needs them, its schemas turned into the JSON Schema an MCP client reads.
//!
//! The document is kept as a JSON value rather than a typed model: typed models refuse real
//! documents over details that do not matter here (roas 0.21 rejects GitHub's for one
//! `format: timestamp` on an integer), while the parts a tool needs — paths, operations,
//! parameters, bodies, responses, security schemes — are few and the same in 3.0 and 3.1.
//! A document is a stranger's bytes: every expansion is bounded (depth, nodes), a cycle is cut
//! where it closes, never followed.

use std::collections::{BTreeSet, HashMap};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde_json::{Map, Value, json};

/// The deepest chain of `$ref`s expanded into one schema.
const MAX_REF_DEPTH: usize = 32;
/// The most JSON nodes one resolved schema may have; beyond, the rest is cut (and said).
const MAX_NODES: usize = 50_000;
/// The largest document read.
pub const MAX_DOCUMENT_BYTES: u64 = 64 << 20;

/// Which revision wrote the document: what its schemas mean differs (`nullable`, boolean
/// `exclusiveMinimum` in 3.0).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Revision {
    V30,
    V31,
}

pub struct Document {
    pub root: Arc<Value>,
    pub revision: Revision,
    folder: PathBuf,
    /// Other files named by relative `$ref`s, read once.
    others: std::sync::Mutex<HashMap<PathBuf, Arc<Value>>>,
}

/// What resolving found that a person should know (a cycle cut, a size bound reached).
#[derive(Default)]
pub struct Notes(pub BTreeSet<String>);

impl Document {
    /// Reads the document at `path`.
    pub fn read(path: &Path) -> Result<Self, String> {
        let root = read_value(path)?;
        let revision = revision_of(&root)?;
        let folder = path
            .parent()
            .map(Path::to_path_buf)
            .unwrap_or_else(|| PathBuf::from("."));
        Ok(Self {
            root: Arc::new(root),
            revision,
            folder,
            others: Default::default(),
        })
    }

    /// Reads the document at `path` keeping only what `wanted` (operationIds, `tag:<name>`)
    /// needs (`prune.rs`): a large JSON document is never a whole JSON tree in memory. YAML,
    /// a small document, and one whose `$ref`s point outside `#/components/<kind>/<name>` are
    /// read whole.
    pub fn read_for(path: &Path, wanted: &[String]) -> Result<Self, String> {
        let shown = path.display();
        let size = std::fs::metadata(path)
            .map_err(|error| format!("`{shown}` cannot be read: {error}"))?
            .len();
        if !(crate::prune::PRUNE_ABOVE..=MAX_DOCUMENT_BYTES).contains(&size) {
            return Self::read(path);
        }
        let text = std::fs::read_to_string(path)
            .map_err(|error| format!("`{shown}` cannot be read: {error}"))?;
        if !text.trim_start().starts_with('{') {
            return Self::read(path);
        }
        let root = match crate::prune::pruned(&text, wanted) {
            Ok(Some(root)) => root,
            Ok(None) => return Self::read(path),
            Err(error) => return Err(format!("`{shown}`: {error}")),
        };
        drop(text);
        let revision = revision_of(&root)?;
        Ok(Self {
            root: Arc::new(root),
            revision,
            folder: path
                .parent()
                .map(Path::to_path_buf)
                .unwrap_or_else(|| PathBuf::from(".")),
            others: Default::default(),
        })
    }

    /// A document already parsed (tests, the fuzz target): relative-file refs are refused.
    pub fn from_value(root: Value) -> Result<Self, String> {
        let revision = revision_of(&root)?;
        Ok(Self {
            root: Arc::new(root),
            revision,
            folder: PathBuf::new(),
            others: Default::default(),
        })
    }

    /// `value` with every `$ref` in it replaced by what it names, as seen from the document's
    /// root; cycles and oversized expansions are cut and noted.
    pub fn resolve(&self, value: &Value, notes: &mut Notes) -> Value {
        let mut budget = MAX_NODES;
        let mut stack = Vec::new();
        self.expand(value, &self.root.clone(), &mut stack, &mut budget, notes)
    }

    fn expand(
        &self,
        value: &Value,
        file: &Arc<Value>,
        stack: &mut Vec<String>,
        budget: &mut usize,
        notes: &mut Notes,
    ) -> Value {
        if *budget == 0 {
            notes.0.insert(format!(
                "a schema is larger than {MAX_NODES} nodes; the rest is cut"
            ));
            return json!({});
        }
        *budget -= 1;
        match value {
            Value::Object(object) => {
                if let Some(Value::String(reference)) = object.get("$ref") {
                    return self.follow(reference, object, file, stack, budget, notes);
                }
                let mut out = Map::with_capacity(object.len());
                for (key, item) in object {
                    out.insert(key.clone(), self.expand(item, file, stack, budget, notes));
                }
                Value::Object(out)
            }
            Value::Array(items) => Value::Array(
                items
                    .iter()
                    .map(|item| self.expand(item, file, stack, budget, notes))
                    .collect(),
            ),
            other => other.clone(),
        }
    }

    fn follow(
        &self,
        reference: &str,
        object: &Map<String, Value>,
        file: &Arc<Value>,
        stack: &mut Vec<String>,
        budget: &mut usize,
        notes: &mut Notes,
    ) -> Value {
        if stack.iter().any(|r| r == reference) || stack.len() >= MAX_REF_DEPTH {
            notes.0.insert(format!(
                "`{reference}` refers back to itself; it is cut there (any value accepted)"
            ));
            return json!({});
        }
        let (target_file, pointer) = match reference.split_once('#') {
            Some(("", pointer)) => (file.clone(), pointer.to_string()),
            Some((other, pointer)) => match self.other_file(other) {
                Ok(found) => (found, pointer.to_string()),
                Err(why) => {
                    notes.0.insert(format!("`{reference}`: {why}"));
                    return json!({});
                }
            },
            None => match self.other_file(reference) {
                Ok(found) => (found, String::new()),
                Err(why) => {
                    notes.0.insert(format!("`{reference}`: {why}"));
                    return json!({});
                }
            },
        };
        let Some(target) = target_file.pointer(&pointer) else {
            notes
                .0
                .insert(format!("`{reference}` names nothing in the document"));
            return json!({});
        };
        stack.push(reference.to_string());
        let mut expanded = self.expand(target, &target_file, stack, budget, notes);
        stack.pop();
        // 3.1 lets a `$ref` stand beside other keywords (a description, say): they win.
        if let Value::Object(expanded) = &mut expanded {
            for (key, item) in object {
                if key != "$ref" {
                    let item = self.expand(item, file, stack, budget, notes);
                    expanded.insert(key.clone(), item);
                }
            }
        }
        expanded
    }

    /// A file named by a relative `$ref`: inside the document's folder only.
    fn other_file(&self, name: &str) -> Result<Arc<Value>, String> {
        if self.folder.as_os_str().is_empty() {
            return Err("a reference to another file; this document has no folder".into());
        }
        if name.contains("://") || Path::new(name).is_absolute() {
            return Err("only files beside the document are read".into());
        }
        let folder = self
            .folder
            .canonicalize()
            .map_err(|_| "the document's folder cannot be read".to_string())?;
        let path = folder
            .join(name)
            .canonicalize()
            .map_err(|_| "no such file beside the document".to_string())?;
        if !path.starts_with(&folder) {
            return Err("only files beside the document are read".into());
        }
        let mut others = self.others.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(found) = others.get(&path) {
            return Ok(found.clone());
        }
        let value = Arc::new(read_value(&path)?);
        others.insert(path, value.clone());
        Ok(value)
    }

    /// An OpenAPI schema (already resolved) as JSON Schema: 3.0's `nullable` and boolean
    /// exclusive bounds rewritten, OpenAPI-only keywords and `x-` extensions dropped, and the
    /// properties the direction does not carry removed (`readOnly` ones from what is sent,
    /// `writeOnly` ones from what comes back).
    pub fn json_schema(&self, schema: &Value, sent: bool) -> Value {
        convert(schema, self.revision, sent)
    }
}

fn read_value(path: &Path) -> Result<Value, String> {
    let shown = path.display();
    let size = std::fs::metadata(path)
        .map_err(|error| format!("`{shown}` cannot be read: {error}"))?
        .len();
    if size > MAX_DOCUMENT_BYTES {
        return Err(format!(
            "`{shown}` is larger than {} MiB",
            MAX_DOCUMENT_BYTES >> 20
        ));
    }
    let text = std::fs::read_to_string(path)
        .map_err(|error| format!("`{shown}` cannot be read: {error}"))?;
    parse(&text).map_err(|error| format!("`{shown}`: {error}"))
}

/// JSON, or else YAML (of which JSON is a subset, but JSON's own parser is faster and
/// says where it failed more plainly).
pub fn parse(text: &str) -> Result<Value, String> {
    if text.trim_start().starts_with('{') {
        return serde_json::from_str(text).map_err(|error| format!("not JSON: {error}"));
    }
    serde_yaml_ng::from_str(text).map_err(|error| format!("not YAML: {error}"))
}

fn revision_of(root: &Value) -> Result<Revision, String> {
    if root.get("swagger").is_some() {
        return Err(
            "this is a Swagger 2.0 document; concierge reads OpenAPI 3.0 and 3.1 — convert it \
             first (for example with `npx swagger2openapi`)"
                .into(),
        );
    }
    match root.get("openapi").and_then(Value::as_str) {
        Some(version) if version.starts_with("3.0") => Ok(Revision::V30),
        Some(version) if version.starts_with("3.1") || version.starts_with("3.2") => {
            Ok(Revision::V31)
        }
        Some(version) => Err(format!(
            "OpenAPI {version} is not read; concierge reads 3.0 and 3.1"
        )),
        None => Err("no `openapi` version: this is not an OpenAPI document".into()),
    }
}

/// Keywords of OpenAPI's schema object that JSON Schema does not have.
const OPENAPI_ONLY: [&str; 5] = [
    "discriminator",
    "xml",
    "externalDocs",
    "example",
    "nullable",
];

fn convert(schema: &Value, revision: Revision, sent: bool) -> Value {
    let Value::Object(object) = schema else {
        return schema.clone();
    };
    let mut out = Map::with_capacity(object.len());
    for (key, value) in object {
        if key.starts_with("x-") || OPENAPI_ONLY.contains(&key.as_str()) {
            continue;
        }
        let converted = match key.as_str() {
            "properties" | "patternProperties" | "$defs" | "definitions" => match value {
                Value::Object(properties) => Value::Object(
                    properties
                        .iter()
                        .filter(|(_, p)| !skipped(p, sent))
                        .map(|(name, p)| (name.clone(), convert(p, revision, sent)))
                        .collect(),
                ),
                other => other.clone(),
            },
            "items"
            | "additionalProperties"
            | "not"
            | "contains"
            | "propertyNames"
            | "unevaluatedProperties"
            | "unevaluatedItems"
            | "if"
            | "then"
            | "else" => convert(value, revision, sent),
            "allOf" | "anyOf" | "oneOf" | "prefixItems" => match value {
                Value::Array(items) => {
                    Value::Array(items.iter().map(|i| convert(i, revision, sent)).collect())
                }
                other => other.clone(),
            },
            _ => value.clone(),
        };
        out.insert(key.clone(), converted);
    }
    if let Some(Value::Array(required)) = object.get("required")
        && let Some(Value::Object(properties)) = object.get("properties")
    {
        // A required property the direction drops is not required of it.
        let kept: Vec<Value> = required
            .iter()
            .filter(|name| {
                name.as_str()
                    .and_then(|n| properties.get(n))
                    .is_none_or(|p| !skipped(p, sent))
            })
            .cloned()
            .collect();
        out.insert("required".into(), Value::Array(kept));
    }
    if !sent
        && let (Some(Value::Array(required)), Some(Value::Object(properties))) =
            (out.get("required").cloned(), out.get("properties"))
    {
        // A field that may be null is not required of an answer: many APIs leave a null field
        // out rather than send it (a null that is sent is handed on, and its schema takes it).
        let kept: Vec<Value> = required
            .into_iter()
            .filter(|name| {
                name.as_str()
                    .and_then(|n| properties.get(n))
                    .is_none_or(|p| !accepts_null(p))
            })
            .collect();
        out.insert("required".into(), Value::Array(kept));
    }
    if revision == Revision::V30 {
        for (bound, exclusive) in [
            ("minimum", "exclusiveMinimum"),
            ("maximum", "exclusiveMaximum"),
        ] {
            match out.get(exclusive) {
                Some(Value::Bool(true)) => {
                    if let Some(limit) = out.remove(bound) {
                        out.insert(exclusive.into(), limit);
                    } else {
                        out.remove(exclusive);
                    }
                }
                Some(Value::Bool(false)) => {
                    out.remove(exclusive);
                }
                _ => {}
            }
        }
    }
    // 3.0's keyword, met in 3.1 documents too (written for 3.0 and relabelled): an answer's
    // nulls are handed on, so a schema that says null may come must take it.
    if object.get("nullable") == Some(&Value::Bool(true)) {
        return nullable(out);
    }
    Value::Object(out)
}

/// 3.0's `nullable: true`: null allowed too.
fn nullable(mut schema: Map<String, Value>) -> Value {
    if let Some(Value::Array(choices)) = schema.get_mut("enum")
        && !choices.contains(&Value::Null)
    {
        choices.push(Value::Null);
    }
    match schema.get("type").cloned() {
        Some(Value::String(kind)) => {
            schema.insert("type".into(), json!([kind, "null"]));
            Value::Object(schema)
        }
        Some(Value::Array(mut kinds)) => {
            if !kinds.contains(&json!("null")) {
                kinds.push(json!("null"));
            }
            schema.insert("type".into(), Value::Array(kinds));
            Value::Object(schema)
        }
        _ => json!({"anyOf": [Value::Object(schema), {"type": "null"}]}),
    }
}

fn accepts_null(schema: &Value) -> bool {
    match schema.get("type") {
        Some(Value::String(kind)) => kind == "null",
        Some(Value::Array(kinds)) => kinds.iter().any(|k| k == "null"),
        _ => ["anyOf", "oneOf"].iter().any(|key| {
            schema
                .get(*key)
                .and_then(Value::as_array)
                .is_some_and(|choices| choices.iter().any(accepts_null))
        }),
    }
}

fn skipped(property: &Value, sent: bool) -> bool {
    let flag = if sent { "readOnly" } else { "writeOnly" };
    property.get(flag) == Some(&Value::Bool(true))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn document(components: Value) -> Document {
        Document::from_value(json!({"openapi": "3.0.3", "components": components})).unwrap()
    }

    /// That a note says `text`.
    fn assert_noted(notes: &Notes, text: &str) {
        assert!(
            notes.0.iter().any(|note| note.contains(text)),
            "{text:?} in {:?}",
            notes.0
        );
    }

    #[test]
    fn a_cycle_is_cut_where_it_closes() {
        let doc = document(json!({"schemas": {
            "Node": {"type": "object", "properties": {"child": {"$ref": "#/components/schemas/Node"}}}
        }}));
        let mut notes = Notes::default();
        let resolved = doc.resolve(&json!({"$ref": "#/components/schemas/Node"}), &mut notes);
        assert_eq!(resolved["properties"]["child"], json!({}));
        assert_noted(&notes, "refers back");
    }

    #[test]
    fn an_exponential_document_stops_at_the_node_bound() {
        let mut schemas = Map::new();
        schemas.insert("L0".into(), json!({"type": "string"}));
        for level in 1..40 {
            let below = format!("#/components/schemas/L{}", level - 1);
            schemas.insert(
                format!("L{level}"),
                json!({"type": "object", "properties": {"a": {"$ref": below}, "b": {"$ref": below}}}),
            );
        }
        let doc = document(json!({ "schemas": schemas }));
        let mut notes = Notes::default();
        doc.resolve(&json!({"$ref": "#/components/schemas/L39"}), &mut notes);
        assert_noted(&notes, "larger than");
    }

    #[test]
    fn nullable_and_exclusive_bounds_of_3_0_become_json_schema() {
        let doc = document(json!({}));
        let schema = doc.json_schema(
            &json!({"type": "integer", "nullable": true, "minimum": 0, "exclusiveMinimum": true, "x-internal": 1}),
            true,
        );
        assert_eq!(
            schema,
            json!({"type": ["integer", "null"], "exclusiveMinimum": 0})
        );
        let composed = doc.json_schema(
            &json!({"allOf": [{"type": "string"}], "nullable": true}),
            true,
        );
        assert_eq!(composed["anyOf"][1], json!({"type": "null"}));
        // 3.1's own way is JSON Schema already; its documents' stray `nullable` is read too.
        let v31 = Document::from_value(json!({"openapi": "3.1.0", "paths": {}})).unwrap();
        assert_eq!(
            v31.json_schema(&json!({"type": ["string", "null"]}), false),
            json!({"type": ["string", "null"]})
        );
        assert_eq!(
            v31.json_schema(&json!({"type": "string", "nullable": true}), false),
            json!({"type": ["string", "null"]})
        );
    }

    #[test]
    fn read_only_properties_are_not_asked_for() {
        let doc = document(json!({}));
        let schema = json!({"type": "object", "required": ["id", "name"], "properties": {
            "id": {"type": "integer", "readOnly": true}, "name": {"type": "string"}}});
        let sent = doc.json_schema(&schema, true);
        assert_eq!(sent["required"], json!(["name"]));
        assert!(sent["properties"].get("id").is_none());
        let answered = doc.json_schema(&schema, false);
        assert!(answered["properties"].get("id").is_some());
        // An API may leave a null field out: a nullable field is not required of an answer.
        let nullable = json!({"type": "object", "required": ["note"], "properties": {
            "note": {"type": "string", "nullable": true}}});
        assert_eq!(doc.json_schema(&nullable, false)["required"], json!([]));
        assert_eq!(
            doc.json_schema(&nullable, true)["required"],
            json!(["note"])
        );
    }

    #[test]
    fn a_file_beside_the_document_is_read_and_none_outside_it() {
        let dir = tempfile::tempdir().unwrap();
        let folder = dir.path().join("api");
        std::fs::create_dir(&folder).unwrap();
        std::fs::write(folder.join("common.yaml"), "Pet:\n  type: object\n").unwrap();
        std::fs::write(dir.path().join("secret.yaml"), "x: {type: string}\n").unwrap();
        let main = folder.join("main.yaml");
        std::fs::write(&main, "openapi: 3.1.0\npaths: {}\n").unwrap();
        let doc = Document::read(&main).unwrap();
        let mut notes = Notes::default();
        let pet = doc.resolve(&json!({"$ref": "common.yaml#/Pet"}), &mut notes);
        assert_eq!(pet, json!({"type": "object"}));
        let outside = doc.resolve(&json!({"$ref": "../secret.yaml#/x"}), &mut notes);
        assert_eq!(outside, json!({}));
        assert_noted(&notes, "beside the document");
    }

    #[test]
    fn swagger_2_is_refused_plainly() {
        let error = Document::from_value(json!({"swagger": "2.0"}))
            .err()
            .unwrap();
        assert!(error.contains("Swagger 2.0"), "{error}");
    }
}
