//! The operations a config chooses, read from the document into what a tool needs: its name,
//! description and hints, one input schema (path, query, header and cookie parameters, and the
//! body as `body`), the output schema of its success, and how each argument travels.

use std::collections::BTreeMap;

use concierge_core::json::strings;
use concierge_core::{Annotations, ToolSpec};
use http::Method;
use serde_json::{Map, Value, json};

use crate::document::{Document, Notes};
use crate::naming::snake_case;
use crate::settings::{OpenApiSettings, OperationOverride};

/// The longest tool name MCP clients accept.
pub const MAX_NAME: usize = 64;
/// The longest description published; the parameters' own descriptions stay in the schema.
const MAX_DESCRIPTION: usize = 1024;
const METHODS: [&str; 8] = [
    "get", "put", "post", "delete", "options", "head", "patch", "trace",
];

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Location {
    Path,
    Query,
    Header,
    Cookie,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Style {
    Simple,
    Label,
    Matrix,
    Form,
    SpaceDelimited,
    PipeDelimited,
    DeepObject,
}

#[derive(Debug, Clone)]
pub struct Parameter {
    pub name: String,
    pub location: Location,
    pub style: Style,
    pub explode: bool,
    /// Sent as JSON text (a parameter described by `content`, not `schema`).
    pub as_json: bool,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Media {
    Json,
    Form,
}

/// One chosen operation, ready to be a tool.
#[derive(Debug, Clone)]
pub struct Operation {
    pub id: String,
    /// The tool as published: what the document says, the config's policy over it.
    pub spec: ToolSpec,
    pub method: Method,
    pub path: String,
    pub parameters: Vec<Parameter>,
    pub body: Option<Media>,
    /// The header the operation takes an idempotency key in, if it declares one.
    pub idempotency_header: Option<String>,
    /// The answer is put under `result` (its schema is not an object's).
    pub wraps_result: bool,
}

/// Every operation the settings choose, in the document's order; an unknown id, an empty tag,
/// a name clash or an over-long name is an error naming it.
pub fn chosen(
    document: &Document,
    settings: &OpenApiSettings,
    notes: &mut Notes,
) -> Result<Vec<Operation>, Vec<String>> {
    let mut found = Vec::new();
    let mut problems = Vec::new();
    let all = listed(document);
    for wanted in &settings.operations {
        let matches: Vec<&Listed> = match wanted.strip_prefix("tag:") {
            Some(tag) => all
                .iter()
                .filter(|l| l.tags.iter().any(|t| t == tag))
                .collect(),
            None => all.iter().filter(|l| l.id == *wanted).collect(),
        };
        if matches.is_empty() {
            problems.push(match wanted.strip_prefix("tag:") {
                Some(tag) => format!("`operations`: no operation has the tag `{tag}`"),
                None => format!("`operations`: `{wanted}` is not an operationId of the document"),
            });
        }
        for listed in matches {
            if !found.iter().any(|f: &&Listed| f.id == listed.id) {
                found.push(listed);
            }
        }
    }
    for id in settings.overrides.keys() {
        if !found.iter().any(|f| f.id == *id) {
            problems.push(format!(
                "`override.{id}`: `{id}` is not one of the chosen operations"
            ));
        }
    }
    let mut operations = Vec::new();
    for listed in found {
        let edit = settings
            .overrides
            .get(&listed.id)
            .cloned()
            .unwrap_or_default();
        match operation(document, listed, edit, notes) {
            Ok(operation) => operations.push(operation),
            Err(problem) => problems.push(format!("operation `{}`: {problem}", listed.id)),
        }
    }
    let mut names: BTreeMap<&str, &str> = BTreeMap::new();
    for operation in &operations {
        if let Some(other) = names.insert(&operation.spec.name, &operation.id) {
            problems.push(format!(
                "operations `{other}` and `{}` are both served as `{}`: give one an \
                 `override.<id>.name`",
                operation.id, operation.spec.name
            ));
        }
    }
    if problems.is_empty() {
        Ok(operations)
    } else {
        Err(problems)
    }
}

/// An operation as the document lists it.
pub struct Listed {
    pub id: String,
    pub method: &'static str,
    pub path: String,
    pub tags: Vec<String>,
    pub operation: Value,
    /// The path item's parameters, shared by its operations.
    pub shared: Vec<Value>,
}

/// Every operation of the document; one without an `operationId` is known by
/// `<method>_<path>`.
pub fn listed(document: &Document) -> Vec<Listed> {
    let mut all = Vec::new();
    let Some(Value::Object(paths)) = document.root.get("paths") else {
        return all;
    };
    for (path, item) in paths {
        let mut notes = Notes::default();
        let item = match item.get("$ref") {
            Some(_) => document.resolve(item, &mut notes),
            None => item.clone(),
        };
        let shared = item
            .get("parameters")
            .and_then(Value::as_array)
            .cloned()
            .unwrap_or_default();
        for method in METHODS {
            let Some(operation) = item.get(method) else {
                continue;
            };
            let id = operation
                .get("operationId")
                .and_then(Value::as_str)
                .map(str::to_string)
                .unwrap_or_else(|| snake_case(&format!("{method} {path}")));
            let tags = operation.get("tags").and_then(strings).unwrap_or_default();
            all.push(Listed {
                id,
                method,
                path: path.clone(),
                tags,
                operation: operation.clone(),
                shared: shared.clone(),
            });
        }
    }
    all
}

/// One listed operation planned as a tool, with `edit` over what the document says.
pub(crate) fn operation(
    document: &Document,
    listed: &Listed,
    edit: OperationOverride,
    notes: &mut Notes,
) -> Result<Operation, String> {
    let method = Method::from_bytes(listed.method.to_ascii_uppercase().as_bytes())
        .map_err(|_| "an unknown method".to_string())?;
    let op = &listed.operation;
    let mut spec = ToolSpec::new(
        snake_case(&listed.id),
        description_of(op, &listed.method.to_ascii_uppercase(), &listed.path),
        Map::new(),
        Map::new(),
        implied(&method),
    );
    spec.title = op
        .get("summary")
        .and_then(Value::as_str)
        .map(str::to_string);
    edit.policy.apply(&mut spec);
    let name = &spec.name;
    if name.is_empty() || name.len() > MAX_NAME {
        return Err(format!(
            "its tool name `{name}` is {} characters; MCP clients take 1 to {MAX_NAME}: set \
             `override.{}.name`",
            name.len(),
            listed.id
        ));
    }
    if !name
        .chars()
        .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.'))
    {
        return Err(format!(
            "the tool name `{name}` may hold only letters, digits, `_`, `-` and `.`"
        ));
    }
    if !listed.path.starts_with('/')
        || listed
            .path
            .split('/')
            .any(|segment| segment == "." || segment == "..")
    {
        return Err(format!(
            "its path `{}` must start with `/` and hold no `.` or `..` segment",
            listed.path
        ));
    }

    // Parameters: the path item's, then the operation's (which win by name and place).
    let mut declared: Vec<Value> = Vec::new();
    for parameter in listed.shared.iter().chain(
        op.get("parameters")
            .and_then(Value::as_array)
            .into_iter()
            .flatten(),
    ) {
        let parameter = document.resolve(parameter, notes);
        declared.retain(|d| !(d["name"] == parameter["name"] && d["in"] == parameter["in"]));
        declared.push(parameter);
    }
    let write = spec.write.is_some();
    let mut properties = Map::new();
    let mut required = Vec::new();
    let mut parameters = Vec::new();
    let mut idempotency_header = None;
    for parameter in declared {
        let name = parameter["name"]
            .as_str()
            .ok_or("a parameter without a name")?
            .to_string();
        let location = match parameter["in"].as_str() {
            Some("path") => Location::Path,
            Some("query") => Location::Query,
            Some("header") => Location::Header,
            Some("cookie") => Location::Cookie,
            other => return Err(format!("parameter `{name}` is in {other:?}")),
        };
        if location == Location::Header
            && ["accept", "content-type", "authorization"]
                .contains(&name.to_ascii_lowercase().as_str())
        {
            // OpenAPI says these are ignored as parameters; the request sets them.
            continue;
        }
        if location == Location::Header && name.eq_ignore_ascii_case("idempotency-key") && write {
            idempotency_header = Some(name);
            continue;
        }
        if properties.contains_key(&name) || name == "body" {
            return Err(format!(
                "two parameters (or a parameter and the body) are both named `{name}`"
            ));
        }
        let (schema, as_json) = match (parameter.get("schema"), parameter.get("content")) {
            (Some(schema), _) => (schema.clone(), false),
            (None, Some(Value::Object(content))) => (
                content
                    .values()
                    .next()
                    .and_then(|m| m.get("schema"))
                    .cloned()
                    .unwrap_or(json!({})),
                true,
            ),
            _ => (json!({}), false),
        };
        let schema = described(document.json_schema(&schema, true), &parameter);
        let style = match parameter.get("style").and_then(Value::as_str) {
            Some("simple") => Style::Simple,
            Some("label") => Style::Label,
            Some("matrix") => Style::Matrix,
            Some("form") => Style::Form,
            Some("spaceDelimited") => Style::SpaceDelimited,
            Some("pipeDelimited") => Style::PipeDelimited,
            Some("deepObject") => Style::DeepObject,
            Some(other) => return Err(format!("parameter `{name}` has style `{other}`")),
            None => match location {
                Location::Query | Location::Cookie => Style::Form,
                Location::Path | Location::Header => Style::Simple,
            },
        };
        let explode = parameter
            .get("explode")
            .and_then(Value::as_bool)
            .unwrap_or(style == Style::Form);
        if location == Location::Path || parameter["required"] == Value::Bool(true) {
            required.push(Value::String(name.clone()));
        }
        properties.insert(name.clone(), schema);
        parameters.push(Parameter {
            name,
            location,
            style,
            explode,
            as_json,
        });
    }

    let mut body = None;
    if let Some(request_body) = op.get("requestBody") {
        let request_body = document.resolve(request_body, notes);
        let content = request_body
            .get("content")
            .and_then(Value::as_object)
            .cloned()
            .unwrap_or_default();
        let json_media = content
            .iter()
            .find(|(media, _)| is_json(media))
            .map(|(_, m)| (Media::Json, m));
        let form_media = content
            .iter()
            .find(|(media, _)| media.starts_with("application/x-www-form-urlencoded"))
            .map(|(_, m)| (Media::Form, m));
        let body_required = request_body["required"] == Value::Bool(true);
        match json_media.or(form_media) {
            Some((media, media_type)) => {
                let schema = described(
                    document.json_schema(media_type.get("schema").unwrap_or(&json!({})), true),
                    &request_body,
                );
                properties.insert("body".into(), schema);
                if body_required {
                    required.push(json!("body"));
                }
                body = Some(media);
            }
            None if body_required => {
                let kinds: Vec<&String> = content.keys().collect();
                return Err(format!(
                    "its body is {kinds:?}; concierge sends JSON and form bodies only"
                ));
            }
            None => {}
        }
    }

    let input_schema = match json!({
        "type": "object",
        "properties": properties,
        "required": required,
        "additionalProperties": false,
    }) {
        Value::Object(schema) => schema,
        _ => Map::new(),
    };
    let (output_schema, wraps_result) = output_schema(document, op, notes);
    for (which, schema) in [("input", &input_schema), ("output", &output_schema)] {
        if let Err(error) = jsonschema::options().build(&Value::Object(schema.clone())) {
            return Err(format!(
                "its {which} schema is not valid JSON Schema ({error}); fix the document or \
                 leave the operation out"
            ));
        }
    }
    spec.input_schema = input_schema;
    spec.output_schema = output_schema;
    Ok(Operation {
        id: listed.id.clone(),
        spec,
        method,
        path: listed.path.clone(),
        parameters,
        body,
        idempotency_header,
        wraps_result,
    })
}

pub fn is_json(media: &str) -> bool {
    let media = media.split(';').next().unwrap_or("").trim();
    media == "application/json" || media.ends_with("+json")
}

/// The schema of the operation's success (the lowest 2xx, else `2XX`, else `default`) as an
/// object: as it is when it describes one, else under `result`.
fn output_schema(document: &Document, op: &Value, notes: &mut Notes) -> (Map<String, Value>, bool) {
    let responses = op.get("responses").and_then(Value::as_object);
    let success = responses.and_then(|responses| {
        let mut codes: Vec<&String> = responses
            .keys()
            .filter(|code| {
                code.starts_with('2') && code.len() == 3 && code.chars().all(|c| c.is_ascii_digit())
            })
            .collect();
        codes.sort();
        codes
            .first()
            .and_then(|code| responses.get(*code))
            .or_else(|| responses.get("2XX"))
            .or_else(|| responses.get("default"))
    });
    let schema = success
        .map(|response| document.resolve(response, notes))
        .and_then(|response| {
            response
                .get("content")
                .and_then(Value::as_object)
                .and_then(|content| {
                    content
                        .iter()
                        .find(|(media, _)| is_json(media))
                        .and_then(|(_, m)| m.get("schema").cloned())
                })
        })
        .map(|schema| document.json_schema(&schema, false));
    match schema {
        Some(Value::Object(schema)) if describes_object(&schema) => {
            let mut schema = schema;
            schema.remove("$schema");
            (schema, false)
        }
        Some(schema) => (wrapped(schema), true),
        // No JSON promised: the answer (text, or nothing) comes back under `result`.
        None => (wrapped(json!({})), true),
    }
}

/// `schema` with the description of what it is the schema of (a parameter, a request body),
/// where it has none of its own: the model reads what the argument is for.
fn described(mut schema: Value, of: &Value) -> Value {
    if let (Value::Object(object), Some(text)) =
        (&mut schema, of.get("description").and_then(Value::as_str))
    {
        object
            .entry("description")
            .or_insert_with(|| Value::String(text.to_string()));
    }
    schema
}

fn describes_object(schema: &Map<String, Value>) -> bool {
    match schema.get("type") {
        Some(Value::String(kind)) => kind == "object",
        Some(_) => false,
        None => schema.contains_key("properties"),
    }
}

fn wrapped(schema: Value) -> Map<String, Value> {
    match json!({
        "type": "object",
        "properties": {"result": schema},
        "required": ["result"],
    }) {
        Value::Object(schema) => schema,
        _ => Map::new(),
    }
}

/// What the method implies (GET/HEAD read-only and idempotent, PUT/DELETE idempotent, DELETE
/// destructive); the config's policy goes over it.
fn implied(method: &Method) -> Annotations {
    let reads = matches!(*method, Method::GET | Method::HEAD | Method::OPTIONS);
    Annotations {
        read_only: reads,
        destructive: *method == Method::DELETE,
        idempotent: reads || matches!(*method, Method::PUT | Method::DELETE),
        open_world: false,
    }
}

/// The summary and the description, bounded; without either, what the operation is.
fn description_of(op: &Value, method: &str, path: &str) -> String {
    let parts: Vec<&str> = ["summary", "description"]
        .iter()
        .filter_map(|key| op.get(*key).and_then(Value::as_str))
        .map(str::trim)
        .filter(|text| !text.is_empty())
        .collect();
    let mut text = if parts.is_empty() {
        format!("{method} {path}")
    } else {
        parts.join("\n\n")
    };
    if text.chars().count() > MAX_DESCRIPTION {
        text = text.chars().take(MAX_DESCRIPTION - 1).collect::<String>() + "…";
    }
    text
}
