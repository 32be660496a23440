//! Runs a detector against the simulated world on a virtual clock and scores its events
//! against the ground truth.

use std::collections::HashMap;
use std::sync::Arc;

use serde::Serialize;

use super::{Broadcast, Ending, ReadsOut, Scenario, World};
use crate::listing::{pager, Book, EventKind, Millis, Params, Strategy, HOUR, MINUTE};

/// A detector's score on one scenario.
///
/// On Air is scored for broadcasts starting in the scored window (after the warm-up); Off Air
/// for broadcasts ending in it. The detector runs on for half a frame after the window, so a
/// broadcast that starts or ends near its end is scored on what the detector did, not on
/// where the run stopped (see [`Window::ran_on`]). Off Air latency covers broadcasts that
/// ended at a frame boundary (the ones that must never slip); early ends are counted apart.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Report {
    /// The strategy's name.
    pub strategy: String,
    /// Hours scored.
    pub hours: f64,
    /// Mean reads an hour in the scored window.
    pub reads_per_hour: f64,
    /// Reads in the busiest whole hour of the listing's clock (the mean when the window is
    /// shorter than such an hour).
    pub reads_worst_hour: f64,
    /// The ferret strategy's share of the budget for its sweep when the run stopped, as its
    /// frame ends' lateness steered it from `sweep_share`; `None` for the other strategies and
    /// for a scored events file.
    pub sweep_share: Option<f64>,
    /// Broadcasts that started in the window.
    pub on_air: usize,
    /// Of them, never reported On Air.
    pub on_air_missed: usize,
    /// Of the missed, those whose gap exceeded the tolerance (allowed).
    pub on_air_missed_tolerated: usize,
    /// On Air reported twice for the same broadcast.
    pub on_air_duplicates: usize,
    /// On Air latency from the start, seconds: median.
    pub on_air_p50: f64,
    /// 95th percentile.
    pub on_air_p95: f64,
    /// Maximum.
    pub on_air_max: f64,
    /// Off Air reported while the broadcast was still on air, or of a broadcast the truth
    /// does not know (anywhere in the run).
    pub false_off_air: usize,
    /// Off Air reported twice for the same broadcast.
    pub off_air_duplicates: usize,
    /// Broadcasts that ended at a frame boundary in the window.
    pub frame_ends: usize,
    /// Of them, not reported within the grace.
    pub slipped: usize,
    /// Off Air latency of frame ends, seconds: median.
    pub off_air_p50: f64,
    /// 95th percentile.
    pub off_air_p95: f64,
    /// Maximum.
    pub off_air_max: f64,
    /// Broadcasts that ended early in the window.
    pub early_ends: usize,
    /// Of them, reported before their frame boundary.
    pub early_detected: usize,
}

impl Report {
    /// Whether the detector kept every rule: no false Off Air, none slipped, no On Air missed
    /// within the tolerance, nothing reported twice.
    pub fn keeps_the_rules(&self) -> bool {
        self.false_off_air == 0
            && self.slipped == 0
            && self.on_air_missed == self.on_air_missed_tolerated
            && self.on_air_duplicates == 0
            && self.off_air_duplicates == 0
    }

    /// The report of a run `factor` times faster than real time, in the real listing's time:
    /// durations multiplied, rates divided.
    pub fn scaled(mut self, factor: u32) -> Report {
        let factor = f64::from(factor.max(1));
        self.hours *= factor;
        self.reads_per_hour /= factor;
        self.reads_worst_hour /= factor;
        for latency in [
            &mut self.on_air_p50,
            &mut self.on_air_p95,
            &mut self.on_air_max,
            &mut self.off_air_p50,
            &mut self.off_air_p95,
            &mut self.off_air_max,
        ] {
            *latency *= factor;
        }
        self
    }
}

/// One broadcast as it really was, for the scorer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Truth {
    /// Its listing id.
    pub id: Arc<str>,
    /// Its reservation, to the millisecond where the truth has it (the listing shows it cut to
    /// whole seconds): its gap and its frame boundaries run from it.
    pub reserved: Millis,
    /// When it appeared in the listing.
    pub start: Millis,
    /// When it left the listing; `None` while still on air.
    pub end: Option<Millis>,
    /// How it ended (a broadcast still on air: [`Ending::Frame`] or what is known so far).
    pub ending: Ending,
}

