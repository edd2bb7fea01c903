//! Client ID Metadata Documents (draft-ietf-oauth-client-id-metadata-document): a client whose
//! `client_id` is an https URL publishes its metadata there, and needs no registration.
//!
//! Fetching a URL a stranger chose is an SSRF risk, so the fetch only goes to public addresses
//! (no private, loopback, link-local, shared, multicast or IPv4-mapped ones), connects to the
//! address it checked, follows no redirects, accepts only a 200 JSON answer of at most 5 KB within
//! 10 s — the name lookup included, since a resolver that drops packets makes glibc wait 5 s a
//! try — and caches the document (Cache-Control, clamped to 5 min – 24 h).
//!
//! A name lookup holds a thread until the resolver gives up, whatever deadline the fetch has, so
//! at most [`MAX_LOOKUPS`] run at once: a stranger sending URL client ids to `/authorize` and
//! `/token` cannot fill the blocking pool (512 threads) with hung lookups. Beyond that a client
//! id is refused at once ("try again"), never queued.

use std::collections::HashMap;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use concierge_core::json::strings;
use serde_json::Value;

use crate::store::Client;

const MAX_DOCUMENT: usize = 5 * 1024;
const MIN_CACHE: Duration = Duration::from_secs(5 * 60);
const MAX_CACHE: Duration = Duration::from_secs(24 * 3600);
const MAX_CACHED: usize = 1000;
/// The whole fetch, from the name lookup to the last byte.
const DEADLINE: Duration = Duration::from_secs(10);
/// Name lookups under way at once, each on a thread of its own until the resolver answers.
pub const MAX_LOOKUPS: usize = 8;

pub struct Resolver {
    /// For tests only: accept `http://127.0.0.1…` client ids and loopback addresses.
    allow_loopback: bool,
    cache: Mutex<HashMap<String, (Client, Instant)>>,
    /// One permit per lookup thread, held by the thread itself (a timed-out fetch leaves its
    /// lookup running).
    lookups: Arc<tokio::sync::Semaphore>,
}

/// Whether a `client_id` names a metadata document rather than a registered client.
pub fn is_document_url(client_id: &str) -> bool {
    client_id.starts_with("https://") || client_id.starts_with("http://")
}

impl Resolver {
    pub fn new(allow_loopback: bool) -> Self {
        Self {
            allow_loopback,
            cache: Mutex::default(),
            lookups: Arc::new(tokio::sync::Semaphore::new(MAX_LOOKUPS)),
        }
    }

    pub async fn client(&self, client_id: &str) -> Result<Client, String> {
        if let Some((client, until)) = self
            .cache
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .get(client_id)
            && *until > Instant::now()
        {
            return Ok(client.clone());
        }
        tokio::time::timeout(DEADLINE, self.fetch(client_id))
            .await
            .unwrap_or_else(|_| Err("its metadata document cannot be fetched in time".into()))
    }

    /// The addresses of `host`, looked up on a thread that holds one of the lookup permits until
    /// the resolver answers.
    async fn lookup(&self, host: &str, port: u16) -> Result<Vec<SocketAddr>, String> {
        let permit = self.lookups.clone().try_acquire_owned().map_err(|_| {
            "too many client metadata documents are being fetched; try again shortly".to_string()
        })?;
        let host = host.to_string();
        tokio::task::spawn_blocking(move || {
            let _held = permit;
            std::net::ToSocketAddrs::to_socket_addrs(&(host.as_str(), port))
                .map(Iterator::collect::<Vec<_>>)
        })
        .await
        .ok()
        .and_then(Result::ok)
        .ok_or_else(|| "the client id's host does not resolve".to_string())
    }

