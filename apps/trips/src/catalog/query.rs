//! `NameQuery` (`TripCatalog::resolveQuery()`): the free-text `query` of `search_trips`, taken at
//! its word. The first step that finds anything decides:
//!
//! 1. a product code, a hotel code or alias, or a date code;
//! 2. names holding every word of the query (accents, case and German stopwords ignored, each word
//!    a prefix) — products, hotels (TYPO3's and BusPro's names), cities, regions, countries,
//!    concepts;
//! 3. names the query spells out among other words, the most specific kind winning;
//! 4. the page texts of those records (the caller's step: it needs the content index).
//!
//! A hotel selects its own travel dates, a destination or concept its trips, a product code its
//! products, a date code its date; matches of one step are combined.

use std::collections::{BTreeSet, HashMap};

use concierge_search::analyzer::{QueryTerm, Token, is_stopword, query_terms, tokens};

use super::TripCatalog;
use crate::content::feed::DocKey;

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Target {
    Trip(usize),
    Hotel(usize),
    Place(usize),
}

#[derive(Debug, Default)]
pub(crate) struct Names {
    entries: Vec<(Target, Vec<Token>)>,
    /// Every form of every word of every name, sorted, with its entry: the entries a query
    /// word can match are a range of it (a prefix or an exact word), found by binary search
    /// instead of comparing the query with all names (17,000 of them in a 50,000-document mirror).
    words: Vec<(String, usize)>,
    /// The entries by every form of their first word: a name spelled out in a query has its
    /// first word there.
    by_first_word: HashMap<String, Vec<usize>>,
    /// Trips, hotels and places by their record's uid (of any type: callers check the type).
    by_uid: HashMap<u64, Vec<Target>>,
}

impl Names {
    pub(crate) fn of(catalog: &TripCatalog) -> Self {
        let mut entries = Vec::new();
        let mut add = |target, name: &str| {
            let words: Vec<Token> = tokens(name)
                .into_iter()
                .filter(|t| !is_stopword(&t.term))
                .collect();
            if !words.is_empty() {
                entries.push((target, words));
            }
        };
        for (i, trip) in catalog.trips.iter().enumerate() {
            add(Target::Trip(i), &trip.title);
        }
        for (i, hotel) in catalog.hotels.iter().enumerate() {
            add(Target::Hotel(i), &hotel.name);
            for name in &hotel.buspro_names {
                add(Target::Hotel(i), name);
            }
        }
        for (i, place) in catalog.places.iter().enumerate() {
            add(Target::Place(i), &place.title);
        }
        let mut words = Vec::new();
        let mut by_first_word: HashMap<String, Vec<usize>> = HashMap::new();
        for (entry, (_, name)) in entries.iter().enumerate() {
            for word in name {
                words.extend(forms(word).map(|form| (form.to_string(), entry)));
            }
            for form in forms(&name[0]) {
                by_first_word
                    .entry(form.to_string())
                    .or_default()
                    .push(entry);
            }
        }
        words.sort_unstable();
        words.dedup();
        let mut by_uid: HashMap<u64, Vec<Target>> = HashMap::new();
        let trips = (catalog.trips.iter().enumerate()).map(|(i, t)| (t.uid, Target::Trip(i)));
        let hotels = (catalog.hotels.iter().enumerate())
            .filter_map(|(i, h)| Some((h.uid?, Target::Hotel(i))));
        let places = (catalog.places.iter().enumerate()).map(|(i, p)| (p.uid, Target::Place(i)));
        for (uid, target) in trips.chain(hotels).chain(places) {
            by_uid.entry(uid).or_default().push(target);
        }
        Self {
            entries,
            words,
            by_first_word,
            by_uid,
        }
    }

    /// The entries with a word that `term` matches (a superset is fine: callers check), in
    /// entry order.
    fn matching(&self, term: &QueryTerm) -> Vec<usize> {
        let mut found: Vec<usize> = self
            .ranges(term)
            .flat_map(|range| &self.words[range])
            .map(|(_, entry)| *entry)
            .collect();
        found.sort_unstable();
        found.dedup();
        found
    }

