//! OAuth 2.1 for concierge's MCP endpoints.
//!
//! [`AuthServer`] is a built-in authorization server on axum (`../shared/notes/oauth.md` is the
//! checklist it follows): RFC 8414 metadata, `/authorize` with PKCE S256 only and a sign-in and
//! consent page, `/token` (authorization code, refresh with rotation and reuse detection for
//! public clients, client credentials for confidential machine clients), open dynamic client
//! registration (RFC 7591; bounded, with allow-listed redirect URIs, see [`redirects`] and
//! [`limits`]), revocation (RFC 7009), and Ed25519-signed JWT access tokens bound to one
//! resource (RFC 8707). Everything a stranger can make it store or try is bounded per peer. [`AuthServer::verify`] is the resource server's side: what an MCP
//! endpoint calls for every request.

pub mod admin;
pub mod cimd;
pub mod directory;
mod endpoints;
mod error;
pub mod external;
pub mod keys;
pub mod limits;
mod pages;
pub mod redirects;
pub mod store;
pub mod util;
mod verified;

use std::collections::{BTreeMap, HashSet};
use std::path::PathBuf;
use std::sync::{Arc, RwLock};
use std::time::{Duration, Instant};

use concierge_core::{AuditEvent, Outcome};
use serde::Deserialize;

pub use endpoints::router;
pub use error::OAuthError;
use keys::SigningKey;
use store::{OAuthStore, SqlStore};

/// `[oauth]`: the built-in authorization server.
#[derive(Debug, Clone, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct OAuthConfig {
    /// The public base URL: the built-in server's issuer, and the base of every OAuth endpoint's
    /// resource URL.
    pub issuer: String,
    /// Clients, codes, refresh tokens, keys and users (SQLite); the built-in server's.
    #[serde(default)]
    pub database: Option<PathBuf>,
    /// Accept an external identity provider's tokens instead of running the built-in server.
    #[serde(default)]
    pub external: Option<external::ExternalConfig>,
    /// Scopes the server grants (`scopes_supported`); requests for others are narrowed away.
    #[serde(default)]
    pub scopes: Vec<String>,
    /// How long an access token is valid.
    #[schemars(with = "concierge_core::written::Duration")]
    #[serde(default = "one_hour", with = "humantime_serde")]
    pub access_token_ttl: Duration,
    /// How long a refresh token is valid.
    #[schemars(with = "concierge_core::written::Duration")]
    #[serde(default = "thirty_days", with = "humantime_serde")]
    pub refresh_token_ttl: Duration,
    /// How long a public client's rotated refresh token may be presented again (the retry of a
    /// refresh whose answer was lost) before a second use counts as theft and revokes the
    /// family. `0s` for reuse detection without a window.
    #[schemars(with = "concierge_core::written::Duration")]
    #[serde(default = "rotation_grace", with = "humantime_serde")]
    pub refresh_rotation_grace: Duration,
    /// Self-registered clients unused this long are removed.
    #[schemars(with = "concierge_core::written::Duration")]
    #[serde(default = "thirty_days", with = "humantime_serde")]
    pub unused_client_ttl: Duration,
    /// Clients may name themselves by an https URL to their metadata document (CIMD).
    #[serde(default = "yes")]
    pub client_id_metadata_documents: bool,
    /// TESTS ONLY: let metadata documents live on http loopback URLs (the SSRF guard refuses
    /// loopback otherwise).
    #[serde(default)]
    pub cimd_test_allow_loopback: bool,
    /// The audit sink (a name from `[audit]`) for issued, refreshed and revoked tokens,
    /// authorizations and registrations.
    #[serde(default)]
    pub audit: Option<String>,
    /// Check sign-ins against the deployment's own user API instead of the local users.
    #[serde(default)]
    pub users: Option<directory::HttpDirectoryConfig>,
    /// One sentence shown above the sign-in form, saying which account to use ("Sign in with
    /// your Mappy account (e-mail address and password)."): the page is concierge's, but the
    /// accounts are the deployment's, and a person arriving from an AI client cannot guess which.
    #[serde(default)]
    pub sign_in_hint: Option<String>,
    /// The label of the form's first field (default "User name"): a deployment whose accounts
    /// are e-mail addresses says "E-mail address". The field stays `type=text`,
    /// `autocomplete=username`, whatever the label says, so password managers still fill it and
    /// user names that are not addresses are not refused by the browser.
    #[serde(default)]
    pub login_label: Option<String>,
    /// Scope name → what a person reads on the consent page (`"mappy:review:write" = "Reply to
    /// your reviews"`). The raw name stays visible beside the title, so an operator can still
    /// tell what was granted; a scope without a title is shown by its name. Every key must be
    /// one of `scopes`.
    #[serde(default)]
    pub scope_titles: BTreeMap<String, String>,
    /// `[oauth.redirects]`: the redirect URIs self-registered clients may use (the known AI
    /// clients' and loopback ones unless said otherwise).
    #[serde(default)]
    pub redirects: redirects::RedirectsConfig,
    /// `[oauth.limits]`: what one peer may register, open and try (registrations, sign-in pages,
    /// passwords) and how many unused registrations are kept.
    #[serde(default)]
    pub limits: limits::LimitsConfig,
}

