//! `[oauth]`: the built-in authorization server or an external issuer, and each OAuth
//! endpoint's protected resource.

use std::collections::BTreeMap;
use std::sync::Arc;

use concierge_core::postgres::SharedDatabase;

use crate::audit::AuditSink;
use crate::config::{AuthSection, Config, ConfigError, EndpointSection};
use crate::endpoint::MountedTool;
use crate::pipeline::Authenticator;

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

/// `[oauth]`: the built-in authorization server, or an external issuer whose tokens we check.
pub(super) async fn oauth(
    config: &Config,
    sinks: &BTreeMap<String, AuditSink>,
    database: Option<&Arc<SharedDatabase>>,
    errors: &mut Vec<ConfigError>,
) -> Option<OAuthSetup> {
    let oauth_config = config.oauth.as_ref()?;
    let base = oauth_config.issuer.trim_end_matches('/').to_string();
    let resources = resources(config, &base);
    let hook = audit_hook(oauth_config, sinks, errors);
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
    let server =
        concierge_oauth::AuthServer::open(oauth_config, resources, hook, database.cloned()).await;
    builtin(base, server, errors)
}

/// The OAuth side of the built-in authorization server `server`, or why there is none.
fn builtin(
    base: String,
    server: Result<Arc<concierge_oauth::AuthServer>, String>,
    errors: &mut Vec<ConfigError>,
) -> Option<OAuthSetup> {
    match server {
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

/// The OAuth side a reload makes from the running one: `config`'s settings over the running
/// state (the same keys, store and counts; see [`concierge_oauth::AuthServer::follow`]), the
/// resources of the endpoints `config` has. The reload has kept what needs new state as it was.
pub(super) fn follow(
    config: &Config,
    running: &OAuthSetup,
    sinks: &BTreeMap<String, AuditSink>,
    errors: &mut Vec<ConfigError>,
) -> Option<OAuthSetup> {
    let oauth_config = config.oauth.as_ref()?;
    let hook = audit_hook(oauth_config, sinks, errors);
    let Some(server) = &running.builtin else {
        // An external issuer: its keys are fetched as tokens name them; only what the metadata
        // advertises changes.
        return Some(OAuthSetup {
            base: running.base.clone(),
            scopes: oauth_config.scopes.clone(),
            verifier: running.verifier.clone(),
            builtin: None,
        });
    };
    let next = server.follow(oauth_config, resources(config, &running.base), hook);
    builtin(running.base.clone(), next, errors)
}

/// The resource URL of every endpoint that takes OAuth tokens.
fn resources(config: &Config, base: &str) -> Vec<String> {
    config
        .endpoints
        .iter()
        .filter(|e| matches!(e.auth, AuthSection::Oauth { .. }))
        .map(|e| format!("{base}{}", e.path))
        .collect()
}

/// What the authorization server reports (issued, refreshed, revoked, refused) goes to the
/// metrics and to `[oauth] audit`'s sink.
fn audit_hook(
    oauth_config: &concierge_oauth::OAuthConfig,
    sinks: &BTreeMap<String, AuditSink>,
    errors: &mut Vec<ConfigError>,
) -> concierge_oauth::AuditHook {
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
    Arc::new(move |event| {
        if let (Some(metrics), Some(code)) = (crate::telemetry::metrics::get(), &event.code) {
            metrics.oauth(code);
        }
        if let Some(sink) = &sink {
            sink.record(event);
        }
    })
}

/// An OAuth endpoint's resource: its URL, its metadata document, and the scopes its challenge
/// names.
pub(super) fn oauth_resource(
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
