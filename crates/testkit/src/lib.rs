//! What concierge's tests share, written once: the fake app the pipeline tests, the fuzz targets
//! and the deployment tests drive ([`fake`]), a deployment of the real router in this process
//! ([`deployment`]) and its config ([`config`]), a PostgreSQL or MariaDB database ([`postgres`], [`mariadb`]) and a `redis-server` ([`redis`]) of a
//! test's own.
//!
//! A dev-dependency only (and of the fuzz targets' library): nothing shipped depends on it.

pub mod config;
pub mod deployment;
pub mod fake;
pub mod mariadb;
pub mod postgres;
pub mod redis;
mod server_database;

pub use deployment::{
    Instance, call_tool, instance, json_rpc_message, mcp_post, modern_request, send, send_bytes,
};
pub use fake::{Behaviour, FakeTool, fake_app};