/// One event a detector reported, for the scorer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Reported {
    /// On Air or Off Air.
    pub kind: EventKind,
    /// The broadcast's listing id.
    pub id: Arc<str>,
    /// Detection time.
    pub at: Millis,
}

/// What is scored, and by which rules.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Window {
    /// Scoring starts here (after the detector's warm-up).
    pub from: Millis,
    /// Scoring ends here.
    pub until: Millis,
    /// How long the detector kept running after `until`. Without it, a broadcast is scored
    /// only if it starts at least `frame / 15` before `until`, or ends at least
    /// `grace + frame / 30` before it, so that the detector had time to report it; each
    /// margin shrinks by this much (the simulator's own runs go on for half a frame, which
    /// removes both; a live run scored from files stops with the listing: 0).
    pub ran_on: Millis,
    /// The listing's frame (the margins before `until` scale with it).
    pub frame: Millis,
    /// A frame end must be reported within this.
    pub grace: Millis,
    /// A start later than this after the reservation may be missed.
    pub tolerance: Millis,
}

/// Restarts of the detector during a run, as the daemon resumes after a crash or a `kill -9`:
/// a new detector from the book the store kept (every event is recorded before it is
/// reported), after `down` of the listing's clock without reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Restarts {
    /// Time between two restarts.
    pub every: Millis,
    /// How long the detector is down at each.
    pub down: Millis,
    /// The restarted detector is given the start times of the reads before, as the daemon's
    /// store keeps them (without them, the budget's hour starts afresh at each restart).
    pub keep_reads: bool,
    /// The restarted detector is given what it had learnt beyond its book, as of its latest
    /// answered read, as the daemon's store keeps it ([`crate::listing::Memory`]).
    pub keep_memory: bool,
}

/// Runs `strategy` for `span` of virtual time on a world from `scenario` and scores it.
pub fn run(strategy: Strategy, params: &Params, scenario: &Scenario, span: Millis) -> Report {
    run_restarted(strategy, params, scenario, span, None)
}

/// [`run`], the detector restarted as `restarts` says.
pub fn run_restarted(
    strategy: Strategy,
    params: &Params,
    scenario: &Scenario,
    span: Millis,
    restarts: Option<Restarts>,
) -> Report {
    let t0 = scenario.virtual_t0();
    let until = t0 + span;
    let ran_on = scenario.frame() / 2;
    let end = until + ran_on;
    let mut world = World::new(scenario, t0, span + ran_on + 10 * MINUTE);
    let mut detector = pager(strategy, params.clone(), Book::new(), &[], None);
    let mut now = t0;
    let mut reads = Vec::new();
    let mut memory = None;
    let mut events = Vec::new();
    let mut out = ReadsOut::default();
    let mut restart_at = restarts.map_or(Millis::MAX, |r| t0 + r.every.max(1));
    loop {
        while let Some(event) = detector.poll_event() {
            events.push(Reported {
                kind: event.kind,
                id: event.item.id,
                at: event.at,
            });
        }
        if now >= end {
            break;
        }
        if let Some(restart) = restarts.filter(|_| now >= restart_at) {
            restart_at += restart.every.max(1);
            // As the store keeps it: each broadcast with the start of the latest read that
            // showed it, and the order among equals its pages showed.
            let book = detector.book();
            let book = Book::restore(
                book.entries().cloned(),
                book.gone().map(|(id, at)| (id.clone(), at)),
                book.ties(),
            );
            let before = if restart.keep_reads { &reads[..] } else { &[] };
            let memory = memory.filter(|_| restart.keep_memory);
            detector = pager(strategy, params.clone(), book, before, memory);
            // The reads out die with the detector.
            out = ReadsOut::default();
            now = (now + restart.down).min(end);
            world.advance(now);
            continue;
        }
        // Reads overlap when the detector asks for one while another is out.
        if let Some((done, page, outcome)) = out.answer(&mut world, now) {
            detector.handle_read(done, page, outcome);
            memory = detector.memory();
            continue;
        }
        if let Some(page) = detector.poll_read(now) {
            out.ask(&mut world, page, now, params.read_timeout);
            reads.push(now);
            continue;
        }
        let read_due = out.next_at();
        let wake = match detector.poll_timeout() {
            Some(wake) => wake.min(read_due.unwrap_or(Millis::MAX)),
            None => read_due.unwrap_or(now + MINUTE),
        };
        now = wake.clamp(now + 1, end);
        world.advance(now);
    }
    let truth: Vec<Truth> = world
        .broadcasts()
        .iter()
        .map(|broadcast| Truth {
            id: Broadcast::id_of(broadcast.number).into(),
            reserved: broadcast.reserved,
            start: broadcast.start,
            // The world is generated past the run: every end is known.
            end: Some(broadcast.end),
            ending: broadcast.ending,
        })
        .collect();
    let window = Window {
        from: t0 + (scenario.warmup_minutes * MINUTE as f64) as Millis,
        until,
        ran_on,
        frame: scenario.frame(),
        grace: params.grace,
        tolerance: params.tolerance,
    };
    let mut report = score(strategy.name(), &truth, &events, &window);
    report.sweep_share = detector.sweep_share();
    // An hour of the listing's own clock: on a compressed listing the worst hour is counted
    // over an hour of its time, as every other figure is.
    let hour = (HOUR as f64 / scenario.time_scale) as Millis;
    (report.reads_per_hour, report.reads_worst_hour) =
        read_rates(&reads, window.from, window.until, hour);
    report
}

