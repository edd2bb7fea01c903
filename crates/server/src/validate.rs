//! Arguments are checked against the tool's input schema before the tool runs.
//!
//! The answer is written for a model to correct itself: the field as it wrote it (`items[0].qty`),
//! what was wrong, what is allowed — in the app's language.

use concierge_core::Messages;
use jsonschema::error::{TypeKind, ValidationErrorKind};
use jsonschema::paths::LocationSegment;
use jsonschema::{ValidationError, Validator};
use serde_json::{Map, Value};

/// Argument names that known clients add on their own and that are dropped, not refused, when
/// the tool's schema does not declare them (a tool that does keeps its own argument):
/// - n8n's MCP Client Tool sends `toolCallId` with every call;
/// - n8n before 2.2.5 behind a Chat Trigger also sends `action`, `sessionId` and `chatInput`
///   (n8n issue #22787); from 2.2.5 on it sends only what a schema declares.
pub const INJECTED_ARGUMENTS: &[&str] = &["toolCallId", "action", "sessionId", "chatInput"];

/// The arguments of a call to no known tool, for the audit: every injected name goes.
pub fn without_any_injected(mut arguments: Map<String, Value>) -> Map<String, Value> {
    for injected in INJECTED_ARGUMENTS {
        arguments.remove(*injected);
    }
    arguments
}

pub struct ArgumentValidator {
    validator: Validator,
    schema: Value,
    /// The injected names this tool does not declare: dropped before validation.
    dropped: Vec<&'static str>,
}

/// A failed check: the field path and the message for the model.
#[derive(Debug, Clone, PartialEq)]
pub struct ArgumentError {
    pub field: String,
    pub message: String,
}

impl ArgumentValidator {
    pub fn new(schema: &Map<String, Value>) -> Result<Self, String> {
        let declared = schema.get("properties").and_then(Value::as_object);
        let dropped = INJECTED_ARGUMENTS
            .iter()
            .copied()
            .filter(|name| declared.is_none_or(|p| !p.contains_key(*name)))
            .collect();
        let schema = Value::Object(schema.clone());
        jsonschema::draft202012::new(&schema)
            .map(|validator| Self {
                validator,
                schema,
                dropped,
            })
            .map_err(|e| e.to_string())
    }

    /// The arguments without the injected names this tool does not declare: what the tool gets,
    /// and all the audit keeps (n8n's `chatInput` is the person's own words, `sessionId` names
    /// the conversation).
    pub fn without_injected(&self, arguments: &Map<String, Value>) -> Map<String, Value> {
        let mut kept = arguments.clone();
        for injected in &self.dropped {
            kept.remove(*injected);
        }
        kept
    }

    /// Drops injected arguments, then validates. Returns the arguments the tool will receive.
    pub fn check(
        &self,
        arguments: Option<Map<String, Value>>,
        says: &Messages,
    ) -> Result<Value, ArgumentError> {
        let mut arguments = arguments.unwrap_or_default();
        for injected in &self.dropped {
            arguments.remove(*injected);
        }
        let mut arguments = Value::Object(arguments);
        integral_floats_as_integers(&mut arguments);
        if let Some(error) = self.validator.iter_errors(&arguments).next() {
            return Err(describe(&error, &self.schema, &arguments, says));
        }
        Ok(arguments)
    }
}

/// `2.0` and `2e3` are integers to JSON Schema, but not to serde's `u32`: a client that writes
/// whole numbers that way would pass the schema and then fail inside the tool (found by the
/// `tool_arguments` fuzz target). Written as integers here, they read as every numeric type.
fn integral_floats_as_integers(value: &mut Value) {
    match value {
        Value::Number(number) if number.is_f64() => {
            let Some(float) = number.as_f64().filter(|f| f.fract() == 0.0) else {
                return;
            };
            // Only where the integer is exact: beyond 2^64 the schema's bounds refuse it anyway.
            if float >= 0.0 && float < u64::MAX as f64 {
                *value = Value::from(float as u64);
            } else if float < 0.0 && float >= i64::MIN as f64 {
                *value = Value::from(float as i64);
            }
        }
        Value::Array(items) => items.iter_mut().for_each(integral_floats_as_integers),
        Value::Object(fields) => fields.values_mut().for_each(integral_floats_as_integers),
        _ => {}
    }
}

