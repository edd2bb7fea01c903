//! A statement's pieces in one engine's own form, with the values to bind in order.
//!
//! PostgreSQL numbers its parameters (`$1`, used again where the name repeats) and takes an
//! array as one value, so `IN (:ids)` becomes `= ANY($1)`. MariaDB and SQLite take `?` in order,
//! so each use of a name binds its value again, and `IN (:ids)` becomes a list of one `?` an
//! element. An empty array matches nothing in `IN` and everything in `NOT IN` on all three; a
//! missing one is NULL, so `:ids IS NULL` is true only then.

use serde_json::Value;

use crate::statement::Piece;

/// The database engine a statement is written out for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Engine {
    Postgres,
    MySql,
    Sqlite,
}

/// The type a parameter's values are bound as, from its JSON Schema (or text, for what
/// `bind` fills in from the caller).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Text,
    Integer,
    Number,
    Boolean,
    /// An object or anything else the schema does not pin: bound as JSON.
    Json,
    Array(Scalar),
}

/// The type of an array's elements.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scalar {
    Text,
    Integer,
    Number,
    Boolean,
}

/// One value to bind, typed, so a NULL still tells the engine what it stands for.
#[derive(Debug, Clone, PartialEq)]
pub enum Bind {
    Null(Kind),
    Text(String),
    Integer(i64),
    Number(f64),
    Boolean(bool),
    Json(Value),
    /// PostgreSQL only: one array value.
    Array(Scalar, Vec<Value>),
}

/// A statement ready to run: its text and its values in order.
#[derive(Debug, Clone, PartialEq)]
pub struct Rendered {
    pub sql: String,
    pub binds: Vec<Bind>,
}

/// `pieces` for `engine`. `value` gives each parameter's value and kind (`Value::Null` when
/// missing), `fragment` each fragment's chosen SQL.
pub fn render<'a>(
    engine: Engine,
    pieces: &[Piece],
    value: &dyn Fn(&str) -> (Value, Kind),
    fragment: &dyn Fn(&str) -> &'a str,
) -> Rendered {
    let mut sql = String::new();
    let mut binds = Vec::new();
    // PostgreSQL: a name's number, once given.
    let mut numbered: Vec<String> = Vec::new();
    let mut number_of = |name: &str, binds: &mut Vec<Bind>| -> usize {
        if let Some(at) = numbered.iter().position(|n| n == name) {
            return at + 1;
        }
        let (value, kind) = value(name);
        binds.push(bind(engine, value, kind));
        numbered.push(name.to_string());
        numbered.len()
    };
    for piece in pieces {
        match piece {
            Piece::Text(text) => sql.push_str(text),
            Piece::Fragment(name) => sql.push_str(fragment(name)),
            Piece::Param(name) => {
                if engine == Engine::Postgres {
                    let n = number_of(name, &mut binds);
                    sql.push_str(&format!("${n}"));
                } else {
                    let (value, kind) = value(name);
                    binds.push(bind(engine, value, kind));
                    sql.push('?');
                }
            }
            Piece::InList { name, negated } => {
                if engine == Engine::Postgres {
                    let n = number_of(name, &mut binds);
                    sql.push_str(&if *negated {
                        format!("<> ALL(${n})")
                    } else {
                        format!("= ANY(${n})")
                    });
                    continue;
                }
                let (value, kind) = value(name);
                let scalar = match kind {
                    Kind::Array(scalar) => scalar,
                    _ => Scalar::Text,
                };
                let keyword = if *negated { "NOT IN" } else { "IN" };
                match value {
                    // SQLite takes the empty list as it is; MariaDB refuses `IN ()`, and an
                    // empty subquery is the same empty set.
                    Value::Array(items) if items.is_empty() && engine == Engine::Sqlite => {
                        sql.push_str(&format!("{keyword} ()"));
                    }
                    Value::Array(items) if items.is_empty() => {
                        sql.push_str(&format!("{keyword} (SELECT NULL FROM DUAL WHERE 1 = 0)"));
                    }
                    Value::Array(items) => {
                        let marks = vec!["?"; items.len()].join(", ");
                        sql.push_str(&format!("{keyword} ({marks})"));
                        for item in items {
                            binds.push(scalar_bind(scalar, item));
                        }
                    }
                    // Missing: `x IN (NULL)` is NULL, true for no row, as `= ANY(NULL)` is.
                    _ => sql.push_str(&format!("{keyword} (NULL)")),
                }
            }
        }
    }
    Rendered { sql, binds }
}

fn bind(engine: Engine, value: Value, kind: Kind) -> Bind {
    match (kind, value) {
        (kind, Value::Null) => Bind::Null(kind),
        (Kind::Array(scalar), Value::Array(items)) if engine == Engine::Postgres => {
            Bind::Array(scalar, items)
        }
        // Outside `IN`, an array only says whether it is there: `:ids IS NULL`.
        (Kind::Array(_), value) => Bind::Text(value.to_string()),
        (Kind::Json, value) => Bind::Json(value),
        (Kind::Text, Value::String(text)) => Bind::Text(text),
        (Kind::Integer, Value::Number(n)) if n.as_i64().is_some() => {
            Bind::Integer(n.as_i64().unwrap_or_default())
        }
        (Kind::Number, Value::Number(n)) => Bind::Number(n.as_f64().unwrap_or_default()),
        (Kind::Boolean, Value::Bool(b)) => Bind::Boolean(b),
        // The schema passed, so the value has its kind; anything else goes as JSON text.
        (_, value) => Bind::Text(match value {
            Value::String(text) => text,
            other => other.to_string(),
        }),
    }
}

