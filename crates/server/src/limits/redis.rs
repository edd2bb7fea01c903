//! Rate limits counted in Redis, so every instance of a deployment spends one budget
//! (`[state] redis`). Each check is one script run: Redis runs a script alone, so N parallel
//! calls from any number of instances against a budget of M let exactly M through.
//!
//! The scripts do what the in-process stores do ([`super::WindowStore`]'s sliding log,
//! [`super::GovernorStore`]'s GCRA bucket), on Redis's own clock (`TIME`): the instances' clocks
//! may disagree, the budget does not. Keys are hashes of the caller's key (a client name, a
//! token, a user id), because an access token must not sit in Redis in the clear, and they
//! expire once their window is empty, so Redis holds only callers that called lately.
//!
//! When Redis cannot be reached a check answers [`Limited::Unavailable`] within the response
//! timeout; the connection manager reconnects by itself, so the limits are back as soon as
//! Redis is, without a restart.

use std::sync::LazyLock;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use ::redis::Script;
use ::redis::aio::{ConnectionManager, ConnectionManagerConfig};
use concierge_core::{LimitPolicy, Limited, RateLimitStore, RetryAfter};
use sha2::{Digest, Sha256};

use crate::config::Rate;

/// The sliding log: KEYS[1] a sorted set of call instants (µs); ARGV count, period (µs), a
/// member unique to this call. Drops what left the window, then admits or names the wait.
static SLIDING_WINDOW: LazyLock<Script> = LazyLock::new(|| {
    Script::new(
        r"
local count, period = tonumber(ARGV[1]), tonumber(ARGV[2])
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000000 + tonumber(t[2])
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now - period)
if redis.call('ZCARD', KEYS[1]) < count then
  redis.call('ZADD', KEYS[1], now, ARGV[3])
  redis.call('PEXPIRE', KEYS[1], math.ceil(period / 1000))
  return {1, 0}
end
local oldest = redis.call('ZRANGE', KEYS[1], 0, 0, 'WITHSCORES')
return {0, tonumber(oldest[2]) + period - now}
",
    )
});

/// GCRA as governor does it: KEYS[1] the theoretical arrival time (µs); one call per
/// `period / count`, with a burst of `count`.
static BUCKET: LazyLock<Script> = LazyLock::new(|| {
    Script::new(
        r"
local count, period = tonumber(ARGV[1]), tonumber(ARGV[2])
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000000 + tonumber(t[2])
local interval = period / count
local tat = tonumber(redis.call('GET', KEYS[1]) or now)
if tat < now then tat = now end
local allow_at = tat + interval - period
if now < allow_at then return {0, math.ceil(allow_at - now)} end
redis.call('SET', KEYS[1], tostring(tat + interval), 'PX', math.ceil((tat + interval - now) / 1000) + 1)
return {1, 0}
",
    )
});

/// The deployment's connection to Redis: one multiplexed connection that reconnects by itself.
/// Made without connecting, so an instance starts (and serves what needs no limit) while Redis
/// is down.
pub fn connect(url: &str) -> Result<ConnectionManager, String> {
    let client = ::redis::Client::open(url).map_err(|_| "not a redis:// URL".to_string())?;
    let config = ConnectionManagerConfig::new()
        .set_connection_timeout(Some(Duration::from_secs(1)))
        .set_response_timeout(Some(Duration::from_millis(500)))
        .set_min_delay(Duration::from_millis(50))
        .set_max_delay(Duration::from_secs(2));
    ConnectionManager::new_lazy_with_config(client, config).map_err(|e| words(&e))
}

/// Whether Redis answers, for `/health` and `concierge check`.
pub async fn ping(conn: &ConnectionManager) -> Result<(), String> {
    let mut conn = conn.clone();
    ::redis::cmd("PING")
        .query_async::<String>(&mut conn)
        .await
        .map(|_| ())
        .map_err(|e| words(&e))
}

/// What failed, in words that name no host, port or password.
pub(crate) fn words(error: &::redis::RedisError) -> String {
    if error.is_timeout() {
        "no answer in time".into()
    } else if error.is_connection_refusal() || error.is_io_error() || error.is_connection_dropped()
    {
        "unreachable".into()
    } else if error.kind() == ::redis::ErrorKind::AuthenticationFailed {
        "authentication failed".into()
    } else {
        "refused the command".into()
    }
}

/// One `[limits.<name>]` (or an endpoint's session budget), counted in Redis.
pub struct RedisLimiter {
    conn: ConnectionManager,
    /// `concierge:limit:<name>:`; the caller's hashed key follows.
    prefix: String,
    count: u32,
    period_us: u64,
    policy: LimitPolicy,
    text: String,
    /// Makes each admitted call its own member of the sorted set, also two in one µs.
    instance: u64,
    calls: AtomicU64,
}

impl RedisLimiter {
    pub fn new(
        conn: ConnectionManager,
        name: &str,
        rate: Rate,
        text: &str,
        policy: LimitPolicy,
    ) -> Self {
        // Random per limiter (std's hasher keys are): a clash with another instance's would
        // only merge two calls of one µs into one member, refusing one call early.
        let instance = std::hash::BuildHasher::hash_one(&std::hash::RandomState::new(), name);
        Self {
            conn,
            prefix: format!("concierge:limit:{name}:"),
            count: rate.count.max(1),
            period_us: (rate.period.as_micros() as u64).max(1),
            policy,
            text: text.to_string(),
            instance,
            calls: AtomicU64::new(0),
        }
    }

    fn key(&self, key: &str) -> String {
        let digest = Sha256::digest(key.as_bytes());
        format!("{}{}", self.prefix, hex::encode(&digest[..16]))
    }
}

#[async_trait::async_trait]
impl RateLimitStore for RedisLimiter {
    fn remote(&self) -> bool {
        true
    }

    async fn check(&self, key: &str) -> Result<(), Limited> {
        let script = match self.policy {
            LimitPolicy::SlidingWindow => &*SLIDING_WINDOW,
            LimitPolicy::Bucket => &*BUCKET,
        };
        let member = format!(
            "{:x}:{:x}",
            self.instance,
            self.calls.fetch_add(1, Ordering::Relaxed)
        );
        let mut conn = self.conn.clone();
        let (admitted, wait_us): (i64, i64) = script
            .key(self.key(key))
            .arg(self.count)
            .arg(self.period_us)
            .arg(member)
            .invoke_async(&mut conn)
            .await
            .map_err(|e| Limited::Unavailable(format!("redis: {}", words(&e))))?;
        if admitted == 1 {
            Ok(())
        } else {
            Err(Limited::Retry(RetryAfter(Duration::from_micros(
                wait_us.max(1) as u64,
            ))))
        }
    }

    fn describe(&self) -> String {
        self.text.clone()
    }

    fn policy(&self) -> LimitPolicy {
        self.policy
    }
}
