//! HTML → Markdown (`HtmlToMarkdownConverter` in the seed), and the Markdown of a record's
//! structured payload.

use htmd::element_handler::Handlers;
use htmd::{Element, HtmlToMarkdown};
use serde_json::Value;

/// Site chrome that is not the page's content.
const CHROME: [&str; 14] = [
    "head", "title", "script", "style", "noscript", "template", "nav", "header", "footer", "aside",
    "form", "iframe", "svg", "button",
];

/// The text of a page as Markdown: chrome and cookie/consent banners dropped, blank runs
/// collapsed. An empty string means the page had no text.
pub fn html_to_markdown(html: &str) -> String {
    let markdown = CONVERTER.with(|converter| converter.convert(html).unwrap_or_default());
    escape_stray_markup(&tidy(&markdown))
}

thread_local! {
    /// Built once per thread: building it took longer than converting a typical record's
    /// description, and the catalog converts every hotel's and product's at each start.
    static CONVERTER: HtmlToMarkdown = converter();
}

fn converter() -> HtmlToMarkdown {
    HtmlToMarkdown::builder()
        .skip_tags(CHROME.to_vec())
        .add_handler(vec!["a"], |handlers: &dyn Handlers, element: Element| {
            if is_plain_reference(&element) {
                handlers.fallback(element)
            } else {
                // The link's text without the link.
                Some(handlers.walk_children(element.node))
            }
        })
        .add_handler(vec!["img"], |handlers: &dyn Handlers, element: Element| {
            if is_plain_reference(&element) {
                handlers.fallback(element)
            } else {
                None
            }
        })
        .add_handler(vec!["pre"], |handlers: &dyn Handlers, element: Element| {
            // Preformatted text as plain text with its line breaks: the converter writes a
            // `<pre>` without `<code>` unfenced and unescaped.
            let text = handlers.walk_children(element.node).content;
            let text = text.trim_matches('\n');
            (!text.trim().is_empty()).then(|| format!("\n\n{text}\n\n").into())
        })
        .add_handler(vec!["code"], |handlers: &dyn Handlers, element: Element| {
            let code = handlers.walk_children(element.node).content;
            let code = code.split_whitespace().collect::<Vec<_>>().join(" ");
            (!code.is_empty()).then(|| code_span(&code).into())
        })
        .add_handler(
            vec!["div", "section"],
            |handlers: &dyn Handlers, element: Element| {
                if is_banner(&element) {
                    None
                } else {
                    handlers.fallback(element)
                }
            },
        )
        .build()
}

/// Whether a link or image can be written as Markdown as it is: every attribute the converter
/// copies into the Markdown (`href` and `src` as the target, `title` and `alt` as text) holds no
/// markup, and the target is a plain URL.
fn is_plain_reference(element: &Element) -> bool {
    element.attrs.iter().all(|attr| match &*attr.name.local {
        "href" | "src" => is_plain_url(&attr.value),
        "title" | "alt" => !attr.value.contains(['<', '>']),
        _ => true,
    })
}

/// Whether a link target can stand in Markdown as it is: a relative path, or an http(s),
/// mailto or tel URL, with nothing a renderer could read as markup. Anything else (found by the
/// `html_markdown` fuzz target: `href="mailo <script>…"` came out as a link holding a script
/// tag) keeps its text and loses the link.
fn is_plain_url(url: &str) -> bool {
    let url = url.trim();
    if url
        .chars()
        .any(|c| c.is_whitespace() || c.is_control() || matches!(c, '<' | '>' | '"' | '`'))
    {
        return false;
    }
    let scheme_end = url.find([':', '/', '?', '#']);
    match scheme_end {
        Some(at) if url[at..].starts_with(':') => {
            matches!(
                url[..at].to_ascii_lowercase().as_str(),
                "http" | "https" | "mailto" | "tel"
            )
        }
        _ => true,
    }
}

/// `markdown` with every `<` escaped that a renderer could read as the start of a tag.
///
/// The converter escapes the `<` of a page's text, but each of its other paths had its own way to
/// let one through, each found by the `html_markdown` fuzz target: a link target, an unclosed
/// code span across a blank line, a `<pre>` without `<code>`, a backtick joining a span's fence.
/// This last pass makes "no markup from a page" hold by construction, whatever path the text took:
/// a `<` behind an odd number of backslashes is escaped already; any other gets one more. Inside a
/// code span the backslash shows (`` `\<b>` ``); travel pages hold little code, and the model still
/// reads it.
fn escape_stray_markup(markdown: &str) -> String {
    let mut out = String::with_capacity(markdown.len() + markdown.len() / 64);
    let mut backslashes = 0usize;
    for c in markdown.chars() {
        if c == '<' && backslashes.is_multiple_of(2) {
            out.push('\\');
        }
        backslashes = if c == '\\' { backslashes + 1 } else { 0 };
        out.push(c);
    }
    out
}

