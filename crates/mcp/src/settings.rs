//! An `[apps.<name>]` section of kind `mcp`, as the config writes it, and what is checked
//! before anything starts.

use std::collections::BTreeMap;
use std::time::Duration;

use concierge_core::{ClientCredentials, ToolPolicy};
use serde::{Deserialize, Deserializer};
use serde_json::{Map, Value};

/// One upstream MCP server and the tools of it that concierge serves.
#[derive(Debug, Clone, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct McpSettings {
    /// A server started as a child process, spoken to over its stdin and stdout: the program
    /// and its arguments.
    #[serde(default)]
    pub command: Option<Vec<String>>,
    /// A server reached over Streamable HTTP.
    #[serde(default)]
    pub url: Option<String>,
    /// Which era to speak: `auto` (the default: `server/discover` first, `initialize` at
    /// 2025-11-25 for a server that does not know it), `2026-07-28` or `2025-11-25` only (for a
    /// server that answers discovery wrongly).
    #[serde(default)]
    pub protocol: Protocol,
    /// For a `url`: `streamable-http` (the default) or `sse`, the legacy HTTP+SSE transport
    /// of 2024-11-05 (the `url` is its event stream) for a server that speaks nothing newer.
    #[serde(default)]
    pub transport: Option<String>,
    /// For a `command`: the only variables it gets besides `PATH`.
    #[serde(default)]
    pub env: BTreeMap<String, String>,
    /// For a `command`: the folder it starts in (default: concierge's own).
    #[serde(default)]
    pub cwd: Option<String>,
    /// For a `url`: headers sent with every request (concierge's own credentials). Never
    /// logged.
    #[serde(default)]
    pub headers: BTreeMap<String, String>,
    /// For a `url` behind OAuth: concierge's own client credentials there (the client
    /// credentials grant). Never the caller's token.
    #[serde(default)]
    pub oauth: Option<ClientCredentials>,
    /// Tell the upstream who is calling: each call's `_meta["io.concierge/identity"]` is a JWT
    /// concierge signs for `identity_audience` (`sub`, `client_id`, `scope`; a minute's life;
    /// keys at `/identity/jwks`). Never the caller's own token.
    #[serde(default)]
    pub forward_identity: bool,
    /// The `aud` of those JWTs (default: the `url`, or the `command`'s program).
    #[serde(default)]
    pub identity_audience: Option<String>,
    /// The upstream's tools that exist here, by the upstream's names. Required: a server's new
    /// tool is not served until someone lists it.
    pub tools: Vec<String>,
    /// Upstream name → the name served here.
    #[serde(default)]
    pub rename: BTreeMap<String, String>,
    /// Per upstream tool name: what concierge says and does differently.
    #[serde(default, rename = "override")]
    pub overrides: BTreeMap<String, ToolOverride>,
    /// `serve` (connect when the server starts, the default) or `lazy` (on the first call).
    #[serde(default)]
    pub start: Start,
    /// How long one call may take upstream before it is cancelled there.
    #[schemars(with = "concierge_core::written::Duration", extend("default" = "1m"))]
    #[serde(default = "one_minute", deserialize_with = "bounded_duration")]
    pub call_timeout: Duration,
    /// How long starting waits for the upstream's first tool list.
    #[schemars(with = "concierge_core::written::Duration", extend("default" = "30s"))]
    #[serde(default = "half_a_minute", deserialize_with = "bounded_duration")]
    pub start_timeout: Duration,
    /// A result larger than this (its JSON) is answered as a readable error.
    #[schemars(with = "concierge_core::written::Size")]
    #[serde(default = "four_mib", deserialize_with = "concierge_core::sizes::size")]
    pub max_result_bytes: usize,
    /// While the upstream is down its tools answer a retryable error (`error`, the default),
    /// or are not listed at all (`hide`).
    #[serde(default)]
    pub when_down: WhenDown,
    /// `en`, `ru`, `zh`, `de` or `vi`: the language of the platform's messages to the model.
    #[serde(default)]
    pub language: Option<String>,
    /// The deployment is whole without this server (an example whose program is installed
    /// apart from concierge, say): `/health` reports it, but its being down or starting leaves
    /// the status `ok`. Its tools answer as ever ("not reachable" while it is down).
    #[serde(default)]
    pub optional: bool,
}

