//! No order is ever lost or duplicated: concurrency, and a SIGKILL in the middle of a write storm.

use crate::common;

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use calamine::{Data, Reader, Xlsx, open_workbook};
use common::*;
use serde_json::{Value, json};

const TOKENS: &str = "bot:token-bot";

fn unlimited(dir: &Path) -> String {
    coffee_config(dir, "").replace("60/minute", "1000000/minute")
}

/// Reads orders.xlsx with calamine directly (not through the app): id → total minutes, and
/// id → lines (drink, qty).
/// Order id → total minutes.
type Totals = BTreeMap<u64, u64>;
/// Order id → (drink, qty) lines.
type Lines = BTreeMap<u64, Vec<(String, u64)>>;

fn orders_on_disk(path: &Path) -> (Totals, Lines) {
    let mut workbook: Xlsx<_> = open_workbook(path).expect("orders.xlsx opens");
    let number = |cell: &Data| match cell {
        Data::Float(f) => *f as u64,
        Data::Int(i) => *i as u64,
        other => panic!("not a number: {other:?}"),
    };
    let mut orders = BTreeMap::new();
    for row in workbook.worksheet_range("заказы").unwrap().rows().skip(1) {
        assert!(
            orders.insert(number(&row[0]), number(&row[2])).is_none(),
            "duplicate order row"
        );
    }
    let mut lines = Lines::new();
    for row in workbook.worksheet_range("позиции").unwrap().rows().skip(1) {
        lines
            .entry(number(&row[0]))
            .or_default()
            .push((row[1].to_string(), number(&row[2])));
    }
    (orders, lines)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_hundred_concurrent_orders_get_two_hundred_ids_and_rows() {
    let server = Server::start(unlimited, &[("APP_MCP_TOKENS", TOKENS)]);
    let url = server.url("/coffee/mcp");
    let mut clients = Vec::new();
    for _ in 0..8 {
        clients.push(connect(&url, "token-bot").await);
    }
    let calls = clients.iter().enumerate().flat_map(|(c, client)| {
        (0..25).map(move |i| {
            let qty = 1 + (c * 25 + i) % 5;
            call(
                client,
                "create_order",
                json!({"items": [{"drink": "Эспрессо", "qty": qty}]}),
            )
        })
    });
    let results = futures::future::join_all(calls).await;
    let mut acknowledged = BTreeMap::new();
    for result in &results {
        assert_eq!(result.is_error, Some(false), "{result:?}");
        let created = result.structured_content.as_ref().unwrap();
        let id = created["id"].as_u64().unwrap();
        assert!(
            acknowledged
                .insert(id, created["totalMinutes"].as_u64().unwrap())
                .is_none(),
            "id {id} given twice"
        );
    }
    assert_eq!(acknowledged.len(), 200);
    assert_eq!(
        acknowledged.keys().copied().collect::<Vec<_>>(),
        (1..=200).collect::<Vec<_>>()
    );

    let (on_disk, lines) = orders_on_disk(&server.dir.path().join("coffee/orders.xlsx"));
    assert_eq!(
        on_disk, acknowledged,
        "every acknowledged order, with its total, is in the file"
    );
    assert!(lines.values().all(|l| l.len() == 1 && l[0].0 == "Эспрессо"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sigkill_during_a_write_storm_loses_no_acknowledged_order() {
    let mut server = Server::start(unlimited, &[("APP_MCP_TOKENS", TOKENS)]);
    let url = server.url("/coffee/mcp");
    let acknowledged: Arc<Mutex<BTreeMap<u64, u64>>> = Arc::default();
    let (enough_tx, mut enough_rx) = tokio::sync::watch::channel(false);
    let mut workers = Vec::new();
    for worker in 0..8u64 {
        let client = connect(&url, "token-bot").await;
        let acknowledged = acknowledged.clone();
        let enough_tx = enough_tx.clone();
        workers.push(tokio::spawn(async move {
            for i in 0..1000u64 {
                let qty = 1 + (worker + i) % 3;
                let params = rmcp::model::CallToolRequestParams::new("create_order")
                    .with_arguments(
                        json!({"items": [{"drink": "Латте", "qty": qty}]})
                            .as_object()
                            .unwrap()
                            .clone(),
                    );
                // After the kill rmcp's client may keep retrying; a bound ends the worker.
                let answer =
                    tokio::time::timeout(Duration::from_secs(5), client.call_tool(params)).await;
                let Ok(Ok(result)) = answer else { return };
                if result.is_error != Some(false) {
                    return;
                }
                let created = result.structured_content.unwrap();
                let mut acked = acknowledged.lock().unwrap();
                acked.insert(
                    created["id"].as_u64().unwrap(),
                    created["totalMinutes"].as_u64().unwrap(),
                );
                if acked.len() >= 150 {
                    let _ = enough_tx.send(true);
                }
            }
        }));
    }
    // Kill while all eight writers are still sending.
    enough_rx.wait_for(|enough| *enough).await.unwrap();
    server.child.kill().expect("SIGKILL");
    server.child.wait().unwrap();
    // Nothing can be acknowledged by a dead process; stop the writers rather than wait them out.
    for worker in workers {
        worker.abort();
        let _ = worker.await;
    }

    let acknowledged = acknowledged.lock().unwrap().clone();
    assert!(acknowledged.len() >= 150);
    let orders = server.dir.path().join("coffee/orders.xlsx");
    let (on_disk, _) = orders_on_disk(&orders);
    for (id, total) in &acknowledged {
        assert_eq!(
            on_disk.get(id),
            Some(total),
            "acknowledged order {id} lost or changed"
        );
    }
    let expected: Vec<u64> = (1..=on_disk.len() as u64).collect();
    assert_eq!(
        on_disk.keys().copied().collect::<Vec<_>>(),
        expected,
        "ids are dense, none duplicated"
    );

    // A restart continues from the file.
    let dir = std::mem::replace(&mut server.dir, tempfile::tempdir().unwrap());
    let restarted = Server::start_in(dir, unlimited, &[("APP_MCP_TOKENS", TOKENS)]);
    let client = connect(&restarted.url("/coffee/mcp"), "token-bot").await;
    let next = call(
        &client,
        "create_order",
        json!({"items": [{"drink": "Латте", "qty": 1}]}),
    )
    .await;
    assert_eq!(
        next.structured_content.unwrap()["id"].as_u64().unwrap(),
        on_disk.len() as u64 + 1
    );
    let (after, _) = orders_on_disk(&restarted.dir.path().join("coffee/orders.xlsx"));
    assert_eq!(after.len(), on_disk.len() + 1);
    let ids: BTreeSet<u64> = after.keys().copied().collect();
    assert!(acknowledged.keys().all(|id| ids.contains(id)));
}

/// The orders file and the audit log on a tiny filesystem, filled up between orders: an order
/// that cannot be made durable is refused readably and not acknowledged, the audit log holds its
/// lines rather than cutting one, and once space returns the next order goes through, the ids
/// continue, every acknowledged order is in the file once and every audit line is whole.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_full_disk_refuses_orders_readably_and_loses_nothing_acknowledged() {
    let Some(disk) = common::tinyfs::TinyFs::mount("8m") else {
        return;
    };
    let server = Server::start_in(disk.dir(), unlimited, &[("APP_MCP_TOKENS", TOKENS)]);
    let client = connect(&server.url("/coffee/mcp"), "token-bot").await;
    let order = || {
        call(
            &client,
            "create_order",
            json!({"items": [{"drink": "Латте", "qty": 1}]}),
        )
    };
    let mut acknowledged = Vec::new();
    for _ in 0..3 {
        let placed = order().await;
        acknowledged.push(placed.structured_content.unwrap()["id"].as_u64().unwrap());
    }

    disk.fill();
    for _ in 0..3 {
        let refused = order().await;
        assert_eq!(refused.is_error, Some(true), "acknowledged on a full disk");
        let text = format!("{:?}", refused.content);
        assert!(
            !text.contains("No space") && !text.contains("/tmp"),
            "{text}"
        );
        assert!(
            text.contains("заказ") || text.contains("Заказ"),
            "a refusal the guest's bot can retell: {text}"
        );
    }
    // The menu is read as before: only writes need space.
    let menu = call(&client, "get_menu", json!({})).await;
    assert_ne!(menu.is_error, Some(true));

    disk.free();
    let placed = order().await;
    assert_ne!(placed.is_error, Some(true), "{:?}", placed.content);
    acknowledged.push(placed.structured_content.unwrap()["id"].as_u64().unwrap());
    assert!(
        acknowledged.windows(2).all(|w| w[0] < w[1]),
        "ids continue: {acknowledged:?}"
    );

    let (on_disk, _) = orders_on_disk(&server.dir.path().join("coffee/orders.xlsx"));
    assert_eq!(
        on_disk.keys().copied().collect::<Vec<_>>(),
        acknowledged,
        "exactly the acknowledged orders, once each"
    );
    // Every call is in the audit log, whole, the refused ones too (held until space returned).
    let lines = server.audit_lines_of("test.chatbot.log", 8);
    let orders: Vec<&Value> = lines
        .iter()
        .filter(|l| l["tool"] == "create_order")
        .collect();
    assert_eq!(orders.len(), 7, "{lines:?}");
    assert_eq!(
        orders.iter().filter(|l| l["outcome"] != "ok").count(),
        3,
        "{lines:?}"
    );
    common::tinyfs::is_json_lines(&server.dir.path().join("log/test.chatbot.log")).unwrap();
}

/// Fifty SIGKILLs at random moments of a stream of orders from three clients, each followed by a
/// restart on the same files: after every kill the orders file opens (never half written), holds
/// every acknowledged order exactly once with its total, and the ids stay dense.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn fifty_sigkills_in_a_stream_of_orders_lose_and_duplicate_nothing() {
    use common::crash::{Moments, bounded_call, kill, stop_all};
    let mut moments = Moments::new(0x5eed_c0ff_ee00_0001);
    let mut dir = tempfile::tempdir().unwrap();
    let mut acknowledged: BTreeMap<u64, u64> = BTreeMap::new();
    for round in 0..50 {
        let server = Server::start_in(dir, unlimited, &[("APP_MCP_TOKENS", TOKENS)]);
        let url = server.url("/coffee/mcp");
        let acked: Arc<Mutex<Vec<(u64, u64)>>> = Arc::default();
        let mut workers = Vec::new();
        for worker in 0..3u64 {
            let client = connect(&url, "token-bot").await;
            let acked = acked.clone();
            workers.push(tokio::spawn(async move {
                for i in 0.. {
                    let order = json!({"items": [{"drink": "Латте", "qty": 1 + (worker + i) % 3}]});
                    let Some(result) = bounded_call(&client, "create_order", order).await else {
                        return;
                    };
                    if result.is_error == Some(false) {
                        let created = result.structured_content.unwrap();
                        acked.lock().unwrap().push((
                            created["id"].as_u64().unwrap(),
                            created["totalMinutes"].as_u64().unwrap(),
                        ));
                    }
                }
            }));
        }
        tokio::time::sleep(moments.next(Duration::from_millis(20), Duration::from_millis(250)))
            .await;
        dir = kill(server);
        stop_all(workers).await;
        for (id, total) in acked.lock().unwrap().drain(..) {
            assert!(
                acknowledged.insert(id, total).is_none(),
                "round {round}: id {id} acknowledged twice"
            );
        }
        let orders = dir.path().join("coffee/orders.xlsx");
        if !orders.exists() {
            assert!(
                acknowledged.is_empty(),
                "round {round}: the file of acknowledged orders is gone"
            );
            continue;
        }
        let (on_disk, _) = orders_on_disk(&orders);
        for (id, total) in &acknowledged {
            assert_eq!(
                on_disk.get(id),
                Some(total),
                "round {round}: acknowledged order {id} lost"
            );
        }
        let dense: Vec<u64> = (1..=on_disk.len() as u64).collect();
        assert_eq!(
            on_disk.keys().copied().collect::<Vec<_>>(),
            dense,
            "round {round}"
        );
    }
    assert!(
        acknowledged.len() >= 50,
        "the storms placed orders: {}",
        acknowledged.len()
    );
}
