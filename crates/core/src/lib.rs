//! The tool model every concierge app builds on.
//!
//! An app hands the platform a list of [`Tool`]s. Each tool has a [`ToolSpec`] (name, descriptions
//! for the model, JSON Schemas, truthful [`Annotations`]) and an async function from validated
//! arguments to a JSON result. Everything around a call — authentication, rate limits, argument
//! validation, result shaping, audit — is the platform's job, done the same way for every tool.
//!
//! Apps normally build tools with [`typed_tool`]: the input and output types derive
//! `Deserialize`/`Serialize` + `JsonSchema`, and the schemas the model sees are generated from them.
//!
//! ```
//! use concierge_core::{Annotations, CallContext, ToolError, typed_tool};
//! use schemars::JsonSchema;
//! use serde::{Deserialize, Serialize};
//!
//! #[derive(Deserialize, JsonSchema)]
//! #[serde(deny_unknown_fields)]
//! struct Echo { /// What to say back.
//!     text: String }
//!
//! #[derive(Serialize, JsonSchema)]
//! struct Said { text: String }
//!
//! let tool = typed_tool("echo", "Repeats the text.", Annotations::read_only(),
//!     |input: Echo, _call: CallContext| async move { Ok::<_, ToolError>(Said { text: input.text }) });
//! assert_eq!(tool.spec().name, "echo");
//! ```

mod app;
mod audit;
mod caller;
pub mod clock;
mod credentials;
mod error;
pub mod idempotency;
pub mod json;
mod kind;
mod limits;
pub mod messages;
pub mod observe;
mod policy;
#[cfg(feature = "postgres")]
pub mod postgres;
mod schema;
pub mod sizes;
#[cfg(feature = "sqlite")]
pub mod sqlite;
#[cfg(all(feature = "sqlite", feature = "postgres"))]
pub mod store;
mod tool;
pub mod written;

pub use app::{
    Action, Health, HealthCheck, LiveCheck, LiveReport, Readings, ToolList, ToolSet, ToolUpdates,
};
pub use audit::{
    AUDIT_OUTPUT_CAP, AuditEvent, Outcome, audit_document, audit_output, audit_output_of, redact,
    redact_in_place,
};
pub use caller::{CallContext, Caller, IdentityAssertion, Progress, preview_digest};
pub use clock::{Clock, ManualClock, SharedClock, SystemClock};
pub use credentials::ClientCredentials;
pub use error::{ErrorKind, OUTCOME_UNKNOWN, ToolError};
pub use idempotency::{Claim, IdempotencyStore, StoreUnavailable};
pub use kind::{BackgroundJob, Kind};
pub use limits::{LimitPolicy, Limited, RateLimitStore, RetryAfter};
pub use messages::Messages;
pub use policy::ToolPolicy;
pub use schema::{mirrors_headers, or_platform_answers, schema_for, strip_custom_formats};
pub use tool::{
    Annotations, BoxFuture, DryRun, FollowUp, MCP_RESULT, Tool, ToolFuture, ToolOutput, ToolSpec,
    WriteSafety, mcp_result, plain_tool_result, typed_tool, with_dry_run, with_spec,
};
