//! `config.toml` → raw serde structs → [`Settings`], reporting every problem at once.
//!
//! Parsing happens in two stages, as ripgrep does with its flags: each top-level table is
//! deserialized on its own into a raw struct (`deny_unknown_fields`, every field optional),
//! so a mistake in one table does not hide the mistakes in another; then [`validate`] checks
//! ranges and relations and builds typed settings with the defaults filled in. Every problem
//! carries its key path (`actors.ferret: must be ≥ 1`).
//!
//! Nothing here touches the file system: the caller reads the file and passes its text, and
//! the directory relative paths are resolved against.

use std::collections::BTreeMap;
use std::fmt;
use std::net::IpAddr;
use std::num::NonZeroUsize;
use std::path::{Path, PathBuf};
use std::time::Duration;

use serde::de::DeserializeOwned;
use serde::Deserialize;

use crate::discovery::hittage::HittageParams;
use crate::discovery::url::AddressPolicy;
use crate::fetch::{RetryPolicy, DEFAULT_USER_AGENT};
use crate::listing::{Params, Strategy};
use crate::role::Role;
use crate::stories::{ClusterParams, RankWeights};
use crate::supervision::RestartPolicy;

/// One mistake in a config file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Problem {
    /// Where: a dotted key path such as `actors.ferret`, or `line 3, column 7` for syntax.
    pub key: String,
    /// What is wrong, as a sentence fragment (`must be ≥ 1`).
    pub message: String,
}

impl fmt::Display for Problem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.key, self.message)
    }
}

/// Every problem found in a config file; never empty.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub struct ConfigError {
    /// The problems, in file order by table, then by key.
    pub problems: Vec<Problem>,
}

impl fmt::Display for ConfigError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let n = self.problems.len();
        write!(
            f,
            "{n} problem{} in the config",
            if n == 1 { "" } else { "s" }
        )?;
        for problem in &self.problems {
            write!(f, "\n  {problem}")?;
        }
        Ok(())
    }
}

/// The validated settings of the whole daemon.
#[derive(Debug, Clone, PartialEq)]
pub struct Settings {
    /// `[runtime]`: threads, seed, mailboxes, shutdown.
    pub runtime: RuntimeSettings,
    /// `[server]`: the HTTP API.
    pub server: ServerSettings,
    /// `[storage]`: the SQLite store.
    pub storage: StorageSettings,
    /// `[log]`: log output.
    pub log: LogSettings,
    /// `[supervisor]`: restart policy and intensity.
    pub supervisor: SupervisorSettings,
    /// `[actors]`: instances per role.
    pub actors: ActorCounts,
    /// `[debug]`: operator tools that are off in production.
    pub debug: DebugSettings,
    /// `[fetch]`: the shared HTTP client of the FeedFetcher.
    pub fetch: FetchSettings,
    /// `[[feeds]]`: the feeds to fetch, in file order; names are unique.
    pub feeds: Vec<FeedSource>,
    /// `[[listings]]`: the live listings to watch for On Air / Off Air; names are unique.
    pub listings: Vec<ListingSource>,
    /// `[stories]`: which feeds are clustered into stories, and how.
    pub stories: StoriesSettings,
    /// `[discovery]`: learning what the user likes and crawling for more.
    pub discovery: DiscoverySettings,
}

/// `[discovery]`.
#[derive(Debug, Clone, PartialEq)]
pub struct DiscoverySettings {
    /// How often the Generalizer recomputes hittage (it also does on new feedback).
    pub generalize_interval: Duration,
    /// Hittage and lighthouse parameters.
    pub hittage: HittageParams,
    /// How long a page a filter passed may go without feedback before it counts as not
    /// visited (and costs that filter reliability).
    pub unvisited_after: Duration,
    /// The crawl.
    pub crawl: CrawlSettings,
}

/// The crawl's keys of `[discovery]`.
#[derive(Debug, Clone, PartialEq)]
pub struct CrawlSettings {
    /// Whether the daemon crawls (it needs likes to start from).
    pub enabled: bool,
    /// Which addresses the crawler may connect to.
    pub policy: AddressPolicy,
    /// Requests at once over all hosts.
    pub concurrency: usize,
    /// Requests at once to one host.
    pub per_host_concurrency: u32,
    /// The least time between two requests to one host.
    pub per_host_interval: Duration,
    /// Pages fetched per hour at most (0: no limit).
    pub pages_per_hour: u64,
}

impl Default for CrawlSettings {
    fn default() -> CrawlSettings {
        CrawlSettings {
            enabled: true,
            policy: AddressPolicy::default(),
            concurrency: 16,
            per_host_concurrency: 2,
            per_host_interval: Duration::from_millis(1_000),
            pages_per_hour: 3_600,
        }
    }
}

/// `[stories]`.
#[derive(Debug, Clone, PartialEq)]
pub struct StoriesSettings {
    /// The `[[feeds]]` whose items are clustered.
    pub feeds: Vec<String>,
    /// The clusterer's thresholds and window.
    pub cluster: ClusterParams,
    /// The ranking formula's weights.
    pub rank: RankWeights,
}

/// `[runtime]`.
#[derive(Debug, Clone, PartialEq)]
pub struct RuntimeSettings {
    /// Seed for every random choice the core makes, so that runs can be replayed.
    pub seed: u64,
    /// Worker threads (actix arbiters) that run actor instances; `None` means one per CPU.
    pub arbiters: Option<NonZeroUsize>,
    /// On SIGINT/SIGTERM, how long mailboxes may drain before the system stops anyway.
    pub shutdown_grace: Duration,
    /// Messages an instance's mailbox holds before `send` waits (back-pressure).
    pub mailbox_capacity: usize,
}

/// `[server]`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ServerSettings {
    /// Address to bind; loopback unless the operator opens it up on purpose.
    pub bind: IpAddr,
    /// Port; 0 lets the OS choose (the chosen address is logged).
    pub port: u16,
    /// HTTP worker threads.
    pub workers: usize,
}

