//! The book's generated reference pages: every config key, read from the config's JSON Schema
//! (so from the doc comments of the types `check` reads a config into), and every command, read
//! from the command line's own definition. One source each: a key or a flag documented here is
//! documented where it is declared.
//!
//! The test below compares the committed pages with what the code says and fails on a
//! difference or on a key without a doc comment; `CONCIERGE_WRITE_REFERENCE=1 cargo test -p
//! concierge reference` writes them.

use std::fmt::Write as _;

use concierge_server::config::schema::INTERPOLATED;
use serde_json::Value;

/// The committed pages, from the repository's root.
pub const CONFIG_PAGE: &str = "docs/src/reference/config.md";
pub const CLI_PAGE: &str = "docs/src/reference/cli.md";
pub const SCHEMA_FILE: &str = "docs/src/reference/concierge.schema.json";

/// How deep sections nest (`[oauth.external]` is 2): a guard against a schema that refers to
/// itself, which the config types never do.
const MAX_DEPTH: usize = 6;

/// The configuration page, or the keys that have no description.
pub fn config_page(schema: &Value) -> Result<String, Vec<String>> {
    let mut page = Page {
        schema,
        text: String::new(),
        undocumented: Vec::new(),
    };
    page.text.push_str(CONFIG_INTRO);
    let properties = schema["properties"]
        .as_object()
        .cloned()
        .unwrap_or_default();
    for (key, value) in &properties {
        let value = page.resolve(value);
        match key.as_str() {
            "apps" => page.apps(&value),
            "simulators" => {
                for (name, section) in value["properties"].as_object().into_iter().flatten() {
                    let section = page.resolve(section);
                    page.section(&format!("[simulators.{name}]"), &section, 0);
                }
            }
            _ => page.top_level(key, &value),
        }
    }
    if page.undocumented.is_empty() {
        Ok(page.text)
    } else {
        Err(page.undocumented)
    }
}

const CONFIG_INTRO: &str = "# Configuration

<!-- Generated from the config types by `CONCIERGE_WRITE_REFERENCE=1 cargo test -p concierge reference`; do not edit. -->

Every key `concierge.toml` may hold, as `concierge check` reads it. The same types give the JSON
Schema `concierge config schema` prints (and [`concierge.schema.json`](concierge.schema.json)
beside this page): name it in a config's first line, `#:schema <path or URL>`, and an editor with
Taplo (\"Even Better TOML\" in VS Code) completes and checks keys as you type.

Any string value may take `${VAR}` (the variable, which must be set) or `${VAR:-default}` from the
environment; the demo's config reads its listen address as `\"${CONCIERGE_LISTEN:-127.0.0.1:8080}\"`.
A duration is written `500ms`, `30s`, `5m`, `1h` or `30d`. Relative paths are relative to the
config file's folder. A key marked *required* has no default.
";

struct Page<'a> {
    schema: &'a Value,
    text: String,
    undocumented: Vec<String>,
}

