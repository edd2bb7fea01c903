//! `TripCatalog`: TYPO3's products, hotels and destinations (from the content mirror) joined to
//! the booking system's product export and BusPro's hotel names — one row per trip × travel date
//! × hotel, each with its [`TravelDateFacts`].
//!
//! The join follows the seed's trip rules: products join on `code` (several TYPO3 products may
//! share one, each listed as its own trip); hotels join on any of the TYPO3 hotel's `codes`, an
//! owner's own code winning over another hotel's alias; a hotel TYPO3 does not know is shown under
//! BusPro's name. The export's `guide` and BusPro ids stop at [`export`].

pub mod export;
pub mod facts;
pub mod load;
pub mod query;
mod row_index;
mod row_set;
pub mod search;

use std::collections::{BTreeSet, HashMap};
use std::sync::Arc;

use chrono::NaiveDate;
use serde_json::Value;

use crate::content::document::Document;
use crate::content::markdown::html_to_markdown;
use export::{BusproHotels, Export, ExportDate};
use facts::{DateInclusions, TravelDateFacts};

/// A TYPO3 product: a trip.
#[derive(Debug, Clone)]
pub struct Trip {
    pub uid: u64,
    pub code: String,
    pub title: String,
    pub url: Option<String>,
    pub site: Option<String>,
    pub searchable: bool,
    pub unbookable: bool,
    /// Its destinations and every place above them, and its concept: indexes into `places`.
    pub places: BTreeSet<usize>,
    pub destinations: Vec<usize>,
    pub concept: Option<usize>,
    pub teaser: String,
    /// Description and FAQs, Markdown.
    pub description: String,
    pub hotels: Vec<usize>,
}

#[derive(Debug, Clone)]
pub struct Hotel {
    /// TYPO3's uid; `None` for a hotel only BusPro knows.
    pub uid: Option<u64>,
    /// TYPO3's title, or BusPro's name when TYPO3 has no hotel for the code.
    pub name: String,
    /// BusPro's own wording, searched by `query` but not shown for TYPO3 hotels.
    pub buspro_names: Vec<String>,
    pub codes: Vec<String>,
    pub hotel_type: Option<u64>,
    pub facts: Option<Value>,
    pub url: Option<String>,
    pub description: String,
    pub city: Option<usize>,
}

/// A city, region, country or concept.
#[derive(Debug, Clone)]
pub struct Place {
    pub kind: String,
    pub uid: u64,
    pub title: String,
    pub parent: Option<usize>,
}

/// One travel date of a product code, shared by the trips with that code.
#[derive(Debug, Clone)]
pub struct TravelDate {
    pub date_code: String,
    pub code: String,
    pub start: NaiveDate,
    pub end: NaiveDate,
    /// The export's date: its hotels, selections, buses and pickups.
    pub export: Arc<ExportDate>,
}

/// One trip × date × hotel.
#[derive(Debug, Clone)]
pub struct Row {
    pub trip: usize,
    pub date: usize,
    pub hotel: usize,
    /// The code BusPro books the hotel under for this date.
    pub hotel_code: Arc<str>,
    /// Shared by the trips that share the date's product code.
    pub facts: Arc<TravelDateFacts>,
}

#[derive(Debug, Default)]
pub struct TripCatalog {
    /// The export's `generatedAt`.
    pub data_as_of: String,
    pub trips: Vec<Trip>,
    pub hotels: Vec<Hotel>,
    pub places: Vec<Place>,
    pub dates: Vec<TravelDate>,
    /// Sorted by start date, then "ab" price.
    pub rows: Vec<Row>,
    /// The distinct board offers (group 71 labels, folded), which rows point into.
    pub(crate) boards: Vec<Vec<Vec<concierge_search::analyzer::Token>>>,
    /// The rows by what the search filters on.
    pub(crate) index: row_index::RowIndex,
    /// Every code (own or alias) to its hotel; an owner's own code wins.
    pub hotel_by_code: Codes<usize>,
    pub trips_by_code: Codes<Vec<usize>>,
    pub dates_by_code: Codes<usize>,
    /// Codes the join could not place: export products no TYPO3 product has, TYPO3 product codes
    /// the export lacks.
    pub unmatched: Vec<String>,
    pub(crate) names: query::Names,
}