fn yes() -> bool {
    true
}
fn one_hour() -> Duration {
    Duration::from_secs(3600)
}
/// Auth0 and Okta offer the same window ("reuse interval", "grace period"): 30 s covers a retry
/// after a dropped connection or a restart, and leaves a thief that half minute after each
/// legitimate refresh.
fn rotation_grace() -> Duration {
    Duration::from_secs(30)
}
fn thirty_days() -> Duration {
    Duration::from_secs(30 * 24 * 3600)
}

/// Who a valid access token speaks for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TokenOwner {
    pub client_id: String,
    /// The signed-in user; `None` for client-credentials tokens.
    pub user: Option<String>,
    pub scopes: Vec<String>,
    /// The token's id, for per-token rate limits.
    pub token_id: String,
    /// The user's role, as the user directory gave it at sign-in.
    pub role: Option<String>,
    /// Every claim of the token, as its issuer signed (or introspection answered) them.
    pub claims: Arc<serde_json::Map<String, serde_json::Value>>,
}

pub type AuditHook = Arc<dyn Fn(AuditEvent) + Send + Sync>;

/// Whose tokens an OAuth endpoint accepts.
#[derive(Clone)]
pub enum Verifier {
    BuiltIn(Arc<AuthServer>),
    External(Arc<external::ExternalIssuer>),
}

impl Verifier {
    pub async fn verify(&self, token: &str, resource: &str) -> Result<TokenOwner, String> {
        match self {
            Verifier::BuiltIn(server) => server.verify(token, resource).await,
            Verifier::External(issuer) => issuer.verify(token, resource).await,
        }
    }

    /// The authorization server clients are sent to (RFC 9728 `authorization_servers`).
    pub fn authorization_server(&self) -> &str {
        match self {
            Verifier::BuiltIn(server) => &server.issuer,
            Verifier::External(issuer) => issuer.issuer(),
        }
    }
}

pub struct AuthServer {
    pub issuer: String,
    pub scopes: Vec<String>,
    /// The resource URLs of the endpoints this server issues tokens for.
    pub resources: Vec<String>,
    access_ttl: Duration,
    refresh_ttl: Duration,
    rotation_grace: Duration,
    unused_client_ttl: Duration,
    pub store: Arc<dyn OAuthStore>,
    /// Who may sign in: the local users by default; a backend of the deployment's own later.
    users: Arc<dyn store::UserDirectory>,
    key: Arc<SigningKey>,
    /// Shared with the server a reload makes from this one ([`AuthServer::follow`]).
    revoked: Arc<RwLock<(HashSet<String>, Instant)>>,
    /// Tokens whose signature already checked out, so a client's next calls skip that check.
    verified: verified::VerifiedTokens,
    audit: AuditHook,
    /// `None` when metadata-document clients are turned off.
    cimd: Option<Arc<cimd::Resolver>>,
    /// What the sign-in and consent page says (hint, field label, scope titles).
    wording: pages::Wording,
    /// Which redirect URIs self-registered clients may use.
    redirects: redirects::RedirectsConfig,
    /// Registrations per peer address.
    registrations: Arc<limits::PeerBuckets>,
    /// Sign-in pages (pending authorizations) per peer address.
    authorizations: Arc<limits::PeerBuckets>,
    max_unused_clients: u64,
    /// Failed sign-ins per peer address and per account: growing waits, never a long lock.
    sign_ins: Arc<limits::SignInThrottle>,
}

