//! `/ops`: the console for the people who run a deployment (not the customers chatting). Server-
//! rendered HTML behind the ops token (`[ops] token`); every action is a POST with the sign-in's
//! CSRF token, from this origin.
//!
//! - Overview: the apps with their upstream's health, what they report (the ski sync's manifest
//!   age, pause, last run's pages, unmatched codes) and their actions ("sync now"); the clients'
//!   calls, refusals and p95 latency over the last hour and day (from the audit trail), with a
//!   chart per client; every endpoint with its tools and what its `tools/list` costs a model in
//!   tokens.
//! - Audit: every sink's events, filtered by client, user, tool, outcome, time and trace id.
//! - OAuth clients: the built-in authorization server's clients, with revoke.

mod access;
mod actions;
mod console;
mod pages;
pub mod session;
pub mod trail;
mod views;

use axum::Router;
use axum::response::Redirect;
use axum::routing::{get, post};

use crate::platform::Platform;
use console::Console;
pub use console::Extras;

/// The console's routes, when `[ops] token` is set.
pub fn router(platform: &Platform, extras: Extras) -> Option<Router> {
    let token = platform.config.ops.token.clone()?;
    let console = Console::new(platform, token, extras);
    Some(
        Router::new()
            .route("/ops", get(views::overview))
            .route("/ops/", get(|| async { Redirect::to("/ops") }))
            .route("/ops/login", post(access::login))
            .route("/ops/logout", post(access::logout))
            .route("/ops/audit", get(views::audit))
            .route("/ops/oauth", get(views::oauth))
            .route("/ops/oauth/revoke", post(actions::revoke))
            .route("/ops/oauth/revoke-family", post(actions::revoke_family))
            .route("/ops/action", post(actions::action))
            .with_state(console),
    )
}
