//! The coffee shop's four tools, driven by rmcp's client over HTTP, with the platform's
//! validation, result shaping, rate limit and audit around them.

use crate::common;

use common::*;
use serde_json::{Value, json};

const TOKENS: &str = "bot:token-bot,claude:token-claude";

fn server() -> Server {
    Server::start(|dir| coffee_config(dir, ""), &[("APP_MCP_TOKENS", TOKENS)])
}

fn error_of(result: &rmcp::model::CallToolResult) -> Value {
    assert_eq!(
        result.is_error,
        Some(true),
        "expected an error result: {result:?}"
    );
    text_json(result)["error"].clone()
}

#[tokio::test]
async fn tools_are_listed_with_schemas_and_truthful_annotations() {
    let server = server();
    let client = connect(&server.url("/coffee/mcp"), "token-bot").await;
    let info = client.peer_info().expect("server info");
    assert_eq!(
        info.server_info.as_ref().map(|i| i.name.as_str()),
        Some("concierge")
    );
    assert_eq!(info.instructions.as_deref(), Some("Coffee shop ordering."));

    let tools = client.list_all_tools().await.unwrap();
    let names: Vec<_> = tools.iter().map(|t| t.name.to_string()).collect();
    assert_eq!(names, COFFEE_TOOLS);
    for tool in &tools {
        let annotations = tool.annotations.as_ref().expect("annotations");
        let writes = tool.name == "create_order";
        assert_eq!(annotations.read_only_hint, Some(!writes), "{}", tool.name);
        assert_eq!(annotations.destructive_hint, Some(false), "{}", tool.name);
        assert_eq!(annotations.idempotent_hint, Some(!writes), "{}", tool.name);
        assert!(
            tool.output_schema
                .as_ref()
                .is_some_and(|s| s["type"] == "object"),
            "{}",
            tool.name
        );
        assert_eq!(
            tool.input_schema["additionalProperties"],
            json!(false),
            "{}",
            tool.name
        );
    }
    let create = tools.iter().find(|t| t.name == "create_order").unwrap();
    let qty = &create.input_schema["properties"]["items"]["items"]["properties"]["qty"];
    assert_eq!(
        (qty["minimum"].clone(), qty["maximum"].clone()),
        (json!(1), json!(20))
    );
}

#[tokio::test]
async fn menu_search_order_and_status() {
    let server = server();
    let client = connect(&server.url("/coffee/mcp"), "token-bot").await;

    let menu = call(&client, "get_menu", json!({})).await;
    let drinks = menu.structured_content.as_ref().unwrap()["results"]
        .as_array()
        .unwrap()
        .clone();
    assert!(drinks.len() >= 12);
    let cappuccino = drinks.iter().find(|d| d["drink"] == "Капучино").unwrap();
    assert_eq!(cappuccino["minutes"], 4);
    assert_eq!(cappuccino["price"], 220.0);
    assert_eq!(
        text_json(&menu),
        *menu.structured_content.as_ref().unwrap(),
        "text and structured agree"
    );

    // Composition, case- and ё/е-insensitive: "лед" finds drinks with "лёд".
    let ice = call(&client, "search_menu", json!({"query": "ЛЕД"})).await;
    let found: Vec<_> = ice.structured_content.unwrap()["results"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| d["drink"].as_str().unwrap().to_string())
        .collect();
    assert!(
        found.contains(&"Розовая волна".to_string()) && found.contains(&"Бамбл".to_string()),
        "{found:?}"
    );
    let melon = call(&client, "search_menu", json!({"query": "арбуз"})).await;
    assert_eq!(
        melon.structured_content.unwrap()["results"][0]["drink"],
        "Розовая волна"
    );
    let none = call(&client, "search_menu", json!({"query": "борщ"})).await;
    assert_eq!(none.structured_content.unwrap(), json!({"results": []}));

    let order = call(
        &client,
        "create_order",
        json!({"items": [{"drink": "капучино", "qty": 2}, {"drink": "Латте", "qty": 1}]}),
    )
    .await;
    let created = order.structured_content.unwrap();
    assert_eq!(created["totalMinutes"], 4 * 2 + 5);
    let id = created["id"].as_u64().unwrap();

    let status = call(&client, "get_order_status", json!({"orderId": id})).await;
    let status = status.structured_content.unwrap();
    assert_eq!(status["status"], "готовится");
    let left = status["minutesLeft"].as_u64().unwrap();
    assert!((12..=13).contains(&left), "{left}");
    assert_eq!(
        status["items"],
        json!([{"drink": "Капучино", "qty": 2}, {"drink": "Латте", "qty": 1}])
    );
}

