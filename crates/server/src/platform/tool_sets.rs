//! The app instances a deployment names, and the tool sets of those its endpoints serve.

use std::collections::BTreeMap;

use concierge_core::ToolSet;

use super::apps::Apps;
use crate::config::{Config, ConfigError};

/// Every `[simulators.<name>]` names a simulator this binary offers, and every `[apps.<name>]`
/// is a well-named instance of a kind it offers.
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
        if !crate::config::is_instance_name(name) {
            errors.push(ConfigError::new(
                format!("apps.{name}"),
                "an app instance's name is a lower-case letter, then lower-case letters, \
                 digits, `_` or `-` (at most 64): it starts the names of its tools in \
                 `tools = [\"<name>.<tool>\"]`",
            ));
            continue;
        }
        match config.app_kind(name) {
            Ok(kind) if apps.tools.contains_key(kind) || apps.handlers.contains_key(kind) => {}
            Ok(kind) if kind == name => errors.push(ConfigError::new(
                format!("apps.{name}"),
                format!(
                    "no app kind `{name}` (a section without `kind` is the kind of its name); \
                     set `kind` to one of: {}",
                    known(apps)
                ),
            )),
            Ok(kind) => errors.push(ConfigError::new(
                format!("apps.{name}.kind"),
                format!("no app kind `{kind}`; known: {}", known(apps)),
            )),
            Err(error) => errors.push(error),
        }
    }
}

/// The tool sets of the instances some endpoint serves, by instance name, each built by its
/// kind from its settings (an instance no endpoint names is not built: its upstream need not be
/// reachable).
pub(super) async fn tool_sets(
    config: &Config,
    apps: &Apps,
    previous: Option<&super::Platform>,
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
        if let Some(set) = super::carry::kept_tool_set(config, &name, previous) {
            tool_sets.insert(name, set);
            continue;
        }
        let Some(factory) = config.app_kind(&name).ok().and_then(|k| apps.tools.get(k)) else {
            continue; // reported per endpoint, or under apps.<name>
        };
        match factory(config.app_settings(&name)).await {
            Ok(mut set) => {
                // The instance, not the kind: two instances of one kind are two apps.
                set.app = name.clone();
                tool_sets.insert(name, set);
            }
            Err(message) => errors.push(ConfigError::new(format!("apps.{name}"), message)),
        }
    }
    tool_sets
}

/// The kinds this binary offers, for a message that names an unknown one.
pub(super) fn known(apps: &Apps) -> String {
    let names: Vec<&str> = apps
        .tools
        .keys()
        .chain(apps.handlers.keys())
        .map(String::as_str)
        .collect();
    names.join(", ")
}
