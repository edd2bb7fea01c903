//! `/metrics`: the registry, plus what is read at the moment of a scrape (open sessions and
//! connections, audit queues, process memory, the apps' own readings, their upstreams' health).
//!
//! Served on its own listener (`[metrics] listen`) or on the main one behind a bearer token
//! (`[metrics] token`); never open on the public port.

use std::sync::Arc;

use axum::extract::State;
use axum::response::{IntoResponse, Response};
use concierge_core::{Health, HealthCheck, Readings};
use http::{HeaderMap, HeaderValue, StatusCode, header};

use crate::audit::AuditSink;
use crate::sessions::SessionTable;
use crate::telemetry::metrics;
use crate::telemetry::snapshot::Sample;

/// What a scrape reads besides the registry.
pub struct Scrape {
    pub sessions: Vec<(String, Arc<SessionTable>)>,
    pub sinks: Vec<(String, AuditSink)>,
    pub readings: Vec<(String, Readings)>,
    pub health: Vec<(String, HealthCheck)>,
    /// Required as `Authorization: Bearer` when `/metrics` is on the main listener.
    pub token: Option<String>,
    /// One scrape at a time: they share the snapshot.
    pub busy: tokio::sync::Mutex<()>,
}

/// `GET /metrics`.
pub async fn serve(State(scrape): State<Arc<Scrape>>, headers: HeaderMap) -> Response {
    if let Some(token) = &scrape.token {
        let given = headers
            .get(header::AUTHORIZATION)
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.strip_prefix("Bearer "))
            .unwrap_or("");
        if !bool::from(subtle::ConstantTimeEq::ct_eq(
            given.as_bytes(),
            token.as_bytes(),
        )) {
            let mut response =
                (StatusCode::UNAUTHORIZED, "metrics need the metrics token\n").into_response();
            response.headers_mut().insert(
                header::WWW_AUTHENTICATE,
                HeaderValue::from_static("Bearer realm=\"metrics\""),
            );
            return response;
        }
    }
    let Some(metrics) = metrics::get() else {
        return StatusCode::NOT_FOUND.into_response();
    };
    let _one = scrape.busy.lock().await;
    let samples = scrape.read().await;
    let Some(text) = metrics.encode_with(samples) else {
        return StatusCode::INTERNAL_SERVER_ERROR.into_response();
    };
    let mut response = text.into_response();
    response.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/openmetrics-text; version=1.0.0; charset=utf-8"),
    );
    response
}

impl Scrape {
    async fn read(&self) -> Vec<Sample> {
        let mut samples = Vec::new();
        for (endpoint, table) in &self.sessions {
            samples.push(
                Sample::gauge(
                    "concierge_sessions_open",
                    "Stateful MCP sessions open on this instance.",
                    table.len() as f64,
                )
                .label("endpoint", endpoint),
            );
        }
        let connections = crate::connections::counts();
        samples.push(Sample::gauge(
            "concierge_connections_open",
            "HTTP connections open on this instance.",
            connections.open as f64,
        ));
        samples.push(Sample::counter(
            "concierge_connections_refused",
            "Connections closed at once because a connection cap was reached.",
            connections.refused as f64,
        ));
        for (name, sink) in &self.sinks {
            samples.push(
                Sample::gauge(
                    "concierge_audit_queue_depth",
                    "Audit events waiting to be written.",
                    sink.queued() as f64,
                )
                .label("sink", name),
            );
            samples.push(
                Sample::counter(
                    "concierge_audit_dropped",
                    "Audit events dropped because the writer's queue was full.",
                    sink.dropped() as f64,
                )
                .label("sink", name),
            );
        }
        for (app, health, _) in crate::health::probe(&self.health).await {
            let (up, state) = match health {
                Health::Ok => (1.0, "ok"),
                Health::Starting(_) => (0.0, "starting"),
                Health::Down(_) => (0.0, "down"),
            };
            samples.push(
                Sample::gauge(
                    "concierge_app_up",
                    "1 when the app's upstream answers its health check (as /health reports it).",
                    up,
                )
                .label("app", app)
                .label("state", state),
            );
        }
        for (app, readings) in &self.readings {
            for reading in readings().await {
                let mut sample = Sample::gauge(
                    &format!("concierge_{app}_{}", reading.name),
                    reading.help,
                    reading.value,
                );
                for (name, value) in &reading.labels {
                    sample = sample.label(name, value);
                }
                samples.push(sample);
            }
        }
        samples.extend(process());
        // The encoder writes one descriptor per run of one name.
        samples.sort_by(|a, b| a.name.cmp(&b.name));
        samples
    }
}

/// The process's memory, CPU and descriptors, as the Prometheus client libraries name them.
fn process() -> Vec<Sample> {
    let mut samples = Vec::new();
    #[cfg(target_os = "linux")]
    {
        // SAFETY: sysconf only reads a constant of the system.
        let ticks = unsafe { libc::sysconf(libc::_SC_CLK_TCK) }.max(1) as f64;
        if let Some(resident) = crate::memory::resident_bytes() {
            samples.push(Sample::gauge(
                "process_resident_memory_bytes",
                "Resident memory size in bytes.",
                resident as f64,
            ));
        }
        if let Ok(stat) = std::fs::read_to_string("/proc/self/stat")
            && let Some((_, after)) = stat.rsplit_once(')')
        {
            // Fields after the command name: utime and stime are the 12th and 13th.
            let fields: Vec<&str> = after.split_whitespace().collect();
            let tick = |i: usize| fields.get(i).and_then(|f| f.parse::<f64>().ok());
            if let (Some(user), Some(system)) = (tick(11), tick(12)) {
                samples.push(Sample::counter(
                    "process_cpu_seconds",
                    "Total user and system CPU time spent in seconds.",
                    (user + system) / ticks,
                ));
            }
        }
        if let Ok(entries) = std::fs::read_dir("/proc/self/fd") {
            samples.push(Sample::gauge(
                "process_open_fds",
                "Number of open file descriptors.",
                entries.count() as f64,
            ));
        }
    }
    samples
}
