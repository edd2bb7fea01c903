//! The content tools: `search_content` and `get_document`.

use std::sync::Arc;

use concierge_core::{Annotations, CallContext, ToolError, typed_tool};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::content::search::{ContentAnswer, ContentIndex};
use crate::content::store::ContentStore;

/// `get_document` answers at most this many characters of a body.
pub const DOCUMENT_CHARS: usize = 20_000;

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct SearchContent {
    /// What to look for, in German as on the websites, or the customer's question as asked:
    /// "Skipass inklusive Val Thorens", "Welche Hotels haben ein Hallenbad?", "Lawinenkurs".
    /// Question words do not count; inflections, compounds, umlauts, accents and case do not
    /// matter.
    #[schemars(length(min = 1, max = 200))]
    query: String,
}

#[derive(Serialize, JsonSchema)]
struct ContentResults {
    /// Best first; empty when nothing matches.
    results: Vec<ContentResult>,
    /// Words of the query no page holds in any form ("Kanada", "Whistler"): say that the site
    /// has nothing about them, and do not present the results as being about them.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    unmatched: Vec<String>,
    /// What to tell the customer beside the results: the query asked for nothing, a word found
    /// nothing, no page holds every word, or words of a long query were left out.
    #[serde(skip_serializing_if = "Option::is_none")]
    hint: Option<String>,
}

/// Which page an answer is about: the same four fields in a hit and in a whole document.
#[derive(Serialize, JsonSchema)]
struct PageName {
    /// The public page. Cite it; pass it to get_document for the whole text.
    url: String,
    title: String,
    /// product, hotel, city, region, country, concept, page or blog.
    #[serde(rename = "type")]
    kind: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    site: Option<String>,
}

#[derive(Serialize, JsonSchema)]
struct ContentResult {
    #[serde(flatten)]
    page: PageName,
    /// About 600 characters around the best match, Markdown.
    excerpt: String,
}

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct GetDocument {
    /// The `url` of a search_content hit.
    #[schemars(length(min = 1, max = 2000))]
    url: String,
}

#[derive(Serialize, JsonSchema)]
struct FullDocument {
    #[serde(flatten)]
    page: PageName,
    breadcrumb: Vec<String>,
    /// The page text as Markdown.
    markdown: String,
    /// True when `markdown` stops at 20,000 characters; `length` is the whole text's.
    truncated: bool,
    length: usize,
}

const SEARCH_CONTENT: &str = "Search the tour operator's website content (TYPO3: trip descriptions and FAQs, hotels, \
destinations, concepts, travel information pages, blog posts) for questions that are not about dates, prices or \
availability: what a trip is like, what a resort offers, how the bus journey works, insurance, equipment, packing. \
German full text; pass the customer's question as asked. Returns up to 8 hits with url, title, type, site and a ~600-character excerpt, and `unmatched`/`hint` when part of the question found nothing (say so; do not present the hits as being about it); get_document gives \
a hit's whole text. Editorial text is maintained by hand and can be outdated: on dates, prices, pickups and \
inclusions the structured fields of search_trips and get_trip override it. Cite each answer's url.";

const GET_DOCUMENT: &str = "The whole text (Markdown) of one search_content hit, by its url; truncated at 20,000 \
characters (truncated: true). On dates, prices, pickups and inclusions the structured fields of search_trips and \
get_trip override this text. Cite the url.";

pub fn content_tools(
    index: Arc<ContentIndex>,
    store: Arc<dyn ContentStore>,
) -> Vec<Arc<dyn concierge_core::Tool>> {
    let search = typed_tool(
        "search_content",
        SEARCH_CONTENT,
        Annotations::read_only(),
        move |input: SearchContent, _call: CallContext| search_content(index.clone(), input),
    );
    let get = typed_tool(
        "get_document",
        GET_DOCUMENT,
        Annotations::read_only(),
        move |input: GetDocument, _call: CallContext| get_document(store.clone(), input),
    );
    vec![search, get]
}

async fn search_content(
    index: Arc<ContentIndex>,
    input: SearchContent,
) -> Result<ContentResults, ToolError> {
    let answer = index
        .answer(&input.query)
        .await
        .map_err(|e| ToolError::internal("content_search_failed", e.to_string()))?;
    let hint = hint(&answer);
    let results = answer.hits.into_iter().map(|hit| ContentResult {
        page: PageName {
            url: hit.url,
            title: hit.title,
            kind: hit.kind,
            site: hit.site,
        },
        excerpt: hit.excerpt,
    });
    Ok(ContentResults {
        results: results.collect(),
        unmatched: answer.unmatched,
        hint,
    })
}

/// What the model should tell the customer beside the hits (in German, as the site speaks):
/// nothing asked, words nothing holds, a partial match, words left out of a long query.
fn hint(answer: &ContentAnswer) -> Option<String> {
    let said = if answer.nothing_asked && answer.hits.is_empty() {
        Some(
            "Die Anfrage enthält kein Suchwort (nur Fragewörter wie \"was\", \"welche\", \"gibt es\"). \
             Bitte nach dem Gesuchten fragen, z. B. \"Hallenbad\", \"Skipass Val Thorens\"."
                .to_string(),
        )
    } else if !answer.unmatched.is_empty() {
        Some(format!(
            "Zu {} gibt es auf der Website nichts{}.",
            answer.unmatched.join(" / "),
            if answer.hits.is_empty() {
                ""
            } else {
                "; die Treffer passen nur zu den übrigen Wörtern"
            }
        ))
    } else if answer.partial {
        Some(
            "Keine Seite enthält alle gesuchten Wörter; die Treffer enthalten die meisten davon. \
             Sagen Sie dem Kunden, was davon nicht passt."
                .to_string(),
        )
    } else {
        None
    };
    match (said, answer.left_out.is_empty()) {
        (said, true) => said,
        (said, false) => Some(format!(
            "{}Gesucht wurde nach den ersten {} Wörtern; nicht berücksichtigt: {}.",
            said.map(|h| h + " ").unwrap_or_default(),
            concierge_search::question::MAX_WORDS,
            answer.left_out.join(", ")
        )),
    }
}

async fn get_document(
    store: Arc<dyn ContentStore>,
    input: GetDocument,
) -> Result<FullDocument, ToolError> {
    let url = input.url.trim();
    let doc = store
        .by_url(url)
        .await
        .map_err(|e| ToolError::internal("content_store_failed", e.to_string()))?
        .filter(|d| d.is_searchable())
        .ok_or_else(|| {
            ToolError::not_found(format!(
                "No document has the url `{url}`. Pass the url of a search_content hit."
            ))
        })?;
    let length = doc.body_md.chars().count();
    let truncated = length > DOCUMENT_CHARS;
    let markdown = if truncated {
        doc.body_md.chars().take(DOCUMENT_CHARS).collect()
    } else {
        doc.body_md
    };
    Ok(FullDocument {
        page: PageName {
            url: doc.public_url.unwrap_or_default(),
            title: doc.title,
            kind: doc.key.kind,
            site: doc.site,
        },
        breadcrumb: doc.breadcrumb,
        markdown,
        truncated,
        length,
    })
}
