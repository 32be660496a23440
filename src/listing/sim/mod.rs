//! The listing simulator: a discrete-event world of broadcasts with the facts of SPEC §1, the
//! scorer that compares a detector's events with its ground truth, and the oracle lower bound.
//!
//! The world is generated up front from a [`Scenario`] and a seed: reservations arrive as a
//! Poisson process whose rate follows the daily swing; each broadcast starts after a gap drawn
//! from the scenario's bands and ends at its frame, early, or after extensions, all counted
//! from its reservation to the millisecond. The listing at any time is every broadcast started
//! and not ended, sorted by reservation as its `pubDate` shows it, in whole seconds (newest
//! first, then the newer id). A read takes time: the page is rendered halfway through it, and may
//! fail or come back empty.

mod files;
mod oracle;
mod scenario;
mod score;

use std::cmp::Reverse;
use std::collections::{BTreeSet, BinaryHeap, HashMap};
use std::sync::Arc;

use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};

pub use files::{read_events, read_truth, truth_until};
pub use oracle::{lower_bound, LowerBound};
pub use scenario::{EmptyTotal, Ends, GapBand, PastEnd, Reads, Scenario, Starts, BUILT_IN};
pub use score::{run, run_restarted, score, Report, Reported, Restarts, Truth, Window};

use super::{Listed, Millis, PageView, ReadOutcome, ReadTime, HOUR, MINUTE, SECOND};

/// How a broadcast ends.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Ending {
    /// At the end of its first frame.
    Frame,
    /// Before the end of its first frame.
    Early,
    /// At the end of a later frame, after this many extensions.
    Extended(u32),
}

/// One simulated broadcast: the ground truth.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Broadcast {
    /// Its number; the listing shows `lv{number}`.
    pub number: u64,
    /// Reservation time, whole seconds (the reservation cut to its second): the sort key and
    /// the item's `pubDate`.
    pub key: Millis,
    /// Reservation time to the millisecond, which the listing does not show: the broadcast
    /// starts a gap after it, and its frame runs from it, so a frame ends up to a second after
    /// the boundary its `pubDate` gives.
    pub reserved: Millis,
    /// When it appears in the listing.
    pub start: Millis,
    /// When it leaves the listing.
    pub end: Millis,
    /// How it ends.
    pub ending: Ending,
}

impl Broadcast {
    /// The listing's id of a broadcast number.
    pub fn id_of(number: u64) -> String {
        format!("lv{number}")
    }

    /// The broadcast number behind a listing id, if it is one.
    pub fn number_of(id: &str) -> Option<u64> {
        id.strip_prefix("lv")?.parse().ok()
    }
}

/// The simulated listing.
#[derive(Debug)]
pub struct World {
    scenario: Scenario,
    broadcasts: Vec<Broadcast>,
    /// Indices into `broadcasts` by start, and by end.
    starts: Vec<usize>,
    ends: Vec<usize>,
    next_start: usize,
    next_end: usize,
    /// Each broadcast's rank among the starts (by its index in `broadcasts`): where
    /// [`Scenario::equals_in_start_order`], the order of equal keys.
    start_rank: Vec<u64>,
    /// Each live broadcast's place in the list: its key, newest first, then where the
    /// listing's order of equals puts it, then its number ([`World::place`]).
    live: BTreeSet<Place>,
    now: Millis,
    rng: SmallRng,
    link_base: Arc<str>,
    /// Pages in the listing's cache ([`Reads::cache_ms`]): when each was rendered, and how.
    cache: HashMap<u32, (Millis, Served)>,
    /// Behind a cache other readers keep full ([`Reads::cache_shared`]): when each page's
    /// copy is rendered next, soonest first.
    refreshes: BinaryHeap<Reverse<(Millis, u32)>>,
    /// The pages in `refreshes`: 1 to this.
    refreshed_pages: u32,
}

/// A live broadcast's place in the list: its key, newest first; where the order of equals puts
/// it ([`World::tie`]); its number.
type Place = (Reverse<Millis>, u64, u64);

/// The first broadcast number, so that ids look like the real ones.
const FIRST_NUMBER: u64 = 10_000_000;

