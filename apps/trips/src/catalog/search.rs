//! `search_trips` over the catalog: the site's filters on [`TravelDateFacts`], on upcoming dates
//! of trips TYPO3 lists in its own search.

use std::collections::BTreeSet;

use chrono::NaiveDate;
use concierge_search::analyzer::QueryTerm;

use super::facts::{TravelDateFacts, accommodation};
use super::query::Selection;
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

    fn facts_match(&self, facts: &TravelDateFacts) -> bool {
        facts.start >= self.today
            && self.from.is_none_or(|from| facts.start >= from)
            && self.to.is_none_or(|to| facts.end <= to)
            && self.persons.is_none_or(|p| facts.fits(p))
            && self
                .room_type
                .as_deref()
                .is_none_or(|t| facts.room_types.contains(&t))
            && (self.board.is_empty() || facts.has_board(&self.board))
            && self
                .includes
                .iter()
                .all(|i| facts.inclusion_kinds.contains(&i.as_str()))
            && (!self.bus || facts.bus)
            && match self.length {
                Some(TripLength::Short) => facts.nights <= 4,
                Some(TripLength::Long) => facts.nights >= 5,
                None => true,
            }
            && self.price_in_range(facts.price_from)
    }

    fn price_in_range(&self, price: Option<f64>) -> bool {
        if self.price_min.is_none() && self.price_max.is_none() {
            return true;
        }
        price.is_some_and(|p| {
            self.price_min.is_none_or(|min| p >= min) && self.price_max.is_none_or(|max| p <= max)
        })
    }
}

impl TripCatalog {
    /// Matching rows in the catalog's order (start date, then "ab" price): how many there are,
    /// and the first `limit`.
    pub fn search(&self, query: &TripQuery, limit: usize) -> (usize, Vec<&Row>) {
        let mut total = 0;
        let mut page = Vec::with_capacity(limit);
        for row in &self.rows {
            let trip = &self.trips[row.trip];
            if !trip.searchable || trip.unbookable || !query.facts_match(&row.facts) {
                continue;
            }
            if let Some(selection) = &query.selection
                && !selection.selects(self, row)
            {
                continue;
            }
            if let Some(wanted) = &query.accommodation {
                let kind = self.hotels[row.hotel].hotel_type.and_then(accommodation);
                if kind != Some(wanted.as_str()) {
                    continue;
                }
            }
            if let Some(countries) = &query.countries
                && !trip.places.iter().any(|p| countries.contains(p))
            {
                continue;
            }
            if let Some(concepts) = &query.concepts
                && !trip.concept.is_some_and(|c| concepts.contains(&c))
            {
                continue;
            }
            total += 1;
            if page.len() < limit {
                page.push(row);
            }
        }
        (total, page)
    }
}
