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

/// Drops schemars' Rust-type formats (`uint32`, `double`, …). Clients that validate with AJV print
/// a warning for each, and the bounds they stand for are already there as `minimum`/`maximum`.
fn strip_custom_formats(object: &mut Map<String, Value>) {
    if let Some(Value::String(format)) = object.get("format")
        && !STANDARD_FORMATS.contains(&format.as_str())
    {
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
        assert_eq!(qty["description"], "How many.");
        assert!(schema.get("$schema").is_none() && schema.get("title").is_none());
    }
}
