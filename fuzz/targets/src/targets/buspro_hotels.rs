//! BusPro's hotel.xml: hotel ids, names and matchcodes.

use concierge_trips::catalog::export::BusproHotels;

pub fn run(data: &[u8]) {
    let Ok(xml) = std::str::from_utf8(data) else {
        return;
    };
    let _ = BusproHotels::parse(xml);
}
