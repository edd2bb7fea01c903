//! Mounting endpoints on axum and running them over HTTP or stdio.

use std::net::SocketAddr;
use std::sync::Arc;

use axum::Json;
use axum::Router;
use axum::response::IntoResponse;
use axum::routing::get;
use concierge_core::Caller;
use rmcp::ServiceExt;
use rmcp::transport::{StreamableHttpServerConfig, StreamableHttpService};
use serde_json::json;
use tokio_util::sync::CancellationToken;

use crate::config::SessionMode;
use crate::handler::EndpointHandler;
use crate::pipeline::guard;
use crate::platform::{BuiltEndpoint, Mounted, Platform};
use crate::session_streams::SessionStreams;

/// The whole HTTP surface: every endpoint, and `/health`. Cancelling `stop` ends every session
/// and open stream, so a shutdown does not wait for clients that never hang up.
pub fn router(platform: &Platform, stop: &CancellationToken) -> Router {
    let health_state = Arc::new(Health {
        checks: platform.health.clone(),
        stores: platform.stores.clone(),
        cache: platform.config.server.health_cache,
        last: tokio::sync::Mutex::new(None),
    });
    // What strangers post to the authorization server (forms, registrations) is small: read
    // whole within the body time, at most 64 KiB (its endpoints cap lower themselves).
    let small = crate::pipeline::body::BodyLimits {
        max_bytes: 64 * 1024,
        read_timeout: platform.config.server.body_read_timeout,
    };
    let mut public = Router::new().route("/health", get(move || health(health_state.clone())));
    let mut router = Router::new();
    for built in &platform.endpoints {
        router = router.merge(endpoint_router(platform, built, stop.child_token()));
    }
    if let Some(setup) = &platform.oauth {
        if let Some(server) = &setup.builtin {
            public = public.merge(concierge_oauth::router(server.clone()));
        }
        public = public.merge(protected_resources(platform, setup));
    }
    if let Some(ops) = crate::ops::router(platform) {
        public = public.merge(ops);
    }
    // Endpoints read their bodies in the guard, after authentication.
    router.merge(public.layer(axum::middleware::from_fn_with_state(
        small,
        crate::pipeline::body::read_whole,
    )))
}

/// RFC 9728 metadata for every OAuth endpoint, at the path-suffixed well-known URL, and the
/// first one also at the bare well-known URL (clients try both).
fn protected_resources(platform: &Platform, setup: &crate::platform::OAuthSetup) -> Router {
    let mut router = Router::new();
    let mut first = true;
    for built in &platform.endpoints {
        let crate::config::AuthSection::Oauth { scopes } = &built.section.auth else {
            continue;
        };
        let mut supported = setup.scopes.clone();
        for scope in scopes {
            if !supported.contains(scope) {
                supported.push(scope.clone());
            }
        }
        let document = json!({
            "resource": format!("{}{}", setup.base, built.section.path),
            "authorization_servers": [setup.verifier.authorization_server()],
            "scopes_supported": supported,
            "bearer_methods_supported": ["header"],
            "resource_name": "concierge",
        });
        let handler = move || {
            let document = document.clone();
            async move {
                let mut response = Json(document).into_response();
                response.headers_mut().insert(
                    http::header::ACCESS_CONTROL_ALLOW_ORIGIN,
                    http::HeaderValue::from_static("*"),
                );
                response
            }
        };
        let path = format!(
            "/.well-known/oauth-protected-resource{}",
            built.section.path
        );
        router = router.route(&path, get(handler.clone()));
        if first {
            router = router.route("/.well-known/oauth-protected-resource", get(handler));
            first = false;
        }
    }
    router
}

/// The apps' upstream checks, and their last report.
struct Health {
    checks: Vec<(String, concierge_core::HealthCheck)>,
    /// The shared stores (`[state]`): one that is down makes the status `degraded` and says
    /// which; limits then refuse or pass as `limits_when_down` says.
    stores: Vec<(String, concierge_core::HealthCheck)>,
    /// How long one round of probes answers (`[server] health_cache`).
    cache: std::time::Duration,
    last: tokio::sync::Mutex<Option<(std::time::Instant, serde_json::Value)>>,
}

