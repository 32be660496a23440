//! Live listings: On Air / Off Air detection within a read budget (SPEC §1).
//!
//! A *listing* is a paginated feed (`…/recent/rss?p=N`) of every broadcast on air, a fixed
//! number of items a page, newest sort key first. The sort key is the broadcast's reservation
//! time (the item's `pubDate`); a broadcast appears when it starts and disappears when it
//! ends, and its frame runs `frame` from the reservation, extended in steps of `frame`.
//!
//! Three strategies share one sans-IO interface, [`Pager`]:
//!
//! - [`naive`]: full scans at the budget, Off Air after two absences;
//! - [`seed`]: the seed's adaptive head read and tail comparison, as SPEC §1 writes them;
//! - [`ferret`]: ferret's own — proofs of absence from single page snapshots, reads aimed at
//!   the frame boundaries where broadcasts end, head sweeps and a budgeted sweep for deep
//!   insertions and early ends.
//!
//! The caller (the OnAirDetector actor, the simulator) asks [`Pager::poll_read`] which page to
//! read (again, while it names pages: a strategy may read more than one at a time), performs
//! each read, hands its outcome to [`Pager::handle_read`], drains
//! [`Pager::poll_event`] and sleeps until [`Pager::poll_timeout`]. Time is a virtual clock in
//! milliseconds ([`Millis`]); nothing here reads the real one.
//!
//! [`sim`] holds the listing simulator, scenarios, the scorer and the oracle lower bound
//! behind `ferret bench onair`.

mod book;
mod cap;
pub mod ferret;
pub mod naive;
mod page;
mod second;
pub mod seed;
pub mod sim;
mod stale;
mod ties;
mod walk;

use std::sync::Arc;

use serde::{Deserialize, Serialize};

pub use book::{Book, BookEntry};
pub use ferret::UnseenSerials;
pub use page::{rfc3339, view_from_feed, CutOff, EventRecord};
pub use second::OnTheSecond;
pub use stale::PageCache;
pub use ties::TieOrder;

/// A point or span of (virtual) time in milliseconds; points count from the Unix epoch.
pub type Millis = i64;
/// One second in [`Millis`].
pub const SECOND: Millis = 1_000;
/// One minute in [`Millis`].
pub const MINUTE: Millis = 60 * SECOND;
/// One hour in [`Millis`].
pub const HOUR: Millis = 60 * MINUTE;

/// One broadcast as a listing page shows it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Listed {
    /// The item's guid (or the id the feed parser derived).
    pub id: Arc<str>,
    /// The sort key: the reservation time, from `pubDate`.
    pub key: Millis,
    /// The item's title.
    pub title: Arc<str>,
    /// The item's link.
    pub link: Arc<str>,
}

/// What one read of a listing page returned.
#[derive(Debug, Clone, PartialEq)]
pub struct PageView {
    /// The page number read (1-based).
    pub page: u32,
    /// The channel's total of broadcasts on air (`nicolive:total_count`), when it has one.
    pub total: Option<u64>,
    /// The items in the order the page lists them.
    pub items: Vec<Listed>,
    /// How long a cache in front of the listing had kept this answer, milliseconds: the
    /// response's HTTP `Age` header, which counts whole seconds (0 when the response had
    /// none: taken as rendered during the read).
    pub age: Millis,
}

impl PageView {
    /// Whether `other` answers with the same page: the same items and total, whatever the
    /// answers' ages.
    pub fn same_answer(&self, other: &PageView) -> bool {
        self.page == other.page && self.total == other.total && self.items == other.items
    }
}

/// The outcome of one page read.
#[derive(Debug, Clone, PartialEq)]
pub enum ReadOutcome {
    /// The page was fetched and parsed.
    Page(PageView),
    /// The read failed (network, status, unparseable); the page says nothing.
    Failed,
}

impl ReadOutcome {
    /// A page with no items.
    pub fn empty(page: u32, total: Option<u64>) -> PageView {
        PageView {
            page,
            total,
            items: Vec::new(),
            age: 0,
        }
    }

    /// A page the listing says does not exist (HTTP 404 or 410), as many a paginator answers
    /// past the last page: an empty page without a total. It proves what an empty page
    /// proves without a total, no more: the end of the list only after the page before it was
    /// read short twice alike, and nothing at all when it comes in place of a page that has
    /// items (the empty page's rules guard against that fault already).
    pub fn not_found(page: u32) -> ReadOutcome {
        ReadOutcome::Page(ReadOutcome::empty(page, None))
    }
}

