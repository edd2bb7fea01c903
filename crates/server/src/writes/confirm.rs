//! Confirm tokens: a short-lived answer to "show me first" for destructive writes.
//!
//! A token is `ct1.<expires-ms>.<mac>`, where the MAC (HMAC-SHA256 under the deployment's write
//! secret) covers who asked (client and user), which tool, the arguments' fingerprint and the
//! expiry. Nothing is stored: a token for other arguments, another tool or another caller simply
//! does not verify, and one past its expiry is refused as expired.

use hmac::{Hmac, KeyInit, Mac};
use sha2::Sha256;

/// Why a presented token does not confirm this call.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Refused {
    /// Malformed, or minted for another caller, tool or arguments.
    Invalid,
    Expired,
}

pub struct ConfirmTokens {
    secret: [u8; 32],
}

impl ConfirmTokens {
    pub fn new(secret: [u8; 32]) -> Self {
        Self { secret }
    }

    fn mac(&self, binding: &str, expires_ms: i64) -> Hmac<Sha256> {
        let mut mac = <Hmac<Sha256> as KeyInit>::new_from_slice(&self.secret)
            .expect("HMAC takes keys of any length");
        mac.update(binding.as_bytes());
        mac.update(b"\0");
        mac.update(expires_ms.to_string().as_bytes());
        mac
    }

    /// A token for `binding` (caller, tool, fingerprint) valid until `expires_ms`.
    pub fn mint(&self, binding: &str, expires_ms: i64) -> String {
        let tag = self.mac(binding, expires_ms).finalize().into_bytes();
        format!("ct1.{expires_ms}.{}", hex::encode(tag))
    }

    pub fn verify(&self, token: &str, binding: &str, now_ms: i64) -> Result<(), Refused> {
        let mut parts = token.trim().splitn(3, '.');
        let (Some("ct1"), Some(expires), Some(tag)) = (parts.next(), parts.next(), parts.next())
        else {
            return Err(Refused::Invalid);
        };
        let expires_ms: i64 = expires.parse().map_err(|_| Refused::Invalid)?;
        let tag = hex::decode(tag).map_err(|_| Refused::Invalid)?;
        self.mac(binding, expires_ms)
            .verify_slice(&tag)
            .map_err(|_| Refused::Invalid)?;
        if now_ms >= expires_ms {
            return Err(Refused::Expired);
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_token_confirms_only_its_own_binding_until_it_expires() {
        let tokens = ConfirmTokens::new([7; 32]);
        let token = tokens.mint("alice|hours|abc", 1_000);
        assert_eq!(tokens.verify(&token, "alice|hours|abc", 999), Ok(()));
        assert_eq!(
            tokens.verify(&token, "alice|hours|abc", 1_000),
            Err(Refused::Expired)
        );
        assert_eq!(
            tokens.verify(&token, "bob|hours|abc", 999),
            Err(Refused::Invalid)
        );
        assert_eq!(
            tokens.verify(&token, "alice|hours|abd", 999),
            Err(Refused::Invalid)
        );
        let forged = token.replace(".1000.", ".9000.");
        assert_eq!(
            tokens.verify(&forged, "alice|hours|abc", 999),
            Err(Refused::Invalid)
        );
        for junk in ["", "ct1", "ct1.x.y", "ct1.5.zz", "ct2.5.00", "ct1.5.ü0"] {
            assert_eq!(
                tokens.verify(junk, "alice|hours|abc", 0),
                Err(Refused::Invalid)
            );
        }
        let other = ConfirmTokens::new([8; 32]);
        assert_eq!(
            other.verify(&token, "alice|hours|abc", 999),
            Err(Refused::Invalid)
        );
    }
}
