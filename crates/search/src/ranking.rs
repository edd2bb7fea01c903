//! The ranked search: a customer's question ([`Question`]) against a [`TextIndex`].
//!
//! How it ranks, in the order it decides:
//! - **What must match**: every content word, in any of its forms — the word whole or as a
//!   prefix, its stem, a synonym the lexicon names, or, for a compound no document holds, its
//!   two halves ("Stornogebühr" → `storno…` and `gebühr…`). Where a word stands counts: the
//!   title above the breadcrumb above the body's headings and lists above its prose, whose
//!   boilerplate sentences are not matched — but a compound said almost only in boilerplate
//!   reaches the documents whose own text holds one of its halves.
//! - **Two words said as one**: neighbouring words the documents hold as one compound ("Ski
//!   ausleihen" → `skiverleih`) lift the documents that say it.
//! - **Type words** ("Hotels", "Reise", "Skigebiet") do not have to match; they lift documents of
//!   their kind.
//! - **A question that is a title** ("Österreich", "Über uns") puts that document first.
//! - **Honest partial matches**: when no document holds every word, the documents holding most of
//!   them; a word no document holds in any form is reported, and when nothing but type words
//!   would be left, nothing is answered ("Skireise Kanada Whistler": nothing about Kanada,
//!   Whistler — not Alpine trips passed off as Canadian ones).

use tantivy::collector::TopDocs;
use tantivy::query::{BooleanQuery, BoostQuery, ConstScoreQuery, Occur, Query, TermQuery};
use tantivy::schema::{Field, IndexRecordOption};
use tantivy::{DocAddress, Score, Searcher, SegmentReader, Term};

use crate::index::{Hit, TextIndex, prefix_query};
use crate::question::{ContentWord, Question};

/// Where a word stands: a title names the thing, a breadcrumb places it, the body mentions it.
const TITLE_BOOST: Score = 3.0;
const BREADCRUMB_BOOST: Score = 2.0;
const OUTLINE_BOOST: Score = 1.5;
/// A month its dates cover says when a trip runs as plainly as its title says what it is.
const MONTHS_BOOST: Score = 3.0;
const BODY_BOOST: Score = 1.0;
/// Boilerplate: asked only where nothing else holds the words, and then adds little.
const BOILERPLATE_BOOST: Score = 0.15;
/// A prefix-only match counts less than the whole word, a stem a little less, a synonym less
/// still, and a compound's halves found apart least.
const PREFIX_SHARE: Score = 0.4;
const STEM_SHARE: Score = 0.9;
const SYNONYM_SHARE: Score = 0.6;
const SPLIT_SHARE: Score = 0.5;
/// How much a type word lifts its kind, and a question that is a document's title that document.
const KIND_LIFT: Score = 6.0;
/// What two words of the question said as one compound add where a document says it.
const JOINED_SHARE: Score = 1.0;
/// What a type word that need not match adds where it does.
const OPTIONAL_SHARE: Score = 0.3;
const TITLE_LIFT: Score = 4.0;
/// … and a document whose name the question holds ("Wie hoch liegt Val Thorens?": the page of
/// Val Thorens).
const NAME_LIFT: Score = 2.0;
/// Names are looked for up to this many words long.
const MAX_NAME_WORDS: usize = 5;
/// A word this long is looked for as two halves too, even where documents hold it whole.
const LONG_COMPOUND: usize = 12;
/// A word the boilerplate holds in this many times as many documents as anything else does is
/// "mostly boilerplate".
const BOILERPLATE_MOSTLY: u64 = 4;
/// A compound's halves are words of at least this many letters.
const MIN_HALF: usize = 4;

/// The forms a word is looked for in: each (form, as a prefix, share of the score), and the
/// halves of a compound.
#[derive(Default)]
struct Forms {
    each: Vec<(String, bool, Score)>,
    halves: Option<(String, String)>,
    /// The word whole is said far more often in boilerplate than anywhere else.
    mostly_boilerplate: bool,
}

/// What a question found.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Found {
    pub hits: Vec<Hit>,
    /// Content words no document holds in any form, as typed.
    pub unmatched: Vec<String>,
    /// The question had no word that carries meaning ("Was ist das?").
    pub nothing_asked: bool,
    /// No document holds every word the documents hold: the hits hold most of them.
    pub partial: bool,
}

