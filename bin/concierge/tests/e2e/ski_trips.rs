//! The trip catalog's rules (seed "Trip rules", `TravelDateFacts`, `NameQuery`, "Trips only"),
//! one test each, on the sample data, through both ski endpoints with a real MCP client. The
//! sample export (`examples/ski/export/products.json`) is read here too, as the oracle for what
//! the tools may and may not show.
//!
//! Over 600 lines: one area's end-to-end scenarios (the seed's many exact search rules); each test reads alone.

use crate::common;

use std::collections::BTreeSet;
use std::sync::OnceLock;

use common::ski::{TOKEN, ski_server};
use common::{Client, Server, call, connect, examples, structured};
use serde_json::{Value, json};

fn export() -> &'static Value {
    static EXPORT: OnceLock<Value> = OnceLock::new();
    EXPORT.get_or_init(|| {
        serde_json::from_str(
            &std::fs::read_to_string(examples().join("ski/export/products.json")).unwrap(),
        )
        .unwrap()
    })
}

/// The export's entry for a date and hotel code.
fn export_hotel(date_code: &str, hotel_code: &str) -> Value {
    for product in export()["products"].as_array().unwrap() {
        for date in product["dates"].as_array().unwrap() {
            if date["dateCode"] == date_code {
                for hotel in date["hotels"].as_array().unwrap() {
                    if hotel["hotelCode"] == hotel_code {
                        return hotel.clone();
                    }
                }
            }
        }
    }
    panic!("no {date_code}/{hotel_code} in the export")
}

async fn full(server: &Server) -> Client {
    connect(&server.url("/ski/mcp"), TOKEN).await
}

async fn trips_only(server: &Server) -> Client {
    connect(&server.url("/ski/mcp/trips"), TOKEN).await
}

async fn search(client: &Client, arguments: Value) -> Value {
    let result = call(client, "search_trips", arguments.clone()).await;
    assert_ne!(result.is_error, Some(true), "{arguments}: {result:?}");
    structured(&result)
}

fn results(value: &Value) -> Vec<Value> {
    value["results"].as_array().cloned().unwrap_or_default()
}

fn strings(rows: &[Value], key: &str) -> BTreeSet<String> {
    rows.iter()
        .filter_map(|r| r[key].as_str().map(str::to_string))
        .collect()
}

