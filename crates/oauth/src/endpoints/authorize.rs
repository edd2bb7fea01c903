//! Authorization (RFC 6749 §4.1, authorization code only, PKCE S256 only per RFC 7636): the
//! request is checked and kept server-side while the person signs in and decides on the
//! consent page; the answer goes back to the client's redirect URI. Refusals here are pages,
//! not [`crate::OAuthError`]s: a browser shows them, and an invalid request is not sent back to
//! the client (RFC 9700 §4.11.2).

use std::collections::HashMap;
use std::sync::Arc;
use std::time::{Duration, Instant};

use axum::extract::{Form, Query, State};
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Redirect, Response};
use concierge_core::Outcome;

use super::{MAX_NAME_CHARS, Peer, notes, peer_ip, throttle};
use crate::AuthServer;
use crate::error::{in_seconds, whole_seconds};
use crate::limits::Throttled;
use crate::pages;
use crate::store::{Client, Grant};
use crate::util::{random_token, redirect_matches};

const CODE_TTL: Duration = Duration::from_secs(10 * 60);
const PENDING_TTL: Duration = Duration::from_secs(15 * 60);
/// The longest `state` accepted at /authorize: clients send 32–64 random characters, some pack
/// a little JSON; 1 KB is generous and bounds what each pending authorization stores.
const MAX_STATE_BYTES: usize = 1024;
/// Pending authorizations kept at most (the oldest go first): ~10,000 × ≤ 3 KB ≈ 30 MB,
/// whatever many peers open.
const MAX_PENDING: u64 = 10_000;

/// A validated authorization request, kept server-side while the user decides.
#[derive(serde::Serialize, serde::Deserialize)]
struct Pending {
    client_id: String,
    redirect_uri: String,
    state: Option<String>,
    code_challenge: String,
    scope: String,
    resource: String,
}

/// Where an authorization answer goes: the client's redirect URI with `state` and `iss`.
fn answer(
    server: &AuthServer,
    redirect_uri: &str,
    state: Option<&str>,
    params: &[(&str, &str)],
) -> Response {
    let mut url = match url::Url::parse(redirect_uri) {
        Ok(url) => url,
        Err(_) => return pages::error(StatusCode::BAD_REQUEST, "the redirect URI is not a URL"),
    };
    {
        let mut query = url.query_pairs_mut();
        for (key, value) in params {
            query.append_pair(key, value);
        }
        if let Some(state) = state {
            query.append_pair("state", state);
        }
        query.append_pair("iss", &server.issuer);
    }
    Redirect::to(url.as_str()).into_response()
}

/// The error page for an invalid authorization request: after RFC 9700 §4.11.2, an invalid
/// request is not sent back to the redirect URI (no user ever approved the client, and anyone
/// can register one), so our host cannot be used to bounce a browser to a stranger's page.
fn invalid_request(
    server: &AuthServer,
    client_id: &str,
    error: &str,
    description: &str,
) -> Response {
    server.audit_with(
        "/authorize",
        "authorization_refused",
        Outcome::Rejected,
        Some(client_id),
        None,
        Some(notes(&[("error", error)])),
    );
    pages::error(
        StatusCode::BAD_REQUEST,
        &format!("This application sent an invalid sign-in request ({error}): {description}."),
    )
}