/// Scores `events` against `truth` over `window`. The read rates (0) and the sweep share
/// (`None`) are left to [`run`], which has the reads and the detector.
///
/// A false Off Air is one reported before the broadcast ended, or of a broadcast the truth
/// does not know, anywhere in the events. On Air is scored for broadcasts starting in the
/// window, Off Air for those ending in it, with the margins before its end that
/// [`Window::ran_on`] describes.
pub fn score(strategy: &str, truth: &[Truth], events: &[Reported], window: &Window) -> Report {
    let known: HashMap<&str, &Truth> = truth.iter().map(|b| (&*b.id, b)).collect();
    let mut on_air: HashMap<&str, Vec<Millis>> = HashMap::new();
    let mut off_air: HashMap<&str, Vec<Millis>> = HashMap::new();
    let mut false_off_air = 0;
    for event in events {
        match event.kind {
            EventKind::OnAir => on_air.entry(&event.id).or_default().push(event.at),
            EventKind::OffAir => {
                let ended = known.get(&*event.id).map(|b| b.end.unwrap_or(Millis::MAX));
                if ended.is_none_or(|end| event.at < end) {
                    false_off_air += 1;
                }
                off_air.entry(&event.id).or_default().push(event.at);
            }
        }
    }
    let Window {
        from,
        until: end,
        ran_on,
        frame,
        grace,
        tolerance,
    } = *window;
    // Margins before the end, in the listing's own time (a compressed run scales them).
    let on_air_to = end - (frame / 15 - ran_on).max(0);
    let off_air_to = end - (grace + frame / 30 - ran_on).max(0);
    let mut report = Report {
        strategy: strategy.to_string(),
        hours: (end - from) as f64 / HOUR as f64,
        reads_per_hour: 0.0,
        reads_worst_hour: 0.0,
        sweep_share: None,
        on_air: 0,
        on_air_missed: 0,
        on_air_missed_tolerated: 0,
        on_air_duplicates: on_air.values().filter(|ats| ats.len() > 1).count(),
        on_air_p50: 0.0,
        on_air_p95: 0.0,
        on_air_max: 0.0,
        false_off_air,
        off_air_duplicates: off_air.values().filter(|ats| ats.len() > 1).count(),
        frame_ends: 0,
        slipped: 0,
        off_air_p50: 0.0,
        off_air_p95: 0.0,
        off_air_max: 0.0,
        early_ends: 0,
        early_detected: 0,
    };
    let mut on_latency = Vec::new();
    let mut off_latency = Vec::new();
    for broadcast in truth {
        let id = &*broadcast.id;
        if (from..on_air_to).contains(&broadcast.start) {
            report.on_air += 1;
            match on_air.get(id) {
                Some(ats) => on_latency.push(ats[0] - broadcast.start),
                None => {
                    report.on_air_missed += 1;
                    if broadcast.start - broadcast.reserved > tolerance {
                        report.on_air_missed_tolerated += 1;
                    }
                }
            }
        }
        let Some(ended) = broadcast.end.filter(|end| (from..off_air_to).contains(end)) else {
            continue;
        };
        let reported = off_air.get(id).map(|ats| ats[0]);
        match broadcast.ending {
            Ending::Early => {
                report.early_ends += 1;
                if reported.is_some_and(|at| at < broadcast.reserved + frame) {
                    report.early_detected += 1;
                }
            }
            Ending::Frame | Ending::Extended(_) => {
                report.frame_ends += 1;
                match reported {
                    Some(at) if at >= ended => {
                        off_latency.push(at - ended);
                        if at > ended + grace {
                            report.slipped += 1;
                        }
                    }
                    // Reported before its end: counted as a false Off Air above.
                    Some(_) => {}
                    // Never reported On Air: counted as a missed On Air, not again here.
                    None if !on_air.contains_key(id) => {}
                    None => report.slipped += 1,
                }
            }
        }
    }
    (report.on_air_p50, report.on_air_p95, report.on_air_max) = percentiles(&mut on_latency);
    (report.off_air_p50, report.off_air_p95, report.off_air_max) = percentiles(&mut off_latency);
    report
}

