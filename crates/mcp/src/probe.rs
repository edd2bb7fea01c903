//! `concierge mcp-probe`: an MCP server looked at exactly as an `mcp` instance would reach it —
//! the same connection, the same bounds, the same forwarding of a call — before anyone writes
//! its allowlist. It prints the server's tools (the names `tools = [...]` takes) and, when asked,
//! one call's answer as it would be handed on.

use std::collections::BTreeMap;
use std::sync::Arc;

use concierge_core::{CallContext, Caller, Tool};
use serde_json::{Value, json};

use crate::connection::{Link, Upstream};
use crate::settings::{McpSettings, Protocol};
use crate::tool::FederatedTool;
use concierge_core::ClientCredentials;

/// What to probe and how to reach it.
#[derive(Debug, clap::Args)]
pub struct Probe {
    /// The server: a Streamable HTTP URL, or (after `--`) a command and its arguments.
    #[arg(required = true, num_args = 1..)]
    pub server: Vec<String>,
    /// Call this tool after listing (its answer is printed as it would be handed on).
    #[arg(long)]
    pub call: Option<String>,
    /// The call's arguments, a JSON object.
    #[arg(long, default_value = "{}")]
    pub arguments: String,
    /// Several calls in a row, instead of --call: a JSON array of `{"name", "arguments"}`.
    #[arg(long, conflicts_with = "call")]
    pub calls: Option<String>,
    /// The URL is a legacy HTTP+SSE event stream (as an instance's `transport = "sse"`).
    #[arg(long)]
    pub sse: bool,
    /// Which era to speak (as an instance's `protocol`).
    #[arg(long, value_enum, default_value = "auto")]
    pub protocol: Protocol,
    /// For a URL behind OAuth: concierge's client id there (the client credentials grant).
    #[arg(long, requires = "client_secret_env")]
    pub client_id: Option<String>,
    /// The environment variable holding that client's secret.
    #[arg(long)]
    pub client_secret_env: Option<String>,
}

impl Probe {
    /// Runs the probe; `Ok` is what goes to stdout (one JSON document), `Err` why it failed.
    pub async fn run(self) -> Result<String, String> {
        let arguments: Value = serde_json::from_str(&self.arguments)
            .map_err(|error| format!("--arguments is not JSON: {error}"))?;
        if !arguments.is_object() {
            return Err("--arguments must be a JSON object".into());
        }
        let oauth = match (&self.client_id, &self.client_secret_env) {
            (Some(client_id), Some(variable)) => Some(ClientCredentials {
                client_id: client_id.clone(),
                client_secret: std::env::var(variable)
                    .map_err(|_| format!("{variable} is not set"))?,
                scopes: Vec::new(),
                token_url: None,
            }),
            _ => None,
        };
        let is_url = self.server.len() == 1
            && (self.server[0].starts_with("http://") || self.server[0].starts_with("https://"));
        let settings = McpSettings {
            command: (!is_url).then(|| self.server.clone()),
            url: is_url.then(|| self.server[0].clone()),
            oauth,
            transport: (is_url && self.sse).then(|| "sse".to_string()),
            protocol: self.protocol,
            ..McpSettings::probing()
        };
        let upstream = Upstream::new(settings);
        let service = upstream.connect_once().await?;
        let Link::Up { tools, .. } = upstream.link.borrow().clone() else {
            return Err("the server did not list its tools".into());
        };
        let listed: Vec<Value> = tools
            .values()
            .map(|tool| json!({"name": tool.name, "description": tool.description}))
            .collect();
        let mut report = json!({"tools": listed});
        if let Some(name) = &self.call {
            report["call"] = call(&upstream, &tools, name, arguments).await;
        }
        if let Some(calls) = &self.calls {
            let calls: Vec<Value> = serde_json::from_str(calls)
                .map_err(|error| format!("--calls is not a JSON array: {error}"))?;
            let mut answers = Vec::new();
            for planned in calls {
                let name = planned["name"].as_str().unwrap_or_default();
                let arguments = planned.get("arguments").cloned().unwrap_or(json!({}));
                answers.push(call(&upstream, &tools, name, arguments).await);
            }
            report["calls"] = Value::Array(answers);
        }
        drop(service);
        serde_json::to_string_pretty(&report).map_err(|error| error.to_string())
    }
}

/// One call through the same forwarding an instance uses.
async fn call(
    upstream: &Arc<Upstream>,
    tools: &BTreeMap<String, rmcp::model::Tool>,
    name: &str,
    arguments: Value,
) -> Value {
    let Some(listing) = tools.get(name) else {
        return json!({"error": format!("the server lists no tool `{name}`")});
    };
    let tool = FederatedTool::new(name, Some(listing), upstream);
    let context = CallContext::new(Caller::client("probe"), "probe");
    match tool.call(arguments, context).await {
        Ok(mut answer) => answer
            .get_mut(concierge_core::MCP_RESULT)
            .map(Value::take)
            .unwrap_or(answer),
        Err(error) => json!({"error": {"code": error.code, "message": error.message}}),
    }
}
