//! The bot's MCP client meets servers of both protocol eras: a 2026-07-28 server is spoken to
//! without a session (`server/discover`), one that does not know discovery through `initialize`;
//! listing and calling tools work the same with either.

use std::sync::Arc;

use concierge_agent::mcp::McpConnection;
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, DiscoverRequestMethod,
    DiscoverResult, ListToolsResult, PaginatedRequestParams, ServerCapabilities, ServerConfig,
    Tool,
};
use rmcp::service::RequestContext;
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::{StreamableHttpServerConfig, StreamableHttpService};
use rmcp::{ErrorData, RoleServer, ServerHandler};
use serde_json::{Map, json};

/// A server with one tool, `echo`; `legacy` ones answer `server/discover` as a server from
/// before 2026-07-28 does: the method is not found.
#[derive(Clone)]
struct Echo {
    legacy: bool,
}

impl ServerHandler for Echo {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
    }

    async fn discover(
        &self,
        context: RequestContext<RoleServer>,
    ) -> Result<DiscoverResult, ErrorData> {
        if self.legacy {
            return Err(ErrorData::method_not_found::<DiscoverRequestMethod>());
        }
        let _ = context;
        Ok(DiscoverResult::from_server_info(
            self.supported_protocol_versions().into_owned(),
            self.get_info(),
        ))
    }

    async fn list_tools(
        &self,
        _: Option<PaginatedRequestParams>,
        _: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        let schema = json!({"type": "object", "properties": {"text": {"type": "string"}}});
        Ok(ListToolsResult::with_all_items(vec![Tool::new(
            "echo",
            "says back its text",
            Arc::new(schema.as_object().cloned().unwrap()),
        )]))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        _: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let text = request
            .arguments
            .and_then(|a| a.get("text").and_then(|t| t.as_str().map(String::from)))
            .unwrap_or_default();
        Ok(CallToolResult::success(vec![ContentBlock::text(text)]).into())
    }
}

/// `server` on a free loopback port, stateful (a legacy client needs its session); its URL.
async fn serve(server: Echo) -> String {
    let service = StreamableHttpService::new(
        move || Ok(server.clone()),
        Arc::new(LocalSessionManager::default()),
        StreamableHttpServerConfig::default(),
    );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/mcp", listener.local_addr().unwrap());
    let router = axum::Router::new().route_service("/mcp", service);
    tokio::spawn(async move { axum::serve(listener, router).await });
    url
}

async fn walk(url: &str) -> String {
    let connection = McpConnection::new(url, None);
    let version = connection.protocol_version().await.expect("connects");
    let tools = connection.list_tools().await.expect("lists");
    assert_eq!(tools.len(), 1);
    let mut arguments = Map::new();
    arguments.insert("text".into(), json!("hallo"));
    let answer = connection
        .call_tool("echo", arguments)
        .await
        .expect("calls");
    assert_eq!(answer.content[0].as_text().unwrap().text, "hallo");
    version
}

#[tokio::test]
async fn a_2026_server_is_spoken_to_without_a_session_and_a_legacy_one_through_initialize() {
    assert_eq!(
        walk(&serve(Echo { legacy: false }).await).await,
        "2026-07-28"
    );
    assert_eq!(
        walk(&serve(Echo { legacy: true }).await).await,
        "2025-11-25"
    );
}
