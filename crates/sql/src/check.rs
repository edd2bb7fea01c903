//! What `concierge check` refuses in a tool's statement, read by a real SQL parser in the
//! engine's dialect: more than one statement; anything but a query in a read tool (including a
//! data-modifying CTE and `SELECT … INTO`); anything but `INSERT`, `UPDATE` or `DELETE` in a write
//! tool (so no transaction control, `SET`, `LOCK`, `COPY`, `ATTACH`, `PRAGMA` or DDL anywhere);
//! an `UPDATE` or `DELETE` without `WHERE`.

use sqlparser::ast::{Query, SetExpr, Statement};
use sqlparser::dialect::{Dialect, MySqlDialect, PostgreSqlDialect, SQLiteDialect};
use sqlparser::parser::Parser;

use crate::render::Engine;

/// What a statement does, as far as the platform is concerned.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Effect {
    Reads,
    Inserts,
    Updates,
    Deletes,
}

/// A statement that passed, as the parser read it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Checked {
    pub effect: Effect,
    /// A write hands rows back (`RETURNING`, the clause, not a word in a string): they are
    /// fetched and counted as the rows it changed.
    pub returns_rows: bool,
    /// A plain `INSERT … VALUES`: it only adds the rows its values make (no `SELECT` source, no
    /// conflict clause that would change a row already there, no `REPLACE`).
    pub adds_values_only: bool,
}

fn dialect(engine: Engine) -> Box<dyn Dialect> {
    match engine {
        Engine::Postgres => Box::new(PostgreSqlDialect {}),
        Engine::MySql => Box::new(MySqlDialect {}),
        Engine::Sqlite => Box::new(SQLiteDialect {}),
    }
}

/// The rules for one rendering of a tool's statement (every fragment choice is checked).
pub fn statement(sql: &str, engine: Engine, write: bool) -> Result<Checked, String> {
    let statements = Parser::parse_sql(dialect(engine).as_ref(), sql)
        .map_err(|e| format!("the statement does not parse: {e}"))?;
    let [statement] = statements.as_slice() else {
        return Err(format!(
            "a tool runs exactly one statement; this is {}",
            statements.len()
        ));
    };
    let effect = match statement {
        Statement::Query(query) => {
            if let Some(what) = writes_in(query) {
                return Err(format!(
                    "a query may not change data ({what}); declare a write tool for that"
                ));
            }
            Effect::Reads
        }
        Statement::Insert(_) => Effect::Inserts,
        Statement::Update(update) => {
            if update.selection.is_none() {
                return Err("an UPDATE without WHERE changes every row; add a WHERE".into());
            }
            Effect::Updates
        }
        Statement::Delete(delete) => {
            if delete.selection.is_none() {
                return Err("a DELETE without WHERE removes every row; add a WHERE".into());
            }
            Effect::Deletes
        }
        other => {
            let text = other.to_string();
            let keyword = text.split_whitespace().next().unwrap_or("this statement");
            return Err(format!(
                "`{}` is not allowed in a tool: a tool runs one SELECT, or one INSERT, UPDATE or \
                 DELETE (transactions, SET, LOCK, COPY, ATTACH, PRAGMA and schema changes are \
                 the database owner's)",
                keyword.to_ascii_uppercase()
            ));
        }
    };
    let returns_rows = match statement {
        Statement::Insert(insert) => insert.returning.is_some(),
        Statement::Update(update) => update.returning.is_some(),
        Statement::Delete(delete) => delete.returning.is_some(),
        _ => false,
    };
    let adds_values_only = match statement {
        Statement::Insert(insert) => {
            insert.on.is_none()
                && insert.or.is_none()
                && !insert.replace_into
                && insert.source.as_ref().is_some_and(|source| {
                    source.with.is_none()
                        && matches!(*source.body, sqlparser::ast::SetExpr::Values(_))
                })
        }
        _ => false,
    };
    let checked = Checked {
        effect,
        returns_rows,
        adds_values_only,
    };
    match (effect, write) {
        (Effect::Reads, true) => Err(
            "a write tool runs an INSERT, UPDATE or DELETE; a SELECT is a read tool (drop `write`)"
                .into(),
        ),
        (Effect::Reads, false) | (_, true) => Ok(checked),
        (_, false) => Err(
            "this statement changes data: declare the tool `write = true` (on an instance with \
             `read_only = false`)"
                .into(),
        ),
    }
}

/// A change of data anywhere in a query: a data-modifying CTE, `SELECT … INTO`.
fn writes_in(query: &Query) -> Option<&'static str> {
    if let Some(with) = &query.with {
        for cte in &with.cte_tables {
            if let Some(what) = writes_in(&cte.query) {
                return Some(what);
            }
        }
    }
    writes_in_body(&query.body)
}

