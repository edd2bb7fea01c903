//! The command line a newcomer types: `--config` wherever it is written, `token` refusing what
//! would only fail later, `audit` times relative to now and blamed on the flag.

use crate::common;

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use common::*;

/// The coffee endpoint of `coffee_config`, an `[oauth]` server offering two scopes, an audit
/// sink with a table; `oauth_extra` goes into `[oauth]`.
fn config(dir: &Path, oauth_extra: &str) -> String {
    format!(
        "{}
[audit.calls]
path = \"{dir}/log/calls.log\"
database = \"{dir}/audit.sqlite\"

[oauth]
issuer = \"http://127.0.0.1:9\"
database = \"{dir}/oauth.sqlite\"
scopes = [\"coffee:read\", \"coffee:order\"]
{oauth_extra}
",
        coffee_config(dir, ""),
        dir = dir.display()
    )
}

/// A temp dir with `concierge.toml` from `make`; the dir is also where commands run, and it
/// holds no other config, so a command that ignored `--config` would fail to find one.
fn deployment(make: impl FnOnce(&Path) -> String) -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("deploy.toml");
    std::fs::write(&path, make(dir.path())).unwrap();
    (dir, path)
}

struct Run {
    code: i32,
    stdout: String,
    stderr: String,
}

/// Runs `concierge <args>` in `dir` with `stdin`.
fn run(dir: &Path, args: &[&str], stdin: &str) -> Run {
    let mut child = Command::new(BIN)
        .args(args)
        .current_dir(dir)
        .env("APP_MCP_TOKENS", "demo:demo-token")
        .env("RUST_LOG", "error")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    feed_stdin(&mut child, stdin);
    let out = child.wait_with_output().unwrap();
    Run {
        code: out.status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    }
}

#[test]
fn config_is_accepted_before_and_after_every_subcommand() {
    let (dir, path) = deployment(|d| config(d, ""));
    let dir = dir.path();
    let p = path.to_str().unwrap();

    for args in [["check", "--config", p], ["--config", p, "check"]] {
        let out = run(dir, &args, "");
        assert_eq!(out.code, 0, "{args:?}: {}", out.stderr);
        let report: Vec<&str> = out.stdout.trim().lines().collect();
        assert_eq!(
            report[0],
            format!("{p}: ok (1 endpoints)"),
            "{}",
            out.stdout
        );
        // What the endpoint's tool list costs a model, then how each limit counts.
        assert!(
            report[1].ends_with(" tokens in a tool list") && report[1].contains(" tools, about "),
            "{}",
            out.stdout
        );
        assert_eq!(
            report[2..],
            [
                "  limits.chatbot_mcp = 60/minute: sliding window: never more than 60 calls in any 1m"
            ]
        );
    }
    // After the sub-subcommand too: the case that failed.
    let added = run(
        dir,
        &["token", "add-user", "bob", "--config", p],
        "correct horse battery\n",
    );
    assert_eq!(added.code, 0, "{}", added.stderr);
    assert_eq!(added.stdout.trim(), "user `bob` (user) saved");
    for args in [
        &["token", "--config", p, "clients"][..],
        &["--config", p, "token", "tokens"],
        &["audit", "--limit", "5", "--config", p],
    ] {
        let out = run(dir, args, "");
        assert_eq!(out.code, 0, "{args:?}: {}", out.stderr);
    }
    // The ski commands read this config too (and say it has no ski app).
    for args in [
        &["sync", "--config", p][..],
        &["check-freshness", "--max-age", "5", "--config", p],
    ] {
        let out = run(dir, args, "");
        assert_eq!(out.code, 1, "{args:?}");
        assert!(
            out.stderr
                .contains(&format!("{p}: the config has no [apps.trips] section")),
            "{args:?}: {}",
            out.stderr
        );
    }
}

#[test]
fn a_local_user_is_refused_when_sign_in_is_delegated_to_a_user_directory() {
    let (dir, path) = deployment(|d| {
        config(
            d,
            "[oauth.users]\nurl = \"http://127.0.0.1:9/api/mcp/auth/sign-in\"",
        )
    });
    let out = run(
        dir.path(),
        &[
            "token",
            "add-user",
            "bob",
            "--config",
            path.to_str().unwrap(),
        ],
        "correct horse battery\n",
    );
    assert_eq!(out.code, 1, "{}", out.stdout);
    assert!(
        out.stderr.contains(
            "sign-in is delegated to the [oauth.users] directory, so local users are not consulted"
        ),
        "{}",
        out.stderr
    );
    assert!(out.stdout.is_empty(), "{}", out.stdout);
    assert!(
        !dir.path().join("oauth.sqlite").exists(),
        "refused before anything was saved"
    );
}

