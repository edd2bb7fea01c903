//! `kind = "http"`: the business's API behind MCP from config alone, answering with the API's
//! own JSON. The API is a real HTTP server on 127.0.0.1; the tools are called over the
//! platform's HTTP endpoint, as a client would.

use axum::Router;
use axum::extract::Path;
use axum::routing::get;
use concierge_server::{Apps, section};
use concierge_testkit::{Instance, call_tool, config, instance};
use http::StatusCode;
use serde_json::{Value, json};

/// The business's API: an order, a missing one, a failure, and one that never answers.
async fn start_api() -> String {
    let api = Router::new()
        .route(
            "/orders/{id}",
            get(|Path(id): Path<String>| async move {
                if id == "7" {
                    (
                        StatusCode::OK,
                        axum::Json(json!({"id": 7, "status": "paid"})),
                    )
                } else if id == "9" {
                    (
                        StatusCode::OK,
                        axum::Json(json!({"id": 9, "status": "open", "paid_at": null})),
                    )
                } else {
                    (
                        StatusCode::NOT_FOUND,
                        axum::Json(json!({"detail": "no order in table orders_2026"})),
                    )
                }
            }),
        )
        .route(
            "/broken",
            get(|| async {
                (
                    StatusCode::INTERNAL_SERVER_ERROR,
                    "Traceback: db at 10.0.0.5",
                )
            }),
        )
        .route("/hanging", get(std::future::pending::<String>));
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    tokio::spawn(async move { axum::serve(listener, api).await });
    url
}

fn config(api: &str) -> String {
    format!(
        r#"{server}
[apps.orders]
kind = "http"
base_url = "{api}"
timeout = "300ms"

[[apps.orders.tool]]
name = "order_get"
description = "One order by id."
input_schema = {{ type = "object", properties = {{ id = {{ type = "string" }} }}, required = ["id"] }}
request = {{ method = "GET", path = "/orders/{{{{ id | urlencode }}}}" }}

[[apps.orders.tool]]
name = "broken"
description = "Always fails."
input_schema = {{ type = "object" }}
request = {{ method = "GET", path = "/broken" }}

[[apps.orders.tool]]
name = "hanging"
description = "Never answers."
input_schema = {{ type = "object" }}
request = {{ method = "GET", path = "/hanging" }}
{endpoint}"#,
        server = config::server(""),
        endpoint = config::stateless_endpoint("/mcp", &["orders.*"]),
    )
}

/// The one client's token (in [`config::TOKENS`]).
const ALICE: &str = "token-a";

fn apps() -> Apps {
    Apps::new().tools("http", |settings| {
        concierge_upstream::build(&section(settings)?)
    })
}

/// The platform in front of a freshly started API, alice's token accepted.
async fn deployed() -> Instance {
    let api = start_api().await;
    instance(&config(&api), apps(), &[(config::TOKENS, "alice:token-a")]).await
}

#[tokio::test]
async fn an_answer_is_the_apis_own_json_and_a_failure_says_only_what_a_model_can_act_on() {
    let deployment = deployed().await;

    let found = call_tool(&deployment.router, ALICE, "order_get", json!({"id": "7"})).await;
    assert_eq!(found["isError"], false, "{found}");
    assert_eq!(
        found["structuredContent"],
        json!({"status": 200, "body": {"id": 7, "status": "paid"}})
    );

    for (tool, arguments, code, hint) in [
        (
            "order_get",
            json!({"id": "8"}),
            "upstream_refused",
            "HTTP 404",
        ),
        ("broken", json!({}), "upstream_failed", "HTTP 500"),
        ("hanging", json!({}), "upstream_timeout", "in time"),
    ] {
        let failed = call_tool(&deployment.router, ALICE, tool, arguments).await;
        assert_eq!(failed["isError"], true, "{failed}");
        let text = failed["content"][0]["text"].as_str().unwrap();
        let error: Value = serde_json::from_str(text).expect("a JSON error");
        assert_eq!(error["error"]["code"], code, "{text}");
        assert!(text.contains(hint), "{text}");
        // What the API said stays in the log.
        for leak in ["orders_2026", "Traceback", "10.0.0.5", "127.0.0.1"] {
            assert!(!text.contains(leak), "{tool}: {text}");
        }
    }
}

/// The API's JSON is handed on as it came: a null field stays, in the structured content and in
/// the text a model reads.
#[tokio::test]
async fn an_answers_nulls_are_handed_on() {
    let deployment = deployed().await;
    let open = call_tool(&deployment.router, ALICE, "order_get", json!({"id": "9"})).await;
    assert_eq!(open["isError"], false, "{open}");
    let expected = json!({"status": 200, "body": {"id": 9, "status": "open", "paid_at": null}});
    assert_eq!(open["structuredContent"], expected);
    let text = open["content"][0]["text"].as_str().unwrap();
    assert_eq!(serde_json::from_str::<Value>(text).unwrap(), expected);
}
