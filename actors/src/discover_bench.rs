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
}

/// One crawl's fetch order, and what it accepted.
struct Crawl {
    fetched: Vec<String>,
    accepted: Vec<String>,
    seconds: f64,
}

/// Runs the benchmark.
pub fn run(args: &DiscoverBenchArgs) -> anyhow::Result<()> {
    let likes = read_likes(&args.likes, &args.base)?;
    let dir = args
        .dir
        .as_ref()
        .context("only --dir is supported for now")?;
    let relevant = |url: &str| {
        let last = url.rsplit('/').next().unwrap_or("");
        args.relevant.iter().any(|p| last.starts_with(p.as_str()))
    };
    let crawl = focused(args, dir, &likes)?;
    let bfs = breadth_first(args, dir, &likes);
    if std::env::var_os("FERRET_DEBUG").is_some() {
        for (i, url) in crawl.fetched.iter().enumerate() {
            eprintln!("{i} {} {url}", if relevant(url) { "+" } else { "-" });
        }
    }
    let total = walk_dir(dir).iter().filter(|u| relevant(u)).count();
    println!("{total} relevant pages in the corpus");
    println!("| fetched | ferret harvest | ferret accepted precision | BFS harvest |");
    println!("|---:|---:|---:|---:|");
    for at in [100usize, 200, 400] {
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
            harvest(&bfs),
        );
    }
    println!(
        "ferret: {} fetched, {} accepted in {:.3} s",
        crawl.fetched.len(),
        crawl.accepted.len(),
        crawl.seconds
    );
    Ok(())
}

fn read_likes(path: &PathBuf, base: &Url) -> anyhow::Result<Vec<Url>> {
    let text =
        std::fs::read_to_string(path).with_context(|| format!("cannot read {}", path.display()))?;
    text.lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
        .map(|l| {
            base.join(l)
                .with_context(|| format!("bad URL in likes: {l}"))
        })
        .collect()
}

/// The discovery loop over a directory, on a virtual clock (1 ms a fetch).
fn focused(
    args: &DiscoverBenchArgs,
    dir: &std::path::Path,
    likes: &[Url],
) -> anyhow::Result<Crawl> {
    let params = EngineParams {
        frontier: FrontierConfig {
            max_in_flight_per_host: 64,
            min_interval_ms: 0,
            ..FrontierConfig::default()
        },
        seed: args.seed,
        ..EngineParams::default()
    };
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
            break;
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
        while let Some(event) = engine.poll_event() {
            if let DiscoveryEvent::Accepted(page) = event {
                accepted.push(page.url);
            }
        }
    }
    eprintln!("{:?}", engine.counts());
    if std::env::var_os("FERRET_DEBUG").is_some() {
        for f in engine.filters().filters() {
            eprintln!(
                "filter {} {} {:?} reps {:?}",
                f.id,
                f.lighthouse,
                f.vector,
                f.representatives.iter().map(|r| &r.0).collect::<Vec<_>>()
            );
        }
        for f in engine.advisor().pool() {
            eprintln!(
                "fp {} {:?} {} th {:.3} {}/{}/{}",
                f.id, f.kind, f.representative, f.threshold, f.fetched, f.approved, f.accepted
            );
        }
    }
    Ok(Crawl {
        fetched,
        accepted,
        seconds: started.elapsed().as_secs_f64(),
    })
}

/// The corpus's pages as URLs under a base of `http://corpus/` (only their last segment
/// matters to the relevance test).
fn walk_dir(dir: &std::path::Path) -> Vec<String> {
    std::fs::read_dir(dir)
        .map(|entries| {
            entries
                .filter_map(Result::ok)
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .filter(|name| name.ends_with(".html"))
                .map(|name| format!("http://corpus/{name}"))
                .collect()
        })
        .unwrap_or_default()
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
