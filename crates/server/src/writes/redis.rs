//! Idempotency records and the write secret in Redis (`[state] writes = "redis"`, or a
//! deployment whose only shared store is Redis): the Mappy seed's "idempotency cache" (§9).
//! Every instance sees every claim, exactly as with PostgreSQL; what Redis does not give is
//! PostgreSQL's durability — a Redis without `appendonly yes` forgets records when it restarts,
//! and a replay after that reaches the backend again, whose own duplicate guard answers it.
//!
//! A record is a hash (`fingerprint`, `state`, `result`, `owner`, `expires_at`), claimed,
//! completed and released by scripts, which Redis runs one at a time: of N claims at once, one
//! wins. Who holds a claim is judged by the owner's key, `…:owner:<id>`, which each instance
//! keeps alive (every [`HEARTBEAT`], expiring after [`ALIVE_FOR`]); a claim whose owner's key
//! is gone belongs to an instance that died mid-write and is taken over. Record keys expire a
//! minute after their window, so Redis keeps only live records. Standalone Redis: the scripts
//! name the owner's key from the record, which Redis Cluster does not allow.

use std::sync::LazyLock;

use ::redis::Script;
use ::redis::aio::ConnectionManager;
use concierge_core::idempotency::{Claim, Claiming, IdempotencyStore, StoreUnavailable};
use serde_json::Value;

use super::heartbeat::{ALIVE_FOR, HEARTBEAT};

const PREFIX: &str = "concierge:writes:";

/// KEYS[1] the record, KEYS[2] this instance's owner key; ARGV fingerprint, owner id, now
/// (s), window (s), the owner-key prefix, alive-for (s).
static CLAIM: LazyLock<Script> = LazyLock::new(|| {
    Script::new(
        r"
redis.call('SET', KEYS[2], '1', 'EX', ARGV[6])
local now = tonumber(ARGV[3])
local f = redis.call('HMGET', KEYS[1], 'fingerprint', 'state', 'result', 'owner', 'expires_at')
if f[1] and tonumber(f[5]) <= now then
  redis.call('DEL', KEYS[1])
  f = {false}
end
if not f[1] then
  local expires = now + tonumber(ARGV[4])
  redis.call('HSET', KEYS[1], 'fingerprint', ARGV[1], 'state', 'running', 'owner', ARGV[2], 'expires_at', expires)
  redis.call('EXPIRE', KEYS[1], tonumber(ARGV[4]) + 60)
  return {'claimed'}
end
if f[2] == 'done' then return {'done', f[1], f[3]} end
if f[1] == ARGV[1] and f[4] ~= ARGV[2] and redis.call('EXISTS', ARGV[5] .. f[4]) == 0 then
  redis.call('HSET', KEYS[1], 'owner', ARGV[2])
  return {'claimed'}
end
return {'running', f[1]}
",
    )
});

/// KEYS[1] the record; ARGV the result. Only a record that is still there is completed.
static COMPLETE: LazyLock<Script> = LazyLock::new(|| {
    Script::new(
        r"
if redis.call('EXISTS', KEYS[1]) == 1 then
  redis.call('HSET', KEYS[1], 'state', 'done', 'result', ARGV[1])
end
return 1
",
    )
});

/// KEYS[1] the record: removed while it is still running.
static RELEASE: LazyLock<Script> = LazyLock::new(|| {
    Script::new(
        r"
if redis.call('HGET', KEYS[1], 'state') == 'running' then redis.call('DEL', KEYS[1]) end
return 1
",
    )
});

pub struct RedisIdempotencyStore {
    conn: ConnectionManager,
    owner: String,
    heartbeat: tokio::task::AbortHandle,
}

fn down(error: ::redis::RedisError) -> StoreUnavailable {
    StoreUnavailable(format!(
        "idempotency store (Redis): {}",
        crate::limits::redis::words(&error)
    ))
}

fn record_key(key: &str) -> String {
    format!("{PREFIX}{key}")
}

fn owner_key(owner: &str) -> String {
    format!("{PREFIX}owner:{owner}")
}

impl RedisIdempotencyStore {
    /// The store, with this instance's heartbeat running (it stops when the store is dropped).
    pub fn new(conn: ConnectionManager) -> Self {
        let owner = uuid::Uuid::new_v4().simple().to_string();
        let heartbeat = tokio::spawn(beat(conn.clone(), owner_key(&owner))).abort_handle();
        Self {
            conn,
            owner,
            heartbeat,
        }
    }
}

