//! Every load rule and robustness rule of the seed's content sync, against a scripted TYPO3 on
//! 127.0.0.1, asserting the exact requests and their spacing on the manual clock.

mod common;

use std::time::Duration;

use chrono::{DateTime, Utc};
use common::{KEY, Mirror, Reply, Typo3, daytime, night};
use concierge_trips::content::clock::ManualClock;
use concierge_trips::content::document::PageState;
use concierge_trips::content::sync::{Outcome, RunOptions, SyncReport};
use serde_json::json;

fn secs(from: DateTime<Utc>, to: DateTime<Utc>) -> i64 {
    (to - from).num_seconds()
}

/// Seconds between consecutive requests.
fn gaps(typo3: &Typo3) -> Vec<i64> {
    let log = typo3.requests();
    log.windows(2).map(|w| secs(w[0].at, w[1].at)).collect()
}

async fn feed_with_pages(pages: u64, start: DateTime<Utc>) -> Typo3 {
    let typo3 = Typo3::start(ManualClock::at(start)).await;
    for uid in 1..=pages {
        typo3.add_page(uid, json!({}));
    }
    typo3
}

#[tokio::test]
async fn one_request_at_a_time_pages_a_second_apart_key_on_every_request() {
    let typo3 = feed_with_pages(3, daytime()).await;
    typo3.add_record(
        "product",
        10,
        json!({}),
        json!({"code": "SSLMP", "title": "Skiopening"}),
    );
    let mirror = Mirror::new(&typo3).await;
    let report = mirror.delta().await;
    assert_eq!(report.outcome, Outcome::Completed);
    assert_eq!(
        typo3.paths(),
        [
            "/api/content/manifest",
            "/api/content/records",
            "/pages/1",
            "/pages/2",
            "/pages/3"
        ]
    );
    assert_eq!(gaps(&typo3), [0, 0, 1, 1]);
    assert!(
        typo3
            .requests()
            .iter()
            .all(|r| r.api_key.as_deref() == Some(KEY))
    );
    assert_eq!(
        (
            report.records_fetched,
            report.pages_fetched,
            report.requests
        ),
        (1, 3, 5)
    );
}

#[tokio::test]
async fn a_second_run_refetches_nothing_unchanged_and_a_changed_item_alone() {
    let typo3 = feed_with_pages(3, daytime()).await;
    typo3.add_record(
        "hotel",
        20,
        json!({}),
        json!({"title": "Sportclub Lederer", "codes": ["LEDER"]}),
    );
    let mirror = Mirror::new(&typo3).await;
    mirror.delta().await;
    typo3.clear_log();
    let report = mirror.delta().await;
    assert_eq!(typo3.paths(), ["/api/content/manifest"]);
    assert!(!report.changed);

    typo3.set_modified("page", 2, "2026-11-29T08:00:00+01:00");
    typo3.set_modified("hotel", 20, "2026-11-29T08:00:00+01:00");
    typo3.clear_log();
    mirror.delta().await;
    assert_eq!(
        typo3.paths(),
        ["/api/content/manifest", "/api/content/records", "/pages/2"]
    );
    assert_eq!(typo3.requests()[1].asked, ["hotel:20:de"]);
}

#[tokio::test]
async fn a_slow_answer_makes_the_next_request_wait_five_seconds() {
    let typo3 = feed_with_pages(3, daytime()).await;
    typo3.script_page(1, vec![Reply::ok("<p>langsam</p>").slow(3)]);
    let mirror = Mirror::new(&typo3).await;
    mirror.delta().await;
    // Page 1 arrives at t, answers at t+3; page 2 waits until t+3+5; page 3 is a second later.
    assert_eq!(gaps(&typo3), [0, 8, 1]);
}

#[tokio::test]
async fn three_slow_pages_in_a_row_end_the_page_phase() {
    let typo3 = feed_with_pages(5, daytime()).await;
    for uid in 1..=5 {
        typo3.script_page(uid, vec![Reply::ok("<p>langsam</p>").slow(3)]);
    }
    let mirror = Mirror::new(&typo3).await;
    let report = mirror.delta().await;
    assert_eq!(
        typo3.paths(),
        ["/api/content/manifest", "/pages/1", "/pages/2", "/pages/3"]
    );
    assert_eq!(report.outcome, Outcome::Completed);
    assert_eq!((report.pages_fetched, report.pages_left), (3, 2));
    // The two left are asked for next run.
    typo3.clear_log();
    mirror.delta().await;
    assert_eq!(
        typo3.paths(),
        ["/api/content/manifest", "/pages/4", "/pages/5"]
    );
}

