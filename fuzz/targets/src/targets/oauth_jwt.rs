//! Access tokens (JWTs) as a resource server receives them. Only what this server signed
//! verifies: a mutated token that still verifies must carry exactly claims that were signed.

use std::sync::OnceLock;

use crate::jwt::{AUDIENCE, ISSUER, key, signed_claims};
use concierge_oauth::keys::{AccessClaims, SigningKey};

fn fixed() -> &'static (SigningKey, Vec<AccessClaims>) {
    static FIXED: OnceLock<(SigningKey, Vec<AccessClaims>)> = OnceLock::new();
    FIXED.get_or_init(|| (key(), signed_claims()))
}

pub fn run(data: &[u8]) {
    let Ok(token) = std::str::from_utf8(data) else {
        return;
    };
    let (key, signed) = fixed();
    if let Ok(claims) = key.verify(token, ISSUER, &[AUDIENCE.to_string()]) {
        assert!(
            signed.contains(&claims),
            "a token verified that this key never signed: {claims:?}"
        );
    }
}
