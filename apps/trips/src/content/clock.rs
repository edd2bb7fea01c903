//! Time for the sync's load rules, injected: the real one sleeps, a [`ManualClock`] moves its
//! hands instead, so a test of "wait 5 s after a slow answer" runs in microseconds and can assert
//! the exact spacing.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use chrono::{DateTime, Utc};

pub type BoxFuture<'a> = std::pin::Pin<Box<dyn std::future::Future<Output = ()> + Send + 'a>>;

pub trait Clock: Send + Sync {
    fn now(&self) -> DateTime<Utc>;
    fn sleep(&self, duration: Duration) -> BoxFuture<'_>;
}

pub struct SystemClock;

impl Clock for SystemClock {
    fn now(&self) -> DateTime<Utc> {
        Utc::now()
    }

    fn sleep(&self, duration: Duration) -> BoxFuture<'_> {
        Box::pin(tokio::time::sleep(duration))
    }
}

/// A clock that only moves when told to: by [`ManualClock::advance`] (a test server "taking"
/// 3 s to answer) or by the sync sleeping. Clones share the time.
#[derive(Clone)]
pub struct ManualClock {
    now: Arc<Mutex<DateTime<Utc>>>,
}

impl ManualClock {
    pub fn at(start: DateTime<Utc>) -> Self {
        Self {
            now: Arc::new(Mutex::new(start)),
        }
    }

    pub fn advance(&self, by: Duration) {
        let mut now = self.now.lock().unwrap_or_else(|p| p.into_inner());
        *now += chrono::Duration::from_std(by).unwrap_or(chrono::Duration::MAX);
    }
}

impl Clock for ManualClock {
    fn now(&self) -> DateTime<Utc> {
        *self.now.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn sleep(&self, duration: Duration) -> BoxFuture<'_> {
        self.advance(duration);
        Box::pin(std::future::ready(()))
    }
}
