//! The fetch scheduler: what to fetch next, under per-host politeness and robots.txt.
//!
//! Sans-IO: the caller pushes URLs, polls for [`FetchOrder`]s, performs them and reports back
//! ([`Frontier::fetched`], [`Frontier::robots_fetched`]); times are milliseconds the caller
//! passes in. [`Frontier::poll_timeout`] says when to poll again.
//!
//! # Rules
//!
//! - **Priority**: the highest priority first; equal priorities in the order they were pushed.
//!   Politeness can make a lower-priority URL of another host go first.
//! - **Dedup** on the normalised URL: a URL already queued, in flight, or fetched less than
//!   `refetch_after_ms` ago is refused (and counted).
//! - **Politeness**, per host (`host:port`): at most `max_in_flight_per_host` requests at once,
//!   and starts at least `max(min_interval_ms, Crawl-delay)` apart (the crawl delay capped at
//!   `max_crawl_delay_ms`).
//! - **robots.txt first**: a host's URLs wait until its robots.txt is known; the first poll
//!   that would pick one of them gives a [`FetchOrder::Robots`] instead (one per host). The
//!   rules are kept `robots_ttl_ms`, then fetched again. An unreachable robots.txt (5xx, no
//!   answer) holds the host's URLs for `robots_retry_ms` and is then fetched again
//!   (RFC 9309 §2.3.1.4). Disallowed URLs are dropped and counted. A host refused by the
//!   address policy ([`RobotsOutcome::Refused`]) is refused for good: its queued URLs are
//!   dropped, later pushes refused (both counted in `address_refused`), and it is never asked
//!   again.
//!
//! # Cost
//!
//! Every host has its own priority queue; hosts that may be fetched now sit in one heap keyed
//! by their best URL, hosts waiting for their interval in a heap keyed by time, and hosts at
//! their in-flight limit (or waiting for robots.txt) in neither until a report frees them. A
//! poll is O(log n); stale heap entries are skipped when met.

use std::cmp::{Ordering, Reverse};
use std::collections::BinaryHeap;

use rustc_hash::FxHashMap;
use url::Url;

use super::robots::{robots_url, Robots, RobotsOutcome};
use super::url::{canonical, host_key};

/// The frontier's settings.
#[derive(Debug, Clone, PartialEq)]
pub struct FrontierConfig {
    /// Requests in flight to one host at once (robots.txt included). At least 1.
    pub max_in_flight_per_host: u32,
    /// The least time between two request starts to one host.
    pub min_interval_ms: u64,
    /// A URL fetched less than this long ago is refused by [`Frontier::push`];
    /// `u64::MAX` (the default) means never fetch a URL twice.
    pub refetch_after_ms: u64,
    /// How long a host's robots.txt is believed (RFC 9309: at most 24 hours).
    pub robots_ttl_ms: u64,
    /// How long a host whose robots.txt was unreachable waits before it is asked again.
    pub robots_retry_ms: u64,
    /// The largest `Crawl-delay` honoured; longer ones are cut to this.
    pub max_crawl_delay_ms: u64,
}

impl Default for FrontierConfig {
    fn default() -> FrontierConfig {
        FrontierConfig {
            max_in_flight_per_host: 2,
            min_interval_ms: 1_000,
            refetch_after_ms: u64::MAX,
            robots_ttl_ms: 24 * 3_600_000,
            robots_retry_ms: 10 * 60_000,
            max_crawl_delay_ms: 30_000,
        }
    }
}

/// What to fetch now.
#[derive(Debug, Clone, PartialEq)]
pub enum FetchOrder {
    /// Fetch this page, then call [`Frontier::fetched`].
    Page {
        /// The URL, normalised.
        url: Url,
        /// Its priority.
        priority: f64,
        /// Its host key.
        host: String,
    },
    /// Fetch this host's robots.txt, then call [`Frontier::robots_fetched`].
    Robots {
        /// The host key.
        host: String,
        /// `scheme://host:port/robots.txt`.
        url: Url,
    },
}

/// How a page fetch ended, as far as scheduling cares.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FetchOutcome {
    /// The server answered (any status that is an answer for this URL).
    Done,
    /// The request failed or the server erred: the URL counts as fetched (no retry loop).
    Failed,
    /// The server asked to slow down (429, 503 with `Retry-After`): the host pauses this
    /// long and the URL goes back in the queue in its old place (priority and push order).
    Throttled {
        /// How long the host pauses.
        retry_after_ms: u64,
    },
}

