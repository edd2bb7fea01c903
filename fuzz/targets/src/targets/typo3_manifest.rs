//! The TYPO3 content manifest: parse and check (a manifest is all or nothing).

use concierge_trips::content::feed::Manifest;

pub fn run(data: &[u8]) {
    if let Ok(manifest) = Manifest::parse(data) {
        // A checked manifest names every item once, with a site it lists.
        let mut keys = std::collections::HashSet::new();
        for item in &manifest.items {
            assert!(keys.insert(item.key()), "an item listed twice passed");
            assert!(item.uid > 0);
        }
    }
}
