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
    if !object.contains_key("type") {
        object.insert("type".into(), Value::String("object".into()));
    }
    object
}
