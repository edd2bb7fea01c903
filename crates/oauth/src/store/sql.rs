//! The [`OAuthStore`] on either engine ([`concierge_core::store`]): a SQLite file (the embedded
//! default) or the deployment's shared PostgreSQL (`[state] database`). A flow may cross
//! instances at every step — `/authorize` on one, the sign-in on a second, `/token` on a third,
//! the refresh anywhere — so the shared database keeps everything the file does, with one
//! signing key for all (the first instance to start makes it; the others read it). Codes,
//! tokens and secrets are stored as SHA-256 hashes, passwords as argon2.
//!
//! The tables differ in two ways the queries know of: PostgreSQL keeps flags as `BOOLEAN` and
//! orders ties by a `seq` column, SQLite keeps flags as 0/1 and orders ties by its `rowid`; JSON
//! inside a text column is read with `->>` on both, after a `::jsonb` cast on PostgreSQL.
//!
//! Over 600 lines: the trait's every method and the one query each calls, which a reader checks
//! side by side; the tests, which run each case on both engines, are in `sql/tests.rs`.

use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use concierge_core::postgres::{Schema, SharedDatabase};
use concierge_core::sqlite::{self, SqliteFile};
use concierge_core::store::StoreDatabase;
use concierge_core::{on_store, store_queries};
use sqlx::Row;

use super::{
    Client, Grant, LiveFamily, OAuthStore, RefreshState, SignedIn, StoreError, UserDirectory,
};
use crate::util::hash;

const SQLITE_SCHEMA: &str = r#"
CREATE TABLE IF NOT EXISTS oauth_key (id INTEGER PRIMARY KEY, seed BLOB NOT NULL, created_at INTEGER NOT NULL);
CREATE TABLE IF NOT EXISTS oauth_client (
    client_id TEXT PRIMARY KEY, client TEXT NOT NULL, created_at INTEGER NOT NULL, last_used_at INTEGER NOT NULL
);
CREATE TABLE IF NOT EXISTS oauth_pending (csrf TEXT PRIMARY KEY, request TEXT NOT NULL, expires_at INTEGER NOT NULL);
CREATE TABLE IF NOT EXISTS oauth_code (code_hash TEXT PRIMARY KEY, grant_json TEXT NOT NULL, expires_at INTEGER NOT NULL, used INTEGER NOT NULL DEFAULT 0);
CREATE TABLE IF NOT EXISTS oauth_refresh (
    token_hash TEXT PRIMARY KEY, family TEXT NOT NULL, grant_json TEXT NOT NULL, expires_at INTEGER NOT NULL,
    used INTEGER NOT NULL DEFAULT 0, revoked INTEGER NOT NULL DEFAULT 0
);
CREATE INDEX IF NOT EXISTS oauth_refresh_family ON oauth_refresh (family);
CREATE TABLE IF NOT EXISTS oauth_revoked_jti (jti TEXT PRIMARY KEY, expires_at INTEGER NOT NULL);
CREATE TABLE IF NOT EXISTS oauth_family_access (jti TEXT PRIMARY KEY, family TEXT NOT NULL, expires_at INTEGER NOT NULL);
CREATE INDEX IF NOT EXISTS oauth_family_access_family ON oauth_family_access (family);
CREATE TABLE IF NOT EXISTS oauth_user (username TEXT PRIMARY KEY, password_hash TEXT NOT NULL, role TEXT NOT NULL, created_at INTEGER NOT NULL);
"#;

