//! `ferret cluster`: clusters a labelled JSON-lines stream and prints where each item went, or
//! how well the stories match the labels.

use std::io::{Read as _, Write as _};
use std::path::PathBuf;
use std::time::Instant;

use anyhow::Context as _;
use ferret::stories::metrics::{score, Scores};
use ferret::stories::{read_items, ClusterParams, Clusterer, MergeLog, StreamItem};
use rand::rngs::SmallRng;
use rand::seq::SliceRandom as _;
use rand::SeedableRng as _;

use crate::arg::{unit, within};

/// Options of `ferret cluster`.
#[derive(Debug, Clone, clap::Args)]
pub struct ClusterArgs {
    /// JSON lines `{"id","date","title","text"[,"cluster"]}` (the date RFC 3339, RFC 822,
    /// `YYYY-MM-DD HH:MM:SS` as UTC, or Unix seconds or milliseconds).
    #[arg(long)]
    pub input: PathBuf,
    /// Print pairwise and BCubed P/R/F1 (story level, against `cluster`) and documents per
    /// second instead of the assignments.
    #[arg(long)]
    pub eval: bool,
    /// Process the items in an order shuffled with this seed instead of date order.
    #[arg(long)]
    pub shuffle: Option<u64>,
    /// With --eval: print the evaluation as one JSON object.
    #[arg(long)]
    pub json: bool,
    /// Cosine at or above which an item joins an event.
    #[arg(long, value_parser = unit::<f32>)]
    pub event_threshold: Option<f32>,
    /// Cosine at or above which an event joins a story.
    #[arg(long, value_parser = unit::<f32>)]
    pub story_threshold: Option<f32>,
    /// Cosine between story centroids at or above which they merge.
    #[arg(long, value_parser = unit::<f32>)]
    pub merge_threshold: Option<f32>,
    /// Cosine at or above which an event of an article's length joins a story.
    #[arg(long, value_parser = unit::<f32>)]
    pub long_story_threshold: Option<f32>,
    /// Exponent of the idf in the term weights.
    #[arg(long, value_parser = exponent)]
    pub idf_power: Option<f32>,
    /// Share of a term's idf counted over the live stories instead of the items (0: items only).
    #[arg(long, value_parser = unit::<f32>)]
    pub story_idf_share: Option<f32>,
    /// Share of the background (the mean of the window's items outside a story, times its
    /// items) taken out of a story before a long item's cosine to it (0: none).
    #[arg(long, value_parser = unit::<f32>)]
    pub background: Option<f32>,
    /// Cosine at or above which a new event joins a big story.
    #[arg(long, value_parser = unit::<f32>)]
    pub big_story_threshold: Option<f32>,
    /// Items from which a story counts as big.
    #[arg(long)]
    pub big_story: Option<u32>,
    /// Items up to which a story is young: judged again against the big stories as it grows
    /// (0: off).
    #[arg(long)]
    pub young_story: Option<u32>,
    /// Cosine of a young story's centroid to a big story's at which it merges into it.
    #[arg(long, value_parser = unit::<f32>)]
    pub young_threshold: Option<f32>,
    /// Hours after which a story or event not updated is retired, and an item leaves the
    /// statistics and the near-duplicate index.
    #[arg(long, value_parser = window)]
    pub window_hours: Option<f64>,
    /// Items the statistics (N, df) keep at least, older than the window or not.
    #[arg(long)]
    pub window_min_items: Option<usize>,
    /// Terms of an item used to look up candidate clusters.
    #[arg(long, value_parser = at_least_one)]
    pub lookup_terms: Option<usize>,
    /// Words only: no pairs of adjacent stems as terms.
    #[arg(long)]
    pub no_bigrams: bool,
    /// Keep the stems of peoples and languages ("russian", "chines") apart from their places'.
    #[arg(long)]
    pub no_demonyms: bool,
    /// Turn the fuzzy title measure on, with this threshold.
    #[arg(long, value_parser = unit::<f64>)]
    pub title_fuzzy: Option<f64>,
    /// Instead of the two-level clusterer, the seed's alternative: connected components of the
    /// graph of items whose cosine reaches this threshold (stories only; for comparison).
    #[arg(long, value_parser = unit::<f32>)]
    pub components: Option<f32>,
}

