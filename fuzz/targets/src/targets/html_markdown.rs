//! A TYPO3 page's HTML to the Markdown that is indexed and quoted to the model.

use concierge_trips::content::markdown::html_to_markdown;

pub fn run(data: &[u8]) {
    let html = String::from_utf8_lossy(data);
    let markdown = html_to_markdown(&html).to_ascii_lowercase();
    // Scripts are never content, and markup a page shows as text stays escaped (`\<script`) or
    // inside a closed code span: no `<script` a Markdown renderer would read as a tag.
    for line in markdown.lines() {
        let text = outside_code_spans(line);
        let raw = text
            .match_indices("<script")
            .any(|(at, _)| !text[..at].ends_with('\\'));
        assert!(!raw, "a script tag survived: {markdown}");
    }
}

/// `line` with every closed inline code span blanked (CommonMark: a run of n backticks opens a
/// span that the next run of exactly n closes; an unclosed run is text).
fn outside_code_spans(line: &str) -> String {
    let bytes = line.as_bytes();
    let mut out = String::with_capacity(line.len());
    let mut at = 0;
    while at < bytes.len() {
        if bytes[at] != b'`' {
            let next = line[at..].find('`').map_or(line.len(), |i| at + i);
            out.push_str(&line[at..next]);
            at = next;
            continue;
        }
        let run = bytes[at..].iter().take_while(|&&b| b == b'`').count();
        let fence = &line[at..at + run];
        // The closing run: exactly `run` backticks, not part of a longer run.
        let mut search = at + run;
        let mut close = None;
        while let Some(i) = line[search..].find(fence) {
            let start = search + i;
            let len = bytes[start..].iter().take_while(|&&b| b == b'`').count();
            if len == run {
                close = Some(start);
                break;
            }
            search = start + len;
        }
        match close {
            Some(end) => at = end + run,
            None => {
                out.push_str(fence);
                at += run;
            }
        }
    }
    out
}
