//! One upstream tool as concierge serves it: the upstream's listing with the config's overrides
//! (name, texts, hints, fixed arguments, write safety), and its calls forwarded with the
//! arguments that passed the upstream's own schema, the answers handed back unchanged.

use std::sync::Arc;

use concierge_core::{Annotations, CallContext, Tool, ToolError, ToolFuture, ToolSpec, mcp_result};
use rmcp::RoleClient;
use rmcp::model::{
    CallToolRequest, CallToolRequestParams, CancelledNotification, CancelledNotificationParam,
    ClientRequest, RequestId, RequestMetaObject, ServerResult, Tool as Listed,
};
use rmcp::service::{Peer, PeerRequestOptions};
use serde_json::{Map, Value, json};

use crate::connection::{Link, Upstream};
use crate::direct::{Direct, Failure, too_large};
use crate::reach::Unreached;
use crate::settings::ToolOverride;

/// Where a call's `_meta` carries who is calling, for an upstream with `forward_identity`.
pub const IDENTITY_META: &str = "io.concierge/identity";

/// One allowlisted tool of an upstream.
pub struct FederatedTool {
    spec: ToolSpec,
    /// The upstream's name for it.
    upstream_name: String,
    edit: ToolOverride,
    /// Made from the upstream's listing; `false` for the stand-in served before one was read.
    listed: bool,
    /// Whether its calls may skip the rmcp connection when the upstream allows ([`Direct`]).
    direct: bool,
    upstream: Arc<Upstream>,
}

/// The schema of an object that declares nothing: what a stand-in accepts, unseen.
fn any_object() -> Map<String, Value> {
    let mut schema = Map::new();
    schema.insert("type".into(), json!("object"));
    schema
}

impl FederatedTool {
    /// `upstream_name` as served here: from its listing when there is one, else a stand-in
    /// whose calls answer that the server is not reachable.
    pub fn new(upstream_name: &str, listing: Option<&Listed>, upstream: &Arc<Upstream>) -> Self {
        let settings = &upstream.settings;
        let edit = settings
            .overrides
            .get(upstream_name)
            .cloned()
            .unwrap_or_default();
        let name = settings.served_name(upstream_name).to_string();
        let description = listing
            .and_then(crate::listing::description)
            .unwrap_or_else(|| {
                format!("`{upstream_name}` of an MCP server that has not answered yet.")
            });
        let mut input_schema = listing.map_or_else(any_object, |l| (*l.input_schema).clone());
        for fixed in edit.fixed.keys() {
            if let Some(Value::Object(properties)) = input_schema.get_mut("properties") {
                properties.remove(fixed);
            }
            if let Some(Value::Array(required)) = input_schema.get_mut("required") {
                required.retain(|r| r.as_str() != Some(fixed.as_str()));
            }
        }
        let mut spec = ToolSpec::new(
            name,
            description,
            input_schema,
            Map::new(),
            upstream_hints(listing),
        );
        spec.title = listing.and_then(crate::listing::title);
        edit.policy.apply(&mut spec);
        spec.output_schema = match listing.and_then(|l| l.output_schema.as_deref()) {
            Some(schema) if spec.write.is_some() => concierge_core::or_platform_answers(schema),
            Some(schema) => schema.clone(),
            // No schema promised: results carry no structured content the SDKs would check.
            None => Map::new(),
        };
        spec.from_caller = edit.fixed.keys().cloned().collect();
        spec.passes_through = true;
        spec.asks_identity = settings.forward_identity;
        Self {
            spec,
            upstream_name: upstream_name.to_string(),
            edit,
            listed: listing.is_some(),
            direct: listing.is_some_and(|l| Direct::takes(upstream_name, &l.input_schema)),
            upstream: upstream.clone(),
        }
    }

    /// One call; `dry_run` is the upstream's own flag, set for a dry run (the override's
    /// `dry_run`, the only way this tool is asked for one).
    async fn run(
        &self,
        arguments: Value,
        context: CallContext,
        dry_run: Option<&str>,
    ) -> Result<Value, ToolError> {
        let Value::Object(mut arguments) = arguments else {
            return Err(ToolError::invalid("", "the arguments must be an object"));
        };
        if let Some(flag) = dry_run {
            arguments.insert(flag.to_string(), Value::Bool(true));
        }
        for (name, value) in &self.edit.fixed {
            arguments.insert(name.clone(), value.clone());
        }
        let (peer, direct) = self.peer().await?;
        self.forward(peer, direct, arguments, &context).await
    }

