//! The deployment file: one TOML document, `${VAR}` / `${VAR:-default}` from the environment.
//!
//! Loading turns text into a [`Config`] or a list of [`ConfigError`]s, each saying where (the key
//! path) and what is wrong. Nothing here starts anything; `serve` and `check` share it.
//!
//! Over 600 lines: every section's type and its cross-section checks live together, because the unknown-key report and `concierge check` read the whole document at once; about a third is tests.

use std::collections::BTreeMap;
use std::fmt;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::time::Duration;

use serde::Deserialize;

use crate::interpolate::{BoundUrls, interpolate};

/// One problem in a config, with the key path it concerns.
#[derive(Debug, Clone, PartialEq)]
pub struct ConfigError {
    pub at: String,
    pub message: String,
}

impl ConfigError {
    pub fn new(at: impl Into<String>, message: impl Into<String>) -> Self {
        Self {
            at: at.into(),
            message: message.into(),
        }
    }
}

impl fmt::Display for ConfigError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.at.is_empty() {
            write!(f, "{}", self.message)
        } else {
            write!(f, "{}: {}", self.at, self.message)
        }
    }
}

/// What `serve` binds before it reads the rest of its config (see [`Config::listeners`]).
#[derive(Debug, Clone)]
pub struct Listeners {
    /// `[server] listen`, interpolated.
    pub server: String,
    /// Each `[simulators.<name>]` section, interpolated.
    pub simulators: BTreeMap<String, toml::Value>,
}

/// `[server] listen` as an address, or the error that names it.
pub(crate) fn parse_listen(listen: &str) -> Result<SocketAddr, ConfigError> {
    listen.parse().map_err(|_| {
        ConfigError::new(
            "server.listen",
            format!("`{listen}` is not an address like 127.0.0.1:8080"),
        )
    })
}

impl Listeners {
    /// The addresses as written, for commands that bind nothing.
    pub fn as_written(&self) -> BoundUrls {
        BoundUrls {
            server: Some(BoundUrls::url_of_text(&self.server)),
            simulators: self
                .simulators
                .iter()
                .filter_map(|(name, section)| {
                    let listen = section.get("listen")?.as_str()?;
                    Some((name.clone(), BoundUrls::url_of_text(listen)))
                })
                .collect(),
        }
    }
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Config {
    pub server: ServerSection,
    /// Named rate limiters: `chatbot_mcp = "60/minute"`, or with a policy,
    /// `chatbot_mcp = { rate = "60/minute", policy = "bucket" }`.
    #[serde(default)]
    pub limits: BTreeMap<String, LimiterSection>,
    /// Named audit sinks.
    #[serde(default)]
    pub audit: BTreeMap<String, AuditSection>,
    /// Per-app settings, handed to the app as they are.
    #[serde(default)]
    pub apps: BTreeMap<String, toml::Value>,
    #[serde(default, rename = "endpoint")]
    pub endpoints: Vec<EndpointSection>,
    /// Stand-ins for external systems, started on loopback with the server (demo deployments).
    #[serde(default)]
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
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct OpsSection {
    /// Signs an operator in to `/ops` (at least 16 characters).
    #[serde(default, deserialize_with = "empty_is_none")]
    pub token: Option<String>,
}

/// `[metrics]`.
#[derive(Debug, Clone, Default, Deserialize)]
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

/// `[state]`.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct StateSection {
    /// `redis://host:port/db` (`${CONCIERGE_REDIS_URL:-}`): every `[limits]` limiter and the
    /// session budgets are counted there, exactly across instances. Empty or absent: in-process.
    #[serde(default)]
    pub redis: Option<String>,
    /// `postgres://user:password@host/db` (`${CONCIERGE_DATABASE_URL:-}`): write safety's
    /// idempotency records and write secret live there, shared by every instance (`[writes]
    /// database` is then not used). Empty or absent: the SQLite file of `[writes]`.
    #[serde(default)]
    pub database: Option<String>,
    /// Where write safety's records live when the deployment shares state: `postgres` (durable;
    /// the default when `database` is set) or `redis` (the default when only `redis` is).
    #[serde(default)]
    pub writes: Option<WritesHome>,
    /// While the store behind a limit is down: `refuse` the call as retryable (the default:
    /// a limit that protects a backend must not vanish with Redis), or `allow` it.
    #[serde(default)]
    pub limits_when_down: WhenDown,
    /// This instance's name (`${CONCIERGE_INSTANCE:-}`): the first part of the session ids it
    /// mints, which a balancer reads to send a session's requests back to it. Letters, digits,
    /// `-` and `_`, at most 32.
    #[serde(default)]
    pub instance: Option<String>,
    /// The secret every instance signs session ids with (`${CONCIERGE_SESSION_SECRET:-}`, at
    /// least 32 characters): with it, any instance refuses a session id that another client
    /// opened. Unset: a random key of this process (one instance needs no more).
    #[serde(default)]
    pub session_secret: Option<String>,
}

impl StateSection {
    /// The Redis URL, when one is set (an unset variable interpolates to "").
    pub fn redis(&self) -> Option<&str> {
        self.redis
            .as_deref()
            .map(str::trim)
            .filter(|url| !url.is_empty())
    }

    /// The PostgreSQL URL, when one is set.
    pub fn database(&self) -> Option<&str> {
        self.database
            .as_deref()
            .map(str::trim)
            .filter(|url| !url.is_empty())
    }

