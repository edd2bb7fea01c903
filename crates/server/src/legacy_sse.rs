//! The legacy HTTP+SSE transport (MCP 2024-11-05), for clients that still speak it.
//!
//! `GET <sse>` opens a session: the answer is an event stream whose first event (`endpoint`)
//! names the URL to post to, `<messages>?sessionId=…`; every server message follows as a
//! `message` event. `POST <messages>?sessionId=…` carries one client message and is answered
//! `202 Accepted`; its reply comes on the stream. One connection is one session: when the
//! stream closes the session ends, and a session idle longer than the endpoint's
//! `idle_timeout` is closed.
//!
//! rmcp dropped this transport, so it is ours, and small: the session is an rmcp service over a
//! pair of channels, served by the same [`EndpointHandler`] (tools, scopes, limits, audit) as
//! the Streamable HTTP endpoint. The guard in front applies the browser rules and authenticates
//! both requests; a post is
//! accepted only from the principal that opened the session, and each message runs with the
//! caller of the request that carried it (its token's scopes and limits, not the opener's).

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use axum::Router;
use axum::extract::{Query, Request, State};
use axum::response::sse::{Event, KeepAlive, Sse};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use concierge_core::{Caller, Outcome};
use futures::StreamExt;
use http::StatusCode;
use rmcp::model::{ClientJsonRpcMessage, GetExtensions, ServerJsonRpcMessage};
use rmcp::service::{RoleServer, ServiceExt};
use rmcp::transport::Transport;
use serde::Deserialize;
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use crate::endpoint::Endpoint;
use crate::handler::EndpointHandler;
use crate::http::json_error;

struct Session {
    owner: String,
    inbox: mpsc::Sender<ClientJsonRpcMessage>,
    last_seen: Arc<Mutex<Instant>>,
}

pub struct LegacySse {
    endpoint: Arc<Endpoint>,
    messages: String,
    idle: Duration,
    max_body: usize,
    sessions: Mutex<HashMap<String, Session>>,
    stop: CancellationToken,
    caps: crate::sessions::SessionCaps,
}

/// The two routes of `paths`, sharing the endpoint's dispatcher (sessions idle out after
/// `idle`); `guard` must be layered on them.
pub fn routes(
    endpoint: Arc<Endpoint>,
    paths: &crate::config::LegacySse,
    server: &crate::config::ServerSection,
    idle: Duration,
    caps: crate::sessions::SessionCaps,
    stop: CancellationToken,
) -> Router {
    let state = Arc::new(LegacySse {
        endpoint,
        messages: paths.messages.clone(),
        idle,
        max_body: server.max_body_bytes,
        sessions: Mutex::new(HashMap::new()),
        stop,
        caps,
    });
    Router::new()
        .route(&paths.sse, get(open))
        .route(&paths.messages, post(deliver))
        .with_state(state)
}

async fn open(State(state): State<Arc<LegacySse>>, request: Request) -> Response {
    let Some(caller) = request.extensions().get::<Caller>().cloned() else {
        return StatusCode::INTERNAL_SERVER_ERROR.into_response();
    };
    // A stream is a session: counted against the caller's budget like an `initialize`, and
    // capped like Streamable HTTP sessions. A held-open stream is in use, so over the cap the
    // new one is refused rather than an old one cut.
    if let Some(refusal) =
        crate::http::session_opening_refused(&state.endpoint, &caller, Instant::now())
    {
        return refusal;
    }
    let id = uuid::Uuid::new_v4().simple().to_string();
    let (inbox, from_client) = mpsc::channel(32);
    let (to_client, outbox) = mpsc::channel::<ServerJsonRpcMessage>(32);
    let last_seen = Arc::new(Mutex::new(Instant::now()));
    {
        let mut sessions = state.sessions.lock().unwrap_or_else(|p| p.into_inner());
        let owner = caller.principal();
        let mine = sessions.values().filter(|s| s.owner == owner).count();
        let full = if mine >= state.caps.per_client {
            Some(format!(
                "this client already holds {} open event streams; close one first",
                state.caps.per_client
            ))
        } else if sessions.len() >= state.caps.total {
            Some(format!(
                "this endpoint holds its maximum of {} open event streams; retry in a minute",
                state.caps.total
            ))
        } else {
            None
        };
        if let Some(message) = full {
            drop(sessions);
            state.endpoint.audit_refusal(
                Some(&caller.client),
                Outcome::SessionRefused,
                Some("too_many_sessions"),
                Instant::now(),
            );
            return json_error(StatusCode::SERVICE_UNAVAILABLE, &message);
        }
        sessions.insert(
            id.clone(),
            Session {
                owner,
                inbox,
                last_seen: last_seen.clone(),
            },
        );
    }

    // Ends the session when the client hangs up (the stream is dropped), when it idles, or at
    // shutdown.
    let ended = state.stop.child_token();
    let handler = EndpointHandler::local(state.endpoint.clone(), caller);
    let transport = Channels {
        to_client,
        from_client,
    };
    let task_state = state.clone();
    let task_ended = ended.clone();
    let task_id = id.clone();
    tokio::spawn(async move {
        let serving = async move {
            if let Ok(running) = handler.serve(transport).await {
                let _ = running.waiting().await;
            }
        };
        let idle = watch_idle(last_seen, task_state.idle);
        tokio::select! {
            _ = serving => {}
            _ = idle => {}
            _ = task_ended.cancelled() => {}
        }
        task_state
            .sessions
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .remove(&task_id);
    });

    let first = Event::default()
        .event("endpoint")
        .data(format!("{}?sessionId={id}", state.messages));
    let hang_up = ended.drop_guard();
    let messages = futures::stream::unfold((outbox, hang_up), |(mut outbox, hang_up)| async {
        let message = outbox.recv().await?;
        let data = serde_json::to_string(&message).unwrap_or_default();
        Some((
            Ok::<_, std::convert::Infallible>(Event::default().event("message").data(data)),
            (outbox, hang_up),
        ))
    });
    let stream = futures::stream::once(async { Ok(first) }).chain(messages);
    Sse::new(stream)
        .keep_alive(KeepAlive::new().interval(Duration::from_secs(15)))
        .into_response()
}

