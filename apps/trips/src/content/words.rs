//! The ski-travel words `search_content` understands out of the box, in German as the customers
//! ask: which words name a kind of page ("Hotels" → hotels) and which words mean the same
//! ("einpacken" ↔ "Packliste", "Gepäck"). A deployment adds its own groups in `[apps.trips]
//! synonyms`; they extend these, never replace them.

use concierge_search::Lexicon;

/// Words that ask for a kind of page; a question's type word lifts that kind.
const KIND_WORDS: &[(&str, &[&str])] = &[
    (
        "hotel",
        &[
            "Hotel",
            "Hotels",
            "Unterkunft",
            "Unterkünfte",
            "Pension",
            "Gasthof",
            "Gasthaus",
            "Chalet",
            "Ferienwohnung",
            "Appartement",
            "Apartment",
            "Résidence",
            "Residenz",
            "Apparthotel",
            "Clubhotel",
            "Berghotel",
            "Sporthotel",
            "Alpenhotel",
        ],
    ),
    (
        "product",
        &[
            "Reise",
            "Reisen",
            "Skireise",
            "Skireisen",
            "Angebot",
            "Angebote",
            "Busreise",
            "Pauschalreise",
            "Skifahrt",
        ],
    ),
    (
        "city",
        &[
            "Skigebiet",
            "Skigebiete",
            "Skiort",
            "Ort",
            "Orte",
            "Reiseziel",
            "Urlaubsort",
        ],
    ),
    (
        "region",
        &["Skigebiet", "Skigebiete", "Region", "Regionen", "Reiseziel"],
    ),
    ("country", &["Land", "Länder", "Reiseziel"]),
    (
        "blog",
        &[
            "Tipps",
            "Tipp",
            "Bericht",
            "Erfahrungsbericht",
            "Blog",
            "Ratgeber",
        ],
    ),
];

/// Groups of words a customer uses for one thing.
const SYNONYMS: &[&[&str]] = &[
    &["einpacken", "Packliste", "Gepäck", "mitnehmen"],
    &["Busfahrt", "Busanreise", "Bus"],
    &["HP", "Halbpension"],
    &["VP", "Vollpension"],
    &["DZ", "Doppelzimmer"],
    &["EZ", "Einzelzimmer"],
    &[
        "schneesicher",
        "Schneesicherheit",
        "Gletscher",
        "Schneegarantie",
    ],
    &["stornieren", "Stornierung", "Storno", "Rücktritt"],
    &["Ermäßigung", "Rabatt", "Kinderermäßigung"],
    &[
        "leihen",
        "ausleihen",
        "Verleih",
        "Skiverleih",
        "Mietmaterial",
    ],
    &["Ausrüstung", "Skiausrüstung", "Mietmaterial"],
    &["Hallenbad", "Schwimmbad", "Pool"],
    &["WLAN", "WiFi", "Internet"],
    &["Hund", "Hunde", "Haustier", "Haustiere"],
    &["Zustieg", "Zustiegsort", "Zustiegsorte", "Abfahrtsort"],
    &["Anzahlung", "Zahlung", "Zahlungsbedingungen"],
    &["Verpflegung", "Halbpension", "Vollpension", "Frühstück"],
    &["Familie", "Familien", "Kinder"],
    &["Auto", "PKW", "Eigenanreise"],
    // Who comes by train comes on their own: the operator's word for it is Eigenanreise.
    &["Zug", "Bahn", "Bahnanreise", "Eigenanreise"],
    // The ways of getting there are what a question about getting there is answered by.
    &["Anreise", "Busanreise", "Bahnanreise", "Eigenanreise"],
];

/// The default words, then `extra` groups from the config; an entry of several words is
/// refused with its place (`synonyms[2]: "halbe Pension" is not one word`).
pub fn lexicon(extra: &[Vec<String>]) -> Result<Lexicon, String> {
    let mut lexicon = Lexicon::default();
    for (kind, words) in KIND_WORDS {
        lexicon = lexicon.kind_words(kind, words);
    }
    for group in SYNONYMS {
        lexicon = lexicon.synonyms(group)?;
    }
    for (index, group) in extra.iter().enumerate() {
        if group.len() < 2 {
            return Err(format!(
                "synonyms[{index}]: a group needs at least two words, got {}",
                group.len()
            ));
        }
        lexicon = lexicon
            .synonyms(group)
            .map_err(|e| format!("synonyms[{index}]: {e}"))?;
    }
    Ok(lexicon)
}

/// How a site titles a page that collects its common questions ("Häufige Fragen Frankreich"):
/// the questions and answers other pages repeat are that page's own content.
const FAQ_TITLES: &[&str] = &["Häufige Fragen", "FAQ", "Fragen und Antworten"];

/// Whether a page with this title is an FAQ page.
pub fn is_faq_title(title: &str) -> bool {
    FAQ_TITLES.iter().any(|prefix| title.starts_with(prefix))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_defaults_are_valid_and_a_bad_group_is_refused_with_its_place() {
        assert!(lexicon(&[]).is_ok());
        let bad = vec![vec!["HP".to_string(), "halbe Pension".to_string()]];
        assert_eq!(
            lexicon(&bad).unwrap_err(),
            "synonyms[0]: `halbe Pension` is not one word"
        );
        assert!(lexicon(&[vec!["allein".to_string()]]).is_err());
    }
}
