//! The discovery loop composed: every role's component, one step at a time, on a virtual
//! clock.
//!
//! ```text
//!  likes ─► Generalizer ─► lighthouses ─► FerretAdvisor ─► ferret fingerprints
//!                                    └──► FilterAdvisor  ─► filter fingerprints
//!  Ferret: a fingerprint at random ─► its representative's links ─► frontier ─► fetch
//!          ─► cache (every page) ─► approved? ─► Filter vote ─► Mapmaker ─► the map
//! ```
//!
//! The driver (the `discover` command, the benchmark, the tests) owns the sockets: it asks
//! [`Engine::poll_fetch`] what to fetch, hands the answers to [`Engine::handle_page`] and
//! [`Engine::handle_robots`], and drains [`Engine::poll_event`] into the store.
//!
//! **The vote runs outside the loop.** A page a ferret fingerprint approves becomes a
//! [`VoteOrder`] ([`Engine::poll_vote`]): the page's features and a [`Ballot`] (the filters
//! and the term statistics, frozen and shared). The driver has it taken where it likes — by the
//! daemon's Filter pool, on a worker thread, or here with [`Engine::settle_votes`] — and hands
//! the verdict to [`Engine::handle_vote`], which maps the page or discards it. Until then the
//! page counts for its fingerprint neither as accepted nor as exhausted.
//!
//! **What a Ferret fetches first.** A fingerprint's representative has its links queued in
//! the frontier, each with a priority: the link's own topic (its URL's words and its anchor
//! text, [`FeatureKind::OF_LINK`]) against the representative's and its lighthouse's, plus the
//! representative's hittage and yield. The frontier serves the best first, so when several
//! fingerprints have run the crawl is best-first across them all; every link is still fetched
//! in time, as the seed's Ferret does.
//!
//! **Start-up.** Liked pages are fetched first and enter the map at once; an explicit like
//! makes a lighthouse. Until the cache holds `min_sample` pages the advisors have no sample to
//! tell distinctive features from, so the liked pages' links are fetched and kept (the sample)
//! and judged as soon as the first fingerprints exist.

use std::collections::{BTreeSet, VecDeque};
use std::sync::Arc;

use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};
use rustc_hash::{FxHashMap, FxHashSet};
use serde::Serialize;

use super::advisor::{
    topic_similarity, FerretAdvisor, FerretAdvisorParams, FerretFingerprint, PageView,
    RepresentativeHistory,
};
use super::features::{similarity, AddressStats, FeatureKind, Features, TermStats};
use super::filter::{Ballot, FilterBank, FilterFingerprint, FilterParams};
use super::frontier::{FetchOrder, FetchOutcome, Frontier, FrontierConfig};
use super::hittage::{self, Feedback, FeedbackKind, HittageParams, Lighthouses};
use super::page::PageDoc;
use crate::stories::text::Analyzer;

/// The loop's settings.
#[derive(Debug, Clone)]
pub struct EngineParams {
    /// The Generalizer's.
    pub hittage: HittageParams,
    /// The FerretAdvisor's.
    pub advisor: FerretAdvisorParams,
    /// The FilterAdvisor's.
    pub filter: FilterParams,
    /// Politeness and refetching.
    pub frontier: FrontierConfig,
    /// Random pages the advisors compare against.
    pub sample_size: usize,
    /// Cached pages needed before fingerprints are made.
    pub min_sample: usize,
    /// Pages fetched between two rebuilds of hittage, lighthouses and fingerprints.
    pub rebuild_every: u32,
    /// Queued fetches under which Ferrets run more fingerprints.
    pub low_water: usize,
    /// Pages fetched at random from the root page of each liked page's host: the background
    /// the advisors' random sample is drawn from (the pages, and the addresses they link to).
    pub background_pages: usize,
    /// Seeds the fingerprint draws and the samples.
    pub seed: u64,
}

impl Default for EngineParams {
    fn default() -> Self {
        EngineParams {
            hittage: HittageParams::default(),
            advisor: FerretAdvisorParams::default(),
            filter: FilterParams::default(),
            frontier: FrontierConfig::default(),
            sample_size: 64,
            min_sample: 16,
            background_pages: 8,
            rebuild_every: 8,
            low_water: 256,
            seed: 1,
        }
    }
}

/// What the loop tells its driver.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "event", rename_all = "snake_case")]
pub enum DiscoveryEvent {
    /// A page was fetched (or its fetch failed): the store remembers it, so that it is not
    /// fetched again after a restart.
    Fetched {
        /// The page.
        url: String,
        /// Its title; empty when the fetch failed.
        title: String,
        /// When.
        at_ms: i64,
        /// Its features, complete, and its links (none when the fetch failed): the store
        /// keeps them so that a restarted loop can judge the page without fetching it again.
        features: Option<Box<Features>>,
        /// See `features`.
        links: Vec<String>,
    },
    /// A ferret fingerprint approved a fetched page (the first to approve it; its verdict
    /// stays with the page, accepted or not).
    Approved {
        /// The page.
        url: String,
        /// The fingerprint.
        fingerprint: u64,
    },
    /// A page passed a filter (or was liked) and enters the map with its links.
    Accepted(Box<AcceptedPage>),
    /// A fetched page was judged and discarded: no filter passed it.
    Discarded {
        /// The page.
        url: String,
    },
}

/// A page a ferret fingerprint approved, to be voted on by the Filters: see the module's doc.
#[derive(Debug, Clone)]
pub struct VoteOrder {
    /// The page.
    pub url: String,
    /// The ferret fingerprint that approved it.
    pub fingerprint: u64,
    /// Its features (those the filters compare, at least); shared, so that a driver can keep
    /// the order (to vote itself if its Filter never answers) without copying them.
    pub features: Arc<Features>,
    /// What the vote is taken with.
    pub ballot: Arc<Ballot>,
}

impl VoteOrder {
    /// Takes the vote: the filter that passes the page, or None (discard it). Pure, and as
    /// cheap as a handful of similarities per filter.
    pub fn vote(&self) -> Option<u64> {
        self.ballot.vote(&self.features)
    }
}

/// A page entering the map, with everything the store keeps of it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct AcceptedPage {
    /// Its URL, normalised.
    pub url: String,
    /// `<link rel=canonical>`.
    pub canonical: Option<String>,
    /// Its title.
    pub title: String,
    /// Its language, if told.
    pub language: Option<String>,
    /// Its size in bytes.
    pub size: u32,
    /// When it was fetched.
    pub fetched_at_ms: i64,
    /// Every feature, computed.
    pub features: Features,
    /// Its links, normalised.
    pub links: Vec<String>,
    /// The filter that passed it; None for a liked page.
    pub filter: Option<u64>,
    /// The ferret fingerprint that approved it.
    pub fingerprint: Option<u64>,
    /// Its topic similarity to its nearest lighthouse, in [0, 1].
    pub score: f64,
}

/// A page of the map as the store keeps it.
#[derive(Debug, Clone, PartialEq)]
pub struct RestoredPage {
    /// Its URL.
    pub url: String,
    /// Its title.
    pub title: String,
    /// Its features, complete.
    pub features: Features,
    /// Its links.
    pub links: Vec<String>,
    /// The filter that passed it, if one did.
    pub filter: Option<u64>,
    /// Whether a ferret fingerprint approved it.
    pub approved: bool,
    /// The ferret fingerprint that approved it first, when the store knows it: a kept page
    /// it approved is one the vote discarded, voted on again when a filter is built.
    pub fingerprint: Option<u64>,
    /// When it was fetched.
    pub fetched_at_ms: i64,
}

/// What earlier runs left in the store, for [`Engine::resume`].
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Earlier {
    /// The map: accepted and liked pages.
    pub map: Vec<RestoredPage>,
    /// Pages fetched and kept but not accepted.
    pub kept: Vec<RestoredPage>,
    /// Every URL fetched.
    pub fetched: Vec<String>,
    /// The user's feedback.
    pub feedback: Vec<Feedback>,
    /// The ferret fingerprints in the pool.
    pub ferret: Vec<FerretFingerprint>,
    /// The filter fingerprints.
    pub filters: Vec<FilterFingerprint>,
    /// Each representative's history.
    pub history: Vec<(String, RepresentativeHistory)>,
}

/// Counts for the report.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct EngineCounts {
    /// Pages fetched (HTML answers parsed), liked pages included.
    pub fetched: u64,
    /// Fetches that failed or were not HTML.
    pub failed: u64,
    /// Pages a ferret fingerprint approved.
    pub approved: u64,
    /// Pages a filter accepted.
    pub accepted: u64,
    /// Ferret fingerprints made.
    pub fingerprints: u64,
    /// Ferret runs (a fingerprint's representative's links judged).
    pub runs: u64,
    /// Ferret fingerprints flushed as exhausted.
    pub flushed: u64,
}

