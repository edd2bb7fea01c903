//! What the model sees of the trip tools: their arguments and their results, with the doc
//! comments that become the JSON Schema's descriptions. Room counts, the guide and BusPro ids
//! never leave the catalog: these output types have no field for them.

use chrono::NaiveDate;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;

#[derive(Debug, Clone, Copy, Deserialize, JsonSchema)]
pub(super) enum Inclusion {
    Skipass,
    Verpflegung,
    Programm,
    Kurse,
    Events,
    Busanreise,
}

impl Inclusion {
    /// The kind as [`crate::catalog::facts::TravelDateFacts::inclusion_kinds`] names it.
    pub(super) fn name(self) -> &'static str {
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
pub(super) enum Length {
    /// 4 nights or fewer.
    Short,
    /// 5 nights or more.
    Long,
}

#[derive(Debug, Clone, Copy, Deserialize, JsonSchema)]
pub(super) enum RoomType {
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
    pub(super) fn name(self) -> &'static str {
        crate::catalog::facts::ROOM_TYPES[self as usize]
    }
}

#[derive(Debug, Clone, Copy, Deserialize, JsonSchema)]
pub(super) enum Accommodation {
    Ferienwohnung,
    Sportclub,
    Apartment,
    #[serde(rename = "Gästehaus")]
    Gaestehaus,
    Pension,
}

impl Accommodation {
    pub(super) fn name(self) -> &'static str {
        crate::catalog::facts::ACCOMMODATIONS[self as usize]
    }
}

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub(super) struct SearchTrips {
    /// A trip, hotel, resort, region, country or concept by name ("Sportclub Lederer", "Val
    /// Thorens", "Österreich", "Boarderweek"), or a trip code ("SSLMP"), hotel code or date code
    /// ("SSLMP061226"). Names are taken at their word: naming a hotel returns that hotel's dates.
    #[schemars(length(min = 1, max = 200))]
    pub(super) query: Option<String>,
    /// Trips starting on or after this day (YYYY-MM-DD).
    pub(super) date_from: Option<NaiveDate>,
    /// Trips ending on or before this day (YYYY-MM-DD).
    pub(super) date_to: Option<NaiveDate>,
    /// One of the site's travel periods (by name); trips within it.
    pub(super) period: Option<String>,
    /// Group size: a room must take a group this small, and this many places must be free.
    #[schemars(range(min = 1, max = 60))]
    pub(super) persons: Option<u32>,
    /// Room capacity ("2er", …, "9er+"), or "mit anderen" for a bed in a shared room.
    pub(super) room_type: Option<RoomType>,
    pub(super) accommodation: Option<Accommodation>,
    /// Board by word, against every board option: "Abendessen" (half board is dinner),
    /// "Frühstück", "Vollpension", "Lunchpaket".
    #[schemars(length(min = 1, max = 50))]
    pub(super) board: Option<String>,
    /// What must be included.
    pub(super) includes: Option<Vec<Inclusion>>,
    /// true: only dates with a bookable outbound bus.
    pub(super) bus: Option<bool>,
    /// short: 4 nights or fewer; long: 5 or more.
    pub(super) length: Option<Length>,
    /// Lowest "ab" price per person in EUR.
    #[schemars(range(min = 0.0))]
    pub(super) price_min: Option<f64>,
    /// Highest "ab" price per person in EUR.
    #[schemars(range(min = 0.0))]
    pub(super) price_max: Option<f64>,
    /// Only trips in this country ("Österreich", "Frankreich", …).
    #[schemars(length(min = 1, max = 60))]
    pub(super) country: Option<String>,
    /// Only trips of this concept ("Boarderweek", "Skiopening", …).
    #[schemars(length(min = 1, max = 60))]
    pub(super) concept: Option<String>,
    /// How many results (default 10, at most 25).
    #[schemars(range(min = 1, max = 25))]
    pub(super) limit: Option<u32>,
}

#[derive(Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub(super) struct TripResults {
    /// One per trip × hotel × travel date, by start date, then "ab" price.
    pub(super) results: Vec<TripResult>,
    /// All matches (results shows the first `limit`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(super) total: Option<usize>,
    /// When the booking data was exported: prices and availability are a snapshot of then.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(super) data_as_of: Option<String>,
}

