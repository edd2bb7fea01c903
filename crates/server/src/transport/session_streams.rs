//! The sessions of a stateful endpoint, as rmcp's Streamable HTTP service asks for them (its
//! `SessionManager` trait): for each session, the queue of the client's messages to the
//! session's rmcp service, and the HTTP streams that carry the service's messages back.
//!
//! Why not rmcp's `LocalSessionManager`: it runs a worker task for every session, with four
//! channels of whole messages, and tokio allocates a channel's first block of 32 slots at once:
//! ~80 KiB a session before anything is sent (DHAT, 300 sessions opened and idle). Here a session
//! is a map entry: its routes behind a lock and a queue of boxed messages (a block of 32
//! pointers), and no task of its own. rmcp's service loop calls [`SessionTransport::send`] in
//! the order it answers, so the routing is done right in that call.
//!
//! What it keeps of rmcp's manager, because clients rely on it:
//! - a request's answer, and the progress, cancellations and server requests (sampling,
//!   elicitation) that belong to the request, ride the SSE stream of the POST that carried it;
//!   everything else rides the session's GET stream, or waits for one among the last
//!   [`REPLAY`](routes::REPLAY) events;
//! - every event has an id, `<index>/<stream>` on a request's stream and `<index>` on the GET
//!   stream, and a client that lost a stream reconnects with `Last-Event-ID` and gets the
//!   events after it that are still kept;
//! - a second GET stream while one is live is held open (keep-alive only) instead of taking
//!   its place, so EventSource reconnects do not kill each other;
//! - a session idle for the endpoint's idle timeout is closed.
//!
//! Session ids are minted for the principal opening the session ([`crate::session_id`]). Where
//! each message goes is [`routes`]; this module is the sessions and rmcp's two traits.

mod routes;

use std::collections::HashMap;
use std::sync::{Arc, Mutex, MutexGuard, Once, Weak};
use std::time::Duration;

use futures::Stream;
use rmcp::RoleServer;
use rmcp::model::{ClientJsonRpcMessage, ClientNotification, ServerJsonRpcMessage};
use rmcp::transport::Transport;
use rmcp::transport::streamable_http_server::session::ServerSseMessage;
use rmcp::transport::streamable_http_server::{SessionId, SessionManager};
use tokio::sync::{mpsc, oneshot};
use tokio_util::sync::CancellationToken;

// The idle clock, which the idle sweep's test moves by hand.
use crate::idle_clock::now;
use crate::session_id::{OPENER, SessionIds};
use routes::Routes;

/// Client messages queued for a session's service before the next one waits.
const INBOX: usize = 16;

#[derive(Debug, thiserror::Error)]
pub enum SessionError {
    #[error("session not found")]
    NotFound,
    #[error("the session is closed")]
    Closed,
    #[error("expected a request")]
    NotARequest,
    #[error("no such event to resume after")]
    UnknownEvent,
}

type Sessions = Mutex<HashMap<SessionId, Arc<Session>>>;

/// One endpoint's sessions.
pub struct SessionStreams {
    sessions: Arc<Sessions>,
    ids: Arc<SessionIds>,
    endpoint: String,
    idle: Duration,
    sweeping: Once,
}

impl SessionStreams {
    /// How the session table closes a session it evicts.
    pub fn closer(self: &Arc<Self>) -> crate::sessions::CloseSession {
        let streams = self.clone();
        Box::new(move |id| {
            let streams = streams.clone();
            Box::pin(async move {
                let _ = streams.close_session(&id).await;
            })
        })
    }

    /// Sessions of `endpoint`, closed when idle for `idle`.
    pub fn new(ids: Arc<SessionIds>, endpoint: &str, idle: Duration) -> Self {
        Self {
            sessions: Arc::default(),
            ids,
            endpoint: endpoint.to_string(),
            idle,
            sweeping: Once::new(),
        }
    }

    fn map(&self) -> MutexGuard<'_, HashMap<SessionId, Arc<Session>>> {
        lock(&self.sessions)
    }

    /// The session named `id`, marked used: every client request reaches a session through here.
    fn get(&self, id: &SessionId) -> Result<Arc<Session>, SessionError> {
        let session = self.map().get(id).cloned().ok_or(SessionError::NotFound)?;
        session.routes().last_active = now();
        Ok(session)
    }

    fn new_id(&self) -> SessionId {
        // Outside a guarded request (none today) a random id is as good as any.
        match OPENER.try_with(|principal| self.ids.mint(&self.endpoint, principal)) {
            Ok(id) => id.into(),
            Err(_) => uuid::Uuid::new_v4().simple().to_string().into(),
        }
    }
}

fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(|e| e.into_inner())
}

/// Closes the sessions idle for `idle`, about every tenth of it, until the endpoint is gone.
async fn sweep(sessions: Weak<Sessions>, idle: Duration) {
    let period = (idle / 10).clamp(Duration::from_millis(100), Duration::from_secs(30));
    let mut every = tokio::time::interval(period);
    every.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        every.tick().await;
        let Some(sessions) = sessions.upgrade() else {
            return;
        };
        close_idle(&sessions, idle);
    }
}

/// One sweep: closes the sessions idle for `idle` now.
fn close_idle(sessions: &Sessions, idle: Duration) {
    let mut idled = Vec::new();
    lock(sessions).retain(|_, session| {
        let mut routes = session.routes();
        routes.forget_completed();
        let live = now().saturating_duration_since(routes.last_active) < idle;
        if !live {
            idled.push(session.clone());
        }
        live
    });
    for session in idled {
        session.close();
    }
}

