//! The German analyzer: how text becomes terms, the same way for documents and queries.
//!
//! What it gets right that a stock engine (the seed's MariaDB full text) does not:
//! - **Umlauts fold both ways.** "Österreich" is indexed as `oesterreich` *and* `osterreich`,
//!   so the ASCII spellings "Oesterreich" and "Osterreich" both find it; a query typed with the
//!   umlaut asks for both forms too. `ß` is `ss`; other accents are dropped ("Chavière" →
//!   `chaviere`).
//! - **Short tokens are kept**: hotel abbreviations (HP, VP, DZ, EZ) are terms like any other.
//! - **Negations are not stopwords**: "ohne Skipass" searches for `ohne` and `skipass`.
//! - **Elisions are not prefixes**: the "d" of "Val d'Isère" is a one-letter token, which a query
//!   matches exactly, never as a match-everything prefix.

use unicode_normalization::UnicodeNormalization;
use unicode_normalization::char::is_combining_mark;

/// A word of a text: its folded form, the second folding when it had an umlaut, and where it
/// stands in the original text (byte offsets), for excerpts.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Token {
    pub term: String,
    /// The umlaut-dropped form (`osterreich` for "Österreich"), when it differs from `term`.
    pub alternative: Option<String>,
    pub start: usize,
    pub end: usize,
}

/// Splits on anything that is not a letter or digit and folds each word.
pub fn tokens(text: &str) -> Vec<Token> {
    let mut out = Vec::new();
    let mut start = None;
    for (index, c) in text.char_indices() {
        if c.is_alphanumeric() {
            start.get_or_insert(index);
        } else if let Some(from) = start.take() {
            out.push(token(text, from, index));
        }
    }
    if let Some(from) = start {
        out.push(token(text, from, text.len()));
    }
    out
}

fn token(text: &str, start: usize, end: usize) -> Token {
    let (term, alternative) = fold(&text[start..end]);
    Token {
        term,
        alternative,
        start,
        end,
    }
}

/// Lower-cases and folds one word: `(umlauts as ae/oe/ue, umlauts as a/o/u)`; the second only
/// when it differs.
pub fn fold(word: &str) -> (String, Option<String>) {
    let mut expanded = String::with_capacity(word.len() + 2);
    let mut dropped = String::with_capacity(word.len());
    let mut had_umlaut = false;
    for c in word.chars().flat_map(char::to_lowercase) {
        let (long, short) = match c {
            'ä' => ("ae", "a"),
            'ö' => ("oe", "o"),
            'ü' => ("ue", "u"),
            'ß' => ("ss", "ss"),
            'æ' => ("ae", "ae"),
            'œ' => ("oe", "oe"),
            'ø' => ("o", "o"),
            _ => {
                for plain in c.nfd().filter(|m| !is_combining_mark(*m)) {
                    expanded.push(plain);
                    dropped.push(plain);
                }
                continue;
            }
        };
        had_umlaut |= long != short;
        expanded.push_str(long);
        dropped.push_str(short);
    }
    let alternative = (had_umlaut && dropped != expanded).then_some(dropped);
    (expanded, alternative)
}

/// One word of a query, in every form a document may hold it in.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct QueryTerm {
    pub forms: Vec<String>,
}

impl QueryTerm {
    /// One-letter words ("d" of "d'Isère") are matched whole: as a prefix they match everything.
    pub fn is_prefix(&self) -> bool {
        self.forms[0].chars().nth(1).is_some()
    }

    /// Whether a document token matches this term as the search does.
    pub fn matches(&self, token: &Token) -> bool {
        // Asked once: the trip catalog calls this for every word of every name per query.
        let prefix = self.is_prefix();
        let candidates = std::iter::once(&token.term).chain(token.alternative.as_ref());
        candidates.into_iter().any(|t| {
            self.forms.iter().any(|form| {
                if prefix {
                    t.starts_with(form.as_str())
                } else {
                    t == form
                }
            })
        })
    }
}

