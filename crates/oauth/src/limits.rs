//! What a stranger may cost the authorization server: registrations and pending authorizations
//! per peer address, unused registrations kept, and how fast passwords may be tried. Every rule
//! takes the time as an argument, so tests are exact without sleeping.

use std::collections::HashMap;
use std::net::IpAddr;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use crate::store::StoreError;

use serde::Deserialize;

/// `[oauth.limits]`.
#[derive(Debug, Clone, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct LimitsConfig {
    /// Client registrations one peer address may make a minute (a minute's worth may come at
    /// once). 60: Claude's backend registers from shared addresses, sometimes twice per connect,
    /// and a busy one must not be refused; what protects the disk is `max_unused_clients`. 0
    /// turns the limit off.
    #[serde(default = "sixty")]
    pub registrations_per_minute: u32,
    /// Self-registered clients that never obtained a token are kept up to this many; beyond
    /// it the oldest go first. 2,000 × at most ~6 KB per registration (10 redirect URIs of ≤ 512
    /// bytes, a name of ≤ 100 characters) bounds them to ~12 MB, and leaves room for hundreds of
    /// people connecting at the same moment (a client is "used" from its first token on).
    #[serde(default = "two_thousand")]
    pub max_unused_clients: u64,
    /// Sign-in pages (pending authorizations) one peer address may open a minute: 60 lets an
    /// office behind one address sign in together, and bounds what one peer stores to ~900
    /// pending rows of ≤ 3 KB during their 15 minutes. 0 turns the limit off.
    #[serde(default = "sixty")]
    pub authorizations_per_minute: u32,
    /// Failed sign-ins from one peer address before each further try must wait: 10 leaves an
    /// office behind one address its typos; a password sprayer gets 10 guesses, not thousands.
    #[serde(default = "ten")]
    pub sign_in_failures_per_peer: u32,
    /// Failed sign-ins for one account (from anywhere) before each further try must wait.
    #[serde(default = "five")]
    pub sign_in_failures_per_account: u32,
    /// The first wait after those failures; it doubles with each further failure.
    #[schemars(with = "concierge_core::written::Duration")]
    #[serde(default = "one_second", with = "humantime_serde")]
    pub sign_in_delay: Duration,
    /// The longest wait for a peer address: 5 minutes holds a sprayer to ~12 guesses an hour,
    /// and never locks an office behind a shared address (a proxy, a NAT) out for long.
    #[schemars(with = "concierge_core::written::Duration")]
    #[serde(default = "five_minutes", with = "humantime_serde")]
    pub sign_in_max_delay_per_peer: Duration,
    /// The longest wait for an account: short (30 s), because anyone who knows a user's name
    /// can make the failures; it slows guessing from many addresses (to ~120 guesses an hour)
    /// without locking the user out.
    #[schemars(with = "concierge_core::written::Duration")]
    #[serde(default = "thirty_seconds", with = "humantime_serde")]
    pub sign_in_max_delay_per_account: Duration,
}

impl Default for LimitsConfig {
    fn default() -> Self {
        serde_json::from_value(serde_json::json!({})).expect("the defaults deserialize")
    }
}

fn sixty() -> u32 {
    60
}
fn ten() -> u32 {
    10
}
fn five() -> u32 {
    5
}
fn two_thousand() -> u64 {
    2000
}
fn one_second() -> Duration {
    Duration::from_secs(1)
}
fn five_minutes() -> Duration {
    Duration::from_secs(300)
}
fn thirty_seconds() -> Duration {
    Duration::from_secs(30)
}

/// Tables of peers and accounts are pruned beyond this many entries, so a flood of addresses
/// or made-up user names cannot grow memory without bound.
const MAX_ENTRIES: usize = 10_000;

/// The address a limit counts: IPv6 by its /64 (one subscriber gets a whole /64, so single
/// addresses would be free to rotate), IPv4-mapped IPv6 as IPv4.
pub fn peer_key(addr: IpAddr) -> IpAddr {
    match addr {
        IpAddr::V6(v6) => match v6.to_ipv4_mapped() {
            Some(v4) => IpAddr::V4(v4),
            None => {
                let mut segments = v6.segments();
                segments[4..].fill(0);
                IpAddr::V6(segments.into())
            }
        },
        v4 => v4,
    }
}

