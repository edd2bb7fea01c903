//! One mounted endpoint's tools and policies, and the dispatcher that runs every tool call.
//!
//! The order is fixed and the same for every app: find the tool → scopes → rate limits (per
//! client, and `rate_limit` for reads, or for every call without a write limiter) → validate
//! arguments → run (write safety first for write tools) → shape the result → audit. The write
//! limiter is not among the early limits: it counts only calls that are about to write, so it is
//! taken where the write starts (`writes::Writes::run` once the key is claimed, or just before a
//! write tool without write safety runs). Each refusal is audited too, with its error document as
//! the output.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Instant;

use concierge_core::{
    AuditEvent, CallContext, Caller, ErrorKind, Language, LimitPolicy, Outcome, RateLimitStore,
    RetryAfter, Tool, ToolError, audit_output, audit_output_of, redact,
};
use rmcp::model::{CallToolResult, ContentBlock, ToolAnnotations};
use serde_json::{Map, Value, json};

use crate::audit::AuditSink;
use crate::validate::ArgumentValidator;
use crate::writes::WriteCode;

/// A tool as one endpoint serves it.
pub struct MountedTool {
    pub tool: Arc<dyn Tool>,
    pub language: Language,
    pub validator: ArgumentValidator,
    pub listing: rmcp::model::Tool,
    /// The output schema, compiled when results are checked against it ([`checks_outputs`]).
    output: Option<jsonschema::Validator>,
}

/// Whether every success result is checked against its tool's declared output schema before it
/// leaves: always in debug builds, so every test that drives a tool proves its results are what
/// real clients accept (the Python SDK and the Inspector refuse a result that breaks the schema);
/// in a release build when `CONCIERGE_CHECK_OUTPUT=1`. A result that fails the check is not sent:
/// the call answers a JSON-RPC internal error naming the tool and the broken field, so the test
/// that caused it fails.
pub fn checks_outputs() -> bool {
    static ON: std::sync::LazyLock<bool> = std::sync::LazyLock::new(|| {
        cfg!(debug_assertions) || std::env::var("CONCIERGE_CHECK_OUTPUT").is_ok_and(|v| v == "1")
    });
    *ON
}

impl MountedTool {
    pub fn new(tool: Arc<dyn Tool>, language: Language) -> Result<Self, String> {
        let spec = tool.spec();
        let validator = ArgumentValidator::new(&spec.input_schema)
            .map_err(|e| format!("tool `{}` has an invalid input schema: {e}", spec.name))?;
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
        .with_raw_output_schema(Arc::new(spec.output_schema.clone()))
        .with_annotations(annotations);
        let output =
            if checks_outputs() {
                let schema = Value::Object(spec.output_schema.clone());
                Some(jsonschema::draft202012::new(&schema).map_err(|e| {
                    format!("tool `{}` has an invalid output schema: {e}", spec.name)
                })?)
            } else {
                None
            };
        Ok(Self {
            tool,
            language,
            validator,
            listing,
            output,
        })
    }
}

/// Everything an endpoint needs at call time; shared by all its sessions.
pub struct Endpoint {
    pub path: String,
    pub instructions: Option<String>,
    tools: Vec<MountedTool>,
    by_name: HashMap<String, usize>,
    pub limiter: Option<Arc<dyn RateLimitStore>>,
    pub audit: Option<AuditSink>,
    /// Callers hold OAuth scopes here, and tools are checked against them.
    scoped: bool,
    limits: Limits,
    /// Idempotency records and confirm tokens, for tools that declare write safety.
    writes: Option<Arc<crate::writes::Writes>>,
    /// Refuse calls without scopes with the HTTP 403 step-up challenge (else as a tool error).
    pub scope_challenge: bool,
}

/// The write class, the per-client limit, and what limits count per.
#[derive(Default)]
pub struct Limits {
    pub write: Option<Arc<dyn RateLimitStore>>,
    pub per_client: Option<Arc<dyn RateLimitStore>>,
    /// Sessions opened per principal (see [`Endpoint::admit_initialize`]).
    pub sessions: Option<Arc<dyn RateLimitStore>>,
    pub key: crate::config::RateKey,
}

