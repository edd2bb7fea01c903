//! The deployment's one sync run, locked in the shared PostgreSQL: a session-level advisory
//! lock on a connection the run keeps for itself. PostgreSQL lets go of it when that connection
//! ends, however the instance holding it ends (a kill -9 included), so a dead instance never
//! blocks the sync.

use async_trait::async_trait;
use sqlx::Connection;
use sqlx::postgres::PgPool;

use super::{HeldRun, RunLock, StoreError};

/// The advisory lock key of the content sync ("ctsync" in ASCII).
const RUN_LOCK: i64 = 0x63_74_73_79_6e_63;

/// The run lock, held by the session of this connection.
struct AdvisoryLock(sqlx::PgConnection);

#[async_trait]
impl HeldRun for AdvisoryLock {
    async fn release(self: Box<Self>) {
        let mut connection = self.0;
        let unlocked = sqlx::query("SELECT pg_advisory_unlock($1)")
            .bind(RUN_LOCK)
            .execute(&mut connection)
            .await;
        if let Err(error) = unlocked {
            // Closing the session lets go of the lock all the same.
            tracing::debug!(%error, "content sync: run lock not released by query");
        }
        let _ = connection.close().await;
    }
}

/// Takes the run lock if no run (on any instance) holds it.
pub(super) async fn take(pool: &PgPool) -> Result<RunLock, StoreError> {
    // A connection of the run's own, out of the pool: returned to it, it would keep the lock
    // for whoever used it next. Dropped, it closes, and the lock goes with it.
    let mut connection = pool.acquire().await?.detach();
    let held: bool = sqlx::query_scalar("SELECT pg_try_advisory_lock($1)")
        .bind(RUN_LOCK)
        .fetch_one(&mut connection)
        .await?;
    if held {
        Ok(RunLock::Held(Box::new(AdvisoryLock(connection))))
    } else {
        let _ = connection.close().await;
        Ok(RunLock::Busy)
    }
}
