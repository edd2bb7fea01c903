//! Full-text search for concierge apps.
//!
//! [`analyzer`] turns German text into terms (umlauts folded both ways, negations kept, no
//! one-letter prefixes); [`TextIndex`] indexes titled documents with it over tantivy and answers
//! "every term as a prefix, then any term" queries with excerpts. Apps decide what a document is
//! and how much each kind weighs.

pub mod analyzer;
mod excerpt;
mod index;

pub use excerpt::excerpt;
pub use index::{FORMAT, Hit, IndexDoc, TextIndex};
