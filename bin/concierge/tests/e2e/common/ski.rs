//! The ski deployment under test: the sample feed mirrored through the TYPO3 simulator (on a
//! manual clock, so the load rules cost no time), the sample export, both ski endpoints.

use std::path::Path;
use std::sync::Arc;

use chrono::{TimeZone, Utc};
use concierge_sim_typo3::SimulatorConfig;
use concierge_trips::content::clock::ManualClock;
use concierge_trips::content::store::SqlStore;
use concierge_trips::content::sync::{FeedSettings, Outcome, RunOptions, Syncer};

use super::{Server, examples};

pub const TOKEN: &str = "ski-token";

/// The TYPO3 simulator serving the feed in `feed` (key `test-key`), on a free port.
pub async fn feed_simulator(feed: std::path::PathBuf) -> std::net::SocketAddr {
    let (addr, serving) = concierge_sim_typo3::start(&SimulatorConfig {
        listen: "127.0.0.1:0".into(),
        feed,
        api_key: "test-key".into(),
    })
    .await
    .expect("simulator");
    tokio::spawn(serving);
    addr
}

/// Mirrors the sample feed into `dir/content.sqlite`; returns the simulator's base URL.
pub async fn mirror_sample_feed(dir: &Path) -> String {
    let addr = feed_simulator(examples().join("ski/feed")).await;
    let database = dir.join("content.sqlite");
    let store = Arc::new(SqlStore::open(&database).await.expect("store"));
    let syncer = Syncer::new(
        FeedSettings {
            base_url: format!("http://{addr}"),
            api_key: "test-key".into(),
            timeout: std::time::Duration::from_secs(10),
            lock_path: dir.join("content.sqlite.sync.lock"),
        },
        store,
        Arc::new(ManualClock::at(
            Utc.with_ymd_and_hms(2026, 12, 1, 1, 0, 0).unwrap(),
        )),
    )
    .expect("syncer");
    let report = syncer.run(RunOptions::default()).await.expect("sync");
    assert_eq!(report.outcome, Outcome::Completed, "{report:?}");
    format!("http://{addr}")
}

pub fn ski_config(dir: &Path, base_url: &str) -> String {
    format!(
        r#"
[server]
listen = "127.0.0.1:0"

[limits]
chatbot_mcp = "6000/minute"

[audit.chatbot]
path = "{dir}/log/test.chatbot.log"

[apps.trips]
database = "{dir}/content.sqlite"
as_of = "2026-11-30"
feed = {{ base_url = "{base_url}", api_key = "test-key" }}
schedule = {{ enabled = false }}
export = {{ file = "{export}", hotels = "{hotels}" }}
periods = [
  {{ name = "Herbst auf dem Gletscher", from = 2026-10-10, to = 2026-11-08 }},
  {{ name = "Weihnachten & Silvester", from = 2026-12-19, to = 2027-01-06 }},
]

[[endpoint]]
path = "/ski/mcp"
tools = ["trips.search_trips", "trips.get_trip", "trips.search_content", "trips.get_document"]
auth = {{ kind = "tokens", env = "APP_MCP_TOKENS" }}
rate_limit = "chatbot_mcp"
audit = "chatbot"

[[endpoint]]
path = "/ski/mcp/trips"
tools = ["trips.search_trips", "trips.get_trip_structured as get_trip"]
instructions = "Trips only; refer to the trip's url for anything else."
auth = {{ kind = "tokens", env = "APP_MCP_TOKENS" }}
rate_limit = "chatbot_mcp"
audit = "chatbot"
"#,
        dir = dir.display(),
        export = examples().join("ski/export/products.json").display(),
        hotels = examples().join("ski/buspro/hotel.xml").display(),
    )
}

pub async fn ski_server() -> Server {
    let dir = tempfile::tempdir().expect("temp dir");
    let base = mirror_sample_feed(dir.path()).await;
    Server::start_in(
        dir,
        |d| ski_config(d, &base),
        &[("APP_MCP_TOKENS", &format!("n8n:{TOKEN}"))],
    )
}
