//! One mounted endpoint's tools and policies, and the dispatcher that runs every tool call —
//! steps 8 to 13 of the pipeline (see [`crate::pipeline`]), the same for every app and every
//! transport. [`Endpoint::call`] reads as the steps in a row: find the tool → scopes → rate
//! limits → the arguments → write safety and the tool within the call deadline → the result
//! shaped and checked. Each step is a decision that refuses with the pipeline's one
//! [`Refusal`] type (the same as steps 1–7), answered here as a tool result with `isError`, and
//! recorded as the request's outcome.
//!
//! The dispatcher speaks our types ([`ToolAnswer`]); `transport/handler.rs` turns them into rmcp's.
//!
//! Over 600 lines on purpose: the steps read top to bottom in one place, with what they work on
//! (a mounted tool and its output check, the tool table a call holds, the endpoint's settings
//! that a reload swaps in place) and the shaping of every answer a step gives; the unit tests
//! follow. What stands alone is a module of its own (`pipeline/` for the decisions, `writes/`
//! for write safety).

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

use concierge_core::messages::render;
use concierge_core::{
    CallContext, Caller, Messages, Outcome, Tool, ToolError, ToolSpec, audit_document,
    audit_output_of, redact_in_place,
};
use serde_json::{Map, Value, json};

use crate::pipeline::rate_limit::{self, Limits};
use crate::pipeline::{Refusal, RequestRecord, arguments, scope};
use crate::validate::ArgumentValidator;
use crate::writes::{Gate, Rounds, WriteCall, WriteOutcome};

/// A tool as one endpoint serves it.
pub struct MountedTool {
    pub tool: Arc<dyn Tool>,
    /// The platform's texts in the app's language.
    pub messages: &'static Messages,
    pub validator: ArgumentValidator,
    /// The output schema, compiled when results are checked against it ([`checks_outputs`]).
    output: Option<jsonschema::Validator>,
    /// The output schema of a tool that hands on another server's answers, compiled always:
    /// that server is a stranger, and its results are checked before a client sees them.
    passed_output: Option<jsonschema::Validator>,
    mirrors_headers: bool,
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
    pub fn new(tool: Arc<dyn Tool>, messages: &'static Messages) -> Result<Self, String> {
        let spec = tool.spec();
        let validator = ArgumentValidator::new(&spec.input_schema)
            .map_err(|e| format!("tool `{}` has an invalid input schema: {e}", spec.name))?;
        let output = checks_outputs()
            .then(|| output_validator(spec))
            .transpose()?;
        // An output schema that promises nothing (no properties, nothing required) is not
        // worth a check per call.
        let passed_output = (spec.passes_through && spec.output_schema.len() > 1)
            .then(|| output_validator(spec))
            .transpose()?;
        let mirrors_headers = concierge_core::mirrors_headers(&spec.input_schema);
        Ok(Self {
            tool,
            messages,
            validator,
            output,
            passed_output,
            mirrors_headers,
        })
    }

    pub fn spec(&self) -> &ToolSpec {
        self.tool.spec()
    }

    /// Some argument is mirrored into a header (`x-mcp-header`), which rmcp checks.
    pub fn mirrors_headers(&self) -> bool {
        self.mirrors_headers
    }
}

/// The tool's output schema, compiled to check results against — in the dialect its `$schema`
/// names (2020-12 when it names none), as a client compiles it: a schema no client could
/// compile (an unknown `$schema`) is refused here, at mounting, not published.
fn output_validator(spec: &ToolSpec) -> Result<jsonschema::Validator, String> {
    let schema = Value::Object(spec.output_schema.clone());
    jsonschema::validator_for(&schema)
        .map_err(|e| format!("tool `{}` has an invalid output schema: {e}", spec.name))
}

/// What a tool call answered, as every client shows it: the JSON text, and for a success the
/// same JSON as structured content. An error never carries structured content: a tool's output
/// schema describes its results, and the TypeScript SDK and the MCP Inspector validate
/// structured content against it even on errors.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolAnswer {
    pub text: String,
    pub structured: Option<Value>,
    pub is_error: bool,
    /// Another MCP server's answer, handed on whole (`content` blocks, `structuredContent`,
    /// `isError`, `_meta`) in place of the text: see [`concierge_core::mcp_result`]. Its
    /// `text` is then this value's JSON, without `resultType`.
    pub passed: Option<Value>,
}

