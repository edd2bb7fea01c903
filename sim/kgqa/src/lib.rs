//! **A simulator** of Baixinghui's Q&A API (`docs/contracts/kgqa-api.md`), serving canned answers
//! from a JSON file. It is not the knowledge graph: it exists so the demo answers at once and the
//! tests have a real HTTP server to talk to. Production configs have no `[simulators.kgqa]`, and
//! a production build (`--no-default-features`) has no simulators at all.
//!
//! An answer is chosen by the first entry whose words all occur in the question; a question that
//! matches none gets the API's controlled fallback, as a real long-tail question would.

use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use axum::Json;
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::post;
use serde::Deserialize;
use serde_json::{Value, json};

pub const QUERY_PATH: &str = "/v1/openapi/knowledge-qa/query";

/// The `[simulators.kgqa]` section.
#[derive(Debug, Clone, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SimulatorConfig {
    /// The loopback address the simulator listens on (port 0 picks a free one).
    pub listen: String,
    /// The canned answers (`examples/kgqa/answers.json`).
    pub answers: PathBuf,
    /// The key the simulated API accepts in `X-KG-API-Key`.
    pub api_key: String,
}

#[derive(Debug, Clone, Deserialize)]
pub struct Answers {
    pub graph_name: String,
    pub answers: Vec<Canned>,
    /// The controlled fallback for questions no entry matches.
    pub fallback: Value,
}

#[derive(Debug, Clone, Deserialize)]
pub struct Canned {
    /// Every word must occur in the question.
    pub when_all: Vec<String>,
    pub data: Value,
}

impl Answers {
    pub fn load(path: &std::path::Path) -> Result<Self, String> {
        let text = std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
        serde_json::from_str(&text).map_err(|e| format!("{}: {e}", path.display()))
    }

    fn answer(&self, question: &str) -> &Value {
        self.answers
            .iter()
            .find(|c| c.when_all.iter().all(|w| question.contains(w.as_str())))
            .map_or(&self.fallback, |c| &c.data)
    }
}

struct Simulator {
    answers: Answers,
    api_key: String,
    served: AtomicU64,
}

/// The simulated API as an axum router.
pub fn router(answers: Answers, api_key: String) -> axum::Router {
    let state = Arc::new(Simulator {
        answers,
        api_key,
        served: AtomicU64::new(0),
    });
    axum::Router::new()
        .route(QUERY_PATH, post(query))
        .with_state(state)
}

/// Binds `listen` now (loopback only; a port clash fails start-up; port 0 picks a free one), loads
/// the answers, and returns the address it got and the serving future.
pub async fn start(
    config: &SimulatorConfig,
) -> Result<
    (
        std::net::SocketAddr,
        impl Future<Output = ()> + Send + 'static,
    ),
    String,
> {
    let (listener, addr) = concierge_sim_common::bind(&config.listen).await?;
    let answers = Answers::load(&config.answers)?;
    tracing::info!(%addr, "kgqa Q&A API SIMULATOR listening");
    let app = router(answers, config.api_key.clone());
    Ok((addr, async move {
        if let Err(error) = axum::serve(listener, app).await {
            tracing::error!(%error, "kgqa simulator stopped");
        }
    }))
}

fn refuse(status: StatusCode, code: &str, message: &str) -> Response {
    (
        status,
        Json(json!({"success": false, "error": {"code": code, "message": message}})),
    )
        .into_response()
}

async fn query(
    State(sim): State<Arc<Simulator>>,
    headers: HeaderMap,
    body: axum::body::Bytes,
) -> Response {
    let key = headers.get("x-kg-api-key").and_then(|v| v.to_str().ok());
    if key != Some(sim.api_key.as_str()) {
        return refuse(
            StatusCode::UNAUTHORIZED,
            "UNAUTHORIZED",
            "missing or invalid X-KG-API-Key",
        );
    }
    let Ok(request) = serde_json::from_slice::<Value>(&body) else {
        return refuse(StatusCode::BAD_REQUEST, "BAD_REQUEST", "body is not JSON");
    };
    let Some(question) = request
        .get("question")
        .and_then(Value::as_str)
        .filter(|q| !q.trim().is_empty())
    else {
        return refuse(
            StatusCode::BAD_REQUEST,
            "BAD_REQUEST",
            "question is required",
        );
    };
    if request.get("graph_name").and_then(Value::as_str) != Some(sim.answers.graph_name.as_str()) {
        return refuse(
            StatusCode::NOT_FOUND,
            "GRAPH_NOT_FOUND",
            "unknown graph_name",
        );
    }
    let number = sim.served.fetch_add(1, Ordering::Relaxed) + 1;
    let mut data = sim.answers.answer(question).clone();
    if let Value::Object(object) = &mut data {
        object.insert("latency_ms".into(), json!(12));
    }
    Json(json!({"success": true, "data": data, "trace_id": format!("trc_sim_{number:06}")}))
        .into_response()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_listen_address_off_loopback_is_refused() {
        let config = SimulatorConfig {
            listen: "0.0.0.0:4101".into(),
            answers: "no-such-answers.json".into(),
            api_key: "key".into(),
        };
        let Err(error) = start(&config).await else {
            panic!("a simulator listened on 0.0.0.0");
        };
        assert_eq!(
            error,
            format!(
                "listen = \"0.0.0.0:4101\" is not a loopback address: a simulator listens only \
                 on {}",
                concierge_sim_common::ALLOWED
            )
        );
    }
}
