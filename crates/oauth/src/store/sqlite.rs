//! The embedded [`OAuthStore`]: one SQLite file. Codes, tokens and secrets are stored as
//! SHA-256 hashes, passwords as argon2.

use std::path::Path;
use std::time::Duration;

use concierge_core::sqlite::{self, SqliteFile};
use sqlx::Row;
use sqlx::sqlite::SqlitePool;

use super::{
    Client, Grant, LiveFamily, OAuthStore, RefreshState, SignedIn, StoreError, UserDirectory,
};
use crate::util::hash;

const SCHEMA: &str = r#"
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

#[async_trait::async_trait]
impl UserDirectory for SqliteStore {
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

pub struct SqliteStore {
    pool: SqlitePool,
}

fn now() -> i64 {
    chrono::Utc::now().timestamp()
}

impl SqliteStore {
    pub async fn open(path: &Path) -> Result<Self, StoreError> {
        let pool = SqliteFile::new(path).open(&[SCHEMA]).await?;
        // Databases from before `used` existed: a client counts as used when it was touched
        // after it registered.
        // Databases from before the rotation grace: their rotations are long past it anyway.
        sqlite::add_column(&pool, "oauth_refresh", "used_at", "INTEGER").await?;
        if sqlite::add_column(&pool, "oauth_client", "used", "INTEGER NOT NULL DEFAULT 0").await? {
            sqlx::query("UPDATE oauth_client SET used = 1 WHERE last_used_at > created_at")
                .execute(&pool)
                .await?;
        }
        Ok(Self { pool })
    }
}

#[async_trait::async_trait]
impl OAuthStore for SqliteStore {
    async fn signing_seed(&self) -> Result<[u8; 32], StoreError> {
        if let Some(row) = sqlx::query("SELECT seed FROM oauth_key ORDER BY id DESC LIMIT 1")
            .fetch_optional(&self.pool)
            .await?
        {
            let seed: Vec<u8> = row.get(0);
            if let Ok(seed) = seed.try_into() {
                return Ok(seed);
            }
        }
        let (seed, _) = crate::keys::SigningKey::generate();
        sqlx::query("INSERT INTO oauth_key (seed, created_at) VALUES (?, ?)")
            .bind(seed.to_vec())
            .bind(now())
            .execute(&self.pool)
            .await?;
        Ok(seed)
    }

    async fn put_client(&self, client: &Client) -> Result<(), StoreError> {
        sqlx::query(
            "INSERT INTO oauth_client (client_id, client, created_at, last_used_at) VALUES (?, ?, ?, ?) \
             ON CONFLICT (client_id) DO UPDATE SET client = excluded.client",
        )
        .bind(&client.client_id)
        .bind(serde_json::to_string(client).unwrap_or_default())
        .bind(now())
        .bind(now())
        .execute(&self.pool)
        .await?;
        Ok(())
    }

    async fn client(&self, client_id: &str) -> Result<Option<Client>, StoreError> {
        let row = sqlx::query("SELECT client FROM oauth_client WHERE client_id = ?")
            .bind(client_id)
            .fetch_optional(&self.pool)
            .await?;
        Ok(row.and_then(|r| serde_json::from_str(r.get::<&str, _>(0)).ok()))
    }

    async fn touch_client(&self, client_id: &str) -> Result<(), StoreError> {
        sqlx::query("UPDATE oauth_client SET last_used_at = ?, used = 1 WHERE client_id = ?")
            .bind(now())
            .bind(client_id)
            .execute(&self.pool)
            .await?;
        Ok(())
    }

    async fn clients(&self) -> Result<Vec<(Client, i64)>, StoreError> {
        let rows = sqlx::query("SELECT client, last_used_at FROM oauth_client ORDER BY created_at")
            .fetch_all(&self.pool)
            .await?;
        Ok(rows
            .iter()
            .filter_map(|r| Some((serde_json::from_str(r.get::<&str, _>(0)).ok()?, r.get(1))))
            .collect())
    }

    async fn delete_client(&self, client_id: &str) -> Result<bool, StoreError> {
        let done = sqlx::query("DELETE FROM oauth_client WHERE client_id = ?")
            .bind(client_id)
            .execute(&self.pool)
            .await?;
        sqlx::query(
            "UPDATE oauth_refresh SET revoked = 1 WHERE json_extract(grant_json, '$.client_id') = ?",
        )
        .bind(client_id)
        .execute(&self.pool)
            .await?;
        Ok(done.rows_affected() > 0)
    }

