//! Arguments are checked against the tool's input schema before the tool runs.
//!
//! The answer is written for a model to correct itself: the field as it wrote it (`items[0].qty`),
//! what was wrong, what is allowed — in the app's language.

use concierge_core::Language;
use jsonschema::error::{TypeKind, ValidationErrorKind};
use jsonschema::paths::LocationSegment;
use jsonschema::{ValidationError, Validator};
use serde_json::{Map, Value};

/// Argument names that known clients add on their own and that are dropped, not refused:
/// n8n's MCP Client Tool sends `toolCallId` with every call.
pub const INJECTED_ARGUMENTS: &[&str] = &["toolCallId"];

pub struct ArgumentValidator {
    validator: Validator,
    schema: Value,
}

/// A failed check: the field path and the message for the model.
#[derive(Debug, Clone, PartialEq)]
pub struct ArgumentError {
    pub field: String,
    pub message: String,
}

impl ArgumentValidator {
    pub fn new(schema: &Map<String, Value>) -> Result<Self, String> {
        let schema = Value::Object(schema.clone());
        jsonschema::draft202012::new(&schema)
            .map(|validator| Self { validator, schema })
            .map_err(|e| e.to_string())
    }

    /// Drops injected arguments, then validates. Returns the arguments the tool will receive.
    pub fn check(
        &self,
        arguments: Option<Map<String, Value>>,
        language: Language,
    ) -> Result<Value, ArgumentError> {
        let mut arguments = arguments.unwrap_or_default();
        for injected in INJECTED_ARGUMENTS {
            arguments.remove(*injected);
        }
        let arguments = Value::Object(arguments);
        if let Some(error) = self.validator.iter_errors(&arguments).next() {
            return Err(describe(&error, &self.schema, language));
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

fn describe(error: &ValidationError<'_>, schema: &Value, language: Language) -> ArgumentError {
    let at = field_path(error);
    let value = compact(error.instance());
    let ru = language == Language::Russian;
    let (field, message) = match error.kind() {
        ValidationErrorKind::Required { property } => {
            let name = property.as_str().unwrap_or_default();
            let field = join(&at, name);
            let message = if ru {
                "обязательное поле не указано".to_string()
            } else {
                "required, but missing".to_string()
            };
            (field, message)
        }
        ValidationErrorKind::AdditionalProperties { unexpected } => {
            let name = unexpected.first().cloned().unwrap_or_default();
            let allowed = allowed_properties(error, schema, ru);
            let message = if ru {
                format!("неизвестный аргумент; допустимы: {allowed}")
            } else {
                format!("unknown argument; allowed: {allowed}")
            };
            (join(&at, &name), message)
        }
        ValidationErrorKind::Type { kind } => {
            let expected = match kind {
                TypeKind::Single(t) => t.to_string(),
                TypeKind::Multiple(set) => format!("{set:?}"),
            };
            let message = if ru {
                format!(
                    "значение {value} имеет неверный тип, нужен {}",
                    type_ru(&expected)
                )
            } else {
                format!("{value} is not of type {expected}")
            };
            (at, message)
        }
        ValidationErrorKind::Minimum { limit }
        | ValidationErrorKind::ExclusiveMinimum { limit } => {
            let message = if ru {
                format!("значение {value} меньше допустимого минимума {limit}")
            } else {
                format!("{value} is less than the minimum of {limit}")
            };
            (at, message)
        }
        ValidationErrorKind::Maximum { limit }
        | ValidationErrorKind::ExclusiveMaximum { limit } => {
            let message = if ru {
                format!("значение {value} больше допустимого максимума {limit}")
            } else {
                format!("{value} is greater than the maximum of {limit}")
            };
            (at, message)
        }
        ValidationErrorKind::MinItems { limit } => {
            let message = if ru {
                format!("нужно не меньше {limit} элементов")
            } else {
                format!("needs at least {limit} item(s)")
            };
            (at, message)
        }
        ValidationErrorKind::MaxItems { limit } => {
            let message = if ru {
                format!("допустимо не больше {limit} элементов")
            } else {
                format!("allows at most {limit} item(s)")
            };
            (at, message)
        }
        ValidationErrorKind::MinLength { limit } => {
            let message = if ru {
                format!("нужно не меньше {limit} символов")
            } else {
                format!("needs at least {limit} character(s)")
            };
            (at, message)
        }
        ValidationErrorKind::MaxLength { limit } => {
            let message = if ru {
                format!("допустимо не больше {limit} символов")
            } else {
                format!("allows at most {limit} character(s)")
            };
            (at, message)
        }
        ValidationErrorKind::Enum { options } => {
            let message = if ru {
                format!("значение {value} не из списка: {}", compact(options))
            } else {
                format!("{value} is not one of {}", compact(options))
            };
            (at, message)
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
fn allowed_properties(error: &ValidationError<'_>, schema: &Value, ru: bool) -> String {
    let keyword_path = error.schema_path().as_str();
    let parent = keyword_path
        .rsplit_once('/')
        .map_or("", |(parent, _)| parent);
    let names: Vec<&str> = schema
        .pointer(&format!("{parent}/properties"))
        .and_then(Value::as_object)
        .map(|properties| properties.keys().map(String::as_str).collect())
        .unwrap_or_default();
    match (names.is_empty(), ru) {
        (true, true) => "аргументов нет".into(),
        (true, false) => "none".into(),
        (false, _) => names.join(", "),
    }
}

fn type_ru(expected: &str) -> &'static str {
    match expected {
        "integer" => "целое число",
        "number" => "число",
        "string" => "строка",
        "array" => "список",
        "object" => "объект",
        "boolean" => "true или false",
        _ => "другой тип",
    }
}

fn compact(value: &Value) -> String {
    let text = value.to_string();
    if text.chars().count() > 60 {
        format!("{}…", text.chars().take(60).collect::<String>())
    } else {
        text
    }
}
