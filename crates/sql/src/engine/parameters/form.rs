//! A JSON value written in PostgreSQL's binary form of the type its parameter needs.

use serde_json::Value;
use sqlx::encode::IsNull;
use sqlx::error::BoxDynError;
use sqlx::postgres::types::Oid;
use sqlx::postgres::{PgArgumentBuffer, PgTypeInfo, PgTypeKind};
use sqlx::{Postgres, TypeInfo};

use super::{INFERRED, moments};
use crate::render::{Bind, Kind};

/// How a value is written in PostgreSQL's binary form of a type.
#[derive(Debug, Clone, PartialEq)]
pub(super) enum Form {
    Boolean,
    Int2,
    Int4,
    Int8,
    Oid,
    Float4,
    Float8,
    Numeric,
    /// Text as it is: `text`, `varchar`, `char`, `name`, `citext`, and an enum's label.
    Text,
    Json,
    Jsonb,
    Uuid,
    Date,
    Timestamp,
    TimestampTz,
    Time,
    /// Base64 text, as a `bytea` column is answered.
    Bytea,
    /// An array of the element's form, with the element type's OID.
    Array(Box<Form>, Oid),
}

/// The form of `ty`; `None` for a type no JSON value is written as here.
pub(super) fn form(ty: &PgTypeInfo) -> Option<Form> {
    // A type sqlx has not resolved has no kind to ask.
    if ty.name() == "?" {
        return None;
    }
    match ty.kind() {
        // An enum's binary form is its label's text.
        PgTypeKind::Enum(_) => return Some(Form::Text),
        PgTypeKind::Domain(base) => return form(base),
        PgTypeKind::Array(element) => {
            return Some(Form::Array(Box::new(form(element)?), element.oid()?));
        }
        _ => {}
    }
    Some(match ty.name() {
        "BOOL" => Form::Boolean,
        "INT2" => Form::Int2,
        "INT4" => Form::Int4,
        "INT8" => Form::Int8,
        "OID" => Form::Oid,
        "FLOAT4" => Form::Float4,
        "FLOAT8" => Form::Float8,
        "NUMERIC" => Form::Numeric,
        "TEXT" | "VARCHAR" | "CHAR" | "NAME" | "UNKNOWN" | "citext" | "CITEXT" => Form::Text,
        "JSON" => Form::Json,
        "JSONB" => Form::Jsonb,
        "UUID" => Form::Uuid,
        "DATE" => Form::Date,
        "TIMESTAMP" => Form::Timestamp,
        "TIMESTAMPTZ" => Form::TimestampTz,
        "TIME" => Form::Time,
        "BYTEA" => Form::Bytea,
        _ => return None,
    })
}

/// A value in a type's binary form; `None` for NULL. The error says what the value must be.
pub(super) fn written(value: &Bind, form: &Form) -> Result<Option<Vec<u8>>, String> {
    if let Bind::Null(_) | Bind::Json(Value::Null) = value {
        return Ok(None);
    }
    Ok(Some(match form {
        Form::Boolean => vec![u8::from(boolean(value)?)],
        Form::Int2 => i16::try_from(integer(value)?)
            .map_err(|_| "must be a whole number from -32768 to 32767")?
            .to_be_bytes()
            .to_vec(),
        Form::Int4 => i32::try_from(integer(value)?)
            .map_err(|_| "must be a whole number from -2147483648 to 2147483647")?
            .to_be_bytes()
            .to_vec(),
        Form::Int8 => integer(value)?.to_be_bytes().to_vec(),
        Form::Oid => u32::try_from(integer(value)?)
            .map_err(|_| "must be a whole number from 0 to 4294967295")?
            .to_be_bytes()
            .to_vec(),
        Form::Float4 => {
            let wide = float(value)?;
            let narrow = wide as f32;
            if wide.is_finite() && !narrow.is_finite() {
                return Err("must be a number within a real's range (about ±3.4e38)".into());
            }
            narrow.to_be_bytes().to_vec()
        }
        Form::Float8 => float(value)?.to_be_bytes().to_vec(),
        Form::Numeric => {
            crate::engine::numeric::binary(&decimal(value)?).ok_or("must be a decimal number")?
        }
        Form::Text => text(value).into_bytes(),
        Form::Json => json(value)?.into_bytes(),
        Form::Jsonb => {
            // jsonb's binary form: a version byte, then the text.
            let mut bytes = vec![1];
            bytes.extend(json(value)?.into_bytes());
            bytes
        }
        Form::Uuid => sqlx::types::Uuid::parse_str(string(value, "a uuid")?.trim())
            .map_err(|_| "must be a uuid")?
            .as_bytes()
            .to_vec(),
        Form::Date => moments::days(string(value, moments::DATE)?)?
            .to_be_bytes()
            .to_vec(),
        Form::Timestamp | Form::TimestampTz => moments::micros(string(value, moments::MOMENT)?)?
            .to_be_bytes()
            .to_vec(),
        Form::Time => moments::time_micros(string(value, moments::TIME)?)?
            .to_be_bytes()
            .to_vec(),
        Form::Bytea => {
            use base64::Engine as _;
            base64::engine::general_purpose::STANDARD
                .decode(string(value, "base64 text")?.trim())
                .map_err(|_| "must be base64 text")?
        }
        Form::Array(element, oid) => array(value, element, *oid)?,
    }))
}

