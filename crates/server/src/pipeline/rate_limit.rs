//! Rate limits: which limiters a call passes, under which key, and the refusal that names the
//! limit and how it counts.
//!
//! Before validation a call passes the per-client limit, then the endpoint's `rate_limit` — for
//! reads, or for every call when there is no write limit. The write limit is not among them: it
//! counts only calls about to write, so it is taken where the write starts ([`Limits::write_gate`],
//! called by write safety once the key is claimed, or just before a write tool without write
//! safety runs). A dry run, a preview, a replay and a refused call never write, and must not use
//! up the budget that protects the backend (Mappy's seed §8: 10 writes a minute because of the
//! GBP API's limits).

use std::sync::Arc;
use std::time::Duration;

use concierge_core::messages::render;
use concierge_core::{
    BoxFuture, Caller, LimitPolicy, Limited, Messages, Outcome, RateLimitStore, RetryAfter,
    ToolError,
};
use serde_json::json;

use super::Refusal;
use crate::config::{RateKey, WhenDown};

/// What a caller is told to wait when the store behind a limit is down: long enough not to
/// hammer it, short enough that a recovered store is used again within seconds.
pub const UNAVAILABLE_RETRY: Duration = Duration::from_secs(5);

/// An endpoint's limiters and what they count per.
#[derive(Default, Clone)]
pub struct Limits {
    /// `rate_limit`: every call, or the reads when there is a write limit.
    pub call: Option<Arc<dyn RateLimitStore>>,
    /// `write_rate_limit`: calls about to write.
    pub write: Option<Arc<dyn RateLimitStore>>,
    /// `client_rate_limit`: every call of one client, whatever its key.
    pub per_client: Option<Arc<dyn RateLimitStore>>,
    /// Sessions opened per principal (see [`Limits::session_opening`]).
    pub sessions: Option<Arc<dyn RateLimitStore>>,
    pub key: RateKey,
    /// When a shared store cannot say: refuse the call (the default) or let it pass.
    pub when_down: WhenDown,
}

impl Limits {
    /// Some budget of a call lives in Redis.
    pub fn remote(&self) -> bool {
        [&self.call, &self.write, &self.per_client]
            .into_iter()
            .flatten()
            .any(|store| store.remote())
    }

    /// The key `rate_limit` and `write_rate_limit` count `caller` under (`rate_limit_key`).
    fn key(&self, caller: &Caller) -> String {
        match self.key {
            RateKey::Client => caller.client.clone(),
            RateKey::Token => caller
                .token
                .as_ref()
                .map_or_else(|| caller.client.clone(), |t| format!("token:{t}")),
            RateKey::User => caller
                .user
                .as_ref()
                .map_or_else(|| caller.client.clone(), |u| format!("user:{u}")),
        }
    }

    /// The step before validation: per client first, then `rate_limit`.
    pub async fn before_call(
        &self,
        read_only: bool,
        caller: &Caller,
        says: &Messages,
    ) -> Result<(), ToolError> {
        if let Some(limiter) = &self.per_client {
            take(limiter, &caller.client, says, self.when_down).await?;
        }
        if (read_only || self.write.is_none())
            && let Some(limiter) = &self.call
        {
            take(limiter, &self.key(caller), says, self.when_down).await?;
        }
        Ok(())
    }

    /// The write budget of a call, taken only when it is about to reach the tool's write.
    /// `None`: no write limit applies.
    pub fn write_gate(
        &self,
        read_only: bool,
        caller: &Caller,
        says: &'static Messages,
    ) -> Option<impl Fn() -> BoxFuture<'static, Result<(), ToolError>> + Send + Sync + use<>> {
        let limiter = self.write.clone().filter(|_| !read_only)?;
        let key = self.key(caller);
        let when_down = self.when_down;
        Some(move || {
            let (limiter, key) = (limiter.clone(), key.clone());
            Box::pin(async move { take(&limiter, &key, says, when_down).await })
                as BoxFuture<'static, Result<(), ToolError>>
        })
    }

    /// An `initialize` that opens a session (or a legacy SSE stream) takes one unit of the
    /// caller's session budget: twice `max_sessions_per_client` openings a minute. Opening
    /// sessions is work and memory, so it cannot be free; and a budget of its own leaves the
    /// tool-call budget to calls. Refused: the message and the seconds to wait.
    pub async fn session_opening(
        &self,
        caller: &Caller,
        says: &Messages,
    ) -> Result<(), SessionRefused> {
        let Some(limiter) = &self.sessions else {
            return Ok(());
        };
        match limiter.check(&caller.principal()).await {
            Ok(()) => Ok(()),
            Err(Limited::Retry(retry)) => {
                let seconds = whole_seconds(retry);
                Err(SessionRefused {
                    message: message(says, &limiter.describe(), limiter.policy(), seconds),
                    seconds,
                    unavailable: false,
                })
            }
            Err(Limited::Unavailable(why)) => down(&why, says, self.when_down).map_err(|_| {
                let seconds = UNAVAILABLE_RETRY.as_secs();
                SessionRefused {
                    message: render(says.state_unavailable, &[("seconds", &seconds)]),
                    seconds,
                    unavailable: true,
                }
            }),
        }
    }
}

