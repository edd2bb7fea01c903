//! concierge's side of Mappy's Laravel API (`docs/contracts/mappy-api.md`): every request names
//! the acting user, reads and writes have their own timeouts (seed §7.2: 10 s and 30 s), and
//! every answer that is not a success becomes an error the model can act on (§7.1) — with
//! Laravel's own message for its 4xx, and never a body, stack trace or address from a 5xx.
//!
//! There is no retry here, on purpose (§7.3): a read's 5xx is marked retryable for the client to
//! retry once; a write is never sent twice by us — the caller resends with the same
//! `idempotency_key`, which the API dedupes.

use std::time::Duration;

use concierge_core::{CallContext, ToolError};
use reqwest::header::{HeaderMap, HeaderName, HeaderValue};
use serde_json::{Map, Value, json};

use crate::MappyConfig;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Read,
    Write,
}

#[derive(Clone)]
pub struct Laravel {
    client: reqwest::Client,
    base: String,
    key: HeaderValue,
    read_timeout: Duration,
    write_timeout: Duration,
    /// Every write asks the API for its dry run (`dry_run: true` in the body): the handle a
    /// write tool's own dry run is built over ([`Laravel::looking`]).
    dry_run: bool,
}

/// A successful answer: its status (200, or 202 for an accepted write) and JSON body.
pub struct Answer {
    pub status: u16,
    pub body: Value,
}

impl Laravel {
    pub fn new(config: &MappyConfig) -> Result<Self, String> {
        let base = config.base_url.trim_end_matches('/').to_string();
        let url =
            reqwest::Url::parse(&base).map_err(|_| format!("base_url `{base}` is not a URL"))?;
        if !matches!(url.scheme(), "http" | "https") {
            return Err(format!("base_url `{base}` must be http or https"));
        }
        let mut key = HeaderValue::try_from(format!("Bearer {}", config.api_key))
            .map_err(|_| "api_key is not valid in an HTTP header".to_string())?;
        key.set_sensitive(true);
        let client = reqwest::Client::builder()
            // A redirect could carry the service key anywhere: an answer to judge, not follow.
            .redirect(reqwest::redirect::Policy::none())
            .pool_idle_timeout(Duration::from_secs(90))
            .build()
            .map_err(|e| format!("HTTP client: {e}"))?;
        Ok(Self {
            client,
            base,
            key,
            read_timeout: config.read_timeout,
            write_timeout: config.write_timeout,
            dry_run: false,
        })
    }

    /// The same API, asked only for dry runs: what a write would change, nothing changed.
    pub fn looking(&self) -> Self {
        Self {
            dry_run: true,
            ..self.clone()
        }
    }

    /// `GET /api/mcp/health` answers 200.
    pub async fn health(&self) -> Result<(), String> {
        let response = self
            .client
            .get(format!("{}/api/mcp/health", self.base))
            .timeout(Duration::from_secs(3))
            .send()
            .await
            .map_err(|e| {
                if e.is_timeout() {
                    "the Mappy API did not answer in time".to_string()
                } else {
                    "the Mappy API is unreachable".to_string()
                }
            })?;
        match response.status().as_u16() {
            200 => Ok(()),
            status => Err(format!("the Mappy API answered {status}")),
        }
    }

    /// A read: `GET path?query`, as the caller.
    pub async fn get(
        &self,
        context: &CallContext,
        path: &str,
        query: &[(&str, String)],
    ) -> Result<Answer, ToolError> {
        let request = self
            .client
            .get(format!("{}{path}", self.base))
            .query(query)
            .timeout(self.read_timeout);
        self.send(context, request, Kind::Read).await
    }

