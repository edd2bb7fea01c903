//! Revocation (RFC 7009): a refresh token takes its whole family with it, an access token is
//! refused at once here and by the other instances within the revocation list's reload.

use std::collections::HashMap;
use std::sync::Arc;

use axum::extract::{Form, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use concierge_core::Outcome;

use super::client_auth::authenticate_client;
use super::cors;
use crate::{AuthServer, OAuthError};

pub(super) async fn revoke(
    State(server): State<Arc<AuthServer>>,
    headers: HeaderMap,
    Form(form): Form<HashMap<String, String>>,
) -> Result<Response, OAuthError> {
    let client = authenticate_client(&server, &headers, &form).await?;
    let token = form.get("token").map(String::as_str).unwrap_or("");
    if let Ok(Some(state)) = server.store.refresh(token).await
        && state.grant.client_id == client.client_id
    {
        server.revoke_family(&state.family).await;
        server.audit(
            "/revoke",
            "token_revoked",
            Outcome::Ok,
            Some(&client.client_id),
            state.grant.user.as_deref(),
        );
    } else if let Ok(claims) = server.key.verify(token, &server.issuer, &server.resources)
        && claims.client_id == client.client_id
    {
        let _ = server.store.revoke_jti(&claims.jti, claims.exp).await;
        server
            .revoked
            .write()
            .unwrap_or_else(|p| p.into_inner())
            .0
            .insert(claims.jti);
        server.audit(
            "/revoke",
            "token_revoked",
            Outcome::Ok,
            Some(&client.client_id),
            None,
        );
    }
    // Always 200: an unknown or foreign token tells the caller nothing.
    Ok(cors(StatusCode::OK.into_response()))
}