impl Drop for RedisIdempotencyStore {
    fn drop(&mut self) {
        self.heartbeat.abort();
    }
}

async fn beat(mut conn: ConnectionManager, key: String) {
    let mut ticks = tokio::time::interval(HEARTBEAT);
    ticks.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        ticks.tick().await;
        let renewed: Result<(), _> = ::redis::cmd("SET")
            .arg(&key)
            .arg("1")
            .arg("EX")
            .arg(ALIVE_FOR.as_secs())
            .query_async(&mut conn)
            .await;
        if let Err(error) = renewed {
            tracing::debug!(%error, "idempotency: heartbeat not written");
        }
    }
}

fn parse_result(text: Option<String>) -> Value {
    text.and_then(|t| serde_json::from_str(&t).ok())
        .unwrap_or(Value::Null)
}

#[async_trait::async_trait]
impl IdempotencyStore for RedisIdempotencyStore {
    async fn secret(&self) -> Result<[u8; 32], StoreUnavailable> {
        let mut conn = self.conn.clone();
        let key = format!("{PREFIX}secret");
        let fresh = super::fresh_secret();
        // The first instance's secret is everyone's.
        let _: Option<String> = ::redis::cmd("SET")
            .arg(&key)
            .arg(fresh.as_slice())
            .arg("NX")
            .query_async(&mut conn)
            .await
            .map_err(down)?;
        let stored: Vec<u8> = ::redis::cmd("GET")
            .arg(&key)
            .query_async(&mut conn)
            .await
            .map_err(down)?;
        stored
            .try_into()
            .map_err(|_| StoreUnavailable("the stored write secret is damaged".into()))
    }

    async fn claim_as_asked(&self, asked: &Claiming<'_>) -> Result<Claim, StoreUnavailable> {
        let mut conn = self.conn.clone();
        let answer: Vec<Option<String>> = CLAIM
            .key(record_key(asked.key))
            .key(owner_key(&self.owner))
            .arg(asked.fingerprint)
            .arg(&self.owner)
            .arg(asked.now)
            .arg(asked.window.as_secs())
            .arg(format!("{PREFIX}owner:"))
            .arg(ALIVE_FOR.as_secs())
            .invoke_async(&mut conn)
            .await
            .map_err(down)?;
        let mut answer = answer.into_iter();
        let kind = answer.next().flatten().unwrap_or_default();
        let stored = answer.next().flatten().unwrap_or_default();
        Ok(match kind.as_str() {
            "claimed" => Claim::Claimed,
            "done" => Claim::Done {
                fingerprint: stored,
                result: parse_result(answer.next().flatten()),
            },
            _ => Claim::Running {
                fingerprint: stored,
            },
        })
    }

    async fn peek(&self, key: &str, now: i64) -> Result<Option<Claim>, StoreUnavailable> {
        let mut conn = self.conn.clone();
        let (fingerprint, state, result, expires): (
            Option<String>,
            Option<String>,
            Option<String>,
            Option<i64>,
        ) = ::redis::cmd("HMGET")
            .arg(record_key(key))
            .arg(&["fingerprint", "state", "result", "expires_at"])
            .query_async(&mut conn)
            .await
            .map_err(down)?;
        let Some(fingerprint) = fingerprint.filter(|_| expires.is_some_and(|e| e > now)) else {
            return Ok(None);
        };
        Ok(Some(match state.as_deref() {
            Some("done") => Claim::Done {
                fingerprint,
                result: parse_result(result),
            },
            _ => Claim::Running { fingerprint },
        }))
    }

    async fn complete(&self, key: &str, result: &Value) -> Result<(), StoreUnavailable> {
        let mut conn = self.conn.clone();
        let _: i64 = COMPLETE
            .key(record_key(key))
            .arg(result.to_string())
            .invoke_async(&mut conn)
            .await
            .map_err(down)?;
        Ok(())
    }

    async fn release(&self, key: &str) -> Result<(), StoreUnavailable> {
        let mut conn = self.conn.clone();
        let _: i64 = RELEASE
            .key(record_key(key))
            .invoke_async(&mut conn)
            .await
            .map_err(down)?;
        Ok(())
    }
}