/// Counters, so that nothing is dropped silently.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct FrontierStats {
    /// URLs waiting in queues now.
    pub queued: usize,
    /// Requests out now (pages and robots.txt).
    pub in_flight: usize,
    /// Hosts known.
    pub hosts: usize,
    /// URLs accepted by `push`.
    pub accepted: u64,
    /// Refused by `push`: already queued.
    pub dup_queued: u64,
    /// Refused by `push`: in flight.
    pub dup_in_flight: u64,
    /// Refused by `push`: fetched within `refetch_after_ms`.
    pub recently_fetched: u64,
    /// Refused by `push`: not http(s) or without a host.
    pub unsupported: u64,
    /// Dropped (at `push` or when their turn came): robots.txt disallows them.
    pub robots_disallowed: u64,
    /// Dropped (queued when the host was refused, or refused by `push` later): the host is
    /// refused by the address policy.
    pub address_refused: u64,
    /// Page orders given.
    pub page_orders: u64,
    /// robots.txt orders given.
    pub robots_orders: u64,
    /// Page fetches reported done, failed, throttled.
    pub done: u64,
    /// See `done`.
    pub failed: u64,
    /// See `done`.
    pub throttled: u64,
    /// robots.txt outcomes: found (2xx), unavailable (4xx), unreachable (5xx, failure),
    /// refused (the address policy refuses the host).
    pub robots_found: u64,
    /// See `robots_found`.
    pub robots_unavailable: u64,
    /// See `robots_found`.
    pub robots_unreachable: u64,
    /// See `robots_found`.
    pub robots_refused: u64,
    /// Reports for requests the frontier did not order (ignored).
    pub unexpected_reports: u64,
}

/// A URL's state, for dedup.
#[derive(Debug, Clone, Copy)]
enum Seen {
    Queued,
    InFlight { priority: f64, seq: u64 },
    Fetched { at: u64 },
}

/// A queued URL. Ordered by priority, then by push order (earlier first).
#[derive(Debug)]
struct Entry {
    priority: f64,
    seq: u64,
    url: Url,
}

impl PartialEq for Entry {
    fn eq(&self, other: &Entry) -> bool {
        self.cmp(other) == Ordering::Equal
    }
}
impl Eq for Entry {}
impl PartialOrd for Entry {
    fn partial_cmp(&self, other: &Entry) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}
impl Ord for Entry {
    fn cmp(&self, other: &Entry) -> Ordering {
        rank(self.priority, self.seq).cmp(&rank(other.priority, other.seq))
    }
}

/// A heap key: higher priority, then lower sequence number, is greater.
#[derive(Debug, Clone, Copy)]
struct Rank(f64, Reverse<u64>);

impl PartialEq for Rank {
    fn eq(&self, other: &Rank) -> bool {
        self.cmp(other) == Ordering::Equal
    }
}
impl Eq for Rank {}
impl PartialOrd for Rank {
    fn partial_cmp(&self, other: &Rank) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}
impl Ord for Rank {
    fn cmp(&self, other: &Rank) -> Ordering {
        self.0.total_cmp(&other.0).then(self.1.cmp(&other.1))
    }
}

fn rank(priority: f64, seq: u64) -> Rank {
    Rank(priority, Reverse(seq))
}

#[derive(Debug)]
enum RobotsState {
    /// Never fetched (or expired: see `Known::until`).
    Unknown,
    /// An order is out.
    Fetching,
    /// Rules believed until `until`.
    Known { robots: Robots, until: u64 },
    /// Unreachable: nothing may be fetched before `until`, when robots.txt is asked again.
    Blocked { until: u64 },
    /// Refused by the address policy: nothing is ever fetched, robots.txt is never asked again.
    Refused,
}

/// Where a host is scheduled.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Sched {
    /// In no heap: nothing queued, at its in-flight limit, or its robots.txt is out.
    Idle,
    /// In the ready heap under its best entry's sequence number.
    Ready(u64),
    /// In the timer heap until this time.
    Waiting(u64),
}

#[derive(Debug)]
struct Host {
    key: String,
    /// A URL of the host, to build its robots.txt URL from.
    sample: Url,
    queue: BinaryHeap<Entry>,
    in_flight: u32,
    /// The earliest time the next request may start.
    next_start: u64,
    robots: RobotsState,
    sched: Sched,
}

