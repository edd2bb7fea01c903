//! One call's page of rows: at most `max_rows`, at most `max_bytes` of JSON, whole rows dropped
//! from the end — and what a row measures, counted from its values.

use serde_json::{Map, Value};

use super::{Bounds, Outcome};

/// Rows kept within the bounds: at most `max_rows`, at most `max_bytes` of JSON; whole rows
/// are dropped from the end.
pub(super) struct Page {
    bounds: Bounds,
    rows: Vec<Map<String, Value>>,
    bytes: usize,
    seen: u64,
    truncated: bool,
}

impl Page {
    pub(super) fn new(bounds: Bounds) -> Self {
        Self {
            bounds,
            rows: Vec::new(),
            bytes: 0,
            seen: 0,
            truncated: false,
        }
    }

    /// Adds a row; `false` once the page is full (the next row would not fit): a read stops
    /// fetching there, having seen one row more than it returns.
    pub(super) fn add(&mut self, row: Map<String, Value>) -> bool {
        self.seen += 1;
        if self.truncated {
            return false;
        }
        // The row bound first: a row past it is not even measured.
        if self.rows.len() >= self.bounds.max_rows {
            self.truncated = true;
            return false;
        }
        let bytes = self
            .bytes
            .saturating_add(json_length(&row).saturating_add(1));
        if bytes > self.bounds.max_bytes {
            self.truncated = true;
            return false;
        }
        self.bytes = bytes;
        self.rows.push(row);
        true
    }

    /// The outcome; a write's rows returned are the rows it changed.
    pub(super) fn finish(self, write: bool) -> Outcome {
        Outcome {
            affected: write.then_some(self.seen),
            rows: self.rows,
            truncated: self.truncated,
        }
    }
}

/// How many bytes `row` takes as compact JSON (what an answer writes), counted from the values
/// themselves: a page is measured row by row, and writing each row out only to count it cost as
/// much as writing the answer.
fn json_length(row: &Map<String, Value>) -> usize {
    let entries: usize = (row.iter())
        .map(|(key, value)| string_length(key) + 1 + value_length(value))
        .sum();
    2 + entries + row.len().saturating_sub(1)
}

fn value_length(value: &Value) -> usize {
    match value {
        Value::Null | Value::Bool(true) => 4,
        Value::Bool(false) => 5,
        Value::Number(number) => match (number.as_u64(), number.as_i64()) {
            (Some(n), _) => digits(n),
            (None, Some(n)) => 1 + digits(n.unsigned_abs()),
            // A float's shortest form is ryu's: counted by writing it, rare in a result.
            _ => number.to_string().len(),
        },
        Value::String(text) => string_length(text),
        Value::Array(items) => {
            2 + items.iter().map(value_length).sum::<usize>() + items.len().saturating_sub(1)
        }
        Value::Object(object) => json_length(object),
    }
}

fn digits(mut n: u64) -> usize {
    let mut count = 1;
    while n >= 10 {
        n /= 10;
        count += 1;
    }
    count
}

/// A string's length as serde_json writes it: quoted; a quote and a backslash escaped with a
/// backslash, the control characters as two-character escapes (newline, tab, …) or six
/// (`\u00XX`); everything else as its UTF-8 bytes.
fn string_length(text: &str) -> usize {
    let escapes: usize = (text.bytes())
        .map(|byte| match byte {
            b'"' | b'\\' | b'\n' | b'\r' | b'\t' | 0x08 | 0x0c => 1,
            0..0x20 => 5,
            _ => 0,
        })
        .sum();
    2 + text.len() + escapes
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn a_rows_length_is_the_length_of_its_json() {
        let row = json!({
            "id": 42,
            "negative": -7,
            "zero": 0,
            "big": u64::MAX,
            "small": i64::MIN,
            "price": "10.50",
            "float": 0.1,
            "large float": 1e300,
            "quoted": "a \"b\" \\ c",
            "controls": "\n\r\t\u{8}\u{c}\u{1}\u{1f}\u{7f}",
            "unicode": "Größe 价格 ✓",
            "empty": "",
            "null": null,
            "flags": [true, false, null],
            "nested": {"a": [1, {"b": "c"}], "ключ": []},
            "": {},
        });
        let Value::Object(row) = row else {
            unreachable!()
        };
        assert_eq!(
            json_length(&row),
            serde_json::to_string(&row).unwrap().len()
        );
        for (key, value) in &row {
            let one: Map<String, Value> = [(key.clone(), value.clone())].into_iter().collect();
            let written = serde_json::to_string(&one).unwrap();
            assert_eq!(json_length(&one), written.len(), "{written}");
        }
        assert_eq!(json_length(&Map::new()), 2);
    }
}
