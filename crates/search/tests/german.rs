//! What the German search gets right that the seed's MariaDB full text did not, one query
//! each, plus prefixes, stopwords, type weighting and the any-term fallback.

use concierge_search::{IndexDoc, TextIndex};

fn doc(key: &str, title: &str, body: &str, weight: f32) -> IndexDoc {
    IndexDoc {
        key: key.into(),
        kind: "page".into(),
        name: title.into(),
        title: title.into(),
        breadcrumb: String::new(),
        body: body.into(),
        weight,
        faq: false,
    }
}

fn corpus() -> TextIndex {
    TextIndex::build([
        doc(
            "at",
            "Skireisen nach Österreich",
            "Zell am See und Saalbach im Salzburger Land.",
            1.0,
        ),
        doc(
            "zh",
            "Zustieg in Zürich",
            "Der Bus hält in Zürich am Carparkplatz Sihlquai.",
            1.0,
        ),
        doc(
            "hp",
            "Leistungen",
            "7x Übernachtung im DZ mit HP, EZ gegen Aufpreis.",
            1.0,
        ),
        doc(
            "vp",
            "Familienwoche",
            "Unterkunft mit VP in der Pension Alpenrose.",
            1.0,
        ),
        doc(
            "ohne",
            "Skiopening ohne Skipass",
            "Du buchst nur Bus und Unterkunft.",
            1.0,
        ),
        doc(
            "mit",
            "Skiopening mit Skipass",
            "Der 6-Tage-Skipass ist im Preis enthalten.",
            1.0,
        ),
        doc(
            "isere",
            "Val d'Isère",
            "Espace Killy, Hochsavoyen, Frankreich.",
            1.0,
        ),
        doc("dolo", "Dolomiten", "Sella Ronda und Val Gardena.", 1.0),
        doc(
            "chav",
            "Résidence Val Chavière",
            "Appartements in Val Thorens.",
            1.0,
        ),
        doc(
            "led",
            "Sportclub Lederer",
            "Unser Sportclub in Zell am See.",
            1.0,
        ),
        doc(
            "ss",
            "Straßenverhältnisse",
            "Winterreifen sind Pflicht.",
            1.0,
        ),
    ])
    .expect("index builds")
}

fn keys(index: &TextIndex, query: &str) -> Vec<String> {
    index
        .search(query, 8, 600)
        .expect("search runs")
        .into_iter()
        .map(|hit| hit.key)
        .collect()
}

/// Each query finds the one page it is about, and no other.
#[test]
fn each_spelling_finds_its_page() {
    let index = corpus();
    for (what, query, key) in [
        ("ASCII for umlauts", "Oesterreich", "at"),
        ("base letter", "Osterreich", "at"),
        ("ASCII for umlauts", "Zuerich", "zh"),
        ("base letter", "Zurich", "zh"),
        ("`ss` finds `ß`", "Strassen", "ss"),
        ("umlauts find themselves", "Straßenverhältnisse", "ss"),
        ("hotel abbreviation", "HP", "hp"),
        ("hotel abbreviation", "VP", "vp"),
        ("hotel abbreviation", "DZ EZ", "hp"),
        ("negations are searched for", "ohne Skipass", "ohne"),
        // As a prefix "d" would require nothing ("Dolomiten", "der", …); exact, it needs the
        // elision.
        ("d is no wildcard", "d'", "isere"),
        ("d is no wildcard", "Val d'Isère", "isere"),
        ("d is no wildcard", "Val d Isere", "isere"),
        ("a prefix, no accents", "Chaviere", "chav"),
        ("a prefix", "Lederer", "led"),
        ("a prefix", "Leder", "led"),
        ("a prefix", "sportc lede", "led"),
        // "der", "in", "am" would otherwise be required terms and match nothing useful.
        ("stopwords dropped", "der Sportclub in Zell am See", "led"),
        ("every term is required", "Sportclub Zell", "led"),
    ] {
        assert_eq!(keys(&index, query), [key], "{what}: {query}");
    }
}

#[test]
fn when_no_page_has_every_term_any_term_finds() {
    let index = corpus();
    let any = keys(&index, "Sportclub Dolomiten");
    assert_eq!(any.len(), 2, "{any:?}");
    assert!(any.contains(&"led".to_string()) && any.contains(&"dolo".to_string()));
}

#[test]
fn weight_orders_equal_matches() {
    let index = TextIndex::build([
        doc("blog", "Schneebericht", "Neuschnee in Val Thorens.", 1.0),
        doc("product", "Schneebericht", "Neuschnee in Val Thorens.", 4.0),
        doc("page", "Schneebericht", "Neuschnee in Val Thorens.", 2.0),
    ])
    .expect("index builds");
    assert_eq!(keys(&index, "Neuschnee"), ["product", "page", "blog"]);
}

#[test]
fn title_matches_outrank_body_mentions() {
    let index = TextIndex::build([
        doc(
            "mention",
            "Anreise",
            "Auch nach Val Thorens fährt unser Bus.",
            1.0,
        ),
        doc(
            "named",
            "Val Thorens",
            "Das höchste Skigebiet Europas.",
            1.0,
        ),
    ])
    .expect("index builds");
    assert_eq!(keys(&index, "Val Thorens"), ["named", "mention"]);
}

#[test]
fn excerpts_surround_the_match() {
    let filler = "Die Anreise erfolgt bequem im modernen Reisebus. ".repeat(30);
    let index = TextIndex::build([doc(
        "p",
        "Leistungen",
        &format!("{filler}Der Skipass ist nicht im Preis enthalten. {filler}"),
        1.0,
    )])
    .expect("index builds");
    let hit = &index.search("Skipass", 8, 600).expect("search")[0];
    assert!(
        hit.excerpt
            .contains("Der Skipass ist nicht im Preis enthalten.")
    );
    assert!(hit.excerpt.starts_with('…') && hit.excerpt.ends_with('…'));
    assert!(hit.excerpt.chars().count() <= 602);
}

#[test]
fn nothing_found_is_empty_and_limits_hold() {
    let index = corpus();
    assert!(keys(&index, "Kreuzfahrt").is_empty());
    assert!(keys(&index, "").is_empty());
    assert!(keys(&index, "  ,;  ").is_empty());
    let many = TextIndex::build((0..20).map(|i| doc(&i.to_string(), "Skireise", "Schnee", 1.0)))
        .expect("index builds");
    assert_eq!(many.search("Skireise", 8, 600).expect("search").len(), 8);
}
