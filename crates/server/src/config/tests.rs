use std::time::Duration;

use serde::Deserialize;

use super::unknown_keys::nearest;
use super::*;

fn env(name: &str) -> Option<String> {
    match name {
        "PORT_ADDR" => Some("127.0.0.1:9000".into()),
        _ => None,
    }
}

const MINIMAL: &str = r#"
    [server]
    listen = "${PORT_ADDR}"
    [limits]
    chatbot = "60/minute"
    [[endpoint]]
    path = "/coffee/mcp"
    tools = ["coffee.*"]
    rate_limit = "chatbot"
    auth = { kind = "tokens", default = "demo:demo-token" }
"#;

#[test]
fn interpolates_and_parses() {
    let config = Config::parse(MINIMAL, &env).unwrap();
    assert_eq!(config.server.listen, "127.0.0.1:9000");
    assert_eq!(config.endpoints[0].idle_timeout, Duration::from_secs(1800));
    assert!(
        matches!(&config.endpoints[0].auth, AuthSection::Tokens { env, .. } if env == "APP_MCP_TOKENS")
    );
}

/// Fuzz regression (`config`): a token where a rate belongs was printed whole.
#[test]
fn a_problem_report_names_a_secret_instead_of_showing_it() {
    let env = |name: &str| match name {
        "APP_TOKEN" => Some("s3cr3t-value-5e0c2b".to_string()),
        "FUZZ_LISTEN" => Some("127.0.0.1:0".to_string()),
        _ => None,
    };
    let text = "[server]\nlisten = \"${FUZZ_LISTEN}\"\n[limits]\nx = \"${APP_TOKEN:-60/minute}\"\n";
    let errors = Config::parse(text, &env).unwrap_err();
    let report = format!("{errors:?}");
    assert!(!report.contains("s3cr3t"), "{report}");
    assert!(report.contains("`${APP_TOKEN}` is not a rate"), "{report}");
}

#[test]
fn unknown_keys_are_named_with_their_place() {
    let text = MINIMAL.replace("rate_limit = \"chatbot\"", "rate_limt = \"chatbot\"");
    let errors = Config::parse(&text, &env).unwrap_err();
    assert_eq!(errors[0].at, "endpoint[0].rate_limt");
    assert_eq!(
        errors[0].message, "unknown key; did you mean `rate_limit`?",
        "{errors:?}"
    );
}

#[test]
fn write_records_go_where_the_shared_stores_are_and_a_home_needs_its_store() {
    let state = |text: &str| -> StateSection { toml::from_str(text).unwrap() };
    assert_eq!(state("").writes_home(), None);
    assert_eq!(
        state("redis = \"redis://r/\"").writes_home(),
        Some(WritesHome::Redis)
    );
    assert_eq!(
        state("redis = \"redis://r/\"\ndatabase = \"postgres://p/db\"").writes_home(),
        Some(WritesHome::Postgres)
    );
    let chosen =
        state("redis = \"redis://r/\"\ndatabase = \"postgres://p/db\"\nwrites = \"redis\"");
    assert_eq!(chosen.writes_home(), Some(WritesHome::Redis));
    // An unset variable is an empty URL: no store, so no home, and the choice is refused.
    let orphan = state("database = \"\"\nwrites = \"postgres\"");
    let problems = orphan.problems();
    assert_eq!(problems.len(), 1, "{problems:?}");
    assert_eq!(problems[0].0, "state.writes");
}

fn texts(errors: &[ConfigError]) -> Vec<String> {
    errors.iter().map(ToString::to_string).collect()
}

/// What [`MINIMAL`] with `from` written as `to` is refused for.
fn errors_with(from: &str, to: &str) -> Vec<String> {
    texts(&Config::parse(&MINIMAL.replace(from, to), &env).unwrap_err())
}

