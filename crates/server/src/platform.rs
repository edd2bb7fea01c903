//! From a [`Config`] and the apps the binary registered to a running set of endpoints.
//!
//! The platform knows apps only by name: an app is either a tool factory ("given my config
//! section, here are my tools") or a protocol-level handler (the conformance fixtures).
//!
//! Over 600 lines because `Platform::build` is still one long function; splitting it into steps (apps, limiters, sinks, OAuth, endpoints) is open work of issue 17.

use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::sync::Arc;

use concierge_core::{RateLimitStore, ToolSet};
use rmcp::ServerHandler;
use rmcp::transport::StreamableHttpServerConfig;
use rmcp::transport::StreamableHttpService;
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;

use crate::audit::AuditSink;
use crate::config::{AuthSection, Config, ConfigError, EndpointSection, Rate};
use crate::endpoint::{Endpoint, MountedTool};
use crate::pipeline::origin::BrowserRules;
use crate::pipeline::{Authenticator, Guard};
use crate::sessions::SessionTable;
use crate::tokens::TokenList;

type ToolsFactory =
    Box<dyn Fn(toml::Value) -> BoxFuture<'static, Result<ToolSet, String>> + Send + Sync>;
/// Starts an app's background job from its config section: opens what it needs, then returns
/// the future that runs.
pub type BackgroundStart = Box<
    dyn Fn(toml::Value) -> BoxFuture<'static, Result<BoxFuture<'static, ()>, String>> + Send + Sync,
>;
/// Starts a simulator from its config section: binds its listener (port 0 picks a free one), then
/// returns the address it got and the future that serves.
pub type SimulatorStart = Box<
    dyn Fn(toml::Value) -> BoxFuture<'static, Result<(SocketAddr, BoxFuture<'static, ()>), String>>
        + Send
        + Sync,
>;
type BoxFuture<'a, T> = std::pin::Pin<Box<dyn std::future::Future<Output = T> + Send + 'a>>;
type HandlerMount = Box<
    dyn Fn(&str, StreamableHttpServerConfig, Arc<LocalSessionManager>) -> axum::Router
        + Send
        + Sync,
>;

/// The apps a binary offers, by the names configs use.
#[derive(Default)]
pub struct Apps {
    tools: BTreeMap<String, ToolsFactory>,
    handlers: BTreeMap<String, HandlerMount>,
    simulators: BTreeMap<String, SimulatorStart>,
    background: BTreeMap<String, BackgroundStart>,
}

impl Apps {
    pub fn new() -> Self {
        Self::default()
    }

    /// Starts the simulators of `sections` (binding their ports); returns each one's URL, by
    /// name, and their serving futures. A section no simulator is registered for is left to
    /// [`Platform::build`] to report.
    pub async fn start_simulators(
        &self,
        sections: &BTreeMap<String, toml::Value>,
    ) -> Result<(BTreeMap<String, String>, Vec<BoxFuture<'static, ()>>), String> {
        let mut urls = BTreeMap::new();
        let mut running = Vec::new();
        for (name, section) in sections {
            if let Some(start) = self.simulators.get(name) {
                let (addr, serving) = start(section.clone())
                    .await
                    .map_err(|e| format!("simulators.{name}: {e}"))?;
                urls.insert(name.clone(), crate::BoundUrls::url_of(addr));
                running.push(serving);
            }
        }
        Ok((urls, running))
    }

    /// A tool app: `build` gets the app's `[apps.<name>]` section (an empty table if absent).
    pub fn tools(
        self,
        name: &str,
        build: impl Fn(&toml::Value) -> Result<ToolSet, String> + Send + Sync + 'static,
    ) -> Self {
        self.tools_async(name, move |section| std::future::ready(build(&section)))
    }

    /// A tool app whose start-up waits on I/O (opening a database, say).
    pub fn tools_async<F, S>(mut self, name: &str, build: F) -> Self
    where
        F: Fn(toml::Value) -> S + Send + Sync + 'static,
        S: std::future::Future<Output = Result<ToolSet, String>> + Send + 'static,
    {
        self.tools.insert(
            name.to_string(),
            Box::new(move |section| Box::pin(build(section))),
        );
        self
    }

