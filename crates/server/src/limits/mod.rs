//! The in-process rate-limit stores, one budget per key (client, token or user).
//!
//! Two policies ([`LimitPolicy`]):
//!
//! - [`WindowStore`], the default: a sliding log. Each key keeps the instants of the calls it was
//!   let through in the last `period` (at most `count` of them), so "60/minute" means never more
//!   than 60 in any 60 seconds, which is how people read it. Exact under concurrency: a key's log
//!   is changed under its shard's lock.
//! - [`GovernorStore`]: governor's GCRA, a refilling bucket whose burst is the count. It admits
//!   `count` at once and then one per `period / count`, so close to twice the count in a rolling
//!   period; kept as `policy = "bucket"` for deployments that want a smooth refill.
//!
//! Both forget keys whose budget is untouched again (nothing in the window, a full bucket), in
//! an amortised sweep at most once a period on the call path: a limiter per access token would
//! otherwise grow with every token ever seen. No background task is needed, and a key that comes
//! back simply starts with a whole budget, which is what it would have had anyway.

use std::collections::{HashMap, VecDeque};
use std::hash::{BuildHasher, RandomState};
use std::num::NonZeroU32;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use concierge_core::{Clock, LimitPolicy, Limited, RateLimitStore, RetryAfter, SystemClock};
use governor::clock::{Clock as GovernorClock, DefaultClock, Reference};
use governor::middleware::NoOpMiddleware;
use governor::state::keyed::DefaultKeyedStateStore;
use governor::{Quota, RateLimiter};

use crate::config::Rate;

pub mod redis;

/// A limiter of `policy` for `rate`, on the real clock.
pub fn store(rate: Rate, text: &str, policy: LimitPolicy) -> Arc<dyn RateLimitStore> {
    match policy {
        LimitPolicy::SlidingWindow => Arc::new(WindowStore::new(rate, text)),
        LimitPolicy::Bucket => Arc::new(GovernorStore::new(rate, text)),
    }
}

/// What a limiter lets through, in words (`concierge check`).
pub fn explain(rate: Rate, policy: LimitPolicy) -> String {
    let period = humantime::format_duration(rate.period);
    match policy {
        LimitPolicy::SlidingWindow => format!(
            "sliding window: never more than {} calls in any {period}",
            rate.count
        ),
        LimitPolicy::Bucket => format!(
            "token bucket: a burst of {}, then one every {}; up to about {} in a rolling {period}",
            rate.count,
            humantime::format_duration(rate.period / rate.count.max(1)),
            rate.count.saturating_mul(2).saturating_sub(1)
        ),
    }
}

/// Per key, the instants of the calls in its window.
type Logs = HashMap<String, VecDeque<u64>>;

/// Shards keep keys of different callers from waiting on one lock; a power of two.
const SHARDS: usize = 16;

/// The sliding log: per key, the instants (nanoseconds on the clock) of the calls let through
/// within the last period, oldest first. Memory is at most `count` × 8 bytes per key with calls
/// in the window.
pub struct WindowStore<C: Clock = SystemClock> {
    shards: Box<[Mutex<Logs>]>,
    hasher: RandomState,
    count: usize,
    period: u64,
    clock: C,
    /// When the next sweep for empty windows is due (nanoseconds on the clock).
    next_sweep: AtomicU64,
    text: String,
}

impl WindowStore<SystemClock> {
    pub fn new(rate: Rate, text: &str) -> Self {
        Self::with_clock(rate, text, SystemClock)
    }
}

impl<C: Clock> WindowStore<C> {
    pub fn with_clock(rate: Rate, text: &str, clock: C) -> Self {
        let period = (rate.period.as_nanos() as u64).max(1);
        Self {
            shards: (0..SHARDS).map(|_| Mutex::default()).collect(),
            hasher: RandomState::new(),
            count: rate.count.max(1) as usize,
            period,
            next_sweep: AtomicU64::new(clock.elapsed().as_nanos() as u64 + period),
            clock,
            text: text.to_string(),
        }
    }

    /// How many keys are held now (tests, metrics).
    pub fn keys(&self) -> usize {
        self.shards.iter().map(|s| lock(s).len()).sum()
    }

    fn shard(&self, key: &str) -> MutexGuard<'_, Logs> {
        let index = self.hasher.hash_one(key) as usize & (SHARDS - 1);
        lock(&self.shards[index])
    }

    /// Drops the calls that left the window `(now - period, now]`.
    fn expire(&self, log: &mut VecDeque<u64>, now: u64) {
        while log.front().is_some_and(|t| t + self.period <= now) {
            log.pop_front();
        }
    }

    /// Once a period, forgets every key whose window is empty: one caller does it (the one
    /// that moves `next_sweep`), the others go on.
    fn sweep_if_due(&self, now: u64) {
        let due = self.next_sweep.load(Ordering::Relaxed);
        if now < due
            || self
                .next_sweep
                .compare_exchange(due, now + self.period, Ordering::AcqRel, Ordering::Relaxed)
                .is_err()
        {
            return;
        }
        for shard in self.shards.iter() {
            let mut keys = lock(shard);
            keys.retain(|_, log| {
                self.expire(log, now);
                !log.is_empty()
            });
        }
    }
}

