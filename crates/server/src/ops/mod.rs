//! `/ops`: the console for the people who run a deployment (not the customers chatting). Server-
//! rendered HTML behind the ops token (`[ops] token`); every action is a POST with the sign-in's
//! CSRF token, from this origin.
//!
//! - Overview: the apps with their upstream's health, what they report (the ski sync's manifest
//!   age, pause, last run's pages, unmatched codes) and their actions ("sync now"); the clients'
//!   calls, refusals and p95 latency over the last hour and day (from the audit trail), with a
//!   chart per client; every endpoint with its tools and what its `tools/list` costs a model in
//!   tokens.
//! - Audit: every sink's events, filtered by client, user, tool, outcome, time and trace id.
//! - OAuth clients: the built-in authorization server's clients, with revoke.

mod pages;
pub mod session;
pub mod trail;

use std::sync::{Arc, Mutex, OnceLock};
use std::time::{Duration, Instant};

use axum::Router;
use axum::extract::{Form, Query, State};
use axum::response::{IntoResponse, Redirect, Response};
use axum::routing::{get, post};
use concierge_core::{Action, Health, HealthCheck, Readings};
use http::{HeaderMap, HeaderValue, StatusCode, header};
use maud::Markup;
use serde::Deserialize;

use crate::platform::Platform;
use session::{COOKIE, Operator, Sessions};

/// Wrong ops tokens accepted per minute, for the whole process, before sign-in pauses.
const SIGN_IN_TRIES_PER_MINUTE: u32 = 10;

/// How long the console waits for an action before it answers "still running".
const ACTION_WAIT: Duration = Duration::from_secs(30);

struct Console {
    token: String,
    sessions: Sessions,
    config: crate::config::Config,
    health: Vec<(String, HealthCheck)>,
    readings: Vec<(String, Readings)>,
    actions: Vec<(String, Action)>,
    endpoints: Vec<EndpointSource>,
    /// The endpoint rows, with the token cost of each `tools/list` (counted on first view).
    endpoint_rows: OnceLock<Vec<pages::EndpointRow>>,
    oauth: Option<Arc<concierge_oauth::AuthServer>>,
    failures: Mutex<(Instant, u32)>,
}

struct EndpointSource {
    path: String,
    auth: String,
    session: String,
    listings: Arc<[rmcp::model::Tool]>,
}

/// The console's routes, when `[ops] token` is set.
pub fn router(platform: &Platform) -> Option<Router> {
    let token = platform.config.ops.token.clone()?;
    let endpoints = platform
        .endpoints
        .iter()
        .map(|built| EndpointSource {
            path: built.section.path.clone(),
            auth: match &built.section.auth {
                crate::config::AuthSection::Oauth { .. } => "OAuth 2.1".into(),
                crate::config::AuthSection::None => "none".into(),
                _ => "bearer tokens".into(),
            },
            session: format!("{:?}", built.section.session).to_lowercase(),
            listings: crate::transport::handler::listings(&built.guard.endpoint),
        })
        .collect();
    let console = Arc::new(Console {
        sessions: Sessions::new(&token),
        token,
        config: platform.config.clone(),
        health: platform.health.clone(),
        readings: platform.readings.clone(),
        actions: platform.actions.clone(),
        endpoints,
        endpoint_rows: OnceLock::new(),
        oauth: platform.oauth.as_ref().and_then(|o| o.builtin.clone()),
        failures: Mutex::new((Instant::now(), 0)),
    });
    Some(
        Router::new()
            .route("/ops", get(overview))
            .route("/ops/", get(|| async { Redirect::to("/ops") }))
            .route("/ops/login", post(login))
            .route("/ops/logout", post(logout))
            .route("/ops/audit", get(audit))
            .route("/ops/oauth", get(oauth))
            .route("/ops/oauth/revoke", post(revoke))
            .route("/ops/oauth/revoke-family", post(revoke_family))
            .route("/ops/action", post(action))
            .with_state(console),
    )
}

