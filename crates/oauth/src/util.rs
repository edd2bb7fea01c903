//! Small pieces the endpoints share: randomness, hashes, PKCE, redirect-URI rules.

use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use sha2::{Digest, Sha256};
use subtle::ConstantTimeEq;

/// `bytes` random bytes, base64url: codes, tokens, secrets, CSRF tokens.
pub fn random_token(bytes: usize) -> String {
    let mut buffer = vec![0u8; bytes];
    getrandom::fill(&mut buffer).expect("the OS provides randomness");
    URL_SAFE_NO_PAD.encode(buffer)
}

/// What we store instead of a code, token or secret: its SHA-256, base64url.
pub fn hash(secret: &str) -> String {
    URL_SAFE_NO_PAD.encode(Sha256::digest(secret.as_bytes()))
}

pub fn same(a: &str, b: &str) -> bool {
    a.as_bytes().ct_eq(b.as_bytes()).into()
}

/// PKCE S256: `BASE64URL(SHA256(verifier)) == challenge`, verifier 43–128 unreserved characters.
pub fn pkce_matches(verifier: &str, challenge: &str) -> bool {
    let well_formed = (43..=128).contains(&verifier.len())
        && verifier
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b'_' | b'~'));
    well_formed
        && same(
            &URL_SAFE_NO_PAD.encode(Sha256::digest(verifier.as_bytes())),
            challenge,
        )
}

/// A redirect URI a client may register: https, or http on a loopback host (native apps); never
/// with userinfo or a fragment.
pub fn acceptable_redirect(uri: &str) -> Result<(), String> {
    let url = url::Url::parse(uri).map_err(|_| format!("`{uri}` is not a URL"))?;
    if url.fragment().is_some() || !url.username().is_empty() || url.password().is_some() {
        return Err(format!("`{uri}`: no fragment or user info allowed"));
    }
    match url.scheme() {
        "https" => Ok(()),
        "http" if is_loopback(&url) => Ok(()),
        _ => Err(format!("`{uri}`: https, or http on a loopback host")),
    }
}

pub(crate) fn is_loopback(url: &url::Url) -> bool {
    matches!(
        url.host(),
        Some(url::Host::Domain("localhost"))
            | Some(url::Host::Ipv4(std::net::Ipv4Addr::LOCALHOST))
            | Some(url::Host::Ipv6(std::net::Ipv6Addr::LOCALHOST))
    )
}

/// Whether `presented` matches a registered redirect URI: exactly (as strings: the `url` crate
/// would add trailing slashes), or — for http loopback URIs — on any port (RFC 8252 §7.3; Claude
/// Code and VS Code pick a free port at every sign-in).
pub fn redirect_matches(registered: &str, presented: &str) -> bool {
    if registered == presented {
        return true;
    }
    let (Ok(a), Ok(b)) = (url::Url::parse(registered), url::Url::parse(presented)) else {
        return false;
    };
    a.scheme() == "http"
        && b.scheme() == "http"
        && is_loopback(&a)
        && a.host() == b.host()
        && a.path() == b.path()
        && a.query() == b.query()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pkce_s256_round_trip_and_bounds() {
        let verifier = "dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk";
        let challenge = "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM"; // RFC 7636 appendix B
        assert!(pkce_matches(verifier, challenge));
        assert!(!pkce_matches("short", challenge));
        assert!(!pkce_matches(
            verifier,
            "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cX"
        ));
    }

    #[test]
    fn loopback_redirects_match_any_port_others_exactly() {
        assert!(redirect_matches(
            "http://127.0.0.1/callback",
            "http://127.0.0.1:53682/callback"
        ));
        assert!(redirect_matches(
            "http://localhost:6274/oauth/callback",
            "http://localhost:1234/oauth/callback"
        ));
        assert!(!redirect_matches(
            "http://127.0.0.1/callback",
            "http://127.0.0.1:5/other"
        ));
        assert!(!redirect_matches(
            "https://claude.ai/api/mcp/auth_callback",
            "https://claude.ai/api/mcp/auth_callback/"
        ));
        assert!(!redirect_matches(
            "https://app.example/cb",
            "https://app.example:8443/cb"
        ));
        assert!(acceptable_redirect("http://example.com/cb").is_err());
        assert!(acceptable_redirect("https://a.example/cb#x").is_err());
        assert!(acceptable_redirect("https://user@a.example/cb").is_err());
        assert!(acceptable_redirect("http://[::1]:8080/cb").is_ok());
    }
}