#[tokio::test]
async fn bad_input_gets_a_readable_russian_error_and_writes_nothing() {
    let server = server();
    let client = connect(&server.url("/coffee/mcp"), "token-bot").await;

    let unknown = error_of(
        &call(
            &client,
            "create_order",
            json!({"items": [{"drink": "капучина", "qty": 1}]}),
        )
        .await,
    );
    assert_eq!(unknown["field"], "items[0].drink");
    let message = unknown["message"].as_str().unwrap();
    assert!(
        message.contains("нет в меню") && message.contains("Капучино"),
        "{message}"
    );

    for (qty, field_message) in [
        (json!(0), "меньше"),
        (json!(25), "больше"),
        (json!(1.5), "тип"),
        (json!("2"), "тип"),
    ] {
        let error = error_of(
            &call(
                &client,
                "create_order",
                json!({"items": [{"drink": "Латте", "qty": qty}]}),
            )
            .await,
        );
        assert_eq!(error["field"], "items[0].qty", "{qty}");
        assert_eq!(error["code"], "invalid_argument");
        assert!(
            error["message"].as_str().unwrap().contains(field_message),
            "{qty}: {error}"
        );
    }
    let empty = error_of(&call(&client, "create_order", json!({"items": []})).await);
    assert_eq!(empty["field"], "items");
    let missing = error_of(&call(&client, "create_order", json!({})).await);
    assert_eq!(missing["field"], "items");
    assert!(
        missing["message"]
            .as_str()
            .unwrap()
            .contains("обязательное")
    );

    let extra = error_of(
        &call(
            &client,
            "search_menu",
            json!({"query": "кокос", "limit": 3}),
        )
        .await,
    );
    assert_eq!(extra["field"], "limit");
    assert!(
        extra["message"].as_str().unwrap().contains("query"),
        "{extra}"
    );

    let no_order = error_of(&call(&client, "get_order_status", json!({"orderId": 999})).await);
    assert_eq!(no_order["code"], "not_found");
    assert!(no_order["message"].as_str().unwrap().contains("№999"));

    assert!(
        !server.dir.path().join("coffee/orders.xlsx").exists(),
        "no refused order may be written"
    );
    let audit = server.audit_lines(9);
    assert_eq!(count_outcome(&audit, "invalid_argument"), 8);
    assert_eq!(count_outcome(&audit, "not_found"), 1);
}

#[tokio::test]
async fn n8n_tool_call_id_is_ignored() {
    let server = server();
    let client = connect(&server.url("/coffee/mcp"), "token-bot").await;
    let result = call(
        &client,
        "search_menu",
        json!({"query": "кокос", "toolCallId": "call_abc123"}),
    )
    .await;
    assert_eq!(result.is_error, Some(false));
    assert_eq!(
        result.structured_content.unwrap()["results"][0]["drink"],
        "Кокосовый латте"
    );
}

#[tokio::test]
async fn an_unknown_tool_is_a_json_rpc_error_naming_the_tools() {
    let server = server();
    let client = connect(&server.url("/coffee/mcp"), "token-bot").await;
    let params = rmcp::model::CallToolRequestParams::new("delete_everything");
    let error = client.call_tool(params).await.unwrap_err().to_string();
    assert!(error.contains("get_menu"), "{error}");
    assert!(
        server
            .audit_lines(1)
            .iter()
            .any(|e| e["outcome"] == "unknown_tool")
    );
}

#[tokio::test]
async fn rate_limit_is_exact_under_concurrency_and_per_client() {
    let server = server();
    let url = server.url("/coffee/mcp");
    let mut clients = Vec::new();
    for _ in 0..4 {
        clients.push(connect(&url, "token-bot").await);
    }
    let calls = clients
        .iter()
        .flat_map(|client| (0..16).map(move |_| call(client, "get_menu", json!({}))));
    let results = futures::future::join_all(calls).await;
    assert_eq!(results.len(), 64);
    let refused: Vec<_> = results
        .iter()
        .filter(|r| r.is_error == Some(true))
        .collect();
    assert_eq!(refused.len(), 4, "64 calls against 60/minute");
    let error = text_json(refused[0])["error"].clone();
    assert_eq!(error["code"], "rate_limited");
    assert!(error["message"].as_str().unwrap().contains("60/minute"));
    assert!(error["retryAfterSeconds"].as_u64().unwrap() >= 1);

    // Another client's budget is untouched.
    let claude = connect(&url, "token-claude").await;
    assert_eq!(
        call(&claude, "get_menu", json!({})).await.is_error,
        Some(false)
    );

    let audit = server.audit_lines(65);
    assert_eq!(
        audit
            .iter()
            .filter(|e| e["outcome"] == "rate_limited" && e["client"] == "bot")
            .count(),
        4
    );
    assert_eq!(count_outcome(&audit, "ok"), 61);
}
