//! A full-text index over titled documents: every query term required (then any), each term a
//! prefix, relevance weighted per document. The ranked search that reads questions
//! ([`crate::ranking`]) asks the same index.

use std::ops::Bound;

use tantivy::collector::TopDocs;
use tantivy::query::{
    BooleanQuery, BoostQuery, ConstScoreQuery, Occur, Query, RangeQuery, TermQuery,
};
use tantivy::schema::{
    FAST, Field, IndexRecordOption, STORED, STRING, Schema, TextFieldIndexing, TextOptions, Value,
};
use tantivy::tokenizer::{Token as TantivyToken, TokenStream, Tokenizer};
use tantivy::{
    DocAddress, Index, IndexReader, ReloadPolicy, Score, SegmentReader, TantivyDocument, Term,
};

use crate::analyzer::{QueryTerm, query_terms, tokens};
use crate::excerpt::excerpt;

const TOKENIZER: &str = "de_folded";
/// How much a match in each field counts: a title names the thing, a breadcrumb places it.
const TITLE_BOOST: Score = 3.0;
const BREADCRUMB_BOOST: Score = 2.0;
const BODY_BOOST: Score = 1.0;
/// A prefix-only match ("Chaviere" in "Chavièregletscher") counts less than the whole word.
const PREFIX_SHARE: Score = 0.4;

/// A document to index. `key` is how the caller finds it again; `weight` multiplies its
/// relevance (the ski app ranks products above blog posts this way).
#[derive(Debug, Clone)]
pub struct IndexDoc {
    pub key: String,
    /// What kind of document it is (the ski app's `hotel`, `product`, `blog` …): a question's
    /// type word lifts its kind.
    pub kind: String,
    /// What a customer calls it (a destination's place, a hotel's name; else its title): a
    /// question that is exactly this name puts the document first.
    pub name: String,
    pub title: String,
    pub breadcrumb: String,
    pub body: String,
    pub weight: f32,
    /// A page that collects the site's common questions and answers (an FAQ page): the Q&A
    /// blocks other pages repeat are this page's own content, not boilerplate, so a customer's
    /// question reaches it as it reaches a page about the matter.
    pub faq: bool,
}

/// One search result: the document's key, its weighted score and an excerpt of its body around
/// the best match.
#[derive(Debug, Clone, PartialEq)]
pub struct Hit {
    pub key: String,
    /// The document's place in the order it was indexed: a caller that keeps something per
    /// document in that order finds it without a map from keys.
    pub ordinal: usize,
    pub score: Score,
    pub excerpt: String,
}

#[derive(Clone, Copy)]
pub(crate) struct Fields {
    /// Position in `keys`: hits find their key without reading the stored document.
    pub ordinal: Field,
    pub title: Field,
    pub breadcrumb: Field,
    /// The body as written, stored for excerpts (searched as `core` and `boilerplate`).
    pub body: Field,
    /// The body without its boilerplate (sentences that recur across many documents): what
    /// the ranked search matches.
    pub core: Field,
    /// The body's boilerplate sentences: `core` and this are the whole body.
    pub boilerplate: Field,
    /// The body's headings and list items ([`crate::boilerplate::Boilerplate::outline`]).
    pub outline: Field,
    /// The months the body's date ranges cover ([`crate::dates::months`]): when it happens.
    pub months: Field,
    /// The document's kind, whole.
    pub kind: Field,
    /// The name's words, folded and joined by one space: a question that is a name.
    pub title_key: Field,
    pub weight: Field,
}

/// The version of what an index holds: bumped whenever the analyzer or the schema changes, so an
/// index persisted by another version is built again, never read with the wrong analyzer.
pub const FORMAT: u32 = 3;

/// The keys of a persisted index, in ordinal order, one per line.
const KEYS_FILE: &str = "keys.txt";

