//! A large JSON document read for a few of its operations: only the path items that hold a
//! wanted operation and the components they reach (transitively) are parsed, each from its own
//! slice of the text, and everything else stays text until the text is dropped. GitHub's 13 MB
//! document is 80 MiB as one JSON tree; pruned for four operations it costs about 12 MiB at its
//! peak (`bench/run.sh --openapi`).

use std::collections::BTreeMap;

use serde_json::value::RawValue;
use serde_json::{Map, Value};

/// Documents smaller than this are read whole: pruning pays off only for large ones.
pub const PRUNE_ABOVE: u64 = 1 << 20;

/// The document with only the path items that hold a wanted operation and the components
/// they need; `None` when a `$ref` points where pruning cannot follow (read it whole then).
pub fn pruned(text: &str, wanted: &[String]) -> Result<Option<Value>, String> {
    let not_json = |error: serde_json::Error| format!("not JSON: {error}");
    // Each level is a map of slices of the text: only what is kept is ever parsed further.
    let top: BTreeMap<String, &RawValue> = serde_json::from_str(text).map_err(not_json)?;
    let parse = |raw: &RawValue| -> Result<Value, String> {
        serde_json::from_str(raw.get()).map_err(not_json)
    };
    let paths: BTreeMap<String, &RawValue> = match top.get("paths") {
        Some(raw) => serde_json::from_str(raw.get()).map_err(not_json)?,
        None => BTreeMap::new(),
    };
    let components: BTreeMap<String, BTreeMap<String, &RawValue>> = match top.get("components") {
        Some(raw) => serde_json::from_str(raw.get()).map_err(not_json)?,
        None => BTreeMap::new(),
    };
    let mut root = Map::new();
    for (key, raw) in &top {
        if key != "paths" && key != "components" {
            root.insert(key.clone(), parse(raw)?);
        }
    }
    let mut kept_paths = Map::new();
    let mut pending: Vec<String> = Vec::new();
    for (path, raw) in &paths {
        let item = parse(raw)?;
        let holds = item.as_object().is_some_and(|item| {
            item.iter().any(|(method, operation)| {
                let id = operation
                    .get("operationId")
                    .and_then(Value::as_str)
                    .map(str::to_string)
                    .unwrap_or_else(|| crate::naming::snake_case(&format!("{method} {path}")));
                let tags = operation.get("tags").and_then(Value::as_array);
                wanted.iter().any(|w| match w.strip_prefix("tag:") {
                    Some(tag) => tags.is_some_and(|t| t.iter().any(|x| x == tag)),
                    None => *w == id,
                })
            })
        });
        if holds || item.get("$ref").is_some() {
            references(&item, &mut pending);
            kept_paths.insert(path.clone(), item);
        }
    }
    root.insert("paths".into(), Value::Object(kept_paths));
    let mut kept: BTreeMap<String, Map<String, Value>> = BTreeMap::new();
    while let Some(reference) = pending.pop() {
        let Some(pointer) = reference.strip_prefix("#/components/") else {
            if reference.starts_with('#') {
                return Ok(None);
            }
            continue; // another file: read when resolved
        };
        let mut parts = pointer.splitn(3, '/');
        let (Some(kind), Some(name)) = (parts.next(), parts.next()) else {
            return Ok(None);
        };
        let name = name.replace("~1", "/").replace("~0", "~");
        if kept.get(kind).is_some_and(|k| k.contains_key(&name)) {
            continue;
        }
        let Some(raw) = components.get(kind).and_then(|k| k.get(&name)) else {
            continue; // named nothing: resolving says so
        };
        let value = parse(raw)?;
        references(&value, &mut pending);
        kept.entry(kind.to_string())
            .or_default()
            .insert(name, value);
    }
    // Security schemes are read for credentials, not through `$ref`s.
    if let Some(schemes) = components.get("securitySchemes") {
        for (name, raw) in schemes {
            kept.entry("securitySchemes".into())
                .or_default()
                .insert(name.clone(), parse(raw)?);
        }
    }
    root.insert(
        "components".into(),
        Value::Object(
            kept.into_iter()
                .map(|(kind, entries)| (kind, Value::Object(entries)))
                .collect(),
        ),
    );
    Ok(Some(Value::Object(root)))
}

/// Every `$ref` string in `value`.
fn references(value: &Value, found: &mut Vec<String>) {
    match value {
        Value::Object(object) => {
            if let Some(Value::String(reference)) = object.get("$ref") {
                found.push(reference.clone());
            }
            object.values().for_each(|v| references(v, found));
        }
        Value::Array(items) => items.iter().for_each(|v| references(v, found)),
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_large_document_keeps_only_what_the_wanted_operations_need() {
        let text = json!({
            "openapi": "3.0.3",
            "paths": {
                "/a": {"get": {"operationId": "getA", "responses": {"200": {"description": "",
                    "content": {"application/json": {"schema": {"$ref": "#/components/schemas/A"}}}}}}},
                "/b": {"get": {"operationId": "getB", "tags": ["bees"], "responses": {}}},
            },
            "components": {
                "schemas": {
                    "A": {"properties": {"b": {"$ref": "#/components/schemas/B/properties/x"}}},
                    "B": {"properties": {"x": {"type": "string"}}},
                    "Unused": {"type": "string"},
                },
                "securitySchemes": {"key": {"type": "apiKey", "in": "header", "name": "K"}},
            },
        })
        .to_string();
        let root = pruned(&text, &["getA".into()]).unwrap().unwrap();
        assert!(root["paths"].get("/a").is_some() && root["paths"].get("/b").is_none());
        let schemas = root["components"]["schemas"].as_object().unwrap();
        assert_eq!(schemas.keys().collect::<Vec<_>>(), ["A", "B"]);
        assert!(root["components"]["securitySchemes"].get("key").is_some());
        let by_tag = pruned(&text, &["tag:bees".into()]).unwrap().unwrap();
        assert!(by_tag["paths"].get("/b").is_some());
        // A reference outside the components: read whole instead.
        let odd = text.replace("#/components/schemas/A", "#/paths/~1b");
        assert!(pruned(&odd, &["getA".into()]).unwrap().is_none());
    }
}