fn field_path(error: &ValidationError<'_>) -> String {
    let mut path = String::new();
    for segment in error.instance_path().segments() {
        match segment {
            LocationSegment::Property(name) => {
                if !path.is_empty() {
                    path.push('.');
                }
                path.push_str(&name);
            }
            LocationSegment::Index(index) => path.push_str(&format!("[{index}]")),
        }
    }
    path
}

fn join(parent: &str, child: &str) -> String {
    if parent.is_empty() {
        child.to_string()
    } else {
        format!("{parent}.{child}")
    }
}

fn describe(
    error: &ValidationError<'_>,
    schema: &Value,
    arguments: &Value,
    says: &Messages,
) -> ArgumentError {
    let at = field_path(error);
    let value = compact(error.instance());
    let (field, message) = match error.kind() {
        ValidationErrorKind::Required { property } => {
            let name = property.as_str().unwrap_or_default();
            (join(&at, name), says.required.to_string())
        }
        ValidationErrorKind::AdditionalProperties { unexpected } => {
            let name = unexpected.first().cloned().unwrap_or_default();
            let allowed =
                allowed_properties(error, schema).unwrap_or_else(|| says.no_arguments.into());
            (
                join(&at, &name),
                format!("{} {allowed}", says.unknown_argument),
            )
        }
        ValidationErrorKind::Type { kind } => {
            let expected = match kind {
                TypeKind::Single(t) => t.to_string(),
                TypeKind::Multiple(set) => format!("{set:?}"),
            };
            (
                at,
                format!(
                    "{value}: {} {}",
                    says.wrong_type,
                    says.type_names.of(&expected)
                ),
            )
        }
        ValidationErrorKind::Minimum { limit }
        | ValidationErrorKind::ExclusiveMinimum { limit } => {
            (at, format!("{value}: {} {limit}", says.below_minimum))
        }
        ValidationErrorKind::Maximum { limit }
        | ValidationErrorKind::ExclusiveMaximum { limit } => {
            (at, format!("{value}: {} {limit}", says.above_maximum))
        }
        ValidationErrorKind::MinItems { limit } => (at, format!("{} {limit}", says.min_items)),
        ValidationErrorKind::MaxItems { limit } => (at, format!("{} {limit}", says.max_items)),
        ValidationErrorKind::MinLength { limit } => (at, format!("{} {limit}", says.min_length)),
        ValidationErrorKind::MaxLength { limit } => (at, format!("{} {limit}", says.max_length)),
        ValidationErrorKind::Enum { options } => (
            at,
            format!("{value}: {} {}", says.not_one_of, compact(options)),
        ),
        // An argument a schema without properties refuses (`additionalProperties: false` and
        // nothing declared): the same answer as any unknown argument, not "False schema".
        ValidationErrorKind::FalseSchema
            if error
                .schema_path()
                .as_str()
                .ends_with("/additionalProperties") =>
        {
            let allowed =
                allowed_properties(error, schema).unwrap_or_else(|| says.no_arguments.into());
            // jsonschema names neither the object nor the key here: the refused key is the first
            // of the object at `at` that its schema does not declare.
            let declared = allowed_properties(error, schema).unwrap_or_default();
            let declared: Vec<&str> = declared.split(", ").collect();
            let object = arguments
                .pointer(error.instance_path().as_str())
                .and_then(Value::as_object);
            let field =
                match object.and_then(|o| o.keys().find(|k| !declared.contains(&k.as_str()))) {
                    Some(name) => join(&at, name),
                    None => at,
                };
            (field, format!("{} {allowed}", says.unknown_argument))
        }
        _ => (at, error.to_string()),
    };
    ArgumentError {
        field: if field.is_empty() {
            "arguments".into()
        } else {
            field
        },
        message,
    }
}

