//! The kind `sql`: a business's database behind MCP from config alone.
//!
//! An instance names one database (`url`) and declares its tools: a name, a description, one
//! statement with `:name` parameters, the JSON Schema of the arguments, and what the platform
//! fills in from the caller (`bind`). Values are only ever bound; the only SQL text an argument
//! can choose is a `{fragment}` the config wrote, picked by an enum.

pub mod check;
pub mod render;
pub mod settings;
pub mod statement;
