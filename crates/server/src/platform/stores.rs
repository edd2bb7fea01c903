//! The deployment-wide state: session ids, limiters, audit sinks, the shared PostgreSQL and
//! Redis, write safety — and the warnings a shared deployment earns when something is missing.

use std::collections::BTreeMap;
use std::sync::Arc;

use ::redis::aio::ConnectionManager;
use concierge_core::postgres::SharedDatabase;
use concierge_core::{RateLimitStore, ToolSet};

use crate::audit::AuditSink;
use crate::config::{Config, ConfigError, Rate, WritesHome};
use crate::writes::{RedisIdempotencyStore, SqlIdempotencyStore, Writes};

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
pub(super) fn limiter(
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
    kept: &(dyn Fn(&str, &crate::config::AuditSection) -> bool + Sync),
    errors: &mut Vec<ConfigError>,
) -> BTreeMap<String, AuditSink> {
    let mut sinks = BTreeMap::new();
    for (name, section) in &config.audit {
        if kept(name, section) {
            continue; // the running one is taken over (a reload)
        }
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
                Some(Arc::new(SqlIdempotencyStore::shared(database.clone())))
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