    /// Where write records are shared (`None`: the `[writes]` SQLite file of this host).
    pub fn writes_home(&self) -> Option<WritesHome> {
        self.writes.or(match (self.database(), self.redis()) {
            (Some(_), _) => Some(WritesHome::Postgres),
            (None, Some(_)) => Some(WritesHome::Redis),
            (None, None) => None,
        })
    }

    /// Whether several instances are meant to share this deployment's state.
    pub fn is_shared(&self) -> bool {
        self.redis().is_some() || self.database().is_some()
    }

    pub fn instance(&self) -> &str {
        self.instance.as_deref().map(str::trim).unwrap_or_default()
    }

    pub fn session_secret(&self) -> Option<&str> {
        self.session_secret.as_deref().filter(|s| !s.is_empty())
    }

    /// The problems of the section, by key.
    pub fn problems(&self) -> Vec<(&'static str, String)> {
        let mut problems = Vec::new();
        let instance = self.instance();
        if instance.len() > 32
            || !instance
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
        {
            problems.push((
                "state.instance",
                format!("`{instance}`: letters, digits, `-` and `_` only, at most 32"),
            ));
        }
        match (self.writes, self.database(), self.redis()) {
            (Some(WritesHome::Postgres), None, _) => problems.push((
                "state.writes",
                "`postgres` needs `state.database` (a postgres:// URL)".to_string(),
            )),
            (Some(WritesHome::Redis), _, None) => problems.push((
                "state.writes",
                "`redis` needs `state.redis` (a redis:// URL)".to_string(),
            )),
            _ => {}
        }
        if self
            .session_secret()
            .is_some_and(|s| s.chars().count() < 32)
        {
            problems.push((
                "state.session_secret",
                "at least 32 characters (a random string the instances share)".to_string(),
            ));
        }
        problems
    }
}

/// The shared home of idempotency records and the write secret.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum WritesHome {
    Postgres,
    Redis,
}

/// What a limit does while the shared store that counts it is down.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum WhenDown {
    #[default]
    Refuse,
    Allow,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct WritesSection {
    /// SQLite file of idempotency records (shared by every endpoint and every process on this
    /// host); with `[state] database` set, the records live there instead.
    pub database: PathBuf,
    /// How long an `idempotency_key` answers its first result.
    #[serde(default = "one_day", with = "humantime_serde")]
    pub idempotency_window: Duration,
    /// How long a confirm token is valid.
    #[serde(default = "five_minutes", with = "humantime_serde")]
    pub confirm_ttl: Duration,
}

fn one_day() -> Duration {
    Duration::from_secs(24 * 3600)
}