struct Session {
    /// The client's messages to the session's rmcp service.
    inbox: mpsc::Sender<Box<ClientJsonRpcMessage>>,
    routes: Mutex<Routes>,
    /// Cancelled when the session closes: the service's `receive` ends, and with it the service.
    closed: CancellationToken,
}

impl Session {
    fn routes(&self) -> MutexGuard<'_, Routes> {
        lock(&self.routes)
    }

    /// Hands a client message to the session's service; waits while its queue is full.
    async fn hand_over(&self, message: ClientJsonRpcMessage) -> Result<(), SessionError> {
        tokio::select! {
            sent = self.inbox.send(Box::new(message)) => sent.map_err(|_| SessionError::Closed),
            _ = self.closed.cancelled() => Err(SessionError::Closed),
        }
    }

    /// Ends the session: its streams end, and its service with its next `receive`.
    fn close(&self) {
        self.closed.cancel();
        self.routes().close();
    }
}

fn events(
    mut receiver: mpsc::Receiver<ServerSseMessage>,
) -> impl Stream<Item = ServerSseMessage> + Send + Sync + 'static {
    futures::stream::poll_fn(move |cx| receiver.poll_recv(cx))
}

/// A session's end of rmcp's service loop.
pub struct SessionTransport {
    session: Arc<Session>,
    inbox: mpsc::Receiver<Box<ClientJsonRpcMessage>>,
}

impl Transport<RoleServer> for SessionTransport {
    type Error = SessionError;

    fn send(
        &mut self,
        message: ServerJsonRpcMessage,
    ) -> impl Future<Output = Result<(), SessionError>> + Send + 'static {
        // rmcp calls this in the order it answers and only awaits the future later (in a task
        // of its own), so the message is routed now.
        std::future::ready(self.session.routes().deliver(message))
    }

    async fn receive(&mut self) -> Option<ClientJsonRpcMessage> {
        tokio::select! {
            message = self.inbox.recv() => message.map(|message| *message),
            _ = self.session.closed.cancelled() => None,
        }
    }

    async fn close(&mut self) -> Result<(), SessionError> {
        self.session.close();
        Ok(())
    }
}

impl SessionManager for SessionStreams {
    type Error = SessionError;
    type Transport = SessionTransport;

    async fn create_session(&self) -> Result<(SessionId, SessionTransport), SessionError> {
        self.sweeping.call_once(|| {
            tokio::spawn(sweep(Arc::downgrade(&self.sessions), self.idle));
        });
        let (inbox, receiver) = mpsc::channel(INBOX);
        let session = Arc::new(Session {
            inbox,
            routes: Mutex::new(Routes::new()),
            closed: CancellationToken::new(),
        });
        let mut map = self.map();
        let id = loop {
            let id = self.new_id();
            // A fresh UUID that names a live session: draw again.
            if !map.contains_key(&id) {
                break id;
            }
        };
        map.insert(id.clone(), session.clone());
        let transport = SessionTransport {
            session,
            inbox: receiver,
        };
        Ok((id, transport))
    }

    async fn initialize_session(
        &self,
        id: &SessionId,
        message: ClientJsonRpcMessage,
    ) -> Result<ServerJsonRpcMessage, SessionError> {
        let session = self.get(id)?;
        let ClientJsonRpcMessage::Request(request) = &message else {
            return Err(SessionError::NotARequest);
        };
        let (answer, answered) = oneshot::channel();
        session.routes().initializing = Some((request.id.clone(), answer));
        session.hand_over(message).await?;
        answered.await.map_err(|_| SessionError::Closed)
    }

    async fn has_session(&self, id: &SessionId) -> Result<bool, SessionError> {
        Ok(self.map().contains_key(id))
    }

    async fn close_session(&self, id: &SessionId) -> Result<(), SessionError> {
        let session = self.map().remove(id);
        if let Some(session) = session {
            session.close();
        }
        Ok(())
    }

    async fn create_stream(
        &self,
        id: &SessionId,
        message: ClientJsonRpcMessage,
    ) -> Result<impl Stream<Item = ServerSseMessage> + Send + Sync + 'static, SessionError> {
        let session = self.get(id)?;
        let ClientJsonRpcMessage::Request(request) = &message else {
            return Err(SessionError::NotARequest);
        };
        let (number, receiver) = session.routes().open_stream(request);
        if let Err(error) = session.hand_over(message).await {
            session.routes().drop_stream(number);
            return Err(error);
        }
        Ok(events(receiver))
    }

    async fn accept_message(
        &self,
        id: &SessionId,
        message: ClientJsonRpcMessage,
    ) -> Result<(), SessionError> {
        let session = self.get(id)?;
        if let ClientJsonRpcMessage::Notification(notification) = &message
            && let ClientNotification::CancelledNotification(cancelled) = &notification.notification
            && let Some(request) = &cancelled.params.request_id
        {
            session.routes().cancelled(request);
        }
        session.hand_over(message).await
    }

    async fn create_standalone_stream(
        &self,
        id: &SessionId,
    ) -> Result<impl Stream<Item = ServerSseMessage> + Send + Sync + 'static, SessionError> {
        let session = self.get(id)?;
        let receiver = session.routes().open_common(None);
        Ok(events(receiver))
    }

    async fn resume(
        &self,
        id: &SessionId,
        last_event_id: String,
    ) -> Result<impl Stream<Item = ServerSseMessage> + Send + Sync + 'static, SessionError> {
        let session = self.get(id)?;
        let receiver = session.routes().resume(&last_event_id)?;
        Ok(events(receiver))
    }
}

#[cfg(test)]
mod tests;
