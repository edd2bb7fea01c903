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
