//! `concierge config schema` and `concierge check` agree: every shipped config names the schema
//! in its first line and validates against it, and a misspelt key — of the deployment, of an
//! app's kind, of a section no endpoint serves — is refused by both.

use crate::common;

use std::path::{Path, PathBuf};
use std::process::Command;

use common::*;
use concierge_server::config::schema::Compiled;
use serde_json::Value;

fn root() -> PathBuf {
    PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/../.."))
}

/// The schema as the binary prints it.
fn schema() -> Compiled {
    let output = Command::new(BIN)
        .args(["config", "schema"])
        .output()
        .unwrap();
    assert!(output.status.success());
    let schema: Value = serde_json::from_slice(&output.stdout).expect("a JSON schema");
    Compiled::new(&schema).expect("a valid draft 7 schema")
}

/// What the schema says of a config's text (a date as its text, as an editor reads it): its
/// problems, one per line.
fn schema_problems(schema: &Compiled, text: &str) -> Vec<String> {
    schema
        .problems(text)
        .iter()
        .map(ToString::to_string)
        .collect()
}

/// The configs the repository ships: every TOML at the root and under bench/ with a `[server]`.
fn shipped() -> Vec<PathBuf> {
    let mut found = Vec::new();
    for folder in [root(), root().join("bench")] {
        for entry in std::fs::read_dir(folder).unwrap() {
            let path = entry.unwrap().path();
            if path.extension().is_some_and(|e| e == "toml")
                && std::fs::read_to_string(&path)
                    .unwrap()
                    .lines()
                    .any(|line| line == "[server]")
            {
                found.push(path);
            }
        }
    }
    assert!(found.len() >= 6, "{found:?}");
    found
}

#[test]
fn every_shipped_config_names_the_schema_and_validates_against_it() {
    let schema = schema();
    for path in shipped() {
        let text = std::fs::read_to_string(&path).unwrap();
        let first = text.lines().next().unwrap_or_default();
        let named = first
            .strip_prefix("#:schema ")
            .unwrap_or_else(|| panic!("{}: the first line is not `#:schema …`", path.display()));
        let file = path.parent().unwrap().join(named);
        assert!(
            file.ends_with("docs/src/reference/concierge.schema.json") && file.is_file(),
            "{}: `#:schema {named}` is not the committed schema",
            path.display()
        );
        let problems = schema_problems(&schema, &text);
        assert!(problems.is_empty(), "{}: {problems:#?}", path.display());
    }
}

/// Runs `check` on `text` in a fresh folder: exit code and report.
fn check(dir: &Path, text: &str) -> (i32, String) {
    let path = dir.join("concierge.toml");
    std::fs::write(&path, text).unwrap();
    let output = Command::new(BIN)
        .args(["check", "--config"])
        .arg(&path)
        .env("APP_MCP_TOKENS", "n8n:abcdefghijklmnop")
        .output()
        .unwrap();
    let report = format!(
        "{}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    (output.status.code().unwrap_or(-1), report)
}

#[test]
fn a_misspelt_key_is_refused_by_check_and_by_the_schema() {
    let schema = schema();
    let dir = tempfile::tempdir().unwrap();
    let good = coffee_config(dir.path(), "");
    assert_eq!(
        check(dir.path(), &good).0,
        0,
        "{}",
        check(dir.path(), &good).1
    );
    assert_eq!(schema_problems(&schema, &good), Vec::<String>::new());
    for (misspelt, key) in [
        // The deployment's own section.
        (
            good.replacen("[server]\n", "[server]\nmax_body_byte = 5\n", 1),
            "max_body_byte",
        ),
        // A kind's settings, in a section named after its kind.
        (
            good.replacen("[apps.coffee]\n", "[apps.coffee]\nmenus = \"x.xlsx\"\n", 1),
            "menus",
        ),
        // An endpoint's.
        (
            good.replacen("[[endpoint]]\n", "[[endpoint]]\ntool = []\n", 1),
            "tool",
        ),
        // A section no endpoint serves (`check` does not build it; it reads it all the same).
        (
            format!(
                "{good}\n[apps.spare]\nkind = \"sql\"\nurl = \"spare.db\"\nstatment_timeout = \"5s\"\n"
            ),
            "statment_timeout",
        ),
    ] {
        assert_ne!(misspelt, good, "the misspelling of {key} was not written");
        let (code, report) = check(dir.path(), &misspelt);
        assert_eq!(code, 1, "check passed `{key}`: {report}");
        assert!(
            report.contains(key),
            "check's report names `{key}`: {report}"
        );
        let problems = schema_problems(&schema, &misspelt);
        assert!(
            problems.iter().any(|p| p.contains(key)),
            "the schema passed `{key}`: {problems:?}"
        );
    }
}
