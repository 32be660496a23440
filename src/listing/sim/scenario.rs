//! Scenarios of the listing simulator: TOML files, and the built-in `quiet`, `peak2009` and
//! `peak2011`.

use serde::Deserialize;

use crate::listing::{Millis, HOUR, MINUTE};

/// A simulated listing: how broadcasts start and end, and how reads behave.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Scenario {
    /// The scenario's name in tables.
    pub name: String,
    /// Seed of every random choice; the same seed gives the same world.
    #[serde(default = "default_seed")]
    pub seed: u64,
    /// Items a page.
    #[serde(default = "default_per_page")]
    pub per_page: u32,
    /// A broadcast's frame from its reservation, in minutes.
    #[serde(default = "default_frame_minutes")]
    pub frame_minutes: f64,
    /// Minutes the detector runs before scoring starts (it begins with an empty book).
    #[serde(default = "default_warmup_minutes")]
    pub warmup_minutes: f64,
    /// Whether reservations fall on whole seconds, as on a listing whose clock keeps seconds:
    /// frames then end on the second the `pubDate` shows. By default a reservation keeps its
    /// milliseconds, and a frame ends up to a second after the boundary its `pubDate` gives.
    #[serde(default)]
    pub whole_second_reservations: bool,
    /// Whether broadcasts with the same key are listed smaller number first (in the order
    /// they were reserved). Niconico listed the larger first, and so does the simulator by
    /// default.
    #[serde(default)]
    pub smaller_number_first: bool,
    /// Whether broadcasts with the same key are listed in the order they started, the earliest
    /// first, whatever their numbers, as a listing that keeps its broadcasts in the order they
    /// start and sorts them stably by key: a broadcast that starts late sits below every equal
    /// already on air. Overrides `smaller_number_first`.
    #[serde(default)]
    pub equals_in_start_order: bool,
    /// The share of broadcast numbers never listed, as on a listing whose numbers are shared
    /// with another channel's broadcasts or handed to reservations later cancelled: each
    /// number is skipped with this probability, so the listed ones have holes between them.
    #[serde(default)]
    pub unlisted_numbers: f64,
    /// Whether broadcast numbers are handed out as broadcasts start, not as they are
    /// reserved: a broadcast that starts late then has a larger number than those reserved
    /// after it, as on a listing that numbers what it lists. Niconico numbered reservations,
    /// and so does the simulator by default.
    #[serde(default)]
    pub numbered_at_start: bool,
    /// Start rates.
    pub starts: Starts,
    /// How broadcasts end.
    #[serde(default)]
    pub ends: Ends,
    /// Reservation-to-start gaps.
    #[serde(default = "default_gaps")]
    pub gaps: Vec<GapBand>,
    /// Read latency and faults.
    #[serde(default)]
    pub reads: Reads,
    /// How many times faster than real time the world runs: set by
    /// [`Scenario::compressed`] (which also shortens every duration), never read from a file.
    #[serde(skip, default = "default_time_scale")]
    pub time_scale: f64,
}

/// Poisson starts with a daily swing: the rate follows a cosine from `off_peak_per_hour` to
/// `peak_per_hour` at `peak_hour`.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Starts {
    /// The lowest rate of the day, starts an hour.
    pub off_peak_per_hour: f64,
    /// The highest rate of the day, starts an hour.
    pub peak_per_hour: f64,
    /// Hour of day (0–24) of the peak.
    #[serde(default = "default_peak_hour")]
    pub peak_hour: f64,
    /// Hour of day at which the run starts.
    #[serde(default = "default_peak_hour")]
    pub start_hour: f64,
}

/// How broadcasts end; the rest of them end at their frame. A key left out takes its default.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Ends {
    /// Share that ends early, `early_min_minutes`–`early_max_minutes` after starting (uniform;
    /// past the frame it ends at the frame).
    pub early: f64,
    /// Shortest early end, minutes after the start.
    pub early_min_minutes: f64,
    /// Longest early end, minutes after the start.
    pub early_max_minutes: f64,
    /// Share extended by one frame.
    pub extend: f64,
    /// Probability of each further extension.
    pub extend_again: f64,
    /// Longest broadcast, hours from the reservation.
    pub max_hours: f64,
    /// Longest time, seconds, that a broadcast ending at a frame boundary stays listed past
    /// it (uniform from 0; 0 by default): a listing whose clock runs behind the reader's, or
    /// that applies its ends on ticks of its own.
    pub late_max_seconds: f64,
}

