//! Logging set-up and the Prometheus metrics.

use std::io::IsTerminal;

use ferret::config::LogFormat;
use prometheus_client::collector::Collector;
use prometheus_client::encoding::{DescriptorEncoder, EncodeMetric};
use prometheus_client::metrics::counter::ConstCounter;
use prometheus_client::metrics::gauge::ConstGauge;
use prometheus_client::metrics::MetricType;
use prometheus_client::registry::Registry;
use tracing_subscriber::EnvFilter;

use crate::daemon::Boards;
use crate::feed_fetcher::FeedBook;
use crate::listing_board::{ListingBoard, ListingStatus};
use crate::messages::FeedStatus;
use crate::supervisor::{RoleStatus, Runtime};

/// The filter used when `RUST_LOG` is not set.
pub const DEFAULT_FILTER: &str = "info";

/// Installs the global subscriber: logs to stderr (stdout is for the events ferret reports),
/// filtered by `RUST_LOG`, as text or one JSON object per line carrying the fields of the
/// current span and of every enclosing span.
pub fn init_logging(format: LogFormat) {
    let filter =
        EnvFilter::try_from_default_env().unwrap_or_else(|_| EnvFilter::new(DEFAULT_FILTER));
    let builder = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_ansi(std::io::stderr().is_terminal())
        .with_writer(std::io::stderr);
    match format {
        LogFormat::Text => builder.init(),
        LogFormat::Json => builder
            .json()
            .with_current_span(true)
            .with_span_list(true)
            .init(),
    }
}

/// Routes panic reports through tracing, so they land in the log with the span (role,
/// instance, message) they happened in, and JSON logs stay one object per line.
pub fn install_panic_hook() {
    std::panic::set_hook(Box::new(|info| {
        let location = info
            .location()
            .map(|l| format!("{}:{}", l.file(), l.line()))
            .unwrap_or_default();
        let payload = crate::instance::panic_message(info.payload());
        tracing::error!(panic = %payload, %location, "Panic.");
    }));
}

/// A registry whose collectors read the runtime's, the feeds' and the listings' counters at
/// scrape time.
pub fn registry(runtime: Runtime, boards: Boards) -> Registry {
    let mut registry = Registry::default();
    registry.register_collector(Box::new(RuntimeCollector(runtime)));
    registry.register_collector(Box::new(FeedCollector(boards.feeds)));
    registry.register_collector(Box::new(ListingCollector(boards.listings)));
    registry
}

/// Renders the registry in the OpenMetrics text format (which Prometheus reads natively).
pub fn render(registry: &Registry) -> String {
    let mut out = String::new();
    // Writing to a String cannot fail.
    let _ = prometheus_client::encoding::text::encode(&mut out, registry);
    out
}

struct RuntimeCollector(Runtime);

impl std::fmt::Debug for RuntimeCollector {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("RuntimeCollector")
    }
}

type Pick = fn(&RoleStatus) -> i64;

/// The per-role families: (name, help, type, value). Counters get `_total` on encoding.
const FAMILIES: &[(&str, &str, MetricType, Pick)] = &[
    (
        "ferret_messages_handled",
        "Messages handled by the role's instances.",
        MetricType::Counter,
        |s| s.handled as i64,
    ),
    (
        "ferret_handler_errors",
        "Handler panics and failures reported by handlers.",
        MetricType::Counter,
        |s| s.errors as i64,
    ),
    (
        "ferret_restarts",
        "Instances restarted by the supervisor.",
        MetricType::Counter,
        |s| s.restarts as i64,
    ),
    (
        "ferret_messages_dropped",
        "Messages no instance could take, or lost in the mailbox of a failed instance.",
        MetricType::Counter,
        |s| s.dropped as i64,
    ),
    (
        "ferret_mailbox_backlog",
        "Messages routed to the role's instances and not handled yet.",
        MetricType::Gauge,
        |s| s.backlog,
    ),
    (
        "ferret_instances",
        "Live instances of the role.",
        MetricType::Gauge,
        |s| s.instances as i64,
    ),
];

impl Collector for RuntimeCollector {
    fn encode(&self, mut encoder: DescriptorEncoder) -> Result<(), std::fmt::Error> {
        let roles = self.0.roles();
        for &(name, help, metric_type, pick) in FAMILIES {
            let mut family = encoder.encode_descriptor(name, help, None, metric_type)?;
            for status in &roles {
                let labels = [("role", status.role)];
                let value = pick(status);
                let metric = family.encode_family(&labels)?;
                match metric_type {
                    MetricType::Counter => ConstCounter::new(value.max(0) as u64).encode(metric)?,
                    _ => ConstGauge::new(value).encode(metric)?,
                }
            }
        }
        Ok(())
    }
}

