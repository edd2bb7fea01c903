//! `[state]` and `[writes]`: where what several instances share lives, and how long write
//! safety's records hold.

use std::path::PathBuf;
use std::time::Duration;

use serde::Deserialize;

/// `[state]`.
#[derive(Debug, Clone, Default, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct StateSection {
    /// `redis://host:port/db` (`${CONCIERGE_REDIS_URL:-}`): every `[limits]` limiter and the
    /// session budgets are counted there, exactly across instances. Empty or absent: in-process.
    #[serde(default)]
    pub redis: Option<String>,
    /// `postgres://user:password@host/db` (`${CONCIERGE_DATABASE_URL:-}`): write safety's
    /// idempotency records and write secret live there, shared by every instance (`[writes]
    /// database` is then not used). Empty or absent: the SQLite file of `[writes]`.
    #[serde(default)]
    pub database: Option<String>,
    /// Where write safety's records live when the deployment shares state: `postgres` (durable;
    /// the default when `database` is set) or `redis` (the default when only `redis` is).
    #[serde(default)]
    pub writes: Option<WritesHome>,
    /// While the store behind a limit is down: `refuse` the call as retryable (the default:
    /// a limit that protects a backend must not vanish with Redis), or `allow` it.
    #[serde(default)]
    pub limits_when_down: WhenDown,
    /// This instance's name (`${CONCIERGE_INSTANCE:-}`): the first part of the session ids it
    /// mints, which a balancer reads to send a session's requests back to it. Letters, digits,
    /// `-` and `_`, at most 32.
    #[serde(default)]
    pub instance: Option<String>,
    /// The secret every instance signs session ids with (`${CONCIERGE_SESSION_SECRET:-}`, at
    /// least 32 characters): with it, any instance refuses a session id that another client
    /// opened. Unset: a random key of this process (one instance needs no more).
    #[serde(default)]
    pub session_secret: Option<String>,
}

impl StateSection {
    /// The Redis URL, when one is set (an unset variable interpolates to "").
    pub fn redis(&self) -> Option<&str> {
        self.redis
            .as_deref()
            .map(str::trim)
            .filter(|url| !url.is_empty())
    }

    /// The PostgreSQL URL, when one is set.
    pub fn database(&self) -> Option<&str> {
        self.database
            .as_deref()
            .map(str::trim)
            .filter(|url| !url.is_empty())
    }

    /// Where write records are shared (`None`: the `[writes]` SQLite file of this host).
    pub fn writes_home(&self) -> Option<WritesHome> {
        self.writes.or(match (self.database(), self.redis()) {
            (Some(_), _) => Some(WritesHome::Postgres),
            (None, Some(_)) => Some(WritesHome::Redis),
            (None, None) => None,
        })
    }

    /// Whether several instances are meant to share this deployment's state.
    pub fn is_shared(&self) -> bool {
        self.redis().is_some() || self.database().is_some()
    }

    pub fn instance(&self) -> &str {
        self.instance.as_deref().map(str::trim).unwrap_or_default()
    }

    pub fn session_secret(&self) -> Option<&str> {
        self.session_secret.as_deref().filter(|s| !s.is_empty())
    }

    /// The problems of the section, by key.
    pub fn problems(&self) -> Vec<(&'static str, String)> {
        let mut problems = Vec::new();
        let instance = self.instance();
        if instance.len() > 32
            || !instance
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
        {
            problems.push((
                "state.instance",
                format!("`{instance}`: letters, digits, `-` and `_` only, at most 32"),
            ));
        }
        match (self.writes, self.database(), self.redis()) {
            (Some(WritesHome::Postgres), None, _) => problems.push((
                "state.writes",
                "`postgres` needs `state.database` (a postgres:// URL)".to_string(),
            )),
            (Some(WritesHome::Redis), _, None) => problems.push((
                "state.writes",
                "`redis` needs `state.redis` (a redis:// URL)".to_string(),
            )),
            _ => {}
        }
        if self
            .session_secret()
            .is_some_and(|s| s.chars().count() < 32)
        {
            problems.push((
                "state.session_secret",
                "at least 32 characters (a random string the instances share)".to_string(),
            ));
        }
        problems
    }
}

/// The shared home of idempotency records and the write secret.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum WritesHome {
    Postgres,
    Redis,
}

/// What a limit does while the shared store that counts it is down.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum WhenDown {
    #[default]
    Refuse,
    Allow,
}

#[derive(Debug, Clone, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct WritesSection {
    /// SQLite file of idempotency records (shared by every endpoint and every process on this
    /// host); with `[state] database` set, the records live there instead.
    pub database: PathBuf,
    /// How long an `idempotency_key` answers its first result.
    #[schemars(with = "concierge_core::written::Duration")]
    #[serde(default = "one_day", with = "humantime_serde")]
    pub idempotency_window: Duration,
    /// How long a confirm token is valid.
    #[schemars(with = "concierge_core::written::Duration")]
    #[serde(default = "five_minutes", with = "humantime_serde")]
    pub confirm_ttl: Duration,
}

fn one_day() -> Duration {
    Duration::from_secs(24 * 3600)
}

pub(super) fn five_minutes() -> Duration {
    Duration::from_secs(5 * 60)
}
