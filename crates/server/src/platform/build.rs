//! The steps of [`Platform::build`](super::Platform::build), in its order. Each step reports
//! what is wrong with its part of the config into `errors` and goes on with what it could
//! build, so `concierge check` lists every problem in one run.

use std::collections::BTreeMap;
use std::sync::Arc;

use ::redis::aio::ConnectionManager;
use concierge_core::postgres::SharedDatabase;
use concierge_core::{RateLimitStore, ToolSet};

use super::{Apps, BuiltEndpoint, Mounted, OAuthSetup};
use crate::audit::AuditSink;
use crate::config::{AuthSection, Config, ConfigError, EndpointSection, Rate, WritesHome};
use crate::endpoint::{Endpoint, MountedTool};
use crate::pipeline::origin::BrowserRules;
use crate::pipeline::{Authenticator, Guard};
use crate::sessions::SessionTable;
use crate::tokens::TokenList;
use crate::writes::{PgIdempotencyStore, RedisIdempotencyStore, Writes};

/// Every `[simulators.<name>]` and `[apps.<name>]` names something this binary offers.
pub(super) fn check_names(config: &Config, apps: &Apps, errors: &mut Vec<ConfigError>) {
    if let Some(token) = &config.ops.token
        && token.chars().count() < 16
    {
        errors.push(ConfigError::new(
            "ops.token",
            "is shorter than 16 characters; it signs an operator in to /ops, so make it long and random",
        ));
    }
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
    for name in config.apps.keys() {
        if !apps.tools.contains_key(name) && !apps.handlers.contains_key(name) {
            errors.push(ConfigError::new(
                format!("apps.{name}"),
                format!("no app `{name}`; known: {}", known(apps)),
            ));
        }
    }
}

/// The tool sets of the apps some endpoint serves (an app no endpoint names is not built: its
/// upstream need not be reachable).
pub(super) async fn tool_sets(
    config: &Config,
    apps: &Apps,
    errors: &mut Vec<ConfigError>,
) -> BTreeMap<String, ToolSet> {
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
    let mut tool_sets = BTreeMap::new();
    for name in wanted {
        let Some(factory) = apps.tools.get(&name) else {
            continue; // reported per endpoint
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
    tool_sets
}

/// `[state] instance` and `session_secret`: how this deployment's session ids are minted.
pub(super) fn session_ids(
    config: &Config,
    errors: &mut Vec<ConfigError>,
) -> Arc<crate::session_id::SessionIds> {
    for (key, message) in config.state.problems() {
        errors.push(ConfigError::new(key, message));
    }
    Arc::new(crate::session_id::SessionIds::new(
        config.state.session_secret(),
        config.state.instance(),
    ))
}

/// `[state] redis`: the connection the shared limits use (made without connecting: Redis may
/// come up after us).
pub(super) fn redis(config: &Config, errors: &mut Vec<ConfigError>) -> Option<ConnectionManager> {
    let url = config.state.redis()?;
    match crate::limits::redis::connect(url) {
        Ok(conn) => Some(conn),
        Err(message) => {
            errors.push(ConfigError::new("state.redis", message));
            None
        }
    }
}

/// `/health`'s view of Redis: a PING within the response timeout.
pub(super) fn redis_health(conn: ConnectionManager) -> (String, concierge_core::HealthCheck) {
    let check: concierge_core::HealthCheck = Arc::new(move || {
        let conn = conn.clone();
        Box::pin(async move {
            match crate::limits::redis::ping(&conn).await {
                Ok(()) => concierge_core::Health::Ok,
                Err(reason) => concierge_core::Health::Down(reason),
            }
        })
    });
    ("redis".to_string(), check)
}

/// A limiter named `name` for `rate`: in Redis when the deployment shares its limits, in this
/// process otherwise.
fn limiter(
    redis: Option<&ConnectionManager>,
    name: &str,
    rate: Rate,
    text: &str,
    policy: concierge_core::LimitPolicy,
) -> Arc<dyn RateLimitStore> {
    match redis {
        Some(conn) => Arc::new(crate::limits::redis::RedisLimiter::new(
            conn.clone(),
            name,
            rate,
            text,
            policy,
        )),
        None => crate::limits::store(rate, text, policy),
    }
}

/// One store per `[limits.<name>]` (a malformed rate is the config check's to report).
pub(super) fn limiters(
    config: &Config,
    redis: Option<&ConnectionManager>,
) -> BTreeMap<String, Arc<dyn RateLimitStore>> {
    config
        .limits
        .iter()
        .filter_map(|(name, section)| {
            let rate = Rate::parse(&section.rate).ok()?;
            let store = limiter(redis, name, rate, &section.rate, section.policy);
            Some((name.clone(), store))
        })
        .collect()
}

/// Each `[audit.<name>]`: its JSON Lines file, and its table when it names a database.
pub(super) async fn audit_sinks(
    config: &Config,
    errors: &mut Vec<ConfigError>,
) -> BTreeMap<String, AuditSink> {
    let mut sinks = BTreeMap::new();
    for (name, section) in &config.audit {
        let sink = match AuditSink::open(section.path.clone()) {
            Ok(sink) => sink,
            Err(e) => {
                errors.push(ConfigError::new(
                    format!("audit.{name}.path"),
                    format!("cannot open {}: {e}", section.path.display()),
                ));
                continue;
            }
        };
        let sink = match &section.database {
            None => sink,
            Some(database) => match sink.with_database(database).await {
                Ok(sink) => sink,
                Err(message) => {
                    errors.push(ConfigError::new(format!("audit.{name}.database"), message));
                    continue;
                }
            },
        };
        sinks.insert(name.clone(), sink);
    }
    sinks
}

/// `[oauth]`: the built-in authorization server, or an external issuer whose tokens we check.
pub(super) async fn oauth(
    config: &Config,
    sinks: &BTreeMap<String, AuditSink>,
    database: Option<&Arc<SharedDatabase>>,
    errors: &mut Vec<ConfigError>,
) -> Option<OAuthSetup> {
    let oauth_config = config.oauth.as_ref()?;
    let base = oauth_config.issuer.trim_end_matches('/').to_string();
    let resources: Vec<String> = config
        .endpoints
        .iter()
        .filter(|e| matches!(e.auth, AuthSection::Oauth { .. }))
        .map(|e| format!("{base}{}", e.path))
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
        if let (Some(metrics), Some(code)) = (crate::telemetry::metrics::get(), &event.code) {
            metrics.oauth(code);
        }
        if let Some(sink) = &sink {
            sink.record(event);
        }
    });
    if let Some(external) = &oauth_config.external {
        return match concierge_oauth::external::ExternalIssuer::new(external.clone()) {
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
        };
    }
    match concierge_oauth::AuthServer::open(oauth_config, resources, hook, database.cloned()).await
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
    }
}

