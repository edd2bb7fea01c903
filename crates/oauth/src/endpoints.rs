//! The authorization server's HTTP endpoints.

use std::collections::HashMap;
use std::net::{IpAddr, SocketAddr};
use std::sync::Arc;
use std::time::{Duration, Instant};

use axum::Json;
use axum::Router;
use axum::extract::{ConnectInfo, DefaultBodyLimit, Form, Query, State};
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Redirect, Response};
use axum::routing::{get, post};
use base64::Engine;
use concierge_core::Outcome;
use serde_json::{Value, json};

use crate::AuthServer;
use crate::keys::AccessClaims;
use crate::limits::Throttled;
use crate::pages;
use crate::store::{Client, Grant};
use crate::util::{pkce_matches, random_token, redirect_matches, same};

const CODE_TTL: Duration = Duration::from_secs(10 * 60);
const PENDING_TTL: Duration = Duration::from_secs(15 * 60);

/// The largest request body any OAuth endpoint reads. Claude's registration is ~250 bytes and a
/// token request a few hundred; 16 KB leaves room for generous RFC 7591 metadata (contacts,
/// logo and policy URIs, which are not stored) and nothing like the megabyte of a flood.
const MAX_BODY_BYTES: usize = 16 * 1024;
/// Redirect URIs one registration may list: real clients register one or two (web plus
/// loopback); 10 is ample and keeps a registration's row small.
const MAX_REDIRECT_URIS: usize = 10;
/// The longest redirect URI accepted: the known clients' are under 100 bytes; 512 leaves room
/// for deep paths and a query without letting one URI be a payload.
const MAX_REDIRECT_URI_BYTES: usize = 512;
/// The longest client name kept (longer ones are cut): it is shown on the consent page.
const MAX_NAME_CHARS: usize = 100;
/// The longest `state` accepted at /authorize: clients send 32–64 random characters, some pack
/// a little JSON; 1 KB is generous and bounds what each pending authorization stores.
const MAX_STATE_BYTES: usize = 1024;
/// Pending authorizations kept at most (the oldest go first): ~10,000 × ≤ 3 KB ≈ 30 MB,
/// whatever many peers open.
const MAX_PENDING: u64 = 10_000;

/// The peer address, when the server is told it (`ConnectInfo`); without it nothing is limited
/// per peer rather than everything failing.
type Peer = Option<axum::Extension<ConnectInfo<SocketAddr>>>;

fn peer_ip(peer: &Peer) -> Option<IpAddr> {
    peer.as_ref().map(|p| p.0.0.ip())
}

