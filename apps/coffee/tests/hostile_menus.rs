//! Hostile menu.xlsx files, from the fuzz target `coffee_menu`: each is refused with a reason,
//! never a panic (the server reloads the menu when the file changes; a panic there would end the
//! reloading for good).

use concierge_coffee::menu::Menu;

/// A cell reference of many letters: calamine 0.38 overflows computing its column.
#[test]
fn an_overflowing_cell_reference_is_refused() {
    let bytes = include_bytes!("data/overflowing-cell-reference.xlsx");
    let result = std::panic::catch_unwind(|| Menu::from_bytes(bytes));
    let menu = result.expect("no panic");
    if let Ok(menu) = menu {
        assert!(!menu.drinks().is_empty());
    }
}

#[test]
fn bytes_that_are_not_a_workbook_are_refused_with_a_reason() {
    for bytes in [&b""[..], b"PK\x03\x04", b"not a zip at all"] {
        let Err(error) = Menu::from_bytes(bytes) else {
            panic!("{bytes:?} was read as a menu");
        };
        assert!(error.contains("cannot open"), "{error}");
    }
}
