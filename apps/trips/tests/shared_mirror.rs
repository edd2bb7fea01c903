//! The content mirror in PostgreSQL, as several instances share it: three syncers (three
//! "instances", each with its own store and pool) on one fresh database of the server test.sh
//! starts (`CONCIERGE_TEST_POSTGRES`), against one scripted TYPO3. One sync serves them all;
//! TYPO3's pause holds for all; every instance's search sees what the one run fetched. Without
//! that variable the tests say so and pass.

mod common;

use std::sync::Arc;
use std::time::Duration;

use common::{KEY, Reply, Typo3, daytime};
use concierge_trips::content::clock::ManualClock;
use concierge_trips::content::search::ContentIndex;
use concierge_trips::content::store::{ContentStore, SqlStore};
use concierge_trips::content::sync::{FeedSettings, Outcome, RunOptions, SLOT, Syncer};
use serde_json::json;

struct Instance {
    store: Arc<dyn ContentStore>,
    syncer: Syncer,
}

fn instance(url: &str, typo3: &Typo3, dir: &std::path::Path) -> Instance {
    let store: Arc<dyn ContentStore> = Arc::new(SqlStore::shared(url).expect("store"));
    let syncer = Syncer::new(
        FeedSettings {
            base_url: format!("http://{}", typo3.addr),
            api_key: KEY.into(),
            timeout: Duration::from_millis(300),
            // Each instance on a host of its own: their file locks could never meet.
            lock_path: dir.join(format!("{}.lock", uuid_ish())),
        },
        store.clone(),
        Arc::new(typo3.clock.clone()),
    )
    .expect("syncer");
    Instance { store, syncer }
}

fn uuid_ish() -> String {
    use std::sync::atomic::{AtomicUsize, Ordering};
    static NEXT: AtomicUsize = AtomicUsize::new(0);
    format!("instance-{}", NEXT.fetch_add(1, Ordering::SeqCst))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn one_sync_for_the_deployment_one_pause_for_all_and_every_instance_searches_it() {
    let Some(url) = concierge_testkit::postgres::fresh_database("mirror").await else {
        return;
    };
    let typo3 = Typo3::start(ManualClock::at(daytime())).await;
    for uid in 1..=4 {
        typo3.add_page(uid, json!({}));
    }
    let dir = tempfile::tempdir().unwrap();
    let instances: Vec<Instance> = (0..3).map(|_| instance(&url, &typo3, dir.path())).collect();
    // The second instance's search, open before anything was synced.
    let index = ContentIndex::open(instances[1].store.clone(), None)
        .await
        .unwrap();
    assert!(index.is_empty());

    // Three schedules fire at once: one run, the others find it locked or its slot taken.
    let scheduled = RunOptions {
        slot: Some(SLOT),
        ..RunOptions::default()
    };
    let runs = instances.iter().map(|i| i.syncer.run(scheduled));
    let reports: Vec<_> = futures::future::join_all(runs)
        .await
        .into_iter()
        .map(|r| r.expect("the store works"))
        .collect();
    let completed = reports
        .iter()
        .filter(|r| r.outcome == Outcome::Completed)
        .count();
    let busy = reports
        .iter()
        .filter(|r| r.outcome == Outcome::Busy)
        .count();
    assert_eq!((completed, busy), (1, 2), "{reports:?}");
    let paths = typo3.paths();
    assert_eq!(
        paths
            .iter()
            .filter(|p| *p == "/api/content/manifest")
            .count(),
        1,
        "{paths:?}"
    );
    // One page a second, for the deployment.
    let pages: Vec<_> = typo3
        .requests()
        .into_iter()
        .filter(|r| r.path.starts_with("/pages/"))
        .collect();
    assert_eq!(pages.len(), 4, "{paths:?}");
    assert!(
        pages
            .windows(2)
            .all(|w| w[1].at - w[0].at >= chrono::Duration::seconds(1)),
        "{pages:?}"
    );

    // Every instance sees the mirror the one run filled; the search rebuilds on the generation.
    for other in &instances {
        assert_eq!(other.store.documents().await.unwrap().len(), 4);
    }
    index.reload_if_changed().await.unwrap();
    assert_eq!(index.len(), 4);

    // Later in the same slot, the other instances' schedules do nothing, and TYPO3 hears nothing.
    typo3.clear_log();
    typo3.clock.advance(Duration::from_secs(120));
    for other in &instances[1..] {
        assert_eq!(
            other.syncer.run(scheduled).await.unwrap().outcome,
            Outcome::Busy
        );
    }
    assert!(typo3.paths().is_empty(), "{:?}", typo3.paths());

    // TYPO3 asks for a pause during one instance's run: every instance keeps it.
    typo3.clock.advance(SLOT);
    typo3.script.lock().unwrap().manifest_replies = vec![Reply::status(503).retry_after("3600")];
    let stopped = instances[2].syncer.run(scheduled).await.unwrap();
    assert!(
        matches!(stopped.outcome, Outcome::Stopped(_)),
        "{stopped:?}"
    );
    typo3.clear_log();
    typo3.clock.advance(SLOT);
    for other in &instances {
        let report = other.syncer.run(RunOptions::default()).await.unwrap();
        assert!(matches!(report.outcome, Outcome::Paused(_)), "{report:?}");
    }
    assert!(typo3.paths().is_empty(), "{:?}", typo3.paths());
}