    /// A simulator of an external system, started by `serve` (and the commands that call an
    /// upstream) when the config has `[simulators.<name>]`. Its address is what
    /// `${simulators.<name>.url}` stands for in the rest of the config.
    pub fn simulator<F, S>(mut self, name: &str, start: F) -> Self
    where
        F: Fn(toml::Value) -> S + Send + Sync + 'static,
        S: std::future::Future<Output = Result<(SocketAddr, BoxFuture<'static, ()>), String>>
            + Send
            + 'static,
    {
        self.simulators.insert(
            name.to_string(),
            Box::new(move |section| Box::pin(start(section))),
        );
        self
    }

    /// An app's background job (a content sync schedule, say), started by `serve` after the
    /// simulators when the config has `[apps.<name>]`; it gets that section. `check` and stdio
    /// serving never start it.
    pub fn background<F, S>(mut self, name: &str, start: F) -> Self
    where
        F: Fn(toml::Value) -> S + Send + Sync + 'static,
        S: std::future::Future<Output = Result<BoxFuture<'static, ()>, String>> + Send + 'static,
    {
        self.background.insert(
            name.to_string(),
            Box::new(move |section| Box::pin(start(section))),
        );
        self
    }

    /// A protocol-level app: an rmcp handler served as it is, for fixtures that need resources,
    /// prompts, sampling or elicitation rather than business tools.
    pub fn handler<S>(
        mut self,
        name: &str,
        make: impl Fn() -> S + Send + Sync + Clone + 'static,
    ) -> Self
    where
        S: ServerHandler + Send + 'static,
    {
        let mount: HandlerMount = Box::new(move |path, config, sessions| {
            let make = make.clone();
            let service = StreamableHttpService::new(move || Ok(make()), sessions, config);
            axum::Router::new().route_service(path, service)
        });
        self.handlers.insert(name.to_string(), mount);
        self
    }
}

/// What an endpoint serves.
pub enum Mounted {
    /// The platform's dispatcher over the configured tools.
    Tools,
    /// A protocol-level handler app, served as it is (behind the same guard).
    Handler { app: String },
}

/// An endpoint ready to mount.
pub struct BuiltEndpoint {
    pub section: EndpointSection,
    pub mounted: Mounted,
    /// Authentication and session binding in front of it; its endpoint holds tools and policies.
    pub guard: Arc<Guard>,
    /// How to call the endpoint when it runs on the config's demo token default, for the banner.
    /// Never set from a real environment variable: real tokens are not printed.
    pub demo_hint: Option<String>,
}

/// Everything `serve` needs, and everything `check` verifies.
pub struct Platform {
    pub config: Config,
    pub apps: Apps,
    pub endpoints: Vec<BuiltEndpoint>,
    /// Problems that do not stop the server but make an endpoint refuse (token lists); `check`
    /// treats them as errors, `serve` logs them.
    pub warnings: Vec<ConfigError>,
    sinks: BTreeMap<String, AuditSink>,
    /// How OAuth endpoints check tokens, when an endpoint uses OAuth.
    pub oauth: Option<OAuthSetup>,
    /// The apps' upstream checks, by app name, for `/health`.
    pub health: Vec<(String, concierge_core::HealthCheck)>,
}

/// The OAuth side of a deployment.
pub struct OAuthSetup {
    /// Our public base URL: resource URLs are built on it.
    pub base: String,
    /// Scopes the metadata advertises.
    pub scopes: Vec<String>,
    pub verifier: concierge_oauth::Verifier,
    /// The built-in authorization server, whose routes `serve` mounts (none with an external IdP).
    pub builtin: Option<Arc<concierge_oauth::AuthServer>>,
}

impl Platform {
    /// What `serve` prints once it listens on `addr`: each endpoint's URL, with a line on how a
    /// client gets in (the demo's token, OAuth discovery, the legacy transport).
    pub fn banner(&self, addr: SocketAddr) -> String {
        let mut banner = format!("concierge listening on http://{addr}\n");
        for endpoint in &self.endpoints {
            let section = &endpoint.section;
            banner.push_str(&format!("  MCP endpoint http://{addr}{}\n", section.path));
            let mut hints = Vec::new();
            if matches!(section.auth, crate::config::AuthSection::Oauth { .. }) {
                hints.push("OAuth 2.1: clients discover the sign-in page from the endpoint".into());
            } else if let Some(hint) = &endpoint.demo_hint {
                hints.push(hint.clone());
            }
            if let Some(legacy) = &section.legacy_sse {
                hints.push(format!("legacy HTTP+SSE transport at {}", legacy.sse));
            }
            for hint in hints {
                banner.push_str(&format!("               {hint}\n"));
            }
        }
        banner.push_str(&format!("  health       http://{addr}/health\n"));
        banner
    }

