//! `search_trips` over the catalog: the site's filters on [`TravelDateFacts`], on upcoming dates
//! of trips TYPO3 lists in its own search.
//!
//! [`TravelDateFacts`]: super::facts::TravelDateFacts

use std::collections::BTreeSet;

use chrono::NaiveDate;
use concierge_search::analyzer::QueryTerm;

use super::facts::{ACCOMMODATIONS, accommodation, board_matches};
use super::query::Selection;
use super::row_index::{RowIndex, inclusion_bit, room_type_bit};
use super::row_set::RowSet;
use super::{Row, TripCatalog};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TripLength {
    /// ≤ 4 nights.
    Short,
    /// ≥ 5 nights.
    Long,
}

#[derive(Debug, Clone)]
pub struct TripQuery {
    /// What `query` selected; `None` when there was no query.
    pub selection: Option<Selection>,
    /// Containment: start on or after `from`, end on or before `to`.
    pub from: Option<NaiveDate>,
    pub to: Option<NaiveDate>,
    pub persons: Option<u32>,
    pub room_type: Option<String>,
    pub accommodation: Option<String>,
    pub board: Vec<QueryTerm>,
    pub includes: Vec<String>,
    pub bus: bool,
    pub length: Option<TripLength>,
    pub price_min: Option<f64>,
    pub price_max: Option<f64>,
    pub countries: Option<BTreeSet<usize>>,
    pub concepts: Option<BTreeSet<usize>>,
    /// Dates starting before this are past.
    pub today: NaiveDate,
}

impl TripQuery {
    pub fn new(today: NaiveDate) -> Self {
        Self {
            selection: None,
            from: None,
            to: None,
            persons: None,
            room_type: None,
            accommodation: None,
            board: Vec::new(),
            includes: Vec::new(),
            bus: false,
            length: None,
            price_min: None,
            price_max: None,
            countries: None,
            concepts: None,
            today,
        }
    }

    fn price_in_range(&self, price: f64) -> bool {
        if self.price_min.is_none() && self.price_max.is_none() {
            return true;
        }
        !price.is_nan()
            && self.price_min.is_none_or(|min| price >= min)
            && self.price_max.is_none_or(|max| price <= max)
    }

    /// The wished `HotelType`; `None` for no wish (or a name no type has).
    fn hotel_type(&self) -> Option<u8> {
        self.accommodation.as_deref().and_then(|wanted| {
            (1..=ACCOMMODATIONS.len() as u8).find(|t| accommodation(u64::from(*t)) == Some(wanted))
        })
    }
}

/// A filter whose rows are listed (per trip, hotel, date or board offer): the lists it allows,
/// and which trips, hotels, dates or boards pass it.
struct Listed<'a> {
    lists: Vec<&'a [u32]>,
    passing: Passing,
}

enum Passing {
    Boards(Vec<bool>),
    Trips(Vec<bool>),
    Selected {
        trips: Vec<bool>,
        hotels: Vec<bool>,
        dates: Vec<bool>,
    },
}

impl Passing {
    fn row(&self, index: &RowIndex, row: usize) -> bool {
        match self {
            Self::Boards(boards) => boards[index.boards[row] as usize],
            Self::Trips(trips) => trips[index.trips[row] as usize],
            Self::Selected {
                trips,
                hotels,
                dates,
            } => {
                trips[index.trips[row] as usize]
                    || hotels[index.hotels[row] as usize]
                    || dates[index.dates[row] as usize]
            }
        }
    }
}

impl Listed<'_> {
    fn rows(&self) -> usize {
        self.lists.iter().map(|l| l.len()).sum()
    }
}

fn flags(count: usize, members: impl IntoIterator<Item = usize>) -> Vec<bool> {
    let mut flags = vec![false; count];
    for member in members {
        flags[member] = true;
    }
    flags
}

fn bits(mask: u16) -> impl Iterator<Item = usize> {
    (0..16).filter(move |bit| mask & (1 << bit) != 0)
}

