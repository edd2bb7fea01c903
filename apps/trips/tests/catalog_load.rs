//! Loading the trip catalog: the export from a URL with a bearer token, re-read on its interval,
//! swapped in whole; a failed refresh keeps the last good catalog.

use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use axum::http::{HeaderMap, StatusCode};
use axum::response::IntoResponse;
use concierge_trips::catalog::load::{CatalogHandle, ExportConfig, NotReady};
use concierge_trips::content::store::{ContentStore, SqlStore};
use serde_json::json;

#[derive(Default)]
struct Booking {
    /// What the export answers now: status and body.
    answer: Mutex<(u16, String)>,
    requests: Mutex<Vec<Option<String>>>,
}

async fn booking_system(state: Arc<Booking>) -> String {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind");
    let url = format!(
        "http://{}/api/exports/products",
        listener.local_addr().expect("addr")
    );
    let app = axum::Router::new().route(
        "/api/exports/products",
        axum::routing::get(move |headers: HeaderMap| {
            let state = state.clone();
            async move {
                let auth = headers
                    .get("authorization")
                    .and_then(|v| v.to_str().ok())
                    .map(str::to_string);
                state.requests.lock().unwrap().push(auth.clone());
                if auth.as_deref() != Some("Bearer export-token") {
                    return StatusCode::UNAUTHORIZED.into_response();
                }
                let (status, body) = state.answer.lock().unwrap().clone();
                (StatusCode::from_u16(status).unwrap(), body).into_response()
            }
        }),
    );
    tokio::spawn(async move {
        let _ = axum::serve(listener, app).await;
    });
    url
}

fn export(generated_at: &str) -> String {
    json!({"generatedAt": generated_at, "products": [{"code": "SSLMP", "dates": []}]}).to_string()
}

fn data_as_of(handle: &CatalogHandle) -> String {
    handle.built().expect("a catalog").data_as_of.clone()
}

/// Waits (bounded) until the catalog's `dataAsOf` is `expected`: the handle re-reads the export
/// on its own.
async fn until_data_as_of(handle: &Arc<CatalogHandle>, expected: &str) {
    let deadline = Instant::now() + Duration::from_secs(10);
    while data_as_of(handle) != expected {
        assert!(
            Instant::now() < deadline,
            "dataAsOf never became {expected}"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_export_is_reread_swapped_whole_and_a_failed_refresh_keeps_the_last_good() {
    let booking = Arc::new(Booking::default());
    *booking.answer.lock().unwrap() = (200, export("2026-11-30T21:55:00+01:00"));
    let url = booking_system(booking.clone()).await;
    let dir = tempfile::tempdir().expect("temp dir");
    let store: Arc<dyn ContentStore> = Arc::new(
        SqlStore::open(&dir.path().join("c.sqlite"))
            .await
            .expect("store"),
    );
    let hotels = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/ski/buspro/hotel.xml");
    let handle = CatalogHandle::open(
        ExportConfig {
            url: Some(url),
            file: None,
            token: Some("export-token".into()),
            hotels: hotels.display().to_string(),
            refresh: std::time::Duration::ZERO,
        },
        store,
    )
    .await
    .expect("opens");
    assert_eq!(data_as_of(&handle), "2026-11-30T21:55:00+01:00");
    assert_eq!(
        booking.requests.lock().unwrap()[0].as_deref(),
        Some("Bearer export-token")
    );

    *booking.answer.lock().unwrap() = (200, export("2026-11-30T22:00:00+01:00"));
    until_data_as_of(&handle, "2026-11-30T22:00:00+01:00").await;

    for broken in [
        (500, "".to_string()),
        (200, "<html>Wartung</html>".to_string()),
        (200, json!({"products": []}).to_string()),
    ] {
        *booking.answer.lock().unwrap() = broken;
        let asked = booking.requests.lock().unwrap().len();
        let deadline = Instant::now() + Duration::from_secs(10);
        while booking.requests.lock().unwrap().len() < asked + 2 {
            assert!(Instant::now() < deadline, "the export was not asked again");
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        assert_eq!(
            data_as_of(&handle),
            "2026-11-30T22:00:00+01:00",
            "the last good catalog stays"
        );
    }
}

#[tokio::test]
async fn an_export_that_cannot_be_read_at_start_says_so_and_the_server_lives() {
    let dir = tempfile::tempdir().expect("temp dir");
    let store: Arc<dyn ContentStore> = Arc::new(
        SqlStore::open(&dir.path().join("c.sqlite"))
            .await
            .expect("store"),
    );
    let handle = CatalogHandle::open(
        ExportConfig {
            url: None,
            file: Some(dir.path().join("missing.json")),
            token: None,
            hotels: dir.path().join("missing.xml").display().to_string(),
            refresh: std::time::Duration::from_secs(300),
        },
        store,
    )
    .await
    .expect("opens anyway");
    assert!(handle.built().is_none());
    assert_eq!(
        handle.get().await.err(),
        Some(NotReady::Unavailable),
        "calls say the trip data is unavailable"
    );
}
