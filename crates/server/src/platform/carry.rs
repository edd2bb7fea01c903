//! What a reload carries from the running platform into the next one, and what it ends.
//!
//! The deployment's state is made once ([`Kept`]: the shared stores, write records, session
//! ids, the identity signer, OAuth) and every reload keeps it — the config sections it comes
//! from are pinned by the reload (`crate::reload`), so nothing counted or recorded is ever
//! forgotten. An app instance, an audit sink or a limiter whose config did not change is the
//! running one, handed over; one that changed is made anew and
//! the old one ended ([`Retired`]) once the new platform serves.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::SystemTime;

use ::redis::aio::ConnectionManager;
use concierge_core::postgres::SharedDatabase;
use concierge_core::{RateLimitStore, ToolList, ToolSet};
use tokio_util::sync::CancellationToken;

use super::{OAuthSetup, Platform, stores};
use crate::audit::AuditSink;
use crate::config::{Config, ConfigError};
use crate::writes::Writes;

/// The deployment's state: made at start, the same object in every platform a reload builds.
#[derive(Clone)]
pub(super) struct Kept {
    pub redis: Option<ConnectionManager>,
    pub database: Option<Arc<SharedDatabase>>,
    pub writes: Option<Arc<Writes>>,
    pub session_ids: Arc<crate::session_id::SessionIds>,
    pub identity: Arc<crate::identity::IdentitySigner>,
    pub oauth: Option<Arc<OAuthSetup>>,
}

impl Kept {
    /// The state as the config's `[state]`, `[writes]` and `[oauth]` say, each step reporting
    /// what is wrong with its part.
    pub async fn make(
        config: &Config,
        sinks: &BTreeMap<String, AuditSink>,
        errors: &mut Vec<ConfigError>,
    ) -> Self {
        let database = stores::database(config, errors);
        let oauth = super::oauth::oauth(config, sinks, database.as_ref(), errors).await;
        let redis = stores::redis(config, errors);
        // `iss` of the identity assertions: the built-in authorization server's issuer when
        // there is one, else the product's name (docs/src/guides/mcp-servers.md, "Identity: what the server sees").
        let identity = crate::identity::IdentitySigner::new(
            config.state.session_secret(),
            config.oauth.as_ref().map_or_else(
                || "concierge".to_string(),
                |o| o.issuer.trim_end_matches('/').to_string(),
            ),
        );
        Self {
            writes: stores::writes(config, database.as_ref(), redis.as_ref(), errors).await,
            session_ids: stores::session_ids(config, errors),
            redis,
            database,
            identity,
            oauth: oauth.map(Arc::new),
        }
    }
}

impl Kept {
    /// The state a reload carries: this one, with the OAuth side made again from `config`'s
    /// settings over the same keys and store (scopes, lifetimes, wording and the endpoints'
    /// resources may have changed; the reload kept what needs new state).
    pub fn following(
        &self,
        config: &Config,
        sinks: &BTreeMap<String, AuditSink>,
        errors: &mut Vec<ConfigError>,
    ) -> Self {
        let oauth = (self.oauth.as_deref())
            .and_then(|running| super::oauth::follow(config, running, sinks, errors));
        Self {
            oauth: oauth.map(Arc::new),
            ..self.clone()
        }
    }
}

/// Whether two config parts are the same: their parsed values, field by field (config types
/// are compared by what they hold, which their `Debug` shows whole).
pub(crate) fn same<T: std::fmt::Debug>(a: &T, b: &T) -> bool {
    format!("{a:?}") == format!("{b:?}")
}

/// When a file was last written and how long it is: a file a section names changed when this
/// does (a Kubernetes secret or ConfigMap is swapped whole, which changes both).
type Stamp = Option<(u64, SystemTime)>;

fn stamp(path: &PathBuf) -> Stamp {
    let meta = std::fs::metadata(path).ok()?;
    Some((meta.len(), meta.modified().ok()?))
}

/// The files a reload reads besides the config, by section: a tokens file, and the files an app
/// says it was built from ([`ToolSet::inputs`]) — only those: the platform cannot tell what else
/// an app reads from what it writes (an orders workbook), and a file it writes must not reload it.
pub(super) fn fingerprints(
    config: &Config,
    tool_sets: &BTreeMap<String, ToolSet>,
) -> BTreeMap<String, Vec<(PathBuf, Stamp)>> {
    let mut all = BTreeMap::new();
    for (name, set) in tool_sets {
        let stamped = set.inputs.iter().map(|p| (p.clone(), stamp(p))).collect();
        all.insert(format!("apps.{name}"), stamped);
    }
    for endpoint in &config.endpoints {
        if let crate::config::AuthSection::Tokens {
            file: Some(file), ..
        } = &endpoint.auth
        {
            let path = PathBuf::from(file);
            let stamp = stamp(&path);
            all.insert(format!("endpoint {}", endpoint.path), vec![(path, stamp)]);
        }
    }
    all
}

