//! The TYPO3 content feed as `docs/contracts/typo3-content-feed.md` defines it: the manifest,
//! the records exchange, and what makes a manifest good enough to act on.

use std::collections::HashSet;

use serde::{Deserialize, Serialize};
use serde_json::Value;

pub const MANIFEST_PATH: &str = "/api/content/manifest";
pub const RECORDS_PATH: &str = "/api/content/records";
/// Records asked for in one request.
pub const RECORDS_BATCH: usize = 50;

/// The kinds of item that have a structured record (the rest are HTML pages only).
pub const RECORD_TYPES: [&str; 6] = ["product", "hotel", "city", "region", "country", "concept"];
const PAGE_TYPES: [&str; 2] = ["page", "blog"];

pub fn is_record_type(kind: &str) -> bool {
    RECORD_TYPES.contains(&kind)
}

#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Manifest {
    #[serde(default)]
    pub generated_at: Option<String>,
    #[serde(default)]
    pub sites: Vec<Site>,
    #[serde(default)]
    pub items: Vec<Item>,
}

#[derive(Debug, Clone, Deserialize)]
pub struct Site {
    pub site: String,
    #[serde(default)]
    pub title: Option<String>,
    #[serde(default)]
    pub hosts: Vec<String>,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Item {
    #[serde(rename = "type")]
    pub kind: String,
    pub uid: u64,
    pub language: String,
    pub modified: String,
    #[serde(default)]
    pub site: Option<String>,
    #[serde(default)]
    pub url: Option<String>,
    #[serde(default)]
    pub title: Option<String>,
    #[serde(default)]
    pub breadcrumb: Vec<String>,
    #[serde(default)]
    pub content_url: Option<String>,
    #[serde(default)]
    pub detail_of: Option<ItemRef>,
}

/// A reference to a record: `{"type": "product", "uid": 1204}`.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub struct ItemRef {
    #[serde(rename = "type")]
    pub kind: String,
    pub uid: u64,
}

/// Identifies one document: `(type, uid, language)`.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub struct DocKey {
    #[serde(rename = "type")]
    pub kind: String,
    pub uid: u64,
    pub language: String,
}

impl Item {
    pub fn key(&self) -> DocKey {
        DocKey {
            kind: self.kind.clone(),
            uid: self.uid,
            language: self.language.clone(),
        }
    }
}

impl std::fmt::Display for DocKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}:{}:{}", self.kind, self.uid, self.language)
    }
}

#[derive(Debug, Serialize)]
pub struct RecordsRequest<'a> {
    pub items: &'a [DocKey],
}

#[derive(Debug, Deserialize)]
pub struct RecordsResponse {
    pub records: Vec<Record>,
}

#[derive(Debug, Clone, Deserialize)]
pub struct Record {
    #[serde(rename = "type")]
    pub kind: String,
    pub uid: u64,
    pub language: String,
    pub data: Value,
}

impl Record {
    pub fn key(&self) -> DocKey {
        DocKey {
            kind: self.kind.clone(),
            uid: self.uid,
            language: self.language.clone(),
        }
    }
}

impl Manifest {
    /// Parses and checks a manifest; any problem makes the whole manifest unusable, because a
    /// partial one would delete every item it leaves out.
    pub fn parse(body: &[u8]) -> Result<Self, String> {
        let manifest: Manifest =
            serde_json::from_slice(body).map_err(|e| format!("not a manifest: {e}"))?;
        manifest.validate()?;
        Ok(manifest)
    }

    fn validate(&self) -> Result<(), String> {
        if self.sites.is_empty() {
            return Err("the manifest lists no sites".into());
        }
        if self.items.is_empty() {
            return Err("the manifest lists no items".into());
        }
        let sites: HashSet<&str> = self.sites.iter().map(|s| s.site.as_str()).collect();
        let mut keys = HashSet::new();
        for (index, item) in self.items.iter().enumerate() {
            let at = format!("items[{index}]");
            if !is_record_type(&item.kind) && !PAGE_TYPES.contains(&item.kind.as_str()) {
                return Err(format!("{at}.type: unknown type `{}`", item.kind));
            }
            if item.uid == 0 {
                return Err(format!("{at}.uid: must be positive"));
            }
            if item.language.is_empty() {
                return Err(format!("{at}.language: empty"));
            }
            if chrono::DateTime::parse_from_rfc3339(&item.modified).is_err() {
                return Err(format!("{at}.modified: not an RFC 3339 time"));
            }
            if let Some(site) = &item.site
                && !sites.contains(site.as_str())
            {
                return Err(format!("{at}.site: `{site}` is not a site of the manifest"));
            }
            if !keys.insert(item.key()) {
                return Err(format!("{at}: `{}` is listed twice", item.key()));
            }
        }
        Ok(())
    }

    /// Whether `url` is on a host of one of the manifest's sites: only those get the API key.
    pub fn serves(&self, url: &reqwest::Url) -> bool {
        let Some(host) = url.host_str() else {
            return false;
        };
        if !matches!(url.scheme(), "http" | "https") {
            return false;
        }
        let authority = match url.port() {
            Some(port) => format!("{host}:{port}"),
            None => host.to_string(),
        };
        self.sites
            .iter()
            .flat_map(|s| &s.hosts)
            .any(|h| h.eq_ignore_ascii_case(&authority))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn manifest(items: &str) -> Result<Manifest, String> {
        Manifest::parse(
            format!(
                r#"{{"sites": [{{"site": "ser", "hosts": ["www.ser.de", "127.0.0.1:8080"]}}], "items": {items}}}"#
            )
            .as_bytes(),
        )
    }

    #[test]
    fn a_good_manifest_parses() {
        let m = manifest(r#"[{"type": "page", "uid": 1, "language": "de", "modified": "2026-11-30T10:00:00+01:00", "site": "ser"}]"#)
            .expect("valid");
        assert_eq!(m.items[0].key().to_string(), "page:1:de");
    }

    #[test]
    fn any_bad_item_spoils_the_manifest() {
        let item = |extra: &str| {
            format!(
                r#"[{{"type": "page", "uid": 1, "language": "de", "modified": "2026-11-30T10:00:00+01:00"{extra}}}]"#
            )
        };
        assert!(manifest("[]").unwrap_err().contains("no items"));
        assert!(manifest(&item(r#", "site": "elsewhere""#)).is_err());
        assert!(manifest(&item("").replace("2026-11-30T10:00:00+01:00", "gestern")).is_err());
        assert!(manifest(&item("").replace("\"page\"", "\"video\"")).is_err());
        assert!(manifest(&item("").replace("\"uid\": 1", "\"uid\": 0")).is_err());
        let twice = item("").replace(']', &format!(", {}", &item("")[1..]));
        assert!(manifest(&twice).unwrap_err().contains("twice"));
        assert!(Manifest::parse(b"<html>").is_err());
    }

    #[test]
    fn only_site_hosts_are_served() {
        let m = manifest(r#"[{"type": "page", "uid": 1, "language": "de", "modified": "2026-11-30T10:00:00+01:00"}]"#)
            .expect("valid");
        let url = |u: &str| reqwest::Url::parse(u).expect("url");
        assert!(m.serves(&url("https://www.ser.de/a/?type=1733")));
        assert!(m.serves(&url("https://WWW.SER.DE/a/")));
        assert!(m.serves(&url("http://127.0.0.1:8080/_pages/x")));
        assert!(!m.serves(&url("http://127.0.0.1:9090/_pages/x")));
        assert!(!m.serves(&url("https://evil.example/www.ser.de")));
        assert!(!m.serves(&url("ftp://www.ser.de/a")));
    }
}