impl Page<'_> {
    /// The definition a `$ref` names (one level; definitions never refer to one another
    /// directly).
    fn resolve(&self, value: &Value) -> Value {
        let mut value = value.clone();
        for _ in 0..MAX_DEPTH {
            // Draft 7 ignores keys beside `$ref`, so a field's description and default stand
            // beside `allOf: [{ "$ref" }]`.
            if let Some([only]) = value
                .get("allOf")
                .and_then(Value::as_array)
                .map(Vec::as_slice)
            {
                let only = only.clone();
                if let Some(object) = value.as_object_mut() {
                    object.remove("allOf");
                    for (key, inner) in only.as_object().into_iter().flatten() {
                        object.entry(key.clone()).or_insert(inner.clone());
                    }
                }
            }
            let Some(reference) = value.get("$ref").and_then(Value::as_str) else {
                break;
            };
            let name = reference.trim_start_matches("#/definitions/");
            let mut target = self.schema["definitions"][name].clone();
            // What stands beside the reference (the field's description, default, environment
            // variable) wins over the type's.
            if let (Some(beside), Some(object)) = (value.as_object(), target.as_object_mut()) {
                for (key, inner) in beside {
                    if key != "$ref" {
                        object.insert(key.clone(), inner.clone());
                    }
                }
            }
            value = target;
        }
        value
    }

    /// `Option<T>` is `T` or null: the `T`.
    fn unwrap_optional(&self, value: &Value) -> Value {
        let value = self.resolve(value);
        if let Some(options) = value.get("anyOf").and_then(Value::as_array) {
            let kept: Vec<&Value> = options
                .iter()
                .filter(|option| option.get("type") != Some(&Value::from("null")))
                .collect();
            if kept.len() == 1 && options.len() == 2 {
                let mut inner = self.resolve(kept[0]);
                if let (Some(object), Some(description)) =
                    (inner.as_object_mut(), value.get("description"))
                {
                    object.insert("description".into(), description.clone());
                }
                if let (Some(object), Some(default)) = (inner.as_object_mut(), value.get("default"))
                {
                    object.insert("default".into(), default.clone());
                }
                return inner;
            }
        }
        value
    }

    fn top_level(&mut self, key: &str, value: &Value) {
        let value = self.unwrap_optional(value);
        if is_section(&value) {
            self.section(&format!("[{key}]"), &value, 0);
        } else if let Some(item) = map_of(&value) {
            let item = self.unwrap_optional(&item);
            self.heading(2, &format!("[{key}.<name>]"));
            self.description(&value);
            if is_section(&item) {
                self.table(&format!("{key}.<name>"), &item, 0);
            } else {
                self.text.push_str(&format!(
                    "Each entry: {}.\n\n",
                    type_of(self, &item).replace('|', "or")
                ));
                let description = description_of(&item);
                if !description.is_empty() {
                    self.text.push_str(&format!("{description}\n\n"));
                }
            }
        } else if value["type"] == "array" {
            let item = self.unwrap_optional(&value["items"]);
            self.section(&format!("[[{key}]]"), &item, 0);
        }
    }

    /// `[apps.<name>]`: what every instance has, then each kind's keys.
    fn apps(&mut self, value: &Value) {
        self.heading(2, "[apps.<name>]");
        self.description(value);
        self.text.push_str(
            "An instance is named by its section (a lower-case letter, then lower-case letters, \
             digits, `_` or `-`); `kind` names the code that serves it, and is the section's name \
             when absent (`[apps.coffee]` is the coffee app). The other keys are the kind's:\n\n",
        );
        let definitions = self.schema["definitions"]
            .as_object()
            .cloned()
            .unwrap_or_default();
        let kinds: Vec<(&String, &Value)> = definitions
            .iter()
            .filter(|(name, _)| name.starts_with("app."))
            .collect();
        for (name, _) in &kinds {
            let kind = name.trim_start_matches("app.");
            let _ = writeln!(self.text, "- [`kind = \"{kind}\"`](#appsname-kind--{kind})");
        }
        self.text.push('\n');
        for (name, definition) in kinds {
            let kind = name.trim_start_matches("app.");
            let mut definition = definition.clone();
            if let Some(properties) = definition
                .get_mut("properties")
                .and_then(Value::as_object_mut)
            {
                properties.remove("kind");
            }
            self.section(&format!("[apps.<name>] kind = \"{kind}\""), &definition, 0);
        }
    }

    /// A section's heading, its description, and its keys; then its nested sections.
    fn section(&mut self, title: &str, value: &Value, depth: usize) {
        self.heading(3.min(2 + depth), title);
        // `[oauth.external]` → `oauth.external`; `[apps.<name>] kind = "sql"` → `apps.<name>`.
        let path = title.split(']').next().unwrap_or_default();
        let path = path.trim_start_matches('[');
        self.description(value);
        self.table(path, value, depth);
    }

    fn heading(&mut self, level: usize, title: &str) {
        let _ = writeln!(self.text, "\n{} `{title}`\n", "#".repeat(level));
    }

    fn description(&mut self, value: &Value) {
        let description = description_of(value);
        if !description.is_empty() {
            self.text.push_str(&description);
            self.text.push_str("\n\n");
        }
    }

    /// A table of the keys that are values, then a section per key that is a table of its own.
    fn table(&mut self, path: &str, value: &Value, depth: usize) {
        let properties = value["properties"].as_object().cloned().unwrap_or_default();
        let required: Vec<&str> = value["required"]
            .as_array()
            .map(|r| r.iter().filter_map(Value::as_str).collect())
            .unwrap_or_default();
        let mut nested: Vec<(String, Value)> = Vec::new();
        let mut rows = String::new();
        for (key, field) in &properties {
            let field_path = format!("{path}.{key}");
            let resolved = self.unwrap_optional(field);
            if description_of(&resolved).is_empty() && description_of(field).is_empty() {
                self.undocumented.push(field_path.clone());
            }
            if depth < MAX_DEPTH && (is_section(&resolved) || is_tagged(&resolved)) {
                nested.push((key.clone(), resolved));
                continue;
            }
            let default = match (
                resolved.get("default").or(field.get("default")),
                required.contains(&key.as_str()),
            ) {
                (_, true) => "*required*".to_string(),
                (Some(Value::Null), _) => "unset".to_string(),
                (Some(default), _) => format!("`{}`", toml_value(default)),
                (None, false) => String::new(),
            };
            let env = resolved
                .get("x-env")
                .or(field.get("x-env"))
                .and_then(Value::as_str)
                .map(|name| format!("`{name}`"))
                .unwrap_or_default();
            let meaning = one_line(&description_of(&resolved));
            let _ = writeln!(
                rows,
                "| `{key}` | {} | {default} | {env} | {meaning} |",
                type_of(self, &resolved)
            );
        }
        if !rows.is_empty() {
            self.text.push_str(
                "| key | type | default | environment | meaning |\n|---|---|---|---|---|\n",
            );
            self.text.push_str(&rows);
        }
        for (key, field) in nested {
            if is_tagged(&field) {
                self.tagged(&format!("{path}.{key}"), &field, depth + 1);
            } else {
                self.section(&format!("[{path}.{key}]"), &field, depth + 1);
            }
        }
    }

    /// A table whose keys depend on its `kind` (`auth = { kind = "tokens", … }`).
    fn tagged(&mut self, path: &str, value: &Value, depth: usize) {
        self.heading(3, &format!("{path} = {{ kind = … }}"));
        self.description(value);
        for variant in value["oneOf"].as_array().cloned().unwrap_or_default() {
            let variant = self.resolve(&variant);
            let kind = variant["properties"]["kind"]
                .get("const")
                .or_else(|| variant["properties"]["kind"]["enum"].get(0))
                .and_then(Value::as_str)
                .unwrap_or("?")
                .to_string();
            let _ = writeln!(
                self.text,
                "**`kind = \"{kind}\"`**: {}\n",
                one_line(&description_of(&variant))
            );
            let mut fields = variant.clone();
            if let Some(properties) = fields.get_mut("properties").and_then(Value::as_object_mut) {
                properties.remove("kind");
                if properties.is_empty() {
                    continue;
                }
            }
            if let Some(required) = fields.get_mut("required").and_then(Value::as_array_mut) {
                required.retain(|r| r != "kind");
            }
            self.table(path, &fields, depth);
            self.text.push('\n');
        }
    }
}

