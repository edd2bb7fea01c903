//! `ContentSearch`: the mirror's searchable documents in a [`TextIndex`], rebuilt whole when a
//! sync (in this process or in `concierge sync`) bumps the store's generation.
//!
//! A mirror on this host keeps its index on disk too, one directory per generation beside the
//! database (`content.sqlite.index/v2l2-g42/`): a restart opens it in milliseconds instead of
//! analyzing every document again (50,000 documents took 13 s).

use std::borrow::Cow;
use std::sync::{Arc, RwLock};
use std::time::{Duration, Instant};

use std::path::{Path, PathBuf};

use concierge_search::{FORMAT, IndexDoc, Lexicon, Question, TextIndex};

use super::document::Document;
use super::store::{ContentStore, StoreError};

/// How often a search asks the store whether a sync changed something: one tiny query.
const RECHECK: Duration = Duration::from_secs(2);
pub const MAX_HITS: usize = 8;
pub const EXCERPT_CHARS: usize = 600;

/// Relevance by kind, as the seed orders them: products and hotels, then destinations and
/// concepts, then pages, then blog posts.
pub fn type_weight(kind: &str) -> f32 {
    match kind {
        "product" | "hotel" => 4.0,
        "city" | "region" | "country" | "concept" => 3.0,
        "page" => 2.0,
        _ => 1.0,
    }
}

#[derive(Debug, Clone, PartialEq)]
pub struct ContentHit {
    pub url: String,
    pub title: String,
    pub kind: String,
    pub site: Option<String>,
    pub excerpt: String,
}

#[derive(serde::Serialize, serde::Deserialize)]
struct Listing {
    key: crate::content::feed::DocKey,
    url: String,
    title: String,
    kind: String,
    site: Option<String>,
}

/// [`Listing`] as read to check a kept line, without a copy of its texts.
#[derive(serde::Deserialize)]
#[allow(dead_code)] // read only to be checked
struct ListingRef<'a> {
    key: crate::content::feed::DocKey,
    #[serde(borrow)]
    url: Cow<'a, str>,
    #[serde(borrow)]
    title: Cow<'a, str>,
    #[serde(borrow)]
    kind: Cow<'a, str>,
    #[serde(borrow)]
    site: Option<Cow<'a, str>>,
}

/// The index's documents as a hit lists them, one JSON line each in the order they were indexed,
/// decoded only for the hits a search returns. A restart read fifty thousand of them into a map
/// (6 % of its CPU at that size) for the eight a search shows; checking the lines without
/// building them costs about a sixth of that.
struct Listings {
    lines: String,
    /// Where each line starts, and the end of the last.
    starts: Vec<usize>,
}

impl Listings {
    fn write(listings: &[Listing]) -> serde_json::Result<Self> {
        let mut lines = String::new();
        for listing in listings {
            // JSON escapes every line break inside a string: one listing, one line.
            lines.push_str(&serde_json::to_string(listing)?);
            lines.push('\n');
        }
        Ok(Self::read(lines))
    }

    fn read(lines: String) -> Self {
        let mut starts = vec![0];
        starts.extend(lines.match_indices('\n').map(|(at, _)| at + 1));
        Self { lines, starts }
    }

    /// Read back from a kept file: every line a listing, one per document of the index.
    fn read_checked(lines: String, documents: usize) -> Result<Self, String> {
        let listings = Self::read(lines);
        if listings.len() != documents {
            return Err(format!(
                "{} listings for {documents} documents",
                listings.len()
            ));
        }
        for ordinal in 0..listings.len() {
            serde_json::from_str::<ListingRef>(listings.line(ordinal))
                .map_err(|e| format!("listing {ordinal}: {e}"))?;
        }
        Ok(listings)
    }

    fn len(&self) -> usize {
        self.starts.len() - 1
    }

    fn line(&self, ordinal: usize) -> &str {
        self.lines[self.starts[ordinal]..self.starts[ordinal + 1]].trim_end_matches('\n')
    }

    fn get(&self, ordinal: usize) -> Option<Listing> {
        if ordinal >= self.len() {
            return None;
        }
        serde_json::from_str(self.line(ordinal)).ok()
    }
}

struct Snapshot {
    generation: u64,
    index: TextIndex,
    listings: Listings,
}

