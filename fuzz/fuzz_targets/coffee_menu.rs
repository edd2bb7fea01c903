//! The coffee shop's menu.xlsx: a hostile workbook (broken zip, huge or odd cells, a thousand
//! sheets) is refused with a reason, never a crash of the server that reloads it.
#![no_main]

use concierge_coffee::menu::Menu;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Ok(menu) = Menu::from_bytes(data) {
        assert!(
            !menu.drinks().is_empty(),
            "a menu with no drinks was accepted"
        );
        for drink in menu.drinks() {
            assert!(drink.price >= 0.0 && drink.minutes <= 240, "{drink:?}");
        }
    }
});