/// `code` as one inline code span on one line. The converter's own spans keep the code's line
/// breaks, and a span cut by a blank line is no span: its backticks become text and what was
/// code — `<script>` included, found by the `html_markdown` fuzz target — markup. Pages of a
/// travel site hold little code; a one-line span loses nothing a reader needs.
fn code_span(code: &str) -> String {
    let longest_run = code.split(|c| c != '`').map(str::len).max().unwrap_or(0);
    let fence = "`".repeat(longest_run + 1);
    // A space inside the fence when the code starts or ends with a backtick (CommonMark strips it).
    let pad = if code.starts_with('`') || code.ends_with('`') {
        " "
    } else {
        ""
    };
    // A space outside too: a backtick just before or after would join the fence and unclose it.
    format!(" {fence}{pad}{code}{pad}{fence} ")
}

fn is_banner(element: &Element) -> bool {
    element.attrs.iter().any(|attr| {
        let name: &str = &attr.name.local;
        let value = attr.value.to_ascii_lowercase();
        matches!(name, "class" | "id") && (value.contains("cookie") || value.contains("consent"))
    })
}

/// Trims lines and keeps at most one blank line between blocks.
fn tidy(markdown: &str) -> String {
    let mut out = String::with_capacity(markdown.len());
    let mut blank = false;
    for line in markdown.lines().map(str::trim_end) {
        if line.trim().is_empty() {
            blank = !out.is_empty();
            continue;
        }
        if blank {
            out.push_str("\n\n");
        } else if !out.is_empty() {
            out.push('\n');
        }
        blank = false;
        out.push_str(line);
    }
    out
}

/// The searchable text of a record: what a reader of the site would see of it.
pub fn record_markdown(kind: &str, data: &Value) -> String {
    let text = |key: &str| data.get(key).and_then(Value::as_str).unwrap_or_default();
    let mut parts: Vec<String> = Vec::new();
    let teaser = text("teaser");
    if !teaser.is_empty() {
        parts.push(format!("**{}**", teaser.trim()));
    }
    let description = html_to_markdown(text("description"));
    if !description.is_empty() {
        parts.push(description);
    }
    if kind == "hotel"
        && let Some(facts) = data.get("facts").and_then(Value::as_object)
    {
        let lines: Vec<String> = facts
            .iter()
            .filter_map(|(key, value)| fact_line(key, value))
            .collect();
        if !lines.is_empty() {
            parts.push(format!("## Ausstattung\n\n{}", lines.join("\n")));
        }
    }
    parts.extend(faq_markdown(data));
    parts.join("\n\n")
}

/// A record's FAQs as a Markdown section ("## Häufige Fragen"), when it has any.
pub fn faq_markdown(data: &Value) -> Option<String> {
    let faqs = data.get("faqs").and_then(Value::as_array)?;
    if faqs.is_empty() {
        return None;
    }
    let mut section = String::from("## Häufige Fragen");
    for faq in faqs {
        let question = faq.get("question").and_then(Value::as_str).unwrap_or("");
        let answer = html_to_markdown(faq.get("answer").and_then(Value::as_str).unwrap_or(""));
        section.push_str(&format!("\n\n### {}\n\n{answer}", question.trim()));
    }
    Some(section)
}

