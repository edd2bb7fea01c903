//! The rmcp edge: one endpoint as an rmcp `ServerHandler`. It turns JSON-RPC requests into
//! dispatcher calls and our answers ([`ToolAnswer`], [`TaskHandle`], [`TaskState`]) into rmcp's
//! types, and nothing else — an rmcp upgrade touches this file (and `serve.rs`, which mounts
//! rmcp's transport).

use std::sync::Arc;

use concierge_core::Caller;
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, CancelTaskParams, ContentBlock,
    CreateTaskResult, DetailedTask, GetTaskParams, GetTaskResult, Implementation,
    InputRequiredResult, ListToolsResult, PaginatedRequestParams, ServerCapabilities, ServerConfig,
    Task, TaskPayload, TaskStatus, ToolAnnotations, UpdateTaskParams,
};
use rmcp::model::{ServerNotification, SubscriptionFilter, ToolListChangedNotification};
use rmcp::service::{RequestContext, SubscriptionContext};
use rmcp::{ErrorData, RoleServer, ServerHandler};

use crate::endpoint::{CallAnswer, Endpoint, ToolAnswer, ToolTable};
use crate::pipeline::{RequestRecord, Transport};
use crate::transport::tasks::{POLL_MS, TTL, TaskError, TaskHandle, TaskState};
use crate::writes::Rounds;

/// One endpoint as an MCP server. Cheap to clone: the factory makes one per session (or per
/// request in stateless mode) and everything heavy is behind the `Arc`s.
#[derive(Clone)]
pub struct EndpointHandler {
    endpoint: Arc<Endpoint>,
    /// The caller when there is no HTTP request to carry one (stdio, a legacy SSE stream's
    /// opener).
    local_caller: Option<Caller>,
}

impl EndpointHandler {
    pub fn http(endpoint: Arc<Endpoint>) -> Self {
        Self {
            endpoint,
            local_caller: None,
        }
    }

    pub fn local(endpoint: Arc<Endpoint>, caller: Caller) -> Self {
        Self {
            endpoint,
            local_caller: Some(caller),
        }
    }

    fn caller(&self, context: &RequestContext<RoleServer>) -> Option<Caller> {
        self.parts(context)
            .and_then(|parts| parts.extensions.get::<Caller>().cloned())
            .or_else(|| self.local_caller.clone())
    }

    /// The request's record: the one the HTTP pipeline made, or (stdio) a new one.
    fn record(&self, context: &RequestContext<RoleServer>) -> RequestRecord {
        self.parts(context)
            .and_then(|parts| parts.extensions.get::<RequestRecord>().cloned())
            .unwrap_or_else(|| {
                RequestRecord::arrive(
                    &self.endpoint.path,
                    Transport::Stdio,
                    self.endpoint.audit_sink(),
                )
            })
    }

    /// Whether `task_id` is a task of this request's caller here (`-32602` otherwise).
    async fn callers_task(
        &self,
        task_id: &str,
        context: &RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        let caller = self
            .caller(context)
            .ok_or_else(|| ErrorData::internal_error("no authenticated caller", None))?;
        self.endpoint
            .callers_task(task_id, &caller)
            .await
            .map(|_| ())
            .map_err(task_error)
    }

    fn parts<'a>(
        &self,
        context: &'a RequestContext<RoleServer>,
    ) -> Option<&'a http::request::Parts> {
        context.extensions.get::<http::request::Parts>()
    }
}

/// rmcp's listing of each tool of `table`, from its spec: made once per table.
pub(crate) fn listings(table: &ToolTable) -> Arc<[rmcp::model::Tool]> {
    table.listings.get_or_init(|| listing_of(table)).clone()
}

fn listing_of(table: &ToolTable) -> Arc<[rmcp::model::Tool]> {
    table
        .iter()
        .map(|mounted| {
            let spec = mounted.spec();
            let mut annotations = ToolAnnotations::default();
            annotations.read_only_hint = Some(spec.annotations.read_only);
            annotations.destructive_hint = Some(spec.annotations.destructive);
            annotations.idempotent_hint = Some(spec.annotations.idempotent);
            annotations.open_world_hint = Some(spec.annotations.open_world);
            annotations.title = spec.title.clone();
            let listing = rmcp::model::Tool::new(
                spec.name.clone(),
                spec.description.clone(),
                Arc::new(spec.input_schema.clone()),
            )
            .with_annotations(annotations);
            // A tool that promises no structure (an upstream MCP tool without one) lists no
            // output schema: with one, the SDKs would demand structured content of it.
            if spec.output_schema.is_empty() {
                listing
            } else {
                listing.with_raw_output_schema(Arc::new(spec.output_schema.clone()))
            }
        })
        .collect()
}