    /// Builds apps, limiters, audit sinks and endpoints. `env` reads token variables.
    pub async fn build(
        config: Config,
        apps: Apps,
        env: &dyn Fn(&str) -> Option<String>,
    ) -> Result<Self, Vec<ConfigError>> {
        let mut errors = Vec::new();
        let mut warnings = Vec::new();

        for name in config.simulators.keys() {
            if !apps.simulators.contains_key(name) {
                let known: Vec<&str> = apps.simulators.keys().map(String::as_str).collect();
                // A binary that registers no simulator at all is a production build that left
                // them out: saying so beats an empty list of known ones.
                let message = if known.is_empty() {
                    format!(
                        "no simulator `{name}`: this build has no simulators (built without the \
                         `simulators` feature); remove the section or point the app at the real \
                         system"
                    )
                } else {
                    format!("no simulator `{name}`; known: {}", known.join(", "))
                };
                errors.push(ConfigError::new(format!("simulators.{name}"), message));
            }
        }
        let mut tool_sets: BTreeMap<String, ToolSet> = BTreeMap::new();
        for name in config.apps.keys() {
            if !apps.tools.contains_key(name) && !apps.handlers.contains_key(name) {
                errors.push(ConfigError::new(
                    format!("apps.{name}"),
                    format!("no app `{name}`; known: {}", known(&apps)),
                ));
            }
        }
        let mut wanted: Vec<String> = config
            .endpoints
            .iter()
            .flat_map(|e| {
                e.tools
                    .iter()
                    .filter_map(|t| t.split_once('.').map(|(a, _)| a.to_string()))
            })
            .collect();
        wanted.sort();
        wanted.dedup();
        for name in wanted {
            let Some(factory) = apps.tools.get(&name) else {
                continue; // reported per endpoint below
            };
            let empty = toml::Value::Table(Default::default());
            let section = config.apps.get(&name).unwrap_or(&empty).clone();
            match factory(section).await {
                Ok(set) => {
                    tool_sets.insert(name, set);
                }
                Err(message) => errors.push(ConfigError::new(format!("apps.{name}"), message)),
            }
        }

        let mut limiters: BTreeMap<String, Arc<dyn RateLimitStore>> = BTreeMap::new();
        for (name, limiter) in &config.limits {
            if let Ok(rate) = Rate::parse(&limiter.rate) {
                let store = crate::limits::store(rate, &limiter.rate, limiter.policy);
                limiters.insert(name.clone(), store);
            }
        }
        let mut sinks: BTreeMap<String, AuditSink> = BTreeMap::new();
        for (name, section) in &config.audit {
            match AuditSink::open(section.path.clone()) {
                Ok(sink) => match &section.database {
                    Some(database) => match sink.with_database(database).await {
                        Ok(sink) => {
                            sinks.insert(name.clone(), sink);
                        }
                        Err(message) => {
                            errors.push(ConfigError::new(format!("audit.{name}.database"), message))
                        }
                    },
                    None => {
                        sinks.insert(name.clone(), sink);
                    }
                },
                Err(e) => errors.push(ConfigError::new(
                    format!("audit.{name}.path"),
                    format!("cannot open {}: {e}", section.path.display()),
                )),
            }
        }

        let oauth = match &config.oauth {
            Some(oauth_config) => {
                let resources: Vec<String> = config
                    .endpoints
                    .iter()
                    .filter(|e| matches!(e.auth, AuthSection::Oauth { .. }))
                    .map(|e| format!("{}{}", oauth_config.issuer.trim_end_matches('/'), e.path))
                    .collect();
                let sink = oauth_config
                    .audit
                    .as_ref()
                    .and_then(|a| sinks.get(a).cloned());
                if let Some(name) = &oauth_config.audit
                    && sink.is_none()
                {
                    errors.push(ConfigError::new(
                        "oauth.audit",
                        format!("no sink `{name}` in [audit]"),
                    ));
                }
                let hook: concierge_oauth::AuditHook = Arc::new(move |event| {
                    if let Some(sink) = &sink {
                        sink.record(event);
                    }
                });
                let base = oauth_config.issuer.trim_end_matches('/').to_string();
                match &oauth_config.external {
                    Some(external) => {
                        match concierge_oauth::external::ExternalIssuer::new(external.clone()) {
                            Ok(issuer) => Some(OAuthSetup {
                                base,
                                scopes: oauth_config.scopes.clone(),
                                verifier: concierge_oauth::Verifier::External(Arc::new(issuer)),
                                builtin: None,
                            }),
                            Err(message) => {
                                errors.push(ConfigError::new("oauth.external", message));
                                None
                            }
                        }
                    }
                    None => match concierge_oauth::AuthServer::open(oauth_config, resources, hook)
                        .await
                    {
                        Ok(server) => Some(OAuthSetup {
                            base,
                            scopes: server.scopes.clone(),
                            verifier: concierge_oauth::Verifier::BuiltIn(server.clone()),
                            builtin: Some(server),
                        }),
                        Err(message) => {
                            errors.push(ConfigError::new("oauth", message));
                            None
                        }
                    },
                }
            }
            None => None,
        };

        let writes = match &config.writes {
            Some(section) => match crate::writes::Writes::open(
                &section.database,
                section.idempotency_window,
                section.confirm_ttl,
            )
            .await
            {
                Ok(writes) => Some(Arc::new(writes)),
                Err(message) => {
                    errors.push(ConfigError::new("writes.database", message));
                    None
                }
            },
            None => None,
        };

        let health: Vec<_> = tool_sets
            .iter()
            .filter_map(|(name, set)| set.health.clone().map(|check| (name.clone(), check)))
            .collect();
        let browser = match BrowserRules::new(
            &config.server.allowed_hosts,
            config.server.allowed_origins.as_deref(),
        ) {
            Ok(rules) => Arc::new(rules),
            Err(message) => {
                errors.push(ConfigError::new("server.allowed_origins", message));
                Arc::new(BrowserRules::new(&[], Some(&[])).expect("the empty rules parse"))
            }
        };
        let mut endpoints = Vec::new();
        for (index, section) in config.endpoints.iter().enumerate() {
            let at = |key: &str| format!("endpoint[{index}].{key}");
            let (mounted, tools) = match &section.handler {
                Some(app) => {
                    if !apps.handlers.contains_key(app) {
                        errors.push(ConfigError::new(
                            at("handler"),
                            format!("no handler app `{app}`; known: {}", known(&apps)),
                        ));
                    }
                    (Mounted::Handler { app: app.clone() }, Vec::new())
                }
                None => {
                    let tools =
                        resolve_tools(section, &tool_sets, &apps, &at("tools"), &mut errors);
                    for name in section.confirm.iter().flatten() {
                        if !tools
                            .iter()
                            .any(|t| t.tool.spec().name == *name && t.tool.spec().write.is_some())
                        {
                            errors.push(ConfigError::new(
                                at("confirm"),
                                format!("`{name}` is not a write tool served here"),
                            ));
                        }
                    }
                    if config.writes.is_none()
                        && let Some(write) = tools.iter().find(|t| t.tool.spec().write.is_some())
                    {
                        errors.push(ConfigError::new(
                            at("tools"),
                            format!(
                                "`{}` writes with idempotency keys and confirm tokens: add a \
                                 [writes] section with a `database` for them",
                                write.tool.spec().name
                            ),
                        ));
                    }
                    (Mounted::Tools, tools)
                }
            };
            let (auth, demo_hint) = match (&section.auth, &oauth) {
                (AuthSection::Oauth { scopes }, Some(setup)) => {
                    let resource = format!("{}{}", setup.base, section.path);
                    let metadata_url = format!(
                        "{}/.well-known/oauth-protected-resource{}",
                        setup.base, section.path
                    );
                    // The challenge names every scope this endpoint's tools can need, not
                    // only the read scopes of `auth`: standard OAuth clients (the Python SDK's
                    // among them) ask for exactly what the 401 challenge names, and would never
                    // hold a write scope otherwise. The consent page shows each one, and the
                    // user may still be granted fewer (a role or `scopes` narrows them).
                    let mut challenge = scopes.clone();
                    for tool in &tools {
                        for scope in &tool.tool.spec().scopes {
                            if !challenge.contains(scope) {
                                challenge.push(scope.clone());
                            }
                        }
                    }
                    (
                        Authenticator::OAuth(crate::pipeline::OAuthResource {
                            verifier: setup.verifier.clone(),
                            resource,
                            metadata_url,
                            scopes: challenge,
                        }),
                        None,
                    )
                }
                // Reported above; nobody is admitted.
                (AuthSection::Oauth { .. }, None) => (Authenticator::Missing, None),
                _ => authenticator(section, env, &mut warnings, &at("auth")),
            };
            let endpoint = Arc::new(
                Endpoint::new(section.path.clone(), section.instructions.clone(), tools)
                    .audit(section.audit.as_ref().and_then(|a| sinks.get(a).cloned()))
                    .deadline(config.server.call_timeout)
                    .scoped(matches!(section.auth, AuthSection::Oauth { .. }))
                    .writes(writes.clone())
                    .scope_challenge(
                        section.scope_refusal == crate::config::ScopeRefusal::Challenge,
                    )
                    .limits(crate::pipeline::rate_limit::Limits {
                        call: section
                            .rate_limit
                            .as_ref()
                            .and_then(|l| limiters.get(l).cloned()),
                        write: section
                            .write_rate_limit
                            .as_ref()
                            .and_then(|l| limiters.get(l).cloned()),
                        per_client: section
                            .client_rate_limit
                            .as_ref()
                            .and_then(|l| limiters.get(l).cloned()),
                        // Twice the cap a minute: a client may replace all its sessions, and
                        // evict, but cannot churn through thousands.
                        sessions: Some({
                            let openings = 2 * section.session_caps().per_client;
                            crate::limits::store(
                                Rate {
                                    count: openings as u32,
                                    period: std::time::Duration::from_secs(60),
                                },
                                &format!("{openings}/minute"),
                                concierge_core::LimitPolicy::SlidingWindow,
                            )
                        }),
                        key: section.rate_limit_key,
                    }),
            );
            let guard = Arc::new(Guard {
                endpoint,
                auth,
                sessions: Arc::new(SessionTable::new(
                    section.idle_timeout,
                    section.session_caps(),
                )),
                legacy: section
                    .legacy_sse
                    .as_ref()
                    .map(|paths| Arc::new(crate::legacy_sse::LegacySessions::new(paths))),
                browser: browser.clone(),
                stateful: section.session == crate::config::SessionMode::Stateful,
                body: crate::pipeline::body::BodyLimits {
                    max_bytes: config.server.max_body_bytes,
                    read_timeout: config.server.body_read_timeout,
                },
            });
            endpoints.push(BuiltEndpoint {
                section: section.clone(),
                mounted,
                guard,
                demo_hint,
            });
        }

        if errors.is_empty() {
            Ok(Self {
                config,
                apps,
                endpoints,
                warnings,
                sinks,
                oauth,
                health,
            })
        } else {
            Err(errors)
        }
    }

