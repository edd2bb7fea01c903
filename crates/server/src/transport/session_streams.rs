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
//!   [`REPLAY`] events;
//! - every event has an id, `<index>/<stream>` on a request's stream and `<index>` on the GET
//!   stream, and a client that lost a stream reconnects with `Last-Event-ID` and gets the
//!   events after it that are still kept;
//! - a second GET stream while one is live is held open (keep-alive only) instead of taking
//!   its place, so EventSource reconnects do not kill each other;
//! - a session idle for the endpoint's idle timeout is closed.
//!
//! Session ids are minted for the principal opening the session ([`crate::session_id`]).

use std::collections::{HashMap, VecDeque};
use std::sync::{Arc, Mutex, MutexGuard, Once, Weak};
use std::time::Duration;

use futures::Stream;
use rmcp::RoleServer;
use rmcp::model::{
    ClientJsonRpcMessage, ClientNotification, GetExtensions, GetMeta, ProgressToken, RequestId,
    ServerJsonRpcMessage, ServerNotification,
};
use rmcp::service::OriginatingRequestId;
use rmcp::transport::Transport;
use rmcp::transport::streamable_http_server::session::ServerSseMessage;
use rmcp::transport::streamable_http_server::{SessionId, SessionManager};
use tokio::sync::{mpsc, oneshot};
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

// The idle clock, which the idle sweep's test moves by hand.
use crate::idle_clock::now;
use crate::session_id::{OPENER, SessionIds};

/// Events kept per stream for a client that reconnects, and the room of a live stream: a
/// client that stops reading for this many events loses the live stream (it ends) and
/// resumes from what is kept.
const REPLAY: usize = 16;
/// Client messages queued for a session's service before the next one waits.
const INBOX: usize = 16;
/// The reconnect delay a request's stream announces in its first (priming) event, as rmcp's
/// service announces on the streams it opens itself.
const RETRY: Duration = Duration::from_secs(3);
/// How long the events of a cancelled request stay for a late reconnect.
const COMPLETED_KEPT: Duration = Duration::from_secs(60);
/// GET streams held open beside the live one.
const SHADOWS: usize = 32;
/// Request streams a session keeps. A request the service never answers (rmcp drops one that
/// reuses the id of a request still running) would otherwise keep its stream for the session's
/// life; past this the oldest goes, preferring one nobody reads, and anything still sent for
/// its request rides the GET stream instead.
const STREAMS: usize = 256;

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
        let mut routes = self.routes();
        routes.closed = true;
        routes.streams.clear();
        routes.resources.clear();
        routes.common.live = None;
        routes.shadows.clear();
        routes.initializing = None;
    }
}

/// What a request of the client is known by, to find the stream its messages ride.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
enum Resource {
    Request(RequestId),
    Progress(ProgressToken),
}

/// Where a session's outgoing messages go.
struct Routes {
    /// The next request stream's number.
    next_stream: u64,
    streams: HashMap<u64, RequestStream>,
    resources: HashMap<Resource, u64>,
    /// The GET stream.
    common: Outbound,
    shadows: Vec<mpsc::Sender<ServerSseMessage>>,
    /// The `initialize` request waiting for its answer.
    initializing: Option<(RequestId, oneshot::Sender<ServerJsonRpcMessage>)>,
    last_active: Instant,
    closed: bool,
}

struct RequestStream {
    out: Outbound,
    resources: Vec<Resource>,
    /// Set when the client cancelled the request: its stream ended, its events are kept a while.
    completed_at: Option<Instant>,
}

/// One stream's outgoing side: the live HTTP stream, if any, and the last events for a client
/// that reconnects.
struct Outbound {
    live: Option<mpsc::Sender<ServerSseMessage>>,
    recent: VecDeque<(usize, ServerSseMessage)>,
    /// The request stream's number; `None` for the GET stream.
    stream: Option<u64>,
    next: usize,
}

impl Outbound {
    fn new(stream: Option<u64>, first_index: usize) -> Self {
        Self {
            live: None,
            recent: VecDeque::new(),
            stream,
            next: first_index,
        }
    }