pub fn server_identity() -> Implementation {
    Implementation::new("concierge", env!("CARGO_PKG_VERSION"))
}

/// A call's answer as rmcp's result or JSON-RPC error: the same for rmcp's transports and for
/// the stateless direct path (`direct_call.rs`).
pub(crate) fn reply_of(answer: CallAnswer) -> Result<CallToolResponse, ErrorData> {
    match answer {
        CallAnswer::Result(answer) => Ok(result_of(answer).into()),
        CallAnswer::UnknownTool(message) => Err(ErrorData::invalid_params(message, None)),
        CallAnswer::BrokenOutput(message) => Err(ErrorData::internal_error(message, None)),
        CallAnswer::InputRequired {
            input_requests,
            request_state,
        } => {
            let requests = serde_json::from_value(input_requests).map_err(|error| {
                ErrorData::internal_error(format!("an input request does not fit: {error}"), None)
            })?;
            Ok(CallToolResponse::InputRequired(InputRequiredResult::new(
                Some(requests),
                Some(request_state),
            )))
        }
    }
}

/// Whether a call of this tool ends when its client goes (cancels, or hangs up on the direct
/// path): a read, or another server's tool without the platform's write safety (the upstream is
/// told to stop). A write of our own runs on: its claim and its result must land together.
pub(crate) fn stops_with_its_client(spec: &concierge_core::ToolSpec) -> bool {
    spec.annotations.read_only || (spec.passes_through && spec.write.is_none())
}

/// What the client said about this call's rounds (MRTR): whether it can be asked through a
/// form (a 2026-07-28 request declaring form elicitation), and a retry's answers and state.
fn rounds_of(
    request: &mut CallToolRequestParams,
    context: &RequestContext<RoleServer>,
    progress: Option<concierge_core::Progress>,
) -> Rounds {
    let modern = context
        .meta
        .protocol_version()
        .is_some_and(|version| version.as_str() >= "2026-07-28");
    let can_elicit = modern
        && context
            .client_capabilities()
            .and_then(|c| c.elicitation)
            .is_some_and(|e| Rounds::elicits_forms(e.form.is_some(), e.url.is_some()));
    Rounds {
        progress,
        can_elicit,
        request_state: request.request_state.take(),
        input_responses: request
            .input_responses
            .take()
            .map(|responses| responses.into_iter().collect()),
    }
}

/// Progress reports sent to a client at once, and after that per second: a tool (or the server
/// behind it) that reports without end cannot flood a client's stream (one that stops reading
/// loses its live stream). Reports beyond are merged: the latest one goes next.
const PROGRESS_BURST: f64 = 8.0;
const PROGRESS_PER_SECOND: f64 = 20.0;

/// How long a call's answer waits for its last progress report to be written ahead of it.
/// The pacing holds a report back at most 1/[`PROGRESS_PER_SECOND`] s; a client that does not
/// read its stream gets its answer without the report.
const PROGRESS_FLUSH: std::time::Duration = std::time::Duration::from_millis(500);

/// A call's progress reports on their way to the client, sent with its own token in the order
/// reported, within [`PROGRESS_BURST`] and [`PROGRESS_PER_SECOND`]. The sender starts with the
/// first report: most tools report none, and rmcp's clients send a token with every call.
#[derive(Clone, Default)]
struct ProgressFeed(Arc<std::sync::Mutex<Feed>>);

#[derive(Default)]
enum Feed {
    #[default]
    Quiet,
    Sending(
        tokio::sync::watch::Sender<Report>,
        tokio::task::JoinHandle<()>,
    ),
    /// The call has answered: a report now would reach the client after the result, which
    /// the protocol forbids, so it is dropped.
    Ended,
}

