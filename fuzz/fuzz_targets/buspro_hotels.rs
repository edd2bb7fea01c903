//! BusPro's hotel.xml: hotel ids, names and matchcodes.
#![no_main]

use concierge_trips::catalog::export::BusproHotels;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(xml) = std::str::from_utf8(data) else {
        return;
    };
    let _ = BusproHotels::parse(xml);
});
