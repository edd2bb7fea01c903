//! `ContentSearch`: the mirror's searchable documents in a [`TextIndex`], rebuilt whole when a
//! sync (in this process or in `concierge sync`) bumps the store's generation.

use std::collections::HashMap;
use std::sync::{Arc, RwLock};
use std::time::{Duration, Instant};

use concierge_search::{IndexDoc, TextIndex};

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

struct Listing {
    key: crate::content::feed::DocKey,
    url: String,
    title: String,
    kind: String,
    site: Option<String>,
}

struct Snapshot {
    generation: u64,
    index: TextIndex,
    listings: HashMap<String, Listing>,
}

pub struct ContentIndex {
    store: Arc<dyn ContentStore>,
    current: RwLock<Arc<Snapshot>>,
    /// When the store was last asked; held while a rebuild runs, so only one runs.
    checked: tokio::sync::Mutex<Instant>,
}

impl ContentIndex {
    pub async fn open(store: Arc<dyn ContentStore>) -> Result<Self, StoreError> {
        let snapshot = build(store.as_ref()).await?;
        Ok(Self {
            store,
            current: RwLock::new(Arc::new(snapshot)),
            checked: tokio::sync::Mutex::new(Instant::now()),
        })
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
        self.refresh_if_due().await?;
        let snapshot = self.snapshot();
        let hits = snapshot
            .index
            .search(query, MAX_HITS, EXCERPT_CHARS)
            .map_err(|e| StoreError::new(format!("search failed: {e}")))?;
        Ok(hits
            .into_iter()
            .filter_map(|hit| {
                let listing = snapshot.listings.get(&hit.key)?;
                Some(ContentHit {
                    url: listing.url.clone(),
                    title: listing.title.clone(),
                    kind: listing.kind.clone(),
                    site: listing.site.clone(),
                    excerpt: hit.excerpt,
                })
            })
            .collect())
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
            .filter_map(|hit| snapshot.listings.get(&hit.key).map(|l| l.key.clone()))
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
        let snapshot = build(self.store.as_ref()).await?;
        tracing::info!(
            documents = snapshot.index.len(),
            generation = snapshot.generation,
            "content index rebuilt"
        );
        *self.current.write().unwrap_or_else(|p| p.into_inner()) = Arc::new(snapshot);
        Ok(())
    }
}

async fn build(store: &dyn ContentStore) -> Result<Snapshot, StoreError> {
    let generation = store.state().await?.generation;
    let docs = store.documents().await?;
    tokio::task::spawn_blocking(move || snapshot(generation, docs))
        .await
        .map_err(|e| StoreError::new(format!("index build failed: {e}")))?
}

fn snapshot(generation: u64, docs: Vec<Document>) -> Result<Snapshot, StoreError> {
    let mut listings = HashMap::new();
    let mut index_docs = Vec::new();
    for doc in docs.into_iter().filter(Document::is_searchable) {
        let key = doc.key.to_string();
        index_docs.push(IndexDoc {
            key: key.clone(),
            title: doc.title.clone(),
            breadcrumb: doc.breadcrumb.join(" › "),
            body: doc.body_md,
            weight: type_weight(&doc.key.kind),
        });
        listings.insert(
            key,
            Listing {
                key: doc.key.clone(),
                url: doc.public_url.unwrap_or_default(),
                title: doc.title,
                kind: doc.key.kind,
                site: doc.site,
            },
        );
    }
    let index = TextIndex::build(index_docs)
        .map_err(|e| StoreError::new(format!("index build failed: {e}")))?;
    Ok(Snapshot {
        generation,
        index,
        listings,
    })
}
