//! Time, injected wherever a rule depends on it (rate limits, write safety, idempotency expiry,
//! confirm tokens, the ski sync's schedule), so a test moves the hands instead of sleeping and
//! can assert the exact boundary: "the 61st call in a minute is refused", "a key expires after
//! 24 hours".
//!
//! A clock has two faces. [`Clock::now`] is the wall clock, for anything written down or shown
//! (an expiry stored on disk, a token's `expiresAt`). [`Clock::elapsed`] is monotonic, for
//! anything that only measures spans (a sliding window): it never goes back when the wall clock
//! is set back.

use std::sync::{Arc, LazyLock, Mutex};
use std::time::{Duration, Instant};

use chrono::{DateTime, Utc};

use crate::BoxFuture;

pub trait Clock: Send + Sync {
    /// The wall clock.
    fn now(&self) -> DateTime<Utc>;
    /// Monotonic time since a fixed origin of this clock's choosing.
    fn elapsed(&self) -> Duration;
    /// Waits `duration` on this clock (a manual clock moves instead of waiting).
    fn sleep(&self, duration: Duration) -> BoxFuture<'_, ()>;
}

/// A shared clock, as the platform and the apps hold it.
pub type SharedClock = Arc<dyn Clock>;

/// The real time.
#[derive(Debug, Clone, Copy, Default)]
pub struct SystemClock;

/// One origin for every [`SystemClock`], so spans measured by two holders agree.
static ORIGIN: LazyLock<Instant> = LazyLock::new(Instant::now);

impl SystemClock {
    pub fn shared() -> SharedClock {
        Arc::new(SystemClock)
    }
}

impl Clock for SystemClock {
    fn now(&self) -> DateTime<Utc> {
        Utc::now()
    }

    fn elapsed(&self) -> Duration {
        ORIGIN.elapsed()
    }

    fn sleep(&self, duration: Duration) -> BoxFuture<'_, ()> {
        Box::pin(tokio::time::sleep(duration))
    }
}

/// A clock that moves only when told: by [`ManualClock::advance`] (both faces), by
/// [`ManualClock::set_wall`] (the wall clock alone, as an operator or NTP would), or by sleeping
/// on it. Clones share the time.
#[derive(Debug, Clone)]
pub struct ManualClock {
    state: Arc<Mutex<(DateTime<Utc>, Duration)>>,
}

impl ManualClock {
    pub fn at(start: DateTime<Utc>) -> Self {
        Self {
            state: Arc::new(Mutex::new((start, Duration::ZERO))),
        }
    }

    pub fn advance(&self, by: Duration) {
        let mut state = self.state.lock().unwrap_or_else(|p| p.into_inner());
        state.0 += chrono::Duration::from_std(by).unwrap_or(chrono::Duration::MAX);
        state.1 += by;
    }

    /// Sets the wall clock (forward or back); the monotonic face does not move.
    pub fn set_wall(&self, to: DateTime<Utc>) {
        self.state.lock().unwrap_or_else(|p| p.into_inner()).0 = to;
    }
}

impl Clock for ManualClock {
    fn now(&self) -> DateTime<Utc> {
        self.state.lock().unwrap_or_else(|p| p.into_inner()).0
    }

    fn elapsed(&self) -> Duration {
        self.state.lock().unwrap_or_else(|p| p.into_inner()).1
    }

    fn sleep(&self, duration: Duration) -> BoxFuture<'_, ()> {
        self.advance(duration);
        Box::pin(std::future::ready(()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_wall_clock_set_back_leaves_spans_alone() {
        let start = DateTime::parse_from_rfc3339("2026-12-01T08:00:00Z")
            .unwrap()
            .with_timezone(&Utc);
        let clock = ManualClock::at(start);
        clock.advance(Duration::from_secs(90));
        assert_eq!(clock.now(), start + chrono::Duration::seconds(90));
        clock.set_wall(start - chrono::Duration::hours(1));
        assert_eq!(clock.elapsed(), Duration::from_secs(90));
        assert_eq!(clock.now(), start - chrono::Duration::hours(1));
    }
}
