use std::sync::Arc;
use std::time::{Duration, Instant};

use bytes::Bytes;
use concierge_core::{Annotations, CallContext, Messages, Tool, ToolError, ToolFuture, ToolSpec};
use http::{HeaderMap, HeaderName, HeaderValue, Method};
use minijinja::{Environment, Value as Jinja};
use serde_json::{Map, Value, json};

use crate::config::{HttpToolConfig, RequestTemplate, UpstreamConfig};
use crate::render::{Piece, Shape, environment};

/// Bodies larger than this are not read: no business answer is that big, and memory is shared.
const MAX_BODY: usize = 4 * 1024 * 1024;

/// What came back from one upstream request.
#[derive(Debug)]
pub struct Exchange {
    /// The JSON body that was sent (no headers: those hold secrets).
    pub request: Option<Value>,
    pub outcome: Result<Answer, Failure>,
    /// From sending the request to the end of the body.
    pub latency: Duration,
}

/// An HTTP answer, whatever its status. Redirects are not followed: they arrive here as 3xx.
#[derive(Debug)]
pub struct Answer {
    pub status: u16,
    pub content_type: Option<String>,
    pub body: Bytes,
}

/// Why there was no complete answer. Carries no text from the network on purpose: mappers must
/// not be able to pass addresses or exception text to a client.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Failure {
    /// The configured timeout passed (connect, send or a slow body).
    Timeout,
    /// No connection, or it broke (refused, reset, closed early).
    Connection,
    /// The body was larger than the limit.
    TooLarge,
}

/// Turns an exchange into the tool's result. This is where an app says what its upstream's
/// answers mean: which are results, which errors, what is retryable.
pub trait ResponseMapper: Send + Sync {
    /// The JSON Schema of the results `map` returns (success and error envelopes alike).
    fn output_schema(&self) -> Map<String, Value>;
    fn map(&self, exchange: Exchange, context: &CallContext) -> Result<Value, ToolError>;
    /// Whether results are the upstream's own JSON, handed on with its nulls; `false`: an
    /// envelope of the app's, shaped like any app's result (nulls left out).
    fn hands_on_json(&self) -> bool {
        false
    }
    /// The upstream's short name in metrics and traces (`kgqa`).
    fn upstream(&self) -> &'static str {
        "upstream"
    }
}

struct Request {
    method: Method,
    path: Piece,
    body: Option<Shape>,
}

struct HttpTool {
    spec: ToolSpec,
    derived: Vec<(String, Piece)>,
    request: Arc<Request>,
    shared: Arc<Shared>,
}

struct Shared {
    client: reqwest::Client,
    base_url: String,
    headers: HeaderMap,
    vars: Value,
    env: Environment<'static>,
    mapper: Arc<dyn ResponseMapper>,
}