/// The catalog's tables by booking code. foldhash rather than std's SipHash, whose hashing of a
/// large export's fifty thousand date codes stood out in a restart's profile. The codes are the
/// operator's own data (a caller's code is only looked up), so no table can be flooded.
pub type Codes<V> = HashMap<String, V, foldhash::fast::RandomState>;

fn text(data: &Value, key: &str) -> String {
    data.get(key)
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_string()
}

fn reference(data: &Value) -> Option<(String, u64)> {
    Some((
        data.get("type")?.as_str()?.to_string(),
        data.get("uid")?.as_u64()?,
    ))
}

impl TripCatalog {
    pub fn build(export: &Export, buspro: &BusproHotels, docs: &[Document]) -> Self {
        let mut catalog = TripCatalog {
            data_as_of: export.generated_at.clone(),
            ..Default::default()
        };
        let records = docs.iter().filter(|d| d.data.is_some());

        // Places first: trips and hotels point at them.
        let mut place_index: HashMap<(String, u64), usize> = HashMap::new();
        let place_docs: Vec<&Document> = records
            .clone()
            .filter(|d| {
                matches!(
                    d.key.kind.as_str(),
                    "city" | "region" | "country" | "concept"
                )
            })
            .collect();
        for doc in &place_docs {
            place_index.insert((doc.key.kind.clone(), doc.key.uid), catalog.places.len());
            catalog.places.push(Place {
                kind: doc.key.kind.clone(),
                uid: doc.key.uid,
                title: title_of(doc),
                parent: None,
            });
        }
        for doc in &place_docs {
            let parent = doc
                .data
                .as_ref()
                .and_then(|d| d.get("parent"))
                .and_then(reference)
                .and_then(|r| place_index.get(&r).copied());
            catalog.places[place_index[&(doc.key.kind.clone(), doc.key.uid)]].parent = parent;
        }

        // TYPO3 hotels; own codes first, so an alias never takes another hotel's own code.
        let mut hotel_index: HashMap<u64, usize> = HashMap::new();
        for doc in records.clone().filter(|d| d.key.kind == "hotel") {
            let data = doc.data.as_ref().expect("records have data");
            let codes: Vec<String> = data
                .get("codes")
                .and_then(Value::as_array)
                .map(|c| {
                    c.iter()
                        .filter_map(Value::as_str)
                        .map(str::to_string)
                        .collect()
                })
                .unwrap_or_default();
            hotel_index.insert(doc.key.uid, catalog.hotels.len());
            catalog.hotels.push(Hotel {
                uid: Some(doc.key.uid),
                name: title_of(doc),
                buspro_names: Vec::new(),
                codes,
                hotel_type: data.get("type").and_then(Value::as_u64),
                facts: data.get("facts").cloned(),
                url: doc.public_url.clone(),
                description: html_to_markdown(&text(data, "description")),
                city: data
                    .get("city")
                    .and_then(reference)
                    .and_then(|r| place_index.get(&r).copied()),
            });
        }
        for (index, hotel) in catalog.hotels.iter().enumerate() {
            if let Some(own) = hotel.codes.first() {
                catalog.hotel_by_code.entry(own.clone()).or_insert(index);
            }
        }
        for (index, hotel) in catalog.hotels.iter().enumerate() {
            for alias in hotel.codes.iter().skip(1) {
                catalog.hotel_by_code.entry(alias.clone()).or_insert(index);
            }
        }

        // TYPO3 products.
        for doc in records.clone().filter(|d| d.key.kind == "product") {
            let data = doc.data.as_ref().expect("records have data");
            let refs = |key: &str| -> Vec<(String, u64)> {
                data.get(key)
                    .and_then(Value::as_array)
                    .map(|a| a.iter().filter_map(reference).collect())
                    .unwrap_or_default()
            };
            let destinations: Vec<usize> = refs("destinations")
                .into_iter()
                .filter_map(|r| place_index.get(&r).copied())
                .collect();
            let concept = data
                .get("concept")
                .and_then(reference)
                .and_then(|r| place_index.get(&r).copied());
            let mut places = BTreeSet::new();
            for &destination in &destinations {
                let mut at = Some(destination);
                while let Some(place) = at {
                    if !places.insert(place) {
                        break; // a cycle in the feed's parents
                    }
                    at = catalog.places[place].parent;
                }
            }
            places.extend(concept);
            let code = text(data, "code");
            let trip = Trip {
                uid: doc.key.uid,
                code: code.clone(),
                title: title_of(doc),
                url: doc.public_url.clone(),
                site: doc.site.clone(),
                searchable: data
                    .get("searchable")
                    .and_then(Value::as_bool)
                    .unwrap_or(false),
                unbookable: data
                    .get("unbookable")
                    .and_then(Value::as_bool)
                    .unwrap_or(false),
                places,
                destinations,
                concept,
                teaser: text(data, "teaser"),
                description: product_description(data),
                hotels: refs("hotels")
                    .into_iter()
                    .filter(|(kind, _)| kind == "hotel")
                    .filter_map(|(_, uid)| hotel_index.get(&uid).copied())
                    .collect(),
            };
            catalog
                .trips_by_code
                .entry(code)
                .or_default()
                .push(catalog.trips.len());
            catalog.trips.push(trip);
        }

        // The export: dates, hotels (BusPro-only ones added), rows.
        let mut exported = BTreeSet::new();
        let mut inclusions = SharedInclusions::default();
        for product in &export.products {
            exported.insert(product.code.clone());
            let Some(trips) = catalog.trips_by_code.get(&product.code).cloned() else {
                catalog.unmatched.push(product.code.clone());
                continue;
            };
            for date in &product.dates {
                let date_index = catalog.dates.len();
                catalog
                    .dates_by_code
                    .insert(date.date_code.clone(), date_index);
                catalog.dates.push(TravelDate {
                    date_code: date.date_code.clone(),
                    code: product.code.clone(),
                    start: date.start,
                    end: date.end,
                    export: date.clone(),
                });
                let included = inclusions.of(date);
                for hotel in &date.hotels {
                    let index = catalog.hotel_for(&hotel.hotel_code, hotel.buspro_hotel_id, buspro);
                    let facts = Arc::new(TravelDateFacts::for_hotel(date, &included, hotel));
                    for &trip in &trips {
                        catalog.rows.push(Row {
                            trip,
                            date: date_index,
                            hotel: index,
                            hotel_code: hotel.hotel_code.clone(),
                            facts: facts.clone(),
                        });
                    }
                }
            }
        }
        for code in catalog.trips_by_code.keys() {
            if !exported.contains(code) && !code.is_empty() {
                catalog.unmatched.push(code.clone());
            }
        }
        catalog.unmatched.sort();
        catalog.unmatched.dedup();
        catalog.order_rows();
        catalog.index_rows();
        catalog.names = query::Names::of(&catalog);
        catalog
    }

