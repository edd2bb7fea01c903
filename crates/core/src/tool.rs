use std::future::Future;
use std::marker::PhantomData;
use std::pin::Pin;
use std::sync::Arc;

use schemars::JsonSchema;
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::{Map, Value};

use crate::{CallContext, ToolError, schema_for};

/// The behaviour hints a client may show or act on. Set them truthfully: a client may skip a
/// confirmation for a read-only tool, or retry an idempotent one.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Annotations {
    pub read_only: bool,
    pub destructive: bool,
    pub idempotent: bool,
    /// The tool reaches systems outside the business's own data (the open web, third parties).
    pub open_world: bool,
}

impl Annotations {
    /// Reads the business's own data and changes nothing.
    pub const fn read_only() -> Self {
        Self {
            read_only: true,
            destructive: false,
            idempotent: true,
            open_world: false,
        }
    }

    /// Adds something new (an order, a submission) without overwriting or deleting anything.
    pub const fn additive_write() -> Self {
        Self {
            read_only: false,
            destructive: false,
            idempotent: false,
            open_world: false,
        }
    }
}

/// The platform's write safety, declared by a write tool (`ToolSpec::write`).
///
/// The platform adds its arguments to the tool's schema and handles them before the tool runs:
/// - `idempotency_key` (required): the same key from the same caller within the idempotency window
///   answers the first result again without a second write; the same key with other arguments
///   is refused;
/// - `dry_run` (only for a tool with a dry run of its own, [`Tool::dry_run`]): answered by that
///   dry run, which must change nothing;
/// - `confirm_token` (when `confirm`): the first call answers a preview and a short-lived token
///   bound to the caller and the arguments; only a call carrying it executes.
///
/// **Previews are the platform's.** [`Tool::call`] always means "do it": the platform never calls
/// it for a dry run or a preview. A tool that can tell what it would change without changing it
/// says so by answering [`Tool::dry_run`]; for any other tool the platform writes the preview
/// itself (the call it would make, secrets out). So a tool that forgets about dry runs cannot be
/// made to write on a preview. The platform never retries a write.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct WriteSafety {
    /// Ask for confirmation first (destructive writes). An endpoint's config may override it.
    pub confirm: bool,
}

impl WriteSafety {
    /// Write safety, confirmed first or not.
    pub const fn confirmed(confirm: bool) -> Self {
        Self { confirm }
    }
}

/// How the background job a write starts is followed (Mappy: `batch_id` → `batch_status`).
///
/// With it, a client that declared the MCP Tasks extension gets the write as a task: the call
/// answers a task handle, and `tasks/get` calls `status_tool` (as the same caller, audited and
/// rate limited like any call) until the job's state is no longer pending; the task's result is
/// the status tool's last answer, an error when the state is one of `failed`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FollowUp {
    /// The write result's field naming the job; also the status tool's argument.
    pub id_field: String,
    /// The read tool reporting on the job, served on the same endpoint.
    pub status_tool: String,
    /// The status result's field holding the job's state.
    pub state_field: String,
    /// States in which the job is still running.
    pub pending: Vec<String>,
    /// States in which the job failed.
    pub failed: Vec<String>,
}

/// Everything the platform publishes about a tool.
#[derive(Debug, Clone)]
pub struct ToolSpec {
    pub name: String,
    pub title: Option<String>,
    pub description: String,
    pub input_schema: Map<String, Value>,
    pub output_schema: Map<String, Value>,
    pub annotations: Annotations,
    /// Top-level argument names whose values never reach the audit log.
    pub secret_fields: Vec<String>,
    /// Names the tool fills in from the authenticated caller (a SQL tool's `bind`): not in its
    /// schema, and a call that passes one is refused (`argument_not_allowed`), so no caller
    /// can speak for another by naming them.
    pub from_caller: Vec<String>,
    /// OAuth scopes a caller needs (on endpoints whose tokens carry scopes).
    pub scopes: Vec<String>,
    /// Set for write tools that want the platform's write safety: a required `idempotency_key`,
    /// `dry_run`, and (when `confirm`) a confirmation round trip. See [`WriteSafety`].
    pub write: Option<WriteSafety>,
    /// For writes that answer at once and finish in the background: how to follow the job, so
    /// clients that support MCP Tasks get the call as a task. See [`FollowUp`].
    pub follow_up: Option<FollowUp>,
    /// For apps whose seed fixes an error contract: turns the platform's argument-validation
    /// failure (field, message) into the app's own error document. None: the platform's shape.
    pub argument_error: Option<fn(&str, &str) -> Value>,
    /// The tool answers [`mcp_result`]s: another MCP server's results, handed on unchanged
    /// (and checked against `output_schema` always, not only in debug builds).
    pub passes_through: bool,
    /// The tool tells an upstream who is calling: its calls get
    /// [`CallContext::identity`](crate::CallContext::identity).
    pub asks_identity: bool,
    /// The result is another system's JSON (a REST API's answer), handed on as it came: its
    /// nulls stay in, where the platform leaves them out of an app's own results.
    pub keeps_nulls: bool,
}

