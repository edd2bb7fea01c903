//! The authorization server's HTTP endpoints, one module per job: [`metadata`] (RFC 8414 and
//! the JWKS), [`register`] (RFC 7591), [`authorize`] (RFC 6749 §4.1 with PKCE, RFC 7636: the
//! sign-in and consent page), [`token`] (RFC 6749 §3.2: code, refresh, client credentials),
//! [`revoke`] (RFC 7009), and [`client_auth`] (RFC 6749 §2.3), which the last two share. The
//! JSON endpoints refuse with [`crate::OAuthError`].

mod authorize;
mod client_auth;
mod metadata;
mod register;
mod revoke;
mod token;

use std::net::{IpAddr, SocketAddr};
use std::sync::Arc;
use std::time::{Duration, Instant};

use axum::Router;
use axum::extract::{ConnectInfo, DefaultBodyLimit};
use axum::http::{HeaderValue, header};
use axum::response::Response;
use axum::routing::{get, post};
use concierge_core::Outcome;
use serde_json::{Value, json};

use crate::AuthServer;
use crate::limits::PeerBuckets;

/// The largest request body any OAuth endpoint reads. Claude's registration is ~250 bytes and a
/// token request a few hundred; 16 KB leaves room for generous RFC 7591 metadata (contacts,
/// logo and policy URIs, which are not stored) and nothing like the megabyte of a flood.
const MAX_BODY_BYTES: usize = 16 * 1024;
/// The longest client name kept (longer ones are cut): it is shown on the consent page. The
/// sign-in form cuts the account name it audits and throttles to the same length.
const MAX_NAME_CHARS: usize = 100;

/// The peer address, when the server is told it (`ConnectInfo`); without it nothing is limited
/// per peer rather than everything failing.
type Peer = Option<axum::Extension<ConnectInfo<SocketAddr>>>;

fn peer_ip(peer: &Peer) -> Option<IpAddr> {
    peer.as_ref().map(|p| p.0.0.ip())
}

/// Takes one of `peer`'s `buckets` (a peer the server is not told of is not limited); when none
/// is left, the refusal is audited at `endpoint` as `event` (for `client`, when it is named)
/// and the wait until the next one is answered.
fn throttle(
    server: &AuthServer,
    buckets: &PeerBuckets,
    peer: &Peer,
    (endpoint, event): (&str, &str),
    client: Option<&str>,
) -> Result<(), Duration> {
    let Some(ip) = peer_ip(peer) else {
        return Ok(());
    };
    buckets.take(ip, Instant::now()).inspect_err(|_| {
        server.audit(endpoint, event, Outcome::RateLimited, client, None);
    })
}

/// The server's routes, to be merged at the root of the issuer.
pub fn router(server: Arc<AuthServer>) -> Router {
    let mut routes = Router::new()
        .route(
            "/.well-known/oauth-authorization-server",
            get(metadata::metadata),
        )
        .route("/.well-known/openid-configuration", get(metadata::metadata))
        .route("/jwks", get(metadata::jwks))
        .route("/revoke", post(revoke::revoke));
    // The Mappy seed (§4.2) names its endpoints under /oauth/; clients find the metadata's
    // paths, so those are aliases only and the metadata keeps advertising the short ones.
    for prefix in ["", "/oauth"] {
        routes = routes
            .route(&format!("{prefix}/register"), post(register::register))
            .route(
                &format!("{prefix}/authorize"),
                get(authorize::authorize).post(authorize::decide),
            )
            .route(&format!("{prefix}/token"), post(token::token));
    }
    routes
        .with_state(server)
        .layer(DefaultBodyLimit::max(MAX_BODY_BYTES))
        // Browser clients (the Inspector, the TS SDK in a page) preflight /register, /token and
        // /revoke; the consent page is a navigation and needs none.
        .layer(
            tower_http::cors::CorsLayer::new()
                .allow_origin(tower_http::cors::Any)
                .allow_methods([axum::http::Method::GET, axum::http::Method::POST])
                .allow_headers([header::AUTHORIZATION, header::CONTENT_TYPE]),
        )
}

pub(crate) fn cors(mut response: Response) -> Response {
    response.headers_mut().insert(
        header::ACCESS_CONTROL_ALLOW_ORIGIN,
        HeaderValue::from_static("*"),
    );
    response
}

/// An audit event's notes from `(key, value)` pairs.
fn notes(pairs: &[(&str, &str)]) -> serde_json::Map<String, Value> {
    pairs
        .iter()
        .map(|(k, v)| (k.to_string(), json!(v)))
        .collect()
}

#[cfg(test)]
mod tests;
