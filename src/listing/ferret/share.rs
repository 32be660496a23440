//! The sweep's share of the budget, steered by how late the detector is.

use crate::listing::{Millis, Params};

/// The share of frame ends whose Off Air may come later than `off_air_target`: the target is
/// their 95th percentile.
pub(super) const LATE_SHARE: f64 = 0.05;

/// How far the sweep's share moves for one frame end reported in time (by `LATE_SHARE` of it)
/// or late (by the rest): at the peak of `peak2009`, about 2,000 frame ends an hour, a share
/// far from its mark moves by a few hundredths in a quarter of an hour.
pub(super) const SHARE_STEP: f64 = 0.0005;

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
/// ends.
#[derive(Debug, Clone)]
pub(super) struct ShareControl {
    pub(super) share: f64,
    /// Where the share starts (`sweep_share`).
    start: f64,
    low: f64,
    high: f64,
    /// The Off Air latency aimed at; 0: the share stays put.
    target: Millis,
}

impl ShareControl {
    pub(super) fn new(params: &Params) -> ShareControl {
        let share = params.sweep_share.clamp(0.0, 1.0);
        ShareControl {
            share,
            start: share,
            low: (share - SHARE_FALL).max(0.0),
            high: (share + SHARE_RISE).min(1.0),
            target: params.off_air_target,
        }
    }

    /// The share a detector had before a restart, held within this one's bounds (the
    /// config may have moved them).
    pub(super) fn restore(&mut self, share: f64) {
        if share.is_finite() {
            self.share = share.clamp(self.low, self.high);
        }
    }

    /// Takes the latency of one frame end's Off Air, and says whether the share moved.
    pub(super) fn frame_end(&mut self, latency: Millis) -> bool {
        self.step(latency > self.target)
    }

    /// Takes a head sweep that started late, and says whether the share moved.
    pub(super) fn head_late(&mut self) -> bool {
        self.step(true)
    }

    /// Whether the budget is short of the listing: frame ends came late for long enough to
    /// take the share more than half way down to its floor.
    pub(super) fn short(&self) -> bool {
        self.target != 0 && self.share < (self.start + self.low) / 2.0
    }

    pub(super) fn step(&mut self, late: bool) -> bool {
        if self.target == 0 {
            return false;
        }
        let late = if late { 1.0 } else { 0.0 };
        let share = (self.share - SHARE_STEP * (late - LATE_SHARE)).clamp(self.low, self.high);
        let moved = share != self.share;
        self.share = share;
        moved
    }
}