/// A fetched page in the loop's cache: every page fetched is kept, approved or not, since
/// fingerprints to come may judge it.
struct CachedPage {
    doc: PageDoc,
    features: Features,
    fetched_at_ms: i64,
    /// Fingerprints that judged it.
    judged_by: Vec<u64>,
    /// The fingerprints' verdict: whether one of them approved it.
    approved: bool,
    /// Whether it is in the map.
    accepted: bool,
}

/// What the cache says of a fetched page ([`Engine::cached`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct CacheEntry {
    /// Whether a ferret fingerprint approved it.
    pub approved: bool,
    /// Whether it is in the map.
    pub accepted: bool,
    /// When it was fetched.
    pub fetched_at_ms: i64,
}

/// The discovery loop. See the module's doc.
pub struct Engine {
    params: EngineParams,
    rng: SmallRng,
    analyzer: Analyzer,
    stats: TermStats,
    cache: FxHashMap<String, CachedPage>,
    /// Cached URLs in fetch order (the sample's population).
    fetched_order: Vec<String>,
    /// The map: accepted and liked pages.
    map: FxHashSet<String>,
    liked: FxHashSet<String>,
    /// Root pages asked for, whose links give the background.
    roots: FxHashSet<String>,
    /// Background pages asked for, and those fetched.
    background_wanted: FxHashSet<String>,
    background: Vec<String>,
    /// The addresses the background pages link to (their URL's features only): the
    /// sample's URL-borne features are drawn from them as well, a wider look at the site than
    /// the background pages alone.
    background_links: Vec<Features>,
    /// The addresses the fetched pages link to: which URL tokens are common to the site.
    addresses: AddressStats,
    /// Pages of `fetched_order` whose links [`Engine::read_addresses`] has read.
    addresses_read: usize,
    feedback: Vec<Feedback>,
    hittage: FxHashMap<String, f64>,
    lighthouses: Lighthouses,
    /// The current lighthouses.
    lights: Vec<String>,
    /// The lighthouses come from outside ([`Engine::set_lighthouses`]), not from the
    /// engine's own computation.
    external_lights: bool,
    advisor: FerretAdvisor,
    filters: FilterBank,
    frontier: Frontier,
    /// URL → fingerprints waiting for its fetch.
    waiting: FxHashMap<String, Vec<u64>>,
    /// Fingerprints that have run.
    ran: FxHashSet<u64>,
    /// Pages whose links were queued when nothing else was left ([`Engine::broaden`]).
    broadened: FxHashSet<String>,
    /// Cached pages' topic similarities to the lighthouses, by which [`Engine::explorers`]
    /// and [`Engine::broaden`] rank pages and the advisor groups the map.
    nearest: Nearest,
    /// Representative → its history.
    history: FxHashMap<String, RepresentativeHistory>,
    since_rebuild: u32,
    /// Votes ordered and not yet taken by the driver.
    votes: VecDeque<VoteOrder>,
    /// Pages with a vote out (ordered, no verdict yet).
    voting: FxHashSet<String>,
    /// Pages a ferret fingerprint approved and the vote discarded, with that fingerprint:
    /// voted on again when a filter is built or rebuilt ([`Engine::revote`]).
    rejected: Vec<(String, u64)>,
    /// Pages whose vote out is such a second vote: their fingerprint's run was counted at
    /// the first.
    revoting: FxHashSet<String>,
    /// The ballot votes are ordered with; None until the first vote.
    ballot: Option<Arc<Ballot>>,
    /// Accepted page → the filter that passed it, for the user's verdicts.
    passed_by: FxHashMap<String, u64>,
    /// Pages a filter passed that have no feedback yet, by when they were passed: not
    /// visited once `unvisited_after_ms` has gone by. `awaiting` finds an entry by URL.
    unvisited: BTreeSet<(i64, String)>,
    awaiting: FxHashMap<String, i64>,
    /// Lighthouse → the size of the set its filter was built from.
    filter_sets: FxHashMap<String, usize>,
    /// Lighthouse → the cached pages linking to it, found by reading `fetched_order` up to
    /// the position kept with them (each page is read once per lighthouse).
    inlinks: FxHashMap<String, (usize, Vec<String>)>,
    events: VecDeque<DiscoveryEvent>,
    counts: EngineCounts,
}

/// Cached pages' topic similarities to the lighthouses; see [`Engine::update_nearest`].
#[derive(Debug, Default)]
struct Nearest {
    /// The lighthouses and the term statistics' page count it was computed with.
    lights: Vec<String>,
    docs: u32,
    /// URL → its topic similarity to each of `lights` (not a number for one not cached).
    by_page: FxHashMap<String, Vec<f64>>,
    /// Lighthouse → URL → their topic similarity: what `by_page` is made of, kept across a
    /// change of the lighthouses for those that stay.
    by_light: FxHashMap<String, FxHashMap<String, f64>>,
}

impl Nearest {
    /// Drops what was computed for `url` (its features changed): its similarities, and if it
    /// is a lighthouse, every page's similarity to it.
    fn forget(&mut self, url: &str) {
        if self.by_light.remove(url).is_some() {
            self.by_page.clear();
        }
        self.by_page.remove(url);
        for column in self.by_light.values_mut() {
            column.remove(url);
        }
    }

    /// The topic similarity of the page `url` to the lighthouse `light`, computed once.
    fn pair(
        &mut self,
        light: &str,
        url: &str,
        (page, lit): (&Features, &Features),
        stats: &TermStats,
    ) -> f64 {
        let column = match self.by_light.get_mut(light) {
            Some(column) => column,
            None => self.by_light.entry(light.to_string()).or_default(),
        };
        match column.get(url) {
            Some(&similarity) => similarity,
            None => {
                let similarity = topic_similarity(page, lit, stats);
                column.insert(url.to_string(), similarity);
                similarity
            }
        }
    }
}

impl std::fmt::Debug for Engine {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Engine")
            .field("counts", &self.counts)
            .finish_non_exhaustive()
    }
}

impl Engine {
    /// A loop that knows nothing yet.
    pub fn new(params: EngineParams) -> Engine {
        Engine {
            rng: SmallRng::seed_from_u64(params.seed),
            analyzer: Analyzer::new(),
            stats: TermStats::default(),
            cache: FxHashMap::default(),
            fetched_order: Vec::new(),
            map: FxHashSet::default(),
            liked: FxHashSet::default(),
            roots: FxHashSet::default(),
            background_wanted: FxHashSet::default(),
            background: Vec::new(),
            background_links: Vec::new(),
            addresses: AddressStats::default(),
            addresses_read: 0,
            feedback: Vec::new(),
            hittage: FxHashMap::default(),
            lighthouses: Lighthouses::new(&params.hittage),
            lights: Vec::new(),
            external_lights: false,
            advisor: FerretAdvisor::new(params.advisor.clone()),
            filters: FilterBank::new(params.filter.clone()),
            frontier: Frontier::new(params.frontier.clone()),
            waiting: FxHashMap::default(),
            ran: FxHashSet::default(),
            broadened: FxHashSet::default(),
            nearest: Nearest::default(),
            history: FxHashMap::default(),
            since_rebuild: 0,
            votes: VecDeque::new(),
            voting: FxHashSet::default(),
            rejected: Vec::new(),
            revoting: FxHashSet::default(),
            ballot: None,
            passed_by: FxHashMap::default(),
            unvisited: BTreeSet::new(),
            awaiting: FxHashMap::default(),
            filter_sets: FxHashMap::default(),
            inlinks: FxHashMap::default(),
            events: VecDeque::new(),
            counts: EngineCounts::default(),
            params,
        }
    }

    /// The user's feedback. A like of a page not fetched yet queues it first.
    pub fn feedback(&mut self, event: Feedback) {
        if event.kind == FeedbackKind::Like && self.liked.insert(event.url.clone()) {
            if let Some(page) = self.cache.get_mut(&event.url) {
                page.accepted = true;
                self.map.insert(event.url.clone());
            } else if let Ok(url) = url::Url::parse(&event.url) {
                if let Ok(root) = url.join("/") {
                    if self.roots.insert(root.to_string()) {
                        self.frontier.push(root, BACKGROUND, ms(event.at_ms));
                    }
                }
                self.frontier.push(url, LIKED, ms(event.at_ms));
            }
        }
        if let Some(&filter) = self.passed_by.get(&event.url) {
            self.stop_awaiting(&event.url);
            let verdict = match event.kind {
                FeedbackKind::Dislike => Some(false),
                _ => Some(true),
            };
            self.filters.judge(filter, verdict);
        }
        self.feedback.push(event);
    }