/// The server is up; each app's upstream is reported beside it. A down upstream makes the status
/// `degraded`, still with 200: restarting this server would not bring the upstream back, and a
/// load balancer that drops every instance would turn one outage into two. An app still loading
/// what it answers from makes the status `starting`, with 503: an instance that would answer
/// "still loading" is not ready for traffic (a readiness probe waits for it).
async fn health(state: Arc<Health>) -> axum::response::Response {
    // One probe round at a time; callers meanwhile wait for it and share its report.
    let mut last = state.last.lock().await;
    // A starting app is asked again after a second at most: it may be ready any moment.
    let fresh = |report: &serde_json::Value| {
        if report["status"] == "starting" {
            state.cache.min(std::time::Duration::from_secs(1))
        } else {
            state.cache
        }
    };
    if let Some((at, report)) = last.as_ref()
        && at.elapsed() < fresh(report)
    {
        return health_response(report.clone());
    }
    let (reports, stores) =
        futures::future::join(probe_all(&state.checks), probe_all(&state.stores)).await;
    let any = |status: &str| (reports.iter().chain(&stores)).any(|(_, r)| r["status"] == status);
    let status = if any("starting") {
        "starting"
    } else if any("down") {
        "degraded"
    } else {
        "ok"
    };
    let mut body = json!({
        "status": status,
        "version": env!("CARGO_PKG_VERSION"),
    });
    if !reports.is_empty() {
        body["upstreams"] = serde_json::Value::Object(reports.into_iter().collect());
    }
    if !stores.is_empty() {
        body["stores"] = serde_json::Value::Object(stores.into_iter().collect());
    }
    *last = Some((std::time::Instant::now(), body.clone()));
    health_response(body)
}

/// Every check at once, each within 3 s, as `{name: {"status", …}}` entries.
async fn probe_all(
    checks: &[(String, concierge_core::HealthCheck)],
) -> Vec<(String, serde_json::Value)> {
    use concierge_core::Health as App;
    probe(checks)
        .await
        .into_iter()
        .map(|(name, result, took)| {
            let report = match result {
                App::Ok => json!({"status": "ok", "latencyMs": took.as_millis() as u64}),
                App::Starting(reason) => json!({"status": "starting", "reason": reason}),
                App::Down(reason) => json!({"status": "down", "reason": reason}),
            };
            (name.to_string(), report)
        })
        .collect()
}

/// Every check at once, each given 3 s (a check that does not answer by then is down), with
/// how long each took: what `/health`, `/metrics` and the ops console report.
pub(crate) async fn probe(
    checks: &[(String, concierge_core::HealthCheck)],
) -> Vec<(&str, concierge_core::Health, std::time::Duration)> {
    let probes = checks.iter().map(|(name, check)| async move {
        let started = std::time::Instant::now();
        let result = tokio::time::timeout(std::time::Duration::from_secs(3), check())
            .await
            .unwrap_or_else(|_| concierge_core::Health::Down("no answer within 3 s".into()));
        (name.as_str(), result, started.elapsed())
    });
    futures::future::join_all(probes).await
}

fn health_response(body: serde_json::Value) -> axum::response::Response {
    let status = if body["status"] == "starting" {
        http::StatusCode::SERVICE_UNAVAILABLE
    } else {
        http::StatusCode::OK
    };
    (status, Json(body)).into_response()
}

