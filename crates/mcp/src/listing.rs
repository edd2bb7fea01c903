//! What of an upstream tool's listing is published: its texts within bounds. A description or
//! title is the stranger's text put before every model that lists the tools — a long one costs
//! each of them its tokens on every list, and can crowd out everything else — so it is cut at a
//! character boundary with an ellipsis; `concierge check --live` and the log say which were cut.

use rmcp::model::Tool as Listed;

use crate::settings::ToolOverride;

/// The longest description published, in bytes (the ellipsis included).
pub const MAX_DESCRIPTION_BYTES: usize = 4096;
/// The longest title published, in characters (the ellipsis included).
pub const MAX_TITLE_CHARS: usize = 200;

const ELLIPSIS: char = '…';

/// The upstream's description as published.
pub fn description(listing: &Listed) -> Option<String> {
    let text = listing.description.as_deref()?;
    Some(within_bytes(text, MAX_DESCRIPTION_BYTES))
}

/// The upstream's title (or its annotations' title) as published.
pub fn title(listing: &Listed) -> Option<String> {
    let text = listing
        .title
        .as_deref()
        .or_else(|| listing.annotations.as_ref()?.title.as_deref())?;
    Some(within_chars(text, MAX_TITLE_CHARS))
}

/// What was cut of `name`'s texts, said for the operator; a text the config overrides is the
/// config's, never cut.
pub fn cut(name: &str, listing: &Listed, edit: Option<&ToolOverride>) -> Vec<String> {
    let mut said = Vec::new();
    if edit.is_none_or(|e| e.policy.description.is_none())
        && let Some(text) = listing.description.as_deref()
        && text.len() > MAX_DESCRIPTION_BYTES
    {
        said.push(format!(
            "tool `{name}`: the MCP server's description is {} bytes; published cut to \
             {MAX_DESCRIPTION_BYTES} (set `override.{name}.description` to write one)",
            text.len()
        ));
    }
    if edit.is_none_or(|e| e.policy.title.is_none())
        && let Some(text) = listing
            .title
            .as_deref()
            .or_else(|| listing.annotations.as_ref()?.title.as_deref())
        && text.chars().count() > MAX_TITLE_CHARS
    {
        said.push(format!(
            "tool `{name}`: the MCP server's title is {} characters; published cut to \
             {MAX_TITLE_CHARS} (set `override.{name}.title` to write one)",
            text.chars().count()
        ));
    }
    said
}

/// `text` within `max` bytes: cut at a character boundary, an ellipsis added.
fn within_bytes(text: &str, max: usize) -> String {
    if text.len() <= max {
        return text.to_string();
    }
    let mut end = max - ELLIPSIS.len_utf8();
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    let mut cut = text[..end].to_string();
    cut.push(ELLIPSIS);
    cut
}

/// `text` within `max` characters, an ellipsis added when cut.
fn within_chars(text: &str, max: usize) -> String {
    match text.char_indices().nth(max) {
        None => text.to_string(),
        Some(_) => {
            let mut cut: String = text.chars().take(max - 1).collect();
            cut.push(ELLIPSIS);
            cut
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_long_text_is_cut_at_a_character_boundary_with_an_ellipsis() {
        assert_eq!(within_bytes("short", 10), "short");
        let cyrillic = "Латте".repeat(1000);
        let cut = within_bytes(&cyrillic, MAX_DESCRIPTION_BYTES);
        assert!(cut.len() <= MAX_DESCRIPTION_BYTES, "{}", cut.len());
        assert!(cut.ends_with('…'));
        assert!(cyrillic.starts_with(cut.trim_end_matches('…')));
        assert_eq!(within_chars(&"я".repeat(200), 200), "я".repeat(200));
        let title = within_chars(&"я".repeat(201), 200);
        assert_eq!(title.chars().count(), 200);
        assert!(title.ends_with('…'));
    }
}