    /// The connection to call over, and the direct way when there is one for this tool;
    /// starts a `lazy` upstream.
    async fn peer(&self) -> Result<(Peer<RoleClient>, Option<Arc<Direct>>), ToolError> {
        self.upstream.start();
        match self
            .upstream
            .settled(self.upstream.settings.start_timeout)
            .await
        {
            Link::Up {
                peer,
                direct,
                tools,
            } if self.listed && tools.contains_key(&self.upstream_name) => {
                Ok((peer, direct.filter(|_| self.direct)))
            }
            // Up, but this tool's listing is being read again: the list swaps in a moment.
            Link::Up { .. } => Err(unavailable(
                "upstream_changing",
                "The server behind this tool just changed its tools; call again in a few seconds.",
            )),
            Link::Starting | Link::Down { .. } => Err(unavailable(
                "upstream_unavailable",
                "The server behind this tool is not reachable right now; nothing was sent. Retry \
                 in a few seconds.",
            )),
        }
    }

    async fn forward(
        &self,
        peer: Peer<RoleClient>,
        direct: Option<Arc<Direct>>,
        arguments: Map<String, Value>,
        context: &CallContext,
    ) -> Result<Value, ToolError> {
        let upstream = &self.upstream;
        let observed =
            concierge_core::observe::UpstreamCall::start("mcp", "tools/call", &upstream.label);
        let mut meta = RequestMetaObject::default();
        for (name, value) in observed.headers() {
            meta.insert(name.to_string(), Value::String(value));
        }
        if upstream.settings.forward_identity
            && let Some(identity) = &context.identity
        {
            let audience = upstream.settings.audience();
            meta.insert(
                IDENTITY_META.into(),
                Value::String(identity.for_audience(&audience)),
            );
        }
        let arguments = match direct {
            Some(direct) => {
                match self
                    .forward_directly(peer.clone(), &direct, arguments, &meta, context)
                    .await
                {
                    Ok(answer) => {
                        observed.finish(Some(answer.1));
                        return Ok(mcp_result(answer.0));
                    }
                    Err(Unsent(arguments)) => arguments,
                    Err(Answered(error)) => {
                        observed.finish(None);
                        return Err(error);
                    }
                }
            }
            None => arguments,
        };
        let request = ClientRequest::CallToolRequest(CallToolRequest::new(
            CallToolRequestParams::new(self.upstream_name.clone()).with_arguments(arguments),
        ));
        let handle = peer
            .send_request_with_option(request, PeerRequestOptions::no_options().with_meta(meta))
            .await
            .map_err(|_| {
                unavailable(
                    "upstream_unavailable",
                    "The server behind this tool went away; nothing was sent. Retry in a few \
                     seconds.",
                )
            })?;
        let _route = context.progress.clone().and_then(|progress| {
            upstream
                .progress
                .route(handle.progress_token.clone(), progress)
        });
        // Dropped before the answer (the client cancelled, the deadline passed): the upstream
        // is told to stop.
        let mut abandoned = Abandoned {
            peer: Some(peer),
            id: handle.id.clone(),
        };
        let answer = tokio::time::timeout(upstream.settings.call_timeout, handle.rx).await;
        let result = match answer {
            Err(_) => {
                observed.finish(None);
                return Err(timed_out(upstream.settings.call_timeout));
            }
            Ok(Err(_)) | Ok(Ok(Err(rmcp::service::ServiceError::TransportClosed))) => {
                abandoned.peer = None;
                observed.finish(None);
                return Err(unavailable(
                    "upstream_unavailable",
                    "The server behind this tool went away during the call; whether it acted is \
                     unknown. Check before calling again.",
                ));
            }
            Ok(Ok(Err(error))) => {
                let peer = abandoned.peer.take();
                observed.finish(None);
                return Err(refused_upstream(error, |unreached| {
                    if let (Unreached::NotConnected, Some(peer)) = (unreached, &peer) {
                        upstream.lost(peer, unreached);
                    }
                }));
            }
            Ok(Ok(Ok(result))) => {
                abandoned.peer = None;
                observed.finish(Some(200));
                result
            }
        };
        let ServerResult::CallToolResult(result) = result else {
            return Err(ToolError::internal(
                "upstream_answer_unusable",
                "the upstream answered tools/call with another kind of result",
            )
            .with_message(
                "The server behind this tool answered in a way concierge cannot pass on.",
            ));
        };
        let value = serde_json::to_value(&result)
            .map_err(|error| ToolError::internal("upstream_answer_unusable", error.to_string()))?;
        let size = serde_json::to_vec(&value).map_or(usize::MAX, |bytes| bytes.len());
        if size > upstream.settings.max_result_bytes {
            return Err(too_large(Some(size), upstream.settings.max_result_bytes));
        }
        Ok(mcp_result(value))
    }

