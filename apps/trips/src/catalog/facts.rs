//! `TravelDateFacts`: what the search page derives per travel date and hotel, following TYPO3's
//! `DateImportService` and search repository (and correcting the two places the seed says the site
//! gets wrong: `persons` also needs places left, board matches any item, not the first).

use std::sync::Arc;

use chrono::NaiveDate;
use concierge_search::analyzer::{QueryTerm, Token, query_terms, tokens};

use super::export::{ExportDate, ExportHotel, Room};

/// Selection groups that are inclusions, with the names results show them under.
pub const INCLUSION_GROUPS: [(u32, &str); 5] = [
    (7, "Skipass"),
    (71, "Verpflegung"),
    (86, "Programm"),
    (87, "Kurse"),
    (89, "Events"),
];
pub const BOARD_GROUP: u32 = 71;
/// The inclusion the free outbound bus is listed as.
pub const BUS_INCLUSION: &str = "Busanreise";

/// Room types as TYPO3's `RoomTypeResolver`: capacity 1–8, `9er+`, and shared beds.
pub const ROOM_TYPES: [&str; 10] = [
    "1er",
    "2er",
    "3er",
    "4er",
    "5er",
    "6er",
    "7er",
    "8er",
    "9er+",
    "mit anderen",
];

/// Accommodation as TYPO3's `HotelType` (1–5).
pub const ACCOMMODATIONS: [&str; 5] = [
    "Ferienwohnung",
    "Sportclub",
    "Apartment",
    "Gästehaus",
    "Pension",
];

pub fn accommodation(hotel_type: u64) -> Option<&'static str> {
    ACCOMMODATIONS
        .get(usize::try_from(hotel_type).ok()?.checked_sub(1)?)
        .copied()
}

pub fn room_type(room: &Room) -> &'static str {
    let label = room.label.as_bytes();
    if contains_ignoring_case(label, b"bett im") || contains_ignoring_case(label, b"mit ander") {
        return "mit anderen";
    }
    match room.max_pax {
        0..=1 => "1er",
        9.. => "9er+",
        n => ROOM_TYPES[n as usize - 1],
    }
}

/// Whether `text` holds `word` (lowercase ASCII) in any case: for each of the export's rooms,
/// so without the lowercased copy of its label.
fn contains_ignoring_case(text: &[u8], word: &[u8]) -> bool {
    text.windows(word.len())
        .any(|window| window.eq_ignore_ascii_case(word))
}

#[derive(Debug, Clone, PartialEq)]
pub struct TravelDateFacts {
    pub start: NaiveDate,
    pub end: NaiveDate,
    pub nights: i64,
    /// The "ab" price: cheapest bookable room with places left, else cheapest bookable room.
    pub price_from: Option<f64>,
    /// Σ available × maxPax over bookable rooms.
    pub places: u32,
    /// Smallest minPax over bookable rooms: the smallest group a room takes.
    pub min_group: Option<u32>,
    pub room_types: Vec<&'static str>,
    pub board: Arc<[String]>,
    /// Inclusion kinds ("Skipass", "Verpflegung", …, "Busanreise").
    pub inclusion_kinds: Arc<[&'static str]>,
    /// Every included item, "Skipass: 6-Tage-Skipass …".
    pub inclusions: Arc<[String]>,
    /// Any bookable outbound bus.
    pub bus: bool,
}

/// What a travel date includes (its selections and buses), the same for each of its hotels:
/// derived once per date and shared by the facts of all its hotels — at 111,000 rows, deriving
/// it per hotel was a tenth of a restart.
#[derive(Debug, Clone, PartialEq)]
pub struct DateInclusions {
    board: Arc<[String]>,
    inclusion_kinds: Arc<[&'static str]>,
    inclusions: Arc<[String]>,
    bus: bool,
}

impl DateInclusions {
    pub fn of(date: &ExportDate) -> Self {
        let mut inclusion_kinds = Vec::new();
        let mut inclusions = Vec::new();
        let mut board = Vec::new();
        for (group, name) in INCLUSION_GROUPS {
            let items: Vec<_> = date
                .selections
                .iter()
                .filter(|s| s.group == group)
                .flat_map(|s| &s.items)
                .collect();
            if items.is_empty() {
                continue;
            }
            inclusion_kinds.push(name);
            for item in items {
                inclusions.push(format!("{name}: {}", item.label));
                if group == BOARD_GROUP {
                    board.push(item.label.to_string());
                }
            }
        }
        let outbound = date.buses.iter().filter(|b| &*b.direction == "outbound");
        let bus = outbound.clone().any(|b| b.bookable);
        if outbound.into_iter().any(|b| b.bookable && b.price == 0.0) {
            inclusion_kinds.push(BUS_INCLUSION);
            inclusions.push(BUS_INCLUSION.to_string());
        }
        Self {
            board: board.into(),
            inclusion_kinds: inclusion_kinds.into(),
            inclusions: inclusions.into(),
            bus,
        }
    }
}

impl TravelDateFacts {
    pub fn derive(date: &ExportDate, hotel: &ExportHotel) -> Self {
        Self::for_hotel(date, &DateInclusions::of(date), hotel)
    }