pub struct ContentIndex {
    store: Arc<dyn ContentStore>,
    /// Where the index of each generation is kept; `None`: in memory only.
    persisted: Option<PathBuf>,
    current: RwLock<Arc<Snapshot>>,
    /// When the store was last asked; held while a rebuild runs, so only one runs.
    checked: tokio::sync::Mutex<Instant>,
    /// The words questions are read with (type words, synonyms).
    lexicon: Lexicon,
}

/// What `search_content` answers: the hits, and what the question asked that nothing holds.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct ContentAnswer {
    pub hits: Vec<ContentHit>,
    /// Words of the question no document holds in any form ("Kanada", "Whistler").
    pub unmatched: Vec<String>,
    /// The question had no word that carries meaning ("Was ist das?").
    pub nothing_asked: bool,
    /// No page holds every word: the hits hold most of them.
    pub partial: bool,
    /// Words past the first eight of a long query, not searched for.
    pub left_out: Vec<String>,
}

impl ContentIndex {
    /// The index of the mirror's current generation: opened from `persisted` when it holds one,
    /// built (and kept there) otherwise. `None`: built in memory.
    pub async fn open(
        store: Arc<dyn ContentStore>,
        persisted: Option<PathBuf>,
    ) -> Result<Self, StoreError> {
        let started = Instant::now();
        let snapshot = build(store.as_ref(), persisted.as_deref()).await?;
        tracing::info!(
            documents = snapshot.index.len(),
            ms = started.elapsed().as_millis() as u64,
            "content index ready"
        );
        Ok(Self {
            store,
            persisted,
            current: RwLock::new(Arc::new(snapshot)),
            checked: tokio::sync::Mutex::new(Instant::now()),
            lexicon: super::words::lexicon(&[]).map_err(StoreError::new)?,
        })
    }

    /// Reads questions with `lexicon` (the defaults and a deployment's own synonyms).
    pub fn with_lexicon(mut self, lexicon: Lexicon) -> Self {
        self.lexicon = lexicon;
        self
    }