impl TripCatalog {
    /// Matching rows in the catalog's order (start date, then "ab" price): how many there are,
    /// and the first `limit`.
    ///
    /// Every step narrows one [`RowSet`]: rows are sorted by start, so the dates asked are a
    /// span of them; a fact a row has or has not is a set to intersect with; a listed filter
    /// (board, country or concept, `query`) is the set of its rows when they are fewer than the
    /// rows left, and is otherwise tested on each row left; the ranges (end, persons, price) are
    /// tested on each row left, last, when fewest are.
    pub fn search(&self, query: &TripQuery, limit: usize) -> (usize, Vec<&Row>) {
        let index = &self.index;
        let count = index.starts.len();
        let from = query.from.map_or(query.today, |from| from.max(query.today));
        let first = index.starts.partition_point(|start| *start < from);
        // A row ends on or after its start: one starting after `to` cannot end by it.
        let end = query.to.map_or(count, |to| {
            index.starts.partition_point(|start| *start <= to)
        });
        let mut rows = RowSet::span(count, first, end);
        rows.intersect(&index.offered);
        let room_types = query.room_type.as_deref().map_or(0, room_type_bit);
        for bit in bits(room_types) {
            rows.intersect(&index.room_types[bit]);
        }
        let inclusions = query.includes.iter().fold(0, |m, k| m | inclusion_bit(k));
        for bit in bits(u16::from(inclusions)) {
            rows.intersect(&index.inclusions[bit]);
        }
        if query.bus {
            rows.intersect(&index.bus);
        }
        match query.length {
            Some(TripLength::Short) => rows.intersect(&index.short),
            Some(TripLength::Long) => rows.intersect(&index.long),
            None => {}
        }
        if let Some(hotel_type) = query.hotel_type() {
            rows.intersect(&index.hotel_types[hotel_type as usize]);
        }

        for listed in self.listed_filters(query) {
            let left = rows.len();
            if left == 0 {
                break;
            }
            if listed.rows() <= left {
                rows.intersect(&RowSet::of(
                    count,
                    listed
                        .lists
                        .iter()
                        .flat_map(|l| l.iter())
                        .map(|&r| r as usize),
                ));
            } else {
                rows.retain(|row| listed.passing.row(index, row));
            }
        }
        if let Some(to) = query.to {
            rows.retain(|row| index.ends[row] <= to);
        }
        if let Some(persons) = query.persons {
            rows.retain(|row| index.min_groups[row] <= persons && index.places[row] >= persons);
        }
        if query.price_min.is_some() || query.price_max.is_some() {
            rows.retain(|row| query.price_in_range(index.prices[row]));
        }
        let page = rows.iter().take(limit).map(|row| &self.rows[row]).collect();
        (rows.len(), page)
    }

    /// The board wished, the countries and concepts, and what `query` selected, as lists of
    /// rows.
    fn listed_filters(&self, query: &TripQuery) -> Vec<Listed<'_>> {
        let index = &self.index;
        let mut filters = Vec::new();
        if !query.board.is_empty() {
            let boards: Vec<bool> = self
                .boards
                .iter()
                .map(|labels| board_matches(labels, &query.board))
                .collect();
            filters.push(Listed {
                lists: listed(&index.by_board, &boards),
                passing: Passing::Boards(boards),
            });
        }
        if query.countries.is_some() || query.concepts.is_some() {
            let in_countries = query.countries.as_ref().map(|countries| {
                flags(
                    self.trips.len(),
                    countries
                        .iter()
                        .flat_map(|&c| &index.trips_at[c])
                        .map(|&t| t as usize),
                )
            });
            let trips: Vec<bool> = (0..self.trips.len())
                .map(|t| {
                    in_countries.as_ref().is_none_or(|c| c[t])
                        && query.concepts.as_ref().is_none_or(|concepts| {
                            self.trips[t].concept.is_some_and(|c| concepts.contains(&c))
                        })
                })
                .collect();
            filters.push(Listed {
                lists: listed(&index.by_trip, &trips),
                passing: Passing::Trips(trips),
            });
        }
        if let Some(selection) = &query.selection {
            let trips = flags(
                self.trips.len(),
                selection.trips.iter().copied().chain(
                    selection
                        .places
                        .iter()
                        .flat_map(|&p| &index.trips_at[p])
                        .map(|&t| t as usize),
                ),
            );
            let hotels = flags(self.hotels.len(), selection.hotels.iter().copied());
            let dates = flags(self.dates.len(), selection.dates.iter().copied());
            let mut lists = listed(&index.by_trip, &trips);
            lists.extend(listed(&index.by_hotel, &hotels));
            lists.extend(listed(&index.by_date, &dates));
            filters.push(Listed {
                lists,
                passing: Passing::Selected {
                    trips,
                    hotels,
                    dates,
                },
            });
        }
        filters
    }
}

