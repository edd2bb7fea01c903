//! The editorial half of the ski server: TYPO3's content mirrored into a local store, searched in
//! German. The trip catalog (part 2) reads the same documents for names.

pub mod clock;
pub mod document;
pub mod feed;
pub mod markdown;
pub mod schedule;
pub mod search;
pub mod store;
pub mod sync;
pub mod words;