/// A token bucket per peer: `per_minute` tokens, refilled evenly over a minute.
pub struct PeerBuckets {
    per_minute: u32,
    buckets: Mutex<HashMap<IpAddr, (f64, Instant)>>,
}

impl PeerBuckets {
    pub fn new(per_minute: u32) -> Self {
        Self {
            per_minute,
            buckets: Mutex::default(),
        }
    }

    /// Takes one token for `peer`; `Err` is how long until the next one.
    pub fn take(&self, peer: IpAddr, now: Instant) -> Result<(), Duration> {
        if self.per_minute == 0 {
            return Ok(());
        }
        let capacity = f64::from(self.per_minute);
        let per_second = capacity / 60.0;
        let refill = |(tokens, at): (f64, Instant)| {
            (tokens + now.saturating_duration_since(at).as_secs_f64() * per_second).min(capacity)
        };
        let mut buckets = self.buckets.lock().unwrap_or_else(|p| p.into_inner());
        if buckets.len() >= MAX_ENTRIES {
            // Full buckets say nothing a fresh one would not.
            buckets.retain(|_, bucket| refill(*bucket) < capacity);
        }
        let bucket = buckets.entry(peer_key(peer)).or_insert((capacity, now));
        let tokens = refill(*bucket);
        if tokens < 1.0 {
            return Err(Duration::from_secs_f64((1.0 - tokens) / per_second));
        }
        *bucket = (tokens - 1.0, now);
        Ok(())
    }
}

/// Failures after `free` make each next try wait `base`, doubling, at most `cap`.
#[derive(Debug, Clone, Copy)]
pub struct Backoff {
    pub free: u32,
    pub base: Duration,
    pub cap: Duration,
}

/// A record is forgotten this long after its wait is over: quiet for 15 minutes, a peer or an
/// account starts afresh.
pub const FORGET_AFTER: Duration = Duration::from_secs(15 * 60);

impl Backoff {
    pub fn wait(&self, failures: u32) -> Duration {
        if failures < self.free {
            return Duration::ZERO;
        }
        let doublings = (failures - self.free).min(30);
        self.base.saturating_mul(1 << doublings).min(self.cap)
    }
}

#[derive(Debug, Clone, Copy)]
struct Failures {
    count: u32,
    last: Instant,
}

/// Why a sign-in must wait.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Throttled {
    /// This address failed too often (password spraying).
    Peer(Duration),
    /// This account failed too often (guessing one user's password).
    Account(Duration),
}

/// Failed sign-ins counted where several instances see the same counts (the shared database),
/// by key: `peer:<address>`, `account:<name>`. Times are the store's own clock.
#[async_trait::async_trait]
pub trait SharedFailures: Send + Sync {
    /// The key's failures and how long ago the last one was; `None` when it has none.
    async fn failures(&self, key: &str) -> Result<Option<(u32, Duration)>, StoreError>;
    /// Counts one more failure now, starting afresh when the record was quiet for the rule's
    /// wait plus [`FORGET_AFTER`]; in one statement, so failures at once on several instances
    /// all count.
    async fn count_failure(&self, key: &str, rule: Backoff) -> Result<(), StoreError>;
    async fn forget(&self, key: &str) -> Result<(), StoreError>;
}

/// Sign-in throttling per peer address and per account, with growing waits instead of locks.
/// In this process by default; in the shared database when several instances serve sign-ins.
pub struct SignInThrottle {
    peer: Backoff,
    account: Backoff,
    peers: Mutex<HashMap<IpAddr, Failures>>,
    accounts: Mutex<HashMap<String, Failures>>,
    shared: Option<Arc<dyn SharedFailures>>,
}

/// How long `key` must still wait at `now`, forgetting it when it has been quiet long enough.
fn remaining<K: std::hash::Hash + Eq>(
    table: &mut HashMap<K, Failures>,
    key: &K,
    rule: Backoff,
    now: Instant,
) -> Duration {
    let Some(record) = table.get(key).copied() else {
        return Duration::ZERO;
    };
    let wait = rule.wait(record.count);
    let since = now.saturating_duration_since(record.last);
    if since >= wait + FORGET_AFTER {
        table.remove(key);
        return Duration::ZERO;
    }
    wait.saturating_sub(since)
}