/// The lists whose flag is set.
fn listed<'a>(lists: &'a [Vec<u32>], flags: &[bool]) -> Vec<&'a [u32]> {
    lists
        .iter()
        .zip(flags)
        .filter(|(_, on)| **on)
        .map(|(list, _)| list.as_slice())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::catalog::facts::{BUS_INCLUSION, INCLUSION_GROUPS, ROOM_TYPES, TravelDateFacts};
    use crate::catalog::{Hotel, Place, TravelDate, Trip};
    use concierge_search::analyzer::query_terms;
    use std::sync::Arc;

    /// Deterministic xorshift: the same catalogs and queries every run.
    struct Dice(u64);

    impl Dice {
        fn next(&mut self) -> u64 {
            self.0 ^= self.0 << 13;
            self.0 ^= self.0 >> 7;
            self.0 ^= self.0 << 17;
            self.0
        }
        fn below(&mut self, n: usize) -> usize {
            (self.next() % n as u64) as usize
        }
        fn chance(&mut self, in_ten: u64) -> bool {
            self.next() % 10 < in_ten
        }
        fn some<T>(&mut self, in_ten: u64, value: impl FnOnce(&mut Self) -> T) -> Option<T> {
            self.chance(in_ten).then(|| value(self))
        }
    }

    fn day(n: usize) -> NaiveDate {
        NaiveDate::from_ymd_opt(2026, 11, 1).unwrap() + chrono::Days::new(n as u64)
    }

    const BOARDS: [&str; 4] = ["Halbpension", "Frühstück", "Vollpension mit Abendessen", ""];

    /// Countries with cities under them, concepts; trips, hotels and dates over them; rows with
    /// facts drawn at random, in the catalog's order.
    fn catalog(dice: &mut Dice) -> TripCatalog {
        let mut catalog = TripCatalog::default();
        let place = |kind: &str, uid, parent| Place {
            kind: kind.into(),
            uid,
            title: format!("{kind} {uid}"),
            parent,
        };
        for uid in 0..3 {
            catalog.places.push(place("country", uid, None));
        }
        for uid in 0..8 {
            catalog.places.push(place("city", uid, Some(dice.below(3))));
        }
        for uid in 0..3 {
            catalog.places.push(place("concept", uid, None));
        }
        for uid in 0..40 {
            let city = 3 + dice.below(8);
            let concept = dice.some(6, |d| 11 + d.below(3));
            let mut places: BTreeSet<usize> = [city, catalog.places[city].parent.unwrap()].into();
            places.extend(concept);
            catalog.trips.push(Trip {
                uid,
                code: format!("T{uid}"),
                title: format!("Reise {uid}"),
                url: None,
                site: None,
                searchable: dice.chance(8),
                unbookable: dice.chance(1),
                places,
                destinations: vec![city],
                concept,
                teaser: String::new(),
                description: String::new(),
                hotels: Vec::new(),
            });
        }
        for uid in 0..15 {
            catalog.hotels.push(Hotel {
                uid: Some(uid),
                name: format!("Hotel {uid}"),
                buspro_names: Vec::new(),
                codes: vec![format!("H{uid}")],
                hotel_type: dice.some(8, |d| d.below(7) as u64),
                facts: None,
                url: None,
                description: String::new(),
                city: None,
            });
        }
        for n in 0..60 {
            let start = day(dice.below(120));
            let end = start + chrono::Days::new(dice.below(10) as u64);
            catalog.dates.push(TravelDate {
                date_code: format!("D{n}"),
                code: String::new(),
                start,
                end,
                export: Arc::new(
                    serde_json::from_value(serde_json::json!({
                        "dateCode": format!("D{n}"), "start": start, "end": end
                    }))
                    .unwrap(),
                ),
            });
        }
        for _ in 0..3000 {
            let date = dice.below(catalog.dates.len());
            let (start, end) = (catalog.dates[date].start, catalog.dates[date].end);
            let mut room_types: Vec<&'static str> = ROOM_TYPES
                .iter()
                .copied()
                .filter(|_| dice.chance(3))
                .collect();
            room_types.dedup();
            let mut inclusion_kinds: Vec<&'static str> = INCLUSION_GROUPS
                .iter()
                .map(|(_, name)| *name)
                .chain([BUS_INCLUSION])
                .filter(|_| dice.chance(4))
                .collect();
            inclusion_kinds.dedup();
            let board = BOARDS[dice.below(BOARDS.len())];
            catalog.rows.push(Row {
                trip: dice.below(catalog.trips.len()),
                date,
                hotel: dice.below(catalog.hotels.len()),
                hotel_code: "".into(),
                facts: Arc::new(TravelDateFacts {
                    start,
                    end,
                    nights: (end - start).num_days(),
                    price_from: dice.some(9, |d| (d.below(2000) as f64) / 2.0),
                    places: dice.below(12) as u32,
                    min_group: dice.some(8, |d| d.below(6) as u32),
                    room_types,
                    board: (!board.is_empty())
                        .then(|| board.to_string())
                        .into_iter()
                        .collect(),
                    inclusion_kinds: inclusion_kinds.into(),
                    inclusions: Arc::from([]),
                    bus: dice.chance(5),
                }),
            });
        }
        catalog.order_rows();
        catalog.index_rows();
        catalog
    }

    fn query(dice: &mut Dice, catalog: &TripCatalog) -> TripQuery {
        let mut query = TripQuery::new(day(dice.below(40)));
        query.from = dice.some(3, |d| day(d.below(120)));
        query.to = dice.some(3, |d| day(d.below(130)));
        query.persons = dice.some(3, |d| d.below(8) as u32);
        query.room_type = dice.some(2, |d| ROOM_TYPES[d.below(ROOM_TYPES.len())].to_string());
        query.accommodation = dice.some(2, |d| {
            ACCOMMODATIONS[d.below(ACCOMMODATIONS.len())].to_string()
        });
        if dice.chance(2) {
            query.board = query_terms(["Abendessen", "halb", "Frühstück"][dice.below(3)]);
        }
        while dice.chance(2) {
            let kinds = [INCLUSION_GROUPS[0].1, INCLUSION_GROUPS[2].1, BUS_INCLUSION];
            query.includes.push(kinds[dice.below(3)].to_string());
        }
        query.bus = dice.chance(2);
        query.length = dice.some(2, |d| [TripLength::Short, TripLength::Long][d.below(2)]);
        query.price_min = dice.some(2, |d| d.below(600) as f64);
        query.price_max = dice.some(2, |d| d.below(1200) as f64);
        query.countries = dice.some(2, |d| (0..1 + d.below(2)).map(|_| d.below(3)).collect());
        query.concepts = dice.some(2, |d| [11 + d.below(3)].into());
        query.selection = dice.some(4, |d| {
            let mut selection = Selection::default();
            for _ in 0..d.below(3) {
                selection.trips.insert(d.below(catalog.trips.len()));
            }
            for _ in 0..d.below(2) {
                selection.hotels.insert(d.below(catalog.hotels.len()));
            }
            for _ in 0..d.below(2) {
                selection.places.insert(d.below(catalog.places.len()));
            }
            for _ in 0..d.below(3) {
                selection.dates.insert(d.below(catalog.dates.len()));
            }
            selection
        });
        query
    }

    /// The search's rules stated row by row: what the indexed search must find.
    fn matches(catalog: &TripCatalog, query: &TripQuery, row: &Row) -> bool {
        let facts = &row.facts;
        let trip = &catalog.trips[row.trip];
        let hotel_type = catalog.hotels[row.hotel].hotel_type;
        trip.searchable
            && !trip.unbookable
            && facts.start >= query.today
            && query.from.is_none_or(|from| facts.start >= from)
            && query.to.is_none_or(|to| facts.end <= to)
            && query.persons.is_none_or(|p| facts.fits(p))
            && query
                .room_type
                .as_ref()
                .is_none_or(|t| facts.room_types.contains(&t.as_str()))
            && query
                .includes
                .iter()
                .all(|k| facts.inclusion_kinds.contains(&k.as_str()))
            && (!query.bus || facts.bus)
            && match query.length {
                Some(TripLength::Short) => facts.nights <= 4,
                Some(TripLength::Long) => facts.nights >= 5,
                None => true,
            }
            && (query.price_min.is_none() && query.price_max.is_none()
                || facts.price_from.is_some_and(|price| {
                    query.price_min.is_none_or(|min| price >= min)
                        && query.price_max.is_none_or(|max| price <= max)
                }))
            && query
                .accommodation
                .as_deref()
                .is_none_or(|wanted| hotel_type.and_then(accommodation) == Some(wanted))
            && (query.board.is_empty() || facts.has_board(&query.board))
            && query
                .countries
                .as_ref()
                .is_none_or(|c| trip.places.iter().any(|p| c.contains(p)))
            && query
                .concepts
                .as_ref()
                .is_none_or(|c| trip.concept.is_some_and(|t| c.contains(&t)))
            && query
                .selection
                .as_ref()
                .is_none_or(|s| s.selects(catalog, row))
    }

    /// Thousands of random queries over random catalogs: the same total and the same first
    /// rows as checking every row by the rules, whichever way each filter was applied.
    #[test]
    fn the_indexed_search_finds_what_checking_every_row_finds() {
        let mut dice = Dice(0x5eed_cafe);
        let mut found = 0;
        for _ in 0..4 {
            let catalog = catalog(&mut dice);
            for _ in 0..1500 {
                let query = query(&mut dice, &catalog);
                let limit = 1 + dice.below(30);
                let expected: Vec<&Row> = catalog
                    .rows
                    .iter()
                    .filter(|row| matches(&catalog, &query, row))
                    .collect();
                let (total, page) = catalog.search(&query, limit);
                assert_eq!(total, expected.len(), "{query:?}");
                let page: Vec<*const Row> = page.into_iter().map(|r| r as *const Row).collect();
                let first: Vec<*const Row> = expected
                    .iter()
                    .take(limit)
                    .map(|r| *r as *const Row)
                    .collect();
                assert_eq!(page, first, "{query:?}");
                found += usize::from(total > 0);
            }
        }
        assert!(found > 1500, "most queries find rows: {found} of 6000");
    }
}
