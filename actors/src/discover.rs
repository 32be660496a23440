//! `ferret discover`: the discovery loop as a batch — from a file of likes, fetch until N
//! pages are fetched, keep everything in the store, print the accepted pages.
//!
//! The loop is the core's [`Engine`]; this module is its IO: fetching with the shared
//! [`PageFetcher`] (many requests at once, pages parsed on the runtime's worker threads), the
//! clock, and the store. Killed at any point, a rerun with the same config resumes: the map,
//! the feedback and every URL fetched come back from the store, and nothing fetched is fetched
//! again.

use std::path::PathBuf;
use std::sync::mpsc;
use std::time::{Duration, Instant};

use anyhow::Context as _;
use ferret::config::{CrawlSettings, Settings};
use ferret::discovery::bookmarks::read_likes;
use ferret::discovery::engine::{
    AcceptedPage, DiscoveryEvent, Earlier, Engine, EngineCounts, EngineParams, VoteOrder,
};
use ferret::discovery::features::Features;
use ferret::discovery::filter::FilterParams;
use ferret::discovery::frontier::{FetchOrder, FrontierConfig};
use ferret::discovery::hittage::{Feedback, FeedbackKind};
use ferret::discovery::page::{parse_page, PageDoc};
use ferret::discovery::robots::RobotsOutcome;
use ferret::stories::text::Analyzer;
use futures_util::future::Either;
use futures_util::stream::{FuturesUnordered, StreamExt as _};
use serde::Serialize;
use url::Url;

use crate::ferret_advisor::{discovery_state, restored_pages, restored_state};
use crate::page_fetcher::{PageFetcher, PageFetcherConfig};
use crate::storage::{PageRecord, Store};
use crate::supervisor::unix_millis;

/// Options of `ferret discover`.
#[derive(Debug, Clone, clap::Args)]
pub struct DiscoverArgs {
    /// The config file: its store keeps the crawl (and resumes it), its `[discovery]` and
    /// `[fetch]` sections set the crawl.
    #[arg(long, short, env = "FERRET_CONFIG", default_value = "config.toml")]
    pub config: PathBuf,
    /// Pages you like: URLs one a line, or a browser's bookmarks export.
    #[arg(long)]
    pub likes: PathBuf,
    /// Pages to fetch in this run.
    #[arg(long)]
    pub budget: u64,
    /// Print one JSON object instead of a table.
    #[arg(long)]
    pub json: bool,
    /// Allow loopback addresses (a local corpus), whatever the config says.
    #[arg(long)]
    pub allow_loopback: bool,
    /// Requests at once; overrides `discovery.concurrency`.
    #[arg(long)]
    pub concurrency: Option<usize>,
    /// Between two requests to one host, in ms; overrides `discovery.per_host_interval_ms`.
    #[arg(long)]
    pub per_host_interval_ms: Option<u64>,
    /// Requests at once to one host; overrides `discovery.per_host_concurrency`.
    #[arg(long)]
    pub per_host_concurrency: Option<u32>,
}

/// What a run did.
#[derive(Debug, Clone, Serialize)]
pub struct RunReport {
    /// Pages fetched in this run, in order.
    pub fetched: Vec<String>,
    /// Pages accepted in this run, in order, with their scores.
    pub accepted: Vec<AcceptedSummary>,
    /// The loop's counts (this run).
    pub counts: EngineCounts,
    /// Seconds the run took.
    pub seconds: f64,
    /// Pages fetched per second.
    pub pages_per_sec: f64,
    /// Why the run ended.
    pub stopped: Stopped,
}

/// Why a run of the loop ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Stopped {
    /// The budget was fetched.
    Budget,
    /// Every link of every page fetched is fetched (or refused by robots.txt or the
    /// address policy): the site has nothing more.
    Exhausted,
    /// What is left waits for hosts that failed, to be tried again minutes from now.
    SlowRetries,
}