/// What the sign-in and consent page says; every titled scope must be one the server grants.
fn wording(config: &OAuthConfig) -> Result<pages::Wording, String> {
    if let Some(unknown) = config
        .scope_titles
        .keys()
        .find(|scope| !config.scopes.contains(scope))
    {
        return Err(format!(
            "oauth.scope_titles: `{unknown}` is not one of oauth.scopes"
        ));
    }
    Ok(pages::Wording::new(
        config.sign_in_hint.as_deref(),
        config.login_label.as_deref(),
        config.scope_titles.clone(),
    ))
}

/// What an authorization server keeps across a reload ([`AuthServer::follow`]): its issuer and
/// state, and the per-peer counts.
struct Kept {
    issuer: String,
    store: Arc<dyn OAuthStore>,
    users: Arc<dyn store::UserDirectory>,
    key: Arc<SigningKey>,
    revoked: Arc<RwLock<(HashSet<String>, Instant)>>,
    cimd: Option<Arc<cimd::Resolver>>,
    registrations: Arc<limits::PeerBuckets>,
    authorizations: Arc<limits::PeerBuckets>,
    max_unused_clients: u64,
    sign_ins: Arc<limits::SignInThrottle>,
}

const REVOCATIONS_RELOAD: Duration = Duration::from_secs(10);

impl AuthServer {
    /// The server over its state: the deployment's shared PostgreSQL when there is one
    /// (`shared`, several instances), `[oauth] database` (SQLite) otherwise. The signing key and
    /// the revocations are read here, so the state must answer at start.
    pub async fn open(
        config: &OAuthConfig,
        resources: Vec<String>,
        audit: AuditHook,
        shared: Option<Arc<concierge_core::postgres::SharedDatabase>>,
    ) -> Result<Arc<Self>, String> {
        let issuer = config.issuer.trim_end_matches('/').to_string();
        url::Url::parse(&issuer).map_err(|e| format!("oauth.issuer: {e}"))?;
        // The wording's scopes are checked before any state is opened, as they always were.
        wording(config)?;
        let mut sign_ins = limits::SignInThrottle::new(&config.limits);
        let (store, local_users, where_): (Arc<dyn OAuthStore>, Arc<dyn store::UserDirectory>, _) =
            match shared {
                Some(database) => {
                    let pg = Arc::new(SqlStore::shared(database));
                    // Guesses spread over the instances count as guesses at one.
                    sign_ins = sign_ins.shared(pg.clone());
                    (pg.clone(), pg, "state.database")
                }
                None => {
                    let database = config.database.as_ref().ok_or(
                        "oauth.database: the built-in authorization server keeps its state there",
                    )?;
                    let sqlite = Arc::new(
                        SqlStore::open_file(database)
                            .await
                            .map_err(|e| format!("oauth.database: {e}"))?,
                    );
                    (sqlite.clone(), sqlite, "oauth.database")
                }
            };
        let users: Arc<dyn store::UserDirectory> = match &config.users {
            Some(remote) => Arc::new(directory::HttpDirectory::new(remote)?),
            None => local_users,
        };
        let seed = store
            .signing_seed()
            .await
            .map_err(|e| format!("{where_}: the authorization server's signing key: {e}"))?;
        let revoked = store
            .revoked_jtis()
            .await
            .map_err(|e| format!("{where_}: {e}"))?;
        Self::assemble(
            Kept {
                issuer,
                store,
                users,
                key: Arc::new(SigningKey::from_seed(seed)),
                revoked: Arc::new(RwLock::new((revoked.into_iter().collect(), Instant::now()))),
                cimd: config
                    .client_id_metadata_documents
                    .then(|| Arc::new(cimd::Resolver::new(config.cimd_test_allow_loopback))),
                registrations: Arc::new(limits::PeerBuckets::new(
                    config.limits.registrations_per_minute,
                )),
                authorizations: Arc::new(limits::PeerBuckets::new(
                    config.limits.authorizations_per_minute,
                )),
                max_unused_clients: config.limits.max_unused_clients,
                sign_ins: Arc::new(sign_ins),
            },
            config,
            resources,
            audit,
        )
    }

