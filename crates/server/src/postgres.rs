//! The deployment's shared PostgreSQL (`[state] database`): one pool for the platform's stores,
//! its schema kept by sqlx migrations.
//!
//! The pool connects lazily and the migrations run on first use, not at start: an instance whose
//! database is down still starts, serves what needs no shared state, reports the database in
//! `/health`, and begins using it by itself once it answers. sqlx takes an advisory lock around
//! the migrations, so instances starting at once apply each one exactly once.

use std::borrow::Cow;
use std::time::Duration;

use concierge_core::StoreUnavailable;
use sqlx::migrate::{Migration, MigrationType, Migrator};
use sqlx::postgres::{PgPool, PgPoolOptions};
use sqlx::{AssertSqlSafe, SqlSafeStr};
use tokio::sync::OnceCell;

/// How long a call waits for a connection before it is refused as retryable: short, so a down
/// database answers a client in seconds instead of holding its request.
const ACQUIRE_TIMEOUT: Duration = Duration::from_secs(2);
const MAX_CONNECTIONS: u32 = 16;

/// The platform's tables, in order. A new one is a new file and a new line; an applied one is
/// never edited (sqlx refuses a changed checksum).
const MIGRATIONS: &[(i64, &str, &str)] = &[(
    1,
    "write safety: idempotency, secret, instances",
    include_str!("../migrations/0001_writes.sql"),
)];

/// The migrations' own bookkeeping table: ours, so an application's sqlx migrations in the same
/// database are not mistaken for missing ones of ours.
const MIGRATIONS_TABLE: &str = "concierge_migrations";

pub struct SharedDatabase {
    pool: PgPool,
    migrated: OnceCell<()>,
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
        Ok(Self {
            pool,
            migrated: OnceCell::new(),
        })
    }

    /// The pool, once the schema is current.
    pub async fn ready(&self) -> Result<&PgPool, StoreUnavailable> {
        self.migrated
            .get_or_try_init(|| async {
                migrator()
                    .run(&self.pool)
                    .await
                    .map_err(|e| StoreUnavailable(format!("PostgreSQL migrations: {e}")))
            })
            .await?;
        Ok(&self.pool)
    }

    /// `/health` and `concierge check`: the database answers and its schema is current.
    pub async fn probe(&self) -> Result<(), String> {
        let pool = self.ready().await.map_err(|e| e.0)?;
        sqlx::query("SELECT 1")
            .execute(pool)
            .await
            .map(|_| ())
            .map_err(|e| format!("unreachable ({})", kind(&e)))
    }
}

fn migrator() -> Migrator {
    let migrations = MIGRATIONS
        .iter()
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
    migrator.dangerous_set_table_name(MIGRATIONS_TABLE);
    migrator
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

/// A failure of a shared store's query as its callers report it: retryable, detail in the log.
pub fn unavailable(store: &str, error: sqlx::Error) -> StoreUnavailable {
    StoreUnavailable(format!("{store} (PostgreSQL): {} — {error}", kind(&error)))
}
