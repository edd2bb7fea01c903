//! The access tokens the JWT target's seeds hold: signed by a fixed key, so that the one thing
//! that may verify is one of these claim sets (`scripts/fuzz-seeds.py` signs the seed tokens with the same key).

use concierge_oauth::keys::{AccessClaims, SigningKey};

pub const ISSUER: &str = "https://mcp.example";
pub const AUDIENCE: &str = "https://mcp.example/mappy/mcp";

pub fn key() -> SigningKey {
    SigningKey::from_seed([7; 32])
}

/// Two sets: a user's with a role, and a client's own; both valid until 2100.
pub fn signed_claims() -> Vec<AccessClaims> {
    let claims = |sub: &str, scope: &str, role: Option<&str>| AccessClaims {
        iss: ISSUER.into(),
        aud: AUDIENCE.into(),
        sub: sub.into(),
        client_id: "fuzz-client".into(),
        scope: scope.into(),
        jti: format!("jti-{sub}"),
        role: role.map(Into::into),
        iat: 1_764_000_000,
        nbf: 1_764_000_000,
        exp: 4_102_444_800,
    };
    vec![
        claims("alice", "mappy:read mappy:write", Some("owner")),
        claims("fuzz-client", "mappy:read", None),
    ]
}