    fn push(&mut self, mut event: ServerSseMessage) {
        let index = self.next;
        self.next += 1;
        event.event_id = Some(match self.stream {
            Some(stream) => format!("{index}/{stream}"),
            None => index.to_string(),
        });
        if self.recent.len() == REPLAY {
            self.recent.pop_front();
        }
        self.recent.push_back((index, event.clone()));
        if let Some(live) = &self.live
            && live.try_send(event).is_err()
        {
            // Gone, or not read for REPLAY events: the stream is over either way, and the
            // client resumes from `recent`.
            self.live = None;
        }
    }

    /// A new live stream that starts with the kept events after `after` (all of them if `None`).
    fn replay(&mut self, after: Option<usize>) -> mpsc::Receiver<ServerSseMessage> {
        let (live, receiver) = mpsc::channel(REPLAY);
        for (index, event) in &self.recent {
            if after.is_none_or(|after| *index > after) {
                // Fits: the channel holds as many as are kept.
                let _ = live.try_send(event.clone());
            }
        }
        self.live = Some(live);
        receiver
    }

    fn is_live(&self) -> bool {
        self.live.as_ref().is_some_and(|live| !live.is_closed())
    }
}

impl Routes {
    fn new() -> Self {
        Self {
            next_stream: 0,
            streams: HashMap::new(),
            resources: HashMap::new(),
            // The GET stream's own first event (rmcp's priming event) is `0`, so ours start at 1
            // and a reconnect after `0` misses none of them.
            common: Outbound::new(None, 1),
            shadows: Vec::new(),
            initializing: None,
            last_active: now(),
            closed: false,
        }
    }

    /// The stream for `request`, primed, with the request's id and progress token routed to it.
    fn open_stream(
        &mut self,
        request: &rmcp::model::JsonRpcRequest<rmcp::model::ClientRequest>,
    ) -> (u64, mpsc::Receiver<ServerSseMessage>) {
        self.forget_completed();
        if self.streams.len() >= STREAMS {
            let unread = self.streams.iter().filter(|(_, s)| !s.out.is_live());
            let oldest = unread
                .map(|(number, _)| *number)
                .min()
                .or_else(|| self.streams.keys().min().copied());
            if let Some(oldest) = oldest {
                self.drop_stream(oldest);
            }
        }
        let number = self.next_stream;
        self.next_stream = self.next_stream.wrapping_add(1);
        let mut out = Outbound::new(Some(number), 0);
        let receiver = out.replay(None);
        // Its id is the stream's first.
        out.push(ServerSseMessage::priming("", RETRY));
        let mut resources = vec![Resource::Request(request.id.clone())];
        if let Some(token) = request.request.get_meta().get_progress_token() {
            resources.push(Resource::Progress(token));
        }
        for resource in &resources {
            self.resources.insert(resource.clone(), number);
        }
        self.streams.insert(
            number,
            RequestStream {
                out,
                resources,
                completed_at: None,
            },
        );
        (number, receiver)
    }

    fn drop_stream(&mut self, number: u64) {
        if let Some(stream) = self.streams.remove(&number) {
            self.unroute(stream.resources);
        }
    }

    fn unroute(&mut self, resources: Vec<Resource>) {
        for resource in resources {
            self.resources.remove(&resource);
        }
    }

    /// The client cancelled `request`: its stream ends, its events stay a while.
    fn cancelled(&mut self, request: &RequestId) {
        let Some(number) = self
            .resources
            .get(&Resource::Request(request.clone()))
            .copied()
        else {
            return;
        };
        if let Some(stream) = self.streams.get_mut(&number) {
            stream.out.live = None;
            stream.completed_at = Some(now());
            let resources = std::mem::take(&mut stream.resources);
            self.unroute(resources);
        }
    }

    fn forget_completed(&mut self) {
        self.streams.retain(|_, stream| {
            stream
                .completed_at
                .is_none_or(|at| now().saturating_duration_since(at) < COMPLETED_KEPT)
        });
    }