/// A list in PostgreSQL's binary array form: dimensions, whether an element is NULL, the
/// element type, the length and lower bound (1), then each element's length and bytes.
fn array(value: &Bind, element: &Form, oid: Oid) -> Result<Vec<u8>, String> {
    let items = match value {
        Bind::Array(_, items) | Bind::Json(Value::Array(items)) => items,
        _ => return Err("must be a list".into()),
    };
    let written: Vec<Option<Vec<u8>>> = (items.iter())
        .map(|item| written(&item_bind(item), element))
        .collect::<Result<_, _>>()
        .map_err(|reason| format!("each item {reason}"))?;
    let length = i32::try_from(written.len()).map_err(|_| "must be a shorter list")?;
    let mut bytes = Vec::new();
    // An empty array has no dimension.
    bytes.extend(i32::from(length > 0).to_be_bytes());
    bytes.extend(i32::from(written.iter().any(Option::is_none)).to_be_bytes());
    bytes.extend(oid.0.to_be_bytes());
    if length > 0 {
        bytes.extend(length.to_be_bytes());
        bytes.extend(1i32.to_be_bytes());
    }
    for item in written {
        match item {
            None => bytes.extend((-1i32).to_be_bytes()),
            Some(item) => {
                let size = i32::try_from(item.len()).map_err(|_| "must have shorter items")?;
                bytes.extend(size.to_be_bytes());
                bytes.extend(item);
            }
        }
    }
    Ok(bytes)
}

/// A list's element as a value to write.
fn item_bind(item: &Value) -> Bind {
    match item {
        Value::Null => Bind::Null(Kind::Text),
        Value::String(text) => Bind::Text(text.clone()),
        Value::Bool(b) => Bind::Boolean(*b),
        Value::Number(n) => match n.as_i64() {
            Some(n) => Bind::Integer(n),
            None => Bind::Number(n.as_f64().unwrap_or_default()),
        },
        other => Bind::Json(other.clone()),
    }
}

/// The value's text: a string as it is, anything else as its JSON.
fn text(value: &Bind) -> String {
    match value {
        Bind::Text(text) | Bind::Json(Value::String(text)) => text.clone(),
        Bind::Integer(n) => n.to_string(),
        Bind::Number(n) => n.to_string(),
        Bind::Boolean(b) => b.to_string(),
        Bind::Json(value) => value.to_string(),
        Bind::Array(_, items) => Value::Array(items.clone()).to_string(),
        Bind::Null(_) => String::new(),
    }
}

/// A string value, for a type whose only JSON form is text (`what`: a date, a uuid).
fn string<'v>(value: &'v Bind, what: &str) -> Result<&'v str, String> {
    match value {
        Bind::Text(text) | Bind::Json(Value::String(text)) => Ok(text),
        _ => Err(format!("must be {what}, as a string")),
    }
}