/// What a detector reports.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum EventKind {
    /// The broadcast was seen on air for the first time.
    OnAir,
    /// The broadcast is proven to have left the listing.
    OffAir,
}

/// One detection.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Event {
    /// On Air or Off Air.
    pub kind: EventKind,
    /// The broadcast as last seen.
    pub item: Listed,
    /// Detection time: when the read that proved it completed.
    pub at: Millis,
}

/// Which strategy a detector runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Strategy {
    /// Full scans at the budget; Off Air after two absences.
    Naive,
    /// SPEC §1 as written.
    Seed,
    /// ferret's own strategy.
    Ferret,
}

impl Strategy {
    /// Every strategy, in the order tables show them.
    pub const ALL: [Strategy; 3] = [Strategy::Naive, Strategy::Seed, Strategy::Ferret];

    /// The strategy's name in config and tables.
    pub fn name(self) -> &'static str {
        match self {
            Strategy::Naive => "naive",
            Strategy::Seed => "seed",
            Strategy::Ferret => "ferret",
        }
    }
}

/// Every duration, threshold and count of a listing detector.
#[derive(Debug, Clone, PartialEq)]
pub struct Params {
    /// Items a page until page 1 shows the real figure.
    pub per_page: u32,
    /// A broadcast's frame from its reservation; extensions add whole frames.
    pub frame: Millis,
    /// A broadcast that ended at a frame boundary must be reported within this.
    pub grace: Millis,
    /// Broadcasts starting this long after their reservation may be missed.
    pub tolerance: Millis,
    /// Reads an hour the detector may spend.
    pub budget_per_hour: u32,
    /// The shortest time between the starts of two reads.
    pub min_interval: Millis,
    /// Seed: duplicate ratio `Id/It` at which the head read may stop.
    pub dup_threshold: f64,
    /// Seed: pages read as insurance once the ratio reached the threshold.
    pub look_ahead: u32,
    /// Ferret: how often the head sweep starts at page 1.
    pub head_interval: Millis,
    /// Ferret: the deepest page of a head sweep (it stops earlier at a page of known items).
    pub head_pages: u32,
    /// Ferret: where reads are so slow that one reader spending the budget would hardly ever
    /// be idle, the head sweep reads on a lane of its own, alongside the other reads (at
    /// most two outstanding, one of each), so that the head's reads do not take the reader
    /// from the rest, nor a slow read in flight hold back the head. Off: one read at a time
    /// however slow, and no read starts less than a mean read before the head is due.
    pub head_lane: bool,
    /// Ferret: where the ids are serials handed out in the order of reservation (Niconico's
    /// `lv…`), rounds of the sweep read only the pages where a serial not seen can be,
    /// instead of every page of their region (see the ferret strategy's `serials`). The
    /// pages themselves turn it off when their ids are not such serials.
    pub serial_rounds: bool,
    /// Ferret: how long after a frame boundary a broadcast is first worth checking (the site
    /// needs a moment to drop it).
    pub settle: Millis,
    /// Ferret: how long a passed boundary may wait for its neighbours, so that one read
    /// settles a whole page of them. Past `grace / 2` a boundary read goes before a head
    /// sweep that waits, and past three quarters of the grace before one that is due.
    pub batch_wait: Millis,
    /// Ferret: share of the budget set aside for the sweep; head and boundary reads spend the
    /// rest, and the sweep also takes what they leave above `reserve`.
    pub sweep_share: f64,
    /// Ferret: the frame ends' Off Air latency the detector aims at, by moving budget between
    /// the sweep and the frame-boundary reads (`sweep_share` is where it starts); 0 leaves the
    /// share where it is. See the ferret strategy's module documentation.
    pub off_air_target: Millis,
    /// Ferret: reads kept back for head and frame-boundary reads before the sweep may use
    /// their share.
    pub reserve: u32,
    /// The most reads the budget lets accumulate while idle.
    pub burst: u32,
    /// A read not answered within this has failed (the shell gives up on it; the simulator's
    /// hung reads end here). Scaled with the frame, but never under [`MIN_READ_TIMEOUT`].
    pub read_timeout: Millis,
}