/// `[writes]`: idempotency records and the confirm-token secret, when some tool writes.
/// Apps that keep state only one process may write, in a deployment that shares `[state]` (so
/// is meant to run as several instances): a warning — `check` fails on it, `serve` logs it.
pub(super) fn single_instance_apps(
    config: &Config,
    tool_sets: &BTreeMap<String, ToolSet>,
    warnings: &mut Vec<ConfigError>,
) {
    if !config.state.is_shared() {
        return;
    }
    for (name, set) in tool_sets {
        if let Some(why) = set.single_instance {
            warnings.push(ConfigError::new(
                format!("apps.{name}"),
                format!(
                    "runs on one instance only ({why}), and [state] shares this deployment among several"
                ),
            ));
        }
    }
}

/// What a shared deployment with sessions still lacks: the instance name a balancer routes a
/// session back by, and the secret that lets every instance refuse another client's session id.
pub(super) fn shared_sessions(config: &Config, warnings: &mut Vec<ConfigError>) {
    let stateful =
        (config.endpoints.iter()).any(|e| e.session == crate::config::SessionMode::Stateful);
    if !config.state.is_shared() || !stateful {
        return;
    }
    if config.state.instance().is_empty() {
        warnings.push(ConfigError::new(
            "state.instance",
            "unset: session ids carry no instance name, so a balancer cannot send a session's \
             requests back to the instance that holds it (stateless endpoints need none)",
        ));
    }
    if config.state.session_secret().is_none() {
        warnings.push(ConfigError::new(
            "state.session_secret",
            "unset: each instance signs session ids with a key of its own, so only the one that \
             opened a session can refuse another client's use of it; give every instance the same secret",
        ));
    }
}

/// The deployment's shared PostgreSQL, when `[state] database` names one (not connected yet).
pub(super) fn database(
    config: &Config,
    errors: &mut Vec<ConfigError>,
) -> Option<Arc<SharedDatabase>> {
    let url = config.state.database()?;
    match SharedDatabase::new(url) {
        Ok(database) => Some(Arc::new(database)),
        Err(message) => {
            errors.push(ConfigError::new("state.database", message));
            None
        }
    }
}