/// The value as a JSON document: a string is one's text (as PostgreSQL reads a `json` literal),
/// anything else is the value itself.
fn json(value: &Bind) -> Result<String, String> {
    match value {
        Bind::Text(text) => serde_json::from_str::<serde::de::IgnoredAny>(text)
            .map(|_| text.clone())
            .map_err(|_| "must be JSON text".into()),
        Bind::Json(value) => Ok(value.to_string()),
        plain => Ok(text(plain)),
    }
}

fn integer(value: &Bind) -> Result<i64, String> {
    let whole = |n: f64| {
        (n.fract() == 0.0 && n >= i64::MIN as f64 && n < i64::MAX as f64).then_some(n as i64)
    };
    match value {
        Bind::Integer(n) => Some(*n),
        Bind::Number(n) => whole(*n),
        Bind::Json(Value::Number(n)) => n.as_i64().or_else(|| n.as_f64().and_then(whole)),
        Bind::Text(text) | Bind::Json(Value::String(text)) => text.trim().parse().ok(),
        _ => None,
    }
    .ok_or_else(|| "must be a whole number".into())
}

fn float(value: &Bind) -> Result<f64, String> {
    match value {
        Bind::Integer(n) => Some(*n as f64),
        Bind::Number(n) => Some(*n),
        Bind::Json(Value::Number(n)) => n.as_f64(),
        Bind::Text(text) | Bind::Json(Value::String(text)) => text.trim().parse().ok(),
        _ => None,
    }
    .ok_or_else(|| "must be a number".into())
}

/// The value's decimal text, for a `numeric`: a float as its shortest exact text (`99.99`).
fn decimal(value: &Bind) -> Result<String, String> {
    match value {
        Bind::Integer(n) => Ok(n.to_string()),
        Bind::Number(n) => Ok(n.to_string()),
        Bind::Json(Value::Number(n)) => Ok(n.to_string()),
        Bind::Text(text) | Bind::Json(Value::String(text)) => Ok(text.clone()),
        _ => Err("must be a decimal number".into()),
    }
}

/// A boolean, or the words PostgreSQL reads as one.
fn boolean(value: &Bind) -> Result<bool, String> {
    match value {
        Bind::Boolean(b) | Bind::Json(Value::Bool(b)) => Ok(*b),
        Bind::Integer(0) => Ok(false),
        Bind::Integer(1) => Ok(true),
        Bind::Text(text) | Bind::Json(Value::String(text)) => {
            match text.trim().to_ascii_lowercase().as_str() {
                "t" | "true" | "y" | "yes" | "on" | "1" => Ok(true),
                "f" | "false" | "n" | "no" | "off" | "0" => Ok(false),
                _ => Err("must be true or false".into()),
            }
        }
        _ => Err("must be true or false".into()),
    }
}

/// A value in the binary form of the type the statement needs, `None` for NULL.
pub(super) struct Typed {
    pub(super) as_type: PgTypeInfo,
    pub(super) bytes: Option<Vec<u8>>,
}

impl sqlx::Type<Postgres> for Typed {
    /// Never asked: each value says its own type (`produces`).
    fn type_info() -> PgTypeInfo {
        INFERRED
    }
}