impl ToolAnswer {
    /// An error document already written as JSON text.
    fn error_text(text: String) -> Self {
        Self {
            text,
            structured: None,
            is_error: true,
            passed: None,
        }
    }
}

/// What a tool call came to, before it is shaped for the protocol.
pub enum CallAnswer {
    Result(ToolAnswer),
    UnknownTool(String),
    /// A result that broke its tool's output schema (only when [`checks_outputs`]): our fault,
    /// answered as a JSON-RPC internal error.
    BrokenOutput(String),
    /// The user must be asked first (MRTR): `resultType: "input_required"` with these
    /// `inputRequests` and this `requestState`; nothing was done.
    InputRequired {
        input_requests: Value,
        request_state: String,
    },
}

/// The call deadline when the config names none: as long as the longest write a seed allows
/// (Mappy's write timeout is at most 5 minutes), shorter than a claim takes to count as
/// abandoned ([`crate::writes::ABANDONED`]).
pub const DEFAULT_DEADLINE: Duration = Duration::from_secs(300);

/// The tools an endpoint serves at one moment, in their order, and rmcp's listing of them
/// (made once per table by the transport).
pub struct ToolTable {
    tools: Vec<Arc<MountedTool>>,
    by_name: HashMap<String, usize>,
    pub(crate) listings: std::sync::OnceLock<Arc<[rmcp::model::Tool]>>,
}

impl ToolTable {
    pub fn new(tools: Vec<MountedTool>) -> Self {
        let by_name = tools
            .iter()
            .enumerate()
            .map(|(i, t)| (t.spec().name.clone(), i))
            .collect();
        Self {
            tools: tools.into_iter().map(Arc::new).collect(),
            by_name,
            listings: std::sync::OnceLock::new(),
        }
    }

    pub fn get(&self, name: &str) -> Option<&Arc<MountedTool>> {
        self.by_name.get(name).map(|i| &self.tools[*i])
    }
}

impl std::ops::Deref for ToolTable {
    type Target = [Arc<MountedTool>];

    fn deref(&self) -> &Self::Target {
        &self.tools
    }
}

/// Everything an endpoint needs at call time; shared by all its sessions. It lives as long as
/// its path is served: a reload changes its settings and tools in place ([`Endpoint::adopt`]),
/// so open sessions keep it and hear what changed.
pub struct Endpoint {
    pub path: String,
    /// Swapped whole when an app's tools change (an upstream MCP server's list) or a reload
    /// changes them: a call holds the table it started with.
    table: arc_swap::ArcSwap<ToolTable>,
    /// Swapped whole by a reload: a call reads them once, as it starts.
    settings: arc_swap::ArcSwap<Settings>,
    /// Tells listening clients (the GET stream, `subscriptions/listen`) that the tools changed.
    changes: tokio::sync::broadcast::Sender<()>,
}

/// Whether a client would see `a` and `b` listed alike (what `tools/list` answers of them).
fn same_listing(a: &ToolSpec, b: &ToolSpec) -> bool {
    a.name == b.name
        && a.title == b.title
        && a.description == b.description
        && a.input_schema == b.input_schema
        && a.output_schema == b.output_schema
        && a.annotations == b.annotations
}

/// What the config says about an endpoint beside its tools.
#[derive(Clone)]
struct Settings {
    instructions: Option<String>,
    audit: Option<crate::audit::AuditSink>,
    /// Callers hold OAuth scopes here, and tools are checked against them.
    scoped: bool,
    limits: Limits,
    /// Idempotency records and confirm tokens, for tools that declare write safety.
    writes: Option<Arc<crate::writes::Writes>>,
    /// Refuse calls without scopes with the HTTP 403 step-up challenge (else as a tool error).
    scope_challenge: bool,
    /// How long a tool may take before the platform stops it (`[server] call_timeout`).
    deadline: Duration,
    /// Signs who is calling for the tools that tell an upstream ([`ToolSpec::asks_identity`]).
    identity: Option<Arc<crate::identity::IdentitySigner>>,
    /// The config's secrets, cut out of every answer a tool hands back.
    redaction: Arc<crate::redaction::Redaction>,
}

