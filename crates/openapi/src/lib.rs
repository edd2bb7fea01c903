//! The kind `openapi`: a REST API behind MCP from its OpenAPI description.
//!
//! An instance names the document (`spec`), where the API is (`base_url`, else the document's
//! first server), concierge's own credentials there (`auth`), and the operations served
//! (`operations`: ids or `tag:<name>`; nothing else exists here). Each operation becomes a tool
//! with the document's own contract: one input schema from its parameters and body, its
//! success's schema as the output schema, requests built exactly as the document says.
//!
//! - `settings.rs`: the section
//! - `document.rs`: the document read, its `$ref`s resolved within bounds, schemas made JSON
//!   Schema
//! - `prune.rs`: a large JSON document read for the chosen operations only
//! - `naming.rs`: an operation's tool name
//! - `operation.rs`: the chosen operations, each as what a tool needs
//! - `request.rs`: a call's arguments as the request
//! - `tool.rs`: the tool, its call and its answers
//! - `remote.rs`: a document named by URL, read by `serve` and `check --live`
//! - `oauth.rs`: concierge's own token from the API's authorization server (client credentials)
//! - `import.rs`: `concierge import openapi`, a section for a person to curate
//!
//! The caller's token never goes to the API, and a model chooses no host, path, method or
//! header: those come from the document and the config.

mod document;
pub mod import;
mod naming;
mod oauth;
mod operation;
mod prune;
mod remote;
mod request;
pub mod settings;
mod tool;

use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use base64::Engine;
use concierge_core::{LiveReport, Tool, ToolList, ToolSet};
use serde_json::Value;

pub use document::{Document, Notes, parse};
pub use settings::OpenApiSettings;
use tool::{Api, OperationTool};

/// An instance's section to its tools: the document read, the chosen operations found, the
/// tools made. Every problem is named (an unknown operation, a name clash, a document that does
/// not parse, with where); what resolving cut is logged as a warning.
pub fn build(settings: OpenApiSettings) -> Result<ToolSet, String> {
    let problems = settings.problems();
    if !problems.is_empty() {
        return Err(problems.join("; "));
    }
    let messages = concierge_core::messages::for_language(settings.language.as_deref())?;
    if settings::is_url(&settings.spec) {
        // Read by `serve` (and `check --live`), never by a plain `check`: tools arrive as
        // updates, stand-ins meanwhile.
        let settings = Arc::new(settings);
        let (live, updates) = (settings.clone(), settings.clone());
        return Ok(
            ToolSet::new("openapi", messages, remote::stand_ins(&settings))
                .with_live_check(Arc::new(move || {
                    let settings = live.clone();
                    Box::pin(async move { live_check(&settings).await })
                }))
                .with_updates(Arc::new(move || {
                    let settings = updates.clone();
                    Box::pin(follow(settings))
                })),
        );
    }
    let document = Document::read_for(Path::new(&settings.spec), &settings.operations)?;
    let (tools, notes) = tools_of(&document, &settings)?;
    for note in &notes.0 {
        tracing::warn!(spec = %settings.spec, %note, "OpenAPI document");
    }
    let tokens: usize = tools.iter().map(|t| t.spec().list_tokens()).sum();
    tracing::info!(
        spec = %settings.spec,
        tools = tools.len(),
        tokens,
        "OpenAPI operations served; their tool list costs a model about this many tokens"
    );
    // The document is what the tools are made of: a change of it is a change of the config.
    Ok(ToolSet::new("openapi", messages, tools).with_inputs(vec![settings.spec.clone().into()]))
}

/// How long `serve` waits between two attempts to read a document that could not be read.
const RETRY: Duration = Duration::from_secs(60);