/// Why an `initialize` may not open a session now.
#[derive(Debug)]
pub struct SessionRefused {
    pub message: String,
    /// When to try again (`Retry-After`).
    pub seconds: u64,
    /// The budget's store is down, rather than the budget used up.
    pub unavailable: bool,
}

/// One unit of `limiter` for `key`, as the call's error when refused.
async fn take(
    limiter: &Arc<dyn RateLimitStore>,
    key: &str,
    says: &Messages,
    when_down: WhenDown,
) -> Result<(), ToolError> {
    match limiter.check(key).await {
        Ok(()) => Ok(()),
        Err(Limited::Retry(retry)) => Err(rate_limited(says, limiter.as_ref(), retry)),
        Err(Limited::Unavailable(why)) => down(&why, says, when_down),
    }
}

/// A limit whose store is down: refused as retryable, or let through, as the deployment chose.
/// Never silently counted per instance instead: N instances would let N times the budget
/// through.
fn down(why: &str, says: &Messages, when_down: WhenDown) -> Result<(), ToolError> {
    match when_down {
        WhenDown::Allow => {
            tracing::warn!(%why, "rate limit store unavailable; call let through (limits_when_down = \"allow\")");
            Ok(())
        }
        WhenDown::Refuse => {
            tracing::warn!(%why, "rate limit store unavailable; call refused");
            Err(state_unavailable("rate_limit_unavailable", says))
        }
    }
}

/// A refusal because a shared store is down: retryable, and nothing was done.
pub fn state_unavailable(code: &'static str, says: &Messages) -> ToolError {
    let seconds = UNAVAILABLE_RETRY.as_secs();
    let message = render(says.state_unavailable, &[("seconds", &seconds)]);
    ToolError::rejected(code, message.clone()).with_envelope(json!({"error": {
        "code": code,
        "message": message,
        "retryAfterSeconds": seconds,
    }}))
}

/// The wait a refusal names: whole seconds, at least one (`Retry-After` takes no fractions).
pub fn whole_seconds(retry: RetryAfter) -> u64 {
    retry.0.as_secs_f64().ceil().max(1.0) as u64
}

/// A refusal by `limiter`, as the platform's error document in the error's envelope.
fn rate_limited(says: &Messages, limiter: &dyn RateLimitStore, retry: RetryAfter) -> ToolError {
    let seconds = whole_seconds(retry);
    let message = message(says, &limiter.describe(), limiter.policy(), seconds);
    ToolError::rejected("rate_limited", message.clone()).with_envelope(json!({"error": {
        "code": "rate_limited",
        "message": message,
        "retryAfterSeconds": seconds,
    }}))
}

/// The refusal names the limit and how it counts, so a caller knows whether waiting `seconds`
/// buys one call (a bucket) or the oldest call leaving the window (a sliding window).
fn message(says: &Messages, limit: &str, policy: LimitPolicy, seconds: u64) -> String {
    let how = match policy {
        LimitPolicy::SlidingWindow => says.sliding_window,
        LimitPolicy::Bucket => says.token_bucket,
    };
    render(
        says.rate_limited,
        &[("limit", &limit), ("policy", &how), ("seconds", &seconds)],
    )
}

/// A limit's refusal (the step before validation, or the write budget when the write was about
/// to start), answered with the document the limiter wrote.
/// The write budget's refusal, as the write was about to start: `rate_limited` whatever kept
/// the unit from being taken.
pub fn write_refusal(limited: ToolError) -> Refusal {
    refusal(ToolError {
        code: "rate_limited",
        ..limited
    })
}

pub fn refusal(limited: ToolError) -> Refusal {
    let document = limited
        .envelope
        .map(|envelope| *envelope)
        .unwrap_or_default();
    Refusal::of_call(Outcome::RateLimited, limited.code, limited.message).document(document)
}
