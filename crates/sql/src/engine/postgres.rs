//! PostgreSQL: `$n` parameters bound as the types the statement needs (`parameters/`), arrays
//! bound whole, `BEGIN READ ONLY`, the statement timeout set on every connection at start-up (so
//! it costs no round trip a call).

use serde_json::Value;
use sqlx::error::DatabaseError;
use sqlx::postgres::{PgConnectOptions, PgConnection, PgRow, PgStatement, PgTypeKind, PgValueRef};
use sqlx::types::Json;
use sqlx::{Pool, Postgres, Row, TypeInfo, ValueRef};

use super::{Driver, Failure, Query, base64, float, naive_utc, pool_options, text, utc};
use crate::render::Rendered;
use crate::settings::SqlSettings;

pub(super) fn open(url: &str, settings: &SqlSettings) -> Result<Pool<Postgres>, String> {
    let options: PgConnectOptions = url
        .parse()
        .map_err(|_| "url: not a PostgreSQL URL (postgres://user:password@host:port/database)")?;
    let mut runtime = vec![(
        "statement_timeout",
        format!("{}", settings.statement_timeout.as_millis()),
    )];
    if settings.read_only {
        runtime.push(("default_transaction_read_only", "on".to_string()));
    }
    let options = options.options(runtime).application_name("concierge");
    Ok(pool_options(settings).connect_lazy_with(options))
}

impl Driver for Postgres {
    const BEGIN_READ: &'static str = "BEGIN READ ONLY";
    const BEGIN_WRITE: &'static str = "BEGIN";