    /// Writes out every audit event recorded so far; call it before the process exits.
    pub fn flush_audit(&self) {
        for sink in self.sinks.values() {
            sink.flush(std::time::Duration::from_secs(5));
        }
    }

    /// Starts the background jobs of the configured apps; returns their futures.
    pub async fn start_background(&self) -> Result<Vec<BoxFuture<'static, ()>>, String> {
        let mut running = Vec::new();
        for (name, section) in &self.config.apps {
            if let Some(start) = self.apps.background.get(name) {
                running.push(
                    start(section.clone())
                        .await
                        .map_err(|e| format!("apps.{name}: {e}"))?,
                );
            }
        }
        Ok(running)
    }

    pub(crate) fn handler_mount(&self, app: &str) -> Option<&HandlerMount> {
        self.apps.handlers.get(app)
    }

    pub fn endpoint(&self, path: &str) -> Option<&BuiltEndpoint> {
        self.endpoints.iter().find(|e| e.section.path == path)
    }
}

/// The tools an endpoint lists as `app.tool` / `app.*`, checked against what the apps offer.
fn resolve_tools(
    section: &EndpointSection,
    tool_sets: &BTreeMap<String, ToolSet>,
    apps: &Apps,
    at: &str,
    errors: &mut Vec<ConfigError>,
) -> Vec<MountedTool> {
    let mut tools: Vec<MountedTool> = Vec::new();
    for entry in &section.tools {
        let (entry, alias) = crate::config::split_alias(entry);
        let Some((app, tool)) = entry.split_once('.') else {
            continue; // malformed entries were reported by the config check
        };
        let Some(set) = tool_sets.get(app) else {
            if !apps.tools.contains_key(app) {
                errors.push(ConfigError::new(
                    at,
                    format!("`{entry}`: no app `{app}`; known: {}", known(apps)),
                ));
            }
            continue; // an app that failed to build was reported under apps.<name>
        };
        let chosen: Vec<_> = if tool == "*" {
            set.tools.clone()
        } else if let Some(found) = set.get(tool) {
            vec![found.clone()]
        } else {
            let names: Vec<_> = set.tools.iter().map(|t| t.spec().name.clone()).collect();
            errors.push(ConfigError::new(
                at,
                format!(
                    "`{entry}`: app `{app}` has no tool `{tool}`; it has: {}",
                    names.join(", ")
                ),
            ));
            continue;
        };
        for found in chosen {
            let found = match alias {
                Some(name) if tool != "*" => {
                    concierge_core::with_spec(found, |spec| spec.name = name.to_string())
                }
                _ => found,
            };
            let found = match found.spec().write {
                Some(mut safety) => {
                    if let Some(listed) = &section.confirm {
                        safety.confirm = listed.contains(&found.spec().name);
                    }
                    concierge_core::with_spec(found, |spec| {
                        spec.write = Some(safety);
                        crate::writes::augment_schema(&mut spec.input_schema, safety);
                        // The token is a secret in the arguments and in the preview's answer
                        // alike: whoever reads the audit must not be able to confirm a change.
                        for field in [
                            crate::writes::CONFIRM_TOKEN,
                            crate::writes::CONFIRM_TOKEN_ANSWER,
                        ] {
                            spec.secret_fields.push(field.to_string());
                        }
                    })
                }
                None => found,
            };
            let found = match section.tool_scopes.get(&found.spec().name) {
                Some(extra) => concierge_core::with_spec(found, |spec| {
                    for scope in extra {
                        if !spec.scopes.contains(scope) {
                            spec.scopes.push(scope.clone());
                        }
                    }
                }),
                None => found,
            };
            if tools
                .iter()
                .any(|t| t.tool.spec().name == found.spec().name)
            {
                errors.push(ConfigError::new(
                    at,
                    format!("tool `{}` is listed twice", found.spec().name),
                ));
                continue;
            }
            match MountedTool::new(found, set.messages) {
                Ok(mounted) => tools.push(mounted),
                Err(message) => errors.push(ConfigError::new(at, message)),
            }
        }
    }
    tools
}