/// The protocol era concierge speaks to an upstream.
#[derive(
    Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize, clap::ValueEnum, schemars::JsonSchema,
)]
pub enum Protocol {
    #[default]
    #[serde(rename = "auto")]
    #[value(name = "auto")]
    Auto,
    #[serde(rename = "2026-07-28")]
    #[value(name = "2026-07-28")]
    Discover,
    #[serde(rename = "2025-11-25")]
    #[value(name = "2025-11-25")]
    Initialize,
}

/// When the upstream is first connected.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Start {
    #[default]
    Serve,
    Lazy,
}

/// What a client sees of an upstream that is down.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum WhenDown {
    #[default]
    Error,
    Hide,
}

/// What concierge says and does differently for one upstream tool: the keys every kind's tools
/// take, and the upstream's arguments concierge fills in.
#[derive(Debug, Clone, Default, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ToolOverride {
    #[serde(flatten)]
    pub policy: ToolPolicy,
    /// Arguments always sent, removed from the schema; a call that passes one is refused.
    #[serde(default)]
    pub fixed: Map<String, Value>,
    /// The upstream's own argument that means "change nothing" (a boolean): with it, a write's
    /// `dry_run` and its confirmation preview ask the upstream; without it, the preview says
    /// what would be sent.
    #[serde(default)]
    pub dry_run: Option<String>,
}

impl McpSettings {
    /// Settings for a one-off look at a server (`concierge mcp-probe`): every tool it lists,
    /// the defaults of a section; the caller sets `command` or `url`.
    pub fn probing() -> Self {
        Self {
            command: None,
            url: None,
            transport: None,
            protocol: Protocol::Auto,
            env: BTreeMap::new(),
            cwd: None,
            headers: BTreeMap::new(),
            oauth: None,
            forward_identity: false,
            identity_audience: None,
            tools: Vec::new(),
            rename: BTreeMap::new(),
            overrides: BTreeMap::new(),
            start: Start::Serve,
            call_timeout: one_minute(),
            start_timeout: half_a_minute(),
            max_result_bytes: four_mib(),
            when_down: WhenDown::Error,
            language: None,
            optional: false,
        }
    }

    /// Whether the `url` speaks the legacy HTTP+SSE transport.
    pub fn legacy_sse(&self) -> bool {
        self.transport.as_deref() == Some("sse")
    }