    /// Restores a page of the map from the store (its features complete): it is not fetched
    /// again, and it can be a lighthouse, a representative or a sample page again.
    pub fn restore_page(&mut self, page: RestoredPage) {
        let Ok(url) = url::Url::parse(&page.url) else {
            return;
        };
        self.frontier.mark_fetched(&url, ms(page.fetched_at_ms));
        let links = page
            .links
            .iter()
            .filter_map(|l| url::Url::parse(l).ok())
            .map(|url| super::page::Link {
                url,
                text: String::new(),
            })
            .collect();
        self.stats.add(&page.features);
        let key = url.to_string();
        self.cache.insert(
            key.clone(),
            CachedPage {
                doc: PageDoc {
                    url,
                    canonical: None,
                    title: page.title,
                    text: String::new(),
                    lang: page.features.language.clone().flatten(),
                    links,
                    images: page.features.images.unwrap_or(0),
                    size: page.features.size.unwrap_or(0) as usize,
                },
                features: page.features,
                fetched_at_ms: page.fetched_at_ms,
                judged_by: Vec::new(),
                approved: page.approved,
                accepted: true,
            },
        );
        self.fetched_order.push(key.clone());
        if let Some(filter) = page.filter {
            self.passed_by.insert(key.clone(), filter);
            self.await_visit(&key, page.fetched_at_ms);
        }
        self.map.insert(key);
    }

    /// Restores a page fetched but not accepted (its features complete): fingerprints to
    /// come can judge it without fetching it again.
    pub fn restore_fetched(&mut self, page: RestoredPage) {
        let url = page.url.clone();
        if let Some(fingerprint) = page.fingerprint {
            self.rejected.push((url.clone(), fingerprint));
        }
        self.restore_page(page);
        if let Some(cached) = self.cache.get_mut(&url) {
            cached.accepted = false;
        }
        self.map.remove(&url);
        self.passed_by.remove(&url);
        self.stop_awaiting(&url);
    }

    /// Resumes from what earlier runs left in the store: the map, the pages kept, the
    /// fingerprints and the representatives' history, every URL fetched, the feedback — in
    /// that order, so that feedback on a page already fetched does not queue it again, and a
    /// dislike of a page a filter passed before the restart reaches that filter.
    ///
    /// A restored ferret fingerprint runs again (its representative's links not fetched yet
    /// are queued: those in flight when the earlier run stopped), but the pages of those
    /// links already kept count as judged by it, so that nothing is counted twice.
    pub fn resume(&mut self, earlier: Earlier) {
        for page in earlier.map {
            self.restore_page(page);
        }
        for page in earlier.kept {
            self.restore_fetched(page);
        }
        for print in &earlier.ferret {
            let links: Vec<String> = self
                .cache
                .get(&print.representative)
                .map(|rep| rep.doc.links.iter().map(|l| l.url.to_string()).collect())
                .unwrap_or_default();
            for link in links {
                if let Some(page) = self.cache.get_mut(&link) {
                    page.judged_by.push(print.id);
                }
            }
        }
        self.advisor = FerretAdvisor::restore(self.params.advisor.clone(), earlier.ferret);
        self.filters = FilterBank::restore(self.params.filter.clone(), earlier.filters);
        self.history.extend(earlier.history);
        for url in earlier
            .fetched
            .iter()
            .filter_map(|u| url::Url::parse(u).ok())
        {
            self.mark_fetched(&url, 0);
        }
        for event in earlier.feedback {
            self.feedback(event);
        }
        self.requeue_start_up();
    }

    /// What the start-up queued and a resumed loop lost with the frontier: the links of the
    /// liked pages it has, and the background from their hosts' root pages. A loop killed
    /// early (a liked page and a few pages around it in the store) goes on from these.
    fn requeue_start_up(&mut self) {
        let now_ms = self
            .cache
            .values()
            .map(|p| p.fetched_at_ms)
            .max()
            .unwrap_or(0);
        let mut liked: Vec<String> = self
            .liked
            .iter()
            .filter(|url| self.cache.contains_key(*url))
            .cloned()
            .collect();
        liked.sort_unstable();
        for url in liked {
            if let Some(root) = url::Url::parse(&url).ok().and_then(|u| u.join("/").ok()) {
                if self.roots.insert(root.to_string()) {
                    if self.cache.contains_key(root.as_str()) {
                        self.pick_background(root.as_str(), now_ms);
                    } else {
                        self.frontier.push(root, BACKGROUND, ms(now_ms));
                    }
                }
            }
            self.queue_links(&url, &url, None, now_ms);
        }
    }

    /// Tells the loop `url` was fetched at `at_ms` (by an earlier run): it is not fetched again.
    pub fn mark_fetched(&mut self, url: &url::Url, at_ms: i64) {
        self.frontier.mark_fetched(url, ms(at_ms));
    }

    /// What to fetch next, if anything may be fetched at `now_ms`.
    pub fn poll_fetch(&mut self, now_ms: i64) -> Option<FetchOrder> {
        self.judge_unvisited(now_ms);
        self.run_ferrets(now_ms);
        if let Some(next) = self.next_order(now_ms) {
            return next;
        }
        // Nothing to fetch now or soon, and no answer on its way: rebuild on what came since
        // the last rebuild (or, in the map's stead, on the pages nearest to it) until
        // something can be fetched.
        for _ in 0..IDLE_REBUILDS {
            if self.frontier.stats().in_flight > 0 || self.rebuild(now_ms, true) == 0 {
                break;
            }
            self.run_ferrets(now_ms);
            if let Some(next) = self.next_order(now_ms) {
                return next;
            }
        }
        // The fingerprints have nothing left to give: rather than stop, fetch the links of
        // the kept page nearest to a lighthouse (best first), one page at a time.
        while self.frontier.stats().in_flight == 0 && self.broaden(now_ms) {
            if let Some(next) = self.next_order(now_ms) {
                return next;
            }
        }
        None
    }

    /// What the frontier has queued: `Some(Some(order))` to fetch now, `Some(None)` when the
    /// queued pages wait for their host's turn (politeness, a crawl delay), `None` when
    /// nothing is queued, or only pages that wait longer (a host being retried).
    ///
    /// A wait for a host's turn is not idle time: rebuilding and broadening then would queue
    /// the neighbourhood ahead of what the fingerprints ask for, and a polite crawl of one
    /// site would do nothing else.
    fn next_order(&mut self, now_ms: i64) -> Option<Option<FetchOrder>> {
        if let Some(order) = self.frontier.poll(ms(now_ms)) {
            return Some(Some(order));
        }
        let config = &self.params.frontier;
        let turn = config.min_interval_ms.max(config.max_crawl_delay_ms);
        self.frontier
            .poll_timeout()
            .is_some_and(|at| at <= ms(now_ms).saturating_add(turn))
            .then_some(None)
    }

    /// When [`Engine::poll_fetch`] may have something again, if it has nothing now.
    pub fn poll_timeout(&mut self) -> Option<i64> {
        self.frontier
            .poll_timeout()
            .map(|t| i64::try_from(t).unwrap_or(i64::MAX))
    }

    /// The next event for the store.
    pub fn poll_event(&mut self) -> Option<DiscoveryEvent> {
        self.events.pop_front()
    }

    /// The next vote to take: see the module's doc. Every order must be answered with
    /// [`Engine::handle_vote`].
    pub fn poll_vote(&mut self) -> Option<VoteOrder> {
        self.votes.pop_front()
    }

    /// Takes every vote ordered, here, on the loop's thread: for drivers with no Filters of
    /// their own (a virtual clock, the tests).
    pub fn settle_votes(&mut self, now_ms: i64) {
        while let Some(order) = self.poll_vote() {
            let verdict = order.vote();
            self.handle_vote(&order.url, order.fingerprint, verdict, now_ms);
        }
    }

    /// The counts so far.
    pub fn counts(&self) -> EngineCounts {
        EngineCounts {
            flushed: self.advisor.flushed(),
            ..self.counts
        }
    }

    /// Takes `lighthouses` (URLs with their hittage, as the daemon's Generalizer publishes
    /// them) as the lighthouses from now on: the fingerprints and filters are made from them
    /// at the next rebuild, and the engine no longer picks lighthouses of its own (it still
    /// computes hittage over its map, for the representatives and the fetch priorities).
    pub fn set_lighthouses(&mut self, lighthouses: &[(String, f64)]) {
        self.external_lights = true;
        self.lights = lighthouses.iter().map(|(url, _)| url.clone()).collect();
    }

    /// The current lighthouses, highest hittage first.
    pub fn lighthouses(&self) -> &[String] {
        &self.lights
    }

    /// The filters.
    pub fn filters(&self) -> &FilterBank {
        &self.filters
    }

    /// The ferret fingerprints.
    pub fn advisor(&self) -> &FerretAdvisor {
        &self.advisor
    }

    /// Each representative's history, by URL.
    pub fn history(&self) -> impl Iterator<Item = (&str, RepresentativeHistory)> + '_ {
        self.history.iter().map(|(url, h)| (url.as_str(), *h))
    }

    /// The frontier, for its statistics.
    pub fn frontier(&self) -> &Frontier {
        &self.frontier
    }

    /// The cached page at `url`: approved or not, accepted or not; None if not fetched.
    pub fn cached(&self, url: &str) -> Option<CacheEntry> {
        self.cache.get(url).map(|page| CacheEntry {
            approved: page.approved,
            accepted: page.accepted,
            fetched_at_ms: page.fetched_at_ms,
        })
    }
}

