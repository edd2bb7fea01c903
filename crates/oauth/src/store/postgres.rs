//! The [`OAuthStore`] several instances share: the deployment's PostgreSQL (`[state]
//! database`). A flow may cross instances at every step — `/authorize` on one, the sign-in on a
//! second, `/token` on a third, the refresh anywhere — so everything the SQLite file keeps is
//! here, with one signing key for all (the first instance to start makes it; the others read
//! it). Codes, tokens and secrets are stored as SHA-256 hashes, passwords as argon2.

use std::sync::Arc;
use std::time::Duration;

use concierge_core::postgres::{Migrated, Schema, SharedDatabase};
use sqlx::Row;
use sqlx::postgres::PgPool;

use super::{
    Client, Grant, LiveFamily, OAuthStore, RefreshState, SignedIn, StoreError, UserDirectory,
};
use crate::limits::{Backoff, FORGET_AFTER, SharedFailures};
use crate::util::hash;

static SCHEMA: Schema = Schema {
    table: "concierge_oauth_migrations",
    migrations: &[
        (
            1,
            "authorization server state",
            include_str!("../../migrations/0001_state.sql"),
        ),
        (
            2,
            "sign-in failures",
            include_str!("../../migrations/0002_sign_in_failures.sql"),
        ),
        (
            3,
            "refresh rotation time",
            include_str!("../../migrations/0003_refresh_used_at.sql"),
        ),
    ],
};

pub struct PgStore {
    database: Migrated,
}

fn now() -> i64 {
    chrono::Utc::now().timestamp()
}

impl PgStore {
    pub fn new(database: Arc<SharedDatabase>) -> Self {
        Self {
            database: Migrated::new(database, &SCHEMA),
        }
    }

    async fn pool(&self) -> Result<&PgPool, StoreError> {
        Ok(self.database.pool().await?)
    }
}

#[async_trait::async_trait]
impl UserDirectory for PgStore {
    async fn sign_in(
        &self,
        username: &str,
        password: &str,
    ) -> Result<Option<SignedIn>, StoreError> {
        Ok(self
            .check_user(username, password)
            .await?
            .map(|role| SignedIn {
                subject: username.to_string(),
                role,
            }))
    }
}

fn expiry(ttl: Duration) -> i64 {
    now() + ttl.as_secs() as i64
}

fn offset(keep: u64) -> i64 {
    i64::try_from(keep).unwrap_or(i64::MAX)
}

#[async_trait::async_trait]
impl OAuthStore for PgStore {
    async fn signing_seed(&self) -> Result<[u8; 32], StoreError> {
        let pool = self.pool().await?;
        // Instances starting at once each offer a key; the first one stored is everyone's.
        let (seed, _) = crate::keys::SigningKey::generate();
        sqlx::query(
            "INSERT INTO oauth_key (id, seed, created_at) VALUES (1, $1, $2) \
             ON CONFLICT (id) DO NOTHING",
        )
        .bind(seed.to_vec())
        .bind(now())
        .execute(pool)
        .await?;
        let stored: Vec<u8> =
            sqlx::query_scalar("SELECT seed FROM oauth_key ORDER BY id DESC LIMIT 1")
                .fetch_one(pool)
                .await?;
        stored
            .try_into()
            .map_err(|_| StoreError("the stored signing key is damaged".into()))
    }

    async fn put_client(&self, client: &Client) -> Result<(), StoreError> {
        sqlx::query(
            "INSERT INTO oauth_client (client_id, client, created_at, last_used_at) \
             VALUES ($1, $2, $3, $3) ON CONFLICT (client_id) DO UPDATE SET client = EXCLUDED.client",
        )
        .bind(&client.client_id)
        .bind(serde_json::to_string(client).unwrap_or_default())
        .bind(now())
        .execute(self.pool().await?)
        .await?;
        Ok(())
    }

    async fn client(&self, client_id: &str) -> Result<Option<Client>, StoreError> {
        let row = sqlx::query("SELECT client FROM oauth_client WHERE client_id = $1")
            .bind(client_id)
            .fetch_optional(self.pool().await?)
            .await?;
        Ok(row.and_then(|r| serde_json::from_str(r.get::<&str, _>(0)).ok()))
    }

