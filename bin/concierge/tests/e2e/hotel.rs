//! The hotel back office's submit tool through MCP against the demo config: the seed's §11
//! regression list, the duplicate-submission rule, and what reaches the intake store.
//!
//! Over 600 lines: one area's end-to-end scenarios (the seed's regression list, one case each);
//! each test reads alone.

use crate::common;

use common::*;
use rmcp::model::CallToolResult;
use serde_json::{Value, json};
use sqlx::Row;
use sqlx::sqlite::SqlitePool;

const TOOL: &str = "th_hotel_submit_task_results";

fn fixture(name: &str) -> Value {
    let text = std::fs::read_to_string(examples().join("hotel").join(name)).unwrap();
    serde_json::from_str(&text).unwrap()
}

async fn submit(client: &Client, payload: Value) -> CallToolResult {
    call(client, TOOL, payload).await
}

fn refused(result: &CallToolResult, code: &str, field: &str) -> Value {
    assert_eq!(result.is_error, Some(true), "{result:?}");
    let value = structured(result);
    assert_eq!(value["success"], false);
    assert_eq!(value["error"]["code"], code, "{value}");
    assert_eq!(value["error"]["details"]["field"], field, "{value}");
    value
}

struct Hotel {
    server: Server,
    client: Client,
}

impl Hotel {
    async fn start() -> Self {
        let server = Server::start_demo(&[]);
        let client = connect(&server.url("/hotel/mcp"), "demo-token").await;
        Self { server, client }
    }

    async fn db(&self) -> SqlitePool {
        let path = self.server.dir.path().join("hotel/intake.sqlite");
        SqlitePool::connect(&format!("sqlite://{}?mode=ro", path.display()))
            .await
            .unwrap()
    }

    async fn count(&self, table: &str) -> i64 {
        let db = self.db().await;
        sqlx::query(sqlx::AssertSqlSafe(format!("SELECT COUNT(*) FROM {table}")))
            .fetch_one(&db)
            .await
            .unwrap()
            .get(0)
    }
}

#[tokio::test]
async fn tools_list_exposes_the_v3_root_the_entry_notice_and_the_v2_item_schema() {
    let hotel = Hotel::start().await;
    let tools = hotel.client.list_all_tools().await.unwrap();
    assert_eq!(tools.len(), 1);
    let tool = &tools[0];
    assert_eq!(tool.name, TOOL);
    let annotations = tool.annotations.as_ref().unwrap();
    assert_eq!(
        (
            annotations.read_only_hint,
            annotations.destructive_hint,
            annotations.idempotent_hint
        ),
        (Some(false), Some(false), Some(true))
    );
    let properties = &tool.input_schema["properties"];
    let event = &properties["message_events"]["items"]["properties"];
    assert!(event["extracted_fields"]["properties"]["relationship_type"].is_object());
    assert!(event["related_source_event_indices"].is_object());
    assert_eq!(properties["route_code"]["enum"], json!(["S10", "S99"]));
    let item = &properties["ai_task_results"]["items"];
    assert_eq!(
        item["required"],
        json!([
            "source_event_index",
            "catalog_code",
            "skill_id",
            "result_type",
            "task_type"
        ])
    );
    assert_eq!(
        item["properties"]["result_type"]["enum"],
        json!(["normal_task", "manual_review", "informational_message"])
    );
    assert!(
        tool.description
            .as_ref()
            .unwrap()
            .contains("source_event_index")
    );
}

#[tokio::test]
async fn a_missing_source_message_id_keeps_the_existing_error_channel() {
    let hotel = Hotel::start().await;
    let mut no_id = fixture("parent-split.json");
    no_id["source_message"]
        .as_object_mut()
        .unwrap()
        .remove("source_message_id");
    refused(
        &submit(&hotel.client, no_id).await,
        "MISSING_SOURCE_MESSAGE_ID",
        "source_message_id",
    );

    let mut no_message = fixture("parent-split.json");
    no_message.as_object_mut().unwrap().remove("source_message");
    refused(
        &submit(&hotel.client, no_message).await,
        "MISSING_SOURCE_MESSAGE_ID",
        "source_message_id",
    );

    let mut v2 = fixture("v2-task-results.json");
    v2.as_object_mut().unwrap().remove("source_message_id");
    refused(
        &submit(&hotel.client, v2).await,
        "MISSING_SOURCE_MESSAGE_ID",
        "source_message_id",
    );
    assert_eq!(hotel.count("reservation_ai_batch").await, 0);
}