/// The shortest default read timeout: a read from a time-compressed listing on a busy
/// machine may take a few hundred milliseconds however fast the listing runs.
pub const MIN_READ_TIMEOUT: Millis = SECOND;

impl Default for Params {
    fn default() -> Self {
        Params {
            per_page: 18,
            frame: 30 * MINUTE,
            grace: 5 * MINUTE,
            tolerance: 5 * MINUTE,
            budget_per_hour: 900,
            min_interval: SECOND,
            dup_threshold: 0.5,
            look_ahead: 1,
            head_interval: 19 * SECOND,
            head_pages: 2,
            head_lane: true,
            serial_rounds: true,
            settle: 5 * SECOND,
            batch_wait: 75 * SECOND,
            sweep_share: 0.27,
            off_air_target: 110 * SECOND,
            reserve: 3,
            burst: 8,
            read_timeout: 10 * SECOND,
        }
    }
}

impl Params {
    /// The same listing on a clock `factor` times faster: every duration divided by `factor`,
    /// the budget multiplied by it.
    pub fn compressed(&self, factor: u32) -> Params {
        self.scaled(1, Millis::from(factor.max(1)))
    }

    /// Every duration multiplied by `num / den` (a duration of 0 that turns something off
    /// stays 0), the budget divided by it (the same reads a frame), the counts and shares
    /// unchanged; the read timeout never under [`MIN_READ_TIMEOUT`].
    fn scaled(&self, num: Millis, den: Millis) -> Params {
        let scale = |t: Millis| (t * num / den).max(1);
        let budget = f64::from(self.budget_per_hour) * den as f64 / num as f64;
        Params {
            frame: scale(self.frame),
            grace: scale(self.grace),
            tolerance: scale(self.tolerance),
            budget_per_hour: budget.round().clamp(0.0, f64::from(u32::MAX)) as u32,
            min_interval: scale(self.min_interval),
            head_interval: scale(self.head_interval),
            settle: scale(self.settle),
            batch_wait: scale(self.batch_wait),
            off_air_target: if self.off_air_target == 0 {
                0
            } else {
                scale(self.off_air_target)
            },
            read_timeout: scale(self.read_timeout).max(MIN_READ_TIMEOUT),
            ..self.clone()
        }
    }

    /// An hour of the listing's own clock: two frames. A listing run time-compressed has
    /// shorter hours, and its budget is counted over them.
    pub fn listing_hour(&self) -> Millis {
        2 * self.frame.max(1)
    }

    /// The defaults for a listing whose frame is `frame`: every duration scaled by
    /// `frame / 30 min` and the budget by its inverse, the counts unchanged. A listing run 20
    /// times faster (frame = 90 s) keeps its detector's proportions: the same reads a frame.
    pub fn for_frame(frame: Millis) -> Params {
        let defaults = Params::default();
        defaults.scaled(frame.max(1), defaults.frame)
    }

    /// How long to leave a listing unread after it answered `429 Too Many Requests`: the wait
    /// its `Retry-After` asked for (a head interval without one), but never more than half
    /// the grace, so that a listing that asks for an hour still has its frame ends read
    /// within the grace.
    pub fn throttled_wait(&self, asked: Option<std::time::Duration>) -> Millis {
        asked
            .map_or(self.head_interval, |asked| {
                Millis::try_from(asked.as_millis()).unwrap_or(Millis::MAX)
            })
            .min(self.grace / 2)
    }
}

/// How long reads take, from the latest: running mean and mean absolute deviation (weight
/// 1 / [`NEWEST_WEIGHT`] for the newest).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ReadTime {
    mean: Millis,
    deviation: Millis,
    /// Reads observed, up to [`READS_TO_SETTLE`].
    observed: u32,
}

/// [`ReadTime`] moves by one in this many of the difference to the newest read.
const NEWEST_WEIGHT: Millis = 8;

/// Reads after which [`ReadTime`] stands for what reads take: as many as the weight of the
/// newest takes to wash out the first, which alone gave the mean with no deviation.
const READS_TO_SETTLE: u32 = NEWEST_WEIGHT as u32;

/// A listing whose answered reads take long is given this many times as long before a read
/// counts as failed.
const SLOW_READ_MARGIN: Millis = 4;