impl Default for Ends {
    fn default() -> Self {
        Ends {
            early: 0.12,
            early_min_minutes: 3.0,
            early_max_minutes: 30.0,
            extend: 0.13,
            extend_again: 0.4,
            max_hours: 6.0,
            late_max_seconds: 0.0,
        }
    }
}

/// A share of broadcasts whose start follows the reservation by a uniform gap.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct GapBand {
    /// Share of broadcasts in this band (the shares add up to 1).
    pub share: f64,
    /// Shortest gap, seconds.
    pub min_seconds: f64,
    /// Longest gap, seconds.
    pub max_seconds: f64,
}

/// How reads behave. A key left out takes its default.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Reads {
    /// Share of reads that fail.
    pub failed: f64,
    /// Share of reads that come back with no items although the list holds some.
    pub empty: f64,
    /// The total such an empty page gives: `"actual"` (the count on air, so that the page
    /// contradicts it), `"zero"` (a listing whose failing backend renders an empty result) or
    /// `"none"` (no total at all). A listing without a total gives none either way.
    pub empty_total: EmptyTotal,
    /// Share of reads the listing holds without an answer for `hang_ms` before it fails them
    /// (a reader gives up on them at its read timeout).
    pub hung: f64,
    /// How long a hung read is held, milliseconds.
    pub hang_ms: f64,
    /// Shortest read, milliseconds; the page is rendered halfway through.
    pub latency_min_ms: f64,
    /// Longest read, milliseconds.
    pub latency_max_ms: f64,
    /// Whether the channel gives the total on air (`nicolive:total_count`); a listing
    /// without one shows its end only as a short or empty page.
    pub total: bool,
    /// What a page past the end of the list is: `"empty"` (a channel without items),
    /// `"not_found"` (an HTTP 404, as many paginators answer), `"last_page"` (the last page
    /// again) or `"first_page"` (page 1 again).
    pub past_end: PastEnd,
    /// How old the channel's total is, milliseconds: the count on air this long before the
    /// page is rendered (a cached count), so that it often disagrees with the pages.
    pub total_lag_ms: f64,
    /// How long the listing serves a page from its cache, milliseconds: a page rendered once
    /// is served as it was to every read of it within this time (a cache in front of the
    /// listing, each page's URL on its own), so that pages read together may be snapshots
    /// of different moments. Failed and hung reads are not cached. 0 (the default): none.
    pub cache_ms: f64,
    /// Whether the cache says how long it kept each page it serves (an HTTP `Age` header in
    /// whole seconds, as Varnish and most CDNs send). Default false: a cache that does not.
    pub cache_age: bool,
    /// Whether other readers share the cache and keep it full: each page is rendered again
    /// as soon as its copy expires, at a phase of its own, whoever reads it, so that a
    /// reader's first read of a page may get a copy up to `cache_ms` old. Default false: the
    /// cache holds only the pages this reader read.
    pub cache_shared: bool,
}

/// The total a faulty empty page gives ([`Reads::empty_total`]).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum EmptyTotal {
    /// The count on air, as the other pages give it.
    #[default]
    Actual,
    /// A total of 0.
    Zero,
    /// No total element.
    None,
}

/// What the listing serves for a page past the end of its list.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum PastEnd {
    /// A channel without items.
    #[default]
    Empty,
    /// A `404 Not Found`.
    NotFound,
    /// The last page again, as a paginator that clamps the page number does (Django's
    /// `get_page`).
    LastPage,
    /// The first page again, as a paginator that sends a page number out of range to the
    /// start does.
    FirstPage,
}

impl Default for Reads {
    fn default() -> Self {
        Reads {
            failed: 0.01,
            empty: 0.01,
            empty_total: EmptyTotal::Actual,
            hung: 0.0,
            hang_ms: 600_000.0,
            latency_min_ms: 200.0,
            latency_max_ms: 1_500.0,
            total: true,
            past_end: PastEnd::Empty,
            total_lag_ms: 0.0,
            cache_ms: 0.0,
            cache_age: false,
            cache_shared: false,
        }
    }
}

fn default_time_scale() -> f64 {
    1.0
}
fn default_seed() -> u64 {
    2009
}
fn default_per_page() -> u32 {
    18
}
fn default_frame_minutes() -> f64 {
    30.0
}
fn default_warmup_minutes() -> f64 {
    20.0
}
fn default_peak_hour() -> f64 {
    22.0
}
fn default_gaps() -> Vec<GapBand> {
    let band = |share, min_seconds, max_seconds| GapBand {
        share,
        min_seconds,
        max_seconds,
    };
    // Mostly under a minute, some of minutes, a few of tens of minutes.
    vec![
        band(0.85, 0.0, 20.0),
        band(0.11, 20.0, 60.0),
        band(0.03, 60.0, 300.0),
        band(0.01, 300.0, 1_500.0),
    ]
}

