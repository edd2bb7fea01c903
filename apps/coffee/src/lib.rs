//! The coffee shop (seed `mcp-coffee.ru.md`): a menu in `menu.xlsx`, orders in `orders.xlsx`.
//!
//! Four tools with the seed's names and shapes. Descriptions are English (the contract for the
//! model); error texts are Russian, because the model relays them to the guest.
//!
//! - [`menu`] reads the menu and answers lookups (name and composition, case- and ё/е-insensitive).
//! - [`orders`] is the order book: every acknowledged order is in the file before the answer.
//! - [`tools`] turns both into the MCP tools the platform serves.

pub mod menu;
pub mod orders;
mod text;
mod tools;

use std::path::PathBuf;

use serde::Deserialize;

pub use tools::{Clock, build, system_clock};

/// The `[apps.coffee]` section of the config.
#[derive(Debug, Clone, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CoffeeConfig {
    /// The menu: columns напиток | цена | время_приготовления_мин | состав.
    pub menu: PathBuf,
    /// Where orders are kept; created at the first order.
    pub orders: PathBuf,
}

/// The kind `coffee`: the coffee menu and orders over Excel (seed: mcp-coffee.ru.md).
pub struct Coffee;

impl concierge_core::Kind for Coffee {
    const NAME: &'static str = "coffee";
    type Settings = CoffeeConfig;

    async fn build(settings: CoffeeConfig) -> Result<concierge_core::ToolSet, String> {
        build(&settings, system_clock())
    }
}
