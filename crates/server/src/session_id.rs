//! Session ids that say who may use them, so any instance of a deployment can refuse a stolen
//! one without asking the instance that opened it.
//!
//! `Mcp-Session-Id: <instance>.<nonce>.<mac>`:
//! - `instance` is `[state] instance` (`CONCIERGE_INSTANCE`), so a balancer can send a session's
//!   requests to the instance that holds it (the nginx map in docs/src/guides/instances.md reads this prefix);
//!   left out on a deployment without one;
//! - `nonce` is random (a UUID), so every session's id is new;
//! - `mac` is an HMAC-SHA256 of the endpoint, the instance, the nonce and the principal that
//!   opened the session, under `[state] session_secret` — the same secret on every instance.
//!
//! A request naming a session whose mac does not match its own principal is another client's
//! (or made up) and is refused with 403 on every instance; one that matches but is not held
//! here is a session of a dead instance, which the transport answers with 404 so the client
//! initializes again (the MCP transport's own recovery). Ids in another shape (a protocol
//! handler's own) are left to the transport.

use hmac::{Hmac, KeyInit, Mac};
use sha2::{Digest, Sha256};
use subtle::ConstantTimeEq;

/// What a presented session id says about the caller presenting it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verdict {
    /// Minted for this caller on this endpoint.
    Theirs,
    /// In our shape, but not minted for this caller (or not by this deployment).
    NotTheirs,
    /// Not an id we mint.
    Foreign,
}

/// Mints and reads one deployment's session ids.
pub struct SessionIds {
    key: [u8; 32],
    instance: String,
}

/// The mac's length in bytes: 128 bits is past guessing, and keeps the id short.
const MAC_BYTES: usize = 16;

impl SessionIds {
    /// `secret` is the deployment's shared session secret; `None` (one instance) gets a random
    /// key of this process, so ids from before a restart are simply unknown.
    pub fn new(secret: Option<&str>, instance: &str) -> Self {
        let key: [u8; 32] = match secret {
            Some(secret) => Sha256::digest(secret.as_bytes()).into(),
            None => {
                let random = format!("{}{}", uuid::Uuid::new_v4(), uuid::Uuid::new_v4());
                Sha256::digest(random.as_bytes()).into()
            }
        };
        Self {
            key,
            instance: instance.to_string(),
        }
    }

    fn mac(&self, endpoint: &str, instance: &str, nonce: &str, principal: &str) -> Hmac<Sha256> {
        let mut mac =
            <Hmac<Sha256> as KeyInit>::new_from_slice(&self.key).expect("HMAC takes any key");
        for part in ["mcp-session", endpoint, instance, nonce, principal] {
            mac.update(part.as_bytes());
            mac.update(b"\0");
        }
        mac
    }

    /// A new session id of `endpoint` for `principal`.
    pub fn mint(&self, endpoint: &str, principal: &str) -> String {
        let nonce = uuid::Uuid::new_v4().simple().to_string();
        let mac = self.mac(endpoint, &self.instance, &nonce, principal);
        let mac = hex::encode(&mac.finalize().into_bytes()[..MAC_BYTES]);
        format!("{}.{nonce}.{mac}", self.instance)
    }

    /// Whether `id` was minted for `principal` on `endpoint`.
    pub fn verdict(&self, id: &str, endpoint: &str, principal: &str) -> Verdict {
        let mut parts = id.split('.');
        let (Some(instance), Some(nonce), Some(mac), None) =
            (parts.next(), parts.next(), parts.next(), parts.next())
        else {
            return Verdict::Foreign;
        };
        let Some(mac) = hex::decode(mac).ok().filter(|m| m.len() == MAC_BYTES) else {
            return Verdict::Foreign;
        };
        if nonce.len() != 32 || !nonce.bytes().all(|b| b.is_ascii_hexdigit()) {
            return Verdict::Foreign;
        }
        let expected = self.mac(endpoint, instance, nonce, principal).finalize();
        if bool::from(expected.into_bytes()[..MAC_BYTES].ct_eq(&mac)) {
            Verdict::Theirs
        } else {
            Verdict::NotTheirs
        }
    }
}

tokio::task_local! {
    /// Who is opening a session, while the transport handles their `initialize`: the guard
    /// sets it around the transport, and the session manager mints the id from it (rmcp creates
    /// the session inside that request's own future).
    pub static OPENER: String;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_id_belongs_to_its_opener_on_every_instance_sharing_the_secret() {
        let one = SessionIds::new(Some("the deployment's secret"), "i1");
        let two = SessionIds::new(Some("the deployment's secret"), "i2");
        let id = one.mint("/mappy/mcp", "oauth:alice");
        assert!(id.starts_with("i1."), "{id}");
        assert!(
            id.bytes().all(|b| b.is_ascii_graphic()),
            "visible ASCII: {id}"
        );
        assert_eq!(
            two.verdict(&id, "/mappy/mcp", "oauth:alice"),
            Verdict::Theirs
        );
        assert_eq!(
            two.verdict(&id, "/mappy/mcp", "oauth:bob"),
            Verdict::NotTheirs
        );
        assert_eq!(
            two.verdict(&id, "/coffee/mcp", "oauth:alice"),
            Verdict::NotTheirs
        );
        assert_ne!(id, one.mint("/mappy/mcp", "oauth:alice"), "every id is new");
    }

    #[test]
    fn a_changed_id_or_another_deployments_is_not_theirs_and_other_shapes_are_foreign() {
        let ids = SessionIds::new(Some("secret"), "i1");
        let id = ids.mint("/m", "alice");
        let moved = id.replacen("i1.", "i2.", 1);
        assert_eq!(ids.verdict(&moved, "/m", "alice"), Verdict::NotTheirs);
        let other = SessionIds::new(Some("another secret"), "i1");
        assert_eq!(other.verdict(&id, "/m", "alice"), Verdict::NotTheirs);
        let unsigned = SessionIds::new(None, "");
        assert_eq!(unsigned.verdict(&id, "/m", "alice"), Verdict::NotTheirs);
        for foreign in ["", "3f2a9c", "a.b.c", "uuid-like-1234", &format!("{id}.x")] {
            assert_eq!(
                ids.verdict(foreign, "/m", "alice"),
                Verdict::Foreign,
                "{foreign}"
            );
        }
    }
}