fn count_failure<K: std::hash::Hash + Eq + Clone>(
    table: &mut HashMap<K, Failures>,
    key: K,
    rule: Backoff,
    now: Instant,
) {
    if table.len() >= MAX_ENTRIES {
        table.retain(|_, r| {
            now.saturating_duration_since(r.last) < rule.wait(r.count) + FORGET_AFTER
        });
    }
    remaining(table, &key, rule, now);
    let record = table.entry(key).or_insert(Failures {
        count: 0,
        last: now,
    });
    record.count = record.count.saturating_add(1);
    record.last = now;
}

impl SignInThrottle {
    pub fn new(config: &LimitsConfig) -> Self {
        Self {
            peer: Backoff {
                free: config.sign_in_failures_per_peer,
                base: config.sign_in_delay,
                cap: config.sign_in_max_delay_per_peer,
            },
            account: Backoff {
                free: config.sign_in_failures_per_account,
                base: config.sign_in_delay,
                cap: config.sign_in_max_delay_per_account,
            },
            peers: Mutex::default(),
            accounts: Mutex::default(),
            shared: None,
        }
    }

    /// Counts in `shared` instead of this process.
    pub fn shared(mut self, shared: Arc<dyn SharedFailures>) -> Self {
        self.shared = Some(shared);
        self
    }

    /// Whether a password may be tried now for `account` from `peer` (unknown when the server
    /// is not told the address: then only the account counts). A shared store that does not
    /// answer throttles nothing: the sign-in that follows needs it too, and fails.
    pub async fn check(
        &self,
        peer: Option<IpAddr>,
        account: &str,
        now: Instant,
    ) -> Result<(), Throttled> {
        if let Some(shared) = &self.shared {
            let wait = |key: String, rule: Backoff| async move {
                match shared.failures(&key).await {
                    Ok(Some((count, since))) => rule.wait(count).saturating_sub(since),
                    Ok(None) => Duration::ZERO,
                    Err(error) => {
                        tracing::warn!(%error, "oauth: sign-in failures unreadable");
                        Duration::ZERO
                    }
                }
            };
            if let Some(peer) = peer {
                let wait = wait(format!("peer:{}", peer_key(peer)), self.peer).await;
                if !wait.is_zero() {
                    return Err(Throttled::Peer(wait));
                }
            }
            let wait = wait(format!("account:{}", account.to_lowercase()), self.account).await;
            return if wait.is_zero() {
                Ok(())
            } else {
                Err(Throttled::Account(wait))
            };
        }
        if let Some(peer) = peer {
            let mut peers = self.peers.lock().unwrap_or_else(|p| p.into_inner());
            let wait = remaining(&mut peers, &peer_key(peer), self.peer, now);
            if !wait.is_zero() {
                return Err(Throttled::Peer(wait));
            }
        }
        let mut accounts = self.accounts.lock().unwrap_or_else(|p| p.into_inner());
        let wait = remaining(&mut accounts, &account.to_lowercase(), self.account, now);
        if !wait.is_zero() {
            return Err(Throttled::Account(wait));
        }
        Ok(())
    }

    pub async fn failed(&self, peer: Option<IpAddr>, account: &str, now: Instant) {
        if let Some(shared) = &self.shared {
            let mut counted = Vec::new();
            if let Some(peer) = peer {
                counted.push((format!("peer:{}", peer_key(peer)), self.peer));
            }
            counted.push((format!("account:{}", account.to_lowercase()), self.account));
            for (key, rule) in counted {
                if let Err(error) = shared.count_failure(&key, rule).await {
                    tracing::warn!(%error, "oauth: a failed sign-in was not counted");
                }
            }
            return;
        }
        if let Some(peer) = peer {
            let mut peers = self.peers.lock().unwrap_or_else(|p| p.into_inner());
            count_failure(&mut peers, peer_key(peer), self.peer, now);
        }
        let mut accounts = self.accounts.lock().unwrap_or_else(|p| p.into_inner());
        count_failure(&mut accounts, account.to_lowercase(), self.account, now);
    }

