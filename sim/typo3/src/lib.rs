//! **A simulator** of the TYPO3 content feed (`docs/contracts/typo3-content-feed.md`), serving
//! `examples/ski/feed/` on loopback so the demo has content at once. It is not TYPO3 and never
//! runs in production: production configs have no `[simulators.typo3]`, and a production build
//! (`--no-default-features`) has no simulators at all. The feed's paths and document keys are the
//! trips app's own ([`concierge_trips::content::feed`]): both sides read the one contract.
//!
//! It cannot be `www.ep-reisen.de`, so it serves the manifest with every site's hosts replaced by
//! its own address and every `contentUrl` pointed at `/_pages/<host>/<path>` on itself; the public
//! `url`s stay as they are.

use std::collections::HashMap;
use std::path::{Component, Path, PathBuf};
use std::sync::Arc;

use axum::Json;
use axum::extract::{Path as UrlPath, State};
use axum::http::{HeaderMap, StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use serde::Deserialize;
use serde_json::{Value, json};

use concierge_trips::content::feed::{DocKey, MANIFEST_PATH, RECORDS_PATH};

/// `[simulators.typo3]`.
#[derive(Debug, Clone, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SimulatorConfig {
    /// The loopback address the simulator listens on (port 0 picks a free one).
    pub listen: String,
    /// The feed directory: `manifest.json`, `records.json`, `pages/`.
    pub feed: PathBuf,
    /// The key it accepts in `X-Api-Key`.
    pub api_key: String,
}

struct Feed {
    manifest: Value,
    records: HashMap<DocKey, Value>,
    pages: PathBuf,
    api_key: String,
}

/// One request as the simulator saw it: when it arrived and when its answer was ready.
#[derive(Debug, Clone)]
pub struct Served {
    pub path: String,
    pub arrived: std::time::Instant,
    pub answered: std::time::Instant,
}

/// Every request served so far, in arrival order (for tests of the sync's load rules).
#[derive(Debug, Clone, Default)]
pub struct RequestLog(Arc<std::sync::Mutex<Vec<Served>>>);

impl RequestLog {
    pub fn requests(&self) -> Vec<Served> {
        self.0.lock().unwrap_or_else(|p| p.into_inner()).clone()
    }
}

/// Binds `listen` (loopback only; port 0 picks a free one), loads the feed, and returns the
/// address it got and the serving future.
pub async fn start(
    config: &SimulatorConfig,
) -> Result<
    (
        std::net::SocketAddr,
        impl std::future::Future<Output = ()> + Send + 'static,
    ),
    String,
> {
    let (addr, serving, _) = start_logged(config).await?;
    Ok((addr, serving))
}

/// As [`start`], with the log of the requests it serves.
pub async fn start_logged(
    config: &SimulatorConfig,
) -> Result<
    (
        std::net::SocketAddr,
        impl std::future::Future<Output = ()> + Send + 'static,
        RequestLog,
    ),
    String,
> {
    let log = RequestLog::default();
    let (listener, addr) = concierge_sim_common::bind(&config.listen).await?;
    let feed = Arc::new(load(&config.feed, &addr.to_string(), &config.api_key)?);
    tracing::info!(%addr, "TYPO3 content feed SIMULATOR listening (demo data from {})", config.feed.display());
    let app = axum::Router::new()
        .route(MANIFEST_PATH, get(manifest))
        .route(RECORDS_PATH, post(records))
        .route("/_pages/{*path}", get(page))
        .with_state(feed)
        .layer(axum::middleware::from_fn_with_state(log.clone(), record));
    let serving = async move {
        if let Err(error) = axum::serve(listener, app).await {
            tracing::error!(%error, "TYPO3 simulator stopped");
        }
    };
    Ok((addr, serving, log))
}

async fn record(
    State(log): State<RequestLog>,
    request: axum::extract::Request,
    next: axum::middleware::Next,
) -> Response {
    let path = request.uri().path().to_string();
    let arrived = std::time::Instant::now();
    let response = next.run(request).await;
    let served = Served {
        path,
        arrived,
        answered: std::time::Instant::now(),
    };
    log.0.lock().unwrap_or_else(|p| p.into_inner()).push(served);
    response
}

