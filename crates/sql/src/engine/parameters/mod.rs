//! PostgreSQL's parameters, bound as the types the statement needs.
//!
//! sqlx binds a Rust value as its own type (an `i64` is a `bigint`, a `String` is `text`), and
//! PostgreSQL takes a bound type at its word: there is no `touch(bigint)` for a function over an
//! `integer`, no `=` between an enum and `text`, and a timestamp compared with a string needed a
//! `CAST`. But PostgreSQL says, when it prepares a statement, which type each parameter needs, so
//! a JSON argument is written as that type: a number as `int2`, `int4`, `int8`, `float4`,
//! `float8` or `numeric`, a string as the type's text form (an enum's label, a date, a uuid), an
//! object as `json` or `jsonb`, a list as an array of its element's type.
//!
//! The statement is prepared with no types declared, and PostgreSQL infers each where it is first
//! used. One first used where any type fits (`$1 IS NULL OR status = $1`, the optional filter)
//! has none: the statement is then prepared once more with every use numbered on its own
//! (`Rendered::uses`), and each parameter takes the type of its first use that has one. A
//! parameter still without a type (`SELECT $1`, an argument of a function that takes anything),
//! or of a type no JSON value is written as here (an `interval`, an `inet`), is declared as its
//! kind's type — as every parameter was before — and the statement prepared again. sqlx keeps a
//! statement prepared per text on each connection, so all this happens once a connection and
//! statement; later calls, and the call's own run, find it prepared. A value that is not of the
//! needed type (a word for a uuid, 70000 for a `smallint`) is the caller's to fix, as the
//! database's own class-22 errors are.

mod form;
mod moments;

use serde_json::Value;
use sqlx::postgres::types::Oid;
use sqlx::postgres::{PgConnection, PgStatement, PgTypeInfo};
use sqlx::{Connection, Executor, Postgres, Statement, TypeInfo};

use super::{Failure, Query, failure_of};
use crate::render::{Bind, Kind, Rendered, Scalar};
use form::{Typed, form, written};

/// A type left for PostgreSQL to infer (the protocol's OID 0).
const INFERRED: PgTypeInfo = PgTypeInfo::with_oid(Oid(0));

/// The SQLSTATEs of a statement whose parameters PostgreSQL cannot type alone: a parameter it
/// cannot infer, one it infers two ways, a function or operator call its unknown arguments leave
/// ambiguous. The named parameter (or each) is then declared as its kind's type.
const UNTYPED: [&str; 3] = ["42P18", "42P08", "42725"];

/// The statement with each value bound as the type the statement needs.
pub(super) async fn bound(
    connection: &mut PgConnection,
    statement: Rendered,
) -> Result<Query<'static, Postgres>, Failure> {
    let prepared = prepared(connection, &statement)
        .await
        .map_err(failure_of::<Postgres>)?;
    let types = parameter_types(&prepared);
    if types.len() != statement.binds.len() {
        return Err(Failure::Other(format!(
            "the statement has {} parameters, the call {} values",
            types.len(),
            statement.binds.len()
        )));
    }
    let mut query = sqlx::query::<Postgres>(sqlx::AssertSqlSafe(statement.sql));
    for (at, (value, as_type)) in statement.binds.into_iter().zip(types).enumerate() {
        let Some(form) = form(&as_type) else {
            return Err(Failure::Other(format!(
                "parameter ${}: type {} is not bound from JSON",
                at + 1,
                as_type.name()
            )));
        };
        let bytes =
            written(&value, &form).map_err(|reason| Failure::ParameterType { at, reason })?;
        query = query.bind(Typed { as_type, bytes });
    }
    Ok(query)
}

/// The statement prepared with each parameter's type as PostgreSQL infers it, or, where it cannot
/// or the type is one no JSON value is written as, as the parameter's kind says.
pub(super) async fn prepared(
    connection: &mut PgConnection,
    statement: &Rendered,
) -> Result<PgStatement, sqlx::Error> {
    let count = statement.binds.len();
    let mut declared = vec![INFERRED; count];
    // Whether a parameter's type is now declared (inferred from a use, or its kind's).
    let mut fixed = vec![false; count];
    let mut each_use = statement.uses.as_ref();
    loop {
        let answer = connection
            .prepare_with(sql_of(&statement.sql), &declared)
            .await;
        let untyped = match &answer {
            Ok(prepared) => {
                let unwritable = (parameter_types(prepared).iter().enumerate())
                    .filter(|(at, ty)| {
                        !fixed.get(*at).copied().unwrap_or(true) && form(ty).is_none()
                    })
                    .map(|(at, _)| at)
                    .collect::<Vec<_>>();
                if unwritable.is_empty() {
                    return answer;
                }
                // sqlx keeps the statement by its text: forgotten, so that it is prepared again
                // with those types declared (and kept so for the next call).
                connection.clear_cached_statements().await?;
                unwritable
            }
            Err(sqlx::Error::Database(error))
                if error.code().is_some_and(|code| UNTYPED.contains(&&*code)) =>
            {
                // Once: the types each use has on its own, for the parameters that have one.
                if let Some((sql, uses)) = each_use.take() {
                    let inferred = types_of_uses(connection, sql, uses, &statement.binds).await?;
                    for (at, ty) in inferred.into_iter().enumerate() {
                        if let Some(ty) = ty.filter(|_| !fixed[at]) {
                            declared[at] = ty;
                            fixed[at] = true;
                        }
                    }
                    continue;
                }
                match named_parameter(error.message()) {
                    Some(at) if at < count && !fixed[at] => vec![at],
                    _ => (0..count).filter(|at| !fixed[*at]).collect(),
                }
            }
            Err(_) => return answer,
        };
        if untyped.is_empty() {
            return answer;
        }
        for at in untyped {
            declared[at] = kind_type(&statement.binds[at]);
            fixed[at] = true;
        }
    }
}