    /// A right password clears the account's failures. The peer's stay: a sprayer with one
    /// account of its own must not wipe its record by signing in between guesses.
    pub async fn succeeded(&self, account: &str) {
        if let Some(shared) = &self.shared {
            let key = format!("account:{}", account.to_lowercase());
            if let Err(error) = shared.forget(&key).await {
                tracing::warn!(%error, "oauth: an account's failed sign-ins were not cleared");
            }
            return;
        }
        let mut accounts = self.accounts.lock().unwrap_or_else(|p| p.into_inner());
        accounts.remove(&account.to_lowercase());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ip(text: &str) -> IpAddr {
        text.parse().unwrap()
    }

    #[test]
    fn buckets_allow_a_minutes_worth_then_refill_and_say_when() {
        let buckets = PeerBuckets::new(3);
        let t0 = Instant::now();
        for _ in 0..3 {
            assert!(buckets.take(ip("192.0.2.1"), t0).is_ok());
        }
        let wait = buckets.take(ip("192.0.2.1"), t0).unwrap_err();
        assert_eq!(wait.as_secs(), 20, "one token every 20 s at 3 a minute");
        assert!(buckets.take(ip("192.0.2.2"), t0).is_ok(), "another peer");
        assert!(
            buckets
                .take(ip("192.0.2.1"), t0 + Duration::from_secs(21))
                .is_ok()
        );
        // One IPv6 subscriber (/64) is one peer.
        let six = PeerBuckets::new(1);
        assert!(six.take(ip("2001:db8::1"), t0).is_ok());
        assert!(six.take(ip("2001:db8::ffff:2"), t0).is_err());
        assert!(six.take(ip("2001:db8:0:1::1"), t0).is_ok());
        assert!(PeerBuckets::new(0).take(ip("192.0.2.1"), t0).is_ok());
    }

    #[tokio::test]
    async fn a_sprayer_waits_longer_and_longer_a_user_is_never_locked_for_long() {
        let throttle = SignInThrottle::new(&LimitsConfig::default());
        let t0 = Instant::now();
        let sprayer = Some(ip("198.51.100.7"));
        // Ten names free, then the address waits 1 s, 2 s, 4 s … at most 5 minutes.
        for n in 0..10 {
            let name = format!("user{n}");
            assert_eq!(throttle.check(sprayer, &name, t0).await, Ok(()));
            throttle.failed(sprayer, &name, t0).await;
        }
        assert_eq!(
            throttle.check(sprayer, "user10", t0).await,
            Err(Throttled::Peer(Duration::from_secs(1)))
        );
        let mut at = t0;
        for n in 0..20 {
            let wait = match throttle.check(sprayer, "x", at).await {
                Err(Throttled::Peer(wait)) => wait,
                other => panic!("{other:?}"),
            };
            assert_eq!(
                wait,
                Duration::from_secs(1 << n).min(Duration::from_secs(300))
            );
            at += wait;
            assert_eq!(
                throttle.check(sprayer, &format!("more{n}"), at).await,
                Ok(())
            );
            throttle.failed(sprayer, &format!("more{n}"), at).await;
        }
        // Someone else, from elsewhere, is not slowed by the sprayer.
        assert_eq!(
            throttle.check(Some(ip("203.0.113.9")), "user1", at).await,
            Ok(())
        );

        // Five wrong passwords for alice from many addresses: alice waits seconds, not minutes.
        for n in 0..5 {
            throttle
                .failed(Some(ip(&format!("192.0.2.{n}"))), "Alice", at)
                .await;
        }
        let alice = Some(ip("203.0.113.50"));
        assert_eq!(
            throttle.check(alice, "alice", at).await,
            Err(Throttled::Account(Duration::from_secs(1)))
        );
        for n in 5..40 {
            throttle
                .failed(Some(ip(&format!("192.0.2.{n}"))), "alice", at)
                .await;
        }
        assert_eq!(
            throttle.check(alice, "alice", at).await,
            Err(Throttled::Account(Duration::from_secs(30))),
            "capped at 30 seconds however many failures"
        );
        let later = at + Duration::from_secs(30);
        assert_eq!(throttle.check(alice, "alice", later).await, Ok(()));
        throttle.succeeded("alice").await;
        throttle.failed(alice, "alice", later).await;
        assert_eq!(
            throttle.check(alice, "alice", later).await,
            Ok(()),
            "a fresh start"
        );
        // Quiet for a while, the sprayer starts afresh.
        let quiet = at + Duration::from_secs(300) + FORGET_AFTER;
        assert_eq!(throttle.check(sprayer, "y", quiet).await, Ok(()));
    }
}
