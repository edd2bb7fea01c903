//! The in-process rate-limit store: governor's GCRA, one budget per client key.
//!
//! GCRA with a burst equal to the count admits exactly `count` calls in a burst and then one per
//! `period / count`: 64 parallel calls against `60/minute` let exactly 60 run.

use std::num::NonZeroU32;

use concierge_core::{RateLimitStore, RetryAfter};
use governor::clock::{Clock, DefaultClock};
use governor::middleware::NoOpMiddleware;
use governor::state::keyed::DefaultKeyedStateStore;
use governor::{Quota, RateLimiter};

use crate::config::Rate;

pub struct GovernorStore<C: Clock = DefaultClock> {
    limiter: RateLimiter<String, DefaultKeyedStateStore<String>, C, NoOpMiddleware<C::Instant>>,
    clock: C,
    text: String,
}

impl GovernorStore<DefaultClock> {
    pub fn new(rate: Rate, text: &str) -> Self {
        Self::with_clock(rate, text, DefaultClock::default())
    }
}

impl<C: Clock + Clone> GovernorStore<C> {
    /// A store on a given clock; tests pass governor's `FakeRelativeClock` to move time exactly.
    pub fn with_clock(rate: Rate, text: &str, clock: C) -> Self {
        let count = NonZeroU32::new(rate.count).unwrap_or(NonZeroU32::MIN);
        let quota = Quota::with_period(rate.period / count.get())
            .unwrap_or_else(|| Quota::per_second(count))
            .allow_burst(count);
        Self {
            limiter: RateLimiter::dashmap_with_clock(quota, clock.clone()),
            clock,
            text: text.to_string(),
        }
    }
}

impl<C: Clock + Send + Sync> RateLimitStore for GovernorStore<C>
where
    C::Instant: Send + Sync,
{
    fn check(&self, key: &str) -> Result<(), RetryAfter> {
        self.limiter
            .check_key(&key.to_string())
            .map_err(|not_until| RetryAfter(not_until.wait_time_from(self.clock.now())))
    }

    fn describe(&self) -> String {
        self.text.clone()
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;
    use std::time::Duration;

    use governor::clock::FakeRelativeClock;

    use super::*;

    fn store() -> (GovernorStore<FakeRelativeClock>, FakeRelativeClock) {
        let clock = FakeRelativeClock::default();
        let rate = Rate::parse("60/minute").unwrap();
        (
            GovernorStore::with_clock(rate, "60/minute", clock.clone()),
            clock,
        )
    }

    #[test]
    fn exactly_the_budget_passes_under_concurrency() {
        let (store, _) = store();
        let store = Arc::new(store);
        let passed: usize = std::thread::scope(|scope| {
            let handles: Vec<_> = (0..64)
                .map(|_| {
                    let store = store.clone();
                    scope.spawn(move || store.check("n8n").is_ok() as usize)
                })
                .collect();
            handles.into_iter().map(|h| h.join().unwrap()).sum()
        });
        assert_eq!(passed, 60);
    }

    #[test]
    fn clients_have_separate_budgets_and_time_refills() {
        let (store, clock) = store();
        for _ in 0..60 {
            store.check("n8n").unwrap();
        }
        let RetryAfter(wait) = store.check("n8n").unwrap_err();
        assert_eq!(wait, Duration::from_secs(1));
        assert!(store.check("claude-desktop").is_ok());
        clock.advance(Duration::from_secs(1));
        assert!(store.check("n8n").is_ok());
        assert!(store.check("n8n").is_err());
    }
}
