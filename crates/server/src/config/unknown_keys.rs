//! The unknown-key reporter: every misspelt key of a document at once, with what was meant.

use super::error::ConfigError;
use super::known_keys;

/// Deserializes a config, reporting every unknown key rather than the first only.
///
/// serde (`deny_unknown_fields` on every section type) stops at the first unknown key. So each
/// one it names is recorded, removed from the raw document, and the document read again, until
/// no unknown key is left; then the outcome of that last read is handed back with them. The
/// known keys are thereby always exactly the fields of the section types — no second list to
/// keep in step with the structs, nested sections (`auth`, `legacy_sse`, `[oauth.users]`)
/// included — and serde's message lists them, which is where "did you mean" comes from (for a
/// table with a part flattened in, serde lists none: then `T`'s JSON Schema does). A round is
/// one read of a document of a few kilobytes, and there are at most as many as keys.
pub(crate) fn deserialize_reporting_unknown_keys<
    T: serde::de::DeserializeOwned + schemars::JsonSchema,
>(
    mut value: toml::Value,
) -> (Vec<ConfigError>, Result<T, ConfigError>) {
    // Each round removes one unknown key, so the rounds end; the bound is a guard all the same.
    const ROUNDS: usize = 1000;
    let mut unknown = Vec::new();
    loop {
        let error = match serde_path_to_error::deserialize::<_, T>(value.clone()) {
            Ok(config) => return (unknown, Ok(config)),
            Err(error) => error,
        };
        // The toml deserializer appends "in `<path>`" lines: the path is reported on its own.
        let message = error.inner().to_string();
        let message = message.lines().next().unwrap_or_default().to_string();
        let mut segments: Vec<&serde_path_to_error::Segment> = error.path().iter().collect();
        if let Some((key, mut expected)) = unknown_field(&message)
            && unknown.len() < ROUNDS
        {
            // The path ends with the key itself, except inside an internally tagged enum (`auth`),
            // whose fields serde reads from a buffer the path cannot follow: there it ends with
            // the table holding the key.
            let names_key = |segment: &serde_path_to_error::Segment| matches!(segment, serde_path_to_error::Segment::Map { key: last } if *last == key);
            if segments.last().is_some_and(|last| names_key(last)) {
                segments.pop();
            }
            if expected.is_empty() {
                expected = known_keys::keys_at::<T>(&segments);
            }
            if let Some(table) = table_at(&mut value, &segments)
                && let Some(misspelt) = table.remove(&key)
            {
                let near = nearest(&key, &expected);
                // Read on as if corrected, so that a required key misspelt is not reported
                // again as missing, and what follows it is read too.
                if let Some(near) = near
                    && !table.contains_key(near)
                {
                    table.insert(near.to_string(), misspelt);
                }
                unknown.push(ConfigError::new(
                    path_text(&segments, &key),
                    unknown_key_message(near, &expected),
                ));
                continue;
            }
        }
        let mut at = error.path().to_string();
        if let Some(key) = key_at_fault::<T>(&value, &segments, &at, &message) {
            at = path_text(&segments, &key);
        }
        let message = match unknown_variant(&message) {
            Some((variant, expected)) => match nearest(&variant, &expected) {
                Some(near) => format!("{message}; did you mean `{near}`?"),
                None => message,
            },
            None => message,
        };
        let at = if at == "." { String::new() } else { at };
        return (unknown, Err(ConfigError::new(at, message)));
    }
}

/// The key a bad value sits at, when serde names only its table: a part flattened into the table
/// (`ToolPolicy`) is read from a buffer the path cannot follow. It is the one key without which
/// the document no longer fails that way there.
fn key_at_fault<T: serde::de::DeserializeOwned>(
    value: &toml::Value,
    path: &[&serde_path_to_error::Segment],
    at: &str,
    message: &str,
) -> Option<String> {
    if message.starts_with("missing field") {
        return None; // about the table itself
    }
    let keys: Vec<String> = table_at(&mut value.clone(), path)?
        .keys()
        .cloned()
        .collect();
    let mut blamed = keys.into_iter().filter(|key| {
        let mut without = value.clone();
        if let Some(table) = table_at(&mut without, path) {
            table.remove(key);
        }
        match serde_path_to_error::deserialize::<_, T>(without) {
            Ok(_) => true,
            Err(error) => {
                let said = error.inner().to_string();
                let said = said.lines().next().unwrap_or_default();
                // Not the same failure, and not only the key's own absence.
                (error.path().to_string() != at || said != message)
                    && !said.starts_with(&format!("missing field `{key}`"))
            }
        }
    });
    let key = blamed.next()?;
    blamed.next().is_none().then_some(key)
}