#[derive(Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub(super) struct TripResult {
    /// The trip's code (for get_trip).
    pub(super) code: String,
    pub(super) title: String,
    pub(super) date_code: String,
    pub(super) start: NaiveDate,
    pub(super) end: NaiveDate,
    pub(super) nights: i64,
    pub(super) hotel_code: String,
    pub(super) hotel: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(super) accommodation: Option<&'static str>,
    /// "ab" price per person in EUR: the cheapest bookable room with places left, else the
    /// cheapest bookable room.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(super) price_from: Option<f64>,
    /// "frei" or "auf Anfrage".
    pub(super) availability: &'static str,
    pub(super) room_types: Vec<&'static str>,
    /// The board offers (selection group 71); `[]` when the date lists none. Arrays the schema
    /// requires are always present: clients validate results against it.
    pub(super) board: Vec<String>,
    pub(super) inclusions: Vec<String>,
    /// Destination, most specific first ("Val Thorens › Les 3 Vallées › Frankreich").
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(super) destination: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(super) concept: Option<String>,
    /// The trip's page: cite it; only the booking there is binding.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(super) url: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(super) site: Option<String>,
}

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub(super) struct GetTrip {
    /// The trip code ("SSLMP"): all upcoming dates.
    #[schemars(length(min = 1, max = 20))]
    pub(super) code: Option<String>,
    /// One date by its date code ("SSLMP061226").
    #[schemars(length(min = 1, max = 30))]
    pub(super) date_code: Option<String>,
    /// Only this hotel (code or alias).
    #[schemars(length(min = 1, max = 20))]
    pub(super) hotel_code: Option<String>,
}

#[derive(Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub(super) struct TripDetails {
    /// One per TYPO3 product with the code (several products may share one).
    pub(super) results: Vec<TripDetail>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(super) data_as_of: Option<String>,
}

#[derive(Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub(super) struct TripDetail {
    pub(super) code: String,
    pub(super) title: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(super) url: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(super) site: Option<String>,
    /// Whether the site's own search lists it (closed group trips and trainings do not).
    pub(super) searchable: bool,
    pub(super) bookable: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(super) destination: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(super) concept: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(super) teaser: Option<String>,
    /// Editorial description with FAQs (Markdown); dates, prices, pickups and inclusions below
    /// override it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(super) description: Option<String>,
    pub(super) hotels: Vec<HotelDetail>,
    /// Upcoming dates (or the one asked for), with bookable rooms.
    pub(super) dates: Vec<DateDetail>,
}

#[derive(Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub(super) struct HotelDetail {
    pub(super) hotel_code: String,
    pub(super) name: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(super) accommodation: Option<&'static str>,
    /// Beds, altitude, distances, sauna, wifi, … (no prices).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(super) facts: Option<Value>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(super) url: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(super) description: Option<String>,
}

#[derive(Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub(super) struct DateDetail {
    pub(super) date_code: String,
    pub(super) start: NaiveDate,
    pub(super) end: NaiveDate,
    pub(super) nights: i64,
    pub(super) hotels: Vec<DateHotel>,
    pub(super) inclusions: Vec<String>,
    /// Whether an outbound bus can be booked.
    pub(super) bus: bool,
    /// Pickup points with per-person surcharges (listed for the first three dates).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(super) pickups: Option<Vec<PickupDetail>>,
}

#[derive(Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub(super) struct DateHotel {
    pub(super) hotel_code: String,
    pub(super) hotel: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(super) price_from: Option<f64>,
    pub(super) availability: &'static str,
    pub(super) rooms: Vec<RoomDetail>,
}

#[derive(Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub(super) struct RoomDetail {
    pub(super) label: String,
    pub(super) room_type: &'static str,
    /// Per person in EUR.
    pub(super) price: f64,
    /// "frei" or "auf Anfrage".
    pub(super) availability: &'static str,
}

#[derive(Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub(super) struct PickupDetail {
    pub(super) place: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(super) time: Option<String>,
    /// Per person, outbound leg, EUR.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(super) surcharge_outbound: Option<f64>,
    /// Per person, return leg, EUR; absent where the point is not served on the way back.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(super) surcharge_return: Option<f64>,
    /// Both legs together, per person.
    pub(super) surcharge_round_trip: f64,
}