/// The names of the built-in scenarios.
pub const BUILT_IN: [&str; 3] = ["quiet", "peak2009", "peak2011"];

impl Scenario {
    /// A built-in scenario by name:
    ///
    /// - `quiet`: an off-peak morning, ~700 starts an hour;
    /// - `peak2009`: the 2009 evening peak, ~2,200 starts an hour at 22:00 (≈ 1,200 on air);
    /// - `peak2011`: the 2011–14 listing, ~4,400 starts an hour on average, longer broadcasts
    ///   (more extensions; ≈ 4,000 on air).
    pub fn built_in(name: &str) -> Option<Scenario> {
        let base = Scenario {
            name: name.to_string(),
            seed: default_seed(),
            per_page: default_per_page(),
            frame_minutes: default_frame_minutes(),
            warmup_minutes: default_warmup_minutes(),
            whole_second_reservations: false,
            smaller_number_first: false,
            equals_in_start_order: false,
            unlisted_numbers: 0.0,
            numbered_at_start: false,
            starts: Starts {
                off_peak_per_hour: 700.0,
                peak_per_hour: 2_200.0,
                peak_hour: 22.0,
                start_hour: 21.5,
            },
            ends: Ends::default(),
            gaps: default_gaps(),
            reads: Reads::default(),
            time_scale: 1.0,
        };
        match name {
            "quiet" => Some(Scenario {
                starts: Starts {
                    start_hour: 8.0,
                    ..base.starts.clone()
                },
                ..base
            }),
            "peak2009" => Some(base),
            "peak2011" => Some(Scenario {
                seed: 2011,
                starts: Starts {
                    off_peak_per_hour: 3_600.0,
                    peak_per_hour: 5_200.0,
                    peak_hour: 22.0,
                    start_hour: 21.5,
                },
                ends: Ends {
                    extend: 0.30,
                    extend_again: 0.55,
                    ..Ends::default()
                },
                ..base
            }),
            _ => None,
        }
    }

    /// Reads a scenario from TOML and checks it.
    pub fn from_toml(text: &str) -> Result<Scenario, String> {
        let scenario: Scenario = toml::from_str(text).map_err(|err| err.to_string())?;
        scenario.validate()?;
        Ok(scenario)
    }