    /// A write (`POST`/`PUT`), as the caller, with its idempotency key; `dry_run` is added to the
    /// body on a handle that only looks.
    pub async fn write(
        &self,
        context: &CallContext,
        method: reqwest::Method,
        path: &str,
        mut body: Map<String, Value>,
    ) -> Result<Answer, ToolError> {
        if self.dry_run {
            body.insert("dry_run".into(), json!(true));
        }
        // Dry runs are not remembered by the API, but it wants the header on every write.
        let key = match (&context.idempotency_key, self.dry_run) {
            (Some(key), false) => key.clone(),
            _ => format!("dry-run-{}", context.trace_id),
        };
        let request = self
            .client
            .request(method, format!("{}{path}", self.base))
            .header("Idempotency-Key", key)
            .json(&Value::Object(body))
            .timeout(self.write_timeout);
        self.send(context, request, Kind::Write).await
    }

    fn timeout(&self, kind: Kind) -> Duration {
        match kind {
            Kind::Read => self.read_timeout,
            Kind::Write => self.write_timeout,
        }
    }

    async fn send(
        &self,
        context: &CallContext,
        request: reqwest::RequestBuilder,
        kind: Kind,
    ) -> Result<Answer, ToolError> {
        let (Some(user), Some(role)) = (&context.caller.user, &context.caller.role) else {
            return Err(error(
                ToolError::rejected(
                    "no_acting_user",
                    "Mappy tools act for a signed-in Mappy user; this access token has none.",
                ),
                403,
                false,
                None,
            ));
        };
        let mut headers = HeaderMap::new();
        headers.insert(reqwest::header::AUTHORIZATION, self.key.clone());
        for (name, value) in [
            ("x-mappy-user-id", user.as_str()),
            ("x-mappy-user-role", role.as_str()),
            ("x-request-id", context.trace_id.as_str()),
        ] {
            if let Ok(value) = HeaderValue::try_from(value) {
                headers.insert(HeaderName::from_static(name), value);
            }
        }
        context.note("acting_role", role.clone());
        let mut request = match request.headers(headers).build() {
            Ok(request) => request,
            Err(failure) => return Err(unreachable(failure, kind, self.timeout(kind))),
        };
        let call = concierge_core::observe::UpstreamCall::start(
            "mappy",
            request.method().as_str(),
            request.url().as_str(),
        );
        for (name, value) in call.headers() {
            if let Ok(value) = HeaderValue::try_from(value) {
                request.headers_mut().insert(name, value);
            }
        }
        let response = match self.client.execute(request).await {
            Ok(response) => response,
            Err(failure) => return Err(unreachable(failure, kind, self.timeout(kind))),
        };
        let status = response.status().as_u16();
        context.note("upstream_status", status);
        let read = read_bounded(response).await;
        call.finish(Some(status));
        let bytes = match read {
            Ok(Some(bytes)) => bytes,
            Ok(None) => {
                return Err(backend(
                    kind,
                    format!("the Mappy API answered more than {MAX_BODY} bytes"),
                ));
            }
            Err(failure) => return Err(unreachable(failure, kind, self.timeout(kind))),
        };
        let body: Value = serde_json::from_slice(&bytes).unwrap_or(Value::Null);
        match status {
            200..=299 if body.is_object() => Ok(Answer { status, body }),
            200..=299 => Err(backend(kind, format!("{status} without a JSON object"))),
            // Our own service key refused: nothing was accepted, and retrying cannot help.
            401 => Err(error(
                ToolError::internal(
                    "backend_misconfigured",
                    "the Mappy API refused concierge's service key",
                )
                .with_message(
                    "concierge is not allowed into the Mappy API right now (an operator must fix its \
                     service key); nothing was read or changed.",
                ),
                502,
                false,
                None,
            )),
            400..=499 => Err(passed_through(status, &body)),
            502 if body
                .get("code")
                .and_then(Value::as_str)
                .is_some_and(|c| c.starts_with("gbp_")) =>
            {
                Err(google(&body))
            }
            // The log (never the client) gets the start of the body, to find the failure.
            _ => Err(backend(
                kind,
                format!(
                    "the Mappy API answered {status}: {}",
                    String::from_utf8_lossy(&bytes[..bytes.len().min(300)])
                ),
            )),
        }
    }
}

/// No Mappy answer is larger; a body beyond it is not read.
const MAX_BODY: usize = 8 * 1024 * 1024;

