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

use axum::Router;
use axum::extract::{ConnectInfo, DefaultBodyLimit};
use axum::http::{HeaderValue, header};
use axum::response::Response;
use axum::routing::{get, post};
use serde_json::{Value, json};

use crate::AuthServer;

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

/// The server's routes, to be merged at the root of the issuer.
pub fn router(server: Arc<AuthServer>) -> Router {
    Router::new()
        .route(
            "/.well-known/oauth-authorization-server",
            get(metadata::metadata),
        )
        .route("/.well-known/openid-configuration", get(metadata::metadata))
        .route("/jwks", get(metadata::jwks))
        .route("/register", post(register::register))
        .route(
            "/authorize",
            get(authorize::authorize).post(authorize::decide),
        )
        .route("/token", post(token::token))
        .route("/revoke", post(revoke::revoke))
        // The Mappy seed (§4.2) names its endpoints under /oauth/; clients find the metadata's
        // paths, so these are aliases only and the metadata keeps advertising the short ones.
        .route("/oauth/register", post(register::register))
        .route(
            "/oauth/authorize",
            get(authorize::authorize).post(authorize::decide),
        )
        .route("/oauth/token", post(token::token))
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
