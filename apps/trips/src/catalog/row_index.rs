//! `RowIndex`: the catalog's rows by what `search_trips` filters on, built once per catalog.
//!
//! A fact a row has or has not (offered, a room type, an inclusion, the bus, short or long, the
//! accommodation) is a [`RowSet`]; what a row points at (trip, hotel, date, board offer) is a
//! column and a list of rows per value; the ranges (start, end, price, group size, places) are
//! columns. Columns rather than a struct per row: a filter that must test rows one by one reads
//! only its own column, a few bytes a row, instead of every fact of every row it passes.

use std::collections::HashMap;

use chrono::NaiveDate;

use super::TripCatalog;
use super::facts::{ACCOMMODATIONS, BUS_INCLUSION, INCLUSION_GROUPS, ROOM_TYPES, board_words};
use super::row_set::RowSet;

#[derive(Debug, Default)]
pub(crate) struct RowIndex {
    /// Ascending: the catalog's order.
    pub(crate) starts: Vec<NaiveDate>,
    pub(crate) ends: Vec<NaiveDate>,
    /// The "ab" price; NaN when no room is bookable.
    pub(crate) prices: Vec<f64>,
    /// The smallest group a room takes; `u32::MAX` when no room is bookable.
    pub(crate) min_groups: Vec<u32>,
    pub(crate) places: Vec<u32>,
    pub(crate) trips: Vec<u32>,
    pub(crate) hotels: Vec<u32>,
    pub(crate) dates: Vec<u32>,
    /// Into the catalog's `boards`.
    pub(crate) boards: Vec<u32>,
    /// Listed in the site's search and bookable.
    pub(crate) offered: RowSet,
    /// By bit of [`room_type_bit`].
    pub(crate) room_types: Vec<RowSet>,
    /// By bit of [`inclusion_bit`].
    pub(crate) inclusions: Vec<RowSet>,
    pub(crate) bus: RowSet,
    pub(crate) short: RowSet,
    pub(crate) long: RowSet,
    /// By `HotelType`, 0 (unknown) to 5.
    pub(crate) hotel_types: Vec<RowSet>,
    pub(crate) by_trip: Vec<Vec<u32>>,
    pub(crate) by_hotel: Vec<Vec<u32>>,
    pub(crate) by_date: Vec<Vec<u32>>,
    pub(crate) by_board: Vec<Vec<u32>>,
    /// Per place, the trips it is one of the places of.
    pub(crate) trips_at: Vec<Vec<u32>>,
}

/// Inclusion kinds in bit order.
pub(crate) fn inclusion_bit(kind: &str) -> u8 {
    INCLUSION_GROUPS
        .iter()
        .map(|(_, name)| *name)
        .chain(std::iter::once(BUS_INCLUSION))
        .position(|k| k == kind)
        .map_or(0, |i| 1 << i)
}

pub(crate) fn room_type_bit(kind: &str) -> u16 {
    ROOM_TYPES
        .iter()
        .position(|t| *t == kind)
        .map_or(0, |i| 1 << i)
}

impl TripCatalog {
    /// Indexes the rows (in their final order) and gathers the distinct board offers into
    /// `boards`, which rows point into.
    pub(crate) fn index_rows(&mut self) {
        let count = self.rows.len();
        let mut index = RowIndex {
            offered: RowSet::empty(count),
            room_types: vec![RowSet::empty(count); ROOM_TYPES.len()],
            inclusions: vec![RowSet::empty(count); INCLUSION_GROUPS.len() + 1],
            bus: RowSet::empty(count),
            short: RowSet::empty(count),
            long: RowSet::empty(count),
            hotel_types: vec![RowSet::empty(count); ACCOMMODATIONS.len() + 1],
            by_trip: vec![Vec::new(); self.trips.len()],
            by_hotel: vec![Vec::new(); self.hotels.len()],
            by_date: vec![Vec::new(); self.dates.len()],
            ..RowIndex::default()
        };
        let mut boards: HashMap<&[String], u32> = HashMap::new();
        for (at, row) in self.rows.iter().enumerate() {
            let facts = &row.facts;
            let next = boards.len() as u32;
            let board = *boards.entry(&facts.board[..]).or_insert(next);
            if board == next {
                index.by_board.push(Vec::new());
            }
            index.starts.push(facts.start);
            index.ends.push(facts.end);
            index.prices.push(facts.price_from.unwrap_or(f64::NAN));
            index.min_groups.push(facts.min_group.unwrap_or(u32::MAX));
            index.places.push(facts.places);
            index.trips.push(row.trip as u32);
            index.hotels.push(row.hotel as u32);
            index.dates.push(row.date as u32);
            index.boards.push(board);
            index.by_trip[row.trip].push(at as u32);
            index.by_hotel[row.hotel].push(at as u32);
            index.by_date[row.date].push(at as u32);
            index.by_board[board as usize].push(at as u32);

            let trip = &self.trips[row.trip];
            if trip.searchable && !trip.unbookable {
                index.offered.insert(at);
            }
            let room_types = facts.room_types.iter().fold(0, |m, t| m | room_type_bit(t));
            for (bit, set) in index.room_types.iter_mut().enumerate() {
                if room_types & (1 << bit) != 0 {
                    set.insert(at);
                }
            }
            let inclusions = facts
                .inclusion_kinds
                .iter()
                .fold(0, |m, k| m | inclusion_bit(k));
            for (bit, set) in index.inclusions.iter_mut().enumerate() {
                if inclusions & (1 << bit) != 0 {
                    set.insert(at);
                }
            }
            if facts.bus {
                index.bus.insert(at);
            }
            if facts.nights <= 4 {
                index.short.insert(at);
            }
            if facts.nights >= 5 {
                index.long.insert(at);
            }
            // A type outside 1–5 is no accommodation a query can ask for.
            if let Some(set) = self.hotels[row.hotel]
                .hotel_type
                .and_then(|t| index.hotel_types.get_mut(usize::try_from(t).ok()?))
            {
                set.insert(at);
            }
        }
        let mut table = vec![Vec::new(); boards.len()];
        for (labels, id) in boards {
            table[id as usize] = board_words(labels);
        }
        index.trips_at = vec![Vec::new(); self.places.len()];
        for (at, trip) in self.trips.iter().enumerate() {
            for &place in &trip.places {
                index.trips_at[place].push(at as u32);
            }
        }
        self.boards = table;
        self.index = index;
    }
}