/// An index built whole from a set of documents, in memory or in a directory (which
/// [`TextIndex::open`] reads again in milliseconds: no document is analyzed twice). A rebuilt
/// index is swapped in whole, so a search never sees half a sync.
pub struct TextIndex {
    pub(crate) reader: IndexReader,
    pub(crate) fields: Fields,
    keys: Vec<String>,
}

impl TextIndex {
    /// An index in memory.
    pub fn build(docs: impl IntoIterator<Item = IndexDoc>) -> tantivy::Result<Self> {
        Self::write(Index::create_in_ram(schema().0), docs)
    }

    /// An index written to `dir` (existing and empty), read again with [`TextIndex::open`]. The
    /// files are synced before this returns.
    pub fn build_in(
        dir: &std::path::Path,
        docs: impl IntoIterator<Item = IndexDoc>,
    ) -> tantivy::Result<Self> {
        let index = Self::write(Index::create_in_dir(dir, schema().0)?, docs)?;
        let mut keys = String::new();
        for key in &index.keys {
            if key.contains('\n') {
                return Err(tantivy::TantivyError::InvalidArgument(format!(
                    "a key holds a line break: {key:?}"
                )));
            }
            keys.push_str(key);
            keys.push('\n');
        }
        let path = dir.join(KEYS_FILE);
        std::fs::write(&path, keys)?;
        std::fs::File::open(&path)?.sync_all()?;
        Ok(index)
    }

    /// The index [`TextIndex::build_in`] wrote to `dir`.
    pub fn open(dir: &std::path::Path) -> tantivy::Result<Self> {
        let index = Index::open_in_dir(dir)?;
        let schema = index.schema();
        let field = |name: &str| schema.get_field(name);
        let fields = Fields {
            ordinal: field("ordinal")?,
            title: field("title")?,
            breadcrumb: field("breadcrumb")?,
            body: field("body")?,
            core: field("core")?,
            boilerplate: field("boilerplate")?,
            outline: field("outline")?,
            months: field("months")?,
            kind: field("kind")?,
            title_key: field("title_key")?,
            weight: field("weight")?,
        };
        let keys: Vec<String> = std::fs::read_to_string(dir.join(KEYS_FILE))?
            .lines()
            .map(str::to_string)
            .collect();
        index.tokenizers().register(TOKENIZER, GermanTokenizer);
        let reader = index
            .reader_builder()
            .reload_policy(ReloadPolicy::Manual)
            .try_into()?;
        let documents = reader.searcher().num_docs();
        if documents != keys.len() as u64 {
            return Err(tantivy::TantivyError::InvalidArgument(format!(
                "{} documents but {} keys",
                documents,
                keys.len()
            )));
        }
        Ok(Self {
            reader,
            fields,
            keys,
        })
    }

    fn write(index: Index, docs: impl IntoIterator<Item = IndexDoc>) -> tantivy::Result<Self> {
        let fields = schema().1;
        index.tokenizers().register(TOKENIZER, GermanTokenizer);
        let docs: Vec<IndexDoc> = docs.into_iter().collect();
        let boilerplate = crate::boilerplate::Boilerplate::of(docs.iter().map(|d| d.body.as_str()));
        // One thread: the machine's other core serves requests while we index.
        let mut writer = index.writer_with_num_threads(1, 100_000_000)?;
        let mut keys = Vec::new();
        for doc in docs {
            let mut document = TantivyDocument::new();
            document.add_u64(fields.ordinal, keys.len() as u64);
            document.add_text(fields.title, &doc.title);
            document.add_text(fields.breadcrumb, &doc.breadcrumb);
            document.add_text(fields.body, &doc.body);
            let (core, repeated) = boilerplate.split(&doc.body, doc.faq);
            let outline = boilerplate.outline(&doc.body, doc.faq);
            document.add_text(fields.core, core);
            document.add_text(fields.boilerplate, repeated);
            document.add_text(fields.outline, outline);
            document.add_text(fields.months, crate::dates::months(&doc.body));
            document.add_text(fields.kind, &doc.kind);
            document.add_text(fields.title_key, crate::question::title_key(&doc.name));
            document.add_f64(fields.weight, f64::from(doc.weight));
            writer.add_document(document)?;
            keys.push(doc.key);
        }
        writer.commit()?;
        writer.wait_merging_threads()?;
        let reader = index
            .reader_builder()
            .reload_policy(ReloadPolicy::Manual)
            .try_into()?;
        Ok(Self {
            reader,
            fields,
            keys,
        })
    }

