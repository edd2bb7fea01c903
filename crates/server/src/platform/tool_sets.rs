//! The apps a deployment names, and the tool sets of those its endpoints serve.

use std::collections::BTreeMap;

use concierge_core::ToolSet;

use super::apps::Apps;
use crate::config::{Config, ConfigError};

/// Every `[simulators.<name>]` and `[apps.<name>]` names something this binary offers.
pub(super) fn check_names(config: &Config, apps: &Apps, errors: &mut Vec<ConfigError>) {
    if let Some(token) = &config.ops.token
        && token.chars().count() < 16
    {
        errors.push(ConfigError::new(
            "ops.token",
            "is shorter than 16 characters; it signs an operator in to /ops, so make it long and random",
        ));
    }
    for name in config.simulators.keys() {
        if !apps.simulators.contains_key(name) {
            let known: Vec<&str> = apps.simulators.keys().map(String::as_str).collect();
            // A binary that registers no simulator at all is a production build that left
            // them out: saying so beats an empty list of known ones.
            let message = if known.is_empty() {
                format!(
                    "no simulator `{name}`: this build has no simulators (built without the \
                     `simulators` feature); remove the section or point the app at the real \
                     system"
                )
            } else {
                format!("no simulator `{name}`; known: {}", known.join(", "))
            };
            errors.push(ConfigError::new(format!("simulators.{name}"), message));
        }
    }
    for name in config.apps.keys() {
        if !apps.tools.contains_key(name) && !apps.handlers.contains_key(name) {
            errors.push(ConfigError::new(
                format!("apps.{name}"),
                format!("no app `{name}`; known: {}", known(apps)),
            ));
        }
    }
}

/// The tool sets of the apps some endpoint serves (an app no endpoint names is not built: its
/// upstream need not be reachable).
pub(super) async fn tool_sets(
    config: &Config,
    apps: &Apps,
    errors: &mut Vec<ConfigError>,
) -> BTreeMap<String, ToolSet> {
    let mut wanted: Vec<String> = config
        .endpoints
        .iter()
        .flat_map(|e| {
            e.tools
                .iter()
                .filter_map(|t| t.split_once('.').map(|(a, _)| a.to_string()))
        })
        .collect();
    wanted.sort();
    wanted.dedup();
    let mut tool_sets = BTreeMap::new();
    for name in wanted {
        let Some(factory) = apps.tools.get(&name) else {
            continue; // reported per endpoint
        };
        let empty = toml::Value::Table(Default::default());
        let section = config.apps.get(&name).unwrap_or(&empty).clone();
        match factory(section).await {
            Ok(set) => {
                tool_sets.insert(name, set);
            }
            Err(message) => errors.push(ConfigError::new(format!("apps.{name}"), message)),
        }
    }
    tool_sets
}

pub(super) fn known(apps: &Apps) -> String {
    let names: Vec<&str> = apps
        .tools
        .keys()
        .chain(apps.handlers.keys())
        .map(String::as_str)
        .collect();
    names.join(", ")
}