    /// The request stream `message` belongs on, if any.
    fn stream_of(&self, message: &ServerJsonRpcMessage) -> Option<u64> {
        let resource = match message {
            ServerJsonRpcMessage::Request(request) => Resource::Request(
                request
                    .request
                    .extensions()
                    .get::<OriginatingRequestId>()?
                    .0
                    .clone(),
            ),
            ServerJsonRpcMessage::Notification(notification) => match &notification.notification {
                ServerNotification::ProgressNotification(progress) => {
                    Resource::Progress(progress.params.progress_token.clone())
                }
                ServerNotification::CancelledNotification(cancelled) => {
                    Resource::Request(cancelled.params.request_id.clone()?)
                }
                _ => return None,
            },
            ServerJsonRpcMessage::Response(response) => Resource::Request(response.id.clone()),
            ServerJsonRpcMessage::Error(error) => Resource::Request(error.id.clone()?),
        };
        self.resources.get(&resource).copied()
    }

    /// Sends one message of the session's service where it belongs.
    fn deliver(&mut self, message: ServerJsonRpcMessage) -> Result<(), SessionError> {
        if self.closed {
            return Err(SessionError::Closed);
        }
        self.last_active = now();
        let answers = match &message {
            ServerJsonRpcMessage::Response(response) => Some(&response.id),
            ServerJsonRpcMessage::Error(error) => error.id.as_ref(),
            _ => None,
        };
        if let Some(answers) = answers
            && self
                .initializing
                .as_ref()
                .is_some_and(|(waiting, _)| waiting == answers)
            && let Some((_, waiting)) = self.initializing.take()
        {
            return waiting.send(message).map_err(|_| SessionError::Closed);
        }
        let answered = answers.is_some();
        match self.stream_of(&message) {
            Some(number) => {
                if let Some(stream) = self.streams.get_mut(&number) {
                    stream.out.push(ServerSseMessage::from_message(message));
                }
                // The answer ends its request's stream; one whose client lost the live stream
                // (it stopped reading for a while) stays a while, like a cancelled one, for
                // the client to resume and read its answer.
                if answered {
                    match self.streams.get_mut(&number) {
                        Some(stream) if stream.out.live.is_none() => {
                            stream.completed_at = Some(now());
                            let resources = std::mem::take(&mut stream.resources);
                            self.unroute(resources);
                        }
                        _ => self.drop_stream(number),
                    }
                }
            }
            None => self.common.push(ServerSseMessage::from_message(message)),
        }
        Ok(())
    }

    /// A GET stream: the live one if there is none (with the kept events after `after`), else
    /// one held open beside it.
    fn open_common(&mut self, after: Option<usize>) -> mpsc::Receiver<ServerSseMessage> {
        if !self.common.is_live() {
            return self.common.replay(after);
        }
        self.shadows.retain(|shadow| !shadow.is_closed());
        if self.shadows.len() >= SHADOWS {
            self.shadows.remove(0);
        }
        let (shadow, receiver) = mpsc::channel(1);
        self.shadows.push(shadow);
        receiver
    }