impl std::fmt::Display for Stopped {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Stopped::Budget => "the budget is fetched",
            Stopped::Exhausted => "nothing is left to fetch",
            Stopped::SlowRetries => "what is left waits for hosts that failed, minutes from now",
        })
    }
}

/// An accepted page, as printed.
#[derive(Debug, Clone, Serialize)]
pub struct AcceptedSummary {
    /// The page.
    pub url: String,
    /// Its title.
    pub title: String,
    /// Its topic similarity to its nearest lighthouse.
    pub score: f64,
    /// The filter that passed it (none for a liked page).
    pub filter: Option<u64>,
}

/// Runs the command.
pub fn run(settings: &Settings, args: &DiscoverArgs) -> anyhow::Result<()> {
    let mut crawl = settings.discovery.crawl.clone();
    crawl.policy.allow_loopback |= args.allow_loopback;
    if let Some(n) = args.concurrency {
        crawl.concurrency = n.max(1);
    }
    if let Some(ms) = args.per_host_interval_ms {
        crawl.per_host_interval = Duration::from_millis(ms);
    }
    if let Some(n) = args.per_host_concurrency {
        crawl.per_host_concurrency = n.max(1);
    }
    let text = std::fs::read_to_string(&args.likes)
        .with_context(|| format!("cannot read {}", args.likes.display()))?;
    let likes = read_likes(&text);
    for problem in &likes.problems {
        eprintln!("{}: {problem}", args.likes.display());
    }
    anyhow::ensure!(!likes.urls.is_empty(), "{}: no likes", args.likes.display());
    let mut store = Store::open(&settings.storage.path)
        .with_context(|| format!("cannot open the store {}", settings.storage.path.display()))?;
    let now = unix_millis();
    let new: Vec<Feedback> = likes
        .urls
        .iter()
        .map(|url| Feedback::new(url, FeedbackKind::Like, None, now))
        .collect::<Result<_, _>>()?;
    let known = store.load_feedback()?;
    let fresh: Vec<Feedback> = new
        .into_iter()
        .filter(|f| {
            !known
                .iter()
                .any(|k| k.url == f.url && k.kind == FeedbackKind::Like)
        })
        .collect();
    store.record_feedback(&fresh)?;

    let params = engine_params(settings, &crawl);
    let mut engine = Engine::new(params);
    let resumed = restore(&mut engine, &store)?;
    if resumed > 0 {
        eprintln!("Resuming: {resumed} pages known from earlier runs are not fetched again.");
    }
    let fetcher = PageFetcher::new(PageFetcherConfig {
        pool_per_host: crawl.per_host_concurrency as usize,
        ..PageFetcherConfig::from_settings(&settings.fetch, crawl.policy)
    })?;
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()?;
    let (report, mut store) = crawl_to_store(
        &runtime,
        &mut engine,
        &fetcher,
        args.budget,
        crawl.concurrency,
        store,
        true,
    )?;
    store.save_discovery_state(&discovery_state(&engine), unix_millis())?;
    print(args, &report)
}

/// How often a batch run says how far it got: a polite crawl of one site fetches a page a
/// second, so a run of a few hundred pages takes minutes.
const PROGRESS_EVERY: Duration = Duration::from_secs(10);

/// A batch run's progress: a line for stderr every `every`.
struct Progress {
    budget: u64,
    every: Duration,
    started: Instant,
    said: Instant,
    fetched: u64,
    /// The pages accepted into the map, the likes included: the rows of the final table.
    accepted: u64,
}

impl Progress {
    fn new(budget: u64, every: Duration) -> Progress {
        Progress {
            budget,
            every,
            started: Instant::now(),
            said: Instant::now(),
            fetched: 0,
            accepted: 0,
        }
    }

    /// Counts the event; the line to say, when it is time.
    fn see(&mut self, event: &DiscoveryEvent) -> Option<String> {
        match event {
            DiscoveryEvent::Fetched { features, .. } => {
                self.fetched += u64::from(features.is_some())
            }
            DiscoveryEvent::Accepted(_) => self.accepted += 1,
            _ => {}
        }
        if self.said.elapsed() < self.every {
            return None;
        }
        self.said = Instant::now();
        let rate = self.fetched as f64 / self.started.elapsed().as_secs_f64().max(1e-9);
        Some(format!(
            "{} of {} fetched ({rate:.1} pages/s), {} accepted so far (likes included)",
            self.fetched, self.budget, self.accepted
        ))
    }
}