/// The body, read chunk by chunk up to [`MAX_BODY`] (`None` beyond it).
async fn read_bounded(mut response: reqwest::Response) -> Result<Option<Vec<u8>>, reqwest::Error> {
    if response
        .content_length()
        .is_some_and(|n| n > MAX_BODY as u64)
    {
        return Ok(None);
    }
    let mut body = Vec::new();
    while let Some(chunk) = response.chunk().await? {
        if body.len() + chunk.len() > MAX_BODY {
            return Ok(None);
        }
        body.extend_from_slice(&chunk);
    }
    Ok(Some(body))
}

/// The Mappy error document every failure answers (`isError: true`).
fn error(base: ToolError, status: u16, retryable: bool, fields: Option<&Value>) -> ToolError {
    let mut body = json!({
        "code": base.code,
        "status": status,
        "message": base.message,
        "retryable": retryable,
    });
    if let Some(fields) = fields {
        body["fields"] = fields.clone();
    }
    base.with_envelope(json!({ "error": body }))
}

/// Laravel's 4xx: its status and message, kept (the record does not exist, outside the tenancy,
/// a field the API refused).
fn passed_through(status: u16, body: &Value) -> ToolError {
    let message = body
        .get("message")
        .and_then(Value::as_str)
        .filter(|m| m.len() <= 1000)
        .unwrap_or("The Mappy API refused the request.")
        .to_string();
    let base = match status {
        403 => ToolError::rejected("forbidden", message),
        404 => ToolError::not_found(message),
        409 => ToolError::rejected("conflict", message),
        422 => {
            let mut e = ToolError::invalid("", message);
            e.field = body
                .get("errors")
                .and_then(Value::as_object)
                .and_then(|errors| errors.keys().next().cloned());
            e
        }
        429 => ToolError::rejected("rate_limited", message),
        _ => ToolError::rejected("rejected", message),
    };
    // Laravel's field errors, unless something answered a novel instead.
    let fields = body
        .get("errors")
        .filter(|e| e.is_object() && e.to_string().len() <= 8 * 1024);
    error(base, status, status == 429, fields)
}

/// Google Business Profile failed behind Laravel: tell the model what Google said.
fn google(body: &Value) -> ToolError {
    let message = body
        .get("message")
        .and_then(Value::as_str)
        .filter(|m| m.len() <= 500)
        .unwrap_or("Google Business Profile is not answering. Try again later.");
    let base = ToolError::internal(
        "gbp_error",
        "Google Business Profile failed behind the Mappy API",
    )
    .with_message(message);
    error(base, 502, true, None)
}

/// Laravel itself failed (5xx, a broken answer, a refused service key).
fn backend(kind: Kind, detail: String) -> ToolError {
    let message = match kind {
        Kind::Read => "The Mappy API is failing right now. You may retry this read once.",
        Kind::Write => {
            "The Mappy API failed while taking the change; it may or may not have been accepted. \
             Do not switch keys: send the same call again with the same idempotency_key (it never \
             writes twice), or check batch_status if you have a batch_id."
        }
    };
    let base = ToolError::internal("backend_error", detail).with_message(message);
    error(base, 502, kind == Kind::Read, None)
}

/// No complete answer: a timeout (504) or no connection (502).
fn unreachable(failure: reqwest::Error, kind: Kind, timeout: Duration) -> ToolError {
    if failure.is_timeout() {
        let seconds = timeout.as_secs_f64();
        let message = match kind {
            Kind::Read => {
                format!("The Mappy API did not answer within {seconds} s. You may retry once.")
            }
            Kind::Write => format!(
                "The Mappy API did not answer within {seconds} s; the change may still be running. \
                 Send the same call again with the same idempotency_key to get its batch_id (it \
                 never writes twice), then follow it with batch_status."
            ),
        };
        let base = ToolError::internal("upstream_timeout", "the Mappy API timed out")
            .with_message(message);
        return error(base, 504, kind == Kind::Read, None);
    }
    let detail = failure.without_url().to_string();
    backend(kind, format!("no answer from the Mappy API: {detail}"))
}
