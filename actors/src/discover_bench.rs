//! `ferret bench discover`: the discovery loop against a breadth-first crawl from the same
//! likes, on a corpus served over HTTP (or read from a directory), scored by which fetched
//! pages are on the topic.

use std::path::PathBuf;
use std::time::Instant;

use anyhow::Context as _;
use ferret::discovery::engine::{DiscoveryEvent, Engine, EngineParams};
use ferret::discovery::frontier::{FetchOrder, FrontierConfig};
use ferret::discovery::hittage::{Feedback, FeedbackKind};
use ferret::discovery::page::parse_page;
use ferret::discovery::robots::RobotsOutcome;
use url::Url;

use crate::bfs::{bfs_crawl, Scope};
use crate::discover::crawl_to_store;
use crate::page_fetcher::{PageFetcher, PageFetcherConfig};
use crate::storage::Store;
use ferret::discovery::url::AddressPolicy;

/// Options of `ferret bench discover`.
#[derive(Debug, Clone, clap::Args)]
pub struct DiscoverBenchArgs {
    /// The corpus's base URL (its pages' URLs start with it).
    #[arg(long)]
    pub base: Url,
    /// Read the pages from this directory instead of fetching them (the base URL maps onto
    /// it): the loop alone, on a virtual clock.
    #[arg(long)]
    pub dir: Option<PathBuf>,
    /// The liked pages, one URL (or path under the base) a line.
    #[arg(long)]
    pub likes: PathBuf,
    /// A page is on the topic when its URL's last path segment starts with one of these
    /// (comma-separated).
    #[arg(long, value_delimiter = ',')]
    pub relevant: Vec<String>,
    /// Pages to fetch.
    #[arg(long, default_value_t = 400)]
    pub budget: u64,
    /// Seeds the loop.
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Print the loop's fetch order, each page marked `+` when on the topic.
    #[arg(long)]
    pub show_order: bool,
    /// Requests at once (over HTTP).
    #[arg(long, default_value_t = 32)]
    pub concurrency: usize,
    /// With `--dir`: the least time between two requests to one host on the virtual clock,
    /// as a polite crawl of the web waits (each fetch takes 1 ms).
    #[arg(long, default_value_t = 0, requires = "dir")]
    pub per_host_interval_ms: u64,
}

/// One crawl's fetch order, what it accepted, and how fast it went.
#[derive(Default)]
struct Crawl {
    fetched: Vec<String>,
    accepted: Vec<String>,
    seconds: f64,
}

impl Crawl {
    fn pages_per_sec(&self) -> f64 {
        self.fetched.len() as f64 / self.seconds.max(1e-9)
    }
}

/// Runs the benchmark.
pub fn run(args: &DiscoverBenchArgs) -> anyhow::Result<()> {
    let likes = read_likes(&args.likes, &args.base)?;
    let relevant = |url: &str| {
        let last = url.rsplit('/').next().unwrap_or("");
        args.relevant.iter().any(|p| last.starts_with(p.as_str()))
    };
    let (crawl, bfs) = match &args.dir {
        Some(dir) => {
            let bfs = Crawl {
                fetched: breadth_first(args, dir, &likes),
                ..Crawl::default()
            };
            (focused(args, dir, &likes)?, bfs)
        }
        None => over_http(args, &likes)?,
    };
    if args.show_order {
        for (i, url) in crawl.fetched.iter().enumerate() {
            println!("{i} {} {url}", if relevant(url) { "+" } else { "-" });
        }
    }
    if let Some(dir) = &args.dir {
        let total = walk_dir(dir).iter().filter(|u| relevant(u)).count();
        println!("{total} relevant pages in the corpus");
    }
    println!("| fetched | ferret harvest | ferret accepted precision | BFS harvest |");
    println!("|---:|---:|---:|---:|");
    // The rows the budget reaches, and the budget itself.
    let budget = usize::try_from(args.budget).unwrap_or(usize::MAX);
    let mut rows: Vec<usize> = [100usize, 200, 400]
        .into_iter()
        .filter(|&at| at < budget)
        .collect();
    rows.push(budget);
    for at in rows {
        let harvest = |fetched: &[String]| {
            let n = at.min(fetched.len());
            let hits = fetched[..n].iter().filter(|u| relevant(u)).count();
            format!("{:.3} ({hits}/{n})", hits as f64 / at as f64)
        };
        let n = at.min(crawl.fetched.len());
        let fetched: std::collections::HashSet<&String> = crawl.fetched[..n].iter().collect();
        let acc: Vec<&String> = crawl
            .accepted
            .iter()
            .filter(|u| fetched.contains(u))
            .collect();
        let acc_hits = acc.iter().filter(|u| relevant(u)).count();
        println!(
            "| {at} | {} | {:.3} ({acc_hits}/{}) | {} |",
            harvest(&crawl.fetched),
            acc_hits as f64 / acc.len().max(1) as f64,
            acc.len(),
            harvest(&bfs.fetched),
        );
    }
    println!(
        "\nferret: {} fetched, {} accepted in {:.3} s ({:.0} pages/s through fetch, parse, \
         features, fingerprints, filters, mapmaker and store)",
        crawl.fetched.len(),
        crawl.accepted.len(),
        crawl.seconds,
        crawl.pages_per_sec(),
    );
    if args.dir.is_none() {
        throughput(args, &likes)?;
    }
    Ok(())
}