    pub fn len(&self) -> usize {
        self.snapshot().index.len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    fn snapshot(&self) -> Arc<Snapshot> {
        self.current
            .read()
            .unwrap_or_else(|p| p.into_inner())
            .clone()
    }

    /// Up to eight hits for `query`, best first.
    pub async fn search(&self, query: &str) -> Result<Vec<ContentHit>, StoreError> {
        Ok(self.answer(query).await?.hits)
    }

    /// `query` read as a customer's question ([`Question`]): up to eight hits, best first, and
    /// what it asked that nothing holds.
    pub async fn answer(&self, query: &str) -> Result<ContentAnswer, StoreError> {
        self.refresh_if_due().await?;
        let snapshot = self.snapshot();
        let question = Question::read(query, &self.lexicon);
        let found = snapshot
            .index
            .ask(&question, MAX_HITS, EXCERPT_CHARS)
            .map_err(|e| StoreError::new(format!("search failed: {e}")))?;
        let hits = found
            .hits
            .into_iter()
            .filter_map(|hit| {
                let listing = snapshot.listings.get(hit.ordinal)?;
                Some(ContentHit {
                    url: listing.url,
                    title: listing.title,
                    kind: listing.kind,
                    site: listing.site,
                    excerpt: hit.excerpt,
                })
            })
            .collect();
        Ok(ContentAnswer {
            hits,
            unmatched: found.unmatched,
            nothing_asked: found.nothing_asked,
            partial: found.partial,
            left_out: question.left_out,
        })
    }

    /// The documents whose texts match `query` best (every term, then any), for the trip
    /// catalog's last `NameQuery` step.
    pub async fn matching_documents(
        &self,
        query: &str,
        limit: usize,
    ) -> Result<Vec<crate::content::feed::DocKey>, StoreError> {
        self.refresh_if_due().await?;
        let snapshot = self.snapshot();
        let hits = snapshot
            .index
            .search(query, limit, 0)
            .map_err(|e| StoreError::new(format!("search failed: {e}")))?;
        Ok(hits
            .into_iter()
            .filter_map(|hit| snapshot.listings.get(hit.ordinal).map(|l| l.key))
            .collect())
    }

    /// Rebuilds when the store's generation moved. A search that finds a rebuild under way
    /// answers from the current snapshot instead of waiting.
    pub async fn refresh_if_due(&self) -> Result<(), StoreError> {
        let Ok(mut checked) = self.checked.try_lock() else {
            return Ok(());
        };
        if checked.elapsed() < RECHECK {
            return Ok(());
        }
        *checked = Instant::now();
        self.reload_if_changed().await
    }

    /// Rebuilds now if a sync changed the store (a sync in this process calls it when done).
    pub async fn reload_if_changed(&self) -> Result<(), StoreError> {
        let generation = self.store.state().await?.generation;
        if generation == self.snapshot().generation {
            return Ok(());
        }
        let snapshot = build(self.store.as_ref(), self.persisted.as_deref()).await?;
        tracing::info!(
            documents = snapshot.index.len(),
            generation = snapshot.generation,
            "content index rebuilt"
        );
        *self.current.write().unwrap_or_else(|p| p.into_inner()) = Arc::new(snapshot);
        Ok(())
    }
}

async fn build(store: &dyn ContentStore, persisted: Option<&Path>) -> Result<Snapshot, StoreError> {
    let generation = store.state().await?.generation;
    let dir = persisted.map(|root| root.join(format!("{}{generation}", kept_prefix())));
    if let Some(kept) = dir.clone().filter(|dir| dir.join(READY).exists()) {
        let opened = tokio::task::spawn_blocking(move || {
            let opened = open_persisted(&kept, generation);
            if opened.is_err() {
                // Damaged (a disk fault, a hand edit): out of the way of the build below.
                let _ = std::fs::remove_dir_all(&kept);
            }
            opened
        })
        .await
        .map_err(|e| StoreError::new(format!("index open failed: {e}")))?;
        match opened {
            Ok(snapshot) => return Ok(snapshot),
            Err(error) => {
                tracing::warn!(%error, "content index: the kept index is unreadable; rebuilding")
            }
        }
    }
    let docs = store.documents().await?;
    let kept = dir.is_some();
    let built = tokio::task::spawn_blocking(move || match dir {
        Some(dir) => build_persisted(&dir, generation, docs),
        None => snapshot(generation, docs, None),
    })
    .await
    .map_err(|e| StoreError::new(format!("index build failed: {e}")))?;
    match built {
        // A full disk or a read-only directory costs the next start its time, not its search.
        Err(error) if kept => {
            tracing::warn!(%error, "content index: cannot keep it on disk; building it in memory");
            let docs = store.documents().await?;
            tokio::task::spawn_blocking(move || snapshot(generation, docs, None))
                .await
                .map_err(|e| StoreError::new(format!("index build failed: {e}")))?
        }
        built => built,
    }
}

/// Marks a generation's directory complete: written last, after every file is synced.
const READY: &str = "ready";
const LISTINGS: &str = "listings.jsonl";
/// The layout of [`LISTINGS`] (1 was one JSON map of them all).
const LISTINGS_FORMAT: u32 = 2;

/// A kept generation's directory name, without the generation: what the index and its listings
/// are written in, so another version's directory is neither read nor kept.
fn kept_prefix() -> String {
    format!("v{FORMAT}l{LISTINGS_FORMAT}-g")
}

fn open_persisted(dir: &Path, generation: u64) -> Result<Snapshot, StoreError> {
    let failed = |e: &dyn std::fmt::Display| StoreError::new(format!("{}: {e}", dir.display()));
    let index = TextIndex::open(dir).map_err(|e| failed(&e))?;
    let listings = std::fs::read_to_string(dir.join(LISTINGS)).map_err(|e| failed(&e))?;
    let listings = Listings::read_checked(listings, index.len()).map_err(|e| failed(&e))?;
    Ok(Snapshot {
        generation,
        index,
        listings,
    })
}

/// Builds into a fresh directory beside `dir`, then renames it into place, so a crash leaves no
/// half-written generation behind a `ready` mark. Older generations are removed, but the one
/// before stays: a search may still be reading it.
fn build_persisted(
    dir: &Path,
    generation: u64,
    docs: Vec<Document>,
) -> Result<Snapshot, StoreError> {
    let root = dir.parent().expect("a generation's directory has a parent");
    let failed = |e: &dyn std::fmt::Display| StoreError::new(format!("{}: {e}", root.display()));
    let building = root.join(format!(
        ".building-{}-{}",
        std::process::id(),
        chrono::Utc::now().timestamp_nanos_opt().unwrap_or_default()
    ));
    std::fs::create_dir_all(&building).map_err(|e| failed(&e))?;
    let built = snapshot(generation, docs, Some(&building)).and_then(|snapshot| {
        write_synced(&building.join(LISTINGS), snapshot.listings.lines.as_bytes())
            .map_err(|e| failed(&e))?;
        write_synced(&building.join(READY), b"").map_err(|e| failed(&e))?;
        Ok(snapshot)
    });
    let snapshot = match built {
        Ok(snapshot) => snapshot,
        Err(error) => {
            let _ = std::fs::remove_dir_all(&building);
            return Err(error);
        }
    };
    if std::fs::rename(&building, dir).is_err() {
        // Another process kept this generation first: read its copy, drop ours.
        drop(snapshot);
        let _ = std::fs::remove_dir_all(&building);
        return open_persisted(dir, generation);
    }
    if let Ok(root_dir) = std::fs::File::open(root) {
        let _ = root_dir.sync_all();
    }
    prune(root, generation);
    Ok(snapshot)
}

fn write_synced(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    std::fs::write(path, bytes)?;
    std::fs::File::open(path)?.sync_all()
}

/// Removes generations older than the one before `generation`, other formats' indexes, and
/// builds that a crash left over an hour ago.
fn prune(root: &Path, generation: u64) {
    let Ok(entries) = std::fs::read_dir(root) else {
        return;
    };
    for entry in entries.flatten() {
        let name = entry.file_name().to_string_lossy().into_owned();
        let keep = match name.strip_prefix(&kept_prefix()) {
            Some(kept) => kept
                .parse::<u64>()
                .is_ok_and(|g| g + 1 >= generation && g <= generation),
            None if name.starts_with(".building-") => {
                entry.metadata().and_then(|m| m.modified()).is_ok_and(|at| {
                    at.elapsed()
                        .is_ok_and(|age| age < Duration::from_secs(3600))
                })
            }
            None => false,
        };
        if !keep {
            let _ = std::fs::remove_dir_all(entry.path());
        }
    }
}

/// What a customer calls the page: a destination or hotel by its place in the breadcrumb
/// ("Österreich" for "Skiurlaub in Österreich", "Clubhotel Bärenhütte" for "Clubhotel Bärenhütte
/// in Flaine"), anything else by its title. A question that is this name puts the page first.
fn page_name(doc: &Document) -> String {
    match doc.key.kind.as_str() {
        "city" | "region" | "country" | "hotel" => doc.breadcrumb.last().unwrap_or(&doc.title),
        _ => &doc.title,
    }
    .clone()
}

fn snapshot(
    generation: u64,
    docs: Vec<Document>,
    dir: Option<&Path>,
) -> Result<Snapshot, StoreError> {
    let mut listings = Vec::new();
    let mut index_docs = Vec::new();
    for doc in docs.into_iter().filter(Document::is_searchable) {
        index_docs.push(IndexDoc {
            key: doc.key.to_string(),
            kind: doc.key.kind.clone(),
            name: page_name(&doc),
            title: doc.title.clone(),
            breadcrumb: doc.breadcrumb.join(" › "),
            faq: doc.key.kind == "page" && super::words::is_faq_title(&doc.title),
            body: doc.body_md,
            weight: type_weight(&doc.key.kind),
        });
        listings.push(Listing {
            key: doc.key.clone(),
            url: doc.public_url.unwrap_or_default(),
            title: doc.title,
            kind: doc.key.kind,
            site: doc.site,
        });
    }
    let index = match dir {
        Some(dir) => TextIndex::build_in(dir, index_docs),
        None => TextIndex::build(index_docs),
    }
    .map_err(|e| StoreError::new(format!("index build failed: {e}")))?;
    let listings = Listings::write(&listings)
        .map_err(|e| StoreError::new(format!("index build failed: {e}")))?;
    Ok(Snapshot {
        generation,
        index,
        listings,
    })
}