impl ReadTime {
    /// A read that took `took`.
    pub fn observe(&mut self, took: Millis) {
        let took = took.max(0);
        self.observed = (self.observed + 1).min(READS_TO_SETTLE);
        if self.mean == 0 && self.deviation == 0 {
            self.mean = took;
            return;
        }
        self.deviation += ((took - self.mean).abs() - self.deviation) / NEWEST_WEIGHT;
        self.mean += (took - self.mean) / NEWEST_WEIGHT;
    }

    /// Whether enough reads were observed for the figures to stand for the listing's.
    pub fn settled(&self) -> bool {
        self.observed >= READS_TO_SETTLE
    }

    /// The running mean.
    pub fn mean(&self) -> Millis {
        self.mean
    }

    /// A duration few reads exceed.
    pub fn long(&self) -> Millis {
        self.mean + 2 * self.deviation
    }

    /// How long the next read may take before it counts as failed, when this tracks the reads
    /// that were answered: `configured`, or four times [`ReadTime::long`] if that is longer, so
    /// that a listing that is slow rather than stuck (say, a time-compressed one whose reads
    /// keep their real duration) is not cut short.
    pub fn timeout(&self, configured: Millis) -> Millis {
        configured.max(SLOW_READ_MARGIN.saturating_mul(self.long()))
    }
}

/// The sans-IO interface of every listing strategy.
///
/// Each page [`Pager::poll_read`] returns is to be read at once, and answered with
/// [`Pager::handle_read`] naming the page. The caller may ask again before it has answered:
/// a strategy may want more than one read outstanding (ferret reads its head alongside its
/// other reads; see [`Params::head_lane`]), and returns `None` while it wants no more. Two
/// reads outstanding of the same page are taken to be answered in the order they were asked
/// for.
pub trait Pager: Send {
    /// The strategy's name.
    fn name(&self) -> &'static str;
    /// The page to read now, if the strategy wants one and the budget allows it.
    fn poll_read(&mut self, now: Millis) -> Option<u32>;
    /// The outcome of a read of `page` that [`Pager::poll_read`] asked for, completed at
    /// `now`.
    fn handle_read(&mut self, now: Millis, page: u32, outcome: ReadOutcome);
    /// The next detection, if any.
    fn poll_event(&mut self) -> Option<Event>;
    /// When [`Pager::poll_read`] may next have something to do.
    fn poll_timeout(&self) -> Option<Millis>;
    /// The broadcasts believed on air.
    fn book(&self) -> &Book;
    /// The share of the budget the strategy spends on sweeping the list for starts below the
    /// head, when it has one (ferret's, steered by its frame ends' lateness).
    fn sweep_share(&self) -> Option<f64> {
        None
    }
    /// The most reads the strategy wants outstanding at once now (ferret's head lane; see
    /// [`Params::head_lane`]).
    fn lanes(&self) -> usize {
        1
    }
    /// What the detector has learnt of its listing beyond its book, for the store to keep
    /// with it (ferret's sweep; the other strategies learn nothing a restart would lose).
    fn memory(&self) -> Option<Memory> {
        None
    }
}

