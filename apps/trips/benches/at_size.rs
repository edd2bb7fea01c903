//! A trips deployment's state at size, on disk, for `bench/run.sh`'s catalog and start-up rows
//! (`cargo bench -p concierge-trips --bench at_size -- --out DIR [--docs N] [--copies C]`).
//!
//! Writes what a deployment holds after its syncs, in the files a `[apps.trips]` config names:
//! - `DIR/content.sqlite`: the sample feed synced through the simulator (the trips' names), plus
//!   `--docs` generated documents (default 50,000, see `common::corpus`);
//! - `DIR/products.json`: the sample export repeated `--copies` times (default 150: 111,000
//!   trip × date × hotel rows); `DIR/hotel.xml`: BusPro's sample hotels.
//!
//! Prints one JSON line with the sizes. A directory already holding all three is left alone.

mod common;

use std::path::{Path, PathBuf};
use std::time::Instant;

use serde_json::{Value, json};

/// Generated documents get uids above the sample feed's.
const FIRST_GENERATED_UID: u64 = 1_000_000;

#[tokio::main]
async fn main() {
    let arg = |name: &str| std::env::args().skip_while(|a| a != name).nth(1);
    let out = PathBuf::from(arg("--out").expect("--out DIR"));
    let docs: usize = arg("--docs").map_or(50_000, |n| n.parse().expect("--docs N"));
    let copies: i64 = arg("--copies").map_or(150, |n| n.parse().expect("--copies C"));
    let examples = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/ski");
    let (database, export, hotels) = (
        out.join("content.sqlite"),
        out.join("products.json"),
        out.join("hotel.xml"),
    );
    if database.exists() && export.exists() && hotels.exists() {
        println!("{}", json!({"out": out, "reused": true}));
        return;
    }
    // A half-written directory from an interrupted run starts over.
    let _ = std::fs::remove_dir_all(&out);
    std::fs::create_dir_all(&out).expect("the output directory");
    let started = Instant::now();

    let (_, store) = common::sample_mirror(&out).await;

    let (generated, words) = common::corpus(&examples.join("feed"), docs, FIRST_GENERATED_UID);
    for doc in &generated {
        store.put(doc).await.expect("a generated document");
    }
    // Readers rebuild on a new generation, as after a sync that changed documents.
    let mut state = store.state().await.expect("the sync state");
    state.generation += 1;
    store
        .save_state(&state)
        .await
        .expect("the sync state saved");
    let _ = std::fs::remove_file(out.join("sync.lock"));

    let sample: Value = serde_json::from_str(
        &std::fs::read_to_string(examples.join("export/products.json")).expect("the export"),
    )
    .expect("the export's JSON");
    let big = common::repeat(&sample, copies);
    std::fs::write(&export, serde_json::to_vec(&big).expect("serialize")).expect("the export");
    std::fs::copy(examples.join("buspro/hotel.xml"), &hotels).expect("hotel.xml");
    let dates: usize = big["products"].as_array().map_or(0, |p| {
        p.iter()
            .map(|p| p["dates"].as_array().map_or(0, Vec::len))
            .sum()
    });
    println!(
        "{}",
        json!({
            "out": out,
            "generated_documents": docs,
            "words_per_document": words / docs.max(1),
            "export_dates": dates,
            "database_bytes": std::fs::metadata(&database).map_or(0, |m| m.len()),
            "export_bytes": std::fs::metadata(&export).map_or(0, |m| m.len()),
            "seconds": started.elapsed().as_secs_f64(),
        })
    );
}
