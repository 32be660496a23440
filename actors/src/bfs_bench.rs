//! `ferret bench bfs`: pages per second through the whole fetch pipeline (HTTP client, body
//! streaming, link extraction, frontier) crawling a local site breadth-first, side by side
//! with `wget -r` on the same site in the same run. Serve the PostgreSQL documentation with
//! `scripts/corpus.sh` first.

use std::process::Command;
use std::time::Instant;

use anyhow::Context as _;
use ferret::discovery::url::{parse_url, AddressPolicy};

use crate::bfs::{bfs_crawl, Scope};
use crate::page_fetcher::{PageFetcher, PageFetcherConfig};
use crate::stats::median;

/// Options of `ferret bench bfs`.
#[derive(Debug, Clone, clap::Args)]
pub struct BfsBenchArgs {
    /// The page to start from (e.g. `http://127.0.0.1:8088/index.html`).
    #[arg(long)]
    pub root: String,
    /// Pages to fetch at most.
    #[arg(long, default_value_t = 100_000)]
    pub budget: usize,
    /// Requests at once.
    #[arg(long, default_value_t = 32)]
    pub concurrency: usize,
    /// Runs of each; the medians are reported.
    #[arg(long, default_value_t = 5)]
    pub runs: usize,
    /// Worker threads of the runtime (default: the machine's cores).
    #[arg(long)]
    pub threads: Option<usize>,
    /// Do not run `wget -r` beside.
    #[arg(long)]
    pub no_wget: bool,
}

/// Runs the benchmark and prints the table.
pub fn run(args: &BfsBenchArgs) -> anyhow::Result<()> {
    let root = parse_url(&args.root)?;
    let threads = args
        .threads
        .unwrap_or_else(|| std::thread::available_parallelism().map_or(2, |n| n.get()));
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(threads.max(1))
        .enable_all()
        .build()
        .context("cannot start the runtime")?;
    println!(
        "bfs crawl of {root}: budget {}, concurrency {}, {threads} worker threads, {} runs",
        args.budget, args.concurrency, args.runs
    );
    println!(
        "{:>4} {:>12} {:>9} {:>10} {:>12} {:>9} {:>10}",
        "run", "ferret pages", "secs", "pages/s", "wget pages", "secs", "pages/s"
    );
    let mut ours = Vec::new();
    let mut theirs = Vec::new();
    for run in 1..=args.runs.max(1) {
        let client = PageFetcher::new(PageFetcherConfig {
            policy: AddressPolicy::allow_all(),
            pool_per_host: args.concurrency.max(1),
            ..PageFetcherConfig::default()
        })?;
        let report = runtime.block_on(bfs_crawl(
            &client,
            std::slice::from_ref(&root),
            args.budget,
            args.concurrency,
            Scope::SameHost,
        ));
        ours.push(report.pages_per_sec);
        let wget = if args.no_wget {
            None
        } else {
            Some(wget(root.as_str())?)
        };
        if let Some((pages, secs)) = wget {
            theirs.push(pages as f64 / secs);
        }
        let (wp, ws, wr) = wget.map_or((String::new(), String::new(), String::new()), |(p, s)| {
            (
                p.to_string(),
                format!("{s:.3}"),
                format!("{:.0}", p as f64 / s),
            )
        });
        println!(
            "{run:>4} {:>12} {:>9.3} {:>10.0} {wp:>12} {ws:>9} {wr:>10}",
            report.fetched,
            report.elapsed.as_secs_f64(),
            report.pages_per_sec,
        );
        if report.failed > 0 {
            println!("     ({} page fetches failed)", report.failed);
        }
    }
    let ours = median(&mut ours);
    match median(&mut theirs) {
        theirs if theirs > 0.0 => println!(
            "median: ferret {ours:.0} pages/s, wget -r {theirs:.0} pages/s ({:.2}x)",
            ours / theirs
        ),
        _ => println!("median: ferret {ours:.0} pages/s"),
    }
    Ok(())
}

/// `wget -r -np --delete-after` from `root` into a scratch directory: (files fetched,
/// seconds). `-nv` instead of `-q` so that the files can be counted.
fn wget(root: &str) -> anyhow::Result<(usize, f64)> {
    let dir = std::env::temp_dir().join(format!("ferret-bfs-wget-{}", std::process::id()));
    let start = Instant::now();
    let output = Command::new("wget")
        .args(["-r", "-nv", "-np", "--delete-after", "-P"])
        .arg(&dir)
        .arg(root)
        .output()
        .context("cannot run wget (scripts/corpus.sh installs it)")?;
    let secs = start.elapsed().as_secs_f64();
    let _ = std::fs::remove_dir_all(&dir);
    let log = String::from_utf8_lossy(&output.stderr);
    let pages = log.lines().filter(|l| l.contains(" URL:")).count();
    Ok((pages, secs))
}
