//! The booking system's product export and BusPro's `hotel.xml`, as
//! `docs/contracts/ski-product-export.md` defines them. Internal fields (the guide, every BusPro
//! id) are read because they are there, and go no further than this module's types.

use std::cell::RefCell;
use std::collections::{HashMap, HashSet};
use std::sync::Arc;

use chrono::NaiveDate;
use serde::Deserialize;

#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Export {
    pub generated_at: String,
    pub products: Vec<ExportProduct>,
}

#[derive(Debug, Clone, Deserialize)]
pub struct ExportProduct {
    pub code: String,
    /// Shared with the catalog's [`TravelDate`](super::TravelDate)s, which keep them whole.
    #[serde(default, deserialize_with = "shared")]
    pub dates: Vec<Arc<ExportDate>>,
}

fn shared<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Vec<Arc<ExportDate>>, D::Error> {
    let dates: Vec<ExportDate> = Deserialize::deserialize(d)?;
    Ok(dates.into_iter().map(Arc::new).collect())
}

#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ExportDate {
    pub date_code: String,
    pub start: NaiveDate,
    pub end: NaiveDate,
    #[serde(default)]
    pub hotels: Vec<ExportHotel>,
    #[serde(default)]
    pub selections: Vec<Selection>,
    #[serde(default)]
    pub buses: Vec<Bus>,
    #[serde(default)]
    pub pickups: Vec<Pickup>,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ExportHotel {
    #[serde(deserialize_with = "interned")]
    pub hotel_code: Arc<str>,
    /// Joins BusPro's `hotel.xml`; never output.
    #[serde(default)]
    pub buspro_hotel_id: Option<u64>,
    #[serde(default)]
    pub rooms: Vec<Room>,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Room {
    /// `code` is [`BABY`]: the infant row, a surcharge line rather than a room. The code is read
    /// for this alone, so it is compared while parsing instead of kept (a string less for each
    /// of the export's rooms: a million and a half in a large one).
    #[serde(rename = "code", deserialize_with = "is_baby")]
    pub infant: bool,
    /// Shared with every room of the same label, as are the export's other repeated texts
    /// (hotel codes, selections, buses, pickup places): a large export holds a million and a
    /// half of them and a few hundred distinct ones, so one allocation each.
    #[serde(default, deserialize_with = "interned")]
    pub label: Arc<str>,
    /// `status` is [`BUCHUNGSSTOP`].
    #[serde(default, rename = "status", deserialize_with = "is_buchungsstop")]
    pub stopped: bool,
    #[serde(default)]
    pub available: u32,
    #[serde(default)]
    pub min_pax: u32,
    #[serde(default)]
    pub max_pax: u32,
    #[serde(default)]
    pub price: f64,
}

pub const BUCHUNGSSTOP: &str = "Buchungsstop";
pub const BABY: &str = "Baby";

fn is_baby<'de, D: serde::Deserializer<'de>>(d: D) -> Result<bool, D::Error> {
    d.deserialize_str(TextIs(BABY))
}

fn is_buchungsstop<'de, D: serde::Deserializer<'de>>(d: D) -> Result<bool, D::Error> {
    d.deserialize_str(TextIs(BUCHUNGSSTOP))
}

/// The interning table's hasher: foldhash, not std's SipHash, which took a tenth of a large
/// export's parse for its million and a half lookups. The export is the operator's own data.
type Labels = HashSet<Arc<str>, foldhash::fast::RandomState>;

thread_local! {
    /// The repeated texts met during one [`Export::parse`] on this thread; emptied when it ends.
    static LABELS: RefCell<Labels> = RefCell::new(Labels::default());
}

fn interned<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Arc<str>, D::Error> {
    d.deserialize_str(Interned)
}

/// A string, as the one copy of it this parse keeps.
struct Interned;

impl serde::de::Visitor<'_> for Interned {
    type Value = Arc<str>;

    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("a string")
    }

    fn visit_str<E: serde::de::Error>(self, value: &str) -> Result<Arc<str>, E> {
        Ok(LABELS.with(|labels| {
            let mut labels = labels.borrow_mut();
            match labels.get(value) {
                Some(label) => label.clone(),
                None => {
                    let label: Arc<str> = value.into();
                    labels.insert(label.clone());
                    label
                }
            }
        }))
    }
}

