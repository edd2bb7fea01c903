//! Everything the authorization server must remember across restarts: its signing key,
//! clients, pending authorizations, codes, refresh-token families, revoked access tokens and
//! local users. This module is the contract ([`OAuthStore`], [`UserDirectory`] and the values
//! they hold); [`SqlStore`] (`sql.rs`) keeps them in a SQLite file (the embedded default) or in
//! the PostgreSQL several instances share, with the same queries. The backend is one file
//! rather than one per kind of state because it is one `impl OAuthStore` (Rust keeps a trait's
//! impl in one block), and splitting the trait per kind would make every caller import several
//! traits for one store.

mod failures;
mod passwords;
mod sql;

use std::time::Duration;

use serde::{Deserialize, Serialize};

pub use sql::SqlStore;

/// A registered client.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Client {
    pub client_id: String,
    /// SHA-256 of the secret; `None` for public clients.
    pub secret_hash: Option<String>,
    pub name: String,
    pub redirect_uris: Vec<String>,
    pub grant_types: Vec<String>,
    /// `none`, `client_secret_post` or `client_secret_basic`.
    pub auth_method: String,
    /// For client_credentials: the scopes it may have.
    #[serde(default)]
    pub scopes: Vec<String>,
    /// `dcr` (self-registered, garbage-collected when unused) or `operator`.
    pub source: String,
}

/// What a code or refresh token stands for.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Grant {
    pub client_id: String,
    pub user: Option<String>,
    pub scope: String,
    pub resource: String,
    #[serde(default)]
    pub redirect_uri: String,
    #[serde(default)]
    pub code_challenge: String,
    /// The user's role at sign-in (the user directory's word), carried into access tokens.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub role: Option<String>,
}

/// A store error, in words (never a DSN or a secret).
#[derive(Debug, Clone, thiserror::Error)]
#[error("{0}")]
pub struct StoreError(pub String);

impl From<String> for StoreError {
    fn from(message: String) -> Self {
        Self(message)
    }
}

impl From<sqlx::Error> for StoreError {
    fn from(error: sqlx::Error) -> Self {
        Self(error.to_string())
    }
}

impl From<concierge_core::StoreUnavailable> for StoreError {
    fn from(error: concierge_core::StoreUnavailable) -> Self {
        Self(error.0)
    }
}

impl From<concierge_core::sqlite::SqliteError> for StoreError {
    fn from(error: concierge_core::sqlite::SqliteError) -> Self {
        Self(error.to_string())
    }
}

/// The authorization server's state, kept by [`SqlStore`] on either engine.
#[async_trait::async_trait]
pub trait OAuthStore: Send + Sync {
    /// The signing key's seed, created on first use.
    async fn signing_seed(&self) -> Result<[u8; 32], StoreError>;
    async fn put_client(&self, client: &Client) -> Result<(), StoreError>;
    async fn client(&self, client_id: &str) -> Result<Option<Client>, StoreError>;
    async fn touch_client(&self, client_id: &str) -> Result<(), StoreError>;
    async fn clients(&self) -> Result<Vec<(Client, i64)>, StoreError>;
    /// Removes a client and revokes its refresh tokens; false when unknown.
    async fn delete_client(&self, client_id: &str) -> Result<bool, StoreError>;
    /// Self-registered clients not used since `cutoff` (Unix seconds) are removed; how many.
    async fn collect_unused_clients(&self, cutoff: i64) -> Result<u64, StoreError>;
    /// Keeps the `keep` newest self-registered clients that never obtained a token and removes
    /// the older ones; how many went.
    async fn cap_unused_clients(&self, keep: u64) -> Result<u64, StoreError>;
    async fn put_pending(&self, csrf: &str, request: &str, ttl: Duration)
    -> Result<(), StoreError>;
    /// The pending request for a CSRF token, consumed.
    async fn take_pending(&self, csrf: &str) -> Result<Option<String>, StoreError>;
    /// Keeps the `keep` newest pending authorizations and removes the older ones.
    async fn trim_pending(&self, keep: u64) -> Result<u64, StoreError>;
    async fn put_code(&self, code: &str, grant: &Grant, ttl: Duration) -> Result<(), StoreError>;
    /// Redeems a code once: `None` when unknown, expired or already used.
    async fn redeem_code(&self, code: &str) -> Result<Option<Grant>, StoreError>;
    /// Whether `code` was issued and has been redeemed already.
    async fn code_was_redeemed(&self, code: &str) -> Result<bool, StoreError>;
    async fn put_refresh(
        &self,
        token: &str,
        family: &str,
        grant: &Grant,
        ttl: Duration,
    ) -> Result<(), StoreError>;
    async fn refresh(&self, token: &str) -> Result<Option<RefreshState>, StoreError>;
    /// Marks a refresh token rotated; false when another request rotated it first.
    async fn mark_refresh_used(&self, token: &str) -> Result<bool, StoreError>;
    /// Revokes a family's refresh tokens and the access tokens recorded with [`Self::record_access`].
    async fn revoke_family(&self, family: &str) -> Result<(), StoreError>;
    /// The families with a refresh token that is unused, unrevoked and unexpired, the
    /// longest-lived first, at most `limit` (the ops console lists them).
    async fn live_families(&self, limit: u32) -> Result<Vec<LiveFamily>, StoreError>;
    /// Remembers that access token `jti` (valid until `expires_at`) came from `family`, so that
    /// revoking the family revokes it too.
    async fn record_access(
        &self,
        family: &str,
        jti: &str,
        expires_at: i64,
    ) -> Result<(), StoreError>;
    async fn revoke_jti(&self, jti: &str, expires_at: i64) -> Result<(), StoreError>;
    async fn revoked_jtis(&self) -> Result<Vec<String>, StoreError>;
    /// Deletes expired pending authorizations, codes, refresh tokens and revocations; how many.
    async fn purge_expired(&self) -> Result<u64, StoreError>;
    /// Live refresh-token families: (family, grant, expires_at).
    async fn active_grants(&self) -> Result<Vec<(String, Grant, i64)>, StoreError>;
    async fn put_user(&self, username: &str, password: &str, role: &str) -> Result<(), StoreError>;
    /// The user's role when the password is right.
    async fn check_user(
        &self,
        username: &str,
        password: &str,
    ) -> Result<Option<String>, StoreError>;
}

/// Who may sign in on the consent page. The local store (argon2 hashes, roles) is the default;
/// a deployment can check people against its own backend (the Mappy API, say) instead.
#[async_trait::async_trait]
pub trait UserDirectory: Send + Sync {
    /// Who the credentials belong to; `None` when they are wrong.
    async fn sign_in(&self, username: &str, password: &str)
    -> Result<Option<SignedIn>, StoreError>;
}

/// A person the user directory recognised.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SignedIn {
    /// The token's `sub`: the user name for local users, the backend's user id otherwise.
    pub subject: String,
    pub role: String,
}

/// A refresh-token family that can still be refreshed: what it grants, and until when.
#[derive(Debug, Clone)]
pub struct LiveFamily {
    pub family: String,
    pub grant: Grant,
    /// Unix seconds: the current refresh token's end.
    pub expires_at: i64,
}

/// A refresh token as the store knows it.
#[derive(Debug, Clone)]
pub struct RefreshState {
    pub family: String,
    pub grant: Grant,
    pub used: bool,
    /// When it was rotated (Unix seconds), where the store knows.
    pub used_at: Option<i64>,
    pub revoked: bool,
    pub expired: bool,
}