    /// Where the words `term` matches stand in `words`, one range per form: sorted, the words
    /// an exact form or a prefix matches are side by side.
    fn ranges<'a>(
        &'a self,
        term: &'a QueryTerm,
    ) -> impl Iterator<Item = std::ops::Range<usize>> + 'a {
        let prefix = term.is_prefix();
        term.forms.iter().map(move |form| {
            let start = self
                .words
                .partition_point(|(word, _)| word.as_str() < form.as_str());
            let len = self.words[start..].partition_point(|(word, _)| {
                if prefix {
                    word.starts_with(form.as_str())
                } else {
                    word == form
                }
            });
            start..start + len
        })
    }

    /// The entries that can hold every term: those of the term that matches the fewest words
    /// ("val" starts many words, "thorens" few; checking the few is the work).
    fn candidates(&self, terms: &[QueryTerm]) -> Vec<usize> {
        terms
            .iter()
            .min_by_key(|term| self.ranges(term).map(|r| r.len()).sum::<usize>())
            .map(|term| self.matching(term))
            .unwrap_or_default()
    }
}

/// What a query picked: rows are in when any part selects them.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Selection {
    pub trips: BTreeSet<usize>,
    pub hotels: BTreeSet<usize>,
    pub places: BTreeSet<usize>,
    pub dates: BTreeSet<usize>,
}

impl Selection {
    pub fn is_empty(&self) -> bool {
        self.trips.is_empty()
            && self.hotels.is_empty()
            && self.places.is_empty()
            && self.dates.is_empty()
    }

    fn add(&mut self, target: Target) {
        match target {
            Target::Trip(i) => self.trips.insert(i),
            Target::Hotel(i) => self.hotels.insert(i),
            Target::Place(i) => self.places.insert(i),
        };
    }

    pub fn selects(&self, catalog: &TripCatalog, row: &super::Row) -> bool {
        self.dates.contains(&row.date)
            || self.hotels.contains(&row.hotel)
            || self.trips.contains(&row.trip)
            || (!self.places.is_empty()
                && catalog.trips[row.trip]
                    .places
                    .iter()
                    .any(|p| self.places.contains(p)))
    }
}

/// Whether two words are one in any of their forms (without allocating: this runs for every word
/// of every name per query).
fn same_word(a: &Token, b: &Token) -> bool {
    forms(a).any(|x| forms(b).any(|y| x == y))
}

fn forms(token: &Token) -> impl Iterator<Item = &str> {
    std::iter::once(token.term.as_str()).chain(token.alternative.as_deref())
}

impl TripCatalog {
    /// Steps 1–3; `None` when none of them finds anything.
    pub fn resolve_names(&self, query: &str) -> Option<Selection> {
        [
            Self::by_code,
            Self::by_every_word,
            Self::by_spelled_out_name,
        ]
        .into_iter()
        .map(|step| step(self, query))
        .find(|s| !s.is_empty())
    }

    fn by_code(&self, query: &str) -> Selection {
        let mut selection = Selection::default();
        for word in query
            .split(|c: char| !c.is_alphanumeric())
            .filter(|w| !w.is_empty())
        {
            let code = word.to_uppercase();
            if let Some(trips) = self.trips_by_code.get(&code) {
                selection.trips.extend(trips);
            }
            if let Some(&hotel) = self.hotel_by_code.get(&code) {
                selection.hotels.insert(hotel);
            }
            if let Some(&date) = self.dates_by_code.get(&code) {
                selection.dates.insert(date);
            }
        }
        selection
    }

    fn by_every_word(&self, query: &str) -> Selection {
        let terms = query_terms(query);
        let mut selection = Selection::default();
        if terms.is_empty() {
            return selection;
        }
        for entry in self.names.candidates(&terms) {
            let (target, words) = &self.names.entries[entry];
            if terms.iter().all(|t| words.iter().any(|w| t.matches(w))) {
                selection.add(*target);
            }
        }
        selection
    }

    /// Names whose every word stands in the query; of those, only the most specific kind.
    fn by_spelled_out_name(&self, query: &str) -> Selection {
        let asked = tokens(query);
        // Only names whose first word the query holds can stand in it whole.
        let mut candidates: Vec<usize> = asked
            .iter()
            .flat_map(forms)
            .filter_map(|form| self.names.by_first_word.get(form))
            .flatten()
            .copied()
            .collect();
        candidates.sort_unstable();
        candidates.dedup();
        let mut found: Vec<(u8, Target)> = Vec::new();
        for entry in candidates {
            let (target, words) = &self.names.entries[entry];
            if words.iter().all(|w| asked.iter().any(|a| same_word(a, w))) {
                found.push((self.specificity(*target), *target));
            }
        }
        let mut selection = Selection::default();
        if let Some(best) = found.iter().map(|(rank, _)| *rank).min() {
            for (_, target) in found.into_iter().filter(|(rank, _)| *rank == best) {
                selection.add(target);
            }
        }
        selection
    }

    /// Product or hotel, then city, region, country or concept.
    fn specificity(&self, target: Target) -> u8 {
        match target {
            Target::Trip(_) | Target::Hotel(_) => 0,
            Target::Place(i) => match self.places[i].kind.as_str() {
                "city" => 1,
                "region" => 2,
                _ => 3,
            },
        }
    }