/// `[storage]`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StorageSettings {
    /// The SQLite database file, already resolved against the config file's directory.
    pub path: PathBuf,
}

/// `[log]`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LogSettings {
    /// Human-readable text or one JSON object per line.
    pub format: LogFormat,
}

/// How log lines are written.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum LogFormat {
    /// Human-readable lines.
    Text,
    /// One JSON object per line, with the span fields of every enclosing span.
    Json,
}

/// `[supervisor]`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SupervisorSettings {
    /// Restarts allowed within `period` before the system stops.
    pub max_restarts: u32,
    /// The restart-intensity window.
    pub period: Duration,
    /// How often instances are checked for a mailbox that closed without a report.
    pub liveness_interval: Duration,
    policies: [RestartPolicy; Role::ALL.len()],
}

impl SupervisorSettings {
    /// The restart policy of `role` (`permanent` unless `[supervisor.policy]` says otherwise).
    pub fn policy(&self, role: Role) -> RestartPolicy {
        self.policies[role as usize]
    }
}

/// `[actors]`: how many instances each role runs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ActorCounts([usize; Role::ALL.len()]);

impl ActorCounts {
    /// Instances of `role`; always at least one.
    pub fn count(&self, role: Role) -> usize {
        self.0[role as usize]
    }

    /// Instances over all roles.
    pub fn total(&self) -> usize {
        self.0.iter().sum()
    }
}

/// `[debug]`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DebugSettings {
    /// Enables `POST /api/actors/{role}/{instance}/panic`. Off by default.
    pub fault_injection: bool,
}

/// `[fetch]`: how feeds are fetched (DESIGN.md §4).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FetchSettings {
    /// The `User-Agent` header.
    pub user_agent: String,
    /// The whole request, body included, must finish within this.
    pub timeout: Duration,
    /// Connecting (DNS, TCP, TLS) must finish within this.
    pub connect_timeout: Duration,
    /// A body larger than this (after decompression) fails the fetch.
    pub max_body_bytes: usize,
    /// Redirects followed before the fetch fails.
    pub max_redirects: usize,
    /// Retries on 429 and 5xx, and their back-off.
    pub retry: RetryPolicy,
    /// Requests in flight to one host at once.
    pub per_host_concurrency: usize,
}

/// One `[[feeds]]` entry: a feed fetched on its interval.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FeedSource {
    /// Unique name: the source's label in metrics, logs and `/api/feeds`.
    pub name: String,
    /// The feed's `http://` or `https://` URL.
    pub url: String,
    /// Time between fetches (the first one is at start-up).
    pub interval: Duration,
    /// Parse in lean mode: the channel in full, but only each item's id, link, title and
    /// dates (for large listings).
    pub lean: bool,
    /// The language of the feed's items (`de`, `pt-BR`), in place of what the feed declares:
    /// for a feed that declares none, or the wrong one. Stories stem its items in it.
    pub language: Option<String>,
}

/// One `[[listings]]` entry: a paginated live listing watched for On Air / Off Air.
#[derive(Debug, Clone, PartialEq)]
pub struct ListingSource {
    /// Unique name: the `listing` of its events, and its name in the API and metrics.
    pub name: String,
    /// The page URL with `{page}` where the page number goes.
    pub url: String,
    /// The strategy that decides what to read.
    pub strategy: Strategy,
    /// Every duration, threshold and count of the detector.
    pub params: Params,
    /// The channel element holding the total on air, as `prefix:name` (or a bare name);
    /// `None` when the listing has none and its end is found by the first short page.
    pub total_element: Option<(String, String)>,
    /// Append every event as a JSON line to this file.
    pub events_file: Option<PathBuf>,
    /// Also print every event as a JSON line on standard output.
    pub events_stdout: bool,
}

impl ListingSource {
    /// The URL of page `page`.
    pub fn page_url(&self, page: u32) -> String {
        self.url.replace("{page}", &page.to_string())
    }
}

impl FeedSource {
    /// The host of [`FeedSource::url`] as written: the key of per-host politeness.
    pub fn host(&self) -> &str {
        url_host(&self.url).unwrap_or("")
    }
}

/// The host part of an `http(s)://` URL, without user info or port.
fn url_host(url: &str) -> Option<&str> {
    let rest = url
        .strip_prefix("http://")
        .or_else(|| url.strip_prefix("https://"))?;
    let authority = rest.split(['/', '?', '#']).next()?;
    let host_port = authority.rsplit('@').next()?;
    let host = if let Some(v6) = host_port.strip_prefix('[') {
        &host_port[..v6.find(']')? + 2]
    } else {
        host_port.split(':').next()?
    };
    (!host.is_empty()).then_some(host)
}

impl Settings {
    /// Parses and validates a config file's text. Relative paths are resolved against
    /// `base_dir` (the config file's directory) when one is given.
    pub fn from_toml(text: &str, base_dir: Option<&Path>) -> Result<Settings, ConfigError> {
        let (raw, mut problems) = RawConfig::from_toml(text)?;
        match validate(&raw, base_dir) {
            Ok(settings) if problems.is_empty() => Ok(settings),
            Ok(_) => Err(ConfigError { problems }),
            Err(err) => {
                problems.extend(err.problems);
                Err(ConfigError { problems })
            }
        }
    }

    /// The settings of an empty config file: every default.
    pub fn defaults() -> Settings {
        validate(&RawConfig::default(), None).expect("the defaults are valid")
    }

    /// One line describing the settings, for `ferret check-config`.
    pub fn summary(&self) -> String {
        let pools: Vec<String> = Role::ALL
            .iter()
            .map(|&role| format!("{role} {}", self.actors.count(role)))
            .collect();
        format!(
            "config OK: {} instances ({}); http {}:{}; store {}; restarts ≤ {} per {:?}; {} feed{}; {} listing{}",
            self.actors.total(),
            pools.join(", "),
            self.server.bind,
            self.server.port,
            self.storage.path.display(),
            self.supervisor.max_restarts,
            self.supervisor.period,
            self.feeds.len(),
            if self.feeds.len() == 1 { "" } else { "s" },
            self.listings.len(),
            if self.listings.len() == 1 { "" } else { "s" },
        )
    }
}

