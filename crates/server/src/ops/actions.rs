//! What an operator may do from the console: revoke an OAuth client or a token family, run an
//! app's action ("sync now"). Each is a [`Posted`] form.

use std::sync::Arc;

use axum::extract::State;
use axum::response::Response;
use serde::Deserialize;

use super::access::Posted;
use super::console::{ACTION_WAIT, Console};

#[derive(Deserialize)]
pub(super) struct Revoke {
    #[serde(default)]
    client_id: String,
}

pub(super) async fn revoke(
    State(console): State<Arc<Console>>,
    Posted { operator, form }: Posted<Revoke>,
) -> Response {
    let Some(server) = &console.oauth else {
        return console.oauth_page(&operator, None).await;
    };
    let message = match server.store.delete_client(&form.client_id).await {
        Ok(true) => {
            tracing::warn!(client = %form.client_id, "ops: OAuth client revoked");
            (
                format!(
                    "Client {} removed; its refresh tokens are revoked.",
                    form.client_id
                ),
                false,
            )
        }
        Ok(false) => (format!("No client {}.", form.client_id), true),
        Err(error) => {
            tracing::error!(%error, "ops: revoking an OAuth client failed");
            (
                "The OAuth store does not answer; nothing was changed.".into(),
                true,
            )
        }
    };
    console
        .oauth_page(&operator, Some((&message.0, message.1)))
        .await
}

#[derive(Deserialize)]
pub(super) struct RevokeFamily {
    #[serde(default)]
    family: String,
}

pub(super) async fn revoke_family(
    State(console): State<Arc<Console>>,
    Posted { operator, form }: Posted<RevokeFamily>,
) -> Response {
    let Some(server) = &console.oauth else {
        return console.oauth_page(&operator, None).await;
    };
    // Revoking an unknown family changes nothing; the server logs a store failure.
    server.revoke_family(&form.family).await;
    tracing::warn!("ops: a token family revoked");
    console
        .oauth_page(
            &operator,
            Some((
                "Token family revoked: its refresh token and access tokens no longer work.",
                false,
            )),
        )
        .await
}

#[derive(Deserialize)]
pub(super) struct RunAction {
    #[serde(default)]
    app: String,
    #[serde(default)]
    action: String,
}

pub(super) async fn action(
    State(console): State<Arc<Console>>,
    Posted { operator, form }: Posted<RunAction>,
) -> Response {
    let Some((_, action)) = console
        .actions
        .iter()
        .find(|(app, a)| *app == form.app && a.name == form.action)
    else {
        return console
            .overview(&operator, Some(("No such action.", true)))
            .await;
    };
    tracing::info!(app = %form.app, action = action.name, "ops: action started");
    let running = tokio::spawn((action.run)());
    let message = match tokio::time::timeout(ACTION_WAIT, running).await {
        Ok(Ok(Ok(report))) => (format!("{}: {report}", action.label), false),
        Ok(Ok(Err(why))) => (format!("{}: {why}", action.label), true),
        Ok(Err(_)) => (
            format!("{}: failed; the log has the details", action.label),
            true,
        ),
        Err(_) => (
            format!(
                "{}: still running after {} s; it goes on in the background",
                action.label,
                ACTION_WAIT.as_secs()
            ),
            false,
        ),
    };
    console
        .overview(&operator, Some((&message.0, message.1)))
        .await
}