impl Engine {
    /// A robots.txt answer for `host` (see [`Frontier::robots_fetched`]).
    pub fn handle_robots(
        &mut self,
        host: &str,
        outcome: super::robots::RobotsOutcome,
        now_ms: i64,
    ) {
        self.frontier.robots_fetched(host, outcome, ms(now_ms));
    }

    /// A fetch that gave no page: an error, or an answer that is not HTML.
    pub fn handle_failure(&mut self, url: &url::Url, now_ms: i64) {
        self.counts.failed += 1;
        self.frontier.fetched(url, ms(now_ms), FetchOutcome::Failed);
        self.events.push_back(DiscoveryEvent::Fetched {
            url: url.to_string(),
            title: String::new(),
            at_ms: now_ms,
            features: None,
            links: Vec::new(),
        });
        self.waiting.remove(url.as_str());
    }

    /// A fetched page: cached, judged by the fingerprints waiting for it, voted on, mapped.
    pub fn handle_page(&mut self, doc: PageDoc, now_ms: i64) {
        self.handle_page_with(doc, Features::default(), now_ms);
    }

    /// [`Engine::handle_page`] with features already computed (by the fetching side, in
    /// parallel: features travel with the page); the loop computes the rest.
    pub fn handle_page_with(&mut self, doc: PageDoc, mut features: Features, now_ms: i64) {
        self.frontier
            .fetched(&doc.url, ms(now_ms), FetchOutcome::Done);
        let url = doc.url.to_string();
        self.counts.fetched += 1;
        let liked = self.liked.contains(&url);
        // Every feature, now: the page is kept with them, judged by fingerprints to come,
        // and, after a restart, restored from them.
        features.complete_from(&doc, &self.analyzer);
        self.stats.add(&features);
        if self.roots.contains(&url) || self.background_wanted.remove(&url) {
            self.background.push(url.clone());
        }
        self.events.push_back(DiscoveryEvent::Fetched {
            url: url.clone(),
            title: doc.title.clone(),
            at_ms: now_ms,
            features: Some(Box::new(features.clone())),
            links: doc.links.iter().map(|l| l.url.to_string()).collect(),
        });
        self.cache.insert(
            url.clone(),
            CachedPage {
                doc,
                features,
                fetched_at_ms: now_ms,
                judged_by: Vec::new(),
                approved: false,
                accepted: false,
            },
        );
        self.fetched_order.push(url.clone());
        if self.roots.contains(&url) {
            self.pick_background(&url, now_ms);
        }
        if liked {
            self.accept(&url, None, None, now_ms);
            // Start-up: the liked page's links are the first sample, judged once the first
            // fingerprints exist.
            self.queue_links(&url, &url, None, now_ms);
        }
        for fp in self.waiting.remove(&url).unwrap_or_default() {
            self.judge(fp, &url);
        }
        self.since_rebuild += 1;
        if self.since_rebuild >= self.params.rebuild_every {
            self.rebuild(now_ms, false);
        }
    }

    /// Fingerprint `fp` judges the cached page `url`; an approved page goes to the vote.
    fn judge(&mut self, fp: u64, url: &str) {
        let Some(print) = self.advisor.get(fp).cloned() else {
            return;
        };
        let Some(rep) = self
            .cache
            .get(&print.representative)
            .map(|p| p.features.clone())
        else {
            return;
        };
        let Some(page) = self.cache.get_mut(url) else {
            return;
        };
        if page.judged_by.contains(&fp) {
            return;
        }
        page.judged_by.push(fp);
        ensure(
            url,
            page,
            [print.kind],
            &self.analyzer,
            &mut self.stats,
            &mut self.nearest,
        );
        let approved = print.approves(&rep, &page.features, &self.stats);
        if !approved {
            self.record_run(fp, &print.representative, false, false);
            self.events.push_back(DiscoveryEvent::Discarded {
                url: url.to_string(),
            });
            return;
        }
        self.counts.approved += 1;
        if !page.approved {
            page.approved = true;
            self.events.push_back(DiscoveryEvent::Approved {
                url: url.to_string(),
                fingerprint: fp,
            });
        }
        if page.accepted || self.voting.contains(url) {
            // In the map already, or its vote is out: nothing to vote on again.
            self.record_run(fp, &print.representative, true, false);
            return;
        }
        self.order_vote(url, fp);
    }

    /// Orders the Filters' vote on the cached page `url`, which fingerprint `fp` approved.
    fn order_vote(&mut self, url: &str, fp: u64) {
        let Some(page) = self.cache.get_mut(url) else {
            return;
        };
        ensure(
            url,
            page,
            self.filters.kinds(),
            &self.analyzer,
            &mut self.stats,
            &mut self.nearest,
        );
        let features = Arc::new(page.features.clone());
        self.voting.insert(url.to_string());
        let ballot = self.ballot();
        self.votes.push_back(VoteOrder {
            url: url.to_string(),
            fingerprint: fp,
            features,
            ballot,
        });
    }

    /// Orders a vote again on each page the vote discarded that one of the filters `built`
    /// (just built or rebuilt) passes: a filter built from a bigger set may pass what the
    /// first ones did not (at start-up, the first votes may even be taken before any filter
    /// exists). The others stay discarded until the next filters.
    fn revote(&mut self, built: &[u64]) {
        let filters: Vec<&FilterFingerprint> = self
            .filters
            .filters()
            .iter()
            .filter(|f| built.contains(&f.id))
            .collect();
        let mut again: Vec<(String, u64)> = Vec::new();
        self.rejected.retain(|(url, fp)| {
            let Some(page) = self.cache.get(url) else {
                return false;
            };
            // Discarded twice (two fingerprints approved it): one second vote.
            if page.accepted || self.voting.contains(url) || again.iter().any(|(u, _)| u == url) {
                return false;
            }
            let passes = filters
                .iter()
                .any(|f| f.passes(&page.features, &self.stats));
            if passes {
                again.push((url.clone(), *fp));
            }
            !passes
        });
        for (url, fp) in again {
            self.revoting.insert(url.clone());
            self.order_vote(&url, fp);
        }
    }

    /// Computes every feature the cached pages `urls` lack ([`ensure`]).
    fn complete_features(&mut self, urls: impl IntoIterator<Item = impl AsRef<str>>) {
        for url in urls {
            let url = url.as_ref();
            if let Some(page) = self.cache.get_mut(url) {
                ensure(
                    url,
                    page,
                    FeatureKind::ALL,
                    &self.analyzer,
                    &mut self.stats,
                    &mut self.nearest,
                );
            }
        }
    }

    /// Each lighthouse's strongly linked pages (in the order of `self.lights`): the cached
    /// pages it links to or that link to it, at a topic similarity to it of at least
    /// `min_link_similarity`, the `max_set` closest first, their features complete. Drawn
    /// from every cached page, not only the map: a page the vote discarded belongs to the set
    /// as much as one it passed, and a set drawn from the map alone never grows when the first
    /// filters pass nothing.
    fn linked_sets(&mut self) -> Vec<Vec<String>> {
        let lights = self.lights.clone();
        self.inlinks.retain(|light, _| lights.contains(light));
        let mut candidates: Vec<Vec<String>> = Vec::with_capacity(lights.len());
        for light in &lights {
            let (read, from) = self.inlinks.entry(light.clone()).or_default();
            for url in &self.fetched_order[*read..] {
                let links_to =
                    |page: &CachedPage| page.doc.links.iter().any(|l| l.url.as_str() == light);
                if self.cache.get(url).is_some_and(links_to) {
                    from.push(url.clone());
                }
            }
            *read = self.fetched_order.len();
            let mut linked: Vec<String> = from.clone();
            if let Some(page) = self.cache.get(light) {
                linked.extend(
                    page.doc
                        .links
                        .iter()
                        .map(|l| l.url.as_str())
                        .filter(|url| self.cache.contains_key(*url))
                        .map(str::to_string),
                );
            }
            linked.retain(|url| url != light);
            linked.sort_unstable();
            linked.dedup();
            candidates.push(linked);
        }
        let mut all: Vec<String> = candidates.concat();
        all.sort_unstable();
        all.dedup();
        self.complete_features(&all);
        let params = self.filters.params();
        let (min, most) = (params.min_link_similarity, params.max_set);
        let mut sets = Vec::with_capacity(lights.len());
        for (light, linked) in lights.iter().zip(candidates) {
            let Some(lit) = self.cache.get(light) else {
                sets.push(Vec::new());
                continue;
            };
            let mut scored: Vec<(f64, String)> = linked
                .into_iter()
                .filter_map(|url| {
                    let page = self.cache.get(&url)?;
                    let features = (&page.features, &lit.features);
                    let similarity = self.nearest.pair(light, &url, features, &self.stats);
                    (similarity >= min).then_some((similarity, url))
                })
                .collect();
            // The closest first; a filter's build compares every member with every other.
            scored.sort_by(|a, b| b.0.total_cmp(&a.0).then_with(|| a.1.cmp(&b.1)));
            scored.truncate(most);
            sets.push(scored.into_iter().map(|(_, url)| url).collect());
        }
        sets
    }

