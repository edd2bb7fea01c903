//! The HTTP guard in front of an endpoint's MCP transport, in this order: the browser rules
//! (`Host`, `Origin`), the bearer token, the session's owner, the body (read whole, within its
//! limits), its JSON-RPC framing, the session caps for an `initialize`, and the OAuth scope
//! step-up.
//!
//! rmcp serves the protocol; it neither authenticates nor remembers who opened a session. Both
//! happen here, before a request reaches it: the authenticated [`Caller`] is put into the
//! request's extensions (rmcp hands those to the tool call), and a session id is refused when it is
//! presented by a client other than the one that opened it.

use std::sync::Arc;
use std::time::Instant;

use axum::body::Body;
use axum::extract::{Request, State};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use concierge_core::{Caller, Outcome};
use http::{HeaderValue, StatusCode, header};
use serde_json::json;

use crate::endpoint::Endpoint;
use crate::framing;
use crate::origin::{BrowserRefusal, BrowserRules};
use crate::sessions::{Full, Opening, SessionTable};
use crate::tokens::TokenList;

const SESSION_HEADER: &str = "mcp-session-id";

/// How an endpoint establishes who is calling.
pub enum Authenticator {
    /// Nobody is asked; the caller is `anonymous` (loopback only, enforced by config checks).
    None,
    Tokens(TokenList),
    /// The token variable is unset and has no default: nobody can be admitted.
    Missing,
    /// OAuth access tokens for this endpoint's resource URL.
    OAuth(OAuthResource),
}

/// An endpoint as an OAuth protected resource.
pub struct OAuthResource {
    pub verifier: concierge_oauth::Verifier,
    /// The endpoint's URL: the tokens' audience, the metadata's `resource`.
    pub resource: String,
    /// Its RFC 9728 metadata document, absolute (claude.ai ignores relative ones).
    pub metadata_url: String,
    /// Scopes named in the challenge.
    pub scopes: Vec<String>,
}

impl OAuthResource {
    fn challenge(&self, error: Option<&str>) -> String {
        let mut challenge = format!("Bearer resource_metadata=\"{}\"", self.metadata_url);
        if !self.scopes.is_empty() {
            challenge.push_str(&format!(", scope=\"{}\"", self.scopes.join(" ")));
        }
        if let Some(error) = error {
            challenge.push_str(&format!(", error=\"{error}\""));
        }
        challenge
    }
}

pub struct Guard {
    pub endpoint: Arc<Endpoint>,
    pub auth: Authenticator,
    pub sessions: Arc<SessionTable>,
    /// The `Host` and `Origin` rules of the deployment.
    pub browser: Arc<BrowserRules>,
    /// Sessions are opened here (`session = "stateful"`): `initialize` is counted and capped.
    pub stateful: bool,
    /// How large a body may be, and how long it may take to arrive.
    pub body: crate::body::BodyLimits,
}