    pub fn len(&self) -> usize {
        self.keys.len()
    }

    pub fn is_empty(&self) -> bool {
        self.keys.is_empty()
    }

    /// Up to `limit` hits for `query`: documents holding every term (as a prefix) first; if none
    /// does, documents holding any. Each hit carries an excerpt of about `excerpt_chars` (none for 0).
    pub fn search(
        &self,
        query: &str,
        limit: usize,
        excerpt_chars: usize,
    ) -> tantivy::Result<Vec<Hit>> {
        let terms = query_terms(query);
        if terms.is_empty() || limit == 0 {
            return Ok(Vec::new());
        }
        let clauses: Vec<Box<dyn Query>> = terms.iter().map(|t| self.term_query(t)).collect();
        let searcher = self.reader.searcher();
        let every = BooleanQuery::new(
            clauses
                .iter()
                .map(|c| (Occur::Must, c.box_clone()))
                .collect(),
        );
        let mut top = searcher.search(&every, &weighted(limit))?;
        if top.is_empty() && terms.len() > 1 {
            let any = BooleanQuery::new(clauses.into_iter().map(|c| (Occur::Should, c)).collect());
            top = searcher.search(&any, &weighted(limit))?;
        }
        top.into_iter()
            .map(|(score, address)| self.hit(&searcher, score, address, &terms, excerpt_chars))
            .collect()
    }

    pub(crate) fn hit(
        &self,
        searcher: &tantivy::Searcher,
        score: Score,
        address: DocAddress,
        terms: &[QueryTerm],
        excerpt_chars: usize,
    ) -> tantivy::Result<Hit> {
        let ordinal = searcher
            .segment_reader(address.segment_ord)
            .fast_fields()
            .u64("ordinal")?
            .first(address.doc_id)
            .unwrap_or_default() as usize;
        let excerpt = if excerpt_chars == 0 {
            String::new()
        } else {
            let doc: TantivyDocument = searcher.doc(address)?;
            let body = doc
                .get_first(self.fields.body)
                .and_then(|v| v.as_str())
                .unwrap_or_default();
            excerpt(body, terms, excerpt_chars)
        };
        Ok(Hit {
            key: self.keys.get(ordinal).cloned().unwrap_or_default(),
            ordinal,
            score,
            excerpt,
        })
    }

    /// A term anywhere: in any field, in any of its forms, whole (scored) or as a prefix.
    fn term_query(&self, term: &QueryTerm) -> Box<dyn Query> {
        let mut alternatives: Vec<(Occur, Box<dyn Query>)> = Vec::new();
        // The body is indexed in two parts (its own prose, its boilerplate): together, the
        // whole body.
        for (field, boost) in [
            (self.fields.title, TITLE_BOOST),
            (self.fields.breadcrumb, BREADCRUMB_BOOST),
            (self.fields.core, BODY_BOOST),
            (self.fields.boilerplate, BODY_BOOST),
        ] {
            for form in &term.forms {
                let whole = TermQuery::new(
                    Term::from_field_text(field, form),
                    IndexRecordOption::WithFreqs,
                );
                alternatives.push((
                    Occur::Should,
                    Box::new(BoostQuery::new(Box::new(whole), boost)),
                ));
                if term.is_prefix() {
                    alternatives.push((
                        Occur::Should,
                        Box::new(ConstScoreQuery::new(
                            Box::new(prefix_query(field, form)),
                            boost * PREFIX_SHARE,
                        )),
                    ));
                }
            }
        }
        Box::new(BooleanQuery::new(alternatives))
    }
}

