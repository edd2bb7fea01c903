//! The MCP side: connect, list tools, call tools — and when the server has forgotten us (a restart:
//! 404 for the session, a closed connection), connect again once and repeat the call.

use std::sync::Arc;

use rmcp::RoleClient;
use rmcp::model::{CallToolRequestParams, CallToolResult, Tool};
use rmcp::service::{RunningService, ServiceExt};
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use serde_json::{Map, Value};
use tokio::sync::Mutex;

type Session = RunningService<RoleClient, ()>;

/// One request on a session, in flight. It owns its `Arc` of the session, so the future is
/// `'static` (a future borrowing the session trips the compiler's `Send` check for higher-ranked
/// closures when the bot spawns it).
type Pending<T> = std::pin::Pin<Box<dyn Future<Output = Result<T, rmcp::ServiceError>> + Send>>;

pub struct McpConnection {
    url: String,
    token: Option<String>,
    session: Mutex<Option<Arc<Session>>>,
}

impl McpConnection {
    pub fn new(url: &str, token: Option<String>) -> Self {
        Self {
            url: url.to_string(),
            token,
            session: Mutex::new(None),
        }
    }

    async fn connect(&self) -> Result<Session, String> {
        let mut config = StreamableHttpClientTransportConfig::with_uri(self.url.clone());
        if let Some(token) = &self.token {
            config = config.auth_header(token.clone());
        }
        ().serve(StreamableHttpClientTransport::from_config(config))
            .await
            .map_err(|e| format!("cannot connect to {}: {e}", self.url))
    }

    pub async fn list_tools(&self) -> Result<Vec<Tool>, String> {
        self.with_session(|session| Box::pin(async move { session.list_all_tools().await }))
            .await
    }

    /// Calls a tool; a lost session is replaced once and the call repeated (the seed's
    /// auto-reconnect). A refusal from a live server is returned as it is, never repeated.
    pub async fn call_tool(
        &self,
        name: &str,
        arguments: Map<String, Value>,
    ) -> Result<CallToolResult, String> {
        let params = CallToolRequestParams::new(name.to_string()).with_arguments(arguments);
        self.with_session(|session| {
            let params = params.clone();
            Box::pin(async move { session.call_tool(params).await })
        })
        .await
    }

    /// Runs `operation` on the session (connecting first if there is none); when the session turns
    /// out to be gone, connects again once and runs it again.
    async fn with_session<T>(
        &self,
        operation: impl Fn(Arc<Session>) -> Pending<T>,
    ) -> Result<T, String> {
        let mut guard = self.session.lock().await;
        let mut attempt = 0;
        loop {
            let session = match guard.take() {
                Some(session) => session,
                None => Arc::new(self.connect().await?),
            };
            match operation(session.clone()).await {
                Ok(value) => {
                    *guard = Some(session);
                    return Ok(value);
                }
                Err(error) => {
                    if !lost_session(&error) || attempt > 0 {
                        *guard = Some(session);
                        return Err(error.to_string());
                    }
                    tracing::info!(%error, "MCP session lost; reconnecting once");
                }
            }
            attempt += 1;
        }
    }
}

/// A JSON-RPC error comes from a live server that refused; anything else means the connection or
/// the session is gone.
fn lost_session(error: &rmcp::ServiceError) -> bool {
    !matches!(error, rmcp::ServiceError::McpError(_))
}