/// The fetch scheduler. See the module docs.
#[derive(Debug)]
pub struct Frontier {
    config: FrontierConfig,
    hosts: Vec<Host>,
    host_ids: FxHashMap<String, usize>,
    seen: FxHashMap<Box<str>, Seen>,
    /// Hosts that may be fetched now, by their best entry.
    ready: BinaryHeap<(Rank, usize)>,
    /// Hosts waiting for a time.
    timers: BinaryHeap<Reverse<(u64, usize)>>,
    seq: u64,
    stats: FrontierStats,
}

impl Frontier {
    /// An empty frontier.
    pub fn new(mut config: FrontierConfig) -> Frontier {
        config.max_in_flight_per_host = config.max_in_flight_per_host.max(1);
        Frontier {
            config,
            hosts: Vec::new(),
            host_ids: FxHashMap::default(),
            seen: FxHashMap::default(),
            ready: BinaryHeap::new(),
            timers: BinaryHeap::new(),
            seq: 0,
            stats: FrontierStats::default(),
        }
    }

    /// The settings.
    pub fn config(&self) -> &FrontierConfig {
        &self.config
    }

    /// Queues `url` (normalised: no fragment, no empty query) with `priority` (higher first;
    /// NaN counts as the lowest). `false` if it was refused: not http(s), already queued or in
    /// flight, fetched within `refetch_after_ms`, or disallowed by the host's known robots.txt
    /// (each counted in [`stats`](Frontier::stats)).
    pub fn push(&mut self, url: Url, priority: f64, now_ms: u64) -> bool {
        let Some(url) = canonical(url) else {
            self.stats.unsupported += 1;
            return false;
        };
        let priority = if priority.is_nan() {
            f64::NEG_INFINITY
        } else {
            priority
        };
        match self.seen.get(url.as_str()) {
            Some(Seen::Queued) => {
                self.stats.dup_queued += 1;
                return false;
            }
            Some(Seen::InFlight { .. }) => {
                self.stats.dup_in_flight += 1;
                return false;
            }
            Some(Seen::Fetched { at })
                if now_ms.saturating_sub(*at) < self.config.refetch_after_ms =>
            {
                self.stats.recently_fetched += 1;
                return false;
            }
            _ => {}
        }
        let id = self.host_id(&url);
        match &self.hosts[id].robots {
            RobotsState::Known { robots, until } if now_ms < *until && !robots.allowed(&url) => {
                self.stats.robots_disallowed += 1;
                return false;
            }
            RobotsState::Refused => {
                self.stats.address_refused += 1;
                return false;
            }
            _ => {}
        }
        self.seen.insert(url.as_str().into(), Seen::Queued);
        self.enqueue(id, url, priority);
        self.stats.accepted += 1;
        self.reschedule(id, now_ms);
        true
    }

    /// The next request to make now, if any: the best URL whose host may be fetched now, or
    /// the robots.txt of the host whose URL that would be.
    pub fn poll(&mut self, now_ms: u64) -> Option<FetchOrder> {
        self.wake(now_ms);
        while let Some((rank, id)) = self.ready.pop() {
            let host = &mut self.hosts[id];
            let current = host.queue.peek().map(|e| e.seq);
            if host.sched != Sched::Ready(rank.1 .0) || current != Some(rank.1 .0) {
                continue; // stale
            }
            host.sched = Sched::Idle;
            if let Some(order) = self.take(id, now_ms) {
                return Some(order);
            }
        }
        None
    }

    /// When to poll next if [`poll`](Frontier::poll) gave nothing: the earliest time a waiting
    /// host may be fetched. `None` when nothing is waiting for time (only for reports, or
    /// nothing at all). A time already past means: poll now.
    pub fn poll_timeout(&mut self) -> Option<u64> {
        if let Some(now) = self.ready_now_hint() {
            return Some(now);
        }
        while let Some(&Reverse((at, id))) = self.timers.peek() {
            if self.hosts[id].sched == Sched::Waiting(at) {
                return Some(at);
            }
            self.timers.pop();
        }
        None
    }

