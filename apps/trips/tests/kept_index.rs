//! The content index a mirror on this host keeps on disk: a restart opens it instead of analyzing
//! every document again, a new generation gets its own, older ones go, and a damaged one is built
//! again.

use std::sync::Arc;

use chrono::Utc;
use concierge_trips::content::document::{Document, Page, PageState};
use concierge_trips::content::feed::Item;
use concierge_trips::content::search::ContentIndex;
use concierge_trips::content::store::{ContentStore, SqlStore};

fn page(uid: u64, title: &str, text: &str) -> Document {
    let item: Item = serde_json::from_value(serde_json::json!({
        "type": "page", "uid": uid, "language": "de", "modified": "2026-11-01T10:00:00+01:00",
        "site": "ser", "url": format!("https://www.ser.de/seite/{uid}/"), "title": title,
        "breadcrumb": ["Reisen"],
    }))
    .unwrap();
    let mut doc = Document::new(&item);
    doc.public_url = doc.url.clone();
    doc.page = Some(Page {
        state: PageState::Ok,
        markdown: text.into(),
        modified: doc.modified.clone(),
        fetched_at: Utc::now(),
    });
    doc.body_md = text.into();
    doc
}

async fn bump(store: &SqlStore) {
    let mut state = store.state().await.unwrap();
    state.generation += 1;
    store.save_state(&state).await.unwrap();
}

fn generations(root: &std::path::Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(root)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

/// A mirror of one page about Zürich at generation 1, and where its index is to be kept.
async fn one_page_mirror(dir: &std::path::Path) -> (Arc<SqlStore>, std::path::PathBuf) {
    let store = Arc::new(SqlStore::open(&dir.join("content.sqlite")).await.unwrap());
    store
        .put(&page(1, "Anreise", "Der Bus hält in Zürich."))
        .await
        .unwrap();
    bump(&store).await;
    (store, dir.join("content.sqlite.index"))
}

/// [`one_page_mirror`] whose index was opened once, and so kept.
async fn kept_once(dir: &std::path::Path) -> (Arc<SqlStore>, std::path::PathBuf) {
    let (store, root) = one_page_mirror(dir).await;
    drop(
        ContentIndex::open(store.clone(), Some(root.clone()))
            .await
            .unwrap(),
    );
    (store, root)
}

async fn titles(index: &ContentIndex, query: &str) -> Vec<String> {
    index
        .search(query)
        .await
        .unwrap()
        .into_iter()
        .map(|hit| hit.title)
        .collect()
}

#[tokio::test]
async fn a_restart_opens_the_kept_index_and_a_new_generation_gets_its_own() {
    let dir = tempfile::tempdir().unwrap();
    let (store, root) = one_page_mirror(dir.path()).await;

    let first = ContentIndex::open(store.clone(), Some(root.clone()))
        .await
        .unwrap();
    assert_eq!(titles(&first, "Zürich").await, ["Anreise"]);
    assert_eq!(generations(&root), ["v3l2-g1"]);
    drop(first);

    // The store changes behind the index's back without a new generation: an index read from
    // disk still answers as it was built, one built again would not.
    store
        .put(&page(1, "Anreise", "Der Zug hält in Basel."))
        .await
        .unwrap();
    let reopened = ContentIndex::open(store.clone(), Some(root.clone()))
        .await
        .unwrap();
    assert_eq!(titles(&reopened, "Zürich").await, ["Anreise"]);

    // Two syncs later: each generation is built once, the one before the current stays (a search
    // may still hold it), older ones go.
    bump(&store).await;
    reopened.reload_if_changed().await.unwrap();
    assert_eq!(titles(&reopened, "Basel").await, ["Anreise"]);
    assert!(titles(&reopened, "Zürich").await.is_empty());
    bump(&store).await;
    reopened.reload_if_changed().await.unwrap();
    assert_eq!(generations(&root), ["v3l2-g2", "v3l2-g3"]);
}

#[tokio::test]
async fn a_damaged_kept_index_is_built_again() {
    let dir = tempfile::tempdir().unwrap();
    let (store, root) = kept_once(dir.path()).await;

    std::fs::write(root.join("v3l2-g1/listings.jsonl"), b"{ kaputt").unwrap();
    let index = ContentIndex::open(store.clone(), Some(root.clone()))
        .await
        .unwrap();
    assert_eq!(titles(&index, "Zürich").await, ["Anreise"]);
    let listings = std::fs::read_to_string(root.join("v3l2-g1/listings.jsonl")).unwrap();
    assert!(listings.contains("Anreise"), "{listings}");
}

#[tokio::test]
async fn a_kept_index_with_a_listing_too_many_is_built_again() {
    let dir = tempfile::tempdir().unwrap();
    let (store, root) = kept_once(dir.path()).await;
    let kept = root.join("v3l2-g1/listings.jsonl");
    let line = std::fs::read_to_string(&kept).unwrap();
    std::fs::write(&kept, format!("{line}{line}")).unwrap();
    let index = ContentIndex::open(store.clone(), Some(root.clone()))
        .await
        .unwrap();
    assert_eq!(titles(&index, "Zürich").await, ["Anreise"]);
    assert_eq!(std::fs::read_to_string(&kept).unwrap(), line);
}

#[tokio::test]
async fn an_index_kept_by_an_older_version_is_neither_read_nor_kept() {
    let dir = tempfile::tempdir().unwrap();
    let (store, root) = one_page_mirror(dir.path()).await;
    // The layout before listings were kept a line each: one JSON map, here of nothing; and an
    // index written by the analyzer before stems and boilerplate (format 1).
    std::fs::create_dir_all(root.join("v1l2-g1")).unwrap();
    std::fs::write(root.join("v1l2-g1/ready"), b"").unwrap();
    std::fs::create_dir_all(root.join("v1-g1")).unwrap();
    std::fs::write(root.join("v1-g1/listings.json"), b"{}").unwrap();
    std::fs::write(root.join("v1-g1/ready"), b"").unwrap();
    let index = ContentIndex::open(store.clone(), Some(root.clone()))
        .await
        .unwrap();
    assert_eq!(titles(&index, "Zürich").await, ["Anreise"]);
    assert_eq!(generations(&root), ["v3l2-g1"]);
}

#[tokio::test]
async fn an_index_that_cannot_be_kept_is_built_in_memory() {
    let dir = tempfile::tempdir().unwrap();
    let (store, root) = one_page_mirror(dir.path()).await;
    // Where the index would go is a file: no directory can be made there.
    std::fs::write(&root, b"not a directory").unwrap();
    let index = ContentIndex::open(store.clone(), Some(root.clone()))
        .await
        .unwrap();
    assert_eq!(titles(&index, "Zürich").await, ["Anreise"]);
}