#[tokio::test]
async fn adapter_refusals_never_reach_the_intake() {
    let hotel = Hotel::start().await;
    let unknown = refused(
        &submit(&hotel.client, fixture("reject-unknown-root.json")).await,
        "MCP_SUBMIT_PAYLOAD_INVALID",
        "unexpected_root",
    );
    assert!(unknown["error"]["message"].is_string());

    let mut v2 = fixture("v2-task-results.json");
    v2["ai_task_results"][0]
        .as_object_mut()
        .unwrap()
        .remove("catalog_code");
    let missing = refused(
        &submit(&hotel.client, v2).await,
        "MCP_SUBMIT_PAYLOAD_INVALID",
        "catalog_code",
    );
    assert_eq!(
        missing["error"]["details"]["path"],
        "ai_task_results[0].catalog_code"
    );

    let mut v2 = fixture("v2-task-results.json");
    v2["ai_task_results"][0]["result_type"] = json!("side_quest");
    refused(
        &submit(&hotel.client, v2).await,
        "MCP_SUBMIT_PAYLOAD_INVALID",
        "result_type",
    );

    let mut v2 = fixture("v2-task-results.json");
    v2["ai_task_results"][0]["surprise"] = json!(1);
    refused(
        &submit(&hotel.client, v2).await,
        "MCP_SUBMIT_PAYLOAD_INVALID",
        "surprise",
    );

    let dangling = refused(
        &submit(&hotel.client, fixture("reject-dangling-relation.json")).await,
        "MCP_SUBMIT_PAYLOAD_INVALID",
        "related_source_event_indices",
    );
    assert!(
        dangling["error"]["message"]
            .as_str()
            .unwrap()
            .contains("E_UNKNOWN_CHILD")
    );

    let mut repeated = fixture("parent-split.json");
    repeated["message_events"][2]["related_source_event_indices"] =
        json!(["E_CHILD_1", "E_CHILD_1"]);
    refused(
        &submit(&hotel.client, repeated).await,
        "MCP_SUBMIT_PAYLOAD_INVALID",
        "related_source_event_indices",
    );

    let mut twice = fixture("parent-split.json");
    twice["message_events"][1]["source_event_index"] = json!("E_CHILD_1");
    refused(
        &submit(&hotel.client, twice).await,
        "MCP_SUBMIT_PAYLOAD_INVALID",
        "source_event_index",
    );

    let mut no_id = fixture("parent-split.json");
    no_id["message_events"][0]
        .as_object_mut()
        .unwrap()
        .remove("source_event_index");
    refused(
        &submit(&hotel.client, no_id).await,
        "MCP_SUBMIT_PAYLOAD_INVALID",
        "source_event_index",
    );

    let mut no_warnings = fixture("parent-split.json");
    no_warnings
        .as_object_mut()
        .unwrap()
        .remove("extraction_warnings");
    refused(
        &submit(&hotel.client, no_warnings).await,
        "MCP_SUBMIT_PAYLOAD_INVALID",
        "extraction_warnings",
    );

    let mut both = fixture("parent-split.json");
    both["ai_task_results"] = json!([]);
    refused(
        &submit(&hotel.client, both).await,
        "MCP_SUBMIT_PAYLOAD_INVALID",
        "ai_task_results",
    );

    assert_eq!(
        hotel.count("platform_source_message_inbox").await,
        0,
        "nothing reached the intake"
    );
    let audit = hotel.server.audit_lines_of("demo.hotel.log", 10);
    assert_eq!(
        audit
            .iter()
            .filter(|e| e["outcome"] == "invalid_argument")
            .count(),
        10
    );
}

