use schemars::JsonSchema;
use schemars::generate::SchemaSettings;
use serde_json::{Map, Value};

/// The JSON Schema of `T` as a model sees it: draft 2020-12 with every subschema inlined.
///
/// Inlining matters: several MCP clients (and the models behind them) ignore `$ref`/`$defs`, and a
/// nested type like an order line would reach them as an opaque object.
pub fn schema_for<T: JsonSchema>() -> Map<String, Value> {
    let generator = SchemaSettings::draft2020_12()
        .with(|settings| settings.inline_subschemas = true)
        .into_generator();
    let schema = generator.into_root_schema_for::<T>();
    let mut object = match serde_json::to_value(schema) {
        Ok(Value::Object(object)) => object,
        _ => Map::new(),
    };
    // The dialect is MCP's default, and the type name is noise to a model.
    object.remove("$schema");
    object.remove("title");
    strip_custom_formats(&mut object);
    if !object.contains_key("type") {
        object.insert("type".into(), Value::String("object".into()));
    }
    object
}

/// Whether an input schema mirrors an argument into a request header (an `x-mcp-header`
/// annotation, 2026-07-28): such headers are written and checked by rmcp, on both sides.
pub fn mirrors_headers(input_schema: &Map<String, Value>) -> bool {
    serde_json::to_string(input_schema).is_ok_and(|schema| schema.contains("\"x-mcp-header\""))
}

/// A write tool's output schema: its own answer, or one of the platform's in its place (the
/// confirmation preview, a dry run's report), which share none of its required fields.
pub fn or_platform_answers(schema: &Map<String, Value>) -> Map<String, Value> {
    let mut schema = schema.clone();
    // One dialect for the whole document: a `$schema` may stand only at its root.
    schema.remove("$schema");
    let mut wrapped = Map::new();
    wrapped.insert("type".into(), Value::String("object".into()));
    wrapped.insert(
        "anyOf".into(),
        serde_json::json!([
            schema,
            {"type": "object", "required": ["confirmationRequired"]},
            {"type": "object", "required": ["dryRun"]},
        ]),
    );
    wrapped
}

/// The `format` values JSON Schema defines; validators warn about any other.
const STANDARD_FORMATS: &[&str] = &[
    "date-time",
    "date",
    "time",
    "duration",
    "email",
    "idn-email",
    "hostname",
    "idn-hostname",
    "ipv4",
    "ipv6",
    "uri",
    "uri-reference",
    "iri",
    "iri-reference",
    "uuid",
    "uri-template",
    "json-pointer",
    "relative-json-pointer",
    "regex",
];

/// The range of schemars' integer formats: the type's bounds become `minimum`/`maximum`, so that
/// a number the schema accepts always reads as the Rust type (the `tool_arguments` fuzz target
/// found `{"user_id": 1e300}` valid for a `u64`; schemars writes only `minimum: 0` for unsigned).
fn integer_bounds(format: &str) -> Option<(i64, u64)> {
    Some(match format {
        "int8" => (i8::MIN.into(), i8::MAX as u64),
        "int16" => (i16::MIN.into(), i16::MAX as u64),
        "int32" => (i32::MIN.into(), i32::MAX as u64),
        "int64" | "int" => (i64::MIN, i64::MAX as u64),
        "uint8" => (0, u8::MAX.into()),
        "uint16" => (0, u16::MAX.into()),
        "uint32" => (0, u32::MAX.into()),
        "uint64" | "uint" => (0, u64::MAX),
        _ => return None,
    })
}

/// Drops schemars' Rust-type formats (`uint32`, `double`, …): clients that validate with AJV print
/// a warning for each. An integer format's bounds are written out first, where the schema gives
/// none or wider ones.
pub fn strip_custom_formats(object: &mut Map<String, Value>) {
    if let Some(Value::String(format)) = object.get("format")
        && !STANDARD_FORMATS.contains(&format.as_str())
    {
        if let Some((low, high)) = integer_bounds(format) {
            let below = |bound: &Value| bound.as_f64().is_none_or(|b| b < low as f64);
            if object.get("minimum").is_none_or(below) {
                object.insert("minimum".into(), low.into());
            }
            let above = |bound: &Value| bound.as_f64().is_none_or(|b| b > high as f64);
            if object.get("maximum").is_none_or(above) {
                object.insert("maximum".into(), high.into());
            }
        }
        object.remove("format");
    }
    for value in object.values_mut() {
        match value {
            Value::Object(child) => strip_custom_formats(child),
            Value::Array(items) => {
                for item in items.iter_mut() {
                    if let Value::Object(child) = item {
                        strip_custom_formats(child);
                    }
                }
            }
            _ => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use schemars::JsonSchema;

    use super::*;

    #[derive(JsonSchema)]
    #[allow(dead_code)]
    struct Line {
        /// How many.
        qty: u32,
        price: f64,
    }

    #[derive(JsonSchema)]
    #[allow(dead_code)]
    struct Order {
        lines: Vec<Line>,
    }

    #[test]
    fn nested_types_are_inlined_and_rust_formats_dropped() {
        let schema = Value::Object(schema_for::<Order>());
        let text = schema.to_string();
        assert!(!text.contains("$ref") && !text.contains("$defs"), "{text}");
        assert!(
            !text.contains("uint32") && !text.contains("double"),
            "{text}"
        );
        let qty = &schema["properties"]["lines"]["items"]["properties"]["qty"];
        assert_eq!(qty["minimum"], 0);
        assert_eq!(qty["maximum"], u32::MAX, "the type's bound, written out");
        assert_eq!(qty["description"], "How many.");
        assert!(schema.get("$schema").is_none() && schema.get("title").is_none());
    }
}
