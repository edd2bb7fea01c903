//! The request pipeline: every request to an endpoint passes the same steps in the same order,
//! each a small module with one decision function, and every step writes what it learned into
//! the request's one [`RequestRecord`].
//!
//! ```text
//! socket ─ connections.rs (caps, timers) ─ axum router (serve.rs)
//!   └─ the guard (transport/guard.rs), for Streamable HTTP and legacy SSE alike:
//!        1. origin::decide           Host and Origin                     403
//!        2. authentication::decide   bearer token → Caller               401 / 500
//!        3. session::owned_by_caller the named session is the caller's   403
//!        4. body::read               whole, within size and time          413 / 408
//!        5. framing::decide          one JSON-RPC message                 400
//!        6. session::open            an `initialize`: budget and caps     429 / 503
//!        7. scope::step_up           OAuth scopes of the tool             403 + challenge
//!   └─ the transport: rmcp's Streamable HTTP service, or legacy_sse.rs; a stateless
//!      endpoint's plain `tools/call` goes straight to the dispatcher (direct_call.rs)
//!   └─ handler.rs, the rmcp edge: JSON-RPC ⇄ our types
//!   └─ endpoint.rs, the dispatcher, for every transport (stdio too):
//!        8. the tool                 known on this endpoint?
//!        9. scope::missing           (where no step-up challenge was made)
//!       10. rate_limit               per client, then the endpoint's limit
//!       11. arguments::decide        against the input schema (validate.rs)
//!       12. writes/                  write safety, the write budget
//!       13. the tool, within the call deadline; the result shaped and checked
//!   └─ record.rs: written to the audit once, when the last step lets go of it
//! ```
//!
//! A refusal at any step is a [`Refusal`] (HTTP) or an error document (dispatcher): answered, and
//! recorded as the request's outcome. A refusal the transport makes by itself (an unknown
//! session, a wrong `Accept`) is read from its status and recorded too.

pub mod arguments;
pub mod authentication;
pub mod body;
pub mod framing;
pub mod origin;
pub mod rate_limit;
pub mod record;
pub mod refusal;
pub mod scope;
pub mod session;

pub use authentication::{Authenticator, OAuthResource};
pub use record::{RequestRecord, Transport};
pub use refusal::Refusal;