#[tokio::test]
async fn the_parent_split_is_one_batch_of_three_mapped_in_array_order() {
    let hotel = Hotel::start().await;
    let result = submit(&hotel.client, fixture("parent-split.json")).await;
    assert_eq!(result.is_error, Some(false), "{result:?}");
    let answer = structured(&result);
    assert_eq!(answer["success"], true);
    assert_eq!(answer["accepted_count"], 3);
    assert_eq!(answer["task_ids"].as_array().unwrap().len(), 3);
    assert_eq!(answer["duplicate"], false);
    assert_eq!(
        answer["mapping_diagnostics"],
        json!({
            "mapping_policy": "message_events_array_order_1_based",
            "source_event_index_mapping": [
                {"original_source_event_index": "E_CHILD_1", "mapped_source_event_index": 1},
                {"original_source_event_index": "E_CHILD_2", "mapped_source_event_index": 2},
                {"original_source_event_index": "E_PARENT", "mapped_source_event_index": 3}
            ]
        })
    );

    assert_eq!(hotel.count("reservation_ai_batch").await, 1);
    assert_eq!(hotel.count("reservation_ai_task").await, 3);
    let db = hotel.db().await;
    let stored: Vec<Value> =
        sqlx::query("SELECT ai_payload_json FROM workflow_reservation_ai_transition ORDER BY id")
            .fetch_all(&db)
            .await
            .unwrap()
            .iter()
            .map(|r| serde_json::from_str(&r.get::<String, _>(0)).unwrap())
            .collect();
    let numbers: Vec<Value> = stored
        .iter()
        .map(|p| p["source_event_index"].clone())
        .collect();
    assert_eq!(numbers, [json!(1), json!(2), json!(3)]);
    assert_eq!(stored[2]["related_source_event_indices"], json!(["1", "2"]));
    assert!(
        stored.iter().all(|p| !p.to_string().contains("mapping")),
        "diagnostics are never stored"
    );
    let inbox =
        sqlx::query("SELECT external_message_id, hotel_id FROM platform_source_message_inbox")
            .fetch_one(&db)
            .await
            .unwrap();
    assert_eq!(inbox.get::<String, _>(0), "mail-20260712-parent-split-001");
    assert_eq!(inbox.get::<String, _>(1), "TH-DEMO-HOTEL");
}

#[tokio::test]
async fn a_cross_child_trace_keeps_every_child() {
    let hotel = Hotel::start().await;
    let answer = structured(&submit(&hotel.client, fixture("cross-child-trace.json")).await);
    assert_eq!(answer["accepted_count"], 4);
    assert_eq!(
        answer["mapping_diagnostics"]["source_event_index_mapping"][3],
        json!({"original_source_event_index": "E_TRACE", "mapped_source_event_index": 4})
    );
    let db = hotel.db().await;
    let trace: Value = serde_json::from_str(
        &sqlx::query("SELECT ai_payload_json FROM workflow_reservation_ai_transition WHERE source_event_index = 4")
            .fetch_one(&db)
            .await
            .unwrap()
            .get::<String, _>(0),
    )
    .unwrap();
    assert_eq!(trace["source_event_index"], 4);
    assert_eq!(trace["related_source_event_indices"], json!(["1", "2"]));
}

#[tokio::test]
async fn single_relations_map_to_the_seeds_types() {
    let hotel = Hotel::start().await;
    let mut payload = fixture("parent-split.json");
    payload["source_message"]["source_message_id"] = json!("mail-relations-001");
    payload["message_events"][1]["related_source_event_index"] = json!("E_CHILD_1");
    payload["message_events"][1]["parent_source_event_index"] = json!("E_PARENT");
    structured(&submit(&hotel.client, payload).await);
    let db = hotel.db().await;
    let second: Value = serde_json::from_str(
        &sqlx::query("SELECT ai_payload_json FROM workflow_reservation_ai_transition WHERE source_event_index = 2")
            .fetch_one(&db)
            .await
            .unwrap()
            .get::<String, _>(0),
    )
    .unwrap();
    assert_eq!(
        second["related_source_event_index"],
        json!("1"),
        "a numeric string"
    );
    assert_eq!(second["parent_source_event_index"], json!(3), "a number");
}