    /// The Filters' verdict on the page `url`, which fingerprint `fp` approved: the filter
    /// that passed it (the page enters the map), or None (it is discarded).
    pub fn handle_vote(&mut self, url: &str, fp: u64, verdict: Option<u64>, now_ms: i64) {
        if !self.voting.remove(url) {
            return;
        }
        let again = self.revoting.remove(url);
        let accepted = match verdict {
            Some(filter) if self.cache.get(url).is_some_and(|p| !p.accepted) => {
                self.filters.credit(filter);
                self.accept(url, Some(filter), Some(fp), now_ms);
                true
            }
            _ => false,
        };
        if verdict.is_none() {
            self.events.push_back(DiscoveryEvent::Discarded {
                url: url.to_string(),
            });
            self.rejected.push((url.to_string(), fp));
        }
        if again {
            return;
        }
        if let Some(representative) = self.advisor.get(fp).map(|p| p.representative.clone()) {
            self.record_run(fp, &representative, true, accepted);
        }
    }

    /// Counts a page fingerprint `fp` judged for it and its representative's history.
    fn record_run(&mut self, fp: u64, representative: &str, approved: bool, accepted: bool) {
        let history = self.history.entry(representative.to_string()).or_default();
        history.fetched += 1;
        history.accepted += u32::from(accepted);
        self.advisor.record(fp, approved, accepted);
    }

    /// The ballot for the next vote: made again when the filters changed, or when the term
    /// statistics grew by an eighth since (idf moves slowly; copying the statistics for every
    /// vote would cost more than the vote).
    fn ballot(&mut self) -> Arc<Ballot> {
        let (generation, docs) = (self.filters.generation(), self.stats.docs());
        match &self.ballot {
            Some(b) if b.generation() == generation && docs <= b.docs() + b.docs() / 8 => {
                Arc::clone(b)
            }
            _ => Arc::clone(
                self.ballot
                    .insert(Arc::new(self.filters.ballot(&self.stats))),
            ),
        }
    }

    /// Starts the wait for the user's feedback on `url`, passed at `at_ms`.
    fn await_visit(&mut self, url: &str, at_ms: i64) {
        self.stop_awaiting(url);
        self.awaiting.insert(url.to_string(), at_ms);
        self.unvisited.insert((at_ms, url.to_string()));
    }

    fn stop_awaiting(&mut self, url: &str) {
        if let Some(at) = self.awaiting.remove(url) {
            self.unvisited.remove(&(at, url.to_string()));
        }
    }

    /// Charges the filters for the pages they passed that had no feedback within
    /// `unvisited_after_ms` of `now_ms` (each page once).
    fn judge_unvisited(&mut self, now_ms: i64) {
        let due = now_ms.saturating_sub(self.params.filter.unvisited_after_ms);
        while let Some((at, url)) = self.unvisited.first().cloned() {
            if at > due {
                break;
            }
            self.unvisited.pop_first();
            self.awaiting.remove(&url);
            if let Some(&filter) = self.passed_by.get(&url) {
                self.filters.judge(filter, None);
            }
        }
    }

    /// The Mapmaker: completes the page's features and puts it in the map.
    fn accept(&mut self, url: &str, filter: Option<u64>, fingerprint: Option<u64>, now_ms: i64) {
        let Some(page) = self.cache.get_mut(url) else {
            return;
        };
        if page.accepted {
            return;
        }
        page.accepted = true;
        self.complete_features([url]);
        self.map.insert(url.to_string());
        if let Some(filter) = filter {
            self.passed_by.insert(url.to_string(), filter);
            self.await_visit(url, now_ms);
        }
        self.counts.accepted += u64::from(filter.is_some());
        let page = &self.cache[url];
        let score = self
            .lights
            .iter()
            .filter_map(|l| self.cache.get(l))
            .map(|l| topic_similarity(&l.features, &page.features, &self.stats))
            .fold(if filter.is_none() { 1.0 } else { 0.0 }, f64::max);
        self.events
            .push_back(DiscoveryEvent::Accepted(Box::new(AcceptedPage {
                url: url.to_string(),
                canonical: page.doc.canonical.as_ref().map(|c| c.to_string()),
                title: page.doc.title.clone(),
                language: page.features.language.clone().flatten(),
                size: page.features.size.unwrap_or(0),
                fetched_at_ms: page.fetched_at_ms,
                features: page.features.clone(),
                links: page.doc.links.iter().map(|l| l.url.to_string()).collect(),
                filter,
                fingerprint,
                score,
            })));
    }
}

/// Computes the features `kinds` of the cached page `url` that are missing, counting its body
/// terms in the idf statistics the first time they are computed; if any was, its
/// similarities to the lighthouses, made from the features it had, are forgotten.
fn ensure(
    url: &str,
    page: &mut CachedPage,
    kinds: impl IntoIterator<Item = FeatureKind>,
    analyzer: &Analyzer,
    stats: &mut TermStats,
    nearest: &mut Nearest,
) {
    let mut computed = false;
    for kind in kinds {
        if page.features.ensure(kind, &page.doc, analyzer) {
            computed = true;
            if kind == FeatureKind::BodyTerms {
                stats.add(&page.features);
            }
        }
    }
    if computed {
        nearest.forget(url);
    }
}

impl Engine {
    /// Recomputes hittage and lighthouses (the Generalizer; the lighthouses only unless they
    /// come from outside, see [`Engine::set_lighthouses`]), then the fingerprints (the
    /// advisors).
    /// With `explore` (nothing can be fetched now, and nothing is on its way), also broadens
    /// beyond the map. Returns how many ferret fingerprints it made.
    fn rebuild(&mut self, now_ms: i64, explore: bool) -> usize {
        self.since_rebuild = 0;
        let links: Vec<(String, String)> = self
            .map
            .iter()
            .filter_map(|url| self.cache.get(url).map(|p| (url, p)))
            .flat_map(|(url, page)| {
                page.doc
                    .links
                    .iter()
                    .map(|l| l.url.as_str())
                    .filter(|to| self.map.contains(*to))
                    .map(move |to| (url.clone(), to.to_string()))
            })
            .collect();
        let computation = hittage::generalize(
            &self.feedback,
            &links,
            now_ms,
            &self.params.hittage,
            &mut self.lighthouses,
        );
        if !self.external_lights {
            self.lights = computation
                .lighthouses
                .into_iter()
                .map(|(url, _)| url)
                .collect();
        }
        self.hittage = computation.hittage.into_iter().collect();
        // Too few pages to sample from yet, unless nothing more is coming (a loop resumed
        // from a small store).
        if self.cache.len() < self.params.min_sample && !self.frontier.is_idle() {
            return 0;
        }
        // The random sample: background pages, their features complete, and as many
        // addresses drawn from the background pages' links (a URL's features only, for
        // nothing: a few pages say little about which URLs are common on the site).
        let mut sample_urls: Vec<String> = Vec::with_capacity(self.params.sample_size);
        let population = if self.background.len() >= self.params.min_sample / 2 {
            &self.background
        } else {
            &self.fetched_order
        };
        for _ in 0..self.params.sample_size.min(population.len()) {
            let at = self.rng.random_range(0..population.len());
            sample_urls.push(population[at].clone());
        }
        sample_urls.sort_unstable();
        sample_urls.dedup();
        self.read_addresses();
        let mut addresses: Vec<usize> = if self.background_links.is_empty() {
            Vec::new()
        } else {
            (0..self.params.sample_size)
                .map(|_| self.rng.random_range(0..self.background_links.len()))
                .collect()
        };
        addresses.sort_unstable();
        addresses.dedup();
        let mapped: Vec<String> = {
            let mut m: Vec<String> = self
                .map
                .iter()
                .filter(|u| self.cache.contains_key(*u))
                .cloned()
                .collect();
            m.sort_unstable();
            m
        };
        let explorers = if explore && self.advisor.pool().iter().all(|f| self.ran.contains(&f.id)) {
            self.explorers()
        } else {
            Vec::new()
        };
        // A hub among them — a page outside the map linking to several pages in it, such as
        // the table of contents of a chapter whose pages the filters pass — has its links
        // queued at once: its own fingerprints, made against a group of pages as far from the
        // map as it is, would be few or none, and its links are where the topic goes on.
        let hubs: Vec<String> = explorers
            .iter()
            .filter(|url| !self.broadened.contains(*url) && self.links_into_map(url) >= HUB_LINKS)
            .cloned()
            .collect();
        for hub in hubs {
            let light = self
                .nearest_light(&hub)
                .map(|(_, i)| self.lights[i].clone());
            self.queue_links(&hub, light.as_deref().unwrap_or(&hub), None, now_ms);
            self.broadened.insert(hub);
        }
        self.complete_features(sample_urls.iter().chain(&mapped).chain(&explorers));
        self.update_nearest(&mapped);
        let sets = self.linked_sets();
        let lighthouses = self.lights.clone();
        let sample: Vec<&Features> = sample_urls
            .iter()
            .filter_map(|u| self.cache.get(u))
            .map(|p| &p.features)
            .chain(addresses.iter().map(|&i| &self.background_links[i]))
            .collect();
        // Out of `self` while the views borrow it.
        let mut advisor = std::mem::take(&mut self.advisor);
        let views: Vec<PageView<'_>> = mapped.iter().map(|url| self.view(url)).collect();
        let mut made = advisor.rebuild(&views, &lighthouses, &sample, &self.stats, now_ms);
        if !explorers.is_empty() {
            // Every fingerprint has run: broaden from the pages nearest to the map as well,
            // in groups of their own (the map's groups keep their members).
            let views: Vec<PageView<'_>> = lighthouses
                .iter()
                .filter(|l| self.cache.contains_key(*l))
                .chain(&explorers)
                .map(|url| self.view(url))
                .collect();
            made.extend(advisor.rebuild(&views, &lighthouses, &sample, &self.stats, now_ms));
        }
        self.advisor = advisor;
        self.counts.fingerprints += made.len() as u64;
        let made = made.len();
        // The FilterAdvisor: one filter per lighthouse over its strongly linked set.
        let unreliable = self.filters.unreliable();
        let mut new_filters = Vec::new();
        for (lighthouse, set) in lighthouses.iter().zip(&sets) {
            let Some(light) = self.cache.get(lighthouse) else {
                continue;
            };
            let members: Vec<(&str, &Features)> =
                std::iter::once((lighthouse.as_str(), &light.features))
                    .chain(
                        set.iter()
                            .filter_map(|url| Some((url.as_str(), &self.cache.get(url)?.features))),
                    )
                    .collect();
            let size = members.len();
            let built = self.filter_sets.get(lighthouse).copied();
            let grown = built.is_none_or(|b| size > b + b / 2);
            if (grown || unreliable.contains(lighthouse))
                && self.filters.install(&members, &sample, &self.stats, now_ms)
            {
                self.filter_sets.insert(lighthouse.clone(), size);
                new_filters.extend(self.filters.filters().last().map(|f| f.id));
            }
        }
        if !new_filters.is_empty() {
            self.revote(&new_filters);
        }
        made
    }