    /// Self-registered clients unused for `idle` (registration floods leave many behind).
    async fn collect_unused_clients(&self, cutoff: i64) -> Result<u64, StoreError> {
        let before = cutoff;
        let done = sqlx::query(
            "DELETE FROM oauth_client WHERE last_used_at < ? AND json_extract(client, '$.source') = 'dcr'",
        )
        .bind(before)
        .execute(&self.pool)
        .await?;
        Ok(done.rows_affected())
    }

    async fn cap_unused_clients(&self, keep: u64) -> Result<u64, StoreError> {
        let done = sqlx::query(
            "DELETE FROM oauth_client WHERE client_id IN (SELECT client_id FROM oauth_client \
             WHERE used = 0 AND json_extract(client, '$.source') = 'dcr' \
             ORDER BY created_at DESC, rowid DESC LIMIT -1 OFFSET ?)",
        )
        .bind(i64::try_from(keep).unwrap_or(i64::MAX))
        .execute(&self.pool)
        .await?;
        Ok(done.rows_affected())
    }

    async fn trim_pending(&self, keep: u64) -> Result<u64, StoreError> {
        let done = sqlx::query(
            "DELETE FROM oauth_pending WHERE rowid IN (SELECT rowid FROM oauth_pending \
             ORDER BY expires_at DESC, rowid DESC LIMIT -1 OFFSET ?)",
        )
        .bind(i64::try_from(keep).unwrap_or(i64::MAX))
        .execute(&self.pool)
        .await?;
        Ok(done.rows_affected())
    }

    async fn put_pending(
        &self,
        csrf: &str,
        request: &str,
        ttl: Duration,
    ) -> Result<(), StoreError> {
        sqlx::query("INSERT INTO oauth_pending (csrf, request, expires_at) VALUES (?, ?, ?)")
            .bind(hash(csrf))
            .bind(request)
            .bind(now() + ttl.as_secs() as i64)
            .execute(&self.pool)
            .await?;
        Ok(())
    }

    /// The pending request for a CSRF token, consumed.
    async fn take_pending(&self, csrf: &str) -> Result<Option<String>, StoreError> {
        let row = sqlx::query(
            "DELETE FROM oauth_pending WHERE csrf = ? AND expires_at >= ? RETURNING request",
        )
        .bind(hash(csrf))
        .bind(now())
        .fetch_optional(&self.pool)
        .await?;
        Ok(row.map(|r| r.get(0)))
    }

    async fn put_code(&self, code: &str, grant: &Grant, ttl: Duration) -> Result<(), StoreError> {
        sqlx::query("INSERT INTO oauth_code (code_hash, grant_json, expires_at) VALUES (?, ?, ?)")
            .bind(hash(code))
            .bind(serde_json::to_string(grant).unwrap_or_default())
            .bind(now() + ttl.as_secs() as i64)
            .execute(&self.pool)
            .await?;
        Ok(())
    }

    /// Redeems a code once: `Ok(None)` when unknown, expired or already used.
    async fn redeem_code(&self, code: &str) -> Result<Option<Grant>, StoreError> {
        let row = sqlx::query(
            "UPDATE oauth_code SET used = 1 WHERE code_hash = ? AND used = 0 AND expires_at >= ? RETURNING grant_json",
        )
        .bind(hash(code))
        .bind(now())
        .fetch_optional(&self.pool)
        .await?;
        Ok(row.and_then(|r| serde_json::from_str(r.get::<&str, _>(0)).ok()))
    }

    async fn code_was_redeemed(&self, code: &str) -> Result<bool, StoreError> {
        let row = sqlx::query("SELECT used FROM oauth_code WHERE code_hash = ?")
            .bind(hash(code))
            .fetch_optional(&self.pool)
            .await?;
        Ok(row.is_some_and(|r| r.get::<i64, _>(0) != 0))
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
             VALUES (?1, ?2, ?3, ?4, COALESCE((SELECT MAX(revoked) FROM oauth_refresh WHERE family = ?2), 0))",
        )
            .bind(hash(token))
            .bind(family)
            .bind(serde_json::to_string(grant).unwrap_or_default())
            .bind(now() + ttl.as_secs() as i64)
            .execute(&self.pool)
            .await?;
        Ok(())
    }

    /// A refresh token's state: its family, grant, and whether it was already rotated.
    async fn refresh(&self, token: &str) -> Result<Option<RefreshState>, StoreError> {
        let row = sqlx::query(
            "SELECT family, grant_json, used, revoked, expires_at, used_at FROM oauth_refresh WHERE token_hash = ?",
        )
        .bind(hash(token))
        .fetch_optional(&self.pool)
        .await?;
        Ok(row.and_then(|r| {
            Some(RefreshState {
                family: r.get(0),
                grant: serde_json::from_str(r.get::<&str, _>(1)).ok()?,
                used: r.get::<i64, _>(2) != 0,
                used_at: r.get(5),
                revoked: r.get::<i64, _>(3) != 0,
                expired: r.get::<i64, _>(4) < now(),
            })
        }))
    }

