//! Dynamic client registration (RFC 7591), open to anyone and therefore bounded: per peer (see
//! [`crate::limits`]), in what one registration may hold, in the redirect URIs it may name
//! (see [`crate::redirects`]), and in how many never-used registrations are kept.

use std::sync::Arc;

use axum::Json;
use axum::extract::State;
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use concierge_core::Outcome;
use concierge_core::json::strings;
use serde_json::{Value, json};

use super::{MAX_BODY_BYTES, MAX_NAME_CHARS, Peer, cors, throttle};
use crate::store::Client;
use crate::util::random_token;
use crate::{AuthServer, OAuthError};

/// Redirect URIs one registration may list: real clients register one or two (web plus
/// loopback); 10 is ample and keeps a registration's row small.
const MAX_REDIRECT_URIS: usize = 10;
/// The longest redirect URI accepted: the known clients' are under 100 bytes; 512 leaves room
/// for deep paths and a query without letting one URI be a payload.
const MAX_REDIRECT_URI_BYTES: usize = 512;

/// The body is read by hand rather than by axum's `Json`, so that a body too large or not JSON
/// is refused as RFC 7591 says (`invalid_client_metadata`), not with axum's plain-text answer.
pub(super) async fn register(
    State(server): State<Arc<AuthServer>>,
    peer: Peer,
    body: axum::body::Body,
) -> Result<Response, OAuthError> {
    if let Err(wait) = throttle(
        &server,
        &server.registrations,
        &peer,
        ("/register", "registration_throttled"),
        None,
    ) {
        return Err(OAuthError::Throttled {
            wait,
            what: "registrations",
        });
    }
    let Ok(body) = axum::body::to_bytes(body, MAX_BODY_BYTES).await else {
        return Err(OAuthError::InvalidClientMetadata(format!(
            "the registration is larger than {} KB",
            MAX_BODY_BYTES / 1024
        )));
    };
    let Ok(request) = serde_json::from_slice::<Value>(&body) else {
        return Err(OAuthError::InvalidClientMetadata(
            "the body is not JSON".into(),
        ));
    };
    let redirect_uris = request
        .get("redirect_uris")
        .and_then(strings)
        .unwrap_or_default();
    check_redirect_uris(&server, &redirect_uris)?;
    let auth_method = request
        .get("token_endpoint_auth_method")
        .and_then(Value::as_str)
        .unwrap_or("client_secret_basic")
        .to_string();
    if !matches!(
        auth_method.as_str(),
        "none" | "client_secret_post" | "client_secret_basic"
    ) {
        return Err(OAuthError::InvalidClientMetadata(
            "token_endpoint_auth_method: none, client_secret_post or client_secret_basic".into(),
        ));
    }
    let mut grant_types = request
        .get("grant_types")
        .and_then(strings)
        .unwrap_or_else(|| vec!["authorization_code".into()]);
    // Only the two known names pass below; repeats are not stored.
    let mut seen = Vec::new();
    grant_types.retain(|g| {
        let first = !seen.contains(g);
        seen.push(g.clone());
        first
    });
    if let Some(other) = grant_types
        .iter()
        .find(|g| !matches!(g.as_str(), "authorization_code" | "refresh_token"))
    {
        return Err(OAuthError::InvalidClientMetadata(format!(
            "grant type `{other}` cannot be self-registered; ask the operator for a machine client"
        )));
    }
    let name = request
        .get("client_name")
        .and_then(Value::as_str)
        .unwrap_or("unnamed application")
        .chars()
        .take(MAX_NAME_CHARS)
        .collect::<String>();
    let secret = (auth_method != "none").then(|| random_token(32));
    let client = Client {
        client_id: format!("dcr-{}", random_token(16)),
        secret_hash: secret.as_deref().map(crate::util::hash),
        name: name.clone(),
        redirect_uris: redirect_uris.clone(),
        grant_types: grant_types.clone(),
        auth_method: auth_method.clone(),
        scopes: Vec::new(),
        source: "dcr".into(),
    };
    if let Err(error) = server.store.put_client(&client).await {
        tracing::error!(%error, "oauth: cannot store a client");
        return Err(OAuthError::ServerError);
    }
    // The disk's bound: floods leave registrations nobody uses; the oldest of them go first.
    match server
        .store
        .cap_unused_clients(server.max_unused_clients)
        .await
    {
        Ok(0) => {}
        Ok(removed) => tracing::info!(removed, "oauth: oldest unused registrations removed"),
        Err(error) => tracing::error!(%error, "oauth: capping unused registrations failed"),
    }
    server.audit(
        "/register",
        "client_registered",
        Outcome::Ok,
        Some(&client.client_id),
        None,
    );
    let mut answer = json!({
        "client_id": client.client_id,
        "client_id_issued_at": chrono::Utc::now().timestamp(),
        "client_name": name,
        "redirect_uris": redirect_uris,
        "grant_types": grant_types,
        "response_types": ["code"],
        "token_endpoint_auth_method": auth_method,
    });
    if let Some(secret) = secret {
        answer["client_secret"] = json!(secret);
        answer["client_secret_expires_at"] = json!(0);
    }
    let mut response = (StatusCode::CREATED, Json(answer)).into_response();
    response
        .headers_mut()
        .insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    Ok(cors(response))
}

/// At least one, not too many, none too long, each one the deployment allows.
fn check_redirect_uris(server: &AuthServer, redirect_uris: &[String]) -> Result<(), OAuthError> {
    if redirect_uris.is_empty() {
        return Err(OAuthError::InvalidRedirectUri(
            "redirect_uris is required".into(),
        ));
    }
    if redirect_uris.len() > MAX_REDIRECT_URIS {
        return Err(OAuthError::InvalidRedirectUri(format!(
            "at most {MAX_REDIRECT_URIS} redirect_uris"
        )));
    }
    if let Some(long) = redirect_uris
        .iter()
        .find(|u| u.len() > MAX_REDIRECT_URI_BYTES)
    {
        return Err(OAuthError::InvalidRedirectUri(format!(
            "`{}…` is longer than {MAX_REDIRECT_URI_BYTES} bytes",
            long.chars().take(60).collect::<String>()
        )));
    }
    match redirect_uris
        .iter()
        .find_map(|u| server.redirects.allows(u).err())
    {
        Some(bad) => Err(OAuthError::InvalidRedirectUri(bad)),
        None => Ok(()),
    }
}