/// What a tool call came to, before it is shaped for the protocol.
pub enum CallAnswer {
    Result(CallToolResult),
    UnknownTool(String),
    /// A result that broke its tool's output schema (only when [`checks_outputs`]): our fault,
    /// answered as a JSON-RPC internal error.
    BrokenOutput(String),
}

impl Endpoint {
    pub fn new(
        path: String,
        instructions: Option<String>,
        tools: Vec<MountedTool>,
        limiter: Option<Arc<dyn RateLimitStore>>,
        audit: Option<AuditSink>,
    ) -> Self {
        let by_name = tools
            .iter()
            .enumerate()
            .map(|(i, t)| (t.tool.spec().name.clone(), i))
            .collect();
        Self {
            path,
            instructions,
            tools,
            by_name,
            limiter,
            audit,
            scoped: false,
            limits: Limits::default(),
            writes: None,
            scope_challenge: true,
        }
    }

    pub fn scope_challenge(mut self, challenge: bool) -> Self {
        self.scope_challenge = challenge;
        self
    }

    pub fn writes(mut self, writes: Option<Arc<crate::writes::Writes>>) -> Self {
        self.writes = writes;
        self
    }

    /// Limits beyond `rate_limit`: the write class, per client, what they count per.
    pub fn limits(mut self, limits: Limits) -> Self {
        self.limits = limits;
        self
    }

    /// The key limits count `caller` under (`rate_limit_key`).
    fn rate_key(&self, caller: &Caller) -> String {
        use crate::config::RateKey;
        match self.limits.key {
            RateKey::Client => caller.client.clone(),
            RateKey::Token => caller
                .token
                .as_ref()
                .map_or_else(|| caller.client.clone(), |t| format!("token:{t}")),
            RateKey::User => caller
                .user
                .as_ref()
                .map_or_else(|| caller.client.clone(), |u| format!("user:{u}")),
        }
    }

    /// The limiters a call passes before it is validated, each with the key it counts: per client
    /// first, then `rate_limit`. With a write limiter, a write tool's call passes only the per
    /// client one here: the write budget is taken where the write happens ([`Self::write_gate`]).
    fn limiters_for(
        &self,
        read_only: bool,
        caller: &Caller,
    ) -> Vec<(&Arc<dyn RateLimitStore>, String)> {
        let mut out = Vec::new();
        if let Some(limiter) = &self.limits.per_client {
            out.push((limiter, caller.client.clone()));
        }
        if (read_only || self.limits.write.is_none())
            && let Some(limiter) = &self.limiter
        {
            out.push((limiter, self.rate_key(caller)));
        }
        out
    }

