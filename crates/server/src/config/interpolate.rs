//! `${VAR}`, `${VAR:-default}` and the addresses only known once listeners are bound.
//!
//! Besides environment variables a config may name two kinds of bound address, so that a demo can
//! listen on free ports (port 0) and still tell its parts where the others are:
//! - `${server.url}`: the server's own base URL (`http://127.0.0.1:PORT`), e.g. for an OAuth
//!   issuer that must name the port the server really got;
//! - `${simulators.<name>.url}`: the base URL of the simulator `[simulators.<name>]`, e.g. for the
//!   upstream URL of an app whose real system is simulated in the demo.
//!
//! A default may itself hold a reference: `${BXH_KG_API_BASE:-${simulators.kgqa.url}}`.

use std::collections::BTreeMap;

use super::error::ConfigError;

/// The bound addresses `${server.url}` and `${simulators.<name>.url}` stand for.
#[derive(Debug, Clone, Default)]
pub struct BoundUrls {
    pub server: Option<String>,
    pub simulators: BTreeMap<String, String>,
}

impl BoundUrls {
    /// The URL of a listen address: the address a local client reaches it at (an unspecified
    /// address such as 0.0.0.0 is reached on loopback).
    pub fn url_of(addr: std::net::SocketAddr) -> String {
        let ip = match addr.ip() {
            std::net::IpAddr::V4(ip) if ip.is_unspecified() => {
                std::net::IpAddr::V4(std::net::Ipv4Addr::LOCALHOST)
            }
            std::net::IpAddr::V6(ip) if ip.is_unspecified() => {
                std::net::IpAddr::V6(std::net::Ipv6Addr::LOCALHOST)
            }
            ip => ip,
        };
        format!("http://{}", std::net::SocketAddr::new(ip, addr.port()))
    }

    /// `url_of` for an address as written; the text itself when it does not parse (the config
    /// check reports it).
    pub fn url_of_text(listen: &str) -> String {
        listen
            .parse()
            .map(Self::url_of)
            .unwrap_or_else(|_| format!("http://{listen}"))
    }

    fn lookup(&self, name: &str) -> Option<Result<String, String>> {
        if name == "server.url" {
            return Some(
                self.server
                    .clone()
                    .ok_or_else(|| "`${server.url}` is not known here".to_string()),
            );
        }
        let simulator = name.strip_prefix("simulators.")?.strip_suffix(".url")?;
        Some(self.simulators.get(simulator).cloned().ok_or_else(|| {
            let known: Vec<&str> = self.simulators.keys().map(String::as_str).collect();
            format!(
                "`${{{name}}}`: no simulator `{simulator}` (configured: {})",
                if known.is_empty() {
                    "none".to_string()
                } else {
                    known.join(", ")
                }
            )
        }))
    }
}

/// Replaces references in every string value of `value`; a `$${` is a literal `${`.
pub fn interpolate(
    value: &mut toml::Value,
    at: &str,
    env: &dyn Fn(&str) -> Option<String>,
    bound: &BoundUrls,
    errors: &mut Vec<ConfigError>,
) {
    match value {
        toml::Value::String(text) => match substitute(text, env, bound) {
            Ok(replaced) => *text = replaced,
            Err(message) => errors.push(ConfigError::new(at, message)),
        },
        toml::Value::Array(items) => {
            for (index, item) in items.iter_mut().enumerate() {
                interpolate(item, &format!("{at}[{index}]"), env, bound, errors);
            }
        }
        toml::Value::Table(table) => {
            for (key, item) in table.iter_mut() {
                let path = if at.is_empty() {
                    key.clone()
                } else {
                    format!("{at}.{key}")
                };
                interpolate(item, &path, env, bound, errors);
            }
        }
        _ => {}
    }
}

