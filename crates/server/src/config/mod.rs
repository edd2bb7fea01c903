//! The deployment file: one TOML document, `${VAR}` / `${VAR:-default}` from the environment.
//!
//! Loading turns text into a [`Config`] or a list of [`ConfigError`]s, each saying where (the key
//! path) and what is wrong. Nothing here starts anything; `serve` and `check` share it.
//!
//! The crate's leaf: it imports nothing else of the crate.
//!
//! - `sections.rs`, `endpoint.rs`, `state.rs`, `limits.rs`: the types the document reads into
//! - `load.rs`: text → [`Config`], and the checks across sections
//! - `interpolate.rs`: `${VAR}`, `${server.url}`
//! - `apps.rs`: an `[apps.<name>]` instance, its kind and its settings
//! - `unknown_keys.rs`: every misspelt key at once, with what was meant
//! - `schema.rs`: the document's JSON Schema, from these types and each kind's settings type

mod apps;
mod endpoint;
mod error;
pub mod interpolate;
mod known_keys;
mod limits;
mod load;
pub mod schema;
mod sections;
mod state;
#[cfg(test)]
mod tests;
mod unknown_keys;

pub use apps::{KIND as APP_KIND, is_instance_name};
pub use endpoint::{
    AuthSection, EndpointSection, LegacySse, ScopeRefusal, SessionCaps, SessionMode,
};
pub use error::ConfigError;
pub use interpolate::BoundUrls;
pub use limits::{LimiterSection, Rate, RateKey};
pub(crate) use load::parse_listen;
pub use load::{Listeners, split_alias};
pub use sections::{AuditSection, Config, LogFormat, MetricsSection, OpsSection, ServerSection};
pub use state::{StateSection, WhenDown, WritesHome, WritesSection};
pub use unknown_keys::section;
