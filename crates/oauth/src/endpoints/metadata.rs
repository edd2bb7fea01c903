//! What a client reads before anything else: the authorization server's metadata (RFC 8414,
//! also served at the OpenID path that some clients try first) and the keys access tokens are
//! signed with (RFC 7517).

use std::sync::Arc;

use axum::Json;
use axum::extract::State;
use axum::response::{IntoResponse, Response};
use serde_json::json;

use super::cors;
use crate::AuthServer;

pub(super) async fn metadata(State(server): State<Arc<AuthServer>>) -> Response {
    let issuer = &server.issuer;
    let mut scopes = server.scopes.clone();
    scopes.push("offline_access".into());
    cors(
        Json(json!({
            "issuer": issuer,
            "authorization_endpoint": format!("{issuer}/authorize"),
            "token_endpoint": format!("{issuer}/token"),
            "registration_endpoint": format!("{issuer}/register"),
            "revocation_endpoint": format!("{issuer}/revoke"),
            "jwks_uri": format!("{issuer}/jwks"),
            "response_types_supported": ["code"],
            "grant_types_supported": ["authorization_code", "refresh_token", "client_credentials"],
            "token_endpoint_auth_methods_supported": ["none", "client_secret_post", "client_secret_basic"],
            "revocation_endpoint_auth_methods_supported": ["none", "client_secret_post", "client_secret_basic"],
            "code_challenge_methods_supported": ["S256"],
            "scopes_supported": scopes,
            "authorization_response_iss_parameter_supported": true,
            "client_id_metadata_document_supported": server.supports_metadata_documents(),
            "subject_types_supported": ["public"],
            "id_token_signing_alg_values_supported": ["EdDSA"],
        }))
        .into_response(),
    )
}

pub(super) async fn jwks(State(server): State<Arc<AuthServer>>) -> Response {
    cors(Json(server.jwks()).into_response())
}