    /// Reads the links of the pages fetched since the last call: every address counts in
    /// [`Engine::addresses`] (and the URL tokens common to the site go to the statistics), and
    /// a background page's addresses join the sample's population.
    fn read_addresses(&mut self) {
        for url in &self.fetched_order[self.addresses_read..] {
            let Some(page) = self.cache.get(url) else {
                continue;
            };
            let background = self.background.contains(url);
            for link in &page.doc.links {
                self.addresses.add(&link.url, &self.analyzer);
                if background {
                    let address = Features::of_address(&link.url, &self.analyzer);
                    self.background_links.push(address);
                }
            }
        }
        self.addresses_read = self.fetched_order.len();
        self.stats.set_common_url_tokens(self.addresses.common());
    }

    /// The Ferrets: while the frontier runs low, run fingerprints drawn at random.
    /// Returns whether fingerprints are left to run.
    fn run_ferrets(&mut self, now_ms: i64) -> bool {
        while self.frontier.stats().queued < self.params.low_water {
            let waiting: Vec<u64> = self
                .advisor
                .pool()
                .iter()
                .map(|f| f.id)
                .filter(|id| !self.ran.contains(id))
                .collect();
            if waiting.is_empty() {
                return false;
            }
            let fp = waiting[self.rng.random_range(0..waiting.len())];
            self.run(fp, now_ms);
        }
        true
    }

    /// One Ferret's run: every link of the fingerprint's representative, judged from the cache
    /// or queued for fetching.
    fn run(&mut self, fp: u64, now_ms: i64) {
        self.ran.insert(fp);
        self.counts.runs += 1;
        let Some(print) = self.advisor.get(fp).cloned() else {
            return;
        };
        self.history
            .entry(print.representative.clone())
            .or_default()
            .times += 1;
        for url in self.queue_links(&print.representative, &print.lighthouse, Some(fp), now_ms) {
            self.judge(fp, &url);
        }
    }

    /// What the advisors know of the cached page `url`.
    fn view<'a>(&'a self, url: &'a str) -> PageView<'a> {
        let page = &self.cache[url];
        let history = self.history.get(url).copied().unwrap_or_default();
        let fresh = page
            .doc
            .links
            .iter()
            .filter(|l| {
                !self.frontier.knows(&l.url)
                    || (history.times == 0
                        && self.cache.get(l.url.as_str()).is_some_and(|p| !p.approved))
            })
            .count();
        PageView {
            url,
            features: &page.features,
            hittage: self.hittage.get(url).copied().unwrap_or(0.0),
            fresh_links: u32::try_from(fresh).unwrap_or(u32::MAX),
            links: u32::try_from(page.doc.links.len()).unwrap_or(u32::MAX),
            size: page.features.size.unwrap_or(0),
            history,
            near: self.nearest.by_page.get(url).map(Vec::as_slice),
        }
    }

    /// Brings [`Engine::nearest`] up to date for the cached pages `urls`: their topic
    /// similarity to each lighthouse. Each pair is computed once (a lighthouse that stays
    /// keeps its column when the set changes), and all again when the term statistics have
    /// grown by an eighth (as the ballot is: idf moves slowly), so that ranking the cache and
    /// grouping the map are lookups, not comparisons with every lighthouse (before, those
    /// comparisons were half of the loop's time on a site of a thousand pages).
    fn update_nearest(&mut self, urls: &[String]) {
        let docs = self.stats.docs();
        let nearest = &mut self.nearest;
        if docs > nearest.docs + nearest.docs / 8 {
            nearest.by_light.clear();
            nearest.by_page.clear();
            nearest.docs = docs;
        }
        if nearest.lights != self.lights {
            // A lighthouse kept keeps what was computed against it.
            nearest
                .by_light
                .retain(|light, _| self.lights.contains(light));
            nearest.by_page.clear();
            nearest.lights.clone_from(&self.lights);
        }
        for url in urls {
            let Some(page) = self.cache.get(url) else {
                continue;
            };
            if nearest.by_page.contains_key(url) {
                continue;
            }
            let near = self
                .lights
                .iter()
                .map(|l| match self.cache.get(l) {
                    Some(light) => {
                        nearest.pair(l, url, (&page.features, &light.features), &self.stats)
                    }
                    None => f64::NAN,
                })
                .collect();
            nearest.by_page.insert(url.clone(), near);
        }
    }

    /// The nearest lighthouse of the cached page `url` (its similarity and index in
    /// `self.lights`), as [`Engine::update_nearest`] last computed it; the last of equals.
    fn nearest_light(&self, url: &str) -> Option<(f64, usize)> {
        self.nearest
            .by_page
            .get(url)?
            .iter()
            .enumerate()
            .filter(|(_, s)| !s.is_nan())
            .map(|(i, &s)| (s, i))
            .max_by(|a, b| a.0.total_cmp(&b.0))
    }

    /// The cached pages not in `except` with links the frontier has not seen.
    fn with_unseen_links(&self, except: &FxHashSet<String>) -> Vec<String> {
        self.cache
            .iter()
            .filter(|(url, page)| {
                !except.contains(*url)
                    && page.doc.links.iter().any(|l| !self.frontier.knows(&l.url))
            })
            .map(|(url, _)| url.clone())
            .collect()
    }

    /// When the map has nothing left to give: the cached pages outside it with links not
    /// fetched yet, as representatives to broaden from — those linking to the most pages of
    /// the map first, then those nearest to a lighthouse.
    fn explorers(&mut self) -> Vec<String> {
        let candidates = self.with_unseen_links(&self.map);
        self.update_nearest(&candidates);
        let mut scored: Vec<(usize, f64, &String)> = candidates
            .iter()
            .map(|url| {
                (
                    self.links_into_map(url),
                    self.nearest_light(url).map_or(0.0, |(s, _)| s.max(0.0)),
                    url,
                )
            })
            .collect();
        scored.sort_by(|a, b| {
            b.0.cmp(&a.0)
                .then(b.1.total_cmp(&a.1))
                .then_with(|| a.2.cmp(b.2))
        });
        let keep = self.params.advisor.representatives_per_group * self.lights.len().max(1);
        scored
            .into_iter()
            .take(keep)
            .map(|(_, _, url)| url.clone())
            .collect()
    }

