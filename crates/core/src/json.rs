//! Reading a JSON document a stranger or a config wrote: what several kinds read the same way.

use serde_json::Value;

/// The strings of an array, any other item passed over; `None` when `value` is no array. Read
/// from a document's key as `document.get(key).and_then(strings)`.
pub fn strings(value: &Value) -> Option<Vec<String>> {
    let items = value.as_array()?;
    Some(
        items
            .iter()
            .filter_map(Value::as_str)
            .map(str::to_string)
            .collect(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn the_strings_of_an_array_are_read_and_anything_else_is_none() {
        assert_eq!(
            strings(&json!(["a", 1, "b", null])),
            Some(vec!["a".into(), "b".into()])
        );
        assert_eq!(strings(&json!("a")), None);
    }
}