/// What a ferret detector has learnt of its listing beyond its book, kept in the store so
/// that a restarted detector goes on where it stopped: where its sweep's rounds stood and what
/// the sweep had saved up. Restarted without it, the sweep started with nothing saved and no
/// round behind it: its first round came about five minutes after the restart, and reached
/// back no further than 2½ tolerances from then, so a deep insertion that started in the
/// minutes before the restart, below where the round under way had got to, was never seen
/// (the listings log, "What the sweep remembers").
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Memory {
    /// When the latest round of the sweep that covered its whole region started (a round
    /// still under way has covered nothing yet).
    pub round_at: Option<Millis>,
    /// The sweep's share of the budget, as the detector's lateness steered it.
    pub sweep_share: f64,
    /// When the sweep's bucket was empty, had no read been taken since: its tokens count from
    /// there. `None` for a detector that has not read yet; resumed with it, the bucket is
    /// drained at the first read, as a new detector's is.
    pub sweep_empty_at: Option<Millis>,
    /// The same for the main bucket (the head's and the boundary reads'); `None`: full.
    /// Resumed full, a detector restarted every 20 minutes spent its burst at each restart
    /// on top of the budget, and the cap over the hour then held back reads, the head's
    /// among them (the listings log, "The main bucket across a restart").
    pub budget_empty_at: Option<Millis>,
    /// A listing without a total (or whose total is set aside): where its pages last showed
    /// the end of the list, less the book's broadcasts on air then. Resumed without it, the
    /// detector knew no end until a read happened on a short page: its sweep did not start,
    /// its boundary reads aimed by the pages they had read, and each full page it read put
    /// the end just below itself (restarted every 20 minutes, down 60 s, `peak2009` without
    /// a total missed 1,919 starts within the tolerance on seeds 1–64 and slipped 11,332
    /// frame ends; 41 and none with it).
    pub end_offset: Option<i64>,
    /// How long after its boundary the listing was seen to end a frame (0: never seen late).
    /// Resumed without it, a detector took a broadcast seen on air past its boundary's second
    /// as extended until a late one showed the lateness again (frames up to 10 s late,
    /// restarted every 20 minutes and down 60 s, seeds 1–32: 2 frame ends slipped in real
    /// time and 6 at ×20).
    pub frame_lateness: Millis,
    /// What the pages showed of whether the listing ends frames on the second its keys give.
    /// Resumed without it, a detector took frames to end anywhere in the second until 32
    /// sightings had shown it again, about 25 minutes at ×20 of a listing whose reservations
    /// fall on whole seconds, so one restarted more often than that never trusted it (the
    /// listings log, "The order among equals across a restart").
    pub frame_ends: OnTheSecond,
    /// How many of the serials a ferret detector counted went unseen (numbers never listed,
    /// [`ferret`]'s `Holes`). Resumed without it, a detector on a listing with holes counted
    /// anew and aimed its rounds at the gaps until it had counted enough: restarted every 20
    /// minutes and down 60 s, `scenarios/holes.toml` at ×20 (seeds 1–64) missed 119 starts
    /// within the tolerance, against 9 with it and 7 for rounds that read every page from
    /// the start.
    pub unseen_serials: UnseenSerials,
    /// What page 1's answers showed of a cache. Resumed without it, a detector behind a
    /// cache took the first answer to each page as rendered during its read, and a page the
    /// cache kept from before the restart proved a broadcast gone that a read had shown since
    /// (a cache of 20 or 30 s, restarted every 20 minutes, seeds 1–8 at both scales: 2 false
    /// Off Air in 32 runs; the listings log, "A repeat before the cache shows, and the cache
    /// across restarts"). It also waited minutes for the cache to show itself again, reading
    /// pages the cache still held.
    pub page_cache: PageCache,
}

/// Builds a detector of the given strategy, starting from `book` (empty, or restored from the
/// store), held to its budget over every hour of the listing's clock ([`Params::listing_hour`])
/// counting `reads`: when the reads of the hour before started (from the store after a
/// restart; none for a new listing). A ferret detector resumed with the `memory` it had
/// ([`Pager::memory`]) goes on with it.
pub fn pager(
    strategy: Strategy,
    params: Params,
    book: Book,
    reads: &[Millis],
    memory: Option<Memory>,
) -> Box<dyn Pager> {
    let strategy: Box<dyn Pager> = match strategy {
        Strategy::Naive => Box::new(naive::NaivePager::new(params.clone(), book)),
        Strategy::Seed => Box::new(seed::SeedPager::new(params.clone(), book)),
        Strategy::Ferret => {
            let ferret = ferret::FerretPager::new(params.clone(), book);
            match reads.iter().max() {
                Some(&last_read) => Box::new(ferret.resume(last_read, memory)),
                None => Box::new(ferret),
            }
        }
    };
    Box::new(cap::Capped::new(strategy, &params, reads))
}

/// A budget of reads an hour as a token bucket: one token every `HOUR / budget`, at most
/// `burst` kept.
#[derive(Debug, Clone)]
pub(crate) struct Budget {
    spacing: Millis,
    burst: Millis,
    /// The time at which the bucket was empty, had no read been taken since; tokens at `now`
    /// are `(now - empty_at) / spacing`, capped at `burst`.
    empty_at: Option<Millis>,
    min_interval: Millis,
    last_read: Option<Millis>,
}

impl Budget {
    pub(crate) fn new(params: &Params) -> Budget {
        Budget::with_rate(f64::from(params.budget_per_hour), params)
    }

    /// A bucket filling at `per_hour` reads an hour, with the burst and minimum interval of
    /// `params`.
    pub(crate) fn with_rate(per_hour: f64, params: &Params) -> Budget {
        Budget {
            spacing: spacing_for(per_hour),
            burst: Millis::from(params.burst.max(1)),
            empty_at: None,
            min_interval: params.min_interval,
            last_read: None,
        }
    }

