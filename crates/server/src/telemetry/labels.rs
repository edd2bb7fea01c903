//! Keeping label values bounded: what a stranger sends (a method name, a protocol version, a
//! self-registered client id) becomes a label only from a known list or up to a cap, so no one
//! can make the registry grow without end.

use std::collections::HashSet;
use std::sync::RwLock;

/// The methods of MCP's schema (2025-11-25); anything else is `_other`.
const METHODS: &[&str] = &[
    "initialize",
    "ping",
    "tools/list",
    "tools/call",
    "resources/list",
    "resources/read",
    "resources/templates/list",
    "resources/subscribe",
    "resources/unsubscribe",
    "prompts/list",
    "prompts/get",
    "completion/complete",
    "logging/setLevel",
    "tasks/get",
    "tasks/list",
    "tasks/result",
    "tasks/cancel",
    "notifications/initialized",
    "notifications/cancelled",
    "notifications/progress",
    "notifications/roots/list_changed",
    "notifications/tasks/status",
];

const PROTOCOL_VERSIONS: &[&str] = &["2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25"];

pub fn method_label(method: &str) -> &'static str {
    METHODS
        .iter()
        .find(|m| **m == method)
        .copied()
        .unwrap_or("_other")
}

pub fn protocol_label(version: &str) -> &'static str {
    PROTOCOL_VERSIONS
        .iter()
        .find(|v| **v == version)
        .copied()
        .unwrap_or("_other")
}

/// The first `cap` distinct names seen; later ones are `_other`.
pub struct BoundedNames {
    seen: RwLock<HashSet<String>>,
    cap: usize,
}

impl BoundedNames {
    pub fn new(cap: usize) -> Self {
        Self {
            seen: RwLock::new(HashSet::new()),
            cap,
        }
    }

    pub fn label(&self, name: &str) -> String {
        if self
            .seen
            .read()
            .unwrap_or_else(|p| p.into_inner())
            .contains(name)
        {
            return name.to_string();
        }
        let mut seen = self.seen.write().unwrap_or_else(|p| p.into_inner());
        if seen.len() < self.cap {
            seen.insert(name.to_string());
            name.to_string()
        } else if seen.contains(name) {
            name.to_string()
        } else {
            "_other".to_string()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_stranger_cannot_grow_the_label_sets() {
        let names = BoundedNames::new(2);
        assert_eq!(names.label("a"), "a");
        assert_eq!(names.label("b"), "b");
        assert_eq!(names.label("c"), "_other");
        assert_eq!(names.label("a"), "a");
        assert_eq!(method_label("tools/call"), "tools/call");
        assert_eq!(method_label("x/y"), "_other");
        assert_eq!(protocol_label("2025-06-18"), "2025-06-18");
        assert_eq!(protocol_label("9999-01-01"), "_other");
    }
}

/// How a request reached us.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Transport {
    StreamableHttp,
    LegacySse,
    Stdio,
}
