use std::time::Duration;

/// How long a refused caller should wait before the next call can pass.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RetryAfter(pub Duration);

/// A rate-limit store keyed per client. In-process (governor) by default; a shared store
/// (Redis) implements the same trait so several instances enforce one budget.
pub trait RateLimitStore: Send + Sync {
    /// Takes one unit from `key`'s budget, or says when to retry. Must be exact under
    /// concurrency: N parallel calls against a budget of M < N let exactly M through.
    fn check(&self, key: &str) -> Result<(), RetryAfter>;

    /// The limit as configured, for messages (`60/minute`).
    fn describe(&self) -> String;
}