fn scalar_bind(scalar: Scalar, item: Value) -> Bind {
    let kind = match scalar {
        Scalar::Text => Kind::Text,
        Scalar::Integer => Kind::Integer,
        Scalar::Number => Kind::Number,
        Scalar::Boolean => Kind::Boolean,
    };
    bind(Engine::Sqlite, item, kind)
}

/// The JSON type a schema declares: its `type`, or of `["integer", "null"]` the one that is
/// not null.
pub fn declared_type(schema: &Value) -> Option<&str> {
    match schema.get("type") {
        Some(Value::String(t)) => Some(t),
        Some(Value::Array(types)) => types
            .iter()
            .filter_map(Value::as_str)
            .find(|t| *t != "null"),
        _ => None,
    }
}

/// A parameter's kind from its JSON Schema.
pub fn kind_of(schema: &Value) -> Kind {
    let ty = |schema: &Value| declared_type(schema).map(String::from);
    let scalar = |t: Option<String>| match t.as_deref() {
        Some("integer") => Some(Scalar::Integer),
        Some("number") => Some(Scalar::Number),
        Some("boolean") => Some(Scalar::Boolean),
        Some("string") => Some(Scalar::Text),
        _ => None,
    };
    match ty(schema).as_deref() {
        Some("array") => {
            Kind::Array(scalar(schema.get("items").and_then(ty)).unwrap_or(Scalar::Text))
        }
        other => match scalar(other.map(String::from)) {
            Some(Scalar::Integer) => Kind::Integer,
            Some(Scalar::Number) => Kind::Number,
            Some(Scalar::Boolean) => Kind::Boolean,
            Some(Scalar::Text) => Kind::Text,
            None => Kind::Json,
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::statement::pieces;
    use serde_json::json;

    const SQL: &str = "SELECT id FROM orders WHERE customer = :customer AND (:status IS NULL OR status = :status) AND (:ids IS NULL OR id IN (:ids)) ORDER BY {sort}";

    fn rendered(engine: Engine, ids: Value) -> Rendered {
        let pieces = pieces(SQL).unwrap();
        let value = |name: &str| match name {
            "customer" => (json!("acme"), Kind::Text),
            "status" => (Value::Null, Kind::Text),
            "ids" => (ids.clone(), Kind::Array(Scalar::Integer)),
            _ => unreachable!(),
        };
        render(engine, &pieces, &value, &|_| "placed_at DESC")
    }

    #[test]
    fn postgres_numbers_each_name_once_and_takes_the_array_whole() {
        let r = rendered(Engine::Postgres, json!([1, 2]));
        assert_eq!(
            r.sql,
            "SELECT id FROM orders WHERE customer = $1 AND ($2 IS NULL OR status = $2) AND ($3 IS NULL OR id = ANY($3)) ORDER BY placed_at DESC"
        );
        assert_eq!(
            r.binds,
            [
                Bind::Text("acme".into()),
                Bind::Null(Kind::Text),
                Bind::Array(Scalar::Integer, vec![json!(1), json!(2)])
            ]
        );
    }

    #[test]
    fn mariadb_and_sqlite_bind_each_use_and_expand_the_list() {
        for engine in [Engine::MySql, Engine::Sqlite] {
            let r = rendered(engine, json!([1, 2]));
            assert_eq!(
                r.sql,
                "SELECT id FROM orders WHERE customer = ? AND (? IS NULL OR status = ?) AND (? IS NULL OR id IN (?, ?)) ORDER BY placed_at DESC"
            );
            assert_eq!(r.binds.len(), 6);
            assert_eq!(r.binds[3], Bind::Text("[1,2]".into()));
            assert_eq!(r.binds[4], Bind::Integer(1));
            let empty = rendered(engine, json!([]));
            let nothing = match engine {
                Engine::Sqlite => "id IN ()",
                _ => "id IN (SELECT NULL FROM DUAL WHERE 1 = 0)",
            };
            assert!(empty.sql.contains(nothing), "{}", empty.sql);
            let missing = rendered(engine, Value::Null);
            assert!(missing.sql.contains("id IN (NULL)"), "{}", missing.sql);
            assert_eq!(missing.binds[3], Bind::Null(Kind::Array(Scalar::Integer)));
        }
    }

    #[test]
    fn kinds_come_from_the_schema() {
        assert_eq!(kind_of(&json!({"type": "integer"})), Kind::Integer);
        assert_eq!(kind_of(&json!({"type": ["string", "null"]})), Kind::Text);
        assert_eq!(
            kind_of(&json!({"type": "array", "items": {"type": "integer"}})),
            Kind::Array(Scalar::Integer)
        );
        assert_eq!(kind_of(&json!({"type": "object"})), Kind::Json);
    }
}
