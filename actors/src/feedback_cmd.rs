//! `ferret like`, `ferret feedback` and `ferret import-likes`: the user's feedback written
//! straight into the store the config names, whether or not a daemon is running (the store is
//! in WAL mode with a busy timeout, so both can write; a running daemon's Generalizer sees the
//! new feedback at its next interval).

use std::path::PathBuf;

use anyhow::Context as _;
use ferret::config::Settings;
use ferret::discovery::bookmarks::read_likes;
use ferret::discovery::hittage::{Feedback, FeedbackKind};
use ferret::discovery::intake::at_millis;

use crate::storage::Store;
use crate::supervisor::unix_millis;

/// Where the store is: the config file, as for `ferret run`.
#[derive(Debug, clap::Args)]
pub struct ConfigArg {
    /// The config file; its `[storage] path` names the store.
    #[arg(long, short, env = "FERRET_CONFIG", default_value = "config.toml")]
    pub config: PathBuf,
}

/// `ferret like URL…`.
#[derive(Debug, clap::Args)]
pub struct LikeArgs {
    #[command(flatten)]
    #[allow(missing_docs)]
    pub config: ConfigArg,
    /// The pages you like (http or https URLs).
    #[arg(required = true)]
    pub urls: Vec<String>,
}

/// `ferret feedback --kind K [--seconds S] [--at TIME] URL`.
#[derive(Debug, clap::Args)]
pub struct FeedbackArgs {
    #[command(flatten)]
    #[allow(missing_docs)]
    pub config: ConfigArg,
    /// What you did: visit, dwell, like or dislike.
    #[arg(long)]
    pub kind: FeedbackKind,
    /// For a dwell: the seconds you spent on the page.
    #[arg(long)]
    pub seconds: Option<f64>,
    /// When you did it, RFC 3339 (e.g. 2026-11-24T09:30:00Z); default now. Hittage decays
    /// with an event's age, so an old visit counts for less.
    #[arg(long)]
    pub at: Option<String>,
    /// The page (an http or https URL).
    pub url: String,
}

/// `ferret import-likes FILE`.
#[derive(Debug, clap::Args)]
pub struct ImportLikesArgs {
    #[command(flatten)]
    #[allow(missing_docs)]
    pub config: ConfigArg,
    /// A browser's bookmarks export (Netscape HTML), or a list of URLs one a line (blank lines
    /// and `#` comments skipped).
    pub file: PathBuf,
}

/// `ferret like`: every URL is checked first; none is recorded unless all are good.
pub fn like(settings: &Settings, args: &LikeArgs) -> anyhow::Result<i32> {
    let now = unix_millis();
    let events = args
        .urls
        .iter()
        .map(|url| Feedback::new(url, FeedbackKind::Like, None, now))
        .collect::<Result<Vec<_>, _>>()?;
    record(settings, &events)?;
    for event in &events {
        println!("liked {}", event.url);
    }
    Ok(0)
}

/// `ferret feedback`.
pub fn feedback(settings: &Settings, args: &FeedbackArgs) -> anyhow::Result<i32> {
    let at_ms = match &args.at {
        Some(at) => at_millis(at)?,
        None => unix_millis(),
    };
    let event = Feedback::new(&args.url, args.kind, args.seconds, at_ms)?;
    record(settings, std::slice::from_ref(&event))?;
    println!("{}", serde_json::to_string(&event)?);
    Ok(0)
}

/// `ferret import-likes`: the good entries are recorded and the bad ones reported; the exit
/// code is 1 if any entry was skipped.
pub fn import_likes(settings: &Settings, args: &ImportLikesArgs) -> anyhow::Result<i32> {
    let bytes = std::fs::read(&args.file)
        .with_context(|| format!("cannot read {}", args.file.display()))?;
    let likes = read_likes(&String::from_utf8_lossy(&bytes));
    let file = args.file.display();
    for problem in &likes.problems {
        eprintln!("{file}: {problem}");
    }
    let now = unix_millis();
    let events = likes
        .urls
        .iter()
        .map(|url| Feedback::new(url, FeedbackKind::Like, None, now))
        .collect::<Result<Vec<_>, _>>()?;
    record(settings, &events)?;
    let skipped = likes.problems.len();
    println!(
        "{file}: imported {} like{} from {}{}",
        events.len(),
        if events.len() == 1 { "" } else { "s" },
        if likes.bookmarks {
            "a bookmarks export"
        } else {
            "a list of URLs"
        },
        if skipped == 0 {
            String::new()
        } else {
            format!("; skipped {skipped}")
        },
    );
    Ok(i32::from(skipped > 0))
}

fn record(settings: &Settings, events: &[Feedback]) -> anyhow::Result<()> {
    let mut store = Store::open(&settings.storage.path)?;
    store.record_feedback(events).with_context(|| {
        format!(
            "cannot record feedback in {}",
            settings.storage.path.display()
        )
    })?;
    Ok(())
}
