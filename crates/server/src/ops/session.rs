//! Who is signed in to the console, and the CSRF token of their forms.
//!
//! The cookie is `<expires>.<nonce>.<mac>`, MACed with a key derived from the ops token: nothing
//! is stored server-side, every instance of a deployment accepts it, and changing the token signs
//! everyone out. Each form carries a CSRF token derived from the cookie's nonce; with the
//! cookie's `SameSite=Strict` and the same-origin check on every POST, a page elsewhere cannot
//! act in an operator's name.

use hmac::{Hmac, KeyInit, Mac};
use sha2::Sha256;

pub const COOKIE: &str = "concierge_ops";

/// How long a sign-in holds.
pub const LIFETIME_SECONDS: i64 = 8 * 3600;

pub struct Sessions {
    key: Vec<u8>,
}

/// A signed-in operator.
#[derive(Debug, Clone)]
pub struct Operator {
    nonce: String,
}

impl Sessions {
    pub fn new(token: &str) -> Self {
        Self {
            key: mac(token.as_bytes(), "concierge ops session v1"),
        }
    }

    /// The cookie value of a new sign-in at `now` (Unix seconds).
    pub fn open(&self, now: i64) -> String {
        let expires = now + LIFETIME_SECONDS;
        let nonce = uuid::Uuid::new_v4().simple().to_string();
        let body = format!("{expires}.{nonce}");
        format!("{body}.{}", hex::encode(mac(&self.key, &body)))
    }

    /// The operator a cookie value names, if it is ours and not expired.
    pub fn check(&self, cookie: &str, now: i64) -> Option<Operator> {
        let (body, tag) = cookie.rsplit_once('.')?;
        let (expires, nonce) = body.split_once('.')?;
        let expected = hex::encode(mac(&self.key, body));
        if !bool::from(subtle::ConstantTimeEq::ct_eq(
            expected.as_bytes(),
            tag.as_bytes(),
        )) {
            return None;
        }
        (expires.parse::<i64>().ok()? > now).then(|| Operator {
            nonce: nonce.to_string(),
        })
    }

    /// The CSRF token of `operator`'s forms.
    pub fn csrf(&self, operator: &Operator) -> String {
        hex::encode(mac(&self.key, &format!("csrf.{}", operator.nonce)))
    }

    pub fn csrf_matches(&self, operator: &Operator, given: &str) -> bool {
        bool::from(subtle::ConstantTimeEq::ct_eq(
            self.csrf(operator).as_bytes(),
            given.as_bytes(),
        ))
    }

    /// Whether `given` is the ops token, compared in constant time.
    pub fn token_matches(token: &str, given: &str) -> bool {
        bool::from(subtle::ConstantTimeEq::ct_eq(
            mac(token.as_bytes(), "compare").as_slice(),
            mac(given.as_bytes(), "compare").as_slice(),
        ))
    }
}

fn mac(key: &[u8], message: &str) -> Vec<u8> {
    let mut mac = <Hmac<Sha256> as KeyInit>::new_from_slice(key).expect("HMAC takes any key");
    mac.update(message.as_bytes());
    mac.finalize().into_bytes().to_vec()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_cookie_holds_until_it_expires_and_only_under_its_token() {
        let sessions = Sessions::new("a-long-ops-token-for-tests");
        let cookie = sessions.open(1_000);
        let operator = sessions.check(&cookie, 1_001).expect("valid");
        assert!(sessions.check(&cookie, 1_000 + LIFETIME_SECONDS).is_none());
        assert!(
            Sessions::new("another-long-token-here")
                .check(&cookie, 1_001)
                .is_none()
        );
        let forged = cookie.replacen('.', "9.", 1);
        assert!(sessions.check(&forged, 1_001).is_none());
        let csrf = sessions.csrf(&operator);
        assert!(sessions.csrf_matches(&operator, &csrf));
        assert!(!sessions.csrf_matches(&operator, "00"));
        let other = sessions.check(&sessions.open(1_000), 1_001).unwrap();
        assert!(!sessions.csrf_matches(&other, &csrf), "a token per sign-in");
        assert!(Sessions::token_matches("abc", "abc"));
        assert!(!Sessions::token_matches("abc", "abd"));
    }
}