    async fn fetch(&self, client_id: &str) -> Result<Client, String> {
        let url =
            url::Url::parse(client_id).map_err(|_| "the client id is not a URL".to_string())?;
        let loopback_test = self.allow_loopback && url.scheme() == "http";
        if url.scheme() != "https" && !loopback_test {
            return Err("a client id URL must be https".into());
        }
        if url.fragment().is_some() || !url.username().is_empty() || url.path() == "/" {
            return Err("a client id URL needs a path, and no fragment or user info".into());
        }
        let host = url
            .host_str()
            .ok_or("the client id URL has no host")?
            .to_string();
        let port = url.port_or_known_default().unwrap_or(443);
        let addresses = self.lookup(&host, port).await?;
        let address = addresses
            .iter()
            .find(|a| self.allow_loopback && a.ip().is_loopback() || is_public(a.ip()))
            .copied()
            .ok_or("the client id's host is not a public address")?;
        let http = reqwest::Client::builder()
            .timeout(Duration::from_secs(10))
            .redirect(reqwest::redirect::Policy::none())
            // A proxy would resolve the host itself and undo the address check.
            .no_proxy()
            .resolve(&host, address)
            .build()
            .map_err(|e| e.to_string())?;
        let mut response = http
            .get(url.as_str())
            .header("accept", "application/json")
            .send()
            .await
            .map_err(|e| {
                // The detail stays in the log: on the page it would make a port scanner of us.
                tracing::info!(error = %e.without_url(), "CIMD fetch failed");
                "its metadata document cannot be fetched".to_string()
            })?;
        if response.status().as_u16() != 200 {
            return Err(format!(
                "the client's metadata answered HTTP {}",
                response.status().as_u16()
            ));
        }
        let json = response
            .headers()
            .get("content-type")
            .and_then(|v| v.to_str().ok())
            .is_some_and(|t| t.contains("json"));
        if !json {
            return Err("the client's metadata is not JSON".into());
        }
        let max_age = response
            .headers()
            .get("cache-control")
            .and_then(|v| v.to_str().ok())
            .and_then(|v| {
                v.split(',')
                    .find_map(|d| d.trim().strip_prefix("max-age=")?.parse().ok())
            })
            .map(Duration::from_secs)
            .unwrap_or(MIN_CACHE)
            .clamp(MIN_CACHE, MAX_CACHE);
        let mut body = Vec::new();
        while let Some(chunk) = response
            .chunk()
            .await
            .map_err(|e| e.without_url().to_string())?
        {
            body.extend_from_slice(&chunk);
            if body.len() > MAX_DOCUMENT {
                return Err("the client's metadata is larger than 5 KB".into());
            }
        }
        let document: Value = serde_json::from_slice(&body)
            .map_err(|_| "the client's metadata is not JSON".to_string())?;
        let client = client_of(client_id, &document)?;
        let mut cache = self.cache.lock().unwrap_or_else(|p| p.into_inner());
        if cache.len() >= MAX_CACHED {
            // Anyone can mint documents under a domain of their own: the cache stays bounded.
            cache.retain(|_, (_, until)| *until > Instant::now());
            if cache.len() >= MAX_CACHED {
                cache.clear();
            }
        }
        cache.insert(
            client_id.to_string(),
            (client.clone(), Instant::now() + max_age),
        );
        Ok(client)
    }
}

/// The client a document describes; it must name itself by the exact URL it was fetched from.
/// Public for `fuzz/`: a document is a stranger's bytes.
pub fn client_of(client_id: &str, document: &Value) -> Result<Client, String> {
    if document.get("client_id").and_then(Value::as_str) != Some(client_id) {
        return Err("the client's metadata names another client_id".into());
    }
    let redirect_uris = document
        .get("redirect_uris")
        .and_then(strings)
        .unwrap_or_default();
    if redirect_uris.is_empty() {
        return Err("the client's metadata lists no redirect_uris".into());
    }
    for uri in &redirect_uris {
        crate::util::acceptable_redirect(uri)?;
    }
    let method = document
        .get("token_endpoint_auth_method")
        .and_then(Value::as_str)
        .unwrap_or("none");
    if method != "none" {
        return Err("a metadata-document client cannot hold a shared secret".into());
    }
    Ok(Client {
        client_id: client_id.to_string(),
        secret_hash: None,
        name: document
            .get("client_name")
            .and_then(Value::as_str)
            .unwrap_or(client_id)
            .chars()
            .take(100)
            .collect(),
        redirect_uris,
        grant_types: vec!["authorization_code".into(), "refresh_token".into()],
        auth_method: "none".into(),
        scopes: Vec::new(),
        source: "cimd".into(),
    })
}

/// An address anyone on the internet could reach.
pub fn is_public(ip: IpAddr) -> bool {
    match ip {
        IpAddr::V4(v4) => is_public_v4(v4),
        IpAddr::V6(v6) => match v6.to_ipv4_mapped() {
            Some(_) => false, // IPv4-mapped: a way around the IPv4 rules
            None => is_public_v6(v6),
        },
    }
}