fn five_minutes() -> Duration {
    Duration::from_secs(5 * 60)
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ServerSection {
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
    #[serde(default = "ten_seconds", with = "humantime_serde")]
    pub header_read_timeout: Duration,
    /// A connection with no request in flight is closed after this long. A minute outlasts a
    /// chat user's pause between questions (clients reuse the connection) and frees an idle
    /// socket within the minute; an open SSE stream is a request in flight and stays.
    #[serde(default = "sixty_seconds", with = "humantime_serde")]
    pub keep_alive_timeout: Duration,
    /// A request's whole body must arrive within this (answered 408 otherwise). Bodies here are
    /// at most `max_body_bytes` (1 MiB): 30 s is 35 KB/s, slower than any link that carries a chat.
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
    #[serde(default = "five_seconds", with = "humantime_serde")]
    pub health_cache: Duration,
    /// How long a tool call may run before the platform stops it and answers
    /// `deadline_exceeded`. It bounds what a hung upstream can hold, and it is what makes the
    /// idempotency store's rule safe: a write claim older than 10 minutes counts as abandoned,
    /// so no write may run that long (checked).
    #[serde(default = "five_minutes", with = "humantime_serde")]
    pub call_timeout: Duration,
    /// `text` (the default) or `json`: one object per line, for a log shipper.
    #[serde(default)]
    pub log_format: crate::telemetry::LogFormat,
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

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AuditSection {
    /// JSON Lines file; its directory is created.
    pub path: PathBuf,
    /// Also keep every event in an `audit_event` table, to query by user, client, tool and
    /// time: a SQLite file path, or a `postgres://` URL (from the environment: it holds a password).
    #[serde(default)]
    pub database: Option<String>,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct EndpointSection {
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
    #[serde(default)]
    pub session: SessionMode,
    /// Idle time after which a session is forgotten (`30m`, `90s`).
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
    pub fn session_caps(&self) -> crate::sessions::SessionCaps {
        crate::sessions::SessionCaps {
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

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ScopeRefusal {
    #[default]
    Challenge,
    ToolError,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LegacySse {
    pub sse: String,
    pub messages: String,
}

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum SessionMode {
    /// `Mcp-Session-Id` sessions, bound to the client that opened them.
    #[default]
    Stateful,
    /// Every request stands alone and is answered as JSON; any instance can serve it.
    Stateless,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(tag = "kind", rename_all = "lowercase", deny_unknown_fields)]
pub enum AuthSection {
    /// No authentication; allowed only on a loopback listen address.
    None,
    /// Static bearer tokens per client from an environment variable, `name:token,…`.
    Tokens {
        /// The variable holding the list.
        #[serde(default = "default_tokens_env")]
        env: String,
        /// Used when the variable is unset: for demo deployments only.
        default: Option<String>,
        /// The variable holds one bare token for this client name instead of a `name:token` list
        /// (as `BXH_MCP_TOKEN` does).
        client: Option<String>,
    },
    /// OAuth 2.1 access tokens from the built-in authorization server (`[oauth]`); tools are
    /// checked against the token's scopes.
    Oauth {
        /// The scopes a client should ask for (named in the 401 challenge).
        #[serde(default)]
        scopes: Vec<String>,
    },
}

fn default_tokens_env() -> String {
    "APP_MCP_TOKENS".into()
}

/// What a rate limit counts per.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum RateKey {
    #[default]
    Client,
    Token,
    User,
}

/// One limiter of `[limits]`.
///
/// The policy defaults to the sliding window: "60/minute" then means never more than 60 calls
/// in any 60 seconds, as a reader takes it. The bucket (a burst of the whole count, then one per
/// `period / count`) lets close to twice the count through in a rolling period, so it is only
/// ever chosen by name.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LimiterSection {
    /// `60/minute`.
    pub rate: String,
    pub policy: concierge_core::LimitPolicy,
}

/// The table form of a limiter (the string form is its `rate` alone).
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct LimiterTable {
    rate: String,
    #[serde(default)]
    policy: concierge_core::LimitPolicy,
}

impl<'de> Deserialize<'de> for LimiterSection {
    // By hand rather than `untagged`: an untagged enum hides which key was wrong, while this
    // reports unknown keys and policies like every other table.
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct Visitor;
        impl<'de> serde::de::Visitor<'de> for Visitor {
            type Value = LimiterSection;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str(r#"a rate like "60/minute" or { rate = "60/minute", policy = "sliding_window" }"#)
            }
            fn visit_str<E: serde::de::Error>(self, rate: &str) -> Result<Self::Value, E> {
                Ok(LimiterSection {
                    rate: rate.to_string(),
                    policy: Default::default(),
                })
            }
            fn visit_map<A: serde::de::MapAccess<'de>>(
                self,
                map: A,
            ) -> Result<Self::Value, A::Error> {
                let table =
                    LimiterTable::deserialize(serde::de::value::MapAccessDeserializer::new(map))?;
                Ok(LimiterSection {
                    rate: table.rate,
                    policy: table.policy,
                })
            }
        }
        deserializer.deserialize_any(Visitor)
    }
}

/// A rate as configured: `count` calls per `period`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Rate {
    pub count: u32,
    pub period: Duration,
}

impl Rate {
    /// Parses `60/minute`, `1000/hour`, `5/second`, `100/day`.
    pub fn parse(text: &str) -> Result<Self, String> {
        let (count, unit) = text
            .split_once('/')
            .ok_or_else(|| format!("`{text}` is not a rate like `60/minute`"))?;
        let count: u32 = count
            .trim()
            .parse()
            .ok()
            .filter(|c| *c > 0)
            .ok_or_else(|| format!("`{text}`: the count must be a whole number ≥ 1"))?;
        let period = match unit.trim() {
            "second" | "s" => Duration::from_secs(1),
            "minute" | "min" | "m" => Duration::from_secs(60),
            "hour" | "h" => Duration::from_secs(3600),
            "day" | "d" => Duration::from_secs(86_400),
            other => {
                return Err(format!(
                    "`{text}`: unknown period `{other}` (allowed: second, minute, hour, day)"
                ));
            }
        };
        Ok(Self { count, period })
    }
}

impl Config {
    /// Parses config text with `env` as the environment (injected so tests need no globals).
    /// `${server.url}` and `${simulators.<name>.url}` stand for the addresses as written (port 0
    /// stays 0): right for every command that binds nothing.
    pub fn parse(
        text: &str,
        env: &dyn Fn(&str) -> Option<String>,
    ) -> Result<Self, Vec<ConfigError>> {
        let listeners = Self::listeners(text, env)?;
        Self::parse_bound(text, env, &listeners.as_written())
    }

    /// The first pass of loading for `serve`: what it must bind before the rest of the config can
    /// be read — `[server] listen` and the `[simulators]` sections (interpolated; they cannot
    /// name bound addresses themselves).
    pub fn listeners(
        text: &str,
        env: &dyn Fn(&str) -> Option<String>,
    ) -> Result<Listeners, Vec<ConfigError>> {
        let value: toml::Value =
            toml::from_str(text).map_err(|e| vec![ConfigError::new("", e.to_string())])?;
        let mut errors = Vec::new();
        let unbound = BoundUrls::default();
        let mut server = value
            .get("server")
            .and_then(|s| s.get("listen"))
            .cloned()
            .unwrap_or_else(|| toml::Value::String(String::new()));
        interpolate(&mut server, "server.listen", env, &unbound, &mut errors);
        let mut simulators = BTreeMap::new();
        if let Some(toml::Value::Table(table)) = value.get("simulators") {
            for (name, section) in table {
                let mut section = section.clone();
                interpolate(
                    &mut section,
                    &format!("simulators.{name}"),
                    env,
                    &unbound,
                    &mut errors,
                );
                simulators.insert(name.clone(), section);
            }
        }
        if !errors.is_empty() {
            return Err(errors);
        }
        Ok(Listeners {
            server: server.as_str().unwrap_or_default().to_string(),
            simulators,
        })
    }

    /// Parses config text with the bound addresses `bound` for `${server.url}` and
    /// `${simulators.<name>.url}`.
    pub fn parse_bound(
        text: &str,
        env: &dyn Fn(&str) -> Option<String>,
        bound: &BoundUrls,
    ) -> Result<Self, Vec<ConfigError>> {
        let mut value: toml::Value =
            toml::from_str(text).map_err(|e| vec![ConfigError::new("", e.to_string())])?;
        let mut errors = Vec::new();
        let secrets = std::cell::RefCell::new(Vec::new());
        let recording = |name: &str| {
            let value = env(name);
            if let Some(value) = &value
                && is_secret_name(name)
            {
                secrets.borrow_mut().push((name.to_string(), value.clone()));
            }
            value
        };
        interpolate(&mut value, "", &recording, bound, &mut errors);
        // Every problem in one run: the unknown keys whatever else is wrong (they do not depend
        // on values), and, when the values could be read, whatever else the structure and the
        // checks between sections find.
        let interpolated = errors.is_empty();
        let (unknown, parsed) = deserialize_reporting_unknown_keys::<Config>(value);
        errors.extend(unknown);
        match parsed {
            Ok(config) => {
                if interpolated {
                    errors.extend(config.validate());
                }
                if errors.is_empty() {
                    return Ok(config);
                }
            }
            // With a value left uninterpolated, that is likely the cause, and already reported.
            Err(error) if interpolated => errors.push(error),
            Err(_) => {}
        }
        Err(without_secrets(errors, &secrets.into_inner()))
    }

    pub fn listen_addr(&self) -> Result<SocketAddr, ConfigError> {
        parse_listen(&self.server.listen)
    }

    /// Checks what serde cannot: references between sections, limits, paths, auth placement.
    fn validate(&self) -> Vec<ConfigError> {
        let mut errors = Vec::new();
        let listen = self.listen_addr();
        if let Err(error) = &listen {
            errors.push(error.clone());
        }
        let server = &self.server;
        for (key, value) in [
            ("header_read_timeout", server.header_read_timeout),
            ("keep_alive_timeout", server.keep_alive_timeout),
            ("body_read_timeout", server.body_read_timeout),
        ] {
            if value < Duration::from_millis(100) {
                errors.push(ConfigError::new(
                    format!("server.{key}"),
                    "must be at least 100ms (it bounds how long a socket may wait)",
                ));
            }
        }
        if server.call_timeout < Duration::from_secs(1)
            || server.call_timeout >= concierge_core::idempotency::ABANDONED
        {
            errors.push(ConfigError::new(
                "server.call_timeout",
                format!(
                    "must be at least 1s and shorter than {} (after that long an unfinished write's idempotency key is taken over)",
                    humantime::format_duration(concierge_core::idempotency::ABANDONED)
                ),
            ));
        }
        for (key, value) in [
            ("max_connections", server.max_connections),
            ("max_connections_per_peer", server.max_connections_per_peer),
        ] {
            if value == 0 {
                errors.push(ConfigError::new(
                    format!("server.{key}"),
                    "must be at least 1 (0 would refuse every connection)",
                ));
            }
        }
        for (name, limiter) in &self.limits {
            if let Err(message) = Rate::parse(&limiter.rate) {
                errors.push(ConfigError::new(format!("limits.{name}"), message));
            }
        }
        if let Some(writes) = &self.writes {
            // Longer than a write may take to be abandoned (10 min), and bounded so times stay sane.
            let day = 24 * 3600;
            if !(15 * 60..=30 * day).contains(&writes.idempotency_window.as_secs()) {
                errors.push(ConfigError::new(
                    "writes.idempotency_window",
                    "must be between 15m and 30d (the seed's is 24h)",
                ));
            }
            if writes.confirm_ttl > Duration::from_secs(3600) {
                errors.push(ConfigError::new(
                    "writes.confirm_ttl",
                    "must be at most 1h: a confirmation is for the change just shown",
                ));
            }
        }
        let mut paths = std::collections::HashSet::new();
        for (index, endpoint) in self.endpoints.iter().enumerate() {
            let at = |key: &str| format!("endpoint[{index}].{key}");
            if !endpoint.path.starts_with('/') || endpoint.path == "/health" {
                errors.push(ConfigError::new(
                    at("path"),
                    format!("`{}` must start with `/` and not be /health", endpoint.path),
                ));
            }
            if !paths.insert(endpoint.path.clone()) {
                errors.push(ConfigError::new(
                    at("path"),
                    format!("`{}` is mounted twice", endpoint.path),
                ));
            }
            match (&endpoint.handler, endpoint.tools.is_empty()) {
                (Some(_), false) => errors.push(ConfigError::new(
                    at("tools"),
                    "an endpoint serves either `tools` or a `handler`, not both",
                )),
                (None, true) => errors.push(ConfigError::new(
                    at("tools"),
                    "no tools: list them as `app.tool` or `app.*`",
                )),
                _ => {}
            }
            for tool in &endpoint.tools {
                let (tool, alias) = split_alias(tool);
                if alias.is_some() && tool.ends_with(".*") {
                    errors.push(ConfigError::new(
                        at("tools"),
                        format!("`{tool} as …`: only one tool can be renamed, not `app.*`"),
                    ));
                } else if alias.is_some_and(|a| a.is_empty() || a.contains(char::is_whitespace)) {
                    errors.push(ConfigError::new(
                        at("tools"),
                        format!("`{tool} as …`: the name after `as` must be one word"),
                    ));
                }
                if tool
                    .split_once('.')
                    .is_none_or(|(a, t)| a.is_empty() || t.is_empty())
                {
                    errors.push(ConfigError::new(
                        at("tools"),
                        format!("`{tool}` must be written `app.tool` or `app.*`"),
                    ));
                }
            }
            for (key, limit) in [
                ("rate_limit", &endpoint.rate_limit),
                ("write_rate_limit", &endpoint.write_rate_limit),
                ("client_rate_limit", &endpoint.client_rate_limit),
            ] {
                if let Some(limit) = limit
                    && !self.limits.contains_key(limit)
                {
                    errors.push(ConfigError::new(
                        at(key),
                        format!("no limiter `{limit}` in [limits]"),
                    ));
                }
            }
            if let Some(audit) = &endpoint.audit
                && !self.audit.contains_key(audit)
            {
                errors.push(ConfigError::new(
                    at("audit"),
                    format!("no sink `{audit}` in [audit]"),
                ));
            }
            if matches!(endpoint.auth, AuthSection::Oauth { .. }) && self.oauth.is_none() {
                errors.push(ConfigError::new(
                    at("auth"),
                    "`kind = \"oauth\"` needs an [oauth] section (the authorization server)",
                ));
            }
            if matches!(endpoint.auth, AuthSection::None)
                && let Ok(addr) = &listen
                && !addr.ip().is_loopback()
            {
                errors.push(ConfigError::new(
                    at("auth"),
                    format!(
                        "auth kind `none` is allowed only on a loopback listen address, not {addr}"
                    ),
                ));
            }
            if endpoint.idle_timeout.is_zero() {
                errors.push(ConfigError::new(
                    at("idle_timeout"),
                    "must be longer than zero",
                ));
            }
        }
        errors
    }
}

/// Deserializes a config, reporting every unknown key rather than the first only.
///
/// serde (`deny_unknown_fields` on every section type) stops at the first unknown key. So each
/// one it names is recorded, removed from the raw document, and the document read again, until
/// no unknown key is left; then the outcome of that last read is handed back with them. The
/// known keys are thereby always exactly the fields of the section types — no second list to
/// keep in step with the structs, nested sections (`auth`, `legacy_sse`, `[oauth.users]`)
/// included — and serde's message lists them, which is where "did you mean" comes from. A round
/// is one read of a document of a few kilobytes, and there are at most as many as keys.
fn deserialize_reporting_unknown_keys<T: serde::de::DeserializeOwned>(
    mut value: toml::Value,
) -> (Vec<ConfigError>, Result<T, ConfigError>) {
    // Each round removes one unknown key, so the rounds end; the bound is a guard all the same.
    const ROUNDS: usize = 1000;
    let mut unknown = Vec::new();
    loop {
        let error = match serde_path_to_error::deserialize::<_, T>(value.clone()) {
            Ok(config) => return (unknown, Ok(config)),
            Err(error) => error,
        };
        // The toml deserializer appends "in `<path>`" lines: the path is reported on its own.
        let message = error.inner().to_string();
        let message = message.lines().next().unwrap_or_default().to_string();
        let mut segments: Vec<&serde_path_to_error::Segment> = error.path().iter().collect();
        if let Some((key, expected)) = unknown_field(&message)
            && unknown.len() < ROUNDS
        {
            // The path ends with the key itself, except inside an internally tagged enum (`auth`),
            // whose fields serde reads from a buffer the path cannot follow: there it ends with
            // the table holding the key.
            let names_key = |segment: &serde_path_to_error::Segment| matches!(segment, serde_path_to_error::Segment::Map { key: last } if *last == key);
            if segments.last().is_some_and(|last| names_key(last)) {
                segments.pop();
            }
            if let Some(table) = table_at(&mut value, &segments)
                && let Some(misspelt) = table.remove(&key)
            {
                let near = nearest(&key, &expected);
                // Read on as if corrected, so that a required key misspelt is not reported
                // again as missing, and what follows it is read too.
                if let Some(near) = near
                    && !table.contains_key(near)
                {
                    table.insert(near.to_string(), misspelt);
                }
                unknown.push(ConfigError::new(
                    path_text(&segments, &key),
                    unknown_key_message(near, &expected),
                ));
                continue;
            }
        }
        let at = error.path().to_string();
        let message = match unknown_variant(&message) {
            Some((variant, expected)) => match nearest(&variant, &expected) {
                Some(near) => format!("{message}; did you mean `{near}`?"),
                None => message,
            },
            None => message,
        };
        let at = if at == "." { String::new() } else { at };
        return (unknown, Err(ConfigError::new(at, message)));
    }
}

/// serde's "unknown field `x`, expected one of `a`, `b`" (or "expected `a` or `b`", "there are
/// no fields"): the key and the names it lists.
fn unknown_field(message: &str) -> Option<(String, Vec<String>)> {
    backticked_after(message, "unknown field `")
}

/// serde's "unknown variant `x`, expected one of `a`, `b`": the value and the names it lists.
fn unknown_variant(message: &str) -> Option<(String, Vec<String>)> {
    backticked_after(message, "unknown variant `")
}

fn backticked_after(message: &str, prefix: &str) -> Option<(String, Vec<String>)> {
    let rest = message.strip_prefix(prefix)?;
    let (name, rest) = rest.split_once('`')?;
    let expected = rest
        .split('`')
        .skip(1)
        .step_by(2)
        .map(str::to_string)
        .collect();
    Some((name.to_string(), expected))
}

fn unknown_key_message(near: Option<&str>, known: &[String]) -> String {
    match near {
        Some(near) => format!("unknown key; did you mean `{near}`?"),
        None if known.is_empty() => "unknown key; this table takes none".to_string(),
        None => format!(
            "unknown key; the keys here are {}",
            known
                .iter()
                .map(|k| format!("`{k}`"))
                .collect::<Vec<_>>()
                .join(", ")
        ),
    }
}

/// The known name closest to a misspelt one, when it is close enough to be what was meant: at
/// most a third of its letters differ (`idle_timout` → `idle_timeout`, `rate_limt` → `rate_limit`).
fn nearest<'a>(name: &str, known: &'a [String]) -> Option<&'a str> {
    known
        .iter()
        .map(|candidate| (strsim::levenshtein(name, candidate), candidate))
        .filter(|(distance, candidate)| *distance * 3 <= candidate.chars().count().max(3))
        .min_by_key(|(distance, _)| *distance)
        .map(|(_, candidate)| candidate.as_str())
}