/// Whether a string is the one given, read without keeping it.
struct TextIs(&'static str);

impl serde::de::Visitor<'_> for TextIs {
    type Value = bool;

    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("a string")
    }

    fn visit_str<E: serde::de::Error>(self, value: &str) -> Result<bool, E> {
        Ok(value == self.0)
    }
}

impl Room {
    /// The infant row is a surcharge line, not a room.
    pub fn is_room(&self) -> bool {
        !self.infant
    }

    pub fn is_bookable(&self) -> bool {
        self.is_room() && !self.stopped
    }

    /// `available` counts rooms; a room sleeps `maxPax`.
    pub fn places(&self) -> u32 {
        self.available.saturating_mul(self.max_pax)
    }
}

#[derive(Debug, Clone, Deserialize)]
pub struct Selection {
    pub group: u32,
    #[serde(default, deserialize_with = "interned")]
    pub label: Arc<str>,
    #[serde(default)]
    pub items: Vec<SelectionItem>,
}

#[derive(Debug, Clone, Deserialize)]
pub struct SelectionItem {
    #[serde(deserialize_with = "interned")]
    pub label: Arc<str>,
    #[serde(default)]
    pub price: f64,
}

#[derive(Debug, Clone, Deserialize)]
pub struct Bus {
    #[serde(deserialize_with = "interned")]
    pub direction: Arc<str>,
    #[serde(default, deserialize_with = "interned")]
    pub label: Arc<str>,
    #[serde(default = "yes")]
    pub bookable: bool,
    #[serde(default)]
    pub price: f64,
}

fn yes() -> bool {
    true
}

#[derive(Debug, Clone, Deserialize)]
pub struct Pickup {
    #[serde(deserialize_with = "interned")]
    pub place: Arc<str>,
    #[serde(default)]
    pub time: Option<String>,
    #[serde(default)]
    pub outbound: Option<Leg>,
    #[serde(default, rename = "return")]
    pub back: Option<Leg>,
}

/// A leg a pickup point serves; without a price it costs nothing (BusPro bills priced legs only).
#[derive(Debug, Clone, Deserialize)]
pub struct Leg {
    #[serde(default)]
    pub price: Option<f64>,
}

impl Export {
    pub fn parse(body: &[u8]) -> Result<Self, String> {
        // One UTF-8 check of the whole body, then serde_json's reader of a `str`, which trusts
        // it: reading from bytes, it checks every string again as it meets it. Measured on the
        // benchmark's 141 MB export, one core: 470 → 375 ms for the parse.
        let text = std::str::from_utf8(body)
            .map_err(|e| format!("the product export is not UTF-8: {e}"))?;
        let parsed = serde_json::from_str::<Export>(text);
        // The labels stay with the rooms that hold them; the table of them is this parse's only.
        LABELS.with(|labels| *labels.borrow_mut() = Labels::default());
        let export =
            parsed.map_err(|e| format!("the product export is not the contract's: {e}"))?;
        if export.products.is_empty() {
            return Err("the product export lists no products".into());
        }
        for product in &export.products {
            for date in &product.dates {
                if date.end < date.start {
                    return Err(format!("{}: ends before it starts", date.date_code));
                }
            }
        }
        Ok(export)
    }
}

/// BusPro's own hotel names, by hotel id, and the matchcodes it books them under.
#[derive(Debug, Clone, Default)]
pub struct BusproHotels {
    pub by_id: HashMap<u64, BusproHotel>,
}

#[derive(Debug, Clone)]
pub struct BusproHotel {
    pub name: String,
    pub matchcodes: Vec<String>,
}