    /// Reports a page fetch the frontier ordered; frees the host's slot.
    pub fn fetched(&mut self, url: &Url, now_ms: u64, outcome: FetchOutcome) {
        let Some(url) = canonical(url.clone()) else {
            self.stats.unexpected_reports += 1;
            return;
        };
        let Some(Seen::InFlight { priority, seq }) = self.seen.get(url.as_str()).copied() else {
            self.stats.unexpected_reports += 1;
            return;
        };
        let Some(&id) = self.host_ids.get(&host_key(&url)) else {
            self.stats.unexpected_reports += 1;
            return;
        };
        let host = &mut self.hosts[id];
        host.in_flight = host.in_flight.saturating_sub(1);
        self.stats.in_flight = self.stats.in_flight.saturating_sub(1);
        match outcome {
            FetchOutcome::Done | FetchOutcome::Failed => {
                if outcome == FetchOutcome::Done {
                    self.stats.done += 1;
                } else {
                    self.stats.failed += 1;
                }
                self.seen
                    .insert(url.as_str().into(), Seen::Fetched { at: now_ms });
            }
            FetchOutcome::Throttled { retry_after_ms } => {
                self.stats.throttled += 1;
                host.next_start = host.next_start.max(now_ms.saturating_add(retry_after_ms));
                self.seen.insert(url.as_str().into(), Seen::Queued);
                self.hosts[id].queue.push(Entry { priority, seq, url });
                self.stats.queued += 1;
            }
        }
        self.reschedule(id, now_ms);
    }

    /// Reports the robots.txt fetch of `host` (a key from a [`FetchOrder::Robots`]).
    pub fn robots_fetched(&mut self, host: &str, outcome: RobotsOutcome, now_ms: u64) {
        let Some(&id) = self.host_ids.get(host) else {
            self.stats.unexpected_reports += 1;
            return;
        };
        let h = &mut self.hosts[id];
        if !matches!(h.robots, RobotsState::Fetching) {
            self.stats.unexpected_reports += 1;
            return;
        }
        h.in_flight = h.in_flight.saturating_sub(1);
        self.stats.in_flight = self.stats.in_flight.saturating_sub(1);
        h.robots = match outcome {
            RobotsOutcome::Found(robots) => {
                self.stats.robots_found += 1;
                RobotsState::Known {
                    robots,
                    until: now_ms.saturating_add(self.config.robots_ttl_ms),
                }
            }
            RobotsOutcome::Unavailable => {
                self.stats.robots_unavailable += 1;
                RobotsState::Known {
                    robots: Robots::allow_all(),
                    until: now_ms.saturating_add(self.config.robots_ttl_ms),
                }
            }
            RobotsOutcome::Unreachable => {
                self.stats.robots_unreachable += 1;
                RobotsState::Blocked {
                    until: now_ms.saturating_add(self.config.robots_retry_ms),
                }
            }
            RobotsOutcome::Refused => {
                self.stats.robots_refused += 1;
                let dropped = std::mem::take(&mut h.queue);
                self.stats.queued -= dropped.len();
                self.stats.address_refused += dropped.len() as u64;
                for entry in dropped {
                    self.seen.remove(entry.url.as_str());
                }
                RobotsState::Refused
            }
        };
        self.reschedule(id, now_ms);
    }

    /// Restores knowledge after a restart: `url` was fetched at `at_ms`, so `push` refuses it
    /// within the refetch window. A URL queued or in flight is left alone.
    pub fn mark_fetched(&mut self, url: &Url, at_ms: u64) {
        let Some(url) = canonical(url.clone()) else {
            return;
        };
        let seen = self
            .seen
            .entry(url.as_str().into())
            .or_insert(Seen::Fetched { at: at_ms });
        if let Seen::Fetched { at } = seen {
            *at = (*at).max(at_ms);
        }
    }

    /// Whether `url` is queued or in flight.
    pub fn contains(&self, url: &Url) -> bool {
        matches!(
            self.seen.get(url.as_str()),
            Some(Seen::Queued | Seen::InFlight { .. })
        )
    }

    /// Whether `url` was ever pushed: queued, in flight or fetched.
    pub fn knows(&self, url: &Url) -> bool {
        self.seen.contains_key(url.as_str())
    }

    /// Whether nothing is queued and nothing is in flight.
    pub fn is_idle(&self) -> bool {
        self.stats.queued == 0 && self.stats.in_flight == 0
    }

    /// The counters.
    pub fn stats(&self) -> FrontierStats {
        FrontierStats {
            hosts: self.hosts.len(),
            ..self.stats.clone()
        }
    }

    // -----------------------------------------------------------------------------------------

    fn host_id(&mut self, url: &Url) -> usize {
        let key = host_key(url);
        if let Some(&id) = self.host_ids.get(&key) {
            return id;
        }
        let id = self.hosts.len();
        self.hosts.push(Host {
            key: key.clone(),
            sample: url.clone(),
            queue: BinaryHeap::new(),
            in_flight: 0,
            next_start: 0,
            robots: RobotsState::Unknown,
            sched: Sched::Idle,
        });
        self.host_ids.insert(key, id);
        id
    }