/// `check --live`: the document read, the operations found, what they cost.
async fn live_check(settings: &OpenApiSettings) -> LiveReport {
    let mut report = LiveReport::default();
    match remote::fetch(settings).await {
        Err(problem) => report.problems.push(problem),
        Ok(document) => match tools_of(&document, settings) {
            Err(problem) => report.problems.push(problem),
            Ok((tools, notes)) => {
                let tokens: usize = tools.iter().map(|t| t.spec().list_tokens()).sum();
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
async fn follow(settings: Arc<OpenApiSettings>) -> ToolList {
    let first = tools(&settings).await;
    let (sender, receiver) = tokio::sync::watch::channel(
        first
            .clone()
            .unwrap_or_else(|| remote::stand_ins(&settings)),
    );
    if first.is_none() {
        tokio::spawn(async move {
            loop {
                tokio::time::sleep(RETRY).await;
                // Nobody serves these tools any more (the server stops, or a reload dropped
                // the instance): stop trying.
                if sender.is_closed() {
                    return;
                }
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
    let made = match remote::fetch(settings).await {
        Ok(document) => tools_of(&document, settings),
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

/// The tools of `document` that `settings` choose, and what resolving noted.
pub fn tools_of(
    document: &Document,
    settings: &OpenApiSettings,
) -> Result<(Vec<Arc<dyn Tool>>, Notes), String> {
    let mut notes = Notes::default();
    let operations = operation::chosen(document, settings, &mut notes)
        .map_err(|problems| problems.join("; "))?;
    let api = Arc::new(api(document, settings)?);
    let tools = operations
        .into_iter()
        .map(|operation| Arc::new(OperationTool::new(operation, api.clone())) as Arc<dyn Tool>)
        .collect();
    Ok((tools, notes))
}

fn api(document: &Document, settings: &OpenApiSettings) -> Result<Api, String> {
    let base_url = match &settings.base_url {
        Some(url) => url.clone(),
        None => first_server(&document.root)?,
    };
    let parsed = reqwest::Url::parse(&base_url)
        .map_err(|_| format!("the base URL `{base_url}` is not a URL"))?;
    if !matches!(parsed.scheme(), "http" | "https") {
        return Err(format!("the base URL `{base_url}` must be http or https"));
    }
    let mut headers = http::HeaderMap::new();
    let mut query = Vec::new();
    let secret = |text: String| {
        let mut value = http::HeaderValue::from_str(&text)
            .map_err(|_| "a credential holds characters HTTP does not allow".to_string())?;
        value.set_sensitive(true);
        Ok::<_, String>(value)
    };
    if let Some(auth) = &settings.auth {
        if let Some(token) = &auth.bearer {
            headers.insert(
                http::header::AUTHORIZATION,
                secret(format!("Bearer {token}"))?,
            );
        }
        if let Some(basic) = &auth.basic {
            let pair = base64::engine::general_purpose::STANDARD
                .encode(format!("{}:{}", basic.user, basic.password));
            headers.insert(
                http::header::AUTHORIZATION,
                secret(format!("Basic {pair}"))?,
            );
        }
        if let Some(key) = &auth.api_key {
            let (name, place) = api_key_scheme(&document.root).ok_or(
                "`auth.api_key` is set but the document declares no `apiKey` security scheme",
            )?;
            match place.as_str() {
                "header" => {
                    let name = http::HeaderName::from_bytes(name.as_bytes())
                        .map_err(|_| format!("`{name}` is not a header name"))?;
                    headers.insert(name, secret(key.clone())?);
                }
                "query" => query.push((name, key.clone())),
                "cookie" => {
                    headers.insert(http::header::COOKIE, secret(format!("{name}={key}"))?);
                }
                other => return Err(format!("an `apiKey` scheme `in: {other}`")),
            }
        }
    }
    let client = reqwest::Client::builder()
        .timeout(settings.timeout)
        .connect_timeout(settings.timeout.min(Duration::from_secs(10)))
        // A redirect is an answer to judge, not an order to follow: it could point anywhere.
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .map_err(|error| format!("HTTP client: {error}"))?;
    let tokens = match settings.auth.as_ref().and_then(|auth| auth.oauth.as_ref()) {
        Some(credentials) => Some(oauth::TokenSource::new(
            &document.root,
            credentials,
            &base_url,
            client.clone(),
        )?),
        None => None,
    };
    Ok(Api {
        client,
        base_url: base_url.trim_end_matches('/').to_string(),
        headers,
        query,
        tokens,
        max_response_bytes: settings.max_response_bytes,
    })
}

/// The document's first server, its variables at their defaults.
pub(crate) fn first_server(root: &Value) -> Result<String, String> {
    let server = root
        .get("servers")
        .and_then(|s| s.get(0))
        .ok_or("the document names no server: set `base_url`")?;
    let mut url = server
        .get("url")
        .and_then(Value::as_str)
        .ok_or("the document's first server has no url: set `base_url`")?
        .to_string();
    if let Some(Value::Object(variables)) = server.get("variables") {
        for (name, variable) in variables {
            if let Some(default) = variable.get("default").and_then(Value::as_str) {
                url = url.replace(&format!("{{{name}}}"), default);
            }
        }
    }
    if !(url.starts_with("http://") || url.starts_with("https://")) {
        return Err(format!(
            "the document's server `{url}` is not an absolute URL: set `base_url`"
        ));
    }
    Ok(url)
}

/// The first `apiKey` security scheme: its parameter name and where it goes.
fn api_key_scheme(root: &Value) -> Option<(String, String)> {
    let schemes = root.pointer("/components/securitySchemes")?.as_object()?;
    schemes.values().find_map(|scheme| {
        if scheme.get("type")?.as_str()? != "apiKey" {
            return None;
        }
        Some((
            scheme.get("name")?.as_str()?.to_string(),
            scheme.get("in")?.as_str()?.to_string(),
        ))
    })
}

/// Every operation of `document` as a tool with `base_url`, and the URL a call with
/// `arguments` would be sent to (`None`: the call is refused before anything is sent): what the
/// fuzz target for documents and requests holds to its bounds.
pub fn requests_for(
    document: &Document,
    base_url: &str,
    arguments: &serde_json::Map<String, Value>,
) -> Vec<(Arc<dyn Tool>, Option<reqwest::Url>)> {
    let settings = OpenApiSettings {
        spec: String::new(),
        base_url: Some(base_url.to_string()),
        auth: None,
        operations: operation::listed(document)
            .into_iter()
            .take(20)
            .map(|listed| listed.id)
            .collect(),
        timeout: Duration::from_secs(1),
        max_response_bytes: 1 << 20,
        overrides: Default::default(),
        language: None,
    };
    let mut notes = Notes::default();
    let Ok(operations) = operation::chosen(document, &settings, &mut notes) else {
        return Vec::new();
    };
    let api = Arc::new(tool::Api::none());
    operations
        .into_iter()
        .map(|operation| {
            let url = request::build(&operation, base_url, arguments)
                .ok()
                .map(|built| built.url);
            let tool: Arc<dyn Tool> = Arc::new(OperationTool::new(operation, api.clone()));
            (tool, url)
        })
        .collect()
}

/// The kind `openapi`: a REST API's chosen operations from its OpenAPI document.
pub struct OpenApi;

impl concierge_core::Kind for OpenApi {
    const NAME: &'static str = "openapi";
    type Settings = OpenApiSettings;

    async fn build(settings: OpenApiSettings) -> Result<concierge_core::ToolSet, String> {
        build(settings)
    }
}