    /// The catalog's order, which results are listed in: start date, then "ab" price (a row
    /// without one last).
    pub(crate) fn order_rows(&mut self) {
        self.rows.sort_by(|a, b| {
            (a.facts.start, a.facts.price_from.unwrap_or(f64::MAX))
                .partial_cmp(&(b.facts.start, b.facts.price_from.unwrap_or(f64::MAX)))
                .unwrap_or(std::cmp::Ordering::Equal)
        });
    }

    /// The hotel a booking code means: TYPO3's (own code before alias), else BusPro's, added once.
    fn hotel_for(&mut self, code: &str, buspro_id: Option<u64>, buspro: &BusproHotels) -> usize {
        let buspro_hotel = buspro_id.and_then(|id| buspro.by_id.get(&id));
        if let Some(&index) = self.hotel_by_code.get(code) {
            if let Some(hotel) = buspro_hotel
                && !self.hotels[index].buspro_names.contains(&hotel.name)
            {
                self.hotels[index].buspro_names.push(hotel.name.clone());
            }
            return index;
        }
        let index = self.hotels.len();
        let name = buspro_hotel
            .map(|h| h.name.clone())
            .filter(|n| !n.is_empty())
            .unwrap_or_else(|| code.to_string());
        let mut codes = vec![code.to_string()];
        if let Some(hotel) = buspro_hotel {
            codes.extend(hotel.matchcodes.iter().filter(|c| *c != code).cloned());
        }
        for c in &codes {
            self.hotel_by_code.entry(c.clone()).or_insert(index);
        }
        self.hotels.push(Hotel {
            uid: None,
            name: name.clone(),
            buspro_names: vec![name],
            codes,
            hotel_type: None,
            facts: None,
            url: None,
            description: String::new(),
            city: None,
        });
        index
    }