struct FeedCollector(FeedBook);

impl std::fmt::Debug for FeedCollector {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("FeedCollector")
    }
}

type FeedPick = fn(&FeedStatus) -> u64;

/// The per-source counter families (`_total` is added on encoding).
const FEED_FAMILIES: &[(&str, &str, FeedPick)] = &[
    (
        "ferret_feed_reads",
        "HTTP requests sent to the feed: every attempt, retries and 304s included.",
        |s| s.stats.reads,
    ),
    (
        "ferret_feed_fetched",
        "Full responses received from the feed.",
        |s| s.stats.fetched,
    ),
    (
        "ferret_feed_not_modified",
        "304 Not Modified answers to conditional GETs of the feed.",
        |s| s.stats.not_modified,
    ),
    (
        "ferret_feed_retries",
        "Retries after a 429 or 5xx answer from the feed.",
        |s| s.stats.retries,
    ),
];

impl Collector for FeedCollector {
    fn encode(&self, mut encoder: DescriptorEncoder) -> Result<(), std::fmt::Error> {
        let feeds = self.0.statuses();
        for &(name, help, pick) in FEED_FAMILIES {
            let mut family = encoder.encode_descriptor(name, help, None, MetricType::Counter)?;
            for feed in &feeds {
                let labels = [("source", feed.name.as_str())];
                ConstCounter::new(pick(feed)).encode(family.encode_family(&labels)?)?;
            }
        }
        let mut family = encoder.encode_descriptor(
            "ferret_feed_failures",
            "Failed fetches of the feed, by kind (timeout, too_large, status, redirect_loop, ...).",
            None,
            MetricType::Counter,
        )?;
        for feed in &feeds {
            for kind in ferret::fetch::FAILURE_KINDS {
                let count = feed.stats.failures.get(kind).copied().unwrap_or(0);
                let labels = [("source", feed.name.as_str()), ("kind", kind)];
                ConstCounter::new(count).encode(family.encode_family(&labels)?)?;
            }
        }
        Ok(())
    }
}

#[derive(Debug)]
struct ListingCollector(ListingBoard);

impl Collector for ListingCollector {
    fn encode(&self, mut encoder: DescriptorEncoder) -> Result<(), std::fmt::Error> {
        let listings = self.0.statuses();
        type Pick = fn(&ListingStatus) -> u64;
        /// Name, help, label, and the label's values with their counters.
        type Family = (
            &'static str,
            &'static str,
            &'static str,
            [(&'static str, Pick); 2],
        );
        let families: [Family; 2] = [
            (
                "ferret_listing_reads",
                "Page reads of the listing, by outcome.",
                "outcome",
                [("ok", |s| s.reads), ("failed", |s| s.failed_reads)],
            ),
            (
                "ferret_listing_events",
                "Events reported for the listing, by kind.",
                "event",
                [
                    ("on_air", |s| s.on_air_events),
                    ("off_air", |s| s.off_air_events),
                ],
            ),
        ];
        for (name, help, label, values) in families {
            let mut family = encoder.encode_descriptor(name, help, None, MetricType::Counter)?;
            for (listing, status) in &listings {
                for (value, pick) in values {
                    let labels = [("listing", listing.as_str()), (label, value)];
                    ConstCounter::new(pick(status)).encode(family.encode_family(&labels)?)?;
                }
            }
        }
        let mut family = encoder.encode_descriptor(
            "ferret_listing_undated_items",
            "Listing items left out because their pubDate was missing or unreadable.",
            None,
            MetricType::Counter,
        )?;
        for (listing, status) in &listings {
            let labels = [("listing", listing.as_str())];
            ConstCounter::new(status.undated_items).encode(family.encode_family(&labels)?)?;
        }
        let mut family = encoder.encode_descriptor(
            "ferret_listing_on_air",
            "Broadcasts the listing's detector believes on air.",
            None,
            MetricType::Gauge,
        )?;
        for (listing, status) in &listings {
            let labels = [("listing", listing.as_str())];
            ConstGauge::new(status.on_air.len() as i64).encode(family.encode_family(&labels)?)?;
        }
        let mut family = encoder.encode_descriptor(
            "ferret_listing_sweep_share",
            "Share of the listing's read budget its detector spends sweeping for starts below the head.",
            None,
            MetricType::Gauge,
        )?;
        for (listing, status) in &listings {
            if let Some(share) = status.sweep_share {
                let labels = [("listing", listing.as_str())];
                ConstGauge::new(share).encode(family.encode_family(&labels)?)?;
            }
        }
        Ok(())
    }
}