impl ProgressFeed {
    /// The request's feed and the [`Progress`](concierge_core::Progress) a tool reports to;
    /// none when the client asked for none.
    fn of(context: &RequestContext<RoleServer>) -> Option<(Self, concierge_core::Progress)> {
        let token = context.meta.get_progress_token()?;
        let peer = context.peer.clone();
        let feed = Self::default();
        let state = feed.0.clone();
        let progress = concierge_core::Progress::new(move |progress, total, message| {
            let mut state = state.lock().unwrap_or_else(|p| p.into_inner());
            let report = Some((progress, total, message));
            match &mut *state {
                Feed::Quiet => {
                    let (sender, reports) = tokio::sync::watch::channel(None);
                    sender.send_replace(report);
                    let task = tokio::spawn(send_progress(reports, peer.clone(), token.clone()));
                    *state = Feed::Sending(sender, task);
                }
                Feed::Sending(sender, _) => {
                    sender.send_replace(report);
                }
                Feed::Ended => {}
            }
        });
        Some((feed, progress))
    }

    /// Ends the feed as the call answers: a report still held back (the latest) is written
    /// before the answer, within [`PROGRESS_FLUSH`]; none goes after it.
    async fn end(&self) {
        let state = std::mem::replace(
            &mut *self.0.lock().unwrap_or_else(|p| p.into_inner()),
            Feed::Ended,
        );
        if let Feed::Sending(sender, mut task) = state {
            drop(sender);
            if tokio::time::timeout(PROGRESS_FLUSH, &mut task)
                .await
                .is_err()
            {
                task.abort();
            }
        }
    }
}

/// One progress report: how far, of how much, a message.
type Report = Option<(f64, Option<f64>, Option<String>)>;

/// Sends a call's reports until the call ends (its sender drops) or the client is gone.
async fn send_progress(
    mut reports: tokio::sync::watch::Receiver<Report>,
    peer: rmcp::service::Peer<RoleServer>,
    token: rmcp::model::ProgressToken,
) {
    let mut tokens = PROGRESS_BURST;
    let mut last = tokio::time::Instant::now();
    while reports.changed().await.is_ok() {
        let now = tokio::time::Instant::now();
        tokens = (tokens + (now - last).as_secs_f64() * PROGRESS_PER_SECOND).min(PROGRESS_BURST);
        last = now;
        if tokens < 1.0 {
            let wait = (1.0 - tokens) / PROGRESS_PER_SECOND;
            tokio::time::sleep(std::time::Duration::from_secs_f64(wait)).await;
            tokens = 1.0;
            last = tokio::time::Instant::now();
        }
        tokens -= 1.0;
        let Some((progress, total, message)) = reports.borrow_and_update().clone() else {
            continue;
        };
        let mut param = rmcp::model::ProgressNotificationParam::new(token.clone(), progress);
        param.total = total;
        param.message = message;
        if peer.notify_progress(param).await.is_err() {
            return;
        }
    }
}

fn result_of(answer: ToolAnswer) -> CallToolResult {
    // Read back into rmcp's type, which it was before the app wrote it as JSON; should an
    // upstream's block be one rmcp cannot read, the client gets its JSON as text.
    if let Some(passed) = answer.passed {
        let mut result: CallToolResult = serde_json::from_value(passed).unwrap_or_else(|_| {
            let mut result = CallToolResult::error(vec![ContentBlock::text(answer.text)]);
            result.is_error = Some(answer.is_error);
            result
        });
        // An upstream of an older revision sends none; rmcp drops it again for such a client.
        result.result_type = Some(rmcp::model::ResultType::COMPLETE);
        return result;
    }
    let content = vec![ContentBlock::text(answer.text)];
    let mut result = if answer.is_error {
        CallToolResult::error(content)
    } else {
        CallToolResult::success(content)
    };
    result.structured_content = answer.structured;
    result
}

fn task(id: String, status_message: String) -> Task {
    let now = chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Secs, true);
    Task::new(id, TaskStatus::Working, now.clone(), now)
        .with_ttl_ms(TTL.as_millis() as u64)
        .with_poll_interval_ms(POLL_MS)
        .with_status_message(status_message)
}

fn created(handle: TaskHandle) -> CreateTaskResult {
    CreateTaskResult::new(task(handle.id, handle.status_message))
}