pub(super) async fn authorize(
    State(server): State<Arc<AuthServer>>,
    peer: Peer,
    Query(params): Query<HashMap<String, String>>,
) -> Response {
    // Each sign-in page stores a pending authorization: a stranger may open only so many.
    if let Err(wait) = throttle(
        &server,
        &server.authorizations,
        &peer,
        ("/authorize", "authorization_throttled"),
        params.get("client_id").map(String::as_str),
    ) {
        let seconds = whole_seconds(wait);
        let mut page = pages::error(
            StatusCode::TOO_MANY_REQUESTS,
            &format!(
                "Too many sign-in requests from your address. Try again in {}.",
                in_seconds(seconds)
            ),
        );
        page.headers_mut()
            .insert(header::RETRY_AFTER, HeaderValue::from(seconds));
        return page;
    }
    let param = |key: &str| {
        params
            .get(key)
            .map(String::as_str)
            .filter(|v| !v.is_empty())
    };
    // Client and redirect URI first: until both check out, nothing is sent anywhere.
    let Some(client_id) = param("client_id") else {
        return pages::error(StatusCode::BAD_REQUEST, "The request names no client.");
    };
    let client = match server.client(client_id).await {
        Ok(Some(client)) => client,
        Ok(None) => {
            return pages::error(
                StatusCode::BAD_REQUEST,
                "This application is not registered here.",
            );
        }
        Err(why) => {
            return pages::error(
                StatusCode::BAD_REQUEST,
                &format!("This application cannot be used: {why}."),
            );
        }
    };
    let redirect_uri = match param("redirect_uri") {
        Some(uri)
            if client
                .redirect_uris
                .iter()
                .any(|r| redirect_matches(r, uri)) =>
        {
            uri.to_string()
        }
        Some(_) => {
            server.audit(
                "/authorize",
                "authorization_refused",
                Outcome::Rejected,
                Some(client_id),
                None,
            );
            return pages::error(
                StatusCode::BAD_REQUEST,
                "The return address does not match the application's registration.",
            );
        }
        None if client.redirect_uris.len() == 1 => client.redirect_uris[0].clone(),
        None => {
            return pages::error(
                StatusCode::BAD_REQUEST,
                "The request names no return address.",
            );
        }
    };
    let state = param("state");
    if state.is_some_and(|s| s.len() > MAX_STATE_BYTES) {
        return invalid_request(
            &server,
            client_id,
            "invalid_request",
            &format!("state is longer than {MAX_STATE_BYTES} bytes"),
        );
    }
    if param("response_type") != Some("code") {
        return invalid_request(
            &server,
            client_id,
            "unsupported_response_type",
            "only response_type=code is supported",
        );
    }
    let challenge = match (param("code_challenge"), param("code_challenge_method")) {
        // An S256 challenge is a SHA-256 in base64url: 43 characters, no more to store.
        (Some(challenge), Some("S256")) if challenge.len() == 43 => challenge.to_string(),
        _ => {
            return invalid_request(
                &server,
                client_id,
                "invalid_request",
                "PKCE with code_challenge_method=S256 is required",
            );
        }
    };
    let resource = match param("resource") {
        Some(requested) => match server.resource(requested) {
            Some(resource) => resource.to_string(),
            None => {
                return invalid_request(&server, client_id, "invalid_target", "unknown resource");
            }
        },
        // Claude omits `resource`: the default is our (first) protected endpoint.
        None => match server.resources.first() {
            Some(resource) => resource.clone(),
            None => {
                return pages::error(
                    StatusCode::BAD_REQUEST,
                    "No resource is protected by this server.",
                );
            }
        },
    };
    // Unknown scopes are narrowed away rather than refused (clients ask for offline_access,
    // openid, email, …); no scope asks for everything the server offers.
    let requested: Vec<&str> = param("scope").unwrap_or("").split_whitespace().collect();
    let scopes: Vec<String> = if requested.is_empty() {
        server.scopes.clone()
    } else {
        server
            .scopes
            .iter()
            .filter(|s| requested.contains(&s.as_str()))
            .cloned()
            .collect()
    };
    let pending = Pending {
        client_id: client.client_id.clone(),
        redirect_uri,
        state: state.map(str::to_string),
        code_challenge: challenge,
        scope: scopes.join(" "),
        resource,
    };
    consent_page(&server, &client, &pending, "", None).await
}

async fn consent_page(
    server: &AuthServer,
    client: &Client,
    pending: &Pending,
    username: &str,
    error: Option<&str>,
) -> Response {
    let csrf = random_token(24);
    let stored = serde_json::to_string(pending).unwrap_or_default();
    if let Err(error) = server.store.put_pending(&csrf, &stored, PENDING_TTL).await {
        tracing::error!(%error, "oauth: cannot store a pending authorization");
        return pages::error(StatusCode::INTERNAL_SERVER_ERROR, "Please try again.");
    }
    if let Err(error) = server.store.trim_pending(MAX_PENDING).await {
        tracing::error!(%error, "oauth: cannot trim pending authorizations");
    }
    let host = url::Url::parse(&pending.redirect_uri)
        .ok()
        .and_then(|u| u.host_str().map(str::to_string))
        .unwrap_or_default();
    let scopes: Vec<String> = pending
        .scope
        .split_whitespace()
        .map(str::to_string)
        .collect();
    pages::consent(&pages::Consent {
        csrf: &csrf,
        client_name: &client.name,
        client_id: &client.client_id,
        // A metadata-document client is vouched for by its URL's host; a self-registered one
        // only by itself.
        unverified: client.source == "dcr",
        scopes: &scopes,
        resource: &pending.resource,
        redirect_host: &host,
        username,
        error,
        wording: &server.wording,
    })
}

