//! The MCP side: connect, list tools, call tools — and when the server has forgotten us (a restart:
//! 404 for the session, a closed connection), connect again once and repeat the call.
//!
//! Both protocol eras: `server/discover` first (2026-07-28: no session, every request carries its
//! version and capabilities), the `initialize` handshake (2025-11-25) when the server does not
//! know discovery. rmcp answers an `input_required` result by itself where it can; the bot
//! declares no elicitation, so a confirmable write reaches it as the confirm-token round trip.

use std::sync::Arc;

use rmcp::RoleClient;
use rmcp::model::{CallToolRequestParams, CallToolResult, ProtocolVersion, Tool};
use rmcp::service::{ClientLifecycleMode, ClientServiceExt, RunningService};
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
        let lifecycle = ClientLifecycleMode::Auto {
            preferred_versions: vec![ProtocolVersion::V_2026_07_28],
            legacy_version: None,
        };
        ().serve_with_lifecycle(
            StreamableHttpClientTransport::from_config(config),
            lifecycle,
        )
        .await
        .map_err(|e| explain(&self.url, self.token.is_some(), &e))
    }

    /// The protocol revision the connection speaks (connecting first if it has not yet).
    pub async fn protocol_version(&self) -> Result<String, String> {
        self.with_session(|session| {
            Box::pin(async move {
                Ok(session
                    .peer_info()
                    .map(|info| info.protocol_version.to_string())
                    .unwrap_or_default())
            })
        })
        .await
    }

    /// Connects and lists the tools once, keeping the session: what `chat` and `telegram` do
    /// before the first message, so a wrong token or URL is said at start, in words a person can
    /// act on (not in the first answer, as an apology). Answers the number of tools.
    pub async fn check(&self) -> Result<usize, String> {
        // A black-holed address would otherwise wait for the system's connect timeout (minutes).
        const LIMIT: std::time::Duration = std::time::Duration::from_secs(30);
        match tokio::time::timeout(LIMIT, self.list_tools()).await {
            Ok(listed) => listed.map(|tools| tools.len()),
            Err(_) => Err(format!(
                "cannot reach the MCP endpoint {}: no answer within {} s",
                self.url,
                LIMIT.as_secs()
            )),
        }
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

/// Why a session could not be opened, for a person: a refused token, an unreachable address, an
/// endpoint that answered something else. rmcp's own error text names internal types ("Transport
/// [..] error: Auth required") and is logged at debug level only.
fn explain(url: &str, has_token: bool, error: &rmcp::service::ClientInitializeError) -> String {
    use rmcp::service::ClientInitializeError;
    use rmcp::transport::streamable_http_client::StreamableHttpError;

    tracing::debug!(%error, "MCP initialize failed");
    // A legacy server that also failed the handshake: its failure is the one to explain.
    if let ClientInitializeError::LegacyFallbackFailed { fallback, .. } = error {
        return explain(url, has_token, fallback);
    }
    let refused = if has_token {
        "the MCP endpoint refused the token (--token / MCP_TOKEN)"
    } else {
        "the MCP endpoint needs a token: pass --token or set MCP_TOKEN"
    }
    .to_string();
    let error = match error {
        ClientInitializeError::TransportError { error, .. } => error,
        ClientInitializeError::JsonRpcError(error) => {
            return format!(
                "the MCP endpoint {url} refused to open a session: {}",
                error.message
            );
        }
        _ => return format!("{url} did not answer as an MCP endpoint"),
    };
    let mut cause: Option<&(dyn std::error::Error + 'static)> = Some(error as _);
    while let Some(current) = cause {
        if let Some(http) = current.downcast_ref::<StreamableHttpError<reqwest::Error>>() {
            return match http {
                StreamableHttpError::AuthRequired(_)
                | StreamableHttpError::InsufficientScope(_) => refused,
                StreamableHttpError::HttpStatus(status) => {
                    format!("the MCP endpoint {url} answered HTTP {}", status.status)
                }
                // `HTTP 404 Not Found: <body>`: the status is what matters.
                StreamableHttpError::UnexpectedServerResponse(text)
                    if text.starts_with("HTTP ") =>
                {
                    let status = text.split(':').next().unwrap_or_default();
                    if status.starts_with("HTTP 401") || status.starts_with("HTTP 403") {
                        refused
                    } else {
                        format!("the MCP endpoint {url} answered {status}")
                    }
                }
                StreamableHttpError::Client(error) => {
                    format!("cannot reach the MCP endpoint {url}: {}", root_cause(error))
                }
                StreamableHttpError::Io(error) => {
                    format!("cannot reach the MCP endpoint {url}: {}", root_cause(error))
                }
                _ => format!("{url} did not answer as an MCP endpoint"),
            };
        }
        cause = current.source();
    }
    format!("cannot reach the MCP endpoint {url}: {}", root_cause(error))
}

/// The innermost cause ("Connection refused (os error 111)", "failed to lookup address
/// information: …"): the part of an HTTP client's error chain that says what happened.
fn root_cause(error: &(dyn std::error::Error + 'static)) -> String {
    let mut current = error;
    while let Some(source) = current.source() {
        current = source;
    }
    current.to_string()
}

/// A JSON-RPC error comes from a live server that refused; anything else means the connection or
/// the session is gone.
fn lost_session(error: &rmcp::ServiceError) -> bool {
    !matches!(error, rmcp::ServiceError::McpError(_))
}