/// An HTML answer with the headers every console page has: not cached, not framed, no script.
fn html(status: StatusCode, markup: Markup) -> Response {
    let mut response = (status, markup.into_string()).into_response();
    let headers = response.headers_mut();
    headers.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("text/html; charset=utf-8"),
    );
    headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    headers.insert(
        header::CONTENT_SECURITY_POLICY,
        HeaderValue::from_static(
            "default-src 'none'; style-src 'unsafe-inline'; img-src 'self' data:; \
             form-action 'self'; frame-ancestors 'none'; base-uri 'none'",
        ),
    );
    headers.insert(header::X_FRAME_OPTIONS, HeaderValue::from_static("DENY"));
    headers.insert(
        header::REFERRER_POLICY,
        HeaderValue::from_static("same-origin"),
    );
    headers.insert(
        HeaderName::from_static("x-content-type-options"),
        HeaderValue::from_static("nosniff"),
    );
    response
}

use http::HeaderName;

fn now() -> i64 {
    chrono::Utc::now().timestamp()
}

impl Console {
    fn operator(&self, headers: &HeaderMap) -> Option<Operator> {
        let cookies = headers.get_all(header::COOKIE);
        cookies
            .iter()
            .filter_map(|v| v.to_str().ok())
            .flat_map(|v| v.split(';'))
            .filter_map(|pair| pair.trim().split_once('='))
            .filter(|(name, _)| *name == COOKIE)
            .find_map(|(_, value)| self.sessions.check(value, now()))
    }

    /// A POST is acted on only from this origin, with the sign-in's CSRF token.
    fn permits(&self, headers: &HeaderMap, csrf: &str) -> Result<Operator, Box<Response>> {
        if !same_origin(headers) {
            return Err(Box::new(html(
                StatusCode::FORBIDDEN,
                pages::login(Some("This form was sent from another site.")),
            )));
        }
        let Some(operator) = self.operator(headers) else {
            return Err(Box::new(Redirect::to("/ops").into_response()));
        };
        if !self.sessions.csrf_matches(&operator, csrf) {
            return Err(Box::new(html(
                StatusCode::FORBIDDEN,
                pages::login(Some("The form expired; sign in again.")),
            )));
        }
        Ok(operator)
    }

    async fn overview(&self, operator: &Operator, message: Option<(&str, bool)>) -> Response {
        let mut apps = Vec::new();
        for (app, health, _) in crate::health::probe(&self.health).await {
            let health = match health {
                Health::Ok => ("ok", String::new()),
                Health::Starting(why) => ("starting", why),
                Health::Down(why) => ("down", why),
            };
            apps.push(pages::AppRow {
                app: app.to_string(),
                health,
                readings: Vec::new(),
                actions: Vec::new(),
            });
        }
        let row = |apps: &mut Vec<pages::AppRow>, app: &str| -> usize {
            match apps.iter().position(|a| a.app == app) {
                Some(i) => i,
                None => {
                    apps.push(pages::AppRow {
                        app: app.to_string(),
                        health: ("ok", "no upstream check".into()),
                        readings: Vec::new(),
                        actions: Vec::new(),
                    });
                    apps.len() - 1
                }
            }
        };
        for (app, readings) in &self.readings {
            let i = row(&mut apps, app);
            for reading in readings().await {
                let labels: Vec<String> = reading
                    .labels
                    .iter()
                    .map(|(k, v)| format!("{k}={v}"))
                    .collect();
                let name = if labels.is_empty() {
                    reading.name.to_string()
                } else {
                    format!("{}{{{}}}", reading.name, labels.join(","))
                };
                apps[i]
                    .readings
                    .push((name, shown(reading.name, reading.value)));
            }
        }
        for (app, action) in &self.actions {
            let i = row(&mut apps, app);
            apps[i].actions.push((action.name, action.label));
        }
        let since = (chrono::Utc::now() - chrono::Duration::hours(24))
            .to_rfc3339_opts(chrono::SecondsFormat::Secs, true);
        let filter = trail::Filter {
            since,
            ..trail::Filter::default()
        };
        let events = trail::read(&self.config, &filter, 20_000).await;
        let paths: Vec<&str> = self.endpoints.iter().map(|e| e.path.as_str()).collect();
        let clients: Vec<_> = trail::client_stats(&events, &paths, chrono::Utc::now())
            .into_iter()
            .collect();
        let write_tools: Vec<&str> = self
            .endpoints
            .iter()
            .flat_map(|e| e.listings.iter())
            .filter(|t| t.annotations.as_ref().and_then(|a| a.read_only_hint) == Some(false))
            .map(|t| t.name.as_ref())
            .collect();
        let writes: Vec<_> = trail::write_outcomes(&events, &write_tools)
            .into_iter()
            .collect();
        let endpoints = self.endpoint_rows.get_or_init(|| self.endpoint_rows());
        html(
            StatusCode::OK,
            pages::overview(
                &self.sessions.csrf(operator),
                message,
                &apps,
                endpoints,
                &clients,
                &writes,
            ),
        )
    }