/// axum middleware: browser rules, authentication, the session's owner, the message's framing,
/// the session caps and the scope step-up — then rmcp.
pub async fn guard(State(guard): State<Arc<Guard>>, request: Request, next: Next) -> Response {
    let started = Instant::now();
    if let Err(refusal) = guard.browser.admit(request.headers()) {
        tracing::warn!(endpoint = %guard.endpoint.path, refusal = %refusal.message(), "browser rules refused a request");
        let code = match refusal {
            BrowserRefusal::Host(_) => "host_not_allowed",
            BrowserRefusal::Origin(_) => "origin_not_allowed",
        };
        guard
            .endpoint
            .audit_refusal(None, Outcome::Forbidden, Some(code), started);
        return json_error(StatusCode::FORBIDDEN, &refusal.message());
    }
    let presented = bearer(&request).map(str::to_string);
    let caller = match authenticate(&guard.auth, presented.as_deref()).await {
        Ok(caller) => caller,
        Err(refusal) => {
            guard
                .endpoint
                .audit_refusal(None, refusal.outcome(), None, started);
            return refusal.into_response();
        }
    };
    let session = request
        .headers()
        .get(SESSION_HEADER)
        .and_then(|v| v.to_str().ok())
        .map(String::from);
    if let Some(session) = &session
        && let Some(owner) = guard.sessions.owner(session)
        && owner != caller.principal()
    {
        tracing::warn!(endpoint = %guard.endpoint.path, client = %caller.client, "session presented by a client that did not open it");
        guard
            .endpoint
            .audit_refusal(Some(&caller.client), Outcome::SessionRefused, None, started);
        return json_error(
            StatusCode::FORBIDDEN,
            "this session belongs to another client; initialize a session of your own",
        );
    }
    let mut opening = None;
    let (parts, body) = request.into_parts();
    let bytes = match crate::body::read(body, guard.body).await {
        Ok(bytes) => bytes,
        Err(refusal) => return refusal,
    };
    if parts.method == http::Method::POST && is_json(&parts.headers) {
        let message = match framing::read(&bytes) {
            Ok(message) => message,
            Err(malformed) => {
                guard.endpoint.audit_refusal(
                    Some(&caller.client),
                    Outcome::InvalidArgument,
                    Some(if malformed.code == -32700 {
                        "parse_error"
                    } else {
                        "invalid_request"
                    }),
                    started,
                );
                return json_response(StatusCode::BAD_REQUEST, malformed.body());
            }
        };
        // The Streamable HTTP endpoint opens sessions; a legacy SSE stream was counted when it
        // opened, and its `initialize` arrives on the messages path.
        let on_endpoint = parts.uri.path().trim_end_matches('/') == guard.endpoint.path;
        if guard.stateful
            && on_endpoint
            && session.is_none()
            && message.method.as_deref() == Some("initialize")
        {
            match open_session(&guard, &caller, started).await {
                Ok(place) => opening = Some(place),
                Err(refusal) => return refusal,
            }
        }
        // OAuth step-up: a tools/call the token lacks scopes for is answered 403
        // `insufficient_scope`, naming every scope needed, so the client can ask the user for more.
        if let (Authenticator::OAuth(oauth), Some(tool)) = (&guard.auth, message.tool.as_deref())
            && guard.endpoint.scope_challenge
            && guard.endpoint.has_scoped_tools()
            && let Some(refusal) = step_up(&guard, oauth, &caller, tool, started)
        {
            return refusal;
        }
    }
    let mut request = Request::from_parts(parts, Body::from(bytes));
    let is_delete = request.method() == http::Method::DELETE;
    request.extensions_mut().insert(caller);
    let mut response = next.run(request).await;
    // rmcp answers a session DELETE with 202; the Python SDK (and DeerFlow through it) expects
    // 200 or 204 and warns on every close otherwise. The session is gone either way.
    if is_delete && response.status() == StatusCode::ACCEPTED {
        *response.status_mut() = StatusCode::OK;
    }

    match (&session, response.headers().get(SESSION_HEADER)) {
        (None, Some(opened)) => {
            if let (Ok(opened), Some(place)) = (opened.to_str(), opening) {
                place.bind(opened);
            }
        }
        (Some(session), _) if response.status() == StatusCode::NOT_FOUND || is_delete => {
            guard.sessions.forget(session);
        }
        _ => {}
    }
    response
}

fn is_json(headers: &http::HeaderMap) -> bool {
    headers
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| {
            v.split(';')
                .next()
                .is_some_and(|t| t.trim().eq_ignore_ascii_case("application/json"))
        })
}

/// The refusal when `caller` may not open one more session (a Streamable HTTP `initialize` or
/// a legacy SSE stream) by its session budget: 429 with `Retry-After`, audited.
pub(crate) fn session_opening_refused(
    endpoint: &Endpoint,
    caller: &Caller,
    started: Instant,
) -> Option<Response> {
    let Err((message, seconds)) = endpoint.admit_initialize(caller) else {
        return None;
    };
    endpoint.audit_refusal(
        Some(&caller.client),
        Outcome::RateLimited,
        Some("rate_limited"),
        started,
    );
    let mut response = json_error(StatusCode::TOO_MANY_REQUESTS, &message);
    response
        .headers_mut()
        .insert(header::RETRY_AFTER, HeaderValue::from(seconds));
    Some(response)
}

/// An `initialize` opens a session: it takes a unit of the caller's session budget, and a
/// place under the session caps.
async fn open_session(
    guard: &Arc<Guard>,
    caller: &Caller,
    started: Instant,
) -> Result<Opening, Response> {
    if let Some(refusal) = session_opening_refused(&guard.endpoint, caller, started) {
        return Err(refusal);
    }
    guard
        .sessions
        .open(&caller.principal())
        .await
        .map_err(|full| {
            guard.endpoint.audit_refusal(
                Some(&caller.client),
                Outcome::SessionRefused,
                Some("too_many_sessions"),
                started,
            );
            let message = match full {
                Full::Endpoint(cap) => format!(
                    "this endpoint holds its maximum of {cap} open sessions; retry in a minute, or send requests without a session"
                ),
                Full::Client(cap) => format!(
                    "this client is already opening {cap} sessions; wait for them to open, or close sessions it no longer uses (DELETE)"
                ),
            };
            let mut response = json_error(StatusCode::SERVICE_UNAVAILABLE, &message);
            response
                .headers_mut()
                .insert(header::RETRY_AFTER, HeaderValue::from_static("60"));
            response
        })
}

