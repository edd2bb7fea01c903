//! Upstream text passes one redaction: every secret the config holds for reaching the systems
//! behind (API keys, bearer tokens, passwords, client secrets, credential headers and
//! environment values, a database URL's password) is cut out of everything a tool hands back —
//! its result, its error's message and detail — before the client or the audit log sees it.
//!
//! One place for every kind: the dispatcher runs it on each outcome (`WriteOutcome::redact`), so
//! an API that echoes the key it was sent in its refusal, or an MCP server whose tool returns
//! the `Authorization` header it received, hands on `[redacted]`. A kind adds nothing to be
//! covered; the secrets are read from the config's `[apps.<name>]` sections by the names such
//! settings have.

use aho_corasick::AhoCorasick;
use base64::Engine;
use concierge_core::ToolError;
use serde_json::Value;

/// What a secret is replaced with.
pub const REDACTED: &str = "[redacted]";

/// Shorter values are not cut: a word that short would cut ordinary text, and no credential
/// worth the name is that short.
const SHORTEST: usize = 6;

/// Setting names whose values are credentials (a part of the name, case aside).
const SECRET_NAMES: &[&str] = &[
    "token",
    "secret",
    "password",
    "passwd",
    "key",
    "authorization",
    "credential",
    "cookie",
    "bearer",
    "private",
];

/// Name endings that say the value is not the secret itself but a file, a name or a duration.
const NOT_SECRET_ENDINGS: &[&str] = &[
    "_file", "_path", "_ttl", "_header", "_name", "_env", "_url", "_id", "_field", "_column",
];

/// The secrets of one deployment, found once per config.
#[derive(Default)]
pub struct Redaction {
    /// `None` when the config holds no secret: nothing to look for.
    finder: Option<AhoCorasick>,
}

impl Redaction {
    /// The secrets in `apps` (each instance's section, as the config has it).
    pub fn of_sections<'a>(apps: impl IntoIterator<Item = &'a toml::Value>) -> Self {
        let mut secrets = Vec::new();
        for section in apps {
            collect(section, None, &mut secrets);
        }
        Self::of_secrets(secrets)
    }

    /// These secrets, and the forms they are sent in (a header's token alone, a basic pair).
    pub fn of_secrets(secrets: Vec<String>) -> Self {
        let mut secrets: Vec<String> = secrets
            .into_iter()
            .flat_map(|secret| forms(&secret))
            .filter(|secret| secret.len() >= SHORTEST)
            .collect();
        // The longest first: a token inside its `Bearer …` header is cut whole.
        secrets.sort_by_key(|s| std::cmp::Reverse(s.len()));
        secrets.dedup();
        if secrets.is_empty() {
            return Self::default();
        }
        let finder = aho_corasick::AhoCorasick::builder()
            .match_kind(aho_corasick::MatchKind::LeftmostLongest)
            .build(&secrets)
            .ok();
        Self { finder }
    }

    /// Whether there is anything to cut.
    pub fn is_empty(&self) -> bool {
        self.finder.is_none()
    }

    /// A tool's error with every secret cut out of its message, detail and envelope.
    pub fn error(&self, error: &mut ToolError) {
        if self.is_empty() {
            return;
        }
        self.text(&mut error.message);
        if let Some(detail) = &mut error.detail {
            self.text(detail);
        }
        if let Some(envelope) = &mut error.envelope {
            self.value(envelope.as_mut());
        }
    }

    /// Every string in `value` (and every key) with the secrets cut out.
    pub fn value(&self, value: &mut Value) {
        let Some(finder) = &self.finder else {
            return;
        };
        match value {
            Value::String(text) => cut(finder, text),
            Value::Array(items) => items.iter_mut().for_each(|item| self.value(item)),
            Value::Object(fields) => {
                if fields.keys().any(|key| finder.is_match(key)) {
                    let taken = std::mem::take(fields);
                    for (mut key, value) in taken {
                        cut(finder, &mut key);
                        fields.insert(key, value);
                    }
                }
                fields.values_mut().for_each(|field| self.value(field));
            }
            _ => {}
        }
    }

    /// `text` with the secrets cut out.
    pub fn text(&self, text: &mut String) {
        if let Some(finder) = &self.finder {
            cut(finder, text);
        }
    }
}

fn cut(finder: &AhoCorasick, text: &mut String) {
    if finder.is_match(text.as_str()) {
        *text = finder.replace_all(text, &vec![REDACTED; finder.patterns_len()]);
    }
}

