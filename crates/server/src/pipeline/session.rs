//! Sessions as a policy: a session belongs to the principal that opened it, and opening one
//! costs. Both transports ask the same two questions — a Streamable HTTP session named by
//! `Mcp-Session-Id`, a legacy SSE session named by `?sessionId=` — so a stolen session id is
//! refused the same way on either.

use concierge_core::{Caller, Messages, Outcome};
use http::StatusCode;

use super::Refusal;
use super::rate_limit::Limits;
use crate::session_id::{SessionIds, Verdict};
use crate::sessions::{Full, Opening, SessionTable};

/// The ownership step: `owner` is who opened the named session (`None`: unknown to us, which
/// the transport answers itself with 404).
pub fn owned_by_caller(owner: Option<String>, caller: &Caller) -> Result<(), Refusal> {
    match owner {
        Some(owner) if owner != caller.principal() => Err(not_owned(caller)),
        _ => Ok(()),
    }
}

fn not_owned(caller: &Caller) -> Refusal {
    tracing::warn!(client = %caller.client, "session presented by a client that did not open it");
    Refusal::new(
        StatusCode::FORBIDDEN,
        Outcome::SessionRefused,
        "session_not_owned",
        "this session belongs to another client; initialize a session of your own",
    )
}

/// The same question asked of the id itself: one minted for another principal is refused on
/// every instance, also one that never held the session (its opener's instance may be gone).
pub fn minted_for_caller(
    ids: &SessionIds,
    session: &str,
    endpoint: &str,
    caller: &Caller,
) -> Result<(), Refusal> {
    match ids.verdict(session, endpoint, &caller.principal()) {
        Verdict::NotTheirs => Err(not_owned(caller)),
        Verdict::Theirs | Verdict::Foreign => Ok(()),
    }
}

/// The opening budget: a session (a Streamable HTTP `initialize`, a legacy SSE stream) takes one
/// unit of the caller's session budget; refused with 429 and `Retry-After`.
pub async fn budget((limits, says): (&Limits, &Messages), caller: &Caller) -> Result<(), Refusal> {
    limits
        .session_opening(caller, says)
        .await
        .map_err(|refused| {
            // A budget used up is the caller's 429; a budget nobody can read (its store is
            // down) is our 503. Both say when to come back.
            let (status, code) = if refused.unavailable {
                (StatusCode::SERVICE_UNAVAILABLE, "rate_limit_unavailable")
            } else {
                (StatusCode::TOO_MANY_REQUESTS, "rate_limited")
            };
            Refusal::new(status, Outcome::RateLimited, code, &refused.message)
                .retry_after(refused.seconds)
        })
}

/// An `initialize` that opens a Streamable HTTP session: the budget, then a place under the
/// session caps (503 when the endpoint or the client is full).
pub async fn open(
    (limits, says): (&Limits, &Messages),
    table: &std::sync::Arc<SessionTable>,
    caller: &Caller,
) -> Result<Opening, Refusal> {
    budget((limits, says), caller).await?;
    table.open(&caller.principal()).await.map_err(|full| {
        let message = match full {
            Full::Endpoint(cap) => format!(
                "this endpoint holds its maximum of {cap} open sessions; retry in a minute, or send requests without a session"
            ),
            Full::Client(cap) => format!(
                "this client is already opening {cap} sessions; wait for them to open, or close sessions it no longer uses (DELETE)"
            ),
        };
        full_refusal(&message)
    })
}

/// 503 for a session that would go over a cap.
pub fn full_refusal(message: &str) -> Refusal {
    Refusal::new(
        StatusCode::SERVICE_UNAVAILABLE,
        Outcome::SessionRefused,
        "too_many_sessions",
        message,
    )
    .retry_after(60)
}
