//! Failed sign-ins counted for the whole deployment ([`SharedFailures`]): only the shared
//! PostgreSQL keeps them (one instance on a SQLite file counts in its own memory), so these
//! queries are PostgreSQL's alone — its clock does the arithmetic, so instances whose clocks
//! differ still agree.

use std::time::Duration;

use sqlx::Row;

use super::StoreError;
use super::sql::SqlStore;
use crate::limits::{Backoff, FORGET_AFTER, SharedFailures};

#[async_trait::async_trait]
impl SharedFailures for SqlStore {
    async fn failures(&self, key: &str) -> Result<Option<(u32, Duration)>, StoreError> {
        let row = sqlx::query(
            "SELECT failures, extract(epoch FROM now() - last_at)::float8 \
             FROM oauth_sign_in_failure WHERE key = $1",
        )
        .bind(key)
        .fetch_optional(self.postgres().await?)
        .await?;
        Ok(row.map(|row| {
            let count: i32 = row.get(0);
            let since: f64 = row.get(1);
            (
                u32::try_from(count).unwrap_or(0),
                Duration::from_secs_f64(since.max(0.0)),
            )
        }))
    }

    async fn count_failure(&self, key: &str, rule: Backoff) -> Result<(), StoreError> {
        // The rule's wait for the stored count, in SQL, so the forgetting and the counting are
        // one statement: Backoff::wait, plus FORGET_AFTER.
        sqlx::query(
            "INSERT INTO oauth_sign_in_failure (key, failures, last_at) VALUES ($1, 1, now()) \
             ON CONFLICT (key) DO UPDATE SET last_at = now(), failures = CASE \
               WHEN extract(epoch FROM now() - oauth_sign_in_failure.last_at) >= \
                 (CASE WHEN oauth_sign_in_failure.failures < $2 THEN 0 \
                  ELSE LEAST($3 * power(2, LEAST(oauth_sign_in_failure.failures - $2, 30)), $4) END) + $5 \
               THEN 1 ELSE oauth_sign_in_failure.failures + 1 END",
        )
        .bind(key)
        .bind(i32::try_from(rule.free).unwrap_or(i32::MAX))
        .bind(rule.base.as_secs_f64())
        .bind(rule.cap.as_secs_f64())
        .bind(FORGET_AFTER.as_secs_f64())
        .execute(self.postgres().await?)
        .await?;
        Ok(())
    }

    async fn forget(&self, key: &str) -> Result<(), StoreError> {
        sqlx::query("DELETE FROM oauth_sign_in_failure WHERE key = $1")
            .bind(key)
            .execute(self.postgres().await?)
            .await?;
        Ok(())
    }
}
