//! Where a session's outgoing messages go: a request's own SSE stream (its answer, its progress,
//! the server requests that belong to it) or the session's GET stream, each with the last
//! [`REPLAY`] events kept for a client that reconnects with `Last-Event-ID`. Every method runs
//! under the session's lock, in the order rmcp's service loop sends; nothing here waits.

use std::collections::{HashMap, VecDeque};
use std::time::Duration;

use rmcp::model::{
    GetExtensions, GetMeta, ProgressToken, RequestId, ServerJsonRpcMessage, ServerNotification,
};
use rmcp::service::OriginatingRequestId;
use rmcp::transport::streamable_http_server::session::ServerSseMessage;
use tokio::sync::{mpsc, oneshot};
use tokio::time::Instant;

use super::SessionError;
use crate::idle_clock::now;

/// Events kept per stream for a client that reconnects, and the room of a live stream: a
/// client that stops reading for this many events loses the live stream (it ends) and
/// resumes from what is kept.
pub(super) const REPLAY: usize = 16;
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
pub(super) const STREAMS: usize = 256;

/// What a request of the client is known by, to find the stream its messages ride.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
enum Resource {
    Request(RequestId),
    Progress(ProgressToken),
}

/// Where a session's outgoing messages go.
pub(super) struct Routes {
    /// The next request stream's number.
    next_stream: u64,
    pub(super) streams: HashMap<u64, RequestStream>,
    resources: HashMap<Resource, u64>,
    /// The GET stream.
    common: Outbound,
    shadows: Vec<mpsc::Sender<ServerSseMessage>>,
    /// The `initialize` request waiting for its answer.
    pub(super) initializing: Option<(RequestId, oneshot::Sender<ServerJsonRpcMessage>)>,
    pub(super) last_active: Instant,
    closed: bool,
}

pub(super) struct RequestStream {
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
    pub(super) fn new() -> Self {
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

    /// The session closed: every stream ends, nothing waits for an answer.
    pub(super) fn close(&mut self) {
        self.closed = true;
        self.streams.clear();
        self.resources.clear();
        self.common.live = None;
        self.shadows.clear();
        self.initializing = None;
    }

    /// The stream for `request`, primed, with the request's id and progress token routed to it.
    pub(super) fn open_stream(
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

    pub(super) fn drop_stream(&mut self, number: u64) {
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
    pub(super) fn cancelled(&mut self, request: &RequestId) {
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

    pub(super) fn forget_completed(&mut self) {
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
    pub(super) fn deliver(&mut self, message: ServerJsonRpcMessage) -> Result<(), SessionError> {
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
    pub(super) fn open_common(&mut self, after: Option<usize>) -> mpsc::Receiver<ServerSseMessage> {
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

    pub(super) fn resume(
        &mut self,
        last: &str,
    ) -> Result<mpsc::Receiver<ServerSseMessage>, SessionError> {
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
