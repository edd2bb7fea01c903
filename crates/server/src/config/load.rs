//! Loading: config text → interpolated TOML → a [`Config`] and its cross-section checks, or
//! every problem at once. `serve` loads in two passes (what it binds first, then the rest with
//! the bound addresses); every other command in one.

use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::time::Duration;

use super::endpoint::AuthSection;
use super::error::ConfigError;
use super::interpolate::{BoundUrls, interpolate};
use super::limits::Rate;
use super::sections::*;
use super::unknown_keys::deserialize_reporting_unknown_keys;

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