/// The server's routes, to be merged at the root of the issuer.
pub fn router(server: Arc<AuthServer>) -> Router {
    Router::new()
        .route("/.well-known/oauth-authorization-server", get(metadata))
        .route("/.well-known/openid-configuration", get(metadata))
        .route("/jwks", get(jwks))
        .route("/register", post(register))
        .route("/authorize", get(authorize).post(decide))
        .route("/token", post(token))
        .route("/revoke", post(revoke))
        // The Mappy seed (§4.2) names its endpoints under /oauth/; clients find the metadata's
        // paths, so these are aliases only and the metadata keeps advertising the short ones.
        .route("/oauth/register", post(register))
        .route("/oauth/authorize", get(authorize).post(decide))
        .route("/oauth/token", post(token))
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

fn cors(mut response: Response) -> Response {
    response.headers_mut().insert(
        header::ACCESS_CONTROL_ALLOW_ORIGIN,
        HeaderValue::from_static("*"),
    );
    response
}

async fn metadata(State(server): State<Arc<AuthServer>>) -> Response {
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

async fn jwks(State(server): State<Arc<AuthServer>>) -> Response {
    cors(Json(server.jwks()).into_response())
}

fn oauth_error(status: StatusCode, error: &str, description: &str) -> Response {
    let mut response = (
        status,
        Json(json!({"error": error, "error_description": description})),
    )
        .into_response();
    response
        .headers_mut()
        .insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    cors(response)
}

// ── Dynamic client registration (RFC 7591) ───────────────────────────────────────────────────

/// A wait in whole seconds, rounded up (`Retry-After` has no fractions; 0 would invite a retry
/// that is refused again).
fn whole_seconds(wait: Duration) -> u64 {
    (wait.as_secs() + u64::from(wait.subsec_nanos() > 0)).max(1)
}

fn in_seconds(seconds: u64) -> String {
    match seconds {
        1 => "1 second".into(),
        n => format!("{n} seconds"),
    }
}

/// 429 with `Retry-After`, as an OAuth error.
fn too_many(wait: Duration, what: &str) -> Response {
    let seconds = whole_seconds(wait);
    let mut response = oauth_error(
        StatusCode::TOO_MANY_REQUESTS,
        "temporarily_unavailable",
        &format!(
            "too many {what} from your address; try again in {}",
            in_seconds(seconds)
        ),
    );
    response
        .headers_mut()
        .insert(header::RETRY_AFTER, HeaderValue::from(seconds));
    response
}

async fn register(
    State(server): State<Arc<AuthServer>>,
    peer: Peer,
    body: axum::body::Body,
) -> Response {
    if let Some(ip) = peer_ip(&peer)
        && let Err(wait) = server.registrations.take(ip, Instant::now())
    {
        server.audit(
            "/register",
            "registration_throttled",
            Outcome::RateLimited,
            None,
            None,
        );
        return too_many(wait, "registrations");
    }
    let Ok(body) = axum::body::to_bytes(body, MAX_BODY_BYTES).await else {
        return oauth_error(
            StatusCode::BAD_REQUEST,
            "invalid_client_metadata",
            &format!(
                "the registration is larger than {} KB",
                MAX_BODY_BYTES / 1024
            ),
        );
    };
    let Ok(request) = serde_json::from_slice::<Value>(&body) else {
        return oauth_error(
            StatusCode::BAD_REQUEST,
            "invalid_client_metadata",
            "the body is not JSON",
        );
    };
    let strings = |key: &str| -> Option<Vec<String>> {
        request.get(key)?.as_array().map(|a| {
            a.iter()
                .filter_map(Value::as_str)
                .map(str::to_string)
                .collect()
        })
    };
    let redirect_uris = strings("redirect_uris").unwrap_or_default();
    if redirect_uris.is_empty() {
        return oauth_error(
            StatusCode::BAD_REQUEST,
            "invalid_redirect_uri",
            "redirect_uris is required",
        );
    }
    if redirect_uris.len() > MAX_REDIRECT_URIS {
        return oauth_error(
            StatusCode::BAD_REQUEST,
            "invalid_redirect_uri",
            &format!("at most {MAX_REDIRECT_URIS} redirect_uris"),
        );
    }
    if let Some(long) = redirect_uris
        .iter()
        .find(|u| u.len() > MAX_REDIRECT_URI_BYTES)
    {
        return oauth_error(
            StatusCode::BAD_REQUEST,
            "invalid_redirect_uri",
            &format!(
                "`{}…` is longer than {MAX_REDIRECT_URI_BYTES} bytes",
                long.chars().take(60).collect::<String>()
            ),
        );
    }
    if let Some(bad) = redirect_uris
        .iter()
        .find_map(|u| server.redirects.allows(u).err())
    {
        return oauth_error(StatusCode::BAD_REQUEST, "invalid_redirect_uri", &bad);
    }
    let auth_method = request
        .get("token_endpoint_auth_method")
        .and_then(Value::as_str)
        .unwrap_or("client_secret_basic")
        .to_string();
    if !matches!(
        auth_method.as_str(),
        "none" | "client_secret_post" | "client_secret_basic"
    ) {
        return oauth_error(
            StatusCode::BAD_REQUEST,
            "invalid_client_metadata",
            "token_endpoint_auth_method: none, client_secret_post or client_secret_basic",
        );
    }
    let mut grant_types =
        strings("grant_types").unwrap_or_else(|| vec!["authorization_code".into()]);
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
        return oauth_error(
            StatusCode::BAD_REQUEST,
            "invalid_client_metadata",
            &format!(
                "grant type `{other}` cannot be self-registered; ask the operator for a machine client"
            ),
        );
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
        return oauth_error(
            StatusCode::INTERNAL_SERVER_ERROR,
            "server_error",
            "try again",
        );
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
    cors(response)
}

// ── Authorization (sign-in and consent) ──────────────────────────────────────────────────────

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

fn notes(pairs: &[(&str, &str)]) -> serde_json::Map<String, Value> {
    pairs
        .iter()
        .map(|(k, v)| (k.to_string(), json!(v)))
        .collect()
}

async fn authorize(
    State(server): State<Arc<AuthServer>>,
    peer: Peer,
    Query(params): Query<HashMap<String, String>>,
) -> Response {
    // Each sign-in page stores a pending authorization: a stranger may open only so many.
    if let Some(ip) = peer_ip(&peer)
        && let Err(wait) = server.authorizations.take(ip, Instant::now())
    {
        server.audit(
            "/authorize",
            "authorization_throttled",
            Outcome::RateLimited,
            params.get("client_id").map(String::as_str),
            None,
        );
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

async fn decide(
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
    if let Err(throttled) = server.sign_ins.check(ip, &account, Instant::now()) {
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
        server.sign_ins.failed(ip, &account, Instant::now());
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
    server.sign_ins.succeeded(&account);
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

// ── Token endpoint ───────────────────────────────────────────────────────────────────────────

/// The client a token or revocation request authenticates as.
async fn authenticate_client(
    server: &AuthServer,
    headers: &HeaderMap,
    form: &HashMap<String, String>,
) -> Result<Client, Response> {
    let basic = headers
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| {
            v.strip_prefix("Basic ")
                .or_else(|| v.strip_prefix("basic "))
        })
        .and_then(|b| {
            base64::engine::general_purpose::STANDARD
                .decode(b.trim())
                .ok()
        })
        .and_then(|b| String::from_utf8(b).ok())
        .and_then(|pair| {
            let (id, secret) = pair.split_once(':')?;
            Some((decode_form(id), decode_form(secret)))
        });
    let (client_id, secret) = match basic {
        Some((id, secret)) => (id, Some(secret)),
        None => (
            form.get("client_id").cloned().unwrap_or_default(),
            form.get("client_secret").cloned(),
        ),
    };
    let invalid = || {
        oauth_error(
            StatusCode::UNAUTHORIZED,
            "invalid_client",
            "unknown client or wrong secret",
        )
    };
    let client = match server.client(&client_id).await {
        Ok(Some(client)) => client,
        _ => return Err(invalid()),
    };
    match (&client.secret_hash, secret) {
        (Some(expected), Some(secret)) if same(expected, &crate::util::hash(&secret)) => Ok(client),
        (None, _) => Ok(client),
        _ => Err(invalid()),
    }
}

/// `application/x-www-form-urlencoded` decoding of a Basic credential part (RFC 6749 §2.3.1).
fn decode_form(text: &str) -> String {
    url::form_urlencoded::parse(format!("x={text}").as_bytes())
        .next()
        .map(|(_, v)| v.into_owned())
        .unwrap_or_default()
}

async fn token(
    State(server): State<Arc<AuthServer>>,
    headers: HeaderMap,
    Form(form): Form<HashMap<String, String>>,
) -> Response {
    let client = match authenticate_client(&server, &headers, &form).await {
        Ok(client) => client,
        Err(response) => {
            server.audit(
                "/token",
                "client_authentication_failed",
                Outcome::Unauthorized,
                form.get("client_id").map(String::as_str),
                None,
            );
            return response;
        }
    };
    let _ = server.store.touch_client(&client.client_id).await;
    let field = |key: &str| form.get(key).map(String::as_str).unwrap_or("");
    match field("grant_type") {
        "authorization_code" => authorization_code(&server, &client, &form).await,
        "refresh_token" => refresh(&server, &client, &form).await,
        "client_credentials" => client_credentials(&server, &client, &form).await,
        other => oauth_error(
            StatusCode::BAD_REQUEST,
            "unsupported_grant_type",
            &format!("`{other}`: authorization_code, refresh_token or client_credentials"),
        ),
    }
}

/// The refresh-token family a code starts: derived from the code, so a second use of the code
/// finds what the first one bought.
fn family_of(code: &str) -> String {
    crate::util::hash(&format!("family:{code}"))
}

fn invalid_grant(description: &str) -> Response {
    oauth_error(StatusCode::BAD_REQUEST, "invalid_grant", description)
}

async fn authorization_code(
    server: &AuthServer,
    client: &Client,
    form: &HashMap<String, String>,
) -> Response {
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
            return invalid_grant("the code is unknown, expired or already used");
        }
    };
    if grant.client_id != client.client_id {
        return invalid_grant("the code was issued to another client");
    }
    // The authorization request always fixed a redirect URI, so the token request must repeat it.
    if field("redirect_uri") != grant.redirect_uri {
        return invalid_grant("redirect_uri differs from the authorization request's");
    }
    if !pkce_matches(field("code_verifier"), &grant.code_challenge) {
        return invalid_grant("the PKCE code_verifier does not match");
    }
    if let Some(resource) = form.get("resource").filter(|r| !r.is_empty())
        && server.resource(resource) != Some(grant.resource.as_str())
    {
        return oauth_error(
            StatusCode::BAD_REQUEST,
            "invalid_target",
            "resource differs from the authorization's",
        );
    }
    issue(
        server,
        client,
        &grant,
        Some(&family_of(code)),
        "token_issued",
    )
    .await
}

async fn refresh(server: &AuthServer, client: &Client, form: &HashMap<String, String>) -> Response {
    let presented = form.get("refresh_token").map(String::as_str).unwrap_or("");
    let state = match server.store.refresh(presented).await {
        Ok(Some(state)) if state.grant.client_id == client.client_id => state,
        _ => return invalid_grant("unknown refresh token"),
    };
    if state.revoked || state.expired {
        return invalid_grant("the refresh token is no longer valid");
    }
    let public = client.secret_hash.is_none();
    if public {
        // Rotation: each refresh token works once. A second use means it leaked: the whole
        // family goes.
        let first = !state.used
            && server
                .store
                .mark_refresh_used(presented)
                .await
                .unwrap_or(false);
        if !first {
            server.revoke_family(&state.family).await;
            server.audit(
                "/token",
                "refresh_token_reuse",
                Outcome::Rejected,
                Some(&client.client_id),
                state.grant.user.as_deref(),
            );
            return invalid_grant("the refresh token was already used; sign in again");
        }
    }
    let grant = state.grant.clone();
    let mut access_scope = None;
    if let Some(scope) = form.get("scope").filter(|s| !s.trim().is_empty()) {
        let granted: Vec<&str> = grant.scope.split_whitespace().collect();
        if let Some(extra) = scope.split_whitespace().find(|s| !granted.contains(s)) {
            return oauth_error(
                StatusCode::BAD_REQUEST,
                "invalid_scope",
                &format!("`{extra}` was not granted"),
            );
        }
        // Only this access token is narrowed; the refresh token keeps the grant (RFC 6749 §6).
        access_scope = Some(scope.split_whitespace().collect::<Vec<_>>().join(" "));
    }
    let scope = access_scope.as_deref();
    if public {
        issue_scoped(
            server,
            client,
            &grant,
            scope,
            (Some(&state.family), true),
            "token_refreshed",
        )
        .await
    } else {
        // Confidential clients keep their refresh token (DeerFlow resends one static token).
        let mut response = issue_scoped(
            server,
            client,
            &grant,
            scope,
            (Some(&state.family), false),
            "token_refreshed",
        )
        .await;
        if response.status().is_success() {
            response = with_refresh_token(response, presented).await;
        }
        response
    }
}

async fn with_refresh_token(response: Response, token: &str) -> Response {
    let (parts, body) = response.into_parts();
    let bytes = axum::body::to_bytes(body, 1 << 16)
        .await
        .unwrap_or_default();
    let mut value: Value = serde_json::from_slice(&bytes).unwrap_or_default();
    value["refresh_token"] = json!(token);
    Response::from_parts(parts, axum::body::Body::from(value.to_string()))
}

async fn client_credentials(
    server: &AuthServer,
    client: &Client,
    form: &HashMap<String, String>,
) -> Response {
    if client.secret_hash.is_none() || !client.grant_types.iter().any(|g| g == "client_credentials")
    {
        return oauth_error(
            StatusCode::BAD_REQUEST,
            "unauthorized_client",
            "this client may not use client_credentials",
        );
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
        Some(requested) => match server.resource(requested) {
            Some(resource) => resource.to_string(),
            None => {
                return oauth_error(
                    StatusCode::BAD_REQUEST,
                    "invalid_target",
                    "unknown resource",
                );
            }
        },
        None => match server.resources.first() {
            Some(resource) => resource.clone(),
            None => return oauth_error(StatusCode::BAD_REQUEST, "invalid_target", "no resource"),
        },
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
    issue(server, client, &grant, None, "token_issued").await
}

/// An access token for `grant`, and a refresh token in `family` when given.
async fn issue(
    server: &AuthServer,
    client: &Client,
    grant: &Grant,
    family: Option<&str>,
    event: &str,
) -> Response {
    issue_scoped(server, client, grant, None, (family, true), event).await
}

/// As [`issue`], with the access token narrowed to `scope` when given. The access token is
/// recorded with `family`, so that revoking the family (reuse, replay, revocation) stops it
/// too; a new refresh token in it is minted only when `mint_refresh`.
async fn issue_scoped(
    server: &AuthServer,
    client: &Client,
    grant: &Grant,
    scope: Option<&str>,
    (family, mint_refresh): (Option<&str>, bool),
    event: &str,
) -> Response {
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
        return oauth_error(
            StatusCode::INTERNAL_SERVER_ERROR,
            "server_error",
            "try again",
        );
    }
    let mut answer = json!({
        "access_token": server.key.sign(&claims),
        "token_type": "Bearer",
        "expires_in": server.access_ttl.as_secs(),
        "scope": scope,
    });
    if let Some(family) = family.filter(|_| mint_refresh) {
        let refresh = random_token(32);
        if let Err(error) = server
            .store
            .put_refresh(&refresh, family, grant, server.refresh_ttl)
            .await
        {
            tracing::error!(%error, "oauth: cannot store a refresh token");
            return oauth_error(
                StatusCode::INTERNAL_SERVER_ERROR,
                "server_error",
                "try again",
            );
        }
        answer["refresh_token"] = json!(refresh);
    }
    server.audit(
        "/token",
        event,
        Outcome::Ok,
        Some(&client.client_id),
        grant.user.as_deref(),
    );
    let mut response = Json(answer).into_response();
    let headers = response.headers_mut();
    headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    headers.insert(header::PRAGMA, HeaderValue::from_static("no-cache"));
    cors(response)
}

// ── Revocation (RFC 7009) ────────────────────────────────────────────────────────────────────

async fn revoke(
    State(server): State<Arc<AuthServer>>,
    headers: HeaderMap,
    Form(form): Form<HashMap<String, String>>,
) -> Response {
    let client = match authenticate_client(&server, &headers, &form).await {
        Ok(client) => client,
        Err(response) => return response,
    };
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
    cors(StatusCode::OK.into_response())
}