    fn resume(&mut self, last: &str) -> Result<mpsc::Receiver<ServerSseMessage>, SessionError> {
        let (index, stream) = match last.split_once('/') {
            Some((index, stream)) => (index, Some(stream)),
            None => (last, None),
        };
        let index: usize = index.parse().map_err(|_| SessionError::UnknownEvent)?;
        let Some(stream) = stream else {
            return Ok(self.open_common(Some(index)));
        };
        let number: u64 = stream.parse().map_err(|_| SessionError::UnknownEvent)?;
        let stream = self
            .streams
            .get_mut(&number)
            .ok_or(SessionError::UnknownEvent)?;
        let receiver = stream.out.replay(Some(index));
        if stream.completed_at.is_some() {
            // Replayed; the stream ends there.
            stream.out.live = None;
        }
        Ok(receiver)
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
mod tests {
    use futures::StreamExt;
    use serde_json::{Value, json};

    use super::*;

    fn client(message: Value) -> ClientJsonRpcMessage {
        serde_json::from_value(message).unwrap()
    }

    fn server(message: Value) -> ServerJsonRpcMessage {
        serde_json::from_value(message).unwrap()
    }

    fn streams(idle: Duration) -> SessionStreams {
        SessionStreams::new(Arc::new(SessionIds::new(None, "")), "/m", idle)
    }

    /// A session through its `initialize`, the test playing the session's service.
    async fn opened(streams: &SessionStreams) -> (SessionId, SessionTransport) {
        let (id, mut transport) = streams.create_session().await.unwrap();
        let initialize = client(
            json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}}),
        );
        let (initialized, ()) = tokio::join!(streams.initialize_session(&id, initialize), async {
            assert!(matches!(
                transport.receive().await,
                Some(ClientJsonRpcMessage::Request(_))
            ));
            transport.send(answer(1)).await.unwrap();
        });
        assert!(matches!(
            initialized.unwrap(),
            ServerJsonRpcMessage::Response(_)
        ));
        (id, transport)
    }

    fn answer(id: u64) -> ServerJsonRpcMessage {
        server(json!({"jsonrpc": "2.0", "id": id, "result": {}}))
    }

    fn call(id: u64) -> ClientJsonRpcMessage {
        client(json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
            "params": {"name": "t", "_meta": {"progressToken": "p"}}}))
    }

    fn progress(n: u32) -> ServerJsonRpcMessage {
        server(json!({"jsonrpc": "2.0", "method": "notifications/progress",
            "params": {"progressToken": "p", "progress": n}}))
    }

    fn log(n: u32) -> ServerJsonRpcMessage {
        server(json!({"jsonrpc": "2.0", "method": "notifications/message",
            "params": {"level": "info", "data": n}}))
    }

    /// Each event as its id and its message's JSON (`null` for a priming event).
    async fn read(stream: impl Stream<Item = ServerSseMessage>) -> Vec<(String, Value)> {
        stream
            .map(|event| {
                let message = event.message.map(|m| serde_json::to_value(&*m).unwrap());
                (event.event_id.unwrap(), message.unwrap_or(Value::Null))
            })
            .collect()
            .await
    }

    fn event_ids(events: &[(String, Value)]) -> Vec<&str> {
        events.iter().map(|(id, _)| id.as_str()).collect()
    }

    #[tokio::test]
    async fn a_requests_answer_and_progress_ride_its_stream_and_the_rest_the_get_stream() {
        let streams = streams(Duration::from_secs(60));
        let (id, mut transport) = opened(&streams).await;
        let stream = streams.create_stream(&id, call(2)).await.unwrap();
        assert!(matches!(
            transport.receive().await,
            Some(ClientJsonRpcMessage::Request(_))
        ));
        transport.send(progress(1)).await.unwrap();
        transport.send(log(7)).await.unwrap();
        transport.send(answer(2)).await.unwrap();

        let events = read(stream).await;
        let ids = event_ids(&events);
        assert_eq!(
            ids,
            ["0/0", "1/0", "2/0"],
            "priming, progress, answer; then it ends"
        );
        assert_eq!(events[1].1["params"]["progress"], 1.0);
        assert_eq!(events[2].1["id"], 2);

        // The log notification waited for a GET stream.
        let mut get = Box::pin(streams.create_standalone_stream(&id).await.unwrap());
        let (event_id, message) = get.next().await.map(|e| (e.event_id, e.message)).unwrap();
        assert_eq!(event_id.as_deref(), Some("1"));
        assert_eq!(
            serde_json::to_value(&*message.unwrap()).unwrap()["params"]["data"],
            7
        );
    }

    #[tokio::test]
    async fn a_client_that_lost_its_stream_resumes_after_the_last_event_it_saw() {
        let streams = streams(Duration::from_secs(60));
        let (id, mut transport) = opened(&streams).await;
        let lost = streams.create_stream(&id, call(2)).await.unwrap();
        transport.receive().await.unwrap();
        transport.send(progress(1)).await.unwrap();
        drop(lost);
        transport.send(progress(2)).await.unwrap();

        let resumed = streams.resume(&id, "1/0".into()).await.unwrap();
        transport.send(answer(2)).await.unwrap();
        let events = read(resumed).await;
        let ids = event_ids(&events);
        assert_eq!(
            ids,
            ["2/0", "3/0"],
            "the progress it missed, then the answer"
        );
        assert_eq!(events[0].1["params"]["progress"], 2.0);

        assert!(
            streams.resume(&id, "1/9".into()).await.is_err(),
            "no such stream"
        );
        assert!(streams.resume(&id, "x".into()).await.is_err());
    }

    #[tokio::test]
    async fn a_client_that_stops_reading_loses_the_live_stream_not_the_events() {
        let streams = streams(Duration::from_secs(60));
        let (id, mut transport) = opened(&streams).await;
        let stalled = streams.create_standalone_stream(&id).await.unwrap();
        for n in 1..=20 {
            transport.send(log(n)).await.unwrap();
        }
        let read_late = read(stalled).await;
        assert_eq!(read_late.len(), REPLAY, "the stream ended when it was full");

        let resumed = Box::pin(streams.resume(&id, "10".into()).await.unwrap());
        let events: Vec<_> = resumed.take(10).collect().await;
        let ids: Vec<_> = events.iter().map(|e| e.event_id.clone().unwrap()).collect();
        assert_eq!(ids, (11..=20).map(|n| n.to_string()).collect::<Vec<_>>());
    }

    #[tokio::test]
    async fn a_second_get_stream_is_held_beside_the_live_one() {
        let streams = streams(Duration::from_secs(60));
        let (id, mut transport) = opened(&streams).await;
        let mut first = Box::pin(streams.create_standalone_stream(&id).await.unwrap());
        let second = streams.create_standalone_stream(&id).await.unwrap();
        transport.send(log(1)).await.unwrap();
        assert_eq!(first.next().await.unwrap().event_id.as_deref(), Some("1"));
        streams.close_session(&id).await.unwrap();
        assert!(
            read(second).await.is_empty(),
            "keep-alive only, and ends with the session"
        );
    }

    #[tokio::test]
    async fn unanswered_requests_keep_a_bounded_number_of_streams() {
        let streams = streams(Duration::from_secs(60));
        let (id, mut transport) = opened(&streams).await;
        let mut read = Vec::new();
        for n in 0..STREAMS as u64 + 10 {
            let stream = streams.create_stream(&id, call(n + 2)).await.unwrap();
            transport.receive().await.unwrap();
            if n == 5 {
                read.push(Box::pin(stream)); // still read: outlives the unread ones
            }
        }
        let session = streams.get(&id).unwrap();
        assert_eq!(session.routes().streams.len(), STREAMS);
        assert!(session.routes().streams.contains_key(&5));
        assert!(
            !session.routes().streams.contains_key(&0),
            "the oldest unread went first"
        );
        // Its request's answer now rides the GET stream.
        transport.send(answer(2)).await.unwrap();
        let mut get = Box::pin(streams.create_standalone_stream(&id).await.unwrap());
        let answer = get.next().await.unwrap().message.unwrap();
        assert!(
            matches!(&*answer, ServerJsonRpcMessage::Response(r) if r.id == RequestId::Number(2))
        );
    }

    #[tokio::test]
    async fn an_idle_session_is_closed_and_its_service_ends() {
        use crate::idle_clock::advance;
        let idle = Duration::from_secs(10);
        let streams = streams(idle);
        let (id, mut transport) = opened(&streams).await;
        advance(idle / 2);
        streams
            .accept_message(
                &id,
                client(json!({"jsonrpc": "2.0", "method": "notifications/initialized"})),
            )
            .await
            .unwrap();
        transport.receive().await.unwrap();
        advance(idle * 3 / 4);
        close_idle(&streams.sessions, idle);
        assert!(
            streams.has_session(&id).await.unwrap(),
            "used half-way: not idle yet"
        );
        advance(idle / 2);
        close_idle(&streams.sessions, idle);
        assert!(!streams.has_session(&id).await.unwrap());
        assert!(
            transport.receive().await.is_none(),
            "the service's receive ends"
        );
        assert!(transport.send(log(1)).await.is_err());
        assert!(matches!(
            streams.create_stream(&id, call(3)).await.err(),
            Some(SessionError::NotFound)
        ));
    }
}
