//! The booking system's product export, parsed and built into the trip catalog (every date's
//! facts derived, every hotel's rooms read).

use concierge_trips::catalog::TripCatalog;
use concierge_trips::catalog::export::{BusproHotels, Export};

pub fn run(data: &[u8]) {
    if let Ok(export) = Export::parse(data) {
        let _ = TripCatalog::build(&export, &BusproHotels::default(), &[]);
    }
}
