//! A breadth-first crawler: fetch, extract links, repeat, as fast as politeness allows. The
//! baseline of the discovery benchmark (what a plain crawler does with the same budget) and
//! the measure of the fetch pipeline's speed (`ferret bench bfs`).
//!
//! Frontier-driven: the core [`Frontier`] decides what to fetch (depth as priority, so the
//! order is breadth-first; robots.txt first, per-host limits); each page is fetched and its
//! links extracted in a tokio task, so parsing spreads over the runtime's worker threads.

use std::time::{Duration, Instant};

use ferret::discovery::frontier::{FetchOrder, FetchOutcome, Frontier, FrontierConfig};
use ferret::discovery::page::extract_links;
use ferret::discovery::robots::RobotsOutcome;
use futures_util::stream::{FuturesUnordered, StreamExt as _};
use reqwest::Url;

use crate::page_fetcher::{PageFetchError, PageFetcher};

/// Which links are followed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scope {
    /// Only links to a seed's host (and port).
    SameHost,
    /// Every http(s) link.
    Any,
}

/// What a crawl did.
#[derive(Debug, Clone, Default)]
pub struct BfsReport {
    /// Pages fetched (2xx HTML).
    pub fetched: usize,
    /// Page fetches that failed (status, not HTML, too large, network).
    pub failed: usize,
    /// Links found on the fetched pages (before dedup).
    pub links: usize,
    /// Body bytes read.
    pub bytes: u64,
    /// Wall time from the first request to the last answer.
    pub elapsed: Duration,
    /// `fetched / elapsed`.
    pub pages_per_sec: f64,
    /// The pages fetched, in the order their fetches were ordered.
    pub order: Vec<Url>,
}

enum Done {
    Page {
        url: Url,
        depth: f64,
        result: Result<(u64, Url, Vec<Url>), PageFetchError>,
    },
    Robots {
        host: String,
        outcome: RobotsOutcome,
    },
}

/// Crawls breadth-first from `seeds` until `budget` pages have been ordered or nothing is
/// left, with at most `concurrency` requests at once (also the per-host limit: the crawl is
/// polite by robots.txt and concurrency only). Must run inside a tokio runtime; a
/// multi-threaded one spreads the parsing.
pub async fn bfs_crawl(
    client: &PageFetcher,
    seeds: &[Url],
    budget: usize,
    concurrency: usize,
    scope: Scope,
) -> BfsReport {
    let concurrency = concurrency.max(1);
    let mut frontier = Frontier::new(FrontierConfig {
        max_in_flight_per_host: u32::try_from(concurrency).unwrap_or(u32::MAX),
        min_interval_ms: 0,
        robots_retry_ms: 1_000,
        ..FrontierConfig::default()
    });
    let start = Instant::now();
    let now = || u64::try_from(start.elapsed().as_millis()).unwrap_or(u64::MAX);
    let hosts: Vec<String> = seeds.iter().map(ferret::discovery::url::host_key).collect();
    for seed in seeds {
        frontier.push(seed.clone(), 0.0, 0);
    }
    let mut report = BfsReport::default();
    let mut ordered = 0;
    let mut running = FuturesUnordered::new();
    loop {
        while running.len() < concurrency && ordered < budget {
            let Some(order) = frontier.poll(now()) else {
                break;
            };
            match order {
                FetchOrder::Robots { host, url } => {
                    let client = client.clone();
                    running.push(tokio::spawn(async move {
                        Done::Robots {
                            outcome: client.fetch_robots(&url).await,
                            host,
                        }
                    }));
                }
                FetchOrder::Page { url, priority, .. } => {
                    ordered += 1;
                    report.order.push(url.clone());
                    let client = client.clone();
                    running.push(tokio::spawn(async move {
                        let result = client.fetch(&url).await.map(|page| {
                            let links = extract_links(&page.url, &page.body);
                            (page.body.len() as u64, page.url, links)
                        });
                        Done::Page {
                            url,
                            depth: -priority,
                            result,
                        }
                    }));
                }
            }
        }
        if running.is_empty() {
            if ordered >= budget {
                break;
            }
            match frontier.poll_timeout() {
                Some(at) => {
                    tokio::time::sleep(Duration::from_millis(at.saturating_sub(now()).max(1)))
                        .await;
                    continue;
                }
                None => break,
            }
        }
        let Some(joined) = running.next().await else {
            continue;
        };
        let Ok(done) = joined else {
            report.failed += 1; // the task panicked; its URL stays in flight
            continue;
        };
        match done {
            Done::Robots { host, outcome } => frontier.robots_fetched(&host, outcome, now()),
            Done::Page { url, depth, result } => match result {
                Ok((bytes, landed, links)) => {
                    frontier.fetched(&url, now(), FetchOutcome::Done);
                    if landed != url {
                        // Redirected: the page it landed on is fetched too.
                        frontier.mark_fetched(&landed, now());
                    }
                    report.fetched += 1;
                    report.bytes += bytes;
                    report.links += links.len();
                    for link in links {
                        let in_scope = scope == Scope::Any
                            || hosts.contains(&ferret::discovery::url::host_key(&link));
                        if in_scope {
                            frontier.push(link, -(depth + 1.0), now());
                        }
                    }
                }
                Err(err) => {
                    let outcome = match err.throttled() {
                        Some(secs) => FetchOutcome::Throttled {
                            retry_after_ms: secs.unwrap_or(1).saturating_mul(1_000),
                        },
                        None => FetchOutcome::Failed,
                    };
                    if outcome == FetchOutcome::Failed {
                        report.failed += 1;
                        tracing::debug!(error = %err, "A page fetch failed.");
                    } else {
                        // It goes back in the queue and will be ordered again.
                        ordered -= 1;
                        report.order.retain(|u| u != &url);
                    }
                    frontier.fetched(&url, now(), outcome);
                }
            },
        }
    }
    report.elapsed = start.elapsed();
    report.pages_per_sec = report.fetched as f64 / report.elapsed.as_secs_f64().max(1e-9);
    report
}