/// Mixed into the seed of the generator that skips numbers ([`Scenario::unlisted_numbers`]).
const HOLES_STREAM: u64 = 0x6e75_6d62_6572_7321;

impl World {
    /// Generates the world from `t0 − (longest broadcast)` to `t0 + span`, and moves it to
    /// `t0`, when the listing is in its steady state.
    pub fn new(scenario: &Scenario, t0: Millis, span: Millis) -> World {
        let mut rng = SmallRng::seed_from_u64(scenario.seed);
        let frame = scenario.frame().max(1);
        let longest = (scenario.ends.max_hours * HOUR as f64) as Millis;
        let max_extensions = ((longest / frame) - 1).max(0) as u32;
        let peak = scenario
            .starts
            .peak_per_hour
            .max(scenario.starts.off_peak_per_hour);
        let mut broadcasts = Vec::new();
        let mut t = (t0 - longest - frame) as f64;
        let end = (t0 + span) as f64;
        let second = SECOND as f64;
        loop {
            // Thinning: candidates at the peak rate, kept with probability rate(t) / peak.
            t += -(1.0 - rng.random::<f64>()).ln() / peak * HOUR as f64;
            if t >= end {
                break;
            }
            if rng.random::<f64>() * peak > scenario.rate_at(t as Millis - t0) {
                continue;
            }
            let key = ((t / second).floor() * second) as Millis;
            let reserved = if scenario.whole_second_reservations {
                key
            } else {
                t.floor() as Millis
            };
            let start = reserved + gap(&scenario.gaps, &mut rng);
            let (end, ending) = ending(scenario, reserved, start, frame, max_extensions, &mut rng);
            broadcasts.push(Broadcast {
                number: 0,
                key,
                reserved,
                start,
                end,
                ending,
            });
        }
        let mut starts: Vec<usize> = (0..broadcasts.len()).collect();
        starts.sort_by_key(|&i| (broadcasts[i].start, i));
        number(&mut broadcasts, &starts, scenario);
        let mut ends = starts.clone();
        ends.sort_by_key(|&i| (broadcasts[i].end, i));
        let mut start_rank = vec![0; broadcasts.len()];
        for (rank, &i) in (0..).zip(&starts) {
            start_rank[i] = rank;
        }
        let mut world = World {
            scenario: scenario.clone(),
            broadcasts,
            starts,
            ends,
            start_rank,
            next_start: 0,
            next_end: 0,
            live: BTreeSet::new(),
            now: Millis::MIN,
            rng,
            link_base: Arc::from("https://live.nicovideo.jp/watch/"),
            cache: HashMap::new(),
            refreshes: BinaryHeap::new(),
            refreshed_pages: 0,
        };
        // Other readers have kept the cache full since a lifetime before `t0`.
        let cache = world.shared_cache();
        if cache > 0 {
            world.advance(t0 - cache);
        }
        world.advance(t0);
        world
    }

    /// The lifetime of a cache other readers keep full ([`Reads::cache_shared`]), or 0.
    fn shared_cache(&self) -> Millis {
        let reads = &self.scenario.reads;
        match reads.cache_shared {
            true => reads.cache_ms.round() as Millis,
            false => 0,
        }
    }

    /// Behind a cache other readers keep full: renders every page whose copy expires by `t`
    /// again as it expires, and takes the pages the list has grown into (and two more) into
    /// the round, each first rendered at a phase of its own within the cache's lifetime.
    fn refresh_shared(&mut self, t: Millis) {
        let cache = self.shared_cache();
        // Nor before the world has started (it starts a lifetime before its `t0`).
        if cache <= 0 || self.now == Millis::MIN {
            return;
        }
        loop {
            let per_page = self.scenario.per_page.max(1) as usize;
            let pages = (self.live.len().div_ceil(per_page) + 2) as u32;
            while self.refreshed_pages < pages {
                self.refreshed_pages += 1;
                let page = self.refreshed_pages;
                // Spread over the lifetime, the same in every run of the scenario.
                let phase =
                    (u64::from(page).wrapping_mul(0x9e37_79b9_7f4a_7c15) >> 40) as Millis % cache;
                self.refreshes.push(Reverse((self.now + phase, page)));
            }
            let Some(&Reverse((at, page))) = self.refreshes.peek() else {
                return;
            };
            if at > t {
                return;
            }
            self.refreshes.pop();
            self.move_to(at);
            let served = self.page_served(page);
            self.cache.insert(page, (at, served));
            self.refreshes.push(Reverse((at + cache, page)));
        }
    }