/// Resolves once the session saw no message for `idle`.
async fn watch_idle(last_seen: Arc<Mutex<Instant>>, idle: Duration) {
    loop {
        let seen = *last_seen.lock().unwrap_or_else(|p| p.into_inner());
        let due = seen + idle;
        if Instant::now() >= due {
            return;
        }
        tokio::time::sleep_until(due.into()).await;
    }
}

#[derive(Deserialize)]
struct Target {
    #[serde(rename = "sessionId")]
    session_id: Option<String>,
}

async fn deliver(
    State(state): State<Arc<LegacySse>>,
    Query(target): Query<Target>,
    request: Request,
) -> Response {
    let Some(caller) = request.extensions().get::<Caller>().cloned() else {
        return StatusCode::INTERNAL_SERVER_ERROR.into_response();
    };
    let Some(id) = target.session_id else {
        return json_error(StatusCode::BAD_REQUEST, "sessionId is missing from the URL");
    };
    let (inbox, last_seen) = {
        let sessions = state.sessions.lock().unwrap_or_else(|p| p.into_inner());
        match sessions.get(&id) {
            None => return json_error(StatusCode::NOT_FOUND, "no such session; open a new one"),
            Some(session) if session.owner != caller.principal() => {
                tracing::warn!(endpoint = %state.endpoint.path, client = %caller.client, "legacy SSE session posted to by a client that did not open it");
                state.endpoint.audit_refusal(
                    Some(&caller.client),
                    Outcome::SessionRefused,
                    None,
                    Instant::now(),
                );
                return json_error(
                    StatusCode::FORBIDDEN,
                    "this session belongs to another client; open a session of your own",
                );
            }
            Some(session) => (session.inbox.clone(), session.last_seen.clone()),
        }
    };
    let (parts, body) = request.into_parts();
    let Ok(body) = axum::body::to_bytes(body, state.max_body).await else {
        return json_error(StatusCode::PAYLOAD_TOO_LARGE, "request body too large");
    };
    let mut message: ClientJsonRpcMessage = match serde_json::from_slice(&body) {
        Ok(message) => message,
        Err(_) => {
            return json_error(
                StatusCode::BAD_REQUEST,
                "the body is not a JSON-RPC message",
            );
        }
    };
    // The message runs as the caller of this request (the guard put it into the parts), as the
    // Streamable HTTP transport does: a narrower or newer token is judged by its own scopes.
    match &mut message {
        ClientJsonRpcMessage::Request(request) => {
            request.request.extensions_mut().insert(parts);
        }
        ClientJsonRpcMessage::Notification(notification) => {
            notification.notification.extensions_mut().insert(parts);
        }
        _ => {}
    }
    *last_seen.lock().unwrap_or_else(|p| p.into_inner()) = Instant::now();
    // A client that stops reading its stream fills the session's queue: refuse, never hang.
    match inbox.try_send(message) {
        Ok(()) => StatusCode::ACCEPTED.into_response(),
        Err(mpsc::error::TrySendError::Full(_)) => json_error(
            StatusCode::SERVICE_UNAVAILABLE,
            "the session's queue is full; read the event stream, then send again",
        ),
        Err(mpsc::error::TrySendError::Closed(_)) => json_error(
            StatusCode::NOT_FOUND,
            "the session has ended; open a new one",
        ),
    }
}

/// An rmcp transport over two channels: what the POSTs deliver, and what the stream sends.
struct Channels {
    to_client: mpsc::Sender<ServerJsonRpcMessage>,
    from_client: mpsc::Receiver<ClientJsonRpcMessage>,
}

impl Transport<RoleServer> for Channels {
    type Error = mpsc::error::SendError<ServerJsonRpcMessage>;

    fn send(
        &mut self,
        item: ServerJsonRpcMessage,
    ) -> impl Future<Output = Result<(), Self::Error>> + Send + 'static {
        let to_client = self.to_client.clone();
        async move { to_client.send(item).await }
    }

    async fn receive(&mut self) -> Option<ClientJsonRpcMessage> {
        self.from_client.recv().await
    }

    fn close(&mut self) -> impl Future<Output = Result<(), Self::Error>> + Send {
        self.from_client.close();
        std::future::ready(Ok(()))
    }
}
