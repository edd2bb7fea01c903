//! Which redirect URIs a stranger may register (RFC 7591 registration is open to anyone): the
//! known AI clients' callbacks, loopback addresses for desktop apps, and what the operator adds.
//! Without a list, anyone can register `https://evil.example/landing` and use our host's good name
//! to send a victim's browser there.

use serde::Deserialize;

use crate::util::{acceptable_redirect, is_loopback};

/// The callbacks of the clients we know connect to MCP servers (notes/oauth.md, clients.md).
/// `*` stands for one path segment (ChatGPT puts the connector's id there).
pub const KNOWN_CLIENTS: &[&str] = &[
    "https://claude.ai/api/mcp/auth_callback",
    "https://claude.com/api/mcp/auth_callback",
    "https://chatgpt.com/connector_platform_oauth_redirect",
    "https://chatgpt.com/connector/oauth/*",
    "https://vscode.dev/redirect",
    "https://insiders.vscode.dev/redirect",
    "http://localhost:6274/oauth/callback",
    "http://localhost:6274/oauth/callback/debug",
];

/// `[oauth.redirects]`: the redirect URIs dynamically registered clients may use. Operator
/// clients (`concierge token add-client`) and metadata-document clients (vouched for by their
/// own host) are not limited by it.
#[derive(Debug, Clone, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RedirectsConfig {
    /// Any https redirect URI may be registered (and loopback ones, if `loopback`). For a
    /// deployment whose users bring clients nobody can list in advance; it re-opens the door
    /// to phishing pages that borrow our host's name, so it is off unless said.
    #[serde(default)]
    pub open: bool,
    /// Allow the callbacks of Claude, ChatGPT, VS Code and the MCP Inspector
    /// ([`KNOWN_CLIENTS`]): what the seeds' deployments connect.
    #[serde(default = "yes")]
    pub known_clients: bool,
    /// Allow `http://127.0.0.1`, `http://[::1]` and `http://localhost` on any port and path:
    /// desktop clients (Claude Code, VS Code, Cursor) listen on a free port at every sign-in
    /// (RFC 8252 §7.3), and a loopback page reaches only the user's own machine.
    #[serde(default = "yes")]
    pub loopback: bool,
    /// More redirect URIs, compared exactly; `*` stands for one path segment or part of one
    /// (`https://app.example/oauth/*/callback`).
    #[serde(default)]
    pub uris: Vec<String>,
    /// Hosts all of whose https redirect URIs are allowed; `*.example.com` for its subdomains
    /// (not `example.com` itself).
    #[serde(default)]
    pub hosts: Vec<String>,
}

impl Default for RedirectsConfig {
    fn default() -> Self {
        Self {
            open: false,
            known_clients: true,
            loopback: true,
            uris: Vec::new(),
            hosts: Vec::new(),
        }
    }
}

fn yes() -> bool {
    true
}

impl RedirectsConfig {
    /// Whether the configured entries make sense; `Err` names the wrong one.
    pub fn check(&self) -> Result<(), String> {
        for uri in &self.uris {
            acceptable_redirect(&uri.replace('*', "x"))
                .map_err(|e| format!("oauth.redirects.uris: {e}"))?;
        }
        for host in &self.hosts {
            let bare = host.strip_prefix("*.").unwrap_or(host);
            if bare.is_empty() || bare.contains(['/', ':', '*', '@', '?', '#']) {
                return Err(format!(
                    "oauth.redirects.hosts: `{host}` is not a host name (`app.example` or `*.example.com`)"
                ));
            }
        }
        Ok(())
    }

    /// Whether a dynamically registered client may use `uri`; `Err` says what is allowed.
    pub fn allows(&self, uri: &str) -> Result<(), String> {
        acceptable_redirect(uri)?;
        let url = url::Url::parse(uri).map_err(|_| format!("`{uri}` is not a URL"))?;
        let known = self.known_clients && KNOWN_CLIENTS.iter().any(|p| glob(p, uri));
        let loopback = self.loopback && url.scheme() == "http" && is_loopback(&url);
        let https = url.scheme() == "https";
        let host = url.host_str().unwrap_or("").to_ascii_lowercase();
        let listed = self.uris.iter().any(|p| glob(p, uri))
            || (https && self.hosts.iter().any(|h| host_matches(h, &host)));
        if known || loopback || listed || (self.open && https) {
            return Ok(());
        }
        Err(format!(
            "`{uri}` is not an allowed redirect URI here; allowed: {}",
            self.describe()
        ))
    }

    /// What is allowed, in words, for the refusal.
    fn describe(&self) -> String {
        let mut parts = Vec::new();
        if self.open {
            parts.push("any https URI".to_string());
        }
        if self.known_clients {
            parts.push(format!(
                "the callbacks of Claude, ChatGPT, VS Code and the MCP Inspector ({})",
                KNOWN_CLIENTS.join(", ")
            ));
        }
        if self.loopback {
            parts.push("http on 127.0.0.1, [::1] or localhost (any port)".to_string());
        }
        parts.extend(self.uris.iter().cloned());
        parts.extend(self.hosts.iter().map(|h| format!("https on {h}")));
        if parts.is_empty() {
            return "nothing (the operator allows redirect URIs under [oauth.redirects])".into();
        }
        format!(
            "{} (the operator can allow more under [oauth.redirects])",
            parts.join("; ")
        )
    }
}