/// An upstream app's tools, and the platform texts in the language its config names.
pub type UpstreamTools = (Vec<Arc<dyn Tool>>, &'static Messages);

/// Builds every tool of an upstream app. Errors name the tool and what is wrong.
pub fn build_tools(
    config: &UpstreamConfig,
    mapper: Arc<dyn ResponseMapper>,
) -> Result<UpstreamTools, String> {
    let base_url = config.base_url.trim_end_matches('/').to_string();
    let parsed = reqwest::Url::parse(&base_url)
        .map_err(|_| format!("base_url `{base_url}` is not a URL"))?;
    if !matches!(parsed.scheme(), "http" | "https") {
        return Err(format!("base_url `{base_url}` must be http or https"));
    }
    let language = concierge_core::messages::for_language(config.language.as_deref())?;
    let mut headers = HeaderMap::new();
    for (name, value) in &config.headers {
        let header = HeaderName::try_from(name.as_str())
            .map_err(|_| format!("header name `{name}` is not valid"))?;
        let mut value = HeaderValue::try_from(value.as_str())
            .map_err(|_| format!("header `{name}` has a value that is not valid in HTTP"))?;
        value.set_sensitive(true);
        headers.insert(header, value);
    }
    let timeout = config.timeout;
    let client = reqwest::Client::builder()
        .timeout(timeout)
        .connect_timeout(timeout)
        // A redirect is an answer to judge, not an order to follow: it could point anywhere.
        .redirect(reqwest::redirect::Policy::none())
        .pool_idle_timeout(Duration::from_secs(90))
        .build()
        .map_err(|e| format!("HTTP client: {e}"))?;
    let shared = Arc::new(Shared {
        client,
        base_url,
        headers,
        vars: Value::Object(config.vars.clone()),
        env: environment(),
        mapper,
    });
    let default_request = config
        .request
        .as_ref()
        .map(|r| compile_request(r, &shared.env))
        .transpose()?
        .map(Arc::new);

    let mut tools: Vec<Arc<dyn Tool>> = Vec::new();
    for tool in &config.tools {
        let at = |message: String| format!("tool `{}`: {message}", tool.name);
        let request = match &tool.request {
            Some(request) => Arc::new(compile_request(request, &shared.env).map_err(at)?),
            None => default_request
                .clone()
                .ok_or_else(|| at("no `request` and no default `[request]`".into()))?,
        };
        let mut derived = Vec::new();
        for (name, template) in &tool.derived {
            let Value::String(text) = template else {
                return Err(at(format!("let `{name}` must be a template string")));
            };
            let piece = Piece::parse(text);
            piece
                .compile(&shared.env)
                .map_err(|e| at(format!("let `{name}`: {e}")))?;
            derived.push((name.clone(), piece));
        }
        tools.push(Arc::new(HttpTool {
            spec: spec(tool, &request, &shared.mapper).map_err(at)?,
            derived,
            request,
            shared: shared.clone(),
        }));
    }
    Ok((tools, language))
}

fn compile_request(
    template: &RequestTemplate,
    env: &Environment<'static>,
) -> Result<Request, String> {
    let method = match template.method.to_ascii_uppercase().as_str() {
        "GET" => Method::GET,
        "POST" => Method::POST,
        "PUT" => Method::PUT,
        "PATCH" => Method::PATCH,
        "DELETE" => Method::DELETE,
        other => {
            return Err(format!(
                "method `{other}` is not one of GET, POST, PUT, PATCH, DELETE"
            ));
        }
    };
    if !template.path.starts_with('/') {
        return Err(format!(
            "request path `{}` must start with `/`",
            template.path
        ));
    }
    if !path_values_are_encoded(&template.path) {
        return Err(format!(
            "request path `{}`: every `{{{{ … }}}}` in it must end in `| urlencode`, so an argument fills one segment and never picks the endpoint",
            template.path
        ));
    }
    let path = Piece::Text(template.path.clone());
    path.compile(env)
        .map_err(|e| format!("request path: {e}"))?;
    let body = template.body.as_ref().map(Shape::parse);
    if let Some(body) = &body {
        body.compile(env)
            .map_err(|e| format!("request body: {e}"))?;
    }
    Ok(Request { method, path, body })
}

/// Names that would promise a model a generic door into the upstream (seed §5). A deployment
/// declares business tools; these are refused even if their templates are harmless.
fn is_generic_name(name: &str) -> bool {
    let name = name.to_ascii_lowercase();
    ["call_api", "request_url", "http_request", "fetch_url"].contains(&name.as_str())
        || name.starts_with("execute_")
        || name.starts_with("run_")
        || name.starts_with("raw_")
}

/// Every value in a path template must be `| urlencode`d (one segment), with no control blocks.
fn path_values_are_encoded(path: &str) -> bool {
    !path.contains("{%")
        && path.split("{{").skip(1).all(|rest| {
            rest.split_once("}}").is_some_and(|(expression, _)| {
                let expression: String = expression.split_whitespace().collect();
                expression.ends_with("|urlencode")
            })
        })
}

fn spec(
    tool: &HttpToolConfig,
    request: &Request,
    mapper: &Arc<dyn ResponseMapper>,
) -> Result<ToolSpec, String> {
    if is_generic_name(&tool.name) {
        return Err("generic tools (call_api, request_url, execute_*, …) are not allowed: declare one business tool per operation".into());
    }
    let Value::Object(mut input_schema) = tool.input_schema.clone() else {
        return Err("input_schema must be a table (a JSON Schema object)".into());
    };
    if input_schema.get("type").and_then(Value::as_str) != Some("object") {
        return Err("input_schema must have type = \"object\"".into());
    }
    // Unknown arguments are refused unless the deployment says otherwise.
    input_schema
        .entry("additionalProperties")
        .or_insert(Value::Bool(false));
    let read_only = tool.read_only.unwrap_or(request.method == Method::GET);
    let annotations = Annotations {
        read_only,
        destructive: tool.destructive,
        idempotent: tool.idempotent.unwrap_or(read_only),
        open_world: false,
    };
    Ok(ToolSpec {
        title: tool.title.clone(),
        secret_fields: tool.secret_arguments.clone(),
        keeps_nulls: mapper.hands_on_json(),
        ..ToolSpec::new(
            tool.name.clone(),
            tool.description.clone(),
            input_schema,
            mapper.output_schema(),
            annotations,
        )
    })
}

impl Tool for HttpTool {
    fn spec(&self) -> &ToolSpec {
        &self.spec
    }

    fn call(&self, arguments: Value, context: CallContext) -> ToolFuture<'_> {
        Box::pin(async move {
            let (method, url, body) = self.render(arguments, &context).map_err(|detail| {
                ToolError::internal(
                    "request_template_failed",
                    format!("tool `{}`: {detail}", self.spec.name),
                )
            })?;
            let exchange = self.send(method, url, body).await;
            context.note("upstream_latency_ms", exchange.latency.as_millis() as u64);
            if let Ok(answer) = &exchange.outcome {
                context.note("upstream_status", answer.status);
            }
            self.shared.mapper.map(exchange, &context)
        })
    }
}

