//! Benchmark peer: `get_menu` and `search_menu` over the same `menu.xlsx`, on bare rmcp + axum in
//! stateless JSON mode, with no auth, limits, validation or audit. What concierge's full stack is
//! measured against. Usage: `rmcp-bare LISTEN MENU.xlsx`.

use std::sync::Arc;

use concierge_coffee::menu::Menu;
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ListToolsResult,
    PaginatedRequestParams, ServerCapabilities, ServerConfig, Tool,
};
use rmcp::service::RequestContext;
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::{StreamableHttpServerConfig, StreamableHttpService};
use rmcp::{ErrorData, RoleServer, ServerHandler};
use serde_json::{Value, json};

#[derive(Clone)]
struct Bare {
    menu: Arc<Menu>,
    tools: Arc<Vec<Tool>>,
}

impl ServerHandler for Bare {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
    }

    async fn list_tools(
        &self,
        _: Option<PaginatedRequestParams>,
        _: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        Ok(ListToolsResult::with_all_items(self.tools.as_ref().clone()))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        _: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let results: Vec<Value> = match request.name.as_ref() {
            "get_menu" => self
                .menu
                .drinks()
                .iter()
                .map(|d| serde_json::to_value(d).unwrap_or_default())
                .collect(),
            "search_menu" => {
                let query = request
                    .arguments
                    .as_ref()
                    .and_then(|a| a.get("query"))
                    .and_then(Value::as_str)
                    .unwrap_or_default();
                self.menu
                    .search(query)
                    .into_iter()
                    .map(|d| serde_json::to_value(d).unwrap_or_default())
                    .collect()
            }
            other => {
                return Err(ErrorData::invalid_params(
                    format!("unknown tool {other}"),
                    None,
                ));
            }
        };
        Ok(CallToolResult::structured(json!({"results": results})).into())
    }
}

fn schema(value: Value) -> Arc<serde_json::Map<String, Value>> {
    Arc::new(value.as_object().cloned().unwrap_or_default())
}

#[tokio::main]
async fn main() {
    let mut args = std::env::args().skip(1);
    let listen = args.next().unwrap_or_else(|| "127.0.0.1:18201".into());
    let menu_path = args
        .next()
        .unwrap_or_else(|| "examples/coffee/menu.xlsx".into());
    let menu = Arc::new(Menu::load(menu_path.as_ref()).expect("menu.xlsx"));
    let tools = Arc::new(vec![
        Tool::new(
            "get_menu",
            "The whole menu.",
            schema(json!({"type": "object", "properties": {}})),
        ),
        Tool::new(
            "search_menu",
            "Drinks whose name or composition contain a keyword.",
            schema(
                json!({"type": "object", "properties": {"query": {"type": "string"}}, "required": ["query"]}),
            ),
        ),
    ]);
    let handler = Bare { menu, tools };
    let config = StreamableHttpServerConfig::default()
        .with_legacy_session_mode(false)
        .with_json_response(true);
    let service = StreamableHttpService::new(
        move || Ok(handler.clone()),
        Arc::new(LocalSessionManager::default()),
        config,
    );
    let app = axum::Router::new().route_service("/mcp", service);
    let listener = tokio::net::TcpListener::bind(&listen).await.expect("bind");
    println!(
        "rmcp-bare listening on http://{}",
        listener.local_addr().expect("addr")
    );
    let listener = axum::serve::ListenerExt::tap_io(listener, |tcp| {
        let _ = tcp.set_nodelay(true);
    });
    axum::serve(listener, app).await.expect("serve");
}
