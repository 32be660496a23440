//! Ferret: fetches the pages the discovery loop orders, and the shared cache of fetched pages.
//!
//! The loop (the core's [`Engine`](ferret::discovery::engine::Engine), hosted by the
//! FerretAdvisor) decides what to fetch — a fingerprint drawn at random, its representative's
//! links, robots.txt, per-host politeness, dedup, no refetch — and hands each order to a
//! Ferret, round-robin. The Ferret fetches it with the shared [`PageFetcher`] (HTML only, the
//! size limit, redirects under the address policy), parses the page and computes its
//! features on its own arbiter's thread, and replies with the page: the CPU work of a crawl
//! spreads over the pool, and the loop only judges. Many orders run on one Ferret at once.
//!
//! **The shared cache.** Every page a Ferret fetches goes into the [`PageCache`] (a
//! [`DashMap`] the whole pool, the FerretAdvisor and the HTTP API share), then its verdicts as
//! the loop gives them: approved by a ferret fingerprint (and which), accepted by a filter.
//! An entry is a few scalars keyed by URL, not the page (the loop keeps the pages it judges,
//! PageDb keeps them all), and the cache holds at most `capacity` entries: when full, the
//! oldest fetched eighth goes. `GET /api/cache` reads it.

use std::sync::Arc;

use actix::ResponseFuture;
use dashmap::DashMap;
use ferret::Role;
use serde::Serialize;

use crate::discover::{fetch_order, Done};
use crate::instance::{Cx, Handle, RoleActor};
use crate::messages::FetchPage;
use crate::page_fetcher::PageFetcher;

/// Entries the daemon's cache holds at most: about 150 bytes each with its URL, so some
/// 30 MB at most.
pub const CACHE_CAPACITY: usize = 200_000;

/// What the shared cache knows of one fetched page.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct CachedPage {
    /// Whether a ferret fingerprint approved it.
    pub approved: bool,
    /// The fingerprint that approved it (the first).
    pub fingerprint: Option<u64>,
    /// When it was fetched (Unix ms).
    pub fetched_at_ms: i64,
    /// Whether a filter accepted it into the map (or it was liked).
    pub accepted: bool,
}

/// A fetched page and its verdicts, as `GET /api/cache` lists them.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct CacheRow {
    /// The page.
    pub url: String,
    /// What the cache knows of it.
    #[serde(flatten)]
    pub page: CachedPage,
}

/// Every page the Ferrets fetched, approved or not, shared by the Ferret pool (which writes
/// each page fetched), the FerretAdvisor (which writes the loop's verdicts) and the HTTP API
/// (which reads). Bounded: see the module docs. Clones share the map.
#[derive(Debug, Clone)]
pub struct PageCache {
    pages: Arc<DashMap<String, CachedPage>>,
    capacity: usize,
}

impl Default for PageCache {
    fn default() -> Self {
        PageCache::new(CACHE_CAPACITY)
    }
}

impl PageCache {
    /// An empty cache of at most `capacity` entries (at least 8).
    pub fn new(capacity: usize) -> PageCache {
        PageCache {
            pages: Arc::new(DashMap::new()),
            capacity: capacity.max(8),
        }
    }

    /// A page fetched at `at_ms` (its verdicts so far kept).
    pub fn fetched(&self, url: &str, at_ms: i64) {
        self.upsert(url, |page| page.fetched_at_ms = at_ms);
    }

    /// A page ferret fingerprint `fingerprint` approved.
    pub fn approved(&self, url: &str, fingerprint: u64) {
        self.upsert(url, |page| {
            if !page.approved {
                page.approved = true;
                page.fingerprint = Some(fingerprint);
            }
        });
    }

    /// A page accepted into the map; `fingerprint` approved it first, if one did.
    pub fn accepted(&self, url: &str, fingerprint: Option<u64>, fetched_at_ms: i64) {
        self.upsert(url, |page| {
            page.accepted = true;
            page.fetched_at_ms = page.fetched_at_ms.max(fetched_at_ms);
            if let (false, Some(fp)) = (page.approved, fingerprint) {
                page.approved = true;
                page.fingerprint = Some(fp);
            }
        });
    }

    /// A page as an earlier run left it in the store.
    pub fn restore(&self, url: &str, page: CachedPage) {
        self.upsert(url, |cached| *cached = page);
    }

    /// What the cache knows of `url`.
    pub fn get(&self, url: &str) -> Option<CachedPage> {
        self.pages.get(url).map(|page| *page)
    }

    /// Entries held.
    pub fn len(&self) -> usize {
        self.pages.len()
    }

    /// Whether it holds nothing.
    pub fn is_empty(&self) -> bool {
        self.pages.is_empty()
    }

    /// Up to `limit` entries, the latest fetched first (then by URL); only approved ones
    /// with `approved_only`.
    pub fn latest(&self, limit: usize, approved_only: bool) -> Vec<CacheRow> {
        let mut rows: Vec<CacheRow> = self
            .pages
            .iter()
            .filter(|entry| !approved_only || entry.approved)
            .map(|entry| CacheRow {
                url: entry.key().clone(),
                page: *entry.value(),
            })
            .collect();
        rows.sort_by(|a, b| {
            b.page
                .fetched_at_ms
                .cmp(&a.page.fetched_at_ms)
                .then_with(|| a.url.cmp(&b.url))
        });
        rows.truncate(limit);
        rows
    }

    fn upsert(&self, url: &str, change: impl FnOnce(&mut CachedPage)) {
        if let Some(mut page) = self.pages.get_mut(url) {
            change(&mut page);
            return;
        }
        if self.pages.len() >= self.capacity {
            self.evict();
        }
        change(&mut self.pages.entry(url.to_string()).or_default());
    }

    /// Drops the oldest fetched eighth of the entries: one scan per `capacity / 8` new
    /// entries.
    fn evict(&self) {
        let mut times: Vec<i64> = self.pages.iter().map(|e| e.fetched_at_ms).collect();
        let drop = (times.len() / 8).max(1);
        let (_, &mut cut, _) = times.select_nth_unstable(drop - 1);
        let mut left = drop;
        self.pages.retain(|_, page| {
            if left > 0 && page.fetched_at_ms <= cut {
                left -= 1;
                false
            } else {
                true
            }
        });
    }
}

/// One instance of the Ferret pool.
pub struct Ferret {
    fetcher: PageFetcher,
    cache: PageCache,
}

impl Ferret {
    /// An instance fetching with `fetcher` (clones share its connections) into `cache`.
    pub fn new(fetcher: PageFetcher, cache: PageCache) -> Ferret {
        Ferret { fetcher, cache }
    }
}

impl RoleActor for Ferret {
    const ROLE: &'static str = Role::Ferret.name();
}

impl Handle<FetchPage> for Ferret {
    type Reply = ResponseFuture<Done>;

    fn handle(&mut self, msg: FetchPage, _: &mut Cx<'_, Self>) -> Self::Reply {
        let fetcher = self.fetcher.clone();
        let cache = self.cache.clone();
        Box::pin(async move {
            let done = fetch_order(&fetcher, msg.order).await;
            if let Done::Page {
                result: Ok(page), ..
            } = &done
            {
                // The loop keys a page by its URL as parsed (the one its verdicts name).
                cache.fetched(page.0.url.as_str(), crate::supervisor::unix_millis());
            }
            done
        })
    }
}
