//! The trip tools: `search_trips` and `get_trip` (with its trips-only variant, which leaves out
//! the editorial descriptions). Room counts, the guide and BusPro ids never leave the catalog:
//! the output types below have no field for them.

use std::collections::BTreeSet;
use std::sync::Arc;

use chrono::NaiveDate;
use concierge_core::{Annotations, CallContext, Tool, ToolError, typed_tool, with_spec};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use crate::catalog::TripCatalog;
use crate::catalog::export::Pickup;
use crate::catalog::facts::{TravelDateFacts, accommodation, board_terms, room_type};
use crate::catalog::load::{CatalogHandle, NotReady};
use crate::catalog::search::{TripLength, TripQuery};
use crate::content::search::ContentIndex;

pub const DEFAULT_LIMIT: usize = 10;
pub const MAX_LIMIT: usize = 25;
/// Dates whose pickups `get_trip` lists.
const PICKUP_DATES: usize = 3;
/// Page-text hits consulted by the last `query` step.
const PAGE_TEXT_HITS: usize = 50;

/// One of the site's travel period presets (`chatbot_travel_periods`).
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Period {
    pub name: String,
    pub from: NaiveDate,
    pub to: NaiveDate,
}

/// What the trip tools need besides the catalog.
#[derive(Debug, Clone)]
pub struct TripSettings {
    pub periods: Vec<Period>,
    /// "Today" for upcoming dates and expired periods; the real date (Europe/Berlin) when unset.
    pub as_of: Option<NaiveDate>,
}

impl TripSettings {
    pub fn today(&self) -> NaiveDate {
        self.as_of.unwrap_or_else(|| {
            chrono::Utc::now()
                .with_timezone(&chrono_tz::Europe::Berlin)
                .date_naive()
        })
    }

    fn offered_periods(&self) -> Vec<&Period> {
        let today = self.today();
        self.periods.iter().filter(|p| p.to >= today).collect()
    }
}

#[derive(Debug, Clone, Copy, Deserialize, JsonSchema)]
enum Inclusion {
    Skipass,
    Verpflegung,
    Programm,
    Kurse,
    Events,
    Busanreise,
}

impl Inclusion {
    /// The kind as [`TravelDateFacts::inclusion_kinds`] names it.
    fn name(self) -> &'static str {
        match self {
            Inclusion::Skipass => "Skipass",
            Inclusion::Verpflegung => "Verpflegung",
            Inclusion::Programm => "Programm",
            Inclusion::Kurse => "Kurse",
            Inclusion::Events => "Events",
            Inclusion::Busanreise => crate::catalog::facts::BUS_INCLUSION,
        }
    }
}

#[derive(Debug, Clone, Copy, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
enum Length {
    /// 4 nights or fewer.
    Short,
    /// 5 nights or more.
    Long,
}

#[derive(Debug, Clone, Copy, Deserialize, JsonSchema)]
enum RoomType {
    #[serde(rename = "1er")]
    One,
    #[serde(rename = "2er")]
    Two,
    #[serde(rename = "3er")]
    Three,
    #[serde(rename = "4er")]
    Four,
    #[serde(rename = "5er")]
    Five,
    #[serde(rename = "6er")]
    Six,
    #[serde(rename = "7er")]
    Seven,
    #[serde(rename = "8er")]
    Eight,
    #[serde(rename = "9er+")]
    NinePlus,
    #[serde(rename = "mit anderen")]
    Shared,
}

impl RoomType {
    fn name(self) -> &'static str {
        crate::catalog::facts::ROOM_TYPES[self as usize]
    }
}

#[derive(Debug, Clone, Copy, Deserialize, JsonSchema)]
enum Accommodation {
    Ferienwohnung,
    Sportclub,
    Apartment,
    #[serde(rename = "Gästehaus")]
    Gaestehaus,
    Pension,
}