    async fn live_families(&self, limit: u32) -> Result<Vec<LiveFamily>, StoreError> {
        let rows = sqlx::query(
            "SELECT family, grant_json, expires_at FROM oauth_refresh \
             WHERE used = 0 AND revoked = 0 AND expires_at > ? ORDER BY expires_at DESC LIMIT ?",
        )
        .bind(now())
        .bind(i64::from(limit))
        .fetch_all(&self.pool)
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

    /// Marks a refresh token rotated; false when another request rotated it first.
    async fn mark_refresh_used(&self, token: &str) -> Result<bool, StoreError> {
        let done = sqlx::query(
            "UPDATE oauth_refresh SET used = 1, used_at = ? WHERE token_hash = ? AND used = 0",
        )
        .bind(now())
        .bind(hash(token))
        .execute(&self.pool)
        .await?;
        Ok(done.rows_affected() == 1)
    }

    async fn revoke_family(&self, family: &str) -> Result<(), StoreError> {
        sqlx::query("UPDATE oauth_refresh SET revoked = 1 WHERE family = ?")
            .bind(family)
            .execute(&self.pool)
            .await?;
        sqlx::query(
            "INSERT OR IGNORE INTO oauth_revoked_jti (jti, expires_at) \
             SELECT jti, expires_at FROM oauth_family_access WHERE family = ?",
        )
        .bind(family)
        .execute(&self.pool)
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
            "INSERT OR IGNORE INTO oauth_family_access (jti, family, expires_at) VALUES (?, ?, ?)",
        )
        .bind(jti)
        .bind(family)
        .bind(expires_at)
        .execute(&self.pool)
        .await?;
        Ok(())
    }

    async fn revoke_jti(&self, jti: &str, expires_at: i64) -> Result<(), StoreError> {
        sqlx::query("INSERT OR IGNORE INTO oauth_revoked_jti (jti, expires_at) VALUES (?, ?)")
            .bind(jti)
            .bind(expires_at)
            .execute(&self.pool)
            .await?;
        Ok(())
    }

