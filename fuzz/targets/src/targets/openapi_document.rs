//! An OpenAPI document a business hands concierge (or a URL serves it), and the arguments a
//! model sends: `{"document": …, "arguments": {…}}`, or any other bytes read as a document's
//! text (JSON or YAML). Every operation is made a tool and a request is built from the arguments.
//! Beyond no panic and no hang (cycles, deep and exponential `$ref`s are bounded): every tool's
//! input and output schemas compile as the platform mounts them, and a request never leaves the
//! configured origin nor climbs out of its base path, whatever an argument holds.

use serde_json::{Map, Value};

const BASE: &str = "http://api.invalid/base";

pub fn run(data: &[u8]) {
    let (document, arguments) = match serde_json::from_slice::<Value>(data) {
        Ok(Value::Object(mut input)) if input.contains_key("document") => {
            let arguments = match input.remove("arguments") {
                Some(Value::Object(arguments)) => arguments,
                _ => Map::new(),
            };
            (input.remove("document").unwrap_or(Value::Null), arguments)
        }
        _ => {
            let Ok(text) = std::str::from_utf8(data) else {
                return;
            };
            match concierge_openapi::parse(text) {
                Ok(document) => (document, Map::new()),
                Err(_) => return,
            }
        }
    };
    let Ok(document) = concierge_openapi::Document::from_value(document) else {
        return;
    };
    for (tool, url) in concierge_openapi::requests_for(&document, BASE, &arguments) {
        let spec = tool.spec();
        for schema in [&spec.input_schema, &spec.output_schema] {
            assert!(
                jsonschema::options()
                    .build(&Value::Object(schema.clone()))
                    .is_ok(),
                "`{}` publishes a schema that does not compile: {schema:?}",
                spec.name
            );
        }
        if let Some(url) = url {
            assert_eq!(url.host_str(), Some("api.invalid"), "{url}");
            assert_eq!(url.scheme(), "http", "{url}");
            assert!(
                url.path().starts_with("/base/"),
                "{url} climbed out of /base"
            );
        }
    }
}
