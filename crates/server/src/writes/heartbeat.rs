//! Which instances are alive, for the idempotency records in the shared PostgreSQL: each
//! instance keeps a row in `concierge_instance` fresh (every [`HEARTBEAT`], valid for
//! [`ALIVE_FOR`], judged by the database's clock so the instances' clocks need not agree). A
//! claim whose owner's row went stale belongs to an instance that died mid-write. A live
//! instance cut off from the database for longer than `ALIVE_FOR` may have a claim taken over
//! the same way; the backend's own duplicate guard makes that resend safe too.

use std::sync::Arc;
use std::time::Duration;

use concierge_core::store::StoreDatabase;
use sqlx::postgres::PgPool;

/// How often an instance renews its row.
pub const HEARTBEAT: Duration = Duration::from_secs(3);
/// How long a row says its instance is alive; several heartbeats, so a slow one is no death.
pub const ALIVE_FOR: Duration = Duration::from_secs(15);

pub(super) async fn renew(pool: &PgPool, owner: &str) -> Result<(), sqlx::Error> {
    sqlx::query(
        "INSERT INTO concierge_instance (owner, alive_until) \
         VALUES ($1, now() + make_interval(secs => $2)) \
         ON CONFLICT (owner) DO UPDATE SET alive_until = EXCLUDED.alive_until",
    )
    .bind(owner)
    .bind(ALIVE_FOR.as_secs_f64())
    .execute(pool)
    .await
    .map(|_| ())
}

/// Keeps this instance's row fresh, and forgets instances gone for an hour.
pub(super) async fn beat(database: Arc<StoreDatabase>, owner: String) {
    let StoreDatabase::Postgres(database) = &*database else {
        return;
    };
    let mut ticks = tokio::time::interval(HEARTBEAT);
    ticks.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        ticks.tick().await;
        let Ok(pool) = database.pool().await else {
            continue;
        };
        if let Err(error) = renew(pool, &owner).await {
            tracing::debug!(%error, "idempotency: heartbeat not written");
            continue;
        }
        let _ = sqlx::query(
            "DELETE FROM concierge_instance WHERE alive_until < now() - interval '1 hour'",
        )
        .execute(pool)
        .await;
    }
}
