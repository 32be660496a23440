//! The oracle lower bound: the fewest reads a detector that knew the ground truth would need.

use std::collections::BTreeSet;

use serde::Serialize;

use super::{Ending, Scenario, World};
use crate::listing::{Millis, HOUR, SECOND};

/// What the oracle read.
#[derive(Debug, Clone, Serialize)]
pub struct LowerBound {
    /// The On Air latency it guarantees every broadcast, seconds.
    pub on_air_within: f64,
    /// The Off Air latency it guarantees every frame end, seconds.
    pub off_air_within: f64,
    /// Mean reads an hour.
    pub reads_per_hour: f64,
}

/// Reads an oracle needs to report every On Air within `on_air_within` and every frame end
/// within `off_air_within`, with no failed read.
///
/// Every `on_air_within` it reads, once each, the pages that now list a broadcast started since
/// its last look; every `off_air_within`, the pages where the broadcasts that reached their
/// frame end since would be listed. A page read at a tick serves both. It knows where every
/// item is, so this is a floor no detector can beat at those latencies (a real one also needs
/// reads that show a broadcast did *not* end, and must find what it cannot see).
pub fn lower_bound(
    scenario: &Scenario,
    span: Millis,
    on_air_within: Millis,
    off_air_within: Millis,
) -> LowerBound {
    let t0 = scenario.virtual_t0();
    let mut world = World::new(scenario, t0, span);
    let per_page = scenario.per_page.max(1) as usize;
    let from = t0 + (scenario.warmup_minutes * 60.0 * SECOND as f64) as Millis;
    let end = t0 + span;
    let mut by_start: Vec<_> = world
        .broadcasts()
        .iter()
        .filter(|b| b.start >= from && b.start < end)
        .map(|b| (b.start, b.number))
        .collect();
    by_start.sort_unstable();
    let mut by_end: Vec<_> = world
        .broadcasts()
        .iter()
        .filter(|b| b.ending != Ending::Early && b.end >= from && b.end < end)
        .map(|b| (b.end, b.number))
        .collect();
    by_end.sort_unstable();

    let step = on_air_within.min(off_air_within).max(1);
    let (mut next_start, mut next_end) = (0, 0);
    let mut last_off = from;
    let mut reads = 0usize;
    let mut t = from + step;
    while t <= end {
        world.advance(t);
        let mut pages = BTreeSet::new();
        if (t - from) % on_air_within.max(1) < step {
            while let Some(&(start, number)) = by_start.get(next_start) {
                if start > t {
                    break;
                }
                pages.insert(world.position(number) / per_page);
                next_start += 1;
            }
        }
        if t - last_off >= off_air_within {
            last_off = t;
            while let Some(&(ended, number)) = by_end.get(next_end) {
                if ended > t {
                    break;
                }
                pages.insert(world.position(number) / per_page);
                next_end += 1;
            }
        }
        reads += pages.len();
        t += step;
    }
    LowerBound {
        on_air_within: on_air_within as f64 / 1_000.0,
        off_air_within: off_air_within as f64 / 1_000.0,
        reads_per_hour: reads as f64 / ((end - from) as f64 / HOUR as f64),
    }
}