    /// Checks the shares, ranges and rates; the error names every problem.
    pub fn validate(&self) -> Result<(), String> {
        let mut problems = Vec::new();
        let mut check = |ok: bool, what: &str| {
            if !ok {
                problems.push(what.to_string());
            }
        };
        let share = |x: f64| (0.0..=1.0).contains(&x);
        check(self.per_page >= 1, "per_page: must be ≥ 1");
        check(
            (0.0..=0.99).contains(&self.unlisted_numbers),
            "unlisted_numbers: must lie in [0, 0.99]",
        );
        check(
            (1.0 / 60.0..=1_440.0).contains(&self.frame_minutes),
            "frame_minutes: must lie between 1 second and 24 hours",
        );
        check(
            (0.0..=1_440.0).contains(&self.warmup_minutes),
            "warmup_minutes: must lie in 0..=1440",
        );
        check(self.time_scale > 0.0, "time_scale: must be > 0");
        check(
            self.starts.off_peak_per_hour > 0.0 && self.starts.peak_per_hour <= 1e7,
            "starts: rates must lie in (0, 10,000,000] an hour",
        );
        let hour_of_day = |hour: f64| (0.0..=24.0).contains(&hour);
        check(
            hour_of_day(self.starts.peak_hour) && hour_of_day(self.starts.start_hour),
            "starts: peak_hour and start_hour must be hours of the day (0–24)",
        );
        check(
            self.starts.off_peak_per_hour <= self.starts.peak_per_hour,
            "starts.off_peak_per_hour: must be ≤ peak_per_hour",
        );
        check(
            share(self.ends.early) && share(self.ends.extend) && share(self.ends.extend_again),
            "ends: shares must lie in [0, 1]",
        );
        check(
            self.ends.early + self.ends.extend <= 1.0,
            "ends: early + extend must be ≤ 1",
        );
        check(
            0.0 <= self.ends.early_min_minutes
                && self.ends.early_min_minutes <= self.ends.early_max_minutes,
            "ends: need 0 ≤ early_min_minutes ≤ early_max_minutes",
        );
        check(
            self.ends.max_hours * 60.0 >= self.frame_minutes && self.ends.max_hours <= 48.0,
            "ends.max_hours: must be at least one frame and at most 48",
        );
        check(
            (0.0..=self.frame_minutes * 60.0 / 2.0).contains(&self.ends.late_max_seconds),
            "ends.late_max_seconds: must lie between 0 and half a frame",
        );
        check(
            self.ends.early_max_minutes <= 1_440.0,
            "ends.early_max_minutes: must be at most 1440",
        );
        check(!self.gaps.is_empty(), "gaps: need at least one band");
        let total: f64 = self.gaps.iter().map(|band| band.share).sum();
        check((total - 1.0).abs() < 1e-6, "gaps: shares must add up to 1");
        let frame_seconds = self.frame_minutes * 60.0;
        let bad_bands: Vec<usize> = (0..self.gaps.len())
            .filter(|&i| {
                let band = &self.gaps[i];
                !(share(band.share)
                    && 0.0 <= band.min_seconds
                    && band.min_seconds <= band.max_seconds
                    && band.max_seconds < frame_seconds)
            })
            .collect();
        let reads = &self.reads;
        check(
            share(reads.failed)
                && share(reads.empty)
                && share(reads.hung)
                && reads.failed + reads.empty + reads.hung <= 1.0,
            "reads: failed, empty and hung must be shares adding up to ≤ 1",
        );
        check(
            0.0 < reads.hang_ms && reads.hang_ms <= 86_400_000.0,
            "reads: need 0 < hang_ms ≤ 86400000",
        );
        check(
            (0.0..=3_600_000.0).contains(&reads.total_lag_ms),
            "reads: need 0 ≤ total_lag_ms ≤ 3600000",
        );
        check(
            (0.0..=3_600_000.0).contains(&reads.cache_ms),
            "reads: need 0 ≤ cache_ms ≤ 3600000",
        );
        // Every page is rendered again each lifetime: a short one would cost the simulator
        // more than the listing.
        check(
            !reads.cache_shared || reads.cache_ms * self.time_scale >= 10_000.0,
            "reads: cache_shared needs cache_ms ≥ 10000",
        );
        check(
            0.0 <= reads.latency_min_ms
                && reads.latency_min_ms <= reads.latency_max_ms
                && reads.latency_max_ms <= 60_000.0,
            "reads: need 0 ≤ latency_min_ms ≤ latency_max_ms ≤ 60000",
        );
        for i in bad_bands {
            problems.push(format!(
                "gaps[{i}]: need a share in [0, 1] and 0 ≤ min_seconds ≤ max_seconds < the frame"
            ));
        }
        if problems.is_empty() {
            Ok(())
        } else {
            Err(problems.join("; "))
        }
    }

    /// The frame in milliseconds.
    pub fn frame(&self) -> Millis {
        (self.frame_minutes * MINUTE as f64).round() as Millis
    }

    /// The same world on a clock `factor` times faster: every duration divided, every rate
    /// multiplied.
    pub fn compressed(&self, factor: f64) -> Scenario {
        let mut scenario = self.clone();
        scenario.frame_minutes /= factor;
        scenario.warmup_minutes /= factor;
        scenario.starts.off_peak_per_hour *= factor;
        scenario.starts.peak_per_hour *= factor;
        scenario.ends.early_min_minutes /= factor;
        scenario.ends.early_max_minutes /= factor;
        scenario.ends.max_hours /= factor;
        scenario.ends.late_max_seconds /= factor;
        for band in &mut scenario.gaps {
            band.min_seconds /= factor;
            band.max_seconds /= factor;
        }
        scenario.reads.latency_min_ms /= factor;
        scenario.reads.latency_max_ms /= factor;
        scenario.reads.hang_ms /= factor;
        scenario.reads.total_lag_ms /= factor;
        scenario.reads.cache_ms /= factor;
        scenario.time_scale *= factor;
        scenario
    }

    /// Starts an hour (of the scenario's clock) `elapsed` after the run's start.
    pub fn rate_at(&self, elapsed: Millis) -> f64 {
        let starts = &self.starts;
        let hour = starts.start_hour + elapsed as f64 / HOUR as f64 * self.time_scale;
        let phase = (hour - starts.peak_hour) / 24.0 * std::f64::consts::TAU;
        starts.off_peak_per_hour
            + (starts.peak_per_hour - starts.off_peak_per_hour) * (1.0 + phase.cos()) / 2.0
    }

    /// A virtual start time for benchmarks: `start_hour` on 2009-11-20 (UTC).
    pub fn virtual_t0(&self) -> Millis {
        const DAY_2009_11_20: Millis = 1_258_675_200_000;
        DAY_2009_11_20 + (self.starts.start_hour * HOUR as f64).round() as Millis
    }
}
