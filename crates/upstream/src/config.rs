use std::collections::BTreeMap;
use std::time::Duration;

use serde::{Deserialize, Deserializer};
use serde_json::Value;

/// An upstream app's config section.
#[derive(Debug, Clone, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct UpstreamConfig {
    /// `scheme://host:port` of the business API; paths come from the request templates.
    pub base_url: String,
    /// The whole exchange (connect, send, read the body) must finish within this: more than 0,
    /// at most 10 minutes.
    #[schemars(with = "concierge_core::written::Duration", extend("default" = "15s"))]
    #[serde(default = "default_timeout", deserialize_with = "timeout")]
    pub timeout: Duration,
    /// Sent with every request. Values are secrets: they never reach a log, an audit line or a result.
    #[serde(default)]
    pub headers: BTreeMap<String, String>,
    /// Constants the templates see as `vars.*`.
    #[serde(default)]
    pub vars: serde_json::Map<String, Value>,
    /// `en`, `ru`, `zh`, `de` or `vi` (`concierge_core::messages::CATALOG`): the language of the
    /// platform's messages to the model (validation, limits, write safety).
    #[serde(default)]
    pub language: Option<String>,
    /// The request every tool sends unless it declares its own.
    pub request: Option<RequestTemplate>,
    #[serde(default, rename = "tool")]
    /// The tools, one `[[apps.<name>.tool]]` each: name, description, arguments and the request it sends.
    pub tools: Vec<HttpToolConfig>,
}

fn default_timeout() -> Duration {
    Duration::from_secs(15)
}

/// A duration as every config writes one (`"15s"`), bounded: an upstream call must end before
/// the platform's own call deadline could.
fn timeout<'de, D: Deserializer<'de>>(deserializer: D) -> Result<Duration, D::Error> {
    let value = humantime_serde::deserialize(deserializer)?;
    if value > Duration::ZERO && value <= Duration::from_secs(600) {
        Ok(value)
    } else {
        Err(serde::de::Error::custom(
            "must be more than 0 and at most 10m",
        ))
    }
}

#[derive(Debug, Clone, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RequestTemplate {
    #[serde(default = "default_method")]
    /// The HTTP method (`GET` by default, `POST`, `PUT`, `PATCH`, `DELETE`).
    pub method: String,
    /// Appended to `base_url`; a template (use `| urlencode` for arguments in it).
    pub path: String,
    /// The JSON body; every string in it is a template. None sends no body.
    pub body: Option<Value>,
}

fn default_method() -> String {
    "POST".into()
}

#[derive(Debug, Clone, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct HttpToolConfig {
    /// The tool's name as the model sees it (`^[a-z][a-z0-9_]{0,63}$`).
    pub name: String,
    /// A short human-readable name a client may show instead of `name`.
    pub title: Option<String>,
    /// What the tool is for, written for the model.
    pub description: String,
    /// JSON Schema of the arguments. `additionalProperties: false` is added when not given.
    pub input_schema: Value,
    /// Values computed from the arguments before the request (e.g. the question), in order.
    #[serde(default, rename = "let")]
    pub derived: serde_json::Map<String, Value>,
    /// This tool's own request, instead of the app's default.
    pub request: Option<RequestTemplate>,
    /// Argument names whose values are kept out of the audit log.
    #[serde(default)]
    pub secret_arguments: Vec<String>,
    /// The tool changes nothing upstream. Defaults to true for GET, false otherwise: say it for a
    /// query sent by POST.
    pub read_only: Option<bool>,
    /// The tool may overwrite or delete. Defaults to false.
    #[serde(default)]
    pub destructive: bool,
    /// Calling twice with the same arguments has no extra effect. Defaults to `read_only`.
    pub idempotent: Option<bool>,
}
