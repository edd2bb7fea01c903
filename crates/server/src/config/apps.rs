//! `[apps.<name>]`: one app instance. The section's name names the instance (what an endpoint's
//! `tools = ["<name>.<tool>"]` starts with); its `kind` names the code that serves it, and is
//! the section's name when absent, so `[apps.coffee]` is still the coffee app while two
//! databases are `[apps.shop] kind = "sql"` and `[apps.stock] kind = "sql"`.

use super::{Config, ConfigError};

/// The key that names an instance's kind; the rest of the section is the kind's own settings.
pub const KIND: &str = "kind";

/// An instance name is what a tool reference starts with, up to its dot, and a label in logs
/// and metrics: a lower-case letter, then lower-case letters, digits, `_` or `-`.
pub fn is_instance_name(name: &str) -> bool {
    let mut chars = name.chars();
    chars.next().is_some_and(|c| c.is_ascii_lowercase())
        && name.len() <= 64
        && chars.all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_' || c == '-')
}

impl Config {
    /// The kind of instance `name`: its section's `kind`, else the name itself (also for a
    /// name with no section: `tools = ["coffee.*"]` alone means the coffee app with defaults).
    pub fn app_kind<'a>(&'a self, name: &'a str) -> Result<&'a str, ConfigError> {
        match self.apps.get(name).and_then(|section| section.get(KIND)) {
            None => Ok(name),
            Some(toml::Value::String(kind)) => Ok(kind),
            Some(other) => Err(ConfigError::new(
                format!("apps.{name}.{KIND}"),
                format!(
                    "must be a string naming the app's kind, not {}",
                    other.type_str()
                ),
            )),
        }
    }

    /// The settings instance `name`'s kind is built from: its section without `kind` (an empty
    /// table when it has no section).
    pub fn app_settings(&self, name: &str) -> toml::Value {
        let mut settings = match self.apps.get(name) {
            Some(toml::Value::Table(table)) => table.clone(),
            _ => toml::Table::new(),
        };
        settings.remove(KIND);
        toml::Value::Table(settings)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn config(apps: &str) -> Config {
        let text = format!("[server]\nlisten = \"127.0.0.1:0\"\n{apps}");
        toml::from_str(&text).expect("a config")
    }

    #[test]
    fn the_kind_is_the_sections_name_unless_it_says_otherwise() {
        let config = config(
            "[apps.coffee]\nmenu = \"m.xlsx\"\n[apps.shop]\nkind = \"sql\"\nurl = \"x.db\"\n",
        );
        assert_eq!(config.app_kind("coffee").unwrap(), "coffee");
        assert_eq!(config.app_kind("shop").unwrap(), "sql");
        assert_eq!(config.app_kind("mappy").unwrap(), "mappy");
        assert_eq!(
            config.app_settings("shop"),
            toml::Value::Table(toml::toml! { url = "x.db" })
        );
        assert_eq!(
            config.app_settings("mappy"),
            toml::Value::Table(toml::Table::new())
        );
    }

    #[test]
    fn a_kind_that_is_not_a_string_is_named() {
        let config = config("[apps.shop]\nkind = 3\n");
        let error = config.app_kind("shop").unwrap_err();
        assert!(error.to_string().contains("apps.shop.kind"), "{error}");
    }

    #[test]
    fn instance_names_are_plain() {
        for good in ["coffee", "shop_2", "eu-stock"] {
            assert!(is_instance_name(good), "{good}");
        }
        for bad in ["", "Shop", "2shop", "a.b", "a b", &"a".repeat(65)] {
            assert!(!is_instance_name(bad), "{bad}");
        }
    }
}
