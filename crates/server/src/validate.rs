//! Arguments are checked against the tool's input schema before the tool runs.
//!
//! The answer is written for a model to correct itself: the field as it wrote it (`items[0].qty`),
//! what was wrong, what is allowed — in the app's language.

use concierge_core::Language;
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
        language: Language,
    ) -> Result<Value, ArgumentError> {
        let mut arguments = arguments.unwrap_or_default();
        for injected in &self.dropped {
            arguments.remove(*injected);
        }
        let arguments = Value::Object(arguments);
        if let Some(error) = self.validator.iter_errors(&arguments).next() {
            return Err(describe(&error, &self.schema, &arguments, language));
        }
        Ok(arguments)
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
    language: Language,
) -> ArgumentError {
    let at = field_path(error);
    let value = compact(error.instance());
    let says = Phrases::of(language);
    let (field, message) = match error.kind() {
        ValidationErrorKind::Required { property } => {
            let name = property.as_str().unwrap_or_default();
            (join(&at, name), says.required.to_string())
        }
        ValidationErrorKind::AdditionalProperties { unexpected } => {
            let name = unexpected.first().cloned().unwrap_or_default();
            let allowed = allowed_properties(error, schema).unwrap_or_else(|| says.nothing.into());
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
                    (says.type_name)(&expected)
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
            let allowed = allowed_properties(error, schema).unwrap_or_else(|| says.nothing.into());
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

/// The platform's validation phrases in one language. Each is followed by the limit or the list.
struct Phrases {
    required: &'static str,
    unknown_argument: &'static str,
    nothing: &'static str,
    wrong_type: &'static str,
    type_name: fn(&str) -> String,
    below_minimum: &'static str,
    above_maximum: &'static str,
    min_items: &'static str,
    max_items: &'static str,
    min_length: &'static str,
    max_length: &'static str,
    not_one_of: &'static str,
}

impl Phrases {
    fn of(language: Language) -> Self {
        match language {
            Language::Russian => Self {
                required: "обязательное поле не указано",
                unknown_argument: "неизвестный аргумент; допустимы:",
                nothing: "аргументов нет",
                wrong_type: "неверный тип, нужен тип",
                type_name: |t| match t {
                    "integer" => "целое число".into(),
                    "number" => "число".into(),
                    "string" => "строка".into(),
                    "array" => "список".into(),
                    "object" => "объект".into(),
                    "boolean" => "true или false".into(),
                    other => other.into(),
                },
                below_minimum: "значение меньше допустимого минимума",
                above_maximum: "значение больше допустимого максимума",
                min_items: "нужно элементов не меньше, чем",
                max_items: "допустимо элементов не больше, чем",
                min_length: "нужно символов не меньше, чем",
                max_length: "допустимо символов не больше, чем",
                not_one_of: "значение не из списка:",
            },
            Language::Chinese => Self {
                required: "缺少必填参数",
                unknown_argument: "未知参数；允许的参数：",
                nothing: "无",
                wrong_type: "类型错误，应为",
                type_name: |t| match t {
                    "integer" => "整数".into(),
                    "number" => "数字".into(),
                    "string" => "字符串".into(),
                    "array" => "数组".into(),
                    "object" => "对象".into(),
                    "boolean" => "布尔值".into(),
                    other => other.into(),
                },
                below_minimum: "小于允许的最小值",
                above_maximum: "大于允许的最大值",
                min_items: "元素数量至少为",
                max_items: "元素数量至多为",
                min_length: "字符数至少为",
                max_length: "字符数至多为",
                not_one_of: "不在允许的取值中：",
            },
            Language::German => Self {
                required: "Pflichtangabe fehlt",
                unknown_argument: "unbekanntes Argument; erlaubt:",
                nothing: "keine",
                wrong_type: "falscher Typ, erwartet:",
                type_name: |t| match t {
                    "integer" => "ganze Zahl".into(),
                    "number" => "Zahl".into(),
                    "string" => "Text".into(),
                    "array" => "Liste".into(),
                    "object" => "Objekt".into(),
                    "boolean" => "true oder false".into(),
                    other => other.into(),
                },
                below_minimum: "kleiner als das Minimum",
                above_maximum: "größer als das Maximum",
                min_items: "mindestens so viele Einträge:",
                max_items: "höchstens so viele Einträge:",
                min_length: "mindestens so viele Zeichen:",
                max_length: "höchstens so viele Zeichen:",
                not_one_of: "nicht erlaubt; erlaubt:",
            },
            Language::English => Self {
                required: "required, but missing",
                unknown_argument: "unknown argument; allowed:",
                nothing: "none",
                wrong_type: "wrong type, expected",
                type_name: |t| t.to_string(),
                below_minimum: "less than the minimum of",
                above_maximum: "greater than the maximum of",
                min_items: "needs at least this many items:",
                max_items: "allows at most this many items:",
                min_length: "needs at least this many characters:",
                max_length: "allows at most this many characters:",
                not_one_of: "not one of",
            },
        }
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

    #[test]
    fn injected_names_are_dropped_when_undeclared() {
        let check = validator(json!({
            "type": "object",
            "properties": {"query": {"type": "string"}},
            "additionalProperties": false,
        }));
        let passed = check
            .check(n8n_2_1_4(json!({"query": "Ski"})), Language::English)
            .unwrap();
        assert_eq!(passed, json!({"query": "Ski"}));
        // Any other unknown name is still refused, with the names that are allowed.
        let error = check
            .check(
                arguments(json!({"query": "Ski", "qurey": "x"})),
                Language::English,
            )
            .unwrap_err();
        assert_eq!(error.field, "qurey");
        assert!(error.message.contains("query"), "{error:?}");
    }

    #[test]
    fn a_tool_without_arguments_refuses_one_readably() {
        let check = validator(json!({"type": "object", "additionalProperties": false}));
        let error = check
            .check(arguments(json!({"large": true})), Language::English)
            .unwrap_err();
        assert_eq!(error.field, "large");
        assert_eq!(error.message, "unknown argument; allowed: none");
        assert!(check.check(n8n_2_1_4(json!({})), Language::English).is_ok());
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
                Language::English,
            )
            .unwrap();
        assert_eq!(passed, json!({"sessionId": "s-1"}));
        // Declared, it is validated like any argument: n8n's `action` is not one of its values.
        let error = check
            .check(n8n_2_1_4(json!({})), Language::English)
            .unwrap_err();
        assert_eq!(error.field, "action");
    }
}
