//! Three instances of one deployment behind nginx, sharing Redis: the rate limit is one budget
//! across them, a session's requests find the instance that holds it (nginx reads the instance
//! prefix of `Mcp-Session-Id`), a stolen session id is refused wherever it lands, and when the
//! instance holding a session is killed its client gets 404 and initializes again elsewhere.
//! Then, with that instance still dead, Redis stops (limited calls refused as retryable,
//! `/health` degraded) and starts again (the two live instances spend one budget exactly), and
//! the dead instance restarts and rejoins.
//!
//! The real parts: `redis-server`, `nginx` and three `concierge serve` processes, all on free
//! loopback ports of this test. test.sh installs redis-server and nginx from Debian and names
//! them in CONCIERGE_TEST_REDIS_SERVER and CONCIERGE_TEST_NGINX; without them the test says so
//! and passes.

use std::path::Path;
use std::time::{Duration, Instant};

use serde_json::json;

use crate::common::cluster::{binary, free_port, start_nginx, start_redis, start_redis_on};
use crate::common::{Raw, Server, coffee_app, initialize, tools_call, tools_list};

const SECRET: &str = "the cluster test's shared session secret";

/// One instance's config: the coffee app, a stateless endpoint with a shared limit, and a
/// stateful one; everything shared through `redis`.
fn instance_config(dir: &Path, name: &str, port: u16, redis: u16) -> String {
    format!(
        r#"
[server]
listen = "127.0.0.1:{port}"
max_connections_per_peer = 512

[state]
redis = "redis://127.0.0.1:{redis}/"
instance = "{name}"
session_secret = "{SECRET}"

[limits]
calls = "60/minute"

{coffee}
[[endpoint]]
path = "/coffee/mcp"
tools = ["coffee.get_menu"]
auth = {{ kind = "tokens", env = "APP_MCP_TOKENS" }}
session = "stateless"
rate_limit = "calls"

[[endpoint]]
path = "/sessions/mcp"
tools = ["coffee.get_menu"]
auth = {{ kind = "tokens", env = "APP_MCP_TOKENS" }}
session = "stateful"
"#,
        coffee = coffee_app(&dir.join("orders.xlsx")),
    )
}

fn start_instance(name: &str, port: u16, redis: u16) -> Server {
    Server::start(
        |dir| instance_config(dir, name, port, redis),
        &[("APP_MCP_TOKENS", "alice:token-a,bob:token-b")],
    )
}

/// `count` calls of `get_menu` at once through `url`; the texts of those refused.
async fn burst(raw: &Raw, url: &str, count: u64) -> Vec<String> {
    let calls = (0..count).map(|i| async move {
        raw.post(
            url,
            Some("token-a"),
            None,
            tools_call(i, "get_menu", json!({})),
        )
        .await
    });
    let answers = futures::future::join_all(calls).await;
    assert!(answers.iter().all(|a| a.status == 200));
    answers
        .iter()
        .filter(|a| a.message()["result"]["isError"] == true)
        .map(|a| a.message()["result"]["content"][0]["text"].to_string())
        .collect()
}

