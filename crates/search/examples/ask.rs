//! Dev tool: asks questions of a generated corpus and prints what the ranked search found.
//! `cargo run --release -p concierge-search --example ask -- corpus.jsonl "Frage" …`

use concierge_search::{IndexDoc, Lexicon, Question, TextIndex};

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let text = std::fs::read_to_string(&args[0]).expect("corpus");
    let docs = text.lines().map(|line| {
        let doc: serde_json::Value = serde_json::from_str(line).expect("json");
        let s = |k: &str| doc[k].as_str().unwrap_or_default().to_string();
        IndexDoc {
            key: format!("{}", doc["id"]),
            kind: s("type"),
            name: s("breadcrumb")
                .rsplit(" > ")
                .next()
                .unwrap_or_default()
                .to_string(),
            title: s("title"),
            breadcrumb: s("breadcrumb"),
            body: s("body_md"),
            weight: 1.0,
            faq: false,
        }
    });
    let index = TextIndex::build(docs).expect("index");
    let lexicon = Lexicon::default()
        .kind_words("hotel", &["Hotel", "Hotels"])
        .kind_words("product", &["Reise", "Reisen", "Skireise"]);
    for query in &args[1..] {
        let question = Question::read(query, &lexicon);
        println!("{query}: {question:?}");
        let started = std::time::Instant::now();
        let limit = std::env::var("ASK_LIMIT")
            .ok()
            .and_then(|l| l.parse().ok())
            .unwrap_or(8);
        let found = index.ask(&question, limit, 0).expect("ask");
        println!(
            "  {:.1} ms; unmatched {:?} nothing_asked {}",
            started.elapsed().as_secs_f64() * 1000.0,
            found.unmatched,
            found.nothing_asked
        );
        for hit in found.hits {
            println!("  {} {:.2}", hit.key, hit.score);
        }
    }
}
