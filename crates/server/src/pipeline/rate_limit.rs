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

use concierge_core::messages::render;
use concierge_core::{Caller, LimitPolicy, Messages, RateLimitStore, RetryAfter, ToolError};
use serde_json::json;

use crate::config::RateKey;

/// An endpoint's limiters and what they count per.
#[derive(Default)]
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
}

impl Limits {
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
    pub fn before_call(
        &self,
        read_only: bool,
        caller: &Caller,
        says: &Messages,
    ) -> Result<(), ToolError> {
        if let Some(limiter) = &self.per_client {
            limiter
                .check(&caller.client)
                .map_err(|retry| rate_limited(says, limiter.as_ref(), retry))?;
        }
        if (read_only || self.write.is_none())
            && let Some(limiter) = &self.call
        {
            limiter
                .check(&self.key(caller))
                .map_err(|retry| rate_limited(says, limiter.as_ref(), retry))?;
        }
        Ok(())
    }

    /// The write budget of a call, taken only when it is about to reach the tool's write.
    /// `None`: no write limit applies.
    pub fn write_gate<'a>(
        &'a self,
        read_only: bool,
        caller: &Caller,
        says: &'a Messages,
    ) -> Option<impl Fn() -> Result<(), ToolError> + Send + Sync + use<'a>> {
        let limiter = self.write.as_ref().filter(|_| !read_only)?;
        let key = self.key(caller);
        Some(move || {
            limiter
                .check(&key)
                .map_err(|retry| rate_limited(says, limiter.as_ref(), retry))
        })
    }

    /// An `initialize` that opens a session (or a legacy SSE stream) takes one unit of the
    /// caller's session budget: twice `max_sessions_per_client` openings a minute. Opening
    /// sessions is work and memory, so it cannot be free; and a budget of its own leaves the
    /// tool-call budget to calls. Refused: the message and the seconds to wait.
    pub fn session_opening(&self, caller: &Caller, says: &Messages) -> Result<(), (String, u64)> {
        let Some(limiter) = &self.sessions else {
            return Ok(());
        };
        limiter.check(&caller.principal()).map_err(|retry| {
            let seconds = whole_seconds(retry);
            (
                message(says, &limiter.describe(), limiter.policy(), seconds),
                seconds,
            )
        })
    }
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