/// The idf's exponent: from 0 (every term weighs alike) to 4.
fn exponent(text: &str) -> Result<f32, String> {
    within(text, 0.0, 4.0)
}

/// A window in hours, from 36 seconds to a year (as `[stories] window_hours`).
fn window(text: &str) -> Result<f64, String> {
    within(text, 0.01, 24.0 * 365.0)
}

/// A count of lookup terms: an item looked up by none would find no cluster.
fn at_least_one(text: &str) -> Result<usize, String> {
    match text.parse::<usize>() {
        Ok(0) => Err("0 terms would find no cluster: at least 1".to_owned()),
        Ok(value) => Ok(value),
        Err(_) => Err(format!("`{text}` is not a whole number")),
    }
}

/// Runs the command.
pub fn run(args: &ClusterArgs) -> anyhow::Result<()> {
    let mut items = read_stream(&args.input)?;
    warn_of_repeated_ids(&args.input, &items);
    match args.shuffle {
        Some(seed) => items.shuffle(&mut SmallRng::seed_from_u64(seed)),
        // Stable: items of the same date keep their file order.
        None => items.sort_by_key(|item| item.at),
    }
    let defaults = ClusterParams::default();
    let params = ClusterParams {
        event_threshold: args.event_threshold.unwrap_or(defaults.event_threshold),
        story_threshold: args.story_threshold.unwrap_or(defaults.story_threshold),
        merge_threshold: args.merge_threshold.unwrap_or(defaults.merge_threshold),
        long_story_threshold: args
            .long_story_threshold
            .unwrap_or(defaults.long_story_threshold),
        title_fuzzy: args.title_fuzzy.or(defaults.title_fuzzy),
        lookup_terms: args.lookup_terms.unwrap_or(defaults.lookup_terms),
        window: args
            .window_hours
            .map_or(defaults.window, |hours| (hours * 3_600_000.0) as i64),
        window_min_items: args.window_min_items.unwrap_or(defaults.window_min_items),
        idf_power: args.idf_power.unwrap_or(defaults.idf_power),
        story_idf_share: args.story_idf_share.unwrap_or(defaults.story_idf_share),
        background: args.background.unwrap_or(defaults.background),
        big_story_threshold: args
            .big_story_threshold
            .unwrap_or(defaults.big_story_threshold),
        big_story: args.big_story.unwrap_or(defaults.big_story),
        young_story: args.young_story.unwrap_or(defaults.young_story),
        demonyms: !args.no_demonyms,
        young_threshold: args.young_threshold.unwrap_or(defaults.young_threshold),
        bigrams: defaults.bigrams && !args.no_bigrams,
        ..defaults
    };
    if let Some(threshold) = args.components {
        return components(args, &items, threshold);
    }
    let mut clusterer = Clusterer::new(params.clone());
    let started = Instant::now();
    // The file may span more than the window: the log follows its early stories' merges.
    let mut merges = MergeLog::default();
    let assignments: Vec<_> = items
        .iter()
        .map(|item| {
            let assignment = clusterer.add_in(item.language(), &item.title, &item.text, item.at);
            merges.record(clusterer.merges());
            assignment
        })
        .collect();
    let first_run = started.elapsed().as_secs_f64();

    if !args.eval {
        let mut out = std::io::stdout().lock();
        for (item, assignment) in items.iter().zip(&assignments) {
            let line = serde_json::json!({
                "id": item.id,
                "event": format!("e{}", assignment.event),
                "story": format!("s{}", merges.story(assignment.story)),
            });
            writeln!(out, "{line}")?;
        }
        return Ok(());
    }
    let labelled: Vec<(&StreamItem, u64)> = items
        .iter()
        .zip(&assignments)
        .filter(|(item, _)| item.cluster.is_some())
        .map(|(item, assignment)| (item, merges.story(assignment.story)))
        .collect();
    anyhow::ensure!(
        !labelled.is_empty(),
        "--eval needs items with a `cluster` label"
    );
    let gold: Vec<&str> = labelled
        .iter()
        .map(|(item, _)| item.cluster.as_deref().unwrap_or(""))
        .collect();
    let predicted: Vec<u64> = labelled.iter().map(|(_, story)| *story).collect();
    let scores = score(&gold, &predicted);
    // Over every item, labelled or not (the scores count the labelled items' stories).
    let stories = (assignments.iter())
        .map(|assignment| merges.story(assignment.story))
        .collect::<std::collections::HashSet<u64>>()
        .len();
    let speed = Speed::measure(&items, &params, first_run);
    if args.json {
        let value = serde_json::json!({
            "input": args.input.display().to_string(),
            "order": args.shuffle.map_or("date".to_string(), |seed| format!("shuffled {seed}")),
            "items": items.len(),
            "scored_items": labelled.len(),
            "duplicates": clusterer.duplicates(),
            "languages": language_counts(&clusterer),
            "events": clusterer.events(),
            "stories": stories,
            "scores": scores,
            "docs_per_second": speed.median,
            "timed_runs": speed.runs,
            "first_run_docs_per_second": speed.first,
        });
        println!("{value}");
    } else {
        let counts = Counts {
            scored: labelled.len(),
            stories,
        };
        print_scores(args, &items, counts, &clusterer, &scores, &speed);
    }
    Ok(())
}

