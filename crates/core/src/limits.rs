use std::time::Duration;

/// How long a refused caller should wait before the next call can pass.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RetryAfter(pub Duration);

/// What a limit of `count` per `period` means.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum LimitPolicy {
    /// Never more than `count` calls in any `period` (a rolling window): what people read
    /// "60 per minute" as. The default.
    #[default]
    SlidingWindow,
    /// A refilling bucket: a burst of `count`, then one every `period / count`. Lets close to
    /// twice `count` through in a rolling period; kept for deployments that want smooth refill.
    Bucket,
}

impl LimitPolicy {
    /// The name in config (`policy = "…"`).
    pub fn as_str(self) -> &'static str {
        match self {
            LimitPolicy::SlidingWindow => "sliding_window",
            LimitPolicy::Bucket => "bucket",
        }
    }
}

/// Why a limiter did not let a call through.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Limited {
    /// The budget is used up; the next unit is free after this wait.
    Retry(RetryAfter),
    /// The shared store that keeps the budget cannot be reached: the limiter cannot say, and a
    /// deployment decides whether that refuses the call or lets it pass (`limits_when_down`).
    /// The text says what failed, never where (no URL, no password).
    Unavailable(String),
}

impl From<RetryAfter> for Limited {
    fn from(retry: RetryAfter) -> Self {
        Limited::Retry(retry)
    }
}

/// A rate-limit store keyed per client. In-process by default; a shared store (Redis) implements
/// the same trait so several instances enforce one budget. Async because a shared store answers
/// over the network; the in-process ones never wait.
#[async_trait::async_trait]
pub trait RateLimitStore: Send + Sync {
    /// Takes one unit from `key`'s budget, or says when to retry. Must be exact under
    /// concurrency: N parallel calls against a budget of M < N let exactly M through, also
    /// when the calls arrive at different instances sharing the store.
    async fn check(&self, key: &str) -> Result<(), Limited>;

    /// The limit as configured, for messages (`60/minute`).
    fn describe(&self) -> String;

    /// How the limit counts, for messages and `concierge check`.
    fn policy(&self) -> LimitPolicy;

    /// The budget lives in another process (Redis): a check is a round trip, worth a span of
    /// its own in a trace.
    fn remote(&self) -> bool {
        false
    }
}