    /// The call as one POST read in this task ([`Direct`]), within the call timeout; the
    /// upstream is told to stop when the caller goes first. Answers the arguments back when
    /// nothing was sent, for the rmcp connection to carry.
    async fn forward_directly(
        &self,
        peer: Peer<RoleClient>,
        direct: &Direct,
        arguments: Map<String, Value>,
        meta: &RequestMetaObject,
        context: &CallContext,
    ) -> Result<(Value, u16), DirectFailure> {
        let settings = &self.upstream.settings;
        let id = direct.request_id();
        let mut abandoned = Abandoned {
            peer: Some(peer),
            id: RequestId::String(id.clone().into()),
        };
        let call = direct.call(
            &id,
            &self.upstream_name,
            &arguments,
            &meta.0,
            context.progress.as_ref(),
            settings.max_result_bytes,
        );
        let answer = match tokio::time::timeout(settings.call_timeout, call).await {
            Ok(answer) => answer,
            Err(_) => return Err(Answered(timed_out(settings.call_timeout))),
        };
        abandoned.peer = None;
        match answer {
            Ok(answer) => Ok(answer),
            Err(Failure::NotSent) => Err(Unsent(arguments)),
            Err(Failure::Answered(error)) => Err(Answered(error)),
        }
    }
}

/// How a direct call ended when it did not answer.
enum DirectFailure {
    /// Nothing was sent: the arguments, for the rmcp connection to carry.
    Unsent(Map<String, Value>),
    Answered(ToolError),
}
use DirectFailure::{Answered, Unsent};

/// The answer when the upstream did not answer within `timeout` (the call is cancelled there).
fn timed_out(timeout: std::time::Duration) -> ToolError {
    unavailable(
        "upstream_timeout",
        &format!(
            "The server behind this tool did not answer within {} s; the call was cancelled \
             there. It may have acted: check before calling again.",
            timeout.as_secs()
        ),
    )
}

impl Tool for FederatedTool {
    fn spec(&self) -> &ToolSpec {
        &self.spec
    }

    fn call(&self, arguments: Value, context: CallContext) -> ToolFuture<'_> {
        Box::pin(self.run(arguments, context, None))
    }

    /// Only where the config names the upstream's own dry-run argument; otherwise the
    /// platform's preview says what would be sent, and the upstream hears nothing.
    fn dry_run(&self) -> Option<&dyn concierge_core::DryRun> {
        (self.spec.write.is_some() && self.edit.dry_run.is_some())
            .then_some(self as &dyn concierge_core::DryRun)
    }
}

impl concierge_core::DryRun for FederatedTool {
    fn dry_run(&self, arguments: Value, context: CallContext) -> ToolFuture<'_> {
        Box::pin(self.run(arguments, context, self.edit.dry_run.as_deref()))
    }
}

/// The upstream's hints, absent ones as MCP defines them (the config's policy goes over them).
fn upstream_hints(listing: Option<&Listed>) -> Annotations {
    let hints = listing.and_then(|l| l.annotations.as_ref());
    Annotations {
        read_only: hints.and_then(|h| h.read_only_hint).unwrap_or(false),
        destructive: hints.and_then(|h| h.destructive_hint).unwrap_or(true),
        idempotent: hints.and_then(|h| h.idempotent_hint).unwrap_or(false),
        open_world: hints.and_then(|h| h.open_world_hint).unwrap_or(true),
    }
}

/// A readable error the caller may retry.
pub(crate) fn unavailable(code: &'static str, message: &str) -> ToolError {
    ToolError::rejected(code, message).with_envelope(json!({"error": {
        "code": code,
        "message": message,
        "retryable": true,
    }}))
}

/// The upstream refused the call as a protocol error (unknown tool, invalid params): its own
/// message, cut short, is the caller's to read. A call that did not reach it (no connection,
/// a redirect) is no refusal: the server is unavailable, and `unreached` hears why.
fn refused_upstream(
    error: rmcp::service::ServiceError,
    unreached: impl FnOnce(Unreached),
) -> ToolError {
    match &error {
        rmcp::service::ServiceError::McpError(data) => refused(&data.message),
        rmcp::service::ServiceError::TransportSend(sent) => match Unreached::of(sent) {
            Some(why) => {
                unreached(why);
                why.answer()
            }
            None => refused("the server behind this tool refused the call"),
        },
        _ => refused("the server behind this tool refused the call"),
    }
}

/// The upstream refused the call; its `message`, cut short, is the caller's to read.
pub(crate) fn refused(message: &str) -> ToolError {
    ToolError::rejected(
        "upstream_refused",
        message.chars().take(500).collect::<String>(),
    )
}

/// A call the upstream is told to stop when its future is dropped before the answer.
struct Abandoned {
    peer: Option<Peer<RoleClient>>,
    id: RequestId,
}

impl Drop for Abandoned {
    fn drop(&mut self) {
        let Some(peer) = self.peer.take() else {
            return;
        };
        let notification = CancelledNotification::new(CancelledNotificationParam::new(
            Some(self.id.clone()),
            Some("the caller cancelled the call".into()),
        ));
        tokio::spawn(async move {
            let _ = peer.send_notification(notification.into()).await;
        });
    }
}
