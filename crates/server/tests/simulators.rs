//! How `Platform::build` reports a `[simulators.<name>]` section no simulator is registered for:
//! a production binary (built without its `simulators` feature) registers none, and must say so
//! rather than list no known ones.

use std::net::SocketAddr;

use concierge_server::{Apps, Config, Platform};

const CONFIG: &str = r#"
    [server]
    listen = "127.0.0.1:0"
    [simulators.kgqa]
    listen = "127.0.0.1:0"
"#;

async fn problems(apps: Apps) -> Vec<String> {
    let env = |_: &str| None;
    let config = Config::parse(CONFIG, &env).expect("the config parses");
    match Platform::build(config, apps, &env).await {
        Ok(_) => Vec::new(),
        Err(errors) => errors.iter().map(ToString::to_string).collect(),
    }
}

#[tokio::test]
async fn a_build_without_simulators_says_so() {
    let problems = problems(Apps::new()).await;
    assert!(
        problems.iter().any(|p| p.starts_with(
            "simulators.kgqa: no simulator `kgqa`: this build has no simulators (built without \
             the `simulators` feature)"
        )),
        "{problems:?}"
    );
}

#[tokio::test]
async fn an_unknown_simulator_lists_the_known_ones() {
    let apps = Apps::new().simulator("typo3", |_| async {
        Err::<(SocketAddr, _), _>("never started here".to_string())
    });
    let problems = problems(apps).await;
    assert!(
        problems
            .iter()
            .any(|p| p == "simulators.kgqa: no simulator `kgqa`; known: typo3"),
        "{problems:?}"
    );
}
