//! One operation served as a tool: its call sent as the document says, its answer read back —
//! a success as structured content, the API's refusal as a readable error with its own message,
//! its failures (5xx, 429, no answer) as retryable errors.

use std::sync::Arc;

use concierge_core::{CallContext, Tool, ToolError, ToolFuture, ToolSpec};
use concierge_upstream::{Answer, Failure};
use serde_json::{Map, Value, json};

use crate::operation::{Operation, is_json};
use crate::request;

/// The most of an API's own error message passed to the model.
const MAX_API_MESSAGE: usize = 500;

/// What every tool of an instance shares: the HTTP client, where requests go, and concierge's
/// own credentials there.
pub struct Api {
    pub client: reqwest::Client,
    pub base_url: String,
    /// Headers every request carries (credentials). Never logged.
    pub headers: http::HeaderMap,
    /// Query pairs every request carries (an `apiKey` in the query).
    pub query: Vec<(String, String)>,
    /// concierge's access tokens at the API's authorization server (`auth.oauth`).
    pub tokens: Option<crate::oauth::TokenSource>,
    pub max_response_bytes: usize,
}

impl Api {
    /// An API nothing is sent to: for tools that are only looked at (`concierge import`).
    pub fn none() -> Self {
        Self {
            client: reqwest::Client::new(),
            base_url: String::new(),
            headers: http::HeaderMap::new(),
            query: Vec::new(),
            tokens: None,
            max_response_bytes: 0,
        }
    }
}

pub struct OperationTool {
    spec: ToolSpec,
    operation: Operation,
    api: Arc<Api>,
}

impl OperationTool {
    pub fn new(operation: Operation, api: Arc<Api>) -> Self {
        // No dry run of its own (an API has no general way to be asked to change nothing): the
        // platform previews the request from `would_send`, and never calls the tool for it.
        let mut spec = operation.spec.clone();
        concierge_core::strip_custom_formats(&mut spec.output_schema);
        if spec.write.is_some() {
            spec.output_schema = concierge_core::or_platform_answers(&spec.output_schema);
        }
        concierge_core::strip_custom_formats(&mut spec.input_schema);
        spec.keeps_nulls = true;
        Self {
            spec,
            operation,
            api,
        }
    }

    async fn run(&self, arguments: Value, context: CallContext) -> Result<Value, ToolError> {
        let Value::Object(arguments) = arguments else {
            return Err(ToolError::invalid("", "the arguments must be an object"));
        };
        let built = request::build(&self.operation, &self.api.base_url, &arguments)?;
        let mut url = built.url;
        if !self.api.query.is_empty() {
            let mut pairs = url.query_pairs_mut();
            for (name, value) in &self.api.query {
                pairs.append_pair(name, value);
            }
        }
        let observed = concierge_core::observe::UpstreamCall::start(
            "openapi",
            self.operation.method.as_str(),
            url.as_str(),
        );
        let mut request = self
            .api
            .client
            .request(self.operation.method.clone(), url)
            .headers(self.api.headers.clone())
            .header(http::header::ACCEPT, "application/json, */*;q=0.5");
        for (name, value) in built.headers {
            request = request.header(name, value);
        }
        for (name, value) in observed.headers() {
            request = request.header(name, value);
        }
        if let Some(tokens) = &self.api.tokens {
            match tokens.token().await {
                Ok(token) => request = request.bearer_auth(token),
                Err(problem) => {
                    tracing::warn!(tool = %self.spec.name, %problem, "no access token for the API");
                    return Err(retryable(
                        "upstream_unavailable",
                        "concierge could not sign in to the API right now; nothing was sent. \
                         Retry in a few seconds.",
                        None,
                    ));
                }
            }
        }
        if let (Some(header), Some(key)) =
            (&self.operation.idempotency_header, &context.idempotency_key)
        {
            request = request.header(header.as_str(), key.as_str());
        }
        if let Some((body, kind)) = built.body {
            request = request.header(http::header::CONTENT_TYPE, kind).body(body);
        }
        let outcome = match request.send().await {
            Ok(response) => {
                concierge_upstream::read_answer(response, self.api.max_response_bytes).await
            }
            Err(error) => Err(concierge_upstream::classify(&error)),
        };
        observed.finish(outcome.as_ref().ok().map(|answer| answer.status));
        if let (Some(tokens), Ok(answer)) = (&self.api.tokens, &outcome)
            && answer.status == 401
        {
            // Revoked or expired early: the next call asks for a new token.
            tokens.forget().await;
        }
        match outcome {
            Ok(answer) => self.answer(answer),
            Err(failure) => {
                tracing::warn!(tool = %self.spec.name, ?failure, "API request failed");
                Err(failed(failure, self.api.max_response_bytes))
            }
        }
    }