impl HttpTool {
    /// The template context: the arguments at the top, `vars`, `call`, then each `let` in order.
    fn render(
        &self,
        arguments: Value,
        context: &CallContext,
    ) -> Result<(Method, String, Option<Value>), String> {
        let mut scope = match arguments {
            Value::Object(object) => object,
            _ => Map::new(),
        };
        scope.insert("vars".into(), self.shared.vars.clone());
        scope.insert(
            "call".into(),
            json!({
                "trace_id": context.trace_id,
                "request_id": format!("mcp-req-{}", &context.trace_id[..context.trace_id.len().min(16)]),
                "client": context.caller.client,
            }),
        );
        for (name, piece) in &self.derived {
            let value = piece.eval(
                &self.shared.env,
                &Jinja::from(minijinja::value::Serde(&scope)),
            )?;
            scope.insert(name.clone(), value.unwrap_or(Value::Null));
        }
        let jinja = Jinja::from(minijinja::value::Serde(&scope));
        let path = match self.request.path.eval(&self.shared.env, &jinja)? {
            Some(Value::String(path)) => path,
            _ => return Err("the path rendered to nothing".into()),
        };
        let body = match &self.request.body {
            Some(shape) => shape.render(&self.shared.env, &jinja)?,
            None => None,
        };
        Ok((
            self.request.method.clone(),
            format!("{}{path}", self.shared.base_url),
            body,
        ))
    }

    async fn send(&self, method: Method, url: String, body: Option<Value>) -> Exchange {
        let started = Instant::now();
        let call = concierge_core::observe::UpstreamCall::start(
            self.shared.mapper.upstream(),
            method.as_str(),
            &url,
        );
        let mut request = self
            .shared
            .client
            .request(method, &url)
            .headers(self.shared.headers.clone());
        for (name, value) in call.headers() {
            request = request.header(name, value);
        }
        if let Some(body) = &body {
            request = request.json(body);
        }
        let outcome = match request.send().await {
            Ok(response) => read_answer(response, MAX_BODY).await,
            Err(error) => Err(classify(&error)),
        };
        call.finish(outcome.as_ref().ok().map(|answer| answer.status));
        if let Err(failure) = &outcome {
            // The URL is ours (config), not a secret; the headers are never printed.
            tracing::warn!(tool = %self.spec.name, %url, ?failure, "upstream request failed");
        }
        Exchange {
            request: body,
            outcome,
            latency: started.elapsed(),
        }
    }
}

/// An answer's status, type and body, read to at most `max` bytes (more is [`Failure::TooLarge`]).
pub async fn read_answer(mut response: reqwest::Response, max: usize) -> Result<Answer, Failure> {
    let status = response.status().as_u16();
    let content_type = response
        .headers()
        .get(http::header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .map(String::from);
    let mut body = Vec::new();
    loop {
        match response.chunk().await {
            Ok(Some(chunk)) => {
                if body.len() + chunk.len() > max {
                    return Err(Failure::TooLarge);
                }
                body.extend_from_slice(&chunk);
            }
            Ok(None) => break,
            Err(error) => return Err(classify(&error)),
        }
    }
    Ok(Answer {
        status,
        content_type,
        body: Bytes::from(body),
    })
}

/// Why a request got no answer.
pub fn classify(error: &reqwest::Error) -> Failure {
    if error.is_timeout() {
        Failure::Timeout
    } else {
        Failure::Connection
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn generic_doors_are_refused() {
        for name in [
            "call_api",
            "execute_cypher",
            "execute_sql",
            "request_url",
            "Run_Query",
        ] {
            assert!(is_generic_name(name), "{name}");
        }
        assert!(!is_generic_name("query_route_price"));
    }

    #[test]
    fn path_arguments_must_be_one_encoded_segment() {
        assert!(path_values_are_encoded("/v1/openapi/knowledge-qa/query"));
        assert!(path_values_are_encoded(
            "/locations/{{ location_id | urlencode }}/reviews"
        ));
        assert!(!path_values_are_encoded("/{{ path }}"));
        assert!(!path_values_are_encoded(
            "/x/{% if a %}{{ a | urlencode }}{% endif %}"
        ));
    }
}
