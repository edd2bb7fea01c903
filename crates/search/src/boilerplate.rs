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
    /// On an FAQ page (`faq`) its questions are its own, however many pages repeat them.
    pub fn outline(&self, body: &str, faq: bool) -> String {
        outline_lines(body, |heading| {
            (faq && is_question(heading)) || !self.recurring.contains(&hash(heading))
        })
    }

    /// `body` without its recurring sentences, and those sentences. On an FAQ page (`faq`) a
    /// question heading and the paragraph answering it are the page's own, however many pages
    /// repeat them (the page's other shared sentences are still boilerplate).
    pub fn split(&self, body: &str, faq: bool) -> (String, String) {
        if self.recurring.is_empty() {
            return (body.to_string(), String::new());
        }
        let mut own = String::with_capacity(body.len());
        let mut repeated = String::new();
        let mut answering = false;
        for paragraph in body.split("\n\n") {
            let line = paragraph.trim();
            let heading = line.starts_with('#');
            let question = faq && heading && is_question(line);
            let answer = faq && answering && !heading;
            answering = question;
            for sentence in sentences(paragraph) {
                let into = if !(question || answer) && self.recurring.contains(&hash(sentence)) {
                    &mut repeated
                } else {
                    &mut own
                };
                into.push_str(sentence);
                into.push('\n');
            }
        }
        (own, repeated)
    }
}

/// A heading that asks ("### Was passiert bei Schneemangel?").
fn is_question(heading: &str) -> bool {
    heading.trim_end().ends_with('?')
}

fn outline_lines(body: &str, keep_heading: impl Fn(&str) -> bool) -> String {
    let mut out = String::new();
    for line in body.lines().map(str::trim) {
        let heading = line.starts_with('#');
        let item = line.starts_with("- ") || line.starts_with("* ");
        let text = line.trim_start_matches(['#', '-', '*', ' ']);
        // A heading recurs as written, `#`s and all (as `Boilerplate::of` counted it).
        if item || (heading && keep_heading(line)) {
            out.push_str(text);
            out.push('\n');
        }
    }
    out
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
        let (own, repeated) = boilerplate.split(&bodies[0], false);
        assert!(!own.contains("Hallenbad") && repeated.contains("Hallenbad"));
        assert!(own.contains("Stornierung"));
        assert!(
            boilerplate
                .split(&bodies[30], false)
                .0
                .contains("Hallenbad")
        );
    }

    #[test]
    fn a_small_collection_keeps_its_shared_sentences() {
        let bodies = [
            "Ein Satz, der in beiden Texten steht.",
            "Ein Satz, der in beiden Texten steht.",
        ];
        let boilerplate = Boilerplate::of(bodies.iter().copied());
        assert_eq!(boilerplate.split(bodies[0], false).0.trim(), bodies[0]);
    }

    #[test]
    fn an_faq_page_keeps_its_questions_and_answers_and_drops_the_rest() {
        let block = "### Was passiert bei Schneemangel?\n\nBei Schneemangel weichen wir auf Gletscher aus, so gut es geht.";
        let filler = "Der Skiverleih vor Ort kostet für eine Woche ab 120 Euro pro Person.";
        let mut bodies: Vec<String> = (0..30)
            .map(|i| format!("# Seite {i}\n\n{block}\n\n{filler}"))
            .collect();
        bodies.push(format!("# Häufige Fragen\n\n{block}\n\n{filler}"));
        let boilerplate = Boilerplate::of(bodies.iter().map(String::as_str));
        let (own, repeated) = boilerplate.split(&bodies[0], false);
        assert!(!own.contains("Schneemangel") && repeated.contains("Schneemangel"));
        let (own, repeated) = boilerplate.split(&bodies[30], true);
        assert!(own.contains("Was passiert bei Schneemangel?"), "{own}");
        assert!(own.contains("weichen wir auf Gletscher aus"), "{own}");
        assert!(
            repeated.contains("Skiverleih") && !own.contains("Skiverleih"),
            "{own}"
        );
        assert!(
            boilerplate
                .outline(&bodies[30], true)
                .contains("Schneemangel")
        );
        assert!(
            !boilerplate
                .outline(&bodies[0], false)
                .contains("Schneemangel")
        );
    }
}