    /// A place's name and the names above it ("Val Thorens", "Les 3 Vallées", "Frankreich").
    pub fn place_path(&self, place: usize) -> Vec<&str> {
        let mut out = Vec::new();
        let mut at = Some(place);
        while let Some(p) = at {
            if out.len() > 8 {
                break;
            }
            out.push(self.places[p].title.as_str());
            at = self.places[p].parent;
        }
        out
    }
}

/// What each travel date includes, derived once per distinct offer: a large export's fifty
/// thousand dates hold a few hundred (the same selections and buses, week after week), and
/// deriving each date's own was a third of a restart's catalog build.
///
/// Dates are told apart by what [`DateInclusions::of`] reads: each selection's group and item
/// labels, each bus's direction, bookability and price. Texts are compared *as shared by the
/// parse* (the export's interned texts, alive as long as the export): the same pointer is the same
/// text, so two dates with the same key include the same; a text that was not shared only costs a
/// second derivation.
#[derive(Default)]
struct SharedInclusions(HashMap<Vec<usize>, DateInclusions, foldhash::fast::RandomState>);

impl SharedInclusions {
    fn of(&mut self, date: &ExportDate) -> DateInclusions {
        let text = |t: &Arc<str>| Arc::as_ptr(t).cast::<u8>() as usize;
        let mut key = Vec::new();
        for selection in &date.selections {
            key.extend([selection.group as usize, selection.items.len()]);
            key.extend(selection.items.iter().map(|item| text(&item.label)));
        }
        key.push(usize::MAX); // the buses follow
        for bus in &date.buses {
            key.extend([text(&bus.direction), usize::from(bus.bookable)]);
            key.push(bus.price.to_bits() as usize);
        }
        self.0
            .entry(key)
            .or_insert_with(|| DateInclusions::of(date))
            .clone()
    }
}

fn title_of(doc: &Document) -> String {
    let from_record = doc
        .data
        .as_ref()
        .map(|d| text(d, "title"))
        .unwrap_or_default();
    if from_record.is_empty() {
        doc.title.clone()
    } else {
        from_record
    }
}

fn product_description(data: &Value) -> String {
    let mut parts = vec![html_to_markdown(&text(data, "description"))];
    parts.extend(crate::content::markdown::faq_markdown(data));
    parts.retain(|p| !p.is_empty());
    parts.join("\n\n")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dates_that_include_the_same_share_what_they_include_and_no_other_does() {
        let date = |code: &str, skipass: &str, bus_bookable: bool| {
            format!(
                r#"{{"dateCode":"{code}","start":"2027-01-02","end":"2027-01-09",
                   "selections":[{{"group":7,"label":"Skipass","items":[{{"label":"{skipass}"}}]}},
                                 {{"group":71,"label":"Verpflegung","items":[{{"label":"Halbpension"}}]}}],
                   "buses":[{{"direction":"outbound","bookable":{bus_bookable},"price":0.0}}]}}"#
            )
        };
        let export = Export::parse(
            format!(
                r#"{{"generatedAt":"x","products":[{{"code":"VT","dates":[{},{},{},{}]}}]}}"#,
                date("A", "6-Tage-Skipass", true),
                date("B", "6-Tage-Skipass", true),
                date("C", "4-Tage-Skipass", true),
                date("D", "6-Tage-Skipass", false),
            )
            .as_bytes(),
        )
        .unwrap();
        let mut shared = SharedInclusions::default();
        for date in &export.products[0].dates {
            assert_eq!(
                shared.of(date),
                DateInclusions::of(date),
                "{}",
                date.date_code
            );
        }
        // A and B are one offer; C's skipass and D's bus make two more.
        assert_eq!(shared.0.len(), 3);
    }
}