    async fn touch_client(&self, client_id: &str) -> Result<(), StoreError> {
        sqlx::query("UPDATE oauth_client SET last_used_at = $1, used = TRUE WHERE client_id = $2")
            .bind(now())
            .bind(client_id)
            .execute(self.pool().await?)
            .await?;
        Ok(())
    }

    async fn clients(&self) -> Result<Vec<(Client, i64)>, StoreError> {
        let rows =
            sqlx::query("SELECT client, last_used_at FROM oauth_client ORDER BY created_at, seq")
                .fetch_all(self.pool().await?)
                .await?;
        Ok(rows
            .iter()
            .filter_map(|r| Some((serde_json::from_str(r.get::<&str, _>(0)).ok()?, r.get(1))))
            .collect())
    }

    async fn delete_client(&self, client_id: &str) -> Result<bool, StoreError> {
        let pool = self.pool().await?;
        let done = sqlx::query("DELETE FROM oauth_client WHERE client_id = $1")
            .bind(client_id)
            .execute(pool)
            .await?;
        sqlx::query(
            "UPDATE oauth_refresh SET revoked = TRUE WHERE grant_json::jsonb ->> 'client_id' = $1",
        )
        .bind(client_id)
        .execute(pool)
        .await?;
        Ok(done.rows_affected() > 0)
    }

    async fn collect_unused_clients(&self, cutoff: i64) -> Result<u64, StoreError> {
        let done = sqlx::query(
            "DELETE FROM oauth_client WHERE last_used_at < $1 AND client::jsonb ->> 'source' = 'dcr'",
        )
        .bind(cutoff)
        .execute(self.pool().await?)
        .await?;
        Ok(done.rows_affected())
    }

    async fn cap_unused_clients(&self, keep: u64) -> Result<u64, StoreError> {
        let done = sqlx::query(
            "DELETE FROM oauth_client WHERE client_id IN (SELECT client_id FROM oauth_client \
             WHERE NOT used AND client::jsonb ->> 'source' = 'dcr' \
             ORDER BY created_at DESC, seq DESC OFFSET $1)",
        )
        .bind(offset(keep))
        .execute(self.pool().await?)
        .await?;
        Ok(done.rows_affected())
    }

    async fn put_pending(
        &self,
        csrf: &str,
        request: &str,
        ttl: Duration,
    ) -> Result<(), StoreError> {
        sqlx::query("INSERT INTO oauth_pending (csrf, request, expires_at) VALUES ($1, $2, $3)")
            .bind(hash(csrf))
            .bind(request)
            .bind(expiry(ttl))
            .execute(self.pool().await?)
            .await?;
        Ok(())
    }

    async fn take_pending(&self, csrf: &str) -> Result<Option<String>, StoreError> {
        let row = sqlx::query(
            "DELETE FROM oauth_pending WHERE csrf = $1 AND expires_at >= $2 RETURNING request",
        )
        .bind(hash(csrf))
        .bind(now())
        .fetch_optional(self.pool().await?)
        .await?;
        Ok(row.map(|r| r.get(0)))
    }

    async fn trim_pending(&self, keep: u64) -> Result<u64, StoreError> {
        let done = sqlx::query(
            "DELETE FROM oauth_pending WHERE csrf IN (SELECT csrf FROM oauth_pending \
             ORDER BY expires_at DESC, seq DESC OFFSET $1)",
        )
        .bind(offset(keep))
        .execute(self.pool().await?)
        .await?;
        Ok(done.rows_affected())
    }

    async fn put_code(&self, code: &str, grant: &Grant, ttl: Duration) -> Result<(), StoreError> {
        sqlx::query(
            "INSERT INTO oauth_code (code_hash, grant_json, expires_at) VALUES ($1, $2, $3)",
        )
        .bind(hash(code))
        .bind(serde_json::to_string(grant).unwrap_or_default())
        .bind(expiry(ttl))
        .execute(self.pool().await?)
        .await?;
        Ok(())
    }

