//! Full-text search for concierge apps.
//!
//! [`analyzer`] turns German text into terms (umlauts folded both ways, negations kept, no
//! one-letter prefixes); [`TextIndex`] indexes titled documents with it over tantivy and answers
//! "every term as a prefix, then any term" queries with excerpts; [`TextIndex::ask`] ranks a
//! customer's [`Question`] (content words, stems, synonyms and type words from a [`Lexicon`],
//! compounds, boilerplate). Apps decide what a document is, how much each kind weighs and which
//! words mean what.

pub mod analyzer;
mod boilerplate;
mod dates;
mod excerpt;
mod index;
pub mod question;
mod ranking;

pub use excerpt::excerpt;
pub use index::{FORMAT, Hit, IndexDoc, TextIndex};
pub use question::{Lexicon, Question};
pub use ranking::Found;