#[tokio::test]
async fn a_503_stops_the_run_and_retry_after_pauses_later_runs() {
    let typo3 = feed_with_pages(3, daytime()).await;
    typo3.script_page(
        2,
        vec![
            Reply::status(503).retry_after("3600"),
            Reply::ok("<p>wieder da</p>"),
        ],
    );
    let mirror = Mirror::new(&typo3).await;
    let report = mirror.delta().await;
    assert!(matches!(report.outcome, Outcome::Stopped(_)), "{report:?}");
    assert_eq!(
        typo3.paths(),
        ["/api/content/manifest", "/pages/1", "/pages/2"]
    );
    let paused = paused_until(&mirror).await;
    assert_eq!(secs(typo3.requests()[2].at, paused), 3600);

    typo3.clear_log();
    typo3.clock.advance(Duration::from_secs(1800));
    let report = mirror.delta().await;
    assert_eq!(report.outcome, Outcome::Paused(paused));
    assert!(typo3.paths().is_empty(), "a paused run asks nothing");

    typo3.clock.advance(Duration::from_secs(1801));
    let report = mirror.delta().await;
    assert_eq!(report.outcome, Outcome::Completed);
    assert_eq!(
        typo3.paths(),
        ["/api/content/manifest", "/pages/2", "/pages/3"]
    );
}

#[tokio::test]
async fn retry_after_may_be_an_http_date() {
    let typo3 = feed_with_pages(1, daytime()).await;
    let in_two_hours = (Utc::now() + chrono::Duration::hours(2)).to_rfc2822();
    typo3.script.lock().unwrap().manifest_replies =
        vec![Reply::status(503).retry_after(&in_two_hours)];
    let mirror = Mirror::new(&typo3).await;
    mirror.delta().await;
    let paused = paused_until(&mirror).await;
    let minutes = secs(daytime(), paused) / 60;
    assert!((118..=120).contains(&minutes), "{minutes}");
}

/// Until when the mirror's state says the sync is paused (a 503's Retry-After).
async fn paused_until(mirror: &Mirror) -> DateTime<Utc> {
    let state = mirror.store.state().await.expect("state");
    state.paused_until.expect("paused")
}

/// One delta run over five pages, the listed ones answering a status of their own.
async fn run_with_failures(failing: &[(u64, u16)]) -> (Typo3, Mirror, SyncReport) {
    let typo3 = feed_with_pages(5, daytime()).await;
    for &(uid, status) in failing {
        typo3.script_page(uid, vec![Reply::status(status)]);
    }
    let mirror = Mirror::new(&typo3).await;
    let report = mirror.delta().await;
    (typo3, mirror, report)
}

#[tokio::test]
async fn three_consecutive_5xx_stop_the_run_nothing_retried() {
    let (typo3, mirror, report) = run_with_failures(&[(1, 500), (2, 502), (3, 500)]).await;
    assert!(matches!(report.outcome, Outcome::Stopped(_)), "{report:?}");
    assert_eq!(
        typo3.paths(),
        ["/api/content/manifest", "/pages/1", "/pages/2", "/pages/3"]
    );
    assert_eq!(
        mirror.doc("page:1:de").await.page.expect("stored").state,
        PageState::Failed
    );
    assert!(mirror.doc("page:4:de").await.page.is_none());
}

#[tokio::test]
async fn a_success_between_failures_resets_the_count() {
    let (typo3, _mirror, report) = run_with_failures(&[(1, 500), (2, 500), (4, 500)]).await;
    assert_eq!(report.outcome, Outcome::Completed);
    assert_eq!(typo3.paths().len(), 6);
}