/// Every term of `field` that starts with `prefix`: the term dictionary's range from `prefix` up
/// to `prefix` followed by 0xFF, a byte no UTF-8 text holds. A range is read straight off the
/// dictionary; the regex `prefix.*` it replaces compiled an automaton per term and search (a
/// tenth of `search_trips`' CPU under load).
pub(crate) fn prefix_query(field: Field, prefix: &str) -> RangeQuery {
    let lower = Term::from_field_text(field, prefix);
    let mut upper = lower.clone();
    upper.append_bytes(&[0xFF]);
    RangeQuery::new(Bound::Included(lower), Bound::Excluded(upper))
}

/// The index's fields; the same every time, so a persisted index finds them by name.
fn schema() -> (Schema, Fields) {
    let mut schema = Schema::builder();
    let indexed = TextOptions::default().set_indexing_options(
        TextFieldIndexing::default()
            .set_tokenizer(TOKENIZER)
            .set_index_option(IndexRecordOption::WithFreqs),
    );
    let fields = Fields {
        ordinal: schema.add_u64_field("ordinal", FAST),
        title: schema.add_text_field("title", indexed.clone()),
        breadcrumb: schema.add_text_field("breadcrumb", indexed.clone()),
        body: schema.add_text_field("body", STORED),
        core: schema.add_text_field("core", indexed.clone()),
        boilerplate: schema.add_text_field("boilerplate", indexed.clone()),
        outline: schema.add_text_field("outline", indexed.clone()),
        months: schema.add_text_field("months", indexed),
        kind: schema.add_text_field("kind", STRING | FAST),
        title_key: schema.add_text_field("title_key", STRING | FAST),
        weight: schema.add_f64_field("weight", FAST),
    };
    (schema.build(), fields)
}

/// Top documents by relevance × the document's weight.
pub(crate) fn weighted(
    limit: usize,
) -> impl tantivy::collector::Collector<Fruit = Vec<(Score, DocAddress)>> {
    TopDocs::with_limit(limit).tweak_score(move |segment: &SegmentReader| {
        let weights = segment
            .fast_fields()
            .f64("weight")
            .map(|column| column.first_or_default_col(1.0));
        move |doc, score: Score| match &weights {
            Ok(column) => score * column.get_val(doc) as Score,
            Err(_) => score,
        }
    })
}

/// The analyzer of [`crate::analyzer`] as a tantivy tokenizer: both foldings of a word share its
/// position.
#[derive(Clone)]
struct GermanTokenizer;

struct Stream {
    tokens: Vec<TantivyToken>,
    next: usize,
}

impl Tokenizer for GermanTokenizer {
    type TokenStream<'a> = Stream;

    fn token_stream<'a>(&'a mut self, text: &'a str) -> Stream {
        let mut out = Vec::new();
        for (position, token) in tokens(text).into_iter().enumerate() {
            let make = |text: String| TantivyToken {
                offset_from: token.start,
                offset_to: token.end,
                position,
                text,
                position_length: 1,
            };
            let plain = token.alternative.as_ref().unwrap_or(&token.term);
            // The stem is a prefix of the plain folding, so a prefix query finds exactly the
            // documents it found before; the ranked search matches stems whole.
            if let Some(stem) = crate::question::stem(plain) {
                out.push(make(stem));
            }
            if let Some(alternative) = &token.alternative {
                out.push(make(alternative.clone()));
            }
            out.push(make(token.term));
        }
        Stream {
            tokens: out,
            next: 0,
        }
    }
}

impl TokenStream for Stream {
    fn advance(&mut self) -> bool {
        self.next += 1;
        self.next <= self.tokens.len()
    }

    fn token(&self) -> &TantivyToken {
        &self.tokens[self.next - 1]
    }

    fn token_mut(&mut self) -> &mut TantivyToken {
        &mut self.tokens[self.next - 1]
    }
}
