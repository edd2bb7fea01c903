//! Who is calling, told to an upstream a tool forwards to (`forward_identity`): a short-lived JWT
//! the platform signs for that upstream's audience, never the caller's own token (which the MCP
//! spec forbids passing through). Verifiable by anyone with the public keys this server publishes
//! at `/identity/jwks`.
//!
//! The key is Ed25519. With `[state] session_secret` (several instances) every instance derives
//! the same key from it, so one JWKS serves them all; without one (one instance) the key is new
//! at every start, and a verifier that meets an unknown `kid` fetches the keys again.

use std::sync::Arc;

use concierge_core::{Caller, IdentityAssertion};
use concierge_oauth::keys::SigningKey;
use serde::Serialize;
use sha2::{Digest, Sha256};

/// How long an assertion is good for: one call's forwarding, with room for clocks apart.
const LIFETIME_SECS: i64 = 60;

/// The JWT type of an assertion: not an access token, and says so.
pub const TYPE: &str = "concierge-id+jwt";

/// Signs assertions for this deployment.
pub struct IdentitySigner {
    key: SigningKey,
    issuer: String,
}

#[derive(Serialize)]
struct Claims<'a> {
    iss: &'a str,
    aud: &'a str,
    sub: &'a str,
    client_id: &'a str,
    #[serde(skip_serializing_if = "str::is_empty")]
    scope: String,
    iat: i64,
    nbf: i64,
    exp: i64,
    jti: String,
}

impl IdentitySigner {
    /// The deployment's signer: its key from `secret` when there is one, else a fresh one;
    /// `issuer` is what `iss` says.
    pub fn new(secret: Option<&str>, issuer: String) -> Arc<Self> {
        let key = match secret {
            Some(secret) => {
                let mut hasher = Sha256::new();
                hasher.update(b"concierge identity assertion key v1\0");
                hasher.update(secret.as_bytes());
                SigningKey::from_seed(hasher.finalize().into())
            }
            None => SigningKey::generate().1,
        };
        Arc::new(Self { key, issuer })
    }

    /// The public keys, as a JWK Set.
    pub fn jwks(&self) -> serde_json::Value {
        self.key.jwks()
    }

    /// What a tool asks for `caller`: a JWT per audience.
    pub fn for_caller(self: &Arc<Self>, caller: &Caller) -> IdentityAssertion {
        let signer = self.clone();
        let caller = caller.clone();
        IdentityAssertion::new(move |audience| signer.sign(&caller, audience))
    }

    fn sign(&self, caller: &Caller, audience: &str) -> String {
        let now = chrono::Utc::now().timestamp();
        self.key.sign_as(
            TYPE,
            &Claims {
                iss: &self.issuer,
                aud: audience,
                sub: caller.user.as_deref().unwrap_or(&caller.client),
                client_id: &caller.client,
                scope: caller.scopes.join(" "),
                iat: now,
                nbf: now,
                exp: now + LIFETIME_SECS,
                jti: uuid::Uuid::new_v4().to_string(),
            },
        )
    }
}