static POSTGRES_SCHEMA: Schema = Schema {
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

pub struct SqlStore {
    database: StoreDatabase,
}

impl SqlStore {
    /// The embedded store: one SQLite file, created (and brought up to date) here.
    pub async fn open_file(path: &Path) -> Result<Self, StoreError> {
        let pool = SqliteFile::new(path).open(&[SQLITE_SCHEMA]).await?;
        // Databases from before the rotation grace: their rotations are long past it anyway.
        sqlite::add_column(&pool, "oauth_refresh", "used_at", "INTEGER").await?;
        // Databases from before `used` existed: a client counts as used when it was touched
        // after it registered.
        if sqlite::add_column(&pool, "oauth_client", "used", "INTEGER NOT NULL DEFAULT 0").await? {
            sqlx::query("UPDATE oauth_client SET used = 1 WHERE last_used_at > created_at")
                .execute(&pool)
                .await?;
        }
        Ok(Self {
            database: StoreDatabase::Sqlite(pool),
        })
    }

    /// The store several instances share; connected (and migrated) on first use.
    pub fn shared(database: Arc<SharedDatabase>) -> Self {
        Self {
            database: StoreDatabase::postgres(database, &POSTGRES_SCHEMA),
        }
    }

    /// The shared PostgreSQL, for what only it keeps (sign-in failures, `failures.rs`).
    pub(super) async fn postgres(&self) -> Result<&sqlx::PgPool, StoreError> {
        match &self.database {
            StoreDatabase::Postgres(database) => Ok(database.pool().await?),
            StoreDatabase::Sqlite(_) => Err(StoreError(
                "sign-in failures are shared through PostgreSQL only".into(),
            )),
        }
    }
}

fn now() -> i64 {
    chrono::Utc::now().timestamp()
}

fn expiry(ttl: Duration) -> i64 {
    now() + i64::try_from(ttl.as_secs()).unwrap_or(i64::MAX / 2)
}

/// A row count as SQL takes it (`OFFSET`, `LIMIT`).
fn count(n: u64) -> i64 {
    i64::try_from(n).unwrap_or(i64::MAX)
}

#[async_trait::async_trait]
impl UserDirectory for SqlStore {
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

#[async_trait::async_trait]
impl OAuthStore for SqlStore {
    async fn signing_seed(&self) -> Result<[u8; 32], StoreError> {
        on_store!(&self.database, queries::signing_seed())
    }
    async fn put_client(&self, client: &Client) -> Result<(), StoreError> {
        on_store!(&self.database, queries::put_client(client))
    }
    async fn client(&self, client_id: &str) -> Result<Option<Client>, StoreError> {
        on_store!(&self.database, queries::client(client_id))
    }
    async fn touch_client(&self, client_id: &str) -> Result<(), StoreError> {
        on_store!(&self.database, queries::touch_client(client_id))
    }
    async fn clients(&self) -> Result<Vec<(Client, i64)>, StoreError> {
        on_store!(&self.database, queries::clients())
    }
    async fn delete_client(&self, client_id: &str) -> Result<bool, StoreError> {
        on_store!(&self.database, queries::delete_client(client_id))
    }
    async fn collect_unused_clients(&self, cutoff: i64) -> Result<u64, StoreError> {
        on_store!(&self.database, queries::collect_unused_clients(cutoff))
    }
    async fn cap_unused_clients(&self, keep: u64) -> Result<u64, StoreError> {
        on_store!(&self.database, queries::cap_unused_clients(count(keep)))
    }
    async fn put_pending(
        &self,
        csrf: &str,
        request: &str,
        ttl: Duration,
    ) -> Result<(), StoreError> {
        on_store!(&self.database, queries::put_pending(csrf, request, ttl))
    }
    async fn take_pending(&self, csrf: &str) -> Result<Option<String>, StoreError> {
        on_store!(&self.database, queries::take_pending(csrf))
    }
    async fn trim_pending(&self, keep: u64) -> Result<u64, StoreError> {
        on_store!(&self.database, queries::trim_pending(count(keep)))
    }
    async fn put_code(&self, code: &str, grant: &Grant, ttl: Duration) -> Result<(), StoreError> {
        on_store!(&self.database, queries::put_code(code, grant, ttl))
    }
    async fn redeem_code(&self, code: &str) -> Result<Option<Grant>, StoreError> {
        on_store!(&self.database, queries::redeem_code(code))
    }
    async fn code_was_redeemed(&self, code: &str) -> Result<bool, StoreError> {
        on_store!(&self.database, queries::code_was_redeemed(code))
    }
    async fn put_refresh(
        &self,
        token: &str,
        family: &str,
        grant: &Grant,
        ttl: Duration,
    ) -> Result<(), StoreError> {
        on_store!(
            &self.database,
            queries::put_refresh(token, family, grant, ttl)
        )
    }
    async fn refresh(&self, token: &str) -> Result<Option<RefreshState>, StoreError> {
        on_store!(&self.database, queries::refresh(token))
    }
    async fn mark_refresh_used(&self, token: &str) -> Result<bool, StoreError> {
        on_store!(&self.database, queries::mark_refresh_used(token))
    }
    async fn revoke_family(&self, family: &str) -> Result<(), StoreError> {
        on_store!(&self.database, queries::revoke_family(family))
    }
    async fn live_families(&self, limit: u32) -> Result<Vec<LiveFamily>, StoreError> {
        on_store!(&self.database, queries::live_families(i64::from(limit)))
    }
    async fn record_access(
        &self,
        family: &str,
        jti: &str,
        expires_at: i64,
    ) -> Result<(), StoreError> {
        on_store!(
            &self.database,
            queries::record_access(family, jti, expires_at)
        )
    }
    async fn revoke_jti(&self, jti: &str, expires_at: i64) -> Result<(), StoreError> {
        on_store!(&self.database, queries::revoke_jti(jti, expires_at))
    }
    async fn revoked_jtis(&self) -> Result<Vec<String>, StoreError> {
        on_store!(&self.database, queries::revoked_jtis())
    }
    async fn purge_expired(&self) -> Result<u64, StoreError> {
        on_store!(&self.database, queries::purge_expired())
    }
    async fn active_grants(&self) -> Result<Vec<(String, Grant, i64)>, StoreError> {
        on_store!(&self.database, queries::active_grants())
    }
    async fn put_user(&self, username: &str, password: &str, role: &str) -> Result<(), StoreError> {
        let hashed = super::passwords::hash(password)?;
        on_store!(&self.database, queries::put_user(username, &hashed, role))
    }
    async fn check_user(
        &self,
        username: &str,
        password: &str,
    ) -> Result<Option<String>, StoreError> {
        let stored = on_store!(&self.database, queries::user(username))?;
        let (hash, role) = stored.unzip();
        Ok(super::passwords::verify(hash.as_deref(), password)
            .then_some(role)
            .flatten())
    }
}

/// A stored JSON text as the value it holds; a row that no longer reads is passed over.
fn parsed<T: serde::de::DeserializeOwned>(text: &str) -> Option<T> {
    serde_json::from_str(text).ok()
}

fn json(value: &impl serde::Serialize) -> String {
    serde_json::to_string(value).unwrap_or_default()
}

store_queries! {
    /// Every query of the store, once for both engines.
    mod queries {
        use concierge_core::store::Engine;

        pub async fn signing_seed(pool: &Pool) -> Result<[u8; 32], StoreError> {
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

        pub async fn put_client(pool: &Pool, client: &Client) -> Result<(), StoreError> {
            sqlx::query(
                "INSERT INTO oauth_client (client_id, client, created_at, last_used_at) \
                 VALUES ($1, $2, $3, $3) ON CONFLICT (client_id) DO UPDATE SET client = EXCLUDED.client",
            )
            .bind(&client.client_id)
            .bind(json(client))
            .bind(now())
            .execute(pool)
            .await?;
            Ok(())
        }

        pub async fn client(pool: &Pool, client_id: &str) -> Result<Option<Client>, StoreError> {
            let text: Option<String> =
                sqlx::query_scalar("SELECT client FROM oauth_client WHERE client_id = $1")
                    .bind(client_id)
                    .fetch_optional(pool)
                    .await?;
            Ok(text.as_deref().and_then(parsed))
        }

        pub async fn touch_client(pool: &Pool, client_id: &str) -> Result<(), StoreError> {
            sqlx::query("UPDATE oauth_client SET last_used_at = $1, used = TRUE WHERE client_id = $2")
                .bind(now())
                .bind(client_id)
                .execute(pool)
                .await?;
            Ok(())
        }

        pub async fn clients(pool: &Pool) -> Result<Vec<(Client, i64)>, StoreError> {
            let rows = sqlx::query(ENGINE.pick(
                "SELECT client, last_used_at FROM oauth_client ORDER BY created_at, rowid",
                "SELECT client, last_used_at FROM oauth_client ORDER BY created_at, seq",
            ))
            .fetch_all(pool)
            .await?;
            Ok(rows
                .iter()
                .filter_map(|r| Some((parsed(r.get::<&str, _>(0))?, r.get(1))))
                .collect())
        }

        /// Removes a client and revokes the refresh tokens it holds.
        pub async fn delete_client(pool: &Pool, client_id: &str) -> Result<bool, StoreError> {
            let done = sqlx::query("DELETE FROM oauth_client WHERE client_id = $1")
                .bind(client_id)
                .execute(pool)
                .await?;
            sqlx::query(ENGINE.pick(
                "UPDATE oauth_refresh SET revoked = TRUE WHERE grant_json ->> 'client_id' = $1",
                "UPDATE oauth_refresh SET revoked = TRUE WHERE grant_json::jsonb ->> 'client_id' = $1",
            ))
            .bind(client_id)
            .execute(pool)
            .await?;
            Ok(done.rows_affected() > 0)
        }

        /// Self-registered clients unused since `cutoff` (registration floods leave many behind).
        pub async fn collect_unused_clients(pool: &Pool, cutoff: i64) -> Result<u64, StoreError> {
            let done = sqlx::query(ENGINE.pick(
                "DELETE FROM oauth_client WHERE last_used_at < $1 AND client ->> 'source' = 'dcr'",
                "DELETE FROM oauth_client WHERE last_used_at < $1 AND client::jsonb ->> 'source' = 'dcr'",
            ))
            .bind(cutoff)
            .execute(pool)
            .await?;
            Ok(done.rows_affected())
        }

        pub async fn cap_unused_clients(pool: &Pool, keep: i64) -> Result<u64, StoreError> {
            let newest = ENGINE.pick(
                "DELETE FROM oauth_client WHERE client_id IN (SELECT client_id FROM oauth_client \
                 WHERE NOT used AND client ->> 'source' = 'dcr' \
                 ORDER BY created_at DESC, rowid DESC LIMIT $2 OFFSET $1)",
                "DELETE FROM oauth_client WHERE client_id IN (SELECT client_id FROM oauth_client \
                 WHERE NOT used AND client::jsonb ->> 'source' = 'dcr' \
                 ORDER BY created_at DESC, seq DESC LIMIT $2 OFFSET $1)",
            );
            keep_newest(pool, newest, keep).await
        }

        /// Runs `statement`, which deletes the rows after the `$1` newest (`LIMIT $2 OFFSET $1`:
        /// `LIMIT` before `OFFSET` for SQLite, `$2` as large as a row count can be for both);
        /// how many went.
        async fn keep_newest(
            pool: &Pool,
            statement: &'static str,
            keep: i64,
        ) -> Result<u64, StoreError> {
            let done = sqlx::query(statement)
                .bind(keep)
                .bind(i64::MAX)
                .execute(pool)
                .await?;
            Ok(done.rows_affected())
        }

        pub async fn put_pending(
            pool: &Pool,
            csrf: &str,
            request: &str,
            ttl: Duration,
        ) -> Result<(), StoreError> {
            sqlx::query("INSERT INTO oauth_pending (csrf, request, expires_at) VALUES ($1, $2, $3)")
                .bind(hash(csrf))
                .bind(request)
                .bind(expiry(ttl))
                .execute(pool)
                .await?;
            Ok(())
        }

        pub async fn take_pending(pool: &Pool, csrf: &str) -> Result<Option<String>, StoreError> {
            Ok(sqlx::query_scalar(
                "DELETE FROM oauth_pending WHERE csrf = $1 AND expires_at >= $2 RETURNING request",
            )
            .bind(hash(csrf))
            .bind(now())
            .fetch_optional(pool)
            .await?)
        }

        pub async fn trim_pending(pool: &Pool, keep: i64) -> Result<u64, StoreError> {
            let newest = ENGINE.pick(
                "DELETE FROM oauth_pending WHERE csrf IN (SELECT csrf FROM oauth_pending \
                 ORDER BY expires_at DESC, rowid DESC LIMIT $2 OFFSET $1)",
                "DELETE FROM oauth_pending WHERE csrf IN (SELECT csrf FROM oauth_pending \
                 ORDER BY expires_at DESC, seq DESC LIMIT $2 OFFSET $1)",
            );
            keep_newest(pool, newest, keep).await
        }

        pub async fn put_code(
            pool: &Pool,
            code: &str,
            grant: &Grant,
            ttl: Duration,
        ) -> Result<(), StoreError> {
            sqlx::query("INSERT INTO oauth_code (code_hash, grant_json, expires_at) VALUES ($1, $2, $3)")
                .bind(hash(code))
                .bind(json(grant))
                .bind(expiry(ttl))
                .execute(pool)
                .await?;
            Ok(())
        }

        /// One statement: of two instances redeeming the same code at once, one gets it.
        pub async fn redeem_code(pool: &Pool, code: &str) -> Result<Option<Grant>, StoreError> {
            let text: Option<String> = sqlx::query_scalar(
                "UPDATE oauth_code SET used = TRUE WHERE code_hash = $1 AND NOT used \
                 AND expires_at >= $2 RETURNING grant_json",
            )
            .bind(hash(code))
            .bind(now())
            .fetch_optional(pool)
            .await?;
            Ok(text.as_deref().and_then(parsed))
        }

        pub async fn code_was_redeemed(pool: &Pool, code: &str) -> Result<bool, StoreError> {
            let used: Option<bool> = sqlx::query_scalar("SELECT used FROM oauth_code WHERE code_hash = $1")
                .bind(hash(code))
                .fetch_optional(pool)
                .await?;
            Ok(used == Some(true))
        }

        pub async fn put_refresh(
            pool: &Pool,
            token: &str,
            family: &str,
            grant: &Grant,
            ttl: Duration,
        ) -> Result<(), StoreError> {
            // A token born into a family that reuse detection revoked meanwhile is born revoked.
            sqlx::query(
                "INSERT INTO oauth_refresh (token_hash, family, grant_json, expires_at, revoked) \
                 VALUES ($1, $2, $3, $4, EXISTS (SELECT 1 FROM oauth_refresh WHERE family = $2 AND revoked))",
            )
            .bind(hash(token))
            .bind(family)
            .bind(json(grant))
            .bind(expiry(ttl))
            .execute(pool)
            .await?;
            Ok(())
        }

        pub async fn refresh(pool: &Pool, token: &str) -> Result<Option<RefreshState>, StoreError> {
            let row = sqlx::query(
                "SELECT family, grant_json, used, revoked, expires_at, used_at FROM oauth_refresh \
                 WHERE token_hash = $1",
            )
            .bind(hash(token))
            .fetch_optional(pool)
            .await?;
            Ok(row.and_then(|r| {
                Some(RefreshState {
                    family: r.get(0),
                    grant: parsed(r.get::<&str, _>(1))?,
                    used: r.get(2),
                    used_at: r.get(5),
                    revoked: r.get(3),
                    expired: r.get::<i64, _>(4) < now(),
                })
            }))
        }

        pub async fn live_families(pool: &Pool, limit: i64) -> Result<Vec<LiveFamily>, StoreError> {
            let rows = sqlx::query(
                "SELECT family, grant_json, expires_at FROM oauth_refresh \
                 WHERE NOT used AND NOT revoked AND expires_at > $1 ORDER BY expires_at DESC LIMIT $2",
            )
            .bind(now())
            .bind(limit)
            .fetch_all(pool)
            .await?;
            Ok(rows
                .iter()
                .filter_map(|r| {
                    Some(LiveFamily {
                        family: r.get(0),
                        grant: parsed(r.get::<&str, _>(1))?,
                        expires_at: r.get(2),
                    })
                })
                .collect())
        }

        /// Marks a refresh token rotated; false when another request rotated it first.
        pub async fn mark_refresh_used(pool: &Pool, token: &str) -> Result<bool, StoreError> {
            let done = sqlx::query(
                "UPDATE oauth_refresh SET used = TRUE, used_at = $1 WHERE token_hash = $2 AND NOT used",
            )
            .bind(now())
            .bind(hash(token))
            .execute(pool)
            .await?;
            Ok(done.rows_affected() == 1)
        }

        pub async fn revoke_family(pool: &Pool, family: &str) -> Result<(), StoreError> {
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

        pub async fn record_access(
            pool: &Pool,
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
            .execute(pool)
            .await?;
            Ok(())
        }

        pub async fn revoke_jti(pool: &Pool, jti: &str, expires_at: i64) -> Result<(), StoreError> {
            sqlx::query(
                "INSERT INTO oauth_revoked_jti (jti, expires_at) VALUES ($1, $2) \
                 ON CONFLICT (jti) DO NOTHING",
            )
            .bind(jti)
            .bind(expires_at)
            .execute(pool)
            .await?;
            Ok(())
        }

        pub async fn revoked_jtis(pool: &Pool) -> Result<Vec<String>, StoreError> {
            Ok(sqlx::query_scalar("SELECT jti FROM oauth_revoked_jti WHERE expires_at >= $1")
                .bind(now())
                .fetch_all(pool)
                .await?)
        }

        pub async fn purge_expired(pool: &Pool) -> Result<u64, StoreError> {
            let mut removed = 0;
            for statement in [
                "DELETE FROM oauth_pending WHERE expires_at < $1",
                "DELETE FROM oauth_code WHERE expires_at < $1",
                "DELETE FROM oauth_refresh WHERE expires_at < $1",
                "DELETE FROM oauth_revoked_jti WHERE expires_at < $1",
                "DELETE FROM oauth_family_access WHERE expires_at < $1",
            ] {
                let done = sqlx::query(statement).bind(now()).execute(pool).await?;
                removed += done.rows_affected();
            }
            if ENGINE == Engine::Postgres {
                // Sign-in failures long forgotten by every rule (the longest wait is minutes);
                // only the shared database counts them.
                let done = sqlx::query(
                    "DELETE FROM oauth_sign_in_failure WHERE last_at < now() - interval '1 day'",
                )
                .execute(pool)
                .await?;
                removed += done.rows_affected();
            }
            Ok(removed)
        }

        pub async fn active_grants(pool: &Pool) -> Result<Vec<(String, Grant, i64)>, StoreError> {
            let rows = sqlx::query(
                "SELECT family, grant_json, expires_at FROM oauth_refresh \
                 WHERE NOT revoked AND NOT used AND expires_at >= $1 ORDER BY expires_at",
            )
            .bind(now())
            .fetch_all(pool)
            .await?;
            Ok(rows
                .iter()
                .filter_map(|r| Some((r.get(0), parsed(r.get::<&str, _>(1))?, r.get(2))))
                .collect())
        }

        pub async fn put_user(
            pool: &Pool,
            username: &str,
            password_hash: &str,
            role: &str,
        ) -> Result<(), StoreError> {
            sqlx::query(
                "INSERT INTO oauth_user (username, password_hash, role, created_at) \
                 VALUES ($1, $2, $3, $4) ON CONFLICT (username) DO UPDATE \
                 SET password_hash = EXCLUDED.password_hash, role = EXCLUDED.role",
            )
            .bind(username)
            .bind(password_hash)
            .bind(role)
            .bind(now())
            .execute(pool)
            .await?;
            Ok(())
        }

        /// A local user's password hash and role.
        pub async fn user(pool: &Pool, username: &str) -> Result<Option<(String, String)>, StoreError> {
            Ok(sqlx::query_as("SELECT password_hash, role FROM oauth_user WHERE username = $1")
                .bind(username)
                .fetch_optional(pool)
                .await?)
        }
    }
}

#[cfg(test)]
mod tests;