/// The terms of a query: folded, German stopwords dropped (negations kept), duplicates removed.
/// A query of nothing but stopwords keeps them, so "über uns" still finds the page.
pub fn query_terms(query: &str) -> Vec<QueryTerm> {
    let all: Vec<QueryTerm> = tokens(query)
        .into_iter()
        .map(|t| QueryTerm {
            forms: std::iter::once(t.term).chain(t.alternative).collect(),
        })
        .collect();
    let mut kept: Vec<QueryTerm> = all
        .iter()
        .filter(|t| !is_stopword(&t.forms[0]))
        .cloned()
        .collect();
    if kept.is_empty() {
        kept = all;
    }
    let mut seen = std::collections::HashSet::new();
    kept.retain(|t| seen.insert(t.forms[0].clone()));
    kept
}

/// German function words that carry no meaning in a search. Folded forms (`fuer`, `ueber`).
/// Negations (nicht, nichts, kein…, ohne) are deliberately absent: "ohne Skipass" is not
/// "Skipass".
pub fn is_stopword(folded: &str) -> bool {
    GERMAN_STOPWORDS.binary_search(&folded).is_ok()
}

/// Snowball's German list, folded and sorted, minus the negations.
const GERMAN_STOPWORDS: &[&str] = &[
    "aber",
    "alle",
    "allem",
    "allen",
    "aller",
    "alles",
    "als",
    "also",
    "am",
    "an",
    "ander",
    "andere",
    "anderem",
    "anderen",
    "anderer",
    "anderes",
    "anderm",
    "andern",
    "anders",
    "auch",
    "auf",
    "aus",
    "bei",
    "bin",
    "bis",
    "bist",
    "da",
    "damit",
    "dann",
    "das",
    "dass",
    "dasselbe",
    "dazu",
    "dein",
    "deine",
    "deinem",
    "deinen",
    "deiner",
    "deines",
    "dem",
    "demselben",
    "den",
    "denn",
    "denselben",
    "der",
    "derer",
    "derselbe",
    "derselben",
    "des",
    "desselben",
    "dessen",
    "dich",
    "die",
    "dies",
    "diese",
    "dieselbe",
    "dieselben",
    "diesem",
    "diesen",
    "dieser",
    "dieses",
    "dir",
    "doch",
    "dort",
    "du",
    "durch",
    "ein",
    "eine",
    "einem",
    "einen",
    "einer",
    "eines",
    "einig",
    "einige",
    "einigem",
    "einigen",
    "einiger",
    "einiges",
    "einmal",
    "er",
    "es",
    "etwas",
    "euch",
    "euer",
    "eure",
    "eurem",
    "euren",
    "eurer",
    "eures",
    "fuer",
    "gegen",
    "gewesen",
    "hab",
    "habe",
    "haben",
    "hat",
    "hatte",
    "hatten",
    "hier",
    "hin",
    "hinter",
    "ich",
    "ihm",
    "ihn",
    "ihnen",
    "ihr",
    "ihre",
    "ihrem",
    "ihren",
    "ihrer",
    "ihres",
    "im",
    "in",
    "indem",
    "ins",
    "ist",
    "jede",
    "jedem",
    "jeden",
    "jeder",
    "jedes",
    "jene",
    "jenem",
    "jenen",
    "jener",
    "jenes",
    "jetzt",
    "kann",
    "koennen",
    "koennte",
    "machen",
    "man",
    "manche",
    "manchem",
    "manchen",
    "mancher",
    "manches",
    "mein",
    "meine",
    "meinem",
    "meinen",
    "meiner",
    "meines",
    "mich",
    "mir",
    "mit",
    "muss",
    "musste",
    "nach",
    "noch",
    "nun",
    "nur",
    "ob",
    "oder",
    "sehr",
    "sein",
    "seine",
    "seinem",
    "seinen",
    "seiner",
    "seines",
    "selbst",
    "sich",
    "sie",
    "sind",
    "so",
    "solche",
    "solchem",
    "solchen",
    "solcher",
    "solches",
    "soll",
    "sollte",
    "sondern",
    "sonst",
    "ueber",
    "um",
    "und",
    "uns",
    "unser",
    "unsere",
    "unserem",
    "unseren",
    "unseres",
    "unter",
    "viel",
    "vom",
    "von",
    "vor",
    "waehrend",
    "war",
    "waren",
    "warst",
    "was",
    "weg",
    "weil",
    "weiter",
    "welche",
    "welchem",
    "welchen",
    "welcher",
    "welches",
    "wenn",
    "werde",
    "werden",
    "wie",
    "wieder",
    "will",
    "wir",
    "wird",
    "wirst",
    "wo",
    "wollen",
    "wollte",
    "wuerde",
    "wuerden",
    "zu",
    "zum",
    "zur",
    "zwar",
    "zwischen",
];