#[async_trait::async_trait]
impl<C: Clock> RateLimitStore for WindowStore<C> {
    async fn check(&self, key: &str) -> Result<(), Limited> {
        Ok(self.take(key)?)
    }

    fn describe(&self) -> String {
        self.text.clone()
    }

    fn policy(&self) -> LimitPolicy {
        LimitPolicy::SlidingWindow
    }
}

impl<C: Clock> WindowStore<C> {
    /// One unit of `key`'s window, now: never waits (the shard lock is held for a few
    /// instructions), so the async face above is this and nothing more.
    pub fn take(&self, key: &str) -> Result<(), RetryAfter> {
        // The monotonic face: a wall clock set back must not reopen a window.
        let now = self.clock.elapsed().as_nanos() as u64;
        self.sweep_if_due(now);
        let mut keys = self.shard(key);
        let log = match keys.get_mut(key) {
            Some(log) => log,
            None => keys
                .entry(key.to_string())
                .or_insert_with(|| VecDeque::with_capacity(self.count.min(64))),
        };
        self.expire(log, now);
        if log.len() < self.count {
            log.push_back(now);
            return Ok(());
        }
        // Full: the next call fits when the oldest one leaves the window.
        let oldest = log.front().copied().unwrap_or(now);
        Err(RetryAfter(Duration::from_nanos(oldest + self.period - now)))
    }
}

fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(|p| p.into_inner())
}

/// The bucket: governor's GCRA with a burst equal to the count.
pub struct GovernorStore<C: GovernorClock = DefaultClock> {
    limiter: RateLimiter<String, DefaultKeyedStateStore<String>, C, NoOpMiddleware<C::Instant>>,
    clock: C,
    period: Duration,
    /// When keys with a full bucket were last forgotten.
    last_sweep: Mutex<C::Instant>,
    text: String,
}

impl GovernorStore<DefaultClock> {
    pub fn new(rate: Rate, text: &str) -> Self {
        Self::with_clock(rate, text, DefaultClock::default())
    }
}

impl<C: GovernorClock + Clone> GovernorStore<C> {
    /// A store on a given clock; tests pass governor's `FakeRelativeClock` to move time exactly.
    pub fn with_clock(rate: Rate, text: &str, clock: C) -> Self {
        let count = NonZeroU32::new(rate.count).unwrap_or(NonZeroU32::MIN);
        let quota = Quota::with_period(rate.period / count.get())
            .unwrap_or_else(|| Quota::per_second(count))
            .allow_burst(count);
        Self {
            limiter: RateLimiter::dashmap_with_clock(quota, clock.clone()),
            last_sweep: Mutex::new(clock.now()),
            clock,
            period: rate.period,
            text: text.to_string(),
        }
    }

    /// How many keys are held now (tests, metrics).
    pub fn keys(&self) -> usize {
        self.limiter.len()
    }
}

#[async_trait::async_trait]
impl<C: GovernorClock + Send + Sync> RateLimitStore for GovernorStore<C>
where
    C::Instant: Send + Sync,
{
    async fn check(&self, key: &str) -> Result<(), Limited> {
        Ok(self.take(key)?)
    }

    fn describe(&self) -> String {
        self.text.clone()
    }

    fn policy(&self) -> LimitPolicy {
        LimitPolicy::Bucket
    }
}