    /// The write budget of a call, taken only when the call is about to reach the tool's write:
    /// a dry run, a confirmation preview, an idempotent replay and a refused call never write,
    /// so they must not use up the budget that protects the backend (seed §8: 10 writes a
    /// minute because of the GBP API's limits). `None`: no write limiter applies.
    fn write_gate(
        &self,
        read_only: bool,
        caller: &Caller,
        language: Language,
    ) -> Option<impl Fn() -> Result<(), ToolError> + Send + Sync + use<'_>> {
        let limiter = self.limits.write.as_ref().filter(|_| !read_only)?;
        let key = self.rate_key(caller);
        Some(move || {
            limiter
                .check(&key)
                .map_err(|retry| rate_limited(language, limiter.as_ref(), retry))
        })
    }

    /// Checks tools against the caller's OAuth scopes (endpoints with `kind = "oauth"`).
    pub fn scoped(mut self, scoped: bool) -> Self {
        self.scoped = scoped;
        self
    }

    /// Whether any tool here needs a scope: only then is a call's body read before rmcp's.
    pub fn has_scoped_tools(&self) -> bool {
        self.scoped && self.tools.iter().any(|t| !t.tool.spec().scopes.is_empty())
    }

    /// The scopes a call of tool `name` needs that `caller` lacks (empty when none, when the tool
    /// is unknown, or on endpoints without scopes).
    pub fn scopes_missing_for(&self, name: &str, caller: &Caller) -> Vec<String> {
        self.by_name
            .get(name)
            .map(|i| {
                self.missing_scopes(&self.tools[*i], caller)
                    .into_iter()
                    .map(str::to_string)
                    .collect()
            })
            .unwrap_or_default()
    }

    /// Records a call refused for lack of scopes before it reached the dispatcher.
    pub fn audit_forbidden(&self, caller: &Caller, tool: &str, started: Instant) {
        let mut event = self.event(trace_id());
        event.client = Some(caller.client.clone());
        event.user = caller.user.clone();
        event.tool = Some(tool.to_string());
        event.outcome = Outcome::Forbidden;
        event.code = Some("insufficient_scope".into());
        self.finish(event, started);
    }

    /// The scopes `tool` needs that `caller` lacks (none on endpoints without scopes).
    fn missing_scopes<'a>(&self, tool: &'a MountedTool, caller: &Caller) -> Vec<&'a str> {
        if !self.scoped {
            return Vec::new();
        }
        tool.tool
            .spec()
            .scopes
            .iter()
            .filter(|s| !caller.scopes.contains(s))
            .map(String::as_str)
            .collect()
    }

    pub fn listings(&self) -> Vec<rmcp::model::Tool> {
        self.tools.iter().map(|t| t.listing.clone()).collect()
    }

    /// The tools `caller` may call: a token without a tool's scopes does not see the tool.
    pub fn listings_for(&self, caller: Option<&Caller>) -> Vec<rmcp::model::Tool> {
        self.tools
            .iter()
            .filter(|t| caller.is_none_or(|c| self.missing_scopes(t, c).is_empty()))
            .map(|t| t.listing.clone())
            .collect()
    }

    pub fn tool_names(&self) -> Vec<&str> {
        self.tools.iter().map(|t| t.listing.name.as_ref()).collect()
    }

    /// Records a refusal that happened before any tool was chosen (auth, session).
    pub fn audit_refusal(
        &self,
        client: Option<&str>,
        outcome: Outcome,
        code: Option<&str>,
        started: Instant,
    ) {
        let mut event = self.event(trace_id());
        event.client = client.map(String::from);
        event.outcome = outcome;
        event.code = code.map(String::from);
        self.finish(event, started);
    }

    /// An `initialize` that opens a session (or a legacy SSE stream) takes one unit of the
    /// caller's session budget: twice `max_sessions_per_client` openings a minute. Opening sessions is
    /// work and memory, so it cannot be free; and a budget of its own leaves the tool-call
    /// budget (`rate_limit`) to calls. Refused: the message (in the endpoint's language) and
    /// the seconds to wait.
    pub fn admit_initialize(&self, caller: &Caller) -> Result<(), (String, u64)> {
        let Some(limiter) = &self.limits.sessions else {
            return Ok(());
        };
        let language = self.tools.first().map_or(Language::English, |t| t.language);
        limiter.check(&caller.principal()).map_err(|retry| {
            let seconds = whole_seconds(retry);
            (
                rate_limit_message(language, &limiter.describe(), limiter.policy(), seconds),
                seconds,
            )
        })
    }

    /// An audit event of this endpoint with nothing known yet but the time and the trace id.
    fn event(&self, trace_id: String) -> AuditEvent {
        AuditEvent {
            ts: now(),
            endpoint: self.path.clone(),
            client: None,
            user: None,
            tool: None,
            rpc_id: None,
            trace_id,
            arguments: None,
            result_count: None,
            output: None,
            outcome: Outcome::Ok,
            code: None,
            duration_ms: 0.0,
            notes: None,
        }
    }

    /// Runs one `tools/call` through the platform's fixed sequence.
    pub async fn call(
        &self,
        name: &str,
        arguments: Option<Map<String, Value>>,
        caller: Caller,
        rpc_id: Value,
    ) -> CallAnswer {
        let started = Instant::now();
        let trace = trace_id();
        let mut event = self.event(trace.clone());
        event.client = Some(caller.client.clone());
        event.user = caller.user.clone();
        event.tool = Some(name.to_string());
        event.rpc_id = Some(rpc_id);
        let Some(mounted) = self.by_name.get(name).map(|i| &self.tools[*i]) else {
            event.arguments =
                arguments.map(|a| Value::Object(crate::validate::without_any_injected(a)));
            event.outcome = Outcome::UnknownTool;
            self.finish(event, started);
            return CallAnswer::UnknownTool(format!(
                "unknown tool `{name}`; this endpoint has: {}",
                self.tool_names().join(", ")
            ));
        };
        let spec = mounted.tool.spec();
        event.arguments = arguments.as_ref().map(|a| {
            redact(
                &Value::Object(mounted.validator.without_injected(a)),
                &spec.secret_fields,
            )
        });

        let missing = self.missing_scopes(mounted, &caller);
        if !missing.is_empty() {
            event.outcome = Outcome::Forbidden;
            event.code = Some("insufficient_scope".into());
            let document = json!({"error": {
                "code": "insufficient_scope",
                "message": format!(
                    "this tool needs the scope(s) {}; the access token was not granted them — sign in again and allow them",
                    missing.join(", ")
                ),
                "scopes": missing,
                "status": 403,
            }});
            event.output = Some(audit_output(&document, &spec.secret_fields));
            self.finish(event, started);
            return CallAnswer::Result(envelope_result(document));
        }

        for (limiter, key) in self.limiters_for(spec.annotations.read_only, &caller) {
            if let Err(retry) = limiter.check(&key) {
                let error = rate_limited(mounted.language, limiter.as_ref(), retry);
                event.outcome = Outcome::RateLimited;
                event.code = Some("rate_limited".into());
                let document = *error.envelope.unwrap_or_default();
                event.output = Some(audit_output(&document, &spec.secret_fields));
                self.finish(event, started);
                return CallAnswer::Result(envelope_result(document));
            }
        }

        let arguments = match mounted.validator.check(arguments, mounted.language) {
            Ok(arguments) => arguments,
            Err(error) => {
                event.outcome = Outcome::InvalidArgument;
                event.code = Some("invalid_argument".into());
                let document = match spec.argument_error {
                    Some(envelope) => envelope(&error.field, &error.message),
                    None => json!({"error": {
                        "code": "invalid_argument",
                        "field": error.field,
                        "message": error.message,
                    }}),
                };
                event.output = Some(audit_output(&document, &spec.secret_fields));
                self.finish(event, started);
                return CallAnswer::Result(envelope_result(document));
            }
        };

        let gate = self.write_gate(spec.annotations.read_only, &caller, mounted.language);
        let context = CallContext::new(caller, trace.clone());
        let (outcome, write_code) = match (spec.write, &self.writes) {
            (Some(safety), Some(writes)) => {
                let gate = gate.as_ref().map(|g| g as &(dyn Fn() -> _ + Send + Sync));
                writes
                    .run(
                        &self.path,
                        mounted.tool.as_ref(),
                        safety,
                        arguments,
                        context.clone(),
                        mounted.language,
                        gate,
                    )
                    .await
            }
            _ => match gate.as_ref().map(|g| g()) {
                Some(Err(limited)) => (Err(limited), WriteCode::RateLimited),
                _ => (
                    mounted.tool.call(arguments, context.clone()).await,
                    WriteCode::Executed,
                ),
            },
        };
        if write_code == WriteCode::RateLimited {
            event.outcome = Outcome::RateLimited;
            event.code = Some("rate_limited".into());
            let document = *outcome.err().and_then(|e| e.envelope).unwrap_or_default();
            event.output = Some(audit_output(&document, &spec.secret_fields));
            self.finish(event, started);
            return CallAnswer::Result(envelope_result(document));
        }
        let write_code = write_code.audit_code();
        let answer = match outcome {
            Ok(mut output) => {
                event.code = write_code.map(str::to_string);
                strip_nulls(&mut output);
                if let Some(broken) = mounted
                    .output
                    .as_ref()
                    .and_then(|schema| schema.iter_errors(&output).next())
                {
                    // Masked: the message names the place and the rule, never the data.
                    let message = format!(
                        "the result of `{name}` does not match its outputSchema at `{}`: {}",
                        broken.instance_path(),
                        broken.masked()
                    );
                    tracing::error!(trace_id = %trace, tool = name, %message, "broken result");
                    event.outcome = Outcome::InternalError;
                    event.code = Some("output_schema_violation".into());
                    event.output = Some(json!({"error": {
                        "code": "output_schema_violation",
                        "message": &message,
                    }}));
                    self.finish(event, started);
                    return CallAnswer::BrokenOutput(message);
                }
                event.result_count = Some(result_count(&output));
                let text = output.to_string();
                event.output = Some(audit_output_of(&output, &text, &spec.secret_fields));
                let mut result = CallToolResult::success(vec![ContentBlock::text(text)]);
                result.structured_content = Some(output);
                result
            }
            Err(error) => {
                event.outcome = outcome_of(&error);
                event.code = Some(error.code.to_string());
                if let Some(detail) = &error.detail {
                    tracing::error!(trace_id = %trace, tool = name, code = error.code, %detail, "tool failed");
                }
                let document = match error.envelope {
                    Some(envelope) => *envelope,
                    None => json!({ "error": error_body(&error, &trace) }),
                };
                event.output = Some(audit_output(&document, &spec.secret_fields));
                envelope_result(document)
            }
        };
        let notes = context.notes();
        event.notes = (!notes.is_empty()).then_some(notes);
        self.finish(event, started);
        CallAnswer::Result(answer)
    }

    fn finish(&self, mut event: AuditEvent, started: Instant) {
        event.duration_ms = elapsed_ms(started);
        if let Some(sink) = &self.audit {
            sink.record(event);
        }
    }
}

