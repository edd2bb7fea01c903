//! The rmcp side of an endpoint: initialize, tools/list, tools/call.

use std::sync::Arc;

use concierge_core::Caller;
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, GetTaskParams, GetTaskResult, Implementation,
    ListToolsResult, PaginatedRequestParams, ServerCapabilities, ServerConfig,
};
use rmcp::service::RequestContext;
use rmcp::{ErrorData, RoleServer, ServerHandler};

use crate::endpoint::{CallAnswer, Endpoint};

/// One endpoint as an MCP server. Cheap to clone: the factory makes one per session (or per
/// request in stateless mode) and everything heavy is behind the `Arc`.
#[derive(Clone)]
pub struct EndpointHandler {
    endpoint: Arc<Endpoint>,
    /// The caller when there is no HTTP request to carry one (stdio).
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
        context
            .extensions
            .get::<http::request::Parts>()
            .and_then(|parts| parts.extensions.get::<Caller>().cloned())
            .or_else(|| self.local_caller.clone())
    }
}

pub fn server_identity() -> Implementation {
    Implementation::new("concierge", env!("CARGO_PKG_VERSION"))
}

impl ServerHandler for EndpointHandler {
    async fn get_task(
        &self,
        request: GetTaskParams,
        context: RequestContext<RoleServer>,
    ) -> Result<GetTaskResult, ErrorData> {
        let caller = self
            .caller(&context)
            .ok_or_else(|| ErrorData::internal_error("no authenticated caller", None))?;
        let rpc_id = context.id.clone().into_json_value();
        self.endpoint
            .task_state(&request.task_id, caller, rpc_id)
            .await
    }

    fn get_info(&self) -> ServerConfig {
        let capabilities = if self.endpoint.offers_tasks() {
            ServerCapabilities::builder()
                .enable_tools()
                .enable_tasks()
                .build()
        } else {
            ServerCapabilities::builder().enable_tools().build()
        };
        let mut config = ServerConfig::new(capabilities);
        config.server_info = server_identity();
        config.instructions = self.endpoint.instructions.clone();
        config
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        let caller = self.caller(&context);
        Ok(ListToolsResult::with_all_items(
            self.endpoint.listings_for(caller.as_ref()),
        ))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        // Authentication runs before rmcp; a missing caller means a wiring fault, not a client's.
        let caller = self
            .caller(&context)
            .ok_or_else(|| ErrorData::internal_error("no authenticated caller", None))?;
        let rpc_id = context.id.clone().into_json_value();
        let tasks = context
            .client_capabilities()
            .is_some_and(|c| c.supports_tasks());
        match self
            .endpoint
            .call(&request.name, request.arguments, caller.clone(), rpc_id)
            .await
        {
            // A write that started a background job, for a client that follows tasks.
            CallAnswer::Result(result) if tasks => {
                match self.endpoint.task_for(&request.name, &caller, &result) {
                    Some(task) => Ok(CallToolResponse::Task(task)),
                    None => Ok(result.into()),
                }
            }
            CallAnswer::Result(result) => Ok(result.into()),
            CallAnswer::UnknownTool(message) => Err(ErrorData::invalid_params(message, None)),
            CallAnswer::BrokenOutput(message) => Err(ErrorData::internal_error(message, None)),
        }
    }
}