    /// The facts of `date` at `hotel`, with what the date includes derived beforehand.
    pub fn for_hotel(date: &ExportDate, included: &DateInclusions, hotel: &ExportHotel) -> Self {
        let bookable: Vec<&Room> = hotel.rooms.iter().filter(|r| r.is_bookable()).collect();
        let cheapest = |rooms: &mut dyn Iterator<Item = &&Room>| {
            rooms.map(|r| r.price).min_by(|a, b| a.total_cmp(b))
        };
        let price_from = cheapest(&mut bookable.iter().filter(|r| r.places() > 0))
            .or_else(|| cheapest(&mut bookable.iter()));
        let mut room_types: Vec<&'static str> = bookable.iter().map(|r| room_type(r)).collect();
        room_types.sort_by_key(|t| ROOM_TYPES.iter().position(|x| x == t));
        room_types.dedup();
        Self {
            start: date.start,
            end: date.end,
            nights: (date.end - date.start).num_days(),
            price_from,
            places: bookable.iter().map(|r| r.places()).sum(),
            min_group: bookable.iter().map(|r| r.min_pax).min(),
            room_types,
            board: included.board.clone(),
            inclusion_kinds: included.inclusion_kinds.clone(),
            inclusions: included.inclusions.clone(),
            bus: included.bus,
        }
    }

    /// `frei` or `auf Anfrage`: room counts are never shown.
    pub fn availability(&self) -> &'static str {
        if self.places > 0 {
            "frei"
        } else {
            "auf Anfrage"
        }
    }

    /// The site's condition (a room takes groups this small) and enough places left.
    pub fn fits(&self, persons: u32) -> bool {
        self.min_group.is_some_and(|m| m <= persons) && self.places >= persons
    }

