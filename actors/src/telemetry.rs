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

/// A registry whose only collector reads the runtime's counters at scrape time.
pub fn registry(runtime: Runtime) -> Registry {
    let mut registry = Registry::default();
    registry.register_collector(Box::new(RuntimeCollector(runtime)));
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
