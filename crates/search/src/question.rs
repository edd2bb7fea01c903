//! What a customer's question asks for, as the ranked search reads it: the words that carry
//! meaning (question words and filler never decide what matches), each in every form a document
//! may hold it in (umlauts folded both ways, its German stem, the synonyms a business named),
//! and the kinds of document a type word asks for ("Hotels" → hotels).
//!
//! The trip catalog keeps reading queries with [`crate::analyzer::query_terms`]; this reading is
//! the content search's alone.

use std::collections::HashMap;
use std::sync::LazyLock;

use rust_stemmers::{Algorithm, Stemmer};

use crate::analyzer::{QueryTerm, fold, is_stopword, tokens};

static GERMAN: LazyLock<Stemmer> = LazyLock::new(|| Stemmer::create(Algorithm::German));

/// The German (Snowball) stem of a folded word, when it differs from the word: "hotels" →
/// `hotel`, "skigebiete" → `skigebiet`. Words under four letters (HP, DZ, Ski) are their own
/// stem. `plain` is the umlaut-dropped folding, which is what the stemmer's rules expect of
/// umlauts.
pub fn stem(plain: &str) -> Option<String> {
    if plain.chars().nth(3).is_none() || plain.chars().any(|c| c.is_ascii_digit()) {
        return None;
    }
    // A site repeats its words thousands of times over: each thread stems a word once (the
    // memo starts over past a bound, so it never grows without end).
    STEMS.with_borrow_mut(|memo| {
        if let Some(known) = memo.get(plain) {
            return known.clone();
        }
        if memo.len() >= MAX_MEMO {
            memo.clear();
        }
        let stemmed = GERMAN.stem(plain);
        let stem = (stemmed.len() >= 3 && stemmed != plain).then(|| stemmed.into_owned());
        memo.insert(plain.to_string(), stem.clone());
        stem
    })
}

const MAX_MEMO: usize = 200_000;

thread_local! {
    static STEMS: std::cell::RefCell<HashMap<String, Option<String>>> =
        std::cell::RefCell::new(HashMap::new());
}

/// The form a word is known by in a [`Lexicon`]: its stem, else its plain folding.
fn key(word: &str) -> String {
    let (term, alternative) = fold(word);
    let plain = alternative.unwrap_or(term);
    stem(&plain).unwrap_or(plain)
}

/// Words of a question that ask how, whether or which, not what: dropped from what must match
/// beside the stopwords (folded, sorted). Negations are absent on purpose, as in the stopwords.
const QUESTION_WORDS: &[&str] = &[
    "bekomme",
    "bekommt",
    "bitte",
    "brauche",
    "brauchen",
    "darf",
    "dort",
    "duerfen",
    "eigentlich",
    "funktionieren",
    "funktioniert",
    "gibt",
    "gibts",
    "gut",
    "gute",
    "guten",
    "kannst",
    "klappt",
    "koennt",
    "komme",
    "kommt",
    "lange",
    "liegt",
    "moechte",
    "moechten",
    "muessen",
    "passiert",
    "sagen",
    "viele",
    "wann",
    "warum",
    "wer",
    "weshalb",
    "wieso",
    "wieviel",
    "wieviele",
];

/// Articles, prepositions and possessives: what stands before a noun that is the setting of a
/// question rather than its subject (folded, sorted).
const DETERMINERS: &[&str] = &[
    "am", "beim", "dem", "den", "der", "des", "die", "ein", "eine", "einem", "einen", "einer",
    "eines", "fuer", "im", "in", "ins", "mein", "meine", "meinem", "meinen", "meiner", "mit",
    "unser", "unsere", "unserem", "unseren", "unserer", "vom", "zum", "zur",
];

fn is_determiner(folded: &str) -> bool {
    DETERMINERS.binary_search(&folded).is_ok()
}

fn is_question_word(folded: &str) -> bool {
    QUESTION_WORDS.binary_search(&folded).is_ok()
}

/// A business's own words: synonyms ("einpacken" ↔ "Packliste", "Gepäck") and the type words
/// that name a kind of document ("Hotel", "Unterkunft" → `hotel`). Words are matched by their
/// stem, so "Hotels" is "Hotel".
#[derive(Debug, Clone, Default)]
pub struct Lexicon {
    /// A word's key → the forms of every other word of its groups.
    synonyms: HashMap<String, Vec<Vec<String>>>,
    /// A word's key → the kinds it asks for.
    kinds: HashMap<String, Vec<String>>,
}