    fn answer(&self, answer: Answer) -> Result<Value, ToolError> {
        let status = answer.status;
        // An API that names no type but sends an object or an array is read as JSON.
        let json = match answer.content_type.as_deref() {
            Some(kind) => is_json(kind),
            None => matches!(answer.body.first(), Some(b'{' | b'[')),
        };
        match status {
            200..=299 => {
                let body = if answer.body.is_empty() {
                    // No content (a 204): said in words, as a model reads it.
                    Value::String(format!("HTTP {status}: done, no content"))
                } else if json {
                    serde_json::from_slice(&answer.body).map_err(|_| {
                        ToolError::internal(
                            "upstream_answer_unusable",
                            "a 2xx body that is not JSON",
                        )
                        .with_message("The API answered with a body concierge cannot read.")
                    })?
                } else {
                    Value::String(String::from_utf8_lossy(&answer.body).into_owned())
                };
                Ok(match body {
                    Value::Object(object) if !self.operation.wraps_result => Value::Object(object),
                    other => json!({ "result": other }),
                })
            }
            429 | 500..=599 => Err(retryable(
                "upstream_failed",
                &format!(
                    "The API could not answer now (HTTP {status}); nothing is known to have \
                     changed. Retry in a few seconds."
                ),
                Some(status),
            )),
            _ => {
                let said = api_message(&answer.body, json);
                let message = match said {
                    Some(said) => format!("The API refused the request (HTTP {status}): {said}"),
                    None => format!("The API refused the request (HTTP {status})."),
                };
                Err(
                    ToolError::rejected("upstream_refused", message.clone()).with_envelope(
                        json!({"error": {
                            "code": "upstream_refused",
                            "status": status,
                            "message": message,
                            "retryable": false,
                        }}),
                    ),
                )
            }
        }
    }
}

impl Tool for OperationTool {
    fn spec(&self) -> &ToolSpec {
        &self.spec
    }

    fn call(&self, arguments: Value, context: CallContext) -> ToolFuture<'_> {
        Box::pin(self.run(arguments, context))
    }

    /// The method and the path with its parameters filled in, for the platform's preview —
    /// relative to the API, so neither its address nor concierge's credentials are shown.
    fn would_send(&self, arguments: &Value) -> Option<Value> {
        let built = request::build(&self.operation, PREVIEW_BASE, arguments.as_object()?).ok()?;
        let mut path = built.url.path().to_string();
        if let Some(query) = built.url.query() {
            path = format!("{path}?{query}");
        }
        Some(json!({"method": self.operation.method.as_str(), "path": path}))
    }
}

/// Where a preview's request is built: any base would do, only its path is shown.
const PREVIEW_BASE: &str = "http://api.invalid";

/// The API's own words in a refusal: a JSON body's `message`, `detail`, `error` or `title`
/// (the common shapes, RFC 9457 included), else the text; bounded, control characters out.
fn api_message(body: &[u8], json: bool) -> Option<String> {
    let text = if json {
        let value: Value = serde_json::from_slice(body).ok()?;
        let pick = |v: &Value| -> Option<String> {
            ["message", "detail", "error_description", "error", "title"]
                .iter()
                .find_map(|key| v.get(*key).and_then(Value::as_str).map(str::to_string))
        };
        pick(&value).or_else(|| value.get("error").and_then(pick))?
    } else {
        String::from_utf8_lossy(body).into_owned()
    };
    let text: String = text
        .chars()
        .map(|c| if c.is_control() { ' ' } else { c })
        .collect();
    let text = text.trim();
    if text.is_empty() {
        return None;
    }
    Some(if text.chars().count() > MAX_API_MESSAGE {
        text.chars().take(MAX_API_MESSAGE).collect::<String>() + "…"
    } else {
        text.to_string()
    })
}

fn failed(failure: Failure, max: usize) -> ToolError {
    match failure {
        Failure::Timeout => retryable(
            "upstream_timeout",
            "The API did not answer in time; it may have acted. Check before calling again.",
            None,
        ),
        Failure::Connection => retryable(
            "upstream_unavailable",
            "The API is not reachable right now. Retry in a few seconds.",
            None,
        ),
        Failure::TooLarge => ToolError::rejected(
            "upstream_answer_too_large",
            format!(
                "The API's answer is larger than {max} bytes; ask for less (a filter, a page)."
            ),
        ),
    }
}

fn retryable(code: &'static str, message: &str, status: Option<u16>) -> ToolError {
    let mut error = Map::new();
    error.insert("code".into(), json!(code));
    if let Some(status) = status {
        error.insert("status".into(), json!(status));
    }
    error.insert("message".into(), json!(message));
    error.insert("retryable".into(), json!(true));
    ToolError::rejected(code, message).with_envelope(json!({ "error": error }))
}