    fn endpoint_rows(&self) -> Vec<pages::EndpointRow> {
        let encoder = tiktoken_rs::o200k_base().ok();
        self.endpoints
            .iter()
            .map(|e| {
                let listed = serde_json::json!({ "tools": &*e.listings }).to_string();
                pages::EndpointRow {
                    path: e.path.clone(),
                    auth: e.auth.clone(),
                    session: e.session.clone(),
                    tools: e.listings.iter().map(|t| t.name.to_string()).collect(),
                    list_tokens: encoder
                        .as_ref()
                        .map(|bpe| bpe.encode_ordinary(&listed).len())
                        .unwrap_or(0),
                }
            })
            .collect()
    }

    async fn oauth_page(&self, operator: &Operator, message: Option<(&str, bool)>) -> Response {
        let csrf = self.sessions.csrf(operator);
        let Some(server) = &self.oauth else {
            return html(StatusCode::OK, pages::oauth(&csrf, message, None, &[]));
        };
        let families: Vec<pages::FamilyRow> = match server.store.live_families(500).await {
            Ok(families) => families
                .into_iter()
                .map(|f| pages::FamilyRow {
                    family: f.family,
                    client_id: f.grant.client_id,
                    user: f.grant.user.unwrap_or_default(),
                    scope: f.grant.scope,
                    expires: minute(f.expires_at),
                })
                .collect(),
            Err(error) => {
                tracing::error!(%error, "ops: cannot list token families");
                Vec::new()
            }
        };
        let rows: Vec<pages::ClientRow> = match server.store.clients().await {
            Ok(clients) => clients
                .into_iter()
                .map(|(client, last_used)| pages::ClientRow {
                    redirect_hosts: {
                        let mut hosts: Vec<String> = client
                            .redirect_uris
                            .iter()
                            .filter_map(|u| reqwest_host(u))
                            .collect();
                        hosts.dedup();
                        hosts
                    },
                    client_id: client.client_id,
                    name: client.name,
                    source: match client.source.as_str() {
                        "dcr" => "itself (DCR)".into(),
                        other => other.to_string(),
                    },
                    last_used: if last_used > 0 {
                        minute(last_used)
                    } else {
                        "never".into()
                    },
                })
                .collect(),
            Err(error) => {
                tracing::error!(%error, "ops: cannot list OAuth clients");
                let message = Some(("The OAuth store does not answer.", true));
                return html(
                    StatusCode::OK,
                    pages::oauth(&csrf, message, Some(&[]), &families),
                );
            }
        };
        html(
            StatusCode::OK,
            pages::oauth(&csrf, message, Some(&rows), &families),
        )
    }

    /// Counts a wrong token; false when sign-in is paused for the rest of the minute.
    fn may_try(&self) -> bool {
        let mut failures = self.failures.lock().unwrap_or_else(|p| p.into_inner());
        if failures.0.elapsed() >= Duration::from_secs(60) {
            *failures = (Instant::now(), 0);
        }
        failures.1 < SIGN_IN_TRIES_PER_MINUTE
    }

    fn failed(&self) {
        let mut failures = self.failures.lock().unwrap_or_else(|p| p.into_inner());
        failures.1 += 1;
    }
}

/// A reading as a person reads it: times as dates, ages in minutes.
fn shown(name: &str, value: f64) -> String {
    if name.ends_with("_timestamp_seconds") {
        if value <= 0.0 {
            return "never".into();
        }
        return minute(value as i64);
    }
    if name.ends_with("_seconds") {
        return format!("{:.0} min", value / 60.0);
    }
    format!("{value}")
}

