//! Boilerplate: sentences a site repeats across many documents ("Alle Preise verstehen sich pro
//! Person …"). A word in one of them says nothing about the document it stands in, so the ranked
//! search matches each document without them (the excerpt still shows the text whole).

use std::collections::{HashMap, HashSet};
use std::hash::{DefaultHasher, Hash, Hasher};

/// A sentence shorter than this is a phrase ("Mehr Infos"), not boilerplate worth the bookkeeping.
const MIN_SENTENCE: usize = 25;
/// A sentence is boilerplate when this share of the documents holds it …
const SHARE: usize = 100; // one in a hundred
/// … and at least this many: in a small collection, a shared sentence is still content.
const MIN_DOCUMENTS: usize = 20;

/// The sentences (by hash) that recur in a collection.
pub(crate) struct Boilerplate {
    recurring: HashSet<u64>,
}

impl Boilerplate {
    /// Counts in how many of `bodies` each sentence stands.
    pub fn of<'a>(bodies: impl Iterator<Item = &'a str>) -> Self {
        let mut counts: HashMap<u64, u32> = HashMap::new();
        let mut documents = 0usize;
        for body in bodies {
            documents += 1;
            let mut seen = HashSet::new();
            for sentence in sentences(body) {
                let hash = hash(sentence);
                if seen.insert(hash) {
                    *counts.entry(hash).or_default() += 1;
                }
            }
        }
        let threshold = (documents / SHARE).max(MIN_DOCUMENTS) as u32;
        Self {
            recurring: counts
                .into_iter()
                .filter(|(_, count)| *count >= threshold)
                .map(|(hash, _)| hash)
                .collect(),
        }
    }

    /// The lines of `body` that say what it holds: its headings (but those many documents
    /// share, "## Ausstattung") and its list items (an amenity list's "- Hallenbad" is a fact of
    /// this document, however many others have one too).
    pub fn outline(&self, body: &str) -> String {
        let mut out = String::new();
        for line in body.lines().map(str::trim) {
            let heading = line.starts_with('#');
            let item = line.starts_with("- ") || line.starts_with("* ");
            let text = line.trim_start_matches(['#', '-', '*', ' ']);
            if item || (heading && !self.recurring.contains(&hash(text))) {
                out.push_str(text);
                out.push('\n');
            }
        }
        out
    }

    /// `body` without its recurring sentences, and those sentences.
    pub fn split(&self, body: &str) -> (String, String) {
        if self.recurring.is_empty() {
            return (body.to_string(), String::new());
        }
        let mut own = String::with_capacity(body.len());
        let mut repeated = String::new();
        for sentence in sentences(body) {
            let into = if self.recurring.contains(&hash(sentence)) {
                &mut repeated
            } else {
                &mut own
            };
            into.push_str(sentence);
            into.push('\n');
        }
        (own, repeated)
    }
}

/// A body's sentences: cut after `.`, `!`, `?` and at line breaks, trimmed; short ones included
/// (only [`Boilerplate::of`] skips them).
fn sentences(body: &str) -> impl Iterator<Item = &str> {
    body.split_inclusive(['.', '!', '?', '\n'])
        .map(str::trim)
        .filter(|s| !s.is_empty())
}

fn hash(sentence: &str) -> u64 {
    if sentence.len() < MIN_SENTENCE {
        // Never recurring: a hash no counted sentence has (counted ones are at least this long).
        return 0;
    }
    let mut hasher = DefaultHasher::new();
    sentence.hash(&mut hasher);
    hasher.finish() | 1
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_sentence_in_many_documents_is_stripped_others_stay() {
        let shared = "Im Hotel gibt es auf Wunsch auch ein Hallenbad für alle Gäste.";
        let mut bodies: Vec<String> = (0..30)
            .map(|i| format!("Seite {i} über Stornierung. {shared} Kurz."))
            .collect();
        bodies.push("Das Hotel Alpenrose hat ein Hallenbad und eine Sauna.".to_string());
        let boilerplate = Boilerplate::of(bodies.iter().map(String::as_str));
        let (own, repeated) = boilerplate.split(&bodies[0]);
        assert!(!own.contains("Hallenbad") && repeated.contains("Hallenbad"));
        assert!(own.contains("Stornierung"));
        assert!(boilerplate.split(&bodies[30]).0.contains("Hallenbad"));
    }

    #[test]
    fn a_small_collection_keeps_its_shared_sentences() {
        let bodies = [
            "Ein Satz, der in beiden Texten steht.",
            "Ein Satz, der in beiden Texten steht.",
        ];
        let boilerplate = Boilerplate::of(bodies.iter().copied());
        assert_eq!(boilerplate.split(bodies[0]).0.trim(), bodies[0]);
    }
}