/// [`drive`] for a batch run, its events written to `store` by a [`MapWriter`], the votes
/// taken here: the run is over when its last page is stored (its seconds and pages/s count
/// the writer's tail), and the store comes back with the report. With `progress`, a line on
/// stderr every ten seconds says how far the run got.
pub fn crawl_to_store(
    runtime: &tokio::runtime::Runtime,
    engine: &mut Engine,
    fetcher: &PageFetcher,
    budget: u64,
    concurrency: usize,
    store: Store,
    progress: bool,
) -> anyhow::Result<(RunReport, Store)> {
    let started = Instant::now();
    let mut writer = MapWriter::spawn(store);
    let mut progress = progress.then(|| Progress::new(budget, PROGRESS_EVERY));
    let report = runtime.block_on(drive(
        engine,
        |order| spawn_fetch(fetcher, order),
        Done::vote_here,
        budget,
        concurrency,
        |event| {
            if let Some(line) = progress.as_mut().and_then(|p| p.see(&event)) {
                eprintln!("{line}");
            }
            writer.record(event)
        },
    ));
    // What the loop sent is written before anything else is said, even after a failure.
    let store = writer.finish()?;
    let mut report = report?;
    report.seconds = started.elapsed().as_secs_f64();
    report.pages_per_sec = report.fetched.len() as f64 / report.seconds.max(1e-9);
    Ok((report, store))
}

/// The loop's settings from the config.
pub fn engine_params(settings: &Settings, crawl: &CrawlSettings) -> EngineParams {
    EngineParams {
        hittage: settings.discovery.hittage.clone(),
        frontier: FrontierConfig {
            max_in_flight_per_host: crawl.per_host_concurrency,
            min_interval_ms: u64::try_from(crawl.per_host_interval.as_millis()).unwrap_or(u64::MAX),
            ..FrontierConfig::default()
        },
        filter: FilterParams {
            unvisited_after_ms: i64::try_from(settings.discovery.unvisited_after.as_millis())
                .unwrap_or(i64::MAX),
            ..FilterParams::default()
        },
        seed: settings.runtime.seed,
        ..EngineParams::default()
    }
}

/// Gives the engine what earlier runs left in the store: feedback, the map, every URL
/// fetched, the fingerprints and the representatives' history. Returns how many URLs it
/// knows as fetched.
pub fn restore(engine: &mut Engine, store: &Store) -> anyhow::Result<usize> {
    let earlier = Earlier {
        map: restored_pages(store.load_accepted()?),
        kept: restored_pages(store.load_fetched()?),
        fetched: store.fetched_since(0)?,
        feedback: store.load_feedback()?,
        ..restored_state(store.load_discovery_state()?)
    };
    let fetched = earlier.fetched.len();
    engine.resume(earlier);
    Ok(fetched)
}

/// What the store keeps of the loop's events, written on a thread of its own so that the loop
/// never waits for SQLite: each event becomes a page record ([`page_record`]) or an approval
/// mark, and what piles up while a transaction is under way goes together in the next one
/// (group commit; records first, then marks, as the daemon's Mapmaker writes them).
pub struct MapWriter {
    sender: Option<mpsc::Sender<DiscoveryEvent>>,
    thread: Option<std::thread::JoinHandle<anyhow::Result<Store>>>,
}