/// The table that `path` leads to in `value`, if it leads to one (else the error is reported as
/// serde gave it).
fn table_at<'a>(
    value: &'a mut toml::Value,
    path: &[&serde_path_to_error::Segment],
) -> Option<&'a mut toml::Table> {
    use serde_path_to_error::Segment;
    let mut current = value;
    for segment in path {
        let next = match segment {
            Segment::Seq { index } => current.get_mut(*index),
            Segment::Map { key } => current.get_mut(key.as_str()),
            // An externally tagged variant is a table key (`{ variant = { … } }`); an internally
            // tagged one is not a level of the document.
            Segment::Enum { variant } if current.get(variant.as_str()).is_none() => continue,
            Segment::Enum { variant } => current.get_mut(variant.as_str()),
            Segment::Unknown => None,
        };
        current = next?;
    }
    current.as_table_mut()
}

/// `endpoint[0].auth` + `defualt` → `endpoint[0].auth.defualt`, written as serde_path_to_error
/// writes paths.
fn path_text(path: &[&serde_path_to_error::Segment], key: &str) -> String {
    use serde_path_to_error::Segment;
    let mut text = String::new();
    for segment in path {
        if !text.is_empty() && !matches!(segment, Segment::Seq { .. }) {
            text.push('.');
        }
        text.push_str(&segment.to_string());
    }
    if !text.is_empty() {
        text.push('.');
    }
    text.push_str(key);
    text
}

