//! Each `[[endpoint]]`, built from the deployment-wide parts: its tools, policies and guard.

use std::collections::BTreeMap;
use std::sync::Arc;

use ::redis::aio::ConnectionManager;
use concierge_core::{RateLimitStore, ToolSet};

use super::apps::Apps;
use super::oauth::{OAuthSetup, oauth_resource};
use super::stores::limiter;
use super::tool_sets::known;
use crate::audit::AuditSink;
use crate::config::{AuthSection, Config, ConfigError, EndpointSection, Rate};
use crate::endpoint::{Endpoint, MountedTool};
use crate::pipeline::Authenticator;
use crate::pipeline::origin::BrowserRules;
use crate::sessions::SessionTable;
use crate::tokens::TokenList;
use crate::transport::guard::{Guard, Policy};
use crate::writes::Writes;

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
    pub env: &'a (dyn Fn(&str) -> Option<String> + Sync),
    pub tool_sets: &'a BTreeMap<String, ToolSet>,
    pub limiters: BTreeMap<String, Arc<dyn RateLimitStore>>,
    pub redis: Option<ConnectionManager>,
    pub sinks: &'a BTreeMap<String, AuditSink>,
    pub oauth: Option<&'a OAuthSetup>,
    pub writes: Option<Arc<Writes>>,
    pub browser: Arc<BrowserRules>,
    pub session_ids: Arc<crate::session_id::SessionIds>,
    pub identity: Arc<crate::identity::IdentitySigner>,
    /// The secrets of every instance, cut out of what any tool hands back.
    pub redaction: Arc<crate::redaction::Redaction>,
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
                let kind = self.config.app_kind(app).unwrap_or(app);
                if !self.apps.handlers.contains_key(kind) {
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
                .redaction(self.redaction.clone())
                .identity(Some(self.identity.clone()))
                .scoped(matches!(section.auth, AuthSection::Oauth { .. }))
                .writes(self.writes.clone())
                .scope_challenge(section.scope_refusal == crate::config::ScopeRefusal::Challenge)
                .limits(self.limits(section)),
        );
        let sessions = SessionTable::new(section.idle_timeout, section.session_caps());
        sessions.serving(&section.path);
        let guard = Arc::new(Guard::new(
            endpoint,
            Policy {
                auth,
                browser: self.browser.clone(),
                body: crate::pipeline::body::BodyLimits {
                    max_bytes: server.max_body_bytes,
                    read_timeout: server.body_read_timeout,
                },
            },
            Arc::new(sessions),
            section
                .legacy_sse
                .as_ref()
                .map(|paths| Arc::new(crate::transport::legacy_sse::LegacySessions::new(paths))),
            self.session_ids.clone(),
            section.session == crate::config::SessionMode::Stateful,
            section.session == crate::config::SessionMode::Stateless
                && matches!(mounted, Mounted::Tools),
        ));
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
        let tools = resolve_tools(
            self.config,
            section,
            self.tool_sets,
            &tool_kinds(self.apps),
            &at("tools"),
            errors,
        );
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

/// The tools an endpoint lists as `app.tool` / `app.*`, checked against what the apps offer
/// (`known_kinds`, the tool kinds joined by `, `, for an entry that names no app).
pub(super) fn resolve_tools(
    config: &crate::config::Config,
    section: &EndpointSection,
    tool_sets: &BTreeMap<String, ToolSet>,
    known_kinds: &str,
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
            let kind = config.app_kind(app).ok();
            if !config.apps.contains_key(app)
                && !kind.is_some_and(|k| known_kinds.split(", ").any(|known| known == k))
            {
                errors.push(ConfigError::new(
                    at,
                    format!(
                        "`{entry}`: no app `{app}`: no [apps.{app}] section, and no kind of \
                         that name; known kinds: {known_kinds}"
                    ),
                ));
            }
            continue; // an instance that failed to build was reported under apps.<name>
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
                    let dry_runs = found.dry_run().is_some();
                    concierge_core::with_spec(found, |spec| {
                        spec.write = Some(safety);
                        crate::writes::augment_schema(&mut spec.input_schema, safety, dry_runs);
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

/// The kinds of tool app this binary offers, joined by `, `.
pub(super) fn tool_kinds(apps: &Apps) -> String {
    let names: Vec<&str> = apps.tools.keys().map(String::as_str).collect();
    names.join(", ")
}

/// The endpoint's authenticator, and the demo hint when the config's default list is in use.
///
/// The default applies only when the variable is unset: an operator who sets it to an empty list
/// means "nobody", and must not get the demo token instead.
fn authenticator(
    section: &EndpointSection,
    env: &(dyn Fn(&str) -> Option<String> + Sync),
    warnings: &mut Vec<ConfigError>,
    at: &str,
) -> (Authenticator, Option<String>) {
    let AuthSection::Tokens {
        env: variable,
        default,
        client,
        file,
    } = &section.auth
    else {
        return (Authenticator::None, None);
    };
    let path = &section.path;
    if let Some(file) = file {
        return match tokens_file(file) {
            Ok(list) => {
                let list = TokenList::parse(&list);
                if let TokenList::Malformed(why) = &list {
                    warnings.push(ConfigError::new(
                        at,
                        format!("{file} is malformed: {why}; every request to {path} gets 500"),
                    ));
                }
                (Authenticator::Tokens(list), None)
            }
            Err(why) => {
                warnings.push(ConfigError::new(
                    at,
                    format!("{why}; every request to {path} is refused"),
                ));
                (Authenticator::Missing, None)
            }
        };
    }
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

/// A tokens file as the variable's list (`name:token,…`): one `client:token` a line, `#`
/// comments and blank lines left out. A file others may read is refused: it holds secrets.
fn tokens_file(file: &str) -> Result<String, String> {
    use std::os::unix::fs::PermissionsExt;
    let mode = std::fs::metadata(file)
        .map_err(|error| format!("tokens file {file} cannot be read: {error}"))?
        .permissions()
        .mode();
    if mode & 0o077 != 0 {
        return Err(format!(
            "tokens file {file} may be read by others (mode {:o}); `chmod 600 {file}`",
            mode & 0o777
        ));
    }
    let text = std::fs::read_to_string(file)
        .map_err(|error| format!("tokens file {file} cannot be read: {error}"))?;
    Ok(token_lines(&text))
}

fn token_lines(text: &str) -> String {
    text.lines()
        .map(str::trim)
        .filter(|line| !line.is_empty() && !line.starts_with('#'))
        .collect::<Vec<_>>()
        .join(",")
}

#[cfg(test)]
mod tokens_file_tests {
    use super::*;

    #[test]
    fn a_tokens_file_is_lines_of_client_and_token() {
        assert_eq!(
            token_lines("# rotated 2026-12-06\nbot:abc\n\n  web:def  \n"),
            "bot:abc,web:def"
        );
    }

    #[test]
    fn a_tokens_file_others_may_read_is_refused() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("tokens");
        std::fs::write(&path, "bot:abc\n").unwrap();
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o644)).unwrap();
        let error = tokens_file(path.to_str().unwrap()).unwrap_err();
        assert!(error.contains("chmod 600"), "{error}");
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o600)).unwrap();
        assert_eq!(tokens_file(path.to_str().unwrap()).unwrap(), "bot:abc");
    }
}