#[cfg(test)]
mod tests {
    use super::*;

    fn terms(text: &str) -> Vec<String> {
        tokens(text).into_iter().map(|t| t.term).collect()
    }

    #[test]
    fn stopword_list_is_sorted_so_binary_search_works() {
        assert!(GERMAN_STOPWORDS.windows(2).all(|w| w[0] < w[1]));
    }

    #[test]
    fn umlauts_fold_both_ways_and_accents_drop() {
        assert_eq!(
            fold("Österreich"),
            ("oesterreich".into(), Some("osterreich".into()))
        );
        assert_eq!(fold("Zürich"), ("zuerich".into(), Some("zurich".into())));
        assert_eq!(fold("Straße"), ("strasse".into(), None));
        assert_eq!(fold("Chavière"), ("chaviere".into(), None));
        assert_eq!(fold("Oesterreich"), ("oesterreich".into(), None));
    }

    #[test]
    fn elisions_split_and_short_words_stay() {
        assert_eq!(terms("Val d'Isère"), ["val", "d", "isere"]);
        assert_eq!(terms("Val d’Isère"), ["val", "d", "isere"]);
        assert_eq!(terms("DZ mit HP, EZ/VP"), ["dz", "mit", "hp", "ez", "vp"]);
    }

    /// The words a query searches for: each term's own form.
    fn query_words(query: &str) -> Vec<String> {
        query_terms(query)
            .into_iter()
            .map(|t| t.forms[0].clone())
            .collect()
    }

    #[test]
    fn negations_survive_stopword_removal() {
        assert_eq!(
            query_words("ohne den Skipass, nicht mit Bus, kein Essen"),
            ["ohne", "skipass", "nicht", "bus", "kein", "essen"]
        );
    }

    #[test]
    fn a_query_of_only_stopwords_keeps_them() {
        assert_eq!(query_words("Über uns"), ["ueber", "uns"]);
    }

    #[test]
    fn one_letter_terms_are_exact_not_prefixes() {
        let terms = query_terms("Val d'Isère");
        let d = terms.iter().find(|t| t.forms[0] == "d").expect("d kept");
        assert!(!d.is_prefix());
        assert!(!d.matches(&tokens("Dolomiten")[0]));
        assert!(d.matches(&tokens("d")[0]));
    }

    #[test]
    fn umlaut_query_asks_for_both_forms() {
        let zuerich = &query_terms("Zürich")[0];
        assert!(zuerich.matches(&tokens("Zurich")[0]));
        assert!(zuerich.matches(&tokens("Zuerich")[0]));
        assert!(!zuerich.matches(&tokens("Zürcher")[0]));
    }

    proptest::proptest! {
        #[test]
        fn tokens_never_panic_and_offsets_slice_the_text(text in "\\PC{0,60}") {
            for t in tokens(&text) {
                proptest::prop_assert!(text.is_char_boundary(t.start) && text.is_char_boundary(t.end));
                proptest::prop_assert!(t.start < t.end);
            }
        }
    }
}