/// What `--eval` counts beside the scores: the items with a label, and the stories of all.
struct Counts {
    scored: usize,
    stories: usize,
}

fn print_scores(
    args: &ClusterArgs,
    items: &[StreamItem],
    Counts { scored, stories }: Counts,
    clusterer: &Clusterer,
    scores: &Scores,
    speed: &Speed,
) {
    let order = args.shuffle.map_or("date order".to_string(), |seed| {
        format!("shuffled (seed {seed})")
    });
    println!(
        "ferret cluster: {} items of {}, {order}; {} duplicates, {} events, {} stories ({} gold)",
        items.len(),
        args.input.display(),
        clusterer.duplicates(),
        clusterer.events(),
        stories,
        scores.gold_clusters
    );
    if scored < items.len() {
        println!(
            "scored: the items with a `cluster` label, {scored} of {}, in {} stories (the rest are clustered, not scored)",
            items.len(),
            scores.predicted_clusters
        );
    }
    let languages: Vec<String> = (clusterer.languages().iter())
        .map(|(lang, count)| format!("{} {count}", lang.code().unwrap_or("other")))
        .collect();
    println!(
        "languages (named by `lang` or detected): {}",
        languages.join(", ")
    );
    println!("{:<10}{:>11}{:>9}{:>8}", "", "precision", "recall", "F1");
    for (name, prf) in [("pairwise", scores.pairwise), ("BCubed", scores.bcubed)] {
        println!(
            "{name:<10}{:>11.4}{:>9.4}{:>8.4}",
            prf.precision, prf.recall, prf.f1
        );
    }
    println!(
        "{:.0} documents/second (one thread, dedup and both levels; median of {} runs over the file, each with a fresh clusterer; the first {:.0})",
        speed.median, speed.runs, speed.first
    );
}

/// The items of each language, by code (`other` for the unstemmed).
fn language_counts(clusterer: &Clusterer) -> serde_json::Map<String, serde_json::Value> {
    (clusterer.languages().into_iter())
        .map(|(lang, count)| (lang.code().unwrap_or("other").to_string(), count.into()))
        .collect()
}

/// Documents a second through the clusterer over the whole file.
#[derive(Debug)]
struct Speed {
    /// The median over the runs.
    median: f64,
    runs: usize,
    /// The run that gave the assignments, the first in the process.
    first: f64,
}

/// How long the runs go on: a file of a few thousand titles takes a few dozen milliseconds,
/// which a process's first run spends partly on cold caches and a slow clock. A file that
/// takes longer is run once.
const TIMED_SECONDS: f64 = 1.0;
const MAX_RUNS: usize = 15;