/// The properties the schema at the failing place allows, for "allowed: …".
fn allowed_properties(error: &ValidationError<'_>, schema: &Value) -> Option<String> {
    let keyword_path = error.schema_path().as_str();
    let parent = keyword_path
        .rsplit_once('/')
        .map_or("", |(parent, _)| parent);
    let names: Vec<&str> = schema
        .pointer(&format!("{parent}/properties"))
        .and_then(Value::as_object)
        .map(|properties| properties.keys().map(String::as_str).collect())
        .unwrap_or_default();
    (!names.is_empty()).then(|| names.join(", "))
}

fn compact(value: &Value) -> String {
    let text = value.to_string();
    if text.chars().count() > 60 {
        format!("{}…", text.chars().take(60).collect::<String>())
    } else {
        text
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn validator(schema: Value) -> ArgumentValidator {
        ArgumentValidator::new(schema.as_object().unwrap()).unwrap()
    }

    fn arguments(value: Value) -> Option<Map<String, Value>> {
        value.as_object().cloned()
    }

    /// What n8n 2.1.4 sends behind a Chat Trigger: the tool's own arguments and four of its own.
    fn n8n_2_1_4(own: Value) -> Option<Map<String, Value>> {
        let mut all = own.as_object().cloned().unwrap();
        all.insert("toolCallId".into(), json!("call_9f2c1e"));
        all.insert("action".into(), json!("sendMessage"));
        all.insert("sessionId".into(), json!("0b0e7c5a3f4d4c2e9a1b"));
        all.insert(
            "chatInput".into(),
            json!("Welche Reisen gibt es im Januar?"),
        );
        Some(all)
    }

    /// Fuzz regression (`tool_arguments`): `9999e9` passed an integer schema and failed `u64`.
    #[test]
    fn whole_numbers_written_as_floats_reach_the_tool_as_integers() {
        let check = validator(json!({
            "type": "object",
            "properties": {"id": {"type": "integer", "minimum": 0}, "price": {"type": "number"}},
        }));
        let passed = check
            .check(
                arguments(json!({"id": 9999e9, "price": 2.5})),
                &concierge_core::messages::ENGLISH,
            )
            .unwrap();
        assert_eq!(passed["id"].as_u64(), Some(9_999_000_000_000));
        assert_eq!(passed["price"].as_f64(), Some(2.5));
    }

    #[test]
    fn injected_names_are_dropped_when_undeclared() {
        let check = validator(json!({
            "type": "object",
            "properties": {"query": {"type": "string"}},
            "additionalProperties": false,
        }));
        let passed = check
            .check(
                n8n_2_1_4(json!({"query": "Ski"})),
                &concierge_core::messages::ENGLISH,
            )
            .unwrap();
        assert_eq!(passed, json!({"query": "Ski"}));
        // Any other unknown name is still refused, with the names that are allowed.
        let error = check
            .check(
                arguments(json!({"query": "Ski", "qurey": "x"})),
                &concierge_core::messages::ENGLISH,
            )
            .unwrap_err();
        assert_eq!(error.field, "qurey");
        assert!(error.message.contains("query"), "{error:?}");
    }

    #[test]
    fn a_tool_without_arguments_refuses_one_readably() {
        let check = validator(json!({"type": "object", "additionalProperties": false}));
        let error = check
            .check(
                arguments(json!({"large": true})),
                &concierge_core::messages::ENGLISH,
            )
            .unwrap_err();
        assert_eq!(error.field, "large");
        assert_eq!(error.message, "unknown argument; allowed: none");
        assert!(
            check
                .check(n8n_2_1_4(json!({})), &concierge_core::messages::ENGLISH)
                .is_ok()
        );
    }

    #[test]
    fn a_tool_that_declares_an_injected_name_keeps_it() {
        let check = validator(json!({
            "type": "object",
            "properties": {"sessionId": {"type": "string"}, "action": {"enum": ["book"]}},
            "additionalProperties": false,
        }));
        let passed = check
            .check(
                arguments(json!({"sessionId": "s-1", "toolCallId": "call_1"})),
                &concierge_core::messages::ENGLISH,
            )
            .unwrap();
        assert_eq!(passed, json!({"sessionId": "s-1"}));
        // Declared, it is validated like any argument: n8n's `action` is not one of its values.
        let error = check
            .check(n8n_2_1_4(json!({})), &concierge_core::messages::ENGLISH)
            .unwrap_err();
        assert_eq!(error.field, "action");
    }
}