#[tokio::test]
async fn s10_and_s99_create_read_only_source_message_tasks() {
    let hotel = Hotel::start().await;
    let mut s10 = fixture("s10-entry-notice.json");
    s10["hotel_id"] = json!("SOME-OTHER-HOTEL");
    s10["source_provider"] = json!("agentbus");
    let answer = structured(&submit(&hotel.client, s10).await);
    assert_eq!(
        (answer["form"].clone(), answer["accepted_count"].clone()),
        (json!("v3_entry_notice"), json!(1))
    );
    let mut s99 = fixture("s10-entry-notice.json");
    s99["source_message"]["source_message_id"] = json!("mail-s99-001");
    s99["route_code"] = json!("S99");
    structured(&submit(&hotel.client, s99).await);

    let db = hotel.db().await;
    let tasks: Vec<(String, String)> =
        sqlx::query("SELECT catalog_code, status FROM reservation_ai_task ORDER BY id")
            .fetch_all(&db)
            .await
            .unwrap()
            .iter()
            .map(|r| (r.get(0), r.get(1)))
            .collect();
    assert_eq!(
        tasks,
        [
            ("S10".to_string(), "read_only".to_string()),
            ("S99".to_string(), "read_only".to_string())
        ]
    );
    let hotel_ids: Vec<String> = sqlx::query("SELECT hotel_id FROM platform_source_message_inbox")
        .fetch_all(&db)
        .await
        .unwrap()
        .iter()
        .map(|r| r.get(0))
        .collect();
    assert_eq!(
        hotel_ids,
        ["TH-DEMO-HOTEL", "TH-DEMO-HOTEL"],
        "compatibility fields never choose the hotel"
    );
    let roots: Vec<String> = sqlx::query("SELECT root_json FROM reservation_ai_batch")
        .fetch_all(&db)
        .await
        .unwrap()
        .iter()
        .map(|r| r.get(0))
        .collect();
    assert!(
        roots
            .iter()
            .all(|r| !r.contains("hotel_id") && !r.contains("source_provider")),
        "{roots:?}"
    );
}

#[tokio::test]
async fn invalid_event_content_is_stored_as_adapter_contract_error() {
    let hotel = Hotel::start().await;
    let mut payload = fixture("parent-split.json");
    payload["source_message"]["source_message_id"] = json!("mail-contract-001");
    payload["message_events"][1]["event_type"] = json!("Teleport Guests");
    payload["message_events"][2]["extracted_fields"]
        .as_object_mut()
        .unwrap()
        .remove("cancel_scope");
    let answer = structured(&submit(&hotel.client, payload).await);
    assert_eq!(answer["success"], true);
    assert_eq!(answer["accepted_count"], 1);
    let codes: Vec<Value> = answer["contract_errors"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["code"].clone())
        .collect();
    assert_eq!(
        codes,
        [
            json!("UNKNOWN_EVENT_TYPE"),
            json!("MISSING_EXTRACTED_FIELD")
        ]
    );
    let db = hotel.db().await;
    let kinds: Vec<(i64, String)> = sqlx::query("SELECT source_event_index, transition FROM workflow_reservation_ai_transition ORDER BY source_event_index")
        .fetch_all(&db)
        .await
        .unwrap()
        .iter()
        .map(|r| (r.get(0), r.get(1)))
        .collect();
    assert_eq!(
        kinds,
        [
            (1, "ai_task_accepted".into()),
            (2, "adapter_contract_error".into()),
            (3, "adapter_contract_error".into())
        ]
    );
}