impl MapWriter {
    /// A writer to `store`, which it hands back from [`MapWriter::finish`].
    pub fn spawn(mut store: Store) -> MapWriter {
        let (sender, events) = mpsc::channel::<DiscoveryEvent>();
        let thread = std::thread::spawn(move || {
            let (mut pages, mut approved) = (Vec::new(), Vec::new());
            while let Ok(first) = events.recv() {
                for event in std::iter::once(first).chain(events.try_iter()) {
                    queue_map_write(event, &mut pages, &mut approved);
                }
                store.write_map(&pages, &approved)?;
                pages.clear();
                approved.clear();
            }
            Ok(store)
        });
        MapWriter {
            sender: Some(sender),
            thread: Some(thread),
        }
    }

    /// Queues `event` for the store. Fails with the writer's error once a write failed.
    pub fn record(&mut self, event: DiscoveryEvent) -> anyhow::Result<()> {
        if matches!(event, DiscoveryEvent::Discarded { .. }) {
            return Ok(());
        }
        match &self.sender {
            Some(sender) if sender.send(event).is_ok() => Ok(()),
            // The thread ended, and with it the channel: it failed.
            _ => Err(self.join().err().unwrap_or_else(|| {
                anyhow::anyhow!("the store writer stopped before the loop did")
            })),
        }
    }

    /// Waits until every event queued is written, and gives the store back.
    pub fn finish(mut self) -> anyhow::Result<Store> {
        self.join()
    }

    fn join(&mut self) -> anyhow::Result<Store> {
        self.sender = None;
        match self.thread.take() {
            Some(thread) => thread
                .join()
                .map_err(|_| anyhow::anyhow!("the store writer panicked"))?,
            None => anyhow::bail!("the store writer has stopped"),
        }
    }
}

/// Queues what the store keeps of `event`: its page record ([`page_record`]) in `pages`, or
/// its approval mark in `approved`. Returns whether it kept anything.
pub fn queue_map_write(
    event: DiscoveryEvent,
    pages: &mut Vec<PageRecord>,
    approved: &mut Vec<(String, u64)>,
) -> bool {
    if let DiscoveryEvent::Approved { url, fingerprint } = event {
        approved.push((url, fingerprint));
        return true;
    }
    let record = page_record(&event);
    let kept = record.is_some();
    pages.extend(record);
    kept
}

/// What the store keeps of an event: a page fetched (so that it is not fetched again), or a
/// page accepted into the map. An approval is a mark on a page already stored
/// ([`Store::write_map`]), not a record.
pub fn page_record(event: &DiscoveryEvent) -> Option<PageRecord> {
    match event {
        DiscoveryEvent::Fetched {
            url,
            title,
            at_ms,
            features,
            links,
        } => Some(PageRecord {
            links: links.clone(),
            title: Some(title.clone()).filter(|t| !t.is_empty()),
            fetched_at_ms: Some(*at_ms),
            attributes: features
                .as_ref()
                .and_then(|f| serde_json::to_string(f).ok())
                .unwrap_or_else(|| "{}".into()),
            ..PageRecord::new(url.clone())
        }),
        DiscoveryEvent::Accepted(page) => Some(accepted_record(page)),
        DiscoveryEvent::Approved { .. } | DiscoveryEvent::Discarded { .. } => None,
    }
}

/// The Mapmaker's record of an accepted page.
pub fn accepted_record(page: &AcceptedPage) -> PageRecord {
    PageRecord {
        url: page.url.clone(),
        canonical_url: page.canonical.clone(),
        title: Some(page.title.clone()),
        lang: page.language.clone(),
        size: Some(u64::from(page.size)),
        fetched_at_ms: Some(page.fetched_at_ms),
        attributes: serde_json::to_string(&page.features).unwrap_or_else(|_| "{}".into()),
        accepted: true,
        approved: page.fingerprint.is_some(),
        approved_by_fingerprint: page.fingerprint.map(|f| f.to_string()),
        approved_by_filter: page.filter.map(|f| f.to_string()),
        links: page.links.clone(),
    }
}

thread_local! {
    /// Each worker thread's text pipeline (its stem cache is per thread).
    static ANALYZER: Analyzer = Analyzer::new();
}

/// The longest a batch waits for the next fetch to become allowed.
const MAX_IDLE_WAIT_MS: i64 = 30_000;