#[test]
fn every_unknown_key_is_reported_in_one_run_with_the_other_problems() {
    let text = format!(
        "{MINIMAL}
        idle_timout = \"10m\"
        legacy_sse = {{ sse = \"/sse\", mesages = \"/messages\" }}
        [[endpoint]]
        path = \"/second/mcp\"
        tols = [\"coffee.*\"]
        auth = {{ kind = \"tokens\", defualt = \"demo:demo-token\" }}
        [servre]
        listen = \"x\"
        "
    )
    .replace("rate_limit = \"chatbot\"", "rate_limt = \"chatbot\"")
    .replace("60/minute", "60/fortnight");
    let errors = texts(&Config::parse(&text, &env).unwrap_err());
    for expected in [
        "endpoint[0].idle_timout: unknown key; did you mean `idle_timeout`?",
        "endpoint[0].rate_limt: unknown key; did you mean `rate_limit`?",
        "endpoint[0].legacy_sse.mesages: unknown key; did you mean `messages`?",
        "endpoint[1].tols: unknown key; did you mean `tools`?",
        // Inside `auth`, an internally tagged enum: the path still names the key.
        "endpoint[1].auth.defualt: unknown key; did you mean `default`?",
        "servre: unknown key; did you mean `server`?",
    ] {
        assert!(
            errors.iter().any(|e| e == expected),
            "{expected} in {errors:#?}"
        );
    }
    // Read on as if corrected (`tols` as `tools`, `mesages` as the required `messages`), the
    // structure holds, so the checks between sections ran too; nothing is reported twice.
    assert!(
        errors
            .iter()
            .any(|e| e.starts_with("limits.chatbot: ") && e.contains("fortnight")),
        "{errors:#?}"
    );
    assert_eq!(errors.len(), 7, "{errors:#?}");
}

#[test]
fn a_key_without_a_near_name_lists_the_keys_of_its_table() {
    let errors = errors_with(
        "[limits]",
        "[writes]\ndatabase = \"w.sqlite\"\nzzz = 1\n[limits]",
    );
    assert_eq!(
        errors,
        [
            "writes.zzz: unknown key; the keys here are `database`, `idempotency_window`, \
          `confirm_ttl`"
        ]
    );
}

#[test]
fn unknown_keys_are_reported_beside_unset_variables_and_bad_values() {
    let text = MINIMAL
        .replace("rate_limit = \"chatbot\"", "rate_limt = \"chatbot\"")
        .replace(
            "\"coffee.*\"]",
            "\"coffee.*\"]\ninstructions = \"${UNSET}\"",
        );
    let errors = texts(&Config::parse(&text, &env).unwrap_err());
    assert_eq!(errors.len(), 2, "{errors:#?}");
    assert!(errors[0].contains("UNSET is not set"), "{errors:#?}");
    assert_eq!(
        errors[1],
        "endpoint[0].rate_limt: unknown key; did you mean `rate_limit`?"
    );

    // A value serde refuses ends the reading (what follows depends on it), but the unknown
    // keys are all there, and a misspelt choice gets its suggestion too.
    let errors = errors_with(
        "rate_limit = \"chatbot\"",
        "rate_limt = \"chatbot\"\nsession = \"stateles\"",
    );
    assert_eq!(errors.len(), 2, "{errors:#?}");
    assert_eq!(
        errors[0],
        "endpoint[0].rate_limt: unknown key; did you mean `rate_limit`?"
    );
    assert!(
        errors[1].starts_with("endpoint[0].session: unknown variant `stateles`")
            && errors[1].ends_with("did you mean `stateless`?"),
        "{errors:#?}"
    );
}

#[test]
fn an_apps_section_reports_every_unknown_key_too() {
    #[derive(Debug, Deserialize, schemars::JsonSchema)]
    #[serde(deny_unknown_fields)]
    #[allow(dead_code)]
    struct Feed {
        base_url: String,
        timeout: Option<String>,
    }
    #[derive(Debug, Deserialize, schemars::JsonSchema)]
    #[serde(deny_unknown_fields)]
    #[allow(dead_code)]
    struct App {
        database: String,
        feed: Feed,
    }
    let value: toml::Value = toml::from_str(
        "databse = \"x.sqlite\"\n[feed]\nbase_url = \"http://t\"\ntimout = \"5s\"\n",
    )
    .unwrap();
    let error = section::<App>(&value).unwrap_err();
    assert!(
        error.contains("databse: unknown key; did you mean `database`?"),
        "{error}"
    );
    assert!(
        error.contains("feed.timout: unknown key; did you mean `timeout`?"),
        "{error}"
    );
}

/// A kind's per-tool section embeds the shared `ToolPolicy` flattened: serde then names no keys
/// in its refusal, so the section's JSON Schema does.
#[test]
fn a_misspelt_key_beside_the_shared_tool_policy_is_named_with_what_was_meant() {
    #[derive(Debug, Deserialize, schemars::JsonSchema)]
    #[serde(deny_unknown_fields)]
    #[allow(dead_code)]
    struct Override {
        #[serde(flatten)]
        policy: concierge_core::ToolPolicy,
        fixed: Option<String>,
    }
    #[derive(Debug, Deserialize, schemars::JsonSchema)]
    #[serde(deny_unknown_fields)]
    #[allow(dead_code)]
    struct App {
        #[serde(rename = "override")]
        overrides: std::collections::BTreeMap<String, Override>,
        tools: Vec<Override>,
    }
    let value: toml::Value = toml::from_str(
        "[override.y]\nwrte = true\nfixd = \"a\"\n[[tools]]\nname = \"t\"\nxyzzy = 1\n",
    )
    .unwrap();
    let error = section::<App>(&value).unwrap_err();
    for expected in [
        "override.y.wrte: unknown key; did you mean `write`?",
        "override.y.fixd: unknown key; did you mean `fixed`?",
        "tools[0].xyzzy: unknown key; the keys here are `name`, `title`, `description`, \
         `write`, `confirm`, `annotations`, `scopes`, `secret_arguments`, `fixed`",
    ] {
        assert!(error.contains(expected), "{expected}\nin {error}");
    }
    // A bad value of the flattened part is named at its key, not at its table.
    let value: toml::Value =
        toml::from_str("tools = []\n[override.y]\nwrite = true\nconfirm = \"yes\"\n").unwrap();
    let error = section::<App>(&value).unwrap_err();
    assert!(
        error.starts_with("override.y.confirm: invalid type: string \"yes\", expected a boolean"),
        "{error}"
    );
    // Read on as if corrected: the misspelt key's value is the one meant.
    let value: toml::Value = toml::from_str("tools = []\n[override.y]\nwrte = true\n").unwrap();
    let (unknown, read) = super::unknown_keys::deserialize_reporting_unknown_keys::<App>(value);
    assert_eq!(unknown.len(), 1);
    assert!(read.expect("reads").overrides["y"].policy.write);
}

#[test]
fn near_names_are_close_ones_only() {
    let known: Vec<String> = ["idle_timeout", "path", "tools", "auth"]
        .map(String::from)
        .to_vec();
    assert_eq!(nearest("idle_timout", &known), Some("idle_timeout"));
    assert_eq!(nearest("tols", &known), Some("tools"));
    assert_eq!(nearest("pth", &known), Some("path"));
    assert_eq!(nearest("listen", &known), None);
}

#[test]
fn bad_limits_references_and_public_auth_none_are_reported() {
    let text = MINIMAL
        .replace("60/minute", "60/fortnight")
        .replace("rate_limit = \"chatbot\"", "rate_limit = \"other\"")
        .replace("${PORT_ADDR}", "0.0.0.0:8080")
        .replace(
            "{ kind = \"tokens\", default = \"demo:demo-token\" }",
            "{ kind = \"none\" }",
        );
    let errors = Config::parse(&text, &env).unwrap_err();
    let text: Vec<String> = errors.iter().map(|e| e.to_string()).collect();
    assert!(
        text.iter()
            .any(|e| e.starts_with("limits.chatbot: ") && e.contains("fortnight")),
        "{text:?}"
    );
    assert!(
        text.iter()
            .any(|e| e.starts_with("endpoint[0].rate_limit: no limiter `other`")),
        "{text:?}"
    );
    assert!(
        text.iter()
            .any(|e| e.starts_with("endpoint[0].auth: ") && e.contains("loopback")),
        "{text:?}"
    );
}

#[test]
fn limiters_default_to_the_sliding_window_and_name_the_bucket() {
    use concierge_core::LimitPolicy;
    let config = Config::parse(MINIMAL, &env).unwrap();
    assert_eq!(config.limits["chatbot"].policy, LimitPolicy::SlidingWindow);
    let text = MINIMAL.replace(
        "chatbot = \"60/minute\"",
        "chatbot = { rate = \"60/minute\", policy = \"bucket\" }",
    );
    let config = Config::parse(&text, &env).unwrap();
    assert_eq!(
        config.limits["chatbot"],
        LimiterSection {
            rate: "60/minute".into(),
            policy: LimitPolicy::Bucket
        }
    );
    let errors = errors_with(
        "chatbot = \"60/minute\"",
        "chatbot = { rate = \"60/minute\", polcy = \"bucket\" }",
    );
    assert_eq!(
        errors,
        ["limits.chatbot.polcy: unknown key; did you mean `policy`?"],
        "{errors:?}"
    );
    let errors = errors_with(
        "chatbot = \"60/minute\"",
        "chatbot = { rate = \"60/minute\", policy = \"buckets\" }",
    );
    assert!(
        errors.len() == 1 && errors[0].contains("did you mean `bucket`?"),
        "{errors:?}"
    );
}

#[test]
fn rates_parse() {
    assert_eq!(
        Rate::parse("60/minute").unwrap(),
        Rate {
            count: 60,
            period: Duration::from_secs(60)
        }
    );
    assert!(Rate::parse("0/minute").is_err());
    assert!(Rate::parse("sixty").is_err());
}
