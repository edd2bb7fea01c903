//! Content mirror benchmark (`cargo bench -p concierge-trips --bench content [-- --docs N]`).
//!
//! 1. **Sync**: the sample feed (`examples/ski/feed`) through the simulator into a fresh store on
//!    a manual clock (the load rules' waits cost no time), twice: requests per run, and how many
//!    of the second run's are refetches of unchanged items (should be 0).
//! 2. **Search**: `search_content`'s path (`ContentIndex::search`: query analysis, tantivy,
//!    weighting, excerpts) over a generated corpus of 50,000 German documents of ~700 words,
//!    built from the sample feed's own sentences; one client, p50/p99 over realistic queries.
//!    For scale: the seed's MariaDB engine answered such a corpus at p50 50 ms / p99 347 ms.

mod common;

use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};

use chrono::{TimeZone, Utc};
use common::{MemoryStore, corpus};
use concierge_sim_typo3::SimulatorConfig;
use concierge_trips::content::clock::ManualClock;
use concierge_trips::content::search::ContentIndex;
use concierge_trips::content::store::{ContentStore, SqlStore};
use concierge_trips::content::sync::{FeedSettings, RunOptions, Syncer};

const QUERIES: &[&str] = &[
    "Skipass",
    "Val Thorens",
    "Oesterreich Skireise",
    "ohne Skipass",
    "Halbpension Abendessen",
    "Zustieg Zürich",
    "Sportclub Lederer",
    "Lawinen",
    "Val d'Isère",
    "Busanreise Gepäck",
    "DZ HP",
    "Familienwoche Ostern",
    "Snowboardkurs Anfänger",
    "Après-Ski",
    "Chaviere",
    "Reiseversicherung Rücktritt",
    "Skiverleih Helm",
    "Silvester Party",
    "Zell am See Sauna",
    "nicht im Preis enthalten",
];

#[tokio::main]
async fn main() {
    let docs = std::env::args()
        .skip_while(|a| a != "--docs")
        .nth(1)
        .and_then(|n| n.parse().ok())
        .unwrap_or(50_000usize);
    let feed = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/ski/feed");
    sync_bench(&feed).await;
    search_bench(&feed, docs).await;
}

async fn sync_bench(feed: &Path) {
    let (addr, serving) = concierge_sim_typo3::start(&SimulatorConfig {
        listen: "127.0.0.1:0".into(),
        feed: feed.to_path_buf(),
        api_key: "bench".into(),
    })
    .await
    .expect("simulator");
    tokio::spawn(serving);
    let dir = tempfile::tempdir().expect("temp dir");
    let store: Arc<dyn ContentStore> = Arc::new(
        SqlStore::open(&dir.path().join("content.sqlite"))
            .await
            .expect("store"),
    );
    let clock = ManualClock::at(Utc.with_ymd_and_hms(2026, 12, 1, 1, 0, 0).unwrap()); // 02:00 Berlin
    let syncer = Syncer::new(
        FeedSettings {
            base_url: format!("http://{addr}"),
            api_key: "bench".into(),
            timeout: Duration::from_secs(10),
            lock_path: dir.path().join("sync.lock"),
        },
        store.clone(),
        Arc::new(clock.clone()),
    )
    .expect("syncer");
    for run in 1..=2 {
        let started = Instant::now();
        let report = syncer.run(RunOptions::default()).await.expect("sync");
        println!(
            "sync run {run}: {} requests; {} records and {} pages fetched; {:?} wall; outcome {:?}; \
             refetches of unchanged items: {}",
            report.requests,
            report.records_fetched,
            report.pages_fetched,
            started.elapsed(),
            report.outcome,
            if run == 1 {
                0
            } else {
                report.requests.saturating_sub(1)
            },
        );
        clock.advance(Duration::from_secs(3600));
    }
    let searchable = store
        .documents()
        .await
        .expect("docs")
        .iter()
        .filter(|d| d.is_searchable())
        .count();
    println!("sample mirror: {searchable} searchable documents");
}

async fn search_bench(feed: &Path, count: usize) {
    let started = Instant::now();
    let (docs, words) = corpus(feed, count, 1);
    let store: Arc<dyn ContentStore> = Arc::new(MemoryStore::new(docs));
    let generated_in = started.elapsed();
    let started = Instant::now();
    let index = ContentIndex::open(store, None).await.expect("index");
    println!(
        "corpus: {} documents, {:.0} words each on average (generated in {generated_in:?}); index built in {:?}",
        index.len(),
        words as f64 / count as f64,
        started.elapsed()
    );
    // Warm-up, then every query 100 times, interleaved.
    for query in QUERIES {
        index.search(query).await.expect("search");
    }
    let mut latencies = Vec::new();
    let mut hits = 0;
    for _ in 0..100 {
        for query in QUERIES {
            let t = Instant::now();
            hits += index.search(query).await.expect("search").len();
            latencies.push(t.elapsed());
        }
    }
    latencies.sort();
    let at = |p: f64| latencies[((latencies.len() as f64 * p) as usize).min(latencies.len() - 1)];
    println!(
        "search_content over {} docs, one client, {} searches ({} queries × 100): p50 {:.2} ms, p90 {:.2} ms, p99 {:.2} ms, max {:.2} ms; {:.1} hits per search",
        index.len(),
        latencies.len(),
        QUERIES.len(),
        ms(at(0.50)),
        ms(at(0.90)),
        ms(at(0.99)),
        ms(*latencies.last().unwrap()),
        hits as f64 / latencies.len() as f64,
    );
    for query in QUERIES {
        let t = Instant::now();
        let n = index.search(query).await.expect("search").len();
        println!("  {query:<28} {n} hits  {:.2} ms", ms(t.elapsed()));
    }
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}