/// The secrets under `value`, whose setting is named `name`.
fn collect(value: &toml::Value, name: Option<&str>, secrets: &mut Vec<String>) {
    match value {
        toml::Value::String(text) => {
            if name.is_some_and(is_secret_name) {
                secrets.push(text.clone());
            }
            secrets.extend(url_password(text));
        }
        toml::Value::Table(table) => {
            // HTTP basic: what is sent is `base64(user:password)`.
            let user = table.get("user").or_else(|| table.get("username"));
            if let (Some(toml::Value::String(user)), Some(toml::Value::String(password))) =
                (user, table.get("password"))
            {
                let pair = format!("{user}:{password}");
                secrets.push(base64::engine::general_purpose::STANDARD.encode(pair));
            }
            for (key, inner) in table {
                // `{ name = "X-Key", value = "…" }`: the value is the named setting's.
                let inner_name = match (key.as_str(), name) {
                    ("value", Some(outer)) => outer,
                    _ => key.as_str(),
                };
                collect(inner, Some(inner_name), secrets);
            }
        }
        // Lists hold names (`secret_arguments`), commands and scopes, not credentials.
        _ => {}
    }
}

fn is_secret_name(name: &str) -> bool {
    let name = name.to_ascii_lowercase();
    SECRET_NAMES.iter().any(|secret| name.contains(secret))
        && !NOT_SECRET_ENDINGS
            .iter()
            .any(|ending| name.ends_with(ending))
        && name != "secret_arguments"
}

/// The password of a URL that carries one (`postgres://user:password@host/db`), as written
/// and as sent (percent-decoded).
fn url_password(text: &str) -> Vec<String> {
    if !text.contains("://") || !text.contains('@') {
        return Vec::new();
    }
    let Some(password) = url::Url::parse(text)
        .ok()
        .and_then(|url| url.password().map(str::to_string))
    else {
        return Vec::new();
    };
    let decoded = percent_decoded(&password);
    let mut forms = vec![password];
    forms.extend(decoded);
    forms
}

fn percent_decoded(text: &str) -> Option<String> {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' && i + 2 < bytes.len() {
            let hex = std::str::from_utf8(&bytes[i + 1..i + 3]).ok()?;
            out.push(u8::from_str_radix(hex, 16).ok()?);
            i += 3;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    String::from_utf8(out).ok()
}

/// A secret and the forms it travels in: a credential header's value also without its scheme
/// (`Bearer abc` is sent, `abc` may come back alone).
fn forms(secret: &str) -> Vec<String> {
    let secret = secret.trim();
    let mut all = vec![secret.to_string()];
    if let Some((scheme, rest)) = secret.split_once(' ')
        && ["bearer", "basic", "token", "apikey"].contains(&scheme.to_ascii_lowercase().as_str())
    {
        all.push(rest.trim().to_string());
    }
    all
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn of(toml: &str) -> Redaction {
        let section: toml::Value = toml::from_str(toml).unwrap();
        Redaction::of_sections([&section])
    }

    #[test]
    fn the_secrets_a_section_holds_are_cut_wherever_they_come_back() {
        let redaction = of(r#"
            url = "postgres://app:s3cr%40t-pw@db.internal/shop"
            timeout = "10s"
            secret_arguments = ["password"]
            [headers]
            Authorization = "Bearer tok-123456"
            User-Agent = "concierge-agent"
            [auth]
            api_key = "key-abcdef"
            basic = { user = "svc", password = "hunter22" }
            [env]
            GITHUB_TOKEN = "ghp_0123456789"
            NODE_ENV = "production"
        "#);
        let mut answer = json!({
            "echo": "invalid credentials: Bearer tok-123456",
            "token": "tok-123456",
            "nested": [{"key": "key-abcdef", "tok-123456": 1}],
            "basic": "Basic c3ZjOmh1bnRlcjIy",
            "env": "ghp_0123456789 s3cr@t-pw",
            "kept": "production concierge-agent password",
        });
        redaction.value(&mut answer);
        assert_eq!(
            answer,
            json!({
                "echo": "invalid credentials: [redacted]",
                "token": "[redacted]",
                "nested": [{"key": "[redacted]", "[redacted]": 1}],
                "basic": "Basic [redacted]",
                "env": "[redacted] [redacted]",
                "kept": "production concierge-agent password",
            })
        );
    }

    #[test]
    fn an_errors_message_detail_and_envelope_are_cut_too() {
        let redaction = of(r#"api_key = "key-abcdef""#);
        let mut error = ToolError::rejected("upstream_refused", "401: bad key key-abcdef")
            .with_detail("sent key-abcdef")
            .with_envelope(json!({"error": {"message": "key-abcdef"}}));
        error.field = None;
        redaction.error(&mut error);
        assert_eq!(error.message, "401: bad key [redacted]");
        assert_eq!(error.detail.as_deref(), Some("sent [redacted]"));
        assert_eq!(error.envelope.unwrap()["error"]["message"], "[redacted]");
    }

    #[test]
    fn a_config_without_secrets_cuts_nothing() {
        let redaction = of(r#"base_url = "http://api.example""#);
        assert!(redaction.is_empty());
    }
}