/// A Unix time as the console shows every time: to the minute, in UTC.
fn minute(seconds: i64) -> String {
    chrono::DateTime::from_timestamp(seconds, 0)
        .map(|t| t.format("%Y-%m-%d %H:%M UTC").to_string())
        .unwrap_or_default()
}

fn reqwest_host(uri: &str) -> Option<String> {
    let rest = uri.split_once("://")?.1;
    let host = rest.split(['/', '?', '#']).next()?;
    Some(host.rsplit('@').next()?.to_string())
}

/// The request's `Origin`, when a browser sent one, is this server's (the `Host` it was sent to).
fn same_origin(headers: &HeaderMap) -> bool {
    let Some(origin) = headers.get(header::ORIGIN).and_then(|v| v.to_str().ok()) else {
        return true;
    };
    let host = headers
        .get(header::HOST)
        .and_then(|v| v.to_str().ok())
        .unwrap_or("");
    let origin_host = origin.split_once("://").map(|(_, h)| h).unwrap_or("");
    !host.is_empty() && origin_host.eq_ignore_ascii_case(host)
}

async fn overview(State(console): State<Arc<Console>>, headers: HeaderMap) -> Response {
    match console.operator(&headers) {
        Some(operator) => console.overview(&operator, None).await,
        None => html(StatusCode::OK, pages::login(None)),
    }
}

#[derive(Deserialize)]
struct SignIn {
    #[serde(default)]
    token: String,
}

async fn login(
    State(console): State<Arc<Console>>,
    headers: HeaderMap,
    Form(form): Form<SignIn>,
) -> Response {
    if !same_origin(&headers) {
        return html(
            StatusCode::FORBIDDEN,
            pages::login(Some("This form was sent from another site.")),
        );
    }
    if !console.may_try() {
        return html(
            StatusCode::TOO_MANY_REQUESTS,
            pages::login(Some("Too many wrong tokens; try again in a minute.")),
        );
    }
    if !Sessions::token_matches(&console.token, form.token.trim()) {
        console.failed();
        tracing::warn!("ops: a sign-in with a wrong token");
        return html(
            StatusCode::UNAUTHORIZED,
            pages::login(Some("That is not the ops token.")),
        );
    }
    tracing::info!("ops: an operator signed in");
    let cookie = format!(
        "{COOKIE}={}; Path=/ops; HttpOnly; SameSite=Strict; Max-Age={}",
        console.sessions.open(now()),
        session::LIFETIME_SECONDS
    );
    let mut response = Redirect::to("/ops").into_response();
    if let Ok(cookie) = HeaderValue::from_str(&cookie) {
        response.headers_mut().insert(header::SET_COOKIE, cookie);
    }
    response
}

#[derive(Deserialize)]
struct Csrf {
    #[serde(default)]
    csrf: String,
}

async fn logout(
    State(console): State<Arc<Console>>,
    headers: HeaderMap,
    Form(form): Form<Csrf>,
) -> Response {
    if let Err(refused) = console.permits(&headers, &form.csrf) {
        return *refused;
    }
    let mut response = Redirect::to("/ops").into_response();
    response.headers_mut().insert(
        header::SET_COOKIE,
        HeaderValue::from_static("concierge_ops=; Path=/ops; HttpOnly; SameSite=Strict; Max-Age=0"),
    );
    response
}

/// The outcomes the audit writes, for the filter's list.
const OUTCOMES: &[&str] = &[
    "ok",
    "invalid_argument",
    "not_found",
    "rejected",
    "internal_error",
    "unknown_tool",
    "rate_limited",
    "unauthorized",
    "forbidden",
    "session_refused",
    "misconfigured",
    "cancelled",
    "deadline_exceeded",
];