impl Endpoint {
    pub fn new(path: String, instructions: Option<String>, tools: Vec<MountedTool>) -> Self {
        Self {
            path,
            table: arc_swap::ArcSwap::from_pointee(ToolTable::new(tools)),
            settings: arc_swap::ArcSwap::from_pointee(Settings {
                instructions,
                audit: None,
                scoped: false,
                limits: Limits::default(),
                writes: None,
                scope_challenge: true,
                deadline: DEFAULT_DEADLINE,
                identity: None,
                redaction: Arc::default(),
            }),
            changes: tokio::sync::broadcast::channel(4).0,
        }
    }

    /// Builds: one setting changed.
    fn with(self, change: impl FnOnce(&mut Settings)) -> Self {
        let mut settings = Settings::clone(&self.settings.load());
        change(&mut settings);
        self.settings.store(Arc::new(settings));
        self
    }

    /// Takes `newer`'s settings and tools (a reload built it for this path): calls under way
    /// finish with what they started with, and listening clients are told when the tools they
    /// see changed (an unchanged list says nothing).
    pub fn adopt(&self, newer: &Endpoint) {
        self.settings.store(newer.settings.load_full());
        self.serve_table(newer.tools());
    }

    /// The instructions a client is given at `initialize` / `server/discover`.
    pub fn instructions(&self) -> Option<String> {
        self.settings.load().instructions.clone()
    }

    /// Whether a call without a tool's scopes is refused with the HTTP 403 step-up challenge.
    pub fn challenges_scopes(&self) -> bool {
        self.settings.load().scope_challenge
    }

    /// Where this endpoint's audit lines go.
    pub fn audit_sink(&self) -> Option<crate::audit::AuditSink> {
        self.settings.load().audit.clone()
    }

    /// Serves `tools` from now on (calls under way finish with the tools they started with),
    /// and tells every client listening that the tools changed.
    pub fn replace_tools(&self, tools: Vec<MountedTool>) {
        self.table.store(Arc::new(ToolTable::new(tools)));
        let _ = self.changes.send(());
    }

    /// As [`Self::replace_tools`], but clients are told only when what they are listed changed
    /// (a reload that left this endpoint's tools as they were says nothing).
    pub fn serve_tools(&self, tools: Vec<MountedTool>) {
        self.serve_table(Arc::new(ToolTable::new(tools)));
    }

    /// Serves `new`; listening clients are told only when what they are listed changed.
    fn serve_table(&self, new: Arc<ToolTable>) {
        let old = self.table.swap(new.clone());
        let changed = old.len() != new.len()
            || old
                .iter()
                .zip(new.iter())
                .any(|(a, b)| !same_listing(a.spec(), b.spec()));
        if changed {
            let _ = self.changes.send(());
        }
    }

    /// What a `subscriptions/listen` stream waits on.
    pub fn changes(&self) -> tokio::sync::broadcast::Receiver<()> {
        self.changes.subscribe()
    }

    pub fn audit(self, sink: Option<crate::audit::AuditSink>) -> Self {
        self.with(|s| s.audit = sink)
    }

    pub fn scope_challenge(self, challenge: bool) -> Self {
        self.with(|s| s.scope_challenge = challenge)
    }

    pub fn writes(self, writes: Option<Arc<crate::writes::Writes>>) -> Self {
        self.with(|s| s.writes = writes)
    }

    pub fn identity(self, signer: Option<Arc<crate::identity::IdentitySigner>>) -> Self {
        self.with(|s| s.identity = signer)
    }

    pub fn deadline(self, deadline: Duration) -> Self {
        self.with(|s| s.deadline = deadline)
    }

    pub fn redaction(self, redaction: Arc<crate::redaction::Redaction>) -> Self {
        self.with(|s| s.redaction = redaction)
    }

    /// The endpoint's limiters and what they count per.
    pub fn limits(self, limits: Limits) -> Self {
        self.with(|s| s.limits = limits)
    }

    /// Checks tools against the caller's OAuth scopes (endpoints with `kind = "oauth"`).
    pub fn scoped(self, scoped: bool) -> Self {
        self.with(|s| s.scoped = scoped)
    }