fn outcome_of(error: &ToolError) -> Outcome {
    match error.kind {
        ErrorKind::InvalidArgument => Outcome::InvalidArgument,
        ErrorKind::NotFound => Outcome::NotFound,
        ErrorKind::Rejected => Outcome::Rejected,
        ErrorKind::Internal => Outcome::InternalError,
    }
}

/// The client-visible error: code, message, field. Internal failures add only the trace id, so an
/// operator can find the logged detail.
fn error_body(error: &ToolError, trace: &str) -> Value {
    let mut body = json!({"code": error.code, "message": error.message});
    if let Some(field) = &error.field {
        body["field"] = json!(field);
    }
    if error.kind == ErrorKind::Internal {
        body["traceId"] = json!(trace);
    }
    body
}

/// An error document (the app's own, or the platform's `{"error": {…}}`), as the result's
/// text, `isError: true`.
///
/// Errors never carry `structuredContent`: a tool's output schema describes its results, and the
/// TypeScript SDK and the MCP Inspector validate `structuredContent` against it even on errors
/// (an error document lacking `results` is shown as a schema failure instead of the error). The
/// text holds the whole document, which every client shows the model.
fn envelope_result(envelope: Value) -> CallToolResult {
    CallToolResult::error(vec![ContentBlock::text(envelope.to_string())])
}

