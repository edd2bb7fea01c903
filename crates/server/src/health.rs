//! `/health`: the server is up, and how each app's upstream and each shared store is doing.

use std::sync::Arc;

use axum::Json;
use axum::response::IntoResponse;
use serde_json::json;

/// How the config's last change went (`crate::reload::Status`), as `/health` shows it.
pub type ConfigStatus = Arc<dyn Fn() -> serde_json::Value + Send + Sync>;

/// The apps' upstream checks, and their last report.
pub(crate) struct Health {
    /// A server that can be reloaded says how its config's last change went.
    pub config: Option<ConfigStatus>,
    pub checks: Vec<(String, concierge_core::HealthCheck)>,
    /// The apps whose checks are reported but do not count (`optional`): the deployment is
    /// whole without them.
    pub optional: std::collections::BTreeSet<String>,
    /// The shared stores (`[state]`): one that is down makes the status `degraded` and says
    /// which; limits then refuse or pass as `limits_when_down` says.
    pub stores: Vec<(String, concierge_core::HealthCheck)>,
    /// How long one round of probes answers (`[server] health_cache`).
    pub cache: std::time::Duration,
    pub last: tokio::sync::Mutex<Option<(std::time::Instant, serde_json::Value)>>,
}

/// The server is up; each app's upstream is reported beside it. A down upstream makes the status
/// `degraded`, still with 200: restarting this server would not bring the upstream back, and a
/// load balancer that drops every instance would turn one outage into two. An app still loading
/// what it answers from makes the status `starting`, with 503: an instance that would answer
/// "still loading" is not ready for traffic (a readiness probe waits for it). An optional app
/// is reported, marked so, and counts for neither.
pub(crate) async fn health(state: Arc<Health>) -> axum::response::Response {
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
        return health_response(with_config(&state, report.clone()));
    }
    let (mut reports, stores) =
        futures::future::join(probe_all(&state.checks), probe_all(&state.stores)).await;
    for (name, report) in &mut reports {
        if state.optional.contains(name) {
            report["optional"] = true.into();
        }
    }
    let counted = |(name, _): &&(String, serde_json::Value)| !state.optional.contains(name);
    let any = |status: &str| {
        (reports.iter().filter(counted).chain(&stores)).any(|(_, r)| r["status"] == status)
    };
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
    health_response(with_config(&state, body))
}

/// The report with the config's status, read now (a rejected reload shows at once, with 200:
/// the running config still serves).
fn with_config(state: &Health, mut body: serde_json::Value) -> serde_json::Value {
    if let Some(config) = &state.config {
        body["config"] = config();
    }
    body
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
