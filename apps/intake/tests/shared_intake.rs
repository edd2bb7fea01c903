//! The intake in PostgreSQL, as several instances share it: each "instance" is an
//! `IntakeService` of its own (its own pool) on one fresh database of the server test.sh starts
//! (`CONCIERGE_TEST_POSTGRES`). Without that variable the test says so and passes.

use std::path::Path;

use concierge_intake::adapter::adapt;
use concierge_intake::store::IntakeService;
use serde_json::Value;

fn fixture(name: &str) -> Value {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../examples/hotel")
        .join(name);
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn one_message_sent_to_three_instances_at_once_is_one_batch() {
    let Some(url) = concierge_testkit::postgres::fresh_database("intake").await else {
        return;
    };
    let mut instances = Vec::new();
    for _ in 0..3 {
        instances.push(IntakeService::open(&url, "TH-TEST".into()).await.unwrap());
    }
    let submission = adapt(&fixture("parent-split.json")).expect("a valid payload");
    // Each instance gets the same message four times at once.
    let submits = (0..12).map(|i| instances[i % 3].accept(&submission));
    let answers: Vec<_> = futures::future::join_all(submits)
        .await
        .into_iter()
        .map(|a| a.expect("accepted"))
        .collect();
    let first: Vec<_> = answers.iter().filter(|a| !a.duplicate).collect();
    assert_eq!(
        first.len(),
        1,
        "one submission makes the batch: {answers:?}"
    );
    let batch = first[0].batch_id;
    assert!(answers.iter().all(|a| a.batch_id == batch), "{answers:?}");
    assert!(answers.iter().all(|a| a.task_ids == first[0].task_ids));
    assert_eq!(first[0].accepted_count, 3);

    let pool = sqlx::PgPool::connect(&url).await.unwrap();
    for (table, rows) in [
        ("platform_source_message_inbox", 1),
        ("reservation_ai_batch", 1),
        ("reservation_ai_task", 3),
    ] {
        let count: i64 =
            sqlx::query_scalar(sqlx::AssertSqlSafe(format!("SELECT count(*) FROM {table}")))
                .fetch_one(&pool)
                .await
                .unwrap();
        assert_eq!(count, rows, "{table}");
    }
}

#[tokio::test]
async fn a_database_that_does_not_answer_records_nothing_and_says_so() {
    let down = IntakeService::open("postgres://nobody@127.0.0.1:1/none", "TH-TEST".into())
        .await
        .expect("opens without connecting");
    let submission = adapt(&fixture("parent-split.json")).unwrap();
    let error = down.accept(&submission).await.unwrap_err();
    let text = format!("{error:?}");
    assert!(text.contains("Storage"), "{text}");
    assert!(!text.contains("nobody@"), "no URL in the error: {text}");
}
