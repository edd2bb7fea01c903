//! rmcp's session manager with our session ids ([`crate::session_id`]): a new session's id is
//! minted for the principal opening it (read from [`OPENER`], which the guard sets around the
//! transport); everything else is rmcp's local manager as it is.
//!
//! rmcp's `create_session` takes no arguments, so the id is chosen here and the session made
//! with `restore_session`, the local manager's way of creating a session under a given id.

use std::sync::Arc;

use futures::Stream;
use rmcp::model::{ClientJsonRpcMessage, ServerJsonRpcMessage};
use rmcp::transport::streamable_http_server::session::ServerSseMessage;
use rmcp::transport::streamable_http_server::session::local::{
    LocalSessionManager, LocalSessionManagerError,
};
use rmcp::transport::streamable_http_server::{RestoreOutcome, SessionId, SessionManager};

use crate::session_id::{OPENER, SessionIds};

pub struct SignedSessions {
    pub inner: Arc<LocalSessionManager>,
    ids: Arc<SessionIds>,
    endpoint: String,
}

impl SignedSessions {
    pub fn new(inner: Arc<LocalSessionManager>, ids: Arc<SessionIds>, endpoint: &str) -> Self {
        Self {
            inner,
            ids,
            endpoint: endpoint.to_string(),
        }
    }
}

impl SessionManager for SignedSessions {
    type Error = LocalSessionManagerError;
    type Transport = <LocalSessionManager as SessionManager>::Transport;

    async fn create_session(&self) -> Result<(SessionId, Self::Transport), Self::Error> {
        // Outside a guarded request (none today) rmcp's own random id is as good as any.
        let Ok(principal) = OPENER.try_with(Clone::clone) else {
            return self.inner.create_session().await;
        };
        loop {
            let id: SessionId = self.ids.mint(&self.endpoint, &principal).into();
            match self.inner.restore_session(id.clone()).await? {
                RestoreOutcome::Restored(transport) => return Ok((id, transport)),
                // A fresh UUID that names a live session: draw again.
                RestoreOutcome::AlreadyPresent => continue,
                _ => return self.inner.create_session().await,
            }
        }
    }

    async fn initialize_session(
        &self,
        id: &SessionId,
        message: ClientJsonRpcMessage,
    ) -> Result<ServerJsonRpcMessage, Self::Error> {
        self.inner.initialize_session(id, message).await
    }

    async fn has_session(&self, id: &SessionId) -> Result<bool, Self::Error> {
        self.inner.has_session(id).await
    }

    async fn close_session(&self, id: &SessionId) -> Result<(), Self::Error> {
        self.inner.close_session(id).await
    }

    async fn create_stream(
        &self,
        id: &SessionId,
        message: ClientJsonRpcMessage,
    ) -> Result<impl Stream<Item = ServerSseMessage> + Send + Sync + 'static, Self::Error> {
        self.inner.create_stream(id, message).await
    }

    async fn accept_message(
        &self,
        id: &SessionId,
        message: ClientJsonRpcMessage,
    ) -> Result<(), Self::Error> {
        self.inner.accept_message(id, message).await
    }

    async fn create_standalone_stream(
        &self,
        id: &SessionId,
    ) -> Result<impl Stream<Item = ServerSseMessage> + Send + Sync + 'static, Self::Error> {
        self.inner.create_standalone_stream(id).await
    }

    async fn resume(
        &self,
        id: &SessionId,
        last_event_id: String,
    ) -> Result<impl Stream<Item = ServerSseMessage> + Send + Sync + 'static, Self::Error> {
        self.inner.resume(id, last_event_id).await
    }
}