/// Mean reads an hour between `from` and `end`, and the most in any whole `hour` (an hour of
/// the listing's clock, shorter on a compressed listing), both per hour of the run's clock.
fn read_rates(reads: &[Millis], from: Millis, end: Millis, hour: Millis) -> (f64, f64) {
    let hour = hour.max(1);
    let scored: Vec<Millis> = reads
        .iter()
        .copied()
        .filter(|t| (from..end).contains(t))
        .collect();
    let mean = if end > from {
        scored.len() as f64 * HOUR as f64 / (end - from) as f64
    } else {
        0.0
    };
    // Sliding one-hour window over the reads, if the window holds one.
    if end - from < hour {
        return (mean, mean);
    }
    let mut worst = 0;
    let mut tail = 0;
    for (head, &t) in scored.iter().enumerate() {
        while scored[tail] <= t - hour {
            tail += 1;
        }
        if t - hour >= from {
            worst = worst.max(head + 1 - tail);
        }
    }
    (mean, worst as f64 * HOUR as f64 / hour as f64)
}

/// Median, 95th percentile and maximum, in seconds.
fn percentiles(values: &mut [Millis]) -> (f64, f64, f64) {
    if values.is_empty() {
        return (0.0, 0.0, 0.0);
    }
    values.sort_unstable();
    let at = |q: f64| {
        let rank = ((values.len() as f64 * q).ceil() as usize).clamp(1, values.len());
        values[rank - 1] as f64 / 1_000.0
    };
    (
        at(0.5),
        at(0.95),
        *values.last().unwrap_or(&0) as f64 / 1_000.0,
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Reads over three hours of a listing's clock `hour` long: 60 in the first hour, 30 in
    /// each of the next two, evenly spaced.
    fn reads(hour: Millis) -> Vec<Millis> {
        let spaced = |n: Millis, from: Millis| (0..n).map(move |i| from + i * hour / n);
        spaced(60, 0)
            .chain(spaced(30, hour))
            .chain(spaced(30, 2 * hour))
            .collect()
    }

    #[test]
    fn the_worst_hour_is_an_hour_of_the_listings_clock() {
        assert_eq!(read_rates(&reads(HOUR), 0, 3 * HOUR, HOUR), (40.0, 60.0));
        // Twenty times faster: the same reads, twenty times the rate of the run's clock
        // (`Report::scaled` brings them back), and the worst hour is the first hour of the
        // listing's, not the run's three hours as one.
        let hour = HOUR / 20;
        assert_eq!(
            read_rates(&reads(hour), 0, 3 * hour, hour),
            (800.0, 1_200.0)
        );
    }
}
