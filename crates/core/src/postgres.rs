//! The deployment's shared PostgreSQL (`[state] database`, the `postgres` feature): one pool for
//! every store that several instances share, each store's schema kept by its own sqlx
//! migrations.
//!
//! The pool connects lazily and a store migrates its schema on first use, not at start: an
//! instance whose database is down still starts, serves what needs no shared state, reports the
//! database in `/health`, and begins using it by itself once it answers. sqlx takes an advisory
//! lock around migrations, so instances starting at once apply each one exactly once.

use std::borrow::Cow;
use std::time::Duration;

use sqlx::migrate::{Migration, MigrationType, Migrator};
use sqlx::postgres::{PgPool, PgPoolOptions};
use sqlx::{AssertSqlSafe, SqlSafeStr};
use tokio::sync::OnceCell;

use crate::StoreUnavailable;

/// How long a call waits for a connection before it is refused as retryable: short, so a down
/// database answers a client in seconds instead of holding its request.
const ACQUIRE_TIMEOUT: Duration = Duration::from_secs(2);
const MAX_CONNECTIONS: u32 = 16;

/// One store's tables: its migrations, in order, and the table that records which ran. A new
/// table or column is a new migration; an applied one is never edited (sqlx refuses a changed
/// checksum).
pub struct Schema {
    /// `concierge_<store>_migrations`: one per store, so stores (and an application's own sqlx
    /// migrations in the same database) never take each other's for missing ones.
    pub table: &'static str,
    /// (version, description, SQL).
    pub migrations: &'static [(i64, &'static str, &'static str)],
}

impl Schema {
    fn migrator(&self) -> Migrator {
        let migrations = (self.migrations.iter())
            .map(|(version, description, sql)| {
                Migration::new(
                    *version,
                    Cow::Borrowed(*description),
                    MigrationType::Simple,
                    AssertSqlSafe(*sql).into_sql_str(),
                    false,
                )
            })
            .collect();
        let mut migrator = Migrator::with_migrations(migrations);
        migrator.dangerous_set_table_name(self.table);
        migrator
    }
}

pub struct SharedDatabase {
    pool: PgPool,
}

impl SharedDatabase {
    /// A pool for `url`, not yet connected. Only a malformed URL fails here, with a message that
    /// does not repeat it (it may hold a password).
    pub fn new(url: &str) -> Result<Self, String> {
        let pool = PgPoolOptions::new()
            .max_connections(MAX_CONNECTIONS)
            .acquire_timeout(ACQUIRE_TIMEOUT)
            .connect_lazy(url)
            .map_err(|e| format!("not a PostgreSQL URL ({})", kind(&e)))?;
        Ok(Self { pool })
    }

    /// The pool as it is (for stores whose schema is current: see [`Migrated`]).
    pub fn pool(&self) -> &PgPool {
        &self.pool
    }

    /// `/health` and `concierge check`: the database answers.
    pub async fn probe(&self) -> Result<(), String> {
        sqlx::query("SELECT 1")
            .execute(&self.pool)
            .await
            .map(|_| ())
            .map_err(|e| kind(&e).to_string())
    }
}

/// A store's view of the shared database: the pool, once the store's schema is current.
pub struct Migrated {
    database: std::sync::Arc<SharedDatabase>,
    schema: &'static Schema,
    done: OnceCell<()>,
}

impl Migrated {
    pub fn new(database: std::sync::Arc<SharedDatabase>, schema: &'static Schema) -> Self {
        Self {
            database,
            schema,
            done: OnceCell::new(),
        }
    }

    /// The pool, after the schema's migrations ran (once per process, retried while they fail).
    pub async fn pool(&self) -> Result<&PgPool, StoreUnavailable> {
        let pool = self.database.pool();
        self.done
            .get_or_try_init(|| async {
                self.schema.migrator().run(pool).await.map_err(|e| {
                    StoreUnavailable(format!(
                        "PostgreSQL migrations ({}): {e}",
                        self.schema.table
                    ))
                })
            })
            .await?;
        Ok(pool)
    }
}

/// Whether a store's `database` names PostgreSQL (a `postgres://` URL) rather than a SQLite file.
pub fn is_url(target: &str) -> bool {
    target.starts_with("postgres://") || target.starts_with("postgresql://")
}

/// What went wrong, without the URL (and its password) that sqlx may quote.
pub fn kind(error: &sqlx::Error) -> &'static str {
    match error {
        sqlx::Error::Io(_) | sqlx::Error::Tls(_) | sqlx::Error::PoolTimedOut => "unreachable",
        sqlx::Error::Database(_) => "refused by the database",
        sqlx::Error::Configuration(_) => "a malformed URL",
        _ => "failed",
    }
}
