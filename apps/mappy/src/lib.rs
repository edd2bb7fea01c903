//! Mappy: Google Business Profile tools over Mappy's Laravel API (seed `mappy-mcp-design.vi.md`).
//!
//! concierge never touches Mappy's database: every read and write is a request to the API's
//! `/api/mcp/*` endpoints (`docs/contracts/mappy-api.md`), which own tenancy, validation and the
//! job queue. Each request names the acting user (the OAuth token's subject and role), so the
//! API applies its tenancy table itself.
//!
//! - [`tools`]: the catalog — reads, writes (with the platform's write safety: `dry_run`,
//!   `idempotency_key`, confirm tokens) and `batch_status`;
//! - `laravel`: the client — timeouts (10 s read, 30 s write), error classes, no retries.
//!
//! The API's SIMULATOR, for the demo and the tests, is its own crate (`sim/mappy`).

mod laravel;
pub mod tools;

use std::sync::Arc;
use std::time::Duration;

use concierge_core::ToolSet;
use serde::Deserialize;

/// The `[apps.mappy]` section.
#[derive(Debug, Clone, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct MappyConfig {
    /// The Laravel app's base URL; the API is under `/api/mcp`.
    pub base_url: String,
    /// concierge's service key for the API (`Authorization: Bearer`).
    pub api_key: String,
    /// How long a read may take (the seed's §7.2: 10 s).
    #[schemars(with = "concierge_core::written::Duration")]
    #[serde(default = "ten_seconds", with = "humantime_serde")]
    pub read_timeout: Duration,
    /// How long a write may take (the seed's §7.2: 30 s); a write that times out is traced by
    /// its batch, never retried blind.
    #[schemars(with = "concierge_core::written::Duration")]
    #[serde(default = "thirty_seconds", with = "humantime_serde")]
    pub write_timeout: Duration,
}

fn ten_seconds() -> Duration {
    Duration::from_secs(10)
}

fn thirty_seconds() -> Duration {
    Duration::from_secs(30)
}

/// The `[apps.mappy]` section to tools, with the API's reachability for `/health`.
pub fn build(config: &MappyConfig) -> Result<ToolSet, String> {
    for (name, value) in [
        ("read_timeout", config.read_timeout),
        ("write_timeout", config.write_timeout),
    ] {
        if !(Duration::from_millis(50)..=Duration::from_secs(300)).contains(&value) {
            return Err(format!("{name} must be between 50ms and 300s"));
        }
    }
    let api = Arc::new(laravel::Laravel::new(config)?);
    let probe = api.clone();
    // Platform messages in English: the seed asks for English beside Vietnamese (§6.1).
    Ok(ToolSet::new(
        "mappy",
        &concierge_core::messages::VIETNAMESE,
        tools::all(api),
    )
    .with_health(Arc::new(move || {
        let probe = probe.clone();
        Box::pin(async move { probe.health().await.into() })
    })))
}

/// The kind `mappy`: Mappy's Google Business Profile tools over its Laravel API.
pub struct Mappy;

impl concierge_core::Kind for Mappy {
    const NAME: &'static str = "mappy";
    type Settings = MappyConfig;

    async fn build(settings: MappyConfig) -> Result<concierge_core::ToolSet, String> {
        build(&settings)
    }
}
