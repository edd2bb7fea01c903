//! Our half of `bench/search.sh`: `search_content`'s path over the shared search benchmark's
//! corpus, with the same queries and client counts the MariaDB half runs.
//!
//! ```text
//! cargo bench -p concierge-trips --bench search_side_by_side -- \
//!     --corpus corpus.jsonl --queries queries.tsv --clients 1,8 --rounds 5 --out ours.json
//! ```
//!
//! The corpus is JSON Lines `{"id", "type", "title", "breadcrumb", "body_md"}`; each document
//! becomes a mirrored document of that type (the index weighs types as the seed does), its id
//! its TYPO3 uid. Each client is a thread of its own running every query once per round, from
//! its own offset, as fast as it can; a search is `ContentIndex::search` (query analysis, the
//! tantivy search, type weights, eight excerpts). Written to `--out`: the index build time, every
//! search's latency per client count and the wall time, and each query's top eight ids.

mod common;

use std::sync::Arc;
use std::time::Instant;

use common::{MemoryStore, generated};
use concierge_trips::content::search::ContentIndex;
use serde_json::{Value, json};

struct Args {
    corpus: String,
    queries: String,
    clients: Vec<usize>,
    rounds: usize,
    out: String,
}

fn args() -> Args {
    let all: Vec<String> = std::env::args().collect();
    let value = |flag: &str| {
        all.iter()
            .position(|a| a == flag)
            .and_then(|at| all.get(at + 1))
            .cloned()
    };
    let required = |flag: &str| value(flag).unwrap_or_else(|| panic!("{flag} is required"));
    Args {
        corpus: required("--corpus"),
        queries: required("--queries"),
        clients: value("--clients")
            .unwrap_or_else(|| "1,8".into())
            .split(',')
            .map(|n| n.parse().expect("--clients: numbers, comma-separated"))
            .collect(),
        rounds: value("--rounds").map_or(5, |n| n.parse().expect("--rounds: a number")),
        out: required("--out"),
    }
}

/// `id<TAB>category<TAB>query`, `#` lines are comments.
fn queries(path: &str) -> Vec<(String, String)> {
    std::fs::read_to_string(path)
        .expect("the queries")
        .lines()
        .filter(|line| !line.starts_with('#') && !line.trim().is_empty())
        .map(|line| {
            let mut fields = line.splitn(3, '\t');
            let id = fields.next().expect("an id").to_string();
            let _category = fields.next();
            (id, fields.next().expect("a query").to_string())
        })
        .collect()
}

/// The corpus id back from a hit's URL (`…/<type>/<id>/`).
fn id_of(url: &str) -> u64 {
    url.trim_end_matches('/')
        .rsplit('/')
        .next()
        .and_then(|id| id.parse().ok())
        .expect("a generated URL ends in its id")
}

fn main() {
    let args = args();
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("a runtime");
    let text = std::fs::read_to_string(&args.corpus).expect("the corpus");
    let docs: Vec<_> = text
        .lines()
        .map(|line| {
            let doc: Value = serde_json::from_str(line).expect("a corpus line");
            let breadcrumb: Vec<&str> = doc["breadcrumb"]
                .as_str()
                .unwrap_or_default()
                .split(" > ")
                .collect();
            generated(
                doc["type"].as_str().expect("a type"),
                doc["id"].as_u64().expect("an id"),
                doc["title"].as_str().unwrap_or_default().to_string(),
                &breadcrumb,
                doc["body_md"].as_str().unwrap_or_default().to_string(),
            )
        })
        .collect();
    let count = docs.len();
    let started = Instant::now();
    let index = Arc::new(
        runtime
            .block_on(ContentIndex::open(Arc::new(MemoryStore::new(docs)), None))
            .expect("the index"),
    );
    let build_s = started.elapsed().as_secs_f64();
    eprintln!("ours: {count} documents indexed in {build_s:.1} s");
    let queries = Arc::new(queries(&args.queries));

    // Warm-up: every query once; its answers are the top eights compared with MariaDB's.
    let mut top = serde_json::Map::new();
    for (id, query) in queries.iter() {
        let hits = runtime.block_on(index.search(query)).expect("a search");
        let ids: Vec<u64> = hits.iter().map(|hit| id_of(&hit.url)).collect();
        top.insert(id.clone(), json!(ids));
    }

    let mut runs = Vec::new();
    for &clients in &args.clients {
        let started = Instant::now();
        let threads: Vec<_> = (0..clients)
            .map(|client| {
                let index = index.clone();
                let queries = queries.clone();
                let rounds = args.rounds;
                std::thread::spawn(move || {
                    let runtime = tokio::runtime::Builder::new_current_thread()
                        .enable_all()
                        .build()
                        .expect("a runtime");
                    let offset = client * queries.len() / clients;
                    let mut latencies = Vec::with_capacity(rounds * queries.len());
                    for _ in 0..rounds {
                        for i in 0..queries.len() {
                            let (_, query) = &queries[(offset + i) % queries.len()];
                            let t = Instant::now();
                            runtime.block_on(index.search(query)).expect("a search");
                            latencies.push(t.elapsed().as_secs_f64() * 1000.0);
                        }
                    }
                    latencies
                })
            })
            .collect();
        let latencies: Vec<f64> = threads
            .into_iter()
            .flat_map(|t| t.join().expect("a client"))
            .collect();
        let wall_s = started.elapsed().as_secs_f64();
        eprintln!(
            "ours: {clients} clients, {} searches in {wall_s:.1} s",
            latencies.len()
        );
        runs.push(json!({"clients": clients, "latencies_ms": latencies, "wall_s": wall_s}));
    }
    let report = json!({"documents": count, "build_s": build_s, "runs": runs, "top": top});
    std::fs::write(&args.out, report.to_string()).expect("the report written");
}