fn endpoint_router(platform: &Platform, built: &BuiltEndpoint, stop: CancellationToken) -> Router {
    let section = &built.section;
    let server = &platform.config.server;
    let stateful = section.session == SessionMode::Stateful;
    let stop_legacy = stop.child_token();
    // Host and Origin are decided by the guard (`origin.rs`), once for every transport.
    let config = StreamableHttpServerConfig::default()
        .disable_allowed_hosts()
        .disable_allowed_origins()
        .with_legacy_session_mode(stateful)
        .with_json_response(!stateful)
        .with_max_request_body_bytes(server.max_body_bytes)
        .with_cancellation_token(stop);
    let sessions = Arc::new(SessionStreams::new(
        built.guard.ids.clone(),
        &section.path,
        section.idle_timeout,
    ));
    built.guard.sessions.attach(sessions.clone());

    let router = match &built.mounted {
        Mounted::Tools => {
            let handler = EndpointHandler::http(built.guard.endpoint.clone());
            let service = StreamableHttpService::new(move || Ok(handler.clone()), sessions, config);
            // `/mcp` and `/mcp/` both answer, without a redirect (clients drop the body on 307).
            Router::new()
                .route_service(&section.path, service.clone())
                .route_service(&format!("{}/", section.path.trim_end_matches('/')), service)
        }
        Mounted::Handler { app } => match platform.handler_mount(app) {
            Some(mount) => mount(&section.path, config, sessions),
            None => Router::new(),
        },
    };
    let router = match (&built.guard.legacy, &built.mounted) {
        (Some(legacy), Mounted::Tools) => router.merge(crate::legacy_sse::routes(
            built.guard.endpoint.clone(),
            legacy.clone(),
            server,
            section.idle_timeout,
            section.session_caps(),
            stop_legacy,
        )),
        _ => router,
    };
    let router = router.layer(axum::middleware::from_fn_with_state(
        built.guard.clone(),
        guard,
    ));
    {
        // Browser clients (the Inspector, a web app of the deployment) preflight: answered before
        // authentication, and the headers they must read are exposed — to the allowed origins
        // only (`[server] allowed_origins`), the rule the guard applies to the requests too.
        use tower_http::cors::{AllowOrigin, CorsLayer};
        let browser = built.guard.browser.clone();
        router.layer(
            CorsLayer::new()
                .allow_origin(AllowOrigin::predicate(move |origin, _| {
                    origin.to_str().is_ok_and(|o| browser.origin_allowed(o))
                }))
                .allow_methods([http::Method::GET, http::Method::POST, http::Method::DELETE])
                .allow_headers([
                    http::header::AUTHORIZATION,
                    http::header::CONTENT_TYPE,
                    http::HeaderName::from_static("mcp-session-id"),
                    http::HeaderName::from_static("mcp-protocol-version"),
                    http::HeaderName::from_static("last-event-id"),
                ])
                .expose_headers([
                    http::header::WWW_AUTHENTICATE,
                    http::HeaderName::from_static("mcp-session-id"),
                ]),
        )
    }
}

