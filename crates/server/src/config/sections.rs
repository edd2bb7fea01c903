//! The deployment's own sections: `[server]`, `[audit.*]`, `[metrics]`, `[ops]`, and the
//! document that holds them with the apps', the endpoints' and the state's.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::Duration;

use serde::Deserialize;

use super::endpoint::EndpointSection;
use super::limits::LimiterSection;
use super::state::{StateSection, WritesSection, five_minutes};

#[derive(Debug, Clone, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Config {
    /// The listener, its bounds and the timeouts every endpoint shares.
    pub server: ServerSection,
    /// Named rate limiters: `chatbot_mcp = "60/minute"`, or with a policy,
    /// `chatbot_mcp = { rate = "60/minute", policy = "bucket" }`.
    #[serde(default)]
    pub limits: BTreeMap<String, LimiterSection>,
    /// Named audit sinks.
    #[serde(default)]
    pub audit: BTreeMap<String, AuditSection>,
    /// App instances by name: each one's `kind` (the name when absent) and that kind's
    /// settings.
    #[serde(default)]
    // Each kind's own schema replaces this one (`schema.rs`).
    #[schemars(with = "BTreeMap<String, serde_json::Map<String, serde_json::Value>>")]
    pub apps: BTreeMap<String, toml::Value>,
    /// The MCP endpoints served, one `[[endpoint]]` each: a path, its tools, who may call.
    #[serde(default, rename = "endpoint")]
    pub endpoints: Vec<EndpointSection>,
    /// Stand-ins for external systems, started on loopback with the server (demo deployments).
    #[serde(default)]
    // Each kind's own schema replaces this one (`schema.rs`).
    #[schemars(with = "BTreeMap<String, serde_json::Map<String, serde_json::Value>>")]
    pub simulators: BTreeMap<String, toml::Value>,
    /// The built-in OAuth 2.1 authorization server, for endpoints with `auth = { kind = "oauth" }`.
    #[serde(default)]
    pub oauth: Option<concierge_oauth::OAuthConfig>,
    /// Write safety for tools that declare it: where idempotency records and the confirm-token
    /// secret live, and for how long keys and tokens hold.
    #[serde(default)]
    pub writes: Option<WritesSection>,
    /// State shared by several instances of one deployment: where rate limits are counted, and
    /// what a limit does while its store is down. Absent: everything in this process.
    #[serde(default)]
    pub state: StateSection,
    /// Prometheus metrics at `/metrics`: on a listener of their own, or on the server's behind a
    /// token. Absent or both keys empty: off.
    #[serde(default)]
    pub metrics: MetricsSection,
    /// The ops console at `/ops`, for the people who run the deployment. Absent or without a
    /// token: off.
    #[serde(default)]
    pub ops: OpsSection,
}

/// `[ops]`.
#[derive(Debug, Clone, Default, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct OpsSection {
    /// Signs an operator in to `/ops` (at least 16 characters).
    #[serde(default, deserialize_with = "empty_is_none")]
    pub token: Option<String>,
}

/// `[metrics]`.
#[derive(Debug, Clone, Default, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct MetricsSection {
    /// A listen address of their own (`127.0.0.1:9464`; port 0 picks one), for Prometheus.
    #[serde(default, deserialize_with = "empty_is_none")]
    pub listen: Option<String>,
    /// On the server's own listener at `/metrics`, for `Authorization: Bearer <token>` only.
    #[serde(default, deserialize_with = "empty_is_none")]
    pub token: Option<String>,
}

impl MetricsSection {
    pub fn enabled(&self) -> bool {
        self.listen.is_some() || self.token.is_some()
    }
}

/// A key set to `""` (an unset `${VAR:-}`) means the key is absent.
fn empty_is_none<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Option<String>, D::Error> {
    let value: Option<String> = Option::deserialize(d)?;
    Ok(value.filter(|v| !v.trim().is_empty()))
}