/// Whether instance `name` is the same in `previous` and under `config`: its section, and the
/// files it was built from as they were then.
pub(super) fn unchanged_app(previous: &Platform, config: &Config, name: &str) -> bool {
    let same_section = matches!(
        (previous.config.apps.get(name), config.apps.get(name)),
        (Some(was), Some(is)) if was == is
    );
    same_section
        && previous
            .running
            .files
            .get(&format!("apps.{name}"))
            .is_none_or(|files| files.iter().all(|(path, was)| stamp(path) == *was))
}

/// The instance's tool set: `previous`'s when it is unchanged there.
pub(super) fn kept_tool_set(
    config: &Config,
    name: &str,
    previous: Option<&Platform>,
) -> Option<ToolSet> {
    let previous = previous?;
    let mut set = unchanged_app(previous, config, name)
        .then(|| previous.tool_sets.get(name).cloned())
        .flatten()?;
    // Its tools as served now (an upstream's list read since start), not as first built: the
    // endpoints adopt them without a flicker.
    if let Some(list) = previous.running.followed(name) {
        set.tools = list.borrow().clone();
    }
    Some(set)
}

/// Each `[audit.<name>]`: `previous`'s sink when its section is unchanged, else opened.
pub(super) async fn audit_sinks(
    config: &Config,
    previous: Option<&Platform>,
    errors: &mut Vec<ConfigError>,
) -> BTreeMap<String, AuditSink> {
    // Decided once: the running sinks whose section is unchanged; the rest are opened.
    let running: BTreeMap<String, AuditSink> = previous
        .map(|p| {
            (config.audit.iter())
                .filter_map(|(name, section)| {
                    let was = p.config.audit.get(name)?;
                    let sink = p.sinks.get(name)?;
                    same(was, section).then(|| (name.clone(), sink.clone()))
                })
                .collect()
        })
        .unwrap_or_default();
    let kept = |name: &str, _: &crate::config::AuditSection| running.contains_key(name);
    let mut sinks = stores::audit_sinks(config, &kept, errors).await;
    sinks.extend(running.clone());
    sinks
}

/// One limiter per `[limits.<name>]`: `previous`'s (with what it counted) when the limit is
/// unchanged.
pub(super) fn limiters(
    config: &Config,
    redis: Option<&ConnectionManager>,
    previous: Option<&Platform>,
) -> BTreeMap<String, Arc<dyn RateLimitStore>> {
    let mut made = stores::limiters(config, redis);
    if let Some(previous) = previous {
        for (name, store) in made.iter_mut() {
            let was = previous.config.limits.get(name);
            let is = config.limits.get(name);
            if let (Some(was), Some(is), Some(kept)) =
                (was, is, previous.running.limiters.get(name))
                && same(was, is)
            {
                *store = kept.clone();
            }
        }
    }
    made
}

/// What runs for one platform, ended when a reload replaces it.
pub(crate) struct Running {
    /// The files the config names, as they were when the platform was built.
    pub(super) files: BTreeMap<String, Vec<(PathBuf, Stamp)>>,
    pub(super) limiters: BTreeMap<String, Arc<dyn RateLimitStore>>,
    /// Background jobs, by instance.
    jobs: Mutex<BTreeMap<String, tokio::task::AbortHandle>>,
    /// The tool lists followed, by instance (started once per instance, handed over).
    pub(super) lists: Mutex<BTreeMap<String, ToolList>>,
    /// Ends the endpoints' following of those lists.
    pub(super) following: CancellationToken,
}

impl Running {
    pub(super) fn new(
        files: BTreeMap<String, Vec<(PathBuf, Stamp)>>,
        limiters: BTreeMap<String, Arc<dyn RateLimitStore>>,
    ) -> Self {
        Self {
            files,
            limiters,
            jobs: Mutex::default(),
            lists: Mutex::default(),
            following: CancellationToken::new(),
        }
    }

    pub(super) fn keep_job(&self, name: &str, job: tokio::task::AbortHandle) {
        let mut jobs = self.jobs.lock().unwrap_or_else(|p| p.into_inner());
        jobs.insert(name.to_string(), job);
    }

    pub(super) fn take_job(&self, name: &str) -> Option<tokio::task::AbortHandle> {
        let mut jobs = self.jobs.lock().unwrap_or_else(|p| p.into_inner());
        jobs.remove(name)
    }