// ---------------------------------------------------------------------------------------
// Raw structs: exactly what the file says, nothing checked but types and key names.

/// The config file as written: one optional raw struct per table.
#[derive(Debug, Default)]
pub struct RawConfig {
    runtime: RawRuntime,
    server: RawServer,
    storage: RawStorage,
    log: RawLog,
    supervisor: RawSupervisor,
    actors: BTreeMap<String, i64>,
    debug: RawDebug,
    fetch: RawFetch,
    feeds: Vec<RawFeed>,
    listings: Vec<RawListing>,
    stories: RawStories,
    discovery: RawDiscovery,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawStories {
    feeds: Option<Vec<String>>,
    window_hours: Option<f64>,
    window_min_items: Option<i64>,
    event_threshold: Option<f64>,
    story_threshold: Option<f64>,
    merge_threshold: Option<f64>,
    big_story_threshold: Option<f64>,
    big_story: Option<i64>,
    young_story: Option<i64>,
    young_threshold: Option<f64>,
    story_idf_share: Option<f64>,
    long_story_threshold: Option<f64>,
    background: Option<f64>,
    demonyms: Option<bool>,
    freshness_weight: Option<f64>,
    half_life_hours: Option<f64>,
    size_weight: Option<f64>,
    interest_weight: Option<f64>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawDiscovery {
    // The Generalizer.
    generalize_interval_secs: Option<i64>,
    half_life_days: Option<f64>,
    visit_weight: Option<f64>,
    dwell_weight: Option<f64>,
    dwell_half_secs: Option<f64>,
    like_weight: Option<f64>,
    dislike_weight: Option<f64>,
    damping: Option<f64>,
    iterations: Option<i64>,
    lighthouse_threshold: Option<f64>,
    lighthouse_window: Option<i64>,
    lighthouse_min_hits: Option<i64>,
    // The filters.
    unvisited_after_hours: Option<i64>,
    // The crawl.
    crawl: Option<bool>,
    allow_loopback: Option<bool>,
    allow_private: Option<bool>,
    allow_link_local: Option<bool>,
    concurrency: Option<i64>,
    per_host_concurrency: Option<i64>,
    per_host_interval_ms: Option<i64>,
    pages_per_hour: Option<i64>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawRuntime {
    seed: Option<u64>,
    arbiters: Option<i64>,
    shutdown_grace_secs: Option<i64>,
    mailbox_capacity: Option<i64>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawServer {
    bind: Option<String>,
    port: Option<i64>,
    workers: Option<i64>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawStorage {
    path: Option<String>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawLog {
    format: Option<LogFormat>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawSupervisor {
    max_restarts: Option<i64>,
    period_secs: Option<i64>,
    liveness_interval_ms: Option<i64>,
    #[serde(default)]
    policy: BTreeMap<String, RestartPolicy>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawDebug {
    fault_injection: Option<bool>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawFetch {
    user_agent: Option<String>,
    timeout_ms: Option<i64>,
    connect_timeout_ms: Option<i64>,
    max_body_bytes: Option<i64>,
    max_redirects: Option<i64>,
    max_retries: Option<i64>,
    retry_base_ms: Option<i64>,
    retry_max_ms: Option<i64>,
    max_retry_after_secs: Option<i64>,
    per_host_concurrency: Option<i64>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawFeed {
    name: Option<String>,
    url: Option<String>,
    interval_secs: Option<i64>,
    lean: Option<bool>,
    language: Option<String>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawListing {
    name: Option<String>,
    url: Option<String>,
    strategy: Option<Strategy>,
    per_page: Option<i64>,
    frame_secs: Option<f64>,
    grace_secs: Option<f64>,
    tolerance_secs: Option<f64>,
    budget_per_hour: Option<i64>,
    min_interval_ms: Option<i64>,
    dup_threshold: Option<f64>,
    look_ahead: Option<i64>,
    head_interval_ms: Option<i64>,
    head_pages: Option<i64>,
    head_lane: Option<bool>,
    serial_rounds: Option<bool>,
    settle_ms: Option<i64>,
    batch_wait_ms: Option<i64>,
    sweep_share: Option<f64>,
    off_air_target_secs: Option<f64>,
    read_timeout_ms: Option<i64>,
    total_element: Option<String>,
    events_file: Option<String>,
    events_stdout: Option<bool>,
}

const SECTIONS: &[&str] = &[
    "runtime",
    "server",
    "storage",
    "log",
    "supervisor",
    "actors",
    "debug",
    "fetch",
    "feeds",
    "listings",
    "stories",
    "discovery",
];

impl RawConfig {
    /// Reads the tables of a config file. A TOML syntax error is fatal (one problem, with its
    /// line and column). Otherwise every key of every table is read on its own, so that all
    /// unknown keys and type errors are found; a key that is wrong is left at its default and
    /// listed in the returned problems.
    pub fn from_toml(text: &str) -> Result<(RawConfig, Vec<Problem>), ConfigError> {
        let table: toml::Table = text.parse().map_err(|err: toml::de::Error| {
            let key = match err.span() {
                Some(span) => line_column(text, span.start),
                None => "config".to_string(),
            };
            ConfigError {
                problems: vec![Problem {
                    key,
                    message: first_line(err.message()),
                }],
            }
        })?;

        let mut raw = RawConfig::default();
        let mut problems = Vec::new();
        for (name, value) in table {
            let p = &mut problems;
            match name.as_str() {
                "runtime" => raw.runtime = section(&name, value, p),
                "server" => raw.server = section(&name, value, p),
                "storage" => raw.storage = section(&name, value, p),
                "log" => raw.log = section(&name, value, p),
                "supervisor" => raw.supervisor = section(&name, value, p),
                "actors" => raw.actors = section(&name, value, p),
                "debug" => raw.debug = section(&name, value, p),
                "fetch" => raw.fetch = section(&name, value, p),
                "feeds" => raw.feeds = array_of_tables(&name, value, p),
                "listings" => raw.listings = array_of_tables(&name, value, p),
                "stories" => raw.stories = section(&name, value, p),
                "discovery" => raw.discovery = section(&name, value, p),
                _ => problems.push(Problem {
                    message: format!("unknown table; expected one of {}", SECTIONS.join(", ")),
                    key: name,
                }),
            }
        }
        Ok((raw, problems))
    }
}

/// Deserializes one top-level table. Each key is tried on its own first, so that every bad
/// key is reported (serde stops at the first); the good keys are then read together.
fn section<T: DeserializeOwned + Default>(
    name: &str,
    value: toml::Value,
    problems: &mut Vec<Problem>,
) -> T {
    let toml::Value::Table(table) = value else {
        problems.push(Problem {
            key: name.to_string(),
            message: format!("must be a table ([{name}]), not a {}", value.type_str()),
        });
        return T::default();
    };
    let mut good = toml::Table::new();
    for (key, value) in table {
        let single = toml::Table::from_iter([(key.clone(), value.clone())]);
        match serde_path_to_error::deserialize::<_, T>(toml::Value::Table(single)) {
            Ok(_) => {
                good.insert(key, value);
            }
            Err(err) => problems.push(Problem {
                key: format!("{name}.{}", err.path()),
                message: first_line(&err.inner().to_string()),
            }),
        }
    }
    serde_path_to_error::deserialize(toml::Value::Table(good)).unwrap_or_else(|err| {
        problems.push(Problem {
            key: name.to_string(),
            message: first_line(&err.inner().to_string()),
        });
        T::default()
    })
}

/// Deserializes an array of tables (`[[feeds]]`), each entry as [`section`] does, with
/// key paths such as `feeds[2].url`.
fn array_of_tables<T: DeserializeOwned + Default>(
    name: &str,
    value: toml::Value,
    problems: &mut Vec<Problem>,
) -> Vec<T> {
    let toml::Value::Array(entries) = value else {
        problems.push(Problem {
            key: name.to_string(),
            message: format!(
                "must be an array of tables ([[{name}]]), not a {}",
                value.type_str()
            ),
        });
        return Vec::new();
    };
    entries
        .into_iter()
        .enumerate()
        .map(|(i, entry)| section(&format!("{name}[{i}]"), entry, problems))
        .collect()
}

/// The first line of an error message (toml adds context lines that repeat the key).
fn first_line(message: &str) -> String {
    message.lines().next().unwrap_or("").trim().to_string()
}

/// `line L, column C` (both from 1) of a byte offset.
fn line_column(text: &str, offset: usize) -> String {
    let before = &text.as_bytes()[..offset.min(text.len())];
    let line = before.iter().filter(|&&b| b == b'\n').count() + 1;
    let line_start = before
        .iter()
        .rposition(|&b| b == b'\n')
        .map_or(0, |i| i + 1);
    let column = String::from_utf8_lossy(&before[line_start..])
        .chars()
        .count()
        + 1;
    format!("line {line}, column {column}")
}

// ---------------------------------------------------------------------------------------
// Validation.

/// Checks a raw config and builds [`Settings`], or returns every problem found.
pub fn validate(raw: &RawConfig, base_dir: Option<&Path>) -> Result<Settings, ConfigError> {
    let mut check = Check::default();

    let runtime = RuntimeSettings {
        seed: raw.runtime.seed.unwrap_or(1),
        arbiters: NonZeroUsize::new(check.int(
            "runtime.arbiters",
            raw.runtime.arbiters,
            0,
            0..=256,
        )),
        shutdown_grace: Duration::from_secs(check.int(
            "runtime.shutdown_grace_secs",
            raw.runtime.shutdown_grace_secs,
            10,
            0..=3600,
        )),
        mailbox_capacity: check.int(
            "runtime.mailbox_capacity",
            raw.runtime.mailbox_capacity,
            1024,
            1..=1_000_000,
        ),
    };

    let bind = raw.server.bind.as_deref().unwrap_or("127.0.0.1");
    let server = ServerSettings {
        bind: bind.parse().unwrap_or_else(|_| {
            check.problem(
                "server.bind",
                format!("`{bind}` is not an IP address (e.g. 127.0.0.1 or ::1)"),
            );
            IpAddr::from([127, 0, 0, 1])
        }),
        port: check.int("server.port", raw.server.port, 8630, 0..=65535),
        workers: check.int("server.workers", raw.server.workers, 1, 1..=64),
    };

    let path = raw.storage.path.as_deref().unwrap_or("data/ferret.db");
    if path.trim().is_empty() {
        check.problem("storage.path", "must not be empty");
    }
    let storage = StorageSettings {
        path: match base_dir {
            Some(dir) if Path::new(path).is_relative() => dir.join(path),
            _ => PathBuf::from(path),
        },
    };

    let mut policies = [RestartPolicy::Permanent; Role::ALL.len()];
    for (name, &policy) in &raw.supervisor.policy {
        match Role::from_name(name) {
            Some(role) => policies[role as usize] = policy,
            None => check.unknown_role(&format!("supervisor.policy.{name}"), name),
        }
    }
    let supervisor = SupervisorSettings {
        max_restarts: check.int(
            "supervisor.max_restarts",
            raw.supervisor.max_restarts,
            5,
            0..=1_000_000,
        ),
        period: Duration::from_secs(check.int(
            "supervisor.period_secs",
            raw.supervisor.period_secs,
            10,
            1..=86_400,
        )),
        liveness_interval: Duration::from_millis(check.int(
            "supervisor.liveness_interval_ms",
            raw.supervisor.liveness_interval_ms,
            200,
            10..=60_000,
        )),
        policies,
    };

    let mut counts = Role::ALL.map(Role::default_count);
    for (name, &count) in &raw.actors {
        let key = format!("actors.{name}");
        match Role::from_name(name) {
            Some(role) => {
                counts[role as usize] = check.int(
                    &key,
                    Some(count),
                    role.default_count(),
                    1..=role.max_count() as i64,
                )
            }
            None => check.unknown_role(&key, name),
        }
    }

    let debug = DebugSettings {
        fault_injection: raw.debug.fault_injection.unwrap_or(false),
    };
    let log = LogSettings {
        format: raw.log.format.unwrap_or(LogFormat::Text),
    };

    let fetch = validate_fetch(&raw.fetch, &mut check);
    let feeds = validate_feeds(&raw.feeds, &mut check);
    let listings = validate_listings(&raw.listings, base_dir, &mut check);
    let stories = validate_stories(&raw.stories, &feeds, &mut check);
    let discovery = validate_discovery(&raw.discovery, &mut check);

    check.finish(Settings {
        runtime,
        server,
        storage,
        log,
        supervisor,
        actors: ActorCounts(counts),
        debug,
        fetch,
        feeds,
        listings,
        stories,
        discovery,
    })
}

fn validate_stories(raw: &RawStories, feeds: &[FeedSource], check: &mut Check) -> StoriesSettings {
    let names = raw.feeds.clone().unwrap_or_default();
    for (i, name) in names.iter().enumerate() {
        if !feeds.iter().any(|feed| &feed.name == name) {
            check.problem(
                &format!("stories.feeds[{i}]"),
                format!("no [[feeds]] entry is named `{name}`"),
            );
        }
    }
    let cluster_defaults = ClusterParams::default();
    let big_story = check.int(
        "stories.big_story",
        raw.big_story,
        cluster_defaults.big_story,
        1..=1_000_000,
    );
    let young_story = check.int(
        "stories.young_story",
        raw.young_story,
        cluster_defaults.young_story,
        0..=1_000_000,
    );
    let window_min_items = check.int(
        "stories.window_min_items",
        raw.window_min_items,
        cluster_defaults.window_min_items,
        0..=1_000_000,
    );
    let mut number = |key: &str, value, default, range| {
        check.float(&format!("stories.{key}"), value, default, range)
    };
    let rank_defaults = RankWeights::default();
    let hour = 3_600_000.0;
    let window = number(
        "window_hours",
        raw.window_hours,
        cluster_defaults.window as f64 / hour,
        0.01..=24.0 * 365.0,
    );
    let half_life = number(
        "half_life_hours",
        raw.half_life_hours,
        rank_defaults.half_life as f64 / hour,
        0.01..=24.0 * 365.0,
    );
    let mut cosine = |key: &str, value: Option<f64>, default: f32| {
        number(key, value, f64::from(default), 0.0..=1.0) as f32
    };
    let cluster = ClusterParams {
        window: (window * hour) as i64,
        window_min_items,
        event_threshold: cosine(
            "event_threshold",
            raw.event_threshold,
            cluster_defaults.event_threshold,
        ),
        story_threshold: cosine(
            "story_threshold",
            raw.story_threshold,
            cluster_defaults.story_threshold,
        ),
        merge_threshold: cosine(
            "merge_threshold",
            raw.merge_threshold,
            cluster_defaults.merge_threshold,
        ),
        big_story_threshold: cosine(
            "big_story_threshold",
            raw.big_story_threshold,
            cluster_defaults.big_story_threshold,
        ),
        young_threshold: cosine(
            "young_threshold",
            raw.young_threshold,
            cluster_defaults.young_threshold,
        ),
        story_idf_share: cosine(
            "story_idf_share",
            raw.story_idf_share,
            cluster_defaults.story_idf_share,
        ),
        long_story_threshold: cosine(
            "long_story_threshold",
            raw.long_story_threshold,
            cluster_defaults.long_story_threshold,
        ),
        background: cosine("background", raw.background, cluster_defaults.background),
        big_story,
        young_story,
        demonyms: raw.demonyms.unwrap_or(cluster_defaults.demonyms),
        ..cluster_defaults
    };
    let mut weight =
        |key: &str, value: Option<f64>, default: f64| number(key, value, default, 0.0..=1000.0);
    let rank = RankWeights {
        freshness: weight(
            "freshness_weight",
            raw.freshness_weight,
            rank_defaults.freshness,
        ),
        half_life: (half_life * hour) as i64,
        size: weight("size_weight", raw.size_weight, rank_defaults.size),
        interest: weight(
            "interest_weight",
            raw.interest_weight,
            rank_defaults.interest,
        ),
    };
    StoriesSettings {
        feeds: names,
        cluster,
        rank,
    }
}

fn validate_discovery(raw: &RawDiscovery, check: &mut Check) -> DiscoverySettings {
    let defaults = HittageParams::default();
    let mut number = |key: &str, value, default, range| {
        check.float(&format!("discovery.{key}"), value, default, range)
    };
    let day = 86_400_000.0;
    let half_life = number(
        "half_life_days",
        raw.half_life_days,
        defaults.half_life_ms as f64 / day,
        0.001..=36_500.0,
    );
    let mut hittage = HittageParams {
        half_life_ms: (half_life * day) as i64,
        visit_weight: number(
            "visit_weight",
            raw.visit_weight,
            defaults.visit_weight,
            0.0..=100.0,
        ),
        dwell_weight: number(
            "dwell_weight",
            raw.dwell_weight,
            defaults.dwell_weight,
            0.0..=100.0,
        ),
        dwell_half_secs: number(
            "dwell_half_secs",
            raw.dwell_half_secs,
            defaults.dwell_half_secs,
            0.001..=86_400.0,
        ),
        like_weight: number(
            "like_weight",
            raw.like_weight,
            defaults.like_weight,
            0.001..=100.0,
        ),
        dislike_weight: number(
            "dislike_weight",
            raw.dislike_weight,
            defaults.dislike_weight,
            0.001..=100.0,
        ),
        damping: number("damping", raw.damping, defaults.damping, 0.0..=0.99),
        lighthouse_threshold: number(
            "lighthouse_threshold",
            raw.lighthouse_threshold,
            defaults.lighthouse_threshold,
            0.001..=1.0,
        ),
        ..defaults
    };
    hittage.iterations = check.int(
        "discovery.iterations",
        raw.iterations,
        defaults.iterations,
        0..=1000,
    );
    hittage.lighthouse_window = check.int(
        "discovery.lighthouse_window",
        raw.lighthouse_window,
        defaults.lighthouse_window,
        1..=1000,
    );
    hittage.lighthouse_min_hits = check.int(
        "discovery.lighthouse_min_hits",
        raw.lighthouse_min_hits,
        defaults.lighthouse_min_hits,
        1..=1000,
    );
    if hittage.lighthouse_min_hits > hittage.lighthouse_window {
        check.problem(
            "discovery.lighthouse_min_hits",
            format!(
                "must be ≤ discovery.lighthouse_window ({})",
                hittage.lighthouse_window
            ),
        );
        hittage.lighthouse_min_hits = hittage.lighthouse_window;
    }
    let crawl_defaults = CrawlSettings::default();
    let crawl = CrawlSettings {
        enabled: raw.crawl.unwrap_or(crawl_defaults.enabled),
        policy: AddressPolicy {
            allow_loopback: raw.allow_loopback.unwrap_or(false),
            allow_private: raw.allow_private.unwrap_or(false),
            allow_link_local: raw.allow_link_local.unwrap_or(false),
        },
        concurrency: check.int(
            "discovery.concurrency",
            raw.concurrency,
            crawl_defaults.concurrency,
            1..=1024,
        ),
        per_host_concurrency: check.int(
            "discovery.per_host_concurrency",
            raw.per_host_concurrency,
            crawl_defaults.per_host_concurrency,
            1..=1024,
        ),
        per_host_interval: Duration::from_millis(check.int(
            "discovery.per_host_interval_ms",
            raw.per_host_interval_ms,
            1_000,
            0..=3_600_000,
        )),
        pages_per_hour: check.int(
            "discovery.pages_per_hour",
            raw.pages_per_hour,
            crawl_defaults.pages_per_hour,
            0..=100_000_000,
        ),
    };
    DiscoverySettings {
        generalize_interval: Duration::from_secs(check.int(
            "discovery.generalize_interval_secs",
            raw.generalize_interval_secs,
            60,
            1..=86_400,
        )),
        hittage,
        unvisited_after: Duration::from_secs(
            3_600
                * check.int(
                    "discovery.unvisited_after_hours",
                    raw.unvisited_after_hours,
                    72u64,
                    1..=8_760,
                ),
        ),
        crawl,
    }
}

fn validate_fetch(raw: &RawFetch, check: &mut Check) -> FetchSettings {
    let user_agent = raw
        .user_agent
        .clone()
        .unwrap_or_else(|| DEFAULT_USER_AGENT.to_string());
    let user_agent = if user_agent.trim().is_empty() {
        check.problem("fetch.user_agent", "must not be empty");
        DEFAULT_USER_AGENT.to_string()
    } else if !user_agent.bytes().all(|b| (0x20..0x7f).contains(&b)) {
        check.problem(
            "fetch.user_agent",
            "must be printable ASCII (it is sent as an HTTP header)",
        );
        DEFAULT_USER_AGENT.to_string()
    } else {
        user_agent
    };
    let ms = |check: &mut Check, key: &str, value, default, range| {
        Duration::from_millis(check.int(key, value, default, range))
    };
    let retry_base = ms(
        check,
        "fetch.retry_base_ms",
        raw.retry_base_ms,
        1000,
        1..=3_600_000,
    );
    let retry_max = ms(
        check,
        "fetch.retry_max_ms",
        raw.retry_max_ms,
        60_000,
        1..=3_600_000,
    );
    if retry_max < retry_base {
        check.problem(
            "fetch.retry_max_ms",
            format!(
                "must be ≥ fetch.retry_base_ms ({} ms)",
                retry_base.as_millis()
            ),
        );
    }
    FetchSettings {
        user_agent,
        timeout: ms(
            check,
            "fetch.timeout_ms",
            raw.timeout_ms,
            30_000,
            1..=3_600_000,
        ),
        connect_timeout: ms(
            check,
            "fetch.connect_timeout_ms",
            raw.connect_timeout_ms,
            10_000,
            1..=3_600_000,
        ),
        max_body_bytes: check.int(
            "fetch.max_body_bytes",
            raw.max_body_bytes,
            16 << 20,
            1..=(1 << 32),
        ),
        max_redirects: check.int("fetch.max_redirects", raw.max_redirects, 5, 0..=50),
        retry: RetryPolicy {
            max_retries: check.int("fetch.max_retries", raw.max_retries, 3, 0..=20),
            base_delay: retry_base,
            max_delay: retry_max.max(retry_base),
            max_retry_after: Duration::from_secs(check.int(
                "fetch.max_retry_after_secs",
                raw.max_retry_after_secs,
                300,
                0..=86_400,
            )),
        },
        per_host_concurrency: check.int(
            "fetch.per_host_concurrency",
            raw.per_host_concurrency,
            2,
            1..=256,
        ),
    }
}

fn validate_feeds(raw: &[RawFeed], check: &mut Check) -> Vec<FeedSource> {
    let mut seen = BTreeMap::new();
    let mut feeds = Vec::new();
    for (i, feed) in raw.iter().enumerate() {
        let key = |field: &str| format!("feeds[{i}].{field}");
        let (name, url) = name_and_url("feeds", i, &feed.name, &feed.url, &mut seen, check);
        let interval = Duration::from_secs(check.int(
            &key("interval_secs"),
            feed.interval_secs,
            300,
            1..=7 * 86_400,
        ));
        let language = feed.language.as_deref().map(str::trim).and_then(|tag| {
            let valid = !tag.is_empty()
                && tag.len() <= 35
                && tag
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_');
            if !valid {
                check.problem(
                    &key("language"),
                    format!("must be a language tag such as \"de\" or \"pt-BR\" (got {tag:?})"),
                );
            }
            valid.then(|| tag.to_string())
        });
        feeds.push(FeedSource {
            name,
            url,
            interval,
            lean: feed.lean.unwrap_or(false),
            language,
        });
    }
    feeds
}

/// The `name` and `url` of entry `i` of an array of tables (`[[feeds]]`, `[[listings]]`),
/// trimmed: a name must be present and unique (`seen` holds the names so far), a url must be
/// an `http(s)://` URL with a host. Problems are reported with the entry's key path.
fn name_and_url(
    table: &str,
    i: usize,
    name: &Option<String>,
    url: &Option<String>,
    seen: &mut BTreeMap<String, usize>,
    check: &mut Check,
) -> (String, String) {
    let key = |field: &str| format!("{table}[{i}].{field}");
    let name = name.as_deref().map(str::trim).unwrap_or("");
    if name.is_empty() {
        check.problem(
            &key("name"),
            format!("missing: every [[{table}]] entry needs a name"),
        );
    } else if let Some(first) = seen.insert(name.to_string(), i) {
        check.problem(
            &key("name"),
            format!("`{name}` is already the name of {table}[{first}]"),
        );
    }
    let url = url.as_deref().map(str::trim).unwrap_or("");
    if url.is_empty() {
        check.problem(
            &key("url"),
            format!("missing: every [[{table}]] entry needs a url"),
        );
    } else if url_host(url).is_none() || url.chars().any(char::is_whitespace) {
        check.problem(
            &key("url"),
            format!("`{url}` is not an http:// or https:// URL with a host"),
        );
    }
    (name.to_string(), url.to_string())
}

fn validate_listings(
    raw: &[RawListing],
    base_dir: Option<&Path>,
    check: &mut Check,
) -> Vec<ListingSource> {
    let mut seen = BTreeMap::new();
    let mut listings = Vec::new();
    for (i, listing) in raw.iter().enumerate() {
        let key = |field: &str| format!("listings[{i}].{field}");
        let (name, url) =
            name_and_url("listings", i, &listing.name, &listing.url, &mut seen, check);
        if url_host(&url).is_some() && !url.contains("{page}") {
            check.problem(
                &key("url"),
                "must contain `{page}` where the page number goes",
            );
        }

        // Durations default to the real listing's, scaled with the frame: a listing run
        // 20 times faster (frame = 90 s) behaves like the real one.
        let frame_secs = listing.frame_secs.unwrap_or(1800.0);
        let frame = if frame_secs.is_finite() && (1.0..=86_400.0).contains(&frame_secs) {
            (frame_secs * 1000.0).round() as i64
        } else {
            check.problem(&key("frame_secs"), "must lie in 1..=86400");
            Params::default().frame
        };
        let defaults = Params::for_frame(frame);
        // A duration in seconds, up to a day; 0 only where it turns something off.
        let mut secs = |field: &str, value: Option<f64>, default: i64, zero_is_off: bool| {
            let lowest_ok = |v: f64| v > 0.0 || (zero_is_off && v == 0.0);
            match value {
                None => default,
                Some(v) if lowest_ok(v) && v <= 86_400.0 => (v * 1000.0).round() as i64,
                Some(_) => {
                    let range = if zero_is_off {
                        "[0, 86400]"
                    } else {
                        "(0, 86400]"
                    };
                    check.problem(&key(field), format!("must lie in {range}"));
                    default
                }
            }
        };
        let grace = secs("grace_secs", listing.grace_secs, defaults.grace, false);
        let tolerance = secs(
            "tolerance_secs",
            listing.tolerance_secs,
            defaults.tolerance,
            false,
        );
        let off_air_target = secs(
            "off_air_target_secs",
            listing.off_air_target_secs,
            defaults.off_air_target,
            true,
        );
        let mut ms = |field: &str, value: Option<i64>, default: i64| {
            check.int(&key(field), value, default, 1..=86_400_000)
        };
        let min_interval = ms(
            "min_interval_ms",
            listing.min_interval_ms,
            defaults.min_interval,
        );
        let head_interval = ms(
            "head_interval_ms",
            listing.head_interval_ms,
            defaults.head_interval,
        );
        let settle = ms("settle_ms", listing.settle_ms, defaults.settle);
        let batch_wait = ms("batch_wait_ms", listing.batch_wait_ms, defaults.batch_wait);
        let read_timeout = ms(
            "read_timeout_ms",
            listing.read_timeout_ms,
            defaults.read_timeout,
        );
        let mut share = |field: &str, value: Option<f64>, default: f64| match value {
            None => default,
            Some(v) if (0.0..=1.0).contains(&v) => v,
            Some(_) => {
                check.problem(&key(field), "must lie in [0, 1]");
                default
            }
        };
        let dup_threshold = share(
            "dup_threshold",
            listing.dup_threshold,
            defaults.dup_threshold,
        );
        let sweep_share = share("sweep_share", listing.sweep_share, defaults.sweep_share);
        let params = Params {
            per_page: check.int(
                &key("per_page"),
                listing.per_page,
                defaults.per_page,
                1..=10_000,
            ),
            grace,
            tolerance,
            budget_per_hour: check.int(
                &key("budget_per_hour"),
                listing.budget_per_hour,
                defaults.budget_per_hour,
                1..=10_000_000,
            ),
            min_interval,
            dup_threshold,
            look_ahead: check.int(
                &key("look_ahead"),
                listing.look_ahead,
                defaults.look_ahead,
                0..=100,
            ),
            head_interval,
            head_pages: check.int(
                &key("head_pages"),
                listing.head_pages,
                defaults.head_pages,
                1..=1_000,
            ),
            head_lane: listing.head_lane.unwrap_or(defaults.head_lane),
            serial_rounds: listing.serial_rounds.unwrap_or(defaults.serial_rounds),
            settle,
            batch_wait,
            sweep_share,
            off_air_target,
            read_timeout,
            ..defaults
        };
        let total_element = match listing.total_element.as_deref().map(str::trim) {
            None => Some(("nicolive".to_string(), "total_count".to_string())),
            Some("") => None,
            Some(element) => match element.split_once(':') {
                Some((prefix, name)) if !name.is_empty() && !name.contains(':') => {
                    Some((prefix.to_string(), name.to_string()))
                }
                Some(_) => {
                    check.problem(
                        &key("total_element"),
                        format!("`{element}` is not `prefix:name` or a bare name"),
                    );
                    None
                }
                None => Some((String::new(), element.to_string())),
            },
        };
        let events_file = match listing.events_file.as_deref().map(str::trim) {
            None | Some("") => None,
            // Relative to the config file, like the store.
            Some(path) => Some(match base_dir {
                Some(dir) => dir.join(path),
                None => PathBuf::from(path),
            }),
        };
        listings.push(ListingSource {
            name,
            url,
            strategy: listing.strategy.unwrap_or(Strategy::Ferret),
            params,
            total_element,
            events_file,
            events_stdout: listing.events_stdout.unwrap_or(false),
        });
    }
    listings
}

/// Collects problems while validation goes on, so that all of them are reported.
#[derive(Default)]
struct Check {
    problems: Vec<Problem>,
}

impl Check {
    fn problem(&mut self, key: &str, message: impl Into<String>) {
        self.problems.push(Problem {
            key: key.to_string(),
            message: message.into(),
        });
    }

    /// `value` (or `default` when absent) if it lies in `range`; otherwise a problem, and the
    /// default so that validation can go on. `range` must fit in `T`.
    fn int<T: TryFrom<i64>>(
        &mut self,
        key: &str,
        value: Option<i64>,
        default: T,
        range: std::ops::RangeInclusive<i64>,
    ) -> T {
        let Some(value) = value else { return default };
        let (lo, hi) = (*range.start(), *range.end());
        if let (true, Ok(v)) = (range.contains(&value), T::try_from(value)) {
            return v;
        }
        let message = if value < lo {
            format!("must be ≥ {lo} (got {value})")
        } else if lo == hi {
            format!("must be {lo} (got {value})")
        } else {
            format!("must be ≤ {hi} (got {value})")
        };
        self.problem(key, message);
        default
    }

    /// `value` (or `default` when absent) if it lies in `range`; otherwise a problem, and the
    /// default so that validation can go on.
    fn float(
        &mut self,
        key: &str,
        value: Option<f64>,
        default: f64,
        range: std::ops::RangeInclusive<f64>,
    ) -> f64 {
        match value {
            Some(v) if !range.contains(&v) => {
                self.problem(
                    key,
                    format!("must lie in {}..={} (got {v})", range.start(), range.end()),
                );
                default
            }
            Some(v) => v,
            None => default,
        }
    }

    fn unknown_role(&mut self, key: &str, name: &str) {
        let roles: Vec<&str> = Role::ALL.iter().map(|r| r.name()).collect();
        self.problem(
            key,
            format!(
                "unknown role `{name}`; expected one of {}",
                roles.join(", ")
            ),
        );
    }

    fn finish(self, settings: Settings) -> Result<Settings, ConfigError> {
        if self.problems.is_empty() {
            Ok(settings)
        } else {
            Err(ConfigError {
                problems: self.problems,
            })
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn problems(text: &str) -> Vec<String> {
        match Settings::from_toml(text, None) {
            Ok(_) => Vec::new(),
            Err(err) => err.problems.iter().map(ToString::to_string).collect(),
        }
    }

    #[test]
    fn empty_file_gives_defaults() {
        let settings = Settings::from_toml("", None).unwrap();
        assert_eq!(settings, Settings::defaults());
        assert_eq!(settings.actors.count(Role::Ferret), 4);
        assert_eq!(settings.server.port, 8630);
        assert!(!settings.debug.fault_injection);
    }

    #[test]
    fn syntax_error_has_line_and_column() {
        let found = problems("[actors]\nferret = = 3\n");
        assert_eq!(found.len(), 1);
        assert!(found[0].starts_with("line 2, column"), "{found:?}");
    }

    #[test]
    fn page_db_must_be_single() {
        assert_eq!(
            problems("[actors]\npage_db = 2\n"),
            ["actors.page_db: must be 1 (got 2)"]
        );
    }

    #[test]
    fn relative_store_path_follows_the_config_file() {
        let settings = Settings::from_toml(
            "[storage]\npath = \"x/f.db\"\n",
            Some(Path::new("/etc/ferret")),
        )
        .unwrap();
        assert_eq!(settings.storage.path, Path::new("/etc/ferret/x/f.db"));
        let absolute =
            Settings::from_toml("[storage]\npath = \"/var/f.db\"\n", Some(Path::new("/etc")))
                .unwrap();
        assert_eq!(absolute.storage.path, Path::new("/var/f.db"));
    }

    #[test]
    fn url_hosts() {
        assert_eq!(url_host("http://example.com/feed"), Some("example.com"));
        assert_eq!(
            url_host("https://u:p@example.com:8443?x"),
            Some("example.com")
        );
        assert_eq!(url_host("http://127.0.0.1:80"), Some("127.0.0.1"));
        assert_eq!(url_host("http://[::1]:8080/a"), Some("[::1]"));
        assert_eq!(url_host("http:///path"), None);
        assert_eq!(url_host("ftp://example.com/"), None);
        assert_eq!(url_host("example.com"), None);
    }

    #[test]
    fn line_column_counts_characters() {
        assert_eq!(line_column("ab\ncé=", 5), "line 2, column 3");
    }
}
