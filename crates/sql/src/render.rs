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
    /// PostgreSQL, when a parameter is used more than once: the statement with each use
    /// numbered on its own, and the value (its index in `binds`) each number stands for.
    /// PostgreSQL types a parameter where it is first used, so one first used where any type
    /// fits (`$1 IS NULL OR status = $1`) has no type; each use on its own has one.
    pub uses: Option<(String, Vec<usize>)>,
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
    // PostgreSQL: the statement again with every use numbered on its own, and whose value each is.
    let mut each_use = String::new();
    let mut uses: Vec<usize> = Vec::new();
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
            Piece::Text(text) => {
                sql.push_str(text);
                each_use.push_str(text);
            }
            Piece::Fragment(name) => {
                sql.push_str(fragment(name));
                each_use.push_str(fragment(name));
            }
            Piece::Param(name) => {
                if engine == Engine::Postgres {
                    let n = number_of(name, &mut binds);
                    sql.push_str(&format!("${n}"));
                    uses.push(n - 1);
                    each_use.push_str(&format!("${}", uses.len()));
                } else {
                    let (value, kind) = value(name);
                    binds.push(bind(engine, value, kind));
                    sql.push('?');
                }
            }
            Piece::InList { name, negated } => {
                if engine == Engine::Postgres {
                    let n = number_of(name, &mut binds);
                    uses.push(n - 1);
                    let compared = if *negated { "<> ALL" } else { "= ANY" };
                    sql.push_str(&format!("{compared}(${n})"));
                    each_use.push_str(&format!("{compared}(${})", uses.len()));
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
    let uses = (uses.len() > binds.len()).then_some((each_use, uses));
    Rendered { sql, binds, uses }
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
        let (each_use, uses) = r.uses.expect("status and ids are used twice");
        assert_eq!(
            each_use,
            "SELECT id FROM orders WHERE customer = $1 AND ($2 IS NULL OR status = $3) AND ($4 IS NULL OR id = ANY($5)) ORDER BY placed_at DESC"
        );
        assert_eq!(uses, [0, 1, 1, 2, 2]);
        let once = render(
            Engine::Postgres,
            &pieces("SELECT :a, :b").unwrap(),
            &|_| (Value::Null, Kind::Text),
            &|_| "",
        );
        assert_eq!(once.uses, None, "each used once: nothing to tell apart");
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
