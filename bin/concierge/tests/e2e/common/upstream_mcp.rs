//! An MCP server of the test's own, behind `kind = "mcp"` over Streamable HTTP: it shows what a
//! third-party server cannot be made to show (whether it was told to cancel, which credentials
//! and `_meta` reached it) and does what a hostile one would (a huge result, endless progress,
//! a list of thousands of tools).

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, ListToolsResult,
    PaginatedRequestParams, ProgressNotificationParam, ServerCapabilities, ServerConfig, Tool,
    ToolAnnotations,
};
use rmcp::service::RequestContext;
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::{StreamableHttpServerConfig, StreamableHttpService};
use rmcp::{ErrorData, RoleServer, ServerHandler};
use serde_json::{Value, json};

/// What the server saw.
#[derive(Default)]
pub struct Seen {
    /// Calls of `wait` under way or done.
    pub waiting: AtomicUsize,
    /// Calls of `wait` that were cancelled by the client (concierge).
    pub cancelled: AtomicUsize,
    /// The `Authorization` header and `_meta` of the last `whoami`.
    pub whoami: Mutex<Option<(Option<String>, Value)>>,
    /// The JSON-RPC id of the last `tools/call`.
    pub last_id: Mutex<Option<Value>>,
    /// The server's sessions, to forget them (what a restarted server does).
    pub sessions: std::sync::OnceLock<Arc<LocalSessionManager>>,
}

#[derive(Clone)]
pub struct TestUpstream {
    pub seen: Arc<Seen>,
    /// Tools listed besides the real ones (`filler-0` …).
    pub fillers: usize,
}

fn tool(name: &str) -> Tool {
    let schema = json!({"type": "object", "properties": {"bytes": {"type": "integer"}}});
    let mut hints = ToolAnnotations::default();
    hints.read_only_hint = Some(true);
    Tool::new(
        name.to_string(),
        format!("the test upstream's {name}"),
        Arc::new(schema.as_object().cloned().unwrap()),
    )
    .with_annotations(hints)
}

impl ServerHandler for TestUpstream {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
    }

    async fn list_tools(
        &self,
        _: Option<PaginatedRequestParams>,
        _: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        let mut tools: Vec<Tool> = ["wait", "whoami", "huge", "chatty", "steps", "report"]
            .into_iter()
            .map(tool)
            .collect();
        tools.extend((0..self.fillers).map(|i| tool(&format!("filler-{i}"))));
        Ok(ListToolsResult::with_all_items(tools))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let text =
            |text: String| Ok(CallToolResult::success(vec![ContentBlock::text(text)]).into());
        *self.seen.last_id.lock().unwrap() = serde_json::to_value(&context.id).ok();
        match request.name.as_ref() {
            "wait" => {
                self.seen.waiting.fetch_add(1, Ordering::SeqCst);
                tokio::select! {
                    () = context.ct.cancelled() => {
                        self.seen.cancelled.fetch_add(1, Ordering::SeqCst);
                        Err(ErrorData::internal_error("cancelled", None))
                    }
                    () = tokio::time::sleep(Duration::from_secs(60)) => text("waited".into()),
                }
            }
            "whoami" => {
                let authorization = context
                    .extensions
                    .get::<http::request::Parts>()
                    .and_then(|parts| parts.headers.get("authorization"))
                    .and_then(|value| value.to_str().ok())
                    .map(str::to_string);
                let meta = serde_json::to_value(&context.meta).unwrap_or_default();
                *self.seen.whoami.lock().unwrap() = Some((authorization, meta));
                text("seen".into())
            }
            "huge" => {
                let bytes = request
                    .arguments
                    .and_then(|a| a.get("bytes").and_then(Value::as_u64))
                    .unwrap_or(1024);
                text("x".repeat(bytes as usize))
            }
            "chatty" => {
                let token = context.meta.get_progress_token();
                let mut step = 0.0;
                loop {
                    step += 1.0;
                    if let Some(token) = &token {
                        let report = ProgressNotificationParam::new(token.clone(), step);
                        if context.peer.notify_progress(report).await.is_err() {
                            return Err(ErrorData::internal_error("gone", None));
                        }
                    }
                    if context.ct.is_cancelled() {
                        return Err(ErrorData::internal_error("cancelled", None));
                    }
                    tokio::task::yield_now().await;
                }
            }
            "steps" => {
                if let Some(token) = context.meta.get_progress_token() {
                    for step in 1..=3 {
                        let report = ProgressNotificationParam::new(token.clone(), f64::from(step))
                            .with_total(3.0);
                        let _ = context.peer.notify_progress(report).await;
                    }
                }
                text("three steps".into())
            }
            "report" => {
                let mut result = CallToolResult::success(vec![ContentBlock::text("Латте: 2")]);
                result.structured_content = Some(serde_json::json!({"items": 2, "name": "Латте"}));
                Ok(result.into())
            }
            _ => text("filler".into()),
        }
    }
}

/// `server` on a free loopback port over Streamable HTTP; its URL.
pub async fn serve(server: TestUpstream) -> String {
    let sessions = Arc::new(LocalSessionManager::default());
    let _ = server.seen.sessions.set(sessions.clone());
    let service = StreamableHttpService::new(
        move || Ok(server.clone()),
        sessions,
        StreamableHttpServerConfig::default(),
    );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/mcp", listener.local_addr().unwrap());
    let router = axum::Router::new().route_service("/mcp", service);
    tokio::spawn(async move { axum::serve(listener, router).await });
    url
}