/// A struct: an object with named keys.
fn is_section(value: &Value) -> bool {
    value
        .get("properties")
        .is_some_and(|p| p.as_object().is_some_and(|p| !p.is_empty()))
        && value.get("oneOf").is_none()
}

/// An internally tagged enum: one object per variant, told apart by `kind`.
fn is_tagged(value: &Value) -> bool {
    value["oneOf"].as_array().is_some_and(|variants| {
        !variants.is_empty() && variants.iter().all(|v| v["properties"]["kind"].is_object())
    })
}

/// A table of named entries (`BTreeMap<String, T>`): `T`'s schema.
fn map_of(value: &Value) -> Option<Value> {
    match value.get("additionalProperties") {
        Some(item @ Value::Object(_)) if value.get("properties").is_none() => Some(item.clone()),
        _ => None,
    }
}

fn description_of(value: &Value) -> String {
    value
        .get("description")
        .and_then(Value::as_str)
        .unwrap_or_default()
        .trim()
        .to_string()
}

/// A doc comment's paragraphs on one table row.
fn one_line(text: &str) -> String {
    text.split('\n')
        .map(str::trim)
        .collect::<Vec<_>>()
        .join(" ")
        .replace("  ", " ")
        .replace('|', "\\|")
}

fn type_of(page: &Page, value: &Value) -> String {
    if let Some(written) = value.get("x-type").and_then(Value::as_str) {
        return written.into();
    }
    if let Some(constant) = value.get("const") {
        return format!("`{}`", toml_value(constant));
    }
    if let Some(choices) = value.get("enum").and_then(Value::as_array) {
        return choices
            .iter()
            .map(|c| format!("`{}`", toml_value(c)))
            .collect::<Vec<_>>()
            .join(" \\| ");
    }
    for combinator in ["anyOf", "oneOf"] {
        if let Some(options) = value.get(combinator).and_then(Value::as_array) {
            let mut names: Vec<String> = Vec::new();
            for option in options {
                // Any choice may also be `${VAR}`, as the page's introduction says.
                if option
                    .get("$ref")
                    .and_then(Value::as_str)
                    .is_some_and(|r| r.ends_with(INTERPOLATED))
                {
                    continue;
                }
                let option = page.resolve(option);
                if option.get("type") == Some(&Value::from("null")) {
                    continue;
                }
                let name = type_of(page, &option);
                if !names.contains(&name) {
                    names.push(name);
                }
            }
            return names.join(" or ");
        }
    }
    if value.get("properties").is_some() {
        return "table".into();
    }
    let kind = match value.get("type") {
        Some(Value::String(kind)) => kind.clone(),
        Some(Value::Array(kinds)) => kinds
            .iter()
            .filter_map(Value::as_str)
            .filter(|k| *k != "null")
            .collect::<Vec<_>>()
            .join(" or "),
        _ => String::new(),
    };
    match kind.as_str() {
        "array" => {
            let item = page.resolve(&value["items"]);
            format!("array of {}", type_of(page, &item))
        }
        "object" => match map_of(value) {
            Some(item) => format!("table of {}", type_of(page, &page.resolve(&item))),
            None => "table".into(),
        },
        "" => "any".into(),
        other => other.into(),
    }
}

