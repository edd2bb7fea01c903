//! Trip catalog benchmark (`cargo bench -p concierge-trips --bench catalog [-- --copies N]`).
//!
//! The sample export (`examples/ski/export/products.json`, 701 date × hotel rows) is repeated
//! half-year after half-year (`--copies`, default 150) into one export of ≥ 100,000 rows, joined to the
//! sample content mirror. Measured: parsing the export, building the catalog, and `search_trips`
//! called as the endpoint calls it (arguments in, JSON result out) for a mix of queries, one
//! client, p50/p99.

mod common;

use std::time::{Duration, Instant};

use common::repeat;
use concierge_core::{CallContext, Caller};
use concierge_trips::catalog::TripCatalog;
use concierge_trips::catalog::export::{BusproHotels, Export};
use serde_json::{Value, json};

#[tokio::main]
async fn main() {
    let copies: i64 = std::env::args()
        .skip_while(|a| a != "--copies")
        .nth(1)
        .and_then(|n| n.parse().ok())
        .unwrap_or(150);
    let examples = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/ski");
    let dir = tempfile::tempdir().expect("temp dir");

    // The sample mirror, synced through the simulator on a manual clock.
    let (addr, store) = common::sample_mirror(dir.path()).await;
    let database = dir.path().join("content.sqlite");

    // The big export: the sample's dates repeated, a week later each copy.
    let sample: Value = serde_json::from_str(
        &std::fs::read_to_string(examples.join("export/products.json")).expect("export"),
    )
    .expect("json");
    let big = repeat(&sample, copies);
    let bytes = serde_json::to_vec(&big).expect("serialize");
    let export_path = dir.path().join("products.json");
    std::fs::write(&export_path, &bytes).expect("write");

    let started = Instant::now();
    let export = Export::parse(&bytes).expect("parse");
    let parsed = started.elapsed();
    let hotels = BusproHotels::parse(
        &std::fs::read_to_string(examples.join("buspro/hotel.xml")).expect("hotel.xml"),
    )
    .expect("hotels");
    let docs = store.documents().await.expect("docs");
    let started = Instant::now();
    let catalog = TripCatalog::build(&export, &hotels, &docs);
    let built = started.elapsed();
    println!(
        "catalog: {} date × hotel rows ({} dates, {:.1} MB export); parse {:.0} ms, build {:.0} ms",
        catalog.rows.len(),
        catalog.dates.len(),
        bytes.len() as f64 / 1e6,
        ms(parsed),
        ms(built)
    );
    drop(catalog);

    // The tool as the endpoint calls it.
    let config: concierge_trips::TripsConfig = serde_json::from_value(json!({
        "database": database,
        "as_of": "2026-11-30",
        "feed": {"base_url": format!("http://{addr}"), "api_key": "bench"},
        "schedule": {"enabled": false},
        "export": {"file": export_path, "hotels": examples.join("buspro/hotel.xml")},
        "periods": [{"name": "Weihnachten & Silvester", "from": "2026-12-19", "to": "2027-01-06"}],
    }))
    .expect("config");
    let started = Instant::now();
    let tools = concierge_trips::build(&config).await.expect("tools");
    println!(
        "tools ready (content index + catalog) in {:.0} ms",
        ms(started.elapsed())
    );
    let search = tools.get("search_trips").expect("search_trips");
    let mix = [
        json!({}),
        json!({"query": "Val Thorens"}),
        json!({"query": "Sportclub Lederer"}),
        json!({"query": "SSLMP"}),
        json!({"query": "Österreich", "persons": 4}),
        json!({"period": "Weihnachten & Silvester"}),
        json!({"dateFrom": "2027-02-01", "dateTo": "2027-02-28", "length": "long"}),
        json!({"board": "Abendessen", "includes": ["Skipass"]}),
        json!({"roomType": "9er+", "limit": 25}),
        json!({"priceMax": 300, "length": "short"}),
        json!({"country": "Frankreich", "concept": "Boarderweek"}),
        json!({"query": "Hotel Chamois d'Or in Val Thorens"}),
        json!({"query": "Radsportfans"}),
        json!({"query": "Kreuzfahrt"}),
    ];
    let call = |arguments: Value| {
        let search = search.clone();
        async move {
            let output = search
                .call(
                    arguments,
                    CallContext::new(Caller::client("bench"), "bench"),
                )
                .await
                .expect("search_trips answers");
            // The endpoint sends the result as compact JSON text too.
            let text = serde_json::to_string(&output).expect("json");
            (output, text.len())
        }
    };
    for arguments in &mix {
        call(arguments.clone()).await;
    }
    let mut latencies = Vec::new();
    for _ in 0..100 {
        for arguments in &mix {
            let t = Instant::now();
            call(arguments.clone()).await;
            latencies.push(t.elapsed());
        }
    }
    latencies.sort();
    let at = |p: f64| latencies[((latencies.len() as f64 * p) as usize).min(latencies.len() - 1)];
    println!(
        "search_trips, one client, {} calls ({} queries × 100): p50 {:.3} ms, p90 {:.3} ms, p99 {:.3} ms, max {:.3} ms",
        latencies.len(),
        mix.len(),
        ms(at(0.5)),
        ms(at(0.9)),
        ms(at(0.99)),
        ms(*latencies.last().unwrap())
    );
    for arguments in &mix {
        let t = Instant::now();
        let (output, _) = call(arguments.clone()).await;
        let total = output.get("total").cloned().unwrap_or(json!(0));
        println!(
            "  {:<70} total {:>6}  {:.3} ms",
            arguments.to_string(),
            total.to_string(),
            ms(t.elapsed())
        );
    }
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}