fn task_result(state: TaskState) -> GetTaskResult {
    let payload = match state.done {
        None => TaskPayload::Working,
        Some(answer) => {
            let value = serde_json::to_value(result_of(answer)).unwrap_or_default();
            TaskPayload::Completed {
                result: value.as_object().cloned().unwrap_or_default(),
            }
        }
    };
    GetTaskResult::new(DetailedTask::new(
        task(state.id, state.status_message),
        payload,
    ))
}

fn task_error(error: TaskError) -> ErrorData {
    match error {
        TaskError::Unknown => ErrorData::invalid_params("unknown task", None),
        TaskError::Unavailable(detail) => ErrorData::internal_error(
            "the job's status is unavailable right now; poll again later",
            detail,
        ),
        TaskError::Broken(message) => ErrorData::internal_error(message, None),
    }
}

/// The request's client declared the Tasks extension (per request in 2026-07-28, at
/// `initialize` before): `tasks/*` is refused with `-32021` otherwise, before any task is looked
/// up, as SEP-2663 says.
fn declared_tasks(context: &RequestContext<RoleServer>) -> Result<(), ErrorData> {
    if context
        .client_capabilities()
        .is_some_and(|c| c.supports_tasks())
    {
        return Ok(());
    }
    let required = serde_json::from_value(serde_json::json!({
        "extensions": {rmcp::model::TASKS_EXTENSION_ID: {}}
    }))
    .map_err(|e| ErrorData::internal_error(e.to_string(), None))?;
    Err(ErrorData::missing_required_client_capability(required))
}

impl ServerHandler for EndpointHandler {
    async fn get_task(
        &self,
        request: GetTaskParams,
        context: RequestContext<RoleServer>,
    ) -> Result<GetTaskResult, ErrorData> {
        declared_tasks(&context)?;
        let caller = self
            .caller(&context)
            .ok_or_else(|| ErrorData::internal_error("no authenticated caller", None))?;
        let record = self.record(&context);
        let rpc_id = context.id.clone().into_json_value();
        // Boxed for the reason `call_tool` boxes its call.
        Box::pin(
            self.endpoint
                .task_state(&request.task_id, caller, rpc_id, &record),
        )
        .await
        .map(task_result)
        .map_err(task_error)
    }

    /// `tasks/update`: a followed job asks for no input, so answers are taken and ignored (as
    /// the extension says of answers to nothing asked) once the task is the caller's.
    async fn update_task(
        &self,
        request: UpdateTaskParams,
        context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        declared_tasks(&context)?;
        self.callers_task(&request.task_id, &context).await
    }

    /// `tasks/cancel`: a followed job is a write already sent to the backend; it cannot be
    /// recalled, and the caller is told so rather than acknowledged.
    async fn cancel_task(
        &self,
        request: CancelTaskParams,
        context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        declared_tasks(&context)?;
        self.callers_task(&request.task_id, &context).await?;
        Err(ErrorData::invalid_request(
            "this task is a write the backend has already accepted; it runs to its end and cannot be cancelled",
            None,
        ))
    }

    /// A 2025-11-25 session: told `notifications/tools/list_changed` on its stream whenever the
    /// endpoint's tools change (an upstream server's list, a tool hidden while its server is
    /// down), until the session ends. The watch looks every half minute whether the session
    /// is gone, so an idle one holds no task for long.
    async fn on_initialized(&self, context: rmcp::service::NotificationContext<RoleServer>) {
        let mut changes = self.endpoint.changes();
        let peer = context.peer;
        tokio::spawn(async move {
            let mut looks = tokio::time::interval(std::time::Duration::from_secs(30));
            loop {
                tokio::select! {
                    changed = changes.recv() => match changed {
                        Ok(()) | Err(tokio::sync::broadcast::error::RecvError::Lagged(_)) => {
                            if peer.notify_tool_list_changed().await.is_err() {
                                return;
                            }
                        }
                        Err(tokio::sync::broadcast::error::RecvError::Closed) => return,
                    },
                    _ = looks.tick() => if peer.is_transport_closed() {
                        return;
                    },
                }
            }
        });
    }

    /// `subscriptions/listen` (2026-07-28): the endpoint's tools changing is all there is to hear.
    fn accepted_subscription_filter(
        &self,
        requested: &SubscriptionFilter,
    ) -> Option<SubscriptionFilter> {
        let mut accepted = SubscriptionFilter::default();
        accepted.tools_list_changed = requested.tools_list_changed;
        Some(accepted)
    }

