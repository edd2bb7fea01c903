//! The console's state: what it shows (the deployment's config, health checks, readings,
//! actions, endpoints) and who may use it (the ops token, sign-ins, the wrong-token budget).

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use concierge_core::{Action, HealthCheck, Readings};
use http::{HeaderMap, header};

use super::pages;
use super::session::{COOKIE, Operator, Sessions};
use crate::platform::Platform;

/// Wrong ops tokens accepted per minute, for the whole process, before sign-in pauses.
pub(super) const SIGN_IN_TRIES_PER_MINUTE: u32 = 10;

/// How long the console waits for an action before it answers "still running".
pub(super) const ACTION_WAIT: Duration = Duration::from_secs(30);

pub(super) struct Console {
    pub(super) token: String,
    pub(super) sessions: Sessions,
    pub(super) config: crate::config::Config,
    pub(super) health: Vec<(String, HealthCheck)>,
    pub(super) readings: Vec<(String, Readings)>,
    pub(super) actions: Vec<(String, Action)>,
    pub(super) endpoints: Vec<EndpointSource>,
    /// The endpoint rows, with the token cost of each `tools/list`: counted on first view, and
    /// again once an endpoint's tools changed (the tables they were counted from are kept).
    pub(super) endpoint_rows: Mutex<Option<EndpointRows>>,
    pub(super) oauth: Option<Arc<concierge_oauth::AuthServer>>,
    /// How the config's last change went, when the server can be reloaded.
    pub(super) config_status: Option<crate::health::ConfigStatus>,
    failures: Mutex<(Instant, u32)>,
}

/// What the server adds to the console beside the apps' parts: its own actions (reload the
/// config) and the config's status.
#[derive(Default, Clone)]
pub struct Extras {
    pub actions: Vec<(String, Action)>,
    pub config_status: Option<crate::health::ConfigStatus>,
}

pub(super) struct EndpointSource {
    pub(super) path: String,
    pub(super) auth: String,
    pub(super) session: String,
    pub(super) endpoint: Arc<crate::endpoint::Endpoint>,
}

/// Endpoint rows, and the tool tables they were made from.
pub(super) type EndpointRows = (
    Vec<Arc<crate::endpoint::ToolTable>>,
    Arc<Vec<pages::EndpointRow>>,
);

impl Console {
    /// The console of `platform`, signed in to with `token`.
    pub(super) fn new(platform: &Platform, token: String, extras: Extras) -> Arc<Self> {
        let endpoints = platform
            .endpoints
            .iter()
            .map(|built| EndpointSource {
                path: built.section.path.clone(),
                auth: match &built.section.auth {
                    crate::config::AuthSection::Oauth { .. } => "OAuth 2.1".into(),
                    crate::config::AuthSection::None => "none".into(),
                    _ => "bearer tokens".into(),
                },
                session: format!("{:?}", built.section.session).to_lowercase(),
                endpoint: built.guard.endpoint.clone(),
            })
            .collect();
        Arc::new(Console {
            sessions: Sessions::new(&token),
            token,
            config: platform.config.clone(),
            health: platform.health.clone(),
            readings: platform.readings.clone(),
            actions: (platform.actions.iter().cloned())
                .chain(extras.actions)
                .collect(),
            endpoints,
            endpoint_rows: Mutex::new(None),
            oauth: platform.oauth.as_ref().and_then(|o| o.builtin.clone()),
            config_status: extras.config_status,
            failures: Mutex::new((Instant::now(), 0)),
        })
    }

    /// The operator a request's sign-in cookie names, if it is valid.
    pub(super) fn operator(&self, headers: &HeaderMap) -> Option<Operator> {
        let cookies = headers.get_all(header::COOKIE);
        cookies
            .iter()
            .filter_map(|v| v.to_str().ok())
            .flat_map(|v| v.split(';'))
            .filter_map(|pair| pair.trim().split_once('='))
            .filter(|(name, _)| *name == COOKIE)
            .find_map(|(_, value)| self.sessions.check(value, now()))
    }

    /// Counts a wrong token; false when sign-in is paused for the rest of the minute.
    pub(super) fn may_try(&self) -> bool {
        let mut failures = self.failures.lock().unwrap_or_else(|p| p.into_inner());
        if failures.0.elapsed() >= Duration::from_secs(60) {
            *failures = (Instant::now(), 0);
        }
        failures.1 < SIGN_IN_TRIES_PER_MINUTE
    }

    pub(super) fn failed(&self) {
        let mut failures = self.failures.lock().unwrap_or_else(|p| p.into_inner());
        failures.1 += 1;
    }
}

pub(super) fn now() -> i64 {
    chrono::Utc::now().timestamp()
}