/// When `tool` needs scopes the caller lacks, the step-up challenge.
fn step_up(
    guard: &Guard,
    oauth: &OAuthResource,
    caller: &Caller,
    tool: &str,
    started: Instant,
) -> Option<Response> {
    let missing = guard.endpoint.scopes_missing_for(tool, caller);
    if missing.is_empty() {
        return None;
    }
    let mut needed = caller.scopes.clone();
    for scope in oauth.scopes.iter().chain(&missing) {
        if !needed.contains(scope) {
            needed.push(scope.clone());
        }
    }
    guard.endpoint.audit_forbidden(caller, tool, started);
    let challenge = format!(
        "Bearer error=\"insufficient_scope\", scope=\"{}\", resource_metadata=\"{}\"",
        needed.join(" "),
        oauth.metadata_url
    );
    let mut response = json_error(
        StatusCode::FORBIDDEN,
        &format!("`{tool}` needs the scope(s) {}", missing.join(", ")),
    );
    if let Ok(value) = HeaderValue::from_str(&challenge) {
        response
            .headers_mut()
            .insert(header::WWW_AUTHENTICATE, value);
    }
    Some(response)
}

enum Refusal {
    Unauthorized,
    Misconfigured,
    /// An OAuth endpoint's 401, with the challenge that leads the client to the metadata.
    Challenge(String),
}

impl Refusal {
    fn outcome(&self) -> Outcome {
        match self {
            Refusal::Unauthorized | Refusal::Challenge(_) => Outcome::Unauthorized,
            Refusal::Misconfigured => Outcome::Misconfigured,
        }
    }
}

impl IntoResponse for Refusal {
    fn into_response(self) -> Response {
        match self {
            Refusal::Unauthorized => {
                let mut response =
                    json_error(StatusCode::UNAUTHORIZED, "missing or invalid bearer token");
                response.headers_mut().insert(
                    header::WWW_AUTHENTICATE,
                    HeaderValue::from_static("Bearer realm=\"concierge\""),
                );
                response
            }
            Refusal::Misconfigured => json_error(
                StatusCode::INTERNAL_SERVER_ERROR,
                "this endpoint's client list is misconfigured; the server log says what",
            ),
            Refusal::Challenge(challenge) => {
                let mut response = json_error(StatusCode::UNAUTHORIZED, "authorization required");
                if let Ok(value) = HeaderValue::from_str(&challenge) {
                    response
                        .headers_mut()
                        .insert(header::WWW_AUTHENTICATE, value);
                }
                response
            }
        }
    }
}

/// The bearer token of a request. Only the Authorization header counts: a token in a query
/// string ends up in proxy logs.
fn bearer(request: &Request) -> Option<&str> {
    request
        .headers()
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| {
            let (scheme, token) = v.trim().split_once(' ')?;
            scheme.eq_ignore_ascii_case("bearer").then(|| token.trim())
        })
}

async fn authenticate(auth: &Authenticator, presented: Option<&str>) -> Result<Caller, Refusal> {
    let tokens = match auth {
        Authenticator::None => return Ok(Caller::client("anonymous")),
        Authenticator::Missing => return Err(Refusal::Unauthorized),
        Authenticator::Tokens(TokenList::Malformed(_)) => return Err(Refusal::Misconfigured),
        Authenticator::Tokens(tokens) => tokens,
        Authenticator::OAuth(oauth) => {
            // No token: a plain challenge (RFC 6750 §3: no error code); a bad one: invalid_token.
            let Some(token) = presented else {
                return Err(Refusal::Challenge(oauth.challenge(None)));
            };
            return match oauth.verifier.verify(token, &oauth.resource).await {
                Ok(owner) => Ok(Caller {
                    client: owner.client_id,
                    user: owner.user,
                    scopes: owner.scopes,
                    token: Some(owner.token_id),
                    role: owner.role,
                }),
                Err(why) => {
                    tracing::info!(%why, "access token refused");
                    Err(Refusal::Challenge(oauth.challenge(Some("invalid_token"))))
                }
            };
        }
    };
    let presented = presented.ok_or(Refusal::Unauthorized)?;
    tokens
        .authenticate(presented)
        .map(Caller::client)
        .ok_or(Refusal::Unauthorized)
}

/// A JSON-RPC-shaped error body, so MCP clients can show the message.
pub(crate) fn json_error(status: StatusCode, message: &str) -> Response {
    json_response(
        status,
        json!({"jsonrpc": "2.0", "id": null, "error": {"code": -32001, "message": message}}),
    )
}

fn json_response(status: StatusCode, body: serde_json::Value) -> Response {
    let mut response = Response::new(Body::from(body.to_string()));
    *response.status_mut() = status;
    response.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/json"),
    );
    response
}