/// A fetch order carried out: what [`drive`] hands back to the engine.
#[derive(Debug)]
pub enum Done {
    /// A page: parsed, with the features computed where it was fetched; or why not.
    Page {
        /// The page asked for.
        url: Url,
        /// The page, or the error.
        result: Result<Box<(PageDoc, Features)>, String>,
    },
    /// A robots.txt.
    Robots {
        /// The host key of the order.
        host: String,
        /// What it says.
        outcome: RobotsOutcome,
    },
    /// The Filters' vote on an approved page.
    Vote {
        /// The page.
        url: String,
        /// The ferret fingerprint that approved it.
        fingerprint: u64,
        /// The filter that passed it, or None: discarded.
        verdict: Option<u64>,
    },
}

impl Done {
    /// The order given up on: a page counts as failed, a robots.txt as unreachable (tried
    /// again later).
    pub fn failed(order: FetchOrder, error: String) -> Done {
        match order {
            FetchOrder::Page { url, .. } => Done::Page {
                url,
                result: Err(error),
            },
            FetchOrder::Robots { host, .. } => Done::Robots {
                host,
                outcome: RobotsOutcome::Unreachable,
            },
        }
    }

    /// The vote `order` taken: its verdict.
    pub fn voted(order: &VoteOrder, verdict: Option<u64>) -> Done {
        Done::Vote {
            url: order.url.clone(),
            fingerprint: order.fingerprint,
            verdict,
        }
    }

    /// Takes the vote `order` here, on the calling thread (a batch has no Filter pool; a vote
    /// is a handful of similarities per filter).
    pub fn vote_here(order: VoteOrder) -> std::future::Ready<Done> {
        let verdict = order.vote();
        std::future::ready(Done::voted(&order, verdict))
    }
}

/// Carries out one order with `fetcher`: the page is parsed and its features computed here,
/// on the calling thread (a Ferret's, or a runtime worker's), not in the loop.
pub async fn fetch_order(fetcher: &PageFetcher, order: FetchOrder) -> Done {
    match order {
        FetchOrder::Robots { host, url } => Done::Robots {
            outcome: fetcher.fetch_robots(&url).await,
            host,
        },
        FetchOrder::Page { url, .. } => {
            let result = match fetcher.fetch(&url).await {
                Ok(page) => {
                    let doc = parse_page(&url, &page.body, page.content_type.as_deref());
                    let features = ANALYZER.with(|analyzer| Features::computed(&doc, analyzer));
                    Ok(Box::new((doc, features)))
                }
                Err(err) => Err(err.to_string()),
            };
            Done::Page { url, result }
        }
    }
}