/// Each parameter's type as its uses tell it, from the statement with every use numbered on its
/// own (`sql`, whose `uses` say whose value each number is): the first use's type that a JSON
/// value is written as; `None` where no use has one. A use PostgreSQL cannot type alone
/// (`$1 IS NULL`) is declared as its kind's type, and tells nothing.
async fn types_of_uses(
    connection: &mut PgConnection,
    sql: &str,
    uses: &[usize],
    binds: &[Bind],
) -> Result<Vec<Option<PgTypeInfo>>, sqlx::Error> {
    let kind_of_use = |at: usize| uses.get(at).and_then(|&bind| binds.get(bind));
    let mut declared = vec![INFERRED; uses.len()];
    let mut by_kind = vec![false; uses.len()];
    loop {
        match connection.prepare_with(sql_of(sql), &declared).await {
            Ok(prepared) => {
                let mut types = vec![None; binds.len()];
                for (at, ty) in parameter_types(&prepared).into_iter().enumerate() {
                    let bind = uses.get(at).copied().unwrap_or(usize::MAX);
                    if !by_kind[at] && form(&ty).is_some() && types.get(bind) == Some(&None) {
                        types[bind] = Some(ty);
                    }
                }
                return Ok(types);
            }
            Err(sqlx::Error::Database(error))
                if error.code().is_some_and(|code| UNTYPED.contains(&&*code)) =>
            {
                let Some(at) = named_parameter(error.message())
                    .filter(|&at| at < uses.len() && !by_kind[at] && kind_of_use(at).is_some())
                else {
                    return Ok(vec![None; binds.len()]);
                };
                declared[at] = kind_of_use(at).map(kind_type).unwrap_or(INFERRED);
                by_kind[at] = true;
            }
            // What stops the statement stops it with its own numbering too: the caller says so.
            Err(_) => return Ok(vec![None; binds.len()]),
        }
    }
}

fn sql_of(sql: &str) -> sqlx::SqlStr {
    sqlx::SqlSafeStr::into_sql_str(sqlx::AssertSqlSafe(sql.to_string()))
}

/// The types of a prepared statement's parameters, in order.
fn parameter_types(prepared: &PgStatement) -> Vec<PgTypeInfo> {
    match prepared.parameters() {
        Some(sqlx::Either::Left(types)) => types.to_vec(),
        _ => Vec::new(),
    }
}

/// The parameter PostgreSQL's message names (`… parameter $2`), counted from 0.
fn named_parameter(message: &str) -> Option<usize> {
    let (_, after) = message.rsplit_once('$')?;
    let digits: String = after.chars().take_while(char::is_ascii_digit).collect();
    digits.parse::<usize>().ok()?.checked_sub(1)
}

/// The type a value is declared as by its kind, where PostgreSQL does not say.
fn kind_type(bind: &Bind) -> PgTypeInfo {
    use sqlx::Type;
    match bind {
        Bind::Null(Kind::Integer) | Bind::Integer(_) => <i64 as Type<Postgres>>::type_info(),
        Bind::Null(Kind::Number) | Bind::Number(_) => <f64 as Type<Postgres>>::type_info(),
        Bind::Null(Kind::Boolean) | Bind::Boolean(_) => <bool as Type<Postgres>>::type_info(),
        Bind::Null(Kind::Json) | Bind::Json(_) => {
            <sqlx::types::Json<Value> as Type<Postgres>>::type_info()
        }
        Bind::Null(Kind::Array(Scalar::Integer)) | Bind::Array(Scalar::Integer, _) => {
            <Vec<i64> as Type<Postgres>>::type_info()
        }
        Bind::Null(Kind::Array(Scalar::Number)) | Bind::Array(Scalar::Number, _) => {
            <Vec<f64> as Type<Postgres>>::type_info()
        }
        Bind::Null(Kind::Array(Scalar::Boolean)) | Bind::Array(Scalar::Boolean, _) => {
            <Vec<bool> as Type<Postgres>>::type_info()
        }
        Bind::Null(Kind::Array(Scalar::Text)) | Bind::Array(Scalar::Text, _) => {
            <Vec<String> as Type<Postgres>>::type_info()
        }
        Bind::Null(Kind::Text) | Bind::Text(_) => <String as Type<Postgres>>::type_info(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_named_parameter_is_read_from_postgresqls_message() {
        let message = "could not determine data type of parameter $12";
        assert_eq!(named_parameter(message), Some(11));
        assert_eq!(named_parameter("function f(unknown) is not unique"), None);
        assert_eq!(named_parameter("parameter $0"), None);
    }
}
