//! Upstream HTTP tools (`kind = "http"`, and kgqa's tools with its envelope): each tool turns its (schema-validated) arguments into one request to the
//! business's existing API and maps the answer back.
//!
//! Tools are declared in config, so a deployment adds one without Rust code: a name, descriptions
//! and an input schema for the model, `let` values and a request whose strings are
//! [minijinja](https://docs.rs/minijinja) templates. What the answer means is the app's: a
//! [`ResponseMapper`] turns the [`Exchange`] (status and body, or why there was none) into the
//! tool's result or error. There is deliberately no way to let the model choose a URL, a method or
//! a header: those come from config only.
//!
//! ```toml
//! base_url = "http://127.0.0.1:8102"
//! timeout = "15s"
//! headers = { "X-KG-API-Key" = "${BXH_KG_API_KEY}" }   # secrets: never logged, never returned
//! vars = { graph = "baixinghui_travel_agency" }
//!
//! [request]                         # the default request of every tool
//! method = "POST"
//! path = "/v1/openapi/knowledge-qa/query"
//! body = { question = "{{ question }}", graph_name = "{{ vars.graph }}", customer_context = "{{ customer_context }}" }
//!
//! [[tool]]
//! name = "query_route_price"
//! description = "…"
//! input_schema = { type = "object", properties = { route_name = { type = "string" } }, required = ["route_name"] }
//! let = { question = "{{ route_name }}多少钱？" }
//! ```
//!
//! A body string that is exactly one `{{ expression }}` keeps the expression's JSON type (an object
//! stays an object) and is left out when the value is missing; any other string is rendered as text.

mod config;
mod plain;
mod render;
mod tool;

pub use config::{HttpToolConfig, RequestTemplate, UpstreamConfig};
pub use plain::PlainJson;
pub use tool::{Answer, Exchange, Failure, ResponseMapper, build_tools, classify, read_answer};

/// `kind = "http"`: an instance's section to tools that answer with the API's own JSON
/// ([`PlainJson`]).
pub fn build(config: &UpstreamConfig) -> Result<concierge_core::ToolSet, String> {
    let (tools, language) = build_tools(config, std::sync::Arc::new(PlainJson))?;
    Ok(concierge_core::ToolSet::new("http", language, tools))
}

/// The kind `http`: an HTTP API's JSON, tools declared by request template.
pub struct Http;

impl concierge_core::Kind for Http {
    const NAME: &'static str = "http";
    type Settings = UpstreamConfig;

    async fn build(settings: UpstreamConfig) -> Result<concierge_core::ToolSet, String> {
        build(&settings)
    }
}
