//! An index written to a directory answers the same after it is opened again, and a directory
//! that does not hold what it should is refused, not half read.

use concierge_search::{IndexDoc, TextIndex};

fn docs() -> Vec<IndexDoc> {
    [
        (
            "page:1:de",
            "Skireisen nach Österreich",
            "Zell am See im Salzburger Land.",
        ),
        (
            "page:2:de",
            "Zustieg in Zürich",
            "Der Bus hält in Zürich am Sihlquai.",
        ),
        (
            "hotel:3:de",
            "Chalet Chavière",
            "Direkt am Chavièregletscher.",
        ),
    ]
    .into_iter()
    .map(|(key, title, body)| IndexDoc {
        key: key.into(),
        kind: "page".into(),
        name: title.into(),
        title: title.into(),
        breadcrumb: "Reisen".into(),
        body: body.into(),
        weight: 1.0,
        faq: false,
    })
    .collect()
}

fn found(index: &TextIndex, query: &str) -> Vec<(String, String)> {
    index
        .search(query, 8, 80)
        .expect("search")
        .into_iter()
        .map(|hit| (hit.key, hit.excerpt))
        .collect()
}

#[test]
fn an_index_opened_again_answers_as_it_was_built() {
    let dir = tempfile::tempdir().unwrap();
    let built = TextIndex::build_in(dir.path(), docs()).expect("built");
    let opened = TextIndex::open(dir.path()).expect("opened");
    assert_eq!(opened.len(), 3);
    for query in [
        "Oesterreich",
        "zuerich bus",
        "Chaviere",
        "Reisen",
        "nichts da",
    ] {
        assert_eq!(found(&opened, query), found(&built, query), "{query}");
    }
    assert_eq!(found(&opened, "Chaviere")[0].0, "hotel:3:de");
}

#[test]
fn a_directory_without_its_keys_or_its_index_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    TextIndex::build_in(dir.path(), docs()).expect("built");
    std::fs::write(dir.path().join("keys.txt"), "page:1:de\n").unwrap();
    assert!(TextIndex::open(dir.path()).is_err());
    let empty = tempfile::tempdir().unwrap();
    assert!(TextIndex::open(empty.path()).is_err());
}