impl BusproHotels {
    pub fn parse(xml: &str) -> Result<Self, String> {
        let document =
            roxmltree::Document::parse(xml).map_err(|e| format!("hotel.xml is not XML: {e}"))?;
        let mut by_id = HashMap::new();
        for hotel in document.descendants().filter(|n| n.has_tag_name("hotel")) {
            let Some(id) = hotel.attribute("id").and_then(|i| i.trim().parse().ok()) else {
                return Err("hotel.xml: a <hotel> without a numeric id".into());
            };
            let texts = |tag: &'static str| -> Vec<String> {
                hotel
                    .children()
                    .filter(|n| n.has_tag_name(tag))
                    .filter_map(|n| n.text())
                    .map(|t| t.trim().to_string())
                    .collect()
            };
            by_id.insert(
                id,
                BusproHotel {
                    name: texts("name").into_iter().next().unwrap_or_default(),
                    matchcodes: texts("matchcode"),
                },
            );
        }
        Ok(Self { by_id })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hotel_xml_reads_names_and_matchcodes() {
        let hotels = BusproHotels::parse(
            r#"<?xml version="1.0"?><hotels><hotel id="5140"><name>Vacanceole Résidence L&apos;Edelweiss</name>
               <matchcode>VEDEL</matchcode><matchcode>VED2</matchcode></hotel></hotels>"#,
        )
        .expect("valid");
        let hotel = &hotels.by_id[&5140];
        assert_eq!(hotel.name, "Vacanceole Résidence L'Edelweiss");
        assert_eq!(hotel.matchcodes, ["VEDEL", "VED2"]);
        assert!(BusproHotels::parse("<hotels><hotel><name>x</name></hotel></hotels>").is_err());
        assert!(BusproHotels::parse("kein xml").is_err());
    }

    #[test]
    fn rooms_of_one_label_share_it_and_the_table_ends_with_the_parse() {
        let export = Export::parse(
            br#"{"generatedAt":"2026-11-30T21:55:00+01:00","products":[{"code":"VT","dates":[
                {"dateCode":"VT1","start":"2027-01-02","end":"2027-01-09","hotels":[
                  {"hotelCode":"A","rooms":[
                    {"code":"DZ","label":"Doppelzimmer","status":"frei"},
                    {"code":"DZ2","label":"Doppel\u007aimmer","status":"frei"},
                    {"code":"EZ","label":"Einzelzimmer","status":"frei"}]},
                  {"hotelCode":"B","rooms":[{"code":"DZ","label":"Doppelzimmer","status":"frei"}]}]}]}]}"#,
        )
        .unwrap();
        let date = &export.products[0].dates[0];
        let labels: Vec<&Arc<str>> = date
            .hotels
            .iter()
            .flat_map(|h| &h.rooms)
            .map(|r| &r.label)
            .collect();
        assert_eq!(labels[0].as_ref(), "Doppelzimmer");
        // Escaped or not, in this hotel or another: one allocation.
        assert!(Arc::ptr_eq(labels[0], labels[1]));
        assert!(Arc::ptr_eq(labels[0], labels[3]));
        assert!(!Arc::ptr_eq(labels[0], labels[2]));
        LABELS.with(|table| assert!(table.borrow().is_empty()));
        // A failed parse leaves nothing behind either.
        assert!(Export::parse(br#"{"generatedAt":"x","products":[{"code":"VT","dates":[{"dateCode":"V","start":"2027-01-02","end":"2027-01-09","hotels":[{"hotelCode":"A","rooms":[{"code":"DZ","label":"Mehrbett","status":"frei"},{"code":1}]}]}]}]}"#).is_err());
        LABELS.with(|table| assert!(table.borrow().is_empty()));
    }

    #[test]
    fn an_export_that_is_not_utf8_is_refused_whole() {
        // Latin-1 `ü` in a label: the booking system's export must be UTF-8 (the contract).
        let error =
            Export::parse(b"{\"generatedAt\":\"x\",\"products\":[{\"code\":\"M\xfcnchen\"}]}")
                .unwrap_err();
        assert!(
            error.starts_with("the product export is not UTF-8"),
            "{error}"
        );
        let umlauts = r#"{"generatedAt":"x","products":[{"code":"MÜ","dates":[]}]}"#;
        assert_eq!(
            Export::parse(umlauts.as_bytes()).unwrap().products[0].code,
            "MÜ"
        );
    }

    #[test]
    fn rooms_places_and_bookability() {
        let room = |code: &str, status: &str| Room {
            infant: code == BABY,
            label: "".into(),
            stopped: status == BUCHUNGSSTOP,
            available: 3,
            min_pax: 1,
            max_pax: 4,
            price: 100.0,
        };
        assert_eq!(room("MB4", "frei").places(), 12);
        assert!(!room("MB4", BUCHUNGSSTOP).is_bookable());
        assert!(!room(BABY, "frei").is_room());
    }
}