/// Serves over HTTP on `listener` (bound by [`crate::load`]) until Ctrl-C / SIGTERM. `ready`
/// hears the bound address (port 0 works).
pub async fn serve_http(
    platform: &Platform,
    listener: tokio::net::TcpListener,
    ready: impl FnOnce(SocketAddr),
) -> std::io::Result<()> {
    for warning in &platform.warnings {
        tracing::error!(%warning, "endpoint misconfigured");
    }
    for job in platform
        .start_background()
        .await
        .map_err(std::io::Error::other)?
    {
        tokio::spawn(job);
    }
    if let Some(server) = platform.oauth.as_ref().and_then(|o| o.builtin.clone()) {
        // Self-registered clients pile up (claude.ai registers on every connect): collect the
        // unused ones hourly.
        tokio::spawn(async move {
            let mut hourly = tokio::time::interval(std::time::Duration::from_secs(3600));
            loop {
                hourly.tick().await;
                match server.collect_unused_clients().await {
                    Ok(0) => {}
                    Ok(removed) => {
                        tracing::info!(removed, "oauth: unused registered clients removed")
                    }
                    Err(error) => tracing::error!(%error, "oauth: client collection failed"),
                }
                // Anyone can open /authorize: expired pending sign-ins, codes and tokens go too.
                if let Err(error) = server.store.purge_expired().await {
                    tracing::error!(%error, "oauth: purging expired state failed");
                }
            }
        });
    }
    tokio::spawn(crate::memory::trim_periodically(
        std::time::Duration::from_secs(5),
    ));
    let stop = CancellationToken::new();
    let server = &platform.config.server;
    let limits = crate::connections::ConnectionLimits {
        header_read_timeout: server.header_read_timeout,
        keep_alive_timeout: server.keep_alive_timeout,
        max_connections: server.max_connections,
        max_connections_per_peer: server.max_connections_per_peer,
    };
    let mut app = router(platform, &stop);
    if platform.config.metrics.enabled() {
        crate::telemetry::metrics::enable();
        let scrape = metrics_scrape(platform);
        if let Some(listen) = &platform.config.metrics.listen {
            let addr = crate::config::parse_listen(listen)
                .map_err(|e| std::io::Error::other(format!("metrics.listen: {}", e.message)))?;
            let bound = tokio::net::TcpListener::bind(addr).await.map_err(|e| {
                std::io::Error::other(format!("metrics.listen: cannot listen on {addr}: {e}"))
            })?;
            let _ = platform.metrics_addr.set(bound.local_addr()?);
            let metrics = Router::new().route(
                "/metrics",
                get(crate::telemetry::scrape::serve).with_state(Arc::new(
                    crate::telemetry::scrape::Scrape {
                        token: None,
                        ..scrape
                    },
                )),
            );
            // The same caps and timers as the main listener: a stranger's idle sockets on this
            // port must not hold more than they could there.
            tokio::spawn(crate::connections::serve(
                bound,
                metrics,
                limits,
                stop.child_token(),
                std::time::Duration::from_secs(1),
            ));
        } else {
            app = app.route(
                "/metrics",
                get(crate::telemetry::scrape::serve).with_state(Arc::new(scrape)),
            );
        }
    }
    ready(listener.local_addr()?);
    let signalled = stop.clone();
    tokio::spawn(async move {
        shutdown_signal().await;
        signalled.cancel();
    });
    // The accept loop gives every request its peer address (`ConnectInfo<SocketAddr>`): what
    // the authorization server limits registrations, sign-in pages and password tries by.
    crate::connections::serve(
        listener,
        app,
        limits,
        stop,
        std::time::Duration::from_secs(10),
    )
    .await
}

/// What `/metrics` reads from the platform at each scrape.
fn metrics_scrape(platform: &Platform) -> crate::telemetry::scrape::Scrape {
    crate::telemetry::scrape::Scrape {
        sessions: platform
            .endpoints
            .iter()
            .filter(|e| e.guard.stateful)
            .map(|e| (e.section.path.clone(), e.guard.sessions.clone()))
            .collect(),
        sinks: platform
            .sinks()
            .map(|(name, sink)| (name.clone(), sink.clone()))
            .collect(),
        readings: platform.readings.clone(),
        health: platform.health.clone(),
        token: platform.config.metrics.token.clone(),
        busy: tokio::sync::Mutex::new(()),
    }
}

async fn shutdown_signal() {
    let interrupt = tokio::signal::ctrl_c();
    #[cfg(unix)]
    {
        let mut terminate =
            tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate())
                .expect("a SIGTERM handler can be installed");
        tokio::select! {
            _ = interrupt => {}
            _ = terminate.recv() => {}
        }
    }
    #[cfg(not(unix))]
    let _ = interrupt.await;
}

/// Serves one endpoint's tools over stdin/stdout, for desktop clients that start the server.
/// The caller is `stdio`: whoever can start the process is already trusted with its config.
pub async fn serve_stdio(platform: &Platform, path: &str) -> Result<(), String> {
    let built = platform.endpoint(path).ok_or_else(|| {
        let paths: Vec<_> = platform
            .endpoints
            .iter()
            .map(|e| e.section.path.as_str())
            .collect();
        format!("no endpoint `{path}`; the config has: {}", paths.join(", "))
    })?;
    let Mounted::Tools = &built.mounted else {
        return Err(format!(
            "endpoint `{path}` is a protocol handler; only tool endpoints are served over stdio"
        ));
    };
    let handler = EndpointHandler::local(built.guard.endpoint.clone(), Caller::client("stdio"));
    let running = handler
        .serve(rmcp::transport::stdio())
        .await
        .map_err(|e| format!("stdio session failed to start: {e}"))?;
    running
        .waiting()
        .await
        .map_err(|e| format!("stdio session ended with an error: {e}"))?;
    Ok(())
}
