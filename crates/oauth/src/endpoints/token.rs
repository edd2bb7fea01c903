//! The token endpoint (RFC 6749 §3.2): the authorization code (with PKCE, RFC 7636), refresh
//! (rotation and reuse detection for public clients, OAuth 2.1 §4.3), and client credentials
//! for confidential machine clients. Access tokens are signed JWTs bound to one resource
//! (RFC 8707); each is recorded with its refresh-token family so that revoking the family
//! stops it too.

use std::collections::HashMap;
use std::sync::Arc;

use axum::Json;
use axum::extract::{Form, State};
use axum::http::{HeaderMap, HeaderValue, header};
use axum::response::{IntoResponse, Response};
use concierge_core::Outcome;

use super::client_auth::authenticate_client;
use super::cors;
use crate::keys::AccessClaims;
use crate::store::{Client, Grant};
use crate::util::{pkce_matches, random_token};
use crate::{AuthServer, OAuthError};

/// A successful token response (RFC 6749 §5.1). A value until it is answered, so a grant can
/// still change what it says (a confidential client's refresh token is handed back as it was).
#[derive(Debug, serde::Serialize)]
pub(super) struct Issued {
    access_token: String,
    token_type: &'static str,
    expires_in: u64,
    scope: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    refresh_token: Option<String>,
}

impl IntoResponse for Issued {
    fn into_response(self) -> Response {
        let mut response = Json(self).into_response();
        let headers = response.headers_mut();
        headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
        headers.insert(header::PRAGMA, HeaderValue::from_static("no-cache"));
        cors(response)
    }
}

pub(super) async fn token(
    State(server): State<Arc<AuthServer>>,
    headers: HeaderMap,
    Form(form): Form<HashMap<String, String>>,
) -> Result<Issued, OAuthError> {
    let client = match authenticate_client(&server, &headers, &form).await {
        Ok(client) => client,
        Err(error) => {
            server.audit(
                "/token",
                "client_authentication_failed",
                Outcome::Unauthorized,
                form.get("client_id").map(String::as_str),
                None,
            );
            return Err(error);
        }
    };
    let _ = server.store.touch_client(&client.client_id).await;
    let field = |key: &str| form.get(key).map(String::as_str).unwrap_or("");
    match field("grant_type") {
        "authorization_code" => authorization_code(&server, &client, &form).await,
        "refresh_token" => refresh(&server, &client, &form).await,
        "client_credentials" => client_credentials(&server, &client, &form).await,
        other => Err(OAuthError::UnsupportedGrantType(format!(
            "`{other}`: authorization_code, refresh_token or client_credentials"
        ))),
    }
}

/// The refresh-token family a code starts: derived from the code, so a second use of the code
/// finds what the first one bought.
fn family_of(code: &str) -> String {
    crate::util::hash(&format!("family:{code}"))
}

fn invalid_grant(description: &str) -> OAuthError {
    OAuthError::InvalidGrant(description.into())
}

async fn authorization_code(
    server: &AuthServer,
    client: &Client,
    form: &HashMap<String, String>,
) -> Result<Issued, OAuthError> {
    let field = |key: &str| form.get(key).map(String::as_str).unwrap_or("");
    let code = field("code");
    let grant = match server.store.redeem_code(code).await {
        Ok(Some(grant)) => grant,
        _ => {
            // A code used twice leaked: what it bought goes too (OAuth 2.1 §4.1.3).
            if server.store.code_was_redeemed(code).await.unwrap_or(false) {
                server.revoke_family(&family_of(code)).await;
                server.audit(
                    "/token",
                    "code_reuse",
                    Outcome::Rejected,
                    Some(&client.client_id),
                    None,
                );
            }
            return Err(invalid_grant(
                "the code is unknown, expired or already used",
            ));
        }
    };
    if grant.client_id != client.client_id {
        return Err(invalid_grant("the code was issued to another client"));
    }
    // The authorization request always fixed a redirect URI, so the token request must repeat it.
    if field("redirect_uri") != grant.redirect_uri {
        return Err(invalid_grant(
            "redirect_uri differs from the authorization request's",
        ));
    }
    if !pkce_matches(field("code_verifier"), &grant.code_challenge) {
        return Err(invalid_grant("the PKCE code_verifier does not match"));
    }
    if let Some(resource) = form.get("resource").filter(|r| !r.is_empty())
        && server.resource(resource) != Some(grant.resource.as_str())
    {
        return Err(OAuthError::InvalidTarget(
            "resource differs from the authorization's".into(),
        ));
    }
    issue(
        server,
        client,
        &grant,
        None,
        (Some(&family_of(code)), true),
        "token_issued",
    )
    .await
}

