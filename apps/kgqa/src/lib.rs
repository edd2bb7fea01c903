//! 百姓惠 (Baixinghui) knowledge-graph Q&A adapter (seed `baixinghui-kgqa-mcp.zh.md`).
//!
//! The five tools are upstream HTTP tools declared in config (`concierge.toml`, `[apps.kgqa]`);
//! this crate adds what is specific to the Q&A API: the stable result envelope ([`Envelope`]).
//! The API's simulator, for the demo and the tests, is its own crate (`sim/kgqa`).

mod envelope;

use std::sync::Arc;

use concierge_core::ToolSet;
use concierge_upstream::{UpstreamConfig, build_tools};

pub use envelope::Envelope;

/// The `[apps.kgqa]` section to tools.
pub fn build(config: &UpstreamConfig) -> Result<ToolSet, String> {
    let (tools, language) = build_tools(config, Arc::new(Envelope))?;
    Ok(ToolSet::new("kgqa", language, tools))
}

/// The kind `kgqa`: the Q&A API adapter (seed: baixinghui-kgqa-mcp.zh.md).
pub struct Kgqa;

impl concierge_core::Kind for Kgqa {
    const NAME: &'static str = "kgqa";
    type Settings = UpstreamConfig;

    async fn build(settings: UpstreamConfig) -> Result<concierge_core::ToolSet, String> {
        build(&settings)
    }
}