impl TextIndex {
    /// Up to `limit` documents for `question`, best first, each with an excerpt of about
    /// `excerpt_chars` (none for 0).
    pub fn ask(
        &self,
        question: &Question,
        limit: usize,
        excerpt_chars: usize,
    ) -> tantivy::Result<Found> {
        let searcher = self.reader.searcher();
        let whole = question.title.clone();
        if question.words.is_empty() {
            // Only function words: the one page titled so ("Über uns"), or nothing.
            let mut found = Found {
                nothing_asked: true,
                ..Found::default()
            };
            if !question.function_words.is_empty() && limit > 0 {
                let title = TermQuery::new(
                    Term::from_field_text(self.fields.title_key, &whole),
                    IndexRecordOption::Basic,
                );
                let top = searcher.search(&title, &self.ranked(limit, &[], &whole, &[]))?;
                if !top.is_empty() {
                    found.nothing_asked = false;
                }
                found.hits = self.hits(&searcher, top, question, excerpt_chars)?;
            }
            return Ok(found);
        }
        let kinds = question.kinds();
        // Type words lift their kind; a type word that sets the scene ("im Hotel") may match.
        // Either must match only when nothing else was asked.
        let only_types = question
            .words
            .iter()
            .all(|w| !w.kinds.is_empty() || w.context);
        // Each word twice: in what the documents say of themselves (titles, breadcrumbs,
        // outlines, prose without boilerplate), and anywhere — the second asked only where the
        // first finds nothing, so a boilerplate mention never stands beside a real one.
        let mut required: [Vec<Box<dyn Query>>; 2] = [Vec::new(), Vec::new()];
        let mut optional: [Vec<Box<dyn Query>>; 2] = [Vec::new(), Vec::new()];
        let mut unmatched = Vec::new();
        let reaches = [self.own_fields(), self.all_fields()];
        for word in &question.words {
            let plain = word.kinds.is_empty() && !word.context;
            let Some(forms) = self.word_forms(&searcher, word)? else {
                if plain || only_types {
                    unmatched.push(word.typed.clone());
                }
                continue;
            };
            for (reach, fields) in reaches.iter().enumerate() {
                let clause = self.word_query(&forms, fields, reach == 0);
                if plain || only_types {
                    required[reach].push(clause);
                } else if word.context {
                    optional[reach]
                        .push(Box::new(BoostQuery::new(clause, OPTIONAL_SHARE)) as Box<dyn Query>);
                }
            }
        }
        for joined in self.joined(&searcher, &question.words)? {
            for (reach, fields) in reaches.iter().enumerate() {
                let mut said = Vec::new();
                self.push_form(&mut said, fields, &joined, false, JOINED_SHARE);
                optional[reach].push(Box::new(BooleanQuery::new(said)));
            }
        }
        if required[0].is_empty() || limit == 0 {
            return Ok(Found {
                unmatched,
                ..Found::default()
            });
        }
        // A type word says what is asked for ("Skireise Frankreich": trips, not the country's
        // page); without one, a name the question holds is.
        let named = if kinds.is_empty() {
            names(&whole)
        } else {
            Vec::new()
        };
        let collector = self.ranked(limit, &kinds, &whole, &named);
        let mut top = Vec::new();
        let mut partial = false;
        // Every word first; then, a word fewer at a time, the documents holding most of them —
        // in what documents say of themselves, and only then anywhere.
        'reach: for reach in 0..2 {
            for needed in (1..=required[reach].len()).rev() {
                partial = needed < required[reach].len();
                let words: Vec<(Occur, Box<dyn Query>)> = required[reach]
                    .iter()
                    .map(|c| (Occur::Should, c.box_clone()))
                    .collect();
                // `needed` of the words; a setting word only adds where it matches, and never
                // counts as one of them.
                let mut clauses: Vec<(Occur, Box<dyn Query>)> = vec![(
                    Occur::Must,
                    Box::new(BooleanQuery::with_minimum_required_clauses(words, needed)),
                )];
                clauses.extend(
                    optional[reach]
                        .iter()
                        .map(|c| (Occur::Should, c.box_clone())),
                );
                let query = BooleanQuery::new(clauses);
                top = searcher.search(&query, &collector)?;
                if !top.is_empty() {
                    break 'reach;
                }
            }
        }
        Ok(Found {
            partial: partial && !top.is_empty(),
            hits: self.hits(&searcher, top, question, excerpt_chars)?,
            unmatched,
            nothing_asked: false,
        })
    }

    fn hits(
        &self,
        searcher: &Searcher,
        top: Vec<(Score, DocAddress)>,
        question: &Question,
        excerpt_chars: usize,
    ) -> tantivy::Result<Vec<Hit>> {
        let terms = question.excerpt_terms();
        top.into_iter()
            .map(|(score, address)| self.hit(searcher, score, address, &terms, excerpt_chars))
            .collect()
    }

    /// The forms one content word is looked for in, decided once from the term dictionaries;
    /// `None` when no document holds any.
    fn word_forms(
        &self,
        searcher: &Searcher,
        word: &ContentWord,
    ) -> tantivy::Result<Option<Forms>> {
        let prefix = word.term.is_prefix();
        let mut forms = Forms::default();
        let mut known = false;
        for form in &word.term.forms {
            known |= self.holds(searcher, form, prefix)?;
            forms.each.push((form.clone(), prefix, 1.0));
        }
        if let Some(stem) = &word.stem {
            known |= self.holds(searcher, stem, false)?;
            forms.each.push((stem.clone(), false, STEM_SHARE));
        }
        for synonym in &word.synonyms {
            for (index, form) in synonym.iter().enumerate() {
                // The last form is the stem, matched whole; the foldings as prefixes.
                let as_prefix = index + 1 < synonym.len() || synonym.len() == 1;
                known |= self.holds(searcher, form, as_prefix)?;
                forms.each.push((form.clone(), as_prefix, SYNONYM_SHARE));
            }
        }
        let plain = word.term.forms.last().map(String::as_str).unwrap_or("");
        if !known {
            // An inflection no document holds ("Ostern" beside "Osterskireise"): the word
            // without its ending, as a prefix.
            for ending in ["ern", "en", "er", "es", "e", "n", "s"] {
                if let Some(root) = plain.strip_suffix(ending)
                    && root.chars().count() >= MIN_HALF
                    && self.holds(searcher, root, true)?
                {
                    known = true;
                    forms.each.push((root.to_string(), true, STEM_SHARE));
                    break;
                }
            }
        }
        // A compound no document holds, or a long one, is also its two halves ("Silvesterfeier":
        // the Silvester trips whose texts speak of a Feier), each a word some document holds.
        if !known || plain.chars().count() >= LONG_COMPOUND {
            forms.halves = self.split(searcher, plain)?;
            if forms.halves.is_some() {
                let in_field = |field| searcher.doc_freq(&Term::from_field_text(field, plain));
                let mut own = 0;
                for (field, _) in self.own_fields() {
                    own += in_field(field)?;
                }
                forms.mostly_boilerplate =
                    in_field(self.fields.boilerplate)? > BOILERPLATE_MOSTLY * own;
            }
        }
        Ok((known || forms.halves.is_some()).then_some(forms))
    }

    /// A word's `forms` in `fields`; `own` when those are what documents say of themselves.
    fn word_query(&self, forms: &Forms, fields: &[(Field, Score)], own: bool) -> Box<dyn Query> {
        let mut alternatives: Vec<(Occur, Box<dyn Query>)> = Vec::new();
        for (form, prefix, share) in &forms.each {
            self.push_form(&mut alternatives, fields, form, *prefix, *share);
        }
        if own
            && forms.mostly_boilerplate
            && let Some((left, right)) = &forms.halves
        {
            // A compound only the boilerplate says, in a document whose own text holds one of
            // its halves: the standard sentence "die Silvesterfeier … ist inklusive" is about the
            // document titled "Silvester-Skireise", not about every page that repeats it.
            let mut said = Vec::new();
            for (form, prefix, _) in &forms.each {
                self.push_form(
                    &mut said,
                    &[(self.fields.boilerplate, BOILERPLATE_BOOST)],
                    form,
                    *prefix,
                    1.0,
                );
            }
            let mut half = Vec::new();
            for form in [left, right] {
                self.push_form(&mut half, fields, form, true, 1.0);
            }
            let both: Vec<(Occur, Box<dyn Query>)> = vec![
                (Occur::Must, Box::new(BooleanQuery::new(said))),
                (Occur::Must, Box::new(BooleanQuery::new(half))),
            ];
            alternatives.push((
                Occur::Should,
                Box::new(BoostQuery::new(
                    Box::new(BooleanQuery::new(both)),
                    SPLIT_SHARE,
                )),
            ));
        }
        if let Some((left, right)) = &forms.halves {
            let halves = BooleanQuery::new(
                [left, right]
                    .into_iter()
                    .map(|half| {
                        let mut any = Vec::new();
                        self.push_form(&mut any, fields, half, true, 1.0);
                        (
                            Occur::Must,
                            Box::new(BooleanQuery::new(any)) as Box<dyn Query>,
                        )
                    })
                    .collect(),
            );
            alternatives.push((
                Occur::Should,
                Box::new(BoostQuery::new(Box::new(halves), SPLIT_SHARE)),
            ));
        }
        Box::new(BooleanQuery::new(alternatives))
    }

    /// `form` in the title, breadcrumb and boilerplate-free body: whole (scored), and as a
    /// prefix (a constant share) when `prefix`.
    fn push_form(
        &self,
        into: &mut Vec<(Occur, Box<dyn Query>)>,
        fields: &[(Field, Score)],
        form: &str,
        prefix: bool,
        share: Score,
    ) {
        for &(field, boost) in fields {
            let whole = TermQuery::new(
                Term::from_field_text(field, form),
                IndexRecordOption::WithFreqs,
            );
            into.push((
                Occur::Should,
                Box::new(BoostQuery::new(Box::new(whole), boost * share)),
            ));
            if prefix {
                into.push((
                    Occur::Should,
                    Box::new(ConstScoreQuery::new(
                        Box::new(prefix_query(field, form)),
                        boost * share * PREFIX_SHARE,
                    )),
                ));
            }
        }
    }

    /// What a document says of itself: its title, breadcrumb, outline, the months it runs in
    /// and prose without boilerplate.
    fn own_fields(&self) -> Vec<(Field, Score)> {
        vec![
            (self.fields.title, TITLE_BOOST),
            (self.fields.breadcrumb, BREADCRUMB_BOOST),
            (self.fields.outline, OUTLINE_BOOST),
            (self.fields.months, MONTHS_BOOST),
            (self.fields.core, BODY_BOOST),
        ]
    }

    /// … and its boilerplate.
    fn all_fields(&self) -> Vec<(Field, Score)> {
        let mut fields = self.own_fields();
        fields.push((self.fields.boilerplate, BOILERPLATE_BOOST));
        fields
    }

    /// Whether any document holds `form` (whole, or as a prefix of a word when `prefix`): read
    /// off the term dictionaries, no postings touched.
    fn holds(&self, searcher: &Searcher, form: &str, prefix: bool) -> tantivy::Result<bool> {
        for segment in searcher.segment_readers() {
            for (field, _) in self.all_fields() {
                let terms = segment.inverted_index(field)?;
                let terms = terms.terms();
                if prefix {
                    let mut upper = form.as_bytes().to_vec();
                    upper.push(0xFF);
                    let mut stream = terms.range().ge(form.as_bytes()).lt(&upper).into_stream()?;
                    if stream.advance() {
                        return Ok(true);
                    }
                } else if terms.get(form.as_bytes())?.is_some() {
                    return Ok(true);
                }
            }
        }
        Ok(false)
    }

    /// Two neighbouring words of the question that the documents hold as one compound, in
    /// either order and with either's synonyms: "Ski ausleihen" is `skiverleih`, "Anreise mit
    /// dem Bus" `busanreise`. A document that says the compound says what was asked in one word.
    fn joined(&self, searcher: &Searcher, words: &[ContentWord]) -> tantivy::Result<Vec<String>> {
        let forms = |word: &ContentWord| -> Vec<String> {
            let mut forms = word.term.forms.clone();
            forms.extend(word.synonyms.iter().flatten().cloned());
            forms.sort();
            forms.dedup();
            forms
        };
        let mut joined = Vec::new();
        for pair in words.windows(2) {
            for (first, second) in [(&pair[0], &pair[1]), (&pair[1], &pair[0])] {
                let rights = forms(second);
                for left in &first.term.forms {
                    for right in &rights {
                        let word = format!("{left}{right}");
                        if left.chars().count() >= 2
                            && !joined.contains(&word)
                            && self.holds(searcher, &word, false)?
                        {
                            joined.push(word);
                        }
                    }
                }
            }
        }
        Ok(joined)
    }

    /// The two halves of a compound, each a word the documents hold (the left one as a word's
    /// beginning, the right one whole or as a beginning), with a linking `s` dropped: the split
    /// that keeps the longer left half ("skipasspreise" → `skipass` + `preise`).
    fn split(&self, searcher: &Searcher, word: &str) -> tantivy::Result<Option<(String, String)>> {
        let chars: Vec<(usize, char)> = word.char_indices().collect();
        if chars.len() < 2 * MIN_HALF {
            return Ok(None);
        }
        for at in (MIN_HALF..=chars.len() - MIN_HALF).rev() {
            let (left, right) = word.split_at(chars[at].0);
            if !self.holds(searcher, right, true)? {
                continue;
            }
            if self.holds(searcher, left, true)? {
                return Ok(Some((left.to_string(), right.to_string())));
            }
            if let Some(joined) = left.strip_suffix('s')
                && joined.chars().count() >= MIN_HALF
                && self.holds(searcher, joined, true)?
            {
                return Ok(Some((joined.to_string(), right.to_string())));
            }
        }
        Ok(None)
    }

    /// Top documents by relevance × the document's weight × the lift of a wanted kind × the lift
    /// of a title that is the whole question.
    fn ranked(
        &self,
        limit: usize,
        kinds: &[String],
        whole: &str,
        names: &[String],
    ) -> impl tantivy::collector::Collector<Fruit = Vec<(Score, DocAddress)>> + use<> {
        let kinds = kinds.to_vec();
        let whole = whole.to_string();
        let names = names.to_vec();
        TopDocs::with_limit(limit).tweak_score(move |segment: &SegmentReader| {
            let fast = segment.fast_fields();
            let weights = fast
                .f64("weight")
                .ok()
                .map(|column| column.first_or_default_col(1.0));
            let ords = |field: &str, wanted: &[&str]| {
                let column = fast.str(field).ok().flatten()?;
                let wanted: Vec<u64> = wanted
                    .iter()
                    .filter_map(|w| column.dictionary().term_ord(w).ok().flatten())
                    .collect();
                (!wanted.is_empty()).then(|| (column.into_parts().1, wanted))
            };
            let kind_refs: Vec<&str> = kinds.iter().map(String::as_str).collect();
            let kind = ords("kind", &kind_refs);
            let title = ords("title_key", &[whole.as_str()]);
            let name_refs: Vec<&str> = names.iter().map(String::as_str).collect();
            let named = ords("title_key", &name_refs);
            move |doc, score: Score| {
                let mut score = score;
                // The app's kind weights order documents that match alike; a question's own
                // words (and its type words' lift) should outweigh them, so they count by
                // their square root.
                if let Some(column) = &weights {
                    score *= (column.get_val(doc) as Score).sqrt();
                }
                if let Some((column, wanted)) = &kind
                    && column.first(doc).is_some_and(|o| wanted.contains(&o))
                {
                    score *= KIND_LIFT;
                }
                if let Some((column, wanted)) = &title
                    && column.first(doc).is_some_and(|o| wanted.contains(&o))
                {
                    score *= TITLE_LIFT;
                } else if let Some((column, wanted)) = &named
                    && column.first(doc).is_some_and(|o| wanted.contains(&o))
                {
                    score *= NAME_LIFT;
                }
                score
            }
        })
    }
}

/// The names a question may hold: each run of up to [`MAX_NAME_WORDS`] of its words, shorter
/// than the whole question (that one lifts more), as title keys.
fn names(whole: &str) -> Vec<String> {
    let words: Vec<&str> = whole.split(' ').filter(|w| !w.is_empty()).collect();
    let mut names = Vec::new();
    for length in 1..=MAX_NAME_WORDS.min(words.len().saturating_sub(1)) {
        for run in words.windows(length) {
            if run.iter().any(|w| !crate::analyzer::is_stopword(w)) {
                names.push(run.join(" "));
            }
        }
    }
    names
}