/// The wait a refusal names: whole seconds, at least one (`Retry-After` takes no fractions).
fn whole_seconds(retry: RetryAfter) -> u64 {
    retry.0.as_secs_f64().ceil().max(1.0) as u64
}

/// A refusal by `limiter`, as the platform's error document in the error's envelope.
fn rate_limited(language: Language, limiter: &dyn RateLimitStore, retry: RetryAfter) -> ToolError {
    let seconds = whole_seconds(retry);
    let message = rate_limit_message(language, &limiter.describe(), limiter.policy(), seconds);
    ToolError::rejected("rate_limited", message.clone()).with_envelope(json!({"error": {
        "code": "rate_limited",
        "message": message,
        "retryAfterSeconds": seconds,
    }}))
}

/// The refusal names the limit and how it counts, so a caller knows whether waiting
/// `seconds` buys one call (a bucket) or the oldest call leaving the window (a sliding window).
fn rate_limit_message(
    language: Language,
    limit: &str,
    policy: LimitPolicy,
    seconds: u64,
) -> String {
    let sliding = policy == LimitPolicy::SlidingWindow;
    match language {
        Language::Russian => {
            let how = if sliding {
                "скользящее окно"
            } else {
                "корзина с пополнением"
            };
            format!(
                "Превышен лимит вызовов для этого клиента ({limit}, {how}). Повторите через {seconds} с."
            )
        }
        Language::Chinese => {
            let how = if sliding { "滑动窗口" } else { "令牌桶" };
            format!("该客户端的调用次数已超过限制（{limit}，{how}），请在 {seconds} 秒后重试。")
        }
        Language::German => {
            let how = if sliding {
                "gleitendes Fenster"
            } else {
                "Token-Bucket"
            };
            format!(
                "Aufruflimit für diesen Client erreicht ({limit}, {how}). Bitte in {seconds} s erneut versuchen."
            )
        }
        Language::English => {
            let how = if sliding {
                "sliding window"
            } else {
                "token bucket"
            };
            format!("Rate limit for this client reached ({limit}, {how}). Retry in {seconds} s.")
        }
    }
}