#[tokio::test]
async fn timeouts_count_as_failures_and_are_asked_again_next_run() {
    let typo3 = feed_with_pages(4, daytime()).await;
    for uid in 1..=3 {
        typo3.script_page(uid, vec![Reply::hang(), Reply::ok("<p>da</p>")]);
    }
    let mirror = Mirror::new(&typo3).await;
    let report = mirror.delta().await;
    assert!(matches!(report.outcome, Outcome::Stopped(_)), "{report:?}");
    assert_eq!(typo3.paths().len(), 4, "manifest + three timeouts");
    assert!(
        mirror.doc("page:1:de").await.page.is_none(),
        "a timeout stores nothing"
    );
    // A timeout is slow: the next request waited 5 s.
    assert_eq!(gaps(&typo3)[1..], [5, 5]);

    typo3.clear_log();
    typo3.clock.advance(Duration::from_secs(3600));
    mirror.delta().await;
    assert_eq!(
        typo3.paths(),
        [
            "/api/content/manifest",
            "/pages/1",
            "/pages/2",
            "/pages/3",
            "/pages/4"
        ]
    );
}

#[tokio::test]
async fn outside_the_night_window_a_run_fetches_at_most_50_pages() {
    let typo3 = feed_with_pages(55, daytime()).await;
    let mirror = Mirror::new(&typo3).await;
    let report = mirror.delta().await;
    assert_eq!((report.pages_fetched, report.pages_left), (50, 5));

    typo3.clear_log();
    let report = mirror.delta().await;
    assert_eq!((report.pages_fetched, report.pages_left), (5, 0));
}

#[tokio::test]
async fn ignore_window_and_the_night_lift_the_budget() {
    let typo3 = feed_with_pages(55, daytime()).await;
    let mirror = Mirror::new(&typo3).await;
    let report = mirror
        .run(RunOptions {
            ignore_window: true,
            ..RunOptions::default()
        })
        .await;
    assert_eq!(report.pages_fetched, 55);

    let typo3 = feed_with_pages(55, night()).await;
    let mirror = Mirror::new(&typo3).await;
    assert_eq!(mirror.delta().await.pages_fetched, 55);
}

#[tokio::test]
async fn refresh_refetches_items_older_than_seven_days_oldest_first() {
    let typo3 = feed_with_pages(2, daytime()).await;
    let mirror = Mirror::new(&typo3).await;
    mirror.delta().await; // pages 1, 2 fetched now
    typo3.clock.advance(Duration::from_secs(3 * 86_400));
    typo3.add_page(3, json!({}));
    mirror.delta().await; // page 3 fetched three days later

    typo3.clock.advance(Duration::from_secs(5 * 86_400)); // 1 and 2 are 8 days old, 3 is 5
    typo3.clear_log();
    mirror.delta().await;
    assert_eq!(
        typo3.paths(),
        ["/api/content/manifest"],
        "a delta does not refresh"
    );
    typo3.clear_log();
    mirror
        .run(RunOptions {
            refresh: true,
            ..RunOptions::default()
        })
        .await;
    assert_eq!(
        typo3.paths(),
        ["/api/content/manifest", "/pages/1", "/pages/2"]
    );
}

#[tokio::test]
async fn a_run_that_finds_the_lock_held_does_nothing() {
    let typo3 = feed_with_pages(1, daytime()).await;
    let mirror = Mirror::new(&typo3).await;
    let held = std::fs::File::create(mirror.dir.path().join("content.sqlite.sync.lock"))
        .expect("lock file");
    held.lock().expect("lock");
    let report = mirror.delta().await;
    assert_eq!(report.outcome, Outcome::Busy);
    assert!(typo3.paths().is_empty());
    drop(held);
    assert_eq!(mirror.delta().await.outcome, Outcome::Completed);
}

/// Clock jumps against the schedule's slots: a scheduled run finds its slot taken for the slot's
/// length; the wall clock set back an hour does not stop the schedule until the clock catches
/// up (the last run is then "in the future"), and set forward three days makes one run, not
/// one per missed slot.
#[tokio::test]
async fn scheduled_runs_survive_the_clock_jumping_back_and_forward() {
    use concierge_trips::content::sync::SLOT;
    let typo3 = feed_with_pages(1, night()).await;
    let mirror = Mirror::new(&typo3).await;
    let scheduled = RunOptions {
        slot: Some(SLOT),
        ..RunOptions::default()
    };
    assert_eq!(mirror.run(scheduled).await.outcome, Outcome::Completed);
    assert_eq!(
        mirror.run(scheduled).await.outcome,
        Outcome::Busy,
        "same slot"
    );
    let start = concierge_trips::content::clock::Clock::now(&typo3.clock);
    typo3.clock.set_wall(start - chrono::Duration::hours(1));
    assert_eq!(
        mirror.run(scheduled).await.outcome,
        Outcome::Completed,
        "set back an hour: the next slot's run happens"
    );
    typo3.clock.set_wall(start + chrono::Duration::days(3));
    assert_eq!(mirror.run(scheduled).await.outcome, Outcome::Completed);
    assert_eq!(
        mirror.run(scheduled).await.outcome,
        Outcome::Busy,
        "one run for the missed slots"
    );
}