    /// Everything that can be known wrong without the upstream: one message per problem.
    pub fn problems(&self) -> Vec<String> {
        let mut problems = Vec::new();
        match (&self.command, &self.url) {
            (Some(_), Some(_)) => problems.push("set `command` or `url`, not both".into()),
            (None, None) => problems.push(
                "set `command` (a server started over stdio) or `url` (Streamable HTTP)".into(),
            ),
            (Some(command), None) if command.is_empty() || command[0].trim().is_empty() => {
                problems.push("`command` names no program".into())
            }
            (Some(_), None) if !self.headers.is_empty() || self.oauth.is_some() => problems
                .push("`headers` and `oauth` are for a `url`; a `command` gets `env`".into()),
            (None, Some(url)) => {
                if self
                    .oauth
                    .as_ref()
                    .is_some_and(|oauth| oauth.token_url.is_some())
                {
                    // The MCP server's protected resource metadata names its token endpoint.
                    problems.push(
                        "`oauth.token_url` is for an `openapi` app: an MCP server's token \
                         endpoint is found from the server's metadata"
                            .into(),
                    );
                }
                if !(url.starts_with("http://") || url.starts_with("https://")) {
                    problems.push("`url` must start with http:// or https://".into());
                }
                if !self.env.is_empty() || self.cwd.is_some() {
                    problems
                        .push("`env` and `cwd` are for a `command`; a `url` gets `headers`".into());
                }
                for name in self.headers.keys() {
                    let lower = name.to_ascii_lowercase();
                    if http::HeaderName::from_bytes(name.as_bytes()).is_err() {
                        problems.push(format!("`headers`: `{name}` is not a header name"));
                    } else if ["accept", "mcp-session-id", "last-event-id"]
                        .contains(&lower.as_str())
                    {
                        problems.push(format!("`headers`: `{name}` is the transport's own"));
                    } else if lower == "authorization" && self.oauth.is_some() {
                        problems.push(
                            "`headers.Authorization` and `oauth`: the token comes from one of them"
                                .into(),
                        );
                    }
                }
            }
            _ => {}
        }
        match self.transport.as_deref() {
            None | Some("streamable-http") => {}
            Some("sse") if self.command.is_some() => {
                problems.push("`transport` is for a `url`; a `command` speaks over stdio".into())
            }
            Some("sse") if self.protocol == Protocol::Discover => problems.push(
                "`protocol = \"2026-07-28\"` needs Streamable HTTP; `transport = \"sse\"` \
                 (2024-11-05) speaks `initialize` only"
                    .into(),
            ),
            Some("sse") => {}
            Some(other) => problems.push(format!(
                "`transport = \"{other}\"`: use `streamable-http` (the default) or `sse` \
                 (the legacy HTTP+SSE transport)"
            )),
        }
        if self.tools.is_empty() {
            problems.push(
                "`tools` lists no tool: name the upstream's tools to serve (an allowlist)".into(),
            );
        }
        let mut served: BTreeMap<&str, &str> = BTreeMap::new();
        for tool in &self.tools {
            let name = self.served_name(tool);
            if !is_tool_name(name) {
                problems.push(format!(
                    "tool `{tool}` would be served as `{name}`: a tool's name is 1–64 letters, \
                     digits, `_`, `-` or `.`; `rename` it"
                ));
            }
            if let Some(other) = served.insert(name, tool) {
                problems.push(format!(
                    "tools `{other}` and `{tool}` would both be served as `{name}`"
                ));
            }
        }
        for upstream in self.rename.keys().chain(self.overrides.keys()) {
            if !self.tools.contains(upstream) {
                problems.push(format!(
                    "`{upstream}` is renamed or overridden but not in `tools`"
                ));
            }
        }
        for (tool, edit) in &self.overrides {
            for problem in edit.policy.problems() {
                problems.push(format!("override.{tool}: {problem}"));
            }
            if edit.dry_run.is_some() && !edit.policy.write {
                problems.push(format!("override.{tool}: `dry_run` needs `write = true`"));
            }
            if edit.policy.name.is_some() && self.rename.contains_key(tool) {
                problems.push(format!(
                    "`{tool}` is named by both `rename` and `override.{tool}.name`: keep one"
                ));
            }
        }
        problems
    }

    /// The name an upstream tool is served under: its `rename`, or its override's `name`.
    pub fn served_name<'a>(&'a self, upstream: &'a str) -> &'a str {
        let named = self
            .overrides
            .get(upstream)
            .and_then(|o| o.policy.name.as_ref());
        self.rename
            .get(upstream)
            .or(named)
            .map_or(upstream, String::as_str)
    }

    /// The `aud` of the identity JWTs sent to this upstream.
    pub fn audience(&self) -> String {
        self.identity_audience
            .clone()
            .unwrap_or_else(|| match (&self.url, &self.command) {
                (Some(url), _) => url.clone(),
                (None, Some(command)) => command.first().cloned().unwrap_or_default(),
                (None, None) => String::new(),
            })
    }

