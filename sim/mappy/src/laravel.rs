//! How a Laravel API talks: its error bodies, its validation errors, its query strings.
//!
//! Mappy's API is a Laravel app, so the simulator answers the way Laravel does. Every error is a
//! JSON object with a `message`; a validation failure (422) adds `errors`, one list of messages per
//! field, and its `message` is the first of them plus how many more there are. Query strings are
//! read as PHP reads them: the last of repeated names wins, and an empty value counts as absent
//! (Laravel's `ConvertEmptyStringsToNull`).

use std::collections::HashMap;
use std::convert::Infallible;

use axum::Json;
use axum::extract::FromRequestParts;
use axum::http::StatusCode;
use axum::http::request::Parts;
use axum::response::{IntoResponse, Response};
use chrono::NaiveDate;
use serde_json::{Map, Value, json};

/// `{"message": …}` with a status: the shape of every Laravel error but validation.
pub fn message(status: StatusCode, text: &str) -> Response {
    (status, Json(json!({ "message": text }))).into_response()
}

/// 422 for a body that is not a JSON object: there is nothing to validate field by field.
pub fn unreadable_body() -> Response {
    (
        StatusCode::UNPROCESSABLE_ENTITY,
        Json(json!({
            "message": "The given data was invalid.",
            "errors": {"body": ["The request body must be a JSON object."]},
        })),
    )
        .into_response()
}

/// Validation messages collected field by field, answered together as one 422.
#[derive(Debug, Default)]
pub struct Errors(Map<String, Value>);

impl Errors {
    pub fn add(&mut self, field: &str, text: impl Into<String>) {
        let entry = self
            .0
            .entry(field.to_owned())
            .or_insert_with(|| Value::Array(Vec::new()));
        if let Value::Array(list) = entry {
            list.push(Value::String(text.into()));
        }
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// `Ok` when nothing was added, else the 422 answer.
    pub fn check(self) -> Result<(), Response> {
        if self.is_empty() {
            Ok(())
        } else {
            Err(self.into_response())
        }
    }

    /// One line per field and message, for a sample file that breaks a rule at start-up.
    pub fn describe(&self) -> String {
        let mut lines = Vec::new();
        for (field, list) in &self.0 {
            for text in list.as_array().into_iter().flatten() {
                lines.push(format!("{field}: {}", text.as_str().unwrap_or_default()));
            }
        }
        lines.join("; ")
    }
}

impl IntoResponse for Errors {
    fn into_response(self) -> Response {
        let texts: Vec<&str> = self
            .0
            .values()
            .filter_map(Value::as_array)
            .flatten()
            .filter_map(Value::as_str)
            .collect();
        // Laravel 10+: "The limit field must be … (and 2 more errors)".
        let mut summary = texts.first().map_or_else(
            || "The given data was invalid.".to_owned(),
            |t| (*t).to_owned(),
        );
        match texts.len() {
            0 | 1 => {}
            2 => summary.push_str(" (and 1 more error)"),
            n => summary.push_str(&format!(" (and {} more errors)", n - 1)),
        }
        (
            StatusCode::UNPROCESSABLE_ENTITY,
            Json(json!({ "message": summary, "errors": Value::Object(self.0) })),
        )
            .into_response()
    }
}

/// Laravel names a field in messages with spaces for underscores: `user_id` → "user id".
pub fn label(field: &str) -> String {
    field.replace('_', " ")
}

/// The decoded query string. Never refuses a request: a value it cannot decode is kept as is.
#[derive(Debug, Default)]
pub struct Params(HashMap<String, String>);

impl<S: Send + Sync> FromRequestParts<S> for Params {
    type Rejection = Infallible;

    async fn from_request_parts(parts: &mut Parts, _state: &S) -> Result<Self, Infallible> {
        let mut params = HashMap::new();
        for pair in parts.uri.query().unwrap_or_default().split('&') {
            let (name, value) = pair.split_once('=').unwrap_or((pair, ""));
            let (name, value) = (decode(name), decode(value));
            // An empty value is "not given", as after Laravel's ConvertEmptyStringsToNull.
            if !name.is_empty() && !value.is_empty() {
                params.insert(name, value);
            }
        }
        Ok(Params(params))
    }
}

impl Params {
    pub fn text(&self, name: &str) -> Option<&str> {
        self.0.get(name).map(String::as_str)
    }

    /// An optional integer in `min..=max`; a bad value is reported and read as absent.
    pub fn integer(&self, name: &str, min: i64, max: i64, errors: &mut Errors) -> Option<i64> {
        let text = self.text(name)?;
        let Ok(number) = text.parse::<i64>() else {
            errors.add(
                name,
                format!("The {} field must be an integer.", label(name)),
            );
            return None;
        };
        if !(min..=max).contains(&number) {
            errors.add(
                name,
                format!("The {} field must be between {min} and {max}.", label(name)),
            );
            return None;
        }
        Some(number)
    }

    /// An optional id (a positive integer of any size).
    pub fn id(&self, name: &str, errors: &mut Errors) -> Option<u64> {
        let text = self.text(name)?;
        match text.parse::<u64>() {
            Ok(id) => Some(id),
            Err(_) => {
                errors.add(
                    name,
                    format!("The {} field must be an integer.", label(name)),
                );
                None
            }
        }
    }

    /// An optional `true` / `false`.
    pub fn boolean(&self, name: &str, errors: &mut Errors) -> Option<bool> {
        match self.text(name)? {
            "true" => Some(true),
            "false" => Some(false),
            _ => {
                errors.add(
                    name,
                    format!("The {} field must be true or false.", label(name)),
                );
                None
            }
        }
    }

    /// An optional `YYYY-MM-DD` date.
    pub fn date(&self, name: &str, errors: &mut Errors) -> Option<NaiveDate> {
        let text = self.text(name)?;
        let date = strict_date(text);
        if date.is_none() {
            errors.add(
                name,
                format!("The {} field must match the format Y-m-d.", label(name)),
            );
        }
        date
    }
}

/// `YYYY-MM-DD` exactly: chrono alone would also take `2026-9-1` or a five-digit year.
pub fn strict_date(text: &str) -> Option<NaiveDate> {
    let shape_ok = text.len() == 10
        && text.bytes().enumerate().all(|(i, b)| {
            if i == 4 || i == 7 {
                b == b'-'
            } else {
                b.is_ascii_digit()
            }
        });
    if !shape_ok {
        return None;
    }
    NaiveDate::parse_from_str(text, "%Y-%m-%d").ok()
}

/// Percent-decoding of one query component, `+` as a space; invalid UTF-8 is replaced, not refused.
fn decode(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while let Some(&byte) = bytes.get(i) {
        match byte {
            b'+' => {
                out.push(b' ');
                i += 1;
            }
            b'%' => match (
                bytes.get(i + 1).and_then(hex),
                bytes.get(i + 2).and_then(hex),
            ) {
                (Some(high), Some(low)) => {
                    out.push(high * 16 + low);
                    i += 3;
                }
                _ => {
                    out.push(b'%');
                    i += 1;
                }
            },
            _ => {
                out.push(byte);
                i += 1;
            }
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

fn hex(byte: &u8) -> Option<u8> {
    match byte {
        b'0'..=b'9' => Some(byte - b'0'),
        b'a'..=b'f' => Some(byte - b'a' + 10),
        b'A'..=b'F' => Some(byte - b'A' + 10),
        _ => None,
    }
}