    /// Step 4: the records whose page texts matched.
    pub fn selection_of_records(&self, keys: &[DocKey]) -> Selection {
        let mut selection = Selection::default();
        for key in keys {
            for &target in self.names.by_uid.get(&key.uid).into_iter().flatten() {
                let kind = match target {
                    Target::Trip(_) => "product",
                    Target::Hotel(_) => "hotel",
                    Target::Place(i) => self.places[i].kind.as_str(),
                };
                if kind == key.kind {
                    selection.add(target);
                }
            }
        }
        selection
    }

    /// Places of one kind whose name holds every word of `name` (for `country` / `concept`).
    pub fn places_named(&self, kind: &str, name: &str) -> BTreeSet<usize> {
        let terms = query_terms(name);
        self.names
            .candidates(&terms)
            .into_iter()
            .filter_map(|entry| match &self.names.entries[entry] {
                (Target::Place(i), words)
                    if self.places[*i].kind == kind
                        && terms.iter().all(|t| words.iter().any(|w| t.matches(w))) =>
                {
                    Some(*i)
                }
                _ => None,
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::catalog::Place;

    /// The names as a catalog of places, and every query made of their words, word starts,
    /// umlaut spellings and strangers.
    fn catalog() -> TripCatalog {
        let mut catalog = TripCatalog::default();
        let titles = [
            "Val Thorens",
            "Val d'Isère",
            "Les 3 Vallées",
            "Österreich",
            "Zell am See",
            "Saalbach Hinterglemm",
            "Hotel Chamois d'Or",
            "Chalet Chavière",
            "Sportclub Lederer",
            "Zürich",
            "Val",
        ];
        for (uid, title) in titles.iter().enumerate() {
            let kind = ["city", "region", "country", "concept"][uid % 4];
            catalog.places.push(Place {
                kind: kind.into(),
                uid: uid as u64,
                title: title.to_string(),
                parent: None,
            });
        }
        catalog.names = Names::of(&catalog);
        catalog
    }

    fn every_word_by_scan(catalog: &TripCatalog, query: &str) -> Selection {
        let terms = query_terms(query);
        let mut selection = Selection::default();
        for (target, words) in &catalog.names.entries {
            if !terms.is_empty() && terms.iter().all(|t| words.iter().any(|w| t.matches(w))) {
                selection.add(*target);
            }
        }
        selection
    }

    fn spelled_out_by_scan(catalog: &TripCatalog, query: &str) -> Selection {
        let asked = tokens(query);
        let mut found: Vec<(u8, Target)> = Vec::new();
        for (target, words) in &catalog.names.entries {
            if words.iter().all(|w| asked.iter().any(|a| same_word(a, w))) {
                found.push((catalog.specificity(*target), *target));
            }
        }
        let mut selection = Selection::default();
        if let Some(best) = found.iter().map(|(rank, _)| *rank).min() {
            for (_, target) in found.into_iter().filter(|(rank, _)| *rank == best) {
                selection.add(target);
            }
        }
        selection
    }

    /// The word index finds exactly what comparing the query with every name found.
    #[test]
    fn the_word_index_finds_what_a_scan_of_every_name_finds() {
        let catalog = catalog();
        let words = [
            "val",
            "Va",
            "v",
            "thorens",
            "Thor",
            "d",
            "isere",
            "Isère",
            "les",
            "3",
            "vallees",
            "Vallées",
            "oesterreich",
            "osterreich",
            "Öster",
            "zell",
            "am",
            "see",
            "saal",
            "hotel",
            "chamois",
            "or",
            "chaviere",
            "Chav",
            "sportclub",
            "lederer",
            "zuerich",
            "Zurich",
            "kreuzfahrt",
            "in",
            "nach",
        ];
        let mut queries: Vec<String> = words.iter().map(|w| w.to_string()).collect();
        for a in words {
            for b in words {
                queries.push(format!("{a} {b}"));
                queries.push(format!("Hotel {a} in {b}"));
            }
        }
        let mut found = 0;
        for query in &queries {
            let by_index = catalog.by_every_word(query);
            assert_eq!(by_index, every_word_by_scan(&catalog, query), "{query}");
            assert_eq!(
                catalog.by_spelled_out_name(query),
                spelled_out_by_scan(&catalog, query),
                "{query}"
            );
            found += usize::from(!by_index.is_empty());
        }
        assert!(
            found > 300,
            "the queries find names: {found} of {}",
            queries.len()
        );
    }
}