    /// Ends the jobs left here (those of instances the next platform did not take over).
    pub(crate) fn abort_jobs(&self) {
        let jobs = std::mem::take(&mut *self.jobs.lock().unwrap_or_else(|p| p.into_inner()));
        for job in jobs.into_values() {
            job.abort();
        }
    }

    /// The list of instance `name` being followed, if it is.
    pub(super) fn followed(&self, name: &str) -> Option<ToolList> {
        let lists = self.lists.lock().unwrap_or_else(|p| p.into_inner());
        lists.get(name).cloned()
    }

    pub(super) fn take_list(&self, name: &str) -> Option<ToolList> {
        let mut lists = self.lists.lock().unwrap_or_else(|p| p.into_inner());
        lists.remove(name)
    }

    pub(super) fn keep_list(&self, name: &str, list: ToolList) {
        let mut lists = self.lists.lock().unwrap_or_else(|p| p.into_inner());
        lists.insert(name.to_string(), list);
    }

    /// The files named by the config, to watch.
    pub fn watched_files(&self) -> Vec<PathBuf> {
        self.files
            .values()
            .flatten()
            .map(|(path, _)| path.clone())
            .collect()
    }
}

/// What a reload ended of the platform it replaced, for its log line.
#[derive(Debug, Default)]
pub struct Retired {
    pub apps: Vec<String>,
    pub endpoints: Vec<String>,
    pub sessions_closed: usize,
}

impl Platform {
    /// Makes `self` (built by a reload from `previous`) the running platform's successor:
    /// each endpoint that stays (its path, with the same transport and session settings) is
    /// `previous`'s, with this one's tools and policies adopted in place — so its sessions go
    /// on and hear of changed tools; sessions whose opener the new auth no longer admits are
    /// closed; endpoints that went are stopped (their sessions end, their paths answer 404);
    /// instances that went or changed are stopped. Unchanged instances' tool lists are taken
    /// over; their jobs by [`Platform::start_background`].
    pub async fn succeed(&mut self, previous: &Platform) -> Retired {
        let mut retired = Retired::default();
        for built in &mut self.endpoints {
            let Some(old) = previous.endpoint(&built.section.path) else {
                continue;
            };
            if !same_transport(&old.section, &built.section)
                || std::mem::discriminant(&old.mounted) != std::mem::discriminant(&built.mounted)
            {
                continue;
            }
            old.guard.adopt(&built.guard);
            built.guard = old.guard.clone();
            let policy = built.guard.policy();
            retired.sessions_closed += built
                .guard
                .sessions
                .close_where(|owner| !policy.auth.admits_principal(owner))
                .await;
        }
        for old in &previous.endpoints {
            let stays = self
                .endpoints
                .iter()
                .any(|b| Arc::ptr_eq(&b.guard, &old.guard));
            if !stays {
                if let Some(stop) = old.guard.stop.get() {
                    stop.cancel();
                }
                retired.endpoints.push(old.section.path.clone());
            }
        }
        for (name, set) in &previous.tool_sets {
            if self.carried(previous, name) {
                if let Some(list) = previous.running.take_list(name) {
                    self.running.keep_list(name, list);
                }
            } else {
                if let Some(stop) = &set.stop {
                    stop();
                }
                retired.apps.push(name.clone());
            }
        }
        previous.running.following.cancel();
        retired
    }
}

impl Platform {
    /// Stops the instances this platform built itself (not carried from `previous`): a reload
    /// that rejects it leaves nothing of it running.
    pub(crate) fn stop_new_instances(&self, previous: &Platform) {
        for (name, set) in &self.tool_sets {
            if !self.carried(previous, name)
                && let Some(stop) = &set.stop
            {
                stop();
            }
        }
    }

    /// Whether instance `name` here is `previous`'s own, carried over (its section unchanged:
    /// [`kept_tool_set`] handed it over).
    pub(crate) fn carried(&self, previous: &Platform, name: &str) -> bool {
        self.tool_sets.contains_key(name)
            && previous.tool_sets.contains_key(name)
            && unchanged_app(previous, &self.config, name)
    }
}

/// Whether an endpoint's sessions can go on under `new`: the same session mode, idle time,
/// caps and legacy paths.
fn same_transport(
    old: &crate::config::EndpointSection,
    new: &crate::config::EndpointSection,
) -> bool {
    old.session == new.session
        && old.idle_timeout == new.idle_timeout
        && same(&old.session_caps(), &new.session_caps())
        && same(&old.legacy_sse, &new.legacy_sse)
        && old.handler == new.handler
}
