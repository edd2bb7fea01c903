//! `get_trip` and `get_trip_structured`: one trip by its code, or one travel date by its date
//! code, with its hotels, upcoming dates, bookable rooms and pickups. The structured variant
//! leaves out the editorial texts.

use std::collections::BTreeSet;

use chrono::NaiveDate;
use concierge_core::ToolError;

use super::schema::{
    DateDetail, DateHotel, GetTrip, HotelDetail, PickupDetail, RoomDetail, TripDetail, TripDetails,
};
use super::{PICKUP_DATES, TripSettings, destination, unavailable};
use crate::catalog::TripCatalog;
use crate::catalog::export::Pickup;
use crate::catalog::facts::{TravelDateFacts, accommodation, room_type};

pub(super) fn get_trip(
    catalog: &TripCatalog,
    settings: &TripSettings,
    input: GetTrip,
    editorial: bool,
) -> Result<TripDetails, ToolError> {
    unavailable(catalog)?;
    let today = settings.today();
    let upper = |s: &Option<String>| s.as_deref().map(|c| c.trim().to_uppercase());
    let (code, date_code, hotel_code) = (
        upper(&input.code),
        upper(&input.date_code),
        upper(&input.hotel_code),
    );
    let only_date = match &date_code {
        Some(dc) => Some(*catalog.dates_by_code.get(dc).ok_or_else(|| {
            ToolError::invalid(
                "dateCode",
                format!("no travel date `{dc}`; date codes are the trip code and the start as DDMMYY, e.g. SSLMP061226"),
            )
        })?),
        None => None,
    };
    let code = match (code, only_date) {
        (Some(code), Some(date)) if catalog.dates[date].code != code => {
            return Err(ToolError::invalid(
                "dateCode",
                format!(
                    "date `{}` belongs to trip {}, not {code}",
                    catalog.dates[date].date_code, catalog.dates[date].code
                ),
            ));
        }
        (Some(code), _) => code,
        (None, Some(date)) => catalog.dates[date].code.clone(),
        (None, None) => {
            return Err(ToolError::invalid(
                "code",
                "give the trip `code` (e.g. SSLMP) or a `dateCode` (e.g. SSLMP061226)",
            ));
        }
    };
    let trips = catalog.trips_by_code.get(&code).ok_or_else(|| {
        ToolError::not_found(format!(
            "No trip has the code `{code}`. search_trips finds trips by name."
        ))
    })?;
    let only_hotel = match &hotel_code {
        Some(hc) => Some(*catalog.hotel_by_code.get(hc).ok_or_else(|| {
            ToolError::invalid("hotelCode", format!("no hotel has the code `{hc}`"))
        })?),
        None => None,
    };
    let results = trips
        .iter()
        .map(|&t| trip_detail(catalog, t, today, only_date, only_hotel, editorial))
        .collect();
    Ok(TripDetails {
        results,
        data_as_of: Some(catalog.data_as_of.clone()),
    })
}

fn trip_detail(
    catalog: &TripCatalog,
    trip_index: usize,
    today: NaiveDate,
    only_date: Option<usize>,
    only_hotel: Option<usize>,
    editorial: bool,
) -> TripDetail {
    let trip = &catalog.trips[trip_index];
    let rows: Vec<_> = catalog
        .rows
        .iter()
        .filter(|r| r.trip == trip_index)
        .filter(|r| match only_date {
            Some(date) => r.date == date,
            None => r.facts.start >= today,
        })
        .filter(|r| only_hotel.is_none_or(|h| r.hotel == h))
        .collect();
    let mut hotel_ids: Vec<usize> = trip.hotels.clone();
    hotel_ids.extend(rows.iter().map(|r| r.hotel));
    let mut seen = BTreeSet::new();
    hotel_ids.retain(|h| seen.insert(*h) && only_hotel.is_none_or(|o| o == *h));
    let hotels = hotel_ids
        .iter()
        .map(|&h| {
            let hotel = &catalog.hotels[h];
            HotelDetail {
                hotel_code: hotel.codes.first().cloned().unwrap_or_default(),
                name: hotel.name.clone(),
                accommodation: hotel.hotel_type.and_then(accommodation),
                facts: hotel.facts.clone(),
                url: hotel.url.clone(),
                description: (editorial && !hotel.description.is_empty())
                    .then(|| hotel.description.clone()),
            }
        })
        .collect();
    let mut date_ids: Vec<usize> = rows.iter().map(|r| r.date).collect();
    date_ids.dedup();
    let dates = date_ids
        .iter()
        .enumerate()
        .map(|(n, &d)| {
            let date = &catalog.dates[d];
            let date_rows: Vec<_> = rows.iter().filter(|r| r.date == d).collect();
            let facts: Option<&TravelDateFacts> = date_rows.first().map(|r| &*r.facts);
            DateDetail {
                date_code: date.date_code.clone(),
                start: date.start,
                end: date.end,
                nights: (date.end - date.start).num_days(),
                hotels: date_rows
                    .iter()
                    .map(|r| date_hotel(catalog, date, r))
                    .collect(),
                inclusions: facts.map(|f| f.inclusions.to_vec()).unwrap_or_default(),
                bus: facts.is_some_and(|f| f.bus),
                pickups: (n < PICKUP_DATES)
                    .then(|| date.export.pickups.iter().map(pickup).collect()),
            }
        })
        .collect();
    TripDetail {
        code: trip.code.clone(),
        title: trip.title.clone(),
        url: trip.url.clone(),
        site: trip.site.clone(),
        searchable: trip.searchable,
        bookable: !trip.unbookable,
        destination: destination(catalog, trip),
        concept: trip.concept.map(|c| catalog.places[c].title.clone()),
        teaser: (editorial && !trip.teaser.is_empty()).then(|| trip.teaser.clone()),
        description: (editorial && !trip.description.is_empty()).then(|| trip.description.clone()),
        hotels,
        dates,
    }
}

fn date_hotel(
    catalog: &TripCatalog,
    date: &crate::catalog::TravelDate,
    row: &crate::catalog::Row,
) -> DateHotel {
    let rooms = date
        .export
        .hotels
        .iter()
        .find(|h| h.hotel_code == row.hotel_code)
        .map(|h| {
            h.rooms
                .iter()
                .filter(|r| r.is_bookable())
                .map(|r| RoomDetail {
                    label: r.label.to_string(),
                    room_type: room_type(r),
                    price: r.price,
                    availability: if r.places() > 0 {
                        "frei"
                    } else {
                        "auf Anfrage"
                    },
                })
                .collect()
        })
        .unwrap_or_default();
    DateHotel {
        hotel_code: row.hotel_code.to_string(),
        hotel: catalog.hotels[row.hotel].name.clone(),
        price_from: row.facts.price_from,
        availability: row.facts.availability(),
        rooms,
    }
}

/// Per person and leg; a leg listed without a price costs 0; an absent return leg stays absent.
fn pickup(pickup: &Pickup) -> PickupDetail {
    let leg =
        |leg: &Option<crate::catalog::export::Leg>| leg.as_ref().map(|l| l.price.unwrap_or(0.0));
    let outbound = leg(&pickup.outbound);
    let back = leg(&pickup.back);
    PickupDetail {
        place: pickup.place.to_string(),
        time: pickup.time.clone(),
        surcharge_outbound: outbound,
        surcharge_return: back,
        surcharge_round_trip: outbound.unwrap_or(0.0) + back.unwrap_or(0.0),
    }
}