    /// The endpoint's texts: its first tool's app's (endpoints mix apps rarely, and then the
    /// session budget's message is the only text that belongs to no tool).
    fn messages(&self) -> &'static Messages {
        self.table
            .load()
            .first()
            .map_or(&concierge_core::messages::ENGLISH, |t| t.messages)
    }

    /// Whether any tool here needs a scope: only then is a call's body read before rmcp's.
    pub fn has_scoped_tools(&self) -> bool {
        self.settings.load().scoped && self.tools().iter().any(|t| !t.spec().scopes.is_empty())
    }

    /// The scopes a call of tool `name` needs that `caller` lacks (empty when none, when the tool
    /// is unknown, or on endpoints without scopes).
    pub fn scopes_missing_for(&self, name: &str, caller: &Caller) -> Vec<String> {
        self.tool(name)
            .map(|tool| {
                self.missing_scopes(&tool, caller)
                    .into_iter()
                    .map(str::to_string)
                    .collect()
            })
            .unwrap_or_default()
    }

    /// The scopes `tool` needs that `caller` lacks (none on endpoints without scopes).
    fn missing_scopes<'a>(&self, tool: &'a MountedTool, caller: &Caller) -> Vec<&'a str> {
        if !self.settings.load().scoped {
            return Vec::new();
        }
        scope::missing(&tool.spec().scopes, caller)
    }

    /// The tools served now.
    pub fn tools(&self) -> Arc<ToolTable> {
        self.table.load_full()
    }

    pub fn tool(&self, name: &str) -> Option<Arc<MountedTool>> {
        self.table.load().get(name).cloned()
    }

    pub(crate) fn writes_store(&self) -> Option<Arc<crate::writes::Writes>> {
        self.settings.load().writes.clone()
    }

    /// The tools of `table` that `caller` may call, by their place in it: a token without a
    /// tool's scopes does not see the tool.
    pub fn visible_to<'a>(
        &'a self,
        table: &'a ToolTable,
        caller: Option<&'a Caller>,
    ) -> impl Iterator<Item = usize> + 'a {
        table.iter().enumerate().filter_map(move |(i, t)| {
            caller
                .is_none_or(|c| self.missing_scopes(t, c).is_empty())
                .then_some(i)
        })
    }

    pub fn tool_names(&self) -> Vec<String> {
        self.tools().iter().map(|t| t.spec().name.clone()).collect()
    }

    /// What opening a session costs `caller` is decided by (see [`Limits::session_opening`]):
    /// the endpoint's limits, and its texts.
    pub fn session_budget(&self) -> (Limits, &'static Messages) {
        (self.settings.load().limits.clone(), self.messages())
    }

    /// Runs one `tools/call` through steps 8–13, filling `record`: the decisions in their
    /// order, each a function that refuses with a [`Refusal`], answered here as a tool result.
    pub async fn call(
        &self,
        name: &str,
        arguments: Option<Map<String, Value>>,
        caller: Caller,
        rpc_id: Value,
        record: &RequestRecord,
    ) -> CallAnswer {
        self.call_in_rounds(name, arguments, caller, rpc_id, &Rounds::default(), record)
            .await
    }

    /// [`Self::call`] for a client that may be asked for input (MRTR): `rounds` is what it said.
    pub async fn call_in_rounds(
        &self,
        name: &str,
        arguments: Option<Map<String, Value>>,
        caller: Caller,
        rpc_id: Value,
        rounds: &Rounds,
        record: &RequestRecord,
    ) -> CallAnswer {
        record.caller(&caller);
        record.call(name, rpc_id);
        let mounted = match self.find(name) {
            Ok(mounted) => mounted,
            Err(refusal) => {
                if let Some(arguments) = arguments {
                    record.arguments(Value::Object(crate::validate::without_any_injected(
                        arguments,
                    )));
                }
                // A protocol error (JSON-RPC `-32602`), not a tool result: the audit keeps its
                // outcome alone.
                record.outcome(refusal.outcome, None, None);
                return CallAnswer::UnknownTool(refusal.message().to_string());
            }
        };
        let mounted = &*mounted;
        let spec = mounted.spec();
        if let Some(arguments) = &arguments {
            let mut kept = Value::Object(mounted.validator.without_injected(arguments));
            redact_in_place(&mut kept, &spec.secret_fields);
            record.arguments(kept);
        }
        match self
            .decide(mounted, arguments, caller, rounds, record)
            .await
        {
            Ok(answer) => answer,
            Err(refusal) => CallAnswer::Result(ToolAnswer::error_text(
                refusal.into_tool_text(record, &spec.secret_fields),
            )),
        }
    }

    /// Step 8: the tool is served here.
    fn find(&self, name: &str) -> Result<Arc<MountedTool>, Refusal> {
        self.tool(name).ok_or_else(|| {
            let message = format!(
                "unknown tool `{name}`; this endpoint has: {}",
                self.tool_names().join(", ")
            );
            Refusal::of_call(Outcome::UnknownTool, "unknown_tool", message)
        })
    }

    /// Steps 9–13 for a tool that is served here.
    async fn decide(
        &self,
        mounted: &MountedTool,
        arguments: Option<Map<String, Value>>,
        caller: Caller,
        rounds: &Rounds,
        record: &RequestRecord,
    ) -> Result<CallAnswer, Refusal> {
        let spec = mounted.spec();
        let says = mounted.messages;
        scope::decide(&self.missing_scopes(mounted, &caller), says)?;
        self.rate_limit(spec, &caller, says, record).await?;
        let arguments = arguments::decide(&mounted.validator, arguments, spec, says)?;
        let mut context = CallContext::new(caller.clone(), record.trace_id());
        // A progress message may be an upstream's words too: it passes the same redaction.
        context.progress = rounds.progress.clone().map(|progress| {
            let redaction = self.settings.load().redaction.clone();
            if redaction.is_empty() {
                return progress;
            }
            concierge_core::Progress::new(move |done, total, mut message| {
                if let Some(text) = &mut message {
                    redaction.text(text);
                }
                progress.report(done, total, message)
            })
        });
        if spec.asks_identity {
            context.identity =
                (self.settings.load().identity.as_ref()).map(|s| s.for_caller(&caller));
        }
        let mut outcome = self
            .execute(mounted, arguments, &caller, context.clone(), rounds, record)
            .await?;
        // Whatever came back from the system behind passes the one redaction before the
        // client or the audit sees it.
        outcome.redact(&self.settings.load().redaction);
        record.notes(context.notes());
        if let WriteOutcome::Replayed(_) = outcome
            && let Some(metrics) = crate::telemetry::metrics::get()
        {
            metrics.replayed(&self.path, &spec.name);
        }
        let code = outcome.audit_code();
        Ok(match outcome {
            WriteOutcome::Ask(asked) => input_required(asked, code, record),
            WriteOutcome::Failed(error) => tool_failed(mounted, error, record),
            WriteOutcome::Ran(output)
            | WriteOutcome::DryRun(output)
            | WriteOutcome::ConfirmFirst(output)
            | WriteOutcome::Replayed(output) => self.shape(mounted, output, code, record),
        })
    }

    /// Step 10: per client, then the endpoint's limit. In-process limits take nanoseconds: only
    /// a round trip to Redis earns a span.
    async fn rate_limit(
        &self,
        spec: &ToolSpec,
        caller: &Caller,
        says: &'static Messages,
        record: &RequestRecord,
    ) -> Result<(), Refusal> {
        let settings = self.settings.load_full();
        let step = if settings.limits.remote() {
            step_span(record, "rate_limit")
        } else {
            tracing::Span::none()
        };
        let check = settings
            .limits
            .before_call(spec.annotations.read_only, caller, says);
        tracing::Instrument::instrument(check, step)
            .await
            .map_err(rate_limit::refusal)
    }

    /// Steps 12 and 13: write safety, then the tool within the call deadline. A panic, the
    /// deadline and the write budget refuse; what the tool answered is handed back.
    async fn execute(
        &self,
        mounted: &MountedTool,
        arguments: Value,
        caller: &Caller,
        context: CallContext,
        rounds: &Rounds,
        record: &RequestRecord,
    ) -> Result<WriteOutcome, Refusal> {
        let name = &mounted.spec().name;
        let says = mounted.messages;
        let trace = context.trace_id.clone();
        let deadline = self.settings.load().deadline;
        // A panicking tool is our fault, not the client's: answered as an internal error rather
        // than left to unwind through the transport (rmcp would never answer the request).
        record.running();
        let run = futures::FutureExt::catch_unwind(std::panic::AssertUnwindSafe(
            tracing::Instrument::instrument(
                self.run(mounted, arguments, caller, context, rounds),
                step_span(record, "execute_tool"),
            ),
        ));
        match tokio::time::timeout(deadline, run).await {
            Ok(Ok(ran)) => ran,
            Ok(Err(_)) => {
                tracing::error!(trace_id = %trace, tool = %name, "tool panicked");
                let message = "the tool failed; the server log has the details";
                Err(Refusal::of_call(Outcome::InternalError, "panic", message).document(
                    json!({"error": {"code": "internal_error", "message": message, "traceId": trace}}),
                ))
            }
            Err(_) => {
                let seconds = deadline.as_secs();
                tracing::error!(trace_id = %trace, tool = %name, seconds, "call deadline passed");
                let message = render(
                    says.deadline_exceeded,
                    &[("tool", &name), ("seconds", &seconds)],
                );
                let document = json!({"error": {
                    "code": "deadline_exceeded",
                    "message": &message,
                    "retryable": true,
                }});
                Err(
                    Refusal::of_call(Outcome::DeadlineExceeded, "deadline_exceeded", message)
                        .document(document),
                )
            }
        }
    }

    /// Step 12 and the tool: write safety for the writes that declare it, the write budget
    /// for the others, then the tool.
    async fn run(
        &self,
        mounted: &MountedTool,
        arguments: Value,
        caller: &Caller,
        context: CallContext,
        rounds: &Rounds,
    ) -> Result<WriteOutcome, Refusal> {
        let spec = mounted.spec();
        let settings = self.settings.load_full();
        let gate = settings
            .limits
            .write_gate(spec.annotations.read_only, caller, mounted.messages);
        match (spec.write, &settings.writes) {
            (Some(safety), Some(writes)) => {
                let call = WriteCall {
                    endpoint: &self.path,
                    tool: mounted.tool.as_ref(),
                    safety,
                    arguments,
                    context,
                    says: mounted.messages,
                    gate: gate.as_ref().map(|g| g as Gate<'_>),
                    rounds,
                };
                writes.run(call).await
            }
            _ => {
                if let Some(take) = &gate {
                    take().await.map_err(rate_limit::write_refusal)?;
                }
                Ok(match mounted.tool.call(arguments, context).await {
                    Ok(output) => WriteOutcome::Ran(output),
                    Err(error) => WriteOutcome::Failed(error),
                })
            }
        }
    }

    /// A success, shaped: nulls dropped (but from an upstream's JSON), checked against the
    /// output schema (when checks are on), one JSON text that is both the content and what the
    /// audit keeps.
    fn shape(
        &self,
        mounted: &MountedTool,
        mut output: Value,
        code: Option<&'static str>,
        record: &RequestRecord,
    ) -> CallAnswer {
        let spec = mounted.spec();
        // Only another MCP server's tool hands a result on: any other tool's output that
        // happens to carry the marker (a REST API's JSON body) is data like the rest.
        if spec.passes_through
            && let Some(passed) = passed_through(&mut output)
        {
            return self.hand_on(mounted, passed, code, record);
        }
        // An upstream's JSON is handed on as it came: a null there is the API's own answer.
        if !spec.keeps_nulls {
            strip_nulls(&mut output);
        }
        // `is_valid` first: it stops at the first failure and builds no error, the every-call
        // path; the error is looked for only when there is one to describe.
        if let Some(broken) = mounted
            .output
            .as_ref()
            .filter(|schema| !schema.is_valid(&output))
            .and_then(|schema| schema.iter_errors(&output).next())
        {
            // Masked: the message names the place and the rule, never the data.
            let message = format!(
                "the result of `{}` does not match its outputSchema at `{}`: {}",
                spec.name,
                broken.instance_path(),
                broken.masked()
            );
            tracing::error!(trace_id = %record.trace_id(), tool = %spec.name, %message, "broken result");
            record.outcome(
                Outcome::InternalError,
                Some("output_schema_violation"),
                Some(audit_document(
                    &json!({"error": {"code": "output_schema_violation", "message": &message}}),
                )),
            );
            return CallAnswer::BrokenOutput(message);
        }
        // Written into bytes, not through `Display`'s formatter: a page of rows is kilobytes.
        let text = serde_json::to_string(&output).unwrap_or_default();
        record.outcome(
            Outcome::Ok,
            code,
            Some(audit_output_of(&output, &text, &spec.secret_fields)),
        );
        record.result_count(result_count(&output));
        CallAnswer::Result(ToolAnswer {
            text,
            structured: Some(output),
            is_error: false,
            passed: None,
        })
    }

    /// Another MCP server's answer, handed on unchanged but for one thing: structured content
    /// that breaks the tool's published output schema is not sent (a client would refuse the
    /// whole result) — a success becomes a readable error, an error keeps its text alone.
    fn hand_on(
        &self,
        mounted: &MountedTool,
        mut result: Map<String, Value>,
        code: Option<&'static str>,
        record: &RequestRecord,
    ) -> CallAnswer {
        let spec = mounted.spec();
        let is_error = result.get("isError") == Some(&Value::Bool(true));
        let broken = match (&mounted.passed_output, result.get("structuredContent")) {
            (Some(schema), Some(structured)) => !schema.is_valid(structured),
            // A success must carry what an output schema promises (the SDKs check).
            (Some(_), None) => !is_error,
            _ => false,
        };
        if broken && is_error {
            result.remove("structuredContent");
        } else if broken {
            tracing::warn!(trace_id = %record.trace_id(), tool = %spec.name, "an upstream result broke its output schema");
            let error = ToolError::internal(
                "upstream_result_invalid",
                "the server behind this tool answered a result that does not match its own \
                 outputSchema; nothing is wrong with the arguments",
            );
            return tool_failed(mounted, error, record);
        }
        // Held without its era's discriminator: whoever writes the answer adds `resultType` for
        // a peer of 2026-07-28, and `text` stays the JSON of exactly what is handed on.
        result.remove("resultType");
        let text = serde_json::to_string(&result).unwrap_or_default();
        let output = Value::Object(result);
        record.outcome(
            if is_error {
                Outcome::Rejected
            } else {
                Outcome::Ok
            },
            code.or(is_error.then_some("upstream_error")),
            Some(audit_output_of(&output, &text, &spec.secret_fields)),
        );
        record.result_count(1);
        CallAnswer::Result(ToolAnswer {
            text,
            structured: None,
            is_error,
            passed: Some(output),
        })
    }
}

