//! How MCP messages reach the dispatcher and its answers leave: the layer above the pipeline's
//! decisions and below the HTTP surface (`serve.rs`).
//!
//! - `guard.rs`: steps 1–7 in front of every HTTP endpoint, then one of the transports
//! - `direct_call.rs`: a stateless endpoint's plain `tools/call`, without rmcp's per-request service
//! - `handler.rs`: the rmcp edge, JSON-RPC ⇄ the dispatcher's types
//! - `session_streams.rs`: rmcp's session manager, our own (a session is a queue and its streams)
//! - `legacy_sse.rs`: the HTTP+SSE transport of 2024-11-05, for Mappy's seed
//! - `tasks.rs`: MCP Tasks for writes that start a background job

pub mod direct_call;
pub mod guard;
pub mod handler;
pub mod legacy_sse;
pub mod session_streams;
pub mod tasks;
