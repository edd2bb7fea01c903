//! The trip tools: `search_trips` and `get_trip` (with its trips-only variant, which leaves out
//! the editorial descriptions), over the [`TripCatalog`]. By area: [`schema`] is what the model
//! sees (arguments and results), [`search`] answers `search_trips`, [`detail`] answers
//! `get_trip`; here are the tools themselves and what both answers share.

mod detail;
mod schema;
mod search;

use std::sync::Arc;

use chrono::NaiveDate;
use concierge_core::{Annotations, CallContext, Tool, ToolError, typed_tool, with_spec};
use serde::Deserialize;
use serde_json::json;

use crate::catalog::TripCatalog;
use crate::catalog::load::{CatalogHandle, NotReady};
use crate::content::search::ContentIndex;
use schema::{GetTrip, SearchTrips};

pub const DEFAULT_LIMIT: usize = 10;
pub const MAX_LIMIT: usize = 25;
/// Dates whose pickups `get_trip` lists.
const PICKUP_DATES: usize = 3;
/// Page-text hits consulted by the last `query` step.
const PAGE_TEXT_HITS: usize = 50;

/// One of the site's travel period presets (`chatbot_travel_periods`).
#[derive(Debug, Clone, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Period {
    /// What the customer calls it ("Fasching", "Ostern"): the name a question may use.
    pub name: String,
    /// Its first day.
    pub from: NaiveDate,
    /// Its last day.
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
                    search::search_trips(&catalog, &index, &settings, input).await
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
                async move { detail::get_trip(&*current(&catalog).await?, &settings, input, editorial) }
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

/// Where a trip goes, most specific first ("Val Thorens › Les 3 Vallées › Frankreich"): both
/// answers name it the same way.
fn destination(catalog: &TripCatalog, trip: &crate::catalog::Trip) -> Option<String> {
    let first = *trip.destinations.first()?;
    Some(catalog.place_path(first).join(" › "))
}