/// The MCP result inside a [`concierge_core::mcp_result`], with what the platform added beside
/// it (a replay's `idempotentReplay`, a dry run's `dryRun`) moved into its `_meta`.
fn passed_through(output: &mut Value) -> Option<Map<String, Value>> {
    let Value::Object(outer) = output else {
        return None;
    };
    let Some(Value::Object(mut result)) = outer.remove(concierge_core::MCP_RESULT) else {
        return None;
    };
    if !outer.is_empty() {
        let meta = result
            .entry("_meta")
            .or_insert_with(|| Value::Object(Map::new()));
        if let Value::Object(meta) = meta {
            for (key, value) in std::mem::take(outer) {
                meta.insert(format!("io.concierge/{key}"), value);
            }
        }
    }
    Some(result)
}

/// A write that asks the user first: what its confirmation asks, recorded as asked.
fn input_required(
    mut asked: Value,
    code: Option<&'static str>,
    record: &RequestRecord,
) -> CallAnswer {
    let input_requests = asked["inputRequests"].take();
    let request_state = asked["requestState"]
        .as_str()
        .unwrap_or_default()
        .to_string();
    record.outcome(Outcome::Ok, code, None);
    CallAnswer::InputRequired {
        input_requests,
        request_state,
    }
}

/// What the tool itself answered with an error: its envelope, or the platform's document.
fn tool_failed(mounted: &MountedTool, error: ToolError, record: &RequestRecord) -> CallAnswer {
    let spec = mounted.spec();
    let trace = record.trace_id();
    if let Some(detail) = &error.detail {
        tracing::error!(trace_id = %trace, tool = %spec.name, code = error.code, %detail, "tool failed");
    }
    let text =
        Refusal::of_tool_error(&error, Some(&trace)).into_tool_text(record, &spec.secret_fields);
    CallAnswer::Result(ToolAnswer::error_text(text))
}

