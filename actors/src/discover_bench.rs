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
    println!(
        "ferret: {} fetched, {} accepted in {:.3} s",
        crawl.fetched.len(),
        crawl.accepted.len(),
        crawl.seconds
    );
    for at in [100usize, 200, 400] {
        let n = at.min(crawl.fetched.len());
        let hits = crawl.fetched[..n].iter().filter(|u| relevant(u)).count();
        let acc: Vec<&String> = crawl
            .accepted
            .iter()
            .take_while(|u| crawl.fetched[..n].contains(u))
            .collect();
        let acc_hits = acc.iter().filter(|u| relevant(u)).count();
        println!(
            "  at {at}: harvest {:.3} ({hits}/{n}), accepted precision {:.3} ({acc_hits}/{})",
            hits as f64 / n.max(1) as f64,
            acc_hits as f64 / acc.len().max(1) as f64,
            acc.len()
        );
    }
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
            FetchOrder::Page { url, .. } => {
                let path = url.path().strip_prefix(args.base.path()).unwrap_or("");
                let path = if path.is_empty() || path.ends_with('/') {
                    format!("{path}index.html")
                } else {
                    path.to_string()
                };
                match std::fs::read(dir.join(&path)) {
                    Ok(body) if path.ends_with(".html") => {
                        fetched.push(url.to_string());
                        let doc = parse_page(&url, &body, Some("text/html"));
                        engine.handle_page(doc, now);
                    }
                    _ => engine.handle_failure(&url, now),
                }
            }
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