/// Lists are `{"results": [...]}`; anything else is one result.
fn result_count(output: &Value) -> usize {
    match output.get("results") {
        Some(Value::Array(items)) => items.len(),
        _ => 1,
    }
}

/// Compact output: a null is noise a model pays tokens for. In place: results can be large.
fn strip_nulls(value: &mut Value) {
    match value {
        Value::Object(object) => {
            object.retain(|_, v| !v.is_null());
            object.values_mut().for_each(strip_nulls);
        }
        Value::Array(items) => items.iter_mut().for_each(strip_nulls),
        _ => {}
    }
}

fn now() -> String {
    chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Millis, true)
}

fn trace_id() -> String {
    uuid::Uuid::new_v4().simple().to_string()
}

fn elapsed_ms(started: Instant) -> f64 {
    (started.elapsed().as_secs_f64() * 1000.0 * 1000.0).round() / 1000.0
}

/// MCP Tasks for writes that declare a [`FollowUp`]: the task id names the job and the status
/// tool, sealed to the caller (`<status tool>~<job id>~<seal>`), so nothing is stored and only the
/// caller that started the job can follow it.
///
/// [`FollowUp`]: concierge_core::FollowUp
mod tasks {
    use std::time::Duration;

    use rmcp::model::{CreateTaskResult, DetailedTask, GetTaskResult, Task, TaskPayload};
    use serde_json::{Value, json};

    use super::{CallAnswer, Caller, Endpoint};

    const TTL: Duration = Duration::from_secs(24 * 3600);
    const POLL: u64 = 2000;
    const SEPARATOR: char = '~';

    fn binding(endpoint: &str, caller: &Caller, status_tool: &str, job: &str) -> String {
        format!(
            "task\u{0}{endpoint}\u{0}{}\u{0}{}\u{0}{status_tool}\u{0}{job}",
            caller.client,
            caller.user.as_deref().unwrap_or("")
        )
    }