/// `*.example.com` matches subdomains of example.com; anything else matches itself.
fn host_matches(pattern: &str, host: &str) -> bool {
    let pattern = pattern.to_ascii_lowercase();
    match pattern.strip_prefix("*.") {
        Some(parent) => host
            .strip_suffix(parent)
            .is_some_and(|sub| sub.len() > 1 && sub.ends_with('.')),
        None => pattern == host,
    }
}

/// Exact comparison, where each `*` of `pattern` stands for one or more characters other than
/// `/`, `?` and `#` (so it never widens a path beyond its segment, nor reaches into a query).
fn glob(pattern: &str, text: &str) -> bool {
    match pattern.split_once('*') {
        None => pattern == text,
        Some((head, tail)) => {
            let Some(rest) = text.strip_prefix(head) else {
                return false;
            };
            let end = rest.find(['/', '?', '#']).unwrap_or(rest.len());
            // Every split after one or more whole characters: a byte index inside a character
            // would panic (found by the `oauth_register` fuzz target: `…/oauth/PPP.ߧlQ…`).
            rest[..end]
                .char_indices()
                .map(|(at, _)| at)
                .skip(1)
                .chain((end > 0).then_some(end))
                .any(|n| glob(tail, &rest[n..]))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Fuzz regression (`oauth_register`): a registration's redirect URI with a character of
    /// more than one byte where a pattern's `*` stands panicked the registration.
    #[test]
    fn a_wildcard_matches_whole_characters() {
        assert!(glob(
            "https://chatgpt.com/connector/oauth/*",
            "https://chatgpt.com/connector/oauth/PPP.\u{7e7}lQ"
        ));
        assert!(glob(
            "https://a.example/*/cb",
            "https://a.example/\u{e9}t\u{e9}/cb"
        ));
        assert!(!glob("https://a.example/*/cb", "https://a.example//cb"));
        let policy = RedirectsConfig::default();
        let _ = policy.allows(
            "https://chatgpt.com/connector/oauth/PPP.\u{7e7}lQPP!P.\u{7e7}lQPUde.ev\u{44b}edirect",
        );
    }

    #[test]
    fn the_known_clients_and_loopback_are_allowed_by_default_strangers_not() {
        let policy = RedirectsConfig::default();
        for ok in [
            "https://claude.ai/api/mcp/auth_callback",
            "https://claude.com/api/mcp/auth_callback",
            "https://chatgpt.com/connector_platform_oauth_redirect",
            "https://chatgpt.com/connector/oauth/abc123",
            "https://vscode.dev/redirect",
            "https://insiders.vscode.dev/redirect",
            "http://localhost:6274/oauth/callback",
            "http://localhost:6274/oauth/callback/debug",
            "http://127.0.0.1/callback",
            "http://127.0.0.1:54321/callback",
            "http://[::1]:8080/cb",
        ] {
            assert!(policy.allows(ok).is_ok(), "{ok}");
        }
        for refused in [
            "https://evil.example/landing",
            "https://chatgpt.com/connector/oauth/a/b",
            "https://chatgpt.com/connector/oauth/",
            "https://claude.ai/api/mcp/auth_callback/x",
            "https://claude.ai.evil.example/api/mcp/auth_callback",
            "http://example.com/cb",
        ] {
            let why = policy.allows(refused).expect_err(refused);
            assert!(why.contains(refused), "{why}");
        }
        assert!(
            policy
                .allows("https://evil.example/landing")
                .unwrap_err()
                .contains("https://claude.ai/api/mcp/auth_callback")
        );
    }

    #[test]
    fn operators_add_uris_and_hosts_or_open_it_up() {
        let policy = RedirectsConfig {
            uris: vec!["https://app.example/oauth/*/done".into()],
            hosts: vec!["*.corp.example".into(), "tool.example".into()],
            loopback: false,
            ..Default::default()
        };
        assert!(policy.check().is_ok());
        assert!(policy.allows("https://app.example/oauth/t1/done").is_ok());
        assert!(
            policy
                .allows("https://app.example/oauth/t1/x/done")
                .is_err()
        );
        assert!(policy.allows("https://a.corp.example/any/path").is_ok());
        assert!(policy.allows("https://corp.example/cb").is_err());
        assert!(policy.allows("https://tool.example/cb").is_ok());
        assert!(policy.allows("http://tool.example/cb").is_err());
        assert!(policy.allows("http://127.0.0.1:5/cb").is_err());
        // Known clients' loopback callbacks stay allowed through the list itself.
        assert!(
            policy
                .allows("http://localhost:6274/oauth/callback")
                .is_ok()
        );

        let open = RedirectsConfig {
            open: true,
            ..Default::default()
        };
        assert!(open.allows("https://evil.example/landing").is_ok());
        assert!(open.allows("http://evil.example/landing").is_err());

        let wrong = RedirectsConfig {
            hosts: vec!["https://x.example/".into()],
            ..Default::default()
        };
        assert!(wrong.check().is_err());
    }
}