    fn enqueue(&mut self, id: usize, url: Url, priority: f64) {
        self.seq += 1;
        self.hosts[id].queue.push(Entry {
            priority,
            seq: self.seq,
            url,
        });
        self.stats.queued += 1;
    }

    /// Puts the host where it belongs now.
    fn reschedule(&mut self, id: usize, now_ms: u64) {
        let max = self.config.max_in_flight_per_host;
        let host = &mut self.hosts[id];
        let Some(top) = host.queue.peek() else {
            host.sched = Sched::Idle;
            return;
        };
        let top = rank(top.priority, top.seq);
        let blocked_until = match host.robots {
            RobotsState::Fetching => {
                host.sched = Sched::Idle;
                return;
            }
            RobotsState::Blocked { until } => until,
            _ => 0,
        };
        if host.in_flight >= max {
            host.sched = Sched::Idle;
            return;
        }
        let at = host.next_start.max(blocked_until);
        if now_ms < at {
            if host.sched != Sched::Waiting(at) {
                host.sched = Sched::Waiting(at);
                self.timers.push(Reverse((at, id)));
            }
            return;
        }
        if host.sched != Sched::Ready(top.1 .0) {
            host.sched = Sched::Ready(top.1 .0);
            self.ready.push((top, id));
        }
    }

    /// Moves hosts whose time has come from the timers to the ready heap.
    fn wake(&mut self, now_ms: u64) {
        while let Some(&Reverse((at, id))) = self.timers.peek() {
            if at > now_ms {
                break;
            }
            self.timers.pop();
            if self.hosts[id].sched == Sched::Waiting(at) {
                self.hosts[id].sched = Sched::Idle;
                self.reschedule(id, now_ms);
            }
        }
    }

    /// The host was at the top of the ready heap: its robots.txt order, or its best allowed
    /// URL (dropping disallowed ones). Reschedules it.
    fn take(&mut self, id: usize, now_ms: u64) -> Option<FetchOrder> {
        let interval = self.interval(id);
        let host = &mut self.hosts[id];
        let needs_robots = match &host.robots {
            RobotsState::Unknown | RobotsState::Blocked { .. } => true,
            RobotsState::Known { until, .. } => now_ms >= *until,
            RobotsState::Fetching | RobotsState::Refused => false,
        };
        if needs_robots {
            let url = robots_url(&host.sample)?;
            host.robots = RobotsState::Fetching;
            host.in_flight += 1;
            host.next_start = now_ms.saturating_add(interval);
            self.stats.robots_orders += 1;
            self.stats.in_flight += 1;
            return Some(FetchOrder::Robots {
                host: host.key.clone(),
                url,
            });
        }
        let RobotsState::Known { robots, .. } = &host.robots else {
            return None;
        };
        let mut order = None;
        while let Some(entry) = host.queue.pop() {
            self.stats.queued -= 1;
            if !robots.allowed(&entry.url) {
                self.stats.robots_disallowed += 1;
                self.seen.remove(entry.url.as_str());
                continue;
            }
            host.in_flight += 1;
            host.next_start = now_ms.saturating_add(interval);
            self.seen.insert(
                entry.url.as_str().into(),
                Seen::InFlight {
                    priority: entry.priority,
                    seq: entry.seq,
                },
            );
            self.stats.page_orders += 1;
            self.stats.in_flight += 1;
            order = Some(FetchOrder::Page {
                url: entry.url,
                priority: entry.priority,
                host: host.key.clone(),
            });
            break;
        }
        self.reschedule(id, now_ms);
        order
    }

    /// The least time between two starts on host `id`.
    fn interval(&self, id: usize) -> u64 {
        let delay = match &self.hosts[id].robots {
            RobotsState::Known { robots, .. } => robots
                .crawl_delay_ms()
                .unwrap_or(0)
                .min(self.config.max_crawl_delay_ms),
            _ => 0,
        };
        self.config.min_interval_ms.max(delay)
    }

    /// `Some(0)` if a host in the ready heap may be fetched now.
    fn ready_now_hint(&mut self) -> Option<u64> {
        while let Some(&(rank, id)) = self.ready.peek() {
            let host = &self.hosts[id];
            if host.sched == Sched::Ready(rank.1 .0)
                && host.queue.peek().map(|e| e.seq) == Some(rank.1 .0)
            {
                return Some(0);
            }
            self.ready.pop();
        }
        None
    }
}