impl Accommodation {
    fn name(self) -> &'static str {
        crate::catalog::facts::ACCOMMODATIONS[self as usize]
    }
}

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct SearchTrips {
    /// A trip, hotel, resort, region, country or concept by name ("Sportclub Lederer", "Val
    /// Thorens", "Österreich", "Boarderweek"), or a trip code ("SSLMP"), hotel code or date code
    /// ("SSLMP061226"). Names are taken at their word: naming a hotel returns that hotel's dates.
    #[schemars(length(min = 1, max = 200))]
    query: Option<String>,
    /// Trips starting on or after this day (YYYY-MM-DD).
    date_from: Option<NaiveDate>,
    /// Trips ending on or before this day (YYYY-MM-DD).
    date_to: Option<NaiveDate>,
    /// One of the site's travel periods (by name); trips within it.
    period: Option<String>,
    /// Group size: a room must take a group this small, and this many places must be free.
    #[schemars(range(min = 1, max = 60))]
    persons: Option<u32>,
    /// Room capacity ("2er", …, "9er+"), or "mit anderen" for a bed in a shared room.
    room_type: Option<RoomType>,
    accommodation: Option<Accommodation>,
    /// Board by word, against every board option: "Abendessen" (half board is dinner),
    /// "Frühstück", "Vollpension", "Lunchpaket".
    #[schemars(length(min = 1, max = 50))]
    board: Option<String>,
    /// What must be included.
    includes: Option<Vec<Inclusion>>,
    /// true: only dates with a bookable outbound bus.
    bus: Option<bool>,
    /// short: 4 nights or fewer; long: 5 or more.
    length: Option<Length>,
    /// Lowest "ab" price per person in EUR.
    #[schemars(range(min = 0.0))]
    price_min: Option<f64>,
    /// Highest "ab" price per person in EUR.
    #[schemars(range(min = 0.0))]
    price_max: Option<f64>,
    /// Only trips in this country ("Österreich", "Frankreich", …).
    #[schemars(length(min = 1, max = 60))]
    country: Option<String>,
    /// Only trips of this concept ("Boarderweek", "Skiopening", …).
    #[schemars(length(min = 1, max = 60))]
    concept: Option<String>,
    /// How many results (default 10, at most 25).
    #[schemars(range(min = 1, max = 25))]
    limit: Option<u32>,
}

#[derive(Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
struct TripResults {
    /// One per trip × hotel × travel date, by start date, then "ab" price.
    results: Vec<TripResult>,
    /// All matches (results shows the first `limit`).
    #[serde(skip_serializing_if = "Option::is_none")]
    total: Option<usize>,
    /// When the booking data was exported: prices and availability are a snapshot of then.
    #[serde(skip_serializing_if = "Option::is_none")]
    data_as_of: Option<String>,
}

#[derive(Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
struct TripResult {
    /// The trip's code (for get_trip).
    code: String,
    title: String,
    date_code: String,
    start: NaiveDate,
    end: NaiveDate,
    nights: i64,
    hotel_code: String,
    hotel: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    accommodation: Option<&'static str>,
    /// "ab" price per person in EUR: the cheapest bookable room with places left, else the
    /// cheapest bookable room.
    #[serde(skip_serializing_if = "Option::is_none")]
    price_from: Option<f64>,
    /// "frei" or "auf Anfrage".
    availability: &'static str,
    room_types: Vec<&'static str>,
    /// The board offers (selection group 71); `[]` when the date lists none. Arrays the schema
    /// requires are always present: clients validate results against it.
    board: Vec<String>,
    inclusions: Vec<String>,
    /// Destination, most specific first ("Val Thorens › Les 3 Vallées › Frankreich").
    #[serde(skip_serializing_if = "Option::is_none")]
    destination: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    concept: Option<String>,
    /// The trip's page: cite it; only the booking there is binding.
    #[serde(skip_serializing_if = "Option::is_none")]
    url: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    site: Option<String>,
}

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct GetTrip {
    /// The trip code ("SSLMP"): all upcoming dates.
    #[schemars(length(min = 1, max = 20))]
    code: Option<String>,
    /// One date by its date code ("SSLMP061226").
    #[schemars(length(min = 1, max = 30))]
    date_code: Option<String>,
    /// Only this hotel (code or alias).
    #[schemars(length(min = 1, max = 20))]
    hotel_code: Option<String>,
}

#[derive(Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
struct TripDetails {
    /// One per TYPO3 product with the code (several products may share one).
    results: Vec<TripDetail>,
    #[serde(skip_serializing_if = "Option::is_none")]
    data_as_of: Option<String>,
}

