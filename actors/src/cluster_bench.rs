//! `ferret bench cluster`: throughput of the stories clusterer on a long stream, and how the
//! cost of an item grows (it should not) as the stream does.
//!
//! The stream is a labelled file replayed: each pass starts a window and an hour after the
//! one before, so that an item's copy from the pass before has left the window (it is not a
//! near-duplicate of it) while the rest of that pass is still in it, as an endless stream's
//! window is never empty. Two variants run on the same stream, side by side: ferret's clusterer
//! (near-duplicates, events, stories, merges) and a single-pass baseline in the same code
//! (one level, no near-duplicate check), the shape of the seed's quick baseline.

use std::path::PathBuf;
use std::time::Instant;

use ferret::stories::{ClusterParams, Clusterer, Footprint, StreamItem};

use crate::stats::median;

/// Options of `ferret bench cluster`.
#[derive(Debug, Clone, clap::Args)]
pub struct ClusterBenchArgs {
    /// The labelled JSON-lines file to replay.
    #[arg(
        long,
        default_value = "../shared/data/news-clustering/uci-news-aggregator-subset/dev.jsonl"
    )]
    pub input: PathBuf,
    /// Items in the stream.
    #[arg(long, default_value_t = 200_000)]
    pub items: usize,
    /// Items per row of the cost table.
    #[arg(long, default_value_t = 10_000)]
    pub step: usize,
    /// Words only: no pairs of adjacent stems as terms (the clusterer before bigrams).
    #[arg(long)]
    pub no_bigrams: bool,
    /// Cosine at or above which an item joins an event (default: the clusterer's).
    #[arg(long, value_parser = crate::arg::unit::<f32>)]
    pub event_threshold: Option<f32>,
    /// Runs of each column, taken in turn (ferret, baseline, ferret, …) so that both see the
    /// machine alike; the table gives the median of each figure.
    #[arg(long, default_value_t = 3, value_parser = clap::value_parser!(u32).range(1..=99))]
    pub runs: u32,
}

/// Runs the benchmark and prints the table.
pub fn run(args: &ClusterBenchArgs) -> anyhow::Result<()> {
    anyhow::ensure!(
        args.step > 0 && args.items >= args.step,
        "need --items ≥ --step ≥ 1"
    );
    let mut items = crate::cluster_cmd::read_stream(&args.input)?;
    anyhow::ensure!(!items.is_empty(), "{} holds no items", args.input.display());
    items.sort_by_key(|item| item.at);
    let stream = replay(&items, args.items, ClusterParams::default().window);
    let defaults = ClusterParams::default();
    let defaults = ClusterParams {
        bigrams: !args.no_bigrams,
        event_threshold: args.event_threshold.unwrap_or(defaults.event_threshold),
        ..defaults
    };

    let variants: [(&str, ClusterParams, bool); 2] = [
        ("ferret (dedup + events + stories)", defaults.clone(), true),
        (
            "single-pass baseline (one level)",
            ClusterParams {
                event_threshold: f32::INFINITY,
                ..defaults.clone()
            },
            false,
        ),
    ];
    // Per column and run: µs per item in each block, items/s, and what the clusterer held.
    let mut runs: Vec<Vec<Run>> = variants.iter().map(|_| Vec::new()).collect();
    for _ in 0..args.runs {
        for ((_, params, _), column) in variants.iter().zip(&mut runs) {
            column.push(timed_run(params, &stream, args.step));
        }
    }
    let columns: Vec<_> = variants
        .iter()
        .zip(&runs)
        .map(|((name, ..), column)| {
            let costs = (0..column[0].costs.len())
                .map(|row| {
                    let mut block: Vec<f64> = column.iter().map(|run| run.costs[row]).collect();
                    median(&mut block)
                })
                .collect::<Vec<_>>();
            let mut rates: Vec<f64> = column.iter().map(|run| run.rate).collect();
            let rate = median(&mut rates);
            // Sorted by the median: the first and the last are the range.
            let range = (rates[0], rates[rates.len() - 1]);
            // Deterministic: every run's clusterer holds the same.
            (name, costs, (rate, range), &column[0].held)
        })
        .collect();
    println!(
        "ferret bench cluster: {} titles ({} replayed {:.1} times), one thread; µs per item in each block of {}, the median of {} runs",
        stream.len(),
        args.input.display(),
        stream.len() as f64 / items.len() as f64,
        args.step,
        args.runs
    );
    print!("{:>12}", "items");
    for (name, ..) in &columns {
        print!("{name:>36}");
    }
    println!();
    for row in 0..columns[0].1.len() {
        print!("{:>12}", (row + 1) * args.step);
        for (_, costs, ..) in &columns {
            print!("{:>36.2}", costs[row]);
        }
        println!();
    }
    print!("{:>12}", "items/s");
    for (_, _, (rate, _), _) in &columns {
        print!("{rate:>36.0}");
    }
    println!();
    if args.runs > 1 {
        print!("{:>12}", "runs' range");
        for (_, _, (_, (low, high)), _) in &columns {
            print!("{:>36}", format!("{low:.0}–{high:.0}"));
        }
        println!();
    }
    println!(
        "\nwhat ferret's clusterer holds after each block (the window is {} h; each pass of the file starts a window and an hour after the one before):",
        ClusterParams::default().window / 3_600_000
    );
    println!(
        "{:>12}{:>10}{:>10}{:>10}{:>14}{:>14}{:>18}",
        "items", "words", "bigrams", "kept", "live events", "live stories", "cluster records"
    );
    // The first column's: ferret's clusterer.
    for (row, held) in columns[0].3.iter().enumerate() {
        println!(
            "{:>12}{:>10}{:>10}{:>10}{:>14}{:>14}{:>18}",
            (row + 1) * args.step,
            held.words,
            held.bigrams,
            held.kept,
            held.live_events,
            held.live_stories,
            held.clusters
        );
    }
    Ok(())
}

/// One timed pass of the stream through a fresh clusterer.
struct Run {
    /// µs per item in each block.
    costs: Vec<f64>,
    /// Items per second over the whole stream.
    rate: f64,
    /// What the clusterer held after each block.
    held: Vec<Footprint>,
}

fn timed_run(params: &ClusterParams, stream: &[(String, i64)], step: usize) -> Run {
    let mut clusterer = Clusterer::new(params.clone());
    let (mut costs, mut held) = (Vec::new(), Vec::new());
    let mut clustering = 0.0;
    for chunk in stream.chunks(step) {
        let at = Instant::now();
        for (title, date) in chunk {
            std::hint::black_box(clusterer.add(title, "", *date));
        }
        let elapsed = at.elapsed().as_secs_f64();
        clustering += elapsed;
        costs.push(elapsed / chunk.len() as f64 * 1e6);
        // Outside the timed part.
        held.push(clusterer.footprint());
    }
    Run {
        costs,
        rate: stream.len() as f64 / clustering,
        held,
    }
}

/// `count` items: the file again and again, each pass's dates shifted from the previous
/// pass's by `window` and an hour (or past its last item, when the file spans more).
fn replay(items: &[StreamItem], count: usize, window: i64) -> Vec<(String, i64)> {
    let first = items.first().map_or(0, |item| item.at);
    let last = items.last().map_or(0, |item| item.at);
    let shift = (last - first).max(window) + 3_600_000;
    (0..count)
        .map(|i| {
            let item = &items[i % items.len()];
            let pass = (i / items.len()) as i64;
            (item.title.clone(), item.at + pass * shift)
        })
        .collect()
}