/// `"app.tool as name"` → (`app.tool`, `Some(name)`).
pub fn split_alias(entry: &str) -> (&str, Option<&str>) {
    match entry.split_once(" as ") {
        Some((tool, alias)) => (tool.trim(), Some(alias.trim())),
        None => (entry.trim(), None),
    }
}

/// Whether a variable's name says its value is a secret (`APP_MCP_TOKENS`, `BXH_KG_API_KEY`,
/// `CONCIERGE_OPS_TOKEN`, …).
fn is_secret_name(name: &str) -> bool {
    let name = name.to_ascii_uppercase();
    ["TOKEN", "KEY", "SECRET", "PASSWORD", "PASSWD", "CREDENTIAL"]
        .iter()
        .any(|word| name.contains(word))
}

/// A problem report shows `${NAME}` where a secret's value would stand: reports end up in
/// terminals, CI logs and tickets (found by the `config` fuzz target: a token put where a rate
/// belongs was printed whole). Values under 4 characters are left, or every message would be cut up.
fn without_secrets(errors: Vec<ConfigError>, secrets: &[(String, String)]) -> Vec<ConfigError> {
    let hide = |text: &str| {
        secrets
            .iter()
            .filter(|(_, value)| value.len() >= 4)
            .fold(text.to_string(), |text, (name, value)| {
                text.replace(value.as_str(), &format!("${{{name}}}"))
            })
    };
    errors
        .into_iter()
        .map(|error| ConfigError {
            at: hide(&error.at),
            message: hide(&error.message),
        })
        .collect()
}