#[tokio::test]
async fn three_instances_behind_nginx_share_limits_and_sessions_and_survive_a_kill() {
    let (Some(redis_bin), Some(nginx_bin)) = (
        binary("CONCIERGE_TEST_REDIS_SERVER", "redis-server"),
        binary("CONCIERGE_TEST_NGINX", "nginx"),
    ) else {
        eprintln!("no redis-server or nginx here: the cluster test is skipped");
        return;
    };
    let work = tempfile::tempdir().unwrap();
    let (redis, redis_port) = start_redis(&redis_bin, work.path());

    let names = ["i1", "i2", "i3"];
    let ports: Vec<u16> = names.iter().map(|_| free_port()).collect();
    let mut instances: Vec<Option<Server>> = names
        .iter()
        .zip(&ports)
        .map(|(name, port)| Some(start_instance(name, *port, redis_port)))
        .collect();

    let pairs: Vec<(&str, u16)> = names.iter().copied().zip(ports.iter().copied()).collect();
    let listen = free_port();
    let _nginx = start_nginx(&nginx_bin, work.path(), listen, &pairs);
    let front = format!("http://127.0.0.1:{listen}");
    let raw = Raw::new();

    // One budget of 60 a minute across three instances: 64 calls at once, exactly 60 answered.
    let refused = burst(&raw, &format!("{front}/coffee/mcp"), 64).await;
    assert_eq!(refused.len(), 4, "{refused:?}");
    assert!(
        refused.iter().all(|r| r.contains("rate_limited")),
        "{refused:?}"
    );

    // A session opened through nginx is found again through nginx, whichever instance it is on.
    let sessions = format!("{front}/sessions/mcp");
    let opened = raw
        .post(&sessions, Some("token-a"), None, initialize(1))
        .await;
    assert_eq!(opened.status, 200, "{}", opened.body);
    let session = opened.session().expect("a session id");
    let holder = names
        .iter()
        .position(|name| session.starts_with(&format!("{name}.")))
        .unwrap_or_else(|| panic!("an instance prefix: {session}"));
    for id in 2..12 {
        let listed = raw
            .post(&sessions, Some("token-a"), Some(&session), tools_list(id))
            .await;
        assert_eq!(listed.status, 200, "request {id}: {}", listed.body);
    }
    // Another client with that id: refused through nginx and on every instance directly.
    let stolen = raw
        .post(&sessions, Some("token-b"), Some(&session), tools_list(20))
        .await;
    assert_eq!(stolen.status, 403);
    for port in &ports {
        let direct = format!("http://127.0.0.1:{port}/sessions/mcp");
        let stolen = raw
            .post(&direct, Some("token-b"), Some(&session), tools_list(21))
            .await;
        assert_eq!(stolen.status, 403, "instance on {port}");
    }

    // The holder dies (kill -9): its client gets 404 from a backup and initializes again there.
    let mut dead = instances[holder].take().unwrap();
    dead.child.kill().unwrap();
    dead.child.wait().unwrap();
    let lost = raw
        .post(&sessions, Some("token-a"), Some(&session), tools_list(30))
        .await;
    assert_eq!(lost.status, 404, "{}", lost.body);
    let reopened = raw
        .post(&sessions, Some("token-a"), None, initialize(31))
        .await;
    assert_eq!(reopened.status, 200, "{}", reopened.body);
    let again = reopened.session().unwrap();
    assert!(
        !again.starts_with(&format!("{}.", names[holder])),
        "{again}"
    );
    let listed = raw
        .post(&sessions, Some("token-a"), Some(&again), tools_list(32))
        .await;
    assert_eq!(listed.status, 200);

    // Redis stops, one instance still dead: a limited call is refused as retryable, never
    // counted per instance; /health names the store.
    drop(redis);
    let coffee = format!("{front}/coffee/mcp");
    let down = raw
        .post(
            &coffee,
            Some("token-a"),
            None,
            tools_call(50, "get_menu", json!({})),
        )
        .await;
    assert_eq!(down.message()["result"]["isError"], true, "{}", down.body);
    assert!(
        down.body.contains("rate_limit_unavailable"),
        "{}",
        down.body
    );
    let live = ports[(holder + 1) % 3];
    let health: serde_json::Value = reqwest::get(format!("http://127.0.0.1:{live}/health"))
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(health["status"], "degraded", "{health}");
    assert_eq!(health["stores"]["redis"]["status"], "down", "{health}");
    // Redis starts again (empty: its counters lived in memory); the instances reconnect by
    // themselves, and the two live ones spend one budget, exactly, as the three did.
    let _redis = start_redis_on(&redis_bin, work.path(), redis_port);
    let deadline = Instant::now() + Duration::from_secs(15);
    loop {
        let probe = raw
            .post(
                &coffee,
                Some("token-a"),
                None,
                tools_call(51, "get_menu", json!({})),
            )
            .await;
        if probe.message()["result"]["isError"] != true {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "limits did not come back: {}",
            probe.body
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let refused = burst(&raw, &coffee, 64).await;
    assert_eq!(refused.len(), 5, "the probe took one of 60: {refused:?}");

    // It restarts on its port and rejoins: nginx sends it requests again.
    instances[holder] = Some(start_instance(names[holder], ports[holder], redis_port));
    let deadline = Instant::now() + Duration::from_secs(15);
    loop {
        let opened = raw
            .post(&sessions, Some("token-a"), None, initialize(40))
            .await;
        if opened
            .session()
            .is_some_and(|s| s.starts_with(&format!("{}.", names[holder])))
        {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "the restarted instance got no new session: {} {}",
            opened.status,
            opened.body
        );
        // nginx tries a failed server again after its fail_timeout (2 s); asking in a tight
        // loop meanwhile would spend the client's session budget (128 a minute).
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}