#[tokio::test]
async fn the_same_source_message_twice_is_one_batch_even_concurrently() {
    let hotel = Hotel::start().await;
    let first = structured(&submit(&hotel.client, fixture("v2-task-results.json")).await);
    let again = structured(&submit(&hotel.client, fixture("v2-task-results.json")).await);
    assert_eq!(again["duplicate"], true);
    assert_eq!(again["batch_id"], first["batch_id"]);
    assert_eq!(again["task_ids"], first["task_ids"]);

    let url = hotel.server.url("/hotel/mcp");
    let mut clients = Vec::new();
    for _ in 0..8 {
        clients.push(connect(&url, "demo-token").await);
    }
    let answers = futures::future::join_all(
        clients
            .iter()
            .map(|c| submit(c, fixture("parent-split.json"))),
    )
    .await;
    let answers: Vec<Value> = answers.iter().map(structured).collect();
    let batch = answers[0]["batch_id"].clone();
    assert!(
        answers
            .iter()
            .all(|a| a["batch_id"] == batch && a["accepted_count"] == 3),
        "{answers:?}"
    );
    assert_eq!(
        answers.iter().filter(|a| a["duplicate"] == false).count(),
        1
    );
    assert_eq!(hotel.count("reservation_ai_batch").await, 2);
    assert_eq!(hotel.count("reservation_ai_task").await, 4);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn acknowledged_batches_survive_sigkill() {
    let mut hotel = Hotel::start().await;
    let url = hotel.server.url("/hotel/mcp");
    let acknowledged = std::sync::Arc::new(std::sync::Mutex::new(Vec::<(String, i64)>::new()));
    let (enough_tx, mut enough_rx) = tokio::sync::watch::channel(false);
    let mut writers = Vec::new();
    for writer in 0..4 {
        let client = connect(&url, "demo-token").await;
        let acknowledged = acknowledged.clone();
        let enough_tx = enough_tx.clone();
        writers.push(tokio::spawn(async move {
            for i in 0..500 {
                let id = format!("mail-kill-{writer}-{i}");
                let mut payload = fixture("s10-entry-notice.json");
                payload["source_message"]["source_message_id"] = json!(id);
                let params = rmcp::model::CallToolRequestParams::new(TOOL)
                    .with_arguments(payload.as_object().unwrap().clone());
                let answer = tokio::time::timeout(
                    std::time::Duration::from_secs(5),
                    client.call_tool(params),
                )
                .await;
                let Ok(Ok(result)) = answer else { return };
                let Some(batch) = result
                    .structured_content
                    .and_then(|v| v["batch_id"].as_i64())
                else {
                    return;
                };
                let mut acked = acknowledged.lock().unwrap();
                acked.push((id, batch));
                if acked.len() >= 60 {
                    let _ = enough_tx.send(true);
                }
            }
        }));
    }
    enough_rx.wait_for(|enough| *enough).await.unwrap();
    hotel.server.child.kill().unwrap();
    hotel.server.child.wait().unwrap();
    for writer in writers {
        writer.abort();
        let _ = writer.await;
    }
    let acknowledged = acknowledged.lock().unwrap().clone();
    let db = hotel.db().await;
    for (id, batch) in &acknowledged {
        let row = sqlx::query("SELECT b.id FROM reservation_ai_batch b JOIN platform_source_message_inbox i ON i.id = b.source_message_inbox_id WHERE i.external_message_id = ?")
            .bind(id)
            .fetch_optional(&db)
            .await
            .unwrap();
        assert_eq!(
            row.map(|r| r.get::<i64, _>(0)),
            Some(*batch),
            "acknowledged {id} lost"
        );
    }
}

/// The demo's state on a tiny filesystem, filled up: a hotel submission and a client
/// registration that cannot be made durable are refused readably (in the seed's shape, and as
/// RFC 7591 says) and not acknowledged; once space returns both go through, the submission
/// recorded once, and every audit line written is whole.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_full_disk_refuses_submissions_and_registrations_and_loses_nothing() {
    let Some(disk) = common::tinyfs::TinyFs::mount("64m") else {
        return;
    };
    let server = Server::start_demo_in(disk.dir(), &[]);
    let client = connect(&server.url("/hotel/mcp"), "demo-token").await;
    let issuer = server.url("");
    let register = || async {
        common::oauth::http()
            .post(format!("{issuer}/register"))
            .json(&json!({"redirect_uris": ["http://127.0.0.1/callback"], "token_endpoint_auth_method": "none", "client_name": "disk"}))
            .send()
            .await
            .unwrap()
    };
    // Something acknowledged before the disk fills.
    let first = submit(&client, fixture("parent-split.json")).await;
    assert_ne!(first.is_error, Some(true), "{first:?}");
    assert_eq!(register().await.status(), 201);

    disk.fill();
    let mut second = fixture("parent-split.json");
    second["source_message"]["source_message_id"] = json!("mail-disk-full-001");
    let refused = submit(&client, second.clone()).await;
    assert_eq!(
        refused.is_error,
        Some(true),
        "acknowledged on a full disk: {refused:?}"
    );
    let value = structured(&refused);
    assert_eq!(value["success"], false, "{value}");
    assert_eq!(value["error"]["code"], "INTAKE_UNAVAILABLE", "{value}");
    assert!(
        value["error"]["message"]
            .as_str()
            .unwrap()
            .contains("未被记录"),
        "says it was not recorded: {value}"
    );
    let text = value.to_string();
    assert!(
        !text.contains("disk is full") && !text.contains("/tmp"),
        "{text}"
    );
    let answer = register().await;
    assert!(answer.status().is_server_error(), "{}", answer.status());
    let error: Value = answer.json().await.unwrap();
    assert!(
        error["error"].is_string() && error.get("client_id").is_none(),
        "{error}"
    );

    disk.free();
    let accepted = submit(&client, second.clone()).await;
    assert_ne!(accepted.is_error, Some(true), "{accepted:?}");
    let again = submit(&client, second).await;
    assert_eq!(
        structured(&again)["task_ids"],
        structured(&accepted)["task_ids"],
        "the same message is the same batch"
    );
    assert_eq!(register().await.status(), 201);
    let hotel = Hotel { client, server };
    assert_eq!(hotel.count("platform_source_message_inbox").await, 2);
    for log in ["demo.hotel.log", "demo.mappy.log"] {
        let path = hotel.server.dir.path().join("log").join(log);
        common::tinyfs::is_json_lines(&path).unwrap();
    }
}

