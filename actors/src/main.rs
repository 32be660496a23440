//! The `ferret` binary: parses the command line, sets up logging, and hands over to the
//! library.

use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::Context as _;
use clap::{Parser, Subcommand, ValueEnum};
use ferret::config::{LogFormat, Settings};
use ferret_actors::{
    bench, cluster_bench, cluster_cmd, daemon, discover_bench, feedback_cmd, onair_bench,
    sim_listing, telemetry,
};

/// ferret watches feeds and the web for you: live listings going on and off air, news
/// grouped into stories, and pages like the ones you like.
#[derive(Debug, Parser)]
#[command(name = "ferret", version, propagate_version = true)]
struct Cli {
    #[command(subcommand)]
    command: Option<Command>,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Run the daemon (the default when no command is given).
    Run(RunArgs),
    /// Check a config file: print every problem and exit 1, or a one-line summary and exit 0.
    CheckConfig {
        /// The config file.
        #[arg(env = "FERRET_CONFIG", default_value = "config.toml")]
        path: PathBuf,
    },
    /// Parse a feed (RSS 0.9x/1.0/2.0, Atom 0.3/1.0) and print it as JSON.
    Parse(ParseArgs),
    /// Measure ferret against a baseline and print the figures side by side.
    #[command(subcommand)]
    Bench(BenchCommand),
    /// Serve the listing simulator over HTTP as a live listing's RSS, for tests and demos;
    /// on SIGINT/SIGTERM, write the ground truth (`--truth`) and exit.
    SimListing(sim_listing::SimListingArgs),
    /// Score a live run's events file against a listing's ground truth (from `sim-listing
    /// --truth`) by the rules of `bench onair`; exit 1 if a rule was broken.
    ScoreListing(onair_bench::ScoreListingArgs),
    /// Cluster a JSON-lines stream of news items into events and stories; with --eval, score
    /// the stories against the items' `cluster` labels.
    Cluster(cluster_cmd::ClusterArgs),
    /// Crawl from the pages you like until N pages are fetched, keeping everything in the
    /// store (a rerun resumes), and print the pages accepted.
    Discover(ferret_actors::discover::DiscoverArgs),
    /// Like pages: record a like for each URL in the store the config names (with or
    /// without a daemon running).
    Like(feedback_cmd::LikeArgs),
    /// Record one feedback event (a visit, a dwell with its seconds, a like or a dislike) in
    /// the store the config names.
    Feedback(feedback_cmd::FeedbackArgs),
    /// Import likes from a browser's bookmarks export or a list of URLs; bad entries are
    /// reported (with line numbers in a list) and the rest imported; exit 1 if any was
    /// skipped.
    ImportLikes(feedback_cmd::ImportLikesArgs),
}

#[derive(Debug, clap::Args)]
struct ParseArgs {
    /// A file, an `http://` or `https://` URL (fetched with the `[fetch]` defaults), or `-` for
    /// standard input.
    source: String,
    /// The charset from an HTTP `Content-Type`, as if the document had come with it (for a URL,
    /// the server's charset is used unless this is given).
    #[arg(long)]
    charset: Option<String>,
    /// The document's URL, for resolving relative links (defaults to the URL fetched).
    #[arg(long)]
    base: Option<String>,
    /// Read only what the live-listing pagers need from each item.
    #[arg(long)]
    lean: bool,
    /// Print compact JSON on one line.
    #[arg(long)]
    compact: bool,
}

#[derive(Debug, Default, clap::Args)]
struct RunArgs {
    /// The config file.
    #[arg(long, short, env = "FERRET_CONFIG", default_value = "config.toml")]
    config: PathBuf,
    /// Log format; overrides `[log] format`.
    #[arg(long, value_enum)]
    log_format: Option<LogFormatArg>,
}

#[derive(Debug, Clone, Copy, ValueEnum)]
enum LogFormatArg {
    Text,
    Json,
}