/// `/health`'s view of PostgreSQL: it answers and its schema is current.
pub(super) fn database_health(
    database: Arc<SharedDatabase>,
) -> (String, concierge_core::HealthCheck) {
    let check: concierge_core::HealthCheck = Arc::new(move || {
        let database = database.clone();
        Box::pin(async move {
            match database.probe().await {
                Ok(()) => concierge_core::Health::Ok,
                Err(reason) => concierge_core::Health::Down(reason),
            }
        })
    });
    ("postgres".to_string(), check)
}

/// Write safety, when `[writes]` is configured: its records in the shared PostgreSQL when there
/// is one, in `[writes] database` (SQLite) otherwise.
pub(super) async fn writes(
    config: &Config,
    database: Option<&Arc<SharedDatabase>>,
    redis: Option<&ConnectionManager>,
    errors: &mut Vec<ConfigError>,
) -> Option<Arc<Writes>> {
    let section = config.writes.as_ref()?;
    let (window, ttl) = (section.idempotency_window, section.confirm_ttl);
    let shared: Option<Arc<dyn concierge_core::IdempotencyStore>> =
        match (config.state.writes_home(), database, redis) {
            (Some(WritesHome::Postgres), Some(database), _) => {
                Some(Arc::new(PgIdempotencyStore::new(database.clone())))
            }
            (Some(WritesHome::Redis), _, Some(redis)) => {
                Some(Arc::new(RedisIdempotencyStore::new(redis.clone())))
            }
            // A home without its store is the [state] check's to report.
            _ => None,
        };
    if let Some(store) = shared {
        return Some(Arc::new(Writes::new(store, window, ttl)));
    }
    match Writes::open(&section.database, window, ttl).await {
        Ok(writes) => Some(Arc::new(writes)),
        Err(message) => {
            errors.push(ConfigError::new("writes.database", message));
            None
        }
    }
}

/// `server.allowed_hosts` / `allowed_origins`; when malformed, rules that admit no browser.
pub(super) fn browser_rules(config: &Config, errors: &mut Vec<ConfigError>) -> Arc<BrowserRules> {
    match BrowserRules::new(
        &config.server.allowed_hosts,
        config.server.allowed_origins.as_deref(),
    ) {
        Ok(rules) => Arc::new(rules),
        Err(message) => {
            errors.push(ConfigError::new("server.allowed_origins", message));
            Arc::new(BrowserRules::new(&[], Some(&[])).expect("the empty rules parse"))
        }
    }
}

/// What every endpoint is built from: the deployment-wide parts the steps above made.
pub(super) struct Shared<'a> {
    pub config: &'a Config,
    pub apps: &'a Apps,
    pub env: &'a dyn Fn(&str) -> Option<String>,
    pub tool_sets: &'a BTreeMap<String, ToolSet>,
    pub limiters: BTreeMap<String, Arc<dyn RateLimitStore>>,
    pub redis: Option<ConnectionManager>,
    pub sinks: &'a BTreeMap<String, AuditSink>,
    pub oauth: Option<&'a OAuthSetup>,
    pub writes: Option<Arc<Writes>>,
    pub browser: Arc<BrowserRules>,
    pub session_ids: Arc<crate::session_id::SessionIds>,
}