    /// How many pages of the map the cached page `url` links to.
    fn links_into_map(&self, url: &str) -> usize {
        let Some(page) = self.cache.get(url) else {
            return 0;
        };
        let mut linked: Vec<&str> = page
            .doc
            .links
            .iter()
            .map(|l| l.url.as_str())
            .filter(|to| *to != url && self.map.contains(*to))
            .collect();
        linked.sort_unstable();
        linked.dedup();
        linked.len()
    }

    /// Queues the links of the cached page nearest to a lighthouse among those with links
    /// the frontier has not seen, and not broadened from before. Returns whether it found one.
    fn broaden(&mut self, now_ms: i64) -> bool {
        let candidates = self.with_unseen_links(&self.broadened);
        self.update_nearest(&candidates);
        let best = candidates
            .iter()
            .map(|url| {
                let (score, light) = match self.nearest_light(url) {
                    Some((score, i)) => (score, &self.lights[i]),
                    None => (0.0, url),
                };
                (score, url.clone(), light.clone())
            })
            .max_by(|a, b| a.0.total_cmp(&b.0).then_with(|| b.1.cmp(&a.1)));
        let Some((_, url, light)) = best else {
            return false;
        };
        self.broadened.insert(url.clone());
        self.queue_links(&url, &light, None, now_ms);
        true
    }

    /// Queues `background_pages` links of the root page `root`, drawn at random.
    fn pick_background(&mut self, root: &str, now_ms: i64) {
        let Some(page) = self.cache.get(root) else {
            return;
        };
        let mut links: Vec<url::Url> = page.doc.links.iter().map(|l| l.url.clone()).collect();
        let want = self.params.background_pages.min(links.len());
        for i in 0..want {
            let j = self.rng.random_range(i..links.len());
            links.swap(i, j);
        }
        for url in links.into_iter().take(want) {
            if !self.cache.contains_key(url.as_str()) {
                self.background_wanted.insert(url.to_string());
                self.frontier.push(url, BACKGROUND, ms(now_ms));
            }
        }
    }

    /// Queues the links of the cached page `from` not cached yet, for fingerprint `fp` when
    /// there is one, best-first by their topic against `from` and `lighthouse`. Returns the
    /// links already cached.
    fn queue_links(
        &mut self,
        from: &str,
        lighthouse: &str,
        fp: Option<u64>,
        now_ms: i64,
    ) -> Vec<String> {
        let Some(rep) = self.cache.get(from) else {
            return Vec::new();
        };
        let light = self.cache.get(lighthouse).map(|l| &l.features);
        let history = self.history.get(from).copied().unwrap_or_default();
        let base = 0.3
            * self
                .hittage
                .get(from)
                .copied()
                .unwrap_or(0.0)
                .clamp(0.0, 1.0)
            + 0.2 * history.yield_rate();
        let mut cached = Vec::new();
        let mut queue = Vec::new();
        for link in &rep.doc.links {
            let url = link.url.as_str();
            if self.cache.contains_key(url) {
                cached.push(url.to_string());
                continue;
            }
            let stub = Features::of_link(link, &self.analyzer);
            let topic = |f: &Features| {
                (similarity(FeatureKind::UrlTokens, f, &stub, &self.stats)
                    + similarity(FeatureKind::TitleWords, f, &stub, &self.stats))
                    / 2.0
            };
            let near = light.map_or(0.0, topic).max(topic(&rep.features));
            queue.push((link.url.clone(), base + 0.5 * near));
        }
        for (url, priority) in queue {
            if let Some(fp) = fp {
                self.waiting.entry(url.to_string()).or_default().push(fp);
            }
            self.frontier.push(url, priority, ms(now_ms));
        }
        cached
    }
}

/// Fetch priorities: liked pages first, then the background, then whatever Ferrets queue
/// (whose priorities stay under 1.5).
const LIKED: f64 = 1e9;
/// Rebuilds an idle loop tries before it waits for news (a like, a finished fetch).
const IDLE_REBUILDS: usize = 8;
const BACKGROUND: f64 = 1e6;
/// Pages of the map a page outside it must link to for its links to be queued when the loop
/// broadens ([`Engine::explorers`]): a hub of the topic, not a page that happens to link to
/// one of its pages.
const HUB_LINKS: usize = 2;

