//! A TYPO3 page's HTML to the Markdown that is indexed and quoted to the model.

use concierge_trips::content::markdown::html_to_markdown;

pub fn run(data: &[u8]) {
    let html = String::from_utf8_lossy(data);
    let markdown = html_to_markdown(&html);
    // No markup from a page reaches the Markdown: every `<` stands behind an odd number of
    // backslashes (escaped), so no renderer reads a tag, a `<script` least of all. Code spans get
    // no exemption: which backticks pair up is where three earlier findings hid.
    let mut backslashes = 0usize;
    for c in markdown.chars() {
        assert!(
            c != '<' || backslashes % 2 == 1,
            "an unescaped `<` survived: {markdown}"
        );
        backslashes = if c == '\\' { backslashes + 1 } else { 0 };
    }
}