    /// Fills at `per_hour` from `now` on, with the tokens it holds at `now` kept.
    pub(crate) fn set_rate(&mut self, now: Millis, per_hour: f64) {
        let spacing = spacing_for(per_hour);
        if self.empty_at.is_some() {
            let held = i128::from((now - self.empty_since(now)).max(0));
            let rescaled = held * i128::from(spacing) / i128::from(self.spacing);
            self.empty_at = Some(now - rescaled as Millis);
        }
        self.spacing = spacing;
    }

    /// The same bucket keeping up to `burst` reads.
    pub(crate) fn with_burst(mut self, burst: u32) -> Budget {
        self.burst = Millis::from(burst.max(1));
        self
    }

    /// Empties the bucket at `now` (it fills from there).
    pub(crate) fn drain(&mut self, now: Millis) {
        self.empty_at = Some(now);
    }

    /// When the bucket was empty, had no read been taken since (`None`: full, never drained).
    pub(crate) fn empty_at(&self) -> Option<Millis> {
        self.empty_at
    }

    /// The bucket as it was when [`Budget::empty_at`] said `empty_at`.
    pub(crate) fn restore(&mut self, empty_at: Option<Millis>) {
        self.empty_at = empty_at;
    }

    /// Records a read started at `now` paid from another bucket (for the minimum interval).
    pub(crate) fn note(&mut self, now: Millis) {
        self.last_read = Some(now);
    }

    /// The earliest time at which a read keeping `keep` tokens back is allowed.
    pub(crate) fn ready_at(&self, now: Millis, keep: u32) -> Millis {
        let need = 1 + Millis::from(keep);
        let by_interval = self.last_read.map_or(now, |last| last + self.min_interval);
        let by_tokens = match self.empty_at {
            None if need <= self.burst => now,
            None => Millis::MAX,
            Some(_) if need > self.burst => Millis::MAX,
            Some(empty_at) => empty_at + need * self.spacing,
        };
        by_interval.max(by_tokens).max(now)
    }

    /// Whether a read keeping `keep` tokens back may start at `now`.
    pub(crate) fn allows(&self, now: Millis, keep: u32) -> bool {
        self.ready_at(now, keep) <= now
    }

    /// Takes one token for a read starting at `now`.
    pub(crate) fn take(&mut self, now: Millis) {
        self.spend(now);
        self.last_read = Some(now);
    }

    /// Moves one token to `other` at `now` (no read is made): what one share leaves unused
    /// saves up in another. `other` keeps at most its burst.
    pub(crate) fn give(&mut self, other: &mut Budget, now: Millis) {
        self.spend(now);
        other.empty_at = Some((other.empty_since(now) - other.spacing).max(other.full_at(now)));
    }

    /// Removes one token at `now`. A full bucket has stopped filling: it counts from `burst`
    /// tokens at `now`. Otherwise one whole token goes and the part of the next one already
    /// accrued stays (recomputing from whole tokens would drop it: a read at a time that is
    /// not a token's arrival would lose up to one token).
    fn spend(&mut self, now: Millis) {
        self.empty_at = Some((self.empty_since(now) + self.spacing).min(now));
    }

    /// The empty time of a bucket that is full at `now`.
    fn full_at(&self, now: Millis) -> Millis {
        now - self.burst * self.spacing
    }

    /// `empty_at` as it counts at `now`: a full bucket (or a fresh one) counts from
    /// [`Budget::full_at`], since it stopped filling at its burst.
    fn empty_since(&self, now: Millis) -> Millis {
        let full_at = self.full_at(now);
        self.empty_at.map_or(full_at, |at| at.max(full_at))
    }
}

/// The time between two tokens of a bucket filling at `per_hour` reads an hour.
fn spacing_for(per_hour: f64) -> Millis {
    (HOUR as f64 / per_hour.max(1e-3)).round().max(1.0) as Millis
}