impl sqlx::Encode<'_, Postgres> for Typed {
    fn encode_by_ref(&self, buffer: &mut PgArgumentBuffer) -> Result<IsNull, BoxDynError> {
        match &self.bytes {
            Some(bytes) => {
                buffer.extend_from_slice(bytes);
                Ok(IsNull::No)
            }
            None => Ok(IsNull::Yes),
        }
    }

    fn produces(&self) -> Option<PgTypeInfo> {
        Some(self.as_type.clone())
    }

    fn size_hint(&self) -> usize {
        self.bytes.as_ref().map_or(0, Vec::len)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::render::Scalar;
    use serde_json::json;

    #[test]
    fn values_are_written_in_the_forms_binary_layout() {
        let one = |value: Bind, form: Form| written(&value, &form).unwrap().unwrap();
        assert_eq!(one(Bind::Integer(7), Form::Int4), 7i32.to_be_bytes());
        assert_eq!(
            one(Bind::Text(" 7 ".into()), Form::Int2),
            7i16.to_be_bytes()
        );
        assert_eq!(one(Bind::Number(3.0), Form::Int8), 3i64.to_be_bytes());
        assert_eq!(one(Bind::Integer(2), Form::Float4), 2f32.to_be_bytes());
        assert_eq!(one(Bind::Text("on".into()), Form::Boolean), [1]);
        assert_eq!(one(Bind::Integer(5), Form::Text), b"5");
        assert_eq!(
            one(Bind::Json(json!({"a": 1})), Form::Jsonb),
            b"\x01{\"a\":1}"
        );
        assert_eq!(one(Bind::Text("[1, 2]".into()), Form::Json), b"[1, 2]");
        assert_eq!(one(Bind::Text("AQI=".into()), Form::Bytea), [1, 2]);
        assert_eq!(
            one(Bind::Text("2000-01-02".into()), Form::Date),
            1i32.to_be_bytes()
        );
        for at in [
            "2000-01-01T00:00:01Z",
            "2000-01-01T02:00:01+02:00",
            "2000-01-01 00:00:01",
            "2000-01-01 00:00:01+00",
            "2000-01-01T00:00:01.000",
        ] {
            let bytes = one(Bind::Text(at.into()), Form::TimestampTz);
            assert_eq!(bytes, 1_000_000i64.to_be_bytes(), "{at}");
        }
        assert_eq!(
            one(Bind::Text("00:00:01.5".into()), Form::Time),
            1_500_000i64.to_be_bytes()
        );
        assert_eq!(
            one(Bind::Text("infinity".into()), Form::Date),
            i32::MAX.to_be_bytes()
        );
        assert_eq!(written(&Bind::Null(Kind::Text), &Form::Uuid), Ok(None));
    }

    #[test]
    fn a_list_is_a_one_dimensional_array_of_its_elements_form() {
        let list = Bind::Array(Scalar::Integer, vec![json!(1), Value::Null]);
        let bytes = written(&list, &Form::Array(Box::new(Form::Int4), Oid(23)))
            .unwrap()
            .unwrap();
        let mut expected = Vec::new();
        for field in [1i32, 1, 23, 2, 1, 4, 1, -1] {
            expected.extend(field.to_be_bytes());
        }
        assert_eq!(bytes, expected);
        let empty = Bind::Array(Scalar::Text, vec![]);
        let bytes = written(&empty, &Form::Array(Box::new(Form::Text), Oid(25)))
            .unwrap()
            .unwrap();
        assert_eq!(bytes, [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 25]);
    }

    #[test]
    fn a_value_not_of_the_type_says_what_it_must_be() {
        for (value, form) in [
            (Bind::Integer(70_000), Form::Int2),
            (Bind::Number(2.5), Form::Int4),
            (Bind::Text("seven".into()), Form::Int8),
            (Bind::Number(1e300), Form::Float4),
            (Bind::Text("twelve".into()), Form::Numeric),
            (Bind::Text("not-a-uuid".into()), Form::Uuid),
            (Bind::Integer(3), Form::Uuid),
            (Bind::Text("2026-13-45".into()), Form::Date),
            (Bind::Text("yesterday".into()), Form::Timestamp),
            (Bind::Text("25:00".into()), Form::Time),
            (Bind::Text("{".into()), Form::Jsonb),
            (Bind::Text("maybe".into()), Form::Boolean),
            (Bind::Text("!!".into()), Form::Bytea),
            (
                Bind::Text("1".into()),
                Form::Array(Box::new(Form::Int4), Oid(23)),
            ),
        ] {
            let refused = written(&value, &form).expect_err(&format!("{value:?} as {form:?}"));
            assert!(refused.contains("must be"), "{refused}");
        }
    }
}
