//! Mounting endpoints on axum (the routes of one platform), and serving one over stdio.

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
use crate::platform::{BuiltEndpoint, Mounted, Platform};
use crate::transport::guard::guard;
use crate::transport::handler::EndpointHandler;
use crate::transport::session_streams::SessionStreams;

/// The whole HTTP surface: every endpoint, and `/health`. Cancelling `stop` ends every session
/// and open stream, so a shutdown does not wait for clients that never hang up.
pub fn router(platform: &Platform, stop: &CancellationToken) -> Router {
    router_with(platform, stop, crate::ops::Extras::default())
}

/// [`router`], with `/health` and the ops console saying how the config's last change went, and
/// the console's own actions.
fn router_with(platform: &Platform, stop: &CancellationToken, ops: crate::ops::Extras) -> Router {
    let config = ops.config_status.clone();
    let health_state = Arc::new(crate::health::Health {
        config,
        checks: platform.health.clone(),
        optional: platform.optional_apps(),
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
    let jwks = platform.identity.jwks();
    let mut public = Router::new()
        .route(
            "/health",
            get(move || crate::health::health(health_state.clone())),
        )
        .route(
            "/identity/jwks",
            get(move || std::future::ready(axum::Json(jwks.clone()))),
        );
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
    if let Some(ops) = crate::ops::router(platform, ops) {
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

fn endpoint_router(platform: &Platform, built: &BuiltEndpoint, stop: CancellationToken) -> Router {
    let section = &built.section;
    let server = &platform.config.server;
    let stateful = section.session == SessionMode::Stateful;
    // Made once per endpoint and kept by every reload that keeps its path: its sessions live
    // in them.
    let stop = built.guard.stop.get_or_init(|| stop).clone();
    let stop_legacy = stop.child_token();
    // Host and Origin are decided by the guard (`origin.rs`), once for every transport.
    let config = StreamableHttpServerConfig::default()
        .disable_allowed_hosts()
        .disable_allowed_origins()
        .with_legacy_session_mode(stateful)
        .with_json_response(!stateful)
        .with_max_request_body_bytes(server.max_body_bytes)
        .with_cancellation_token(stop);
    let sessions = built
        .guard
        .streams
        .get_or_init(|| {
            let streams = Arc::new(SessionStreams::new(
                built.guard.ids.clone(),
                &section.path,
                section.idle_timeout,
            ));
            built.guard.sessions.attach(streams.closer());
            streams
        })
        .clone();

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
        (Some(legacy), Mounted::Tools) => router.merge(crate::transport::legacy_sse::routes(
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
        let browser = built.guard.policy().browser.clone();
        router.layer(
            CorsLayer::new()
                .allow_origin(AllowOrigin::predicate(move |origin, _| {
                    origin.to_str().is_ok_and(|o| browser.origin_allowed(o))
                }))
                .allow_methods([http::Method::GET, http::Method::POST, http::Method::DELETE])
                // The headers a client of either revision sends: 2026-07-28 adds `Mcp-Method`,
                // `Mcp-Name` and a tool's own `Mcp-Param-*`, whose names no list can hold — so
                // the preflight's are mirrored (origins are already held to the allowed ones).
                .allow_headers(tower_http::cors::AllowHeaders::mirror_request())
                .expose_headers([
                    http::header::WWW_AUTHENTICATE,
                    http::HeaderName::from_static("mcp-session-id"),
                ]),
        )
    }
}

/// Everything the main listener serves for `platform`: [`router`] with `/health`'s config
/// status, and `/metrics` when it has no listener of its own.
pub(crate) fn app(
    platform: &Platform,
    stop: &CancellationToken,
    ops: crate::ops::Extras,
) -> Router {
    let app = router_with(platform, stop, ops);
    if platform.config.metrics.enabled() && platform.config.metrics.listen.is_none() {
        app.route(
            "/metrics",
            get(crate::scrape::serve).with_state(Arc::new(metrics_scrape(platform))),
        )
    } else {
        app
    }
}

/// What the `[metrics] listen` listener serves for `platform` (nothing else, no token).
pub(crate) fn metrics_router(platform: &Platform) -> Router {
    Router::new().route(
        "/metrics",
        get(crate::scrape::serve).with_state(Arc::new(crate::scrape::Scrape {
            token: None,
            ..metrics_scrape(platform)
        })),
    )
}

/// What `/metrics` reads from the platform at each scrape.
fn metrics_scrape(platform: &Platform) -> crate::scrape::Scrape {
    crate::scrape::Scrape {
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
    platform.start_tool_updates().await;
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