/// A default as TOML writes it.
fn toml_value(value: &Value) -> String {
    match value {
        Value::String(text) => format!("{text:?}"),
        Value::Array(items) => format!(
            "[{}]",
            items.iter().map(toml_value).collect::<Vec<_>>().join(", ")
        ),
        Value::Object(map) if map.is_empty() => "{}".into(),
        Value::Object(map) => format!(
            "{{ {} }}",
            map.iter()
                .map(|(k, v)| format!("{k} = {}", toml_value(v)))
                .collect::<Vec<_>>()
                .join(", ")
        ),
        Value::Null => "none".into(),
        other => other.to_string(),
    }
}

/// The command line page: each command's `--help`, as the binary prints it.
pub fn cli_page(mut command: clap::Command) -> String {
    command.build();
    let mut text = String::from(
        "# Command line\n\n<!-- Generated from the command line's definition by \
         `CONCIERGE_WRITE_REFERENCE=1 cargo test -p concierge reference`; do not edit. -->\n\n\
         Every command of `concierge`, as `concierge <command> --help` prints it. `--config PATH` \
         (default `concierge.toml`) may stand before or after the command.\n",
    );
    let mut stack: Vec<(String, clap::Command)> = vec![(String::new(), command)];
    let mut sections: Vec<(String, String)> = Vec::new();
    while let Some((prefix, mut command)) = stack.pop() {
        let name = if prefix.is_empty() {
            command.get_name().to_string()
        } else {
            format!("{prefix} {}", command.get_name())
        };
        let help = command
            .render_long_help()
            .to_string()
            .lines()
            .map(str::trim_end)
            .collect::<Vec<_>>()
            .join("\n");
        sections.push((name.clone(), help));
        let children: Vec<clap::Command> = command
            .get_subcommands()
            .filter(|c| c.get_name() != "help")
            .cloned()
            .collect();
        for child in children.into_iter().rev() {
            stack.push((name.clone(), child));
        }
    }
    for (name, help) in sections {
        let _ = write!(text, "\n## `{name}`\n\n```text\n{}\n```\n", help.trim_end());
    }
    text
}
