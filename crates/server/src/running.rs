//! Serving a deployment over HTTP: its listeners, the jobs that run beside them, and the
//! triggers that reload it — the floor above `serve.rs` (routes) and `reload/` (the swap).

use std::net::SocketAddr;
use std::sync::Arc;

/// Serves `deployment` over HTTP on `listener` (bound by [`crate::load`]) until Ctrl-C /
/// SIGTERM, reloading it on SIGHUP, on a change of its files and on `concierge reload`.
/// `ready` hears the bound address (port 0 works).
pub async fn serve_http(
    deployment: Arc<crate::reload::Deployment>,
    listener: tokio::net::TcpListener,
    ready: impl FnOnce(SocketAddr),
) -> std::io::Result<()> {
    let platform = deployment.current();
    for warning in &platform.warnings {
        tracing::error!(%warning, "endpoint misconfigured");
    }
    platform
        .start_background(None)
        .await
        .map_err(std::io::Error::other)?;
    platform.start_tool_updates().await;
    if platform.oauth.as_ref().is_some_and(|o| o.builtin.is_some()) {
        // Self-registered clients pile up (claude.ai registers on every connect): collect the
        // unused ones hourly, as the deployment serving then says (a reload may change how long
        // unused clients are kept).
        let deployment = deployment.clone();
        tokio::spawn(async move {
            let mut hourly = tokio::time::interval(std::time::Duration::from_secs(3600));
            loop {
                hourly.tick().await;
                let platform = deployment.current();
                let Some(server) = platform.oauth.as_ref().and_then(|o| o.builtin.clone()) else {
                    continue;
                };
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
    let stop = deployment.stop().clone();
    let server = &platform.config.server;
    let limits = crate::connections::ConnectionLimits {
        header_read_timeout: server.header_read_timeout,
        keep_alive_timeout: server.keep_alive_timeout,
        max_connections: server.max_connections,
        max_connections_per_peer: server.max_connections_per_peer,
    };
    if platform.config.metrics.enabled() {
        crate::telemetry::metrics::enable();
        if let Some(listen) = &platform.config.metrics.listen {
            let addr = crate::config::parse_listen(listen)
                .map_err(|e| std::io::Error::other(format!("metrics.listen: {}", e.message)))?;
            let bound = tokio::net::TcpListener::bind(addr).await.map_err(|e| {
                std::io::Error::other(format!("metrics.listen: cannot listen on {addr}: {e}"))
            })?;
            let _ = platform.metrics_addr.set(bound.local_addr()?);
            // The same caps and timers as the main listener: a stranger's idle sockets on this
            // port must not hold more than they could there.
            tokio::spawn(crate::connections::serve(
                bound,
                deployment.metrics_routes.clone(),
                limits,
                stop.child_token(),
                std::time::Duration::from_secs(1),
            ));
        }
    }
    let triggers = crate::reload::triggers::start(&deployment, &platform)?;
    ready(listener.local_addr()?);
    let signalled = stop.clone();
    tokio::spawn(async move {
        shutdown_signal().await;
        signalled.cancel();
    });
    // The accept loop gives every request its peer address (`ConnectInfo<SocketAddr>`): what
    // the authorization server limits registrations, sign-in pages and password tries by.
    let served = crate::connections::serve(
        listener,
        deployment.routes(),
        limits,
        stop,
        std::time::Duration::from_secs(10),
    )
    .await;
    drop(triggers);
    served
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