    /// Board asked by word ("Abendessen" for half board) against every item of group 71.
    pub fn has_board(&self, wanted: &[QueryTerm]) -> bool {
        self.board.iter().any(|label| {
            let words = tokens(label);
            wanted
                .iter()
                .all(|term| words.iter().any(|w| term.matches(w)))
        })
    }
}

/// Each board label's words, folded.
pub fn board_words(labels: &[String]) -> Vec<Vec<Token>> {
    labels.iter().map(|label| tokens(label)).collect()
}

/// Whether one label holds every wished word (as a prefix).
pub fn board_matches(labels: &[Vec<Token>], wanted: &[QueryTerm]) -> bool {
    labels.iter().any(|words| {
        wanted
            .iter()
            .all(|term| words.iter().any(|w| term.matches(w)))
    })
}

/// The words of a board wish, as [`TravelDateFacts::has_board`] compares them.
pub fn board_terms(board: &str) -> Vec<QueryTerm> {
    query_terms(board)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::catalog::export::{Bus, Selection, SelectionItem};

    fn room(
        code: &str,
        label: &str,
        status: &str,
        available: u32,
        pax: (u32, u32),
        price: f64,
    ) -> Room {
        Room {
            infant: code == crate::catalog::export::BABY,
            label: label.into(),
            stopped: status == crate::catalog::export::BUCHUNGSSTOP,
            available,
            min_pax: pax.0,
            max_pax: pax.1,
            price,
        }
    }

    fn date(rooms: Vec<Room>) -> (ExportDate, ExportHotel) {
        let date = ExportDate {
            date_code: "SSLMP061226".into(),
            start: NaiveDate::from_ymd_opt(2026, 12, 6).unwrap(),
            end: NaiveDate::from_ymd_opt(2026, 12, 13).unwrap(),
            hotels: Vec::new(),
            selections: vec![
                Selection {
                    group: 71,
                    label: "Verpflegung".into(),
                    items: vec![
                        SelectionItem {
                            label: "Frühstück".into(),
                            price: 0.0,
                        },
                        SelectionItem {
                            label: "4x Abendessen".into(),
                            price: 0.0,
                        },
                    ],
                },
                Selection {
                    group: 7,
                    label: "Skipass".into(),
                    items: vec![SelectionItem {
                        label: "6-Tage-Skipass".into(),
                        price: 0.0,
                    }],
                },
            ],
            buses: vec![Bus {
                direction: "outbound".into(),
                label: "".into(),
                bookable: true,
                price: 0.0,
            }],
            pickups: Vec::new(),
        };
        let hotel = ExportHotel {
            hotel_code: "VTCHA".into(),
            buspro_hotel_id: Some(1),
            rooms,
        };
        (date, hotel)
    }

    #[test]
    fn ab_price_prefers_rooms_with_places() {
        let (d, h) = date(vec![
            room("EZ", "Einzelzimmer", "frei", 0, (1, 1), 399.0),
            room("DZ", "Doppelzimmer", "frei", 2, (2, 2), 449.0),
            room("X", "Suite", "Buchungsstop", 5, (1, 2), 99.0),
            room("Baby", "Baby", "frei", 99, (0, 1), 0.0),
        ]);
        let facts = TravelDateFacts::derive(&d, &h);
        assert_eq!(facts.price_from, Some(449.0));
        assert_eq!(facts.places, 4);
        assert_eq!(facts.availability(), "frei");
        assert_eq!(facts.min_group, Some(1));
        assert_eq!(facts.nights, 7);

        let (d, h) = date(vec![room("EZ", "Einzelzimmer", "frei", 0, (1, 1), 399.0)]);
        let sold_out = TravelDateFacts::derive(&d, &h);
        assert_eq!(sold_out.price_from, Some(399.0));
        assert_eq!(sold_out.availability(), "auf Anfrage");
        assert!(!sold_out.fits(1));
    }

    #[test]
    fn room_types_by_capacity_and_shared_bed_label() {
        let r = |label: &str, max: u32| room("R", label, "frei", 1, (1, max), 1.0);
        assert_eq!(room_type(&r("Doppelzimmer", 2)), "2er");
        assert_eq!(room_type(&r("Gruppenraum", 10)), "9er+");
        assert_eq!(room_type(&r("Bett im 4er-Zimmer", 1)), "mit anderen");
        assert_eq!(
            room_type(&r("Mehrbettzimmer (mit anderen Gästen)", 6)),
            "mit anderen"
        );
    }

    #[test]
    fn persons_needs_a_small_enough_room_and_places() {
        let (d, h) = date(vec![room("APP6", "Appartement", "frei", 1, (4, 6), 300.0)]);
        let facts = TravelDateFacts::derive(&d, &h);
        assert!(!facts.fits(3), "the smallest room takes groups of 4");
        assert!(facts.fits(6));
        assert!(!facts.fits(7), "only 6 places left");
    }

    #[test]
    fn board_matches_any_item_by_word_and_inclusions_list_the_free_bus() {
        let (d, h) = date(vec![room("DZ", "Doppelzimmer", "frei", 1, (1, 2), 1.0)]);
        let facts = TravelDateFacts::derive(&d, &h);
        assert!(facts.has_board(&board_terms("Abendessen")));
        assert!(facts.has_board(&board_terms("frühstück")));
        assert!(!facts.has_board(&board_terms("Vollpension")));
        assert_eq!(
            facts.inclusion_kinds[..],
            ["Skipass", "Verpflegung", "Busanreise"]
        );
        assert!(facts.bus);
    }
}