impl Speed {
    /// The first run's time (`first_run` seconds), then the file again through fresh
    /// clusterers until [`TIMED_SECONDS`] have passed or [`MAX_RUNS`] were made.
    fn measure(items: &[StreamItem], params: &ClusterParams, first_run: f64) -> Speed {
        let rate = |seconds: f64| items.len() as f64 / seconds.max(1e-9);
        let mut times = vec![first_run];
        let mut spent = first_run;
        while times.len() < MAX_RUNS && spent < TIMED_SECONDS {
            let mut clusterer = Clusterer::new(params.clone());
            let started = Instant::now();
            for item in items {
                let lang = item.language();
                std::hint::black_box(clusterer.add_in(lang, &item.title, &item.text, item.at));
            }
            let took = started.elapsed().as_secs_f64();
            times.push(took);
            spent += took;
        }
        Speed {
            median: rate(crate::stats::median(&mut times)),
            runs: times.len(),
            first: rate(first_run),
        }
    }
}

/// `--components`: the connected-components alternative, scored the same way.
fn components(args: &ClusterArgs, items: &[StreamItem], threshold: f32) -> anyhow::Result<()> {
    let texts: Vec<_> = items
        .iter()
        .map(|item| (item.title.as_str(), item.text.as_str(), item.language()))
        .collect();
    let started = Instant::now();
    let stories = ferret::stories::components::connected_components(&texts, threshold);
    let docs_per_second = items.len() as f64 / started.elapsed().as_secs_f64().max(1e-9);
    if !args.eval {
        let mut out = std::io::stdout().lock();
        for (item, story) in items.iter().zip(&stories) {
            writeln!(
                out,
                "{}",
                serde_json::json!({"id": item.id, "story": format!("s{story}")})
            )?;
        }
        return Ok(());
    }
    let (gold, predicted): (Vec<&str>, Vec<u32>) = items
        .iter()
        .zip(&stories)
        .filter_map(|(item, story)| item.cluster.as_deref().map(|gold| (gold, *story)))
        .unzip();
    anyhow::ensure!(
        !gold.is_empty(),
        "--eval needs items with a `cluster` label"
    );
    let scores = score(&gold, &predicted);
    if args.json {
        println!(
            "{}",
            serde_json::json!({"method": "components", "threshold": threshold, "scores": scores, "docs_per_second": docs_per_second})
        );
    } else {
        println!(
            "connected components at cosine ≥ {threshold}: {} stories ({} gold)",
            scores.predicted_clusters, scores.gold_clusters
        );
        for (name, prf) in [("pairwise", scores.pairwise), ("BCubed", scores.bcubed)] {
            println!(
                "{name:<10}{:>11.4}{:>9.4}{:>8.4}",
                prf.precision, prf.recall, prf.f1
            );
        }
        println!("{docs_per_second:.0} documents/second");
    }
    Ok(())
}

/// Warns on stderr of ids given to more than one item: each is clustered as an item of its
/// own, but the output's lines name them alike.
fn warn_of_repeated_ids(path: &std::path::Path, items: &[StreamItem]) {
    let mut seen = std::collections::HashMap::with_capacity(items.len());
    let mut repeated = Vec::new();
    for item in items {
        let count = seen.entry(item.id.as_str()).or_insert(0u32);
        *count += 1;
        if *count == 2 {
            repeated.push(item.id.as_str());
        }
    }
    if let Some(first) = repeated.first() {
        eprintln!(
            "ferret: {}: ids given to more than one item: {} (the first: `{first}`); each item is clustered, and the output names them alike",
            path.display(),
            repeated.len()
        );
    }
}

/// Reads a labelled stream file ([`read_items`]), gzipped or not (told by its first bytes).
pub fn read_stream(path: &std::path::Path) -> anyhow::Result<Vec<StreamItem>> {
    let bytes = std::fs::read(path).with_context(|| format!("cannot read {}", path.display()))?;
    let text = if bytes.starts_with(&[0x1f, 0x8b]) {
        let mut text = String::new();
        flate2::read::MultiGzDecoder::new(bytes.as_slice())
            .read_to_string(&mut text)
            .with_context(|| format!("{}: cannot decompress it as gzip", path.display()))?;
        text
    } else {
        String::from_utf8(bytes).with_context(|| format!("{}: not UTF-8", path.display()))?
    };
    read_items(&text).map_err(|err| anyhow::anyhow!("{}: {err}", path.display()))
}