/// Reads an app's or simulator's section into its own config type, naming the key at fault.
pub fn section<T: serde::de::DeserializeOwned>(value: &toml::Value) -> Result<T, String> {
    // Every unknown key of the section at once, as for the platform's own sections.
    let (mut problems, read) = deserialize_reporting_unknown_keys::<T>(value.clone());
    match read {
        Ok(section) if problems.is_empty() => return Ok(section),
        Ok(_) => {}
        Err(error) => problems.push(error),
    }
    Err(problems
        .iter()
        .map(ToString::to_string)
        .collect::<Vec<_>>()
        .join("; "))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env(name: &str) -> Option<String> {
        match name {
            "PORT_ADDR" => Some("127.0.0.1:9000".into()),
            _ => None,
        }
    }

    const MINIMAL: &str = r#"
        [server]
        listen = "${PORT_ADDR}"
        [limits]
        chatbot = "60/minute"
        [[endpoint]]
        path = "/coffee/mcp"
        tools = ["coffee.*"]
        rate_limit = "chatbot"
        auth = { kind = "tokens", default = "demo:demo-token" }
    "#;

    #[test]
    fn interpolates_and_parses() {
        let config = Config::parse(MINIMAL, &env).unwrap();
        assert_eq!(config.server.listen, "127.0.0.1:9000");
        assert_eq!(config.endpoints[0].idle_timeout, Duration::from_secs(1800));
        assert!(
            matches!(&config.endpoints[0].auth, AuthSection::Tokens { env, .. } if env == "APP_MCP_TOKENS")
        );
    }

    /// Fuzz regression (`config`): a token where a rate belongs was printed whole.
    #[test]
    fn a_problem_report_names_a_secret_instead_of_showing_it() {
        let env = |name: &str| match name {
            "APP_TOKEN" => Some("s3cr3t-value-5e0c2b".to_string()),
            "FUZZ_LISTEN" => Some("127.0.0.1:0".to_string()),
            _ => None,
        };
        let text =
            "[server]\nlisten = \"${FUZZ_LISTEN}\"\n[limits]\nx = \"${APP_TOKEN:-60/minute}\"\n";
        let errors = Config::parse(text, &env).unwrap_err();
        let report = format!("{errors:?}");
        assert!(!report.contains("s3cr3t"), "{report}");
        assert!(report.contains("`${APP_TOKEN}` is not a rate"), "{report}");
    }

    #[test]
    fn unknown_keys_are_named_with_their_place() {
        let text = MINIMAL.replace("rate_limit = \"chatbot\"", "rate_limt = \"chatbot\"");
        let errors = Config::parse(&text, &env).unwrap_err();
        assert_eq!(errors[0].at, "endpoint[0].rate_limt");
        assert_eq!(
            errors[0].message, "unknown key; did you mean `rate_limit`?",
            "{errors:?}"
        );
    }

    #[test]
    fn write_records_go_where_the_shared_stores_are_and_a_home_needs_its_store() {
        let state = |text: &str| -> StateSection { toml::from_str(text).unwrap() };
        assert_eq!(state("").writes_home(), None);
        assert_eq!(
            state("redis = \"redis://r/\"").writes_home(),
            Some(WritesHome::Redis)
        );
        assert_eq!(
            state("redis = \"redis://r/\"\ndatabase = \"postgres://p/db\"").writes_home(),
            Some(WritesHome::Postgres)
        );
        let chosen =
            state("redis = \"redis://r/\"\ndatabase = \"postgres://p/db\"\nwrites = \"redis\"");
        assert_eq!(chosen.writes_home(), Some(WritesHome::Redis));
        // An unset variable is an empty URL: no store, so no home, and the choice is refused.
        let orphan = state("database = \"\"\nwrites = \"postgres\"");
        let problems = orphan.problems();
        assert_eq!(problems.len(), 1, "{problems:?}");
        assert_eq!(problems[0].0, "state.writes");
    }

    fn texts(errors: &[ConfigError]) -> Vec<String> {
        errors.iter().map(ToString::to_string).collect()
    }

    #[test]
    fn every_unknown_key_is_reported_in_one_run_with_the_other_problems() {
        let text = format!(
            "{MINIMAL}
            idle_timout = \"10m\"
            legacy_sse = {{ sse = \"/sse\", mesages = \"/messages\" }}
            [[endpoint]]
            path = \"/second/mcp\"
            tols = [\"coffee.*\"]
            auth = {{ kind = \"tokens\", defualt = \"demo:demo-token\" }}
            [servre]
            listen = \"x\"
            "
        )
        .replace("rate_limit = \"chatbot\"", "rate_limt = \"chatbot\"")
        .replace("60/minute", "60/fortnight");
        let errors = texts(&Config::parse(&text, &env).unwrap_err());
        for expected in [
            "endpoint[0].idle_timout: unknown key; did you mean `idle_timeout`?",
            "endpoint[0].rate_limt: unknown key; did you mean `rate_limit`?",
            "endpoint[0].legacy_sse.mesages: unknown key; did you mean `messages`?",
            "endpoint[1].tols: unknown key; did you mean `tools`?",
            // Inside `auth`, an internally tagged enum: the path still names the key.
            "endpoint[1].auth.defualt: unknown key; did you mean `default`?",
            "servre: unknown key; did you mean `server`?",
        ] {
            assert!(
                errors.iter().any(|e| e == expected),
                "{expected} in {errors:#?}"
            );
        }
        // Read on as if corrected (`tols` as `tools`, `mesages` as the required `messages`), the
        // structure holds, so the checks between sections ran too; nothing is reported twice.
        assert!(
            errors
                .iter()
                .any(|e| e.starts_with("limits.chatbot: ") && e.contains("fortnight")),
            "{errors:#?}"
        );
        assert_eq!(errors.len(), 7, "{errors:#?}");
    }

    #[test]
    fn a_key_without_a_near_name_lists_the_keys_of_its_table() {
        let text = MINIMAL.replace(
            "[limits]",
            "[writes]\ndatabase = \"w.sqlite\"\nzzz = 1\n[limits]",
        );
        let errors = texts(&Config::parse(&text, &env).unwrap_err());
        assert_eq!(
            errors,
            [
                "writes.zzz: unknown key; the keys here are `database`, `idempotency_window`, \
              `confirm_ttl`"
            ]
        );
    }

    #[test]
    fn unknown_keys_are_reported_beside_unset_variables_and_bad_values() {
        let text = MINIMAL
            .replace("rate_limit = \"chatbot\"", "rate_limt = \"chatbot\"")
            .replace(
                "\"coffee.*\"]",
                "\"coffee.*\"]\ninstructions = \"${UNSET}\"",
            );
        let errors = texts(&Config::parse(&text, &env).unwrap_err());
        assert_eq!(errors.len(), 2, "{errors:#?}");
        assert!(errors[0].contains("UNSET is not set"), "{errors:#?}");
        assert_eq!(
            errors[1],
            "endpoint[0].rate_limt: unknown key; did you mean `rate_limit`?"
        );

        // A value serde refuses ends the reading (what follows depends on it), but the unknown
        // keys are all there, and a misspelt choice gets its suggestion too.
        let text = MINIMAL.replace(
            "rate_limit = \"chatbot\"",
            "rate_limt = \"chatbot\"\nsession = \"stateles\"",
        );
        let errors = texts(&Config::parse(&text, &env).unwrap_err());
        assert_eq!(errors.len(), 2, "{errors:#?}");
        assert_eq!(
            errors[0],
            "endpoint[0].rate_limt: unknown key; did you mean `rate_limit`?"
        );
        assert!(
            errors[1].starts_with("endpoint[0].session: unknown variant `stateles`")
                && errors[1].ends_with("did you mean `stateless`?"),
            "{errors:#?}"
        );
    }

    #[test]
    fn an_apps_section_reports_every_unknown_key_too() {
        #[derive(Debug, Deserialize)]
        #[serde(deny_unknown_fields)]
        #[allow(dead_code)]
        struct Feed {
            base_url: String,
            timeout: Option<String>,
        }
        #[derive(Debug, Deserialize)]
        #[serde(deny_unknown_fields)]
        #[allow(dead_code)]
        struct App {
            database: String,
            feed: Feed,
        }
        let value: toml::Value = toml::from_str(
            "databse = \"x.sqlite\"\n[feed]\nbase_url = \"http://t\"\ntimout = \"5s\"\n",
        )
        .unwrap();
        let error = section::<App>(&value).unwrap_err();
        assert!(
            error.contains("databse: unknown key; did you mean `database`?"),
            "{error}"
        );
        assert!(
            error.contains("feed.timout: unknown key; did you mean `timeout`?"),
            "{error}"
        );
    }

    #[test]
    fn near_names_are_close_ones_only() {
        let known: Vec<String> = ["idle_timeout", "path", "tools", "auth"]
            .map(String::from)
            .to_vec();
        assert_eq!(nearest("idle_timout", &known), Some("idle_timeout"));
        assert_eq!(nearest("tols", &known), Some("tools"));
        assert_eq!(nearest("pth", &known), Some("path"));
        assert_eq!(nearest("listen", &known), None);
    }

    #[test]
    fn bad_limits_references_and_public_auth_none_are_reported() {
        let text = MINIMAL
            .replace("60/minute", "60/fortnight")
            .replace("rate_limit = \"chatbot\"", "rate_limit = \"other\"")
            .replace("${PORT_ADDR}", "0.0.0.0:8080")
            .replace(
                "{ kind = \"tokens\", default = \"demo:demo-token\" }",
                "{ kind = \"none\" }",
            );
        let errors = Config::parse(&text, &env).unwrap_err();
        let text: Vec<String> = errors.iter().map(|e| e.to_string()).collect();
        assert!(
            text.iter()
                .any(|e| e.starts_with("limits.chatbot: ") && e.contains("fortnight")),
            "{text:?}"
        );
        assert!(
            text.iter()
                .any(|e| e.starts_with("endpoint[0].rate_limit: no limiter `other`")),
            "{text:?}"
        );
        assert!(
            text.iter()
                .any(|e| e.starts_with("endpoint[0].auth: ") && e.contains("loopback")),
            "{text:?}"
        );
    }

    #[test]
    fn limiters_default_to_the_sliding_window_and_name_the_bucket() {
        use concierge_core::LimitPolicy;
        let config = Config::parse(MINIMAL, &env).unwrap();
        assert_eq!(config.limits["chatbot"].policy, LimitPolicy::SlidingWindow);
        let text = MINIMAL.replace(
            "chatbot = \"60/minute\"",
            "chatbot = { rate = \"60/minute\", policy = \"bucket\" }",
        );
        let config = Config::parse(&text, &env).unwrap();
        assert_eq!(
            config.limits["chatbot"],
            LimiterSection {
                rate: "60/minute".into(),
                policy: LimitPolicy::Bucket
            }
        );
        let text = MINIMAL.replace(
            "chatbot = \"60/minute\"",
            "chatbot = { rate = \"60/minute\", polcy = \"bucket\" }",
        );
        let errors = texts(&Config::parse(&text, &env).unwrap_err());
        assert_eq!(
            errors,
            ["limits.chatbot.polcy: unknown key; did you mean `policy`?"],
            "{errors:?}"
        );
        let text = MINIMAL.replace(
            "chatbot = \"60/minute\"",
            "chatbot = { rate = \"60/minute\", policy = \"buckets\" }",
        );
        let errors = texts(&Config::parse(&text, &env).unwrap_err());
        assert!(
            errors.len() == 1 && errors[0].contains("did you mean `bucket`?"),
            "{errors:?}"
        );
    }

    #[test]
    fn rates_parse() {
        assert_eq!(
            Rate::parse("60/minute").unwrap(),
            Rate {
                count: 60,
                period: Duration::from_secs(60)
            }
        );
        assert!(Rate::parse("0/minute").is_err());
        assert!(Rate::parse("sixty").is_err());
    }
}