    /// Sets the prefix of item links (the id is appended).
    pub fn with_link_base(mut self, base: &str) -> World {
        self.link_base = Arc::from(base);
        self
    }

    /// The ground truth: every broadcast, in reservation order.
    pub fn broadcasts(&self) -> &[Broadcast] {
        &self.broadcasts
    }

    /// The broadcast with this number.
    pub fn broadcast(&self, number: u64) -> Option<&Broadcast> {
        self.index_of(number).map(|index| &self.broadcasts[index])
    }

    /// The index in `broadcasts` of the broadcast with this number.
    fn index_of(&self, number: u64) -> Option<usize> {
        if self.scenario.numbered_at_start {
            let at = self
                .starts
                .binary_search_by_key(&number, |&i| self.broadcasts[i].number)
                .ok()?;
            Some(self.starts[at])
        } else {
            self.broadcasts
                .binary_search_by_key(&number, |broadcast| broadcast.number)
                .ok()
        }
    }

    /// The scenario the world was made from.
    pub fn scenario(&self) -> &Scenario {
        &self.scenario
    }

    /// Broadcasts on air now.
    pub fn on_air(&self) -> usize {
        self.live.len()
    }

    /// The world's clock.
    pub fn now(&self) -> Millis {
        self.now
    }

    /// Moves the world to `t`: every start and end up to it happens (and, behind a cache
    /// other readers keep full, every page's copy is rendered as it expires). Time never goes
    /// back.
    pub fn advance(&mut self, t: Millis) {
        self.refresh_shared(t);
        self.move_to(t);
    }

    /// [`World::advance`] but for the cache.
    fn move_to(&mut self, t: Millis) {
        if t <= self.now {
            return;
        }
        while let Some(&i) = self.starts.get(self.next_start) {
            let broadcast = &self.broadcasts[i];
            if broadcast.start > t {
                break;
            }
            if broadcast.end > t {
                self.live.insert(self.place(i));
            }
            self.next_start += 1;
        }
        while let Some(&i) = self.ends.get(self.next_end) {
            if self.broadcasts[i].end > t {
                break;
            }
            self.live.remove(&self.place(i));
            self.next_end += 1;
        }
        self.now = t;
    }

    /// Where the broadcast at `index` sorts in the list.
    fn place(&self, index: usize) -> Place {
        let broadcast = &self.broadcasts[index];
        (Reverse(broadcast.key), self.tie(index), broadcast.number)
    }

    /// Where the listing's order of equals puts the broadcast at `index`: larger number
    /// first, smaller with `smaller_number_first`, or as they started with
    /// `equals_in_start_order`.
    fn tie(&self, index: usize) -> u64 {
        let number = self.broadcasts[index].number;
        if self.scenario.equals_in_start_order {
            self.start_rank[index]
        } else if self.scenario.smaller_number_first {
            number
        } else {
            u64::MAX - number
        }
    }

    /// The 0-based position in the listing now of the broadcast with this number (where it
    /// is, or where it would be); 0 for a number the world does not have.
    pub fn position(&self, number: u64) -> usize {
        self.index_of(number)
            .map_or(0, |index| self.live.range(..self.place(index)).count())
    }

    /// Page `page` (1-based) as the listing shows it now, without faults.
    pub fn page(&self, page: u32) -> PageView {
        let per_page = self.scenario.per_page as usize;
        let skip = (page.max(1) as usize - 1).saturating_mul(per_page);
        let items = self
            .live
            .iter()
            .skip(skip)
            .take(per_page)
            .map(|&(Reverse(key), _, number)| self.listed(key, number))
            .collect();
        PageView {
            page: page.max(1),
            total: self.total(),
            items,
            age: 0,
        }
    }