/// Runs the loop until `budget` pages are fetched (a failed fetch does not count: it is never
/// retried, so a run where every fetch fails still ends, exhausted) or nothing is left to fetch,
/// with at most `concurrency` orders carried out at once by `fetch`, and every vote the loop
/// orders taken by `vote` (as many at once as it orders; a run ends with every vote answered);
/// every event goes to `sink` as it happens. Page orders stop while the pages fetched and those
/// in flight make the budget.
pub async fn drive<F, V>(
    engine: &mut Engine,
    mut fetch: impl FnMut(FetchOrder) -> F,
    mut vote: impl FnMut(VoteOrder) -> V,
    budget: u64,
    concurrency: usize,
    mut sink: impl FnMut(DiscoveryEvent) -> anyhow::Result<()>,
) -> anyhow::Result<RunReport>
where
    F: std::future::Future<Output = Done>,
    V: std::future::Future<Output = Done>,
{
    let start = Instant::now();
    let epoch = unix_millis();
    let now = || epoch + i64::try_from(start.elapsed().as_millis()).unwrap_or(i64::MAX);
    let before = engine.counts();
    let mut fetched = Vec::new();
    let mut accepted = Vec::new();
    // Page orders out now: with the pages fetched, no more than the budget is ever asked for.
    let mut pages_out = 0u64;
    // Fetch orders (pages and robots.txt) out now, under `concurrency`; votes are not counted.
    let mut fetches_out = 0usize;
    let mut running = FuturesUnordered::new();
    let stopped = loop {
        while fetches_out < concurrency.max(1) && fetched.len() as u64 + pages_out < budget {
            let Some(order) = engine.poll_fetch(now()) else {
                break;
            };
            pages_out += u64::from(matches!(order, FetchOrder::Page { .. }));
            fetches_out += 1;
            running.push(Either::Left(fetch(order)));
        }
        while let Some(order) = engine.poll_vote() {
            running.push(Either::Right(vote(order)));
        }
        if running.is_empty() {
            if fetched.len() as u64 >= budget {
                break Stopped::Budget;
            }
            match engine.poll_timeout() {
                // What is left waits for hosts that failed (their robots.txt unreachable, say)
                // to be tried again, minutes away: a batch stops here.
                Some(at) if at - now() > MAX_IDLE_WAIT_MS => {
                    tracing::info!(wait_ms = at - now(), "Only slow retries left; stopping.");
                    break Stopped::SlowRetries;
                }
                Some(at) => {
                    let wait = u64::try_from(at - now()).unwrap_or(0).max(1);
                    tokio::time::sleep(Duration::from_millis(wait)).await;
                    continue;
                }
                None => break Stopped::Exhausted,
            }
        }
        let Some(done) = running.next().await else {
            continue;
        };
        match done {
            Done::Vote {
                url,
                fingerprint,
                verdict,
            } => engine.handle_vote(&url, fingerprint, verdict, now()),
            Done::Robots { host, outcome } => {
                fetches_out -= 1;
                if matches!(outcome, RobotsOutcome::Refused) {
                    tracing::info!(%host, "Host refused by the address policy; its URLs are dropped.");
                }
                engine.handle_robots(&host, outcome, now());
            }
            Done::Page { url, result } => {
                fetches_out -= 1;
                pages_out -= 1;
                match result {
                    Ok(page) => {
                        fetched.push(url.to_string());
                        let (doc, features) = *page;
                        engine.handle_page_with(doc, features, now());
                    }
                    Err(err) => {
                        tracing::debug!(%url, error = %err, "Fetch failed.");
                        engine.handle_failure(&url, now());
                    }
                }
            }
        }
        while let Some(event) = engine.poll_event() {
            if let DiscoveryEvent::Accepted(page) = &event {
                accepted.push(AcceptedSummary {
                    url: page.url.clone(),
                    title: page.title.clone(),
                    score: page.score,
                    filter: page.filter,
                });
            }
            sink(event)?;
        }
    };
    let seconds = start.elapsed().as_secs_f64();
    let after = engine.counts();
    Ok(RunReport {
        pages_per_sec: fetched.len() as f64 / seconds.max(1e-9),
        fetched,
        accepted,
        counts: EngineCounts {
            fetched: after.fetched - before.fetched,
            failed: after.failed - before.failed,
            approved: after.approved - before.approved,
            accepted: after.accepted - before.accepted,
            fingerprints: after.fingerprints - before.fingerprints,
            runs: after.runs - before.runs,
            flushed: after.flushed - before.flushed,
        },
        seconds,
        stopped,
    })
}

/// [`fetch_order`] on a runtime worker thread, so that pages are parsed in parallel.
pub async fn spawn_fetch(fetcher: &PageFetcher, order: FetchOrder) -> Done {
    let (fetcher, copy) = (fetcher.clone(), order.clone());
    tokio::spawn(async move { fetch_order(&fetcher, order).await })
        .await
        .unwrap_or_else(|err| Done::failed(copy, format!("the fetch task failed: {err}")))
}

