//! The `requestState` of a confirmation asked over MRTR (MCP 2026-07-28's multi round-trip
//! requests): a client hands it back with its answer, so it is attacker input.
//!
//! A state is `rs2.<base64url(nonce ‖ ciphertext)>`: XChaCha20-Poly1305 under a key derived
//! from the deployment's write secret (every instance has the same), the associated data the
//! call's binding (endpoint, tool, principal, idempotency key, argument fingerprint — the same
//! binding a confirm token has), the plaintext its expiry and a single-use id. So a state is
//! sealed (nobody can read or forge one), bound to who got it and to exactly that call, and
//! expires; write safety consumes its id in the idempotency store before the write, so it is
//! single use on every instance.

use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use chacha20poly1305::aead::{Aead, KeyInit, Payload};
use chacha20poly1305::{XChaCha20Poly1305, XNonce};
use hmac::{Hmac, Mac};
use serde::{Deserialize, Serialize};
use sha2::Sha256;

use super::confirm::Refused;

const PREFIX: &str = "rs2.";
const NONCE_BYTES: usize = 24;
/// Longer than any state this module seals (a few dozen bytes of plaintext); a longer one is
/// refused before it is decoded.
const MAX_LEN: usize = 512;

pub struct RequestStates {
    cipher: XChaCha20Poly1305,
}

/// What a state holds.
#[derive(Serialize, Deserialize)]
struct Plain {
    /// Expiry, Unix milliseconds.
    exp: i64,
    /// The single-use id.
    jti: String,
    /// The digest of the preview the user is asked to confirm.
    #[serde(default)]
    pv: String,
}

impl RequestStates {
    /// States under `secret` (the write secret), with a key of their own derived from it.
    pub fn new(secret: [u8; 32]) -> Self {
        let mut mac =
            <Hmac<Sha256> as KeyInit>::new_from_slice(&secret).expect("HMAC takes any key");
        mac.update(b"concierge mrtr request state v1");
        let key = mac.finalize().into_bytes();
        Self {
            cipher: XChaCha20Poly1305::new(&key),
        }
    }

    /// A state for `binding` and the preview whose digest is `preview`, valid until
    /// `expires_ms`, and its single-use id.
    pub fn seal(&self, binding: &str, preview: &str, expires_ms: i64) -> (String, String) {
        let jti = uuid::Uuid::new_v4().simple().to_string();
        let plain = serde_json::to_vec(&Plain {
            exp: expires_ms,
            jti: jti.clone(),
            pv: preview.to_string(),
        })
        .expect("a state serializes");
        let mut nonce = [0u8; NONCE_BYTES];
        getrandom::fill(&mut nonce).expect("the system's random source");
        let sealed = self
            .cipher
            .encrypt(
                &XNonce::from(nonce),
                Payload {
                    msg: &plain,
                    aad: binding.as_bytes(),
                },
            )
            .expect("XChaCha20-Poly1305 seals any message of this size");
        let mut bytes = nonce.to_vec();
        bytes.extend_from_slice(&sealed);
        (format!("{PREFIX}{}", URL_SAFE_NO_PAD.encode(bytes)), jti)
    }

    /// The single-use id of `state` and its preview's digest, when it was sealed here for
    /// `binding` and has not expired by `now_ms`.
    pub fn open(
        &self,
        state: &str,
        binding: &str,
        now_ms: i64,
    ) -> Result<(String, String), Refused> {
        if state.len() > MAX_LEN {
            return Err(Refused::Invalid);
        }
        let bytes = state
            .strip_prefix(PREFIX)
            .and_then(|body| URL_SAFE_NO_PAD.decode(body).ok())
            .filter(|bytes| bytes.len() > NONCE_BYTES)
            .ok_or(Refused::Invalid)?;
        let (nonce, sealed) = bytes.split_at(NONCE_BYTES);
        let nonce = XNonce::try_from(nonce).map_err(|_| Refused::Invalid)?;
        let plain = self
            .cipher
            .decrypt(
                &nonce,
                Payload {
                    msg: sealed,
                    aad: binding.as_bytes(),
                },
            )
            .map_err(|_| Refused::Invalid)?;
        let plain: Plain = serde_json::from_slice(&plain).map_err(|_| Refused::Invalid)?;
        if now_ms >= plain.exp {
            return Err(Refused::Expired);
        }
        Ok((plain.jti, plain.pv))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_state_opens_only_for_its_binding_until_it_expires_and_cannot_be_forged() {
        let states = RequestStates::new([7; 32]);
        let (state, jti) = states.seal("alice|hours|abc", "0f0f", 1_000);
        assert_eq!(
            states.open(&state, "alice|hours|abc", 999),
            Ok((jti, "0f0f".to_string()))
        );
        assert_eq!(
            states.open(&state, "alice|hours|abc", 1_000),
            Err(Refused::Expired)
        );
        assert_eq!(
            states.open(&state, "bob|hours|abc", 999),
            Err(Refused::Invalid)
        );
        let other = RequestStates::new([8; 32]);
        assert_eq!(
            other.open(&state, "alice|hours|abc", 999),
            Err(Refused::Invalid)
        );
        // Any changed byte breaks the seal.
        let mut bytes = URL_SAFE_NO_PAD
            .decode(state.strip_prefix(PREFIX).unwrap())
            .unwrap();
        for i in [0, NONCE_BYTES, bytes.len() - 1] {
            bytes[i] ^= 1;
            let tampered = format!("{PREFIX}{}", URL_SAFE_NO_PAD.encode(&bytes));
            assert_eq!(
                states.open(&tampered, "alice|hours|abc", 999),
                Err(Refused::Invalid)
            );
            bytes[i] ^= 1;
        }
        for junk in ["", "rs2.", "rs2.AAAA", "rs1.x", &"rs2.A".repeat(200)] {
            assert_eq!(
                states.open(junk, "alice|hours|abc", 0),
                Err(Refused::Invalid)
            );
        }
        // Two seals of one binding differ (a fresh nonce and id each).
        assert_ne!(states.seal("a", "", 1).0, states.seal("a", "", 1).0);
    }

    #[test]
    fn nothing_of_the_state_is_readable() {
        let states = RequestStates::new([7; 32]);
        let (state, jti) = states.seal("alice|hours|abc", "0f0f", 1_000);
        assert!(!state.contains(&jti) && !state.contains("alice") && !state.contains("0f0f"));
        let bytes = URL_SAFE_NO_PAD
            .decode(state.strip_prefix(PREFIX).unwrap())
            .unwrap();
        assert!(!String::from_utf8_lossy(&bytes).contains("exp"));
    }
}