    /// The total on air, as the channel gives it (if it does).
    fn total(&self) -> Option<u64> {
        let reads = &self.scenario.reads;
        if !reads.total {
            return None;
        }
        let lag = reads.total_lag_ms.round() as Millis;
        if lag <= 0 {
            return Some(self.live.len() as u64);
        }
        // The count on air `lag` ago (a cached total).
        let then = self.now.saturating_sub(lag);
        let on_air = self.broadcasts.iter();
        Some(on_air.filter(|b| b.start <= then && then < b.end).count() as u64)
    }

    /// A broadcast as the listing shows it: `lv{number}`, its title and link.
    pub fn item(&self, broadcast: &Broadcast) -> Listed {
        self.listed(broadcast.key, broadcast.number)
    }

    fn listed(&self, key: Millis, number: u64) -> Listed {
        let id = Broadcast::id_of(number);
        Listed {
            title: Arc::from(format!("Broadcast {number}")),
            link: Arc::from(format!("{}{id}", self.link_base)),
            id: Arc::from(id),
            key,
        }
    }

    /// A read of `page` requested at `at` by a reader that gives up after `timeout`: returns
    /// the outcome and when it completes. The page is rendered halfway through the read; the
    /// world moves on to it. A read that takes longer than `timeout` (a hung one, or one whose
    /// latency exceeds it) fails at `at + timeout`.
    pub fn read(&mut self, page: u32, at: Millis, timeout: Millis) -> (ReadOutcome, Millis) {
        let latency = self.latency();
        self.answer(page, at, latency, timeout)
    }

    /// How long the next read takes, as the scenario's reads do: a read of
    /// [`World::read`] split in two, for reads that overlap. The world renders it at `at +
    /// latency / 2` with [`World::answer`], which must come in the order of those times.
    pub fn latency(&mut self) -> Millis {
        let reads = &self.scenario.reads;
        self.rng
            .random_range(reads.latency_min_ms..=reads.latency_max_ms)
            .round() as Millis
    }

    /// The outcome of a read of `page` started at `at` that takes `latency` (from
    /// [`World::latency`]), and when it completes; see [`World::read`].
    pub fn answer(
        &mut self,
        page: u32,
        at: Millis,
        latency: Millis,
        timeout: Millis,
    ) -> (ReadOutcome, Millis) {
        let (outcome, took) = match self.serve(page, at + latency / 2) {
            Served::Page(view) => (ReadOutcome::Page(view), latency),
            Served::NotFound(page) => (ReadOutcome::not_found(page), latency),
            Served::Failed => (ReadOutcome::Failed, latency),
            Served::Hung(held) => (ReadOutcome::Failed, held),
        };
        if took > timeout {
            (ReadOutcome::Failed, at + timeout.max(1))
        } else {
            (outcome, at + took.max(1))
        }
    }

    /// The page as the listing serves it at `at` (the world moves on to it), with the
    /// scenario's faults: a failed read, an empty page under the true total, or a hung read;
    /// a page past the end is empty, not found, or the last or first page again (`[reads]
    /// past_end`). Behind a cache (`[reads] cache_ms`) a page is served as this rendered it
    /// first, until the cache lets it go.
    pub fn serve(&mut self, page: u32, at: Millis) -> Served {
        self.advance(at);
        let cache = self.scenario.reads.cache_ms.round() as Millis;
        if cache <= 0 {
            return self.render(page);
        }
        let shared = self.scenario.reads.cache_shared;
        if shared {
            // The read's own faults, then the copy the other readers keep.
            if let Some(fault) = self.fault(page) {
                return fault;
            }
        }
        let kept = self
            .cache
            .get(&page)
            .filter(|(rendered, _)| at - rendered < cache);
        if let Some((rendered, served)) = kept {
            let mut served = served.clone();
            // A cache that says how long it kept the page does so in whole seconds.
            if let (Served::Page(view), true) = (&mut served, self.scenario.reads.cache_age) {
                view.age = (at - rendered) / SECOND * SECOND;
            }
            return served;
        }
        let served = match shared {
            true => self.page_served(page),
            false => self.render(page),
        };
        if matches!(served, Served::Page(_) | Served::NotFound(_)) {
            self.cache.insert(page, (at, served.clone()));
        }
        served
    }