#[derive(Debug, Subcommand)]
enum BenchCommand {
    /// Messages per second through ferret's runtime (router, pool, envelopes, tracing,
    /// supervision) against a bare actix `Addr` chain.
    Actors(bench::ActorBenchArgs),
    /// The listing strategies (naive, seed, ferret) and the oracle lower bound side by side
    /// on the listing simulator, on a virtual clock.
    Onair(onair_bench::OnAirBenchArgs),
    /// Titles per second through the stories clusterer over a long replayed stream, and the
    /// cost per item block by block, side by side with a single-pass baseline.
    Cluster(cluster_bench::ClusterBenchArgs),
    /// The discovery loop's harvest rate against a breadth-first crawl from the same likes.
    Discover(discover_bench::DiscoverBenchArgs),
    /// Pages per second crawling a local site breadth-first (fetch + links), side by side
    /// with `wget -r` (serve the corpus with scripts/corpus.sh).
    Bfs(ferret_actors::bfs_bench::BfsBenchArgs),
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    if !matches!(
        cli.command,
        None | Some(Command::Run(_)) | Some(Command::SimListing(_))
    ) {
        end_quietly_when_stdout_closes();
    }
    let result = match cli.command {
        None => run(RunArgs {
            config: std::env::var_os("FERRET_CONFIG")
                .map_or_else(|| PathBuf::from("config.toml"), PathBuf::from),
            log_format: None,
        }),
        Some(Command::Run(args)) => run(args),
        Some(Command::CheckConfig { path }) => check_config(&path),
        Some(Command::Parse(args)) => parse(&args),
        Some(Command::Bench(BenchCommand::Actors(args))) => bench::actors(&args).map(|()| 0),
        Some(Command::Bench(BenchCommand::Onair(args))) => onair_bench::run(&args).map(|()| 0),
        Some(Command::Bench(BenchCommand::Cluster(args))) => cluster_bench::run(&args).map(|()| 0),
        Some(Command::Bench(BenchCommand::Discover(args))) => {
            discover_bench::run(&args).map(|()| 0)
        }
        Some(Command::Bench(BenchCommand::Bfs(args))) => {
            ferret_actors::bfs_bench::run(&args).map(|()| 0)
        }
        Some(Command::SimListing(args)) => sim_listing::run(&args).map(|()| 0),
        Some(Command::ScoreListing(args)) => {
            onair_bench::score_listing(&args).map(|clean| if clean { 0 } else { 1 })
        }
        Some(Command::Cluster(args)) => cluster_cmd::run(&args).map(|()| 0),
        Some(Command::Discover(args)) => load_settings(&args.config)
            .and_then(|s| ferret_actors::discover::run(&s, &args))
            .map(|()| 0),
        Some(Command::Like(args)) => {
            load_settings(&args.config.config).and_then(|s| feedback_cmd::like(&s, &args))
        }
        Some(Command::Feedback(args)) => {
            load_settings(&args.config.config).and_then(|s| feedback_cmd::feedback(&s, &args))
        }
        Some(Command::ImportLikes(args)) => {
            load_settings(&args.config.config).and_then(|s| feedback_cmd::import_likes(&s, &args))
        }
    };
    match result {
        Ok(code) => ExitCode::from(u8::try_from(code).unwrap_or(1)),
        Err(err) => {
            eprintln!("ferret: {err:#}");
            ExitCode::FAILURE
        }
    }
}

/// A report piped into a reader that stops early (`ferret bench discover --show-order | head`)
/// ends the process quietly, as Unix tools do, instead of panicking in `println!`: Rust
/// ignores SIGPIPE, so a write to the closed pipe fails and `println!` panics on the failure.
/// Commands that serve (the daemon, the listing simulator) keep ignoring it.
fn end_quietly_when_stdout_closes() {
    #[cfg(unix)]
    {
        use nix::sys::signal::{signal, SigHandler, Signal};
        // SAFETY: called first thing in `main`, before any thread exists, and installs the
        // default disposition, not a handler: no code of ours runs on the signal.
        if let Err(err) = unsafe { signal(Signal::SIGPIPE, SigHandler::SigDfl) } {
            eprintln!("ferret: cannot restore SIGPIPE's default ({err}); a closed pipe may panic");
        }
    }
}