#[derive(Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
struct TripDetail {
    code: String,
    title: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    url: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    site: Option<String>,
    /// Whether the site's own search lists it (closed group trips and trainings do not).
    searchable: bool,
    bookable: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    destination: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    concept: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    teaser: Option<String>,
    /// Editorial description with FAQs (Markdown); dates, prices, pickups and inclusions below
    /// override it.
    #[serde(skip_serializing_if = "Option::is_none")]
    description: Option<String>,
    hotels: Vec<HotelDetail>,
    /// Upcoming dates (or the one asked for), with bookable rooms.
    dates: Vec<DateDetail>,
}

#[derive(Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
struct HotelDetail {
    hotel_code: String,
    name: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    accommodation: Option<&'static str>,
    /// Beds, altitude, distances, sauna, wifi, … (no prices).
    #[serde(skip_serializing_if = "Option::is_none")]
    facts: Option<Value>,
    #[serde(skip_serializing_if = "Option::is_none")]
    url: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    description: Option<String>,
}

#[derive(Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
struct DateDetail {
    date_code: String,
    start: NaiveDate,
    end: NaiveDate,
    nights: i64,
    hotels: Vec<DateHotel>,
    inclusions: Vec<String>,
    /// Whether an outbound bus can be booked.
    bus: bool,
    /// Pickup points with per-person surcharges (listed for the first three dates).
    #[serde(skip_serializing_if = "Option::is_none")]
    pickups: Option<Vec<PickupDetail>>,
}

#[derive(Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
struct DateHotel {
    hotel_code: String,
    hotel: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    price_from: Option<f64>,
    availability: &'static str,
    rooms: Vec<RoomDetail>,
}

#[derive(Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
struct RoomDetail {
    label: String,
    room_type: &'static str,
    /// Per person in EUR.
    price: f64,
    /// "frei" or "auf Anfrage".
    availability: &'static str,
}

#[derive(Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
struct PickupDetail {
    place: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    time: Option<String>,
    /// Per person, outbound leg, EUR.
    #[serde(skip_serializing_if = "Option::is_none")]
    surcharge_outbound: Option<f64>,
    /// Per person, return leg, EUR; absent where the point is not served on the way back.
    #[serde(skip_serializing_if = "Option::is_none")]
    surcharge_return: Option<f64>,
    /// Both legs together, per person.
    surcharge_round_trip: f64,
}

const SEARCH_TRIPS: &str = "The tour operator's trip search (as the website's /skireisen/suche/): which trips \
exist, when, where, at which hotel, from which price. One result per trip × hotel × travel date (default 10, \
at most 25), by start date then price, with the trip code, hotel code, \"ab\" price per person, nights, \
inclusions, room types, availability (frei / auf Anfrage) and the trip's url; total and dataAsOf. Prices and \
availability are a snapshot of dataAsOf; only the booking page is binding. These structured fields override \
any editorial text about dates, prices, pickups and inclusions. Use get_trip for one trip's details.";

const GET_TRIP: &str = "One trip by its code (\"SSLMP\"), or one date of it by date code (\"SSLMP061226\"), \
optionally only one hotel (hotelCode): the trip's text with FAQs, its hotels with facts, every upcoming date \
with its bookable rooms (frei / auf Anfrage) and inclusions, and the pickup points with per-person surcharges \
for the first three dates. Also answers trips the website search does not list, when named by code. These \
structured fields override editorial text on dates, prices, pickups and inclusions; cite the url.";

const GET_TRIP_STRUCTURED: &str = "One trip by its code (\"SSLMP\"), or one date of it by date code \
(\"SSLMP061226\"), optionally only one hotel (hotelCode): name, url, destination, concept, its hotels with \
facts, every upcoming date with its bookable rooms (frei / auf Anfrage) and inclusions, and the pickup points \
with per-person surcharges for the first three dates. For anything these fields do not answer, refer to the \
trip's url.";

