//! MariaDB and MySQL: `?` parameters (lists expanded), `START TRANSACTION READ ONLY`, the
//! statement timeout set on every connection as it opens (`max_statement_time` on MariaDB,
//! `max_execution_time` on MySQL, which bounds its SELECTs).

use serde_json::Value;
use sqlx::error::DatabaseError;
use sqlx::mysql::{MySqlConnectOptions, MySqlConnection, MySqlRow, MySqlStatement, MySqlValueRef};
use sqlx::types::Json;
use sqlx::{Executor, MySql, Pool, Row, TypeInfo, ValueRef};

use super::{
    Driver, Failure, Query, base64, bind_plain, bound_each, float, naive_utc, pool_options,
    prepared_plainly, text, utc,
};
use crate::render::{Bind, Kind, Rendered};
use crate::settings::SqlSettings;

pub(super) fn open(url: &str, settings: &SqlSettings) -> Result<Pool<MySql>, String> {
    let url = url.replacen("mariadb://", "mysql://", 1);
    let options: MySqlConnectOptions = url
        .parse()
        .map_err(|_| "url: not a MariaDB/MySQL URL (mysql://user:password@host:port/database)")?;
    let timeout = settings.statement_timeout;
    let read_only = settings.read_only;
    Ok(pool_options::<MySql>(settings)
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

    fn bound<'c>(
        _: &'c mut MySqlConnection,
        statement: Rendered,
    ) -> impl Future<Output = Result<Query<'static, Self>, Failure>> + Send + 'c {
        std::future::ready(Ok(bound_each(statement, bind)))
    }

    fn prepared<'c>(
        connection: &'c mut MySqlConnection,
        statement: &'c Rendered,
    ) -> impl Future<Output = Result<MySqlStatement, sqlx::Error>> + Send + 'c {
        prepared_plainly::<Self>(connection, statement)
    }

    fn value(row: &MySqlRow, index: usize, raw: MySqlValueRef<'_>) -> Result<Value, String> {
        let info = raw.type_info().into_owned();
        let name = info.name();
        let get = |e: sqlx::Error| format!("column {index} ({name}): {e}");
        Ok(match name {
            "BOOLEAN" => Value::Bool(row.try_get(index).map_err(get)?),
            "TINYINT" | "SMALLINT" | "MEDIUMINT" | "INT" | "BIGINT" => {
                Value::from(row.try_get::<i64, _>(index).map_err(get)?)
            }
            // Neither is an `i64` or a `Vec<u8>` to sqlx: a year is a `u16`, bits a `u64`.
            "YEAR" => Value::from(row.try_get::<u16, _>(index).map_err(get)?),
            "BIT" => Value::from(row.try_get::<u64, _>(index).map_err(get)?),
            n if n.ends_with("UNSIGNED") => Value::from(row.try_get::<u64, _>(index).map_err(get)?),
            "FLOAT" => float(f64::from(row.try_get::<f32, _>(index).map_err(get)?)),
            "DOUBLE" => float(row.try_get::<f64, _>(index).map_err(get)?),
            // Exact: the server sends a decimal as its text, with the column's scale; it is
            // kept as it came (a `BigDecimal` would parse and print it again).
            "DECIMAL" => Value::String(
                row.try_get_unchecked::<&str, _>(index)
                    .map_err(get)?
                    .to_string(),
            ),
            "DATETIME" => naive_utc(row.try_get(index).map_err(get)?),
            "TIMESTAMP" => utc(row.try_get(index).map_err(get)?),
            "DATE" => text(row.try_get::<chrono::NaiveDate, _>(index).map_err(get)?),
            "TIME" => text(row.try_get::<chrono::NaiveTime, _>(index).map_err(get)?),
            "JSON" => row.try_get::<Json<Value>, _>(index).map_err(get)?.0,
            // Binary data: the binary character set (63). sqlx names a column by its BINARY
            // flag, which the server also sets on text in a binary collation (`utf8mb4_bin`, and
            // MariaDB's JSON, a LONGTEXT in it): that is text, and falls through to a string.
            "BINARY" | "VARBINARY" | "TINYBLOB" | "BLOB" | "MEDIUMBLOB" | "LONGBLOB"
                if !<str as sqlx::Type<MySql>>::compatible(&info) =>
            {
                base64(&row.try_get::<Vec<u8>, _>(index).map_err(get)?)
            }
            _ => Value::String(row.try_get::<String, _>(index).map_err(get)?),
        })
    }

    fn value_type(name: &str) -> Option<&'static str> {
        Some(match name {
            "BOOLEAN" => "boolean",
            "TINYINT" | "SMALLINT" | "MEDIUMINT" | "INT" | "BIGINT" | "YEAR" | "BIT" => "integer",
            n if n.ends_with("UNSIGNED") => "integer",
            "FLOAT" | "DOUBLE" => "number",
            "JSON" => return None,
            _ => "string",
        })
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
            Some(1048 | 1364 | 4025 | 3819) => Failure::Constraint(text),
            // An incorrect or truncated value, data too long, a value out of range, a division
            // by zero (strict mode's error in a write; a read's is NULL).
            Some(1264 | 1292 | 1365 | 1366 | 1406 | 1411) => Failure::BadValue(text),
            Some(1040 | 1053 | 2002 | 2006 | 2013) => Failure::Unavailable(text),
            // Any other error the server files under SQLSTATE class 22 (data exception), as
            // PostgreSQL's are.
            _ if error.code().is_some_and(|state| state.starts_with("22")) => {
                Failure::BadValue(text)
            }
            _ => Failure::Other(text),
        }
    }
}

/// A value as MariaDB takes it: a NULL typed as its kind, the rest as every engine binds them.
fn bind(query: Query<'static, MySql>, value: Bind) -> Query<'static, MySql> {
    match value {
        Bind::Null(Kind::Integer) => query.bind(None::<i64>),
        Bind::Null(Kind::Number) => query.bind(None::<f64>),
        Bind::Null(Kind::Boolean) => query.bind(None::<bool>),
        plain => bind_plain(query, plain),
    }
}