/// The endpoint's authenticator, and the demo hint when the config's default list is in use.
///
/// The default applies only when the variable is unset: an operator who sets it to an empty list
/// means "nobody", and must not get the demo token instead.
fn authenticator(
    section: &EndpointSection,
    env: &dyn Fn(&str) -> Option<String>,
    warnings: &mut Vec<ConfigError>,
    at: &str,
) -> (Authenticator, Option<String>) {
    let AuthSection::Tokens {
        env: variable,
        default,
        client,
    } = &section.auth
    else {
        return (Authenticator::None, None);
    };
    let path = &section.path;
    let (list, from_default) = match env(variable) {
        Some(list) => (list, false),
        None => match default {
            Some(list) => (list.clone(), true),
            None => {
                warnings.push(ConfigError::new(at, format!("environment variable {variable} is not set; every request to {path} is refused")));
                return (Authenticator::Missing, None);
            }
        },
    };
    let list = match client {
        // One bare token for one named client.
        Some(_) if list.trim().is_empty() => TokenList::parse(""),
        Some(name) => TokenList::parse(&format!("{name}:{}", list.trim())),
        None => TokenList::parse(&list),
    };
    let mut hint = None;
    match &list {
        TokenList::Malformed(why) => warnings.push(ConfigError::new(
            at,
            format!("{variable} is malformed: {why}; every request to {path} gets 500"),
        )),
        TokenList::Valid(clients) if clients.is_empty() => warnings.push(ConfigError::new(
            at,
            format!("{variable} lists no client; every request to {path} is refused"),
        )),
        TokenList::Valid(clients) if from_default => {
            let (name, token) = &clients[0];
            hint = Some(format!(
                "Authorization: Bearer {} (client `{name}`, the demo default; set {variable} for real tokens)",
                String::from_utf8_lossy(token)
            ));
        }
        TokenList::Valid(_) => {}
    }
    (Authenticator::Tokens(list), hint)
}

fn known(apps: &Apps) -> String {
    let names: Vec<&str> = apps
        .tools
        .keys()
        .chain(apps.handlers.keys())
        .map(String::as_str)
        .collect();
    names.join(", ")
}
