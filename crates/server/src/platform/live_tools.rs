//! Apps whose tools change while the server runs (an upstream MCP server's list; its tools
//! hidden while it is down): `serve` starts each one's updates, and every endpoint that lists
//! its tools is mounted again from each new list — resolved exactly as at start (aliases,
//! `confirm`, scopes, write safety), then swapped in whole, which tells listening clients.

use std::collections::BTreeMap;
use std::sync::Arc;

use concierge_core::{ToolList, ToolSet};

use super::Platform;
use super::endpoints::resolve_tools;
use crate::config::EndpointSection;
use crate::endpoint::Endpoint;

impl Platform {
    /// Starts the updates of every app that has them, together, and waits for each one's first
    /// list (each app bounds its own wait); from then on, each endpoint follows its apps' lists.
    pub async fn start_tool_updates(&self) {
        // An instance a reload carried over is followed already: its list was handed over.
        let starting = self.tool_sets.iter().filter_map(|(name, set)| {
            let start = set.updates.clone()?;
            if self.running.followed(name).is_some() {
                return None;
            }
            Some(async move { (name.clone(), start().await) })
        });
        for (name, list) in futures::future::join_all(starting).await {
            self.running.keep_list(&name, list);
        }
        let lists: BTreeMap<String, ToolList> = self
            .tool_sets
            .keys()
            .filter_map(|name| Some((name.clone(), self.running.followed(name)?)))
            .collect();
        if lists.is_empty() {
            return;
        }
        let kinds = super::endpoints::tool_kinds(&self.apps);
        for built in &self.endpoints {
            let section = &built.section;
            let followed: BTreeMap<String, ToolList> = lists
                .iter()
                .filter(|(name, _)| lists_tools_of(section, name))
                .map(|(name, list)| (name.clone(), list.clone()))
                .collect();
            if followed.is_empty() || !matches!(built.mounted, super::Mounted::Tools) {
                continue;
            }
            let follower = Follower {
                config: self.config.clone(),
                section: section.clone(),
                tool_sets: self.tool_sets.clone(),
                kinds: kinds.clone(),
                endpoint: built.guard.endpoint.clone(),
            };
            // Told only of a real change: a reload mounts again what may be the same list.
            follower.mount(&followed, false);
            let until = self.running.following.clone();
            tokio::spawn(async move {
                tokio::select! {
                    _ = until.cancelled() => {}
                    _ = follower.follow(followed) => {}
                }
            });
        }
    }
}

/// Whether the endpoint lists a tool of instance `name`.
fn lists_tools_of(section: &EndpointSection, name: &str) -> bool {
    section.tools.iter().any(|entry| {
        let (entry, _) = crate::config::split_alias(entry);
        entry.split_once('.').is_some_and(|(app, _)| app == name)
    })
}

/// One endpoint following the lists of the apps it serves.
struct Follower {
    config: crate::config::Config,
    section: EndpointSection,
    tool_sets: BTreeMap<String, ToolSet>,
    kinds: String,
    endpoint: Arc<Endpoint>,
}

impl Follower {
    /// Mounts the endpoint's tools from the apps' current lists. A listed tool an app does not
    /// offer now (hidden while its server is down) is left out, and said at debug level only:
    /// the entry was checked at start.
    fn mount(&self, lists: &BTreeMap<String, ToolList>, always_tell: bool) {
        let mut tool_sets = self.tool_sets.clone();
        for (name, list) in lists {
            if let Some(set) = tool_sets.get_mut(name) {
                set.tools = list.borrow().clone();
            }
        }
        let mut errors = Vec::new();
        let tools = resolve_tools(
            &self.config,
            &self.section,
            &tool_sets,
            &self.kinds,
            "tools",
            &mut errors,
        );
        for error in errors {
            tracing::debug!(endpoint = %self.section.path, %error, "a listed tool is not offered now");
        }
        if always_tell {
            self.endpoint.replace_tools(tools);
        } else {
            self.endpoint.serve_tools(tools);
        }
    }

    /// Mounts again on every new list, until the apps stop sending (the server stops).
    async fn follow(self, mut lists: BTreeMap<String, ToolList>) {
        loop {
            let changes = lists
                .values_mut()
                .map(|list| Box::pin(list.changed()))
                .collect::<Vec<_>>();
            if changes.is_empty() {
                return;
            }
            let (changed, _, _) = futures::future::select_all(changes).await;
            if changed.is_err() {
                return;
            }
            // A server that came back tells its clients even with the same list: they may
            // have seen its tools fail meanwhile.
            self.mount(&lists, true);
        }
    }
}