    fn bound<'c>(
        connection: &'c mut PgConnection,
        statement: Rendered,
    ) -> impl Future<Output = Result<Query<'static, Self>, Failure>> + Send + 'c {
        super::parameters::bound(connection, statement)
    }

    fn prepared<'c>(
        connection: &'c mut PgConnection,
        statement: &'c Rendered,
    ) -> impl Future<Output = Result<PgStatement, sqlx::Error>> + Send + 'c {
        super::parameters::prepared(connection, statement)
    }

    fn value(row: &PgRow, index: usize, raw: PgValueRef<'_>) -> Result<Value, String> {
        let info = raw.type_info().into_owned();
        let get = |e: sqlx::Error| format!("column {index} ({}): {e}", info.name());
        Ok(match info.name() {
            "BOOL" => Value::Bool(row.try_get(index).map_err(get)?),
            "INT2" => Value::from(row.try_get::<i16, _>(index).map_err(get)?),
            "INT4" => Value::from(row.try_get::<i32, _>(index).map_err(get)?),
            "INT8" => Value::from(row.try_get::<i64, _>(index).map_err(get)?),
            "OID" => Value::from(
                row.try_get::<sqlx::postgres::types::Oid, _>(index)
                    .map_err(get)?
                    .0,
            ),
            "FLOAT4" => float(f64::from(row.try_get::<f32, _>(index).map_err(get)?)),
            "FLOAT8" => float(row.try_get::<f64, _>(index).map_err(get)?),
            // Exact: a decimal is a string, so no cent is lost to a float; written with the
            // column's scale (`10.50`, not the `10.5000` of the wire's base-10000 digits).
            "NUMERIC" => Value::String(
                (raw.as_bytes().ok())
                    .and_then(super::numeric::decimal_text)
                    .ok_or_else(|| format!("column {index} (NUMERIC): not a binary numeric"))?,
            ),
            "TEXT" | "VARCHAR" | "BPCHAR" | "NAME" | "CHAR" | "CITEXT" | "UNKNOWN" => {
                Value::String(row.try_get(index).map_err(get)?)
            }
            "UUID" => text(row.try_get::<sqlx::types::Uuid, _>(index).map_err(get)?),
            "JSON" | "JSONB" => row.try_get::<Json<Value>, _>(index).map_err(get)?.0,
            "TIMESTAMPTZ" | "TIMESTAMP" | "DATE" => moment(&raw, info.name())
                .ok_or_else(|| format!("column {index} ({}): not a binary value", info.name()))?,
            "TIME" => text(row.try_get::<chrono::NaiveTime, _>(index).map_err(get)?),
            "BYTEA" => base64(&row.try_get::<Vec<u8>, _>(index).map_err(get)?),
            "INT2[]" | "INT4[]" | "INT8[]" => Value::from(
                row.try_get::<Vec<i64>, _>(index)
                    .or_else(|_| {
                        row.try_get::<Vec<i32>, _>(index)
                            .map(|v| v.into_iter().map(i64::from).collect())
                    })
                    .map_err(get)?,
            ),
            "TEXT[]" | "VARCHAR[]" => {
                Value::from(row.try_get::<Vec<String>, _>(index).map_err(get)?)
            }
            // A type of the database's own (`CREATE TYPE status AS ENUM …`): its label.
            _ if matches!(info.kind(), PgTypeKind::Enum(_)) => {
                Value::String(raw.as_str().map_err(|e| e.to_string())?.to_string())
            }
            other => {
                return Err(format!(
                    "column {index} has type {other}, which this kind does not pass on; cast it in the statement (`::text`)"
                ));
            }
        })
    }

    fn value_type(name: &str) -> Option<&'static str> {
        Some(match name {
            "BOOL" => "boolean",
            "INT2" | "INT4" | "INT8" | "OID" => "integer",
            "FLOAT4" | "FLOAT8" => "number",
            "JSON" | "JSONB" => return None,
            n if n.ends_with("[]") => "array",
            _ => "string",
        })
    }

    fn affected(result: &sqlx::postgres::PgQueryResult) -> u64 {
        result.rows_affected()
    }

    fn failure(error: &dyn DatabaseError) -> Failure {
        let text = error.message().to_string();
        match error.code().as_deref() {
            Some("57014") => Failure::Timeout,
            Some("25006") => Failure::ReadOnly(text),
            Some("23505") => Failure::Conflict(text),
            Some("23503") => Failure::Reference(text),
            Some("23502" | "23514") => Failure::Constraint(text),
            // Class 22, data exceptions: a value the statement cannot compute with or store —
            // a string too long, a number out of range, a malformed date, uuid or number, an
            // enum label that does not exist, a division by zero. The arguments are what a
            // call changes, so the caller is told to look at them (never the database's text).
            Some(code) if code.starts_with("22") => Failure::BadValue(text),
            // Connection exceptions, the server shutting down, too many connections.
            Some(code) if code.starts_with("08") || code.starts_with("57P") || code == "53300" => {
                Failure::Unavailable(text)
            }
            _ => Failure::Other(text),
        }
    }
}

/// A date or timestamp as PostgreSQL sends it (days, or microseconds, since 2000-01-01), read
/// without chrono's `+`, which panics past its range: PostgreSQL's `infinity` and `-infinity`
/// are written as it spells them, a year beyond chrono's as `out of range`.
fn moment(raw: &PgValueRef<'_>, type_name: &str) -> Option<Value> {
    let bytes = raw.as_bytes().ok()?;
    let epoch = chrono::NaiveDate::from_ymd_opt(2000, 1, 1)?;
    let endless =
        |positive: bool| Value::String(if positive { "infinity" } else { "-infinity" }.into());
    let beyond = || Value::String("out of range".into());
    if type_name == "DATE" {
        let days = i32::from_be_bytes(bytes.try_into().ok()?);
        if days == i32::MAX || days == i32::MIN {
            return Some(endless(days > 0));
        }
        return Some(
            epoch
                .checked_add_signed(chrono::TimeDelta::days(days.into()))
                .map_or_else(beyond, text),
        );
    }
    let micros = i64::from_be_bytes(bytes.try_into().ok()?);
    if micros == i64::MAX || micros == i64::MIN {
        return Some(endless(micros > 0));
    }
    let at = epoch
        .and_hms_opt(0, 0, 0)?
        .checked_add_signed(chrono::TimeDelta::microseconds(micros));
    Some(match at {
        None => beyond(),
        Some(at) if type_name == "TIMESTAMPTZ" => utc(at.and_utc()),
        Some(at) => naive_utc(at),
    })
}