fn print(args: &DiscoverArgs, report: &RunReport) -> anyhow::Result<()> {
    if args.json {
        println!("{}", serde_json::to_string(report)?);
        return Ok(());
    }
    let mut ranked = report.accepted.clone();
    ranked.sort_by(|a, b| b.score.total_cmp(&a.score).then_with(|| a.url.cmp(&b.url)));
    println!("| score | page | title |");
    println!("|---:|---|---|");
    for page in &ranked {
        println!("| {:.3} | {} | {} |", page.score, page.url, page.title);
    }
    let c = &report.counts;
    println!(
        "\nfetched {} ({} failed), approved by ferrets {}, accepted by filters {}; \
         {} fingerprints made, {} run, {} flushed; {:.1} s, {:.0} pages/s; stopped: {}",
        c.fetched,
        c.failed,
        c.approved,
        c.accepted,
        c.fingerprints,
        c.runs,
        c.flushed,
        report.seconds,
        report.pages_per_sec,
        report.stopped
    );
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The progress line counts pages fetched (not failed fetches) and pages accepted, and
    /// says nothing until its interval has passed.
    #[test]
    fn progress_counts_the_pages_fetched_and_accepted() {
        let fetched = |url: &str, ok: bool| DiscoveryEvent::Fetched {
            url: url.into(),
            title: String::new(),
            at_ms: 1,
            features: ok.then(Box::default),
            links: Vec::new(),
        };
        let mut quiet = Progress::new(5, Duration::from_secs(3600));
        assert_eq!(quiet.see(&fetched("http://h/a", true)), None);
        let mut progress = Progress::new(5, Duration::ZERO);
        progress.see(&fetched("http://h/a", true));
        progress.see(&fetched("http://h/b", false));
        let accepted = DiscoveryEvent::Accepted(Box::new(AcceptedPage {
            url: "http://h/a".into(),
            canonical: None,
            title: "A".into(),
            language: None,
            size: 1,
            fetched_at_ms: 1,
            features: Features::default(),
            links: Vec::new(),
            filter: Some(1),
            fingerprint: None,
            score: 1.0,
        }));
        let line = progress.see(&accepted).expect("a line");
        assert!(line.starts_with("1 of 5 fetched ("), "{line}");
        assert!(
            line.ends_with(", 1 accepted so far (likes included)"),
            "{line}"
        );
    }

    /// Events written by the writer thread land as the loop sent them: a page fetched, then
    /// approved, then accepted is one stored page with its links, approved and accepted,
    /// whether the three went in one transaction or three.
    #[test]
    fn the_map_writer_writes_every_event_in_order() {
        let dir = tempfile::tempdir().unwrap();
        let fetched = |url: &str, links: &[&str]| DiscoveryEvent::Fetched {
            url: url.into(),
            title: format!("{url} title"),
            at_ms: 5,
            features: Some(Box::default()),
            links: links.iter().map(|l| l.to_string()).collect(),
        };
        let mut writer = MapWriter::spawn(Store::open(&dir.path().join("map.db")).unwrap());
        let (a, b, c) = ("http://h/a", "http://h/b", "http://h/c");
        writer.record(fetched(a, &[b, c])).unwrap();
        writer
            .record(DiscoveryEvent::Approved {
                url: a.into(),
                fingerprint: 7,
            })
            .unwrap();
        writer
            .record(DiscoveryEvent::Accepted(Box::new(AcceptedPage {
                url: a.into(),
                canonical: None,
                title: "A".into(),
                language: Some("en".into()),
                size: 10,
                fetched_at_ms: 5,
                features: Features::default(),
                links: vec![b.into(), c.into()],
                filter: Some(3),
                fingerprint: Some(7),
                score: 0.5,
            })))
            .unwrap();
        writer.record(fetched(b, &[a])).unwrap();
        let store = writer.finish().unwrap();

        let page = store.load_page(a).unwrap().unwrap();
        assert!(page.accepted && page.approved, "{page:?}");
        assert_eq!(page.title.as_deref(), Some("A"));
        assert_eq!(page.links, [b, c]);
        let page = store.load_page(b).unwrap().unwrap();
        assert!(!page.accepted && !page.approved);
        assert_eq!(page.links, [a]);
        // A link target never fetched is a placeholder.
        assert_eq!(store.load_page(c).unwrap().unwrap().fetched_at_ms, None);
    }
}