/// Milliseconds for the frontier, which counts from 0.
fn ms(at_ms: i64) -> u64 {
    u64::try_from(at_ms).unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::discovery::page::parse_page;

    /// Puts a page about `topic` at `path`, linking to `links`, in the cache (fetched, not
    /// accepted); its features.
    fn cache_linking(
        engine: &mut Engine,
        path: &str,
        topic: &str,
        n: usize,
        links: &[&str],
    ) -> Features {
        let url = url::Url::parse("http://site.test/")
            .unwrap()
            .join(path)
            .unwrap();
        let anchors: String = links
            .iter()
            .map(|to| format!("<a href=\"/{to}\">more</a> "))
            .collect();
        let html = format!(
            "<html><head><title>{topic} {n}</title></head><body><p>{}</p>{anchors}</body></html>",
            format!("{topic} {topic}s {topic}kind {n} ").repeat(8)
        );
        let doc = parse_page(&url, html.as_bytes(), Some("text/html"));
        let features = Features::computed(&doc, &engine.analyzer);
        engine.stats.add(&features);
        engine.cache.insert(
            url.to_string(),
            CachedPage {
                doc,
                features: features.clone(),
                fetched_at_ms: 0,
                judged_by: Vec::new(),
                approved: true,
                accepted: false,
            },
        );
        engine.fetched_order.push(url.to_string());
        features
    }

    fn cache(engine: &mut Engine, path: &str, topic: &str, n: usize) -> Features {
        cache_linking(engine, path, topic, n, &[])
    }

    /// A site of two topics: `ferrets/N.html` link to their neighbours, five on, and the
    /// garden page of the same number; `garden/N.html` to their neighbours and three on; both
    /// to the index, which links to every page.
    fn two_topic_site(url: &url::Url) -> String {
        let (topic, n) = match url.path().trim_start_matches('/').split_once('/') {
            Some((folder, file)) => {
                let n: i64 = file.trim_end_matches(".html").parse().unwrap_or(0);
                (folder.trim_end_matches('s').to_string(), n)
            }
            None => ("index".to_string(), 0),
        };
        let link = |path: String| format!("<a href=\"/{path}\">{path}</a> ");
        let links: String = match topic.as_str() {
            "index" => (0..30)
                .flat_map(|n| [format!("ferrets/{n}.html"), format!("gardens/{n}.html")])
                .map(link)
                .collect(),
            "ferret" => [n - 1, n + 1, n + 5]
                .into_iter()
                .filter(|m| (0..30).contains(m))
                .map(|m| link(format!("ferrets/{m}.html")))
                .chain([link(format!("gardens/{n}.html")), link("index.html".into())])
                .collect(),
            _ => [n - 1, n + 1, n + 3]
                .into_iter()
                .filter(|m| (0..30).contains(m))
                .map(|m| link(format!("gardens/{m}.html")))
                .chain([link("index.html".into())])
                .collect(),
        };
        let words = match topic.as_str() {
            "ferret" => "ferret burrow polecat musteline kit hob jill",
            "garden" => "garden rose compost seedling trowel hedge",
            _ => "contents index",
        };
        format!(
            "<html><head><title>{topic} {n}</title></head><body><p>{}</p>{links}</body></html>",
            format!("{words} {n} ").repeat(6)
        )
    }

    /// Crawls [`two_topic_site`] from two liked ferret pages on a virtual clock, each fetch
    /// answered at once, waiting when the loop has nothing now: the pages in fetch order.
    fn crawl_two_topic_site(min_interval_ms: u64, budget: usize) -> (Vec<String>, EngineCounts) {
        let mut engine = Engine::new(EngineParams {
            frontier: FrontierConfig {
                min_interval_ms,
                max_in_flight_per_host: 1,
                ..FrontierConfig::default()
            },
            ..EngineParams::default()
        });
        for like in ["ferrets/1.html", "ferrets/2.html"] {
            let like = format!("http://site.test/{like}");
            engine.feedback(Feedback::new(&like, FeedbackKind::Like, None, 0).unwrap());
        }
        let mut now = 1;
        let mut fetched = Vec::new();
        while fetched.len() < budget {
            match engine.poll_fetch(now) {
                Some(FetchOrder::Robots { host, .. }) => engine.handle_robots(
                    &host,
                    super::super::robots::RobotsOutcome::Unavailable,
                    now,
                ),
                Some(FetchOrder::Page { url, .. }) => {
                    let body = two_topic_site(&url);
                    engine.handle_page(parse_page(&url, body.as_bytes(), Some("text/html")), now);
                    fetched.push(url.path().to_string());
                }
                None => match engine.poll_timeout() {
                    Some(at) => now = now.max(at),
                    None => break,
                },
            }
            engine.settle_votes(now);
            now += 1;
        }
        (fetched, engine.counts())
    }

    /// Politeness slows the loop down and changes nothing else: with a second between two
    /// requests to the site, it fetches the same pages in the same order as without, and its
    /// fingerprints, runs, approvals and acceptances are the same. (It used to take a host's wait for its turn as "nothing left to fetch",
    /// and broadened instead: a polite crawl of one site ran no fingerprint.)
    #[test]
    fn a_polite_crawl_fetches_what_an_impolite_one_does() {
        let (eager, eager_counts) = crawl_two_topic_site(0, 40);
        let (polite, counts) = crawl_two_topic_site(1_000, 40);
        assert_eq!(eager.len(), 40);
        assert_eq!(polite, eager);
        assert_eq!(counts, eager_counts);
        assert!(counts.runs > 0 && counts.accepted > 0, "{counts:?}");
    }

    /// A page no fingerprint has run from counts the cached pages it links to that no
    /// fingerprint approved as fresh, as much as the links not fetched yet: running it judges
    /// them without a fetch. Once it has run, only links not fetched yet count.
    #[test]
    fn a_page_not_run_yet_counts_its_cached_unapproved_links_as_fresh() {
        let mut engine = Engine::new(EngineParams::default());
        let links = ["ferrets/2.html", "ferrets/3.html", "ferrets/4.html"];
        cache_linking(&mut engine, "ferrets/1.html", "ferret", 1, &links);
        cache(&mut engine, "ferrets/2.html", "ferret", 2);
        cache(&mut engine, "ferrets/3.html", "ferret", 3);
        let at = |path: &str| format!("http://site.test/{path}");
        for path in ["ferrets/2.html", "ferrets/3.html"] {
            engine.mark_fetched(&url::Url::parse(&at(path)).unwrap(), 0);
        }
        // Two and three are cached, four is not fetched yet; three has been approved.
        engine
            .cache
            .get_mut(&at("ferrets/2.html"))
            .unwrap()
            .approved = false;
        let rep = at("ferrets/1.html");
        assert_eq!(engine.view(&rep).fresh_links, 2);
        engine.history.entry(rep.clone()).or_default().times = 1;
        assert_eq!(engine.view(&rep).fresh_links, 1);
    }

    /// When the loop broadens, a page outside the map that links to two pages of it or more
    /// (a hub: a chapter's table of contents) has its links queued at once; a page linking
    /// to one has not.
    #[test]
    fn broadening_queues_the_links_of_a_hub_of_the_map() {
        let mut engine = Engine::new(EngineParams::default());
        let at = |path: &str| format!("http://site.test/{path}");
        for n in [1, 2] {
            cache(&mut engine, &format!("ferrets/{n}.html"), "ferret", n);
            engine.map.insert(at(&format!("ferrets/{n}.html")));
        }
        engine.lights = vec![at("ferrets/1.html")];
        let hub = ["ferrets/1.html", "ferrets/2.html", "ferrets/3.html"];
        cache_linking(&mut engine, "ferrets/index.html", "contents", 1, &hub);
        let one = ["ferrets/1.html", "garden/roses.html"];
        cache_linking(&mut engine, "garden/index.html", "garden", 1, &one);
        engine.rebuild(1, true);
        let known = |path: &str| engine.frontier.knows(&url::Url::parse(&at(path)).unwrap());
        assert!(known("ferrets/3.html"));
        assert!(!known("garden/roses.html"));
        assert!(engine.broadened.contains(&at("ferrets/index.html")));
    }

    /// A lighthouse's set is drawn from every cached page, accepted or not: the pages it links
    /// to and those linking to it, close enough on the topic, the closest first, at most
    /// `max_set`; a page on the topic that is not linked stays out, and so does a linked page
    /// off the topic.
    #[test]
    fn a_lighthouse_set_is_its_linked_cached_pages_on_its_topic() {
        let mut engine = Engine::new(EngineParams {
            filter: FilterParams {
                max_set: 3,
                ..FilterParams::default()
            },
            ..EngineParams::default()
        });
        let links = [
            "ferrets/2.html",
            "ferrets/3.html",
            "kitchen/soup-recipes.html",
        ];
        cache_linking(&mut engine, "ferrets/1.html", "ferret", 1, &links);
        cache(&mut engine, "ferrets/2.html", "ferret", 2);
        cache(&mut engine, "ferrets/3.html", "ferret", 3);
        cache(&mut engine, "kitchen/soup-recipes.html", "soup", 1);
        cache(&mut engine, "ferrets/5.html", "ferret", 5);
        for n in [4, 6] {
            let path = format!("ferrets/{n}.html");
            cache_linking(&mut engine, &path, "ferret", n, &["ferrets/1.html"]);
        }
        engine.lights = vec!["http://site.test/ferrets/1.html".to_string()];
        let sets = engine.linked_sets();
        let set: Vec<&str> = sets[0].iter().map(|url| &url[17..]).collect();
        assert_eq!(set.len(), 3, "{set:?}");
        assert!(
            set.iter().all(|path| path.starts_with("ferrets/")),
            "{set:?}"
        );
        assert!(!set.contains(&"ferrets/5.html") && !set.contains(&"ferrets/1.html"));
        // Pages fetched after the last look are found too (the five, with room for them).
        cache_linking(
            &mut engine,
            "ferrets/7.html",
            "ferret",
            7,
            &["ferrets/1.html"],
        );
        engine.filters = FilterBank::new(FilterParams::default());
        let sets = engine.linked_sets();
        assert_eq!(sets[0].len(), 5, "{sets:?}");
        assert!(
            sets[0].contains(&"http://site.test/ferrets/7.html".to_string()),
            "{:?}",
            sets
        );
    }

    /// A discarded page that a newly built filter passes gets a second vote, and is mapped on
    /// that vote; one the new filter does not pass waits for the next filters; filters built
    /// before take no part.
    #[test]
    fn discarded_pages_a_new_filter_passes_are_voted_again() {
        let mut engine = Engine::new(EngineParams::default());
        let light = cache(&mut engine, "ferrets/1.html", "ferret", 1);
        let member = cache(&mut engine, "ferrets/2.html", "ferret", 2);
        cache(&mut engine, "ferrets/3.html", "ferret", 3);
        cache(&mut engine, "cooking/1.html", "soup", 1);
        let sample: Vec<Features> = ["bread", "cheese", "garden", "trains", "weather"]
            .iter()
            .enumerate()
            .map(|(n, topic)| cache(&mut engine, &format!("misc/{n}.html"), topic, n))
            .collect();
        let (on_topic, off_topic) = (
            "http://site.test/ferrets/3.html".to_string(),
            "http://site.test/cooking/1.html".to_string(),
        );
        engine.rejected = vec![(on_topic.clone(), 7), (off_topic.clone(), 7)];

        let sample: Vec<&Features> = sample.iter().collect();
        let members = [
            ("http://site.test/ferrets/1.html", &light),
            ("http://site.test/ferrets/2.html", &member),
        ];
        assert!(engine.filters.install(&members, &sample, &engine.stats, 0));
        let built = engine.filters.filters()[0].id;

        engine.revote(&[built + 1]);
        assert!(engine.votes.is_empty(), "the filter was built before");
        engine.revote(&[built]);
        let order = engine
            .poll_vote()
            .expect("a second vote on the page on the topic");
        assert_eq!(order.url, on_topic);
        assert!(engine.poll_vote().is_none());
        assert_eq!(engine.rejected, [(off_topic, 7)]);

        let verdict = order.vote();
        assert_eq!(verdict, Some(built));
        engine.handle_vote(&order.url, order.fingerprint, verdict, 10);
        assert!(engine.cached(&on_topic).is_some_and(|entry| entry.accepted));
        assert!(engine.revoting.is_empty());
    }

    /// A resumed loop knows which kept pages the vote discarded (a fingerprint approved
    /// them, and they are not in the map), with the fingerprint, so the next filters vote on
    /// them again; a kept page no fingerprint approved is not one of them.
    #[test]
    fn a_resumed_loop_votes_again_on_the_pages_the_vote_discarded() {
        let analyzer = Analyzer::new();
        let kept = |path: &str, fingerprint: Option<u64>| {
            let url = url::Url::parse(&format!("http://site.test/{path}")).unwrap();
            let html = format!("<title>{path}</title><p>ferrets and their keepers</p>");
            let doc = parse_page(&url, html.as_bytes(), Some("text/html"));
            RestoredPage {
                url: url.to_string(),
                title: doc.title.clone(),
                features: Features::computed(&doc, &analyzer),
                links: Vec::new(),
                filter: None,
                approved: fingerprint.is_some(),
                fingerprint,
                fetched_at_ms: 5,
            }
        };
        let mut engine = Engine::new(EngineParams::default());
        engine.resume(Earlier {
            kept: vec![
                kept("discarded.html", Some(9)),
                kept("unapproved.html", None),
            ],
            ..Earlier::default()
        });
        assert_eq!(
            engine.rejected,
            [("http://site.test/discarded.html".to_string(), 9)]
        );
    }
}