    async fn redeem_code(&self, code: &str) -> Result<Option<Grant>, StoreError> {
        // One statement: of two instances redeeming the same code at once, one gets it.
        let row = sqlx::query(
            "UPDATE oauth_code SET used = TRUE WHERE code_hash = $1 AND NOT used \
             AND expires_at >= $2 RETURNING grant_json",
        )
        .bind(hash(code))
        .bind(now())
        .fetch_optional(self.pool().await?)
        .await?;
        Ok(row.and_then(|r| serde_json::from_str(r.get::<&str, _>(0)).ok()))
    }

    async fn code_was_redeemed(&self, code: &str) -> Result<bool, StoreError> {
        let row = sqlx::query("SELECT used FROM oauth_code WHERE code_hash = $1")
            .bind(hash(code))
            .fetch_optional(self.pool().await?)
            .await?;
        Ok(row.is_some_and(|r| r.get::<bool, _>(0)))
    }

    async fn put_refresh(
        &self,
        token: &str,
        family: &str,
        grant: &Grant,
        ttl: Duration,
    ) -> Result<(), StoreError> {
        // A token born into a family that reuse detection revoked meanwhile is born revoked.
        sqlx::query(
            "INSERT INTO oauth_refresh (token_hash, family, grant_json, expires_at, revoked) \
             VALUES ($1, $2, $3, $4, COALESCE((SELECT bool_or(revoked) FROM oauth_refresh \
             WHERE family = $2), FALSE))",
        )
        .bind(hash(token))
        .bind(family)
        .bind(serde_json::to_string(grant).unwrap_or_default())
        .bind(expiry(ttl))
        .execute(self.pool().await?)
        .await?;
        Ok(())
    }

    async fn refresh(&self, token: &str) -> Result<Option<RefreshState>, StoreError> {
        let row = sqlx::query(
            "SELECT family, grant_json, used, revoked, expires_at, used_at FROM oauth_refresh \
             WHERE token_hash = $1",
        )
        .bind(hash(token))
        .fetch_optional(self.pool().await?)
        .await?;
        Ok(row.and_then(|r| {
            Some(RefreshState {
                family: r.get(0),
                grant: serde_json::from_str(r.get::<&str, _>(1)).ok()?,
                used: r.get(2),
                used_at: r.get(5),
                revoked: r.get(3),
                expired: r.get::<i64, _>(4) < now(),
            })
        }))
    }

    async fn live_families(&self, limit: u32) -> Result<Vec<LiveFamily>, StoreError> {
        let rows = sqlx::query(
            "SELECT family, grant_json, expires_at FROM oauth_refresh \
             WHERE NOT used AND NOT revoked AND expires_at > $1 ORDER BY expires_at DESC LIMIT $2",
        )
        .bind(now())
        .bind(i64::from(limit))
        .fetch_all(self.pool().await?)
        .await?;
        Ok(rows
            .iter()
            .filter_map(|r| {
                Some(LiveFamily {
                    family: r.get(0),
                    grant: serde_json::from_str(r.get::<&str, _>(1)).ok()?,
                    expires_at: r.get(2),
                })
            })
            .collect())
    }

    async fn mark_refresh_used(&self, token: &str) -> Result<bool, StoreError> {
        let done = sqlx::query(
            "UPDATE oauth_refresh SET used = TRUE, used_at = $1 WHERE token_hash = $2 AND NOT used",
        )
        .bind(now())
        .bind(hash(token))
        .execute(self.pool().await?)
        .await?;
        Ok(done.rows_affected() == 1)
    }

    async fn revoke_family(&self, family: &str) -> Result<(), StoreError> {
        let pool = self.pool().await?;
        sqlx::query("UPDATE oauth_refresh SET revoked = TRUE WHERE family = $1")
            .bind(family)
            .execute(pool)
            .await?;
        sqlx::query(
            "INSERT INTO oauth_revoked_jti (jti, expires_at) \
             SELECT jti, expires_at FROM oauth_family_access WHERE family = $1 \
             ON CONFLICT (jti) DO NOTHING",
        )
        .bind(family)
        .execute(pool)
        .await?;
        Ok(())
    }

    async fn record_access(
        &self,
        family: &str,
        jti: &str,
        expires_at: i64,
    ) -> Result<(), StoreError> {
        sqlx::query(
            "INSERT INTO oauth_family_access (jti, family, expires_at) VALUES ($1, $2, $3) \
             ON CONFLICT (jti) DO NOTHING",
        )
        .bind(jti)
        .bind(family)
        .bind(expires_at)
        .execute(self.pool().await?)
        .await?;
        Ok(())
    }