fn is_public_v4(ip: Ipv4Addr) -> bool {
    let [a, b, c, _] = ip.octets();
    !(ip.is_private()
        || ip.is_loopback()
        || ip.is_link_local()
        || ip.is_broadcast()
        || ip.is_documentation()
        || ip.is_unspecified()
        || ip.is_multicast()
        || a == 0
        || (a == 100 && (64..128).contains(&b)) // shared address space (CGNAT)
        || (a == 192 && b == 0 && c == 0) // IETF protocol assignments
        || (a == 198 && (18..20).contains(&b)) // benchmarking
        || a >= 240)
}

fn is_public_v6(ip: Ipv6Addr) -> bool {
    let segments = ip.segments();
    let first = segments[0];
    // Forms that carry an IPv4 address (IPv4-compatible, NAT64, 6to4) reach what it names.
    let embedded = |hi: u16, lo: u16| Ipv4Addr::from(((hi as u32) << 16) | lo as u32);
    if segments[..6] == [0; 6] {
        return is_public_v4(embedded(segments[6], segments[7]));
    }
    if segments[..6] == [0x64, 0xff9b, 0, 0, 0, 0] {
        return is_public_v4(embedded(segments[6], segments[7]));
    }
    if first == 0x2002 {
        return is_public_v4(embedded(segments[1], segments[2]));
    }
    !(ip.is_loopback()
        || ip.is_unspecified()
        || ip.is_multicast()
        || (first & 0xfe00) == 0xfc00 // unique local
        || (first & 0xffc0) == 0xfe80 // link-local
        || (first & 0xffc0) == 0xfec0 // site-local
        || (first == 0x2001 && segments[1] == 0) // Teredo
        || (first == 0x2001 && segments[1] == 0x0db8)) // documentation
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// With every lookup permit held (lookups hung on a resolver that drops packets), the next
    /// URL client id is refused at once instead of taking another thread.
    #[tokio::test]
    async fn lookups_beyond_the_bound_are_refused_at_once() {
        // Loopback allowed, so the lookup after the bound is a numeric one: no resolver involved.
        let resolver = Resolver::new(true);
        let held = resolver
            .lookups
            .clone()
            .try_acquire_many_owned(MAX_LOOKUPS as u32)
            .unwrap();
        let started = Instant::now();
        let refused = resolver
            .client("http://127.0.0.1:9/oauth/metadata.json")
            .await
            .unwrap_err();
        assert!(refused.contains("try again"), "{refused}");
        assert!(started.elapsed() < Duration::from_secs(1));
        drop(held);
        // A permit free again: the lookup runs (and the fetch fails on the closed port).
        let failed = resolver
            .client("http://127.0.0.1:9/oauth/metadata.json")
            .await
            .unwrap_err();
        assert!(!failed.contains("try again"), "{failed}");
        assert_eq!(resolver.lookups.available_permits(), MAX_LOOKUPS);
    }

    #[test]
    fn only_public_addresses_are_fetched() {
        for blocked in [
            "127.0.0.1",
            "10.1.2.3",
            "172.16.0.1",
            "192.168.1.1",
            "169.254.169.254",
            "100.64.0.1",
            "0.0.0.0",
            "224.0.0.1",
            "255.255.255.255",
            "::1",
            "fc00::1",
            "fe80::1",
            "::ffff:127.0.0.1",
            "::ffff:8.8.8.8",
        ] {
            assert!(!is_public(blocked.parse().unwrap()), "{blocked}");
        }
        for open in [
            "8.8.8.8",
            "1.1.1.1",
            "2606:4700:4700::1111",
            "64:ff9b::808:808",
        ] {
            assert!(is_public(open.parse().unwrap()), "{open}");
        }
    }

    #[test]
    fn a_document_must_name_itself_list_redirects_and_hold_no_secret() {
        let id = "https://app.example/oauth/client.json";
        let good = json!({"client_id": id, "client_name": "App", "redirect_uris": ["https://app.example/cb"]});
        assert_eq!(client_of(id, &good).unwrap().name, "App");
        assert!(client_of("https://other.example/c.json", &good).is_err());
        assert!(client_of(id, &json!({"client_id": id, "redirect_uris": []})).is_err());
        let plain_http = json!({"client_id": id, "redirect_uris": ["http://attacker.example/cb"]});
        assert!(
            client_of(id, &plain_http).is_err(),
            "codes never travel over plain http"
        );
        let secret = json!({"client_id": id, "redirect_uris": ["https://app.example/cb"], "token_endpoint_auth_method": "client_secret_post"});
        assert!(client_of(id, &secret).is_err());
    }
}