fn writes_in_body(body: &SetExpr) -> Option<&'static str> {
    match body {
        SetExpr::Select(select) if select.into.is_some() => Some("SELECT … INTO"),
        SetExpr::Select(_) | SetExpr::Values(_) | SetExpr::Table(_) => None,
        SetExpr::Query(query) => writes_in(query),
        SetExpr::SetOperation { left, right, .. } => {
            writes_in_body(left).or_else(|| writes_in_body(right))
        }
        SetExpr::Insert(_) => Some("INSERT in a WITH"),
        SetExpr::Update(_) => Some("UPDATE in a WITH"),
        SetExpr::Delete(_) => Some("DELETE in a WITH"),
        SetExpr::Merge(_) => Some("MERGE in a WITH"),
        #[allow(unreachable_patterns)]
        _ => Some("a statement the parser does not know as a read"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const ENGINES: [Engine; 3] = [Engine::Postgres, Engine::MySql, Engine::Sqlite];

    #[test]
    fn only_a_plain_insert_of_values_only_adds_them() {
        let adds = |sql: &str, engine| statement(sql, engine, true).unwrap().adds_values_only;
        for engine in ENGINES {
            assert!(adds("INSERT INTO t (a) VALUES (1) RETURNING id", engine));
            assert!(!adds(
                "INSERT INTO t (a) SELECT a FROM u RETURNING id",
                engine
            ));
            assert!(!adds("UPDATE t SET a = 1 WHERE id = 2", engine));
        }
        assert!(!adds(
            "INSERT INTO t (a) VALUES (1) ON CONFLICT (a) DO UPDATE SET a = 2 RETURNING id",
            Engine::Postgres
        ));
        assert!(!adds(
            "INSERT INTO t (a) VALUES (1) ON DUPLICATE KEY UPDATE a = 2",
            Engine::MySql
        ));
        assert!(!adds("REPLACE INTO t (a) VALUES (1)", Engine::MySql));
        assert!(!adds(
            "INSERT OR REPLACE INTO t (a) VALUES (1)",
            Engine::Sqlite
        ));
    }

    #[test]
    fn a_query_reads_and_a_write_writes() {
        for engine in ENGINES {
            let p = if engine == Engine::Postgres {
                "$1"
            } else {
                "?"
            };
            assert_eq!(
                statement(
                    &format!("SELECT id FROM orders WHERE customer = {p}"),
                    engine,
                    false
                )
                .map(|c| c.effect),
                Ok(Effect::Reads)
            );
            assert_eq!(
                statement(
                    &format!("UPDATE orders SET status = 'x' WHERE id = {p}"),
                    engine,
                    true
                )
                .map(|c| c.effect),
                Ok(Effect::Updates)
            );
            assert_eq!(
                statement("INSERT INTO t (a) VALUES (1)", engine, true).map(|c| c.effect),
                Ok(Effect::Inserts)
            );
        }
        let returns_rows = |sql: &str| statement(sql, Engine::Postgres, true).unwrap().returns_rows;
        assert!(returns_rows("DELETE FROM t WHERE id = 1 RETURNING id"));
        // A word in a string or a column's name is not the clause.
        assert!(!returns_rows(
            "UPDATE t SET note = 'returning' WHERE id = 1"
        ));
        assert!(!returns_rows(
            "UPDATE t SET returning_customer = 1 WHERE id = 1"
        ));
    }

    #[test]
    fn what_a_tool_may_not_run_is_refused_with_the_reason() {
        let refused = |sql: &str, engine: Engine, write: bool, says: &str| {
            let error = statement(sql, engine, write).expect_err(sql);
            assert!(error.contains(says), "{sql}: {error}");
        };
        for engine in ENGINES {
            refused("SELECT 1; SELECT 2", engine, false, "exactly one statement");
            refused("DROP TABLE orders", engine, false, "DROP");
            refused("UPDATE orders SET a = 1", engine, true, "without WHERE");
            refused("DELETE FROM orders", engine, true, "without WHERE");
            refused(
                "DELETE FROM orders WHERE id = 1",
                engine,
                false,
                "write = true",
            );
            refused("SELECT 1", engine, true, "read tool");
            refused("SELEC 1", engine, false, "does not parse");
        }
        refused("BEGIN", Engine::Postgres, false, "not allowed");
        refused(
            "SET search_path = x",
            Engine::Postgres,
            false,
            "not allowed",
        );
        refused("LOCK TABLE orders", Engine::Postgres, false, "not allowed");
        refused(
            "COPY orders TO STDOUT",
            Engine::Postgres,
            false,
            "not allowed",
        );
        refused(
            "PRAGMA writable_schema = 1",
            Engine::Sqlite,
            false,
            "not allowed",
        );
        refused(
            "ATTACH DATABASE 'x.db' AS x",
            Engine::Sqlite,
            false,
            "not allowed",
        );
        refused(
            "WITH gone AS (DELETE FROM orders RETURNING id) SELECT * FROM gone",
            Engine::Postgres,
            false,
            "DELETE in a WITH",
        );
        refused(
            "SELECT * INTO copy FROM orders",
            Engine::Postgres,
            false,
            "SELECT … INTO",
        );
    }
}
