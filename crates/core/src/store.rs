//! The one way a store of the platform or of an app is kept on either of the two engines it
//! ships: a SQLite file on one host, or the deployment's shared PostgreSQL (`[state] database`)
//! that several instances use at once.
//!
//! A store writes each query **once**, in the SQL both engines read alike — `$1` parameters
//! (SQLite reads them too), `ON CONFLICT … DO UPDATE` upserts, `TRUE`/`FALSE` and `NOT flag`
//! for flags (SQLite keeps them as 0/1), `RETURNING` — inside [`store_queries!`], which compiles
//! the module once per engine (`on_sqlite`, `on_postgres`). [`StoreDatabase`] holds the engine the
//! deployment chose; [`on_store!`] calls a query on it. Where the engines really differ (a
//! schema, a JSON operator, an advisory lock), the query asks its module's `ENGINE` and the
//! difference is one expression in one place, not a second copy of the store.
//!
//! Why a macro and not a function generic over `sqlx::Database`: a generic query needs a bound
//! per bound type (`Encode + Type`), one per decoded column (`Decode`), and a higher-ranked
//! `Executor` bound for the transaction — longer than the queries, and repeated on each. Compiled
//! once per engine, a query is plain sqlx code, checked by the compiler for both engines.

use std::sync::Arc;

use sqlx::sqlite::SqlitePool;

use crate::StoreUnavailable;
use crate::postgres::{Migrated, Schema, SharedDatabase};

/// Which engine a query module was compiled for (`ENGINE` in each module of [`store_queries!`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Engine {
    Sqlite,
    Postgres,
}

impl Engine {
    /// The text for this engine, where the two differ.
    pub const fn pick(self, sqlite: &'static str, postgres: &'static str) -> &'static str {
        match self {
            Self::Sqlite => sqlite,
            Self::Postgres => postgres,
        }
    }

    /// How a write transaction begins: `IMMEDIATE` on SQLite, so two writers never interleave
    /// (a deferred one that reads first fails with "database is locked" when it then writes);
    /// PostgreSQL's row locks and constraints do that work there.
    pub const fn begin_write(self) -> &'static str {
        self.pick("BEGIN IMMEDIATE", "BEGIN")
    }
}

/// A store's database: a SQLite file of this host, or its own view of the shared PostgreSQL
/// (connected and migrated on first use, so an instance starts while the database is down).
pub enum StoreDatabase {
    Sqlite(SqlitePool),
    Postgres(Migrated),
}

impl StoreDatabase {
    /// The shared PostgreSQL, with the store's `schema` applied on first use.
    pub fn postgres(database: Arc<SharedDatabase>, schema: &'static Schema) -> Self {
        Self::Postgres(Migrated::new(database, schema))
    }

    /// The shared PostgreSQL at `url`, for a store that is given a URL of its own.
    pub fn postgres_url(url: &str, schema: &'static Schema) -> Result<Self, String> {
        Ok(Self::postgres(Arc::new(SharedDatabase::new(url)?), schema))
    }

    /// The PostgreSQL pool once the schema is current; what [`on_store!`] calls on that engine.
    pub async fn postgres_pool(database: &Migrated) -> Result<&sqlx::PgPool, StoreUnavailable> {
        database.pool().await
    }
}

/// Compiles a module of queries once per engine: `mod <name>` gets `on_sqlite` and
/// `on_postgres`, each with the body and, for it, `Db` (the sqlx database), `Pool`, `Tx<'c>` (a
/// transaction), `ENGINE` and `begin_write(pool)`. The body sees everything of the module the
/// macro stands in (`use super::super::*`). Call its functions with [`on_store!`]; their first
/// argument is the engine's `&Pool`.
///
/// ```ignore
/// concierge_core::store_queries! {
///     mod queries {
///         pub async fn name(pool: &Pool, id: i64) -> Result<Option<String>, sqlx::Error> {
///             sqlx::query_scalar("SELECT name FROM thing WHERE id = $1")
///                 .bind(id)
///                 .fetch_optional(pool)
///                 .await
///         }
///     }
/// }
/// // later: concierge_core::on_store!(&self.database, queries::name(id))
/// ```
#[macro_export]
macro_rules! store_queries {
    ($(#[$attribute:meta])* $visibility:vis mod $name:ident { $($body:tt)* }) => {
        $(#[$attribute])*
        $visibility mod $name {
            $crate::store_queries!(@engine on_sqlite, Sqlite, sqlx::Sqlite, { $($body)* });
            $crate::store_queries!(@engine on_postgres, Postgres, sqlx::Postgres, { $($body)* });
        }
    };
    (@engine $module:ident, $engine:ident, $database:ty, { $($body:tt)* }) => {
        pub mod $module {
            #![allow(unused_imports, dead_code)]
            use super::super::*;
            pub type Db = $database;
            pub type Pool = sqlx::Pool<$database>;
            pub type Tx<'c> = sqlx::Transaction<'c, $database>;
            pub const ENGINE: $crate::store::Engine = $crate::store::Engine::$engine;
            /// A write transaction as this engine needs it begun ([`Engine::begin_write`]).
            pub async fn begin_write(pool: &Pool) -> Result<Tx<'static>, sqlx::Error> {
                pool.begin_with(ENGINE.begin_write()).await
            }
            $($body)*
        }
    };
}

/// Calls `queries::query(arguments…)` of a [`store_queries!`] module on the store's engine,
/// awaited. A PostgreSQL store not reachable (or not migrated) answers
/// `Err(StoreUnavailable.into())`, so the query's error type takes a [`StoreUnavailable`].
#[macro_export]
macro_rules! on_store {
    ($database:expr, $queries:ident :: $query:ident ( $($argument:expr),* $(,)? )) => {
        match $database {
            $crate::store::StoreDatabase::Sqlite(pool) => {
                $queries::on_sqlite::$query(pool $(, $argument)*).await
            }
            $crate::store::StoreDatabase::Postgres(database) => {
                match $crate::store::StoreDatabase::postgres_pool(database).await {
                    Ok(pool) => $queries::on_postgres::$query(pool $(, $argument)*).await,
                    Err(unavailable) => Err(unavailable.into()),
                }
            }
        }
    };
}
