//! A document named by URL (`spec = "https://…"`): how it is read, and the stand-ins served
//! until it is (the operations the config names by id, answering a retryable error; tags wait
//! for the document). `lib.rs` says when: by `serve` when it starts (and every minute until it is
//! read), by `check --live`, never by a plain `check`, which needs no network.
//!
//! The document is a stranger's bytes: its size is bounded, its `$ref`s stay inside it (no other
//! file, no other URL is read), and redirects are not followed.

use std::sync::Arc;

use concierge_core::{Annotations, CallContext, Tool, ToolError, ToolFuture, ToolSpec};
use serde_json::{Map, Value, json};

use crate::document::{Document, MAX_DOCUMENT_BYTES, parse};
use crate::settings::OpenApiSettings;

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
                .and_then(|edit| edit.policy.name.clone())
                .unwrap_or_else(|| crate::naming::snake_case(id));
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
