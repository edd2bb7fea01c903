//! MariaDB and MySQL: `?` parameters (lists expanded), `START TRANSACTION READ ONLY`, the
//! statement timeout set on every connection as it opens (`max_statement_time` on MariaDB,
//! `max_execution_time` on MySQL, which bounds its SELECTs).

use serde_json::Value;
use sqlx::error::DatabaseError;
use sqlx::mysql::{MySqlConnectOptions, MySqlPoolOptions, MySqlRow};
use sqlx::{Column, Executor, MySql, Pool, Row, TypeInfo, ValueRef};

use super::{Driver, Failure, base64, float, naive_utc, utc};
use crate::render::{Bind, Kind};
use crate::settings::SqlSettings;

pub(super) fn open(url: &str, settings: &SqlSettings) -> Result<Pool<MySql>, String> {
    let url = url.replacen("mariadb://", "mysql://", 1);
    let options: MySqlConnectOptions = url
        .parse()
        .map_err(|_| "url: not a MariaDB/MySQL URL (mysql://user:password@host:port/database)")?;
    let timeout = settings.statement_timeout;
    let read_only = settings.read_only;
    Ok(MySqlPoolOptions::new()
        .max_connections(settings.max_connections)
        .acquire_timeout(timeout)
        .after_connect(move |connection, _| {
            Box::pin(async move {
                let seconds = timeout.as_secs_f64();
                // MariaDB's bound covers every statement; MySQL's only SELECTs.
                if connection
                    .execute(sqlx::AssertSqlSafe(format!(
                        "SET SESSION max_statement_time = {seconds:.3}"
                    )))
                    .await
                    .is_err()
                {
                    connection
                        .execute(sqlx::AssertSqlSafe(format!(
                            "SET SESSION max_execution_time = {}",
                            timeout.as_millis()
                        )))
                        .await?;
                }
                if read_only {
                    connection
                        .execute("SET SESSION TRANSACTION READ ONLY")
                        .await?;
                }
                Ok(())
            })
        })
        .connect_lazy_with(options))
}

impl Driver for MySql {
    const BEGIN_READ: &'static str = "START TRANSACTION READ ONLY";
    const BEGIN_WRITE: &'static str = "START TRANSACTION";

    fn bind<'q>(
        query: sqlx::query::Query<'q, Self, sqlx::mysql::MySqlArguments>,
        value: Bind,
    ) -> sqlx::query::Query<'q, Self, sqlx::mysql::MySqlArguments> {
        match value {
            Bind::Null(Kind::Integer) => query.bind(None::<i64>),
            Bind::Null(Kind::Number) => query.bind(None::<f64>),
            Bind::Null(Kind::Boolean) => query.bind(None::<bool>),
            Bind::Null(_) => query.bind(None::<String>),
            Bind::Text(text) => query.bind(text),
            Bind::Integer(n) => query.bind(n),
            Bind::Number(n) => query.bind(n),
            Bind::Boolean(b) => query.bind(b),
            Bind::Json(value) => query.bind(value.to_string()),
            // Lists are expanded by the renderer; an array reaches here only as its JSON text.
            Bind::Array(_, items) => query.bind(Value::Array(items).to_string()),
        }
    }

    fn value(row: &MySqlRow, index: usize) -> Result<Value, String> {
        value(row, index)
    }

    fn affected(result: &sqlx::mysql::MySqlQueryResult) -> u64 {
        result.rows_affected()
    }

    fn failure(error: &dyn DatabaseError) -> Failure {
        let text = error.message().to_string();
        let number = error
            .try_downcast_ref::<sqlx::mysql::MySqlDatabaseError>()
            .map(|e| e.number());
        match number {
            // MariaDB's max_statement_time, MySQL's max_execution_time, a killed query.
            Some(1969 | 3024 | 1317) => Failure::Timeout,
            Some(1792) => Failure::ReadOnly(text),
            Some(1062) => Failure::Conflict(text),
            Some(1451 | 1452) => Failure::Reference(text),
            Some(1048 | 4025 | 3819) => Failure::Constraint(text),
            Some(1040 | 1053 | 2002 | 2006 | 2013) => Failure::Unavailable(text),
            _ => Failure::Other(text),
        }
    }
}

fn value(row: &MySqlRow, index: usize) -> Result<Value, String> {
    let raw = row.try_get_raw(index).map_err(|e| e.to_string())?;
    if raw.is_null() {
        return Ok(Value::Null);
    }
    let info = raw.type_info().into_owned();
    let name = info.name();
    let get = |e: sqlx::Error| format!("column {index} ({name}): {e}");
    Ok(match name {
        "BOOLEAN" => Value::Bool(row.try_get(index).map_err(get)?),
        "TINYINT" | "SMALLINT" | "MEDIUMINT" | "INT" | "BIGINT" | "YEAR" => {
            Value::from(row.try_get::<i64, _>(index).map_err(get)?)
        }
        n if n.ends_with("UNSIGNED") => Value::from(row.try_get::<u64, _>(index).map_err(get)?),
        "FLOAT" => float(f64::from(row.try_get::<f32, _>(index).map_err(get)?)),
        "DOUBLE" => float(row.try_get::<f64, _>(index).map_err(get)?),
        "DECIMAL" => Value::String(
            row.try_get::<sqlx::types::BigDecimal, _>(index)
                .map_err(get)?
                .to_plain_string(),
        ),
        "DATETIME" => naive_utc(row.try_get(index).map_err(get)?),
        "TIMESTAMP" => utc(row.try_get(index).map_err(get)?),
        "DATE" => Value::String(
            row.try_get::<chrono::NaiveDate, _>(index)
                .map_err(get)?
                .to_string(),
        ),
        "TIME" => Value::String(
            row.try_get::<chrono::NaiveTime, _>(index)
                .map_err(get)?
                .to_string(),
        ),
        "JSON" => {
            row.try_get::<sqlx::types::Json<Value>, _>(index)
                .map_err(get)?
                .0
        }
        "BINARY" | "VARBINARY" | "TINYBLOB" | "BLOB" | "MEDIUMBLOB" | "LONGBLOB" | "BIT" => {
            base64(&row.try_get::<Vec<u8>, _>(index).map_err(get)?)
        }
        _ => Value::String(row.try_get::<String, _>(index).map_err(get)?),
    })
}

pub(super) async fn describe(
    pool: &Pool<MySql>,
    sql: sqlx::SqlStr,
) -> Result<Vec<(String, Value)>, String> {
    use sqlx::Statement;
    let prepared = pool.prepare(sql).await.map_err(|e| e.to_string())?;
    Ok(prepared
        .columns()
        .iter()
        .map(|column| {
            let name = column.type_info().name();
            let ty = match name {
                "BOOLEAN" => "boolean",
                "TINYINT" | "SMALLINT" | "MEDIUMINT" | "INT" | "BIGINT" | "YEAR" => "integer",
                n if n.ends_with("UNSIGNED") => "integer",
                "FLOAT" | "DOUBLE" => "number",
                "JSON" => return (column.name().to_string(), serde_json::json!({})),
                _ => "string",
            };
            (
                column.name().to_string(),
                serde_json::json!({"type": [ty, "null"]}),
            )
        })
        .collect())
}
