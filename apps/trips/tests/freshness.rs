//! The scheduled freshness check: fresh is quiet, stale posts to the webhook.

mod common;

use std::sync::{Arc, Mutex};

use common::{Mirror, Typo3, daytime};
use concierge_trips::content::clock::ManualClock;
use concierge_trips::content::schedule::{ScheduleConfig, check_and_alert};
use serde_json::{Value, json};

async fn webhook() -> (String, Arc<Mutex<Vec<Value>>>) {
    let received: Arc<Mutex<Vec<Value>>> = Arc::default();
    let sink = received.clone();
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind");
    let url = format!(
        "http://{}/hooks/content",
        listener.local_addr().expect("addr")
    );
    let app = axum::Router::new().route(
        "/hooks/content",
        axum::routing::post(move |axum::Json(body): axum::Json<Value>| {
            let sink = sink.clone();
            async move {
                sink.lock().unwrap().push(body);
                "ok"
            }
        }),
    );
    tokio::spawn(async move {
        let _ = axum::serve(listener, app).await;
    });
    (url, received)
}

#[tokio::test]
async fn a_stale_mirror_is_reported_to_the_webhook_a_fresh_one_is_not() {
    let typo3 = Typo3::start(ManualClock::at(daytime())).await;
    typo3.add_page(1, json!({}));
    let mirror = Mirror::new(&typo3).await;
    let (url, received) = webhook().await;
    let schedule = ScheduleConfig {
        webhook: Some(url),
        ..ScheduleConfig::default()
    };
    let http = reqwest::Client::new();

    // Never synced: stale.
    let never = check_and_alert(mirror.store.as_ref(), daytime(), &schedule, &http).await;
    assert!(!never.expect("checked").fresh);
    assert_eq!(received.lock().unwrap().len(), 1);
    assert!(
        received.lock().unwrap()[0]["text"]
            .as_str()
            .unwrap()
            .contains("no manifest")
    );

    mirror.delta().await;
    let synced_at = daytime();
    let fresh = check_and_alert(
        mirror.store.as_ref(),
        synced_at + chrono::Duration::minutes(149),
        &schedule,
        &http,
    )
    .await;
    assert!(fresh.expect("checked").fresh);
    assert_eq!(
        received.lock().unwrap().len(),
        1,
        "a fresh mirror posts nothing"
    );

    // One missed hourly run is tolerated (150 min); a stalled sync is not.
    let stale = check_and_alert(
        mirror.store.as_ref(),
        synced_at + chrono::Duration::minutes(151),
        &schedule,
        &http,
    )
    .await;
    assert!(!stale.expect("checked").fresh);
    let posted = received.lock().unwrap().clone();
    assert_eq!(posted.len(), 2);
    assert!(
        posted[1]["text"].as_str().unwrap().contains("limit 2h 30m"),
        "{posted:?}"
    );
}
