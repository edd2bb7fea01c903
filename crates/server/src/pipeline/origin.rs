//! Which browsers' pages may drive an endpoint: the `Host` and `Origin` rules, decided once.
//!
//! A web page the user happens to open can send requests to `http://127.0.0.1:8080/mcp` (an
//! endpoint with `auth = "none"` on loopback trusts whoever reaches it), and through DNS
//! rebinding even to a name it controls that resolves to us. The MCP transport rules answer both:
//! the `Host` must be one this deployment serves, and a request that carries an `Origin` (every
//! browser sends one on a cross-origin request) is served only when that origin is allowed —
//! otherwise 403. Requests without `Origin` (every non-browser client) pass the origin rule.
//!
//! Allowed origins, from `[server] allowed_origins`:
//! - unset: the hosts of `allowed_hosts`, any scheme and port (a page served by this very
//!   deployment, or the MCP Inspector on `localhost` for a loopback demo);
//! - a list of `scheme://host[:port]`, `scheme://host:*` for any port, `null` for sandboxed pages;
//! - `[]`: no browser at all; `["*"]`: any origin (a deployment that decided so).

use concierge_core::Outcome;
use http::{HeaderMap, StatusCode};

use super::Refusal;

/// The browser rules' step: 403 for a `Host` this deployment does not serve or an `Origin` it
/// does not allow.
pub fn decide(rules: &BrowserRules, headers: &HeaderMap) -> Result<(), Refusal> {
    rules.admit(headers).map_err(|refusal| {
        let code = match refusal {
            BrowserRefusal::Host(_) => "host_not_allowed",
            BrowserRefusal::Origin(_) => "origin_not_allowed",
        };
        Refusal::new(
            StatusCode::FORBIDDEN,
            Outcome::Forbidden,
            code,
            &refusal.message(),
        )
    })
}

/// The decision, built once per deployment from `[server]`.
#[derive(Debug, Clone)]
pub struct BrowserRules {
    hosts: Vec<Authority>,
    origins: Origins,
}

#[derive(Debug, Clone)]
enum Origins {
    Any,
    /// Origins whose host is one of the allowed hosts.
    OfHosts,
    List(Vec<Allowed>),
}

/// Why a request was refused; the text says what to configure.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum BrowserRefusal {
    Host(String),
    Origin(String),
}

