//! A document named by URL (`spec = "https://…"`): read by `serve` when it starts (and again
//! until it is read, every minute), by `check --live` to report on it, never by a plain `check`,
//! which needs no network. Until it is read, the operations the config names by id are served as
//! stand-ins that answer a retryable error; tags wait for the document.
//!
//! The document is a stranger's bytes: its size is bounded, its `$ref`s stay inside it (no other
//! file, no other URL is read), and redirects are not followed.

use std::sync::Arc;
use std::time::Duration;

use concierge_core::{
    Annotations, CallContext, LiveReport, Tool, ToolError, ToolFuture, ToolList, ToolSpec,
};
use serde_json::{Map, Value, json};

use crate::document::{Document, MAX_DOCUMENT_BYTES, parse};
use crate::settings::OpenApiSettings;

/// How long `serve` waits between two attempts to read a document that could not be read.
const RETRY: Duration = Duration::from_secs(60);

/// Whether `spec` names a URL rather than a file.
pub fn is_url(spec: &str) -> bool {
    spec.starts_with("https://") || spec.starts_with("http://")
}

/// Plain `http` is for a document on this machine only: anything else could be changed on the
/// way, and the document decides what concierge sends.
pub fn url_problem(spec: &str) -> Option<String> {
    let url = reqwest::Url::parse(spec).ok()?;
    let loopback = matches!(url.host_str(), Some("127.0.0.1" | "localhost" | "[::1]"));
    (url.scheme() == "http" && !loopback).then(|| {
        "`spec` over plain http is read from this machine only (127.0.0.1, localhost); use https"
            .to_string()
    })
}

/// Reads the document at the URL, within the instance's timeout and the document bound.
pub async fn fetch(settings: &OpenApiSettings) -> Result<Document, String> {
    let client = reqwest::Client::builder()
        .timeout(settings.timeout)
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .map_err(|error| format!("HTTP client: {error}"))?;
    let response = client
        .get(&settings.spec)
        .header(
            http::header::ACCEPT,
            "application/json, application/yaml, */*;q=0.5",
        )
        .send()
        .await
        .map_err(|error| format!("the document could not be read: {}", error.without_url()))?;
    let answer = concierge_upstream::read_answer(response, MAX_DOCUMENT_BYTES as usize)
        .await
        .map_err(|failure| format!("the document could not be read: {failure:?}"))?;
    if !(200..300).contains(&answer.status) {
        return Err(format!(
            "the document's URL answered HTTP {}",
            answer.status
        ));
    }
    let text = std::str::from_utf8(&answer.body)
        .map_err(|_| "the document is not UTF-8 text".to_string())?;
    Document::from_value(parse(text)?)
}

/// `check --live`: the document read, the operations found, what they cost.
pub async fn live_check(settings: &OpenApiSettings) -> LiveReport {
    let mut report = LiveReport::default();
    match fetch(settings).await {
        Err(problem) => report.problems.push(problem),
        Ok(document) => match crate::tools_of(&document, settings) {
            Err(problem) => report.problems.push(problem),
            Ok((tools, notes)) => {
                let tokens: usize = tools
                    .iter()
                    .map(|t| crate::tool::listed_tokens(t.spec()))
                    .sum();
                report.notes.push(format!(
                    "{} operations served from the document; their tool list costs a model \
                     about {tokens} tokens",
                    tools.len()
                ));
                report.notes.extend(notes.0);
            }
        },
    }
    report
}

/// What `serve` runs: the document read, its tools sent; while it cannot be read, the
/// stand-ins stay and it is tried again.
pub async fn follow(settings: Arc<OpenApiSettings>) -> ToolList {
    let first = tools(&settings).await;
    let (sender, receiver) =
        tokio::sync::watch::channel(first.clone().unwrap_or_else(|| stand_ins(&settings)));
    if first.is_none() {
        tokio::spawn(async move {
            loop {
                tokio::time::sleep(RETRY).await;
                if let Some(tools) = tools(&settings).await {
                    let _ = sender.send(tools);
                    return;
                }
            }
        });
    }
    receiver
}

async fn tools(settings: &OpenApiSettings) -> Option<Vec<Arc<dyn Tool>>> {
    let made = match fetch(settings).await {
        Ok(document) => crate::tools_of(&document, settings),
        Err(problem) => Err(problem),
    };
    match made {
        Ok((tools, notes)) => {
            for note in notes.0 {
                tracing::warn!(%note, "OpenAPI document");
            }
            tracing::info!(tools = tools.len(), "OpenAPI document read");
            Some(tools)
        }
        Err(problem) => {
            tracing::error!(%problem, "OpenAPI document not read; its tools answer `retry` meanwhile");
            None
        }
    }
}

/// The operations named by id, answering that the document has not been read yet.
pub fn stand_ins(settings: &OpenApiSettings) -> Vec<Arc<dyn Tool>> {
    settings
        .operations
        .iter()
        .filter(|wanted| !wanted.starts_with("tag:"))
        .map(|id| {
            let name = settings
                .overrides
                .get(id)
                .and_then(|edit| edit.name.clone())
                .unwrap_or_else(|| crate::operation::snake_case(id));
            let mut schema = Map::new();
            schema.insert("type".into(), json!("object"));
            let spec = ToolSpec::new(
                name,
                format!("`{id}` of an API whose description has not been read yet."),
                schema,
                Map::new(),
                Annotations {
                    read_only: false,
                    destructive: true,
                    idempotent: false,
                    open_world: false,
                },
            );
            Arc::new(StandIn { spec }) as Arc<dyn Tool>
        })
        .collect()
}

struct StandIn {
    spec: ToolSpec,
}

impl Tool for StandIn {
    fn spec(&self) -> &ToolSpec {
        &self.spec
    }

    fn call(&self, _: Value, _: CallContext) -> ToolFuture<'_> {
        let message = "The description of the API behind this tool has not been read yet; \
                       nothing was sent. Retry in a minute.";
        Box::pin(async move {
            Err(
                ToolError::rejected("upstream_unavailable", message).with_envelope(json!({
                    "error": {"code": "upstream_unavailable", "message": message, "retryable": true}
                })),
            )
        })
    }
}