impl ToolSpec {
    /// What the tool costs a model in its tool list, roughly: the JSON it is listed as (name,
    /// description, schemas), in bytes / 4 — a common rule of thumb for tokens; a model's own
    /// tokenizer differs a little.
    pub fn list_tokens(&self) -> usize {
        serde_json::json!({
            "name": self.name,
            "title": self.title,
            "description": self.description,
            "inputSchema": self.input_schema,
            "outputSchema": self.output_schema,
        })
        .to_string()
        .len()
        .div_ceil(4)
    }

    /// A spec with what every tool has; the optional parts (title, secrets, scopes, write
    /// safety, follow-up, the argument-error envelope) unset, for struct update syntax.
    pub fn new(
        name: impl Into<String>,
        description: impl Into<String>,
        input_schema: Map<String, Value>,
        output_schema: Map<String, Value>,
        annotations: Annotations,
    ) -> Self {
        Self {
            name: name.into(),
            title: None,
            description: description.into(),
            input_schema,
            output_schema,
            annotations,
            secret_fields: Vec::new(),
            from_caller: Vec::new(),
            scopes: Vec::new(),
            write: None,
            follow_up: None,
            argument_error: None,
            passes_through: false,
            asks_identity: false,
            keeps_nulls: false,
        }
    }
}

/// A tool's successful result: a JSON object, shaped by the platform into text + structured content.
/// A tool that hands on another MCP server's answer wraps it with [`mcp_result`] instead.
pub type ToolOutput = Value;

/// The key under which [`mcp_result`] carries an MCP `CallToolResult`.
pub const MCP_RESULT: &str = "$mcpResult";

/// A result handed on as another MCP server answered it (`kind = "mcp"`): its `content` blocks
/// (images too), `structuredContent` and `isError` reach the client unchanged, where a plain
/// [`ToolOutput`] is shaped into one JSON text. The platform may add fields beside the marker
/// (`idempotentReplay` on a replay, `dryRun`); they reach the client in the result's `_meta`.
///
/// A marked JSON value rather than a type of its own: results travel as JSON through the
/// write records (a replay answers the stored value), so the marker travels with them.
pub fn mcp_result(result: Value) -> Value {
    let mut marked = Map::new();
    marked.insert(MCP_RESULT.to_string(), result);
    Value::Object(marked)
}

/// Whether `result` is a `CallToolResult` of the everyday shape — `content` of text blocks, an
/// object `structuredContent`, a boolean `isError`, an object `_meta`, `resultType` "complete" —
/// which rmcp's type and every SDK read as it is. `content` is required by both revisions'
/// schemas: a result without it takes the typed reading, which writes it (empty). Checked in place, without building anything: a
/// federated answer of this shape is handed on as the value it is, where reading it into the
/// typed result and writing it back twice cost a sixth of a forwarded call's instructions.
/// `false` says only "not this shape"; such a result goes through the typed reading, which
/// decides.
pub fn plain_tool_result(result: &Map<String, Value>) -> bool {
    if !result.contains_key("content") {
        return false;
    }
    for (key, value) in result {
        let fits = match key.as_str() {
            "content" => value.as_array().is_some_and(|blocks| {
                blocks.iter().all(|block| {
                    block.as_object().is_some_and(|block| {
                        block.len() == 2
                            && block.get("type").and_then(Value::as_str) == Some("text")
                            && block.get("text").is_some_and(Value::is_string)
                    })
                })
            }),
            "structuredContent" => value.is_object(),
            "isError" => value.is_boolean(),
            "_meta" => value.is_object(),
            "resultType" => value.as_str() == Some("complete"),
            _ => false,
        };
        if !fits {
            return false;
        }
    }
    true
}

/// The future a [`Tool`] call returns.
pub type BoxFuture<'a, T> = Pin<Box<dyn Future<Output = T> + Send + 'a>>;

/// What a tool's call answers, in time.
pub type ToolFuture<'a> = BoxFuture<'a, Result<ToolOutput, ToolError>>;

/// One callable tool. The platform calls it only with arguments that passed the input schema.
pub trait Tool: Send + Sync {
    fn spec(&self) -> &ToolSpec;

    /// Runs the tool: for a write, makes the change. Never called for a dry run or a preview.
    fn call(&self, arguments: Value, context: CallContext) -> ToolFuture<'_>;

    /// The tool's own dry run, for a write that can say exactly what it would change without
    /// changing it (a SQL write in a transaction rolled back, an API with a dry-run flag).
    /// `None`, the default: the tool cannot, and the platform answers dry runs and previews
    /// itself, from the call it would make ([`Tool::would_send`]), never calling the tool.
    fn dry_run(&self) -> Option<&dyn DryRun> {
        None
    }

    /// For the platform's preview of a write without a dry run of its own: what the call would
    /// send, in the terms of the system behind (a method and a path), without credentials or
    /// addresses. `None`: the preview names the tool and its arguments only.
    fn would_send(&self, _arguments: &Value) -> Option<Value> {
        None
    }

    /// Whether `arguments` read as the tool's typed input, without running it; `None` for a tool
    /// that takes its arguments as JSON. The fuzz targets hold every tool to "the schema accepts
    /// ⇒ the type accepts": the other way round, a call would reach the tool and fail as ours
    /// (`schema_mismatch`).
    fn reads_input(&self, _arguments: &Value) -> Option<Result<(), String>> {
        None
    }
}

