//! The committed reference pages and schema are what the code says (see `reference.rs`).

use std::path::PathBuf;

use clap::CommandFactory;

use super::reference::{CLI_PAGE, CONFIG_PAGE, SCHEMA_FILE, cli_page, config_page};

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..")
}

#[test]
fn every_kind_and_simulator_names_its_settings_type() {
    assert_eq!(super::apps().without_settings(), Vec::<String>::new());
}

#[test]
fn reference_pages_and_schema_are_what_the_code_says() {
    let schema = super::apps().config_schema();
    let config = config_page(&schema).unwrap_or_else(|keys| {
        panic!(
            "keys without a doc comment (the reference says what each key means): {}",
            keys.join(", ")
        )
    });
    let pages = [
        (CONFIG_PAGE, config),
        (CLI_PAGE, cli_page(super::Cli::command())),
        (
            SCHEMA_FILE,
            serde_json::to_string_pretty(&schema).expect("a schema") + "\n",
        ),
    ];
    let write = std::env::var_os("CONCIERGE_WRITE_REFERENCE").is_some();
    let mut stale = Vec::new();
    for (page, generated) in pages {
        let path = root().join(page);
        let committed = std::fs::read_to_string(&path).unwrap_or_default();
        if committed != generated {
            if write {
                std::fs::write(&path, generated).expect("write the page");
            } else {
                stale.push(page);
            }
        }
    }
    assert!(
        stale.is_empty(),
        "the committed reference differs from the code: {}; write it with \
         `CONCIERGE_WRITE_REFERENCE=1 cargo test -p concierge reference` and commit it",
        stale.join(", ")
    );
}
