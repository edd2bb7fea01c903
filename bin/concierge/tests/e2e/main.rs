//! The end-to-end tests: the real `concierge` binary on 127.0.0.1, driven by real MCP clients,
//! with the systems we do not own as small HTTP servers of the tests (or the `sim/*` crates).
//!
//! One test binary with a module per area, so the workspace links everything once instead of
//! once per file. Run one area with `cargo test -p concierge --test e2e mappy::`.

mod common;

mod agent;
mod audit_postgres;
mod auth;
mod check;
mod cli;
mod cluster;
mod cluster_state;
mod coffee;
mod config_schema;
mod contract;
mod durability;
mod federation;
mod federation_faults;
mod hotel;
mod kgqa;
mod mappy;
mod oauth;
mod oauth_external;
mod openapi;
mod operate;
mod protocol;
mod reload;
mod ski;
mod ski_trips;
mod transport;