    /// One listen stream: each change of the tools, until the client closes it.
    async fn listen(&self, context: SubscriptionContext) -> Result<(), ErrorData> {
        let mut changes = self.endpoint.changes();
        loop {
            tokio::select! {
                () = context.cancelled() => return Ok(()),
                changed = changes.recv() => match changed {
                    Ok(()) | Err(tokio::sync::broadcast::error::RecvError::Lagged(_)) => {
                        let notification = ServerNotification::ToolListChangedNotification(
                            ToolListChangedNotification::default(),
                        );
                        if context.sink().send(notification).await.is_err() {
                            return Ok(());
                        }
                    }
                    Err(tokio::sync::broadcast::error::RecvError::Closed) => return Ok(()),
                },
            }
        }
    }

    /// A tool's listing by name: rmcp checks a 2026-07-28 call's `Mcp-Param-*` headers against
    /// the `x-mcp-header` annotations of its input schema.
    fn get_tool(&self, name: &str) -> Option<rmcp::model::Tool> {
        let table = self.endpoint.tools();
        let index = table.iter().position(|t| t.spec().name == name)?;
        Some(listings(&table)[index].clone())
    }

    fn get_info(&self) -> ServerConfig {
        let capabilities = if self.endpoint.offers_tasks() {
            ServerCapabilities::builder()
                .enable_tools()
                .enable_tool_list_changed()
                .enable_tasks()
                .build()
        } else {
            ServerCapabilities::builder()
                .enable_tools()
                .enable_tool_list_changed()
                .build()
        };
        let mut config = ServerConfig::new(capabilities);
        config.server_info = server_identity();
        config.instructions = self.endpoint.instructions();
        config
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        let caller = self.caller(&context);
        let table = self.endpoint.tools();
        let listings = listings(&table);
        Ok(ListToolsResult::with_all_items(
            self.endpoint
                .visible_to(&table, caller.as_ref())
                .map(|i| listings[i].clone())
                .collect(),
        ))
    }

    async fn call_tool(
        &self,
        mut request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        // Authentication runs before rmcp; a missing caller means a wiring fault, not a client's.
        let caller = self
            .caller(&context)
            .ok_or_else(|| ErrorData::internal_error("no authenticated caller", None))?;
        let record = self.record(&context);
        let rpc_id = context.id.clone().into_json_value();
        let tasks = context
            .client_capabilities()
            .is_some_and(|c| c.supports_tasks());
        // Boxed: the call's state machine (pipeline, writes, the tool's own future) is many
        // kilobytes, and rmcp spawns a task per request whose future would hold it inline —
        // tokio then copies it on every spawn and poll setup (measured: most of a call's memcpy).
        let feed = ProgressFeed::of(&context);
        let rounds = rounds_of(
            &mut request,
            &context,
            feed.as_ref().map(|(_, progress)| progress.clone()),
        );
        let call = Box::pin(self.endpoint.call_in_rounds(
            &request.name,
            request.arguments,
            caller.clone(),
            rpc_id,
            &rounds,
            &record,
        ));
        // A call the client cancels (`notifications/cancelled`) is dropped here, and with it
        // whatever it waits on (an upstream MCP server is told to stop too); the record says
        // `cancelled`. Only a read, or another server's tool without the platform's write
        // safety: a write of our own runs on, its claim and its result must land together.
        let reads = (self.endpoint.tool(&request.name))
            .is_some_and(|tool| stops_with_its_client(tool.spec()));
        let answer = tokio::select! {
            answer = call => Some(answer),
            () = context.ct.cancelled(), if reads => None,
        };
        if let Some((feed, _)) = &feed {
            feed.end().await;
        }
        let Some(answer) = answer else {
            return Err(ErrorData::internal_error(
                "the client cancelled the call",
                None,
            ));
        };
        match answer {
            // A write that started a background job, for a client that follows tasks.
            CallAnswer::Result(answer) if tasks => {
                match Box::pin(self.endpoint.task_for(&request.name, &caller, &answer)).await {
                    Some(handle) => Ok(CallToolResponse::Task(created(handle))),
                    None => Ok(result_of(answer).into()),
                }
            }
            answer => reply_of(answer),
        }
    }
}
