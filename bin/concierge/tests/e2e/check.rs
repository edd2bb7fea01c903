//! `concierge check`: says exactly what and where, exit 1 on any problem.

use crate::common;

use std::path::Path;
use std::process::Command;

use common::*;

/// Runs `concierge check` on the config `make` writes for a fresh temp dir (where `check` may
/// create the audit log and the order book's directory).
fn check(make: impl FnOnce(&Path) -> String, env: &[(&str, &str)]) -> (i32, String) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("concierge.toml");
    std::fs::write(&path, make(dir.path())).unwrap();
    let mut command = Command::new(BIN);
    command
        .args(["check", "--config"])
        .arg(&path)
        .env_remove("APP_MCP_TOKENS");
    for (key, value) in env {
        command.env(key, value);
    }
    let output = command.output().unwrap();
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    (output.status.code().unwrap_or(-1), text)
}

fn base(dir: &Path) -> String {
    coffee_config(dir, "")
}

/// Checks `config` and asserts exit 1 with `expected` in the report, and no token text in it.
fn expect_problem(make: impl FnOnce(&Path) -> String, env: &[(&str, &str)], expected: &str) {
    let (code, text) = check(make, env);
    assert_eq!(code, 1, "expected failure for {expected}: {text}");
    assert!(text.contains(expected), "expected `{expected}` in:\n{text}");
    assert!(!text.contains("s3cret"), "a token leaked: {text}");
}

const GOOD: &[(&str, &str)] = &[("APP_MCP_TOKENS", "n8n:abc")];

#[test]
fn the_demo_config_is_valid_and_checked_quietly() {
    let output = Command::new(BIN)
        .args(["check", "--config", "concierge.toml"])
        .current_dir(concat!(env!("CARGO_MANIFEST_DIR"), "/../.."))
        .env("CONCIERGE_VAR", tempfile::tempdir().unwrap().path())
        .env_remove("RUST_LOG")
        .env_remove("CONCIERGE_REDIS_URL")
        .env_remove("CONCIERGE_DATABASE_URL")
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "{stderr}");
    let stdout = String::from_utf8_lossy(&output.stdout);
    let first = stdout.lines().next().unwrap_or_default();
    assert!(
        first.starts_with("concierge.toml: ok (") && first.ends_with(" endpoints)"),
        "{stdout}"
    );
    // Each limiter says how it counts: the default is the sliding window.
    assert!(
        stdout.contains(
            "\n  limits.mappy_read = 60/minute: sliding window: never more than 60 calls in any 1m\n"
        ),
        "{stdout}"
    );
    // What the apps log while loading (catalog progress, notes on the sample data) is not a
    // problem of the config: the report is all `check` prints.
    assert_eq!(stderr, "", "check printed more than its report");
}

#[test]
fn a_shared_deployment_is_told_what_it_lacks_and_which_store_does_not_answer() {
    // Nothing listens on port 1: both stores are unreachable at once.
    let shared = |dir: &Path| {
        format!(
            "[state]\nredis = \"redis://127.0.0.1:1/\"\ndatabase = \"postgres://concierge:s3cret@127.0.0.1:1/db\"\n{}",
            base(dir)
        )
    };
    let (code, text) = check(shared, GOOD);
    assert_eq!(code, 1, "{text}");
    for expected in [
        "apps.coffee: runs on one instance only",
        "state.instance: unset",
        "state.session_secret: unset",
        "state.redis: unreachable",
        "state.database: unreachable",
    ] {
        assert!(text.contains(expected), "expected `{expected}` in:\n{text}");
    }
    assert!(
        !text.contains("s3cret"),
        "the database password leaked: {text}"
    );
}

#[test]
fn a_good_config_passes() {
    let (code, text) = check(base, GOOD);
    assert_eq!(code, 0, "{text}");
    assert!(text.contains("ok"));
}

#[test]
fn each_problem_is_named_with_its_place() {
    // One word of the good config changed: (what, into what, the problem reported).
    for (from, to, expected) in [
        (
            "rate_limit =",
            "rate_limt =",
            "endpoint[0].rate_limt: unknown key; did you mean `rate_limit`?",
        ),
        (
            "60/minute",
            "60/fortnight",
            "limits.chatbot_mcp: `60/fortnight`: unknown period",
        ),
        (
            "coffee.*",
            "coffee.make_tea",
            "app `coffee` has no tool `make_tea`",
        ),
        ("coffee.*", "tea.*", "`tea.*`: no app `tea`"),
    ] {
        expect_problem(|d| base(d).replace(from, to), GOOD, expected);
    }
    expect_problem(base, &[], "APP_MCP_TOKENS is not set");
    expect_problem(
        base,
        &[("APP_MCP_TOKENS", "n8n:abc,n8n:def")],
        "client name `n8n` appears twice",
    );
    expect_problem(
        base,
        &[("APP_MCP_TOKENS", "n8n:s3cret,bot:s3cret")],
        "share one token",
    );
    expect_problem(
        |d| base(d).replace("127.0.0.1:0", "${LISTEN}"),
        GOOD,
        "server.listen: environment variable LISTEN is not set",
    );
    let public_without_auth = |d: &Path| {
        base(d).replace("127.0.0.1:0", "0.0.0.0:8080").replace(
            "{ kind = \"tokens\", env = \"APP_MCP_TOKENS\" }",
            "{ kind = \"none\" }",
        )
    };
    expect_problem(
        public_without_auth,
        &[],
        "endpoint[0].auth: auth kind `none` is allowed only on a loopback listen address",
    );
    expect_problem(
        |d| base(d).replace("coffee/menu.xlsx", "coffee/no-menu.xlsx"),
        GOOD,
        "apps.coffee: ",
    );
}

#[test]
fn a_generic_upstream_tool_cannot_be_configured() {
    let demo =
        std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../../concierge.toml"))
            .unwrap();
    let root = concat!(env!("CARGO_MANIFEST_DIR"), "/../..");
    let with = |from: &str, to: &str| {
        let text = demo
            .replace(from, to)
            .replace("\"examples/", &format!("\"{root}/examples/"));
        move |_: &Path| text
    };
    let var = tempfile::tempdir().unwrap();
    let env = [("CONCIERGE_VAR", var.path().to_str().unwrap())];
    expect_problem(
        with("name = \"query_route_price\"", "name = \"call_api\""),
        &env,
        "generic tools",
    );
    expect_problem(
        with(
            "path = \"/v1/openapi/knowledge-qa/query\"",
            "path = \"/{{ path }}\"",
        ),
        &env,
        "must end in `| urlencode`",
    );
}

#[test]
fn every_problem_is_reported_in_one_run() {
    let (code, text) = check(
        |d| {
            base(d)
                .replace("rate_limit =", "rate_limt =")
                .replace(
                    "audit = \"chatbot\"",
                    "audit = \"chatbot\"\nidle_timout = \"10m\"",
                )
                .replace("[apps.coffee]", "[servr]\n[apps.coffee]")
                .replace("60/minute", "60/fortnight")
        },
        GOOD,
    );
    assert_eq!(code, 1, "{text}");
    for expected in [
        "4 problem(s)",
        "endpoint[0].rate_limt: unknown key; did you mean `rate_limit`?",
        "endpoint[0].idle_timout: unknown key; did you mean `idle_timeout`?",
        "servr: unknown key; did you mean `server`?",
        "limits.chatbot_mcp: `60/fortnight`: unknown period",
    ] {
        assert!(text.contains(expected), "expected `{expected}` in:\n{text}");
    }
}