    /// The page as the listing renders it now, with the scenario's faults ([`World::serve`]
    /// without the cache).
    fn render(&mut self, page: u32) -> Served {
        self.fault(page).unwrap_or_else(|| self.page_served(page))
    }

    /// The read's fault, if the scenario's odds give it one: a failed read, an empty page,
    /// or a hung read.
    fn fault(&mut self, page: u32) -> Option<Served> {
        let reads = &self.scenario.reads;
        let (failed, empty, hung) = (reads.failed, reads.empty, reads.hung);
        let hang = reads.hang_ms.round() as Millis;
        let fault: f64 = self.rng.random();
        if fault < failed {
            Some(Served::Failed)
        } else if fault < failed + empty {
            let total = match reads.empty_total {
                EmptyTotal::Actual => self.total(),
                EmptyTotal::Zero => self.total().map(|_| 0),
                EmptyTotal::None => None,
            };
            Some(Served::Page(ReadOutcome::empty(page, total)))
        } else if fault < failed + empty + hung {
            Some(Served::Hung(hang))
        } else {
            None
        }
    }

    /// The page as the listing renders it now without a fault; past the end of the list,
    /// as the scenario's `past_end` says.
    fn page_served(&self, page: u32) -> Served {
        let view = self.page(page);
        if !view.items.is_empty() || page == 1 {
            return Served::Page(view);
        }
        match self.scenario.reads.past_end {
            PastEnd::Empty => Served::Page(view),
            PastEnd::NotFound => Served::NotFound(page),
            PastEnd::LastPage => {
                let per_page = u64::from(self.scenario.per_page.max(1));
                let last = (self.live.len() as u64).div_ceil(per_page).max(1);
                Served::Page(PageView {
                    page,
                    ..self.page(u32::try_from(last).unwrap_or(u32::MAX))
                })
            }
            PastEnd::FirstPage => Served::Page(PageView {
                page,
                ..self.page(1)
            }),
        }
    }
}

/// The reads out on a [`World`], for a caller that lets them overlap: each is rendered
/// halfway through its latency, in the order of those times, and answered at its end. As the
/// daemon does, a listing whose answered reads are slow is given longer before a read fails
/// ([`ReadTime::timeout`]).
#[derive(Debug, Default)]
pub struct ReadsOut {
    asked: Vec<Asked>,
    /// Rendered, waiting for their end: (answered at, page, outcome).
    rendered: Vec<(Millis, u32, ReadOutcome)>,
    answered: ReadTime,
}

/// A read the world has not rendered yet.
#[derive(Debug)]
struct Asked {
    page: u32,
    at: Millis,
    latency: Millis,
    timeout: Millis,
}

impl Asked {
    fn renders_at(&self) -> Millis {
        self.at + self.latency / 2
    }
}

impl ReadsOut {
    /// Starts a read of `page` at `at`, failed after `read_timeout` (or longer, where reads
    /// are slow).
    pub fn ask(&mut self, world: &mut World, page: u32, at: Millis, read_timeout: Millis) {
        self.asked.push(Asked {
            page,
            at,
            latency: world.latency(),
            timeout: self.answered.timeout(read_timeout),
        });
    }

    /// The next read answered by `now`: (when, page, outcome). Every read due to be rendered
    /// by then is rendered first, in order.
    pub fn answer(&mut self, world: &mut World, now: Millis) -> Option<(Millis, u32, ReadOutcome)> {
        while let Some(next) =
            first_by(&self.asked, Asked::renders_at).filter(|&i| self.asked[i].renders_at() <= now)
        {
            let read = self.asked.remove(next);
            let rendered = read.renders_at();
            let (outcome, done) = world.answer(read.page, read.at, read.latency, read.timeout);
            // A read held shorter than half its latency still ends after it rendered.
            let done = done.max(rendered);
            if done - read.at < read.timeout {
                self.answered.observe(done - read.at);
            }
            self.rendered.push((done, read.page, outcome));
        }
        let next =
            first_by(&self.rendered, |read| read.0).filter(|&i| self.rendered[i].0 <= now)?;
        Some(self.rendered.remove(next))
    }