pub(super) async fn decide(
    State(server): State<Arc<AuthServer>>,
    peer: Peer,
    Form(form): Form<HashMap<String, String>>,
) -> Response {
    let field = |key: &str| form.get(key).map(String::as_str).unwrap_or("");
    let pending = match server.store.take_pending(field("csrf")).await {
        Ok(Some(stored)) => serde_json::from_str::<Pending>(&stored).ok(),
        _ => None,
    };
    let Some(pending) = pending else {
        return pages::error(
            StatusCode::BAD_REQUEST,
            "This sign-in form has expired or was already used.",
        );
    };
    let state = pending.state.as_deref();
    if field("decision") != "allow" {
        server.audit(
            "/authorize",
            "authorization_denied",
            Outcome::Rejected,
            Some(&pending.client_id),
            None,
        );
        return answer(
            &server,
            &pending.redirect_uri,
            state,
            &[("error", "access_denied")],
        );
    }
    let username = field("username").trim().to_string();
    // The account as the audit and the throttle name it: cut, so a password typed into the
    // wrong field or kilobytes of junk are neither logged nor kept in memory whole.
    let account: String = username.chars().take(MAX_NAME_CHARS).collect();
    let ip = peer_ip(&peer);
    if let Err(throttled) = server.sign_ins.check(ip, &account, Instant::now()).await {
        let (wait, why, message) = match throttled {
            Throttled::Peer(wait) => (wait, "peer", "Too many failed sign-ins from your address."),
            Throttled::Account(wait) => {
                (wait, "account", "Too many failed sign-ins for this user.")
            }
        };
        server.audit_with(
            "/authorize",
            "sign_in_throttled",
            Outcome::RateLimited,
            Some(&pending.client_id),
            None,
            Some(notes(&[("account", &account), ("throttled", why)])),
        );
        return sign_in_again(
            &server,
            &pending,
            &username,
            &format!(
                "{message} Try again in {}.",
                in_seconds(whole_seconds(wait))
            ),
        )
        .await;
    }
    let person = server.users.sign_in(&username, field("password")).await;
    if let Err(error) = &person {
        tracing::error!(%error, "oauth: the user directory failed");
    }
    // Only wrong credentials count: our directory being down must not slow its users later.
    if matches!(person, Ok(None)) {
        server.sign_ins.failed(ip, &account, Instant::now()).await;
    }
    let Ok(Some(person)) = person else {
        server.audit_with(
            "/authorize",
            "sign_in_failed",
            Outcome::Unauthorized,
            Some(&pending.client_id),
            None,
            Some(notes(&[("account", &account)])),
        );
        return sign_in_again(
            &server,
            &pending,
            &username,
            &server.wording.wrong_sign_in(),
        )
        .await;
    };
    server.sign_ins.succeeded(&account).await;
    let code = random_token(32);
    let grant = Grant {
        client_id: pending.client_id.clone(),
        user: Some(person.subject.clone()),
        scope: pending.scope.clone(),
        resource: pending.resource.clone(),
        redirect_uri: pending.redirect_uri.clone(),
        code_challenge: pending.code_challenge.clone(),
        role: Some(person.role),
    };
    if let Err(error) = server.store.put_code(&code, &grant, CODE_TTL).await {
        tracing::error!(%error, "oauth: cannot store a code");
        return pages::error(StatusCode::INTERNAL_SERVER_ERROR, "Please try again.");
    }
    server.audit(
        "/authorize",
        "authorization_granted",
        Outcome::Ok,
        Some(&pending.client_id),
        grant.user.as_deref(),
    );
    answer(&server, &pending.redirect_uri, state, &[("code", &code)])
}

/// The form again, with why, after a refused sign-in (audited by the caller).
async fn sign_in_again(
    server: &AuthServer,
    pending: &Pending,
    username: &str,
    message: &str,
) -> Response {
    match server.client(&pending.client_id).await {
        Ok(Some(client)) => consent_page(server, &client, pending, username, Some(message)).await,
        _ => pages::error(
            StatusCode::BAD_REQUEST,
            "This application is no longer registered.",
        ),
    }
}