/// A tool with its metadata edited: served under another name, or with a schema completed at
/// start-up from config (an enum of configured values). Calls go to the tool as they are.
pub fn with_spec(tool: Arc<dyn Tool>, edit: impl FnOnce(&mut ToolSpec)) -> Arc<dyn Tool> {
    let mut spec = tool.spec().clone();
    edit(&mut spec);
    Arc::new(EditedTool { inner: tool, spec })
}

struct EditedTool {
    inner: Arc<dyn Tool>,
    spec: ToolSpec,
}

impl Tool for EditedTool {
    fn spec(&self) -> &ToolSpec {
        &self.spec
    }

    fn call(&self, arguments: Value, context: CallContext) -> ToolFuture<'_> {
        self.inner.call(arguments, context)
    }

    fn dry_run(&self) -> Option<&dyn DryRun> {
        self.inner.dry_run()
    }

    fn would_send(&self, arguments: &Value) -> Option<Value> {
        self.inner.would_send(arguments)
    }

    fn reads_input(&self, arguments: &Value) -> Option<Result<(), String>> {
        self.inner.reads_input(arguments)
    }
}

/// A write tool's own dry run ([`Tool::dry_run`]): answers what the call would change, and
/// changes nothing.
pub trait DryRun: Send + Sync {
    fn dry_run(&self, arguments: Value, context: CallContext) -> ToolFuture<'_>;
}

/// `tool`, with `dry_run` answering its dry runs: a tool of the same arguments that only looks
/// (for typed tools, whose function cannot be asked two ways: the app builds it twice, once over
/// a backend that only looks).
pub fn with_dry_run(tool: Arc<dyn Tool>, dry_run: Arc<dyn Tool>) -> Arc<dyn Tool> {
    Arc::new(DryRunPair { tool, dry_run })
}

struct DryRunPair {
    tool: Arc<dyn Tool>,
    dry_run: Arc<dyn Tool>,
}

impl Tool for DryRunPair {
    fn spec(&self) -> &ToolSpec {
        self.tool.spec()
    }

    fn call(&self, arguments: Value, context: CallContext) -> ToolFuture<'_> {
        self.tool.call(arguments, context)
    }

    fn dry_run(&self) -> Option<&dyn DryRun> {
        Some(self)
    }

    fn reads_input(&self, arguments: &Value) -> Option<Result<(), String>> {
        self.tool.reads_input(arguments)
    }
}

impl DryRun for DryRunPair {
    fn dry_run(&self, arguments: Value, context: CallContext) -> ToolFuture<'_> {
        self.dry_run.call(arguments, context)
    }
}

struct TypedTool<I, O, F> {
    spec: ToolSpec,
    function: F,
    types: PhantomData<fn(I) -> O>,
}

impl<I, O, F, Fut> Tool for TypedTool<I, O, F>
where
    I: DeserializeOwned + Send + 'static,
    O: Serialize + Send + 'static,
    F: Fn(I, CallContext) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Result<O, ToolError>> + Send + 'static,
{
    fn spec(&self) -> &ToolSpec {
        &self.spec
    }

    fn call(&self, arguments: Value, context: CallContext) -> ToolFuture<'_> {
        // The schema already passed, and its bounds are the type's; should a value still not
        // read, the model gets the field and why, as for any wrong argument.
        let input = match serde_path_to_error::deserialize::<_, I>(&arguments) {
            Ok(input) => input,
            Err(error) => {
                let field = error.path().to_string();
                let error = ToolError::invalid(field, error.into_inner().to_string())
                    .with_detail("the arguments passed the schema but not the type");
                return Box::pin(async move { Err(error) });
            }
        };
        let future = (self.function)(input, context);
        Box::pin(async move {
            let output = future.await?;
            serde_json::to_value(output)
                .map_err(|error| ToolError::internal("output_not_serializable", error.to_string()))
        })
    }

    fn reads_input(&self, arguments: &Value) -> Option<Result<(), String>> {
        Some(
            <I as serde::Deserialize>::deserialize(arguments)
                .map(|_| ())
                .map_err(|error| error.to_string()),
        )
    }
}

/// Builds a tool from a typed async function. The input schema comes from `I` (derive
/// `JsonSchema`, and `#[serde(deny_unknown_fields)]` so unknown arguments are refused), the output
/// schema from `O`, which must serialize to a JSON object.
pub fn typed_tool<I, O, F, Fut>(
    name: &str,
    description: &str,
    annotations: Annotations,
    function: F,
) -> Arc<dyn Tool>
where
    I: DeserializeOwned + JsonSchema + Send + 'static,
    O: Serialize + JsonSchema + Send + 'static,
    F: Fn(I, CallContext) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Result<O, ToolError>> + Send + 'static,
{
    Arc::new(TypedTool {
        spec: ToolSpec::new(
            name,
            description,
            schema_for::<I>(),
            schema_for::<O>(),
            annotations,
        ),
        function,
        types: PhantomData,
    })
}
