//! The authorization server's signing key (Ed25519, persisted) and the access tokens it signs:
//! JWTs (RFC 9068, `typ: at+jwt`) with `iss`, `aud`, `sub`, `client_id`, `scope`, `jti`.

use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use jsonwebtoken::{Algorithm, DecodingKey, EncodingKey, Header, Validation};
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

/// How far a token's `nbf` and `exp` may be off the clock (seconds): clocks of a cluster drift.
pub const LEEWAY_SECS: i64 = 30;

/// PKCS#8 v1 wrapping of a raw Ed25519 seed (RFC 8410): a fixed prefix, then the 32 bytes.
const PKCS8_ED25519_PREFIX: [u8; 16] = [
    0x30, 0x2e, 0x02, 0x01, 0x00, 0x30, 0x05, 0x06, 0x03, 0x2b, 0x65, 0x70, 0x04, 0x22, 0x04, 0x20,
];

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct AccessClaims {
    pub iss: String,
    pub aud: String,
    pub sub: String,
    pub client_id: String,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub scope: String,
    pub jti: String,
    /// The user's role from the user directory (not a standard claim; ours).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub role: Option<String>,
    pub iat: i64,
    pub nbf: i64,
    pub exp: i64,
}

impl AccessClaims {
    pub fn scopes(&self) -> Vec<String> {
        self.scope.split_whitespace().map(str::to_string).collect()
    }

    /// The claims as the token carries them, by name.
    pub fn as_map(&self) -> serde_json::Map<String, serde_json::Value> {
        match serde_json::to_value(self) {
            Ok(serde_json::Value::Object(claims)) => claims,
            _ => serde_json::Map::new(),
        }
    }
}

pub struct SigningKey {
    kid: String,
    encoding: EncodingKey,
    decoding: DecodingKey,
    /// The public key, base64url (the JWK's `x`).
    x: String,
}

impl SigningKey {
    /// A key from its 32-byte seed.
    pub fn from_seed(seed: [u8; 32]) -> Self {
        let public = ed25519_dalek::SigningKey::from_bytes(&seed)
            .verifying_key()
            .to_bytes();
        let mut der = PKCS8_ED25519_PREFIX.to_vec();
        der.extend_from_slice(&seed);
        let x = URL_SAFE_NO_PAD.encode(public);
        Self {
            kid: crate::util::hash(&x)[..16].to_string(),
            encoding: EncodingKey::from_ed_der(&der),
            decoding: DecodingKey::from_ed_der(&public),
            x,
        }
    }

    pub fn generate() -> ([u8; 32], Self) {
        let mut seed = [0u8; 32];
        getrandom::fill(&mut seed).expect("the OS provides randomness");
        (seed, Self::from_seed(seed))
    }

    /// The JWK Set published at `jwks_uri`.
    pub fn jwks(&self) -> Value {
        json!({"keys": [{"kty": "OKP", "crv": "Ed25519", "alg": "EdDSA", "use": "sig", "kid": self.kid, "x": self.x}]})
    }

    /// Signs `claims` (ours are [`AccessClaims`]; tests sign others to play an identity provider).
    pub fn sign<C: serde::Serialize>(&self, claims: &C) -> String {
        self.sign_as("at+jwt", claims)
    }

    /// Signs `claims` as a JWT of type `typ`: a token that is not an access token says so, so
    /// that no verifier of access tokens takes it for one.
    pub fn sign_as<C: serde::Serialize>(&self, typ: &str, claims: &C) -> String {
        let mut header = Header::new(Algorithm::EdDSA);
        header.typ = Some(typ.into());
        header.kid = Some(self.kid.clone());
        jsonwebtoken::encode(&header, claims, &self.encoding).expect("Ed25519 signing cannot fail")
    }

    /// Checks signature, `iss`, `exp`, `nbf` and that `aud` is one of `audiences`.
    pub fn verify(
        &self,
        token: &str,
        issuer: &str,
        audiences: &[String],
    ) -> Result<AccessClaims, String> {
        let header = jsonwebtoken::decode_header(token).map_err(|e| e.to_string())?;
        if header.alg != Algorithm::EdDSA || header.kid.as_deref() != Some(&self.kid) {
            return Err("not signed by this server".into());
        }
        let mut validation = Validation::new(Algorithm::EdDSA);
        validation.set_issuer(&[issuer]);
        validation.set_audience(audiences);
        validation.validate_nbf = true;
        validation.leeway = LEEWAY_SECS as u64;
        validation.set_required_spec_claims(&["exp", "iss", "aud", "nbf"]);
        jsonwebtoken::decode::<AccessClaims>(token, &self.decoding, &validation)
            .map(|data| data.claims)
            .map_err(|e| e.to_string())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn claims(aud: &str, exp: i64) -> AccessClaims {
        let now = chrono::Utc::now().timestamp();
        AccessClaims {
            iss: "https://auth.example".into(),
            aud: aud.into(),
            sub: "alice".into(),
            client_id: "c1".into(),
            scope: "a b".into(),
            jti: "j1".into(),
            role: None,
            iat: now,
            nbf: now,
            exp: now + exp,
        }
    }

    #[test]
    fn signs_and_verifies_and_refuses_what_it_should() {
        let (seed, key) = SigningKey::generate();
        let aud = vec!["https://host/mcp".to_string()];
        let token = key.sign(&claims("https://host/mcp", 60));
        let verified = key
            .verify(&token, "https://auth.example", &aud)
            .expect("valid");
        assert_eq!(verified.scopes(), ["a", "b"]);
        // The same seed is the same key (persisted across restarts).
        assert!(
            SigningKey::from_seed(seed)
                .verify(&token, "https://auth.example", &aud)
                .is_ok()
        );
        assert!(key.verify(&token, "https://other.example", &aud).is_err());
        assert!(
            key.verify(
                &token,
                "https://auth.example",
                &["https://host/other".into()]
            )
            .is_err()
        );
        assert!(
            key.verify(
                &key.sign(&claims("https://host/mcp", -120)),
                "https://auth.example",
                &aud
            )
            .is_err()
        );
        assert!(
            SigningKey::generate()
                .1
                .verify(&token, "https://auth.example", &aud)
                .is_err()
        );
        let mut parts: Vec<&str> = token.split('.').collect();
        let tampered = URL_SAFE_NO_PAD
            .encode(br#"{"iss":"https://auth.example","aud":"https://host/mcp","sub":"mallory"}"#);
        parts[1] = &tampered;
        assert!(
            key.verify(&parts.join("."), "https://auth.example", &aud)
                .is_err()
        );
    }
}