    async fn revoke_jti(&self, jti: &str, expires_at: i64) -> Result<(), StoreError> {
        sqlx::query(
            "INSERT INTO oauth_revoked_jti (jti, expires_at) VALUES ($1, $2) \
             ON CONFLICT (jti) DO NOTHING",
        )
        .bind(jti)
        .bind(expires_at)
        .execute(self.pool().await?)
        .await?;
        Ok(())
    }

    async fn revoked_jtis(&self) -> Result<Vec<String>, StoreError> {
        let rows = sqlx::query("SELECT jti FROM oauth_revoked_jti WHERE expires_at >= $1")
            .bind(now())
            .fetch_all(self.pool().await?)
            .await?;
        Ok(rows.iter().map(|r| r.get(0)).collect())
    }

    async fn purge_expired(&self) -> Result<u64, StoreError> {
        let pool = self.pool().await?;
        let mut removed = 0;
        for table in [
            "oauth_pending",
            "oauth_code",
            "oauth_refresh",
            "oauth_revoked_jti",
            "oauth_family_access",
        ] {
            let done = sqlx::query(sqlx::AssertSqlSafe(format!(
                "DELETE FROM {table} WHERE expires_at < $1"
            )))
            .bind(now())
            .execute(pool)
            .await?;
            removed += done.rows_affected();
        }
        // Sign-in failures long forgotten by every rule (the longest wait is minutes).
        let done = sqlx::query(
            "DELETE FROM oauth_sign_in_failure WHERE last_at < now() - interval '1 day'",
        )
        .execute(pool)
        .await?;
        Ok(removed + done.rows_affected())
    }

    async fn active_grants(&self) -> Result<Vec<(String, Grant, i64)>, StoreError> {
        let rows = sqlx::query(
            "SELECT family, grant_json, expires_at FROM oauth_refresh \
             WHERE NOT revoked AND NOT used AND expires_at >= $1 ORDER BY expires_at",
        )
        .bind(now())
        .fetch_all(self.pool().await?)
        .await?;
        Ok(rows
            .iter()
            .filter_map(|r| {
                Some((
                    r.get(0),
                    serde_json::from_str(r.get::<&str, _>(1)).ok()?,
                    r.get(2),
                ))
            })
            .collect())
    }

    async fn put_user(&self, username: &str, password: &str, role: &str) -> Result<(), StoreError> {
        let hashed = super::passwords::hash(password)?;
        sqlx::query(
            "INSERT INTO oauth_user (username, password_hash, role, created_at) \
             VALUES ($1, $2, $3, $4) ON CONFLICT (username) DO UPDATE \
             SET password_hash = EXCLUDED.password_hash, role = EXCLUDED.role",
        )
        .bind(username)
        .bind(hashed)
        .bind(role)
        .bind(now())
        .execute(self.pool().await?)
        .await?;
        Ok(())
    }

    async fn check_user(
        &self,
        username: &str,
        password: &str,
    ) -> Result<Option<String>, StoreError> {
        let row = sqlx::query("SELECT password_hash, role FROM oauth_user WHERE username = $1")
            .bind(username)
            .fetch_optional(self.pool().await?)
            .await?;
        let stored = row.as_ref().map(|row| row.get::<&str, _>(0));
        Ok(super::passwords::verify(stored, password)
            .then(|| row.map(|row| row.get(1)))
            .flatten())
    }
}

#[async_trait::async_trait]
impl SharedFailures for PgStore {
    async fn failures(&self, key: &str) -> Result<Option<(u32, Duration)>, StoreError> {
        let row = sqlx::query(
            "SELECT failures, extract(epoch FROM now() - last_at)::float8 \
             FROM oauth_sign_in_failure WHERE key = $1",
        )
        .bind(key)
        .fetch_optional(self.pool().await?)
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
        .execute(self.pool().await?)
        .await?;
        Ok(())
    }

    async fn forget(&self, key: &str) -> Result<(), StoreError> {
        sqlx::query("DELETE FROM oauth_sign_in_failure WHERE key = $1")
            .bind(key)
            .execute(self.pool().await?)
            .await?;
        Ok(())
    }
}
