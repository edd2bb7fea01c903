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
//! the Streamable HTTP endpoint. The pipeline in front (`pipeline/`) runs its steps on both
//! requests — browser rules, authentication, the session's owner (a post is accepted only from
//! the principal that opened the session), body, framing — and each message runs with the
//! caller and the record of the request that carried it (its token's scopes and limits, not the
//! opener's).

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use axum::Router;
use axum::extract::{Query, Request, State};
use axum::response::sse::{Event, KeepAlive, Sse};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use concierge_core::Caller;
use futures::StreamExt;
use http::StatusCode;
use http::Uri;
use rmcp::model::{ClientJsonRpcMessage, GetExtensions, ServerJsonRpcMessage};
use rmcp::service::{RoleServer, ServiceExt};
use rmcp::transport::Transport;
use serde::Deserialize;
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use crate::endpoint::Endpoint;
use crate::pipeline::{Refusal, RequestRecord, framing, session};
use crate::transport::handler::EndpointHandler;

struct Session {
    owner: String,
    inbox: mpsc::Sender<ClientJsonRpcMessage>,
    last_seen: Arc<Mutex<Instant>>,
}

/// An endpoint's open legacy SSE sessions, shared with the pipeline, which asks who owns the
/// session a post names.
pub struct LegacySessions {
    sse: String,
    messages: String,
    open: Mutex<HashMap<String, Session>>,
}

impl LegacySessions {
    /// The stream's path and the messages' path.
    pub fn paths(&self) -> (&str, &str) {
        (&self.sse, &self.messages)
    }

    pub fn new(paths: &crate::config::LegacySse) -> Self {
        Self {
            sse: paths.sse.clone(),
            messages: paths.messages.clone(),
            open: Mutex::new(HashMap::new()),
        }
    }

    /// Whether `path` is one of this transport's two routes.
    pub fn serves(&self, path: &str) -> bool {
        path == self.sse || path == self.messages
    }

    /// Who opened session `id`.
    pub fn owner(&self, id: &str) -> Option<String> {
        self.lock().get(id).map(|s| s.owner.clone())
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<String, Session>> {
        self.open.lock().unwrap_or_else(|p| p.into_inner())
    }
}

pub struct LegacySse {
    endpoint: Arc<Endpoint>,
    idle: Duration,
    max_body: usize,
    sessions: Arc<LegacySessions>,
    stop: CancellationToken,
    caps: crate::config::SessionCaps,
}

/// The two routes of `paths`, sharing the endpoint's dispatcher (sessions idle out after
/// `idle`); `guard` must be layered on them.
pub fn routes(
    endpoint: Arc<Endpoint>,
    sessions: Arc<LegacySessions>,
    server: &crate::config::ServerSection,
    idle: Duration,
    caps: crate::config::SessionCaps,
    stop: CancellationToken,
) -> Router {
    let (sse, messages) = (sessions.sse.clone(), sessions.messages.clone());
    let state = Arc::new(LegacySse {
        endpoint,
        idle,
        max_body: server.max_body_bytes,
        sessions,
        stop,
        caps,
    });
    Router::new()
        .route(&sse, get(open))
        .route(&messages, post(deliver))
        .with_state(state)
}

async fn open(State(state): State<Arc<LegacySse>>, request: Request) -> Response {
    let (Some(caller), Some(record)) = (
        request.extensions().get::<Caller>().cloned(),
        request.extensions().get::<RequestRecord>().cloned(),
    ) else {
        return StatusCode::INTERNAL_SERVER_ERROR.into_response();
    };
    // A stream is a session: counted against the caller's budget like an `initialize`, and
    // capped like Streamable HTTP sessions. A held-open stream is in use, so over the cap the
    // new one is refused rather than an old one cut.
    let (limits, says) = state.endpoint.session_budget();
    if let Err(refusal) = session::budget((&limits, says), &caller).await {
        return refusal.answer(&record);
    }
    let id = uuid::Uuid::new_v4().simple().to_string();
    let (inbox, from_client) = mpsc::channel(32);
    let (to_client, outbox) = mpsc::channel::<ServerJsonRpcMessage>(32);
    let last_seen = Arc::new(Mutex::new(Instant::now()));
    {
        let mut sessions = state.sessions.lock();
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
            return session::full_refusal(&message).answer(&record);
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
        task_state.sessions.lock().remove(&task_id);
    });

    let first = Event::default()
        .event("endpoint")
        .data(format!("{}?sessionId={id}", state.sessions.messages));
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

/// The session a post names (`?sessionId=`, URL-decoded). The pipeline judges its owner and
/// this transport delivers to it by this one reading, so no spelling of the query can name one
/// session to the owner check and another to the delivery.
pub fn session_named(uri: &Uri) -> Option<String> {
    Query::<Target>::try_from_uri(uri).ok()?.0.session_id
}

async fn deliver(State(state): State<Arc<LegacySse>>, request: Request) -> Response {
    let Some(record) = request.extensions().get::<RequestRecord>().cloned() else {
        return StatusCode::INTERNAL_SERVER_ERROR.into_response();
    };
    let Some(id) = session_named(request.uri()) else {
        return refused(
            StatusCode::BAD_REQUEST,
            "session_missing",
            "sessionId is missing from the URL",
            &record,
        );
    };
    let (parts, body) = request.into_parts();
    let Ok(body) = axum::body::to_bytes(body, state.max_body).await else {
        return refused(
            StatusCode::PAYLOAD_TOO_LARGE,
            "body_too_large",
            "request body too large",
            &record,
        );
    };
    let mut message: ClientJsonRpcMessage = match serde_json::from_slice(&body) {
        Ok(message) => message,
        // The guard's framing step passed its envelope: what does not fit is its params.
        Err(_) => return framing::unreadable(&body).answer(&record),
    };
    // Whose session it is was decided in the pipeline (`session::owned_by_caller`).
    let Some((inbox, last_seen)) = state
        .sessions
        .lock()
        .get(&id)
        .map(|s| (s.inbox.clone(), s.last_seen.clone()))
    else {
        return refused(
            StatusCode::NOT_FOUND,
            "session_not_found",
            "no such session; open a new one",
            &record,
        );
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
        Err(mpsc::error::TrySendError::Full(_)) => refused(
            StatusCode::SERVICE_UNAVAILABLE,
            "session_queue_full",
            "the session's queue is full; read the event stream, then send again",
            &record,
        ),
        Err(mpsc::error::TrySendError::Closed(_)) => refused(
            StatusCode::NOT_FOUND,
            "session_not_found",
            "the session has ended; open a new one",
            &record,
        ),
    }
}

/// A post this transport refuses itself, recorded as the request's outcome.
fn refused(
    status: StatusCode,
    code: &'static str,
    message: &str,
    record: &RequestRecord,
) -> Response {
    let outcome = match status {
        StatusCode::BAD_REQUEST | StatusCode::PAYLOAD_TOO_LARGE => {
            concierge_core::Outcome::InvalidArgument
        }
        _ => concierge_core::Outcome::SessionRefused,
    };
    Refusal::new(status, outcome, code, message).answer(record)
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