    /// The server a reload makes: `config`'s scopes, lifetimes, wording, redirect rules and
    /// audit, and `resources` (endpoints come and go), over this server's state — the same
    /// store, signing key, revocations, user directory and per-peer counts, so every token
    /// issued stays valid and no throttle starts over. What needs new state (the issuer, the
    /// database, an external issuer, the user directory, the per-peer limits, metadata-document
    /// clients) is the caller's to keep as it was.
    pub fn follow(
        &self,
        config: &OAuthConfig,
        resources: Vec<String>,
        audit: AuditHook,
    ) -> Result<Arc<Self>, String> {
        let kept = Kept {
            issuer: self.issuer.clone(),
            store: self.store.clone(),
            users: self.users.clone(),
            key: self.key.clone(),
            revoked: self.revoked.clone(),
            cimd: self.cimd.clone(),
            registrations: self.registrations.clone(),
            authorizations: self.authorizations.clone(),
            max_unused_clients: self.max_unused_clients,
            sign_ins: self.sign_ins.clone(),
        };
        Self::assemble(kept, config, resources, audit)
    }

    /// A server of `kept` state with `config`'s settings: the one place that reads what a reload
    /// may change, for the first server and every one after it.
    fn assemble(
        kept: Kept,
        config: &OAuthConfig,
        resources: Vec<String>,
        audit: AuditHook,
    ) -> Result<Arc<Self>, String> {
        config.redirects.check()?;
        Ok(Arc::new(Self {
            issuer: kept.issuer,
            scopes: config.scopes.clone(),
            resources,
            access_ttl: config.access_token_ttl,
            refresh_ttl: config.refresh_token_ttl,
            rotation_grace: config.refresh_rotation_grace,
            unused_client_ttl: config.unused_client_ttl,
            store: kept.store,
            users: kept.users,
            key: kept.key,
            revoked: kept.revoked,
            verified: verified::VerifiedTokens::default(),
            audit,
            cimd: kept.cimd,
            wording: wording(config)?,
            redirects: config.redirects.clone(),
            registrations: kept.registrations,
            authorizations: kept.authorizations,
            max_unused_clients: kept.max_unused_clients,
            sign_ins: kept.sign_ins,
        }))
    }

    /// A client by its id: registered (DCR, operator), or — for an https URL — its metadata
    /// document. `Err` says why a document client cannot be used; `Ok(None)`: unknown.
    pub async fn client(&self, client_id: &str) -> Result<Option<store::Client>, String> {
        match &self.cimd {
            Some(resolver) if cimd::is_document_url(client_id) => {
                resolver.client(client_id).await.map(Some)
            }
            _ => self.store.client(client_id).await.map_err(|e| {
                tracing::error!(error = %e, "oauth: client lookup failed");
                "the client store is unavailable".to_string()
            }),
        }
    }

    pub fn supports_metadata_documents(&self) -> bool {
        self.cimd.is_some()
    }

    /// The resource a request names, as we know it (a trailing slash and the case of scheme and
    /// host do not matter), or `None` when it is not ours.
    pub fn resource(&self, requested: &str) -> Option<&str> {
        let canonical = |s: &str| s.trim_end_matches('/').to_ascii_lowercase();
        let wanted = canonical(requested);
        self.resources
            .iter()
            .find(|r| canonical(r) == wanted)
            .map(String::as_str)
    }

    /// Checks an access token for `resource`: signature, issuer, lifetime, audience, revocation.
    /// The signature (with issuer and audience) is checked once per token and resource; lifetime
    /// and revocation on every call.
    pub async fn verify(&self, token: &str, resource: &str) -> Result<TokenOwner, String> {
        let now = chrono::Utc::now().timestamp();
        let (claims, by_name) = match self.verified.get(token, resource, now) {
            Some(checked) => checked,
            None => {
                let audiences = vec![
                    resource.to_string(),
                    format!("{}/", resource.trim_end_matches('/')),
                ];
                let claims = Arc::new(self.key.verify(token, &self.issuer, &audiences)?);
                self.verified.insert(token, resource, claims, now)
            }
        };
        if self.is_revoked(&claims.jti).await {
            return Err("revoked".into());
        }
        Ok(TokenOwner {
            user: (claims.sub != claims.client_id).then(|| claims.sub.clone()),
            scopes: claims.scopes(),
            client_id: claims.client_id.clone(),
            token_id: claims.jti.clone(),
            role: claims.role.clone(),
            claims: by_name,
        })
    }

