//! A TYPO3 page's HTML to the Markdown that is indexed and quoted to the model.

use concierge_trips::content::markdown::html_to_markdown;

pub fn run(data: &[u8]) {
    let html = String::from_utf8_lossy(data);
    let markdown = html_to_markdown(&html).to_ascii_lowercase();
    // Scripts are never content, and markup a page shows as text stays escaped (`\<script`):
    // no `<script` a Markdown renderer would read as a tag.
    let raw = markdown
        .match_indices("<script")
        .any(|(at, _)| !markdown[..at].ends_with('\\'));
    assert!(!raw, "a script tag survived: {markdown}");
}