pub fn trip_tools(
    catalog: Arc<CatalogHandle>,
    index: Arc<ContentIndex>,
    settings: Arc<TripSettings>,
) -> Vec<Arc<dyn Tool>> {
    let search = {
        let (catalog, settings) = (catalog.clone(), settings.clone());
        typed_tool(
            "search_trips",
            SEARCH_TRIPS,
            Annotations::read_only(),
            move |input: SearchTrips, _call: CallContext| {
                let (catalog, index, settings) = (catalog.clone(), index.clone(), settings.clone());
                async move {
                    let catalog = current(&catalog).await?;
                    search_trips(&catalog, &index, &settings, input).await
                }
            },
        )
    };
    let periods: Vec<String> = settings
        .offered_periods()
        .iter()
        .map(|p| p.name.clone())
        .collect();
    let search = with_spec(search, |spec| {
        if let Some(period) = spec
            .input_schema
            .get_mut("properties")
            .and_then(|p| p.get_mut("period"))
        {
            if periods.is_empty() {
                period["description"] = json!("No travel periods are configured.");
            } else {
                period["enum"] = json!(periods);
            }
        }
    });
    let get = |name: &str, description: &str, editorial: bool| {
        let (catalog, settings) = (catalog.clone(), settings.clone());
        typed_tool(
            name,
            description,
            Annotations::read_only(),
            move |input: GetTrip, _call: CallContext| {
                let (catalog, settings) = (catalog.clone(), settings.clone());
                async move { get_trip(&*current(&catalog).await?, &settings, input, editorial) }
            },
        )
    };
    vec![
        search,
        get("get_trip", GET_TRIP, true),
        get("get_trip_structured", GET_TRIP_STRUCTURED, false),
    ]
}

/// The catalog a call answers from: never one older than a mirror change already known of, and
/// while the first sync is still filling the mirror, a retryable "still loading" instead of "no
/// trips".
async fn current(catalog: &CatalogHandle) -> Result<Arc<TripCatalog>, ToolError> {
    catalog.get().await.map_err(|not_ready| match not_ready {
        // Not a fault: the first sync is filling the mirror, and a call a moment later answers.
        NotReady::Loading => ToolError::rejected("catalog_loading", CATALOG_LOADING),
        NotReady::NotSynced => ToolError::internal(
            "trip_data_unavailable",
            "the content mirror is still empty: the first sync failed or never ran",
        )
        .with_message("Trip data is not available right now; refer to the website."),
        NotReady::Unavailable => ToolError::internal(
            "trip_data_unavailable",
            "the product export or the content mirror could not be read",
        )
        .with_message("Trip data is not available right now; refer to the website."),
    })
}

/// What a model reads while the catalog loads: it may simply call again.
pub const CATALOG_LOADING: &str = "The trip catalog is still loading; try again in a few seconds.";

fn unavailable(catalog: &TripCatalog) -> Result<(), ToolError> {
    if catalog.data_as_of.is_empty() {
        return Err(ToolError::internal(
            "trip_data_unavailable",
            "the product export has not been loaded",
        )
        .with_message("Trip data is not available right now; refer to the website."));
    }
    Ok(())
}

async fn search_trips(
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
                    hotel_code: row.hotel_code.clone(),
                    hotel: hotel.name.clone(),
                    accommodation: hotel.hotel_type.and_then(accommodation),
                    price_from: row.facts.price_from,
                    availability: row.facts.availability(),
                    room_types: row.facts.room_types.clone(),
                    board: row.facts.board.clone(),
                    inclusions: row.facts.inclusions.clone(),
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

fn destination(catalog: &TripCatalog, trip: &crate::catalog::Trip) -> Option<String> {
    let first = *trip.destinations.first()?;
    Some(catalog.place_path(first).join(" › "))
}

fn get_trip(
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
            let facts: Option<&TravelDateFacts> = date_rows.first().map(|r| &r.facts);
            DateDetail {
                date_code: date.date_code.clone(),
                start: date.start,
                end: date.end,
                nights: (date.end - date.start).num_days(),
                hotels: date_rows
                    .iter()
                    .map(|r| date_hotel(catalog, date, r))
                    .collect(),
                inclusions: facts.map(|f| f.inclusions.clone()).unwrap_or_default(),
                bus: facts.is_some_and(|f| f.bus),
                pickups: (n < PICKUP_DATES).then(|| date.pickups.iter().map(pickup).collect()),
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
                    label: r.label.clone(),
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
        hotel_code: row.hotel_code.clone(),
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
        place: pickup.place.clone(),
        time: pickup.time.clone(),
        surcharge_outbound: outbound,
        surcharge_return: back,
        surcharge_round_trip: outbound.unwrap_or(0.0) + back.unwrap_or(0.0),
    }
}
