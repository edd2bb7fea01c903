//! What is merged into what: a detail page that belongs to a record (its `detail_of`, in its
//! language) is read as part of that record, and is no hit of its own. Decided from the
//! documents alone, without I/O, each time a run publishes.

use std::collections::{BTreeMap, HashSet};

use super::super::document::Document;
use super::super::feed::{DocKey, is_record_type};
use super::super::markdown::record_markdown;

/// Every document whose merge, body or public URL is not what `docs` make it now, as it should
/// be.
pub(super) fn changed(docs: &BTreeMap<DocKey, Document>) -> Vec<Document> {
    let mut details: BTreeMap<DocKey, Vec<DocKey>> = BTreeMap::new();
    for doc in docs.values() {
        if is_record_type(&doc.key.kind) {
            continue;
        }
        if let Some(target) = &doc.detail_of {
            let target = DocKey {
                kind: target.kind.clone(),
                uid: target.uid,
                language: doc.key.language.clone(),
            };
            if is_record_type(&target.kind) && docs.contains_key(&target) {
                details.entry(target).or_default().push(doc.key.clone());
            }
        }
    }
    let merged_pages: HashSet<&DocKey> = details.values().flatten().collect();
    let mut updates = Vec::new();
    for doc in docs.values() {
        let mut next = doc.clone();
        if is_record_type(&doc.key.kind) {
            let pages: Vec<&Document> = details
                .get(&doc.key)
                .into_iter()
                .flatten()
                .filter_map(|k| docs.get(k))
                .collect();
            let mut parts = Vec::new();
            if let Some(data) = &doc.data {
                parts.push(record_markdown(&doc.key.kind, data));
            }
            parts.extend(doc.page_markdown().map(str::to_string));
            parts.extend(
                pages
                    .iter()
                    .filter_map(|p| p.page_markdown())
                    .map(str::to_string),
            );
            parts.retain(|p| !p.is_empty());
            next.body_md = parts.join("\n\n");
            next.public_url = doc
                .url
                .clone()
                .or_else(|| pages.iter().find_map(|p| p.url.clone()));
            next.merged_into = None;
        } else {
            next.merged_into = merged_pages
                .contains(&doc.key)
                .then(|| doc.detail_of.clone())
                .flatten();
            next.body_md = doc.page_markdown().unwrap_or_default().to_string();
            next.public_url = doc.url.clone();
        }
        if next != *doc {
            updates.push(next);
        }
    }
    updates
}