fn run(args: RunArgs) -> anyhow::Result<i32> {
    let mut settings = load_settings(&args.config)?;
    if let Some(format) = args.log_format {
        settings.log.format = match format {
            LogFormatArg::Text => LogFormat::Text,
            LogFormatArg::Json => LogFormat::Json,
        };
    }
    telemetry::init_logging(settings.log.format);
    telemetry::install_panic_hook();
    tracing::info!(
        config = %args.config.display(),
        version = env!("CARGO_PKG_VERSION"),
        "Starting ferret."
    );
    daemon::run(&settings)
}

fn check_config(path: &Path) -> anyhow::Result<i32> {
    match read_settings(path)? {
        Ok(settings) => {
            println!("{}: {}", path.display(), settings.summary());
            Ok(0)
        }
        Err(err) => {
            for problem in &err.problems {
                eprintln!("{}: {problem}", path.display());
            }
            let n = err.problems.len();
            eprintln!("{n} problem{}", if n == 1 { "" } else { "s" });
            Ok(1)
        }
    }
}

fn parse(args: &ParseArgs) -> anyhow::Result<i32> {
    let (bytes, charset, url) = if args.source == "-" {
        let mut bytes = Vec::new();
        std::io::Read::read_to_end(&mut std::io::stdin(), &mut bytes)
            .context("cannot read standard input")?;
        (bytes, None, None)
    } else if args.source.starts_with("http://") || args.source.starts_with("https://") {
        let reply = fetch(&args.source)?;
        let charset = reply
            .content_type
            .as_deref()
            .and_then(ferret::fetch::charset_of)
            .map(str::to_string);
        (reply.body, charset, Some(reply.url))
    } else {
        let bytes =
            std::fs::read(&args.source).with_context(|| format!("cannot read {}", args.source))?;
        (bytes, None, None)
    };
    let options = ferret::feed::ParseOptions {
        http_charset: args.charset.as_deref().or(charset.as_deref()),
        base_url: args.base.as_deref().or(url.as_deref()),
        lean: args.lean,
        ..Default::default()
    };
    let feed = ferret::feed::parse(&bytes, &options)
        .map_err(|err| anyhow::anyhow!("{}:{err}", args.source))?;
    let json = if args.compact {
        serde_json::to_string(&feed)
    } else {
        serde_json::to_string_pretty(&feed)
    }?;
    // A reader that stops early (`ferret parse … | head`) is not an error.
    match writeln!(std::io::stdout().lock(), "{json}") {
        Err(err) if err.kind() != std::io::ErrorKind::BrokenPipe => {
            Err(err).context("cannot write to standard output")
        }
        _ => Ok(0),
    }
}

/// Fetches a feed with the shared client and the default `[fetch]` settings.
fn fetch(url: &str) -> anyhow::Result<ferret_actors::http_client::Reply> {
    let settings = Settings::defaults().fetch;
    let client = ferret_actors::http_client::HttpClient::new(&settings)
        .context("cannot build the HTTP client")?;
    let validators = ferret::fetch::Validators::default();
    let reply = actix_rt::System::new()
        .block_on(client.get(url, &validators))
        .map_err(|failure| anyhow::anyhow!("{url}: {} ({})", failure.error, failure.cause))?;
    if !(200..300).contains(&reply.status) {
        anyhow::bail!("{url}: the server answered HTTP {}", reply.status);
    }
    Ok(reply)
}

fn load_settings(path: &Path) -> anyhow::Result<Settings> {
    read_settings(path)?.map_err(|err| anyhow::anyhow!("{}: {err}", path.display()))
}

/// Reads and parses the config; the outer error is an unreadable file, the inner one the
/// config's problems.
fn read_settings(path: &Path) -> anyhow::Result<Result<Settings, ferret::config::ConfigError>> {
    let text = std::fs::read_to_string(path).with_context(|| {
        format!(
            "cannot read the config file {} (name one with --config or FERRET_CONFIG; the \
             repository's config.toml is a commented example)",
            path.display()
        )
    })?;
    let base_dir = path.parent().filter(|dir| !dir.as_os_str().is_empty());
    Ok(Settings::from_toml(
        &text,
        Some(base_dir.unwrap_or(Path::new("."))),
    ))
}
