//! The connections of a PostgreSQL or MariaDB instance, kept warm between calls.
//!
//! sqlx's pool tests a connection on its way back — a `ping`, one more round trip to the
//! database and a spawned task, on every call — because a future dropped half-way may have left
//! it mid-statement. Here a call hands its connection back only when its statement ran to the
//! end ([`Warm::give_back`]); any other way out (an error, a timeout, a cancelled call) drops it,
//! and sqlx's own release, ping and all, judges it. A connection handed back is taken as it is
//! by the next call if it was idle for less than [`TRUSTED_IDLE`] (should the database have gone
//! meanwhile, a read is sent again on a connection that answers, and a write fails as
//! retryable); one idle for longer is asked first — a firewall's or the server's idle cut.
//!
//! Bounded by the pool: a warm connection is one sqlx counts as taken, so there are never more
//! than `max_connections`; those unused for longer than [`KEPT_WARM`] go back to sqlx at the next
//! hand-back.

use std::sync::Mutex;
use std::time::{Duration, Instant};

use sqlx::pool::PoolConnection;
use sqlx::{Connection, Database, Pool};

/// How long a connection may have been idle and still be used without a ping.
pub(super) const TRUSTED_IDLE: Duration = Duration::from_secs(5);
/// How long a connection is kept warm unused before sqlx gets it back (and may close it).
const KEPT_WARM: Duration = Duration::from_secs(60);

/// How a connection was taken.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Trust {
    /// Warm and recently used: not asked. A read that finds it gone is sent again on a
    /// connection that is asked (the database restarted, say, and closed every connection).
    Trusted,
    /// New from the pool, or asked just now.
    Checked,
}

pub struct Warm<DB: Database> {
    pool: Pool<DB>,
    /// The most recently used last: taken first, so a quiet period leaves the oldest to expire.
    idle: Mutex<Vec<(PoolConnection<DB>, Instant)>>,
}

impl<DB: Database> Warm<DB> {
    pub(super) fn new(pool: Pool<DB>) -> Self {
        Self {
            pool,
            idle: Mutex::new(Vec::new()),
        }
    }

    /// A connection: a warm one, or one from the pool (which waits at most its acquire
    /// timeout); and whether it was taken on trust — warm and recently used, so not asked
    /// whether it still works. With `checked`, a warm one is always asked.
    pub(super) async fn take(
        &self,
        checked: bool,
    ) -> Result<(PoolConnection<DB>, Trust), sqlx::Error> {
        loop {
            let warm = self.idle.lock().unwrap_or_else(|p| p.into_inner()).pop();
            let Some((mut connection, since)) = warm else {
                // Boxed: sqlx's acquire future is over 8 KiB, and held inline it would be
                // copied with every future that awaits it, up to the tool's call.
                let connection = Box::pin(self.pool.acquire()).await?;
                return Ok((connection, Trust::Checked));
            };
            if !checked && since.elapsed() < TRUSTED_IDLE {
                return Ok((connection, Trust::Trusted));
            }
            if connection.ping().await.is_ok() {
                return Ok((connection, Trust::Checked));
            }
            // It went away while idle: closed, not handed back, and the next one is tried.
            connection.close_on_drop();
        }
    }

    /// A connection whose statement ran to the end, for the next call.
    pub(super) fn give_back(&self, connection: PoolConnection<DB>) {
        let mut idle = self.idle.lock().unwrap_or_else(|p| p.into_inner());
        // Those unused for long go back to sqlx, which closes them when its own idle rules say.
        idle.retain(|(_, since)| since.elapsed() < KEPT_WARM);
        idle.push((connection, Instant::now()));
    }
}