async fn audit(
    State(console): State<Arc<Console>>,
    headers: HeaderMap,
    Query(filter): Query<trail::Filter>,
) -> Response {
    let Some(operator) = console.operator(&headers) else {
        return Redirect::to("/ops").into_response();
    };
    let csrf = console.sessions.csrf(&operator);
    if let Some(problem) = filter.problem() {
        return html(
            StatusCode::BAD_REQUEST,
            pages::audit(&csrf, &filter, Some(&problem), &[], OUTCOMES),
        );
    }
    let events = trail::read(&console.config, &filter, 200).await;
    html(
        StatusCode::OK,
        pages::audit(&csrf, &filter, None, &events, OUTCOMES),
    )
}

async fn oauth(State(console): State<Arc<Console>>, headers: HeaderMap) -> Response {
    match console.operator(&headers) {
        Some(operator) => console.oauth_page(&operator, None).await,
        None => Redirect::to("/ops").into_response(),
    }
}

#[derive(Deserialize)]
struct Revoke {
    #[serde(default)]
    csrf: String,
    #[serde(default)]
    client_id: String,
}

async fn revoke(
    State(console): State<Arc<Console>>,
    headers: HeaderMap,
    Form(form): Form<Revoke>,
) -> Response {
    let operator = match console.permits(&headers, &form.csrf) {
        Ok(operator) => operator,
        Err(refused) => return *refused,
    };
    let Some(server) = &console.oauth else {
        return console.oauth_page(&operator, None).await;
    };
    let message = match server.store.delete_client(&form.client_id).await {
        Ok(true) => {
            tracing::warn!(client = %form.client_id, "ops: OAuth client revoked");
            (
                format!(
                    "Client {} removed; its refresh tokens are revoked.",
                    form.client_id
                ),
                false,
            )
        }
        Ok(false) => (format!("No client {}.", form.client_id), true),
        Err(error) => {
            tracing::error!(%error, "ops: revoking an OAuth client failed");
            (
                "The OAuth store does not answer; nothing was changed.".into(),
                true,
            )
        }
    };
    console
        .oauth_page(&operator, Some((&message.0, message.1)))
        .await
}

#[derive(Deserialize)]
struct RevokeFamily {
    #[serde(default)]
    csrf: String,
    #[serde(default)]
    family: String,
}

async fn revoke_family(
    State(console): State<Arc<Console>>,
    headers: HeaderMap,
    Form(form): Form<RevokeFamily>,
) -> Response {
    let operator = match console.permits(&headers, &form.csrf) {
        Ok(operator) => operator,
        Err(refused) => return *refused,
    };
    let Some(server) = &console.oauth else {
        return console.oauth_page(&operator, None).await;
    };
    // Revoking an unknown family changes nothing; the server logs a store failure.
    server.revoke_family(&form.family).await;
    tracing::warn!("ops: a token family revoked");
    console
        .oauth_page(
            &operator,
            Some((
                "Token family revoked: its refresh token and access tokens no longer work.",
                false,
            )),
        )
        .await
}

#[derive(Deserialize)]
struct RunAction {
    #[serde(default)]
    csrf: String,
    #[serde(default)]
    app: String,
    #[serde(default)]
    action: String,
}

async fn action(
    State(console): State<Arc<Console>>,
    headers: HeaderMap,
    Form(form): Form<RunAction>,
) -> Response {
    let operator = match console.permits(&headers, &form.csrf) {
        Ok(operator) => operator,
        Err(refused) => return *refused,
    };
    let Some((_, action)) = console
        .actions
        .iter()
        .find(|(app, a)| *app == form.app && a.name == form.action)
    else {
        return console
            .overview(&operator, Some(("No such action.", true)))
            .await;
    };
    tracing::info!(app = %form.app, action = action.name, "ops: action started");
    let running = tokio::spawn((action.run)());
    let message = match tokio::time::timeout(ACTION_WAIT, running).await {
        Ok(Ok(Ok(report))) => (format!("{}: {report}", action.label), false),
        Ok(Ok(Err(why))) => (format!("{}: {why}", action.label), true),
        Ok(Err(_)) => (
            format!("{}: failed; the log has the details", action.label),
            true,
        ),
        Err(_) => (
            format!(
                "{}: still running after {} s; it goes on in the background",
                action.label,
                ACTION_WAIT.as_secs()
            ),
            false,
        ),
    };
    console
        .overview(&operator, Some((&message.0, message.1)))
        .await
}