impl<C: GovernorClock + Send + Sync> GovernorStore<C> {
    /// One unit of `key`'s bucket, now (never waits).
    pub fn take(&self, key: &str) -> Result<(), RetryAfter> {
        let now = self.clock.now();
        // `try_lock`: whoever holds it is sweeping or about to; nobody waits for it.
        if let Ok(mut last) = self.last_sweep.try_lock()
            && Duration::from(now.duration_since(*last)) >= self.period
        {
            *last = now;
            // Keys whose bucket refilled completely are indistinguishable from new ones.
            self.limiter.retain_recent();
            self.limiter.shrink_to_fit();
        }
        self.limiter
            .check_key(&key.to_string())
            .map_err(|not_until| RetryAfter(not_until.wait_time_from(now)))
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use governor::clock::FakeRelativeClock;

    use concierge_core::ManualClock;

    use super::*;

    fn rate() -> Rate {
        Rate::parse("60/minute").unwrap()
    }

    fn window() -> (WindowStore<ManualClock>, ManualClock) {
        let clock = ManualClock::at(chrono::Utc::now());
        (
            WindowStore::with_clock(rate(), "60/minute", clock.clone()),
            clock,
        )
    }

    fn parallel(
        take: &(dyn Fn(&str) -> Result<(), RetryAfter> + Sync),
        calls: usize,
        key: &str,
    ) -> usize {
        std::thread::scope(|scope| {
            let handles: Vec<_> = (0..calls)
                .map(|_| scope.spawn(|| take(key).is_ok() as usize))
                .collect();
            handles.into_iter().map(|h| h.join().unwrap()).sum()
        })
    }

    /// Clock jumps: the wall clock set back or forward (NTP, an operator) is not time passing;
    /// the window neither refills nor drains, and the next minute of real time refills it.
    #[test]
    fn a_wall_clock_jump_neither_refills_nor_drains_the_window() {
        let (store, clock) = window();
        let start = clock.now();
        assert_eq!(parallel(&|k| store.take(k), 100, "n8n"), 60);
        clock.set_wall(start - chrono::Duration::hours(1));
        assert_eq!(parallel(&|k| store.take(k), 100, "n8n"), 0, "set back");
        clock.set_wall(start + chrono::Duration::hours(2));
        assert_eq!(parallel(&|k| store.take(k), 100, "n8n"), 0, "set forward");
        clock.advance(Duration::from_secs(60));
        assert_eq!(
            parallel(&|k| store.take(k), 100, "n8n"),
            60,
            "a real minute"
        );
    }

    #[test]
    fn the_window_is_exact_under_a_thousand_concurrent_calls() {
        let (store, clock) = window();
        assert_eq!(parallel(&|k| store.take(k), 1000, "n8n"), 60);
        // Still none a moment before the first call leaves the window, however many try.
        clock.advance(Duration::from_millis(59_900));
        assert_eq!(parallel(&|k| store.take(k), 1000, "n8n"), 0);
        clock.advance(Duration::from_millis(100));
        assert_eq!(parallel(&|k| store.take(k), 1000, "n8n"), 60);
    }

    #[test]
    fn never_more_than_the_count_in_any_window_as_time_moves() {
        // The old bucket let 119 through in one minute (60 at once, then one a second); the
        // window lets 60. Calls every 100 ms for five minutes, each window of 60 s checked.
        let (store, clock) = window();
        let mut passed = Vec::new();
        for step in 0..3000u64 {
            if store.take("n8n").is_ok() {
                passed.push(step * 100);
            }
            clock.advance(Duration::from_millis(100));
        }
        for (i, start) in passed.iter().enumerate() {
            let within = passed[i..]
                .iter()
                .take_while(|t| **t < start + 60_000)
                .count();
            assert!(within <= 60, "{within} calls in the minute from {start} ms");
        }
        assert_eq!(passed.len(), 300, "60 in each of the five minutes");
        // The refusal says when the oldest call leaves the window.
        let (store, clock) = window();
        for _ in 0..60 {
            store.take("n8n").unwrap();
            clock.advance(Duration::from_millis(500));
        }
        let RetryAfter(wait) = store.take("n8n").unwrap_err();
        assert_eq!(wait, Duration::from_secs(30));
    }

    #[test]
    fn the_bucket_policy_still_refills_one_a_second() {
        let clock = FakeRelativeClock::default();
        let store = GovernorStore::with_clock(rate(), "60/minute", clock.clone());
        assert_eq!(parallel(&|k| store.take(k), 1000, "n8n"), 60);
        let RetryAfter(wait) = store.take("n8n").unwrap_err();
        assert_eq!(wait, Duration::from_secs(1));
        assert!(store.take("claude-desktop").is_ok(), "keys are separate");
        clock.advance(Duration::from_secs(1));
        assert!(store.take("n8n").is_ok());
        assert!(store.take("n8n").is_err());
        assert_eq!(store.policy(), LimitPolicy::Bucket);
    }

    #[test]
    fn keys_with_an_empty_window_are_forgotten() {
        let (store, clock) = window();
        for token in 0..1000 {
            store.take(&format!("token:{token}")).unwrap();
        }
        assert_eq!(store.keys(), 1000);
        clock.advance(Duration::from_secs(30));
        store.take("token:late").unwrap();
        assert_eq!(store.keys(), 1001, "windows not yet empty are kept");
        clock.advance(Duration::from_secs(31));
        store.take("token:0").unwrap();
        assert_eq!(
            store.keys(),
            2,
            "only the keys with calls in the window remain"
        );
        clock.advance(Duration::from_secs(120));
        store.take("token:0").unwrap();
        assert_eq!(store.keys(), 1);
    }

    #[test]
    fn bucket_keys_with_a_full_bucket_are_forgotten() {
        let clock = FakeRelativeClock::default();
        let store = GovernorStore::with_clock(rate(), "60/minute", clock.clone());
        for token in 0..1000 {
            store.take(&format!("token:{token}")).unwrap();
        }
        assert_eq!(store.keys(), 1000);
        clock.advance(Duration::from_secs(61));
        store.take("token:0").unwrap();
        assert!(store.keys() <= 1, "{} keys left", store.keys());
    }
}