impl Shared<'_> {
    /// `[[endpoint]]` number `index`: its tools (or handler), its authenticator, and the guard
    /// with every policy of the pipeline set from the section.
    pub(super) fn endpoint(
        &self,
        index: usize,
        section: &EndpointSection,
        errors: &mut Vec<ConfigError>,
        warnings: &mut Vec<ConfigError>,
    ) -> BuiltEndpoint {
        let at = |key: &str| format!("endpoint[{index}].{key}");
        let (mounted, tools) = match &section.handler {
            Some(app) => {
                if !self.apps.handlers.contains_key(app) {
                    errors.push(ConfigError::new(
                        at("handler"),
                        format!("no handler app `{app}`; known: {}", known(self.apps)),
                    ));
                }
                (Mounted::Handler { app: app.clone() }, Vec::new())
            }
            None => (Mounted::Tools, self.tools(section, &at, errors)),
        };
        let (auth, demo_hint) = match (&section.auth, self.oauth) {
            (AuthSection::Oauth { scopes }, Some(setup)) => {
                (oauth_resource(section, scopes, setup, &tools), None)
            }
            // Reported by the oauth step; nobody is admitted.
            (AuthSection::Oauth { .. }, None) => (Authenticator::Missing, None),
            _ => authenticator(section, self.env, warnings, &at("auth")),
        };
        let server = &self.config.server;
        let endpoint = Arc::new(
            Endpoint::new(section.path.clone(), section.instructions.clone(), tools)
                .audit(
                    section
                        .audit
                        .as_ref()
                        .and_then(|a| self.sinks.get(a).cloned()),
                )
                .deadline(server.call_timeout)
                .scoped(matches!(section.auth, AuthSection::Oauth { .. }))
                .writes(self.writes.clone())
                .scope_challenge(section.scope_refusal == crate::config::ScopeRefusal::Challenge)
                .limits(self.limits(section)),
        );
        let guard = Arc::new(Guard {
            endpoint,
            auth,
            sessions: {
                let table = SessionTable::new(section.idle_timeout, section.session_caps());
                table.serving(&section.path);
                Arc::new(table)
            },
            legacy: section
                .legacy_sse
                .as_ref()
                .map(|paths| Arc::new(crate::legacy_sse::LegacySessions::new(paths))),
            browser: self.browser.clone(),
            ids: self.session_ids.clone(),
            stateful: section.session == crate::config::SessionMode::Stateful,
            answers_calls: section.session == crate::config::SessionMode::Stateless
                && matches!(mounted, Mounted::Tools),
            body: crate::pipeline::body::BodyLimits {
                max_bytes: server.max_body_bytes,
                read_timeout: server.body_read_timeout,
            },
        });
        BuiltEndpoint {
            section: section.clone(),
            mounted,
            guard,
            demo_hint,
        }
    }

    /// The endpoint's tools, with its `confirm` list and the need for `[writes]` checked.
    fn tools(
        &self,
        section: &EndpointSection,
        at: &dyn Fn(&str) -> String,
        errors: &mut Vec<ConfigError>,
    ) -> Vec<MountedTool> {
        let tools = resolve_tools(section, self.tool_sets, self.apps, &at("tools"), errors);
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
        if self.config.writes.is_none()
            && let Some(write) = tools.iter().find(|t| t.tool.spec().write.is_some())
        {
            errors.push(ConfigError::new(
                at("tools"),
                format!(
                    "`{}` writes with idempotency keys and confirm tokens: add a [writes] \
                     section with a `database` for them",
                    write.tool.spec().name
                ),
            ));
        }
        tools
    }

    /// The rate limits the endpoint's section names, and its own limit on opening sessions.
    fn limits(&self, section: &EndpointSection) -> crate::pipeline::rate_limit::Limits {
        let named =
            |name: &Option<String>| name.as_ref().and_then(|l| self.limiters.get(l).cloned());
        // Twice the cap a minute: a client may replace all its sessions, and evict, but cannot
        // churn through thousands.
        let openings = 2 * section.session_caps().per_client;
        let sessions = limiter(
            self.redis.as_ref(),
            &format!("sessions:{}", section.path),
            Rate {
                count: openings as u32,
                period: std::time::Duration::from_secs(60),
            },
            &format!("{openings}/minute"),
            concierge_core::LimitPolicy::SlidingWindow,
        );
        crate::pipeline::rate_limit::Limits {
            call: named(&section.rate_limit),
            write: named(&section.write_rate_limit),
            per_client: named(&section.client_rate_limit),
            sessions: Some(sessions),
            key: section.rate_limit_key,
            when_down: self.config.state.limits_when_down,
        }
    }
}

/// An OAuth endpoint's resource: its URL, its metadata document, and the scopes its challenge
/// names.
fn oauth_resource(
    section: &EndpointSection,
    scopes: &[String],
    setup: &OAuthSetup,
    tools: &[MountedTool],
) -> Authenticator {
    // The challenge names every scope this endpoint's tools can need, not only the read scopes
    // of `auth`: standard OAuth clients (the Python SDK's among them) ask for exactly what the
    // 401 challenge names, and would never hold a write scope otherwise. The consent page shows
    // each one, and the user may still be granted fewer (a role or `scopes` narrows them).
    let mut challenge = scopes.to_vec();
    for tool in tools {
        for scope in &tool.tool.spec().scopes {
            if !challenge.contains(scope) {
                challenge.push(scope.clone());
            }
        }
    }
    Authenticator::OAuth(crate::pipeline::OAuthResource {
        verifier: setup.verifier.clone(),
        resource: format!("{}{}", setup.base, section.path),
        metadata_url: format!(
            "{}/.well-known/oauth-protected-resource{}",
            setup.base, section.path
        ),
        scopes: challenge,
    })
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