#[derive(Debug, Clone, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ServerSection {
    /// The address and port to listen on (`127.0.0.1:8080`; port 0 picks a free one).
    pub listen: String,
    /// Host header values accepted (DNS-rebinding protection). Loopback names when unset.
    #[serde(default = "loopback_hosts")]
    pub allowed_hosts: Vec<String>,
    /// Browser origins whose pages may call the endpoints (`https://app.example.com`,
    /// `http://localhost:*`, `null`, or `*` for any); a request with another `Origin` is refused
    /// with 403. Unset: pages of the `allowed_hosts`. `[]`: no browser page at all. Requests
    /// without `Origin` (every non-browser client) always pass.
    #[serde(default)]
    pub allowed_origins: Option<Vec<String>>,
    /// Largest request body accepted, in bytes.
    #[serde(default = "default_body_limit")]
    pub max_body_bytes: usize,
    /// A new connection's first request head must arrive within this of the connection, a later
    /// one within this of its first byte: a client sending a header a byte a second holds a
    /// socket for no longer. 10 s is far more than any real client needs on a slow link.
    #[schemars(with = "concierge_core::written::Duration")]
    #[serde(default = "ten_seconds", with = "humantime_serde")]
    pub header_read_timeout: Duration,
    /// A connection with no request in flight is closed after this long. A minute outlasts a
    /// chat user's pause between questions (clients reuse the connection) and frees an idle
    /// socket within the minute; an open SSE stream is a request in flight and stays.
    #[schemars(with = "concierge_core::written::Duration")]
    #[serde(default = "sixty_seconds", with = "humantime_serde")]
    pub keep_alive_timeout: Duration,
    /// A request's whole body must arrive within this (answered 408 otherwise). Bodies here are
    /// at most `max_body_bytes` (1 MiB): 30 s is 35 KB/s, slower than any link that carries a chat.
    #[schemars(with = "concierge_core::written::Duration")]
    #[serde(default = "thirty_seconds", with = "humantime_serde")]
    pub body_read_timeout: Duration,
    /// Open connections at most; over it a new socket is answered 503 and closed. `serve` raises
    /// its open-file limit to the hard limit and warns at start when that is still below this
    /// (then raise `ulimit -Hn`, or lower this).
    #[serde(default = "default_max_connections")]
    pub max_connections: usize,
    /// Open connections from one peer address (IPv6: one /64) at most, so one peer cannot take
    /// the sockets everyone else needs; 512 is more than a busy backend (an n8n instance with
    /// hundreds of calls in flight) opens. Behind a reverse proxy every connection has the
    /// proxy's address: raise this to `max_connections` there, and let the proxy cap its clients.
    #[serde(default = "default_max_connections_per_peer")]
    pub max_connections_per_peer: usize,
    /// How long one round of upstream probes answers `/health` (anyone may call it; it must not
    /// become load on the upstreams).
    #[schemars(with = "concierge_core::written::Duration")]
    #[serde(default = "five_seconds", with = "humantime_serde")]
    pub health_cache: Duration,
    /// How long a tool call may run before the platform stops it and answers
    /// `deadline_exceeded`. It bounds what a hung upstream can hold, and it is what makes the
    /// idempotency store's rule safe: a write claim older than 10 minutes counts as abandoned,
    /// so no write may run that long (checked).
    #[schemars(with = "concierge_core::written::Duration")]
    #[serde(default = "five_minutes", with = "humantime_serde")]
    pub call_timeout: Duration,
    /// `text` (the default) or `json`: one object per line, for a log shipper.
    #[schemars(extend("x-env" = "CONCIERGE_LOG_FORMAT"))]
    #[serde(default)]
    pub log_format: LogFormat,
    /// Where `serve` writes its process id (relative to the config's folder; default
    /// `var/concierge.pid`), and beside it `<pid_file>.status`, how the last reload went:
    /// what `concierge reload` finds the running server by.
    #[serde(default)]
    pub pid_file: Option<std::path::PathBuf>,
}

impl ServerSection {
    /// [`Self::pid_file`], or its default.
    pub fn pid_file(&self) -> std::path::PathBuf {
        self.pid_file
            .clone()
            .unwrap_or_else(|| std::path::PathBuf::from("var/concierge.pid"))
    }
}

fn five_seconds() -> Duration {
    Duration::from_secs(5)
}

fn ten_seconds() -> Duration {
    Duration::from_secs(10)
}

fn thirty_seconds() -> Duration {
    Duration::from_secs(30)
}

fn sixty_seconds() -> Duration {
    Duration::from_secs(60)
}

fn default_max_connections() -> usize {
    4096
}

fn default_max_connections_per_peer() -> usize {
    512
}

fn loopback_hosts() -> Vec<String> {
    ["localhost", "127.0.0.1", "::1"].map(String::from).to_vec()
}

fn default_body_limit() -> usize {
    1024 * 1024
}

#[derive(Debug, Clone, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct AuditSection {
    /// JSON Lines file; its directory is created.
    pub path: PathBuf,
    /// Also keep every event in an `audit_event` table, to query by user, client, tool and
    /// time: a SQLite file path, or a `postgres://` URL (from the environment: it holds a password).
    #[serde(default)]
    pub database: Option<String>,
}

/// How log lines are written (`[server] log_format`, `CONCIERGE_LOG_FORMAT`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum LogFormat {
    /// For a person at a terminal.
    #[default]
    Text,
    /// One JSON object per line, for a log shipper; a line written during a request carries its
    /// `trace_id`.
    Json,
}

impl std::str::FromStr for LogFormat {
    type Err = String;
    fn from_str(text: &str) -> Result<Self, String> {
        match text.trim() {
            "text" => Ok(Self::Text),
            "json" => Ok(Self::Json),
            other => Err(format!(
                "`{other}` is not a log format; allowed: text, json"
            )),
        }
    }
}
