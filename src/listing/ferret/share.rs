//! The sweep's share of the budget, steered by how late the detector is.

use crate::listing::{Millis, Params};

/// The share of frame ends whose Off Air may come later than `off_air_target`: the target is
/// their 95th percentile.
pub(super) const LATE_SHARE: f64 = 0.05;

/// How far the sweep's share moves for one frame end reported in time (by `LATE_SHARE` of it)
/// or late (by the rest): at the peak of `peak2009`, about 2,000 frame ends an hour, a share
/// far from its mark moves by a few hundredths in a quarter of an hour.
pub(super) const SHARE_STEP: f64 = 0.0005;

/// How many of one key's frame ends one read proves late take a step each; the rest take
/// none. A listing run K times faster (`sim-listing --time-scale K`) writes K reservations
/// a second, which share a key, and their frames end together: one boundary read a few
/// seconds late proved 10–20 of them late at once and took the share down by as many
/// steps, as if each had been late on its own. With the cap, worlds of `peak2009` at ×20
/// with a start missed within the tolerance went 45 → 27 of 256. In real time a key is
/// rarely shared (the listings log, "One late read, one late key").
pub(super) const LATE_PER_KEY: usize = 3;

/// How many of the share's first steps are larger, by [`WARM_UP_GAIN`] at the first and
/// less each step after, down to `SHARE_STEP` at the last: about the first three quarters of
/// an hour at the peak of `peak2009`.
pub(super) const WARM_UP_STEPS: u32 = 2_000;

/// How much larger the share's first step is than `SHARE_STEP`. With steps of `SHARE_STEP`
/// only, the share of a new detector on `peak2009` was still climbing from `sweep_share`
/// (0.27) an hour into the run, towards the 0.29–0.34 the runs end with, and the sweep
/// missed deep insertions meanwhile. Larger steps throughout were no better (the listings
/// log, "Where the steered share starts"); larger first steps that shrink get it there
/// sooner and then hold it as before (the listings log, "The share warms up").
pub(super) const WARM_UP_GAIN: f64 = 4.0;

/// How far the sweep's share may rise above `sweep_share`. Past 0.34 of the budget the head
/// sweep came late (On Air p95 over 20 s on more worlds of `peak2009`).
pub(super) const SHARE_RISE: f64 = 0.07;

/// How far the sweep's share may fall below `sweep_share`: less than it may rise, since a
/// smaller sweep misses more deep insertions, which the rules count, for Off Air reports that
/// a goal times. On `peak2009` failing 10 % of its reads and answering 5 % empty (eight
/// worlds, real time), misses within the tolerance were 22 with the share fixed, 67 with
/// this floor and 73 with one as deep as the rise, for an Off Air p95 of 130, 123 and 118 s.
pub(super) const SHARE_FALL: f64 = 0.035;

/// The sweep's share of the budget, steered by how late the detector is. A frame end
/// reported later than the target, or a head sweep started late, takes a step from the sweep
/// and gives it to the head and boundary reads; a frame end reported in time gives back a
/// twentieth of a step. So the share settles where a twentieth of the frame ends come late (a
/// stochastic approximation of their 95th percentile) and the head keeps its schedule. A
/// listing whose ends are proven well in time spends the margin on finding deep insertions;
/// one whose reads fail or come slowly, or whose ends come in bursts, gets more reads for its
/// ends. The first steps are larger ([`WARM_UP_GAIN`]), so that a new detector's share gets
/// where it settles within the first hour.
#[derive(Debug, Clone)]
pub(super) struct ShareControl {
    pub(super) share: f64,
    low: f64,
    high: f64,
    /// The Off Air latency aimed at; 0: the share stays put.
    target: Millis,
    /// The steps taken so far (the warm-up's progress), up to [`WARM_UP_STEPS`].
    pub(super) steps: u32,
}

impl ShareControl {
    pub(super) fn new(params: &Params) -> ShareControl {
        let share = params.sweep_share.clamp(0.0, 1.0);
        ShareControl {
            share,
            low: (share - SHARE_FALL).max(0.0),
            high: (share + SHARE_RISE).min(1.0),
            target: params.off_air_target,
            steps: 0,
        }
    }

    /// The share a detector had before a restart, held within this one's bounds (the
    /// config may have moved them), and the steps it had taken, so that its warm-up goes on
    /// where it stood.
    pub(super) fn restore(&mut self, share: f64, steps: u32) {
        if share.is_finite() {
            self.share = share.clamp(self.low, self.high);
            self.steps = steps.min(WARM_UP_STEPS);
        }
    }

    /// Takes the frame ends one read proved, each as its key and the latency of its Off
    /// Air, and says whether the share moved. The late ends of one key take at most
    /// [`LATE_PER_KEY`] steps: they were late together, by one read's lateness.
    pub(super) fn frame_ends(&mut self, ends: &[(Millis, Millis)]) -> bool {
        let mut moved = false;
        // The key of the latest late end, and how many of its ends came late.
        let mut late_key: Option<(Millis, usize)> = None;
        for &(key, latency) in ends {
            let late = latency > self.target;
            if late {
                let count = match &mut late_key {
                    Some((latest, count)) if *latest == key => count,
                    _ => &mut late_key.insert((key, 0)).1,
                };
                *count += 1;
                if *count > LATE_PER_KEY {
                    continue;
                }
            }
            moved |= self.step(late);
        }
        moved
    }

    /// Takes a head sweep that started late, and says whether the share moved.
    pub(super) fn head_late(&mut self) -> bool {
        self.step(true)
    }

    pub(super) fn step(&mut self, late: bool) -> bool {
        if self.target == 0 {
            return false;
        }
        let late = if late { 1.0 } else { 0.0 };
        let warm_up = 1.0 - f64::from(self.steps) / f64::from(WARM_UP_STEPS);
        let step = SHARE_STEP * (1.0 + (WARM_UP_GAIN - 1.0) * warm_up);
        self.steps = (self.steps + 1).min(WARM_UP_STEPS);
        let share = (self.share - step * (late - LATE_SHARE)).clamp(self.low, self.high);
        let moved = share != self.share;
        self.share = share;
        moved
    }
}
