//! `search_trips`: the site's trip search, one row per trip × hotel × travel date. A `query` is
//! resolved by name first and by page text last (the seed's four steps), the other arguments
//! narrow the [`TripQuery`].

use std::collections::BTreeSet;

use concierge_core::ToolError;

use super::schema::{Length, SearchTrips, TripResult, TripResults};
use super::{DEFAULT_LIMIT, MAX_LIMIT, PAGE_TEXT_HITS, TripSettings, destination, unavailable};
use crate::catalog::TripCatalog;
use crate::catalog::facts::{accommodation, board_terms};
use crate::catalog::search::{TripLength, TripQuery};
use crate::content::search::ContentIndex;

pub(super) async fn search_trips(
    catalog: &TripCatalog,
    index: &ContentIndex,
    settings: &TripSettings,
    input: SearchTrips,
) -> Result<TripResults, ToolError> {
    unavailable(catalog)?;
    let mut query = TripQuery::new(settings.today());
    query.from = input.date_from;
    query.to = input.date_to;
    if let Some(name) = &input.period {
        let offered = settings.offered_periods();
        let period = offered.iter().find(|p| &p.name == name).ok_or_else(|| {
            let names: Vec<&str> = offered.iter().map(|p| p.name.as_str()).collect();
            ToolError::invalid(
                "period",
                format!("no travel period `{name}`; offered: {}", names.join(", ")),
            )
        })?;
        query.from = query.from.max(Some(period.from));
        query.to = Some(query.to.map_or(period.to, |to| to.min(period.to)));
    }
    if let (Some(min), Some(max)) = (input.price_min, input.price_max)
        && min > max
    {
        return Err(ToolError::invalid("priceMin", "priceMin is above priceMax"));
    }
    query.persons = input.persons;
    query.room_type = input.room_type.map(|t| t.name().to_string());
    query.accommodation = input.accommodation.map(|a| a.name().to_string());
    query.board = input.board.as_deref().map(board_terms).unwrap_or_default();
    query.includes = input
        .includes
        .unwrap_or_default()
        .iter()
        .map(|i| i.name().to_string())
        .collect();
    query.bus = input.bus.unwrap_or(false);
    query.length = input.length.map(|l| match l {
        Length::Short => TripLength::Short,
        Length::Long => TripLength::Long,
    });
    query.price_min = input.price_min;
    query.price_max = input.price_max;
    query.countries = narrowing(catalog, "country", "country", input.country.as_deref())?;
    query.concepts = narrowing(catalog, "concept", "concept", input.concept.as_deref())?;
    if let Some(text) = input
        .query
        .as_deref()
        .map(str::trim)
        .filter(|q| !q.is_empty())
    {
        let selection = match catalog.resolve_names(text) {
            Some(selection) => selection,
            None => {
                let keys = index
                    .matching_documents(text, PAGE_TEXT_HITS)
                    .await
                    .map_err(|e| ToolError::internal("content_search_failed", e.to_string()))?;
                catalog.selection_of_records(&keys)
            }
        };
        if selection.is_empty() {
            return Ok(empty_results());
        }
        query.selection = Some(selection);
    }
    let limit = input
        .limit
        .map_or(DEFAULT_LIMIT, |l| (l as usize).clamp(1, MAX_LIMIT));
    let (total, rows) = catalog.search(&query, limit);
    if rows.is_empty() {
        return Ok(empty_results());
    }
    Ok(TripResults {
        results: rows
            .into_iter()
            .map(|row| {
                let trip = &catalog.trips[row.trip];
                let hotel = &catalog.hotels[row.hotel];
                let date = &catalog.dates[row.date];
                TripResult {
                    code: trip.code.clone(),
                    title: trip.title.clone(),
                    date_code: date.date_code.clone(),
                    start: row.facts.start,
                    end: row.facts.end,
                    nights: row.facts.nights,
                    hotel_code: row.hotel_code.to_string(),
                    hotel: hotel.name.clone(),
                    accommodation: hotel.hotel_type.and_then(accommodation),
                    price_from: row.facts.price_from,
                    availability: row.facts.availability(),
                    room_types: row.facts.room_types.clone(),
                    board: row.facts.board.to_vec(),
                    inclusions: row.facts.inclusions.to_vec(),
                    destination: destination(catalog, trip),
                    concept: trip.concept.map(|c| catalog.places[c].title.clone()),
                    url: trip.url.clone(),
                    site: trip.site.clone(),
                }
            })
            .collect(),
        total: Some(total),
        data_as_of: Some(catalog.data_as_of.clone()),
    })
}

/// No match: `{"results": []}`. (A catalog that has not loaded yet never answers this: it says
/// it is loading.)
fn empty_results() -> TripResults {
    TripResults {
        results: Vec::new(),
        total: None,
        data_as_of: None,
    }
}

/// `country` / `concept`: the places so named, or a readable error listing the known names.
fn narrowing(
    catalog: &TripCatalog,
    kind: &str,
    field: &str,
    name: Option<&str>,
) -> Result<Option<BTreeSet<usize>>, ToolError> {
    let Some(name) = name else {
        return Ok(None);
    };
    let places = catalog.places_named(kind, name);
    if places.is_empty() {
        let mut known: Vec<&str> = catalog
            .places
            .iter()
            .filter(|p| p.kind == kind)
            .map(|p| p.title.as_str())
            .collect();
        known.sort();
        return Err(ToolError::invalid(
            field,
            format!("no {kind} named `{name}`; known: {}", known.join(", ")),
        ));
    }
    Ok(Some(places))
}
