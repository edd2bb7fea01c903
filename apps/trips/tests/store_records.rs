//! The mirror's records as the catalog reads them: without page or body, from the `record`
//! column, which a mirror written before the column existed is given when it is opened.

use concierge_trips::content::store::{ContentStore, SqlStore};
use serde_json::{Value, json};
use sqlx::Row;

/// A stored document in the mirror's format, with a page and a body.
fn stored(kind: &str, uid: u64, data: Option<Value>) -> Value {
    json!({
        "type": kind, "uid": uid, "language": "de", "site": "ski", "url": null,
        "title": format!("{kind} {uid}"), "breadcrumb": [], "modified": "2026-11-01T10:00:00+01:00",
        "content_url": "https://example.test/page", "detail_of": null, "data": data,
        "record_modified": null, "record_fetched_at": null,
        "page": {"state": "ok", "markdown": "Langer Seitentext über Val Thorens", "modified": "x",
                 "fetched_at": "2026-11-01T09:00:00Z"},
        "merged_into": null, "public_url": null, "body_md": "Langer Seitentext über Val Thorens"
    })
}

#[tokio::test]
async fn a_mirror_from_before_the_record_column_gets_it_and_records_come_without_page_text() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("content.sqlite");
    {
        // The schema as it was: no `record` column.
        let pool = sqlx::SqlitePool::connect_with(
            sqlx::sqlite::SqliteConnectOptions::new()
                .filename(&path)
                .create_if_missing(true),
        )
        .await
        .expect("create");
        sqlx::query(
            "CREATE TABLE content_document (type TEXT NOT NULL, uid INTEGER NOT NULL, \
             language TEXT NOT NULL, public_url TEXT, merged INTEGER NOT NULL, doc TEXT NOT NULL, \
             PRIMARY KEY (type, uid, language))",
        )
        .execute(&pool)
        .await
        .expect("old schema");
        for (kind, uid, data) in [
            (
                "product",
                1,
                Some(json!({"code": "SSLMP", "title": "Skiopening"})),
            ),
            ("page", 2, None),
        ] {
            sqlx::query("INSERT INTO content_document VALUES (?, ?, 'de', NULL, 0, ?)")
                .bind(kind)
                .bind(uid as i64)
                .bind(stored(kind, uid, data).to_string())
                .execute(&pool)
                .await
                .expect("insert");
        }
        pool.close().await;
    }

    let store = SqlStore::open(&path).await.expect("opens and migrates");
    let records = store.records().await.expect("records");
    assert_eq!(records.len(), 1, "only record types");
    let product = &records[0];
    assert_eq!(product.key.kind, "product");
    assert_eq!(product.data.as_ref().unwrap()["code"], "SSLMP");
    assert_eq!(product.title, "product 1");
    assert!(product.page.is_none() && product.body_md.is_empty());
    // The documents themselves keep their pages.
    let documents = store.documents().await.expect("documents");
    assert!(
        documents
            .iter()
            .all(|d| d.page.is_some() && !d.body_md.is_empty())
    );

    // The column was filled for records only, without the page text.
    let pool = sqlx::SqlitePool::connect(&format!("sqlite://{}", path.display()))
        .await
        .expect("reopen");
    let rows = sqlx::query("SELECT type, record FROM content_document ORDER BY uid")
        .fetch_all(&pool)
        .await
        .expect("read");
    let record: Option<String> = rows[0].get(1);
    let record = record.expect("the product's record");
    assert!(!record.contains("Seitentext"), "{record}");
    assert!(
        rows[1].get::<Option<String>, _>(1).is_none(),
        "a page has no record"
    );

    // A document written now carries its record, and opening again changes nothing.
    let mut changed = documents
        .iter()
        .find(|d| d.key.kind == "product")
        .expect("the product")
        .clone();
    changed.title = "Skiopening neu".into();
    store.put(&changed).await.expect("put");
    let store = SqlStore::open(&path).await.expect("opens again");
    let records = store.records().await.expect("records");
    assert_eq!(records[0].title, "Skiopening neu");
    assert!(records[0].page.is_none() && records[0].body_md.is_empty());
    let record: String = sqlx::query_scalar("SELECT record FROM content_document WHERE uid = 1")
        .fetch_one(&pool)
        .await
        .expect("read");
    assert!(record.contains("Skiopening neu") && !record.contains("Seitentext"));

    // A binary from before the column writes `doc` alone (a rollback, an old `sync`): the
    // record follows, and a new document it inserts is read from `doc`.
    let older = stored(
        "product",
        1,
        Some(json!({"code": "SSLMP", "title": "Von der alten Version"})),
    );
    sqlx::query(
        "INSERT INTO content_document (type, uid, language, public_url, merged, doc) \
         VALUES ('product', 1, 'de', NULL, 0, ?) \
         ON CONFLICT (type, uid, language) DO UPDATE SET doc = excluded.doc",
    )
    .bind(older.to_string())
    .execute(&pool)
    .await
    .expect("an old binary's write");
    sqlx::query(
        "INSERT INTO content_document (type, uid, language, public_url, merged, doc) \
         VALUES ('hotel', 3, 'de', NULL, 0, ?)",
    )
    .bind(stored("hotel", 3, Some(json!({"codes": ["EDELW"]}))).to_string())
    .execute(&pool)
    .await
    .expect("an old binary's insert");
    let records = store.records().await.expect("records");
    let product = records.iter().find(|r| r.key.kind == "product").unwrap();
    assert_eq!(
        product.data.as_ref().unwrap()["title"],
        "Von der alten Version"
    );
    assert!(product.page.is_none() && product.body_md.is_empty());
    let hotel = records.iter().find(|r| r.key.kind == "hotel").unwrap();
    assert_eq!(hotel.data.as_ref().unwrap()["codes"][0], "EDELW");
    assert!(hotel.page.is_none() && hotel.body_md.is_empty());
}