fn read_likes(path: &PathBuf, base: &Url) -> anyhow::Result<Vec<Url>> {
    let text =
        std::fs::read_to_string(path).with_context(|| format!("cannot read {}", path.display()))?;
    let text = ferret::strip_bom(&text);
    text.lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
        .map(|l| {
            base.join(l)
                .with_context(|| format!("bad URL in likes: {l}"))
        })
        .collect()
}

/// The discovery loop over a directory, on a virtual clock (1 ms a fetch, and the waits for a
/// host's turn).
fn focused(
    args: &DiscoverBenchArgs,
    dir: &std::path::Path,
    likes: &[Url],
) -> anyhow::Result<Crawl> {
    let mut params = local_params(args);
    params.frontier.min_interval_ms = args.per_host_interval_ms;
    let mut engine = Engine::new(params);
    for like in likes {
        engine.feedback(Feedback::new(like.as_str(), FeedbackKind::Like, None, 0)?);
    }
    let started = Instant::now();
    let mut now = 1i64;
    let mut fetched = Vec::new();
    let mut accepted = Vec::new();
    while (fetched.len() as u64) < args.budget {
        let Some(order) = engine.poll_fetch(now) else {
            // Waiting for the host's turn, or done.
            match engine.poll_timeout() {
                Some(at) => now = at.max(now + 1),
                None => break,
            }
            continue;
        };
        now += 1;
        match order {
            FetchOrder::Robots { host, .. } => {
                engine.handle_robots(&host, RobotsOutcome::Unavailable, now)
            }
            FetchOrder::Page { url, .. } => match read_page(args, dir, &url) {
                Some(body) => {
                    fetched.push(url.to_string());
                    let doc = parse_page(&url, &body, Some("text/html"));
                    engine.handle_page(doc, now);
                }
                None => engine.handle_failure(&url, now),
            },
        }
        engine.settle_votes(now);
        while let Some(event) = engine.poll_event() {
            if let DiscoveryEvent::Accepted(page) = event {
                accepted.push(page.url);
            }
        }
    }
    Ok(Crawl {
        fetched,
        accepted,
        seconds: started.elapsed().as_secs_f64(),
    })
}

/// The corpus's pages, in every folder under `dir`, as URLs under a base of `http://corpus/`
/// (only their last segment matters to the relevance test).
fn walk_dir(dir: &std::path::Path) -> Vec<String> {
    let mut pages = Vec::new();
    let mut folders = vec![dir.to_path_buf()];
    while let Some(folder) = folders.pop() {
        let Ok(entries) = std::fs::read_dir(&folder) else {
            continue;
        };
        for entry in entries.filter_map(Result::ok) {
            let path = entry.path();
            if path.is_dir() {
                folders.push(path);
            } else if let Ok(name) = path.strip_prefix(dir) {
                let name = name.to_string_lossy();
                if name.ends_with(".html") {
                    pages.push(format!("http://corpus/{name}"));
                }
            }
        }
    }
    pages
}

/// Breadth-first from the likes over the directory: the fetch order.
fn breadth_first(args: &DiscoverBenchArgs, dir: &std::path::Path, likes: &[Url]) -> Vec<String> {
    let mut seen: std::collections::HashSet<String> = likes.iter().map(|u| u.to_string()).collect();
    let mut queue: std::collections::VecDeque<Url> = likes.iter().cloned().collect();
    let mut fetched = Vec::new();
    while let Some(url) = queue.pop_front() {
        if fetched.len() as u64 >= args.budget {
            break;
        }
        let Some(body) = read_page(args, dir, &url) else {
            continue;
        };
        fetched.push(url.to_string());
        for link in ferret::discovery::page::extract_links(&url, &body) {
            if seen.insert(link.to_string()) {
                queue.push_back(link);
            }
        }
    }
    fetched
}

