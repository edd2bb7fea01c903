//! concierge's HTTP side: the deployment config, endpoints on axum + rmcp, bearer tokens and
//! session binding, rate limits, argument validation, result shaping and the audit log.
//!
//! The crate knows no app. A binary registers apps by name ([`Apps`]), loads a [`Config`], builds
//! a [`Platform`] and serves it ([`serve_http`], [`serve_stdio`]); a served [`Deployment`] is
//! reloaded in place when its config changes (`reload`).

pub mod audit;
mod audit_sql;
pub mod config;
mod connections;
mod endpoint;
mod health;
pub mod identity;
mod idle_clock;
mod launch;
pub mod limits;
mod memory;
mod ops;
pub mod pipeline;
mod platform;
pub mod redaction;
pub mod reload;
mod running;
mod scrape;
mod serve;
pub mod session_id;
mod sessions;
pub mod telemetry;
pub mod tokens;
mod transport;
pub mod validate;
pub mod writes;

pub use config::BoundUrls;
pub use config::{Config, ConfigError, section};
pub use endpoint::{CallAnswer, Endpoint, MountedTool, ToolAnswer};
pub use launch::{Loaded, Source, Start, load};
pub use platform::{Apps, Platform};
pub use reload::Deployment;
pub use running::serve_http;
pub use serve::{router, serve_stdio};
