//! Time for the sync's load rules and schedule: the platform's injected clock. The real one
//! sleeps; a [`ManualClock`] moves its hands instead, so a test of "wait 5 s after a slow answer"
//! runs in microseconds and can assert the exact spacing.

pub use concierge_core::clock::{Clock, ManualClock, SystemClock};