    /// When the next read is rendered or answered.
    pub fn next_at(&self) -> Option<Millis> {
        (self.asked.iter().map(Asked::renders_at))
            .chain(self.rendered.iter().map(|read| read.0))
            .min()
    }

    /// Reads out.
    pub fn len(&self) -> usize {
        self.asked.len() + self.rendered.len()
    }

    /// Whether no read is out.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// The index of the element with the smallest `key`, the first of equals.
fn first_by<T>(items: &[T], key: impl Fn(&T) -> Millis) -> Option<usize> {
    (0..items.len()).min_by_key(|&i| (key(&items[i]), i))
}

/// What the listing does with one request.
#[derive(Debug, Clone, PartialEq)]
pub enum Served {
    /// It answers with this page.
    Page(PageView),
    /// It answers that this page, past the end of the list, does not exist.
    NotFound(u32),
    /// It answers with an error.
    Failed,
    /// It holds the request this long, then answers with an error.
    Hung(Millis),
}

/// Numbers the broadcasts in the order they were reserved, or, with
/// [`Scenario::numbered_at_start`], in the order they start (`starts`), skipping the share
/// [`Scenario::unlisted_numbers`] asks for.
fn number(broadcasts: &mut [Broadcast], starts: &[usize], scenario: &Scenario) {
    // The numbers skipped draw from a generator of their own, so that a world without holes
    // is the same world it was before the option.
    let mut holes = SmallRng::seed_from_u64(scenario.seed ^ HOLES_STREAM);
    let mut next = FIRST_NUMBER;
    let mut give = |broadcast: &mut Broadcast| {
        while holes.random::<f64>() < scenario.unlisted_numbers {
            next += 1;
        }
        broadcast.number = next;
        next += 1;
    };
    if scenario.numbered_at_start {
        starts.iter().for_each(|&i| give(&mut broadcasts[i]));
    } else {
        broadcasts.iter_mut().for_each(give);
    }
}

fn gap(bands: &[GapBand], rng: &mut SmallRng) -> Millis {
    let mut pick: f64 = rng.random();
    let band = bands
        .iter()
        .find(|band| {
            pick -= band.share;
            pick < 0.0
        })
        .or(bands.last());
    band.map_or(0, |band| {
        let seconds = if band.max_seconds > band.min_seconds {
            rng.random_range(band.min_seconds..band.max_seconds)
        } else {
            band.min_seconds
        };
        (seconds * SECOND as f64).round() as Millis
    })
}

fn ending(
    scenario: &Scenario,
    reserved: Millis,
    start: Millis,
    frame: Millis,
    max_extensions: u32,
    rng: &mut SmallRng,
) -> (Millis, Ending) {
    let ends = &scenario.ends;
    let first_frame = reserved + frame;
    let pick: f64 = rng.random();
    if pick < ends.early {
        let minutes = if ends.early_max_minutes > ends.early_min_minutes {
            rng.random_range(ends.early_min_minutes..ends.early_max_minutes)
        } else {
            ends.early_min_minutes
        };
        // At least a second on air, however compressed the scenario.
        let end = start + ((minutes * MINUTE as f64).round() as Millis).max(SECOND);
        if end < first_frame {
            return (end, Ending::Early);
        }
    } else if pick < ends.early + ends.extend && max_extensions > 0 {
        let mut extensions = 1;
        while extensions < max_extensions && rng.random::<f64>() < ends.extend_again {
            extensions += 1;
        }
        let boundary = reserved + frame * Millis::from(extensions + 1);
        return (boundary + late(ends, rng), Ending::Extended(extensions));
    }
    (
        (first_frame + late(ends, rng)).max(start + 1),
        Ending::Frame,
    )
}

/// How long a broadcast ending at a frame boundary stays listed past it. Draws nothing
/// when the scenario has no lateness, so that its worlds stay as they were.
fn late(ends: &Ends, rng: &mut SmallRng) -> Millis {
    if ends.late_max_seconds > 0.0 {
        (rng.random_range(0.0..ends.late_max_seconds) * SECOND as f64).round() as Millis
    } else {
        0
    }
}