    fn now() -> String {
        chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Secs, true)
    }

    impl Endpoint {
        /// Whether a client that supports tasks may get some call here as a task.
        pub fn offers_tasks(&self) -> bool {
            self.writes.is_some() && self.tools.iter().any(|t| t.tool.spec().follow_up.is_some())
        }

        /// The task handle for a finished call of `tool` whose result names a background job.
        pub fn task_for(
            &self,
            tool: &str,
            caller: &Caller,
            result: &rmcp::model::CallToolResult,
        ) -> Option<CreateTaskResult> {
            let writes = self.writes.as_ref()?;
            let follow = self
                .by_name
                .get(tool)
                .and_then(|i| self.tools[*i].tool.spec().follow_up.clone())?;
            if result.is_error == Some(true) || !self.by_name.contains_key(&follow.status_tool) {
                return None;
            }
            let job = result
                .structured_content
                .as_ref()?
                .get(&follow.id_field)?
                .as_str()?;
            if job.contains(SEPARATOR) || follow.status_tool.contains(SEPARATOR) {
                return None;
            }
            let seal = writes.seal(&binding(&self.path, caller, &follow.status_tool, job), TTL);
            let id = format!("{}{SEPARATOR}{job}{SEPARATOR}{seal}", follow.status_tool);
            let task = Task::new(id, rmcp::model::TaskStatus::Working, now(), now())
                .with_ttl_ms(TTL.as_millis() as u64)
                .with_poll_interval_ms(POLL)
                .with_status_message(format!("{} {job} accepted", follow.id_field));
            Some(CreateTaskResult::new(task))
        }

        /// `tasks/get`: asks the status tool, as the caller, and reports the job's state.
        pub async fn task_state(
            &self,
            task_id: &str,
            caller: Caller,
            rpc_id: Value,
        ) -> Result<GetTaskResult, rmcp::ErrorData> {
            let unknown = || rmcp::ErrorData::invalid_params("unknown task", None);
            let writes = self.writes.as_ref().ok_or_else(unknown)?;
            let mut parts = task_id.splitn(3, SEPARATOR);
            let (Some(status_tool), Some(job), Some(seal)) =
                (parts.next(), parts.next(), parts.next())
            else {
                return Err(unknown());
            };
            writes
                .unseal(seal, &binding(&self.path, &caller, status_tool, job))
                .map_err(|_| unknown())?;
            let follow = self
                .tools
                .iter()
                .filter_map(|t| t.tool.spec().follow_up.clone())
                .find(|f| f.status_tool == status_tool)
                .ok_or_else(unknown)?;
            let mut arguments = serde_json::Map::new();
            arguments.insert(follow.id_field.clone(), json!(job));
            let mut result = match self
                .call(status_tool, Some(arguments), caller, rpc_id)
                .await
            {
                CallAnswer::Result(result) => result,
                CallAnswer::BrokenOutput(message) => {
                    return Err(rmcp::ErrorData::internal_error(message, None));
                }
                CallAnswer::UnknownTool(_) => return Err(unknown()),
            };
            if result.is_error == Some(true) {
                // The status is unavailable for now (the backend failing, a rate limit): the
                // client polls again; the job itself is not known to have failed.
                let detail = result
                    .content
                    .first()
                    .and_then(|c| c.as_text())
                    .and_then(|t| serde_json::from_str(&t.text).ok());
                return Err(rmcp::ErrorData::internal_error(
                    "the job's status is unavailable right now; poll again later",
                    detail,
                ));
            }
            let state = result
                .structured_content
                .as_ref()
                .and_then(|s| s.get(&follow.state_field))
                .and_then(Value::as_str)
                .unwrap_or_default()
                .to_string();
            let task = Task::new(task_id, rmcp::model::TaskStatus::Working, now(), now())
                .with_ttl_ms(TTL.as_millis() as u64)
                .with_poll_interval_ms(POLL)
                .with_status_message(state.clone());
            let payload = if follow.pending.contains(&state) {
                TaskPayload::Working
            } else {
                if follow.failed.contains(&state) {
                    result.is_error = Some(true);
                }
                let value = serde_json::to_value(&result).unwrap_or_default();
                TaskPayload::Completed {
                    result: value.as_object().cloned().unwrap_or_default(),
                }
            };
            Ok(GetTaskResult::new(DetailedTask::new(task, payload)))
        }
    }
}

#[cfg(test)]
mod tests {
    use concierge_core::{Annotations, BoxFuture, ToolOutput, ToolSpec};
    use serde_json::json;

    use super::*;

    /// A tool whose schema requires `results` and whose answer is `answer`.
    struct Fixed {
        spec: ToolSpec,
        answer: Result<Value, ToolError>,
    }

    impl Fixed {
        fn mounted(answer: Result<Value, ToolError>) -> MountedTool {
            let schema = json!({
                "type": "object",
                "properties": {"results": {"type": "array"}},
                "required": ["results"],
            });
            let spec = ToolSpec {
                name: "fixed".into(),
                title: None,
                description: "answers what the test says".into(),
                input_schema: json!({"type": "object"}).as_object().cloned().unwrap(),
                output_schema: schema.as_object().cloned().unwrap(),
                annotations: Annotations::read_only(),
                secret_fields: Vec::new(),
                scopes: Vec::new(),
                write: None,
                follow_up: None,
                argument_error: None,
            };
            MountedTool::new(Arc::new(Self { spec, answer }), Language::English).unwrap()
        }
    }

    impl Tool for Fixed {
        fn spec(&self) -> &ToolSpec {
            &self.spec
        }