fn load(dir: &Path, addr: &str, api_key: &str) -> Result<Feed, String> {
    let read = |name: &str| -> Result<Value, String> {
        let path = dir.join(name);
        let text =
            std::fs::read_to_string(&path).map_err(|e| format!("{}: {e}", path.display()))?;
        serde_json::from_str(&text).map_err(|e| format!("{}: {e}", path.display()))
    };
    let mut manifest = read("manifest.json")?;
    if let Some(sites) = manifest.get_mut("sites").and_then(Value::as_array_mut) {
        for site in sites {
            site["hosts"] = json!([addr]);
        }
    }
    if let Some(items) = manifest.get_mut("items").and_then(Value::as_array_mut) {
        for item in items {
            if let Some(url) = item.get("contentUrl").and_then(Value::as_str) {
                let local = url
                    .split_once("://")
                    .map(|(_, rest)| format!("http://{addr}/_pages/{rest}"));
                item["contentUrl"] = json!(local);
            }
        }
    }
    let records = read("records.json")?;
    let records = records
        .get("records")
        .and_then(Value::as_array)
        .ok_or("records.json: no `records` list")?
        .iter()
        .filter_map(|r| {
            let key: DocKey = serde_json::from_value(r.clone()).ok()?;
            Some((key, r.clone()))
        })
        .collect();
    Ok(Feed {
        manifest,
        records,
        pages: dir.join("pages"),
        api_key: api_key.to_string(),
    })
}

fn authorized(feed: &Feed, headers: &HeaderMap) -> bool {
    headers
        .get("x-api-key")
        .is_some_and(|k| k.as_bytes() == feed.api_key.as_bytes())
}

fn refused() -> Response {
    (
        StatusCode::UNAUTHORIZED,
        Json(json!({"error": "invalid api key"})),
    )
        .into_response()
}

async fn manifest(State(feed): State<Arc<Feed>>, headers: HeaderMap) -> Response {
    if !authorized(&feed, &headers) {
        return refused();
    }
    Json(feed.manifest.clone()).into_response()
}

#[derive(Deserialize)]
struct RecordsRequest {
    items: Vec<DocKey>,
}

async fn records(
    State(feed): State<Arc<Feed>>,
    headers: HeaderMap,
    Json(request): Json<RecordsRequest>,
) -> Response {
    if !authorized(&feed, &headers) {
        return refused();
    }
    let found: Vec<&Value> = request
        .items
        .iter()
        .filter_map(|key| feed.records.get(key))
        .collect();
    Json(json!({ "records": found })).into_response()
}

async fn page(
    State(feed): State<Arc<Feed>>,
    UrlPath(path): UrlPath<String>,
    headers: HeaderMap,
) -> Response {
    if !authorized(&feed, &headers) {
        return refused();
    }
    let relative = Path::new(&path);
    if relative
        .components()
        .any(|c| !matches!(c, Component::Normal(_)))
    {
        return StatusCode::NOT_FOUND.into_response();
    }
    match tokio::fs::read(feed.pages.join(relative).join("index.html")).await {
        Ok(html) => ([(header::CONTENT_TYPE, "text/html; charset=utf-8")], html).into_response(),
        Err(_) => StatusCode::NOT_FOUND.into_response(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_listen_address_off_loopback_is_refused() {
        let config = SimulatorConfig {
            listen: "192.168.1.20:8081".into(),
            feed: "no-such-feed".into(),
            api_key: "key".into(),
        };
        let Err(error) = start(&config).await else {
            panic!("a simulator listened on 192.168.1.20");
        };
        assert_eq!(
            error,
            format!(
                "listen = \"192.168.1.20:8081\" is not a loopback address: a simulator listens \
                 only on {}",
                concierge_sim_common::ALLOWED
            )
        );
    }
}