/// The page at `url` from the directory, if it is an HTML file there.
fn read_page(args: &DiscoverBenchArgs, dir: &std::path::Path, url: &Url) -> Option<Vec<u8>> {
    if url.host_str() != args.base.host_str() || url.port() != args.base.port() {
        return None;
    }
    let path = url.path().strip_prefix(args.base.path())?;
    let path = if path.is_empty() || path.ends_with('/') {
        format!("{path}index.html")
    } else {
        path.to_string()
    };
    if !path.ends_with(".html") || path.contains("..") {
        return None;
    }
    std::fs::read(dir.join(path)).ok()
}

/// Both crawls over HTTP, the loop writing to a scratch store as `ferret discover` does.
fn over_http(args: &DiscoverBenchArgs, likes: &[Url]) -> anyhow::Result<(Crawl, Crawl)> {
    let scratch = tempfile::tempdir()?;
    let store = Store::open(&scratch.path().join("bench.db"))?;
    let policy = AddressPolicy::allow_all();
    let fetcher = PageFetcher::new(PageFetcherConfig {
        policy,
        pool_per_host: args.concurrency,
        ..PageFetcherConfig::default()
    })?;
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()?;
    let mut engine = Engine::new(local_params(args));
    for like in likes {
        engine.feedback(Feedback::new(like.as_str(), FeedbackKind::Like, None, 0)?);
    }
    let (report, _) = crawl_to_store(
        &runtime,
        &mut engine,
        &fetcher,
        args.budget,
        args.concurrency,
        store,
        false,
    )?;
    let ferret = Crawl {
        fetched: report.fetched,
        accepted: report.accepted.into_iter().map(|page| page.url).collect(),
        seconds: report.seconds,
    };
    let bfs = runtime.block_on(bfs_crawl(
        &fetcher,
        likes,
        usize::try_from(args.budget).unwrap_or(usize::MAX),
        args.concurrency,
        Scope::SameHost,
    ));
    let bfs = Crawl {
        fetched: bfs.order.iter().map(Url::to_string).collect(),
        accepted: Vec::new(),
        seconds: bfs.elapsed.as_secs_f64(),
    };
    Ok((ferret, bfs))
}

/// The loop's settings for a local corpus: no politeness delay, many requests at once.
fn local_params(args: &DiscoverBenchArgs) -> EngineParams {
    EngineParams {
        frontier: FrontierConfig {
            max_in_flight_per_host: u32::try_from(args.concurrency).unwrap_or(64),
            min_interval_ms: 0,
            ..FrontierConfig::default()
        },
        seed: args.seed,
        ..EngineParams::default()
    }
}

/// Pages per second, median of three more runs of both crawls as above.
fn throughput(args: &DiscoverBenchArgs, likes: &[Url]) -> anyhow::Result<()> {
    let mut loop_runs = Vec::new();
    let mut bfs_runs = Vec::new();
    for _ in 0..3 {
        let (ferret, bfs) = over_http(args, likes)?;
        loop_runs.push((ferret.pages_per_sec(), ferret.fetched.len()));
        bfs_runs.push((bfs.pages_per_sec(), bfs.fetched.len()));
    }
    let median = |runs: &mut Vec<(f64, usize)>| {
        runs.sort_by(|a, b| a.0.total_cmp(&b.0));
        runs[runs.len() / 2]
    };
    let (ferret, ferret_pages) = median(&mut loop_runs);
    let (bfs, bfs_pages) = median(&mut bfs_runs);
    println!(
        "
the same crawls, {} requests at once, median of 3 runs:",
        args.concurrency
    );
    println!("| crawl | pages | pages/s |");
    println!("|---|---:|---:|");
    println!("| ferret discovery loop (fetch, parse, features, fingerprints, filters, mapmaker, store) | {ferret_pages} | {ferret:.0} |");
    println!("| ferret breadth-first (fetch and links only) | {bfs_pages} | {bfs:.0} |");
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A corpus in folders (Python's documentation: `library/`, `howto/`, …) is counted
    /// whole, not only its top folder.
    #[test]
    fn walk_dir_counts_the_pages_of_every_folder() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join("library/deep")).unwrap();
        for page in [
            "index.html",
            "library/asyncio-task.html",
            "library/deep/asyncio-queue.html",
            "library/notes.txt",
        ] {
            std::fs::write(dir.path().join(page), "<html></html>").unwrap();
        }
        let mut pages = walk_dir(dir.path());
        pages.sort();
        assert_eq!(
            pages,
            [
                "http://corpus/index.html",
                "http://corpus/library/asyncio-task.html",
                "http://corpus/library/deep/asyncio-queue.html",
            ]
        );
    }
}
