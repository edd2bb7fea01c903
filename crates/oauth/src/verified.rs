//! Access tokens this server has already checked. An Ed25519 signature check costs tens of
//! microseconds — more than the rest of a tool call — and a client sends the same token with
//! every call for its whole lifetime, so the check is made once per token and resource.
//!
//! Only tokens that passed the whole check (signature, issuer, audience) are kept, and only ours
//! can: a stranger's junk never gets in. Lifetime is checked again on every hit (with the same
//! leeway as the full check), and the caller checks revocation on every call, so a revoked
//! token is refused as soon as it was before. Bounded: when full, expired entries go, and if
//! that is not enough, all of them (the next calls pay one check each).

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use serde_json::{Map, Value};

use crate::keys::{AccessClaims, LEEWAY_SECS};

/// Tokens live an hour by default; a busy deployment has a few hundred clients at once.
const CAPACITY: usize = 4096;

pub struct VerifiedTokens {
    tokens: Mutex<HashMap<String, Verified>>,
    capacity: usize,
}

struct Verified {
    resource: String,
    claims: Arc<AccessClaims>,
    /// The same claims by name, as tools may read them (`Caller::claims`): made once per token.
    by_name: Arc<Map<String, Value>>,
}

/// A checked token's claims, typed and by name.
pub type Checked = (Arc<AccessClaims>, Arc<Map<String, Value>>);

impl Default for VerifiedTokens {
    fn default() -> Self {
        Self::with_capacity(CAPACITY)
    }
}

impl VerifiedTokens {
    fn with_capacity(capacity: usize) -> Self {
        Self {
            tokens: Mutex::default(),
            capacity,
        }
    }

    /// The claims of `token` if it was checked for `resource` and is within its lifetime at
    /// `now` (Unix seconds).
    pub fn get(&self, token: &str, resource: &str, now: i64) -> Option<Checked> {
        let tokens = self.tokens.lock().unwrap_or_else(|p| p.into_inner());
        let verified = tokens.get(token)?;
        (verified.resource == resource && live(&verified.claims, now))
            .then(|| (verified.claims.clone(), verified.by_name.clone()))
    }

    /// Keeps `claims`, which the full check of `token` for `resource` gave; answers them as
    /// [`get`](Self::get) will.
    pub fn insert(
        &self,
        token: &str,
        resource: &str,
        claims: Arc<AccessClaims>,
        now: i64,
    ) -> Checked {
        let by_name = Arc::new(claims.as_map());
        let mut tokens = self.tokens.lock().unwrap_or_else(|p| p.into_inner());
        if tokens.len() >= self.capacity && !tokens.contains_key(token) {
            tokens.retain(|_, verified| live(&verified.claims, now));
            if tokens.len() >= self.capacity {
                tokens.clear();
            }
        }
        tokens.insert(
            token.to_string(),
            Verified {
                resource: resource.to_string(),
                claims: claims.clone(),
                by_name: by_name.clone(),
            },
        );
        (claims, by_name)
    }
}

/// As the full check judges lifetime: not before `nbf`, not after `exp`, each with the leeway.
fn live(claims: &AccessClaims, now: i64) -> bool {
    claims.nbf <= now + LEEWAY_SECS && now <= claims.exp + LEEWAY_SECS
}

#[cfg(test)]
mod tests {
    use super::*;

    fn claims(nbf: i64, exp: i64, jti: &str) -> Arc<AccessClaims> {
        Arc::new(AccessClaims {
            iss: "https://auth.example".into(),
            aud: "https://mcp.example/mcp".into(),
            sub: "alice".into(),
            client_id: "c1".into(),
            scope: "a".into(),
            jti: jti.into(),
            role: None,
            iat: nbf,
            nbf,
            exp,
        })
    }

    #[test]
    fn a_token_is_known_only_for_its_resource_and_within_its_lifetime() {
        let verified = VerifiedTokens::default();
        let _ = verified.insert(
            "t",
            "https://mcp.example/mcp",
            claims(1000, 2000, "j"),
            1000,
        );
        let (_, by_name) = verified
            .get("t", "https://mcp.example/mcp", 1500)
            .expect("known");
        // Tools read the claims by name (`bind = "claim.sub"`).
        assert_eq!(
            (by_name["sub"].as_str(), by_name["jti"].as_str()),
            (Some("alice"), Some("j"))
        );
        assert!(
            verified
                .get("t", "https://mcp.example/other", 1500)
                .is_none()
        );
        assert!(verified.get("u", "https://mcp.example/mcp", 1500).is_none());
        assert!(
            verified
                .get("t", "https://mcp.example/mcp", 2000 + LEEWAY_SECS)
                .is_some()
        );
        assert!(
            verified
                .get("t", "https://mcp.example/mcp", 2001 + LEEWAY_SECS)
                .is_none()
        );
        assert!(
            verified
                .get("t", "https://mcp.example/mcp", 999 - LEEWAY_SECS)
                .is_none()
        );
    }

    #[test]
    fn a_full_cache_drops_expired_tokens_first_and_never_grows_past_its_bound() {
        let verified = VerifiedTokens::with_capacity(2);
        verified.insert("old", "r", claims(0, 10, "1"), 0);
        verified.insert("live", "r", claims(0, 5000, "2"), 0);
        verified.insert("new", "r", claims(0, 5000, "3"), 1000);
        assert!(verified.get("old", "r", 1000).is_none());
        assert!(verified.get("live", "r", 1000).is_some());
        assert!(verified.get("new", "r", 1000).is_some());
        verified.insert("newer", "r", claims(0, 5000, "4"), 1000);
        let held = verified.tokens.lock().unwrap().len();
        assert!(held <= 2, "{held} held");
        assert!(verified.get("newer", "r", 1000).is_some());
    }
}
