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
        // Texts no model should be handed whole: a 200 KB description, a 300-character title.
        let mut wordy = tool("wordy");
        wordy.description = Some("Говорит много. ".repeat(8_000).into());
        wordy.title = Some("Заголовок ".repeat(30));
        tools.push(wordy);
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
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/mcp", listener.local_addr().unwrap());
    let router = router(server);
    tokio::spawn(async move { axum::serve(listener, router).await });
    url
}

/// `server` over Streamable HTTP at `/mcp`, with sessions of its own.
pub fn router(server: TestUpstream) -> axum::Router {
    let sessions = Arc::new(LocalSessionManager::default());
    let _ = server.seen.sessions.set(sessions.clone());
    let service = StreamableHttpService::new(
        move || Ok(server.clone()),
        sessions,
        StreamableHttpServerConfig::default(),
    );
    axum::Router::new().route_service("/mcp", service)
}

/// `server` on stdin and stdout until stdin ends: what the test binary does when concierge
/// starts it as a `command` (see `federation_faults::stdio_upstream_program`).
pub async fn serve_stdio(server: TestUpstream) {
    use rmcp::ServiceExt;
    let running = server
        .serve((tokio::io::stdin(), tokio::io::stdout()))
        .await
        .expect("an MCP client on stdio");
    let _ = running.waiting().await;
}

/// A server that can be killed as a process is: everything it holds (its listener, every
/// connection) closes at once, and nothing of it answers after.
pub struct Killable {
    stop: Option<tokio::sync::oneshot::Sender<()>>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl Killable {
    /// `server` over Streamable HTTP on `port` of 127.0.0.1, on a runtime of its own.
    pub fn start(server: TestUpstream, port: u16) -> Self {
        let listener = std::net::TcpListener::bind(("127.0.0.1", port)).expect("the port is free");
        listener.set_nonblocking(true).unwrap();
        let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
        let thread = std::thread::spawn(move || {
            let runtime = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .unwrap();
            runtime.block_on(async move {
                let listener = tokio::net::TcpListener::from_std(listener).unwrap();
                tokio::select! {
                    _ = axum::serve(listener, router(server)) => {}
                    _ = stopped => {}
                }
            });
            // The runtime dropped here drops every connection's task: their sockets close.
        });
        Self {
            stop: Some(stop),
            thread: Some(thread),
        }
    }

    pub fn kill(mut self) {
        self.end();
    }

    fn end(&mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

impl Drop for Killable {
    fn drop(&mut self) {
        self.end();
    }
}
