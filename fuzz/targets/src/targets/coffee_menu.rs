//! The coffee shop's menu.xlsx: a hostile workbook (broken zip, huge or odd cells, a thousand
//! sheets) is refused with a reason, never a crash of the server that reloads it.

use std::cell::Cell;
use std::sync::Once;

use concierge_coffee::menu::Menu;

thread_local! {
    /// Inside `Menu::from_bytes`, which reads under `catch_unwind` as the server does.
    static GUARDED: Cell<bool> = const { Cell::new(false) };
}

/// libFuzzer's panic hook aborts before any unwinding; the menu catches the spreadsheet
/// library's panics by design (calamine 0.38 overflows on long cell references), so inside the
/// guarded read a panic unwinds to that catch, as it does in the server. Anywhere else it is a
/// crash, as before.
fn let_the_menu_catch_its_panics() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        let fuzzer = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            if !GUARDED.with(Cell::get) {
                fuzzer(info);
            }
        }));
    });
}

pub fn run(data: &[u8]) {
    let_the_menu_catch_its_panics();
    GUARDED.with(|g| g.set(true));
    let read = Menu::from_bytes(data);
    GUARDED.with(|g| g.set(false));
    if let Ok(menu) = read {
        assert!(
            !menu.drinks().is_empty(),
            "a menu with no drinks was accepted"
        );
        for drink in menu.drinks() {
            assert!(drink.price >= 0.0 && drink.minutes <= 240, "{drink:?}");
        }
    }
}