/// Lists are `{"results": [...]}` (the apps' search tools), `{"rows": [...]}` (SQL tools) or
/// `{"items": [...]}`; anything else is one result.
fn result_count(output: &Value) -> usize {
    ["results", "rows", "items"]
        .iter()
        .find_map(|key| output.get(*key).and_then(Value::as_array))
        .map_or(1, Vec::len)
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

/// A child span of the request's for one step that takes time (a limiter that may ask Redis,
/// the tool with its upstream calls). Disabled, like its parent, unless traces are exported.
fn step_span(record: &RequestRecord, step: &'static str) -> tracing::Span {
    let parent = record.span();
    if parent.is_disabled() {
        return tracing::Span::none();
    }
    tracing::debug_span!(
        target: crate::telemetry::trace::TARGET,
        parent: parent,
        "step",
        otel.name = step,
        otel.kind = "internal",
    )
}

#[cfg(test)]
mod tests {
    use concierge_core::{Annotations, ToolFuture, ToolSpec};
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
            let spec = ToolSpec::new(
                "fixed",
                "answers what the test says",
                json!({"type": "object"}).as_object().cloned().unwrap(),
                schema.as_object().cloned().unwrap(),
                Annotations::read_only(),
            );
            MountedTool::new(
                Arc::new(Self { spec, answer }),
                &concierge_core::messages::ENGLISH,
            )
            .unwrap()
        }
    }

    impl Tool for Fixed {
        fn spec(&self) -> &ToolSpec {
            &self.spec
        }

        fn call(&self, _: Value, _: CallContext) -> ToolFuture<'_> {
            let answer = self.answer.clone();
            Box::pin(async move { answer })
        }
    }

    /// A write tool without write safety (an order, say) whose input needs `qty`.
    fn order_tool() -> MountedTool {
        let spec = ToolSpec::new(
            "order",
            "orders",
            json!({"type": "object", "properties": {"qty": {"type": "integer"}}, "required": ["qty"]})
                .as_object()
                .cloned()
                .unwrap(),
            json!({"type": "object"}).as_object().cloned().unwrap(),
            Annotations::additive_write(),
        );
        let answer = Ok(json!({"id": 1}));
        MountedTool::new(
            Arc::new(Fixed { spec, answer }),
            &concierge_core::messages::RUSSIAN,
        )
        .unwrap()
    }

    #[tokio::test]
    async fn a_refused_write_leaves_the_write_budget_and_the_refusal_names_the_policy() {
        let rate = crate::config::Rate::parse("2/minute").unwrap();
        let write =
            crate::limits::store(rate, "2/minute", concierge_core::LimitPolicy::SlidingWindow);
        let endpoint =
            Endpoint::new("/coffee/mcp".into(), None, vec![order_tool()]).limits(Limits {
                write: Some(write),
                ..Limits::default()
            });
        let record = RequestRecord::unrecorded();
        let order = |arguments: Value| {
            endpoint.call(
                "order",
                arguments.as_object().cloned(),
                Caller::client("bot"),
                json!(1),
                &record,
            )
        };
        let text = |answer: CallAnswer| match answer {
            CallAnswer::Result(answer) => (answer.is_error, answer.text),
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
        let endpoint = Endpoint::new("/test/mcp".into(), None, vec![tool]);
        let record = RequestRecord::unrecorded();
        endpoint
            .call("fixed", None, Caller::client("test"), json!(1), &record)
            .await
    }

    /// The marker of a handed-on result means something only from another MCP server's tool:
    /// a REST API that answers it is data, held to the tool's output schema like any other.
    #[tokio::test]
    async fn only_a_federated_tool_hands_a_result_on() {
        let marked =
            json!({"$mcpResult": {"isError": true}, "idempotentReplay": true, "results": []});
        let CallAnswer::Result(answer) = call(Fixed::mounted(Ok(marked))).await else {
            panic!("a result")
        };
        assert!(
            answer.passed.is_none() && !answer.is_error,
            "{}",
            answer.text
        );
        assert!(answer.text.contains("$mcpResult"), "{}", answer.text);
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
        assert_eq!(ok.structured, Some(json!({"results": []})));

        let refused = ToolError::not_found("no such thing");
        let CallAnswer::Result(error) = call(Fixed::mounted(Err(refused))).await else {
            panic!("an error is a result");
        };
        assert!(error.is_error);
        assert!(error.structured.is_none(), "{error:?}");
        let enveloped = ToolError::rejected("nope", "refused")
            .with_envelope(json!({"success": false, "error": {"code": "nope"}}));
        let CallAnswer::Result(error) = call(Fixed::mounted(Err(enveloped))).await else {
            panic!("an error is a result");
        };
        assert!(error.structured.is_none(), "{error:?}");
        let text = error.text.clone();
        assert_eq!(
            serde_json::from_str::<Value>(&text).unwrap()["success"],
            false
        );
    }
}