impl Lexicon {
    /// Adds one group of words that mean the same to a customer; each one-word entry reaches
    /// the others. An entry of several words is refused (the caller reports it).
    pub fn synonyms<S: AsRef<str>>(mut self, group: &[S]) -> Result<Self, String> {
        let mut words = Vec::new();
        for entry in group {
            let entry = entry.as_ref();
            let parts = tokens(entry);
            if parts.len() != 1 {
                return Err(format!("`{entry}` is not one word"));
            }
            words.push((key(entry), forms_of(entry)));
        }
        for (key, _) in &words {
            let others = words
                .iter()
                .filter(|(other, _)| other != key)
                .map(|(_, forms)| forms.clone());
            self.synonyms.entry(key.clone()).or_default().extend(others);
        }
        Ok(self)
    }

    /// `words` ask for documents of `kind`.
    pub fn kind_words<S: AsRef<str>>(mut self, kind: &str, words: &[S]) -> Self {
        for word in words {
            let kinds = self.kinds.entry(key(word.as_ref())).or_default();
            if !kinds.iter().any(|k| k == kind) {
                kinds.push(kind.to_string());
            }
        }
        self
    }
}

/// Every form of one word a document may hold: its foldings, then its stem.
fn forms_of(word: &str) -> Vec<String> {
    let (term, alternative) = fold(word);
    let plain = alternative.clone().unwrap_or_else(|| term.clone());
    let mut forms = vec![term];
    forms.extend(alternative);
    forms.extend(stem(&plain));
    forms.dedup();
    forms
}

/// One word of the question that carries meaning.
#[derive(Debug, Clone)]
pub struct ContentWord {
    /// As the customer typed it, for "nothing about …".
    pub typed: String,
    /// Its foldings, matched whole or as a prefix (as the catalog's terms are).
    pub term: QueryTerm,
    /// Its stem, matched whole.
    pub stem: Option<String>,
    /// The forms of its synonyms (each group's words), matched as a prefix.
    pub synonyms: Vec<Vec<String>>,
    /// The kinds of document it names, when it is a type word.
    pub kinds: Vec<String>,
    /// A type word that names the question's setting ("im Hotel"): it need not match.
    pub context: bool,
}

/// A question as the ranked search reads it.
#[derive(Debug, Clone, Default)]
pub struct Question {
    /// The words that decide what matches, in the order asked.
    pub words: Vec<ContentWord>,
    /// Words that were there but carry no meaning (question words, stopwords): a question of
    /// only those asks for nothing.
    pub function_words: Vec<String>,
    /// The whole question as a title would say it ([`title_key`]).
    pub title: String,
    /// Content words past the first [`MAX_WORDS`], not searched for.
    pub left_out: Vec<String>,
}

/// The content words a question is searched for.
pub const MAX_WORDS: usize = 8;

/// A title (or a whole question) as the two are compared: its words folded, joined by one
/// space ("Über uns" → `ueber uns`).
pub fn title_key(text: &str) -> String {
    let words: Vec<String> = tokens(text).into_iter().map(|t| t.term).collect();
    words.join(" ")
}

impl Question {
    /// Reads `query` with `lexicon`'s words.
    pub fn read(query: &str, lexicon: &Lexicon) -> Self {
        let mut question = Self {
            title: title_key(query),
            ..Self::default()
        };
        let mut seen = std::collections::HashSet::new();
        let mut previous: Option<String> = None;
        for token in tokens(query) {
            let typed = query[token.start..token.end].to_string();
            let after = previous.replace(token.term.clone());
            if is_stopword(&token.term) || is_question_word(&token.term) {
                question.function_words.push(token.term);
                continue;
            }
            if !seen.insert(token.term.clone()) {
                continue;
            }
            if question.words.len() == MAX_WORDS {
                // A question is a few words; a wall of them would make every search (and each
                // step of the partial fallback) as long. The rest are said to be left out.
                question.left_out.push(typed);
                continue;
            }
            let setting = after.as_deref().is_some_and(is_determiner);
            let plain = token.alternative.clone().unwrap_or(token.term.clone());
            let stem = stem(&plain);
            let key = stem.clone().unwrap_or(plain);
            question.words.push(ContentWord {
                typed,
                term: QueryTerm {
                    forms: std::iter::once(token.term)
                        .chain(token.alternative)
                        .collect(),
                },
                stem,
                synonyms: lexicon.synonyms.get(&key).cloned().unwrap_or_default(),
                // "im Hotel", "meine Reise": a type word after an article or a preposition
                // names the setting of the question, not what it asks for.
                kinds: if setting {
                    Vec::new()
                } else {
                    lexicon.kinds.get(&key).cloned().unwrap_or_default()
                },
                context: setting && lexicon.kinds.contains_key(&key),
            });
        }
        question
    }