    /// What the logs call this upstream: its program, or its URL without query or user info.
    pub fn label(&self) -> String {
        match (&self.command, &self.url) {
            (Some(command), _) => command.first().cloned().unwrap_or_default(),
            (None, Some(url)) => {
                let url = url.split(['?', '#']).next().unwrap_or_default();
                match url.split_once("://") {
                    Some((scheme, rest)) => {
                        let rest = rest.rsplit_once('@').map_or(rest, |(_, host)| host);
                        format!("{scheme}://{rest}")
                    }
                    None => url.to_string(),
                }
            }
            (None, None) => String::new(),
        }
    }
}

/// MCP tool names as clients accept them (SEP-986): 1–64 of `A-Z a-z 0-9 _ - .`.
fn is_tool_name(name: &str) -> bool {
    (1..=64).contains(&name.len())
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'-' | b'.'))
}

fn one_minute() -> Duration {
    Duration::from_secs(60)
}

fn half_a_minute() -> Duration {
    Duration::from_secs(30)
}

fn four_mib() -> usize {
    4 * 1024 * 1024
}

fn bounded_duration<'de, D: Deserializer<'de>>(deserializer: D) -> Result<Duration, D::Error> {
    let value: Duration = humantime_serde::deserialize(deserializer)?;
    if value >= Duration::from_millis(100) && value <= Duration::from_secs(3600) {
        Ok(value)
    } else {
        Err(serde::de::Error::custom(
            "must be at least 100ms and at most 1h",
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn settings(text: &str) -> McpSettings {
        toml::from_str(text).expect("the settings read")
    }

    #[test]
    fn two_tools_served_under_one_name_are_named_both() {
        let problems = settings(
            r#"command = ["server"]
               tools = ["read_text_file", "read_file"]
               rename = { read_text_file = "read_file" }"#,
        )
        .problems();
        assert_eq!(
            problems,
            ["tools `read_text_file` and `read_file` would both be served as `read_file`"]
        );
    }

    #[test]
    fn what_is_wrong_without_the_upstream_is_said_at_once() {
        let problems = settings(
            r#"url = "ftp://example.com"
               env = { A = "1" }
               tools = []
               [override.write_file]
               confirm = true
               annotations = { dangerous = true }"#,
        )
        .problems();
        let all = problems.join("\n");
        for expected in [
            "`url` must start with http://",
            "`env` and `cwd` are for a `command`",
            "`tools` lists no tool",
            "`write_file` is renamed or overridden but not in `tools`",
            "`confirm` needs `write = true`",
            "`dangerous` is none of",
        ] {
            assert!(all.contains(expected), "{expected} in {all}");
        }
    }

    #[test]
    fn an_override_may_name_the_tool_as_rename_does_but_not_both() {
        let settings = settings(
            r#"command = ["server"]
               tools = ["read_text_file", "write_file"]
               rename = { write_file = "save" }
               [override.read_text_file]
               name = "read"
               [override.write_file]
               name = "store""#,
        );
        assert_eq!(settings.served_name("read_text_file"), "read");
        assert_eq!(
            settings.problems(),
            ["`write_file` is named by both `rename` and `override.write_file.name`: keep one"]
        );
    }

    #[test]
    fn a_token_url_is_refused_where_the_servers_metadata_names_it() {
        let problems = settings(
            r#"url = "https://mcp.example.com/mcp"
               tools = ["x"]
               oauth = { client_id = "c", client_secret = "s", token_url = "https://as/token" }"#,
        )
        .problems();
        assert_eq!(
            problems,
            [
                "`oauth.token_url` is for an `openapi` app: an MCP server's token endpoint is \
              found from the server's metadata"
            ]
        );
    }

    #[test]
    fn a_url_is_labelled_without_its_secrets() {
        let settings = settings(
            r#"url = "https://user:pw@mcp.example.com/mcp?key=abc"
               tools = ["x"]"#,
        );
        assert_eq!(settings.label(), "https://mcp.example.com/mcp");
    }
}