        fn call(&self, _: Value, _: CallContext) -> BoxFuture<'_, Result<ToolOutput, ToolError>> {
            let answer = self.answer.clone();
            Box::pin(async move { answer })
        }
    }

    /// A write tool without write safety (an order, say) whose input needs `qty`.
    fn order_tool() -> MountedTool {
        let spec = ToolSpec {
            name: "order".into(),
            title: None,
            description: "orders".into(),
            input_schema: json!({"type": "object", "properties": {"qty": {"type": "integer"}}, "required": ["qty"]})
                .as_object()
                .cloned()
                .unwrap(),
            output_schema: json!({"type": "object"}).as_object().cloned().unwrap(),
            annotations: Annotations::additive_write(),
            secret_fields: Vec::new(),
            scopes: Vec::new(),
            write: None,
            follow_up: None,
            argument_error: None,
        };
        let answer = Ok(json!({"id": 1}));
        MountedTool::new(Arc::new(Fixed { spec, answer }), Language::Russian).unwrap()
    }

    #[tokio::test]
    async fn a_refused_write_leaves_the_write_budget_and_the_refusal_names_the_policy() {
        let rate = crate::config::Rate::parse("2/minute").unwrap();
        let write = crate::limits::store(rate, "2/minute", LimitPolicy::SlidingWindow);
        let endpoint = Endpoint::new("/coffee/mcp".into(), None, vec![order_tool()], None, None)
            .limits(Limits {
                write: Some(write),
                ..Limits::default()
            });
        let order = |arguments: Value| {
            endpoint.call(
                "order",
                arguments.as_object().cloned(),
                Caller::client("bot"),
                json!(1),
            )
        };
        let text = |answer: CallAnswer| match answer {
            CallAnswer::Result(result) => (
                result.is_error == Some(true),
                result.content[0].as_text().unwrap().text.clone(),
            ),
            _ => panic!("a result"),
        };
        for _ in 0..5 {
            let (error, body) = text(order(json!({"qty": "two"})).await);
            assert!(error && body.contains("invalid_argument"), "{body}");
        }
        for _ in 0..2 {
            let (error, body) = text(order(json!({"qty": 2})).await);
            assert!(!error, "{body}");
        }
        let (error, body) = text(order(json!({"qty": 2})).await);
        assert!(error && body.contains("rate_limited"), "{body}");
        assert!(body.contains("2/minute, скользящее окно"), "{body}");
    }

    async fn call(tool: MountedTool) -> CallAnswer {
        let endpoint = Endpoint::new("/test/mcp".into(), None, vec![tool], None, None);
        endpoint
            .call("fixed", None, Caller::client("test"), json!(1))
            .await
    }

    #[tokio::test]
    async fn a_result_that_breaks_its_output_schema_is_not_sent() {
        assert!(checks_outputs(), "tests run with the check on");
        let secret = "Kundennummer 4711";
        let answer = call(Fixed::mounted(Ok(json!({"total": 1, "note": secret})))).await;
        let CallAnswer::BrokenOutput(message) = answer else {
            panic!("a broken result was sent");
        };
        assert!(message.contains("`fixed`"), "{message}");
        assert!(message.contains("results"), "{message}");
        assert!(!message.contains(secret), "the data stays out: {message}");
    }

    #[tokio::test]
    async fn results_that_match_are_sent_and_errors_carry_no_structured_content() {
        let CallAnswer::Result(ok) = call(Fixed::mounted(Ok(json!({"results": []})))).await else {
            panic!("a matching result was refused");
        };
        assert_eq!(ok.structured_content, Some(json!({"results": []})));

        let refused = ToolError::not_found("no such thing");
        let CallAnswer::Result(error) = call(Fixed::mounted(Err(refused))).await else {
            panic!("an error is a result");
        };
        assert_eq!(error.is_error, Some(true));
        assert!(error.structured_content.is_none(), "{error:?}");
        let enveloped = ToolError::rejected("nope", "refused")
            .with_envelope(json!({"success": false, "error": {"code": "nope"}}));
        let CallAnswer::Result(error) = call(Fixed::mounted(Err(enveloped))).await else {
            panic!("an error is a result");
        };
        assert!(error.structured_content.is_none(), "{error:?}");
        let text = error.content[0].as_text().expect("text").text.clone();
        assert_eq!(
            serde_json::from_str::<Value>(&text).unwrap()["success"],
            false
        );
    }
}