    /// The kinds the question's type words ask for.
    pub fn kinds(&self) -> Vec<String> {
        let mut kinds: Vec<String> = Vec::new();
        for kind in self.words.iter().flat_map(|w| &w.kinds) {
            if !kinds.contains(kind) {
                kinds.push(kind.clone());
            }
        }
        kinds
    }

    /// Every term an excerpt should look for.
    pub fn excerpt_terms(&self) -> Vec<QueryTerm> {
        let mut terms = Vec::new();
        for word in &self.words {
            terms.push(word.term.clone());
            terms.extend(word.stem.iter().map(|s| QueryTerm {
                forms: vec![s.clone()],
            }));
            terms.extend(word.synonyms.iter().map(|forms| QueryTerm {
                forms: forms.clone(),
            }));
        }
        terms
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lexicon() -> Lexicon {
        Lexicon::default()
            .synonyms(&["einpacken", "Packliste", "Gepäck"])
            .unwrap()
            .kind_words("hotel", &["Hotel", "Unterkunft"])
    }

    fn words(query: &str) -> Vec<String> {
        Question::read(query, &lexicon())
            .words
            .into_iter()
            .map(|w| w.term.forms[0].clone())
            .collect()
    }

    #[test]
    fn word_lists_are_sorted_so_binary_search_works() {
        assert!(QUESTION_WORDS.windows(2).all(|w| w[0] < w[1]));
        assert!(DETERMINERS.windows(2).all(|w| w[0] < w[1]));
    }

    #[test]
    fn a_type_word_after_an_article_is_the_setting_not_the_subject() {
        let question = Question::read("Sind Hunde im Hotel erlaubt?", &lexicon());
        assert!(question.kinds().is_empty());
        assert!(question.words.iter().any(|w| w.context));
        let question = Question::read("Hotel mit Hallenbad", &lexicon());
        assert_eq!(question.kinds(), ["hotel"]);
    }

    #[test]
    fn questions_keep_only_their_content_words() {
        assert_eq!(
            words("Welche Hotels haben ein Hallenbad?"),
            ["hotels", "hallenbad"]
        );
        assert_eq!(
            words("Gibt es Ermäßigungen für Kinder?"),
            ["ermaessigungen", "kinder"]
        );
        assert!(words("Was ist das?").is_empty());
        assert_eq!(words("ohne Skipass"), ["ohne", "skipass"]);
    }

    #[test]
    fn a_wall_of_words_is_searched_for_its_first_eight() {
        let question = Question::read(
            "Hallenbad Sauna Gletscher Zermatt Obergurgl Lawine Kinder Ostern Gepäck Storno",
            &lexicon(),
        );
        assert_eq!(question.words.len(), MAX_WORDS);
        assert_eq!(question.left_out, ["Gepäck", "Storno"]);
    }

    #[test]
    fn stems_join_inflections() {
        assert_eq!(stem("hotels").as_deref(), Some("hotel"));
        assert_eq!(stem("skigebiete").as_deref(), Some("skigebiet"));
        assert_eq!(stem("hp"), None);
        assert_eq!(stem("hotel"), None);
    }

    #[test]
    fn type_words_and_synonyms_are_found_by_their_stem() {
        let question = Question::read("Welche Hotels haben ein Hallenbad?", &lexicon());
        assert_eq!(question.kinds(), ["hotel"]);
        let question = Question::read("Was muss ich einpacken?", &lexicon());
        let synonyms = &question.words[0].synonyms;
        assert!(synonyms.iter().any(|forms| forms[0] == "packliste"));
        assert!(synonyms.iter().any(|forms| forms[0] == "gepaeck"));
    }

    #[test]
    fn a_synonym_of_several_words_is_refused() {
        assert!(
            Lexicon::default()
                .synonyms(&["HP", "halbe Pension"])
                .is_err()
        );
    }
}