/// Items a page, as the pages show it: any page longer than believed raises it; a shorter
/// page 1 lowers it only when three page-1 reads in a row agree (a page truncated once must
/// not shrink it), each shown not to be the whole list: by a larger total, or without one
/// by a later read of a page below it with items. Before stop 41 only a total did, and the
/// detector sets aside a total that short pages disagree with: a listing of 15 a page watched
/// at the default of 18 took every page for the last, with its total or without, and an empty
/// page after one (a fault) proved every broadcast below it gone (the listings log, "A
/// smaller page").
#[derive(Debug, Clone)]
pub(crate) struct PageSize {
    per_page: u32,
    /// A length page 1 showed shorter than believed, and how many reads in a row showed it.
    shorter: Option<(u32, u32)>,
    /// Without a total: the length of the latest read of page 1, when it was short, until a
    /// page below it shows items.
    page_one: Option<u32>,
    /// The most items any page has shown.
    largest: u32,
}

impl PageSize {
    pub(crate) fn new(per_page: u32) -> PageSize {
        PageSize {
            per_page: per_page.max(1),
            shorter: None,
            page_one: None,
            largest: 0,
        }
    }

    pub(crate) fn get(&self) -> u32 {
        self.per_page
    }

    /// Whether `view` holds as many items as any page has shown: a page that is full only
    /// by a page size lowered since (which pages cut short for minutes lower, too) is not.
    pub(crate) fn whole(&self, view: &PageView) -> bool {
        view.items.len() as u32 >= self.largest.max(self.per_page)
    }

    pub(crate) fn observe(&mut self, view: &PageView) {
        let len = view.items.len() as u32;
        self.largest = self.largest.max(len);
        if len > self.per_page {
            self.per_page = len;
            self.shorter = None;
            self.page_one = None;
            return;
        }
        if view.page != 1 {
            if view.total.is_none() && len > 0 {
                if let Some(short) = self.page_one.take() {
                    self.shorter_again(short);
                }
            }
            return;
        }
        let short = len > 0 && len < self.per_page;
        self.page_one = None;
        match view.total {
            Some(total) if short && total > u64::from(len) => self.shorter_again(len),
            None if short => self.page_one = Some(len),
            // A full page 1, or the whole list.
            _ => self.shorter = None,
        }
    }

    /// Page 1 showed `len` items, fewer than believed, and the list went on below them.
    fn shorter_again(&mut self, len: u32) {
        self.shorter = match self.shorter {
            Some((seen, times)) if seen == len => Some((len, times + 1)),
            _ => Some((len, 1)),
        };
        if let Some((len, 3)) = self.shorter {
            self.per_page = len;
            self.shorter = None;
        }
    }
}

/// The range of sort keys, exclusive at both ends, inside which a page snapshot proves
/// absence: any broadcast on air with a key strictly inside it must be on the page.
///
/// The page must list its items newest first; one that does not proves nothing. Page 1 has no
/// upper end. A page that is short and whose length agrees with the channel's total is the
/// last one and has no lower end; a short page that disagrees (a truncated answer) proves only
/// between its own items, and so does a full page whatever the total says (a total that lags
/// the list may equal its end by chance).
pub fn absence_range(view: &PageView, per_page: u32) -> Option<(Millis, Millis)> {
    let first = view.items.first()?;
    let last = view.items.last()?;
    if view.items.windows(2).any(|pair| pair[0].key < pair[1].key) {
        return None;
    }
    let high = if view.page == 1 {
        Millis::MAX
    } else {
        first.key
    };
    let len = view.items.len() as u64;
    let is_last = len < u64::from(per_page)
        && view.total == Some(u64::from(view.page.saturating_sub(1)) * u64::from(per_page) + len);
    let low = if is_last { Millis::MIN } else { last.key };
    Some((low, high))
}

