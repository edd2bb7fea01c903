//! The clock that idle timeouts read: a connection's header and keep-alive deadlines, a
//! session's idle time.
//!
//! In the crate's unit tests it runs ahead of the real one by as much as the test moves it
//! ([`advance`]), so a timeout of minutes is tested in no time at all. tokio's paused clock would
//! do the same, but needs tokio's `test-util` feature, which `cargo test --workspace` then turns
//! on for every crate's build — and the README's `cargo run` after the tests would rebuild tokio
//! and everything that stands on it.

use tokio::time::Instant;

/// Now, on the idle clock.
#[cfg(not(test))]
pub(crate) fn now() -> Instant {
    Instant::now()
}

#[cfg(test)]
thread_local! {
    /// How far this test thread has moved the clock ahead of the real one.
    static AHEAD: std::cell::Cell<std::time::Duration> =
        const { std::cell::Cell::new(std::time::Duration::ZERO) };
}

#[cfg(test)]
pub(crate) fn now() -> Instant {
    Instant::now() + AHEAD.get()
}

/// Moves this thread's clock ahead by `by`. A `#[tokio::test]` runs the tasks it spawns on its
/// own thread, so they read the moved clock too.
#[cfg(test)]
pub(crate) fn advance(by: std::time::Duration) {
    AHEAD.set(AHEAD.get() + by);
}