pub fn substitute(
    text: &str,
    env: &dyn Fn(&str) -> Option<String>,
    bound: &BoundUrls,
) -> Result<String, String> {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(start) = rest.find("${") {
        if rest[..start].ends_with('$') {
            out.push_str(&rest[..start - 1]);
            out.push_str("${");
            rest = &rest[start + 2..];
            continue;
        }
        out.push_str(&rest[..start]);
        let after = &rest[start + 2..];
        let end = closing_brace(after).ok_or_else(|| format!("unclosed `${{` in `{text}`"))?;
        let expression = &after[..end];
        let (name, default) = match expression.split_once(":-") {
            Some((name, default)) => (name, Some(default)),
            None => (expression, None),
        };
        if let Some(found) = bound.lookup(name) {
            out.push_str(&found?);
        } else if name.is_empty() || !name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') {
            return Err(format!(
                "`${{{expression}}}` is not a variable name (nor `server.url` or \
                 `simulators.<name>.url`)"
            ));
        } else {
            match (env(name).filter(|v| !v.is_empty()), default) {
                (Some(value), _) => out.push_str(&value),
                (None, Some(default)) => out.push_str(&substitute(default, env, bound)?),
                (None, None) => {
                    return Err(format!(
                        "environment variable {name} is not set (write `${{{name}:-default}}` for a default)"
                    ));
                }
            }
        }
        rest = &after[end + 1..];
    }
    out.push_str(rest);
    Ok(out)
}

/// The `}` that closes an expression whose `${` came just before `text`, past nested ones.
fn closing_brace(text: &str) -> Option<usize> {
    let mut depth = 0usize;
    let mut chars = text.char_indices().peekable();
    while let Some((index, c)) = chars.next() {
        match c {
            '$' if chars.peek().is_some_and(|(_, next)| *next == '{') => {
                chars.next();
                depth += 1;
            }
            '}' if depth == 0 => return Some(index),
            '}' => depth -= 1,
            _ => {}
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env(name: &str) -> Option<String> {
        match name {
            "SET" => Some("value".into()),
            _ => None,
        }
    }

    fn bound() -> BoundUrls {
        BoundUrls {
            server: Some("http://127.0.0.1:4100".into()),
            simulators: [("kgqa".to_string(), "http://127.0.0.1:4101".to_string())].into(),
        }
    }

    #[test]
    fn variables_and_defaults() {
        let none = BoundUrls::default();
        assert_eq!(substitute("${NOPE:-x}/y", &env, &none).unwrap(), "x/y");
        assert_eq!(substitute("${SET:-x}", &env, &none).unwrap(), "value");
        assert_eq!(
            substitute("$${LITERAL}", &env, &none).unwrap(),
            "${LITERAL}"
        );
        assert!(
            substitute("${NOPE}", &env, &none)
                .unwrap_err()
                .contains("NOPE is not set")
        );
        assert!(substitute("${oops", &env, &none).is_err());
        assert!(substitute("${a b}", &env, &none).is_err());
    }

    #[test]
    fn bound_urls_and_nested_defaults() {
        let bound = bound();
        assert_eq!(
            substitute("${server.url}/x", &env, &bound).unwrap(),
            "http://127.0.0.1:4100/x"
        );
        assert_eq!(
            substitute("${NOPE:-${simulators.kgqa.url}}/v1", &env, &bound).unwrap(),
            "http://127.0.0.1:4101/v1"
        );
        // A set variable wins, and its default is never looked at.
        assert_eq!(
            substitute("${SET:-${simulators.unknown.url}}", &env, &bound).unwrap(),
            "value"
        );
        let error = substitute("${simulators.typo3.url}", &env, &bound).unwrap_err();
        assert!(error.contains("no simulator `typo3`"), "{error}");
        assert!(error.contains("kgqa"), "{error}");
    }

    #[test]
    fn urls_of_listen_addresses() {
        assert_eq!(
            BoundUrls::url_of_text("0.0.0.0:8080"),
            "http://127.0.0.1:8080"
        );
        assert_eq!(BoundUrls::url_of_text("[::]:8080"), "http://[::1]:8080");
        assert_eq!(BoundUrls::url_of_text("127.0.0.1:0"), "http://127.0.0.1:0");
    }
}
