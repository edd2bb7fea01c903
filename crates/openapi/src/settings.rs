//! An `[apps.<name>]` section of kind `openapi`, as the config writes it.

use std::collections::BTreeMap;
use std::time::Duration;

use concierge_core::{ClientCredentials, ToolPolicy};
use serde::Deserialize;

/// One REST API, described by its OpenAPI document, and the operations of it served as tools.
#[derive(Debug, Clone, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct OpenApiSettings {
    /// The OpenAPI document (3.0 or 3.1, JSON or YAML): a file, relative to the folder
    /// concierge starts in, or an `https` URL read when the server starts (`check --live`
    /// reads it too; plain `http` only from this machine).
    pub spec: String,
    /// Where requests go; overrides the document's `servers` (default: its first server).
    #[serde(default)]
    pub base_url: Option<String>,
    /// concierge's own credentials at the API (never the caller's token).
    #[serde(default)]
    pub auth: Option<Auth>,
    /// The operations served: `operationId`s, or `tag:<name>` for every operation of a tag.
    /// Required: a spec's new operation is not served until someone lists it.
    pub operations: Vec<String>,
    /// A request's whole time, connect to the end of the body.
    #[schemars(with = "concierge_core::written::Duration")]
    #[serde(default = "ten_seconds", with = "humantime_serde")]
    pub timeout: Duration,
    /// The largest answer read; a larger one is a readable error.
    #[schemars(with = "concierge_core::written::Size")]
    #[serde(default = "one_mib", deserialize_with = "concierge_core::sizes::size")]
    pub max_response_bytes: usize,
    /// Per `operationId`: what concierge says and does differently.
    #[serde(default, rename = "override")]
    pub overrides: BTreeMap<String, OperationOverride>,
    /// The language of the platform's texts to the model (`en`, `de`, `ru`, `zh`, `vi`).
    #[serde(default)]
    pub language: Option<String>,
}

/// How concierge authenticates itself at the API.
#[derive(Debug, Clone, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Auth {
    /// `Authorization: Bearer <token>`.
    #[serde(default)]
    pub bearer: Option<String>,
    /// The value of the document's `apiKey` security scheme (its own header, query or cookie
    /// name).
    #[serde(default)]
    pub api_key: Option<String>,
    /// HTTP basic: `{ user, password }`.
    #[serde(default)]
    pub basic: Option<Basic>,
    /// OAuth client credentials: `{ client_id, client_secret, scopes, token_url }` (the token
    /// URL defaults to the document's `oauth2` client credentials flow).
    #[serde(default)]
    pub oauth: Option<ClientCredentials>,
}

#[derive(Debug, Clone, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Basic {
    /// The user name of HTTP Basic authentication.
    pub user: String,
    /// Its password (from the environment: `${VAR}`); never logged.
    pub password: String,
}

/// What one operation is served as, where the document is not what the model should see: the
/// keys every kind's tools take.
#[derive(Debug, Clone, Default, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct OperationOverride {
    #[serde(flatten)]
    pub policy: ToolPolicy,
}

fn ten_seconds() -> Duration {
    Duration::from_secs(10)
}

fn one_mib() -> usize {
    1 << 20
}

impl OpenApiSettings {
    /// Everything that can be known wrong before the document is read.
    pub fn problems(&self) -> Vec<String> {
        let mut problems = Vec::new();
        if self.operations.is_empty() {
            problems.push(
                "`operations` lists nothing: name the operationIds (or `tag:<name>`) to serve"
                    .into(),
            );
        }
        if let Some(problem) = url_problem(&self.spec) {
            problems.push(problem);
        }
        if is_url(&self.spec) && self.base_url.is_none() {
            // The document's `servers` would decide where concierge's credentials go.
            problems.push(
                "a document read from a URL does not choose where requests (and concierge's \
                 credentials) go: set `base_url`"
                    .into(),
            );
        }
        if let Some(url) = &self.base_url
            && !(url.starts_with("http://") || url.starts_with("https://"))
        {
            problems.push("`base_url` must start with http:// or https://".into());
        }
        if self.timeout.is_zero() || self.timeout > Duration::from_secs(300) {
            problems.push("`timeout` must be more than 0 s and at most 5 min".into());
        }
        if let Some(auth) = &self.auth {
            let kinds = [
                auth.bearer.is_some(),
                auth.basic.is_some(),
                auth.oauth.is_some(),
            ];
            if kinds.iter().filter(|set| **set).count() > 1 {
                problems.push(
                    "`auth`: `bearer`, `basic` and `oauth` all set `Authorization`; choose one"
                        .into(),
                );
            }
        }
        for (id, edit) in &self.overrides {
            for problem in edit.policy.problems() {
                problems.push(format!("`override.{id}`: {problem}"));
            }
        }
        problems
    }
}

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