    async fn active_grants(&self) -> Result<Vec<(String, Grant, i64)>, StoreError> {
        let rows = sqlx::query(
            "SELECT family, grant_json, expires_at FROM oauth_refresh \
             WHERE revoked = 0 AND used = 0 AND expires_at >= ? ORDER BY expires_at",
        )
        .bind(now())
        .fetch_all(&self.pool)
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

    async fn purge_expired(&self) -> Result<u64, StoreError> {
        let mut removed = 0;
        for table in [
            "oauth_pending",
            "oauth_code",
            "oauth_refresh",
            "oauth_revoked_jti",
            "oauth_family_access",
        ] {
            let done = sqlx::query(sqlx::AssertSqlSafe(format!(
                "DELETE FROM {table} WHERE expires_at < ?"
            )))
            .bind(now())
            .execute(&self.pool)
            .await?;
            removed += done.rows_affected();
        }
        Ok(removed)
    }

    async fn revoked_jtis(&self) -> Result<Vec<String>, StoreError> {
        let rows = sqlx::query("SELECT jti FROM oauth_revoked_jti WHERE expires_at >= ?")
            .bind(now())
            .fetch_all(&self.pool)
            .await?;
        Ok(rows.iter().map(|r| r.get(0)).collect())
    }

    async fn put_user(&self, username: &str, password: &str, role: &str) -> Result<(), StoreError> {
        let hashed = super::passwords::hash(password)?;
        sqlx::query(
            "INSERT INTO oauth_user (username, password_hash, role, created_at) VALUES (?, ?, ?, ?) \
             ON CONFLICT (username) DO UPDATE SET password_hash = excluded.password_hash, role = excluded.role",
        )
        .bind(username)
        .bind(hashed)
        .bind(role)
        .bind(now())
        .execute(&self.pool)
        .await
        .map_err(|e| e.to_string())?;
        Ok(())
    }

    /// The user's role when the password is right.
    async fn check_user(
        &self,
        username: &str,
        password: &str,
    ) -> Result<Option<String>, StoreError> {
        let row = sqlx::query("SELECT password_hash, role FROM oauth_user WHERE username = ?")
            .bind(username)
            .fetch_optional(&self.pool)
            .await?;
        let stored = row.as_ref().map(|row| row.get::<&str, _>(0));
        Ok(super::passwords::verify(stored, password)
            .then(|| row.map(|row| row.get(1)))
            .flatten())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn client(id: &str, source: &str) -> Client {
        Client {
            client_id: id.into(),
            secret_hash: None,
            name: id.into(),
            redirect_uris: vec!["https://app.example/cb".into()],
            grant_types: vec!["authorization_code".into()],
            auth_method: "none".into(),
            scopes: Vec::new(),
            source: source.into(),
        }
    }

    #[tokio::test]
    async fn unused_self_registered_clients_are_collected_operator_clients_kept() {
        let dir = tempfile::tempdir().expect("temp dir");
        let store = SqliteStore::open(&dir.path().join("o.sqlite"))
            .await
            .expect("store");
        store.put_client(&client("dcr-a", "dcr")).await.unwrap();
        store.put_client(&client("op-b", "operator")).await.unwrap();
        let now = chrono::Utc::now().timestamp();
        assert_eq!(store.collect_unused_clients(now - 3600).await.unwrap(), 0);
        assert_eq!(store.collect_unused_clients(now + 10).await.unwrap(), 1);
        assert!(store.client("dcr-a").await.unwrap().is_none());
        assert!(store.client("op-b").await.unwrap().is_some());
    }

    #[tokio::test]
    async fn beyond_the_cap_the_oldest_never_used_registrations_go_first() {
        let dir = tempfile::tempdir().expect("temp dir");
        let store = SqliteStore::open(&dir.path().join("o.sqlite"))
            .await
            .expect("store");
        for id in ["dcr-1", "dcr-2", "dcr-3", "dcr-4"] {
            store.put_client(&client(id, "dcr")).await.unwrap();
        }
        store.put_client(&client("op-1", "operator")).await.unwrap();
        store.touch_client("dcr-1").await.unwrap();
        assert_eq!(store.cap_unused_clients(2).await.unwrap(), 1);
        for (id, kept) in [
            ("dcr-1", true),
            ("dcr-2", false),
            ("dcr-3", true),
            ("dcr-4", true),
            ("op-1", true),
        ] {
            assert_eq!(store.client(id).await.unwrap().is_some(), kept, "{id}");
        }
    }

    #[tokio::test]
    async fn revoking_a_family_revokes_the_access_tokens_it_issued() {
        let dir = tempfile::tempdir().expect("temp dir");
        let store = SqliteStore::open(&dir.path().join("o.sqlite"))
            .await
            .expect("store");
        let later = now() + 3600;
        store.record_access("fam-a", "jti-1", later).await.unwrap();
        store.record_access("fam-b", "jti-2", later).await.unwrap();
        store.revoke_family("fam-a").await.unwrap();
        assert_eq!(
            store.revoked_jtis().await.unwrap(),
            vec!["jti-1".to_string()]
        );
    }

    #[tokio::test]
    async fn live_families_are_those_that_can_still_refresh() {
        let dir = tempfile::tempdir().expect("temp dir");
        let store = SqliteStore::open(&dir.path().join("o.sqlite"))
            .await
            .expect("store");
        let grant = Grant {
            client_id: "c".into(),
            user: Some("u".into()),
            scope: "s".into(),
            resource: "r".into(),
            redirect_uri: String::new(),
            code_challenge: String::new(),
            role: None,
        };
        let hour = Duration::from_secs(3600);
        for (token, family) in [("t1", "rotated"), ("t2", "live"), ("t3", "revoked")] {
            store
                .put_refresh(token, family, &grant, hour)
                .await
                .unwrap();
        }
        store.mark_refresh_used("t1").await.unwrap();
        store.revoke_family("revoked").await.unwrap();
        let live = store.live_families(10).await.unwrap();
        assert_eq!(live.len(), 1);
        assert_eq!(
            (live[0].family.as_str(), live[0].grant.client_id.as_str()),
            ("live", "c")
        );
        assert!(store.live_families(0).await.unwrap().is_empty());
    }

    #[tokio::test]
    async fn passwords_are_checked_against_argon2_hashes() {
        let dir = tempfile::tempdir().expect("temp dir");
        let store = SqliteStore::open(&dir.path().join("o.sqlite"))
            .await
            .expect("store");
        store
            .put_user("alice", "a long password", "admin")
            .await
            .unwrap();
        assert_eq!(
            store
                .sign_in("alice", "a long password")
                .await
                .unwrap()
                .map(|s| s.role)
                .as_deref(),
            Some("admin")
        );
        assert_eq!(store.sign_in("alice", "wrong").await.unwrap(), None);
        assert_eq!(store.sign_in("bob", "a long password").await.unwrap(), None);
    }
}