/// serde's "unknown field `x`, expected one of `a`, `b`" (or "expected `a` or `b`", "there are
/// no fields"): the key and the names it lists.
fn unknown_field(message: &str) -> Option<(String, Vec<String>)> {
    backticked_after(message, "unknown field `")
}

/// serde's "unknown variant `x`, expected one of `a`, `b`": the value and the names it lists.
fn unknown_variant(message: &str) -> Option<(String, Vec<String>)> {
    backticked_after(message, "unknown variant `")
}

fn backticked_after(message: &str, prefix: &str) -> Option<(String, Vec<String>)> {
    let rest = message.strip_prefix(prefix)?;
    let (name, rest) = rest.split_once('`')?;
    let expected = rest
        .split('`')
        .skip(1)
        .step_by(2)
        .map(str::to_string)
        .collect();
    Some((name.to_string(), expected))
}

fn unknown_key_message(near: Option<&str>, known: &[String]) -> String {
    match near {
        Some(near) => format!("unknown key; did you mean `{near}`?"),
        None if known.is_empty() => "unknown key; this table takes none".to_string(),
        None => format!(
            "unknown key; the keys here are {}",
            known
                .iter()
                .map(|k| format!("`{k}`"))
                .collect::<Vec<_>>()
                .join(", ")
        ),
    }
}

/// The known name closest to a misspelt one, when it is close enough to be what was meant: at
/// most a third of its letters differ (`idle_timout` → `idle_timeout`, `rate_limt` → `rate_limit`).
pub(super) fn nearest<'a>(name: &str, known: &'a [String]) -> Option<&'a str> {
    known
        .iter()
        .map(|candidate| (strsim::levenshtein(name, candidate), candidate))
        .filter(|(distance, candidate)| *distance * 3 <= candidate.chars().count().max(3))
        .min_by_key(|(distance, _)| *distance)
        .map(|(_, candidate)| candidate.as_str())
}

/// The table that `path` leads to in `value`, if it leads to one (else the error is reported as
/// serde gave it).
fn table_at<'a>(
    value: &'a mut toml::Value,
    path: &[&serde_path_to_error::Segment],
) -> Option<&'a mut toml::Table> {
    use serde_path_to_error::Segment;
    let mut current = value;
    for segment in path {
        let next = match segment {
            Segment::Seq { index } => current.get_mut(*index),
            Segment::Map { key } => current.get_mut(key.as_str()),
            // An externally tagged variant is a table key (`{ variant = { … } }`); an internally
            // tagged one is not a level of the document.
            Segment::Enum { variant } if current.get(variant.as_str()).is_none() => continue,
            Segment::Enum { variant } => current.get_mut(variant.as_str()),
            Segment::Unknown => None,
        };
        current = next?;
    }
    current.as_table_mut()
}

/// `endpoint[0].auth` + `defualt` → `endpoint[0].auth.defualt`, written as serde_path_to_error
/// writes paths.
fn path_text(path: &[&serde_path_to_error::Segment], key: &str) -> String {
    use serde_path_to_error::Segment;
    let mut text = String::new();
    for segment in path {
        if !text.is_empty() && !matches!(segment, Segment::Seq { .. }) {
            text.push('.');
        }
        text.push_str(&segment.to_string());
    }
    if !text.is_empty() {
        text.push('.');
    }
    text.push_str(key);
    text
}

/// Reads an app's or simulator's section into its own config type, naming the key at fault.
pub fn section<T: serde::de::DeserializeOwned + schemars::JsonSchema>(
    value: &toml::Value,
) -> Result<T, String> {
    // Every unknown key of the section at once, as for the platform's own sections.
    let (mut problems, read) = deserialize_reporting_unknown_keys::<T>(value.clone());
    match read {
        Ok(section) if problems.is_empty() => return Ok(section),
        Ok(_) => {}
        Err(error) => problems.push(error),
    }
    Err(problems
        .iter()
        .map(ToString::to_string)
        .collect::<Vec<_>>()
        .join("; "))
}