fn error_text(result: &rmcp::model::CallToolResult) -> String {
    assert_eq!(result.is_error, Some(true), "{result:?}");
    serde_json::to_string(&result.content).unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn default_search_lists_upcoming_bookable_trips_by_date_then_price() {
    let server = ski_server().await;
    let client = full(&server).await;
    let found = search(&client, json!({})).await;
    let rows = results(&found);
    assert_eq!(rows.len(), 10);
    assert!(found["total"].as_u64().unwrap() > 100, "{}", found["total"]);
    assert_eq!(found["dataAsOf"], "2026-11-30T21:55:00+01:00");
    let keys: Vec<(String, f64)> = rows
        .iter()
        .map(|r| {
            (
                r["start"].as_str().unwrap().to_string(),
                r["priceFrom"].as_f64().unwrap_or(f64::MAX),
            )
        })
        .collect();
    let mut sorted = keys.clone();
    sorted.sort_by(|a, b| a.partial_cmp(b).unwrap());
    assert_eq!(keys, sorted, "by start date, then ab price");
    assert!(keys.iter().all(|(start, _)| start.as_str() >= "2026-11-30"));

    let all = results(&search(&client, json!({"limit": 25})).await);
    assert_eq!(all.len(), 25);
    let over = call(&client, "search_trips", json!({"limit": 26})).await;
    assert!(error_text(&over).contains("limit"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn closed_and_unbookable_trips_are_not_offered_but_get_trip_answers_them() {
    let server = ski_server().await;
    let client = full(&server).await;
    for code in ["SGGER", "SZTDA", "SBWSF"] {
        let found = search(&client, json!({"query": code})).await;
        assert_eq!(found, json!({"results": []}), "{code}");
    }
    let closed = structured(&call(&client, "get_trip", json!({"code": "SGGER"})).await);
    let trip = &results(&closed)[0];
    assert_eq!(trip["searchable"], false);
    assert!(!trip["dates"].as_array().unwrap().is_empty());
    // SZTDA has three past dates of five: only upcoming ones are shown.
    let training = structured(&call(&client, "get_trip", json!({"code": "SZTDA"})).await);
    let dates = results(&training)[0]["dates"].as_array().unwrap().clone();
    assert_eq!(dates.len(), 2, "{dates:?}");
    assert!(
        dates
            .iter()
            .all(|d| d["start"].as_str().unwrap() >= "2026-11-30")
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn products_sharing_a_code_are_each_their_own_trip() {
    let server = ski_server().await;
    let client = full(&server).await;
    let rows = results(&search(&client, json!({"query": "SSLMP", "limit": 25})).await);
    let titles = strings(&rows, "title");
    assert_eq!(titles.len(), 2, "{titles:?}");
    assert!(rows.iter().all(|r| r["code"] == "SSLMP"));
    let detail = structured(&call(&client, "get_trip", json!({"code": "sslmp"})).await);
    assert_eq!(results(&detail).len(), 2);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_code_that_is_one_hotels_own_and_anothers_alias_means_its_owner() {
    let server = ski_server().await;
    let client = full(&server).await;
    let rows = results(&search(&client, json!({"query": "VTCHA", "limit": 25})).await);
    assert!(!rows.is_empty());
    assert_eq!(
        strings(&rows, "hotel"),
        BTreeSet::from(["Résidence Val Chavière".to_string()])
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn hotels_show_typo3_titles_and_buspro_names_only_for_hotels_typo3_lacks() {
    let server = ski_server().await;
    let client = full(&server).await;
    let rows = results(&search(&client, json!({"query": "Edelweiss", "limit": 25})).await);
    let hotels = strings(&rows, "hotel");
    assert!(
        hotels.contains("Vacanceole Résidence L'Edelweiss"),
        "{hotels:?}"
    );
    // BusPro's internal wording of a TYPO3 hotel is searchable but never shown.
    let lederer = results(&search(&client, json!({"query": "Wochenenden und Kurztrips"})).await);
    assert!(!lederer.is_empty());
    assert!(
        lederer.iter().all(|r| r["hotel"] == "Sportclub Lederer"),
        "{lederer:?}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_hotel_name_selects_that_hotels_dates_only() {
    let server = ski_server().await;
    let client = full(&server).await;
    for query in ["LEDER", "LEDWO"] {
        let rows = results(&search(&client, json!({"query": query, "limit": 25})).await);
        assert!(!rows.is_empty(), "{query}");
        assert!(
            rows.iter().all(|r| r["hotel"] == "Sportclub Lederer"),
            "{query}: {rows:?}"
        );
    }
    let chaviere = results(&search(&client, json!({"query": "Chaviere", "limit": 25})).await);
    assert!(!chaviere.is_empty());
    assert!(
        chaviere
            .iter()
            .all(|r| r["hotel"] == "Résidence Val Chavière"),
        "{chaviere:?}"
    );
    // "Lederer" is a prefix of the hotel's name and of a product's ("… – Sportclub Lederer"):
    // both match in one step, so the hotel's dates and all of that product's come back.
    let lederer = results(&search(&client, json!({"query": "Lederer", "limit": 25})).await);
    assert!(
        lederer.iter().all(|r| r["hotel"] == "Sportclub Lederer"
            || r["title"].as_str().unwrap().contains("Lederer"))
    );
    assert!(lederer.iter().any(|r| r["hotel"] != "Sportclub Lederer"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_date_code_selects_its_date() {
    let server = ski_server().await;
    let client = full(&server).await;
    let rows = results(&search(&client, json!({"query": "SSLMP061226"})).await);
    assert!(!rows.is_empty());
    assert!(rows.iter().all(|r| r["dateCode"] == "SSLMP061226"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn matches_of_one_step_are_combined() {
    let server = ski_server().await;
    let client = full(&server).await;
    let austria = search(&client, json!({"query": "Österreich"})).await["total"]
        .as_u64()
        .unwrap();
    let sportclub = search(&client, json!({"query": "Sportclub"})).await["total"]
        .as_u64()
        .unwrap();
    let both = search(&client, json!({"query": "Österreich Sportclub"})).await["total"]
        .as_u64()
        .unwrap();
    assert!(
        both >= austria.max(sportclub) && both <= austria + sportclub,
        "{austria} {sportclub} {both}"
    );
    assert_eq!(
        search(&client, json!({"query": "Oesterreich"})).await["total"]
            .as_u64()
            .unwrap(),
        austria
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_name_spelled_out_among_other_words_the_most_specific_kind_wins() {
    let server = ski_server().await;
    let client = full(&server).await;
    let rows = results(
        &search(
            &client,
            json!({"query": "Hotel Chamois d'Or in Val Thorens", "limit": 25}),
        )
        .await,
    );
    assert!(!rows.is_empty());
    assert_eq!(
        strings(&rows, "hotel"),
        BTreeSet::from(["Hotel Chamois d'Or".to_string()])
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn page_texts_are_the_last_resort_and_trips_only_still_uses_them() {
    let server = ski_server().await;
    for client in [full(&server).await, trips_only(&server).await] {
        let rows = results(&search(&client, json!({"query": "Radsportfans", "limit": 25})).await);
        assert!(!rows.is_empty());
        assert!(
            rows.iter().all(|r| r["code"] == "SBWAH"
                || r["destination"].as_str().unwrap().contains("Alpe d'Huez")),
            "{rows:?}"
        );
        let text = serde_json::to_string(&rows).unwrap();
        assert!(
            !text.contains("Radsportfans"),
            "page text must not be returned"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn country_and_concept_narrow_and_unknown_names_are_explained() {
    let server = ski_server().await;
    let client = full(&server).await;
    let rows = results(&search(&client, json!({"country": "Österreich", "limit": 25})).await);
    assert!(
        !rows.is_empty()
            && rows
                .iter()
                .all(|r| r["destination"].as_str().unwrap().ends_with("Österreich"))
    );
    let rows = results(
        &search(
            &client,
            json!({"concept": "Boarderweek", "query": "Val Thorens"}),
        )
        .await,
    );
    assert!(!rows.is_empty() && rows.iter().all(|r| r["concept"] == "Boarderweek"));
    let unknown = call(&client, "search_trips", json!({"country": "Atlantis"})).await;
    let text = error_text(&unknown);
    assert!(
        text.contains("country") && text.contains("Frankreich"),
        "{text}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn travel_dates_match_by_containment_and_periods_come_from_config() {
    let server = ski_server().await;
    let client = full(&server).await;
    let rows = results(
        &search(
            &client,
            json!({"dateFrom": "2026-12-10", "dateTo": "2026-12-20", "limit": 25}),
        )
        .await,
    );
    assert!(!rows.is_empty());
    assert!(
        rows.iter()
            .all(|r| r["start"].as_str().unwrap() >= "2026-12-10"
                && r["end"].as_str().unwrap() <= "2026-12-20")
    );

    let rows = results(
        &search(
            &client,
            json!({"period": "Weihnachten & Silvester", "limit": 25}),
        )
        .await,
    );
    assert!(!rows.is_empty());
    assert!(
        rows.iter()
            .all(|r| r["start"].as_str().unwrap() >= "2026-12-19"
                && r["end"].as_str().unwrap() <= "2027-01-06")
    );

    // The expired period is not offered: not in the schema's enum, refused with the offered ones.
    let tools = client.list_all_tools().await.expect("tools");
    let schema = serde_json::to_value(
        &tools
            .iter()
            .find(|t| t.name == "search_trips")
            .unwrap()
            .input_schema,
    )
    .unwrap();
    assert_eq!(
        schema["properties"]["period"]["enum"],
        json!(["Weihnachten & Silvester"])
    );
    let expired = call(
        &client,
        "search_trips",
        json!({"period": "Herbst auf dem Gletscher"}),
    )
    .await;
    assert!(error_text(&expired).contains("period"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn persons_needs_a_room_for_a_group_that_small_and_enough_places() {
    let server = ski_server().await;
    let client = full(&server).await;
    for persons in [1u64, 10] {
        let rows = results(&search(&client, json!({"persons": persons, "limit": 25})).await);
        assert!(!rows.is_empty());
        for row in rows {
            let hotel = export_hotel(
                row["dateCode"].as_str().unwrap(),
                row["hotelCode"].as_str().unwrap(),
            );
            let bookable: Vec<&Value> = hotel["rooms"]
                .as_array()
                .unwrap()
                .iter()
                .filter(|r| r["code"] != "Baby" && r["status"] != "Buchungsstop")
                .collect();
            let places: u64 = bookable
                .iter()
                .map(|r| r["available"].as_u64().unwrap() * r["maxPax"].as_u64().unwrap())
                .sum();
            let smallest = bookable
                .iter()
                .map(|r| r["minPax"].as_u64().unwrap())
                .min()
                .unwrap();
            assert!(smallest <= persons && places >= persons, "{row}");
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_ab_price_is_the_cheapest_bookable_room_with_places_else_the_cheapest_bookable() {
    let server = ski_server().await;
    let client = full(&server).await;
    let rows = results(&search(&client, json!({"limit": 25, "dateFrom": "2027-01-01"})).await);
    for row in rows {
        let hotel = export_hotel(
            row["dateCode"].as_str().unwrap(),
            row["hotelCode"].as_str().unwrap(),
        );
        let bookable: Vec<&Value> = hotel["rooms"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|r| r["code"] != "Baby" && r["status"] != "Buchungsstop")
            .collect();
        let price = |rooms: Vec<&&Value>| {
            rooms
                .iter()
                .map(|r| r["price"].as_f64().unwrap())
                .reduce(f64::min)
        };
        let with_places = price(
            bookable
                .iter()
                .filter(|r| r["available"].as_u64().unwrap() > 0)
                .collect(),
        );
        let expected = with_places.or_else(|| price(bookable.iter().collect()));
        assert_eq!(row["priceFrom"].as_f64(), expected, "{row}");
        let free = with_places.is_some();
        assert_eq!(
            row["availability"],
            if free { "frei" } else { "auf Anfrage" }
        );
    }
    let cheap = results(
        &search(
            &client,
            json!({"priceMin": 200, "priceMax": 400, "limit": 25}),
        )
        .await,
    );
    assert!(!cheap.is_empty());
    assert!(
        cheap
            .iter()
            .all(|r| (200.0..=400.0).contains(&r["priceFrom"].as_f64().unwrap()))
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sold_out_dates_are_auf_anfrage_and_room_counts_never_shown() {
    let server = ski_server().await;
    let client = full(&server).await;
    let rows = results(&search(&client, json!({"query": "SXISP271226"})).await);
    assert!(!rows.is_empty());
    assert!(rows.iter().all(|r| r["availability"] == "auf Anfrage"));
    let detail = structured(&call(&client, "get_trip", json!({"dateCode": "SXISP271226"})).await);
    let text = serde_json::to_string(&detail).unwrap();
    assert!(
        !text.contains("\"available\"") && !text.contains("maxPax"),
        "{text}"
    );
    for room in detail["results"][0]["dates"][0]["hotels"][0]["rooms"]
        .as_array()
        .unwrap()
    {
        assert!(room["availability"] == "frei" || room["availability"] == "auf Anfrage");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn room_types_accommodation_board_inclusions_bus_and_length_filter() {
    let server = ski_server().await;
    let client = full(&server).await;
    for room_type in ["9er+", "mit anderen", "2er"] {
        let rows = results(&search(&client, json!({"roomType": room_type, "limit": 25})).await);
        assert!(!rows.is_empty(), "{room_type}");
        assert!(rows.iter().all(|r| {
            r["roomTypes"]
                .as_array()
                .unwrap()
                .contains(&json!(room_type))
        }));
    }
    let rows = results(&search(&client, json!({"accommodation": "Pension", "limit": 25})).await);
    assert!(!rows.is_empty() && rows.iter().all(|r| r["accommodation"] == "Pension"));

    // Board by word against any item: SKOGP's first item is breakfast, its second dinner.
    let rows = results(&search(&client, json!({"board": "Abendessen", "query": "SKOGP"})).await);
    assert!(!rows.is_empty());
    assert!(rows.iter().all(|r| {
        r["board"]
            .as_array()
            .unwrap()
            .iter()
            .any(|b| b.as_str().unwrap().contains("Abendessen"))
    }));

    let rows = results(
        &search(
            &client,
            json!({"includes": ["Skipass", "Busanreise"], "limit": 25}),
        )
        .await,
    );
    assert!(!rows.is_empty());
    for row in &rows {
        let inclusions = row["inclusions"].as_array().unwrap();
        assert!(
            inclusions
                .iter()
                .any(|i| i.as_str().unwrap().starts_with("Skipass: "))
        );
        assert!(inclusions.contains(&json!("Busanreise")));
    }
    let no_skipass = search(&client, json!({"includes": ["Skipass"], "query": "SSVTO"})).await;
    assert_eq!(no_skipass, json!({"results": []}));

    // The outbound bus is not bookable on SBWLX130227.
    assert!(!results(&search(&client, json!({"query": "SBWLX130227"})).await).is_empty());
    assert_eq!(
        search(&client, json!({"query": "SBWLX130227", "bus": true})).await,
        json!({"results": []})
    );

    for (length, ok) in [("short", 0..=4), ("long", 5..=99)] {
        let rows = results(&search(&client, json!({"length": length, "limit": 25})).await);
        assert!(!rows.is_empty());
        assert!(
            rows.iter()
                .all(|r| ok.contains(&r["nights"].as_i64().unwrap())),
            "{length}"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn get_trip_shows_hotels_dates_bookable_rooms_and_three_dates_of_pickups() {
    let server = ski_server().await;
    let client = full(&server).await;
    // The searchable trip with the most upcoming dates.
    let code = export()["products"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|p| !["SGGER", "SZTDA", "SBWSF", "SWKAP"].contains(&p["code"].as_str().unwrap()))
        .max_by_key(|p| {
            p["dates"]
                .as_array()
                .unwrap()
                .iter()
                .filter(|d| d["start"].as_str().unwrap() >= "2026-11-30")
                .count()
        })
        .unwrap()["code"]
        .clone();
    let detail = structured(&call(&client, "get_trip", json!({"code": code})).await);
    let trip = &results(&detail)[0];
    assert!(
        trip["description"]
            .as_str()
            .unwrap()
            .contains("Häufige Fragen")
    );
    assert!(
        trip["hotels"]
            .as_array()
            .unwrap()
            .iter()
            .any(|h| h["facts"].is_object())
    );
    let dates = trip["dates"].as_array().unwrap();
    assert!(dates.len() > 3);
    for (n, date) in dates.iter().enumerate() {
        assert_eq!(
            date["pickups"].is_array(),
            n < 3,
            "pickups only for the first three dates"
        );
        for hotel in date["hotels"].as_array().unwrap() {
            let export = export_hotel(
                date["dateCode"].as_str().unwrap(),
                hotel["hotelCode"].as_str().unwrap(),
            );
            let bookable = export["rooms"]
                .as_array()
                .unwrap()
                .iter()
                .filter(|r| r["code"] != "Baby" && r["status"] != "Buchungsstop")
                .count();
            assert_eq!(hotel["rooms"].as_array().unwrap().len(), bookable);
        }
    }
    // Pickup surcharges per leg: unpriced legs are 0, a point not served back has no return.
    let mut saw_unpriced = false;
    let mut saw_one_way = false;
    for date in &dates[..3] {
        for pickup in date["pickups"].as_array().unwrap() {
            let out = pickup["surchargeOutbound"].as_f64().unwrap_or(0.0);
            let back = pickup.get("surchargeReturn").and_then(Value::as_f64);
            assert_eq!(
                pickup["surchargeRoundTrip"].as_f64().unwrap(),
                out + back.unwrap_or(0.0)
            );
            saw_unpriced |= pickup["surchargeOutbound"] == json!(0.0);
            saw_one_way |= back.is_none();
        }
    }
    assert!(
        saw_unpriced && saw_one_way,
        "the sample has both kinds of pickup in {code}'s first dates"
    );

    let first_hotel = export()["products"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|p| p["dates"].as_array().unwrap())
        .find(|d| d["dateCode"] == "SSLMP061226")
        .unwrap()["hotels"][0]["hotelCode"]
        .clone();
    let one = structured(
        &call(
            &client,
            "get_trip",
            json!({"dateCode": "SSLMP061226", "hotelCode": first_hotel}),
        )
        .await,
    );
    let trip = &results(&one)[0];
    let dates = trip["dates"].as_array().unwrap();
    assert_eq!(dates.len(), 1);
    let hotels = dates[0]["hotels"].as_array().unwrap();
    assert!(!hotels.is_empty() && hotels.iter().all(|h| h["hotelCode"] == first_hotel));

    let missing = call(&client, "get_trip", json!({"code": "XXXXX"})).await;
    assert!(error_text(&missing).contains("search_trips"));
    let nothing = call(&client, "get_trip", json!({})).await;
    assert!(error_text(&nothing).contains("code"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_trips_only_endpoint_has_two_tools_and_no_editorial_text() {
    let server = ski_server().await;
    let client = trips_only(&server).await;
    let tools = client.list_all_tools().await.expect("tools");
    let names: BTreeSet<String> = tools.iter().map(|t| t.name.to_string()).collect();
    assert_eq!(
        names,
        BTreeSet::from(["get_trip".to_string(), "search_trips".to_string()])
    );
    let detail = structured(&call(&client, "get_trip", json!({"code": "SSLMP"})).await);
    let trip = &results(&detail)[0];
    assert!(trip.get("description").is_none() && trip.get("teaser").is_none());
    assert!(
        trip["hotels"]
            .as_array()
            .unwrap()
            .iter()
            .all(|h| h.get("description").is_none())
    );
    assert!(
        trip["hotels"]
            .as_array()
            .unwrap()
            .iter()
            .any(|h| h["facts"].is_object())
    );
    assert!(trip["url"].as_str().unwrap().starts_with("https://"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn no_output_carries_the_guide_or_a_buspro_id() {
    let server = ski_server().await;
    let mut secrets: BTreeSet<String> = BTreeSet::new();
    for product in export()["products"].as_array().unwrap() {
        secrets.insert(product["guide"]["name"].as_str().unwrap().to_string());
        secrets.insert(product["guide"]["phone"].as_str().unwrap().to_string());
    }
    let mut outputs = Vec::new();
    for client in [full(&server).await, trips_only(&server).await] {
        outputs.push(search(&client, json!({"limit": 25})).await);
        outputs.push(search(&client, json!({"query": "Lederer", "limit": 25})).await);
        for product in export()["products"].as_array().unwrap() {
            let result = call(&client, "get_trip", json!({"code": product["code"]})).await;
            outputs.push(serde_json::to_value(&result.content).unwrap());
        }
    }
    let text = serde_json::to_string(&outputs).unwrap();
    for key in [
        "guide",
        "busproId",
        "busproHotelId",
        "busproRoomId",
        "\"available\"",
    ] {
        assert!(!text.contains(key), "{key} in an output");
    }
    for secret in secrets {
        assert!(!text.contains(&secret), "{secret} in an output");
    }
    let ids: BTreeSet<String> = export()["products"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|p| {
            p["dates"]
                .as_array()
                .unwrap()
                .iter()
                .map(|d| format!(":{}", d["busproId"]))
        })
        .collect();
    assert!(
        ids.iter().all(|id| !text.contains(id.as_str())),
        "a date's BusPro id in an output"
    );
}

/// n8n before 2.2.5, behind a Chat Trigger (the seed's own client), adds `toolCallId`, `action`,
/// `sessionId` and `chatInput` to every tool call: every tool of both endpoints still answers.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_argument_sets_of_n8n_2_1_4_behind_a_chat_trigger_are_answered() {
    let server = ski_server().await;
    let n8n = |own: Value| {
        let mut all = own.as_object().cloned().unwrap();
        all.insert("toolCallId".into(), json!("call_QxQ2x8v1"));
        all.insert("action".into(), json!("sendMessage"));
        all.insert("sessionId".into(), json!("3f0c2a4e9b7d4c1e8a6f"));
        all.insert(
            "chatInput".into(),
            json!("Gibt es Skireisen nach Les Menuires?"),
        );
        Value::Object(all)
    };
    for client in [full(&server).await, trips_only(&server).await] {
        let tools: Vec<String> = client
            .list_all_tools()
            .await
            .expect("tools")
            .into_iter()
            .map(|t| t.name.to_string())
            .collect();
        for tool in &tools {
            let own = match tool.as_str() {
                "search_trips" => json!({"query": "Les Menuires"}),
                "get_trip" => json!({"code": "SSLMP"}),
                "search_content" => json!({"query": "Skipass"}),
                "get_document" => {
                    json!({"url": "https://www.ski-boarderweek.de/reisen/frankreich/les-menuires-skiopening/"})
                }
                other => panic!("a tool this test does not know: {other}"),
            };
            let result = call(&client, tool, n8n(own)).await;
            assert_ne!(result.is_error, Some(true), "{tool}: {result:?}");
            assert!(!structured(&result).is_null(), "{tool}");
        }
    }
    // Dropped for the audit too: `chatInput` is the person's own words.
    let lines = server.audit_lines(6);
    let calls: Vec<&Value> = lines.iter().filter(|l| l["tool"].is_string()).collect();
    assert_eq!(calls.len(), 6, "{lines:?}");
    for line in calls {
        let arguments = line["arguments"].as_object().expect("arguments");
        for injected in ["toolCallId", "action", "sessionId", "chatInput"] {
            assert!(!arguments.contains_key(injected), "{line}");
        }
        assert!(
            !arguments.is_empty(),
            "the tool's own arguments stay: {line}"
        );
    }
}