async fn refresh(
    server: &AuthServer,
    client: &Client,
    form: &HashMap<String, String>,
) -> Result<Issued, OAuthError> {
    let presented = form.get("refresh_token").map(String::as_str).unwrap_or("");
    let state = match server.store.refresh(presented).await {
        Ok(Some(state)) if state.grant.client_id == client.client_id => state,
        _ => return Err(invalid_grant("unknown refresh token")),
    };
    if state.revoked || state.expired {
        return Err(invalid_grant("the refresh token is no longer valid"));
    }
    let public = client.secret_hash.is_none();
    if public {
        // Rotation: each refresh token works once. A second use means it leaked: the whole
        // family goes. Except within the rotation grace (`refresh_rotation_grace`): then the client most
        // likely never got the answer (a dropped connection, our restart) and is retrying, and
        // revoking would sign the person out and void every token they hold.
        let first = !state.used
            && server
                .store
                .mark_refresh_used(presented)
                .await
                .unwrap_or(false);
        let retried = !first
            && !server.rotation_grace.is_zero()
            && state.used_at.is_some_and(|at| {
                chrono::Utc::now().timestamp() - at <= server.rotation_grace.as_secs() as i64
            });
        if !first && !retried {
            server.revoke_family(&state.family).await;
            server.audit(
                "/token",
                "refresh_token_reuse",
                Outcome::Rejected,
                Some(&client.client_id),
                state.grant.user.as_deref(),
            );
            return Err(invalid_grant(
                "the refresh token was already used; sign in again",
            ));
        }
    }
    let grant = state.grant.clone();
    let mut access_scope = None;
    if let Some(scope) = form.get("scope").filter(|s| !s.trim().is_empty()) {
        let granted: Vec<&str> = grant.scope.split_whitespace().collect();
        if let Some(extra) = scope.split_whitespace().find(|s| !granted.contains(s)) {
            return Err(OAuthError::InvalidScope(format!(
                "`{extra}` was not granted"
            )));
        }
        // Only this access token is narrowed; the refresh token keeps the grant (RFC 6749 §6).
        access_scope = Some(scope.split_whitespace().collect::<Vec<_>>().join(" "));
    }
    let mut issued = issue(
        server,
        client,
        &grant,
        access_scope.as_deref(),
        (Some(&state.family), public),
        "token_refreshed",
    )
    .await?;
    if !public {
        // Confidential clients keep their refresh token (DeerFlow resends one static token).
        issued.refresh_token = Some(presented.to_string());
    }
    Ok(issued)
}

async fn client_credentials(
    server: &AuthServer,
    client: &Client,
    form: &HashMap<String, String>,
) -> Result<Issued, OAuthError> {
    if client.secret_hash.is_none() || !client.grant_types.iter().any(|g| g == "client_credentials")
    {
        return Err(OAuthError::UnauthorizedClient(
            "this client may not use client_credentials".into(),
        ));
    }
    let requested: Vec<&str> = form
        .get("scope")
        .map(|s| s.split_whitespace().collect())
        .unwrap_or_default();
    let scope: Vec<&str> = client
        .scopes
        .iter()
        .map(String::as_str)
        .filter(|s| requested.is_empty() || requested.contains(s))
        .collect();
    // DeerFlow sends `audience`; RFC 8707 says `resource`.
    let target = form
        .get("resource")
        .or_else(|| form.get("audience"))
        .filter(|r| !r.is_empty());
    let resource = match target {
        Some(requested) => server
            .resource(requested)
            .map(str::to_string)
            .ok_or_else(|| OAuthError::InvalidTarget("unknown resource".into()))?,
        None => server
            .resources
            .first()
            .cloned()
            .ok_or_else(|| OAuthError::InvalidTarget("no resource".into()))?,
    };
    let grant = Grant {
        client_id: client.client_id.clone(),
        user: None,
        scope: scope.join(" "),
        resource,
        redirect_uri: String::new(),
        code_challenge: String::new(),
        role: None,
    };
    issue(server, client, &grant, None, (None, true), "token_issued").await
}

/// An access token for `grant`, narrowed to `scope` when given. The access token is recorded
/// with `family`, so that revoking the family (reuse, replay, revocation) stops it too; a new
/// refresh token in it is minted only when `mint_refresh`.
async fn issue(
    server: &AuthServer,
    client: &Client,
    grant: &Grant,
    scope: Option<&str>,
    (family, mint_refresh): (Option<&str>, bool),
    event: &str,
) -> Result<Issued, OAuthError> {
    let scope = scope.unwrap_or(&grant.scope).to_string();
    let now = chrono::Utc::now().timestamp();
    let claims = AccessClaims {
        iss: server.issuer.clone(),
        aud: grant.resource.clone(),
        sub: grant
            .user
            .clone()
            .unwrap_or_else(|| client.client_id.clone()),
        client_id: client.client_id.clone(),
        scope: scope.clone(),
        jti: random_token(16),
        role: grant.role.clone(),
        iat: now,
        nbf: now,
        exp: now + server.access_ttl.as_secs() as i64,
    };
    if let Some(family) = family
        && let Err(error) = server
            .store
            .record_access(family, &claims.jti, claims.exp)
            .await
    {
        // A token its family cannot revoke would outlive a detected theft: none is issued.
        tracing::error!(%error, "oauth: cannot record an access token");
        return Err(OAuthError::ServerError);
    }
    let mut issued = Issued {
        access_token: server.key.sign(&claims),
        token_type: "Bearer",
        expires_in: server.access_ttl.as_secs(),
        scope,
        refresh_token: None,
    };
    if let Some(family) = family.filter(|_| mint_refresh) {
        let refresh = random_token(32);
        if let Err(error) = server
            .store
            .put_refresh(&refresh, family, grant, server.refresh_ttl)
            .await
        {
            tracing::error!(%error, "oauth: cannot store a refresh token");
            return Err(OAuthError::ServerError);
        }
        issued.refresh_token = Some(refresh);
    }
    server.audit(
        "/token",
        event,
        Outcome::Ok,
        Some(&client.client_id),
        grant.user.as_deref(),
    );
    Ok(issued)
}