/// A listed broadcast `lv{serial}` with sort key `key`, for tests.
#[cfg(test)]
pub(crate) fn listed(serial: u64, key: Millis) -> Listed {
    Listed {
        id: Arc::from(format!("lv{serial}")),
        key,
        title: Arc::from("Broadcast"),
        link: Arc::from("https://live.example/watch"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn params(per_hour: u32, burst: u32) -> Params {
        Params {
            budget_per_hour: per_hour,
            burst,
            min_interval: 1,
            ..Params::default()
        }
    }

    fn page(page: u32, len: usize, total: Option<u64>) -> PageView {
        let items = (0..len as Millis)
            .map(|i| Listed {
                id: Arc::from(format!("lv{}", 1_000 - i)),
                key: 1_000_000 - i * 1_000,
                title: Arc::from("Broadcast"),
                link: Arc::from("https://live.example/watch"),
            })
            .collect();
        PageView {
            page,
            total,
            items,
            age: 0,
        }
    }

    /// Without a total, a short page 1 is taken for the page size once a page below it has
    /// shown items after it, three times in a row; a page 1 with nothing below it (the whole
    /// list) says nothing, and a longer page raises it at once.
    #[test]
    fn a_shorter_page_1_is_learnt_without_a_total_once_pages_below_show_items() {
        let mut size = PageSize::new(18);
        for _ in 0..5 {
            size.observe(&page(1, 15, None));
            size.observe(&page(2, 0, None));
        }
        assert_eq!(size.get(), 18, "an empty page below: the whole list");
        for _ in 0..2 {
            size.observe(&page(1, 15, None));
            size.observe(&page(3, 15, None));
        }
        assert_eq!(size.get(), 18);
        // Page 1 read twice before a page below: one read's worth.
        size.observe(&page(1, 15, None));
        size.observe(&page(1, 15, None));
        size.observe(&page(2, 15, None));
        assert_eq!(size.get(), 15);
        size.observe(&page(4, 18, None));
        assert_eq!(size.get(), 18);
    }

    #[test]
    fn budget_keeps_the_part_of_a_token_a_read_does_not_use() {
        // One token every 10 s, at most 2 kept.
        let mut budget = Budget::new(&params(360, 2));
        budget.take(0);
        budget.take(1);
        // 15 s later: one whole token and half of the next.
        assert!(budget.allows(15_000, 0));
        budget.take(15_000);
        // The half kept makes the next token whole 5 s later, not 10 s.
        assert_eq!(budget.ready_at(15_001, 0), 20_000);
    }

    #[test]
    fn budget_gives_a_token_without_a_read() {
        let rules = params(360, 2);
        let mut main = Budget::new(&rules);
        let mut other = Budget::with_rate(36.0, &rules).with_burst(4);
        // Both start full; empty the other.
        for at in 0..4 {
            other.take(at);
        }
        assert!(!other.allows(10, 0));
        main.give(&mut other, 10);
        assert!(other.allows(10, 0), "the token given is there at once");
        // Main had 2 and gave 1: one read left, the minimum interval untouched.
        assert!(main.allows(10, 0));
        main.take(10);
        assert!(!main.allows(11, 0));
        // A full bucket keeps no more than its burst.
        let mut full = Budget::with_rate(36.0, &rules).with_burst(4);
        main.give(&mut full, 20_000);
        assert!(!full.allows(20_000, 4), "{:?}", full);
    }

    #[test]
    fn budget_keeps_its_tokens_when_its_rate_changes() {
        // One token every 10 s, at most 4 kept; emptied at 0.
        let mut budget = Budget::new(&params(360, 4));
        for at in 0..4 {
            budget.take(at);
        }
        // At 25 s it holds two and a half tokens. Twice the rate: the same two and a half,
        // the half made whole 2.5 s later, and the next tokens every 5 s.
        budget.set_rate(25_000, 720.0);
        assert!(budget.allows(25_000, 1) && !budget.allows(25_000, 2));
        assert_eq!(budget.ready_at(25_000, 2), 27_500);
        assert_eq!(budget.ready_at(25_000, 3), 32_500);
        // Half the rate from there: the tokens held stay, later ones come every 20 s.
        budget.set_rate(25_000, 180.0);
        assert!(budget.allows(25_000, 1) && !budget.allows(25_000, 2));
        assert_eq!(budget.ready_at(25_000, 2), 35_000);
        // A full bucket stays full.
        let mut full = Budget::new(&params(360, 4));
        full.take(0);
        full.set_rate(100_000, 36.0);
        assert!(full.allows(100_000, 3) && !full.allows(100_000, 4));
    }

    #[test]
    fn a_throttled_listing_waits_what_it_asked_within_half_the_grace() {
        use std::time::Duration;
        let params = Params::default();
        assert_eq!(
            params.throttled_wait(Some(Duration::from_secs(2))),
            2 * SECOND
        );
        assert_eq!(params.throttled_wait(None), params.head_interval);
        assert_eq!(
            params.throttled_wait(Some(Duration::from_secs(3_600))),
            params.grace / 2
        );
        assert_eq!(
            params.throttled_wait(Some(Duration::from_secs(u64::MAX))),
            params.grace / 2
        );
    }
}