impl BrowserRefusal {
    pub fn message(&self) -> String {
        match self {
            BrowserRefusal::Host(host) => format!(
                "host `{host}` is not served here; the server's `allowed_hosts` lists the names it answers to"
            ),
            BrowserRefusal::Origin(origin) => format!(
                "requests from pages of `{origin}` are not allowed; the server's `allowed_origins` lists the origins that may call it"
            ),
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
struct Authority {
    host: String,
    port: Option<u16>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
enum Allowed {
    Null,
    Origin {
        scheme: String,
        host: String,
        /// `None`: any port (`:*`).
        port: Option<u16>,
    },
}

impl BrowserRules {
    /// `hosts` empty: any host (not recommended; `check` says so). `origins` as in the module docs.
    pub fn new(hosts: &[String], origins: Option<&[String]>) -> Result<Self, String> {
        let hosts = hosts
            .iter()
            .map(|h| parse_authority(h).ok_or_else(|| format!("`{h}` is not a host name")))
            .collect::<Result<Vec<_>, _>>()?;
        let origins = match origins {
            None => Origins::OfHosts,
            Some(list) if list.iter().any(|o| o.trim() == "*") => Origins::Any,
            Some(list) => Origins::List(
                list.iter()
                    .map(|o| {
                        parse_allowed(o).ok_or_else(|| {
                            format!("`{o}` is not an origin (`https://app.example.com`, `http://localhost:*`, `null` or `*`)")
                        })
                    })
                    .collect::<Result<_, _>>()?,
            ),
        };
        Ok(Self { hosts, origins })
    }

    /// Whether a request with these headers may be served.
    pub fn admit(&self, headers: &HeaderMap) -> Result<(), BrowserRefusal> {
        if !self.hosts.is_empty() {
            let host = headers
                .get(http::header::HOST)
                .and_then(|v| v.to_str().ok())
                .unwrap_or("");
            let allowed = parse_authority(host).is_some_and(|seen| {
                self.hosts.iter().any(|a| {
                    a.host == seen.host && a.port.is_none_or(|port| seen.port == Some(port))
                })
            });
            if !allowed {
                return Err(BrowserRefusal::Host(printable(host)));
            }
        }
        let Some(origin) = headers.get(http::header::ORIGIN) else {
            return Ok(());
        };
        let text = origin.to_str().unwrap_or("");
        if self.origin_allowed(text) {
            Ok(())
        } else {
            Err(BrowserRefusal::Origin(printable(text)))
        }
    }

    /// Whether a page of `origin` may call (also what CORS answers preflights with).
    pub fn origin_allowed(&self, origin: &str) -> bool {
        let origin = origin.trim();
        match &self.origins {
            Origins::Any => true,
            Origins::OfHosts => parse_origin(origin).is_some_and(|(_, host, _)| {
                self.hosts.is_empty() || self.hosts.iter().any(|a| a.host == host)
            }),
            Origins::List(list) => {
                let parsed = parse_origin(origin);
                list.iter().any(|allowed| match (allowed, &parsed) {
                    (Allowed::Null, _) => origin.eq_ignore_ascii_case("null"),
                    (Allowed::Origin { scheme, host, port }, Some((s, h, p))) => {
                        scheme == s && host == h && port.is_none_or(|port| port == *p)
                    }
                    _ => false,
                })
            }
        }
    }
}

/// A header value fit for a message: printable ASCII, at most 100 characters.
fn printable(value: &str) -> String {
    value
        .chars()
        .filter(|c| c.is_ascii_graphic() || *c == ' ')
        .take(100)
        .collect()
}

/// `host`, `host:port`, `[v6]`, `[v6]:port`, or a bare IPv6 address as `allowed_hosts` writes
/// it (`::1`); lower-cased.
fn parse_authority(text: &str) -> Option<Authority> {
    let text = text.trim().to_ascii_lowercase();
    if text.is_empty() {
        return None;
    }
    if let Some(rest) = text.strip_prefix('[') {
        let (host, after) = rest.split_once(']')?;
        let port = match after.strip_prefix(':') {
            Some(port) => Some(port.parse().ok()?),
            None if after.is_empty() => None,
            None => return None,
        };
        return Some(Authority {
            host: host.to_string(),
            port,
        });
    }
    if text.matches(':').count() > 1 {
        return Some(Authority {
            host: text,
            port: None,
        });
    }
    match text.split_once(':') {
        Some((host, port)) => Some(Authority {
            host: host.to_string(),
            port: Some(port.parse().ok()?),
        }),
        None => Some(Authority {
            host: text,
            port: None,
        }),
    }
}

/// `scheme://host[:port]` → (scheme, host, port with the scheme's default filled in).
fn parse_origin(text: &str) -> Option<(String, String, u16)> {
    let (scheme, rest) = text.split_once("://")?;
    let scheme = scheme.to_ascii_lowercase();
    if rest.contains(['/', '?', '#', '@']) {
        return None;
    }
    let authority = parse_authority(rest)?;
    let port = match (authority.port, scheme.as_str()) {
        (Some(port), _) => port,
        (None, "http") => 80,
        (None, "https") => 443,
        (None, _) => return None,
    };
    Some((scheme, authority.host, port))
}

fn parse_allowed(text: &str) -> Option<Allowed> {
    let text = text.trim();
    if text.eq_ignore_ascii_case("null") {
        return Some(Allowed::Null);
    }
    if let Some(base) = text.strip_suffix(":*") {
        let (scheme, host, _) = parse_origin(base)?;
        return Some(Allowed::Origin {
            scheme,
            host,
            port: None,
        });
    }
    let (scheme, host, port) = parse_origin(text)?;
    Some(Allowed::Origin {
        scheme,
        host,
        port: Some(port),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn headers(host: &str, origin: Option<&str>) -> HeaderMap {
        let mut headers = HeaderMap::new();
        headers.insert(http::header::HOST, host.parse().unwrap());
        if let Some(origin) = origin {
            headers.insert(http::header::ORIGIN, origin.parse().unwrap());
        }
        headers
    }

    fn loopback() -> Vec<String> {
        ["localhost", "127.0.0.1", "::1"].map(String::from).to_vec()
    }

    #[test]
    fn by_default_only_pages_of_the_served_hosts_may_call() {
        let rules = BrowserRules::new(&loopback(), None).unwrap();
        assert!(rules.admit(&headers("127.0.0.1:8080", None)).is_ok());
        assert!(
            rules
                .admit(&headers("localhost:8080", Some("http://localhost:6274")))
                .is_ok()
        );
        assert!(
            rules
                .admit(&headers("[::1]:8080", Some("http://[::1]:3000")))
                .is_ok()
        );
        assert_eq!(
            rules.admit(&headers("127.0.0.1:8080", Some("http://evil.example"))),
            Err(BrowserRefusal::Origin("http://evil.example".into()))
        );
        assert!(
            rules
                .admit(&headers("127.0.0.1:8080", Some("null")))
                .is_err()
        );
        assert_eq!(
            rules.admit(&headers("evil.example", None)),
            Err(BrowserRefusal::Host("evil.example".into()))
        );
    }

    #[test]
    fn a_list_allows_exactly_its_origins() {
        let allowed = [
            "https://app.example.com".to_string(),
            "http://localhost:*".into(),
        ];
        let rules = BrowserRules::new(&[], Some(&allowed)).unwrap();
        assert!(rules.origin_allowed("https://app.example.com"));
        assert!(rules.origin_allowed("https://app.example.com:443"));
        assert!(!rules.origin_allowed("https://app.example.com:8443"));
        assert!(!rules.origin_allowed("http://app.example.com"));
        assert!(rules.origin_allowed("http://localhost:6274"));
        assert!(!rules.origin_allowed("http://localhost.evil.example"));
        let none = BrowserRules::new(&[], Some(&[])).unwrap();
        assert!(!none.origin_allowed("http://localhost:6274"));
        let any = BrowserRules::new(&[], Some(&["*".to_string()])).unwrap();
        assert!(any.origin_allowed("http://evil.example"));
    }

    #[test]
    fn a_host_with_a_port_allows_only_that_port() {
        let rules = BrowserRules::new(&["example.com:8443".to_string()], None).unwrap();
        assert!(rules.admit(&headers("example.com:8443", None)).is_ok());
        assert!(rules.admit(&headers("example.com", None)).is_err());
        assert!(BrowserRules::new(&[], Some(&["evil".to_string()])).is_err());
    }
}