fn fact_line(key: &str, value: &Value) -> Option<String> {
    let label = match key {
        "beds" => "Betten",
        "altitudeM" => "Höhe (m)",
        "distanceLiftM" => "Entfernung zum Lift (m)",
        "distanceSlopeM" => "Entfernung zur Piste (m)",
        "distanceCentreM" => "Entfernung zum Zentrum (m)",
        "sauna" => "Sauna",
        "wifi" => "WLAN",
        "pool" => "Schwimmbad",
        "parking" => "Parkplatz",
        other => other,
    };
    let value = match value {
        Value::Bool(true) => "ja".to_string(),
        Value::Bool(false) => "nein".to_string(),
        Value::Number(n) => n.to_string(),
        Value::String(s) if !s.is_empty() => s.clone(),
        _ => return None,
    };
    Some(format!("- {label}: {value}"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// Fuzz regression (`html_markdown`): a link whose target holds markup loses the link.
    #[test]
    fn links_keep_plain_targets_only() {
        let markdown = html_to_markdown(
            r#"<p><a href="mailo <script>alert(3)</x">Mail</a> <a href="javascript:alert(1)">JS</a>
               <a href="/impressum/">Impressum</a> <a href="mailto:service@ser.de">service@ser.de</a>
               <img src="x onerror=<script>" alt="Bild">
               <img src="/ok.png" href="/x <script s0c=>"><a href="/a" title="<script>">Titel</a></p>"#,
        );
        assert!(!markdown.to_lowercase().contains("<script"), "{markdown}");
        assert!(!markdown.contains("javascript:"), "{markdown}");
        assert!(
            markdown.contains("Mail") && markdown.contains("JS"),
            "{markdown}"
        );
        assert!(markdown.contains("[Impressum](/impressum/)"), "{markdown}");
        assert!(markdown.contains("(mailto:service@ser.de)"), "{markdown}");
        // A page's text that shows markup stays text: escaped for the Markdown renderer.
        let text = html_to_markdown("<p>Tipp: &lt;script&gt;alert(1)&lt;/script&gt;</p>");
        assert_eq!(text, r"Tipp: \<script>alert(1)\</script>");
    }

    /// Every `<` in `markdown` escaped (behind an odd number of backslashes).
    fn assert_no_markup(markdown: &str) {
        let mut backslashes = 0usize;
        for c in markdown.chars() {
            assert!(
                c != '<' || backslashes % 2 == 1,
                "unescaped `<`: {markdown}"
            );
            backslashes = if c == '\\' { backslashes + 1 } else { 0 };
        }
    }

    #[test]
    fn code_is_one_closed_span_whatever_it_holds() {
        // Found by the html_markdown fuzz target: an unclosed <code> across a blank line.
        let html =
            "<p>a <code>x\n\n</p><p>&lt;script&gt;alert(1)</code> b</p><p><code>`tick`</code></p>";
        let markdown = html_to_markdown(html);
        // The parser closes the code at the paragraph's end and reopens it in the next one.
        assert!(
            markdown.starts_with("a `x`\n\n `\\<script>alert(1)` b"),
            "{markdown}"
        );
        assert!(markdown.contains("`` `tick` ``"), "{markdown}");
        let crash = include_bytes!(
            "../../../../fuzz/corpus/html_markdown/crash-d2446c6c9c6865e0be3a54823822428565c83797"
        );
        assert_no_markup(&html_to_markdown(&String::from_utf8_lossy(crash)));
    }

    #[test]
    fn no_path_through_the_converter_carries_markup() {
        for html in [
            // A backtick right after a code span joined its closing fence (fuzz finding).
            "<p><code>a</code>`&lt;script&gt;`</p>",
            // An escaped backslash right before a tag's `<`.
            "<p>\\<b>x</b>&lt;script&gt;</p><p>\\\\&lt;script&gt;</p>",
            "<pre>\\&lt;script&gt;</pre><pre><code>&lt;script&gt;</code></pre>",
            "<p>`x` &lt;a href=x&gt; <code>``&lt;i&gt;</code></p>",
        ] {
            assert_no_markup(&html_to_markdown(html));
        }
    }

    #[test]
    fn preformatted_text_never_carries_markup() {
        let markdown = html_to_markdown("<p>a</p><pre>x\n<b>y</b> &lt;script&gt;alert(1)</pre>");
        assert!(markdown.contains("x\n"), "{markdown}");
        assert!(markdown.contains("\\<script>"), "{markdown}");
        assert_no_markup(&markdown);
    }

    #[test]
    fn chrome_and_banners_are_dropped() {
        let html = r#"<html><head><title>x</title><script>var a=1;</script></head><body>
            <header><nav><a href="/">Start</a> <a href="/reisen/">Reisen</a></nav></header>
            <div class="cookie-banner">Wir verwenden Cookies. <button>OK</button></div>
            <main><h1>Anreise mit dem Bus</h1><p>Der Bus hält in <strong>Zürich</strong>.</p>
            <ul><li>München</li><li>Stuttgart</li></ul></main>
            <footer>Impressum · Datenschutz</footer></body></html>"#;
        let md = html_to_markdown(html);
        assert!(md.starts_with("# Anreise mit dem Bus"), "{md}");
        assert!(md.contains("**Zürich**"));
        assert!(md.contains("München"));
        for chrome in ["Cookies", "Impressum", "Reisen", "var a"] {
            assert!(!md.contains(chrome), "{chrome} in {md}");
        }
    }

    #[test]
    fn a_page_of_chrome_only_has_no_text() {
        let html = "<html><body><header><nav>Menü</nav></header><script>x()</script>\
                    <footer>Impressum</footer></body></html>";
        assert_eq!(html_to_markdown(html), "");
    }

    #[test]
    fn records_read_as_the_site_shows_them() {
        let md = record_markdown(
            "hotel",
            &json!({"title": "Sportclub Lederer", "description": "<p>Direkt an der Piste.</p>",
                    "facts": {"beds": 64, "sauna": true, "wifi": false}}),
        );
        assert_eq!(
            md,
            "Direkt an der Piste.\n\n## Ausstattung\n\n- Betten: 64\n- Sauna: ja\n- WLAN: nein"
        );
        let md = record_markdown(
            "product",
            &json!({"teaser": "Eine Woche Schnee.", "faqs": [{"question": "Skipass?", "answer": "<p>Inklusive.</p>"}]}),
        );
        assert_eq!(
            md,
            "**Eine Woche Schnee.**\n\n## Häufige Fragen\n\n### Skipass?\n\nInklusive."
        );
    }
}
