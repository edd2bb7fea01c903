//! The coffee shop's bot (seed `mcp-coffee.ru.md`, the bot half): an MCP client, a hand-written
//! tool-use loop over an OpenAI-compatible chat-completions API, and a history kept per chat.
//!
//! The server knows nothing of the model; the model knows nothing of Excel; the [`Agent`] translates
//! between them: it offers the MCP tools as functions, runs each `tool_calls` entry through MCP,
//! answers with a `tool` message carrying the same `tool_call_id`, and repeats until the model
//! answers in text — at most `max_rounds` times per user message.
//!
//! Beyond the seed's known limitations: history is trimmed by tokens, not turns ([`history`]), and
//! kept in SQLite, so a restart forgets nothing ([`store`]).

mod agent;
pub mod chat;
pub mod commands;
pub mod history;
pub mod mcp;
pub mod store;
pub mod telegram;

pub use agent::{APOLOGY, Agent, AgentSettings, DEFAULT_SYSTEM_PROMPT};
