//! A TYPO3 page's HTML to the Markdown that is indexed and quoted to the model.
#![no_main]

use concierge_trips::content::markdown::html_to_markdown;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let html = String::from_utf8_lossy(data);
    let markdown = html_to_markdown(&html);
    // Scripts and styles are never content.
    assert!(
        !markdown.to_ascii_lowercase().contains("<script"),
        "a script tag survived: {markdown}"
    );
});
