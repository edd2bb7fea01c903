//! `search_trips` over the catalog: the site's filters on [`TravelDateFacts`], on upcoming dates
//! of trips TYPO3 lists in its own search.

use std::collections::{BTreeSet, HashMap};

use chrono::NaiveDate;
use concierge_search::analyzer::QueryTerm;

use super::facts::{
    BUS_INCLUSION, INCLUSION_GROUPS, ROOM_TYPES, accommodation, board_matches, board_words,
};
use super::query::Selection;
use super::{Row, TripCatalog};

/// A row's searchable facts, packed.
#[derive(Debug, Clone, Copy)]
pub(crate) struct RowKey {
    start: NaiveDate,
    end: NaiveDate,
    nights: i64,
    /// NaN when no room is bookable.
    price: f64,
    places: u32,
    /// `u32::MAX` when no room is bookable.
    min_group: u32,
    /// Bit i: `ROOM_TYPES[i]`.
    room_types: u16,
    /// Bit i: `INCLUSION_KINDS[i]`.
    inclusions: u8,
    bus: bool,
    /// Listed in the site's search and bookable.
    offered: bool,
    board: u32,
    /// `HotelType` 1–5, 0 unknown.
    hotel_type: u8,
    trip: u32,
    hotel: u32,
    date: u32,
}

/// Inclusion kinds in bit order.
fn inclusion_bit(kind: &str) -> u8 {
    INCLUSION_GROUPS
        .iter()
        .map(|(_, name)| *name)
        .chain(std::iter::once(BUS_INCLUSION))
        .position(|k| k == kind)
        .map_or(0, |i| 1 << i)
}

fn room_type_bit(kind: &str) -> u16 {
    ROOM_TYPES
        .iter()
        .position(|t| *t == kind)
        .map_or(0, |i| 1 << i)
}

impl TripCatalog {
    /// Packs every row's facts into [`RowKey`]s, and the board offers into a shared table.
    pub(crate) fn index_rows(&mut self) {
        let mut boards: HashMap<Vec<String>, u32> = HashMap::new();
        let mut keys = Vec::with_capacity(self.rows.len());
        for row in &self.rows {
            let facts = &row.facts;
            let next = boards.len() as u32;
            let board = *boards.entry(facts.board.clone()).or_insert(next);
            let trip = &self.trips[row.trip];
            keys.push(RowKey {
                start: facts.start,
                end: facts.end,
                nights: facts.nights,
                price: facts.price_from.unwrap_or(f64::NAN),
                places: facts.places,
                min_group: facts.min_group.unwrap_or(u32::MAX),
                room_types: facts.room_types.iter().fold(0, |m, t| m | room_type_bit(t)),
                inclusions: facts
                    .inclusion_kinds
                    .iter()
                    .fold(0, |m, k| m | inclusion_bit(k)),
                bus: facts.bus,
                offered: trip.searchable && !trip.unbookable,
                board,
                hotel_type: self.hotels[row.hotel]
                    .hotel_type
                    .map_or(0, |t| t.min(255) as u8),
                trip: row.trip as u32,
                hotel: row.hotel as u32,
                date: row.date as u32,
            });
        }
        let mut table = vec![Vec::new(); boards.len()];
        for (labels, id) in boards {
            table[id as usize] = board_words(&labels);
        }
        self.keys = keys;
        self.boards = table;
    }
}

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

    fn matches(&self, key: &RowKey, wanted: &Wanted) -> bool {
        key.offered
            && key.start >= self.today
            && self.from.is_none_or(|from| key.start >= from)
            && self.to.is_none_or(|to| key.end <= to)
            && self
                .persons
                .is_none_or(|p| key.min_group <= p && key.places >= p)
            && key.room_types & wanted.room_types == wanted.room_types
            && key.inclusions & wanted.inclusions == wanted.inclusions
            && (!self.bus || key.bus)
            && match self.length {
                Some(TripLength::Short) => key.nights <= 4,
                Some(TripLength::Long) => key.nights >= 5,
                None => true,
            }
            && self.price_in_range(key.price)
            && wanted.hotel_type.is_none_or(|t| key.hotel_type == t)
            && wanted.boards.as_ref().is_none_or(|b| b[key.board as usize])
            && wanted.trips[key.trip as usize]
            && (wanted.all_selected
                || wanted.selected_trips[key.trip as usize]
                || wanted.selected_hotels[key.hotel as usize]
                || wanted.dates.contains(&key.date))
    }

    fn price_in_range(&self, price: f64) -> bool {
        if self.price_min.is_none() && self.price_max.is_none() {
            return true;
        }
        !price.is_nan()
            && self.price_min.is_none_or(|min| price >= min)
            && self.price_max.is_none_or(|max| price <= max)
    }
}

/// A query worked out against one catalog: what each row is compared with.
struct Wanted {
    room_types: u16,
    inclusions: u8,
    hotel_type: Option<u8>,
    /// Per board offer: does it hold the wished board?
    boards: Option<Vec<bool>>,
    /// Per trip: within `country` and `concept`.
    trips: Vec<bool>,
    /// No `query`: every row is selected.
    all_selected: bool,
    selected_trips: Vec<bool>,
    selected_hotels: Vec<bool>,
    dates: BTreeSet<u32>,
}

impl Wanted {
    fn new(catalog: &TripCatalog, query: &TripQuery) -> Self {
        let trips = catalog
            .trips
            .iter()
            .map(|trip| {
                query
                    .countries
                    .as_ref()
                    .is_none_or(|c| trip.places.iter().any(|p| c.contains(p)))
                    && query
                        .concepts
                        .as_ref()
                        .is_none_or(|c| trip.concept.is_some_and(|t| c.contains(&t)))
            })
            .collect();
        let (all_selected, selected_trips, selected_hotels, dates) = match &query.selection {
            None => (true, Vec::new(), Vec::new(), BTreeSet::new()),
            Some(selection) => (
                false,
                catalog
                    .trips
                    .iter()
                    .enumerate()
                    .map(|(i, trip)| {
                        selection.trips.contains(&i)
                            || trip.places.iter().any(|p| selection.places.contains(p))
                    })
                    .collect(),
                (0..catalog.hotels.len())
                    .map(|h| selection.hotels.contains(&h))
                    .collect(),
                selection.dates.iter().map(|d| *d as u32).collect(),
            ),
        };
        Self {
            room_types: query.room_type.as_deref().map_or(0, room_type_bit),
            inclusions: query.includes.iter().fold(0, |m, k| m | inclusion_bit(k)),
            hotel_type: query.accommodation.as_deref().and_then(|wanted| {
                (1..=5u8).find(|t| accommodation(u64::from(*t)) == Some(wanted))
            }),
            boards: (!query.board.is_empty()).then(|| {
                catalog
                    .boards
                    .iter()
                    .map(|labels| board_matches(labels, &query.board))
                    .collect()
            }),
            trips,
            all_selected,
            selected_trips,
            selected_hotels,
            dates,
        }
    }
}

impl TripCatalog {
    /// Matching rows in the catalog's order (start date, then "ab" price): how many there are,
    /// and the first `limit`.
    pub fn search(&self, query: &TripQuery, limit: usize) -> (usize, Vec<&Row>) {
        let wanted = Wanted::new(self, query);
        let mut total = 0;
        let mut page = Vec::with_capacity(limit);
        for (index, key) in self.keys.iter().enumerate() {
            if !query.matches(key, &wanted) {
                continue;
            }
            total += 1;
            if page.len() < limit {
                page.push(&self.rows[index]);
            }
        }
        (total, page)
    }
}