fn intake_only(dir: &std::path::Path) -> String {
    format!(
        r#"
[server]
listen = "127.0.0.1:0"

[audit.hotel]
path = "{dir}/log/hotel.log"

[apps.intake]
database = "{dir}/hotel/intake.sqlite"
hotel_id = "TH-CRASH"

[[endpoint]]
path = "/hotel/mcp"
tools = ["intake.th_hotel_submit_task_results"]
auth = {{ kind = "tokens", env = "APP_MCP_TOKENS" }}
audit = "hotel"
"#,
        dir = dir.display()
    )
}

/// Fifty SIGKILLs at random moments of a stream of submissions (three clients, each message
/// its own `source_message_id`), each followed by a restart on the same database: every
/// acknowledged message is recorded exactly once with its batch, none twice, and a message
/// sent again after the crash answers its batch as a duplicate.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn fifty_sigkills_in_a_stream_of_submissions_lose_and_duplicate_nothing() {
    use common::crash::{Moments, bounded_call, kill, stop_all};
    use std::collections::BTreeMap;
    use std::sync::{Arc, Mutex};
    use std::time::Duration;
    let env = [("APP_MCP_TOKENS", "agent:token-agent")];
    let mut moments = Moments::new(0x5eed_0000_0000_0002);
    let mut dir = tempfile::tempdir().unwrap();
    // source_message_id → batch_id, as acknowledged.
    let mut acknowledged: BTreeMap<String, i64> = BTreeMap::new();
    for round in 0..50 {
        let server = Server::start_in(dir, intake_only, &env);
        let url = server.url("/hotel/mcp");
        let acked: Arc<Mutex<Vec<(String, i64)>>> = Arc::default();
        let mut workers = Vec::new();
        for worker in 0..3 {
            let client = connect(&url, "token-agent").await;
            let acked = acked.clone();
            workers.push(tokio::spawn(async move {
                for i in 0.. {
                    let id = format!("mail-crash-{round}-{worker}-{i}");
                    let mut payload = fixture("parent-split.json");
                    payload["source_message"]["source_message_id"] = json!(id);
                    let Some(result) = bounded_call(&client, TOOL, payload).await else {
                        return;
                    };
                    if result.is_error == Some(false) {
                        let batch = structured(&result)["batch_id"].as_i64().unwrap();
                        acked.lock().unwrap().push((id, batch));
                    }
                }
            }));
        }
        tokio::time::sleep(moments.next(Duration::from_millis(20), Duration::from_millis(250)))
            .await;
        dir = kill(server);
        stop_all(workers).await;
        acknowledged.extend(acked.lock().unwrap().drain(..));
        let database = dir.path().join("hotel/intake.sqlite");
        if !database.exists() {
            assert!(acknowledged.is_empty(), "round {round}");
            continue;
        }
        let db = SqlitePool::connect(&format!("sqlite://{}?mode=ro", database.display()))
            .await
            .unwrap();
        let rows: Vec<(String, i64)> = sqlx::query_as(
            "SELECT i.external_message_id, b.id FROM platform_source_message_inbox i \
             JOIN reservation_ai_batch b ON b.source_message_inbox_id = i.id",
        )
        .fetch_all(&db)
        .await
        .unwrap();
        db.close().await;
        let mut recorded: BTreeMap<String, i64> = BTreeMap::new();
        for (message, batch) in rows {
            assert!(
                recorded.insert(message.clone(), batch).is_none(),
                "round {round}: {message} twice"
            );
        }
        for (message, batch) in &acknowledged {
            assert_eq!(
                recorded.get(message),
                Some(batch),
                "round {round}: {message} lost"
            );
        }
    }
    assert!(acknowledged.len() >= 50, "{}", acknowledged.len());

    // After the last crash, a message sent again is its batch, not a second one.
    let server = Server::start_in(dir, intake_only, &env);
    let client = connect(&server.url("/hotel/mcp"), "token-agent").await;
    let (message, batch) = acknowledged.iter().next().unwrap();
    let mut payload = fixture("parent-split.json");
    payload["source_message"]["source_message_id"] = json!(message);
    let again = structured(&submit(&client, payload).await);
    assert_eq!(
        (&again["batch_id"], &again["duplicate"]),
        (&json!(batch), &json!(true))
    );
}