    async fn is_revoked(&self, jti: &str) -> bool {
        let stale = {
            let revoked = self.revoked.read().unwrap_or_else(|p| p.into_inner());
            if revoked.0.contains(jti) {
                return true;
            }
            revoked.1.elapsed() >= REVOCATIONS_RELOAD
        };
        if !stale {
            return false;
        }
        // One caller reloads; the rest go on with the set they have. A store that does not
        // answer (a shared database down) is asked again a reload period later, not on every
        // call: the revocations known so far keep holding meanwhile.
        {
            let mut revoked = self.revoked.write().unwrap_or_else(|p| p.into_inner());
            if revoked.1.elapsed() < REVOCATIONS_RELOAD {
                return revoked.0.contains(jti);
            }
            revoked.1 = Instant::now();
        }
        match self.store.revoked_jtis().await {
            Ok(fresh) => {
                let mut revoked = self.revoked.write().unwrap_or_else(|p| p.into_inner());
                revoked.0 = fresh.into_iter().collect();
                revoked.0.contains(jti)
            }
            Err(error) => {
                tracing::warn!(%error, "oauth: revocations not reloaded; the known ones still hold");
                false
            }
        }
    }

    pub fn jwks(&self) -> serde_json::Value {
        self.key.jwks()
    }

    fn audit(
        &self,
        endpoint: &str,
        event: &str,
        outcome: Outcome,
        client: Option<&str>,
        user: Option<&str>,
    ) {
        self.audit_with(endpoint, event, outcome, client, user, None);
    }

    /// As [`Self::audit`], with what else the event needs said (`notes`).
    fn audit_with(
        &self,
        endpoint: &str,
        event: &str,
        outcome: Outcome,
        client: Option<&str>,
        user: Option<&str>,
        notes: Option<serde_json::Map<String, serde_json::Value>>,
    ) {
        (self.audit)(AuditEvent {
            client: client.map(str::to_string),
            user: user.map(str::to_string),
            outcome,
            code: Some(event.to_string()),
            notes,
            ..AuditEvent::now(endpoint, uuid::Uuid::new_v4().simple().to_string())
        });
    }

    /// Revokes a refresh-token family and the access tokens issued from it, and makes this
    /// instance refuse them at once (others read the list within `REVOCATIONS_RELOAD`).
    pub async fn revoke_family(&self, family: &str) {
        if let Err(error) = self.store.revoke_family(family).await {
            tracing::error!(%error, "oauth: revoking a token family failed");
        }
        if let Ok(fresh) = self.store.revoked_jtis().await {
            let mut revoked = self.revoked.write().unwrap_or_else(|p| p.into_inner());
            *revoked = (fresh.into_iter().collect(), Instant::now());
        }
    }

    /// Removes self-registered clients nobody used for `unused_client_ttl`.
    pub async fn collect_unused_clients(&self) -> Result<u64, String> {
        let cutoff = chrono::Utc::now().timestamp() - self.unused_client_ttl.as_secs() as i64;
        self.store
            .collect_unused_clients(cutoff)
            .await
            .map_err(|e| e.to_string())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_title_for_an_unknown_scope_is_refused() {
        let dir = tempfile::tempdir().expect("temp dir");
        let config: OAuthConfig = serde_json::from_value(serde_json::json!({
            "issuer": "https://mcp.example",
            "database": dir.path().join("o.sqlite"),
            "scopes": ["mappy:review:read"],
            "scope_titles": {"mappy:review:raed": "Read your reviews"},
        }))
        .expect("config");
        let refused = AuthServer::open(&config, Vec::new(), Arc::new(|_| {}), None)
            .await
            .err()
            .expect("refused");
        assert!(
            refused.contains("oauth.scope_titles: `mappy:review:raed`"),
            "{refused}"
        );
    }
}