#[test]
fn token_actions_are_refused_when_an_external_provider_issues_the_tokens() {
    let (dir, path) = deployment(|d| {
        config(
            d,
            "[oauth.external]\nissuer = \"https://idp.example\"\njwks_uri = \"https://idp.example/jwks\"",
        )
    });
    let p = path.to_str().unwrap();
    for args in [
        &["token", "add-user", "bob", "--config", p][..],
        &["token", "add-client", "--name", "n8n", "--config", p],
        &["token", "clients", "--config", p],
    ] {
        let out = run(dir.path(), args, "correct horse battery\n");
        assert_eq!(out.code, 1, "{args:?}: {}", out.stdout);
        assert!(
            out.stderr
                .contains("[oauth.external]: tokens come from an external identity provider"),
            "{args:?}: {}",
            out.stderr
        );
    }
}

/// `concierge token add-client --name n8n` asking for `scopes`, on the config at `config`.
fn add_client(dir: &Path, config: &str, scopes: &[&str]) -> Run {
    let mut args = vec!["token", "add-client", "--name", "n8n"];
    for scope in scopes {
        args.extend(["--scope", *scope]);
    }
    args.extend(["--config", config]);
    run(dir, &args, "")
}

#[test]
fn a_client_with_a_scope_the_server_does_not_offer_is_refused() {
    let (dir, path) = deployment(|d| config(d, ""));
    let p = path.to_str().unwrap();
    let refused = add_client(dir.path(), p, &["coffee:read", "coffee:admin"]);
    assert_eq!(refused.code, 1, "{}", refused.stdout);
    assert!(
        refused.stderr.contains(
            "the server does not offer the scope(s) coffee:admin; [oauth] scopes offers: \
             coffee:read, coffee:order"
        ),
        "{}",
        refused.stderr
    );
    assert!(!refused.stdout.contains("client_secret"), "nothing issued");
    let clients = run(dir.path(), &["token", "clients", "--config", p], "");
    assert_eq!(clients.code, 0, "{}", clients.stderr);
    assert_eq!(clients.stdout, "", "no client was saved");

    let issued = add_client(dir.path(), p, &["coffee:read"]);
    assert_eq!(issued.code, 0, "{}", issued.stderr);
    assert!(
        issued.stdout.contains("client_secret="),
        "{}",
        issued.stdout
    );
}

/// Writes audit events at the given ages (seconds before now) into the sink's table.
fn write_events(dir: &Path, ages: &[(&str, u64)]) {
    use concierge_core::{AuditEvent, Outcome};
    let runtime = tokio::runtime::Runtime::new().unwrap();
    runtime.block_on(async {
        let sink = concierge_server::audit::AuditSink::open(dir.join("log/seed.log"))
            .unwrap()
            .with_database(dir.join("audit.sqlite").to_str().unwrap())
            .await
            .unwrap();
        for (tool, age) in ages {
            let ts = chrono::Utc::now() - chrono::Duration::seconds(*age as i64);
            sink.record(AuditEvent {
                ts: ts.to_rfc3339_opts(chrono::SecondsFormat::Millis, true),
                endpoint: "/coffee/mcp".into(),
                client: Some("n8n".into()),
                user: None,
                tool: Some(tool.to_string()),
                rpc_id: None,
                trace_id: format!("trace-{tool}"),
                arguments: None,
                result_count: None,
                output: None,
                outcome: Outcome::Ok,
                code: None,
                duration_ms: 1.0,
                notes: None,
            });
        }
        sink.flush(std::time::Duration::from_secs(10));
    });
}

#[test]
fn audit_times_may_be_relative_and_a_bad_one_is_blamed_on_its_flag() {
    let (dir, path) = deployment(|d| config(d, ""));
    let p = path.to_str().unwrap();
    write_events(
        dir.path(),
        &[
            ("three_days", 3 * 86_400),
            ("two_hours", 7_200),
            ("ten_minutes", 600),
        ],
    );
    let tools = |args: &[&str]| -> Vec<String> {
        let mut all = vec!["audit", "--config", p];
        all.extend_from_slice(args);
        let out = run(dir.path(), &all, "");
        assert_eq!(out.code, 0, "{args:?}: {}", out.stderr);
        out.stdout
            .lines()
            .map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap()["tool"].to_string())
            .map(|t| t.trim_matches('"').to_string())
            .collect()
    };
    assert_eq!(tools(&[]), ["three_days", "two_hours", "ten_minutes"]);
    assert_eq!(tools(&["--since", "1h"]), ["ten_minutes"]);
    assert_eq!(tools(&["--since", "30m"]), ["ten_minutes"]);
    assert_eq!(tools(&["--since", "2d"]), ["two_hours", "ten_minutes"]);
    assert_eq!(tools(&["--since", "2d", "--until", "1h"]), ["two_hours"]);
    assert_eq!(tools(&["--until", "2d"]), ["three_days"]);

    for flag in ["--since", "--until"] {
        let out = run(dir.path(), &["audit", flag, "yesterday", "--config", p], "");
        assert_ne!(out.code, 0);
        assert!(
            out.stderr
                .contains(&format!("invalid value 'yesterday' for '{flag} <TIME>'")),
            "{}",
            out.stderr
        );
        assert!(out.stderr.contains("like 30m, 1h or 2d"), "{}", out.stderr);
        assert!(
            !out.stderr.contains(p),
            "not the config's fault: {}",
            out.stderr
        );
    }
}