#[tokio::test]
async fn a_failed_invalid_or_empty_manifest_changes_nothing() {
    let typo3 = feed_with_pages(2, daytime()).await;
    let mirror = Mirror::new(&typo3).await;
    mirror.delta().await;
    let before = mirror.store.documents().await.expect("docs");
    let good_at = mirror
        .store
        .state()
        .await
        .expect("state")
        .last_good_manifest_at;
    typo3.clock.advance(Duration::from_secs(3600));
    for reply in [
        Reply::status(500),
        Reply::ok("<html>Wartungsarbeiten</html>"),
        Reply::ok(r#"{"sites": [{"site": "ser", "hosts": []}], "items": []}"#),
        Reply::ok(
            r#"{"sites": [{"site": "ser", "hosts": []}], "items": [{"type": "page", "uid": 1}]}"#,
        ),
        Reply::hang(),
    ] {
        typo3.script.lock().unwrap().manifest_replies = vec![reply.clone()];
        typo3.clear_log();
        let report = mirror.delta().await;
        assert!(
            matches!(report.outcome, Outcome::ManifestFailed(_)),
            "{reply:?}: {report:?}"
        );
        assert_eq!(typo3.paths(), ["/api/content/manifest"]);
        assert_eq!(mirror.store.documents().await.expect("docs"), before);
        assert_eq!(
            mirror
                .store
                .state()
                .await
                .expect("state")
                .last_good_manifest_at,
            good_at
        );
    }
}

#[tokio::test]
async fn records_absent_from_the_answer_and_items_absent_from_the_manifest_are_deleted() {
    let typo3 = feed_with_pages(2, daytime()).await;
    typo3.add_record(
        "hotel",
        20,
        json!({}),
        json!({"title": "Gästehaus Alpenrose"}),
    );
    typo3.add_record(
        "hotel",
        21,
        json!({}),
        json!({"title": "Pension Zürcherhof"}),
    );
    let mirror = Mirror::new(&typo3).await;
    mirror.delta().await;
    assert_eq!(mirror.keys().await.len(), 4);

    {
        let mut script = typo3.script.lock().unwrap();
        script.records.remove("hotel:21:de");
        script
            .items
            .retain(|i| !(i["type"] == "page" && i["uid"] == 2));
    }
    typo3.set_modified("hotel", 21, "2026-11-29T08:00:00+01:00");
    let report = mirror.delta().await;
    assert_eq!(report.deleted, 2);
    assert_eq!(mirror.keys().await, ["hotel:20:de", "page:1:de"]);
}

#[tokio::test]
async fn failed_and_empty_pages_wait_for_a_change() {
    let typo3 = feed_with_pages(3, daytime()).await;
    typo3.script_page(1, vec![Reply::status(404)]);
    typo3.script_page(
        2,
        vec![Reply::ok(
            "<html><body><nav>Nur Menü</nav><script>x()</script></body></html>",
        )],
    );
    let mirror = Mirror::new(&typo3).await;
    mirror.delta().await;
    let failed = mirror.doc("page:1:de").await.page.expect("stored");
    assert_eq!(
        (failed.state, failed.modified.as_str()),
        (PageState::Failed, common::MODIFIED)
    );
    assert_eq!(
        mirror.doc("page:2:de").await.page.expect("stored").state,
        PageState::Empty
    );

    typo3.clear_log();
    mirror.delta().await;
    assert_eq!(typo3.paths(), ["/api/content/manifest"]);

    typo3.set_modified("page", 1, "2026-11-29T08:00:00+01:00");
    typo3.script_page(1, vec![Reply::ok("<p>Jetzt mit Inhalt.</p>")]);
    typo3.clear_log();
    mirror.delta().await;
    assert_eq!(typo3.paths(), ["/api/content/manifest", "/pages/1"]);
    assert_eq!(
        mirror.doc("page:1:de").await.page.expect("stored").state,
        PageState::Ok
    );
}

#[tokio::test]
async fn the_api_key_goes_only_to_hosts_of_the_manifests_sites() {
    let typo3 = feed_with_pages(1, daytime()).await;
    // Same server, but named `localhost`: a host no site lists.
    let port = typo3.addr.rsplit(':').next().unwrap().to_string();
    typo3.add_page(
        2,
        json!({"contentUrl": format!("http://localhost:{port}/pages/2")}),
    );
    typo3.add_page(3, json!({"contentUrl": "file:///etc/passwd"}));
    let mirror = Mirror::new(&typo3).await;
    mirror.delta().await;
    assert_eq!(typo3.paths(), ["/api/content/manifest", "/pages/1"]);
    for key in ["page:2:de", "page:3:de"] {
        assert_eq!(
            mirror.doc(key).await.page.expect("stored").state,
            PageState::Failed
        );
    }
}

#[tokio::test]
async fn a_refused_key_stops_the_run_without_marking_pages() {
    let typo3 = feed_with_pages(3, daytime()).await;
    typo3.script_page(1, vec![Reply::status(403)]);
    let mirror = Mirror::new(&typo3).await;
    let report = mirror.delta().await;
    assert!(matches!(report.outcome, Outcome::Stopped(_)), "{report:?}");
    assert!(mirror.doc("page:1:de").await.page.is_none());
}

#[tokio::test]
async fn detail_pages_merge_into_their_record_every_run() {
    let typo3 = feed_with_pages(0, daytime()).await;
    typo3.add_record(
        "product",
        10,
        json!({"url": null, "site": null}),
        json!({"code": "SBWVT", "title": "Boarderweek Val Thorens", "teaser": "Eine Woche Snowboarden."}),
    );
    typo3.add_page(
        30,
        json!({"detailOf": {"type": "product", "uid": 10}, "url": "https://www.ser.de/reisen/val-thorens/"}),
    );
    typo3.script_page(
        30,
        vec![Reply::ok(
            "<main><h2>Reiseverlauf</h2><p>Anreise am Samstag.</p></main>",
        )],
    );
    let mirror = Mirror::new(&typo3).await;
    mirror.delta().await;

    let product = mirror.doc("product:10:de").await;
    assert!(product.body_md.contains("Eine Woche Snowboarden."));
    assert!(product.body_md.contains("Anreise am Samstag."));
    assert_eq!(
        product.public_url.as_deref(),
        Some("https://www.ser.de/reisen/val-thorens/")
    );
    assert!(product.is_searchable());
    let page = mirror.doc("page:30:de").await;
    assert!(page.merged_into.is_some());
    assert!(!page.is_searchable());

    // The record disappears: the page stands on its own again.
    typo3
        .script
        .lock()
        .unwrap()
        .items
        .retain(|i| i["type"] != "product");
    mirror.delta().await;
    let page = mirror.doc("page:30:de").await;
    assert!(page.merged_into.is_none() && page.is_searchable());
}

#[tokio::test]
async fn a_record_without_a_page_or_url_is_not_searchable() {
    let typo3 = feed_with_pages(0, daytime()).await;
    typo3.add_record(
        "hotel",
        20,
        json!({"url": null, "site": null}),
        json!({"title": "Hotel ohne Seite"}),
    );
    let mirror = Mirror::new(&typo3).await;
    mirror.delta().await;
    assert!(!mirror.doc("hotel:20:de").await.is_searchable());
}

#[tokio::test]
async fn a_complete_run_that_changed_something_marks_its_generation_for_the_unmatched_codes_report()
{
    let typo3 = feed_with_pages(2, daytime()).await;
    let mirror = Mirror::new(&typo3).await;
    mirror.delta().await;
    let state = mirror.store.state().await.expect("state");
    assert_eq!(state.completed_generation, Some(state.generation));

    // A run that stops early does not count as complete.
    typo3.set_modified("page", 1, "2026-11-29T08:00:00+01:00");
    typo3.script_page(1, vec![Reply::status(503).retry_after("60")]);
    mirror.delta().await;
    let stopped = mirror.store.state().await.expect("state");
    assert_eq!(stopped.completed_generation, state.completed_generation);
}
