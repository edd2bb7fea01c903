//! `[[endpoint]]`: one path, its tools, how callers authenticate, its limits and sessions.

use std::collections::BTreeMap;
use std::time::Duration;

use serde::Deserialize;

use super::limits::RateKey;

#[derive(Debug, Clone, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct EndpointSection {
    /// The URL path the endpoint is served at (`/coffee/mcp`).
    pub path: String,
    /// Tools served here as `app.tool`, or `app.*` for all of an app's tools; `app.tool as name`
    /// serves a tool under another name (a variant of a tool that clients know by one name).
    #[serde(default)]
    pub tools: Vec<String>,
    /// OAuth scopes a tool needs on this endpoint, by tool name, besides those it declares:
    /// `tool_scopes = { create_order = ["orders:write"] }`.
    #[serde(default)]
    pub tool_scopes: BTreeMap<String, Vec<String>>,
    /// A protocol-level handler app served here instead of tools (the conformance fixtures).
    pub handler: Option<String>,
    /// What the model is told about this server at initialize.
    pub instructions: Option<String>,
    /// Who may call: `{ kind = "tokens" }`, `{ kind = "oauth" }` or `{ kind = "none" }` (loopback only).
    pub auth: AuthSection,
    /// What the limits count per: each `client` (default), each access `token`, or each `user`
    /// (OAuth endpoints; callers without a token or user count per client).
    #[serde(default)]
    pub rate_limit_key: RateKey,
    /// A limiter for tools that are not read-only (the write class); `rate_limit` then counts the
    /// read class only.
    #[serde(default)]
    pub write_rate_limit: Option<String>,
    /// A limiter over every call of a client, whatever the token or user (`1000/hour per client`).
    #[serde(default)]
    pub client_rate_limit: Option<String>,
    /// The name of a limiter from `[limits]`, applied per client to `tools/call`.
    pub rate_limit: Option<String>,
    /// The name of a sink from `[audit]`.
    pub audit: Option<String>,
    /// The write tools that ask for confirmation first (names as served here). Unset: those
    /// whose app declares it (destructive writes).
    #[serde(default)]
    pub confirm: Option<Vec<String>>,
    /// How a call the token lacks scopes for is refused: `challenge` (HTTP 403 with
    /// `WWW-Authenticate: … insufficient_scope`, the MCP step-up) or `tool_error` (a tool result
    /// with `isError: true`, for deployments whose clients expect that).
    #[serde(default)]
    pub scope_refusal: ScopeRefusal,
    /// Also serve the legacy HTTP+SSE transport (protocol 2024-11-05): `GET <sse>` opens a
    /// session's event stream, `POST <messages>?sessionId=…` carries the client's messages.
    #[serde(default)]
    pub legacy_sse: Option<LegacySse>,
    /// `stateful` (a session per client, with server-to-client streams) or `stateless` (each
    /// request on its own, for a fleet without sticky routing).
    #[serde(default)]
    pub session: SessionMode,
    /// Idle time after which a session is forgotten (`30m`, `90s`).
    #[schemars(with = "concierge_core::written::Duration")]
    #[serde(default = "default_idle", with = "humantime_serde")]
    pub idle_timeout: Duration,
    /// Open sessions one client (one principal: a token's client, or an OAuth user) may hold;
    /// at the cap, opening another closes its least recently used one. 64 covers a backend
    /// that serves many chats with one token at once, and bounds what one token can hold.
    #[serde(default = "default_sessions_per_client")]
    pub max_sessions_per_client: usize,
    /// Open sessions on this endpoint at most; at the cap new sessions are refused (503) until
    /// some idle out.
    #[serde(default = "default_max_sessions")]
    pub max_sessions: usize,
}

impl EndpointSection {
    pub fn session_caps(&self) -> SessionCaps {
        SessionCaps {
            per_client: self.max_sessions_per_client.max(1),
            total: self.max_sessions.max(1),
        }
    }
}

fn default_sessions_per_client() -> usize {
    64
}

fn default_max_sessions() -> usize {
    1024
}

fn default_idle() -> Duration {
    Duration::from_secs(30 * 60)
}

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum ScopeRefusal {
    #[default]
    Challenge,
    ToolError,
}

#[derive(Debug, Clone, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct LegacySse {
    /// The path of the event stream (`GET`).
    pub sse: String,
    /// The path the client posts its messages to.
    pub messages: String,
}

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum SessionMode {
    /// `Mcp-Session-Id` sessions, bound to the client that opened them.
    #[default]
    Stateful,
    /// Every request stands alone and is answered as JSON; any instance can serve it.
    Stateless,
}

/// Who may call the endpoint: `kind` picks how callers authenticate.
#[derive(Debug, Clone, Deserialize, schemars::JsonSchema)]
#[serde(tag = "kind", rename_all = "lowercase", deny_unknown_fields)]
#[schemars(transform = describe_each_kind)]
pub enum AuthSection {
    /// No authentication; allowed only on a loopback listen address.
    None,
    /// Static bearer tokens per client from an environment variable, `name:token,…`, or from
    /// a file.
    Tokens {
        /// The variable holding the list.
        #[serde(default = "default_tokens_env")]
        env: String,
        /// Used when the variable is unset: for demo deployments only.
        default: Option<String>,
        /// The variable holds one bare token for this client name instead of a `name:token` list
        /// (as `BXH_MCP_TOKEN` does).
        client: Option<String>,
        /// A file of `client:token` lines instead of the variable (`#` comments and blank lines
        /// allowed; relative to the config's folder): a mounted secret an operator rotates.
        /// Refused when anyone but its owner may read it.
        file: Option<String>,
    },
    /// OAuth 2.1 access tokens from the built-in authorization server (`[oauth]`); tools are
    /// checked against the token's scopes.
    Oauth {
        /// The scopes a client should ask for (named in the 401 challenge).
        #[serde(default)]
        scopes: Vec<String>,
    },
}

/// The reference describes each key: an `auth` table's `kind` is described by the variant it
/// picks (schemars leaves the tag itself without words).
fn describe_each_kind(schema: &mut schemars::Schema) {
    let Some(serde_json::Value::Array(variants)) = schema
        .as_object_mut()
        .and_then(|object| object.get_mut("oneOf"))
    else {
        return;
    };
    for variant in variants {
        let description = variant.get("description").cloned();
        if let (Some(description), Some(kind)) =
            (description, variant.pointer_mut("/properties/kind"))
            && let Some(kind) = kind.as_object_mut()
        {
            kind.insert("description".into(), description);
        }
    }
}

fn default_tokens_env() -> String {
    "APP_MCP_TOKENS".into()
}

/// `[[endpoint]] max_sessions_per_client`, `max_sessions`.
#[derive(Debug, Clone, Copy)]
pub struct SessionCaps {
    pub per_client: usize,
    pub total: usize,
}
